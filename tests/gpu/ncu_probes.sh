#!/bin/bash
# The gmem_bytes and tensorop_count probes against Nsight Compute, on the GPU
# machine from the repo root in one device call (about 2-5 minutes).
#
#   tests/gpu/ncu_probes.sh [--apps "fill memk ..."] [--dry-run]
#
#   --dry-run   print every step, run nothing, then analyse (no GPU needed)
#
# For each app with global memory traffic or tensor-core instructions:
#   1. `ntop record -p gmem_bytes -p tensorop_count --limit 3` (both probes in
#      one instrumented kernel; when that fails for a kernel, each probe
#      again in a run of its own)
#   2. `ncu --csv --print-units base --print-kernel-base mangled --metrics M`
#      on the same app with the same arguments, M picked by ncu_probes.py from
#      `ncu --query-metrics` (missing names fall back; a failed ncu run is
#      retried once with the fallback metrics)
#   3. tests/gpu/ncu_probes.py analyse: per kernel, probe value (fields summed
#      over a launch's records), ncu value, metric, difference %, expected
#      relation. Why these metrics: the header of tests/gpu/ncu_probes.py.
# Output: $OUT/ncu_probes.txt (everything printed; the table last) and
# $OUT/ncu_probes-logs.tgz (traces' events.log, ncu CSV, chosen metrics,
# app output). Each step has a timeout (NTOP_GPU_STEP_S, 120 s); steps are
# skipped, and say so, after NTOP_GPU_BUDGET_S (540 s). Exit 0: every value
# that must equal ncu's does.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
OUT=${OUT:-$ROOT/gpu-out}
STEP_S=${NTOP_GPU_STEP_S:-120}
BUDGET_S=${NTOP_GPU_BUDGET_S:-540}
ONLY_APPS=""
while [ $# -gt 0 ]; do
	case $1 in
	--apps) [ $# -ge 2 ] || exit 2; ONLY_APPS=$2; shift ;;
	--dry-run) DRY_RUN=1 ;;
	*) echo "usage: $0 [--apps \"a b\"] [--dry-run]"; exit 2 ;;
	esac
	shift
done
. bench/lib.sh
lib_init ncu_probes
NCU=${NCU:-ncu}
command -v "$NCU" >/dev/null || NCU=/usr/local/cuda/bin/ncu

env_info "ntop probes vs ncu"
ensure_examples fill memk sgemm launch_modes driver_api tensorops
ensure_ntop
if [ "$DRY_RUN" != 1 ] && ! command -v "$NCU" >/dev/null; then
	say "FAIL: no ncu (PATH or /usr/local/cuda/bin/ncu): only the probe runs are done"
	NCU=""
fi

# name | ncu kernel regex | command. Few launches: ncu replays each one.
APPS=(
	"fill|fill_half4|$EX/fill 2"
	"memk|memk_|$EX/memk 2"
	"sgemm|sgemm_tiled|$EX/sgemm 2"
	"launch_modes|lm_|$EX/launch_modes"
	"driver_api|drv_axpy|$EX/driver_api"
	"tensorops|to_wmma_gemm|to_mma_sync|$EX/tensorops 2"
	"triton_add|triton_|python3 examples/python/triton_add.py"
)
NCU_LAUNCHES=24 # profiled launches per app at most (ncu -c)
# A 16M-thread kernel needs 320 MiB of gmem_bytes map; three in flight would
# pass the hook's default 1 GiB budget and be declined.
export NTOP_MAP_BUDGET=$((8 << 30))

say ""
say "== ncu metrics"
QUERY_RC=0
if [ -n "$NCU" ]; then
	step "$W/query" "$NCU" --query-metrics
	QUERY_RC=$STEP_RC
	[ "$QUERY_RC" = 0 ] || say "  ncu --query-metrics failed: the first candidates are tried unchecked"
fi
[ -e "$W/query.out" ] || : >"$W/query.out"
METRICS=$(python3 tests/gpu/ncu_probes.py metrics "$W/query.out" "$W/chosen.json" 2>>"$REPORT")
say "metrics: $METRICS"

for entry in "${APPS[@]}"; do
	IFS='|' read -r -a parts <<<"$entry"
	app=${parts[0]}
	cmdline=${parts[-1]}
	regex=$(IFS='|'; echo "${parts[*]:1:${#parts[@]}-2}")
	read -r -a cmd <<<"$cmdline"
	if [ -n "$ONLY_APPS" ] && [[ " $ONLY_APPS " != *" $app "* ]]; then
		continue
	fi
	if [ "$app" = triton_add ] && [ "$DRY_RUN" != 1 ] && ! python3 -c 'import triton' 2>/dev/null; then
		say "SKIP triton_add: triton not importable"
		continue
	fi
	say ""
	say "== $app: ${cmd[*]} (ncu -k regex:$regex)"
	rec "probe.$app" -p gmem_bytes -p tensorop_count --limit 3 -- "${cmd[@]}"
	if [ -f "$W/probe.$app/events.log" ] && grep -q '^instrument .*status=failed' "$W/probe.$app/events.log"; then
		say "  instrumenting with both probes failed for a kernel: $(grep '^instrument .*status=failed' \
			"$W/probe.$app/events.log" | head -1 | sed 's/.* reason=//')"
		say "  running each probe on its own"
		rec "probe.$app.gmem_bytes" -p gmem_bytes --limit 3 -- "${cmd[@]}"
		rec "probe.$app.tensorop_count" -p tensorop_count --limit 3 -- "${cmd[@]}"
	fi
	[ -n "$NCU" ] || continue
	for attempt in 0 1; do
		if [ "$attempt" = 1 ]; then
			METRICS=$(python3 tests/gpu/ncu_probes.py metrics /dev/null "$W/chosen.json" --attempt 1)
			say "  retrying ncu with the fallback metrics: $METRICS"
		fi
		step "$W/ncu.$app" "$NCU" --csv --print-units base --print-kernel-base mangled \
			--metrics "$METRICS" -k "regex:$regex" -c "$NCU_LAUNCHES" "${cmd[@]}"
		cat "$W/ncu.$app.out" "$W/ncu.$app.err" >"$W/ncu.$app.csv"
		[ "$DRY_RUN" = 1 ] && break
		grep -q '^"ID"' "$W/ncu.$app.csv" && break
		say "  ncu gave no metric rows: $(grep -m2 '==ERROR==' "$W/ncu.$app.csv" | tr '\n' ' ')"
	done
done

say ""
say "== results"
python3 tests/gpu/ncu_probes.py analyse "$W" --ntop "$NTOP" 2>&1 | tee -a "$REPORT"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || say "ncu_probes.py analyse exit $rc (1: a value differs from ncu's)"
lib_finish ncu_probes-logs.tgz
exit "$rc"
