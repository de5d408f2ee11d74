#!/bin/bash
# Kernels that reach the driver without PTX (compiled or linked at run time
# by NVRTC, nvJitLink, Triton or Inductor, or device-linked by an -rdc
# build) and kernels that run only in CUDA graphs, probed on the GPU machine
# in one device call (under 6 minutes). Programs (sources in
# tests/gpu/jit_programs/, built here):
#   nvrtc_saxpy   NVRTC compiles to a cubin for the device (CUDA samples' *_nvrtc)
#   rdc           an -rdc=true build of two translation units (SASS-only
#                 linked fatbin; rdc_cross calls a device function of the
#                 other unit: linked with it when probed)
#   graph_nodes   a captured launch and an explicit kernel node, 100 replays each
#   cupy_kernels  CuPy RawKernel and ElementwiseKernel (NVRTC, which CuPy 14
#                 opens by absolute path: reached through ntop's loader audit
#                 module), if cupy imports
#   cupy_ptx      the same with CUPY_COMPILE_WITH_PTX=1 (CuPy loads PTX)
#   numba_kernel  a Numba kernel (nvJitLink, opened by absolute path too), if
#                 numba imports
#   triton_add    Triton (examples/python/triton_add.py), if triton imports
#   torch_compile torch.compile default and reduce-overhead (CUDA graphs) of
#                 tests/gpu/apps/torch_compile.py, if torch imports
# Each runs plain and under `ntop record -p block_sched` (its own kernels
# only, -k, --limit 20); tests/gpu/jit_programs_check.py checks the output
# is the plain run's, each of the program's own kernels has PTX, is
# instrumented and every probed launch has one record per warp, and counts
# the share of launched kernels with PTX (with NTOP_BEFORE=<an older ntop
# binary> the same programs also run under it, unprobed, for the share
# before). For cupy_kernels and numba_kernel the check also wants the PTX
# from the nvrtc / nvjitlink stand-in (source=), the share before is that
# of `ntop record --no-audit` (when no NTOP_BEFORE), and the JIT library
# files the process mapped, plain and under ntop, are printed (the programs
# write them to stderr).
# Prints a table last. Output: $OUT/jit_programs.txt (all printed) and
# $OUT/jit_programs-logs.tgz (outputs, events.log and report JSON of every run).
#
#   tests/gpu/jit_programs.sh [--dry-run] [--only ERE]
#
# Environment: OUT (default ./gpu-out), NTOP (default build-gpu/bin/ntop;
# built with cmake when absent), NTOP_BEFORE (optional), NTOP_GPU_STEP_S
# (per run, default 150), NTOP_GPU_BUDGET_S (no program starts after it,
# default 270). Exit status 0 = no check failed.
set -u
# its checks read kernels' first launches: probed copies built on the launch (record --wait-build)
export NTOP_PROBE_ASYNC=0
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
OUT=${OUT:-$ROOT/gpu-out}
NTOP=${NTOP:-$ROOT/build-gpu/bin/ntop}
BEFORE=${NTOP_BEFORE:-}
STEP_S=${NTOP_GPU_STEP_S:-150}
BUDGET_S=${NTOP_GPU_BUDGET_S:-270}
DRY=0 ONLY=""
while [ $# -gt 0 ]; do
	case $1 in
	--dry-run) DRY=1 ;;
	--only) ONLY=$2; shift ;;
	*) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
	esac
	shift
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d /tmp/ntop-jit.XXXXXX)
LOGS=$WORK/logs
BIN=$WORK/bin
mkdir -p "$LOGS" "$BIN"
SUMMARY=$OUT/jit_programs.txt
ROWS=$LOGS/rows.jsonl
: >"$SUMMARY"
: >"$ROWS"
START=$(date +%s)
SRC=$ROOT/tests/gpu/jit_programs
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
FAILS=0

log() { echo "$@" | tee -a "$SUMMARY"; }
run() { # run CMD...: executed, or printed with --dry-run
	if [ "$DRY" = 1 ]; then
		echo "[dry-run] $*" >>"$SUMMARY"
		return 0
	fi
	"$@"
}

build() {
	log "== build"
	if [ "$DRY" = 0 ] && { [ ! -x "$NTOP" ] || [ ! -e "$ROOT/build-gpu/lib/ntop/libcuda.so.1" ]; }; then
		log "no prebuilt ntop at $NTOP: building build-gpu with cmake"
		{ cmake -S "$ROOT" -B "$ROOT/build-gpu" -DNTOP_TESTS=OFF && cmake --build "$ROOT/build-gpu" -j"$(nproc)"; } \
			>"$LOGS/cmake.log" 2>&1 || log "FAIL: cmake (see cmake.log)"
	fi
	local cu=/usr/local/cuda gen=(-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90)
	run gcc -O2 -o "$BIN/nvrtc_saxpy" "$SRC/nvrtc_saxpy.c" -I$cu/include -L$cu/lib64 -L$cu/lib64/stubs \
		-lnvrtc -lcuda >"$LOGS/build.log" 2>&1 || log "FAIL: build nvrtc_saxpy"
	run nvcc -O2 -rdc=true "${gen[@]}" -o "$BIN/rdc" "$SRC/rdc_main.cu" "$SRC/rdc_dev.cu" >>"$LOGS/build.log" 2>&1 ||
		log "FAIL: build rdc"
	run nvcc -O2 "${gen[@]}" -o "$BIN/graph_nodes" "$SRC/graph_nodes.cu" >>"$LOGS/build.log" 2>&1 ||
		log "FAIL: build graph_nodes"
	[ -s "$LOGS/build.log" ] && tail -5 "$LOGS/build.log" | tee -a "$SUMMARY"
}

# app NAME USER-REGEX LIMIT-REGEX CMD...: plain, probed (and before) runs,
# checks. SOURCE=S (environment of the call): the PTX must come from S;
# NOAUDIT_BEFORE=1: without NTOP_BEFORE, `ntop record --no-audit` is the before.
app() {
	local name=$1 user=$2 limit=$3
	shift 3
	if [ -n "$ONLY" ] && ! [[ $name =~ $ONLY ]]; then
		return
	fi
	if [ $(($(date +%s) - START)) -ge "$BUDGET_S" ]; then
		log "SKIP $name: the time budget ($BUDGET_S s) is spent"
		echo "{\"name\": \"$name\", \"same\": \"skipped\", \"fails\": 1}" >>"$ROWS"
		return
	fi
	local L=$LOGS/$name ks=() t0=$(date +%s)
	IFS='|' read -ra pats <<<"$user"
	for p in "${pats[@]}"; do ks+=(-k "$p"); done
	log ""
	log "== $name: $*"
	run timeout -k 5 "$STEP_S" "$@" >"$L.plain.out" 2>"$L.plain.err"
	local rc1=$?
	run timeout -k 5 "$STEP_S" "$NTOP" record -p block_sched --limit 20 "${ks[@]}" -o "$L.trace" -- "$@" \
		>"$L.probed.out" 2>"$L.probed.err"
	local rc2=$?
	run "$NTOP" report "$L.trace" --json >"$L.report.json" 2>"$L.report.err"
	cp "$L.trace/events.log" "$L.events.log" 2>/dev/null
	local before=() bcmd=()
	if [ -n "$BEFORE" ]; then
		bcmd=("$BEFORE" record)
	elif [ "${NOAUDIT_BEFORE:-0}" = 1 ]; then
		bcmd=("$NTOP" record --no-audit)
	fi
	if [ ${#bcmd[@]} -gt 0 ]; then
		run timeout -k 5 "$STEP_S" "${bcmd[@]}" -o "$L.before" -- "$@" >/dev/null 2>&1
		run "${bcmd[0]}" report "$L.before" --json >"$L.before.json" 2>/dev/null
		before=(--before "$L.before.json")
	fi
	[ -n "${SOURCE:-}" ] && before+=(--source "$SOURCE")
	log "  exit: plain $rc1, under ntop $rc2 ($(($(date +%s) - t0)) s)"
	[ "$DRY" = 1 ] && return
	python3 tests/gpu/jit_programs_check.py app "$name" --plain-out "$L.plain.out" --plain-rc "$rc1" \
		--probed-out "$L.probed.out" --probed-rc "$rc2" --report "$L.report.json" --events "$L.events.log" \
		--user "$user" --limit-kernels "$limit" "${before[@]}" --rows "$ROWS" 2>&1 | tee -a "$SUMMARY"
	sed -n 's/^mapped: /    plain:    /p' "$L.plain.err" 2>/dev/null | tee -a "$SUMMARY"
	sed -n 's/^mapped: /    ntop:     /p' "$L.probed.err" 2>/dev/null | tee -a "$SUMMARY"
	grep -h 'reason=' "$L.events.log" 2>/dev/null | grep -E '^(kernel|probe|instrument) ' | sort -u |
		python3 -c 'import sys, urllib.parse; [print("    " + urllib.parse.unquote(l.rstrip())[:400]) for l in list(sys.stdin)[:8]]' |
		tee -a "$SUMMARY"
	rm -rf "$L.trace/results" "$L.before/results"
}

have() { [ "$DRY" = 1 ] || python3 -c "import $1" >/dev/null 2>&1; }

log "== environment"
{ date -u; nvidia-smi -L; nvcc --version | tail -1; echo "ntop: $NTOP"; echo "before: ${BEFORE:-none}"; } 2>&1 |
	tee -a "$SUMMARY"
build
app nvrtc_saxpy 'jit_saxpy' '' "$BIN/nvrtc_saxpy"
app rdc 'rdc_scale|rdc_cross' '' "$BIN/rdc"
app graph_nodes 'g_fill|g_axpy|g_count' '' "$BIN/graph_nodes" 100
if have cupy; then
	SOURCE=nvrtc NOAUDIT_BEFORE=1 app cupy_kernels 'jit_raw|jit_elem' '' python3 "$SRC/cupy_kernels.py"
	# asked for PTX, CuPy hands the driver PTX (no NVRTC cubin at all)
	app cupy_ptx 'jit_raw|jit_elem' '' env CUPY_COMPILE_WITH_PTX=1 python3 "$SRC/cupy_kernels.py"
else
	log "SKIP cupy_kernels: no cupy"
fi
if have numba; then
	SOURCE=nvjitlink NOAUDIT_BEFORE=1 app numba_kernel 'jit_numba' '' python3 "$SRC/numba_kernel.py"
else
	log "SKIP numba_kernel: no numba"
fi
if have triton; then app triton_add 'triton_' '' python3 examples/python/triton_add.py; else log "SKIP triton_add: no triton"; fi
if have torch; then
	# Inductor's cache warm from the plain run: the run under ntop loads
	# its cubins from /tmp/torchinductor_* (what ntop searches)
	app torch_compile 'triton_' '' python3 tests/gpu/apps/torch_compile.py
else
	log "SKIP torch_compile: no torch"
fi

log ""
log "== summary ($(($(date +%s) - START)) s)"
if [ "$DRY" = 0 ]; then
	python3 tests/gpu/jit_programs_check.py table "$ROWS" | tee -a "$SUMMARY"
	FAILS=$(python3 -c 'import json, sys; print(sum(int(json.loads(l).get("fails", 1)) for l in open(sys.argv[1]) if l.strip()))' "$ROWS")
fi
cp "$SUMMARY" "$LOGS/"
tar -czf "$OUT/jit_programs-logs.tgz" -C "$WORK" logs 2>/dev/null
rm -rf "$WORK"
[ "$FAILS" = 0 ]
