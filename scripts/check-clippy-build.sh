#!/usr/bin/env bash
# `make test` lints the workspace inside its one build: cargo compiles the workspace's crates
# with `clippy-driver` (RUSTC_WORKSPACE_WRAPPER) and clippy reads its arguments from
# CLIPPY_ARGS, as under `cargo clippy`. That is an interface between cargo-clippy and
# clippy-driver, so before the build relies on it this proves, on a throwaway crate, that the
# wrapper is set and that a clippy lint fails the build (and that a clean crate builds).
set -euo pipefail
[ -n "${RUSTC_WORKSPACE_WRAPPER:-}" ] || { echo "check-clippy-build: RUSTC_WORKSPACE_WRAPPER is not set (is clippy installed? rustup component add clippy)"; exit 1; }
[ -n "${CLIPPY_ARGS:-}" ] || { echo "check-clippy-build: CLIPPY_ARGS is not set"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src"
printf '[package]\nname = "lint-probe"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n' >"$dir/Cargo.toml"
# `len() == 0` is clippy::len_zero, a warning clippy alone reports; -D warnings denies it.
printf 'fn main() {\n    let v = std::env::args().collect::<Vec<_>>();\n    println!("{}", v.len() == 0);\n}\n' >"$dir/src/main.rs"
if out=$(CARGO_TARGET_DIR="$dir/target" cargo build --quiet --manifest-path "$dir/Cargo.toml" 2>&1); then
  echo "check-clippy-build: a crate with a clippy warning built; the lint gate would not hold"; exit 1
fi
grep -q "clippy::len_zero" <<<"$out" || { echo "$out"; echo "check-clippy-build: the build failed, but not on clippy's lint"; exit 1; }
printf 'fn main() {\n    let v = std::env::args().collect::<Vec<_>>();\n    println!("{}", v.is_empty());\n}\n' >"$dir/src/main.rs"
CARGO_TARGET_DIR="$dir/target" cargo build --quiet --manifest-path "$dir/Cargo.toml"
echo "check-clippy-build: clippy-driver lints the workspace's build with CLIPPY_ARGS (a clippy warning fails it)"
