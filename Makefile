# One place for every gate. `make test` is the README's test command and what CI runs.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
FORGE := ./node_modules/.bin/forge
NODE_STAMP := node_modules/.package-lock.json

.PHONY: dev test pr build browser-test setup contracts artifacts check-artifacts fmt lint fmt-check clippy forge-test cargo-test snapshot bench-gas webhook-receiver openapi schemathesis vendor-redoc ts-sdk ts-sdk-generate python-sdk python-sdk-generate mcp-test test-deps test-build chromium iproute2

# The one build every test step reuses: the whole workspace, every target. Cargo resolves
# features per selection of packages, so `cargo run -p xtask`, `cargo build -p
# openrail-cli` or `cargo test -p openrail-tests` would each build the shared dependencies
# again with other features (measured on a cold machine: minutes each). The steps below
# run the binaries this build made, or select `--workspace` like it.
TARGET_DIR := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
BIN := $(TARGET_DIR)/debug
# Where the test steps install what they need (Python venvs, the SDKs' sources).
WEBHOOK_VENV := .venv-webhooks
SCHEMATHESIS_VENV := .venv-schemathesis
TS_SDK := clients/typescript
PY_SDK := clients/python
PY_SDK_VENV := .venv-python-sdk
MCP_VENV := .venv-mcp

## Run the service: two local chains, contracts deployed, until Ctrl-C. Built with the
## `dev-server` profile (Cargo.toml: dependencies unoptimized, half the cold build time).
dev: setup
	cargo run --profile dev-server -p openrail-cli -- dev

## Every gate: artifacts in sync, formatting, clippy, forge tests + gas snapshot, cargo tests,
## schemathesis against `openrail dev`, the TypeScript and Python SDKs' tests against
## `openrail dev`, `openrail mcp` driven by the MCP Python client against `openrail dev`,
## the dashboard's browser tests against `openrail dev`.
##
## A cold run is bound by the Rust build (two cores), so `make test` first runs, side by
## side, the one workspace build and everything that only waits on the network (the Python
## venvs, the npm packages, Debian's chromium, the contracts' forge build); then the gates
## one after another. Clippy is part of that one build rather than a second `cargo clippy`
## (which would check every dependency again: 2.5 minutes on a cold machine): the
## workspace's crates are compiled by `clippy-driver` as cargo's workspace wrapper, which is
## what `cargo clippy` runs, with the same `-D warnings`; the dependencies are compiled by
## rustc as usual. `scripts/check-clippy-build.sh` proves the wrapper denies a lint before
## the build relies on it. `make lint` still runs the classic `cargo clippy`.
test: export RUSTC_WORKSPACE_WRAPPER := $(shell command -v clippy-driver)
test: export CLIPPY_ARGS := -D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
test: setup
	scripts/check-clippy-build.sh
	$(MAKE) --no-print-directory -j8 test-build test-deps contracts
	$(MAKE) --no-print-directory check-artifacts fmt-check
	$(MAKE) --no-print-directory -j3 --output-sync=target cargo-test schemathesis forge-test ts-sdk python-sdk mcp-test browser-test
pr: test

## Everything the test steps install from the network, so that it can run beside the build.
test-deps: webhook-receiver $(SCHEMATHESIS_VENV)/.installed $(PY_SDK_VENV)/.installed $(MCP_VENV)/.installed $(TS_SDK)/node_modules/.package-lock.json tests/browser/node_modules/.package-lock.json chromium iproute2

## The build under `make -j`: cargo keeps its own parallelism (one job per core) instead of
## sharing make's job slots with the downloads beside it.
## `--timings`: where the build's time went, each unit's seconds, in
## $(CARGO_TARGET_DIR)/cargo-timings/cargo-timing.html (the path is printed at the end).
test-build:
	MAKEFLAGS= cargo build --workspace --all-targets --locked --timings

## Install the pinned Solidity toolchain (Foundry, solcjs, OpenZeppelin) from npm.
setup: $(NODE_STAMP)
# `npm install --no-save` rather than `npm ci`: some platform builds that Foundry's npm
# packages list as optional are missing from the registry here, which `npm ci` refuses.
$(NODE_STAMP): package.json package-lock.json
	npm install --no-save --no-audit --no-fund --loglevel=error
	@touch $(NODE_STAMP)

## The webhook e2e tests verify deliveries with the reference Standard Webhooks library
## (PyPI `standardwebhooks`, pinned in tests/webhook-receiver/requirements.txt), in a venv.
webhook-receiver: $(WEBHOOK_VENV)/.installed
$(WEBHOOK_VENV)/.installed: tests/webhook-receiver/requirements.txt
	python3 -m venv $(WEBHOOK_VENV)
	$(WEBHOOK_VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/webhook-receiver/requirements.txt
	@touch $@

## Schemathesis (PyPI, pinned in tests/schemathesis/requirements.txt, in a venv) against a
## real `openrail dev`: every check, every phase including the stateful one; 0 failures.
$(SCHEMATHESIS_VENV)/.installed: tests/schemathesis/requirements.txt
	python3 -m venv $(SCHEMATHESIS_VENV)
	$(SCHEMATHESIS_VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/schemathesis/requirements.txt
	@touch $@
schemathesis: setup contracts build $(SCHEMATHESIS_VENV)/.installed
	tests/schemathesis/run.sh $(SCHEMATHESIS_VENV)

## The TypeScript SDK (clients/typescript, @openrail/client): its pinned npm packages,
## `tsc --strict`, its generated types up to date with docs/openapi.json, and `node --test`
## against a freshly started `openrail dev` (clients/typescript/scripts/test-against-dev.sh).
$(TS_SDK)/node_modules/.package-lock.json: $(TS_SDK)/package.json $(TS_SDK)/package-lock.json
	cd $(TS_SDK) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
ts-sdk: setup contracts build $(TS_SDK)/node_modules/.package-lock.json
	cd $(TS_SDK) && ./node_modules/.bin/tsc -p tsconfig.json --strict --noEmit
	cd $(TS_SDK) && node scripts/check-generated.mjs
	cd $(TS_SDK) && rm -rf dist && ./node_modules/.bin/tsc -p tsconfig.json
	$(TS_SDK)/scripts/test-against-dev.sh

## The Python SDK (clients/python, package `openrail`): a venv from its pinned
## requirements-dev.txt (PyPI) with the package installed editable, its generated models up
## to date with docs/openapi.json, `mypy --strict` on the package, its examples, tests and
## scripts, and pytest (unit and end-to-end, the README's quickstart example included)
## against a freshly started `openrail dev` (clients/python/scripts/test-against-dev.sh).
$(PY_SDK_VENV)/.installed: $(PY_SDK)/requirements-dev.txt $(PY_SDK)/pyproject.toml
	python3 -m venv $(PY_SDK_VENV)
	$(PY_SDK_VENV)/bin/pip install --quiet --disable-pip-version-check -r $(PY_SDK)/requirements-dev.txt
	$(PY_SDK_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -e $(PY_SDK)
	@touch $@
python-sdk: setup contracts build $(PY_SDK_VENV)/.installed
	$(PY_SDK_VENV)/bin/python $(PY_SDK)/scripts/generate_models.py --check
	cd $(PY_SDK) && ../../$(PY_SDK_VENV)/bin/mypy --strict src/openrail examples tests scripts
	PYTHON=$(CURDIR)/$(PY_SDK_VENV)/bin/python $(PY_SDK)/scripts/test-against-dev.sh

## `openrail mcp` (the MCP server for agents, cli/src/mcp.rs) driven by the official MCP
## Python client (PyPI `mcp`, pinned in tests/mcp/requirements.txt, in a venv with the
## Python SDK installed editable for the setup's signing) against a freshly started
## `openrail dev` (tests/mcp/run.sh): stdio and streamable HTTP, pulls until
## allowance_exceeded, a revoked key, a key an agent signs for; and the OpenAI Agents SDK
## example's tools (clients/python/examples/openai_agents_tools.py, no model call).
# After the Python SDK's venv: two editable installs of one source tree at once would race on
# its egg-info.
$(MCP_VENV)/.installed: tests/mcp/requirements.txt $(PY_SDK)/requirements-dev.txt $(PY_SDK)/pyproject.toml $(PY_SDK_VENV)/.installed
	python3 -m venv $(MCP_VENV)
	$(MCP_VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/mcp/requirements.txt -r $(PY_SDK)/requirements-dev.txt
	$(MCP_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -e $(PY_SDK)
	@touch $@
mcp-test: setup contracts build $(MCP_VENV)/.installed
	OPENRAIL_BIN=$(BIN)/openrail tests/mcp/run.sh $(MCP_VENV)

## Regenerate the Python SDK's models (clients/python/src/openrail/models.py) from
## docs/openapi.json (after `make openapi`).
python-sdk-generate:
	python3 $(PY_SDK)/scripts/generate_models.py

## The dashboard and the hosted consent page in Debian's chromium (installed here when
## missing; never a downloaded browser), driven by playwright-core with axe-core (npm, pinned
## in tests/browser/package-lock.json), against a freshly started `openrail dev`
## (tests/browser/run.sh). Screenshots: tests/browser/screenshots/.
browser-test: setup contracts build chromium tests/browser/node_modules/.package-lock.json
	tests/browser/run.sh
chromium:
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
## `ss`, which the API's listener test reads the socket's backlog with (Debian's iproute2;
## after chromium: two apt-gets at once would contend for its lock).
iproute2: chromium
	command -v ss >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2)
tests/browser/node_modules/.package-lock.json: tests/browser/package.json tests/browser/package-lock.json
	cd tests/browser && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

## Regenerate the SDK's types from docs/openapi.json (after `make openapi`).
ts-sdk-generate:
	cd $(TS_SDK) && npm ci --no-audit --no-fund --loglevel=error && npm run generate

## Regenerate docs/openapi.json from the Rust request/response types (a test checks it).
openapi: build
	$(BIN)/openrail openapi > docs/openapi.json

## Refresh the Redoc bundle `/docs` serves (npm `redoc`, pinned in the script).
vendor-redoc:
	scripts/vendor-redoc.sh

contracts: setup
	$(FORGE) build

## Regenerate the ABI/bytecode artifacts the Rust bindings are built from: foundry-compilers
## (xtask/) compiles the contracts through the same solc wrapper as forge and writes
## chain/artifacts/. `cargo build` never needs this (the artifacts are committed).
artifacts: setup
	cargo xtask artifacts

build:
	cargo build --workspace --all-targets --locked

check-artifacts: setup contracts build
	$(BIN)/xtask artifacts --check

## `cargo fmt` formats what rustfmt finds from each crate's root, which skips the modules
## declared inside the layers' lists (`objects!`, `rows!`, `handlers!`): rustfmt also runs on
## every tracked Rust file by name.
RUST_FILES = $(shell git ls-files '*.rs')
fmt: setup
	cargo fmt --all
	@rustfmt --edition 2024 $(RUST_FILES)
	$(FORGE) fmt

lint: fmt-check clippy
fmt-check: setup
	cargo fmt --all --check
	@rustfmt --edition 2024 --check $(RUST_FILES) || { echo "rustfmt: the files above are not formatted (make fmt)"; exit 1; }
	@echo "rustfmt --check: every tracked Rust file formatted"
	@# `forge fmt --check` prints the diff but exits 0 (forge 1.7.1): fail on any output.
	@out=$$($(FORGE) fmt --check 2>&1); if [ -n "$$out" ]; then echo "$$out"; \
		echo "forge fmt: the contracts above are not formatted (make fmt)"; exit 1; fi
clippy:
	cargo clippy --workspace --all-targets --locked -- -D warnings

forge-test: setup
	$(FORGE) test
	scripts/check-gas-snapshot.sh

cargo-test: export OPENRAIL_WEBHOOK_PYTHON := $(CURDIR)/$(WEBHOOK_VENV)/bin/python
## The end-to-end tests wait on chains and servers more than they compute: eight at a time
## (on two cores) took the suite from 85 to 43 s on SQLite and from 106 to 67 s on PostgreSQL.
TEST_THREADS := 8
cargo-test: webhook-receiver contracts build
	cargo test --workspace --locked -- --test-threads=$(TEST_THREADS)
	@# The end-to-end suite again on PostgreSQL: required in CI, skipped visibly elsewhere
	@# when no server answers at 127.0.0.1:5432. The same command, so the same binaries
	@# (`--test e2e` alone would resolve other features and build again, measured: 74 s).
	@if [ "$${CI:-}" = "true" ] || pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then \
		echo "== end-to-end tests on PostgreSQL =="; \
		OPENRAIL_TEST_DB=postgres cargo test --workspace --locked -- --test-threads=$(TEST_THREADS); \
	else \
		echo "SKIPPED: end-to-end tests on PostgreSQL (no server at 127.0.0.1:5432; CI runs them)"; \
	fi

## Re-record the committed gas snapshot.
snapshot: setup
	$(FORGE) snapshot --snap contracts/.gas-snapshot --no-match-path "contracts/test/invariant/*"

## Total transaction gas of pulls, as a table.
bench-gas: setup
	cargo run -p openrail-cli -- bench gas
