#!/bin/bash
# NTOP_SELF_TIME=1: at exit, one `self` line per kernel launched, with its
# unprobed and probed launch counts, the mean ns and the median of the
# latest samples of each phase of the hook's time on the app's thread
# (unprobed: before, in and after the driver's launch call; probed: finding
# and selecting, prepare, enqueue, the driver's call, end event, launch
# line, submit) and what one clock read costs; the counts match the
# kernel's own stats less its first launch (which registers and instruments
# it: not timed). Without the variable, no `self` line. Over the fake
# driver: plumbing only, its launch call costs nothing like a GPU's.
source "$(dirname "$0")/hook_lib.inc"
LOOP=$B/tests/fakecuda/app_loop
[ -x "$LOOP" ] || { echo "app_loop not built"; exit 77; }

# run NAME ENV...: app_loop for 1 s with block_sched on at most 5 launches of each kernel
run() {
	local name=$1
	shift
	env "$@" NTOP_PROBES=$S/probes/block_sched.toml NTOP_PROBE_LIMIT=5 NTOP_TRACE_DIR=$TMP/$name NTOP_EVENT_FD=9 \
		NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR timeout -s KILL 60 "$LOOP" "$PTX" "$TMP/stop-$name" 1 \
		>"$TMP/$name.out" 2>&1 9>"$TMP/$name.log"
	[ $? = 0 ] || fail "$name: app: $(cat "$TMP/$name.out")"
}
mkdir -p "$TMP/on" "$TMP/off"
run on NTOP_SELF_TIME=1
run off

E=$TMP/on.log
P=$(grep -E '^hello ' "$E" | head -1 | sed -E 's/.* pid=([0-9]+) .*/\1/')
K=$(grep -E "^kernel .* pid=$P .*name=fill$" "$E" | sed -E 's/.* kid=([0-9]+) .*/\1/')
self=$(grep -E "^self .* pid=$P kid=$K " "$E")
stats=$(grep -E "^stats .* pid=$P kid=$K " "$E" | tail -1)
[ -n "$self" ] && [ -n "$stats" ] || fail "no self or stats line for fill: $(grep -E '^(self|stats) ' "$E")"
field() { echo "$1" | sed -nE "s/.* $2=([0-9]+).*/\1/p"; }
launches=$(field "$stats" launches)
unprobed=$(field "$self" unprobed)
probed=$(field "$self" probed)
[ "$probed" = 4 ] || fail "self says $probed probed launches, want the limit's 5 less the first: $self"
[ -n "$launches" ] && [ "$((unprobed + probed + 1))" = "$launches" ] ||
	fail "self counts $unprobed + $probed launches, stats $launches (the first not timed)"
for f in clock_ns timed u_lookup_ns u_select_ns u_pre_ns u_drv_ns u_post_ns p_find_ns p_prep_ns p_enq_ns p_drv_ns p_end_ns p_emit_ns p_submit_ns; do
	[ -n "$(field "$self" $f)" ] || fail "self lacks $f: $self"
done
[ "$(field "$self" clock_ns)" -gt 0 ] || fail "clock_ns is 0: $self"
for f in u_lookup_p50_ns u_drv_p50_ns p_find_p50_ns p_drv_p50_ns; do
	[ -n "$(field "$self" $f)" ] || fail "self lacks the median $f: $self"
done
[ "$(field "$self" p_find_ns)" -gt 0 ] || fail "p_find_ns is 0 (a probed launch's lookup and selection not counted): $self"
grep -q '^self ' "$TMP/off.log" && fail "self lines without NTOP_SELF_TIME: $(grep '^self ' "$TMP/off.log" | head -1)"
[ "$fails" = 0 ] && echo "hook_self_time: all passed"
exit $((fails > 0))
