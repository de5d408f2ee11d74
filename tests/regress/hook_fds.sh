#!/bin/bash
# The event channel against an application that closes its descriptors
# (issue 10), with the real hook over the fake driver under `ntop record`:
#  - a program started with the event fd closed (spawn with close_fds) still
#    has its events recorded: the hook writes events-<pid>.log and ntop
#    record merges it into events.log;
#  - a program that reuses the fd number for a file of its own never gets an
#    event line in that file (the hook checks the pipe's identity,
#    NTOP_EVENT_ID, before every write).
source "$(dirname "$0")/hook_lib.inc"
NTOP=$B/bin/ntop
[ -x "$NTOP" ] || { echo "ntop not built"; exit 77; }
export NTOP_HOOK_DIR=$HOOKDIR NTOP_REAL_LIBCUDA=$FAKE

check() { # NAME: the app's process and launches are in the merged trace
	local name=$1 E=$TMP/$1/events.log
	expect "$E" "^hello .*exe=[^ ]*app_launch" "$name: hello from the app"
	expect "$E" "^launch .*api=cuLaunchKernel" "$name: launch lines"
	expect "$E" "^exit " "$name: exit line"
	ls "$TMP/$name"/events-*.log >/dev/null 2>&1 && fail "$name: per-process log left behind"
	"$NTOP" report "$TMP/$name" >"$TMP/$name.rep" 2>&1 || fail "$name: report failed"
	grep -q "No CUDA process" "$TMP/$name.rep" && fail "$name: report sees no process"
}

# 1. the event fd closed before the program starts
"$NTOP" record -o "$TMP/closed" -- bash -c 'exec 223>&- 224>&-; exec "$0" "$@"' "$APP" "$PTX" 0 \
	>"$TMP/closed.out" 2>"$TMP/closed.err" || fail "closed: exit $? ($(tail -2 "$TMP/closed.err"))"
check closed

# 2. the number reused for the program's own file: not one event line in it
"$NTOP" record -o "$TMP/reused" -- bash -c 'exec 223>&- 224>&-; exec 223>"$0.data" 224>&223; exec "$1" "$2" 0' \
	"$TMP/app" "$APP" "$PTX" >"$TMP/reused.out" 2>"$TMP/reused.err" || fail "reused: exit $?"
check reused
[ -s "$TMP/app.data" ] && fail "reused: the app's own file got $(wc -l <"$TMP/app.data") event lines"

[ "$fails" = 0 ] && echo "hook_fds: ok"
exit $((fails > 0))
