//! `cargo xtask artifacts [--check]`, the project's own tasks.
//!
//! `artifacts` regenerates `chain/artifacts/` with `foundry-compilers` (see `compile`; the
//! `cargo xtask` alias turns its `compile` feature on). `artifacts --check` compiles
//! nothing: it compares the committed files with what forge built from the same sources
//! (`contracts/out`, `make contracts`) — the same solc and `foundry.toml` settings — so the
//! workspace's own build and CI never compile a Solidity front end (foundry-compilers and
//! solar took 135 s of CPU in a cold build of the workspace): ABI and both bytecodes equal
//! forge's, and each standard-JSON input holds exactly the sources forge's metadata lists,
//! each equal to the file on disk, with forge's settings.
//!
//! `cargo build` never runs this: the artifacts are committed, so building the workspace
//! needs neither node nor solc.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::Value;

/// The contracts the bindings read (`chain/artifacts/<name>.json`).
pub(crate) const CONTRACTS: [&str; 6] = [
    "AllowanceStateMachine",
    "SettlementRouter",
    "AttestationRegistry",
    "AttestationMirror",
    "TestStablecoin",
    "PasskeyWallet",
];

#[cfg(feature = "compile")]
mod compile;
#[cfg(test)]
mod crate_deps;
#[cfg(test)]
mod module_graph;
#[cfg(test)]
mod status_writes;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        #[cfg(feature = "compile")]
        ["artifacts"] => compile::artifacts(false),
        #[cfg(not(feature = "compile"))]
        ["artifacts"] => bail!(
            "regenerating compiles the contracts: run `cargo xtask artifacts` (the alias turns on the `compile` feature) or `make artifacts`"
        ),
        ["artifacts", "--check"] => check(&root(), &CONTRACTS),
        _ => bail!("usage: cargo xtask artifacts [--check]"),
    }
}

/// The repository's root (this crate's parent).
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the repository")
        .to_path_buf()
}

/// Compares the committed artifacts with forge's build of the same sources (see the module
/// docs); fails naming every file that drifted.
fn check(root: &Path, contracts: &[&str]) -> anyhow::Result<()> {
    let read = |path: &Path| -> anyhow::Result<Value> {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!(
                "{} (run `make contracts` first: forge builds contracts/out)",
                path.display()
            )
        })?;
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))
    };
    let mut drift = Vec::new();
    for name in contracts {
        let forge = read(&root.join(format!("contracts/out/{name}.sol/{name}.json")))?;
        let artifact = format!("chain/artifacts/{name}.json");
        match read(&root.join(&artifact)) {
            Ok(committed)
                if ["abi", "bytecode", "deployedBytecode"].iter().all(|k| {
                    let object = |v: &Value| match *k {
                        "abi" => v[k].clone(),
                        _ => v[k]["object"].clone(),
                    };
                    object(&committed) == object(&forge) && !object(&forge).is_null()
                }) => {}
            _ => drift.push(artifact),
        }
        let standard = format!("chain/artifacts/standard-json/{name}.json");
        let fresh = read(&root.join(&standard))
            .map(|input| standard_json_current(root, &input, &forge["metadata"]))
            .unwrap_or(false);
        if !fresh {
            drift.push(standard);
        }
    }
    if !drift.is_empty() {
        bail!(
            "chain/artifacts out of date with contracts/src: {}\nrun `make artifacts` (cargo xtask artifacts) and commit",
            drift.join(", ")
        );
    }
    println!("chain/artifacts match contracts/src (forge's build of them)");
    Ok(())
}

/// Whether a standard-JSON `input` holds exactly the sources forge's `metadata` lists, each
/// as the file on disk under `root`, and forge's compiler settings.
fn standard_json_current(root: &Path, input: &Value, metadata: &Value) -> bool {
    let (Some(sources), Some(listed)) = (
        input["sources"].as_object(),
        metadata["sources"].as_object(),
    ) else {
        return false;
    };
    let same_set = sources.len() == listed.len() && listed.keys().all(|k| sources.contains_key(k));
    let same_text = sources.iter().all(|(path, source)| {
        std::fs::read_to_string(root.join(path))
            .is_ok_and(|disk| source["content"].as_str() == Some(disk.as_str()))
    });
    let settings = &input["settings"];
    let same_settings = [
        "remappings",
        "optimizer",
        "metadata",
        "evmVersion",
        "libraries",
    ]
    .iter()
    .all(|k| settings[k] == metadata["settings"][k])
        && settings["viaIR"].as_bool()
            == Some(metadata["settings"]["viaIR"].as_bool().unwrap_or(false));
    same_set && same_text && same_settings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A repository with one contract `C` importing `I`, forge's output for it, and
    /// committed artifacts equal to it.
    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |path: &str, text: &str| {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("contracts/src/C.sol", "import \"./I.sol\"; contract C {}");
        write("contracts/src/I.sol", "interface I {}");
        let settings = json!({"remappings": [], "optimizer": {"enabled": true, "runs": 2000},
            "metadata": {"bytecodeHash": "none", "appendCBOR": false}, "evmVersion": "prague", "libraries": {}});
        let forge = json!({"abi": [{"type": "constructor"}], "bytecode": {"object": "0x60"},
            "deployedBytecode": {"object": "0x61"}, "metadata": {"settings": settings,
            "sources": {"contracts/src/C.sol": {}, "contracts/src/I.sol": {}}}});
        write("contracts/out/C.sol/C.json", &forge.to_string());
        write(
            "chain/artifacts/C.json",
            &json!({"abi": [{"type": "constructor"}],
            "bytecode": {"object": "0x60"}, "deployedBytecode": {"object": "0x61"}})
            .to_string(),
        );
        let mut std_settings = settings.clone();
        std_settings["viaIR"] = json!(false);
        write(
            "chain/artifacts/standard-json/C.json",
            &json!({"language": "Solidity", "settings": std_settings,
            "sources": {"contracts/src/C.sol": {"content": "import \"./I.sol\"; contract C {}"},
                        "contracts/src/I.sol": {"content": "interface I {}"}}})
            .to_string(),
        );
        dir
    }

    fn check_one(root: &Path) -> anyhow::Result<()> {
        check(root, &["C"])
    }

    #[test]
    fn the_check_passes_on_current_files_and_sees_each_kind_of_drift() {
        let dir = repo();
        let root = dir.path();
        check_one(root).unwrap();
        // A source edited after the standard-JSON input was written.
        std::fs::write(
            root.join("contracts/src/I.sol"),
            "interface I { function f() external; }",
        )
        .unwrap();
        assert!(
            check_one(root)
                .unwrap_err()
                .to_string()
                .contains("standard-json/C.json")
        );
        let dir = repo();
        let root = dir.path();
        // A new import forge compiled that the input does not carry.
        let path = root.join("contracts/out/C.sol/C.json");
        let mut forge: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        forge["metadata"]["sources"]["contracts/src/J.sol"] = json!({});
        std::fs::write(&path, forge.to_string()).unwrap();
        assert!(
            check_one(root)
                .unwrap_err()
                .to_string()
                .contains("standard-json/C.json")
        );
        // Other settings (forge's optimizer runs changed).
        forge["metadata"]["sources"]
            .as_object_mut()
            .unwrap()
            .remove("contracts/src/J.sol");
        forge["metadata"]["settings"]["optimizer"]["runs"] = json!(200);
        std::fs::write(&path, forge.to_string()).unwrap();
        assert!(
            check_one(root)
                .unwrap_err()
                .to_string()
                .contains("standard-json/C.json")
        );
        // Bytecode that differs.
        let dir = repo();
        let root = dir.path();
        std::fs::write(
            root.join("chain/artifacts/C.json"),
            json!({"abi": [{"type": "constructor"}],
            "bytecode": {"object": "0x6000"}, "deployedBytecode": {"object": "0x61"}})
            .to_string(),
        )
        .unwrap();
        let err = check_one(root).unwrap_err().to_string();
        assert!(
            err.contains("chain/artifacts/C.json") && !err.contains("standard-json/C.json"),
            "{err}"
        );
        assert!(err.contains("make artifacts"), "{err}");
    }
}
