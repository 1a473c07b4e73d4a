#!/usr/bin/env bash
# Runs every fuzz target of the repository (each `func FuzzXxx` in a
# _test.go file) for a short while each: FUZZTIME, default a count of
# executions (50000x, or the target's own count below for slow targets),
# about 5-15 s a target here (a dozen targets: under two minutes).
#
# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can
# report "context deadline exceeded" as a failure when the time runs out
# while a worker is mid-input (go.dev/issue/75804, fixed in Go 1.27); it
# did once in CI. FUZZTIME=5m still works for long runs.
#
# A failure leaves the failing input under PKG/testdata/fuzz/FuzzXxx/ (commit
# it: it becomes a regression test that `go test` runs every time); the
# script goes on with the other targets and exits 1 at the end.
#
# Longer runs, one target: go test -run '^$' -fuzz '^FuzzXxx$' -fuzztime 5m ./pkg/
set -euo pipefail
cd "$(dirname "$0")/.."

# Executions for targets much slower than the rest (FuzzValidGlob runs
# OPA's glob.match per input: ~200/s).
declare -A slow=([FuzzValidGlob]=1500x)
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
	fuzztime="${FUZZTIME:-${slow[$name]:-50000x}}"
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
