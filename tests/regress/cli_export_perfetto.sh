#!/bin/bash
# ntop export --format perfetto on the bundled H200 session (examples/session):
# the JSON is checked against the trace-event format (what ui.perfetto.dev and
# chrome://tracing read: ph/ts/dur/pid/tid, metadata events naming every
# process and track, slices on a track never overlapping), and its blocks
# against the launch's records read back with `ntop export --view records`:
# one slice per block, on the track of the block's SM, starting at its first
# warp's global timer and lasting its cycles at the clock rate. Also: the
# whole trace, --time sm, the default file name in the current directory
# (never the trace directory), --dir, the progress line on a terminal only,
# and the usage errors.
set -u
NTOP="${NTOP_BINARY_DIR:?}/bin/ntop"
S="${NTOP_SOURCE_DIR:?}/examples/session"
[ -x "$NTOP" ] || { echo "FAIL: $NTOP not built"; exit 1; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# a read-only copy of the session: exports must not need to write there
cp -r "$S" "$T/session" && chmod -R a-w "$T/session"
cd "$T" || exit 1

out=$("$NTOP" export session -k lm_global_add --launch 1 --format perfetto -o one.json 2>&1)
[ $? = 0 ] || bad "one launch: $out"
[ "$out" = "wrote one.json: 4096 blocks of 1 probed launch on 1039 SM tracks, 0 warps, 1 launch slices, global timer time" ] ||
	bad "one launch summary: $out"
# the summary's SM tracks are the file's
n=$(python3 -c 'import json,sys; print(sum(1 for e in json.load(open(sys.argv[1]))["traceEvents"] if e["name"] == "thread_name" and e["args"]["name"].startswith("SM ")))' one.json)
[ "$n" = 1039 ] || bad "one.json has $n SM tracks"
"$NTOP" export session -k lm_global_add --launch 1 --view records -o one.csv >/dev/null 2>&1 || bad "records"
out=$("$NTOP" export session --format perfetto -o all.json 2>&1)
[ $? = 0 ] || bad "whole trace: $out"
"$NTOP" report session --json > report.json || bad "report --json"

cat > check.py <<'PY'
import csv, json, re, sys
from collections import defaultdict

def us_ns(x):   # ts and dur: microseconds with 3 decimals, exact ns
    return round(x * 1000)

def check_format(d):
    assert isinstance(d, dict) and isinstance(d["traceEvents"], list), "not the JSON Object Format"
    assert d.get("displayTimeUnit") in ("ns", "ms")
    names, procs, slices = {}, set(), defaultdict(list)
    for e in d["traceEvents"]:
        assert e["ph"] in ("X", "M"), e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int) and isinstance(e["name"], str), e
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "thread_name", "thread_sort_index"), e
            if e["name"] == "process_name":
                procs.add(e["pid"]); assert e["args"]["name"]
            elif e["name"] == "thread_name":
                assert (e["pid"], e["tid"]) not in names, "track named twice: %r" % e
                names[(e["pid"], e["tid"])] = e["args"]["name"]
            else:
                assert isinstance(e["args"]["sort_index"], int)
            continue
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
        assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
        assert e["cat"] in ("kernel", "launch", "block"), e
        assert e["pid"] in procs, "slice of an unnamed process: %r" % e
        assert (e["pid"], e["tid"]) in names, "slice on an unnamed track: %r" % e
        slices[(e["pid"], e["tid"])].append(e)
    # slices on one track nest (kernel around its launches) or follow each other
    for key, ss in slices.items():
        ss.sort(key=lambda e: (us_ns(e["ts"]), -us_ns(e["dur"])))
        stack = []
        for e in ss:
            a, b = us_ns(e["ts"]), us_ns(e["ts"]) + us_ns(e["dur"])
            while stack and stack[-1] <= a:
                stack.pop()
            assert not stack or b <= stack[-1], "overlap on %s (%s): %r" % (names[key], key, e)
            stack.append(b)
    return names

def blocks_from_records(path):
    """Per block, as the block_sched analysis folds its warps: SM of the first
    recorded warp, earliest start (and its gstart), latest start+elapsed."""
    b = {}
    for r in csv.DictReader(open(path)):
        i, s, g, el, sm = (int(r[k]) for k in ("block", "start", "gstart", "elapsed", "smid"))
        if i not in b:
            b[i] = dict(sm=sm, start=s, gstart=g, end=s + el, warps=1)
            continue
        x = b[i]
        if s < x["start"]:
            x["start"], x["gstart"] = s, g
        x["end"] = max(x["end"], s + el)
        x["warps"] += 1
    return b

def check_blocks(d, names, recs, khz, seq):
    origin = d["otherData"]["origin_ns"]
    got = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "block" and e["args"]["seq"] == seq]
    assert len(got) == len(recs) == 4096, (len(got), len(recs))
    seen = set()
    for e in got:
        a = e["args"]
        r = recs[a["block"]]
        assert a["block"] not in seen; seen.add(a["block"])
        assert e["name"] == "block %d" % a["block"]
        assert a["sm"] == r["sm"], (a, r)
        assert re.fullmatch(r"SM %d( slot \d+)?" % r["sm"], names[(e["pid"], e["tid"])]), (names[(e["pid"], e["tid"])], r)
        assert (a["start_cycles"], a["end_cycles"], a["warps"], a["gstart_ns"]) == (r["start"], r["end"], r["warps"], r["gstart"]), (a, r)
        assert (a["x"], a["y"], a["z"]) == (a["block"], 0, 0)
        assert us_ns(e["ts"]) == r["gstart"] - origin, (e, r, origin)
        assert abs(us_ns(e["dur"]) - (r["end"] - r["start"]) * 1e6 / khz) <= 0.5 + 1e-6, (e, r)
    return got

mode = sys.argv[1]
khz = 1980000  # the session's device line: clock_khz=1980000
if mode == "one":
    d = json.load(open("one.json"))
    names = check_format(d)
    recs = blocks_from_records("one.csv")
    check_blocks(d, names, recs, khz, 7)
    sm_tracks = {k for k, v in names.items() if v.startswith("SM ")}
    assert len({names[k].split()[1] for k in sm_tracks}) == 132, "SMs"
    ks = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] != "block"]
    assert [(e["cat"], e["name"]) for e in ks] == [("kernel", "lm_global_add(int const*, int)"), ("launch", "seq 7")], ks
    assert ks[1]["args"]["grid"] == [4096, 1, 1] and ks[1]["args"]["probed"] is True
    assert names[(1829, 7000)] == "kernel 7: lm_global_add(int const*, int)"
elif mode == "all":
    d = json.load(open("all.json"))
    names = check_format(d)
    check_blocks(d, names, blocks_from_records("one.csv"), khz, 7)
    rep = json.load(open("report.json"))
    want = sum(l["block_sched"]["blocks"] for p in rep["processes"] for k in p["kernels"]
               for l in k["probed_launches"] if l["block_sched"])
    blocks = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "block"]
    assert len(blocks) == want == 21549, (len(blocks), want)
    assert sorted({e["args"]["seq"] for e in blocks}) == [1, 2, 3, 4, 7, 8, 9, 10]
    launches = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "launch"]
    log = [l for l in open("session/events.log") if l.startswith("launch ")]
    assert len(launches) == len(log) == 9, (len(launches), len(log))
    kernels = {e["tid"]: e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "kernel"}
    for l in launches:  # inside its kernel's slice, on its track
        k = kernels[l["tid"]]
        assert us_ns(k["ts"]) <= us_ns(l["ts"]) and us_ns(l["ts"]) + us_ns(l["dur"]) <= us_ns(k["ts"]) + us_ns(k["dur"]), (k, l)
    cap = [l for l in launches if l["name"] == "seq 5"][0]
    assert cap["args"]["probed"] is False and cap["args"]["duration"] == "not measured" and cap["dur"] == 0
    assert d["otherData"]["probed_launches_skipped"] == 0 and d["otherData"]["time"] == "global timer"
elif mode == "sm":
    d = json.load(open("sm.json"))
    names = check_format(d)
    recs = blocks_from_records("one.csv")
    got = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "block"]
    assert len(got) == 4096
    first = defaultdict(lambda: 1 << 64)
    for r in recs.values():
        first[r["sm"]] = min(first[r["sm"]], r["start"])
    wall = min(us_ns(e["ts"]) for e in got)  # the SM whose first block starts at the launch
    for e in got:
        r = recs[e["args"]["block"]]
        assert abs(us_ns(e["ts"]) - wall - (r["start"] - first[r["sm"]]) * 1e6 / khz) <= 1, (e, r)
    assert "SM clock asked for" in d["otherData"]["note"], d["otherData"]
PY
python3 check.py one || bad "one launch JSON (above)"
python3 check.py all || bad "whole-trace JSON (above)"
out=$("$NTOP" export session -k lm_global_add --launch 1 --format perfetto --time sm -o sm.json 2>&1)
echo "$out" | grep -q '^note: seq 7 and maybe others: SM clock asked for$' || bad "--time sm note: $out"
python3 check.py sm || bad "--time sm JSON (above)"

# where files go: the current directory by default, -o DIR, --dir; never the trace
mkdir out
out=$("$NTOP" export session -k lm_global_add --format perfetto 2>&1)
[ "$out" = "wrote lm_global_add-k7-p1829-8-perfetto.json: 4096 blocks of 1 probed launch on 1034 SM tracks, 0 warps, 1 launch slices, global timer time" ] ||
	bad "default name: $out"
[ -s lm_global_add-k7-p1829-8-perfetto.json ] || bad "default name: no file in the current directory"
out=$("$NTOP" export session -k lm_global_add --dir out 2>&1)
echo "$out" | grep -q '^wrote out/lm_global_add-k7-p1829-8-timeline.png: 1600x900' || bad "--dir: $out"
out=$("$NTOP" export session -k lm_block3d --view records -o out/ 2>&1)
echo "$out" | grep -q '^wrote out/lm_block3d-k9-p1829-10-records.csv: 48 records' || bad "-o DIR: $out"
out=$("$NTOP" export session --format perfetto --dir out 2>&1)
echo "$out" | grep -q '^wrote out/session-perfetto.json: 21549 blocks' || bad "whole trace default name: $out"
[ -z "$(find session -newer check.py)" ] || bad "the trace directory changed: $(find session -newer check.py)"
"$NTOP" export session -k lm_global_add --format perfetto -o - 2>err.txt | python3 -c 'import json,sys; json.load(sys.stdin)' ||
	bad "JSON on stdout"
grep -q '^wrote stdout: 4096 blocks' err.txt || bad "stdout summary on stderr: $(cat err.txt)"

# progress: on a terminal (script(1) gives one) once the write passes the
# threshold (0 ms here), never when stderr is a file
if command -v script >/dev/null; then
	NTOP_PROGRESS_AFTER_MS=0 script -qec "'$NTOP' export session --format perfetto -o p.json" /dev/null > tty.txt 2>&1
	grep -aq 'ntop: writing p.json: [0-9]*% ([0-9.]* [kM]B)' tty.txt || bad "no progress on a terminal: $(cat -v tty.txt)"
	grep -aq 'wrote p.json: 21549 blocks' tty.txt || bad "summary after the progress: $(cat -v tty.txt)"
	NTOP_PROGRESS_AFTER_MS=0 "$NTOP" export session --format perfetto -o p2.json >/dev/null 2>err.txt
	[ -s err.txt ] && bad "progress without a terminal: $(cat -v err.txt)"
else
	echo "note: no script(1): progress not checked"
fi

# usage errors exit 2 with one line
expect2() { # pattern args...
	local pat=$1
	shift
	out=$("$NTOP" export "$@" 2>&1)
	[ $? = 2 ] || bad "'$*' should exit 2: $out"
	echo "$out" | head -n 1 | grep -q -- "$pat" || bad "'$*' should say '$pat': $out"
}
expect2 "perfetto exports the timeline" session -k lm_global_add --format perfetto --view dmat
expect2 "the formats are png" session -k lm_global_add --format svg
expect2 "are for PNGs" session --format perfetto --width 800
expect2 "are for PNGs" session --format perfetto --theme light
expect2 "-o or --dir, not both" session -k lm_global_add -o x.png --dir out
expect2 "--dir nodir: No such file or directory" session -k lm_global_add --dir nodir
expect2 "a PNG does not go to stdout" session -k lm_global_add -o -
expect2 "which kernel" session

[ "$fail" = 0 ] && echo "cli_export_perfetto: all passed"
exit "$fail"
