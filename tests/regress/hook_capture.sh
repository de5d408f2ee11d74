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
# Then the capture check's shortcut: no driver call while no capture the
# hook saw begin is open.
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

# 4. the capture check asks the driver only while a capture is open: every
# entry point that begins one is seen (each launch inside is declined), none
# asked between captures; one begun behind the hook's back is found at a
# kernel's first launch, and every launch asks from then on
run begins begins NTOP_PROBES=$S/probes/block_sched.toml NTOP_PROBE_LIMIT=1000
expect "$TMP/begins.out" "^asked quiet=0 captures=[1-9][0-9]* after=0 unseen=[1-9]" \
	"begins: asked only while a capture was open, and always once one went unseen"
[ "$(grep -c '^begin .* end rc=0$' "$TMP/begins.out")" = 7 ] || fail "begins: not 7 captures ended valid"
fill_kid=$(sed -nE 's/^kernel .*kid=([0-9]+).*name=fill( .*)?$/\1/p' "$TMP/begins.log" | head -1)
scale_kid=$(sed -nE 's/^kernel .*kid=([0-9]+).*name=scale( .*)?$/\1/p' "$TMP/begins.log" | head -1)
stat() { grep "^stats .*kid=$1 " "$TMP/begins.log" | tail -1 | sed -nE "s/.* $2=([0-9]+).*/\1/p"; }
[ "$(stat "$fill_kid" declined)" = 7 ] || fail "begins: fill's 7 captured launches not all declined: $(stat "$fill_kid" declined)"
[ "$(stat "$fill_kid" probed)" = 27 ] || fail "begins: fill's 27 launches outside captures not all probed: $(stat "$fill_kid" probed)"
[ "$(stat "$scale_kid" declined)" = 1 ] || fail "begins: scale's launch in the unseen capture not declined"

[ "$fails" = 0 ] && echo "hook_capture: ok"
exit $((fails > 0))
