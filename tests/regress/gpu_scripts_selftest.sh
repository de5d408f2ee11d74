#!/usr/bin/env bash
# The GPU validation and benchmark scripts only run on a GPU machine; their
# trace parsing and arithmetic are checked here on synthetic data, their shell
# with --dry-run, and the Python result-file reader against files the hook
# wrote over the fake driver (when the build has it).
set -euo pipefail
src=${NTOP_SOURCE_DIR:?}
bin=${NTOP_BINARY_DIR:-}
python3 "$src/tests/gpu/check_trace.py" selftest
python3 "$src/tests/gpu/jit_programs_check.py" selftest
python3 "$src/tests/gpu/check_block_records.py" selftest
python3 "$src/bench/bench.py" selftest
python3 "$src/bench/dmat.py" selftest
python3 "$src/tests/gpu/ncu_probes.py" selftest # runs ntr_read.py's selftest too
bash "$src/bench/app_cost.sh" --selftest # its embedded parser
if [ -n "$bin" ] && [ -x "$bin/bin/ntop" ]; then
	python3 "$src/bench/ptx_variants.py" selftest --ntop "$bin/bin/ntop" # each variant assembles
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Dry runs: every step printed, nothing run, the analysis copes with nothing.
dry() { # name script args...
	local name=$1; shift
	if ! OUT=$tmp/$name NTOP=$tmp/no-ntop EX=$tmp/no-examples bash "$src/$1" "${@:2}" >"$tmp/$name.log" 2>&1; then
		fail "$1 --dry-run exited non-zero"
		tail -5 "$tmp/$name.log"
	fi
}
dry dmat bench/dmat.sh --dry-run --quick --apps "fill tensorops" --budget "default 4294967296"
for m in plain timed dmat dmat@4294967296 bs; do
	grep -q "\[dry-run\] .*/$m\.tensorops\.1" "$tmp/dmat.log" || fail "dmat.sh: no $m run of tensorops"
done
grep -q -- "-p dmat --limit 4 -- $tmp/no-examples/fill 6" "$tmp/dmat.log" || fail "dmat.sh: dmat command line"
grep -q "^## app wall time" "$tmp/dmat.log" || fail "dmat.sh: no analysis"
[ -s "$tmp/dmat/dmat.txt" ] && [ -s "$tmp/dmat/dmat-logs.tgz" ] || fail "dmat.sh: no report or logs under OUT"
dry ncu tests/gpu/ncu_probes.sh --dry-run --apps "tensorops memk"
grep -q -- "-p gmem_bytes -p tensorop_count --limit 3 -- $tmp/no-examples/tensorops 2" "$tmp/ncu.log" ||
	fail "ncu_probes.sh: probe command line"
grep -q "ncu .*--metrics sm__sass_data_bytes_mem_global_op_ld.sum,.* -k regex:to_wmma_gemm|to_mma_sync " \
	"$tmp/ncu.log" || fail "ncu_probes.sh: ncu command line"
grep -q "0 ok, 0 DIFF" "$tmp/ncu.log" || fail "ncu_probes.sh: no analysis"
dry app_cost bench/app_cost.sh --dry-run
for m in plain ntop ntop-notime block_sched dmat dmat_global gmem_bytes tensorop_count warp_progress; do
	grep -q "\[dry-run\] .*/$m\.1\.out" "$tmp/app_cost.log" || fail "app_cost.sh: no $m run"
done
grep -q -- "-p dmat --wait-build --every 1 --limit 100000 -- $tmp/no-examples/app_cost 21 " "$tmp/app_cost.log" ||
	fail "app_cost.sh: probe command line"
grep -q -- "-p block_sched --every 1 --limit 100000 -- $tmp/no-examples/app_cost 21 " "$tmp/app_cost.log" ||
	fail "app_cost.sh: block_sched-async without --wait-build"
for m in plain ntop block_sched; do
	grep -q "\[dry-run\] .*app_cost burst 5000 >.*/burst-$m\.2\.out" "$tmp/app_cost.log" || fail "app_cost.sh: no burst $m run"
done
grep -q "build_examples.sh $tmp/no-examples app_cost " "$tmp/app_cost.log" || fail "app_cost.sh: example build"
grep -q "^| burst launches/s " "$tmp/app_cost.log" || fail "app_cost.sh: no table"
[ -s "$tmp/app_cost/app_cost.txt" ] && [ -s "$tmp/app_cost/app_cost-logs.tgz" ] || fail "app_cost.sh: no report or logs under OUT"
dry bench bench/run.sh --dry-run
grep -q "\[dry-run\] .*record -o .*/bs.sgemm -p block_sched --every 2" "$tmp/bench.log" || fail "run.sh: block_sched step"
[ -s "$tmp/bench/bench.txt" ] || fail "run.sh: no report"

# thirdparty.sh: its analysis (masking), then a dry run over a list like
# .thirdparty's (never in the repository) and over our own apps' list
bash "$src/tests/gpu/thirdparty.sh" --selftest || fail "thirdparty.sh --selftest"
mkdir -p "$tmp/tp/bin/vec"
cat >"$tmp/tp/list.txt" <<'EOF'
# name|dir|command|success regex|options
vec|bin/vec|./vec --n 3|^Test PASSED$
tut|.|python3 01-vector-add.py|^done$|timeout=240 sort
EOF
dry thirdparty tests/gpu/thirdparty.sh --dry-run -j 2 "$tmp/tp" "$src/tests/gpu/apps"
for m in block_sched dmat; do
	grep -q "\[dry-run\] cd $tmp/tp/bin/vec && timeout -k 10 120 $tmp/no-ntop record -o .*/vec\.$m\.trace -p $m --limit [0-9]* -- bash -c \"exec ./vec --n 3\"" \
		"$tmp/thirdparty.log" || fail "thirdparty.sh: no $m run of vec"
done
grep -q "\[dry-run\] cd $tmp/tp/bin/vec && timeout -k 10 120 bash -c \"exec ./vec --n 3\" >" "$tmp/thirdparty.log" ||
	fail "thirdparty.sh: no plain run of vec"
grep -q "\[dry-run\] cd $tmp/tp/\. && timeout -k 10 240 .* record -o .*/tut\.record\.trace -- bash -c" "$tmp/thirdparty.log" ||
	fail "thirdparty.sh: per-program timeout"
grep -q "\[dry-run\] nvcc .*/close_fds_daemon .*tests/gpu/apps/close_fds_daemon\.cu" "$tmp/thirdparty.log" ||
	fail "thirdparty.sh: our apps not built"
grep -q "\[dry-run\] .*report .*/mp_cupy_spawn\.dmat\.trace --json" "$tmp/thirdparty.log" || fail "thirdparty.sh: no report step"
grep -q "^| vec | - | - | - | dry | dry | dry | dry |" "$tmp/thirdparty.log" || fail "thirdparty.sh: no table"
[ -s "$tmp/thirdparty/thirdparty.txt" ] && [ -s "$tmp/thirdparty/thirdparty-logs.tgz" ] ||
	fail "thirdparty.sh: no report or logs under OUT"

# jit_programs.sh: every program built and run plain and under ntop, in a dry run
dry jit_programs tests/gpu/jit_programs.sh --dry-run
for a in nvrtc_saxpy rdc graph_nodes; do
	grep -q "\[dry-run\] timeout -k 5 150 $tmp/no-ntop record -p block_sched --limit 20 -k .* -o .*/$a\.trace -- " \
		"$tmp/jit_programs/jit_programs.txt" || fail "jit_programs.sh: no run of $a under ntop"
done
grep -q "\[dry-run\] nvcc -O2 -rdc=true .*rdc_main\.cu .*rdc_dev\.cu" "$tmp/jit_programs/jit_programs.txt" || fail "jit_programs.sh: rdc not built"
# CuPy and Numba: the share before is that of ntop without its loader audit module
for a in cupy_kernels numba_kernel; do
	grep -q "\[dry-run\] timeout -k 5 150 $tmp/no-ntop record --no-audit -o .*/$a\.before -- python3 " \
		"$tmp/jit_programs/jit_programs.txt" || fail "jit_programs.sh: no --no-audit run of $a"
done

# batch.sh: a step per argument under its own limit, a table, few files back
mkdir -p "$tmp/batch"
(cd "$src" && OUT=$tmp/batch tests/gpu/batch.sh nosuch:5) >"$tmp/batch.log" 2>&1
grep -q "^unknown step nosuch" "$tmp/batch/batch.txt" || fail "batch.sh: an unknown step not reported"
[ "$(ls "$tmp/batch" | sort | tr '\n' ' ')" = "batch-logs.tgz batch.txt " ] || fail "batch.sh: files under OUT: $(ls "$tmp/batch")"
# app_cost_ab: a build that is not there is said, and nothing runs for it
mkdir -p "$tmp/batch_ab"
(cd "$src" && OUT=$tmp/batch_ab AB="gone:no-such-build" tests/gpu/batch.sh app_cost_ab:20) >"$tmp/batch_ab.log" 2>&1
grep -q "^gone: no no-such-build/bin/ntop" "$tmp/batch_ab.log" || fail "batch.sh app_cost_ab: a missing build not said"
grep -q "^app_cost_ab *exit 0 " "$tmp/batch_ab/batch.txt" || fail "batch.sh app_cost_ab: $(cat "$tmp/batch_ab/batch.txt")"

# The Python reader against result files the hook wrote (fake driver): thread
# and warp maps of both probes at once, and dmat's slot-major map.
if [ -n "$bin" ] && [ -x "$bin/bin/ntop" ] && [ -x "$bin/tests/fakecuda/app_launch" ] &&
	[ -f "$bin/tests/fakecuda/driver/libcuda.so.1" ] && [ -f "$bin/lib/ntop/libcuda.so.1" ]; then
	for probes in "-p gmem_bytes -p tensorop_count" "-p dmat"; do
		dir=$tmp/fake.${probes//[ -]/}
		# shellcheck disable=SC2086
		NTOP_REAL_LIBCUDA=$bin/tests/fakecuda/driver/libcuda.so.1 NTOP_HOOK_DIR=$bin/lib/ntop \
			"$bin/bin/ntop" record $probes --limit 3 -o "$dir" -- \
			"$bin/tests/fakecuda/app_launch" "$src/tests/fakecuda/kernels.ptx" 0 >"$dir.log" 2>&1 ||
			fail "ntop record $probes over the fake driver (see below)"
		python3 "$src/tests/gpu/ntr_read.py" check "$dir" || { fail "ntr_read check $probes"; tail -5 "$dir.log"; }
	done
	# thirdparty.sh for real over the fake driver: a program that passes in
	# every mode, and one whose success line never comes (the script must
	# say FAIL and exit 1)
	mkdir -p "$tmp/tpf"
	printf '%s\n' "app|.|env LD_LIBRARY_PATH=\${LD_LIBRARY_PATH:-}:$bin/tests/fakecuda/driver $bin/tests/fakecuda/app_launch $src/tests/fakecuda/kernels.ptx 0|^app: done|mask=none procs=2 probed=3" \
		"nosuch|.|env LD_LIBRARY_PATH=\${LD_LIBRARY_PATH:-}:$bin/tests/fakecuda/driver $bin/tests/fakecuda/app_launch $src/tests/fakecuda/kernels.ptx 0|^never printed$" \
		>"$tmp/tpf/list.txt"
	tpf() { # OUTDIR ARGS...
		local o=$1; shift
		OUT=$tmp/$o NTOP=$bin/bin/ntop NTOP_REAL_LIBCUDA=$bin/tests/fakecuda/driver/libcuda.so.1 NTOP_HOOK_DIR=$bin/lib/ntop \
			bash "$src/tests/gpu/thirdparty.sh" "$@" "$tmp/tpf" >"$tmp/$o.log" 2>&1
	}
	tpf tpf-ok --only '^app$' || { fail "thirdparty.sh over the fake driver"; tail -20 "$tmp/tpf-ok.log"; }
	grep -Eq '^\| app \| 2 \| [0-9]+ \| [0-9]+ \| ok [0-9.]+s \| ok [0-9.]+s \| ok [0-9]+/[0-9]+/[0-9]+ [0-9.]+s \| ok ' "$tmp/tpf-ok.log" ||
		{ fail "thirdparty.sh: app not ok in every mode"; tail -20 "$tmp/tpf-ok.log"; }
	tpf tpf-bad --only '^nosuch$' --modes record && fail "thirdparty.sh: exit 0 with a failing program"
	grep -q '^| nosuch | .* | FAIL [0-9.]*s | FAIL [0-9.]*s |$' "$tmp/tpf-bad.log" || fail "thirdparty.sh: no FAIL row"
else
	echo "fake driver or hook not built: ntr_read.py not checked against real result files"
fi
[ "$fails" = 0 ] || { echo "$fails failures"; exit 1; }
echo "gpu_scripts_selftest ok"
