#!/usr/bin/env bash
# The agent images run Node 24 LTS while CI's Node is 20: the sandbox (Node's permission model
# flags, memory limits, error texts) differs between them, so its tests also run on Node 24,
# fetched from the npm registry (package node-linux-<arch>@24). Run after `npm ci` and a build.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Script processes of a root agent run as another uid: they must reach this node binary.
chmod 755 "$dir"
arch=$(node -p process.arch)
(cd "$dir" && npm pack --silent "node-linux-${arch}@24" >/dev/null && tar xzf node-linux-*.tgz)
"$dir/package/bin/node" --version
"$dir/package/bin/node" node_modules/vitest/vitest.mjs run test/sandbox test/checks/api/scripts.test.ts
