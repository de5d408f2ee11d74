#!/bin/bash
# The start screen (`ntop` alone on a terminal) at 80x24, with NVML's test
# double (tests/fakenvml: two GPUs; FAKENVML_PIDS the processes on GPU 0)
# and a registry holding a running session (a recording of app_loop) and
# an ended one: the GPU table with the session's processes counted as
# ntop's, the sessions newest first, Enter on the running one attaching to
# it, n starting a program under ntop; without NVML it says so; ASCII and
# NO_COLOR; `ntop` with no terminal prints its usage.
. "${NTOP_SOURCE_DIR:?}/tests/regress/tui_lib.inc"
B=$NTOP_BINARY_DIR
S=$NTOP_SOURCE_DIR
NVML=$B/tests/fakenvml/libnvidia-ml.so.1
LOOP=$B/tests/fakecuda/app_loop
FAKE=$B/tests/fakecuda/driver/libcuda.so.1
[ -f "$NVML" ] && [ -x "$LOOP" ] || { echo "skip: the test doubles are not built"; exit 77; }
mkdir -p "$T/cfg" "$T/state" "$T/work"
cd "$T/work" || exit 1 # where sessions started from here put their traces
export XDG_CONFIG_HOME="$T/cfg" XDG_STATE_HOME="$T/state" HOME="$T" NTOP_THEMES_DIR="$S/themes"
# an ended session, then a running one
"$NTOP" record -o "$T/old" -- /bin/true >/dev/null 2>&1
NTOP_REAL_LIBCUDA=$FAKE NTOP_HOOK_DIR=$B/lib/ntop "$NTOP" record -o "$T/live" -- "$LOOP" "$S/tests/fakecuda/kernels.ptx" \
	"$T/stop" 60 >"$T/rec.out" 2>&1 &
REC=$!
TUI_AT_EXIT='touch "$T/stop"; wait $REC 2>/dev/null'
wait_true '[ "$(grep -c "^hello" "$T/live/events.log" 2>/dev/null)" = 2 ]' 10 || bad "the recording did not start (app_loop and its child)"
apps=$(grep '^hello' "$T/live/events.log" | sed -E 's/.* pid=([0-9]+) .*/\1/' | paste -sd,)

run_ntop 80 24 LC_ALL=C NO_COLOR=1 NTOP_REAL_LIBNVML=$NVML FAKENVML_PIDS=$apps,1
wait_for '^GPUs' || bad "no start screen: $(screen | head -5)"
# the table and the sessions may fill in over a few refreshes
wait_for '^ +0  Fake GPU 0 +37%  +3\.0 GiB / 80\.0 GiB +3 \(2 ntop\)$' || bad "GPU 0: $(screen | grep 'Fake GPU 0')"
screen | grep -Eq '^ +1  Fake GPU 1 +0%  +0\.0 GiB / 80\.0 GiB +0$' || bad "GPU 1: $(screen | grep 'Fake GPU 1')"
wait_true '[ "$(screen | grep -Ec "^  (running|ended) ")" = 2 ]' || bad "sessions: $(screen | sed -n '/Sessions/,$p')"
screen | grep -A3 '^Sessions' | sed -n 3p | grep -q "^  running .*app_loop" || bad "the running session first: $(screen | grep -A3 Sessions)"
[ "$(widest)" -le 80 ] || bad "a line of $(widest) cells at 80x24"
keys Enter
wait_for 'attached, pid [0-9]+ running' || bad "Enter: not attached: $(screen | tail -2)"
keys q
wait_for 'NTOP-EXIT=0' || bad "q after attaching: $(screen | tail -2)"

# n: a program under ntop (words split at spaces, no shell)
run_ntop 80 24 LC_ALL=C NO_COLOR=1 NTOP_REAL_LIBNVML=$NVML
wait_for '^Sessions' || bad "second start screen: $(screen | head -3)"
keys n
wait_for 'program to run under ntop: _' || bad "n: $(screen | tail -2)"
keys e c h o Space h e l l o - s t a r t Enter
wait_for 'exited with status 0' || bad "n: the program did not run: $(screen | tail -2)"
keys q
wait_for 'NTOP-EXIT=0' || bad "q after the program"

# no NVML: said, sessions still listed
run_ntop 80 24 LC_ALL=C NO_COLOR=1 NTOP_REAL_LIBNVML=$T/none.so
wait_for 'no NVML' || bad "without NVML: $(screen | head -3)"
screen | grep -q "^  running .*app_loop" || bad "without NVML: no sessions"
keys q
wait_for 'NTOP-EXIT=0' || bad "q without NVML"
# no terminal: the usage
"$NTOP" </dev/null >"$T/u.out" 2>&1
[ $? = 2 ] && grep -q '^Usage: ntop COMMAND' "$T/u.out" || bad "ntop with no terminal: $(head -2 "$T/u.out")"
[ "$fail" = 0 ] && echo "tui_start: all passed"
exit "$fail"
