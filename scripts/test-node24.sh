#!/usr/bin/env bash
# Runs the whole test suite on Node 24 LTS, the Node of the images, beside the machine's Node.
#
# Node 24 comes from the npm registry (package node-linux-<arch>@24: the official binary), so
# nothing but the registry is needed. No native addon is rebuilt: our ICMP addon is Node-API
# (ABI-stable across Node versions) and on Node ≥ 22 the store loads better-sqlite3 13, whose
# Node-API binary ships inside its npm package (src/service/platform/store/sqlite.ts says why Node 20
# loads 12.x instead). Run after `npm ci`.
#
# Usage: bash scripts/test-node24.sh [vitest arguments…]   (e.g. test/sandbox to run a part)
set -euo pipefail
cd "$(dirname "$0")/.."

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Script processes of a root agent run under a uid of their own: they must reach this node binary.
chmod 755 "$dir"
arch=$(node -p process.arch)
(cd "$dir" && npm pack --silent "node-linux-${arch}@24" >/dev/null && tar xzf node-linux-*.tgz)
export PATH="$dir/package/bin:$PATH"
echo "test-node24: $(node --version)"
# .ci/run has built dist/ already (the build does not depend on the Node version) and says so.
[ -n "${OUTPOST_BUILT:-}" ] || npm run build >/dev/null
node node_modules/vitest/vitest.mjs run "$@"
