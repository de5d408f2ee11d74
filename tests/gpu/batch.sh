#!/bin/bash
# One device call that runs several GPU checks in a row, each under its own
# time limit, and prints a table of what each step did last (the device
# tool returns only the end of the output). Run from the repository root on
# the GPU machine with the Release build carried as build-gpu/ (and, for
# the JIT programs' "before" column, an older build as build-before/):
#
#   tests/gpu/batch.sh [STEP[:SECONDS]...]   default: suite jit_programs app_cost dmat_session
#
# Steps:
#   suite         tests/gpu/run.sh --no-ncu --apps "launch_modes fill memk"
#                 (plain vs ntop record -p block_sched, checked)
#   jit_programs  tests/gpu/jit_programs.sh (NTOP_BEFORE=build-before/bin/ntop
#                 when that exists)
#   block_records tests/gpu/block_records.sh: block_sched's block records
#                 against block_sched_warp's warp records, block_skew's
#                 known lifetimes
#   app_cost      bench/app_cost.sh --quick (--reps APP_COST_REPS when set)
#                 with APP_COST_PROBES (default "block_sched dmat"): the
#                 app's own cudaEvent time per launch
#   app_cost_ab   app_cost for several builds, alternating (AB, below)
#   stream_marks  bench/stream_marks.c (no hook): what an end event, host
#                 work before and after a launch, a copy beside the kernel
#                 and another thread's driver calls cost the app's clock
#                 (STREAM_MARKS_SIZES, default 16777216 4194304 1048576)
#   driver_calls  bench/driver_calls.c (no hook): what each driver call and
#                 clock read on a probed launch's path costs a thread
#   ptx_variants  bench/ptx_variants.sh (no hook) for PTX_VARIANTS (default
#                 "orig emitted nostore"), launches back to back and each
#                 waited for (PTX_TIME_WAIT=1): the probed copy's time in the
#                 kernel and its driver launch call's, against the original
#   first_launch  bench/first_launch.c (no hook): a function's first
#                 launch call, and which warm-up on another thread pays it
#   jit_hold      bench/jit_hold.c (no hook): which driver calls one thread
#                 waits on while another thread's driver JIT compiles
#   exit_build    app_bench returning from main around the time its
#                 probed copy is built, 20 runs under build-before and
#                 build-gpu
#   stage_cap     app_kernels: six large kernels probed one after another,
#                 how many probed launches found their job made ahead,
#                 under build-before and build-gpu
#   tui           tests/gpu/tui_gpu.sh: the live UI through tmux (probe
#                 picking, timeline, PNG, Triton, regions picked from source
#                 lines, the copy built off the app's threads)
#   inside        tests/gpu/inside_kernel.sh $INSIDE_STEPS (default triton:
#                 what regions cost on Triton kernels, COST_VARIANTS; set
#                 TRITON_ATTN for the fused-attention kernel)
#   apps          tests/gpu/thirdparty.sh tests/gpu/apps: our app-survival
#                 programs and torch.compile under APPS_MODES (default
#                 "record block_sched dmat")
#   oom_late      tests/gpu/apps/fill_memory_late.cu plain and under
#                 `ntop record -p dmat` with no limit, for build-gpu (also
#                 allocating at once, results in flight, and through
#                 cuMemCreate) and build-before:
#                 whether the app still gets all the GPU's memory after the
#                 pool grew (the hook's `dev_given`)
#   ptxas_triton  examples/python/triton_add.py under `ntop record -p
#                 block_sched` with no toolkit ptxas in reach (PATH without
#                 CUDA's folders, CUDA_HOME unset): the copy built by the
#                 ptxas Triton ships, found beside its loaded library; again
#                 with a ptxas that rejects the PTX first on PATH; and with
#                 no ptxas at all (NTOP_PTXAS not there): nvJitLink builds
#   dmat_session  examples/cuda/patterns.cu (strided, gather, random) under
#                 `ntop record -p dmat`: a small trace, packed as
#                 $OUT/dmat_session.tgz (for a bundled heatmap session)
#
# $OUT (default ./gpu-out) gets few files (the device tool brings back 8):
# batch.txt (the table), summary.txt, jit_programs.txt, app_cost.txt, block_records.txt, inside_kernel.txt,
# stream_marks.txt, driver_calls.txt, jit_hold.txt,
# dmat_session.tgz, and batch-logs.tgz with everything else the steps wrote
# (their logs and log archives). BATCH_STEP_S (default 300) bounds each step.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
FINAL=${OUT:-$ROOT/gpu-out}
mkdir -p "$FINAL"
FINAL=$(cd "$FINAL" && pwd)
export OUT=$FINAL/raw
mkdir -p "$OUT"
STEP_S=${BATCH_STEP_S:-300}
TABLE=$FINAL/batch.txt
: >"$TABLE"
export PATH=$PATH:/usr/local/cuda/bin

step_suite() {
	tests/gpu/run.sh --no-ncu --apps "launch_modes fill memk"
}

step_jit_programs() {
	if [ -x build-before/bin/ntop ]; then
		NTOP_BEFORE=$ROOT/build-before/bin/ntop tests/gpu/jit_programs.sh
	else
		tests/gpu/jit_programs.sh
	fi
}

step_app_cost() {
	local reps=--quick
	[ -n "${APP_COST_REPS:-}" ] && reps="--reps $APP_COST_REPS"
	# shellcheck disable=SC2086 # reps is one option or two words
	APP_COST_PROBES=${APP_COST_PROBES:-"block_sched dmat"} BUDGET_S=$((STEP_S - 30)) bench/app_cost.sh $reps
}

# app_cost_ab: bench/app_cost.sh --quick for each build in AB (default
# "before:build-before head:build-gpu"), alternating, AB_REPS (2) rounds;
# an entry NAME:DIR[:VAR=VAL,...] runs DIR/bin/ntop with those variables
# set (a diagnostic build's switches) and AB_PROBES_NAME (else
# APP_COST_PROBES, else "block_sched dmat") as its probes. Prints each run's
# table of what the app's own clock sees, then each later build against the
# first round by round, each mode less its round's plain and, again, less
# its round's ntop-notime (app_cost_ab.txt).
step_app_cost_ab() {
	local rep spec name dir vars probes reports=()
	local specs order
	read -r -a specs <<<"${AB:-before:build-before head:build-gpu}"
	for rep in $(seq "${AB_REPS:-2}"); do
		# the builds' order and the modes' (APP_COST_OFFSET) turn each round:
		# a run's place in a round moves the app's clock too
		order=("${specs[@]}")
		((rep % 2)) || mapfile -t order < <(printf '%s\n' "${specs[@]}" | tac)
		for spec in "${order[@]}"; do
			IFS=: read -r name dir vars <<<"$spec"
			[ -x "$dir/bin/ntop" ] || { echo "$name: no $dir/bin/ntop"; continue; }
			probes=AB_PROBES_$name
			probes=${!probes:-${APP_COST_PROBES:-block_sched dmat}}
			echo "=== $name round $rep ($dir${vars:+, $vars}; $probes)"
			env ${vars//,/ } NTOP=$ROOT/$dir/bin/ntop OUT=$OUT/ab-$name-$rep APP_COST_PROBES="$probes" \
				APP_COST_OFFSET=$((rep - 1)) \
				BUDGET_S=240 bench/app_cost.sh --quick >/dev/null 2>&1
			sed -n '/^## What the app.s own clock sees/,$p' "$OUT/ab-$name-$rep/app_cost.txt"
			reports+=("$name:$rep:$OUT/ab-$name-$rep/app_cost.txt")
		done
	done
	[ ${#reports[@]} -gt 0 ] || return 0
	# against plain, and against nothing probed with ntop's timing off (the
	# same process shape: what rounds differ by shows in the other modes)
	{ bench/app_cost.sh --ab-rounds "${reports[@]}"
	  bench/app_cost.sh --ab-rounds --ref ntop-notime "${reports[@]}"; } | tee "$OUT/app_cost_ab.txt"
}

step_stream_marks() {
	# shellcheck disable=SC2086 # a list of sizes
	build-gpu/bench/stream_marks ${STREAM_MARKS_SIZES:-16777216 4194304 1048576} | tee "$OUT/stream_marks.txt"
	return "${PIPESTATUS[0]}"
}

step_driver_calls() {
	build-gpu/bench/driver_calls | tee "$OUT/driver_calls.txt"
	return "${PIPESTATUS[0]}"
}

step_ptx_variants() {
	local w rc=0
	for w in 0 1; do
		echo "## PTX_TIME_WAIT=$w"
		PTX_TIME_WAIT=$w PTX_VARIANTS=${PTX_VARIANTS:-"orig emitted nostore"} OUT=$OUT/ptxv$w \
			bench/ptx_variants.sh || rc=1
	done >"$OUT/ptx_variants.txt" 2>&1
	cat "$OUT/ptx_variants.txt"
	return $rc
}

step_first_launch() {
	build-gpu/bench/first_launch | tee "$OUT/first_launch.txt"
	return "${PIPESTATUS[0]}"
}

step_jit_hold() {
	build-gpu/bench/jit_hold | tee "$OUT/jit_hold.txt"
	return "${PIPESTATUS[0]}"
}

# builds_to_compare VAR: the build folders a step runs, VAR's value when
# set, else build-gpu, after build-before when there is one
builds_to_compare() {
	if [ -n "${!1:-}" ]; then
		echo "${!1}"
	elif [ -x build-before/bin/ntop ]; then
		echo "build-before build-gpu"
	else
		echo build-gpu
	fi
}

# exit_build: app_bench (tests/fakecuda, on the real driver) probing
# `scale` on every launch, each launch waited for, and returning from main
# after 1000-20000 launches (run i: i x 1000), around the time its copy is
# built: EXIT_BUILD_RUNS runs (20) for each build in EXIT_BUILD_DIRS
# ("build-gpu", plus build-before when there); every run of build-gpu must
# exit 0.
step_exit_build() {
	local dir i rc=0 bad runs=${EXIT_BUILD_RUNS:-20} t=/tmp/ntop-batch-exit
	local dirs
	dirs=$(builds_to_compare EXIT_BUILD_DIRS)
	for dir in $dirs; do
		bad=0
		for i in $(seq "$runs"); do
			rm -rf "$t"
			APP_BENCH_PACED=1 "$dir/bin/ntop" record -p block_sched -k scale --limit 100000 -o "$t" -- \
				build-gpu/tests/fakecuda/app_bench tests/fakecuda/kernels.ptx $((i * 1000)) >"$t.out" 2>&1 ||
				{ bad=$((bad + 1)); tail -3 "$t.out"; }
		done
		echo "$dir: $bad of $runs runs failed"
		[ "$dir" = build-gpu ] && [ "$bad" -gt 0 ] && rc=1
	done
	return $rc
}

# stage_cap: app_kernels (tests/fakecuda, on the real driver): six modules'
# `scale`, 16384 blocks of 1024 threads (block_sched jobs of 14 MiB), 12
# launches each, each waited for, the modules 30 ms apart; for each build in
# STAGE_CAP_DIRS ("build-gpu", plus build-before when there) the results'
# written, probed and staged (launches whose job was made ahead) counts.
# build-gpu must have every launch written, and staged all but at most
# three a kernel (each kernel's first two may find the 64 MiB cap full).
step_stage_cap() {
	local dir t=/tmp/ntop-batch-stage rc=0 line staged
	local dirs
	dirs=$(builds_to_compare STAGE_CAP_DIRS)
	for dir in $dirs; do
		rm -rf "$t"
		APP_KERNELS_GAP_MS=30 "$dir/bin/ntop" record -p block_sched --wait-build --limit 100000 -o "$t" -- \
			build-gpu/tests/fakecuda/app_kernels tests/fakecuda/kernels.ptx 6 12 16384 >"$t.out" 2>&1 ||
			{ tail -3 "$t.out"; rc=1; }
		line=$(grep -h '^results .*at=final' "$t"/events*.log | grep -oE '(written|probed|staged)=[0-9]+' | paste -sd' ')
		echo "$dir: $line (of 72 launches)"
		staged=$(echo "$line" | sed -nE 's/.*staged=([0-9]+).*/\1/p')
		[ "$dir" = build-gpu ] && { [[ $line == *"written=72 "* ]] && [ "${staged:-0}" -ge 54 ] || rc=1; }
	done
	rm -rf "$t"
	return $rc
}

step_tui() {
	tests/gpu/build_examples.sh build-examples fill train_loop >/dev/null || return 1
	tests/gpu/tui_gpu.sh "$OUT/tui"
}

step_apps() {
	bash tests/gpu/thirdparty.sh --modes "${APPS_MODES:-record block_sched dmat}" tests/gpu/apps
}

step_inside() {
	OUT=$OUT tests/gpu/inside_kernel.sh ${INSIDE_STEPS:-triton}
}

step_block_records() {
	tests/gpu/block_records.sh
}

step_oom_late() {
	local bin=/tmp/ntop-batch-oom/fill_memory_late b t t0
	mkdir -p "$(dirname "$bin")"
	nvcc -O2 -std=c++17 -arch=sm_90 -o "$bin" tests/gpu/apps/fill_memory_late.cu || return 1
	for b in "" vmm; do
		t0=$(date +%s%N)
		# shellcheck disable=SC2086 # b is empty or one word
		"$bin" $b >"$OUT/oom-plain$b.out" 2>"$OUT/oom-plain$b.err"
		echo "plain $b: exit $?, $((($(date +%s%N) - t0) / 1000000)) ms," \
			"$(tr '\n' ' ' <"$OUT/oom-plain$b.out") $(cat "$OUT/oom-plain$b.err")"
	done
	# BUILD[:now|vmm]: `now` allocates at once, while results are in flight;
	# `vmm` through cuMemCreate
	for b in build-gpu build-gpu:now build-gpu:vmm build-before build-before:vmm; do
		local dir=${b%%:*} arg="" name=${b/:/-} rc
		[ "$dir" != "$b" ] && arg=${b#*:}
		[ -x "$dir/bin/ntop" ] || continue
		t=/tmp/ntop-batch-oom/$name.trace
		rm -rf "$t"
		t0=$(date +%s%N)
		# shellcheck disable=SC2086 # arg is empty or one word
		"$dir/bin/ntop" record -p dmat --limit 1000000 -o "$t" -- "$bin" $arg >"$OUT/oom-$name.out" 2>"$OUT/oom-$name.err"
		rc=$?
		echo "$b: exit $rc, $((($(date +%s%N) - t0) / 1000000)) ms, output" \
			"$(cmp -s "$OUT/oom-plain${arg/now/}.out" "$OUT/oom-$name.out" && echo same || echo DIFFERS):" \
			"$(grep -o 'fill_memory_late: .*' "$OUT/oom-$name.err")"
		grep -h '^results .*at=final' "$t"/events.log | grep -oE '(written|failed|dev_allocs|dev_pooled|dev_peak|dev_given)=[0-9]+' | tr '\n' ' '
		echo "declined=$(grep -c '^probe .*status=declined' "$t"/events.log)"
		grep -h '^probe .*status=declined' "$t"/events.log | sed -nE 's/.*reason=//p' | sort | uniq -c | head -3
		grep -h 'gave back' "$OUT/oom-$name.err"
		"$dir/bin/ntop" report "$t" 2>/dev/null | grep -h 'GPU memory for maps'
	done
}

step_ptxas_triton() {
	local t=/tmp/ntop-batch-tptx path old=/tmp/ntop-batch-oldptxas rc=0 run name ptxas want
	path=$(tr ':' '\n' <<<"$PATH" | grep -v cuda | paste -sd: -)
	# a ptxas first on PATH that rejects the PTX, as an old toolkit's does
	mkdir -p "$old"
	printf '#!/bin/sh\necho "ptxas fatal   : Unsupported .version (an old ptxas)" >&2\nexit 255\n' >"$old/ptxas"
	chmod 755 "$old/ptxas"
	# NAME:NTOP_PTXAS:PATH (none: an NTOP_PTXAS that is not there hides every ptxas)
	for run in alone::"$path" old::"$old:$path" none:/nonexistent/ptxas:"$path"; do
		IFS=: read -r name ptxas _ <<<"$run"
		rm -rf "$t" "$t.log"
		echo "== $name"
		env -u CUDA_HOME -u TRITON_PTXAS_PATH -u NTOP_ASSEMBLER NTOP_PTXAS="$ptxas" PATH="${run#*:*:}" \
			NTOP_LOG="$t.log" build-gpu/bin/ntop record -p block_sched --limit 5 -o "$t" -- \
			python3 examples/python/triton_add.py || rc=1
		grep -h 'probed copies built by\|no ptxas found\|trying\|builds it' "$t.log"
		grep -h '^instrument ' "$t"/events.log | grep -oE 'status=[a-z]+|jit=[a-z]+' | paste -sd' ' -
		want=ptxas
		[ "$name" = none ] && want=nvjitlink
		grep -q '^instrument .*status=ok .*jit='$want "$t"/events.log &&
			! grep -q '^instrument .*status=failed' "$t"/events.log || rc=1
		[ "$name" = none ] || grep -q 'probed copies built by .*/triton/backends/nvidia/bin/ptxas' "$t.log" || rc=1
		[ "$name" != none ] || grep -q 'probed copies built by nvJitLink' "$t.log" || rc=1
		[ "$name" != old ] ||
			grep -q "$old/ptxas: ptxas failed .*; trying .*/triton/backends/nvidia/bin/ptxas" "$t.log" || rc=1
	done
	return $rc
}

step_dmat_session() {
	local ex=/tmp/ntop-batch-ex tr=/tmp/ntop-batch-dmat
	rm -rf "$tr"
	tests/gpu/build_examples.sh "$ex" patterns || return 1
	build-gpu/bin/ntop record -p dmat -o "$tr" -- "$ex/patterns" --n 100000 \
		--only dm_strided,dm_gather,dm_random || return 1
	build-gpu/bin/ntop report "$tr" | tail -20
	tar -C "$(dirname "$tr")" -czf "$FINAL/dmat_session.tgz" "$(basename "$tr")"
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(suite jit_programs app_cost dmat_session)
{
	echo "batch $(date -u +%FT%TZ)"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
	nvcc --version 2>/dev/null | tail -1
} | tee -a "$TABLE"
for arg in "${steps[@]}"; do
	s=${arg%%:*} limit=$STEP_S
	[ "$s" != "$arg" ] && limit=${arg#*:}
	declare -F "step_$s" >/dev/null || { echo "unknown step $s" | tee -a "$TABLE"; continue; }
	t0=$(date +%s)
	echo "=== step $s (limit ${limit}s)"
	FINAL=$FINAL ROOT=$ROOT STEP_S=$limit timeout -k 10 "$limit" bash -c "$(declare -f "step_$s"); step_$s" >"$OUT/step-$s.log" 2>&1
	rc=$?
	tail -40 "$OUT/step-$s.log"
	printf '%-14s exit %-4s %4ss\n' "$s" "$rc" "$(($(date +%s) - t0))" | tee -a "$TABLE"
done
for f in summary.txt jit_programs.txt app_cost.txt block_records.txt inside_kernel.txt stream_marks.txt driver_calls.txt jit_hold.txt ptx_variants.txt first_launch.txt; do
	[ -f "$OUT/$f" ] && cp "$OUT/$f" "$FINAL/"
done
tar -C "$OUT" -czf "$FINAL/batch-logs.tgz" . && rm -rf "$OUT"
echo "=== table"
cat "$TABLE"
