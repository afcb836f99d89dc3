#!/usr/bin/env bash
# The dashboard's browser tests against a real `openrail dev` (both local chains, a fresh
# SQLite database, free ports), in Debian's chromium driven by playwright-core, with
# axe-core; screenshots go to tests/browser/screenshots/. Used by `make browser-test`.
#   tests/browser/run.sh                      (from anywhere)
#   OPENRAIL_BIN=path/to/openrail  skip `cargo build` and use that binary
set -euo pipefail
cd "$(dirname "$0")/../.."
TARGET=${CARGO_TARGET_DIR:-target}
WORK=$(mktemp -d)
LOG="$WORK/dev.log"

if [ -z "${OPENRAIL_BIN:-}" ]; then
  cargo build -q -p openrail-cli --locked
  OPENRAIL_BIN="$TARGET/debug/openrail"
fi
"$OPENRAIL_BIN" dev --port 0 --settlement-port 0 --attestation-port 0 --data-dir "$WORK/data" >"$LOG" 2>&1 &
DEV=$!
cleanup() {
  kill "$DEV" 2>/dev/null || true
  wait "$DEV" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

for _ in $(seq 1 240); do
  grep -q "^Demo payer private key" "$LOG" && break
  kill -0 "$DEV" 2>/dev/null || { cat "$LOG"; echo "openrail dev exited"; exit 1; }
  sleep 0.5
done
export OPENRAIL_API_URL=$(awk '/^API base URL/ {print $4}' "$LOG")
export OPENRAIL_API_KEY=$(awk '/^Testnet API key/ {print $4}' "$LOG")
export OPENRAIL_PAYER_KEY=$(awk '/^Demo payer private key/ {print $5}' "$LOG")
export OPENRAIL_PAYER=$(awk '/^Demo payer wallet/ {print $4}' "$LOG")
DASHBOARD=$(awk '/^Dashboard/ {print $2}' "$LOG")
[ "$DASHBOARD" = "$OPENRAIL_API_URL/signup" ] || { cat "$LOG"; echo "openrail dev did not print the dashboard's URL"; exit 1; }
[ -n "$OPENRAIL_API_URL" ] && [ -n "$OPENRAIL_API_KEY" ] && [ -n "$OPENRAIL_PAYER_KEY" ] && [ -n "$OPENRAIL_PAYER" ] \
  || { cat "$LOG"; echo "no base URL, key or demo payer from openrail dev"; exit 1; }

cd tests/browser
rm -rf screenshots
start=$(date +%s)
node --test --test-concurrency=1 dashboard.test.mjs consent.test.mjs
echo "browser tests: $(( $(date +%s) - start )) s against openrail dev at $OPENRAIL_API_URL; screenshots in tests/browser/screenshots/"
