#!/bin/bash
# ntop report on a synthetic trace directory: events.log written here and
# result files built by an independent writer (Python + libzstd through
# ctypes, following doc/trace-format.md byte by byte). Checks the text
# report, the block_sched numbers (worked out by hand), a corrupt result,
# hostile strings, the map memory the hook pooled and gave back (its
# `results` lines), and that --json is valid JSON holding the same numbers.
set -u
NTOP="${NTOP_BINARY_DIR:?}/bin/ntop"
[ -x "$NTOP" ] || { echo "FAIL: $NTOP not built"; exit 1; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
D="$T/trace"
mkdir -p "$D/results"

cat > "$D/events.log" <<'LOG'
record t=1700000000000000000 pid=10 argv=./app%20--n%203 version=0.1.0 cwd=/tmp probes=block_sched kernels=
hello t=1 pid=500 ppid=10 exe=/opt/my%22app%22 hook=0.1.0 driver=/usr/lib/libcuda.so.1
device t=2 pid=500 ordinal=0 name=Test%20GPU cc=90 sms=4 clock_khz=1000000
module t=3 pid=500 mid=1 api=cuLibraryLoadData kind=fatbin size=100 ptx=1 sass=1 source=app
kernel t=4 pid=500 kid=1 mid=1 name=_Z6vecaddPKfS0_Pfi ptx=1
kernel t=5 pid=500 kid=2 mid=1 name=_Z5sgemmv ptx=0 reason=SASS%20only:%20rebuild%20with%20+PTX
launch t=6 pid=500 kid=1 seq=1 api=cuLaunchKernel grid=5,1,1 block=32,1,1 smem=0 probed=0 occ=2
instrument t=7 pid=500 kid=1 status=ok probes=block_sched reason= regs_orig=12 regs_probed=16 addr=exit occ_orig=16 occ_probed=8 sites=2 ms_jit=150.5
launch t=8 pid=500 kid=1 seq=2 api=cuLaunchKernel grid=5,1,1 block=32,1,1 smem=0 probed=1 occ=2
result t=9 pid=500 kid=1 seq=2 file=results/500-2.ntr maps=1 records=5 dropped=0 bytes=200 ns=100
launch t=10 pid=500 kid=1 seq=3 api=cuLaunchKernel grid=5,1,1 block=32,1,1 smem=0 probed=1 occ=2
result t=11 pid=500 kid=1 seq=3 file=results/500-3.ntr maps=1 records=5 dropped=0 bytes=200 ns=100
probe t=12 pid=500 kid=1 seq=4 status=declined reason=map%20budget%20exhausted
stats t=13 pid=500 kid=1 launches=4 timed=2 total_ns=3000 min_ns=1000 max_ns=2000
launch t=14 pid=500 kid=2 seq=1 api=cuLaunchKernel grid=64,1,1 block=256,1,1 smem=0 probed=0
launch t=15 pid=500 kid=2 seq=2 api=cuLaunchKernel grid=128,1,1 block=256,1,1 smem=0 probed=0
stats t=16 pid=500 kid=2 launches=10 timed=0 total_ns=0 min_ns=0 max_ns=0
warn t=17 pid=500 msg=quote%22%20backslash%5C%20tab%09%20caf%C3%A9%20bad%FF%20end
lost t=18 pid=500 events=2
results t=18 pid=500 at=run pending=0 written=2 failed=0 launch_allocs=1 dev_allocs=2 dev_pooled=134217728 dev_given=0
results t=19 pid=500 at=final pending=0 written=2 failed=0 launch_allocs=1 dev_allocs=2 dev_pooled=0 dev_peak=201326592 dev_given=134217728
exit t=19 pid=500 launches=14
LOG

python3 - "$D/results" <<'PY' || { echo "FAIL: could not write result files"; exit 1; }
import ctypes, struct, sys
z = ctypes.CDLL("libzstd.so.1")
z.ZSTD_compressBound.restype = ctypes.c_size_t
z.ZSTD_compress.restype = ctypes.c_size_t
z.ZSTD_compress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
z.ZSTD_isError.argtypes = [ctypes.c_size_t]
def zc(b):
    cap = z.ZSTD_compressBound(ctypes.c_size_t(len(b)))
    out = ctypes.create_string_buffer(cap)
    n = z.ZSTD_compress(out, cap, b, len(b), 3)
    assert not z.ZSTD_isError(n)
    return out.raw[:n]
def s(x):
    x = x.encode()
    return struct.pack("<I", len(x)) + x
# one SM, one warp per block: (start, elapsed) in grid order D A E C B
warps = [(200, 10), (0, 100), (185, 5), (130, 50), (10, 100)]
counts = b"".join(struct.pack("<I", 24) for _ in warps)
recs = b"".join(struct.pack("<QQII", st, 9000 + st, el, 3) for st, el in warps)
frame = zc(counts + recs)
fields = [("start", 8, 0), ("gstart", 8, 8), ("elapsed", 4, 16), ("smid", 4, 20)]
desc_tail = s("block_sched") + b"".join(s(n) + struct.pack("<II", t, o) for n, t, o in fields)
desc_bytes = 56 + len(desc_tail)
desc = struct.pack("<IIIIIIQQQQ", desc_bytes, 2, 1, 24, len(fields), 0,
                   len(warps), 4 * len(warps), 24 * len(warps), len(frame)) + desc_tail
strings = s("_Z6vecaddPKfS0_Pfi") + s("block_sched")
body = strings + desc + frame
total = 104 + len(body)
hdr = b"NTOPRES\0" + struct.pack("<IIQIIQ3I3IIIIIQQII", 1, 104, total, 500, 1, 2,
                                 5, 1, 1, 32, 1, 1, 0, 4, 90, 1000000, 1, 59392, 1, 0)
assert len(hdr) == 104
open(sys.argv[1] + "/500-2.ntr", "wb").write(hdr + body)
# seq 3: the same file cut in half
open(sys.argv[1] + "/500-3.ntr", "wb").write((hdr + body)[: total // 2])
PY

out=$("$NTOP" report "$D" 2>&1)
rc=$?
[ "$rc" = 0 ] || bad "text rc $rc: $out"
echo "$out" | grep -q 'vecadd(float const\*, float const\*, float\*, int)' || bad "demangled name"
echo "$out" | grep -q 'seq 2: No.block:5 Running:265 Scheduling:125 (cycle)' || bad "block_sched line"
echo "$out" | grep -q 'waves/SM 0.6[23]  SMs 1  warps 5/5  dropped 0' || bad "waves/SMs/warps"
echo "$out" | grep -q 'seq 3: .*results/500-3.ntr.*truncated' || bad "corrupt result not reported"
echo "$out" | grep -q 'PTX: no (SASS only: rebuild with +PTX)' || bad "SASS-only reason"
echo "$out" | grep -q 'varied: 2 configs' || bad "varied configs"
echo "$out" | grep -q 'mean 1.5 us over 2 timed' || bad "mean duration"
echo "$out" | grep -q '1 declined (map budget exhausted)' || bad "declined"
echo "$out" | grep -q 'registers 12 -> 16, blocks per SM 16 -> 8' || bad "registers and occupancy"
echo "$out" | grep -q 'LOST: 2 events never reached the trace' || bad "lost events"
echo "$out" | grep -q 'Warnings (1)' || bad "warnings"
echo "$out" | grep -q 'GPU memory for maps: at most 192.0 MiB pooled, 128.0 MiB given back' ||
	bad "map memory pooled and given back"
[ "$fail" = 0 ] || echo "$out"

"$NTOP" report "$D" --json > "$T/r.json" 2>"$T/err"
[ $? = 0 ] || bad "json rc: $(cat "$T/err")"
python3 -m json.tool "$T/r.json" > /dev/null || bad "invalid JSON: $(cat "$T/r.json")"
python3 - "$T/r.json" <<'PY' || bad "JSON content"
import json, sys
r = json.load(open(sys.argv[1]))
p = r["processes"][0]
assert p["exe"] == '/opt/my"app"', p["exe"]
assert p["devices"][0]["sms"] == 4
k = {x["kid"]: x for x in p["kernels"]}
v = k[1]
assert v["name"] == "_Z6vecaddPKfS0_Pfi" and v["demangled"].startswith("vecadd(")
assert v["launches"] == 4 and v["timed"] == 2 and v["mean_ns"] == 1500
assert v["instrument"]["status"] == "ok" and v["declined"] == 1
i = v["instrument"]
assert i["occ_orig"] == 16 and i["occ_probed"] == 8 and i["addr"] == "exit", i
l2, l3 = v["probed_launches"]
b = l2["block_sched"]
assert l2["ok"] and b["line"] == "No.block:5 Running:265 Scheduling:125 (cycle)", l2
assert b["running_cycles"] == 265 and b["scheduling_cycles"] == 125
assert b["waves_per_sm"] == 0.625 and b["sms_used"] == 1 and b["max_concurrent_blocks"] == 2
assert b["warps_recorded"] == 5 and b["warps_expected"] == 5 and b["records_dropped"] == 0
assert b["smid_max"] == 3 and b["elapsed_min"] == 5 and b["elapsed_max"] == 100
assert l2["kernel"] == "_Z6vecaddPKfS0_Pfi" and l2["device_sms"] == 4 and l2["records"] == 5
assert l3["ok"] is False and "500-3.ntr" in l3["error"] and l3["block_sched"] is None
s = k[2]
assert s["ptx"] is False and s["ptx_reason"].startswith("SASS only") and s["config_varied"] is True
assert s["grid"] == [128, 1, 1] and s["mean_ns"] is None and s["probed_launches"] == []
w = r["warnings"][0]["msg"]
assert w == 'quote" backslash\\ tab\t caf\u00e9 bad\ufffd end', repr(w)
assert r["lost_events"] == 2 and r["record"]["argv"] == "./app --n 3"
assert p["map_bytes_pooled_max"] == 201326592 and p["map_bytes_given_back"] == 134217728, p
assert p["results_written"] == 2
PY

# a damaged log: the report still runs; a missing trace is an error
printf 'kernel t=1 pid=9 kid=1 name=x ptx=1\ngarbage\nlaunch t=2 pid=9 kid=1 se' > "$T/d2.log"
mkdir "$T/t2" && mv "$T/d2.log" "$T/t2/events.log"
out=$("$NTOP" report "$T/t2" 2>&1) || bad "damaged log rc: $out"
echo "$out" | grep -q '1 malformed, last line cut short' || bad "damaged log notes: $out"
"$NTOP" report "$T/t2" --json | python3 -m json.tool > /dev/null || bad "damaged log JSON"
out=$("$NTOP" report "$T/nothing" 2>&1)
[ $? = 2 ] || bad "missing trace should exit 2 (a bad argument)"
[ "$out" = "ntop: $T/nothing is not a trace directory: $T/nothing/events.log: No such file or directory" ] ||
	bad "missing trace message: $out"
"$NTOP" report >/dev/null 2>&1
[ $? = 2 ] || bad "no dir should exit 2"
"$NTOP" report "$D" --yaml >/dev/null 2>&1
[ $? = 2 ] || bad "unknown option should exit 2"
out=$("$NTOP" report "$D" --json --csv 2>&1)
[ $? = 2 ] && echo "$out" | grep -q '^ntop report: one of --json, --csv and --lines$' || bad "--json --csv: $out"

# --csv: one line per kernel, the same numbers as the JSON, read back by
# Python's csv module (names with commas are quoted)
"$NTOP" report "$D" --csv > "$T/r.csv" 2>"$T/err"
[ $? = 0 ] || bad "csv rc: $(cat "$T/err")"
python3 - "$T/r.csv" <<'PY' || bad "CSV content: $(cat "$T/r.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline='')))
assert len(rows) == 2, rows
v, s = rows
assert (v["pid"], v["kid"], v["name"]) == ("500", "1", "_Z6vecaddPKfS0_Pfi"), v
assert v["demangled"] == "vecadd(float const*, float const*, float*, int)", v["demangled"]
assert v["launches"] == "4" and v["grid"] == "5x1x1" and v["block"] == "32x1x1" and v["smem"] == "0"
assert v["timed"] == "2" and v["mean_ns"] == "1500" and v["ptx"] == "1" and v["ptx_reason"] == ""
assert v["instrument"] == "ok" and v["probes"] == "block_sched" and v["declined"] == "1"
assert v["probed_launches"] == "2" and v["results_ok"] == "1" and v["records"] == "5"
assert v["block_sched_launches"] == "1" and v["running_cycles"] == "265.0" and v["scheduling_cycles"] == "125.0"
assert v["waves_per_sm"] == "0.625", v["waves_per_sm"]
assert s["ptx"] == "0" and s["ptx_reason"] == "SASS only: rebuild with +PTX" and s["configs"] == "2"
assert s["grid"] == "128x1x1" and s["mean_ns"] == "" and s["timed"] == "0" and s["instrument"] == ""
assert s["probed_launches"] == "0" and s["running_cycles"] == "" and s["waves_per_sm"] == ""
PY
# a hostile kernel name: quoted, control bytes never reach the terminal
mkdir -p "$T/t3"
printf 'kernel t=1 pid=9 kid=1 name=a%%2Cb%%22c%%1B[31m ptx=1\n' > "$T/t3/events.log"
"$NTOP" report "$T/t3" --csv | sed -n 2p > "$T/h.csv"
[ "$(cat "$T/h.csv")" = '9,1,"a,b""c?[31m","a,b""c?[31m",0,,,,0,0,,1,,,,,0,0,0,0,0,0,,,,PTX,,,' ] || bad "hostile CSV: $(cat "$T/h.csv")"

[ "$fail" = 0 ] && echo "cli_report: all passed"
exit "$fail"
