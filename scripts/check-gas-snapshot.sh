#!/usr/bin/env bash
# The committed gas snapshot (contracts/.gas-snapshot) must be what the contracts cost now.
# `forge snapshot --check` prints a diff but exits 0 (forge 1.7), so this script records a
# fresh snapshot and compares it itself: every test's name, and the exact gas of every
# non-fuzz test. Fuzz tests' μ/~ figures are left out of the comparison: `forge snapshot`
# does not take foundry.toml's fuzz seed, so they move a little from run to run.
set -euo pipefail
cd "$(dirname "$0")/.."
committed=contracts/.gas-snapshot
fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
./node_modules/.bin/forge snapshot --snap "$fresh" --no-match-path "contracts/test/invariant/*" >/dev/null
exact() { grep -E '\(gas: [0-9]+\)$' "$1" | sort; }
names() { sed -E 's/ \(.*$//' "$1" | sort; }
status=0
if ! diff <(names "$committed") <(names "$fresh") >/dev/null; then
  echo "gas snapshot: the tests differ from $committed (run \`make snapshot\`):"
  diff <(names "$committed") <(names "$fresh") || true
  status=1
fi
if ! diff <(exact "$committed") <(exact "$fresh") >/dev/null; then
  echo "gas snapshot: gas differs from $committed (run \`make snapshot\` and commit it):"
  diff <(exact "$committed") <(exact "$fresh") || true
  status=1
fi
[ "$status" -eq 0 ] && echo "gas snapshot: $(exact "$fresh" | wc -l) exact figures match $committed"
exit "$status"
