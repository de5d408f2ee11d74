#!/bin/bash
# Stream capture beside the hook's threads: while the app's main
# thread holds a global-mode capture, a second thread launches on another
# stream; the hook's timing thread polls those launches' events, and under
# probes its collector waits for them and copies back. Those calls are
# "potentially unsafe" in CUDA: from a thread not in relaxed capture mode
# they would invalidate the capture, which the fake driver models. The
# hook's threads run in relaxed mode for their whole life, so the capture
# ends valid, and the fake saw them call during it (tolerated > 0). The
# control run shows the fake would catch a thread in global mode.
# (A capture on a stream right after a probed launch on it: hook_pipeline.sh.)
source "$(dirname "$0")/hook_lib.inc"
CAP=$B/tests/fakecuda/app_capture
[ -x "$CAP" ] || { echo "app_capture not built"; exit 77; }

run() { # NAME MODE [ENV=VAL...]
	local name=$1 mode=$2
	shift 2
	mkdir -p "$TMP/$name"
	env NTOP_TRACE_DIR=$TMP/$name NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR \
		NTOP_TIME_LAUNCHES=all "$@" "$CAP" "$PTX" "$mode" >"$TMP/$name.out" 2>"$TMP/$name.err" 9>"$TMP/$name.log"
	local rc=$?
	[ $rc = 0 ] || fail "$name: exit $rc: $(head -3 "$TMP/$name.out") $(head -2 "$TMP/$name.err")"
}

# 1. timing: the timing thread polls during the capture
run timed hook
expect "$TMP/timed.out" "^capture rc=0 tolerated=[1-9]" "timed: capture valid, the hook's thread polled during it"
expect "$TMP/timed.log" "^time " "timed: launches timed"

# 2. probed: the collector waits and copies back during the capture too
run probed hook NTOP_PROBES=$S/probes/block_sched.toml NTOP_PROBE_LIMIT=1000 FAKECUDA_SYNC_DELAY_US=2000
expect "$TMP/probed.out" "^capture rc=0 tolerated=[1-9]" "probed: capture valid"
expect "$TMP/probed.log" "^result " "probed: results written"
# (the captured launches are declined, rightly; nothing else)
grep '^probe .*status=declined' "$TMP/probed.log" | grep -qv 'reason=stream%20capture%20active' &&
	fail "probed: declined: $(grep '^probe .*declined' "$TMP/probed.log" | grep -v capture | head -2)"

# 3. control: the app's own query from a thread in global mode invalidates it
run control control
expect "$TMP/control.out" "^capture rc=901 " "control: the fake invalidates the capture"

[ "$fails" = 0 ] && echo "hook_capture: ok"
exit $((fails > 0))
