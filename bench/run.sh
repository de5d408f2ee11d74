#!/bin/bash
# ntop overhead benchmarks, run on the GPU machine from the repo root in one
# device call (about 2-4 minutes). See bench/README.md.
#
#   bench/run.sh [--quick]      --quick: 1 run per side instead of 3
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
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
NTOP=${NTOP:-$ROOT/build-gpu/bin/ntop}
EX=$ROOT/build-examples
WORK=$(mktemp -d /tmp/ntop-bench.XXXXXX)
W=$WORK/bench
mkdir -p "$W"
REPORT=$OUT/bench.txt
: >"$REPORT"
STEP_S=${NTOP_BENCH_STEP_S:-120}
RUNS=3
LOOP_RUNS=5 # launch_loop is short and noisy (a pass-through ntop measured 1.04x once)
LOOP_N=200000
TORCH_REPEATS=20
export PYTHONUNBUFFERED=1
export PATH=$PATH:/usr/local/cuda/bin
[ "${1:-}" = --quick ] && RUNS=1 && LOOP_RUNS=1

say() { echo "$@" | tee -a "$REPORT"; }
now() { date +%s.%N; }

{
	echo "# ntop benchmark $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	nvcc --version | tail -1
	echo "ntop: $NTOP; runs per side: $RUNS"
} 2>&1 | tee -a "$REPORT"

if [ ! -x "$EX/launch_loop" ] || [ ! -x "$EX/sgemm" ]; then
	timeout "$STEP_S" tests/gpu/build_examples.sh "$EX" >"$W/build_examples.log" 2>&1 ||
		say "build_examples failed: $(tail -3 "$W/build_examples.log")"
fi
if [ ! -x "$NTOP" ]; then
	say "no ntop at $NTOP: building build-gpu"
	{ timeout 300 cmake -S "$ROOT" -B "$ROOT/build-gpu" -DNTOP_TESTS=OFF &&
		timeout 300 cmake --build "$ROOT/build-gpu" -j"$(nproc)"; } >"$W/cmake.log" 2>&1 ||
		say "cmake failed: $(tail -3 "$W/cmake.log")"
fi

# rec DIR ARGS... : ntop record into $W/DIR, app output to $W/DIR.out
rec() {
	local dir=$1; shift
	rm -rf "${W:?}/$dir"
	timeout -k 5 "$STEP_S" "$NTOP" record -o "$W/$dir" "$@" >"$W/$dir.out" 2>"$W/$dir.err"
	local rc=$?
	[ "$rc" != 0 ] && say "  $dir: ntop record exit $rc ($(tail -1 "$W/$dir.err"))"
	return $rc
}

loop_time() { sed -n 's/^info: wall_s=\([0-9.]*\).*/\1/p' "$1"; }

say ""
say "== 1. unprobed launch overhead: launch_loop $LOOP_N"
for i in $(seq "$LOOP_RUNS"); do
	timeout -k 5 "$STEP_S" "$EX/launch_loop" "$LOOP_N" >"$W/ll.plain.$i.out" 2>&1
	printf 'launch_loop\tplain\t%s\t%s\n' "$i" "$(loop_time "$W/ll.plain.$i.out")" >>"$W/times.tsv"
	rec "ll.ntop.$i" -- "$EX/launch_loop" "$LOOP_N"
	printf 'launch_loop\tntop\t%s\t%s\n' "$i" "$(loop_time "$W/ll.ntop.$i.out")" >>"$W/times.tsv"
done
grep launch_loop "$W/times.tsv" | tee -a "$REPORT"

say ""
say "== 2. torch_ops.py $TORCH_REPEATS wall time"
python3 examples/python/torch_ops.py 1 >/dev/null 2>&1 # warm the page cache
for i in $(seq "$RUNS"); do
	t0=$(now)
	timeout -k 5 "$STEP_S" python3 examples/python/torch_ops.py "$TORCH_REPEATS" >"$W/torch.plain.$i.out" 2>&1
	t1=$(now)
	rec "torch.ntop.$i" -- python3 examples/python/torch_ops.py "$TORCH_REPEATS"
	t2=$(now)
	python3 -c 'import sys; a, b, c = map(float, sys.argv[2:5]); i = sys.argv[1]
print(f"torch\tplain\t{i}\t{b - a:.3f}\ntorch\tntop\t{i}\t{c - b:.3f}")' "$i" "$t0" "$t1" "$t2" >>"$W/times.tsv"
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
	grep -q ' ok' "$f" || say "  $(basename "$f"): app did not print ok: $(tail -2 "$f" | tr '\n' ' ')"
done

say ""
say "== results"
python3 bench/bench.py analyse "$W" 2>&1 | tee -a "$REPORT"

cp "$REPORT" "$W/"
tar -czf "$OUT/bench-logs.tgz" -C "$WORK" --exclude='*.ntr' bench
say "logs: $OUT/bench-logs.tgz"
rm -rf "$WORK"
