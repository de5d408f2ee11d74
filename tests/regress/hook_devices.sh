#!/bin/bash
# Which GPU each launch ran on, over the driver test double with two
# devices (FAKECUDA_DEVICES=2, tests/fakecuda/app_devices.c: per round fill
# with grid 4 on device 0 and grid 8 on device 1 through a module per
# device, and one library kernel, scale, with grid 2 on device 0 and 6 on
# device 1): every launch line's dev= against the grid the app used there,
# the stats lines' per-device counts, `ntop report` (text, JSON, CSV), the
# Perfetto export's process per GPU, and the UI's GPU column, gpu:N filter,
# header and launches view at 80x24. Plumbing only: the devices are fake.
. "${NTOP_SOURCE_DIR:?}/tests/regress/tui_lib.inc"
B=$NTOP_BINARY_DIR
S=$NTOP_SOURCE_DIR
APP=$B/tests/fakecuda/app_devices
FAKE=$B/tests/fakecuda/driver/libcuda.so.1
[ -x "$APP" ] && [ -f "$FAKE" ] || { echo "skip: the driver test double is not built"; exit 77; }
mkdir -p "$T/cfg"
export XDG_CONFIG_HOME="$T/cfg" HOME="$T" NTOP_THEMES_DIR="$S/themes"
R=5
FAKECUDA_DEVICES=2 NTOP_REAL_LIBCUDA=$FAKE NTOP_HOOK_DIR=$B/lib/ntop "$NTOP" record -p block_sched --limit 2 \
	-o "$T/dev" -- "$APP" "$S/tests/fakecuda/kernels.ptx" $R >"$T/rec.out" 2>&1 ||
	{ echo "FAIL: record: $(tail -3 "$T/rec.out")"; exit 1; }
grep -q "app_devices: $R rounds on 2 devices, 0 failures" "$T/rec.out" || bad "the app under ntop: $(head -3 "$T/rec.out")"

# events: a launch line per (kernel, device, config); dev= matches the grid
python3 - "$T/dev/events.log" "$R" <<'PY' || bad "events"
import sys
rounds = int(sys.argv[2])
want = {("fill", 4): 0, ("fill", 8): 1, ("scale", 2): 0, ("scale", 6): 1}
names, devs, stats, n = {}, set(), {}, 0
for line in open(sys.argv[1]):
    w = line.split()
    f = dict(x.split("=", 1) for x in w[1:] if "=" in x)
    if w[0] == "kernel":
        names[f["kid"]] = f["name"]
    elif w[0] == "device":
        devs.add(int(f["ordinal"]))
    elif w[0] == "launch":
        g = int(f["grid"].split(",")[0])
        key = (names[f["kid"]], g)
        assert "dev" in f, line
        assert int(f["dev"]) == want[key], "%s on dev %s: %s" % (key, f["dev"], line)
        n += 1
    elif w[0] == "stats":
        stats[names[f["kid"]], f["kid"]] = f.get("devs")
assert devs == {0, 1}, devs
got = sorted(stats.items())
assert [v for (nm, _), v in got if nm == "scale"] == ["0:%d,1:%d" % (rounds, rounds)], got
assert sorted(v for (nm, _), v in got if nm == "fill") == ["0:%d" % rounds, "1:%d" % rounds], got
# probed launches each have a line; the rest: one per (kernel, device, config)
assert n <= 6 + 4, n
PY

# report: text, JSON, CSV
"$NTOP" report "$T/dev" >"$T/rep.txt" 2>&1 || bad "report failed"
grep -Eq "^ +launches $((2 * R)) on GPUs 0 \($R\), 1 \($R\)  grid " "$T/rep.txt" || bad "report: scale's GPUs: $(grep launches "$T/rep.txt")"
grep -Eq "^ +launches $R on GPU 1 \($R\)  grid 8,1,1" "$T/rep.txt" || bad "report: fill on GPU 1"
grep -Eq "^ +seq [0-9]+ on GPU 1: No\.block:8 " "$T/rep.txt" || bad "report: a probed launch on GPU 1: $(grep ' seq ' "$T/rep.txt")"
grep -Eq "^ +seq [0-9]+ on GPU 0: No\.block:4 " "$T/rep.txt" || bad "report: a probed launch on GPU 0"
grep -q "^  device 1: Fake GPU" "$T/rep.txt" || bad "report: device 1"
"$NTOP" report --json "$T/dev" >"$T/rep.json" || bad "report --json"
python3 - "$T/rep.json" "$R" <<'PY' || bad "report --json devices"
import json, sys
r = int(sys.argv[2])
ks = json.load(open(sys.argv[1]))["processes"][0]["kernels"]
scale = next(k for k in ks if k["name"] == "scale")
assert scale["devices"] == [{"ordinal": 0, "launches": r}, {"ordinal": 1, "launches": r}], scale["devices"]
for k in ks:
    for l in k["probed_launches"]:
        assert l["device"] == (1 if l["grid"][0] in (6, 8) else 0), l
PY
"$NTOP" report --csv "$T/dev" >"$T/rep.csv" || bad "report --csv"
python3 - "$T/rep.csv" "$R" <<'PY' || bad "report --csv gpus"
import csv, sys
r = int(sys.argv[2])
rows = list(csv.DictReader(open(sys.argv[1])))
assert sorted(x["gpus"] for x in rows) == sorted(["0:%d" % r, "1:%d" % r, "0:%d;1:%d" % (r, r)]), [x["gpus"] for x in rows]
PY

# Perfetto: the blocks of each GPU in a process of their own
"$NTOP" export "$T/dev" --format perfetto -o "$T/p.json" >"$T/p.out" 2>&1 || bad "perfetto: $(cat "$T/p.out")"
python3 - "$T/p.json" <<'PY' || bad "perfetto per GPU"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
gpu = {p: n for p, n in procs.items() if ", GPU " in n}
assert len(gpu) == 2, procs
assert any("2 GPUs" in n for n in procs.values()), procs
for e in ev:
    if e.get("cat") != "block":
        continue
    name = procs[e["pid"]]
    # grids 8 and 6 ran on GPU 1: their blocks' indices reach 5 and 7
    assert ", GPU 0:" in name or ", GPU 1:" in name, name
    if e["args"]["block"] >= 4:
        assert ", GPU 1:" in name, (e, name)
PY

# the UI at 80x24: a GPU column, the header, gpu:1, the launches view
run_ntop 80 24 LC_ALL=C NO_COLOR=1 view "$T/dev"
wait_for 'KERNEL' || bad "UI did not start: $(screen)"
line 1 | grep -q '2 GPUs: Fake GPU, 4 SMs' || bad "header: $(line 1)"
line 2 | grep -Eq '^ +GPU +LAUNCH' || bad "no GPU column: $(line 2)"
screen | grep -Eq '^ +0,1 +10 .*scale' || bad "scale's GPUs: $(screen | grep scale)"
keys / g p u : 1 Enter
wait_for '\(2 of 3 kernels' || bad "gpu:1 filter: $(screen | tail -1)"
screen | grep -Eq '^ +0 +.*fill' && bad "gpu:1 kept the kernel of GPU 0"
keys Escape / s c a l e Enter Enter
wait_for '^ +SEQ GPU STATUS' || bad "launches view: no GPU column: $(screen | sed -n 5,8p)"
# records: a block_sched record per warp, one warp per block of 32 threads
screen | grep -Eq '^ +[0-9]+ +1 ok +6 +0 No\.block:6 ' || bad "launches view: scale's probed launch on GPU 1: $(screen | grep ' ok ')"
screen | grep -Eq '^ +[0-9]+ +0 ok +2 +0 No\.block:2 ' || bad "launches view: scale's probed launch on GPU 0"
[ "$(widest)" -le 80 ] || bad "a line of $(widest) cells at 80x24"
keys q q q
restored 0 "q"

[ "$fail" = 0 ] && echo "hook_devices: all passed"
exit "$fail"
