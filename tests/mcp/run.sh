#!/usr/bin/env bash
# Runs the MCP server's tests (tests/mcp, pytest with the official MCP Python client, PyPI
# `mcp`) against a real `openrail dev`: both local chains, contracts deployed, a fresh SQLite
# database, the testnet API key and demo payer it prints. `openrail mcp` runs from
# $CARGO_TARGET_DIR/debug/openrail (target/debug/openrail when unset). Also the OpenAI
# Agents SDK example's tools (clients/python/examples/openai_agents_tools.py, no model
# call), after mypy --strict on the tests. Used by `make mcp-test` (part of `make test`).
#   tests/mcp/run.sh [VENV] [pytest args]     (default .venv-mcp)
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${1:-.venv-mcp}
shift || true
[ -x "$VENV/bin/python" ] || { echo "no $VENV: run make mcp-test"; exit 1; }
TARGET=${CARGO_TARGET_DIR:-target}
export OPENRAIL_BIN=${OPENRAIL_BIN:-$TARGET/debug/openrail}
[ -x "$OPENRAIL_BIN" ] || { echo "no $OPENRAIL_BIN: run make build"; exit 1; }
source scripts/start-dev.sh
# The tests type-check as the SDK's do (mypy --strict; its cache in start-dev's $WORK).
(cd tests/mcp && "../../$VENV/bin/mypy" --strict --python-version 3.10 --cache-dir "$WORK/mypy" .)
start=$(date +%s)
"$VENV/bin/python" -m pytest -ra -p no:cacheprovider tests/mcp "$@"
echo "mcp tests: $(( $(date +%s) - start )) s against openrail dev at $OPENRAIL_API_URL"
