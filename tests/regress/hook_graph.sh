#!/bin/bash
# CUDA graphs (plumbing, with the fake driver's graphs): `scale` captured
# in one graph and an explicit node of another (whose grid the app changes in
# the executable), both replayed REPLAYS times after the app destroyed its
# graphs. Under `ntop record -p block_sched` every replay runs a probed twin:
# one result per node and replay, one record per warp of the node's own
# grid; the capture itself is untouched (its launch declined with the
# reason); a node given `extra` arguments is declined and replayed as it is;
# every replay ran and the app's output equals the plain run's. With
# --limit 3 only three are probed and the other replays run the
# originals.
source "$(dirname "$0")/hook_lib.inc"
NTOP=$B/bin/ntop
GRAPH=$B/tests/fakecuda/app_graph
[ -x "$NTOP" ] && [ -x "$GRAPH" ] || { echo "ntop or app_graph not built"; exit 77; }
export NTOP_HOOK_DIR=$HOOKDIR NTOP_REAL_LIBCUDA=$FAKE
N=5

LD_LIBRARY_PATH=$(dirname "$FAKE") "$GRAPH" "$PTX" $N > "$TMP/plain.out" 2>&1 || fail "plain: $(cat "$TMP/plain.out")"
expect "$TMP/plain.out" "^graph replays run: $((2 * N + 1))$" "plain: every replay ran"

"$NTOP" record -o "$TMP/g" -p block_sched -- "$GRAPH" "$PTX" $N > "$TMP/g.out" 2> "$TMP/g.err" ||
	fail "probed: exit $?: $(cat "$TMP/g.out")"
cmp -s "$TMP/plain.out" "$TMP/g.out" || fail "probed: output differs: $(diff "$TMP/plain.out" "$TMP/g.out")"
E=$TMP/g/events.log
[ "$(grep -c '^launch .*api=cuGraphLaunch .*probed=1' "$E")" = $((2 * N)) ] ||
	fail "probed: $(grep -c '^launch .*api=cuGraphLaunch .*probed=1' "$E") probed node launches, want $((2 * N))"
[ "$(grep -c '^result ' "$E")" = $((2 * N)) ] || fail "probed: $(grep -c '^result ' "$E") results, want $((2 * N))"
# the captured node: 2 blocks of 64 threads, 4 warps; the explicit one as the
# executable has it: 5 blocks of 96, 15 warps
for seq in $(grep '^launch .*api=cuGraphLaunch .*grid=2,1,1 block=64,1,1' "$E" | sed 's/.* seq=\([0-9]*\) .*/\1/'); do
	grep -q "^result .* seq=$seq .* records=4 dropped=0" "$E" || fail "captured node seq $seq: not one record per warp"
done
for seq in $(grep '^launch .*api=cuGraphLaunch .*grid=5,1,1 block=96,1,1' "$E" | sed 's/.* seq=\([0-9]*\) .*/\1/'); do
	grep -q "^result .* seq=$seq .* records=15 dropped=0" "$E" || fail "explicit node seq $seq: not one record per warp"
done
[ "$(grep -c '^launch .*api=cuGraphLaunch .*grid=5,1,1' "$E")" = $N ] || fail "explicit node: the executable's grid not followed"
expect "$E" "^probe .*status=declined reason=stream%20capture%20active:%20the%20launch%20is%20probed%20when%20its%20graph%20is%20replayed" \
	"the captured launch itself declined, with where it is probed"
expect "$E" "^probe .*status=declined reason=graph%20node%20built%20with%20\`extra\`" "extra node declined"

"$NTOP" record -o "$TMP/l" -p block_sched --limit 3 -- "$GRAPH" "$PTX" $N > "$TMP/l.out" 2>&1 ||
	fail "limit: $(cat "$TMP/l.out")"
grep -q "^graph replays run: $((2 * N + 1))$" "$TMP/l.out" || fail "limit: replays: $(cat "$TMP/l.out")"
[ "$(grep -c '^result ' "$TMP/l/events.log")" = 3 ] || fail "limit: $(grep -c '^result ' "$TMP/l/events.log") results, want 3"

[ "$fails" = 0 ] && echo "hook_graph: ok"
exit $((fails > 0))
