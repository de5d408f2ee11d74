#!/bin/bash
# The live UI (ntop PROGRAM) over the fake driver, in a private tmux server:
# kernels appear while the app runs (its fork child too, named after the
# parent's kernels), a probe picked on a kernel writes the control file and
# brings results and a timeline, the app's output goes to the log pane and
# app.log and never across the screen, exit status and a crash (killed by a
# signal) are reported, the loader audit module is in the app's LD_AUDIT
# unless --no-audit, quitting while the app runs asks (kill / detach /
# cancel), SIGTERM ends both politely, and the terminal is restored.
. "$(dirname "$0")/tui_app.inc"

# start NAME ARGS...: ntop ARGS in a shell in tmux (100x30)
start() {
	fresh 100 30
	tm send-keys -t "$UI" "clear; bash -c 'echo \$\$ > $TMP/ntop.pid; exec $NTOP $*'; echo NTOP-EXIT=\$?" Enter
}
# unhang DIR PID: app_loop's parent waits for its fork child at the end;
# a child hung at fork (ASan) is killed so the parent can finish
unhang() {
	local child
	child=$(grep '^hello ' "$1/events.log" | grep "ppid=$2 " | sed -E 's/.* pid=([0-9]+) .*/\1/')
	[ -n "$child" ] && kill -KILL $child 2>/dev/null
}
# the application's pid: the process whose parent is ntop
app_of() { grep '^hello ' "$1/events.log" | grep "ppid=$(cat "$TMP/ntop.pid") " | sed -E 's/.* pid=([0-9]+) .*/\1/' | head -1; }
app_pid() { screen | tail -1 | sed -nE 's/.*\[pid ([0-9]+) .*/\1/p'; }
# ---- kernels live, a probe, a timeline, the app's output, exit status ----
rm -f "$TMP/stop"
start -o "$TMP/s1" -- "$LOOP" "$PTX" "$TMP/stop" 60
wait_for 'running\]' || fail "no running app in the status line: $(screen | tail -2)"
wait_for ' fill *$' || fail "fill not listed: $(screen)"
wait_for 'scale' || fail "scale not listed"
# the fork child's kernels carry the parent's names (no kernel event of their
# own). Not required: under ASan a child forked while another thread holds
# the sanitizer's allocator lock can hang (a sanitizer limitation).
# Grouped (the default): one row for fill of both processes, "2 proc";
# Enter expands it into a row per process, g switches to a row per process.
for i in $(seq 50); do screen | grep -Eq '2 proc .* fill *$' && break; sleep 0.1; done
child_hung=0
if screen | grep -Eq '2 proc .* fill *$'; then
	screen | grep -q 'PID' || fail "PID column for a two-process app"
	# fill, launched in a loop by both, is the first row (sorted by launches)
	keys Home Enter
	wait_true '[ "$(screen | grep -cE "^ +[0-9]+ .*   fill *$")" = 2 ]' ||
		fail "Enter: the group's two processes not listed under it: $(screen | grep fill)"
	keys Enter
	wait_gone '^ +[0-9]+ .*   fill *$' || fail "Enter again: the group still open"
else
	echo "note: the fork child did not report (sanitizer fork hang?)"
	child_hung=1
fi
keys g
wait_for 'a row per process and kernel' || fail "g: $(screen | tail -1)"
[ "$child_hung" = 1 ] || wait_true '[ "$(screen | grep -c " fill *$")" = 2 ]' || fail "g: two fill rows: $(screen | grep fill)"
for i in $(seq 30); do screen | grep -q '(unnamed)' || break; sleep 0.1; done
screen | grep -q '(unnamed)' && fail "a kernel without a name: $(screen | grep unnamed)"
fills() { screen | grep -m1 ' fill *$' | awk '{print $2}'; }
l1=$(fills)
wait_true '[ -n "$l1" ] && [ "$(fills)" -gt "$l1" ]' || fail "launch counts do not grow ($l1 -> $(fills))"
keys / f i l l Enter
keys p
wait_for 'probes for fill' || fail "probe picker: $(screen)"
screen | grep -q '\[x\] block_sched' || fail "block_sched not offered/checked"
keys Enter
wait_for 'probed [0-9]' 15 || fail "no probed launch after picking a probe: $(screen | head -5)"
grep -q '^probe name=fill probes=/.*/block_sched.toml mode=next$' "$TMP/s1/control" ||
	fail "control file: $(cat "$TMP/s1/control" 2>&1)"
grep -q '^control .*gen=1' "$TMP/s1/events.log" || fail "the hook did not acknowledge the control file"
ls "$TMP"/s1/results/*.ntr >/dev/null 2>&1 || fail "no result files"
keys Enter
wait_for 'No.block:[0-9]+ Running:' || fail "launches view: $(screen | head -10)"
keys Enter
wait_for 'waves/SM' || fail "timeline: $(screen | head -5)"
wait_for '^ 0 [▀▄█]' || fail "timeline: SM 0 lane: $(screen | sed -n 4p)"
keys q q Escape
# the app's output: in the log pane (prefixed) and app.log, nowhere else
touch "$TMP/stop"
[ "$child_hung" = 1 ] && unhang "$TMP/s1" "$(app_of "$TMP/s1")"
wait_for 'exited with status [0-9]' 15 || fail "exit not reported: $(screen | tail -2); events: $(tail -3 "$TMP/s1/events.log" | cut -c1-160)"
keys L
wait_for 'app\| app_loop: done' || fail "app output not in the log pane: $(screen | tail -8)"
screen | grep 'app_loop: done' | grep -vq '^app| ' && fail "app output outside the log pane"
grep -q 'app_loop: done' "$TMP/s1/app.log" || fail "app.log: $(cat "$TMP/s1/app.log")"
keys q
[ "$child_hung" = 1 ] && code='[0-9]+' || code=0
restored $code "after the app exited"

# ---- a crash is reported with its signal ----
printf '#!/bin/sh\ntimeout -s KILL 8 "%s" "%s" 0 >/dev/null\necho crashing\nkill -SEGV $$\n' "$APP" "$PTX" > "$TMP/crash.sh"
chmod +x "$TMP/crash.sh"
start -o "$TMP/s2" -- "$TMP/crash.sh"
wait_for 'killed by signal 11' 15 || fail "crash not reported: $(screen | tail -3)"
wait_for 'vec|fill' || fail "kernels of the crashed app not listed"
keys q
restored 139 "crashed app"

# ---- the loader audit module: on by default, --no-audit leaves LD_AUDIT alone ----
printf '#!/bin/sh\necho "[$LD_AUDIT]" > "$1"\n' > "$TMP/audit.sh"
chmod +x "$TMP/audit.sh"
for mode in on off; do
	[ $mode = off ] && opt=--no-audit || opt=
	start $opt -o "$TMP/a-$mode" -- "$TMP/audit.sh" "$TMP/audit-$mode.txt"
	wait_for 'exited with status 0' 15 || fail "audit $mode: exit not reported: $(screen | tail -2)"
	keys q
	restored 0 "audit $mode"
done
[ "$(cat "$TMP/audit-on.txt")" = "[$HOOKDIR/libntop_audit.so]" ] || fail "live LD_AUDIT: $(cat "$TMP/audit-on.txt")"
[ "$(cat "$TMP/audit-off.txt")" = "[]" ] || fail "live --no-audit LD_AUDIT: $(cat "$TMP/audit-off.txt")"

# ---- quit while running: cancel, then kill ----
rm -f "$TMP/stop"
start -o "$TMP/s3" -- "$LOOP" "$PTX" "$TMP/stop" 60
wait_for ' fill *$' || fail "s3: fill not listed"
pid=$(app_of "$TMP/s3")
keys q
wait_for 'still running' || fail "q while running did not ask"
keys c
wait_gone 'still running' || fail "cancel left the question up"
keys C-c
wait_for 'still running' || fail "Ctrl-C did not ask"
keys k
restored 143 "kill"
[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && fail "app $pid still alive after kill"

# ---- detach: the app runs on, its events still recorded ----
rm -f "$TMP/stop"
start -o "$TMP/s4" -- "$LOOP" "$PTX" "$TMP/stop" 60
wait_for ' fill *$' || fail "s4: fill not listed"
pid=$(app_of "$TMP/s4")
keys q
wait_for 'still running' || fail "s4: no question"
keys d
restored 0 "detach"
screen | grep -q 'detached from pid' || fail "detach message"
[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || fail "app $pid gone after detach"
touch "$TMP/stop"
for i in $(seq 100); do grep -q '^exit ' "$TMP/s4/events.log" && break; sleep 0.1; done
grep -q "^exit .*pid=$pid " "$TMP/s4/events.log" || unhang "$TMP/s4" "$pid"
for i in $(seq 100); do grep -q "^exit .*pid=$pid " "$TMP/s4/events.log" && break; sleep 0.1; done
grep -q "^exit .*pid=$pid " "$TMP/s4/events.log" || fail "events after detaching were not recorded"
# the copier removes the event socket once the app is gone
for i in $(seq 50); do [ -e "$TMP/s4/events.sock" ] || break; sleep 0.1; done
[ -e "$TMP/s4/events.sock" ] && fail "the detached copier left events.sock behind"

# ---- SIGTERM: the app is terminated, the terminal restored ----
rm -f "$TMP/stop"
start -o "$TMP/s5" -- "$LOOP" "$PTX" "$TMP/stop" 60
wait_for ' fill *$' || fail "s5: fill not listed"
pid=$(app_of "$TMP/s5")
kill -TERM "$(cat "$TMP/ntop.pid")"
restored 143 "SIGTERM"
[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && fail "app $pid alive after SIGTERM to ntop"

# ---- a program that cannot run: nothing starts ----
fresh 100 30
tm send-keys -t "$UI" "cd $TMP; clear; $NTOP ./no-such-program; echo NTOP-EXIT=\$?" Enter
wait_for 'NTOP-EXIT=127' || fail "missing program: $(screen | grep -v '^$')"
screen | grep -q "cannot run './no-such-program'" || fail "missing program message"
[ -e "$TMP/ntop-trace" ] && fail "a session directory was made for a missing program"

tui_app_done tui_live
