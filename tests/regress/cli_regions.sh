#!/bin/bash
# Inside a kernel, without a GPU: `ntop record -p regions -r ...` over the
# fake driver (whose "kernels" write the records probes/regions.toml
# would: FAKECUDA_MAP=regions:CAP; 1000 cycles a warp, 200 in one region,
# 400 in the other), the trace's probe copy holding the -r
# regions, `ntop report` (text and JSON) with the per-region table, and
# `ntop report --lines` on fake dmat records of a known access pattern (4
# bytes a thread, consecutive: 4 sectors a warp request); refusals of bad
# -r values; `ntop instrument` listing sites with their source lines and a
# region that matches nothing. Plumbing only: the records are made up.
source "$(dirname "$0")/hook_lib.inc"
NTOP=$B/bin/ntop
run() { # NAME MAP ARGS...
	local name=$1 map=$2
	shift 2
	NTOP_REAL_LIBCUDA=$FAKE NTOP_HOOK_DIR=$HOOKDIR FAKECUDA_MAP=$map \
		"$NTOP" record "$@" --limit 2 -k scale -o "$TMP/$name" -- "$APP" "$PTX" 0 >"$TMP/$name.out" 2>"$TMP/$name.err" ||
		fail "$name: record failed: $(tail -3 "$TMP/$name.err")"
}

run reg regions:1024 -p regions -r ld=@load -r st=@store
grep -q '^regions = \["ld=@load", "st=@store"\]$' "$TMP/reg/probes/regions.toml" ||
	fail "the probe copy does not hold the -r regions: $(grep regions "$TMP/reg/probes/regions.toml")"
grep -q '^regions = \["mma=@tensor"' "$TMP/reg/probes/regions.toml" && fail "the default regions stayed in the copy"
"$NTOP" report "$TMP/reg" >"$TMP/reg.txt" 2>&1 || fail "report failed"
expect "$TMP/reg.txt" "regions: [0-9]+ warps, 40.0% of their time in no region$" "regions summary (every record matched)"
expect "$TMP/reg.txt" "^ +ld +@load +[0-9]+ +[0-9]+ +200 +200 +20.0%$" "the ld row (200 cycles of 1000 per warp)"
expect "$TMP/reg.txt" "^ +st +@store +[0-9]+ +[0-9]+ +400 +400 +40.0%$" "the st row"
"$NTOP" report --json "$TMP/reg" >"$TMP/reg.json" || fail "report --json failed"
python3 - "$TMP/reg.json" <<'PY' || fail "report --json regions"
import json, sys
t = json.load(open(sys.argv[1]))
rs = [r for p in t["processes"] for k in p["kernels"] for r in k["probed_launches"] if r.get("regions")]
assert rs, "no result with regions"
g = rs[0]["regions"]
names = [x["name"] for x in g["regions"]]
assert names == ["ld", "st"], names
assert g["regions"][0]["spec"] == "@load" and g["regions"][1]["cycles_per_warp_p95"] == 400, g
assert abs(g["gap_share"] - 0.4) < 1e-9 and g["warps_truncated"] == 0, g
PY

# the warps view: CSV of every segment, PNG of one SM's warps whose pixels
# hold both regions' colours (read back)
pid=$(ls "$TMP/reg/results" | head -1 | cut -d- -f1)
kid=$(grep '^kernel .* name=scale$' "$TMP/reg/events.log" | grep -o 'kid=[0-9]*' | head -1 | cut -d= -f2)
"$NTOP" export "$TMP/reg" -k scale --pid "$pid" --kid "$kid" --view regions -o "$TMP/w.csv" >"$TMP/w.out" 2>&1 ||
	fail "export regions CSV: $(cat "$TMP/w.out")"
head -1 "$TMP/w.csv" | grep -q '^block,warp,smid,region,name,start,end,cycles,begin_line,end_line$' || fail "CSV header"
[ "$(grep -c ',ld,.*,200,' "$TMP/w.csv")" = "$(grep -c ',st,.*,400,' "$TMP/w.csv")" ] && grep -q ',ld,' "$TMP/w.csv" ||
	fail "CSV rows: $(head -5 "$TMP/w.csv")"
# tests/gpu/regions_overlap.py (the case study's overlap table) on a CSV
# of known overlap: mma 0-100 in warp 0.0, load 50-150 in 0.1 and 200-300
# in 0.0; a warp of SM 1 left out
printf '%s\n' block,warp,smid,region,name,start,end,cycles,begin_line,end_line \
	0,0,0,0,mma,0,100,100,a:1,a:1 0,1,0,1,load,50,150,100,a:2,a:2 0,0,0,1,load,200,300,100,a:2,a:2 \
	1,0,1,1,load,0,5000,5000,a:2,a:2 >"$TMP/ov.csv"
python3 "$S/tests/gpu/regions_overlap.py" "$TMP/ov.csv" >"$TMP/ov.txt" 2>&1 || fail "regions_overlap.py: $(cat "$TMP/ov.txt")"
expect "$TMP/ov.txt" "^SM 0: 2 warps, 3 segments, span 300 cycles$" "overlap: what"
expect "$TMP/ov.txt" "^mma +33\.3% +1\.00$" "overlap: mma busy share"
expect "$TMP/ov.txt" "^load +66\.7% +1\.00$" "overlap: load busy share"
expect "$TMP/ov.txt" "^mma +load +16\.7% +50\.0%$" "overlap: mma with load"
expect "$TMP/ov.txt" "^load +mma +16\.7% +25\.0%$" "overlap: load with mma"
expect "$TMP/ov.txt" "^0\.0 +100 +100$" "overlap: warp 0.0's cycles"
"$NTOP" export "$TMP/reg" -k scale --pid "$pid" --kid "$kid" --view regions --sm 1 --width 640 --height 320 \
	-o "$TMP/w.png" >"$TMP/w.out" 2>&1 || fail "export regions PNG: $(cat "$TMP/w.out")"
python3 - "$TMP/w.png" <<'PY' || fail "the warps PNG"
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n"
w, h, depth, ctype = struct.unpack(">IIBB", d[16:26])
assert (w, h, depth, ctype) == (640, 320, 8, 2), (w, h, depth, ctype)
idat, pos = b"", 8
while pos < len(d):
    n, kind = struct.unpack(">I4s", d[pos:pos + 8])
    if kind == b"IDAT":
        idat += d[pos + 8:pos + 8 + n]
    pos += 12 + n
raw, rows, prev = zlib.decompress(idat), [], bytearray(w * 3)
for y in range(h):
    f, line = raw[y * (w * 3 + 1)], bytearray(raw[y * (w * 3 + 1) + 1:(y + 1) * (w * 3 + 1)])
    for i in range(len(line)):
        a = line[i - 3] if i >= 3 else 0
        b, c = prev[i], prev[i - 3] if i >= 3 else 0
        p = a + b - c
        pred = [0, a, b, (a + b) // 2, a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else b if abs(p - b) <= abs(p - c) else c][f]
        line[i] = (line[i] + pred) & 255
    rows.append(bytes(line))
    prev = line
px = {r[i:i + 3] for r in rows for i in range(0, len(r), 3)}
assert bytes([0xE6, 0x9F, 0x00]) in px and bytes([0x56, 0xB4, 0xE9]) in px, "region colours missing"
PY
# Perfetto: a track per warp, its life a slice, each region segment inside
# it with its cycles (1 cycle = 1 ns at the test double's 1 GHz) and line
"$NTOP" export "$TMP/reg" --format perfetto -o "$TMP/p.json" >"$TMP/p.out" 2>&1 || fail "perfetto: $(cat "$TMP/p.out")"
grep -q ' [1-9][0-9]* warps, ' "$TMP/p.out" || fail "perfetto summary: $(cat "$TMP/p.out")"
"$NTOP" export "$TMP/reg" -k scale --pid "$pid" --kid "$kid" --view regions --sm 1 --format perfetto \
	-o "$TMP/p1.json" >"$TMP/p1.out" 2>&1 || fail "perfetto --sm 1: $(cat "$TMP/p1.out")"
python3 - "$TMP/p.json" "$TMP/p1.json" <<'PY' || fail "perfetto warps"
import json, sys
def load(p):
    d = json.load(open(p))
    ev = d["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    warps = [e for e in ev if e.get("cat") == "warp"]
    regs = [e for e in ev if e.get("cat") == "region"]
    return d, names, warps, regs
d, names, warps, regs = load(sys.argv[1])
assert warps and d["otherData"]["warps"] == len(warps), (len(warps), d["otherData"])
assert d["otherData"]["region_slices"] == len(regs) == 2 * len(warps), (len(regs), len(warps))
for w in warps:
    a = w["args"]
    assert names[(w["pid"], w["tid"])] == "warp %d.%d SM %d seq %d" % (a["block"], a["warp"], a["sm"], a["seq"]), names[(w["pid"], w["tid"])]
    assert a["exit_cycles"] - a["entry_cycles"] == 1000 and abs(w["dur"] - 1.0) < 1e-9, w
    mine = sorted((r for r in regs if (r["pid"], r["tid"]) == (w["pid"], w["tid"])), key=lambda r: r["ts"])
    assert [r["name"] for r in mine] == ["ld", "st"], mine
    for r, cyc, off in zip(mine, (200, 400), (100, 300)):
        ra = r["args"]
        assert ra["cycles"] == cyc and ra["start_cycles"] - a["entry_cycles"] == off, r
        assert abs(r["ts"] - w["ts"] - off / 1000) < 1e-6 and abs(r["dur"] - cyc / 1000) < 1e-6, (r, w)
        assert ra["line"].startswith("ptx:"), ra
_, _, w1, _ = load(sys.argv[2])
assert w1 and all(w["args"]["sm"] == 1 for w in w1), [w["args"] for w in w1]
PY
"$NTOP" export "$TMP/reg" -k scale --pid "$pid" --kid "$kid" --view timeline --block 0 -o "$TMP/x.png" >/dev/null 2>&1
[ $? = 2 ] || fail "--block outside --view regions was not refused"

# Block sampling of the warp map (engine.h) under a small per-launch
# target: the report says which blocks were kept, the table counts their
# warps only, the CSV has rows for kept blocks only, the first ones (the fake leaves an
# absurd count in every warp of a block not kept: read, it would show)
NTOP_WARP_MAP_TARGET=20000 run smp regions:1024 -p regions -r ld=@load -r st=@store
"$NTOP" report "$TMP/smp" >"$TMP/smp.txt" 2>&1 || fail "report of the sampled trace failed"
expect "$TMP/smp.txt" "grid 4,1,1  block 32,1,1" "the 4-block launch of 1-warp blocks"
expect "$TMP/smp.txt" "1 block in 2 kept, the first 2 \(the others' records not counted\)" "sampling said in the report"
expect "$TMP/smp.txt" "regions: 2 warps, 40.0% of their time in no region$" "kept warps only (2 of 4 blocks, 1 warp each)"
grep -q "dropped, 1 block in" "$TMP/reg.txt" && fail "sampled under the default target: $(grep 'block in' "$TMP/reg.txt")"
spid=$(ls "$TMP/smp/results" | head -1 | cut -d- -f1)
for skid in $(grep '^kernel .* name=scale$' "$TMP/smp/events.log" | grep -o 'kid=[0-9]*' | cut -d= -f2); do
	"$NTOP" export "$TMP/smp" -k scale --pid "$spid" --kid "$skid" --view regions -o "$TMP/s$skid.csv" >/dev/null 2>&1 ||
		fail "export of the sampled kid $skid"
	cat "$TMP/s$skid.csv" >>"$TMP/s.csv"
done
awk -F, '$1 ~ /^[0-9]+$/ && $1 >= 2 { bad = 1 } $1 ~ /^[0-9]+$/ { n++ } END { exit bad || !n }' "$TMP/s.csv" ||
	fail "sampled CSV: rows of blocks not kept, or none: $(head -4 "$TMP/s.csv")"

# -r refused before the program runs
for bad in "-r nothing" "-r 9x=@load" "-r a=@lodd" "-r a=k.cu:0" "-r a=@load -r a=@store"; do
	# shellcheck disable=SC2086
	NTOP_HOOK_DIR=$HOOKDIR "$NTOP" record -p regions $bad -o "$TMP/bad" -- /bin/true >/dev/null 2>"$TMP/bad.err"
	rc=$?
	[ "$rc" != 0 ] && grep -q "region" "$TMP/bad.err" || fail "'$bad' was not refused: rc $rc, $(cat "$TMP/bad.err")"
	[ -e "$TMP/bad" ] && fail "'$bad': a trace directory was made"
	rm -rf "$TMP/bad"
done
NTOP_HOOK_DIR=$HOOKDIR "$NTOP" record -p block_sched -r a=@load -o "$TMP/bad" -- /bin/true >/dev/null 2>"$TMP/bad.err"
grep -q "no probe given records them" "$TMP/bad.err" || fail "-r without a regions probe: $(cat "$TMP/bad.err")"

# dmat records with sites: memory by source line
run dm dmat -p dmat
"$NTOP" report --lines "$TMP/dm" >"$TMP/dm.txt" 2>&1 || fail "report --lines failed"
expect "$TMP/dm.txt" "memory by source line \([0-9]+ accesses\)" "lines header"
expect "$TMP/dm.txt" "^ +ptx:[0-9]+ +load +([0-9]+) +[0-9]+ +[0-9]+ +[0-9]+ +4.00 +[0-9]+$" "4 sectors per request on the load's line"

# ntop instrument: sites with source lines, an empty region said
cat >"$TMP/k.ptx" <<'PTX'
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_p)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<2>;
	.loc 1 7 1
	ld.param.u64 %rd1, [k_p];
	ld.global.u32 %r1, [%rd1];
	.loc 1 8 1
	add.u32 %r2, %r1, 1;
	st.global.u32 [%rd1], %r2;
	ret;
}
.file 1 "/src/k.cu"
PTX
"$NTOP" instrument -p regions -r a=k.cu:7 -r b=@tensor -k k "$TMP/k.ptx" -o "$TMP/k.out.ptx" >"$TMP/ins.txt" 2>&1 ||
	fail "instrument failed: $(cat "$TMP/ins.txt")"
expect "$TMP/ins.txt" "site 0 +begin a +k.cu:7 +ptx:9" "begin site with its line"
expect "$TMP/ins.txt" "region b \(@tensor\): no instruction of the kernel is in it \(warning\)" "empty region said"
"$NTOP" instrument -p dmat -k k "$TMP/k.ptx" -o "$TMP/k.out.ptx" >"$TMP/ins2.txt" 2>&1 || fail "instrument dmat failed"
expect "$TMP/ins2.txt" "site 1 +st.global.u32 +k.cu:8 +ptx:13" "store site with its line"
"$NTOP" instrument -p block_sched -r a=@load -k k "$TMP/k.ptx" -o "$TMP/k.out.ptx" >"$TMP/ins3.txt" 2>&1
[ $? != 0 ] && grep -q "no probe here records them" "$TMP/ins3.txt" || fail "instrument -r without regions probe"
[ "$fails" = 0 ] && echo "cli_regions: ok"
exit $((fails > 0))
