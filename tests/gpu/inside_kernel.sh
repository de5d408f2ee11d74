#!/bin/bash
# What ntop sees inside kernels, checked on a GPU against known answers, in
# one device call (run from the repository root with the Release build as
# build-gpu/):
#
#   tests/gpu/inside_kernel.sh [STEP...]   default: all steps below
#
#   accuracy  examples/cuda/regions_check.cu's rg_spin: every warp spins in
#             two source-line regions for cycle counts that differ per warp,
#             and reads the clock around each spin itself; the regions
#             probe's per-warp durations (ntop export --view regions, CSV)
#             must be within 2% and within 50 cycles of those
#   func      rg_func loads twice through a __noinline__ device function:
#             under -p dmat, ntop report --lines must count every thread's
#             two loads on the function's line and the store on the kernel's
#   sectors   examples/cuda/patterns.cu (linear, strided, gather) under -p
#             dmat: 32-byte sectors per global-load request from the records
#             against ncu's l1tex__t_sectors / l1tex__t_requests
#             (pipe_lsu_mem_global_op_ld), per kernel
#   cost      what the regions probe costs as the app's own clock sees it:
#             bench/app_cost.sh --quick (APP_COST_PROBES=regions), and
#             tests/gpu/triton_regions.py (a pipelined Triton matmul, and
#             with TRITON_ATTN=FILE the forward kernel of Triton's fused-
#             attention tutorial) plain and under -p regions, alternating,
#             outputs compared; COST_VARIANTS adds variants (triton_cost)
#   triton    the Triton part of cost alone
#   case      the fused-attention kernel under a copy of the regions probe
#             keeping 2048 records a warp (the default regions): the
#             report's region table, the warps of block 0 and of its SM as
#             PNGs, block 0 for Perfetto, and how the regions overlap on
#             the SM and in the block (tests/gpu/regions_overlap.py)
#
# $OUT (default ./gpu-out): inside_kernel.txt (a line per check, last), and
# the step outputs; everything else in inside_kernel-logs.tgz.
set -u
# its checks read kernels' first launches: probed copies built on the launch (record --wait-build)
export NTOP_PROBE_ASYNC=0
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
NTOP=${NTOP:-$ROOT/build-gpu/bin/ntop}
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d)
EX=$W/ex
TABLE=$OUT/inside_kernel.txt
export PATH=$PATH:/usr/local/cuda/bin
: >"$TABLE"
row() { printf '%-44s %s\n' "$1" "$2" | tee -a "$TABLE"; }
same_output() { diff <(grep -v '^info:' "$1") <(grep -v '^info:' "$2") >/dev/null; }

step_build() {
	tests/gpu/build_examples.sh "$EX" regions_check patterns app_cost >"$W/build.log" 2>&1
	row build "$( [ $? = 0 ] && echo ok || echo "FAIL (see build.log)")"
}

step_accuracy() {
	local la lb
	la=$(grep -n 'REGION_A' examples/cuda/regions_check.cu | head -1 | cut -d: -f1)
	lb=$(grep -n 'REGION_B' examples/cuda/regions_check.cu | head -1 | cut -d: -f1)
	"$EX/regions_check" >"$W/plain.out" 2>&1
	"$NTOP" record -p regions -r "a=regions_check.cu:$la" -r "b=regions_check.cu:$lb" -k rg_spin -o "$W/acc" -- \
		"$EX/regions_check" --truth "$W/truth.csv" >"$W/acc.out" 2>"$W/acc.err"
	row "accuracy: output as plain" "$(same_output "$W/plain.out" "$W/acc.out" && echo identical || echo DIFFERS)"
	"$NTOP" export "$W/acc" -k rg_spin --view regions -o "$W/acc.csv" >>"$W/acc.err" 2>&1
	python3 - "$W/truth.csv" "$W/acc.csv" <<'PY' | tee -a "$TABLE"
import csv, sys
truth = {}
for b, w, a, bb in csv.reader(open(sys.argv[1])):
    truth[(int(b), int(w))] = {"a": int(a), "b": int(bb)}
got = {}
for r in csv.DictReader(open(sys.argv[2])):
    key = (int(r["block"]), int(r["warp"]))
    got.setdefault(key, {}).setdefault(r["name"], 0)
    got[key][r["name"]] += int(r["cycles"])
worst, bad, n = 0.0, 0, 0
for key, t in truth.items():
    for reg in ("a", "b"):
        m = got.get(key, {}).get(reg)
        n += 1
        if m is None:
            bad += 1
            continue
        err = abs(m - t[reg])
        worst = max(worst, err / t[reg])
        bad += err > 50 or err > 0.02 * t[reg]
        print(f"  {key} {reg}: truth {t[reg]} measured {m} ({m - t[reg]:+d})", file=sys.stderr)
print(f"{'accuracy: regions within 2% and 50 cycles':44s} {n - bad}/{n}, worst {100 * worst:.3f}%"
      f"{' FAIL' if bad else ''}")
PY
}

step_func() {
	"$EX/regions_check" >"$W/plain.out" 2>&1
	"$NTOP" record -p dmat -k rg_func -o "$W/fn" -- "$EX/regions_check" >"$W/fn.out" 2>"$W/fn.err"
	row "func: output as plain" "$(same_output "$W/plain.out" "$W/fn.out" && echo identical || echo DIFFERS)"
	"$NTOP" report --lines "$W/fn" >"$W/fn.txt" 2>&1
	local n ld st
	n=$(grep -o 'rg_func: n [0-9]*' "$W/fn.out" | awk '{print $3}')
	ld=$(awk '$1 ~ /^regions_check.cu:/ && $2 == "load" {print $3}' "$W/fn.txt" | head -1)
	st=$(awk '$1 ~ /^regions_check.cu:/ && $2 == "store" {print $3}' "$W/fn.txt" | head -1)
	row "func: loads in the device function" "${ld:-none} of $((2 * ${n:-0}))$( [ "${ld:-0}" = $((2 * ${n:-0})) ] || echo ' FAIL')"
	row "func: stores in the kernel" "${st:-none} of ${n:-0}$( [ "${st:-0}" = "${n:-0}" ] || echo ' FAIL')"
}

step_sectors() {
	local only=dm_linear,dm_strided,dm_gather k
	"$NTOP" record -p dmat -o "$W/pat" -- "$EX/patterns" --n 262144 --only "$only" >"$W/pat.out" 2>"$W/pat.err"
	"$NTOP" report --lines "$W/pat" >"$W/pat.txt" 2>&1
	ncu --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
		--csv "$EX/patterns" --n 262144 --only "$only" >"$W/ncu.csv" 2>"$W/ncu.err"
	python3 - "$W/pat.txt" "$W/ncu.csv" <<'PY' | tee -a "$TABLE"
import csv, io, re, sys
ours, cur = {}, None
for line in open(sys.argv[1]):
    m = re.match(r"\s+\[\d+\] (\S+)", line)
    if m:
        cur = m.group(1)
    f = line.split()
    if cur and len(f) >= 8 and "load" in f[1] and f[4].isdigit() and f[5].isdigit():
        req, sec = ours.get(cur, (0, 0))
        ours[cur] = (req + int(f[4]), sec + int(f[5]))
text = open(sys.argv[2]).read()
text = text[text.find('"ID"'):]
theirs = {}
for r in csv.DictReader(io.StringIO(text)):
    k = r["Kernel Name"].split("(")[0]
    v = float(r["Metric Value"].replace(",", ""))
    theirs.setdefault(k, {})[r["Metric Name"]] = v
for k in ("dm_linear", "dm_strided", "dm_gather"):
    o, t = ours.get(k), theirs.get(k, {})
    tr = t.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    ts = t.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    if not o or not tr:
        print(f"{'sectors/request ' + k:44s} missing (ours {o}, ncu {t}) FAIL")
        continue
    a, b = o[1] / o[0], ts / tr
    ok = abs(a - b) <= 0.01 * b
    print(f"{'sectors/request ' + k:44s} ntop {a:.3f} ({o[0]} requests)  ncu {b:.3f} ({tr:.0f}){'' if ok else ' FAIL'}")
PY
}

step_cost() {
	OUT=$W/app_cost APP_COST_PROBES=regions BUDGET_S=200 bench/app_cost.sh --quick >"$W/app_cost.log" 2>&1
	cp "$W/app_cost/app_cost.txt" "$OUT/app_cost_regions.txt" 2>/dev/null
	sed -n '/^## What the app.s own clock sees/,$p' "$W/app_cost/app_cost.txt" | tee -a "$TABLE"
	triton_cost
}

step_triton() {
	triton_cost
}

# The regions probe without its stores in the kernel's body: the region
# hooks read the clock and fold it into a register that the exit record
# keeps, so ptxas keeps the reads (what the records' stores cost, apart).
nostore_probe() {
	python3 - "$ROOT/probes/regions.toml" "$1" <<'PY'
import sys
s = open(sys.argv[1]).read().replace('name = "regions"', 'name = "regions_nostore"')
s = s.replace(".reg .b32 %rg_c;\n", ".reg .b32 %rg_c;\n.reg .b32 %rg_acc;\nmov.u32 %rg_acc, 0;\n", 1)
s = s.replace('SAVE.u32 {%rg_c, %rg_t};\n"""', 'add.u32 %rg_acc, %rg_acc, %rg_c;\nxor.b32 %rg_acc, %rg_acc, %rg_t;\n"""')
s = s.replace("SAVE.u32 {%rg_c, 0xC0000000};", "SAVE.u32 {%rg_acc, 0xC0000000};")
assert s.count("SAVE") == 2, "regions.toml changed: update nostore_probe"
open(sys.argv[2], "w").write(s)
PY
}

# triton_regions.py plain and under each of COST_VARIANTS (default
# "regions"), alternating, TRITON_ROUNDS rounds (default 2). A variant: regions (the default
# regions), full (the same keeping every block: --sample-blocks off),
# tN (the default regions with NTOP_WARP_MAP_TARGET=N bytes),
# nostore (nostore_probe), cap2 (the default regions keeping two
# records a warp, the entry's: the same code, every later store predicated
# off),
# or CLASS (-p regions -r CLASS=@CLASS: one instruction class alone, e.g.
# tensor, wait, async, load, store).
triton_cost() {
	local attn=() rep mode args
	[ -n "${TRITON_ATTN:-}" ] && attn=(--attn "$TRITON_ATTN")
	local modes="plain ${COST_VARIANTS:-regions}"
	nostore_probe "$W/regions_nostore.toml" || return 1
	sed 's/^cap = 1024$/cap = 2/' "$ROOT/probes/regions.toml" >"$W/regions_cap2.toml"
	grep -q '^cap = 2$' "$W/regions_cap2.toml" || { echo "regions.toml changed: update cap2" >&2; return 1; }
	for rep in $(seq "${TRITON_ROUNDS:-2}"); do
		for mode in $modes; do
			case $mode in
			plain) args=() ;;
			regions) args=(-p regions) ;;
			full) args=(-p regions --sample-blocks off) ;;
			t[0-9]*) args=(-p regions) ;;
			nostore) args=(-p "$W/regions_nostore.toml") ;;
			cap2) args=(-p "$W/regions_cap2.toml") ;;
			*) args=(-p regions -r "$mode=@$mode") ;;
			esac
			if [ $mode = plain ]; then
				python3 tests/gpu/triton_regions.py "${attn[@]}" >"$W/tr.$mode.$rep" 2>>"$W/tr.err"
			else
				target=()
				case $mode in t[0-9]*) target=(NTOP_WARP_MAP_TARGET="${mode#t}") ;; esac
				env "${target[@]}" "$NTOP" record "${args[@]}" --limit 100000 -o "$W/tr.trace.$mode.$rep" -- \
					python3 tests/gpu/triton_regions.py "${attn[@]}" >"$W/tr.$mode.$rep" 2>>"$W/tr.err"
				"$NTOP" report "$W/tr.trace.$mode.$rep" >"$W/tr.report.$mode.$rep" 2>&1
				rm -rf "$W/tr.trace.$mode.$rep/results"
			fi
		done
	done
	python3 - "$W" $modes <<'PY' | tee -a "$TABLE"
import re, statistics, sys
w, modes = sys.argv[1], sys.argv[2:]
def read(mode, rep):
    d = {}
    try:
        lines = open(f"{w}/tr.{mode}.{rep}").read().splitlines()
    except OSError:
        return d
    for line in lines:
        m = re.match(r"(\w+) us=([\d.]+) sum=(\w+)", line)
        if m:
            d[m.group(1)] = (float(m.group(2)), m.group(3))
    return d
rounds = int(__import__("os").environ.get("TRITON_ROUNDS", "2"))
runs = {m: [read(m, r) for r in range(1, rounds + 1)] for m in modes}
def kept(mode):
    try:
        s = sorted({int(n) for n in re.findall(r"1 block in (\d+) kept", open(f"{w}/tr.report.{mode}.1").read())})
    except OSError:
        return ""
    return "  blocks kept 1 in " + "/".join(map(str, s)) if s else ""

for k in sorted(runs["plain"][0]):
    p = statistics.median(r[k][0] for r in runs["plain"] if k in r)
    for mode in modes[1:]:
        g = [r[k][0] for r in runs[mode] if k in r]
        same = bool(g) and all(r.get(k, (0, None))[1] == runs["plain"][0][k][1] for r in runs[mode])
        ratio = f"{statistics.median(g) / p:.3f}x" if g else "no run"
        per = [a[k][0] / b[k][0] for a, b in zip(runs[mode], runs["plain"]) if k in a and k in b]
        if len(per) > 1:
            ratio += f" (rounds {min(per):.3f}-{max(per):.3f})"
        print(f"{'cost: triton ' + k + ' ' + mode + ' (app clock)':44s} plain {p:.1f} us  {ratio}  "
              f"output {'identical' if same else 'DIFFERS'}{kept(mode)}")
PY
}

step_case() {
	[ -n "${TRITON_ATTN:-}" ] || { row "case" "skipped: no TRITON_ATTN"; return; }
	# the attention kernel's warps pass ~1,400 region boundaries: a copy of
	# the probe keeping 2048 records a warp keeps them all
	sed 's/^cap = 1024$/cap = 2048/' probes/regions.toml >"$W/regions2k.toml"
	# every block kept (--sample-blocks off): the case study reads all warps
	"$NTOP" record -p "$W/regions2k.toml" --sample-blocks off -k attn_fwd --limit 1 -o "$W/case" -- \
		python3 tests/gpu/triton_regions.py \
		--only attn --attn "$TRITON_ATTN" --reps 1 >"$W/case.out" 2>"$W/case.err"
	"$NTOP" report "$W/case" >"$OUT/case.txt" 2>&1
	"$NTOP" export "$W/case" -k attn_fwd --view regions --block 0 --width 1600 --height 500 \
		-o "$OUT/attn_block0.png" >>"$W/case.err" 2>&1
	"$NTOP" export "$W/case" -k attn_fwd --view regions -o "$OUT/attn_sm.png" >>"$W/case.err" 2>&1
	"$NTOP" export "$W/case" -k attn_fwd --view regions -o "$W/case.csv" >>"$W/case.err" 2>&1
	"$NTOP" export "$W/case" -k attn_fwd --view regions --block 0 --format perfetto \
		-o "$OUT/attn_block0.json" >>"$W/case.err" 2>&1
	python3 tests/gpu/regions_overlap.py "$W/case.csv" >"$OUT/attn_overlap_sm.txt" 2>&1
	python3 tests/gpu/regions_overlap.py "$W/case.csv" --block 0 >"$OUT/attn_overlap_block0.txt" 2>&1
	grep -A12 'regions:' "$OUT/case.txt" | head -14 | tee -a "$TABLE"
	head -12 "$OUT/attn_overlap_sm.txt" | tee -a "$TABLE"
	row "case: warps of block 0" "$( [ -s "$OUT/attn_block0.png" ] && echo attn_block0.png || echo "FAIL: $(tail -2 "$W/case.err")")"
	row "case: perfetto of block 0" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["otherData"]; print(d["warps"], "warps,", d["region_slices"], "region slices")' "$OUT/attn_block0.json" 2>&1)"
}

{
	echo "inside_kernel $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null)"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
} | tee -a "$TABLE"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(accuracy func sectors cost case)
[ "${steps[*]}" = triton ] || step_build
for s in "${steps[@]}"; do
	echo "=== $s" >&2
	"step_$s" 2>>"$W/$s.stderr"
done
tar -C "$W" -czf "$OUT/inside_kernel-logs.tgz" --exclude='*.ntr' . 2>/dev/null
rm -rf "$W"
echo "=== table"
cat "$TABLE"
