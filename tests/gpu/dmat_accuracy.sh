#!/bin/bash
# DMAT accuracy on the GPU machine (NEUTRINO's Table 2 for ntop): does the
# dmat probe record exactly the global memory accesses a kernel makes?
#
#   tests/gpu/dmat_accuracy.sh [patterns options: --n N --seed S --only a,b]
#
# Builds examples/cuda/patterns.cu if needed (tests/gpu/build_examples.sh),
# runs it once plainly and once under `ntop record -p dmat`, the second time
# with --dump-expected (every access each thread makes, in program order);
# exports each kernel's records with `ntop export --view records` and
# compares them with tests/gpu/check_dmat.py (addresses, order, sizes,
# kinds, clocks, guarded-off threads, the cap of 64 and the dropped count
# from `ntop report --json`).
#
# Conventions of tests/gpu/run.sh: run from anywhere, NTOP (default
# build-gpu/bin/ntop), OUT (default ./gpu-out), a timeout per step
# (NTOP_GPU_STEP_S, 120 s). Prints its lines on stdout and keeps
# $OUT/dmat/summary.txt (the same lines) and $OUT/dmat/dmat.tgz (logs,
# events.log, report, the first lines of every CSV; the whole CSVs of the
# kernels that failed while the archive stays under 12 MB).
# Exit status 0 = every check passed.
set -u
# its checks read kernels' first launches: probed copies built on the launch (record --wait-build)
export NTOP_PROBE_ASYNC=0
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT/dmat" || exit 2
D=$(cd "$OUT/dmat" && pwd)
SUMMARY=$D/summary.txt
: >"$SUMMARY"
STEP_S=${NTOP_GPU_STEP_S:-120}
NTOP=${NTOP:-$ROOT/build-gpu/bin/ntop}
EX=${EX:-$ROOT/build-examples}
W=$(mktemp -d /tmp/ntop-dmat.XXXXXX)
L=$W/logs
mkdir -p "$L" "$W/rec"
export PATH=$PATH:/usr/local/cuda/bin
export PYTHONUNBUFFERED=1
KERNELS=(dm_linear dm_strided dm_gather dm_scatter dm_random dm_vector dm_async dm_overflow)
APP_ARGS=("$@")
fails=0
START=$(date +%s)

log() { echo "$@" | tee -a "$SUMMARY"; }
bad() { log "FAIL $*"; fails=$((fails + 1)); }
good() { log "PASS $*"; }
elapsed() { echo $(($(date +%s) - START)); }

# The kernels --only keeps (patterns takes the same list).
for ((i = 0; i < ${#APP_ARGS[@]}; i++)); do
	if [ "${APP_ARGS[$i]}" = --only ] && [ $((i + 1)) -lt ${#APP_ARGS[@]} ]; then
		IFS=, read -r -a KERNELS <<<"${APP_ARGS[$((i + 1))]}"
	fi
done

finish() {
	log "dmat accuracy: $fails FAIL ($(elapsed) s)"
	cp "$SUMMARY" "$L/summary.txt"
	archive
	rm -rf "$W"
	exit $((fails > 0))
}

# Logs and the first lines of every CSV, plus the whole CSVs of failed
# kernels while the archive stays small enough to come back.
archive() {
	local a=$W/art k
	mkdir -p "$a"
	cp -r "$L" "$a/"
	[ -f "$W/trace/events.log" ] && cp "$W/trace/events.log" "$a/"
	for f in "$W"/rec/*.csv "$W/expected.csv"; do
		[ -f "$f" ] && head -n 2000 "$f" >"$a/$(basename "$f" .csv).head.csv"
	done
	tar -czf "$D/dmat.tgz" -C "$a" . 2>/dev/null
	for k in $(grep -o '^FAIL dm_[a-z0-9_]*' "$SUMMARY" | awk '{print $2}' | sort -u); do
		[ -f "$W/rec/$k.csv" ] || continue
		cp "$W/rec/$k.csv" "$a/$k.records.csv"
		grep "^$k," "$W/expected.csv" >"$a/$k.expected.csv" 2>/dev/null
		tar -czf "$W/try.tgz" -C "$a" . 2>/dev/null
		if [ "$(stat -c %s "$W/try.tgz")" -gt $((12 << 20)) ]; then
			rm -f "$a/$k.records.csv" "$a/$k.expected.csv"
			log "note: the whole CSVs of $k are too large to keep"
			continue
		fi
		mv "$W/try.tgz" "$D/dmat.tgz"
	done
	log "artefacts: $D/dmat.tgz ($(du -h "$D/dmat.tgz" | cut -f1))"
}

log "== dmat accuracy: patterns ${APP_ARGS[*]}"
log "ntop: $NTOP  NTOP_MAP_BUDGET=${NTOP_MAP_BUDGET:-default}"

# 1. the app
src=$ROOT/examples/cuda
if [ ! -x "$EX/patterns" ] || [ "$src/patterns.cu" -nt "$EX/patterns" ] || [ "$src/common.h" -nt "$EX/patterns" ]; then
	timeout -k 5 "$STEP_S" tests/gpu/build_examples.sh "$EX" patterns >"$L/build.log" 2>&1
	rc=$?
	[ "$rc" = 0 ] && good "build patterns" || { bad "build patterns (exit $rc):"; tail -20 "$L/build.log" | tee -a "$SUMMARY"; finish; }
fi
[ -x "$NTOP" ] || { bad "no ntop at $NTOP"; finish; }

# 2. plain run, probed run (the results must verify under probing too)
timeout -k 5 "$STEP_S" "$EX/patterns" "${APP_ARGS[@]}" >"$L/plain.out" 2>"$L/plain.err"
rc=$?
[ "$rc" = 0 ] && good "plain run" || bad "plain run exit $rc: $(tail -3 "$L/plain.err")"
t0=$(date +%s.%N)
timeout -k 5 "$STEP_S" "$NTOP" record -p dmat -o "$W/trace" -- "$EX/patterns" "${APP_ARGS[@]}" \
	--dump-expected "$W/expected.csv" >"$L/probed.out" 2>"$L/probed.err"
rc=$?
t1=$(date +%s.%N)
[ "$rc" = 0 ] && good "probed run ($(python3 -c "print(f'{$t1 - $t0:.1f}')") s)" \
	|| bad "probed run exit $rc: $(tail -3 "$L/probed.err")"
if diff <(grep -v '^info:' "$L/plain.out") <(grep -v '^info:' "$L/probed.out") >"$L/outputs.diff"; then
	good "probed outputs equal the plain run's ($(grep -c '^checksum' "$L/plain.out") checksums)"
else
	bad "probed outputs differ from the plain run's: $(head -4 "$L/outputs.diff" | tr '\n' ' ')"
fi
grep '^info: pattern' "$L/probed.out" >>"$SUMMARY"
[ -s "$W/expected.csv" ] || { bad "no expected accesses written"; finish; }
log "expected accesses: $(($(wc -l <"$W/expected.csv") - 1)) ($(du -h "$W/expected.csv" | cut -f1))"

# 3. what the hook did
"$NTOP" report "$W/trace" --json >"$L/report.json" 2>"$L/report.err" || bad "ntop report --json: $(cat "$L/report.err")"
"$NTOP" report "$W/trace" >"$L/report.txt" 2>&1
grep -E '^(instrument|result|warn) ' "$W/trace/events.log" | cut -c1-200 | tee -a "$SUMMARY"

# 3b. every buffer the app printed lies inside an allocation the hook
# reported (doc/events.md alloc): what labels the DMAT ranges. (The app
# prints the bytes a kernel uses, which may be less than it allocated.)
python3 - "$W/trace/events.log" "$L/probed.out" >"$L/allocs.txt" <<'PY'
import re, sys
allocs = [(int(m.group(1), 16), int(m.group(2))) for m in
          (re.search(r" base=(0x[0-9a-f]+) bytes=(\d+)", l) for l in open(sys.argv[1]) if l.startswith("alloc ")) if m]
n = miss = 0
for l in open(sys.argv[2]):
    m = re.match(r"info: pattern (\S+) buf (\S+) base (0x[0-9a-f]+) bytes (\d+)", l)
    if not m:
        continue
    n += 1
    b, sz = int(m.group(3), 16), int(m.group(4))
    if not any(a <= b and b + sz <= a + asz for a, asz in allocs):
        miss += 1
        print(f"  {m.group(1)} buffer {m.group(2)} {m.group(3)}+{sz}: in no reported allocation")
print(f"{n} {miss} {len(allocs)}")
PY
read -r nb nmiss nalloc < <(tail -1 "$L/allocs.txt")
head -n -1 "$L/allocs.txt" | tee -a "$SUMMARY"
[ "${nb:-0}" -gt 0 ] && [ "$nmiss" = 0 ] && good "allocations: all $nb buffers inside the $nalloc allocations the hook reported" ||
	bad "allocations: ${nmiss:-?} of ${nb:-?} buffers in no reported allocation"

# 4. the records of each kernel
for k in "${KERNELS[@]}"; do
	if timeout -k 5 "$STEP_S" "$NTOP" export "$W/trace" -k "$k" --view records -o "$W/rec/$k.csv" \
		>>"$L/export.log" 2>&1; then
		tail -1 "$L/export.log" | tee -a "$SUMMARY"
	else
		bad "export $k: $(tail -3 "$L/export.log" | tr '\n' ' ')"
	fi
done

# 5. compare
list=$(IFS=,; echo "${KERNELS[*]}")
# NTOP_SAMPLE=N (a power of two): the hook kept 1 block in N; expect those only
sampled=1
case ${NTOP_SAMPLE:-} in [0-9]*) sampled=$NTOP_SAMPLE ;; esac
timeout -k 5 "$STEP_S" python3 tests/gpu/check_dmat.py check --expected "$W/expected.csv" --records-dir "$W/rec" \
	--report "$L/report.json" --kernels "$list" --sampled "$sampled" 2>&1 | tee -a "$SUMMARY"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || fails=$((fails + 1))
finish
