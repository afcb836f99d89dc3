# Sourced (not run) by the scripts that test against a real `openrail dev`: starts it with
# both local chains, a fresh SQLite database in a temporary directory and free ports, stops
# it and removes the directory on exit, and exports what it printed: OPENRAIL_API_URL,
# OPENRAIL_API_KEY, OPENRAIL_PAYER_KEY, OPENRAIL_PAYER. Also sets WORK (the temporary
# directory) and LOG (the server's output). Call from the repository's root:
#   DEV_FLAGS=(--more --flags)   (optional: more `openrail dev` flags)
#   source scripts/start-dev.sh
#   OPENRAIL_BIN=path/to/openrail  skip `cargo build` and use that binary
TARGET=${CARGO_TARGET_DIR:-target}
WORK=$(mktemp -d)
LOG="$WORK/dev.log"

if [ -z "${OPENRAIL_BIN:-}" ]; then
  # The workspace's build (`make build`), not `-p openrail-cli`: another selection of
  # packages resolves other features and builds the dependencies a second time.
  cargo build -q --workspace --all-targets --locked
  OPENRAIL_BIN="$TARGET/debug/openrail"
fi
"$OPENRAIL_BIN" dev --port 0 --settlement-port 0 --attestation-port 0 ${DEV_FLAGS[@]+"${DEV_FLAGS[@]}"} \
  --data-dir "$WORK/data" >"$LOG" 2>&1 &
DEV=$!
cleanup() {
  kill "$DEV" 2>/dev/null || true
  wait "$DEV" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

for _ in $(seq 1 240); do
  grep -q "^Testnet API key" "$LOG" && grep -q "^Demo payer private key" "$LOG" && break
  kill -0 "$DEV" 2>/dev/null || { cat "$LOG"; echo "openrail dev exited"; exit 1; }
  sleep 0.5
done
OPENRAIL_API_URL=$(awk '/^API base URL/ {print $4}' "$LOG")
OPENRAIL_API_KEY=$(awk '/^Testnet API key/ {print $4}' "$LOG")
OPENRAIL_PAYER_KEY=$(awk '/^Demo payer private key/ {print $5}' "$LOG")
OPENRAIL_PAYER=$(awk '/^Demo payer wallet/ {print $4}' "$LOG")
export OPENRAIL_API_URL OPENRAIL_API_KEY OPENRAIL_PAYER_KEY OPENRAIL_PAYER
[ -n "$OPENRAIL_API_URL" ] && [ -n "$OPENRAIL_API_KEY" ] && [ -n "$OPENRAIL_PAYER_KEY" ] && [ -n "$OPENRAIL_PAYER" ] \
  || { cat "$LOG"; echo "no base URL, key or demo payer from openrail dev"; exit 1; }
