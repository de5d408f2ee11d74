#!/bin/bash
# ntop on a HIP application, end to end, over the HIP test double
# (tests/fakehip: kernels "run" on the CPU; plumbing only, no AMD GPU):
# `ntop record -p block_sched` runs app_hip (vecadd through every launch
# entry point, each sum checked) with ntop's HIP stand-in in front of the
# fake runtime: the app's output and status are unchanged; the events name
# the runtime, the modules, the device as hipGetDeviceProperties describes
# it, the instrumented kernels (the GCN version of block_sched, assembled
# with LLVM 19), every probed launch and result, and the reasons
# cooperative (HIP 5.2 has no hipModuleLaunchCooperativeKernel) and
# captured launches ran unprobed; the fake checked the
# ntop_launch block and read the map pointers from the probed kernarg
# segment (a wrong argument fails the probed launch, which would show as a
# decline). Then `ntop report`, `ntop export --view timeline` (the PNG read
# back), `ntop view` in tmux (kernel list, launches, timeline), never
# calling AMD code PTX or a CU an SM (the summary, report text, --json and
# --csv, the exports, the UI) and the global timer's 100 MHz ticks shown as
# ns (the Perfetto export's gstart_ns are 10 x the records'), a wave32
# device (gfx1100), the launcher without a real HIP runtime (no stand-in),
# and an open of libamdhip64 by absolute path (the loader audit module
# sends it to the stand-in; --no-audit does not). Skips (77) without
# llvm-19, which instrumenting AMD code needs.
. "${NTOP_SOURCE_DIR:?}/tests/regress/tui_lib.inc"
B=${NTOP_BINARY_DIR:?}
S=${NTOP_SOURCE_DIR:?}
F=$B/tests/fakehip
C=$S/tests/corpus/amdgpu
DUMP=$B/tests/fakecuda/ntr_dump
[ -x "$F/app_hip" ] && [ -x "$F/app_hip_dlopen" ] && [ -f "$B/lib/ntop/hip/libamdhip64.so.5" ] ||
	{ echo "FAIL: HIP stand-in or its test double not built"; exit 1; }
command -v llvm-mc-19 >/dev/null && command -v llvm-objdump-19 >/dev/null ||
	{ echo "skip: llvm-19 not installed (./setup.sh installs it)"; exit 77; }
export NTOP_REAL_LIBAMDHIP64=$F/runtime/libamdhip64.so.5
mkdir -p "$T/cfg"
export XDG_CONFIG_HOME="$T/cfg" HOME="$T" NTOP_THEMES_DIR="$S/themes"
# expect FILE REGEX WHAT
expect() { grep -Eq -- "$2" "$1" || bad "$3 (no line matching '$2' in $(basename "$1"))"; }

# ---- the stand-in's exports: HIP 5.2.3's, versioned alike ----
syms() { readelf --dyn-syms -W "$1" | awk '$7 != "UND" && $4 == "FUNC" {print $8}' | sed 's/@@*/ /' | grep -v '^ntop_hook_marker' | sort; }
SI=$B/lib/ntop/hip/libamdhip64.so.5
syms "$SI" >"$T/ours"
grep -v '^#' "$S/src/hook/hip/hip_exports.txt" | sort >"$T/list"
cmp -s "$T/ours" "$T/list" || bad "stand-in exports differ from hip_exports.txt: $(diff "$T/ours" "$T/list" | head -5)"
readelf -d "$SI" | grep -q 'SONAME.*\[libamdhip64.so.5\]' || bad "stand-in SONAME"
REAL=/usr/lib/x86_64-linux-gnu/libamdhip64.so.5
if [ -f "$REAL" ]; then
	syms "$REAL" >"$T/real"
	cmp -s "$T/ours" "$T/real" || bad "stand-in exports differ from $REAL: $(diff "$T/ours" "$T/real" | head -5)"
else
	echo "note: $REAL not installed: exports held against hip_exports.txt only"
fi

# ---- record: every entry point, 2 rounds ----
"$NTOP" record -p block_sched -o "$T/tr" -- "$F/app_hip" "$C/libhipvec.so" "$C/vecadd.hipfb" 2 >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 0 ] || bad "record: exit status $rc: $(tail -3 "$T/err")"
grep -qx "app_hip: 16 launches, all correct" "$T/out" || bad "record: the app's output changed: $(cat "$T/out")"
expect "$T/err" '^ntop: 4 kernels \(0 with PTX, 4 with a code object\)' "record summary: code objects, not PTX"
E=$T/tr/events.log
expect "$E" "^hello .* driver=$F/runtime/\\./libamdhip64.so.5|^hello .* driver=$F/runtime/libamdhip64.so.5" "hello names the real runtime"
expect "$E" '^module .* api=__hipRegisterFatBinary kind=hipfb .* co=2 ' "registered bundle: 2 code objects"
expect "$E" '^module .* api=hipModuleLoadData kind=bundle .* co=4 ' "loaded bundle: 4 code objects"
expect "$E" '^device .* name=AMD%20fake%20gfx90a cc=0 arch=gfx90a:sramecc\+:xnack- sms=104 clock_khz=1700000' \
	"device facts from hipGetDeviceProperties"
[ "$(grep -c '^instrument .* status=ok probes=block_sched .* target=gfx90a ' "$E")" = 2 ] ||
	bad "two instrumented copies (registered and module vecadd): $(grep '^instrument' "$E" | cut -c1-200)"
for api in hipLaunchKernel hipExtLaunchKernel hipModuleLaunchKernel hipExtModuleLaunchKernel; do
	expect "$E" "^launch .* api=$api .* probed=1 " "a probed $api launch"
done
# seq 1-4 registered (<<<>>>, hipLaunchKernel, hipExtLaunchKernel, cooperative), 5-7 module; per round
expect "$E" '^launch .* seq=6 api=hipModuleLaunchKernel .* probed=1' "the extra-buffer launch probed"
# HIP 5.2 has no hipModuleLaunchCooperativeKernel: the probed copy cannot be launched cooperatively
expect "$E" '^probe .* status=declined reason=cooperative%20launch:%20the%20HIP%20runtime%20has%20no%20hipModuleLaunchCooperativeKernel' \
	"cooperative launch declined with the reason"
expect "$E" '^probe .* status=declined reason=stream%20capture%20active' "captured launch declined with the reason"
expect "$E" '^graph .* api=capture ' "captured launch listed"
expect "$E" '^graph .* api=hipGraphLaunch .* launches=2' "graph replays counted"
grep '^probe .*declined' "$E" | grep -v 'cooperative\|capture' && bad "other declines"
n=$(grep -c '^result ' "$E")
[ "$n" = 12 ] || bad "12 results (2 rounds x 6 probed launches), got $n"
[ "$(ls "$T/tr/results" | wc -l)" = 12 ] || bad "12 result files"
expect "$E" '^stats .* kid=1 launches=8 .* probed=6 declined=2' "stats of the registered vecadd"
# wave64: 4 workgroups of 256 work-items are 16 waves, one record each
first=$(ls "$T/tr/results" | sort -t- -k2 -n | head -1)
d=$("$DUMP" "$T/tr/results/$first")
echo "result: $d"
echo "$d" | grep -Eq 'kernel=vecadd .* units=16 records=16 dropped=0 .*blocks=4 version=5 warp=64 ' ||
	bad "result file: 16 wave64 records, version 5"
[ -f "$T/tr/probes/amd/block_sched.toml" ] || bad "the GCN probe's copy is not in the trace"

# ---- report, export ----
"$NTOP" report "$T/tr" >"$T/rep" 2>&1 || bad "report failed"
expect "$T/rep" 'device 0: AMD fake gfx90a, gfx90a:sramecc\+:xnack-, 104 CUs' "report: the device"
expect "$T/rep" 'code object: yes; probed: yes \(block_sched\)' "report: probed kernel"
expect "$T/rep" 'No.block:4 Running:4070 Scheduling:0 \(cycle\)  CUs 4  waves 16/16' "report: block_sched of a launch"
grep -Eq 'PTX|SMs|warps' "$T/rep" && bad "report: PTX, SMs or warps on AMD: $(grep -E 'PTX|SMs|warps' "$T/rep")"
"$NTOP" report --json "$T/tr" >"$T/rep.json" 2>&1 || bad "report --json failed"
python3 - "$T/rep.json" <<'PY' || bad "report --json: AMD kernels' code is not called a code object"
import json, sys
ks = [k for p in json.load(open(sys.argv[1]))["processes"] for k in p["kernels"]]
assert len(ks) == 4, ks
for k in ks:
    assert k["code"] == "code object" and k["code_object"] is True and k["code_object_reason"] is None, k
    assert "ptx" not in k and "ptx_reason" not in k, k
PY
"$NTOP" report --csv "$T/tr" >"$T/rep.csv" 2>&1 || bad "report --csv failed"
python3 - "$T/rep.csv" <<'PY' || bad "report --csv: the code column"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 4 and all(r["code"] == "code object" and r["ptx"] == "1" for r in rows), rows
PY
"$NTOP" record -p block_sched -o "$T/one" -- "$F/app_hip" "$C/libhipvec.so" - 1 >/dev/null 2>&1 ||
	bad "record without a module failed"
"$NTOP" export "$T/one" -k vecadd --view timeline -o "$T/t.png" >"$T/exp" 2>&1 || bad "export: $(cat "$T/exp")"
python3 - "$T/t.png" <<'PY' || bad "export: not a 1600x900 PNG"
import struct, sys
b = open(sys.argv[1], 'rb').read()
sys.exit(0 if b[:8] == b'\x89PNG\r\n\x1a\n' and struct.unpack('>II', b[16:24]) == (1600, 900) else 1)
PY
expect "$T/exp" '4 blocks on 4 CUs, global time' "export: 4 blocks on 4 CUs, global time"
# the global timer: records hold 100 MHz ticks, exports ns
"$NTOP" export "$T/one" -k vecadd --view records -o "$T/rec.csv" >"$T/exp" 2>&1 || bad "export records: $(cat "$T/exp")"
"$NTOP" export "$T/one" --format perfetto -o "$T/pf.json" >"$T/exp" 2>&1 || bad "export perfetto: $(cat "$T/exp")"
expect "$T/exp" ' on [0-9]+ CU tracks, ' "export perfetto: CU tracks"
python3 - "$T/rec.csv" "$T/pf.json" <<'PY' || bad "exports: wave64 units or the global timer's scale"
import csv, json, sys
recs = list(csv.DictReader(open(sys.argv[1])))
# wave64: unit u of a block starts at work-item 64 u
assert len(recs) == 16 and [int(r["thread"]) for r in recs[:4]] == [0, 64, 128, 192], recs[:4]
first = {int(r["block"]): int(r["gstart"]) for r in recs if r["unit"] and int(r["thread"]) == 0}
ev = json.load(open(sys.argv[2]))["traceEvents"]
blocks = {e["args"]["block"]: e["args"]["gstart_ns"] for e in ev if e.get("cat") == "block"}
names = [e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"]
assert blocks and all(blocks[b] == 10 * min(int(r["gstart"]) for r in recs if int(r["block"]) == b) for b in blocks), (blocks, first)
assert any(n.startswith("CU ") for n in names) and not any(n.startswith("SM ") for n in names), names
PY

# ---- the UI on the recorded trace ----
run_ntop 120 30 view "$T/one"
wait_for 'KERNEL' || bad "view did not start: $(screen)"
wait_for 'vecadd' || bad "view: vecadd not listed"
screen | grep -q ' CODE ' || bad "view: the kernel list's code column: $(screen | head -4)"
screen | grep -q 'code obj' || bad "view: vecadd's code object: $(screen | head -6)"
screen | grep -q 'PTX' && bad "view: PTX on AMD: $(screen | grep PTX)"
screen | grep -q '104 CUs' || bad "view: the device's CUs: $(screen | head -2)"
keys / v e c a d d Enter Enter
wait_for 'No.block:4 Running:' || bad "view: launches of vecadd: $(screen)"
screen | grep -q 'code object yes' || bad "view: the kernel page's code object: $(screen | head -6)"
keys Enter
wait_for 'waves/CU' || bad "view: timeline header: $(screen | head -4)"
screen | grep -Eq '^CU ' || bad "view: the lane caption: $(screen)"
screen | grep -q 'SM' && bad "view: SM on an AMD timeline: $(screen | grep SM)"
screen | grep -q '4 blocks' || bad "view: timeline block count: $(screen | head -3)"
[ "$(screen | grep -Ec '^ +[0-9]+ [ ▀▄█]')" -ge 2 ] || bad "view: fewer than 2 CU lanes"
keys q q q
wait_for 'NTOP-EXIT=0' 15 || bad "view: did not quit: $(screen | tail -3)"

# ---- a wave32 device ----
FAKEHIP_ARCH=gfx1100 "$NTOP" record -p block_sched -o "$T/w32" -- "$F/app_hip" "$C/libhipvec.so" - 1 >/dev/null 2>&1 ||
	bad "gfx1100: record failed"
expect "$T/w32/events.log" '^instrument .* status=ok .* target=gfx1100 ' "gfx1100: instrumented"
r=$(ls "$T/w32/results" | head -1)
d=$([ -n "$r" ] && "$DUMP" "$T/w32/results/$r")
echo "gfx1100 result: $d"
echo "$d" | grep -Eq 'units=32 records=32 .* warp=32 ' || bad "gfx1100: 32 wave32 records"

# ---- the wave probes' GCN versions: tensorop_count and warp_progress ----
# (before them, -p NAME was declined on AMD kernels: no GCN version). The
# fake fills each wave's count with one 16-byte record; the exports read
# them by the probes' own fields, as on CUDA.
for p in tensorop_count:mma,wmma,wgmma,tcgen05 warp_progress:clock,smid,mark; do
	n=${p%%:*}
	FAKEHIP_MAP=warp:16 "$NTOP" record -p "$n" -o "$T/$n" -- "$F/app_hip" "$C/libhipvec.so" - 1 >/dev/null 2>&1 ||
		bad "$n: record failed"
	expect "$T/$n/events.log" "^instrument .* status=ok probes=$n .* target=gfx90a" "$n: instrumented with its GCN version"
	[ "$(grep -c "^result .* records=16 dropped=0 " "$T/$n/events.log")" = 3 ] || bad "$n: 3 results of 16 wave records"
	"$NTOP" report "$T/$n" >"$T/rep" 2>&1 || bad "$n: report: $(cat "$T/rep")"
	expect "$T/rep" "probed: yes \\($n\\), .* 3 probed launches" "$n: report: the probe and its launches"
	"$NTOP" export "$T/$n" -k vecadd --view records -o "$T/$n.csv" >"$T/exp" 2>&1 || bad "$n: export: $(cat "$T/exp")"
	python3 - "$T/$n.csv" "${p#*:}" <<'PY' || bad "$n: records export"
import csv, sys
recs = list(csv.DictReader(open(sys.argv[1])))
assert len(recs) == 16 and all(f in recs[0] for f in sys.argv[2].split(",")), (len(recs), recs[:1])
assert [int(r["thread"]) for r in recs[:4]] == [0, 64, 128, 192], recs[:4]
PY
done

# ---- no real HIP runtime: no stand-in, the app as it is ----
NTOP_REAL_LIBAMDHIP64=$T/nope LD_LIBRARY_PATH=$F/runtime "$NTOP" record -o "$T/none" -- \
	"$F/app_hip" "$C/libhipvec.so" - 1 >"$T/out" 2>&1
grep -q "app_hip: 4 launches, all correct" "$T/out" || bad "no runtime: the app failed: $(cat "$T/out")"
grep -q '^hello ' "$T/none/events.log" && bad "no runtime: the stand-in was loaded"

# ---- libamdhip64 opened by absolute path ----
out=$("$NTOP" record -o "$T/dl" -- "$F/app_hip_dlopen" "$F/runtime/libamdhip64.so.5" 2>/dev/null)
echo "$out" | grep -q "hipInit from $B/lib/ntop/hip/libamdhip64.so.5" || bad "audit: not the stand-in: $out"
grep -q '^hello ' "$T/dl/events.log" || bad "audit: no hello"
out=$("$NTOP" record --no-audit -o "$T/dl2" -- "$F/app_hip_dlopen" "$F/runtime/libamdhip64.so.5" 2>/dev/null)
echo "$out" | grep -q "hipInit from $F/runtime/libamdhip64.so.5" || bad "--no-audit: $out"

[ $fail = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
