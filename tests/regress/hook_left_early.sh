#!/bin/bash
# Processes that end without the hook's exit line (tests/fakecuda/app_exit.c):
# one that _exits while idle, a forked child killed while idle (and its
# parent, which launched nothing and exits normally), a forked child that
# never touches the GPU (it leaves no trace: a fork child says hello with
# its first line), and one that _exits right after launching. The idle ones lost nothing (their last line, the
# hook's `idle lines=N`, counts every line they sent, and each probed launch
# has its result): `ntop report` says they left early, not INCOMPLETE; the
# busy one stays INCOMPLETE with the count of probed launches without a
# result. Plumbing only: the driver is the test double.
source "$(dirname "$0")/hook_lib.inc"
NTOP=$B/bin/ntop
APP=$B/tests/fakecuda/app_exit
[ -x "$APP" ] || { echo "app_exit not built"; exit 77; }
rec() { # MODE
	NTOP_REAL_LIBCUDA=$FAKE NTOP_HOOK_DIR=$HOOKDIR "$NTOP" record -p block_sched -o "$TMP/$1" -- "$APP" "$PTX" "$1" \
		>"$TMP/$1.out" 2>&1 || fail "$1: record failed: $(tail -3 "$TMP/$1.out")"
	"$NTOP" report "$TMP/$1" >"$TMP/$1.txt" 2>&1 || fail "$1: report failed"
	"$NTOP" report --json "$TMP/$1" >"$TMP/$1.json" 2>&1 || fail "$1: report --json failed"
}

rec idle
grep -q '^INCOMPLETE' "$TMP/idle.txt" && fail "idle: flagged INCOMPLETE: $(grep INCOMPLETE "$TMP/idle.txt")"
expect "$TMP/idle.txt" "^Left early: pid [0-9]+ left without its exit line \(os._exit, or killed\) while idle: every line it sent and every result it queued is here$" "idle: left early"
expect "$TMP/idle.txt" "seq [0-9]+: No.block:4" "idle: its probed launches"
grep -q '^idle .* lines=[0-9]' "$TMP/idle/events.log" || fail "idle: no idle line in events.log"
python3 - "$TMP/idle.json" <<'PY' || fail "idle: JSON"
import json, sys
t = json.load(open(sys.argv[1]))
assert t["incomplete"] == [] and len(t["left_early"]) == 1, (t["incomplete"], t["left_early"])
PY

rec child
grep -q '^INCOMPLETE' "$TMP/child.txt" && fail "child: flagged INCOMPLETE: $(grep INCOMPLETE "$TMP/child.txt")"
[ "$(grep -c '^Left early' "$TMP/child.txt")" = 1 ] || fail "child: want the killed child alone as left early: $(grep 'Left early' "$TMP/child.txt")"
parent=$(grep '^hello' "$TMP/child/events.log" | head -1 | grep -o ' pid=[0-9]*' | cut -d= -f2)
grep -q "^exit .* pid=$parent launches=0" "$TMP/child/events.log" || fail "child: the parent, which launched nothing, has no exit line"

# a forked child that never touches the GPU (as a compile worker that
# execs another program): it says nothing, not even hello, so it cannot
# look incomplete
rec quiet
grep -q '^INCOMPLETE' "$TMP/quiet.txt" && fail "quiet child: flagged INCOMPLETE: $(grep INCOMPLETE "$TMP/quiet.txt")"
[ "$(grep -c '^hello' "$TMP/quiet/events.log")" = 1 ] || fail "quiet child: a hello of its own: $(grep '^hello' "$TMP/quiet/events.log" | cut -c1-80)"

rec busy
expect "$TMP/busy.txt" "^INCOMPLETE: pid [0-9]+ never reached its exit .*(probed launch(es)? without a result|while busy)" "busy: INCOMPLETE"
grep -q '^Left early' "$TMP/busy.txt" && fail "busy: said left early"

# a line after the idle one (the count no longer matches): INCOMPLETE again
cp -r "$TMP/idle" "$TMP/edited"
pid=$(grep '^idle' "$TMP/edited/events.log" | tail -1 | grep -o ' pid=[0-9]*' | cut -d= -f2)
sed -i "s/^\(idle .* pid=$pid lines=\)\([0-9]*\)/\1999/" "$TMP/edited/events.log"
"$NTOP" report "$TMP/edited" >"$TMP/edited.txt" 2>&1
expect "$TMP/edited.txt" "^INCOMPLETE: pid $pid never reached its exit" "an idle line counting other lines: INCOMPLETE"
[ "$fails" = 0 ] && echo "hook_left_early: ok"
exit $((fails > 0))
