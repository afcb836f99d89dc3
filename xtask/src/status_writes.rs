//! Each object's status is written by exactly one SQL statement in the whole workspace:
//! the one function of its aggregate that checks the lifecycle's transitions and records
//! the event (`move_mandate_in`, `move_key_in`, `change_pulls_in`, `move_payment_in`,
//! `move_transfer_in`, …). A second `UPDATE <table> SET … status = …` fails this test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `(table, status column)` pairs that the `UPDATE … SET` statements of `code` write:
/// each statement runs from `UPDATE` to its string literal's closing quote; its `SET` part
/// (before `FROM`/`WHERE`) names the columns it writes.
fn status_writes(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("\"UPDATE ") {
        let stmt = &rest[at + 1..];
        let end = stmt
            .char_indices()
            .find(|&(i, c)| c == '"' && !stmt[..i].ends_with('\\'))
            .map_or(stmt.len(), |(i, _)| i);
        let stmt = &stmt[..end];
        rest = &rest[at + 1 + end..];
        let mut words = stmt.split_whitespace().skip(1);
        let (Some(table), Some("SET")) = (words.next(), words.next()) else {
            continue;
        };
        let set = stmt.split(" SET ").nth(1).unwrap_or("");
        let set = [" FROM ", " WHERE "]
            .iter()
            .filter_map(|k| set.find(k))
            .min()
            .map_or(set, |i| &set[..i]);
        for assignment in set.split(',') {
            let column = assignment.split('=').next().unwrap_or("").trim();
            let column = column.trim_start_matches('\\').trim();
            if column == "status" || column.ends_with("_status") {
                out.push((table.to_string(), column.to_string()));
            }
        }
    }
    out
}

#[test]
fn each_status_is_written_by_one_statement() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for member in [
        "store", "engine", "api", "relayer", "cli", "chain", "domain",
    ] {
        rust_files(&root.join(member).join("src"), &mut files);
    }
    let mut writers: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for file in &files {
        let code = std::fs::read_to_string(file).expect("a source file");
        for w in status_writes(&code) {
            writers.entry(w).or_default().push(
                file.strip_prefix(&root)
                    .unwrap_or(file)
                    .display()
                    .to_string(),
            );
        }
    }
    let objects = [
        "debit_pulls",
        "payments",
        "mandates",
        "session_keys",
        "bank_transfers",
        "identity_attestations",
    ];
    for table in objects {
        assert!(
            writers.contains_key(&(table.to_string(), "status".to_string())),
            "no statement writes {table}.status: is this test still reading the code?"
        );
    }
    let twice: Vec<_> = writers
        .iter()
        .filter(|(_, files)| files.len() > 1)
        .collect();
    assert!(
        twice.is_empty(),
        "written by more than one statement (make one function of the aggregate the only writer): {twice:?}"
    );
}

#[test]
fn statements_are_read_with_their_set_part_only() {
    let code = r#"q("UPDATE payments SET status = $3, refund_status = COALESCE($6, refund_status) \
         WHERE id = $1 AND status = $2"); q("UPDATE outbox SET done_at = $1 WHERE status = 'x'");
         q("UPDATE debit_pulls SET status = v.column2 FROM (VALUES ($1)) AS v WHERE x");"#;
    assert_eq!(
        status_writes(code),
        [
            ("payments".into(), "status".into()),
            ("payments".into(), "refund_status".into()),
            ("debit_pulls".into(), "status".into())
        ]
    );
}
