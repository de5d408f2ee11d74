#!/bin/bash
# Attach, detach, re-attach, over the driver test double: `ntop record`
# runs tests/fakecuda/app_loop (a parent and a fork child launching fill in
# a loop) headless; `ntop ls` lists it as running; a first viewer (`ntop
# attach`, no directory: the newest running session) follows it live and
# picks block_sched on fill's group, which reaches both processes through
# the control file; that viewer's terminal is killed (SIGHUP) and the
# program and its trace go on; a second viewer (`ntop attach DIR`) finds
# the request already there; `ntop view DIR` of the running session
# follows it too; after the program ends `ntop ls` says ended and `ntop
# attach` without a directory finds nothing running. A directory others
# can write is refused.
. "${NTOP_SOURCE_DIR:?}/tests/regress/tui_lib.inc"
B=$NTOP_BINARY_DIR
S=$NTOP_SOURCE_DIR
LOOP=$B/tests/fakecuda/app_loop
FAKE=$B/tests/fakecuda/driver/libcuda.so.1
[ -x "$LOOP" ] && [ -f "$FAKE" ] || { echo "skip: the driver test double is not built"; exit 77; }
mkdir -p "$T/cfg" "$T/state"
export XDG_CONFIG_HOME="$T/cfg" XDG_STATE_HOME="$T/state" HOME="$T" NTOP_THEMES_DIR="$S/themes"
D=$T/job
NTOP_REAL_LIBCUDA=$FAKE NTOP_HOOK_DIR=$B/lib/ntop "$NTOP" record -o "$D" -- "$LOOP" "$S/tests/fakecuda/kernels.ptx" \
	"$T/stop" 60 >"$T/rec.out" 2>&1 &
REC=$!
TUI_AT_EXIT='touch "$T/stop"; wait $REC 2>/dev/null'
wait_true '[ -s "$D/events.log" ] && grep -q "^launch" "$D/events.log"' 10 || bad "the recording did not start: $(cat "$T/rec.out")"
"$NTOP" ls >"$T/ls1.txt" 2>&1
grep -Eq "^running .* $D$" "$T/ls1.txt" || bad "ntop ls: $(cat "$T/ls1.txt")"

# viewer 1: the newest running session; a probe on fill's group
run_ntop 100 24 LC_ALL=C NO_COLOR=1 attach
wait_for '2 proc .*\+ fill *$' || bad "viewer 1: fill's group: $(screen | head -5)"
screen | tail -1 | grep -q 'attached, pid [0-9]* running' || bad "viewer 1: status: $(screen | tail -1)"
keys Home p
wait_for 'probes for fill' || bad "viewer 1: picker: $(screen | head -8)"
keys Enter
wait_true 'grep -q "^probe name=fill probes=.*block_sched.toml mode=next$" "$D/control"' || bad "control file: $(cat "$D/control" 2>&1)"
wait_true '[ "$(grep -E "^launch .*probed=1" "$D/events.log" | sed -E "s/.* pid=([0-9]+) .*/\1/" | sort -u | wc -l)" = 2 ]' 15 ||
	bad "the request did not reach both processes: $(grep -c probed=1 "$D/events.log") probed launch lines"
# its terminal goes away: the program and the recording go on
tm kill-session -t "$UI"
n1=$(wc -l <"$D/events.log")
wait_true '[ "$(wc -l <"$D/events.log")" -gt "$n1" ]' || bad "the trace stopped growing after the viewer's terminal closed"
kill -0 $REC 2>/dev/null || bad "ntop record ended with the viewer"

# viewer 2: the directory given; the request is there already
run_ntop 100 24 LC_ALL=C NO_COLOR=1 attach "$D"
wait_for 'fill *$' || bad "viewer 2: $(screen | head -5)"
keys L
wait_for '1 probe request already in the session' || bad "viewer 2: the request not found: $(screen | tail -6)"
keys L q
wait_for 'NTOP-EXIT=0' || bad "viewer 2: q: $(screen | tail -3)"
kill -0 $REC 2>/dev/null || bad "ntop record ended with viewer 2"
# ntop view of the running session follows it
run_ntop 100 24 LC_ALL=C NO_COLOR=1 view "$D"
wait_for 'attached, pid [0-9]+ running' || bad "ntop view of a running session: $(screen | tail -1)"
keys q
wait_for 'NTOP-EXIT=0' || bad "ntop view: q"

# the end
touch "$T/stop"
wait $REC
"$NTOP" ls >"$T/ls2.txt" 2>&1
grep -Eq "^ended +.* +2 +1 +[1-9][0-9]* +.* $D$" "$T/ls2.txt" || bad "ntop ls after the end: $(cat "$T/ls2.txt")"
"$NTOP" attach >"$T/none.out" 2>&1 </dev/null
[ $? = 2 ] && grep -q "no running session" "$T/none.out" || bad "attach with nothing running: $(cat "$T/none.out")"
# a directory others may write into is not steered
cp -r "$D" "$T/open" && chmod 0777 "$T/open"
run_ntop 100 24 LC_ALL=C NO_COLOR=1 attach "$T/open"
wait_for 'NTOP-EXIT=2' || bad "attach to a 0777 directory: $(screen | tail -3)"
screen | tr -d '\n' | grep -q 'another user could plant files there' || bad "attach to a 0777 directory: why: $(screen | grep -v '^$' | tail -3)"
[ "$fail" = 0 ] && echo "tui_attach: all passed"
exit "$fail"
