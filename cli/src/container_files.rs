//! Checks of the Dockerfile and compose.yaml that need no Docker engine (none runs where
//! the tests run; the topology itself is tested with processes: `takeover`, `operations`).
//! What they catch is what broke them before: a workspace crate added without its
//! `COPY` (the stub layer's `cargo build` then fails to load the workspace), a file a crate
//! embeds from outside the directories the image copies, a flag or variable the command
//! line does not know, a configuration the reader refuses.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::Parser;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The workspace's member directories.
fn members() -> Vec<String> {
    let manifest: toml::Value = toml::from_str(&read("Cargo.toml")).expect("Cargo.toml");
    manifest["workspace"]["members"]
        .as_array()
        .expect("workspace members")
        .iter()
        .map(|m| m.as_str().expect("a member path").to_string())
        .collect()
}

/// The Dockerfile's instructions, continuation lines joined, comments dropped.
fn instructions(dockerfile: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in dockerfile.lines() {
        let t = line.trim();
        if t.starts_with('#') || (t.is_empty() && current.is_empty()) {
            continue;
        }
        match t.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(t);
                out.push(std::mem::take(&mut current));
            }
        }
    }
    out
}

/// The sources of the build stage's `COPY` instructions (not `--from` another stage).
fn copied(instructions: &[String]) -> Vec<String> {
    instructions
        .iter()
        .filter_map(|i| i.strip_prefix("COPY "))
        .filter(|args| !args.starts_with("--from"))
        .flat_map(|args| {
            let words: Vec<&str> = args.split_whitespace().collect();
            words[..words.len() - 1]
                .iter()
                .map(|w| w.trim_end_matches('/').to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_dockerfile_copies_every_workspace_crate() {
    let ins = instructions(&read("Dockerfile"));
    let copies: BTreeSet<String> = copied(&ins).into_iter().collect();
    let stub_loop = ins
        .iter()
        .find(|i| i.contains("for d in "))
        .expect("the stub layer's loop");
    let touch = ins
        .iter()
        .find(|i| i.contains("-exec touch"))
        .expect("the touch of the sources");
    for m in members() {
        assert!(
            copies.contains(&format!("{m}/Cargo.toml")),
            "the Dockerfile does not COPY {m}/Cargo.toml into the dependency layer"
        );
        assert!(
            copies.contains(&m),
            "the Dockerfile does not COPY the sources of {m}"
        );
        assert!(
            stub_loop
                .split_whitespace()
                .any(|w| w.trim_end_matches(';') == m),
            "the stub layer does not stub {m}"
        );
        assert!(
            touch.split_whitespace().any(|w| w == m),
            "the sources of {m} are not touched before the real build"
        );
    }
}

#[test]
fn every_copied_path_exists_and_is_not_ignored() {
    let ignored: Vec<String> = read(".dockerignore")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    for src in copied(&instructions(&read("Dockerfile"))) {
        assert!(root().join(&src).exists(), "COPY {src}: no such path");
        assert!(
            !ignored
                .iter()
                .any(|i| src == *i || src.starts_with(&format!("{i}/"))),
            "COPY {src}: excluded by .dockerignore"
        );
    }
}

/// Every file a crate embeds from outside its own directory (`include_str!("../../…")`)
/// lies in a directory the image copies: else the release build in the image fails.
#[test]
fn files_embedded_across_crates_are_in_the_image() {
    let copies = copied(&instructions(&read("Dockerfile")));
    let mut checked = 0;
    for m in members() {
        let mut stack = vec![root().join(&m).join("src")];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().and_then(|x| x.to_str()) != Some("rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("a source file");
                // Code only: a comment may name a macro without calling it.
                let code: String = text
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .collect::<Vec<_>>()
                    .join("\n");
                for pat in ["include_str!(\"", "include_bytes!(\""] {
                    for (at, _) in code.match_indices(pat) {
                        let rest = &code[at + pat.len()..];
                        let Some(end) = rest.find('"') else { continue };
                        let rel = &rest[..end];
                        let target = normalize(&path.parent().expect("a directory").join(rel));
                        let Ok(inside) = target.strip_prefix(root()) else {
                            panic!("{}: embeds {rel}, outside the repository", path.display());
                        };
                        let inside = inside.to_string_lossy().to_string();
                        checked += 1;
                        assert!(
                            copies
                                .iter()
                                .any(|c| inside == *c || inside.starts_with(&format!("{c}/"))),
                            "{} embeds {inside}, which the Dockerfile does not copy",
                            path.display()
                        );
                    }
                }
            }
        }
    }
    assert!(checked > 10, "only {checked} embedded files found");
}

/// `a/b/../c` → `a/c`, without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The `openrail …` command lines compose.yaml runs (in a shell command, `&&`-separated),
/// and the image's `ENTRYPOINT` + `CMD`.
fn command_lines() -> Vec<Vec<String>> {
    let compose = read("compose.yaml");
    let mut lines = Vec::new();
    // Folded shell commands (`- >` blocks): join each block, split at `&&`, keep the
    // openrail ones.
    let all: Vec<&str> = compose.lines().collect();
    let mut joined = String::new();
    for (i, l) in all.iter().enumerate() {
        if l.trim() != "- >" {
            continue;
        }
        let indent = l.len() - l.trim_start().len();
        for next in &all[i + 1..] {
            if next.trim().is_empty() || next.len() - next.trim_start().len() <= indent {
                break;
            }
            joined.push_str(next.trim());
            joined.push(' ');
        }
        joined.push_str("&& ");
    }
    for part in joined.split("&&") {
        let words: Vec<String> = part.split_whitespace().map(str::to_string).collect();
        if words.first().map(String::as_str) == Some("openrail") {
            lines.push(words);
        }
    }
    let ins = instructions(&read("Dockerfile"));
    let exec = |prefix: &str| -> Vec<String> {
        let i = ins
            .iter()
            .rev()
            .find_map(|i| i.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix}in the Dockerfile"));
        serde_json::from_str(i).expect("exec form")
    };
    let mut image = exec("ENTRYPOINT ");
    image.extend(exec("CMD "));
    lines.push(image);
    lines
}

#[test]
fn the_command_lines_parse() {
    let lines = command_lines();
    assert!(lines.len() >= 3, "{lines:?}");
    for words in lines {
        if let Err(e) = crate::Cli::try_parse_from(&words) {
            panic!("`{}` does not parse: {e}", words.join(" "));
        }
    }
}

/// Every `OPENRAIL_…` variable the image and compose set is one the program reads.
#[test]
fn every_variable_set_is_read() {
    // Every Rust file under each crate's `src`, its subfolders included.
    fn read_all(dir: &std::path::Path, sources: &mut String) {
        for e in std::fs::read_dir(dir)
            .expect("a source directory")
            .flatten()
        {
            let path = e.path();
            if path.is_dir() {
                read_all(&path, sources);
            } else if path.extension().and_then(|x| x.to_str()) == Some("rs") {
                sources.push_str(&std::fs::read_to_string(&path).expect("a source file"));
            }
        }
    }
    let mut sources = String::new();
    for dir in [
        "cli/src",
        "api/src",
        "engine/src",
        "chain/src",
        "store/src",
        "webhooks/src",
    ] {
        read_all(&root().join(dir), &mut sources);
    }
    let text = format!("{}\n{}", read("Dockerfile"), read("compose.yaml"));
    let mut seen = BTreeSet::new();
    for (at, _) in text.match_indices("OPENRAIL_") {
        let name: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        if seen.insert(name.clone()) {
            assert!(
                sources.contains(&format!("\"{name}\"")),
                "{name} is set for the container but read nowhere"
            );
        }
    }
    assert!(seen.len() >= 8, "{seen:?}");
}

/// The configuration compose mounts is one the reader accepts.
#[test]
fn the_compose_configuration_parses() {
    let compose = read("compose.yaml");
    let start = compose
        .find("content: |")
        .expect("the inline openrail.toml");
    let body: Vec<&str> = compose[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with("      "))
        .map(|l| l.strip_prefix("      ").unwrap_or(l))
        .collect();
    let text = body.join("\n");
    assert!(text.contains("[testnet]"), "{text}");
    crate::config::parse(&text, Path::new("compose.yaml"))
        .unwrap_or_else(|e| panic!("compose's openrail.toml: {e}"));
}
