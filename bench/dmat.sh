#!/bin/bash
# dmat kernel slowdown, side by side in one run, on the GPU machine from the
# repo root in one device call (about 4-8 minutes; --quick: 1-3).
#
#   bench/dmat.sh [--quick] [--runs N] [--apps "fill memk ..."]
#                 [--budget "default 8589934592"] [--keep-results] [--dry-run]
#
#   --quick         one run per mode instead of 3
#   --budget LIST   NTOP_MAP_BUDGET values (bytes) for the dmat runs, one
#                   dmat mode each; "default" leaves the hook's 1 GiB. A 4M-
#                   thread kernel needs 4 GiB of dmat map (64 records x 16 B
#                   per thread) and is declined under 1 GiB; memk's 16M-thread
#                   kernels need 16 GiB each (slow to copy and compress: with
#                   a budget that admits them, run memk alone, --quick).
#   --keep-results  keep the .ntr files (else deleted after each run once
#                   their sizes are noted: a dmat run can write gigabytes)
#   --dry-run       print every step, run nothing, then analyse (no GPU)
#
# For every app (examples/cuda built by tests/gpu/build_examples.sh into
# build-examples/, and triton_add, torch_ops from examples/python), runs
# alternate, RUNS times each: plain (the app alone: wall time), timed
# (`ntop record`, no probe: unprobed kernel durations), dmat (`ntop record
# -p dmat --limit 4`, one mode per budget) and bs (`ntop record -p
# block_sched --limit 4`, the light reference); the ntop runs with
# NTOP_TIME_LAUNCHES=all. bench/dmat.py then prints per kernel: median
# unprobed and probed durations, slowdowns, records and dropped records per
# launch, result-file bytes per recorded access, what happened (probed,
# declined and why, sampled, no PTX), per app the wall times, and the
# kernels over the 3x target.
# Output: $OUT/dmat.txt (everything printed; the tables last), and
# $OUT/dmat-logs.tgz (events.log of every run, app output, times.tsv).
# Each step has a timeout (NTOP_BENCH_STEP_S, 120 s); steps are skipped,
# and say so, once the run passes NTOP_BENCH_BUDGET_S (540 s).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
OUT=${OUT:-$ROOT/gpu-out}
STEP_S=${NTOP_BENCH_STEP_S:-120}
BUDGET_S=${NTOP_BENCH_BUDGET_S:-540}
RUNS=3
ONLY_APPS=""
BUDGETS="default"
KEEP=0
usage() { echo "usage: $0 [--quick] [--runs N] [--apps \"a b\"] [--budget \"default BYTES\"] [--keep-results] [--dry-run]"; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--quick) RUNS=1 ;;
	--runs) [ $# -ge 2 ] || usage; RUNS=$2; shift ;;
	--apps) [ $# -ge 2 ] || usage; ONLY_APPS=$2; shift ;;
	--budget) [ $# -ge 2 ] || usage; BUDGETS=$2; shift ;;
	--keep-results) KEEP=1 ;;
	--dry-run) DRY_RUN=1 ;;
	*) usage ;;
	esac
	shift
done
. bench/lib.sh
lib_init dmat
LIMIT=4 # probed launches per kernel and process: the first is left out, 3 remain

env_info "ntop dmat benchmark"
say "runs per mode: $RUNS; dmat map budgets: $BUDGETS; step timeout $STEP_S s, budget $BUDGET_S s"
ensure_examples launch_modes fill sgemm memk sass_only launch_loop driver_api threads_fork tensorops
ensure_ntop

# One line per app: name, then its command. Arguments keep every kernel at
# >= 4 launches where the app allows it, and the runs short.
APPS=(
	"fill|$EX/fill 6"
	"sgemm|$EX/sgemm 5"
	"memk|$EX/memk 5"
	"tensorops|$EX/tensorops 5"
	"driver_api|$EX/driver_api"
	"launch_modes|$EX/launch_modes"
	"sass_only|$EX/sass_only"
	"launch_loop|$EX/launch_loop 200"
	"threads_fork|$EX/threads_fork"
	"triton_add|python3 examples/python/triton_add.py"
	"torch_ops|python3 examples/python/torch_ops.py 3"
)

# mode_name BUDGET: dmat for the default, dmat@BYTES otherwise.
mode_name() { [ "$1" = default ] && echo dmat || echo "dmat@$1"; }

# one_run APP RUN MODE CMD... : a run of one mode, its wall time to times.tsv.
one_run() {
	local app=$1 i=$2 mode=$3; shift 3
	local dir=$mode.$app.$i budget
	case $mode in
	plain) step "$W/$dir" "$@" ;;
	timed) rec "$dir" -- "$@" ;;
	bs) rec "$dir" -p block_sched --limit "$LIMIT" -- "$@" ;;
	dmat*)
		budget=${mode#dmat@}
		if [ "$mode" = dmat ]; then
			rec "$dir" -p dmat --limit "$LIMIT" -- "$@"
		else
			NTOP_MAP_BUDGET=$budget rec "$dir" -p dmat --limit "$LIMIT" -- "$@"
		fi ;;
	esac
	[ "$STEP_RC" = 125 ] && return
	printf '%s\t%s\t%s\t%s\t%s\n' "$app" "$mode" "$i" "$STEP_RC" "$STEP_WALL" >>"$W/times.tsv"
	if [ "$mode" != plain ] && [ -d "$W/$dir" ]; then
		python3 bench/dmat.py sizes "$W/$dir" || say "  $dir: could not note result sizes"
		[ "$KEEP" = 1 ] || rm -rf "${W:?}/$dir/results"
	fi
	if [ "$DRY_RUN" != 1 ] && [ "$STEP_RC" = 0 ] && ! grep -q ' ok' "$W/$dir.out"; then
		say "  $dir: exit 0 but the app did not print ok: $(tail -2 "$W/$dir.out" | tr '\n' ' ')"
	fi
}

export NTOP_TIME_LAUNCHES=all
# Without this the driver's JIT cache (~/.nv/ComputeCache) makes every run
# after the first skip the probed kernels' JIT: runs would differ.
export CUDA_CACHE_DISABLE=1
MODES=(plain timed)
for b in $BUDGETS; do MODES+=("$(mode_name "$b")"); done
MODES+=(bs)
if ! python3 -c 'import torch, triton' 2>/dev/null && [ "$DRY_RUN" != 1 ]; then
	say "torch/triton not importable: triton_add and torch_ops are skipped"
	APPS=("${APPS[@]:0:9}")
fi
for entry in "${APPS[@]}"; do
	app=${entry%%|*}
	read -r -a cmd <<<"${entry#*|}"
	if [ -n "$ONLY_APPS" ] && [[ " $ONLY_APPS " != *" $app "* ]]; then
		continue
	fi
	say ""
	say "== $app: ${cmd[*]}"
	for i in $(seq "$RUNS"); do
		for mode in "${MODES[@]}"; do
			one_run "$app" "$i" "$mode" "${cmd[@]}"
		done
	done
	grep "^$app	" "$W/times.tsv" 2>/dev/null | tr '\t' ' ' | sed 's/^/  /' | tee -a "$REPORT"
done
unset NTOP_TIME_LAUNCHES CUDA_CACHE_DISABLE

say ""
say "== results"
python3 bench/dmat.py analyse "$W" 2>&1 | tee -a "$REPORT"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || say "FAIL: bench/dmat.py analyse exit $rc"
lib_finish dmat-logs.tgz
exit "$rc"
