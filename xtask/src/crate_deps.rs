//! The layers of the workspace that its manifests can hold: `openrail-domain` depends on no
//! other crate of the workspace (every crate builds on it), and `openrail-chain` builds on
//! the domain, never on `openrail-store` (the chain is told what it needs of a row; it reads
//! no database). Checked on every dependency table of each manifest: normal, dev, build
//! and target-specific, by the package each entry names.

use std::collections::BTreeSet;
use std::path::Path;

/// The crates of the workspace: the `[workspace.dependencies]` entries with a `path`.
fn workspace_crates(root_manifest: &str) -> BTreeSet<String> {
    let mut section = String::new();
    let mut out = BTreeSet::new();
    for line in root_manifest.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix('[') {
            section = name.trim_end_matches(']').trim().to_string();
        } else if section == "workspace.dependencies"
            && let Some((key, value)) = line.split_once('=')
            && value.contains("path")
        {
            out.insert(key.trim().to_string());
        }
    }
    out
}

/// Whether a table header names dependencies (`dependencies`, `dev-dependencies`,
/// `build-dependencies`, `target.'cfg(…)'.dependencies`, …), and the dependency a
/// `[dependencies.<name>]` header declares.
fn dependency_table(header: &str) -> Option<Option<String>> {
    const TABLES: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];
    if TABLES
        .iter()
        .any(|t| header == *t || header.ends_with(&format!(".{t}")))
    {
        return Some(None);
    }
    TABLES.iter().find_map(|t| {
        let (before, name) = header.rsplit_once(&format!("{t}."))?;
        (before.is_empty() || before.ends_with('.')).then(|| Some(name.trim().to_string()))
    })
}

/// The packages `manifest` depends on, in any dependency table (a renamed entry counts as
/// the package it names).
fn dependencies(manifest: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_deps = false;
    // `[dependencies.<name>]`: its name, until a `package = "…"` line renames it.
    let mut table_dep: Option<String> = None;
    let flush = |dep: &mut Option<String>, out: &mut BTreeSet<String>| {
        if let Some(d) = dep.take() {
            out.insert(d);
        }
    };
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            flush(&mut table_dep, &mut out);
            let header = header.trim_end_matches(']').trim();
            match dependency_table(header) {
                Some(dep) => {
                    in_deps = dep.is_none();
                    table_dep = dep;
                }
                None => in_deps = false,
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        // `{ package = "…", … }`: the key `package`, then `=` and the quoted name.
        let renamed = value.match_indices("package").find_map(|(i, _)| {
            let rest = value[i + "package".len()..]
                .trim_start()
                .strip_prefix('=')?;
            rest.split('"').nth(1).map(str::to_string)
        });
        if table_dep.is_some() && key.trim() == "package" {
            table_dep = value.split('"').nth(1).map(str::to_string);
        } else if in_deps {
            let name = key.trim().split('.').next().unwrap_or_default();
            out.insert(renamed.unwrap_or_else(|| name.trim().to_string()));
        }
    }
    flush(&mut table_dep, &mut out);
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_domain_depends_on_no_workspace_crate_and_the_chain_not_on_the_store() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let ours = workspace_crates(&read(&root.join("Cargo.toml")));
    assert!(
        ["openrail-domain", "openrail-store", "openrail-chain"]
            .iter()
            .all(|c| ours.contains(*c)),
        "{ours:?}"
    );
    let domain = dependencies(&read(&root.join("domain").join("Cargo.toml")));
    // The check reads real dependencies.
    assert!(
        domain.contains("serde") && domain.contains("proptest"),
        "{domain:?}"
    );
    let inside: Vec<_> = domain.intersection(&ours).collect();
    assert!(inside.is_empty(), "openrail-domain depends on {inside:?}");

    let chain = dependencies(&read(&root.join("chain").join("Cargo.toml")));
    assert!(chain.contains("openrail-domain"), "{chain:?}");
    assert!(
        !chain.contains("openrail-store"),
        "openrail-chain depends on openrail-store"
    );
}

#[test]
fn every_dependency_table_and_renamed_entry_is_read() {
    let manifest = r#"
[package]
name = "x"
description = "openrail-store = not a dependency"

[dependencies]
# openrail-comment = { workspace = true }
openrail-domain = { workspace = true }
store = { package = "openrail-store", path = "../store" }
serde.workspace = true

[features]
crash-points = ["openrail-store/crash-points"]

[dev-dependencies]
openrail-dev = { workspace = true, features = ["package-x"] }

[target.'cfg(unix)'.dependencies]
openrail-unix = "1"

[build-dependencies.builder]
version = "1"

[dependencies.chain]
package = "openrail-chain"
path = "../chain"
"#;
    assert_eq!(
        dependencies(manifest),
        BTreeSet::from(
            [
                "openrail-domain",
                "openrail-store",
                "serde",
                "openrail-dev",
                "openrail-unix",
                "builder",
                "openrail-chain",
            ]
            .map(String::from)
        )
    );
    let root = "[workspace.dependencies]\nopenrail-domain = { path = \"domain\" }\nserde = \"1\"\n";
    assert_eq!(
        workspace_crates(root),
        BTreeSet::from(["openrail-domain".to_string()])
    );
}
