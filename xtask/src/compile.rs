//! Regenerating the artifacts (`cargo xtask artifacts`, feature `compile`): compiles the
//! deployable contracts with `foundry-compilers`, through the same solc wrapper forge uses
//! (`scripts/solc`, the pinned npm solcjs) and with the settings of `foundry.toml`, and
//! writes the ABI and bytecode the Rust `sol!` bindings read to `chain/artifacts/`, and
//! beside them, in `chain/artifacts/standard-json/`, each contract's solc standard-JSON
//! input (sources by path from the repository's root, settings, remappings): what a block
//! explorer recompiles to verify a deployment (`openrail deploy --verify`).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use foundry_compilers::artifacts::remappings::Remapping;
use foundry_compilers::artifacts::{
    BytecodeHash, EvmVersion, Optimizer, Settings, SettingsMetadata,
    output_selection::OutputSelection,
};
use foundry_compilers::solc::{Solc, SolcCompiler, SolcSettings};
use foundry_compilers::{Artifact, ConfigurableArtifacts, ProjectBuilder, ProjectPathsConfig};
use serde::Serialize;

use crate::{CONTRACTS, root};

/// `foundry.toml`'s compiler settings, as solc's standard JSON settings.
fn settings() -> SolcSettings {
    let mut settings = Settings::new(OutputSelection::default_output_selection());
    settings.optimizer = Optimizer {
        enabled: Some(true),
        runs: Some(2_000),
        details: None,
    };
    settings.evm_version = Some(EvmVersion::Prague);
    settings.via_ir = Some(false);
    // Deterministic bytecode: no metadata hash, no CBOR trailer.
    settings.metadata = Some(SettingsMetadata::new(BytecodeHash::None, false));
    SolcSettings {
        settings,
        ..Default::default()
    }
}

/// What the bindings read of one contract: ABI, creation and runtime bytecode.
#[derive(Serialize)]
struct Slim<'a, A> {
    abi: &'a A,
    bytecode: Object,
    #[serde(rename = "deployedBytecode")]
    deployed_bytecode: Object,
}

#[derive(Serialize)]
struct Object {
    object: String,
}

/// serde_json with one space of indentation, the committed files' format.
fn to_text(value: &impl Serialize) -> anyhow::Result<String> {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    value.serialize(&mut ser)?;
    out.push(b'\n');
    Ok(String::from_utf8(out)?)
}

pub(crate) fn artifacts(check: bool) -> anyhow::Result<()> {
    let root = root();
    let solc = Solc::new(root.join("scripts/solc"))
        .context("running scripts/solc --version (run `make setup` first: it installs solcjs)")?;
    let paths = ProjectPathsConfig::builder()
        .root(&root)
        .sources(root.join("contracts/src"))
        .lib(root.join("node_modules"))
        .remapping(Remapping {
            context: None,
            name: "@openzeppelin/contracts/".into(),
            path: root
                .join("node_modules/@openzeppelin/contracts")
                .display()
                .to_string()
                + "/",
        })
        .build()?;
    let project = ProjectBuilder::<SolcCompiler, _>::new(ConfigurableArtifacts::default())
        .paths(paths)
        .settings(settings())
        .ephemeral()
        .no_artifacts()
        .offline()
        .build(SolcCompiler::Specific(solc))?;
    let files: Vec<PathBuf> = CONTRACTS
        .iter()
        .map(|name| root.join(format!("contracts/src/{name}.sol")))
        .collect();
    let output = project.compile_files(files)?;
    if output.has_compiler_errors() {
        bail!("solc failed:\n{output}");
    }

    let mut rendered: Vec<(String, String)> = Vec::with_capacity(2 * CONTRACTS.len());
    for name in CONTRACTS {
        let input = project
            .standard_json_input(&root.join(format!("contracts/src/{name}.sol")))
            .with_context(|| format!("the standard-JSON input of {name}"))?;
        rendered.push((format!("standard-json/{name}"), to_text(&input)?));
        let artifact = output
            .find_first(name)
            .with_context(|| format!("{name} is not in the compiler's output"))?;
        let missing = || format!("{name} has unlinked or no bytecode");
        let slim = Slim {
            abi: artifact
                .abi
                .as_ref()
                .with_context(|| format!("{name} has no ABI"))?,
            bytecode: Object {
                object: artifact
                    .get_bytecode_bytes()
                    .with_context(missing)?
                    .to_string(),
            },
            deployed_bytecode: Object {
                object: artifact
                    .get_deployed_bytecode_bytes()
                    .with_context(missing)?
                    .to_string(),
            },
        };
        rendered.push((name.to_string(), to_text(&slim)?));
    }
    let dir = root.join("chain/artifacts");
    if check {
        check_against(&dir, &rendered)?;
    } else {
        std::fs::create_dir_all(dir.join("standard-json"))?;
        for (name, text) in &rendered {
            let dst = dir.join(format!("{name}.json"));
            std::fs::write(&dst, text).with_context(|| format!("writing {}", dst.display()))?;
        }
    }
    if check {
        println!("chain/artifacts match contracts/src");
    } else {
        println!(
            "wrote {} artifacts and their standard-JSON inputs to chain/artifacts",
            CONTRACTS.len()
        );
    }
    Ok(())
}

/// Fails, naming each file, when a file of `dir` is missing or differs from what the
/// sources compile to (`rendered`: contract name, file text).
fn check_against(dir: &Path, rendered: &[(String, String)]) -> anyhow::Result<()> {
    let drift: Vec<String> = rendered
        .iter()
        .map(|(name, text)| (dir.join(format!("{name}.json")), text))
        .filter(|(dst, text)| std::fs::read_to_string(dst).ok().as_deref() != Some(text.as_str()))
        .map(|(dst, _)| dst.display().to_string())
        .collect();
    if !drift.is_empty() {
        bail!(
            "chain/artifacts out of date with contracts/src: {}\nrun `make artifacts` (cargo xtask artifacts) and commit",
            drift.join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifacts_are_json_with_one_space_of_indentation_and_a_final_newline() {
        let slim = Slim {
            abi: &serde_json::json!([{"type": "constructor", "inputs": []}]),
            bytecode: Object {
                object: "0x60".into(),
            },
            deployed_bytecode: Object {
                object: "0x".into(),
            },
        };
        assert_eq!(
            to_text(&slim).unwrap(),
            "{\n \"abi\": [\n  {\n   \"inputs\": [],\n   \"type\": \"constructor\"\n  }\n ],\n \"bytecode\": {\n  \"object\": \"0x60\"\n },\n \"deployedBytecode\": {\n  \"object\": \"0x\"\n }\n}\n"
        );
    }

    /// `--check` fails on a changed file and on a missing one, naming each, and passes
    /// when every file is what the sources compile to.
    #[test]
    fn the_check_names_every_artifact_that_drifted() {
        let dir = tempfile::tempdir().unwrap();
        let rendered = [
            ("Same".to_string(), "{\n \"abi\": []\n}\n".to_string()),
            ("Changed".to_string(), "{\n \"abi\": [1]\n}\n".to_string()),
            ("Missing".to_string(), "{}\n".to_string()),
        ];
        std::fs::write(dir.path().join("Same.json"), &rendered[0].1).unwrap();
        std::fs::write(dir.path().join("Changed.json"), "{\n \"abi\": []\n}\n").unwrap();
        let err = check_against(dir.path(), &rendered)
            .unwrap_err()
            .to_string();
        assert!(err.contains("Changed.json"), "{err}");
        assert!(err.contains("Missing.json"), "{err}");
        assert!(!err.contains("Same.json"), "{err}");
        assert!(err.contains("make artifacts"), "{err}");
        std::fs::write(dir.path().join("Changed.json"), &rendered[1].1).unwrap();
        std::fs::write(dir.path().join("Missing.json"), &rendered[2].1).unwrap();
        check_against(dir.path(), &rendered).unwrap();
    }

    /// `key = value` of foundry.toml's default profile, unquoted.
    fn foundry(key: &str) -> String {
        let toml = std::fs::read_to_string(root().join("foundry.toml")).unwrap();
        toml.lines()
            .find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
            })
            .unwrap_or_else(|| panic!("foundry.toml has no {key}"))
    }

    #[test]
    fn the_settings_are_foundry_tomls() {
        let s = settings().settings;
        assert_eq!(s.optimizer.enabled, Some(foundry("optimizer") == "true"));
        assert_eq!(
            s.optimizer.runs.map(|r| r.to_string()),
            Some(foundry("optimizer_runs"))
        );
        assert_eq!(
            s.evm_version.map(|v| v.as_str().to_string()),
            Some(foundry("evm_version"))
        );
        assert_eq!(s.via_ir, Some(foundry("via_ir") == "true"));
        let meta = s.metadata.expect("metadata settings");
        assert_eq!(meta.cbor_metadata, Some(foundry("cbor_metadata") == "true"));
        assert_eq!(foundry("bytecode_hash"), "none");
        assert_eq!(meta.bytecode_hash, Some(BytecodeHash::None));
    }
}
