#!/bin/bash
# Faults around a recording (doc/security.md), each on the CPU:
# a file size limit (SIGXFSZ) neither kills ntop nor the app; a reader that
# stops reading makes the hook count what it could not deliver; a recording
# cut short by kill -9 of ntop or of the app is read whole and flagged
# incomplete; a trace directory removed mid-run is not announced as
# written; a FIFO in place of events.log, a result file or the real driver
# hangs nothing; a result that would inflate to 2 GiB is refused at once;
# export names why a probed kernel has no result. ntop record runs either
# a stand-in hook with shell programs sending event lines (bin/ev_send) or
# the real hook with the fake driver.
source "$(dirname "$0")/hook_lib.inc"
NTOP=$B/bin/ntop
EV=$B/bin/ev_send
BURST=$B/tests/fakecuda/app_burst
[ -x "$NTOP" ] && [ -x "$EV" ] && [ -x "$BURST" ] || { echo "ntop, ev_send or app_burst not built"; exit 77; }
export EV
mkdir "$TMP/stand-in"
: > "$TMP/stand-in/libcuda.so.1"
# stand-in: ntop record with the empty hook directory, shell programs
stand_in() { NTOP_HOOK_DIR=$TMP/stand-in "$NTOP" record "$@"; }
# the real hook on the fake driver; run as `real_rec ... &`: exec, so $! is ntop
real_rec() { NTOP_REAL_LIBCUDA=$FAKE exec "$NTOP" record -p block_sched --limit 100000 "$@"; }
child_of() { # PID: its first child (from /proc: no procps needed)
	local f
	for f in /proc/[0-9]*/stat; do
		awk -v p="$1" '$4 == p { print $1; exit }' "$f" 2>/dev/null
	done | head -1
}
wait_for() { # CONDITION SECONDS WHAT
	local i
	for ((i = 0; i < $2 * 10; i++)); do eval "$1" && return 0; sleep 0.1; done
	fail "timed out waiting for $3"
	return 1
}

# ---- 1. ulimit -f: ntop keeps the app's status and says what happened ----
(ulimit -f 2; stand_in -o "$TMP/xfsz" -- bash -c '
	for i in $(seq 300); do echo "warn t=$i pid=$$ msg=padding%20padding%20padding%20padding%20padding"; done | "$EV"
	exit 7') > /dev/null 2> "$TMP/xfsz.err"
rc=$?
[ "$rc" = 7 ] || fail "ulimit -f: ntop exited $rc, want the program's 7 (153: killed by SIGXFSZ): $(tail -2 "$TMP/xfsz.err")"
expect "$TMP/xfsz.err" "writing .*events.log failed: File too large" "ulimit -f: the write error said"
expect "$TMP/xfsz.err" "trace in $TMP/xfsz, incomplete: writing events.log failed \(File too large\)" "ulimit -f: summary"

# ... and the hook keeps SIGXFSZ from the application
mkdir "$TMP/hx"
(ulimit -f 4; NTOP_TRACE_DIR=$TMP/hx NTOP_PROBES=$S/probes/block_sched.toml NTOP_PROBE_LIMIT=20 NTOP_EVENT_FD=9 \
	NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR "$APP" "$PTX" 3 > "$TMP/hx.out" 2>&1 9> "$TMP/hx.log")
rc=$?
[ "$rc" = 3 ] || fail "ulimit -f in the app: exit $rc, want 3 (153: the hook let SIGXFSZ kill it)"
grep -q "export table says 42, 0 failures" "$TMP/hx.out" || fail "ulimit -f in the app: output changed: $(tail -2 "$TMP/hx.out")"
grep -hq "^lost .*events=[1-9]" "$TMP"/hx/events-*.log 2>/dev/null ||
	fail "ulimit -f in the app: the undelivered lines are not counted in an events-<pid>.log"

# ---- 2. a reader that stops reading: the hook counts what it could not deliver ----
real_rec -o "$TMP/stop" -- "$BURST" "$PTX" 3000 > "$TMP/stop.out" 2> "$TMP/stop.err" &
N=$!
wait_for 'grep -q "^hello" "$TMP/stop/events.log" 2>/dev/null' 20 "the app's hello"
kill -STOP "$N"
child=$(child_of "$N")
# the app fills the socket and the hook's queue, exits (a zombie: ntop is stopped)
wait_for '[ -z "$child" ] || [ "$(awk "{print \$3}" /proc/$child/stat 2>/dev/null)" = Z ]' 120 "the app to end while ntop is stopped"
kill -CONT "$N"
wait "$N"
rc=$?
[ "$rc" = 0 ] || fail "stopped reader: rc $rc: $(tail -3 "$TMP/stop.err")"
lost=$(sed -nE 's/^lost .*events=([0-9]+).*/\1/p' "$TMP/stop/events.log" | awk '{s += $1} END {print s + 0}')
[ "$lost" -gt 0 ] || fail "stopped reader: no lost events counted in events.log"
expect "$TMP/stop.err" "^ntop: [0-9]+ events never reached the trace" "stopped reader: the summary says events were lost"
"$NTOP" report --json "$TMP/stop" > "$TMP/stop.json" 2>&1
expect "$TMP/stop.json" "\"lost_events\":$lost," "stopped reader: report counts them"

# ---- 3. kill -9 of ntop: the trace is read whole and flagged ----
real_rec -o "$TMP/k9" -- bash -c '"$0" "$1" 2000; touch "$2"' "$BURST" "$PTX" "$TMP/k9.done" > /dev/null 2>&1 &
N=$!
wait_for '[ "$(ls "$TMP/k9/results" 2>/dev/null | wc -l)" -ge 20 ]' 30 "results before kill -9"
{ kill -KILL "$N"; wait "$N"; } 2> /dev/null # (no "Killed" job notice)
wait_for '[ -e "$TMP/k9.done" ]' 120 "the app to finish after ntop was killed"
"$NTOP" report "$TMP/k9" > "$TMP/k9.rep" 2>&1
expect "$TMP/k9.rep" "^Ended: no end line from ntop" "kill -9 ntop: no end line said"
expect "$TMP/k9.rep" "^INCOMPLETE: .*per-process event file.* ntop never merged" "kill -9 ntop: flagged incomplete"
files=$(find "$TMP/k9/results" -name '*.ntr' | wc -l)
"$NTOP" report --json "$TMP/k9" > "$TMP/k9.json"
nres=$(grep -o '"seq":' "$TMP/k9.json" | wc -l)
[ "$nres" = "$files" ] || fail "kill -9 ntop: report reads $nres results, $files files are on disk"

# ---- 4. kill -9 of the app ----
stand_in -o "$TMP/a9" -- bash -c 'echo "hello t=1 pid=$$ exe=/bin/bash hook=test" | "$EV"; kill -9 $$' > /dev/null 2>&1
rc=$?
[ "$rc" = 137 ] || fail "kill -9 app: rc $rc, want 137"
expect "$TMP/a9/events.log" "^end t=[0-9]+ pid=[0-9]+ status=137 signal=9$" "kill -9 app: end line"
"$NTOP" report "$TMP/a9" > "$TMP/a9.rep" 2>&1
expect "$TMP/a9.rep" "^INCOMPLETE: the program was killed by signal 9" "kill -9 app: flagged"
expect "$TMP/a9.rep" "^INCOMPLETE: pid [0-9]+ never reached its exit" "kill -9 app: its process never exited"

# ---- 5. the trace directory removed mid-run ----
stand_in -o "$TMP/gone" -- bash -c 'rm -rf "$NTOP_TRACE_DIR"; exit 4' > /dev/null 2> "$TMP/gone.err"
rc=$?
[ "$rc" = 4 ] || fail "removed directory: rc $rc, want 4"
expect "$TMP/gone.err" "trace directory $TMP/gone was removed or replaced while recording" "removed directory said"
grep -q "trace in $TMP/gone" "$TMP/gone.err" && fail "removed directory announced as written"

# ---- 6. FIFOs hang nothing ----
mkdir "$TMP/ff"
mkfifo "$TMP/ff/events.log"
timeout 20 "$NTOP" report "$TMP/ff" > "$TMP/ff.out" 2>&1
rc=$?
[ "$rc" != 124 ] && [ "$rc" != 0 ] || fail "FIFO events.log: report rc $rc (124: it hung)"
expect "$TMP/ff.out" "events.log: not a regular file \(a FIFO\)" "FIFO events.log: report says why"
timeout 20 "$NTOP" export "$TMP/ff" -k x -o "$TMP/ff.png" > "$TMP/ff.out" 2>&1
rc=$?
[ "$rc" != 124 ] && [ "$rc" != 0 ] || fail "FIFO events.log: export rc $rc"
timeout 20 "$NTOP" view "$TMP/ff" < /dev/null > "$TMP/ff.out" 2>&1
rc=$?
[ "$rc" != 124 ] && [ "$rc" != 0 ] || fail "FIFO events.log: view rc $rc"
mkdir -p "$TMP/fr/results"
printf '%s\n' "record t=1 pid=1 argv=x version=0.1.0 cwd=/ probes=block_sched kernels=" \
	"hello t=1 pid=2 ppid=1 exe=x hook=0.1.0 driver=x" "kernel t=1 pid=2 kid=1 mid=1 ptx=1 name=k" \
	"result t=1 pid=2 kid=1 seq=1 file=results/2-1.ntr maps=1 records=1 dropped=0" > "$TMP/fr/events.log"
mkfifo "$TMP/fr/results/2-1.ntr"
timeout 20 "$NTOP" report "$TMP/fr" > "$TMP/fr.out" 2>&1
[ $? = 124 ] && fail "FIFO result file: report hung"
expect "$TMP/fr.out" "not a regular file \(a FIFO\)" "FIFO result: report says why"
timeout 20 "$NTOP" export "$TMP/fr" -k k -o "$TMP/fr.png" > "$TMP/fr.out" 2>&1
[ $? = 124 ] && fail "FIFO result file: export hung"
mkfifo "$TMP/driver"
mkdir "$TMP/fd"
NTOP_TRACE_DIR=$TMP/fd NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$TMP/driver LD_LIBRARY_PATH=$HOOKDIR \
	timeout 20 "$APP" "$PTX" 3 > /dev/null 2>&1 9> "$TMP/fd.log"
rc=$?
[ "$rc" = 124 ] && fail "a FIFO as the real driver hung the app"
expect "$TMP/fd.log" "^warn .*msg=.*$TMP/driver%20is%20not%20a%20regular%20file" "FIFO driver: the hook says why"

# ---- 7. a decompression bomb: 64 KiB that would inflate to 2 GiB ----
mkdir -p "$TMP/zb/results"
sed 's/^result .*/result t=1 pid=2 kid=1 seq=1 file=results\/2-1.ntr maps=1 records=1 dropped=0/' "$TMP/fr/events.log" \
	> "$TMP/zb/events.log"
python3 - "$TMP/zb/results/2-1.ntr" <<'PY'
import struct, sys
units = 1 << 27; total = units * 16; blocks = (total + 131071) // 131072
frame = struct.pack('<IB Q', 0xFD2FB528, 0xE0, total)
for i in range(blocks):
    sz = 131072 if i + 1 < blocks else total - i * 131072
    bh = (1 if i + 1 == blocks else 0) | 1 << 1 | sz << 3
    frame += struct.pack('<I', bh)[:3] + b'\0'
hdr = b'NTOPRES\0' + struct.pack('<II Q', 1, 104, 0) + struct.pack('<I', 1) * 18 + struct.pack('<II', 1, 0)
body = struct.pack('<I', 1) + b'k' + struct.pack('<I', 1) + b'p'
desc = struct.pack('<IIIIII QQQQ', 61, 1, 1, 12, 0, 0, units, units * 4, units * 12, len(frame)) + struct.pack('<I', 1) + b'm'
data = bytearray(hdr + body + desc + frame)
data[16:24] = struct.pack('<Q', len(data))
open(sys.argv[1], 'wb').write(data)
PY
start=$(date +%s%N)
timeout 60 "$NTOP" report "$TMP/zb" > "$TMP/zb.out" 2>&1
ms=$((($(date +%s%N) - start) / 1000000))
expect "$TMP/zb.out" "refused as a decompression bomb" "bomb: report refuses it with a reason"
[ "$ms" -lt 3000 ] || fail "bomb: report took $ms ms"

# ---- 8. export names why a probed kernel has no result ----
mkdir "$TMP/nr"
printf '%s\n' "record t=1 pid=1 argv=x version=0.1.0 cwd=/ probes=block_sched kernels=" \
	"hello t=1 pid=2 ppid=1 exe=x hook=0.1.0 driver=x" "kernel t=1 pid=2 kid=1 mid=1 ptx=1 name=k" \
	"stats t=2 pid=2 kid=1 launches=3 timed=0 total_ns=0 min_ns=0 max_ns=0 probed=2" > "$TMP/nr/events.log"
"$NTOP" export "$TMP/nr" -k k -o "$TMP/nr.png" > "$TMP/nr.out" 2>&1
expect "$TMP/nr.out" "kernel k: 2 probed launches, but no result reached the trace" "export: missing results named"
expect "$TMP/nr.out" "pid 2 never reached its exit" "export: the cause"
grep -q "was never probed" "$TMP/nr.out" && fail "export: a probed kernel called never probed"

[ "$fails" = 0 ] && echo "sec_faults: all passed"
exit $((fails > 0))
