#!/usr/bin/env bash
# Runs the SDK's tests (node --test) against a real `openrail dev`: both local chains,
# contracts deployed, a fresh SQLite database in a temporary directory, free ports, the
# testnet API key and demo payer it prints. Used by `make ts-sdk` (part of `make test`).
#   clients/typescript/scripts/test-against-dev.sh            (from anywhere)
#   OPENRAIL_BIN=path/to/openrail  skip `cargo build` and use that binary
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/start-dev.sh
export OPENRAIL_REQUIRE_SERVER=1

cd clients/typescript
start=$(date +%s)
node --test dist/test/
echo "ts-sdk tests: $(( $(date +%s) - start )) s against openrail dev at $OPENRAIL_API_URL"
