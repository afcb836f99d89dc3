#!/usr/bin/env bash
# The dashboard's browser tests against a real `openrail dev` (both local chains, a fresh
# SQLite database, free ports), in Debian's chromium driven by playwright-core, with
# axe-core; screenshots go to tests/browser/screenshots/. Used by `make browser-test`.
#   tests/browser/run.sh                      (from anywhere)
#   OPENRAIL_BIN=path/to/openrail  skip `cargo build` and use that binary
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/start-dev.sh
DASHBOARD=$(awk '/^Dashboard/ {print $2}' "$LOG")
[ "$DASHBOARD" = "$OPENRAIL_API_URL/signup" ] || { cat "$LOG"; echo "openrail dev did not print the dashboard's URL"; exit 1; }

cd tests/browser
rm -rf screenshots
start=$(date +%s)
node --test --test-concurrency=1 dashboard.test.mjs consent.test.mjs identity.test.mjs
echo "browser tests: $(( $(date +%s) - start )) s against openrail dev at $OPENRAIL_API_URL; screenshots in tests/browser/screenshots/"
