#!/bin/bash
# dmat's checks on the GPU machine in one device call (about 4-6 minutes): the
# dmat accuracy run (tests/gpu/dmat_accuracy.sh) plainly and block-sampled
# (1 in 4), automatic block sampling on a 4M-thread launch under the default
# map budget, warp_progress sequences on sgemm, dmat_global's time axis, and
# the tensorops example. ncu comparisons are tests/gpu/ncu_probes.sh (a call
# of their own). Needs build-gpu (ntop + hook) and build-examples
# (tests/gpu/build_examples.sh), both carried.
#
#   tests/gpu/dmat_suite.sh        output under $OUT (default ./gpu-out)
set -u
# its checks read kernels' first launches: probed copies built on the launch (record --wait-build)
export NTOP_PROBE_ASYNC=0
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT/suite"
OUT=$(cd "$OUT" && pwd)
NTOP=${NTOP:-$ROOT/build-gpu/bin/ntop}
EX=${EX:-$ROOT/build-examples}
STEP_S=${NTOP_GPU_STEP_S:-150}
W=$(mktemp -d /tmp/ntop-suite.XXXXXX)
S=$OUT/suite/summary.txt
: >"$S"
export PATH=$PATH:/usr/local/cuda/bin NTOP EX
rows=()
log() { echo "$@" | tee -a "$S"; }
row() { rows+=("$(printf '%-34s %-5s %s' "$1" "$2" "$3")"); log "$2 $1: $3"; }

log "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"

# 1. tensorops (the ncu script's tensor-op app): exact results
out=$(timeout -k 5 60 "$EX/tensorops" 2 2>&1)
echo "$out" >"$OUT/suite/tensorops.out"
echo "$out" | grep -q "tensorops ok" && row "tensorops example" PASS "$(echo "$out" | grep -c '^checksum') checksums" ||
	row "tensorops example" FAIL "$(echo "$out" | tail -2 | tr '\n' ' ')"

# 2. accuracy, every block
OUT=$OUT/acc timeout -k 5 300 tests/gpu/dmat_accuracy.sh >"$W/acc.log" 2>&1
rc=$?
row "dmat accuracy (8 kernels)" "$([ $rc = 0 ] && echo PASS || echo FAIL)" "$(grep -c '^PASS' "$W/acc.log") PASS, $(grep -c '^FAIL' "$W/acc.log") FAIL lines"
cp "$W/acc.log" "$OUT/suite/acc.log"

# 3. accuracy with 1 block in 4 kept
NTOP_SAMPLE=4 OUT=$OUT/acc4 timeout -k 5 200 tests/gpu/dmat_accuracy.sh --only dm_linear,dm_gather,dm_random,dm_overflow \
	>"$W/acc4.log" 2>&1
rc=$?
row "dmat accuracy, 1 block in 4" "$([ $rc = 0 ] && echo PASS || echo FAIL)" "$(grep -c '^PASS' "$W/acc4.log") PASS, $(grep -c '^FAIL' "$W/acc4.log") FAIL; $(grep -m1 -oE 'sampled=[0-9]+( unsampled=[0-9]+)?' "$W/acc4.log")"
cp "$W/acc4.log" "$OUT/suite/acc4.log"

# 4. automatic sampling: fill (32768 blocks x 128 threads, 4 GiB of dmat map) under the default budget
timeout -k 5 60 "$EX/fill" >"$W/fill.plain" 2>&1
timeout -k 5 "$STEP_S" "$NTOP" record -p dmat --limit 2 -o "$W/fill" -- "$EX/fill" >"$W/fill.probed" 2>"$W/fill.err"
if diff <(grep -v '^info:' "$W/fill.plain") <(grep -v '^info:' "$W/fill.probed") >/dev/null; then same=1; else same=0; fi
res=$(grep -m1 '^result ' "$W/fill/events.log" 2>/dev/null | grep -oE 'records=[0-9]+ dropped=[0-9]+ .*sampled=[0-9]+( unsampled=[0-9]+)?' | sed 's/ bytes=[0-9]* ns=[0-9]*//')
"$NTOP" report "$W/fill" >"$OUT/suite/fill_report.txt" 2>&1
[ "$same" = 1 ] && [ -n "$res" ] && row "auto sampling, fill 4M threads" PASS "$res" ||
	row "auto sampling, fill 4M threads" FAIL "same output $same; $(grep -E '^(probe|result|warn)' "$W/fill/events.log" | head -2 | cut -c1-160)"
t0=$(date +%s.%N)
"$NTOP" export "$W/fill" -k fill_half4 --view dmat -o "$OUT/suite/fill_dmat.png" >"$W/fill.export" 2>&1 &&
	row "dmat PNG of the sampled fill" PASS "$(python3 -c "print(f'{$(date +%s.%N) - $t0:.2f} s')"), $(tail -1 "$W/fill.export" | cut -c1-100)" ||
	row "dmat PNG of the sampled fill" FAIL "$(tail -2 "$W/fill.export" | tr '\n' ' ')"

# 5. warp_progress on sgemm: per warp entry first, exit last, clocks rising, one SM
timeout -k 5 "$STEP_S" "$NTOP" record -p warp_progress --limit 1 -o "$W/wp" -- "$EX/sgemm" >"$W/wp.out" 2>&1
"$NTOP" export "$W/wp" -k sgemm_tiled --view records -o "$W/wp.csv" >"$W/wp.export" 2>&1
chk=$(python3 - "$W/wp.csv" <<'PY'
import csv, sys
warps = {}
for r in csv.DictReader(open(sys.argv[1])):
    warps.setdefault(int(r["unit"]), []).append((int(r["slot"]), int(r["clock"]), int(r["smid"]), int(r["mark"])))
bad = 0; bars = 0; capped = 0
for u, pts in warps.items():
    pts.sort()
    kinds = [m >> 24 for _, _, _, m in pts]
    clocks = [c for _, c, _, _ in pts]
    bars += kinds.count(2)
    capped += len(pts) == 32
    full = len(pts) == 32  # the cap: later points (the exit too) were dropped, counted
    ok = kinds[0] == 1 and (kinds[-1] == 3 or full) and all(k == 2 for k in kinds[1:-1]) \
        and all(b >= a for a, b in zip(clocks, clocks[1:])) and len({s for _, _, s, _ in pts}) == 1
    bad += not ok
print(f"{len(warps)} warps, {bars} barrier points, {capped} at the cap of 32, {bad} bad sequences")
sys.exit(1 if bad or not warps else 0)
PY
)
[ $? = 0 ] && row "warp_progress on sgemm" PASS "$chk" || row "warp_progress on sgemm" FAIL "$chk $(tail -1 "$W/wp.export")"

# 6. dmat_global: the global time axis draws
timeout -k 5 "$STEP_S" "$NTOP" record -p dmat_global --limit 1 -o "$W/dg" -- "$EX/patterns" --only dm_linear >"$W/dg.out" 2>&1
"$NTOP" export "$W/dg" -k dm_linear --view dmat --time global -o "$OUT/suite/dm_linear_global.png" >"$W/dg.export" 2>&1 &&
	row "dmat_global, --time global PNG" PASS "$(tail -1 "$W/dg.export" | cut -c1-100)" ||
	row "dmat_global, --time global PNG" FAIL "$(tail -2 "$W/dg.export" | tr '\n' ' ')"
"$NTOP" export "$W/dg" -k dm_linear --view records -o "$W/dg.csv" >/dev/null 2>&1
python3 - "$W/dg.csv" >>"$S" <<'PY'
import csv, sys
g = [int(r["gtime"]) for r in csv.DictReader(open(sys.argv[1]))]
print(f"dmat_global dm_linear: {len(g)} records, gtime span {(max(g) - min(g)) / 1e3:.1f} us" if g else "no records")
PY

tar -czf "$OUT/suite/logs.tgz" --exclude="*.ntr" -C "$W" . 2>/dev/null
rm -rf "$W"
log ""
log "== dmat GPU suite"
for r in "${rows[@]}"; do log "$r"; done
