#!/usr/bin/env bash
# Runs every fuzz target of the repository (each `func FuzzXxx` in a
# _test.go file) for a short time each: FUZZTIME, default 10s, i.e. about
# 12s a target with the build (a dozen targets today: under three minutes).
#
# A failure leaves the failing input under PKG/testdata/fuzz/FuzzXxx/ (commit
# it: it becomes a regression test that `go test` runs every time); the
# script goes on with the other targets and exits 1 at the end.
#
# Longer runs, one target: go test -run '^$' -fuzz '^FuzzXxx$' -fuzztime 5m ./pkg/
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${FUZZTIME:-10s}"
failed=()
count=0
# "dir name" pairs, one per target.
targets=$(grep -rE --include='*_test.go' --exclude-dir=.git --exclude-dir=testdata -o '^func Fuzz[A-Za-z0-9_]*\(' . |
	sed -E 's|^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]*)\($|\1 \2|' | sort -u)
if [ -z "$targets" ]; then
	echo "fuzz-ci: no fuzz targets found" >&2
	exit 1
fi
while read -r dir name; do
	count=$((count + 1))
	echo "== $dir $name ($fuzztime)"
	if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$dir"; then
		failed+=("$dir $name")
	fi
done <<<"$targets"

if [ "${#failed[@]}" -gt 0 ]; then
	echo "fuzz-ci: ${#failed[@]} of $count targets failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz-ci: $count targets, no failure"
