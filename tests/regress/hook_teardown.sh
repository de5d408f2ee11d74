#!/bin/bash
# Context teardown under `ntop record` (the CUDA samples'
# vectorAddDrv aborted at exit with glibc "double free or corruption"):
# app_drv, shaped like vectorAddDrv (a context, a module, three buffers,
# launches, three frees, the context destroyed, host memory freed after),
# two rounds in contexts at the same address, many times over. The fake
# driver aborts whenever a handle of a destroyed context is used
# (FAKECUDA_STRICT_CTX=1: an event the timing thread polls, a stream, a
# module or function of the hook's), and everything runs under ASan/UBSan
# in the sanitizer build. Every run must be clean: exit 0, the app's line,
# nothing on stderr but ntop's summary; probed runs write every result.
source "$(dirname "$0")/hook_lib.inc"
NTOP=$B/bin/ntop
DRV=$B/tests/fakecuda/app_drv
[ -x "$NTOP" ] && [ -x "$DRV" ] || { echo "ntop or app_drv not built"; exit 77; }
export NTOP_HOOK_DIR=$HOOKDIR NTOP_REAL_LIBCUDA=$FAKE FAKECUDA_STRICT_CTX=1
RUNS=${HOOK_TEARDOWN_RUNS:-50}

# one NAME MODE ROUNDS LAUNCHES RESULTS [ntop record options]: one run,
# which must be clean; NAME.bad says why not (runs go 8 at a time).
one() {
	local name=$1 mode=$2 rounds=$3 launches=$4 results=$5
	shift 5
	"$NTOP" record -o "$TMP/$name" "$@" -- "$DRV" "$PTX" "$mode" "$rounds" "$launches" \
		>"$TMP/$name.out" 2>"$TMP/$name.err"
	local rc=$? why=
	local err
	err=$(grep -v '^ntop: ' "$TMP/$name.err" | head -3)
	if [ $rc != 0 ]; then
		why="exit $rc: $err"
	elif ! grep -q "^app_drv: $mode done, 0 failures$" "$TMP/$name.out"; then
		why="$(head -2 "$TMP/$name.out")"
	elif [ -n "$err" ]; then
		why="stderr: $err"
	elif [ "$(grep -c '^result ' "$TMP/$name/events.log")" != "$results" ]; then
		why="$(grep -c '^result ' "$TMP/$name/events.log") results, want $results"
	fi
	[ -z "$why" ] || echo "$name: $why" >"$TMP/$name.bad"
}

spawn() {
	while [ "$(jobs -rp | wc -l)" -ge 8 ]; do
		wait -n
	done
	one "$@" &
}

for i in $(seq "$RUNS"); do
	# plain `ntop record`: launch timing only (the vectorAddDrv case)
	spawn "timed$i" create 2 1 0
	# -p block_sched: probed launches and results in flight at each destroy
	spawn "probed$i" create 2 3 6 -p block_sched
done
# primary contexts: the last release, and a reset before it
for i in $(seq 10); do
	spawn "primary$i" primary 3 2 6 -p block_sched
	spawn "reset$i" reset 3 2 6 -p block_sched
done
wait
for f in "$TMP"/*.bad; do
	[ -e "$f" ] && fail "$(cat "$f")"
done
expect "$TMP/timed1/events.log" "^exit .*launches=2" "timed: both launches counted"
inst=$(grep -c '^instrument .*status=ok' "$TMP/probed1/events.log")
[ "$inst" = 2 ] || fail "probed: instrumented $inst times, want once per context (2)"

[ "$fails" = 0 ] && echo "hook_teardown: ok"
exit $((fails > 0))
