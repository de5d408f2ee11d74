#!/bin/bash
# ntop record without a GPU: a stand-in hook directory (an empty
# libcuda.so.1 the programs never load) and shell programs that send event
# lines to NTOP_EVENT_SOCK themselves (bin/ev_send, one connection each, as
# the hook makes one per process). Checks exit status propagation, the
# trace directory (0700, record header, events copied, the socket removed),
# the environment handed to the program, a trace directory too long for a
# socket, the map memory the hook gave back said at the end, and every
# refusal before the program starts.
set -u
NTOP="${NTOP_BINARY_DIR:?}/bin/ntop"
[ -x "$NTOP" ] || { echo "FAIL: $NTOP not built"; exit 1; }
export EV="$NTOP_BINARY_DIR/bin/ev_send"
[ -x "$EV" ] || { echo "FAIL: $EV not built"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
mkdir "$T/hook"
: > "$T/hook/libcuda.so.1"
export NTOP_HOOK_DIR="$T/hook"
perm() { stat -c %a "$1"; }

# exit status, stdout, header line, permissions
out=$("$NTOP" record -o "$T/a/b/tr1" -- /bin/sh -c 'echo hi; exit 3' 2>"$T/err")
rc=$?
[ "$rc" = 3 ] || bad "exit status $rc, want 3"
[ "$out" = "hi" ] || bad "stdout '$out'"
[ -f "$T/a/b/tr1/events.log" ] || bad "no events.log"
head -1 "$T/a/b/tr1/events.log" | grep -Eq '^record t=[0-9]+ pid=[0-9]+ argv=/bin/sh%20-c%20echo%20hi;%20exit%203 version=[0-9.]+ ' \
	|| bad "header: $(head -1 "$T/a/b/tr1/events.log")"
[ "$(perm "$T/a/b/tr1")" = 700 ] || bad "trace dir mode $(perm "$T/a/b/tr1")"
[ "$(perm "$T/a/b")" = 755 ] || bad "parent mode $(perm "$T/a/b")"
grep -q "ntop report $T/a/b/tr1" "$T/err" || bad "summary: $(cat "$T/err")"

# events from the program (and from a child, connected, that writes after
# the program exited) are kept; the socket is gone afterwards
"$NTOP" record -o "$T/tr2" -- bash -c '
	printf "%s\n" "hello t=1 pid=$$ exe=/bin/bash hook=test" "kernel t=2 pid=$$ kid=1 name=_Z3foov ptx=1" \
		"launch t=3 pid=$$ kid=1 seq=1 grid=1,1,1 block=32,1,1 probed=0" | "$EV"
	{ sleep 0.5; echo "warn t=4 pid=$$ msg=from%20a%20child"; } | "$EV" &
	exit 0' 2>"$T/err"
[ $? = 0 ] || bad "tr2 rc"
[ "$(wc -l < "$T/tr2/events.log")" = 6 ] || bad "tr2 events: $(cat "$T/tr2/events.log")"
# the recorder's own last line: it finished, and how the program ended
tail -1 "$T/tr2/events.log" | grep -Eq "^end t=[0-9]+ pid=[0-9]+ status=0$" || bad "end line: $(tail -1 "$T/tr2/events.log")"
grep -q '^warn .*msg=from%20a%20child' "$T/tr2/events.log" || bad "late child line lost"
grep -q '1 kernel (1 with PTX), 1 launch, 0 probed, 0 results written, 1 warning' "$T/err" || bad "summary: $(cat "$T/err")"
[ -e "$T/tr2/events.sock" ] && bad "tr2: events.sock left behind"

# map memory the hook gave back when the app ran out (its `results` line)
"$NTOP" record -o "$T/trm" -- bash -c '
	printf "%s\n" "hello t=1 pid=$$ exe=/bin/bash hook=test" \
		"results t=2 pid=$$ at=final pending=0 written=3 failed=0 dev_pooled=0 dev_given=2097152" | "$EV"' 2>"$T/err"
grep -q "ntop: pid [0-9]*: the app ran out of GPU memory; ntop gave back 2.0 MiB of map buffers" "$T/err" ||
	bad "map memory given back not said: $(cat "$T/err")"

# the environment: probes copied and absolute, kernels joined by newlines
NTOP_PROBE_ASYNC=1 NTOP_SAMPLE=off NTOP_MAP_BUDGET=5 "$NTOP" record -p block_sched -k vecadd -k 'sgemm*' --every 3 --limit 7 \
	--map-budget 512M --sample-blocks 8 --wait-build -o "$T/tr3" -- \
	bash -c 'env > "$0/env.txt"; printf "%s" "$NTOP_KERNELS" > "$0/kernels.txt"' "$T" 2>/dev/null
[ $? = 0 ] || bad "tr3 rc"
grep -q "^NTOP_PROBES=$T/tr3/probes/block_sched.toml$" "$T/env.txt" || bad "NTOP_PROBES: $(grep NTOP_PROBES "$T/env.txt")"
[ -f "$T/tr3/probes/block_sched.toml" ] || bad "probe not copied"
[ "$(cat "$T/kernels.txt")" = "$(printf 'vecadd\nsgemm*')" ] || bad "NTOP_KERNELS: $(cat "$T/kernels.txt")"
grep -q "^NTOP_PROBE_EVERY=3$" "$T/env.txt" || bad "every"
grep -q "^NTOP_PROBE_LIMIT=7$" "$T/env.txt" || bad "limit"
# options replace what ntop inherited, once
[ "$(grep -c '^NTOP_MAP_BUDGET=' "$T/env.txt")" = 1 ] && grep -q "^NTOP_MAP_BUDGET=536870912$" "$T/env.txt" ||
	bad "map budget: $(grep NTOP_MAP_BUDGET "$T/env.txt")"
[ "$(grep -c '^NTOP_SAMPLE=' "$T/env.txt")" = 1 ] && grep -q "^NTOP_SAMPLE=8$" "$T/env.txt" ||
	bad "sample: $(grep NTOP_SAMPLE "$T/env.txt")"
[ "$(grep -c '^NTOP_PROBE_ASYNC=' "$T/env.txt")" = 1 ] && grep -q "^NTOP_PROBE_ASYNC=0$" "$T/env.txt" ||
	bad "--wait-build: $(grep NTOP_PROBE_ASYNC "$T/env.txt")"
# without the options, the inherited values pass on
NTOP_PROBE_ASYNC=1 NTOP_SAMPLE=off NTOP_MAP_BUDGET=5 "$NTOP" record -o "$T/tr3b" -- bash -c 'env > "$0/env2.txt"' "$T" 2>/dev/null
grep -q "^NTOP_SAMPLE=off$" "$T/env2.txt" && grep -q "^NTOP_MAP_BUDGET=5$" "$T/env2.txt" || bad "inherited budget/sample"
grep -q "^NTOP_PROBE_ASYNC=1$" "$T/env2.txt" || bad "inherited NTOP_PROBE_ASYNC: $(grep NTOP_PROBE_ASYNC "$T/env2.txt")"
grep -q "^NTOP_TRACE_DIR=$T/tr3$" "$T/env.txt" || bad "trace dir env"
grep -q "^LD_LIBRARY_PATH=$T/hook" "$T/env.txt" || bad "LD_LIBRARY_PATH: $(grep LD_LIBRARY_PATH "$T/env.txt")"
grep -q "^TRITON_LIBCUDA_PATH=$T/hook$" "$T/env.txt" || bad "TRITON_LIBCUDA_PATH"
# CuPy compiles afresh (its disk cache holds no PTX) unless the user chose
grep -q "^CUPY_CACHE_IN_MEMORY=1$" "$T/env.txt" || bad "CUPY_CACHE_IN_MEMORY: $(grep CUPY "$T/env.txt")"
CUPY_CACHE_IN_MEMORY=0 "$NTOP" record -o "$T/tr3d" -- bash -c 'env > "$0/env3.txt"' "$T" 2>/dev/null
[ "$(grep -c '^CUPY_CACHE_IN_MEMORY=' "$T/env3.txt")" = 1 ] && grep -q "^CUPY_CACHE_IN_MEMORY=0$" "$T/env3.txt" ||
	bad "the user's CUPY_CACHE_IN_MEMORY: $(grep CUPY "$T/env3.txt")"
grep -q "^NTOP_EVENT_SOCK=$T/tr3/events.sock$" "$T/env.txt" || bad "event socket: $(grep NTOP_EVENT_SOCK "$T/env.txt")"
grep -q "^NTOP_EVENT_FD=\|^NTOP_EVENT_ID=" "$T/env.txt" && bad "an event fd was passed: $(grep NTOP_EVENT_ "$T/env.txt")"
# the socket is 0600 while the program runs
"$NTOP" record -o "$T/tr3c" -- bash -c 'stat -c %a "$NTOP_EVENT_SOCK" > "$0/sockmode.txt"' "$T" 2>/dev/null
[ "$(cat "$T/sockmode.txt")" = 600 ] || bad "socket mode $(cat "$T/sockmode.txt")"

# a trace directory whose path cannot hold a socket: the socket goes to a
# 0700 directory of its own (and says so), events still arrive, both go
long="$T/$(printf 'l%.0s' $(seq 120))"
"$NTOP" record -o "$long" -- bash -c 'stat -c %a "${NTOP_EVENT_SOCK%/*}" > "$0/sockdir.txt"; echo "$NTOP_EVENT_SOCK" > "$0/sock.txt"
	"$EV" "hello t=1 pid=$$ exe=/bin/bash hook=test"' "$T" 2>"$T/err"
[ $? = 0 ] || bad "long dir rc: $(cat "$T/err")"
grep -q "too long for a socket; events come through $(cat "$T/sock.txt")" "$T/err" || bad "long dir note: $(cat "$T/err")"
[ "$(cat "$T/sockdir.txt")" = 700 ] || bad "socket directory mode $(cat "$T/sockdir.txt")"
grep -q '^hello ' "$long/events.log" || bad "long dir: no events"
[ -e "$(dirname "$(cat "$T/sock.txt")")" ] && bad "long dir: socket directory left behind"
grep -q "^NTOP_CONTROL=$T/tr3/control$" "$T/env.txt" || bad "NTOP_CONTROL: $(grep NTOP_CONTROL "$T/env.txt")"

# default directory name under ./ntop-trace
(cd "$T" && "$NTOP" record /bin/true 2>/dev/null) || bad "default dir run"
d=$(ls -d "$T"/ntop-trace/*_* 2>/dev/null | head -1)
[ -n "$d" ] && [ -f "$d/events.log" ] || bad "default trace dir missing"
[ -n "$d" ] && { basename "$d" | grep -Eq '^[0-9]{8}-[0-9]{6}_[0-9]+$' || bad "default name $d"; }

# refusals: nothing may run
"$NTOP" record -o "$T/a/b/tr1" -- touch "$T/ran1" 2>"$T/err"
[ $? = 2 ] || bad "non-empty dir should exit 2"
grep -q 'not empty' "$T/err" || bad "non-empty message: $(cat "$T/err")"
printf 'ntop_probe = 1\nname = "x"\ncolour = 1\n' > "$T/bad.toml"
"$NTOP" record -p "$T/bad.toml" -o "$T/tr4" -- touch "$T/ran2" 2>"$T/err"
[ $? = 2 ] || bad "bad probe should exit 2"
grep -q "$T/bad.toml:3:1:" "$T/err" || bad "bad probe message: $(cat "$T/err")"
[ -e "$T/tr4" ] && bad "trace dir created for a bad probe"
NTOP_HOOK_DIR="$T/nohook" "$NTOP" record -o "$T/tr5" -- touch "$T/ran3" 2>"$T/err"
[ $? = 2 ] || bad "missing hook should exit 2"
grep -q 'hook library not found' "$T/err" || bad "missing hook message: $(cat "$T/err")"
"$NTOP" record --bogus -- touch "$T/ran4" 2>/dev/null
[ $? = 2 ] || bad "unknown option should exit 2"
"$NTOP" record --every 0 -- touch "$T/ran5" 2>/dev/null
[ $? = 2 ] || bad "--every 0 should exit 2"
for bad_opt in "--sample-blocks 3" "--sample-blocks 0" "--sample-blocks x" "--map-budget 0" "--map-budget 1X" "--map-budget 99999999999T"; do
	# shellcheck disable=SC2086
	"$NTOP" record $bad_opt -- touch "$T/ran5" 2>"$T/err"
	[ $? = 2 ] || bad "$bad_opt should exit 2"
	grep -q -- "${bad_opt%% *} [tn]" "$T/err" || bad "$bad_opt message: $(cat "$T/err")"
done
"$NTOP" record 2>/dev/null
[ $? = 2 ] || bad "no program should exit 2"
for i in 1 2 3 4 5; do [ -e "$T/ran$i" ] && bad "program ran despite refusal $i"; done

"$NTOP" record -o "$T/tr6" -- "$T/no-such-program" 2>"$T/err"
[ $? = 127 ] || bad "missing program should exit 127"
grep -q 'No such file or directory' "$T/err" || bad "127 message: $(cat "$T/err")"
[ -e "$T/tr6" ] && bad "trace dir left behind for a program that never ran"

# killed by a signal: 128+N and said so
"$NTOP" record -o "$T/tr7" -- bash -c 'kill -KILL $$' 2>"$T/err"
[ $? = 137 ] || bad "SIGKILL should give 137"
grep -q 'killed by signal 9' "$T/err" || bad "signal message: $(cat "$T/err")"

# Ctrl-C goes to the whole foreground group: the program dies, ntop finishes
setsid "$NTOP" record -o "$T/tr8" -- sleep 20 2>"$T/err8" &
pid=$!
sleep 0.5
kill -INT -- -"$pid" 2>/dev/null || kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 130 ] || bad "SIGINT to the group: rc $rc, want 130"
grep -q 'ntop report' "$T/err8" || bad "no summary after Ctrl-C: $(cat "$T/err8")"

# SIGTERM to ntop is forwarded to the program
"$NTOP" record -o "$T/tr9" -- sleep 20 2>/dev/null &
pid=$!
sleep 0.5
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" = 143 ] || bad "SIGTERM forwarding: rc $rc, want 143"

[ "$fail" = 0 ] && echo "cli_record: all passed"
exit "$fail"
