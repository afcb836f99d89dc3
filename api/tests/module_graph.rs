//! The modules of `api` depend on each other without a cycle (the crate root, which
//! declares them and holds `AppState`, aside): handlers never import the middleware, the
//! engine never imports handlers, renderings import nothing of the HTTP side.

use std::collections::{BTreeMap, BTreeSet};

/// Module → the sibling modules its code (not its comments) names through `crate::`.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("api/src") {
        let path = entry.expect("entry").path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if name == "lib" || path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("source");
        modules.insert(name, text);
    }
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    let mut edges = BTreeMap::new();
    for (name, text) in &modules {
        // The code without its comments.
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut deps = BTreeSet::new();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            let heads: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a, b::c, …}`: the first segment of each top-level item.
                let mut depth = 0;
                let end = group
                    .char_indices()
                    .find(|&(_, c)| {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => return true,
                            '}' => depth -= 1,
                            _ => {}
                        }
                        false
                    })
                    .map_or(group.len(), |(j, _)| j);
                let mut items = Vec::new();
                let (mut depth, mut start) = (0, 0);
                for (j, c) in group[..end].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            items.push(&group[start..j]);
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                items.push(&group[start..end]);
                items
            } else {
                vec![rest]
            };
            for h in heads {
                let head: String = h
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if names.contains(&head) && &head != name {
                    deps.insert(head);
                }
            }
        }
        edges.insert(name.clone(), deps);
    }
    edges
}

fn cycle_from(
    edges: &BTreeMap<String, BTreeSet<String>>,
    node: &str,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    if let Some(at) = path.iter().position(|p| p == node) {
        return Some(path[at..].to_vec());
    }
    path.push(node.to_string());
    for next in edges.get(node).into_iter().flatten() {
        if let Some(c) = cycle_from(edges, next, path) {
            return Some(c);
        }
    }
    path.pop();
    None
}

#[test]
fn api_modules_have_no_import_cycle() {
    let edges = graph();
    assert!(edges.contains_key("middleware") && edges.contains_key("agentic"));
    // The check sees real edges.
    assert!(edges["agentic"].contains("context"), "{edges:?}");
    for start in edges.keys() {
        if let Some(c) = cycle_from(&edges, start, &mut Vec::new()) {
            panic!("import cycle: {}", c.join(" → "));
        }
    }
}
