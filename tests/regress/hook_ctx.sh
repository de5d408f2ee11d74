#!/bin/bash
# Context teardown with the fake driver, which aborts when a
# handle of a destroyed context is used (FAKECUDA_STRICT_CTX=1) and hands a
# new context out at the old one's address: an app that destroys its
# context with probed launches and timings in flight, ten times. The hook
# finishes the results first, forgets the context's pools, events and
# instrumented copies, and instruments afresh in the next context; the app
# exits 0 with every result written.
source "$(dirname "$0")/hook_lib.inc"
CTXAPP=$B/tests/fakecuda/app_ctx
[ -x "$CTXAPP" ] || { echo "app_ctx not built"; exit 77; }
ROUNDS=10
N=12
run() { # NAME [ENV=VAL...]
	local name=$1
	shift
	mkdir -p "$TMP/$name"
	env NTOP_TRACE_DIR=$TMP/$name NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR \
		FAKECUDA_STRICT_CTX=1 "$@" "$CTXAPP" "$PTX" $ROUNDS $N > "$TMP/$name.out" 2> "$TMP/$name.err" 9> "$TMP/$name.log"
	local rc=$?
	[ $rc = 0 ] || fail "$name: exit $rc: $(tail -2 "$TMP/$name.err") $(tail -2 "$TMP/$name.out")"
}

# timing only (every launch timed: events in flight at each destroy)
run timed NTOP_TIME_LAUNCHES=all
expect "$TMP/timed.out" "app_ctx: done, 0 failures" "timed: the app's calls all succeeded"

# probed, results still queued when the context goes (a slow collector)
# (the fake refuses async copies into host memory no live registration
# holds: a registration dies with its context, and the hook registers its
# staging again in the next one)
run probed NTOP_PROBES=$S/probes/block_sched.toml NTOP_PROBE_LIMIT=1000 NTOP_TIME_LAUNCHES=all FAKECUDA_SYNC_DELAY_US=3000 \
	FAKECUDA_PINNED_ONLY=1
E=$TMP/probed.log
expect "$TMP/probed.out" "app_ctx: done, 0 failures" "probed: the app's calls all succeeded"
got=$(grep -c '^result ' "$E")
[ "$got" = $((ROUNDS * N)) ] || fail "probed: $got results, want $((ROUNDS * N))"
inst=$(grep -c '^instrument .*status=ok' "$E")
[ "$inst" = $ROUNDS ] || fail "probed: instrumented $inst times, want once per context ($ROUNDS)"
grep -q '^probe .*declined\|failed on the device\|lost' "$E" && fail "probed: $(grep 'declined\|failed on\|lost' "$E" | head -2)"
pins=$(grep '^results .*at=final' "$E" | sed -nE 's/.* host_pins=([0-9]+) .*/\1/p')
[ -n "$pins" ] && [ "$pins" -ge "$ROUNDS" ] || fail "probed: staging registered $pins times, want once per context at least ($ROUNDS)"

[ "$fails" = 0 ] && echo "hook_ctx: ok"
exit $((fails > 0))
