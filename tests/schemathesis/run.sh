#!/usr/bin/env bash
# Runs schemathesis against a real `openrail dev` (both local chains, contracts deployed,
# a fresh SQLite database, a testnet API key): every check, every phase (examples,
# coverage, fuzzing, stateful through the document's links). Exits non-zero on any
# failure. Used by `make schemathesis` (part of `make test`).
#   tests/schemathesis/run.sh [VENV]          (default .venv-schemathesis)
#   ST_MAX_EXAMPLES=N  examples per operation and phase (default 100)
#   ST_REPORT_DIR=DIR  keep the JUnit report and a HAR of every request there
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${1:-.venv-schemathesis}
MAX_EXAMPLES=${ST_MAX_EXAMPLES:-100}
# Schemathesis sends thousands of requests without or with wrong credentials by design
# (ignored_auth, missing_required_header): the per-address limit of failed
# authentications (20 in a burst, then 429; tested in tests/tests/e2e/hostile_input.rs) is
# raised so that those answer 401 as they would one at a time.
DEV_FLAGS=(--auth-failure-burst 1000000)
source scripts/start-dev.sh
BASE=$OPENRAIL_API_URL
KEY=$OPENRAIL_API_KEY

# The served document is the committed one, and it validates as OpenAPI 3.1.
curl -sf "$BASE/v1/openapi.json" -o "$WORK/served.json"
"$VENV/bin/python" - "$WORK/served.json" docs/openapi.json <<'PY'
import json, sys
from openapi_spec_validator import validate
from openapi_spec_validator.validation.validators import OpenAPIV31SpecValidator
served, committed = (json.load(open(p)) for p in sys.argv[1:3])
assert served == committed, "the served document differs from docs/openapi.json: run make openapi"
validate(served, cls=OpenAPIV31SpecValidator)
print("openapi.json: valid OpenAPI 3.1, equal to docs/openapi.json")
PY

start=$(date +%s)
"$VENV/bin/st" \
  --config-file tests/schemathesis/schemathesis.toml run "$BASE/v1/openapi.json" \
  --url "$BASE" \
  -H "Authorization: Bearer $KEY" \
  --checks all \
  --phases examples,coverage,fuzzing,stateful \
  --max-examples "$MAX_EXAMPLES" \
  --seed "${ST_SEED:-20261125}" \
  --workers 1 \
  --report junit,har --report-dir "${ST_REPORT_DIR:-$WORK/report}" \
  --warnings off
echo "schemathesis: $(( $(date +%s) - start )) s, $(python3 -c "import json,glob,sys
print(sum(len(json.load(open(f))['log']['entries']) for f in glob.glob(sys.argv[1] + '/har-*.json')))" "${ST_REPORT_DIR:-$WORK/report}") requests"
