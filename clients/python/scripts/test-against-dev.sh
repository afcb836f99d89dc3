#!/usr/bin/env bash
# Runs the SDK's tests (pytest: unit and end-to-end) against a real `openrail dev`: both
# local chains, contracts deployed, a fresh SQLite database in a temporary directory, free
# ports, the testnet API key and demo payer it prints. Used by `make python-sdk` (part of
# `make test`).
#   clients/python/scripts/test-against-dev.sh [pytest args]   (from anywhere)
#   OPENRAIL_BIN=path/to/openrail   skip `cargo build` and use that binary
#   PYTHON=path/to/python           the interpreter with the SDK installed
#                                   (default: the repository's .venv-python-sdk)
set -euo pipefail
cd "$(dirname "$0")/../../.."
PYTHON=${PYTHON:-$PWD/.venv-python-sdk/bin/python}
[ -x "$PYTHON" ] || { echo "no $PYTHON: run make python-sdk (or set PYTHON)"; exit 1; }
source scripts/start-dev.sh
# The end-to-end tests fail (never skip) without a server, and cast must be there.
export OPENRAIL_REQUIRE_SERVER=1

cd clients/python
start=$(date +%s)
"$PYTHON" -m pytest -ra "$@"
echo "python-sdk tests: $(( $(date +%s) - start )) s against openrail dev at $OPENRAIL_API_URL"
