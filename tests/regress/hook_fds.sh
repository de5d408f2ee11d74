#!/bin/bash
# The event channel, with the real hook over the fake driver
# under `ntop record`: every process connects to the session's socket
# (NTOP_EVENT_SOCK) itself, so nothing depends on inherited descriptors.
#  1. a Python parent starting children with subprocess (close_fds=True,
#     one in another working directory) and with multiprocessing "spawn"
#     (two workers that load libcuda.so.1 with ctypes and launch, one that
#     runs the app through subprocess): every child's pid has its hello,
#     kernel, launch and exit lines in events.log and is an exited process
#     in `ntop report`;
#  2. an app that closes fds 3..1023 after its first launch and puts its own
#     data file on the numbers (app_fds), with the hook's debug log on too:
#     the file holds the app's bytes only, every launch after the close is
#     recorded;
#  3. a relative trace directory and a child in another working directory;
#  4. a process that cannot reach the socket writes events-<pid>.log (0600,
#     made with O_EXCL: a link in its way is left alone), which ntop record
#     follows and merges; by hand, without ntop, the file stays;
#  5. ntop killed while the app runs: the app finishes, its later lines are
#     in its events-<pid>.log.
# Runs 1-4 leave nothing of the channel behind: no events.sock, no
# events-<pid>.log.
source "$(dirname "$0")/hook_lib.inc"
NTOP=$B/bin/ntop
FDS=$B/tests/fakecuda/app_fds
[ -x "$NTOP" ] && [ -x "$FDS" ] || { echo "ntop or app_fds not built"; exit 77; }
export NTOP_HOOK_DIR=$HOOKDIR NTOP_REAL_LIBCUDA=$FAKE

# proc DIR PID WHAT: PID's hello, kernel, launch, exit lines, and the report
proc() {
	local t
	for t in hello kernel launch exit; do
		grep -Eq "^$t t=[0-9]+ pid=$2( |$)" "$1/events.log" || fail "$3: no $t line of pid $2"
	done
	grep -Eq "^Process $2 .*exited" "$1.rep" || fail "$3: pid $2 not an exited process in the report"
}
# clean DIR WHAT: the run left nothing of the channel behind
clean() {
	[ -e "$1/events.sock" ] && fail "$2: events.sock left behind"
	ls "$1"/events-*.log >/dev/null 2>&1 && fail "$2: per-process log left behind: $(ls "$1")"
	"$NTOP" report "$1" >"$1.rep" 2>&1 || fail "$2: report failed"
}

# 1. a Python parent: subprocess with close_fds, multiprocessing spawn
if command -v python3 >/dev/null; then
	cat >"$TMP/parent.py" <<'PY'
import ctypes, multiprocessing as mp, os, subprocess, sys

def ck(rc, what):
    if rc != 0:
        raise RuntimeError("%s -> %d" % (what, rc))

def ctypes_worker(ptx, q):
    # a spawned interpreter (its fds closed) that loads the driver itself
    cu = ctypes.CDLL("libcuda.so.1")
    ck(cu.cuInit(0), "cuInit")
    dev, ctx, mod, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    image = ctypes.create_string_buffer(open(ptx, "rb").read())
    ck(cu.cuModuleLoadData(ctypes.byref(mod), image), "cuModuleLoadData")
    ck(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"fill"), "cuModuleGetFunction")
    buf, n = ctypes.c_uint64(), ctypes.c_uint(1024)
    ck(cu.cuMemAlloc_v2(ctypes.byref(buf), ctypes.c_size_t(4096)), "cuMemAlloc")
    params = (ctypes.c_void_p * 2)(ctypes.addressof(buf), ctypes.addressof(n))
    for i in range(4):
        ck(cu.cuLaunchKernel(fn, 1 + i, 1, 1, 64, 1, 1, 0, None, params, None), "cuLaunchKernel")
    ck(cu.cuCtxSynchronize(), "cuCtxSynchronize")
    q.put("ctypes %d" % os.getpid())

def app_worker(argv, q):
    q.put(subprocess.run(argv, close_fds=True, capture_output=True, text=True).stdout.strip())

if __name__ == "__main__":
    app, ptx = sys.argv[1], sys.argv[2]
    argv = [app, ptx, "-", "5"]
    out = [subprocess.run(argv, close_fds=True, capture_output=True, text=True).stdout.strip(),
           subprocess.run(argv, close_fds=True, cwd="/", capture_output=True, text=True).stdout.strip()]
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    ps = [ctx.Process(target=ctypes_worker, args=(ptx, q)) for _ in range(2)]
    ps.append(ctx.Process(target=app_worker, args=(argv, q)))
    for p in ps:
        p.start()
    out += [q.get(timeout=60) for _ in ps]
    for p in ps:
        p.join()
    print("\n".join(out))
    print("exitcodes", [p.exitcode for p in ps])
PY
	# a sanitized hook inside Python (not built with ASan) needs the runtime first
	pre=()
	asan=$(ldd "$HOOKDIR/libcuda.so.1" 2>/dev/null | sed -nE 's/.*libasan[^ ]* => ([^ ]+).*/\1/p' | head -1)
	[ -n "$asan" ] && pre=(env LD_PRELOAD="$asan" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
	"${pre[@]}" "$NTOP" record -o "$TMP/py" -- python3 "$TMP/parent.py" "$FDS" "$PTX" >"$TMP/py.out" 2>"$TMP/py.err" ||
		fail "py: exit $? ($(tail -3 "$TMP/py.err"))"
	expect "$TMP/py.out" "^exitcodes \[0, 0, 0\]" "py: the spawned workers ran"
	pids=$(sed -nE 's/^app_fds: pid ([0-9]+), 6 launches, 0 failures$/\1/p; s/^ctypes ([0-9]+)$/\1/p' "$TMP/py.out" | sort -u)
	[ "$(echo $pids | wc -w)" = 5 ] || fail "py: want 5 children (3 app_fds, 2 ctypes), got: $(cat "$TMP/py.out")"
	clean "$TMP/py" py
	for p in $pids; do
		proc "$TMP/py" "$p" py
	done
	n=$(grep -c '^hello ' "$TMP/py/events.log")
	[ "$n" = 5 ] || fail "py: $n processes said hello, want 5"
else
	echo "skip 1: no python3"
fi

# 2. an app that closes 3..1023 and reuses the numbers for its own file
NTOP_LOG=$TMP/hook.log "$NTOP" record -o "$TMP/daemon" -- "$FDS" "$PTX" "$TMP/app.data" 30 \
	>"$TMP/daemon.out" 2>"$TMP/daemon.err" || fail "daemon: exit $? ($(tail -3 "$TMP/daemon.err"))"
expect "$TMP/daemon.out" "^app_fds: pid [0-9]+, 31 launches, 0 failures" "daemon: the app ran"
seq 0 29 | sed 's/^/app data line /' >"$TMP/want.data"
cmp -s "$TMP/app.data" "$TMP/want.data" ||
	fail "daemon: the app's file holds more than its data: $(grep -v '^app data line' "$TMP/app.data" | head -3)"
clean "$TMP/daemon" daemon
pid=$(sed -nE 's/^app_fds: pid ([0-9]+),.*/\1/p' "$TMP/daemon.out")
proc "$TMP/daemon" "$pid" daemon
for s in $(seq 2 31); do
	grep -Eq "^launch t=[0-9]+ pid=$pid kid=1 seq=$s " "$TMP/daemon/events.log" || fail "daemon: launch seq $s after the close is lost"
done
# the hook saw its connection go, connected again (no file), and its log
# (whose fd went too) was opened again
grep -q "^[0-9.]* $pid .*is no longer ours" "$TMP/hook.log" 2>/dev/null || fail "daemon: the hook did not notice: $(cat "$TMP/hook.log")"
grep -q "events go to" "$TMP/hook.log" && fail "daemon: the hook fell back to a file"

# 3. a relative trace directory, the app in another working directory
(cd "$TMP" && "$NTOP" record -o rel -- bash -c 'cd / && exec "$0" "$1" - 3' "$FDS" "$PTX" \
	>"$TMP/rel.out" 2>"$TMP/rel.err") || fail "rel: exit $? ($(tail -3 "$TMP/rel.err"))"
clean "$TMP/rel" rel
pid=$(sed -nE 's/^app_fds: pid ([0-9]+),.*/\1/p' "$TMP/rel.out")
[ -n "$pid" ] && proc "$TMP/rel" "$pid" rel || fail "rel: the app did not run: $(cat "$TMP/rel.out")"

# 4. no socket reachable: events-<pid>.log, followed and merged by ntop record
"$NTOP" record -o "$TMP/nosock" -- bash -c 'NTOP_EVENT_SOCK=/nonexistent/events.sock exec "$0" "$1" - 3' \
	"$FDS" "$PTX" >"$TMP/nosock.out" 2>"$TMP/nosock.err" || fail "nosock: exit $? ($(tail -3 "$TMP/nosock.err"))"
clean "$TMP/nosock" nosock
pid=$(sed -nE 's/^app_fds: pid ([0-9]+),.*/\1/p' "$TMP/nosock.out")
[ -n "$pid" ] && proc "$TMP/nosock" "$pid" nosock || fail "nosock: the app did not run"
# by hand: the file is the process's own (0600), a link in its way is left alone
mkdir -m 700 "$TMP/hand"
: >"$TMP/target"
NTOP_EVENT_SOCK=$TMP/none.sock NTOP_TRACE_DIR=$TMP/hand LD_LIBRARY_PATH=$HOOKDIR \
	bash -c 'ln -s "$0" "$NTOP_TRACE_DIR/events-$$.log"; exec "$1" "$2" - 3' "$TMP/target" "$FDS" "$PTX" \
	>"$TMP/hand.out" 2>&1 || fail "hand: exit $?"
pid=$(sed -nE 's/^app_fds: pid ([0-9]+),.*/\1/p' "$TMP/hand.out")
[ -s "$TMP/target" ] && fail "hand: the hook wrote through a link"
f="$TMP/hand/events-$pid.1.log"
[ -f "$f" ] && [ "$(stat -c %a "$f")" = 600 ] || fail "hand: no events-$pid.1.log of mode 600: $(ls -l "$TMP/hand")"
for t in hello kernel launch exit; do
	grep -Eq "^$t t=[0-9]+ pid=$pid " "$f" 2>/dev/null || fail "hand: no $t line in $(basename "$f")"
done

# 5. ntop killed while the app runs: the app goes on (no SIGPIPE), its lines
# go to events-<pid>.log once the connection broke
rm -f "$TMP/stop"
"$NTOP" record -o "$TMP/killed" -- "$B/tests/fakecuda/app_loop" "$PTX" "$TMP/stop" 30 >"$TMP/killed.out" 2>&1 &
nt=$!
for i in $(seq 100); do grep -q '^launch ' "$TMP/killed/events.log" 2>/dev/null && break; sleep 0.1; done
app=$(grep '^hello ' "$TMP/killed/events.log" | grep "ppid=$nt " | sed -E 's/.* pid=([0-9]+) .*/\1/' | head -1)
kill -KILL "$nt"
wait "$nt" 2>/dev/null
sleep 0.3
touch "$TMP/stop"
for i in $(seq 100); do [ -n "$app" ] && kill -0 "$app" 2>/dev/null || break; sleep 0.1; done
expect "$TMP/killed.out" "^app_loop: done, 0 failures" "killed: the app did not finish well"
[ -n "$app" ] && grep -Eq "^exit t=[0-9]+ pid=$app " "$TMP/killed/events-$app.log" 2>/dev/null ||
	fail "killed: no exit line of $app in events-$app.log: $(ls "$TMP/killed")"

[ "$fails" = 0 ] && echo "hook_fds: ok"
exit $((fails > 0))
