# syntax=docker/dockerfile:1
# The `openrail` command line in a slim image: multi-stage, dependencies built in their own
# cached layer, a non-root runtime with the contract artifacts.
#
# Never built here (no Docker engine where the tests run). `make test` checks it statically
# (cli/src/container_files.rs: every workspace crate copied, stubbed and touched, every
# file a crate embeds inside the image, the command line parses) and tests the same
# topology (PostgreSQL, two `openrail serve` on it, two anvil chains) with processes:
# tests/tests/e2e/takeover.rs and tests/tests/e2e/operations.rs.
#
#   docker build -t openrail .
#   docker compose up          # compose.yaml: PostgreSQL, two chains, two servers

ARG RUST_VERSION=1.95

# ---------------------------------------------------------------- build
FROM rust:${RUST_VERSION}-slim-bookworm AS build
WORKDIR /src
# 1. Dependencies only: the manifests with stub sources, so this layer is rebuilt only
#    when Cargo.toml / Cargo.lock change, not at every source edit.
COPY Cargo.toml Cargo.lock ./
COPY .cargo .cargo
COPY domain/Cargo.toml domain/
COPY store/Cargo.toml store/
COPY chain/Cargo.toml chain/
COPY engine/Cargo.toml engine/
COPY identity/Cargo.toml identity/
COPY webhooks/Cargo.toml webhooks/
COPY api/Cargo.toml api/
COPY relayer/Cargo.toml relayer/
COPY cli/Cargo.toml cli/
COPY sdk/Cargo.toml sdk/
COPY tests/Cargo.toml tests/
COPY xtask/Cargo.toml xtask/
RUN for d in domain store chain engine identity webhooks api relayer cli sdk tests xtask; do \
        mkdir -p $d/src/bin && echo 'fn main() {}' > $d/src/main.rs && : > $d/src/lib.rs; \
    done \
    && echo 'fn main() {}' > tests/src/bin/openrail-under-test.rs \
    && cargo build --release --locked -p openrail-cli \
    && rm -rf */src
# 2. The sources (the contract artifacts and migrations are embedded at compile time).
COPY domain domain
COPY store store
COPY chain chain
COPY engine engine
COPY identity identity
COPY webhooks webhooks
COPY api api
COPY relayer relayer
COPY cli cli
COPY sdk sdk
COPY tests tests
COPY xtask xtask
COPY migrations migrations
# Touch the sources so cargo rebuilds the workspace crates over the stubs.
RUN find domain store chain engine identity webhooks api relayer cli sdk tests xtask -name '*.rs' -exec touch {} + \
    && cargo build --release --locked -p openrail-cli \
    && cp target/release/openrail /openrail

# ---------------------------------------------------------------- runtime
FROM debian:bookworm-slim AS runtime
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/openrail --create-home openrail
COPY --from=build /openrail /usr/local/bin/openrail
# The contracts' ABIs and bytecode (the binary embeds them; kept for operators' tools and
# explorer verification).
COPY chain/artifacts /usr/share/openrail/artifacts
USER openrail
WORKDIR /var/lib/openrail
ENV OPENRAIL_BIND=0.0.0.0 \
    OPENRAIL_PORT=8080 \
    OPENRAIL_METRICS_ADDR=0.0.0.0:9464 \
    OPENRAIL_LOG_FORMAT=json
EXPOSE 8080 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
    CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
STOPSIGNAL SIGTERM
ENTRYPOINT ["openrail"]
CMD ["serve"]
