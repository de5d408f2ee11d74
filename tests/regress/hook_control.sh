#!/bin/bash
# Live probe control (doc/control.md) with the fake driver: app_loop launches
# `fill` in a loop (parent and a fork child) while this script rewrites the
# control file (temporary file + rename) through generations: no file yet
# (nothing probed), every, off, next, nth 3, a second probe set with a limit,
# back to the first set (its instrumented copy reused), malformed files
# (warned once each, app unaffected) and a missing probe file (the reason
# reported), the kernel's PTX saved for the region picker (`source`). Last, an event reader that goes away must not kill the app. Each process applies every generation on its own; checks use
# the `control` line each process emits before it publishes a generation.
# Plumbing only: the fake driver runs no GPU code (doc/hook.md).
source "$(dirname "$0")/hook_lib.inc"
LOOP=$B/tests/fakecuda/app_loop
[ -x "$LOOP" ] || { echo "app_loop not built"; exit 77; }
BS=$S/probes/block_sched.toml
WC=$S/tests/fakecuda/warp_clock.toml
C=$TMP/control
E=$TMP/events.log
: > "$E"
mkdir -p "$TMP/trace"

gen=0
# control LINES...: the next generation, written atomically.
control() {
	gen=$((gen + 1))
	{ echo "control version=1 gen=$gen"; [ $# -gt 0 ] && printf '%s\n' "$@"; } > "$TMP/control.tmp"
	mv "$TMP/control.tmp" "$C"
}
# raw LINES...: a file exactly as given (no header added).
raw() { printf '%s\n' "$@" > "$TMP/control.tmp"; mv "$TMP/control.tmp" "$C"; }
# dump: what the processes said, less the timing lines.
dump() { echo "--- events"; grep -Ev '^launch .*probed=0|^time |^stats ' "$E" | cut -c1-220 | tail -150; echo "--- log"; tail -50 "$TMP/hook.log"; }
# wait_until 'CONDITION' WHAT: up to 15 s; past that every later step would
# only time out too, so the test stops there with what it saw.
wait_until() {
	for _ in $(seq 300); do eval "$1" && return 0; sleep 0.05; done
	fail "timed out waiting for $2"
	dump
	exit 1
}
has() { grep -Eq -- "$1" "$E"; }
# section PID GEN: that process's lines after its `control gen=GEN` line, up
# to its next `control` line.
section() {
	awk -v p="pid=$1" -v g="gen=$2" '$1 == "control" && $3 == p { if (on) exit; if ($4 == g) { on = 1; next } }
		on && $3 == p' "$E"
}
# flags PID GEN: probed flag of every fill launch in the section, in order.
flags() { section "$1" "$2" | grep -E "^launch .* kid=$K " | sed -E 's/.* probed=([01]).*/\1/' | tr -d '\n'; }
nprobed() { local f; f=$(flags "$1" "$2"); f=${f//0/}; echo ${#f}; }
probed_seqs() { section "$1" "$2" | grep -E "^launch .* kid=$K .*probed=1" | sed -E 's/.* seq=([0-9]+) .*/\1/'; }
# set_of PID SEQ: the probe names in that launch's result file.
set_of() { "$DUMP" "$TMP/trace/results/$1-$2.ntr" 2>/dev/null | sed -E 's/.* probes=//'; }
both_applied() { has "^control .* pid=$P gen=$1 " && has "^control .* pid=$Q gen=$1 "; }

NTOP_CONTROL=$C NTOP_TRACE_DIR=$TMP/trace NTOP_PROBE_LIMIT=1000 NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE \
	NTOP_LOG=$TMP/hook.log LD_LIBRARY_PATH=$HOOKDIR timeout -s KILL 90 "$LOOP" "$PTX" "$TMP/stop" 60 \
	> "$TMP/app.out" 2>&1 9> "$E" &
T=$!  # timeout(1), the app's parent: a hang becomes a failure
trap 'touch "$TMP/stop"; wait; rm -rf "$TMP"' EXIT
wait_until '[ "$(grep -c "^hello" "$E")" = 2 ]' "hello from the app and its fork child"
P=$(grep -E "^hello .* ppid=$T " "$E" | sed -E 's/.* pid=([0-9]+) .*/\1/')
Q=$(grep -E "^hello .* ppid=$P " "$E" | sed -E 's/.* pid=([0-9]+) .*/\1/')
K=$(grep -E "^kernel .* pid=$P .*name=fill$" "$E" | sed -E 's/.* kid=([0-9]+) .*/\1/')
SK=$(grep -E "^kernel .* pid=$P .*name=scale$" "$E" | sed -E 's/.* kid=([0-9]+) .*/\1/')
[ -n "$P" ] && [ -n "$Q" ] && [ -n "$K" ] && [ -n "$SK" ] || { fail "no child pid, fill or scale kernel"; cut -c1-200 "$E"; exit 1; }
wait_until 'has "^launch .* pid=$Q kid=$K "' "the child's launches"

# 0. NTOP_CONTROL set, no file yet, no NTOP_PROBES: nothing probed.
sleep 0.3
has '^launch .*probed=1' && fail "a launch was probed before any control file"
has '^control ' && fail "a generation was applied without a file"

# 1. every (block_sched)
control "probe name=fill probes=$BS mode=every"
wait_until 'both_applied 1' "gen 1 in both processes"
expect "$E" "^control .* pid=$P gen=1 kernels=1$" "control line names one kernel"
wait_until '[ "$(nprobed $P 1)" -ge 3 ] && [ "$(nprobed $Q 1)" -ge 3 ]' "probed launches under every"
expect "$E" "^instrument .* pid=$P kid=$K status=ok probes=block_sched " "fill instrumented with block_sched"

# 2. off: the file no longer names fill
control
wait_until 'both_applied 2' "gen 2"
sleep 0.3
a=$(grep -c '^launch .*probed=1' "$E")
sleep 0.4
b=$(grep -c '^launch .*probed=1' "$E")
[ "$a" = "$b" ] || fail "probed launches went on after switching off ($a, then $b)"

# 3. next: one launch per process
control "probe name=fill probes=$BS mode=next"
wait_until 'both_applied 3 && [ "$(nprobed $P 3)" -ge 1 ] && [ "$(nprobed $Q 3)" -ge 1 ]' "next in both processes"
sleep 0.4
[ "$(nprobed $P 3)" = 1 ] || fail "next probed $(nprobed $P 3) launches in the parent"
[ "$(nprobed $Q 3)" = 1 ] || fail "next probed $(nprobed $Q 3) launches in the child"

# 4. nth n=3
control "probe name=fill probes=$BS mode=nth n=3"
wait_until 'both_applied 4 && [ "$(nprobed $P 4)" -ge 3 ] && [ "$(nprobed $Q 4)" -ge 3 ]' "nth probes"

# 5. a second probe set, at most 2 probed launches
control "probe name=fill probes=$WC mode=every limit=2"
wait_until 'both_applied 5 && [ "$(nprobed $P 5)" -ge 2 ] && [ "$(nprobed $Q 5)" -ge 2 ]' "the second probe set"
sleep 0.4
expect "$E" "^instrument .* pid=$P kid=$K status=ok probes=warp_clock " "fill instrumented again with warp_clock"

# 6. back to block_sched: its instrumented copy is reused
control "probe name=fill probes=$BS mode=next"
wait_until 'both_applied 6 && [ "$(nprobed $P 6)" -ge 1 ]' "next with the first set again"
sleep 0.2
n=$(grep -cE "^instrument .* pid=$P kid=$K " "$E")
[ "$n" = 2 ] || fail "fill instrumented $n times in the parent, want 2 (block_sched, warp_clock)"

# 7. malformed lines: each warned once, nothing probed, the app goes on
bad=("probe name=fill probes=relative/x.toml mode=every" "probe name=fill probes=$BS mode=sometimes"
	"probe name=fill probes=$BS mode=nth" "this is %zz not an event line")
control "${bad[@]}"
wait_until 'both_applied 7' "gen 7"
expect "$E" "^control .* pid=$P gen=7 kernels=0$" "malformed lines make no selection"
control "${bad[@]}"
wait_until 'both_applied 8' "gen 8"
sleep 0.2
n=$(grep -cE "^warn .* pid=$P msg=control%20file%20" "$E")
[ "$n" = 4 ] || fail "parent warned $n times about malformed lines, want 4 (once each)"
expect "$E" "^warn .* pid=$P msg=control%20file%20.*:2:%20probe%20paths%20must%20be%20absolute" "relative path warned with its line"
expect "$E" "^warn .* pid=$P msg=control%20file%20.*:4:%20mode%20nth%20needs%20n" "nth without n warned"
[ "$(nprobed $P 7)$(nprobed $P 8)" = 00 ] || fail "malformed files probed something"
raw "probe name=fill probes=$BS mode=every"
wait_until 'has "^warn .* pid=$P msg=control%20file%20.*ignored:%20no%20valid"' "a file without control line ignored"
sleep 0.3
[ "$(nprobed $P 8)" = 0 ] || fail "a file without control line changed the selection"

# 9. a probe file that does not exist: reported, declined, the app unaffected
control "probe name=fill probes=$TMP/missing.toml mode=every"
wait_until 'both_applied 9' "gen 9"
wait_until 'has "^instrument .* pid=$P kid=$K status=failed .*reason=.*missing.toml"' "instrument failure with the reason"
expect "$E" "^warn .* pid=$P msg=probe%20$TMP/missing.toml%20rejected" "missing probe warned"
expect "$E" "^probe .* pid=$P kid=$K .*status=declined reason=.*missing.toml" "launch declined with the reason"

# 10. the UI's region picker asks for fill's PTX: each process saves it once
# from its polling thread, a `source` line says where
control "source name=fill" "source name=nosuch"
wait_until 'both_applied 10' "gen 10"
for pid in $P $Q; do
	wait_until 'has "^source .* pid=$pid kid=$K path=kernels/$pid-$K/source.ptx bytes=[1-9]"' "source saved by $pid"
	grep -q '^\.visible \.entry fill' "$TMP/trace/kernels/$pid-$K/source.ptx" ||
		fail "kernels/$pid-$K/source.ptx does not define fill"
	grep -q 'entry scale' "$TMP/trace/kernels/$pid-$K/source.ptx" && fail "kernels/$pid-$K/source.ptx holds other kernels"
done
control "source name=fill"
wait_until 'both_applied 11' "gen 11"
sleep 0.3
[ "$(grep -Ec "^source .* pid=$P " "$E")" = 1 ] || fail "source saved more than once: $(grep -E '^source ' "$E")"

touch "$TMP/stop"
wait "$T"
rc=$?
[ "$rc" = 0 ] || fail "app exited $rc: $(cat "$TMP/app.out")"
grep -q "^app_loop: done, 0 failures$" "$TMP/app.out" || fail "app output: $(cat "$TMP/app.out")"

# Results, once both processes drained their writers at exit.
for pid in $P $Q; do
	for g in 1 3 4 6; do
		for s in $(probed_seqs $pid $g); do
			[ "$(set_of $pid $s)" = block_sched ] || fail "pid $pid gen $g seq $s: result '$(set_of $pid $s)'"
		done
	done
	[[ "$(flags $pid 4)" =~ ^0*1(001)+0{0,2}$ ]] || fail "nth 3 in pid $pid probed $(flags $pid 4)"
	w=0
	for s in $(grep -E "^launch .* pid=$pid kid=$K .*probed=1" "$E" | sed -E 's/.* seq=([0-9]+) .*/\1/'); do
		[ "$(set_of $pid $s)" = warp_clock ] && w=$((w + 1))
	done
	[ "$w" = 2 ] || fail "pid $pid: $w warp_clock results, want 2 (limit=2)"
	n=$(section $pid 6 | grep -cE "^launch .* kid=$K .*probed=1")
	[ "$n" -ge 1 ] || fail "pid $pid: nothing probed by next in gen 6"
	grep -Eq "^launch .* pid=$pid kid=$SK .*probed=1" "$E" && fail "pid $pid: scale was probed"
done
nres=$(grep -c '^result ' "$E")
nfiles=$(ls "$TMP/trace/results" | wc -l)
[ "$nres" = "$nfiles" ] || fail "$nres result lines, $nfiles files"
for f in "$TMP"/trace/results/*.ntr; do
	"$DUMP" "$f" | grep -Eq "maps=1 units=([0-9]+) records=\1 dropped=0 " || fail "implausible result $f"
done
# A process started after the request (a new rank, a new worker) reads the
# control file at its start: fill, requested by name, is probed there too.
control "probe name=fill probes=$BS mode=every"
mkdir -p "$TMP/later"
: >"$TMP/later.log"
NTOP_CONTROL=$C NTOP_TRACE_DIR=$TMP/later NTOP_EVENT_FD=8 NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR \
	timeout -s KILL 30 "$APP" "$PTX" 0 >"$TMP/later.out" 2>&1 8>"$TMP/later.log"
grep -Eq "^launch .* probed=1 " "$TMP/later.log" && grep -q "^result " "$TMP/later.log" ||
	fail "a process started after the request: no probed launch ($(grep -c '^launch' "$TMP/later.log") launch lines)"
fills=" $(grep -E '^kernel .*name=fill$' "$TMP/later.log" | sed -E 's/.* kid=([0-9]+) .*/\1/' | tr '\n' ' ')"
for k in $(grep -E "^launch .* probed=1 " "$TMP/later.log" | sed -E 's/.* kid=([0-9]+) .*/\1/' | sort -u); do
	[[ "$fills" == *" $k "* ]] || fail "kernel $k, not a fill, was probed in the later process"
done
# The reader goes away (the UI quit): the hook's writes fail with EPIPE, the
# app must not die of SIGPIPE.
NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR timeout -s KILL 30 "$LOOP" "$PTX" "$TMP/no-stop" 1 \
	> "$TMP/gone.out" 2>&1 9> >(head -c 300 > /dev/null)
rc=$?
[ "$rc" = 0 ] || fail "app exited $rc after the event reader went away: $(head -3 "$TMP/gone.out")"

[ $fails = 0 ] || dump
exit $((fails != 0))
