#!/bin/bash
# GPU validation of ntop: THE script to run on the GPU machine, from the repo
# root, in one device call (about 3-6 minutes). Needs build-gpu/bin/ntop and
# build-gpu/lib/ntop/libcuda.so.1 (carried; built here with cmake if absent).
#
#   tests/gpu/run.sh [--plain-only] [--no-ncu] [--apps "fill sgemm ..."]
#
#   --plain-only  run every app twice without ntop (checks the apps and ncu;
#                 needs no ntop build)
#   --no-ncu      skip the ncu waves-per-SM comparison
#
# For each app: a plain run, a run under `ntop record -p block_sched`, an ncu
# run for waves per SM, then tests/gpu/check_trace.py compares outputs and
# reads the trace. Each step has a timeout (NTOP_GPU_STEP_S, 120 s); failures
# are recorded and the script goes on; steps are skipped once the whole run
# passes NTOP_GPU_BUDGET_S (480 s).
# Output under $OUT (default ./gpu-out): summary.txt (everything printed),
# logs.tgz (per-step stdout/stderr, events.log of every trace, ncu csv, report
# JSON), triton_ptx/*.ptx. Exit status 0 = no check failed.
set -u
# its checks read kernels' first launches: probed copies built on the launch (record --wait-build)
export NTOP_PROBE_ASYNC=0
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d /tmp/ntop-gpu.XXXXXX)
LOGS=$WORK/logs
mkdir -p "$LOGS"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
ROWS=$LOGS/rows.tsv
: >"$ROWS"
STEP_S=${NTOP_GPU_STEP_S:-120}
BUDGET_S=${NTOP_GPU_BUDGET_S:-480}
NTOP=${NTOP:-$ROOT/build-gpu/bin/ntop}
EX=$ROOT/build-examples
START=$(date +%s)
PLAIN_ONLY=0
USE_NCU=1
ONLY_APPS=""
export PYTHONUNBUFFERED=1
export PATH=$PATH:/usr/local/cuda/bin

while [ $# -gt 0 ]; do
	case $1 in
	--plain-only) PLAIN_ONLY=1 ;;
	--no-ncu) USE_NCU=0 ;;
	--apps) ONLY_APPS=$2; shift ;;
	*) echo "usage: $0 [--plain-only] [--no-ncu] [--apps \"a b\"]"; exit 2 ;;
	esac
	shift
done

log() { echo "$@" | tee -a "$SUMMARY"; }
elapsed() { echo $(($(date +%s) - START)); }
now() { date +%s.%N; }
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$2"; }

finish() {
	log ""
	log "== summary ($(elapsed) s)"
	python3 tests/gpu/check_trace.py table "$ROWS" | tee -a "$SUMMARY"
	FAILS=$(awk -F'\t' '{ s += $7 } END { print s + 0 }' "$ROWS")
	log "total FAIL checks: $FAILS"
	cp "$SUMMARY" "$LOGS/summary.txt"
	# Result files are large and their content is checked here already.
	tar -czf "$OUT/logs.tgz" -C "$WORK" --exclude='*.ntr' --exclude='triton-cache' logs
	log "logs: $OUT/logs.tgz ($(du -h "$OUT/logs.tgz" | cut -f1))"
	rm -rf "$WORK"
}

env_info() {
	log "== environment"
	{
		date -u
		nvidia-smi -L
		nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
		nvcc --version | tail -2
		python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'
		python3 -c 'import numba; print("numba", numba.__version__)'
		command -v ncu >/dev/null && ncu --version | tail -1
		echo "ntop: $NTOP"
	} 2>&1 | tee -a "$SUMMARY"
}

build_all() {
	log "== build examples"
	timeout "$STEP_S" tests/gpu/build_examples.sh "$EX" >"$LOGS/build_examples.log" 2>&1
	log "build_examples exit $? ($(grep -c '^built' "$LOGS/build_examples.log") built)"
	grep FAILED "$LOGS/build_examples.log" | tee -a "$SUMMARY"
	[ "$PLAIN_ONLY" = 1 ] && return
	if [ ! -x "$NTOP" ] || [ ! -e "$ROOT/build-gpu/lib/ntop/libcuda.so.1" ]; then
		log "no prebuilt ntop at $NTOP: building build-gpu with cmake"
		{ timeout 300 cmake -S "$ROOT" -B "$ROOT/build-gpu" -DNTOP_TESTS=OFF &&
			timeout 300 cmake --build "$ROOT/build-gpu" -j"$(nproc)"; } >"$LOGS/cmake.log" 2>&1
		log "cmake exit $?"
		tail -5 "$LOGS/cmake.log" | tee -a "$SUMMARY"
	fi
	[ -x "$NTOP" ] || log "FAIL: no ntop binary; probed runs will fail"
}

# run_app NAME CMD... : one app through every step.
run_app() {
	local name=$1; shift
	if [ -n "$ONLY_APPS" ] && [[ " $ONLY_APPS " != *" $name "* ]]; then
		return
	fi
	if [ "$(elapsed)" -ge "$BUDGET_S" ]; then
		log "SKIP $name: time budget of $BUDGET_S s spent"
		printf '%s\tskipped\t-\t-\t-\t-\t1\n' "$name" >>"$ROWS"
		return
	fi
	local L=$LOGS/$name t0 t1 t2 t3 rc1 rc2 args=()
	log ""
	log "== $name: $*"
	t0=$(now)
	timeout -k 5 "$STEP_S" "$@" >"$L.plain.out" 2>"$L.plain.err"
	rc1=$?
	t1=$(now)
	if [ "$PLAIN_ONLY" = 1 ]; then
		timeout -k 5 "$STEP_S" "$@" >"$L.plain2.out" 2>"$L.plain2.err"
		rc2=$?
		args=(--plain2-out "$L.plain2.out" --plain2-rc "$rc2")
	else
		rm -rf "$L.trace"
		timeout -k 5 "$STEP_S" "$NTOP" record -p block_sched -o "$L.trace" -- "$@" \
			>"$L.probed.out" 2>"$L.probed.err"
		rc2=$?
		args=(--trace "$L.trace" --ntop "$NTOP" --probed-out "$L.probed.out" --probed-rc "$rc2"
			--report-log "$L.report.json")
	fi
	t2=$(now)
	[ "$rc1" = 124 ] && log "  TIMEOUT plain run"
	[ "$rc2" = 124 ] && log "  TIMEOUT second run"
	local filter count
	read -r filter count < <(python3 tests/gpu/check_trace.py ncu-filter "$name")
	if [ "$USE_NCU" = 1 ] && [ -n "${filter:-}" ] && command -v ncu >/dev/null; then
		# -c applies per kernel launch configuration: one profile of each.
		timeout -k 5 "$STEP_S" ncu --clock-control none --metrics launch__waves_per_multiprocessor \
			--csv --filter-mode per-launch-config -k "regex:$filter" -c "$count" "$@" >"$L.ncu.csv" 2>&1
		local rc3=$?
		[ "$rc3" != 0 ] && log "  ncu exit $rc3 (see $name.ncu.csv)"
		args+=(--ncu-csv "$L.ncu.csv")
	fi
	t3=$(now)
	log "  times: plain $(secs "$t0" "$t1") s, second run $(secs "$t1" "$t2") s, ncu $(secs "$t2" "$t3") s"
	python3 tests/gpu/check_trace.py app "$name" --plain-out "$L.plain.out" --plain-rc "$rc1" \
		--rows "$ROWS" "${args[@]}" 2>&1 | tee -a "$SUMMARY"
	local crc=${PIPESTATUS[0]}
	if [ "$crc" != 0 ] && [ "$crc" != 1 ]; then
		log "  FAIL check_trace.py crashed (exit $crc)"
		printf '%s\tcheck crashed\t-\t-\t-\t-\t1\n' "$name" >>"$ROWS"
	fi
	# The app's own complaints, if any.
	for f in "$L.plain.err" "$L.probed.err" "$L.plain2.err"; do
		[ -s "$f" ] && { log "  stderr of $(basename "$f") (last 5 lines):"; tail -5 "$f" | sed 's/^/    /' | tee -a "$SUMMARY"; }
	done
	[ -d "$L.trace" ] && python3 tests/gpu/check_trace.py events "$L.trace" >"$L.events.txt" 2>&1
	return 0
}

env_info
build_all
if [ -n "${NTOP_GPU_TRITON_PTX:-}" ]; then
	log ""
	log "== triton PTX for tests/corpus/ptx"
	timeout -k 5 "$STEP_S" python3 tests/gpu/gen_triton_ptx.py "$OUT/triton_ptx" 2>&1 | tail -5 | tee -a "$SUMMARY"
fi

run_app launch_modes "$EX/launch_modes"
run_app fill "$EX/fill" 20
run_app sgemm "$EX/sgemm" 3
run_app memk "$EX/memk" 5
run_app sass_only "$EX/sass_only"
run_app launch_loop "$EX/launch_loop" 2000
run_app driver_api "$EX/driver_api"
run_app threads_fork "$EX/threads_fork"
run_app triton_add python3 examples/python/triton_add.py
run_app numba_add python3 examples/python/numba_add.py
run_app torch_ops python3 examples/python/torch_ops.py

FAILS=1
finish
[ "$FAILS" = 0 ]
