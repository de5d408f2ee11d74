#!/bin/bash
# ntop overhead benchmarks, run on the GPU machine from the repo root in one
# device call (about 2-4 minutes). See bench/README.md.
#
#   bench/run.sh [--quick|--dry-run]   --quick: 1 run per side instead of 3;
#                      --dry-run: print the steps, run nothing (no GPU needed)
#
# Measures side by side in one run (never compare with numbers from another
# run or machine):
#   1. unprobed launch overhead: launch_loop's measured loop time under
#      `ntop record` (no probe) / plain, median of 5 alternating runs each
#   2. torch_ops.py whole-process wall time under `ntop record` / plain
#   3. first-launch instrumentation time per kernel (instrument events)
#   4. block_sched kernel slowdown: `ntop record -p block_sched --every 2`
#      with NTOP_TIME_LAUNCHES=all; probed launch durations (result ns=) vs
#      the unprobed ones (time ns=) of the same kernel in the same run
# Output: $OUT/bench.txt (the table for doc/performance.md and the raw
# numbers), $OUT/bench-logs.tgz. Needs build-gpu/bin/ntop (built with cmake
# if absent) and builds the examples into build-examples/.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
OUT=${OUT:-$ROOT/bench-out}
STEP_S=${NTOP_BENCH_STEP_S:-120}
. bench/lib.sh
lib_init bench bench.txt
RUNS=3
LOOP_RUNS=5 # launch_loop is short and noisy (a pass-through ntop measured 1.04x once)
LOOP_N=200000
TORCH_REPEATS=20
[ "${1:-}" = --quick ] && RUNS=1 && LOOP_RUNS=1
[ "${1:-}" = --dry-run ] && RUNS=1 && LOOP_RUNS=1 && DRY_RUN=1

env_info "ntop benchmark"
say "runs per side: $RUNS"
ensure_examples launch_loop sgemm fill memk launch_modes
ensure_ntop

loop_time() { sed -n 's/^info: wall_s=\([0-9.]*\).*/\1/p' "$1"; }

say ""
say "== 1. unprobed launch overhead: launch_loop $LOOP_N"
for i in $(seq "$LOOP_RUNS"); do
	step "$W/ll.plain.$i" "$EX/launch_loop" "$LOOP_N"
	printf 'launch_loop\tplain\t%s\t%s\n' "$i" "$(loop_time "$W/ll.plain.$i.out")" >>"$W/times.tsv"
	rec "ll.ntop.$i" -- "$EX/launch_loop" "$LOOP_N"
	printf 'launch_loop\tntop\t%s\t%s\n' "$i" "$(loop_time "$W/ll.ntop.$i.out")" >>"$W/times.tsv"
done
grep launch_loop "$W/times.tsv" | tee -a "$REPORT"

say ""
say "== 2. torch_ops.py $TORCH_REPEATS wall time"
step "$W/torch.warm" python3 examples/python/torch_ops.py 1 # warm the page cache
for i in $(seq "$RUNS"); do
	step "$W/torch.plain.$i" python3 examples/python/torch_ops.py "$TORCH_REPEATS"
	printf 'torch\tplain\t%s\t%s\n' "$i" "$STEP_WALL" >>"$W/times.tsv"
	rec "torch.ntop.$i" -- python3 examples/python/torch_ops.py "$TORCH_REPEATS"
	printf 'torch\tntop\t%s\t%s\n' "$i" "$STEP_WALL" >>"$W/times.tsv"
done
grep torch "$W/times.tsv" | tee -a "$REPORT"

say ""
say "== 3+4. block_sched --every 2, NTOP_TIME_LAUNCHES=all"
export NTOP_TIME_LAUNCHES=all
# The driver caches JIT output on disk (~/.nv/ComputeCache): without this the
# "first-launch instrumentation" of a kernel probed in an earlier run measures
# a cache hit, not the assembly of the probed PTX.
export CUDA_CACHE_DISABLE=1
BS=(-p block_sched --every 2 --limit 1000)
rec bs.fill "${BS[@]}" -- "$EX/fill" 200
rec bs.memk "${BS[@]}" -- "$EX/memk" 60
rec bs.sgemm "${BS[@]}" -- "$EX/sgemm" 30
rec bs.launch_modes "${BS[@]}" -- "$EX/launch_modes"
rec jit.triton "${BS[@]}" -- python3 examples/python/triton_add.py
rec jit.numba "${BS[@]}" -- python3 examples/python/numba_add.py
unset NTOP_TIME_LAUNCHES CUDA_CACHE_DISABLE
for f in "$W"/bs.*.out "$W"/jit.*.out; do
	[ "$DRY_RUN" = 1 ] || grep -q ' ok' "$f" || say "  $(basename "$f"): app did not print ok: $(tail -2 "$f" | tr '\n' ' ')"
done

say ""
say "== results"
python3 bench/bench.py analyse "$W" 2>&1 | tee -a "$REPORT"

lib_finish bench-logs.tgz
