#!/usr/bin/env bash
# Vendors Redoc's standalone bundle (npm `redoc`, pinned) into api/assets/redoc, where the
# binary embeds it for `/docs` (so `cargo build` never needs node). `--check` verifies the
# committed file against the pinned package instead of writing it.
set -euo pipefail
VERSION=2.5.2
DEST=api/assets/redoc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack "redoc@$VERSION" --silent >/dev/null 2>&1)
tar -xzf "$tmp/redoc-$VERSION.tgz" -C "$tmp" package/bundles/redoc.standalone.js \
  package/bundles/redoc.standalone.js.LICENSE.txt package/LICENSE
if [ "${1:-}" = "--check" ]; then
  cmp "$tmp/package/bundles/redoc.standalone.js" "$DEST/redoc.standalone.js"
  echo "api/assets/redoc matches redoc@$VERSION"
  exit 0
fi
cp "$tmp/package/bundles/redoc.standalone.js" "$tmp/package/bundles/redoc.standalone.js.LICENSE.txt" "$DEST/"
cp "$tmp/package/LICENSE" "$DEST/LICENSE"
(cd "$DEST" && sha256sum redoc.standalone.js > SHA256SUMS)
echo "vendored redoc@$VERSION into $DEST"
