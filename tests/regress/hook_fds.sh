#!/bin/bash
# The event channel against an application that closes its descriptors
# (issue 10), with the real hook over the fake driver under `ntop record`:
#  - a program started with the event fd closed (spawn with close_fds) still
#    has its events recorded: the hook writes events-<pid>.log and ntop
#    record merges it into events.log;
#  - a program that reuses the fd number for a file of its own never gets an
#    event line in that file (the hook checks the pipe's identity,
#    NTOP_EVENT_ID, before every write);
#  - a Python parent whose workers start with close_fds or by
#    multiprocessing "spawn": every worker is recorded.
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

# 3. a Python parent starting workers with close_fds (subprocess's default)
# in another working directory, and through multiprocessing "spawn": every
# worker process is in the trace
cat >"$TMP/parent.py" <<'PY'
import multiprocessing as mp, subprocess, sys
def work(argv):
    return subprocess.run(argv, close_fds=True, cwd="/", capture_output=True).returncode
if __name__ == "__main__":
    app, ptx = sys.argv[1], sys.argv[2]
    rcs = [work([app, ptx, "0"]), work([app, ptx, "0"])]
    with mp.get_context("spawn").Pool(1) as pool:
        rcs += pool.map(work, [[app, ptx, "0"]])
    print("workers", rcs)
PY
"$NTOP" record -o "$TMP/py" -- python3 "$TMP/parent.py" "$APP" "$PTX" >"$TMP/py.out" 2>"$TMP/py.err" ||
	fail "py: exit $? ($(tail -2 "$TMP/py.err"))"
expect "$TMP/py.out" "^workers \[0, 0, 0\]" "py: the workers ran"
n=$(grep '^hello .*exe=[^ ]*app_launch' "$TMP/py/events.log" | sed -E 's/.* ppid=([0-9]+) .*/\1/' | sort -u | wc -l)
# each app_launch forks once: 3 workers + 3 children, the workers' parents
# are the Python processes, the children's the workers
w=$(grep -c '^hello .*exe=[^ ]*app_launch' "$TMP/py/events.log")
[ "$w" = 6 ] || fail "py: $w app_launch processes recorded, want 6 (3 workers and their forks)"
[ "$n" -ge 3 ] || fail "py: workers recorded under $n parents"

[ "$fails" = 0 ] && echo "hook_fds: ok"
exit $((fails > 0))
