# Shell helpers shared by the GPU-machine scripts: bench/run.sh,
# bench/dmat.sh and tests/gpu/ncu_probes.sh. Source it from the repository
# root after setting (all optional):
#   OUT        where results go (each script has its own default)
#   STEP_S     timeout of one step in seconds (120)
#   BUDGET_S   after this many seconds of the whole script, steps are skipped
#              and say so (0 = no limit)
#   DRY_RUN    1: steps print their command instead of running it
# Then `lib_init NAME` makes the work directory $W (/tmp/ntop-NAME.XXXXXX/NAME)
# and the report $REPORT that everything said with `say` is appended to.
# Every step is run through `step`, which never lets a failure pass silently:
# a non-zero exit, a timeout or a skip is said in the report.

ROOT=${ROOT:-$(pwd)}
NTOP=${NTOP:-$ROOT/build-gpu/bin/ntop}
EX=${EX:-$ROOT/build-examples}
STEP_S=${STEP_S:-120}
BUDGET_S=${BUDGET_S:-0}
DRY_RUN=${DRY_RUN:-0}
LIB_START=$(date +%s)
export PYTHONUNBUFFERED=1
export PATH=$PATH:/usr/local/cuda/bin

# lib_init NAME [REPORT_FILE_NAME]: $OUT (absolute), $WORK and $W=$WORK/NAME,
# $REPORT ($OUT/NAME.txt unless named) emptied.
lib_init() {
	mkdir -p "$OUT" || exit 2
	OUT=$(cd "$OUT" && pwd)
	WORK=$(mktemp -d "/tmp/ntop-$1.XXXXXX") || exit 2
	W=$WORK/$1
	mkdir -p "$W"
	REPORT=$OUT/${2:-$1.txt}
	: >"$REPORT"
}

say() { echo "$@" | tee -a "$REPORT"; }
now() { date +%s.%N; }
elapsed() { echo $(($(date +%s) - LIB_START)); }
# secs T0 T1: T1 - T0 with 3 decimals
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$1" "$2"; }

budget_spent() { [ "$BUDGET_S" -gt 0 ] && [ "$(elapsed)" -ge "$BUDGET_S" ]; }

# step LOG CMD... : runs CMD with the step timeout, stdout to LOG.out and
# stderr to LOG.err; sets STEP_RC and STEP_WALL (seconds). Says every
# failure. Returns CMD's status (125 = skipped: time budget spent).
step() {
	local log=$1 t0 t1; shift
	STEP_WALL=""
	if budget_spent; then
		say "  SKIP $(basename "$log"): time budget of $BUDGET_S s spent"
		STEP_RC=125
		return 125
	fi
	if [ "$DRY_RUN" = 1 ]; then
		echo "  [dry-run] $* >$log.out 2>$log.err" | tee -a "$REPORT"
		: >"$log.out"
		: >"$log.err"
		STEP_RC=0
		STEP_WALL=0
		return 0
	fi
	t0=$(now)
	timeout -k 5 "$STEP_S" "$@" >"$log.out" 2>"$log.err"
	STEP_RC=$?
	t1=$(now)
	STEP_WALL=$(secs "$t0" "$t1")
	if [ "$STEP_RC" = 124 ] || [ "$STEP_RC" = 137 ]; then
		say "  TIMEOUT $(basename "$log") after $STEP_S s: $*"
	elif [ "$STEP_RC" != 0 ]; then
		say "  $(basename "$log"): exit $STEP_RC ($(tail -1 "$log.err" 2>/dev/null))"
	fi
	return "$STEP_RC"
}

# rec DIR ARGS... : `ntop record -o $W/DIR ARGS...` as a step (logs $W/DIR.out/.err).
rec() {
	local dir=$1; shift
	rm -rf "${W:?}/$dir"
	step "$W/$dir" "$NTOP" record -o "$W/$dir" "$@"
}

env_info() {
	{
		echo "# $1 $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
		nvcc --version | tail -1
		command -v ncu >/dev/null && ncu --version | tail -1
		git -C "$ROOT" rev-parse --short HEAD 2>/dev/null
		echo "ntop: $NTOP"
	} 2>&1 | tee -a "$REPORT"
}

# ensure_examples APP... : builds examples/cuda into $EX when one is missing.
ensure_examples() {
	local app missing=""
	for app in "$@"; do
		[ -x "$EX/$app" ] || missing="$missing $app"
	done
	[ -z "$missing" ] && return 0
	say "building examples (missing:$missing)"
	step "$W/build_examples" tests/gpu/build_examples.sh "$EX" ||
		say "build_examples failed: $(grep -A3 FAILED "$W/build_examples.out" | head -8)"
}

# ensure_examples_fresh APP... : (re)builds the named examples whose binary
# is missing or was built from other sources (the sha256 of APP.cu and
# common.h, noted in $EX/APP.src), so a build-examples/ kept from an older
# tree is not measured by mistake. Builds only those apps.
ensure_examples_fresh() {
	local app sum stale=""
	for app in "$@"; do
		sum=$(cat "$ROOT/examples/cuda/$app.cu" "$ROOT/examples/cuda/common.h" | sha256sum | cut -d' ' -f1)
		[ -x "$EX/$app" ] && [ "$(cat "$EX/$app.src" 2>/dev/null)" = "$sum" ] || stale="$stale $app"
	done
	[ -z "$stale" ] && return 0
	say "building examples (missing or stale:$stale)"
	# shellcheck disable=SC2086
	if step "$W/build_examples" tests/gpu/build_examples.sh "$EX" $stale; then
		[ "$DRY_RUN" = 1 ] && return 0
		for app in $stale; do
			cat "$ROOT/examples/cuda/$app.cu" "$ROOT/examples/cuda/common.h" | sha256sum | cut -d' ' -f1 >"$EX/$app.src"
		done
	else
		say "build_examples failed: $(grep -A3 FAILED "$W/build_examples.out" | head -8)"
	fi
}

# ensure_ntop: builds build-gpu with cmake when $NTOP is missing.
ensure_ntop() {
	[ -x "$NTOP" ] && return 0
	say "no ntop at $NTOP: building build-gpu"
	step "$W/cmake" bash -c "cmake -S '$ROOT' -B '$ROOT/build-gpu' -DNTOP_TESTS=OFF &&
		cmake --build '$ROOT/build-gpu' -j$(nproc)" || say "cmake failed: $(tail -3 "$W/cmake.out")"
	[ -x "$NTOP" ] || [ "$DRY_RUN" = 1 ] || say "FAIL: no ntop binary at $NTOP; ntop steps will fail"
}

# lib_finish TARBALL: the logs (no result files) to $OUT/TARBALL, work dir removed.
lib_finish() {
	cp "$REPORT" "$W/" 2>/dev/null
	tar -czf "$OUT/$1" -C "$WORK" --exclude='*.ntr' --exclude='triton-cache' "$(basename "$W")"
	say "logs: $OUT/$1 ($(du -h "$OUT/$1" | cut -f1))"
	rm -rf "$WORK"
}

# results_bytes DIR: bytes of the files under DIR (apparent size, du -sb).
results_bytes() { du -sb "$1" 2>/dev/null | cut -f1; }
