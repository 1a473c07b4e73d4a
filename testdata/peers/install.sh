#!/bin/sh
# Installs the real MCP peers that cmd/airlock/peers_test.go runs through
# airlock: the pinned versions in package-lock.json, into node_modules here.
# Idempotent: does nothing when node_modules already matches the lock file.
# Needs Node >= 20 and npm (the npm registry, or a mirror set in npm config).
set -eu
cd "$(dirname "$0")"
stamp=node_modules/.airlock-peers-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	echo "testdata/peers: already installed"
	exit 0
fi
npm ci --no-audit --no-fund
echo "$want" >"$stamp"
echo "testdata/peers: installed $(node --version) peers:"
for p in server-everything server-filesystem server-memory sdk inspector; do
	printf '  @modelcontextprotocol/%s %s\n' "$p" "$(node -p "require('./node_modules/@modelcontextprotocol/$p/package.json').version")"
done
