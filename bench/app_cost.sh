#!/bin/bash
# What probing costs as the application's own clock sees it (issue 9), run on
# the GPU machine from the repo root in one device call (about 3-5 minutes):
#
#   bench/app_cost.sh [--quick|--dry-run]
#
# examples/cuda/app_cost.cu times each of its six kernels with a cudaEvent
# pair around every launch (21 launches, the first left out, median). It runs
# plain, under `ntop record` (nothing probed; launch timing on every launch),
# and under `ntop record -p P --every 1 --limit 100000` for every built-in
# probe P, the modes interleaved, REPS times each; then its burst mode (5000
# one-block launches back to back, one sync) plain and under block_sched.
# bench/app_cost.py reads the outputs and the traces and prints the table:
# app-side time per launch as a ratio to plain, results written / probed
# launches requested, declined and lost launches, bytes on disk per record,
# wall time ratio, the sustained probed-launch rate, and ntop's own
# in-kernel ratio (result ns of probed launches / time ns of the same kernel
# unprobed), which is NOT what the app waits and is printed apart.
# Output: $OUT/app_cost.txt (default ./bench-out), $OUT/app_cost-logs.tgz.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
OUT=${OUT:-$ROOT/bench-out}
STEP_S=${NTOP_BENCH_STEP_S:-150}
. bench/lib.sh
lib_init app_cost app_cost.txt
REPS=2
[ "${1:-}" = --quick ] && REPS=1
[ "${1:-}" = --dry-run ] && REPS=1 && DRY_RUN=1
PROBES="block_sched dmat dmat_global gmem_bytes tensorop_count warp_progress"
BURST=5000

env_info "ntop app-side cost"
ensure_examples app_cost
ensure_ntop

# run MODE REP: one app_cost run, plain or under ntop; the trace keeps its
# events.log only (results are summarised from the events, then removed).
run() {
	local mode=$1 rep=$2 name="$1.$2"
	case $mode in
	plain) step "$W/$name" "$EX/app_cost" ;;
	ntop) NTOP_TIME_LAUNCHES=all rec "$name" -- "$EX/app_cost" ;;
	*) rec "$name" -p "$mode" --every 1 --limit 100000 -- "$EX/app_cost" ;;
	esac
	printf '%s\t%s\t%s\t%s\n' "$mode" "$rep" "$STEP_RC" "$STEP_WALL" >>"$W/runs.tsv"
	if [ -d "$W/$name/results" ]; then
		du -sb "$W/$name/results" | cut -f1 >"$W/$name.disk"
		rm -rf "$W/$name/results"
	fi
}

: >"$W/runs.tsv"
for rep in $(seq "$REPS"); do
	for mode in plain ntop $PROBES; do
		say "== $mode (rep $rep)"
		run "$mode" "$rep"
	done
done
say "== burst $BURST plain / block_sched"
step "$W/burst.plain" "$EX/app_cost" burst "$BURST"
rec burst.block_sched -p block_sched --every 1 --limit 100000 -- "$EX/app_cost" burst "$BURST"
rm -rf "$W/burst.block_sched/results"

[ "$DRY_RUN" = 1 ] || python3 bench/app_cost.py "$W" "$PROBES" | tee -a "$REPORT"
lib_finish app_cost-logs.tgz
