//! The modules of every crate depend on each other without a cycle. A module is a file or
//! folder under `src/` (its submodules count as it); an edge is a `crate::<module>` path in
//! its code (comments aside). Any cycle fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The crates of the workspace (the root manifest's `members`).
fn members(root: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let line = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .expect("a members line");
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The code of `text` without its comment lines.
fn code_of(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Module → its code (every file under it), for the top-level modules of `src`.
fn modules(src: &Path) -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a source folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    let mut modules: BTreeMap<String, String> = BTreeMap::new();
    for path in files {
        let rel = path.strip_prefix(src).expect("under src");
        let top = rel
            .components()
            .next()
            .expect("a component")
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" || top == "main" || top == "bin" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("source");
        modules.entry(top).or_default().push_str(&code_of(&text));
    }
    modules
}

/// The first segment of every `crate::…` path in `code`, `crate::{a, b::c}` included.
fn heads(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        let items: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => {
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
            }
            None => vec![rest],
        };
        for item in items {
            let head: String = item
                .trim()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.insert(head);
        }
    }
    out
}

/// Module → the sibling modules it names.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules(src);
    modules
        .iter()
        .map(|(name, code)| {
            let deps = heads(code)
                .into_iter()
                .filter(|h| h != name && modules.contains_key(h))
                .collect();
            (name.clone(), deps)
        })
        .collect()
}

/// The strongly connected components with more than one module (Tarjan).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        let edges = t.edges;
        for w in edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = BTreeSet::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn no_crate_has_an_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let crates = members(&root);
    assert!(crates.len() >= 9, "{crates:?}");
    let mut seen_edges = 0;
    for krate in &crates {
        let src = root.join(krate).join("src");
        let edges = graph(&src);
        seen_edges += edges.values().map(BTreeSet::len).sum::<usize>();
        let found = cycles(&edges);
        assert!(found.is_empty(), "import cycle in {krate}: {found:?}");
    }
    // The check sees real edges.
    assert!(seen_edges > 50, "{seen_edges}");
}

#[test]
fn the_check_finds_a_cycle_and_reads_grouped_paths() {
    let dir = tempfile_dir();
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("b")).unwrap();
    std::fs::write(
        src.join("a.rs"),
        "use crate::{b::x, c};\n// crate::d in a comment\n",
    )
    .unwrap();
    std::fs::write(src.join("b").join("mod.rs"), "mod x;").unwrap();
    std::fs::write(src.join("b").join("x.rs"), "fn f() { crate::a::g() }").unwrap();
    std::fs::write(src.join("c.rs"), "").unwrap();
    std::fs::write(src.join("d.rs"), "").unwrap();
    let edges = graph(&src);
    assert_eq!(
        edges["a"],
        BTreeSet::from(["b".to_string(), "c".to_string()])
    );
    assert_eq!(
        cycles(&edges),
        vec![BTreeSet::from(["a".to_string(), "b".to_string()])]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("module-graph-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}
