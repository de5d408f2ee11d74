#!/bin/bash
# Block sampling (doc/hook.md) with the fake driver: a dmat-sized thread map
# (64 x 16 bytes per thread) under a small map budget. Launches whose maps
# exceed half the budget keep the records of 1 block in 2; the other blocks
# store no counts (engine.h), so the hook clears and reads the kept blocks'
# counts only and the file says the rest were not counted (the fake stores
# a huge count in every skipped unit: a hook that read them would report
# them); NTOP_SAMPLE=off declines them instead, NTOP_SAMPLE=4 samples every
# launch, a small NTOP_MAP_TARGET samples below half the budget. Plumbing only: the fake fills one record per kept unit, honouring
# the shift in the map pointer's low bits.
source "$(dirname "$0")/hook_lib.inc"

# 64 threads x 1024 bytes per block: up to 8 blocks fit in half of 1100000
BUDGET=1100000
run() { # NAME [ENV=VAL...]
	local name=$1
	shift
	mkdir -p "$TMP/$name"
	env "$@" NTOP_TRACE_DIR=$TMP/$name NTOP_PROBES=$S/probes/dmat.toml NTOP_PROBE_LIMIT=50 \
		NTOP_MAP_BUDGET=$BUDGET FAKECUDA_MAP=thread:16 NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE \
		LD_LIBRARY_PATH=$HOOKDIR "$APP" "$PTX" 0 > "$TMP/$name.out" 9> "$TMP/$name.log"
	[ $? = 0 ] || fail "$name: app failed: $(tail -3 "$TMP/$name.out")"
}

# check_files NAME MIN_SHIFT: every result's arithmetic; $sampled = files sampled
check_files() {
	local name=$1 min=$2 n=0 s=0
	for f in "$TMP/$name"/results/*.ntr; do
		out=$("$DUMP" "$f") || { fail "$name: unreadable $f"; continue; }
		n=$((n + 1))
		units=$(echo "$out" | sed -E 's/.* units=([0-9]+).*/\1/')
		recs=$(echo "$out" | sed -E 's/.* records=([0-9]+).*/\1/')
		k=1
		case $out in *sampled=*) k=$(echo "$out" | sed -E 's/.* sampled=([0-9]+).*/\1/') ;; esac
		case $out in
		*" sampled="*" unsampled=unknown"*) ;;
		*" sampled="*) fail "$name: $(basename "$f"): sampled, yet the skipped blocks' counts were read: $out" ;;
		esac
		blocks=$(echo "$out" | sed -E 's/.* blocks=([0-9]+).*/\1/')
		want_k=$min
		[ "$want_k" -lt 2 ] && [ "$units" -gt 512 ] && want_k=2
		[ "$want_k" -lt 1 ] && want_k=1
		case $out in *probes=dmat*) ;; *) continue ;; esac
		[ "$k" = "$want_k" ] || fail "$name: $(basename "$f"): $blocks blocks kept 1 in $k, want 1 in $want_k"
		kept=$(((blocks + k - 1) / k))
		upb=$((units / blocks))
		[ "$recs" = $((kept * upb)) ] || fail "$name: $(basename "$f"): $recs records, want $((kept * upb))"
		[ "$k" -gt 1 ] && s=$((s + 1))
	done
	[ "$n" -gt 0 ] || fail "$name: no result files"
	sampled=$s
}

run auto
E=$TMP/auto.log
check_files auto 0
[ "$sampled" -ge 1 ] || fail "auto: no sampled results"
expect "$E" "^result .* sampled=2 bytes=" "result event names the sampling, not the uncounted records"
# the fake runs launches at once and several threads launch: buffers still
# being written out may leave no room (declined, counted); app_launch's graph
# replays of `fill` (which shares a module global) are declined too; nothing else
grep "^probe .*status=declined" "$E" | grep -Ev "reason=(map%20budget%20exhausted|stream%20capture|its%20kernel%20shares%20module%20globals)" | grep -q . &&
	fail "auto: a launch was declined: $(grep "^probe .*declined" "$E" | grep -Ev "exhausted|capture|globals" | head -3)"
nres=$(grep -c '^result ' "$E")
[ "$nres" = "$(ls "$TMP/auto/results" | wc -l)" ] || fail "auto: result lines and files differ"

run off NTOP_SAMPLE=off
expect "$TMP/off.log" "^probe .*status=declined reason=maps%20need%20[0-9]+%20bytes.*sampling%20is%20off" "off: declined with the sizes"
grep -q "^result .*sampled=" "$TMP/off.log" && fail "off: a result was sampled"

run four NTOP_SAMPLE=4
check_files four 4
grep -q "^result .*sampled=4 " "$TMP/four.log" || fail "NTOP_SAMPLE=4: no result sampled 1 in 4"

# NTOP_MAP_TARGET: records beyond the counts and one block held to 140000
# bytes (1 KiB a thread): at most 140000 / (block bytes) + 1 blocks kept,
# well inside the budget
run target NTOP_MAP_TARGET=140000
n=0 s=0
for f in "$TMP/target"/results/*.ntr; do
	out=$("$DUMP" "$f") || { fail "target: unreadable $f"; continue; }
	case $out in *probes=dmat*) ;; *) continue ;; esac
	blocks=$(echo "$out" | sed -E 's/.* blocks=([0-9]+).*/\1/')
	k=1
	case $out in *sampled=*) k=$(echo "$out" | sed -E 's/.* sampled=([0-9]+).*/\1/') ;; esac
	units=$(echo "$out" | sed -E 's/.* units=([0-9]+).*/\1/')
	most=$((140000 / (units / blocks * 1024) + 1)) want=1
	while [ $(((blocks + want - 1) / want)) -gt "$most" ]; do want=$((want * 2)); done
	[ "$k" = "$want" ] || fail "target: $blocks blocks kept 1 in $k, want 1 in $want"
	n=$((n + 1))
	[ "$k" -gt 1 ] && s=$((s + 1))
done
[ "$n" -gt 0 ] && [ "$s" -gt 0 ] || fail "target: $n dmat results, $s of them sampled"

[ "$fails" = 0 ] && echo "hook_sample: ok"
exit $((fails > 0))
