//! Embeds `migrations/{sqlite,postgres}`: writes `$OUT_DIR/migrations.rs` with one
//! `(file name, include_str!(…))` per `.sql` file of each folder, in name order, so adding a
//! migration is adding its files (`store::migrations` turns the list into sqlx migrations;
//! a test there holds it to what sqlx's own folder reader makes of the same files).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest).join("../migrations");
    let mut out = String::new();
    for (name, dir) in [("SQLITE", "sqlite"), ("POSTGRES", "postgres")] {
        let folder = root.join(dir);
        println!("cargo:rerun-if-changed={}", folder.display());
        let mut files: Vec<_> = std::fs::read_dir(&folder)
            .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
            .map(|e| e.expect("a migrations folder entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "sql"))
            .collect();
        files.sort();
        writeln!(out, "/// `migrations/{dir}`, by file name.").unwrap();
        writeln!(out, "const {name}: &[(&str, &str)] = &[").unwrap();
        for path in files {
            let file = path.file_name().unwrap().to_string_lossy();
            let path = path.canonicalize().expect("a migration's path");
            writeln!(
                out,
                "    ({file:?}, include_str!({:?})),",
                path.display().to_string()
            )
            .unwrap();
        }
        writeln!(out, "];").unwrap();
    }
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("migrations.rs");
    std::fs::write(dest, out).expect("write migrations.rs");
}
