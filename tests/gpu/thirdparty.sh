#!/bin/bash
# Programs nobody here wrote (and our own app-survival programs) under every
# ntop mode, on the GPU machine, in one device call: each program runs plain,
# under `ntop record` (nothing probed), `ntop record -p block_sched` and
# `ntop record -p dmat`, and every mode is compared with the plain run:
#   - exit status equal to the plain run's (the plain run must exit 0 and
#     print its success line);
#   - stdout equal to the plain run's after masking timings (per program);
#   - the program's success regex present;
#   - from the trace (`ntop report DIR --json` and events.log): processes
#     recorded (>= expected), kernels listed, launches counted, probed
#     launches, results written, launches declined (with the reasons), lost
#     events and lost results (none allowed), result files that do not read,
#     processes the report calls INCOMPLETE (none allowed when the plain run
#     exits 0).
# Prints a short table last (program x mode: ok/FAIL and counts); writes
# $OUT/thirdparty.txt (everything printed) and $OUT/thirdparty-logs.tgz
# (outputs, masked outputs, diffs, events.log and report JSON of every run;
# result files left out). Exit status 0 = nothing failed.
#
#   tests/gpu/thirdparty.sh [options] DIR...
#
# DIR holds list.txt, one program per line (blank lines and # comments skipped):
#
#   name|dir|command|success regex[|options]
#
#   dir      working directory, relative to DIR (or absolute)
#   command  run as `bash -c "exec COMMAND"` in dir (so $VARS expand; the
#            program keeps bash's pid); $ROOT (repository root), $LISTDIR
#            (DIR) and $APPBIN (build-examples/apps) are exported
#   regex    a Python regular expression (re.search) one line of stdout must
#            match; it may not contain "|"
#   options  space separated:
#            mask=default  floats masked, and the rest of a line after Time,
#                          time, msec, GFlop, TFLOPS, Throughput, bandwidth,
#                          elapsed (the default)
#            mask=nums     every number masked (pids, iteration counts)
#            mask=none     compared byte for byte (our own programs)
#            sort          lines compared as a sorted list (device printf,
#                          threads writing in any order)
#            drop=RE       lines matching RE (Python, no spaces) left out of
#                          the comparison
#            procs=N       processes the trace must list (default 1)
#            kernels=N     kernels the trace must list (default 1)
#            probed=N      launches a probe mode must have probed, at most
#                          its --limit, counting those that ran unprobed
#                          while the copy was built (deferred: ntop's
#                          default); one at least probed unless every
#                          launch of a kernel came before its copy was
#                          built (default 0: not checked)
#            declined=0    no launch may be declined in a probe mode
#            timeout=S     per-run timeout (default --timeout)
# A list.txt whose first line is "# ntop-build: nvcc" has DIR/*.cu built
# into build-examples/apps/ first (our own programs only: this script never
# builds anything fetched; .thirdparty/build.sh does that, by hand, on the
# CPU machine).
#
# Options:
#   --dry-run        print every step, run nothing (no GPU needed)
#   -j N             programs run N at a time (default 1; each program's
#                    modes always run one after the other)
#   --only ERE       only the programs whose name matches
#   --modes LIST     default "record block_sched dmat" (plain always runs first)
#   --limit N        probed launches per kernel under block_sched (default 10)
#   --dmat-limit N   the same under dmat (default 3)
#   --timeout S      per-run timeout (default 120)
#   --budget S       no program starts after S seconds, and no run lasts past
#                    S + 60 s (default 420; 0: no limit)
# Environment: OUT (default ./gpu-out), NTOP (default build-gpu/bin/ntop).
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
OUT=${OUT:-$ROOT/gpu-out}
NTOP=${NTOP:-$ROOT/build-gpu/bin/ntop}
APPBIN=$ROOT/build-examples/apps
DRY=0 JOBS=1 ONLY="" MODES="record block_sched dmat" LIMIT=10 DMAT_LIMIT=3 TIMEOUT=120 BUDGET=420
SELFTEST=0
DIRS=()
usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--dry-run) DRY=1 ;;
	--selftest) SELFTEST=1 ;;
	-j) JOBS=$2; shift ;;
	--only) ONLY=$2; shift ;;
	--modes) MODES=$(echo " $2 " | sed 's/ plain / /g'); shift ;;
	--limit) LIMIT=$2; shift ;;
	--dmat-limit) DMAT_LIMIT=$2; shift ;;
	--timeout) TIMEOUT=$2; shift ;;
	--budget) BUDGET=$2; shift ;;
	-h | --help) usage 0 ;;
	-*) echo "unknown option $1"; usage ;;
	*) DIRS+=("$1") ;;
	esac
	shift
done
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin ROOT APPBIN
W=$(mktemp -d /tmp/ntop-thirdparty.XXXXXX) || exit 2
TP=$W/tp.py

# ---- the analysis (masking, trace summary, table), in Python ----
cat >"$TP" <<'PY'
import json, os, re, sys

FLOAT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\b(?:nan|inf)\b")
TIMED = re.compile(r"(Time|time|msec|GFlop|TFLOPS|Throughput|[Bb]andwidth|[Ee]lapsed).*")
NUM = re.compile(r"\d+")

def parse_opts(s):
    o = {"mask": "default", "sort": False, "drop": None, "procs": 1, "kernels": 1,
         "probed": 0, "declined": None, "timeout": None}
    for w in s.split():
        k, _, v = w.partition("=")
        if k == "sort":
            o["sort"] = True
        elif k in ("mask", "drop"):
            o[k] = v
        elif k in ("procs", "kernels", "probed", "declined", "timeout"):
            o[k] = int(v)
        else:
            raise SystemExit("unknown option %r" % w)
    if o["mask"] not in ("default", "nums", "none"):
        raise SystemExit("unknown mask %r" % o["mask"])
    return o

def masked(text, o):
    out = []
    for line in text.splitlines():
        if o["drop"] and re.search(o["drop"], line):
            continue
        if o["mask"] != "none":
            line = TIMED.sub(lambda m: m.group(1) + " <masked>", line)
            line = FLOAT.sub("F", line)
            if o["mask"] == "nums":
                line = NUM.sub("N", line)
        out.append(line.rstrip())
    if o["sort"]:
        out = sorted(l for l in out if l.strip())
    return out

def loose(text):
    return sorted(" ".join(NUM.sub("N", FLOAT.sub("N", l)).split()) for l in text.splitlines() if l.strip())

def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None

def trace_summary(json_path, events_path):
    """Counts from `ntop report --json` and events.log; None when no trace."""
    t = {"procs": 0, "kernels": 0, "launches": 0, "probed": 0, "deferred": 0, "built_late": 0, "written": 0,
         "unread": 0,
         "declined": 0, "lost_events": 0, "lost_results": 0, "warnings": 0,
         "incomplete": 0, "reasons": [], "errors": [], "report": False}
    rep = read(json_path) if json_path else None
    ev = read(events_path) if events_path else None
    if rep is None and ev is None:
        return None
    if rep:
        try:
            d = json.loads(rep)
            t["report"] = True
        except ValueError:
            d = {}
        t["lost_events"] = int(d.get("lost_events") or 0)
        t["warnings"] = len(d.get("warnings") or [])
        t["incomplete"] = len(d.get("incomplete") or [])
        reasons = set()
        for p in d.get("processes") or []:
            t["procs"] += 1
            t["lost_results"] += int(p.get("results_lost") or 0)
            for k in p.get("kernels") or []:
                t["kernels"] += 1
                t["launches"] += int(k.get("launches") or 0)
                t["declined"] += int(k.get("declined") or 0)
                t["deferred"] += int(k.get("deferred") or 0)
                res = k.get("probed_launches") or []  # one per probed launch, read or not
                t["probed"] += len(res)
                t["written"] += sum(1 for r in res if r.get("ok"))
                t["unread"] += sum(1 for r in res if not r.get("ok"))
                for r in res:
                    if not r.get("ok") and len(t["errors"]) < 3:
                        t["errors"].append("%s seq %s: %s" % (k.get("name", "?")[:60], r.get("seq"), r.get("error")))
                if k.get("declined"):
                    reasons.add("%s: %s" % (k.get("name", "?")[:60],
                                            (k.get("declined_reason") or "(no reason in the trace)")[:160]))
                ins = k.get("instrument") or {}
                # its copy built, but only once the app had made its last launch
                if ins.get("status") == "ok" and k.get("launches") and k.get("deferred") == k.get("launches"):
                    t["built_late"] += 1
                if ins and ins.get("status") not in (None, "ok"):
                    reasons.add("%s: instrument %s %s" % (k.get("name", "?")[:60], ins.get("status"),
                                                          (ins.get("reason") or "")[:160]))
        t["reasons"] = sorted(reasons)
    if ev and not t["report"]:  # no report: what events.log alone says
        t["probed"] = sum(1 for l in ev.splitlines() if l.startswith("launch ") and " probed=1" in l)
        t["procs"] = sum(1 for l in ev.splitlines() if l.startswith("hello "))
        t["lost_events"] = sum(int(m) for m in re.findall(r"^lost events=(\d+)", ev, re.M))
    return t

def row(a):
    """One program x mode: prints a TSV row; details go to a.details."""
    o = parse_opts(a["opts"])
    regex = re.compile(a["regex"]) if a["regex"] else None
    out, pout = read(a["out"]) or "", read(a["plain_out"]) or ""
    rc, prc = a["rc"], a["prc"]
    fails, notes = [], []
    if regex and not any(regex.search(l) for l in out.splitlines()):
        fails.append("no success line")
    if a["mode"] == "plain":
        if rc != "0":
            fails.append("exit %s" % rc)
        same = "-"
        t = None
    else:
        if rc in ("124", "137"):
            fails.append("timeout")
        elif rc != prc:
            fails.append("exit %s, plain %s" % (rc, prc))
        m, pm = masked(out, o), masked(pout, o)
        if m == pm:
            same = "yes"
        else:
            same = "NO (loose: %s)" % ("equal" if loose(out) == loose(pout) else "differs")
            fails.append("output differs")
            import difflib
            notes += ["  " + l for l in list(difflib.unified_diff(pm, m, "plain", a["mode"], n=0, lineterm=""))[2:12]]
        t = trace_summary(a["json"], a["events"])
        if t is None:
            fails.append("no trace")
        else:
            if not t["report"]:
                fails.append("no report")
            if t["procs"] < o["procs"]:
                fails.append("%d processes, want %d" % (t["procs"], o["procs"]))
            if t["kernels"] < o["kernels"]:
                fails.append("%d kernels listed, want %d" % (t["kernels"], o["kernels"]))
            if t["lost_events"]:
                fails.append("%d events lost" % t["lost_events"])
            if t["incomplete"] and prc == "0":
                fails.append("%d processes INCOMPLETE" % t["incomplete"])
            if t["lost_results"]:
                fails.append("%d results lost" % t["lost_results"])
            if t["unread"]:
                fails.append("%d of %d probed launches without a readable result" % (t["unread"], t["probed"]))
                notes += ["  result: " + e for e in t["errors"]]
            if a["mode"] not in ("record", "plain"):
                # launches before the copy was built run unprobed (ntop's default)
                want = min(o["probed"], int(a["limit"]))
                if t["probed"] + t["deferred"] < want or (want and not t["probed"] and not t["built_late"]):
                    fails.append("%d probed and %d deferred, want %d" % (t["probed"], t["deferred"], want))
                elif want and not t["probed"]:
                    notes.append("  every launch ran before its probed copy was built (%d deferred)" % t["deferred"])
                if o["declined"] == 0 and t["declined"]:
                    fails.append("%d declined" % t["declined"])
            elif t["probed"]:
                fails.append("%d probed without a probe" % t["probed"])
            notes += ["  declined: " + r for r in t["reasons"][:6]]
    status = "FAIL" if fails else "ok"
    c = t or {}
    cols = [a["idx"], a["name"], a["mode"], status, "; ".join(fails), rc, same, a["wall"]] + \
        [str(c.get(k, "-")) for k in ("procs", "kernels", "launches", "probed", "written", "declined")] + \
        ["%s/%s" % (c["lost_events"], c["lost_results"]) if c else "-"]
    print("\t".join(cols))
    if notes:
        with open(a["details"], "a") as f:
            f.write("%s %s (exit %s, plain %s):\n" % (a["name"], a["mode"], rc, prc))
            for n in notes:
                f.write(n + "\n")

def table(rows_path, modes):
    rows = [l.rstrip("\n").split("\t") for l in open(rows_path) if l.strip()]
    progs, cells, info = [], {}, {}
    for r in sorted(rows, key=lambda r: (int(r[0]), modes.index(r[2]) if r[2] in modes else 9)):
        idx, name, mode, status, why, rc, same, wall = r[:8]
        procs, kernels, launches, probed, written, declined, lost = r[8:15]
        if name not in cells:
            progs.append(name)
            cells[name] = {}
        if status in ("ok", "FAIL"):
            cell = status
            if mode not in ("plain", "record"):
                cell += " %s/%s/%s" % (probed, written, declined)
            cell += " %ss" % wall
        else:
            cell = status
        cells[name][mode] = cell
        if mode == "record" and status in ("ok", "FAIL"):
            info[name] = (procs, kernels, launches)
    head = ["program", "procs", "kernels", "launches"] + \
        [m + (" (probed/written/declined)" if m not in ("plain", "record") else "") for m in modes]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for p in progs:
        i = info.get(p, ("-", "-", "-"))
        print("| " + " | ".join([p] + list(i) + [cells[p].get(m, "-") for m in modes]) + " |")
    fails = sum(1 for r in rows if r[3] == "FAIL")
    skips = sum(1 for r in rows if r[3] == "skip")
    print("%d programs, %d runs: %d ok, %d FAIL, %d skipped" %
          (len(progs), len(rows), sum(1 for r in rows if r[3] == "ok"), fails, skips))
    return 1 if fails else 0

def selftest():
    o = parse_opts("")
    a = "Performance= 2.63 GFlop/s, Time= 0.050 msec, Size= 131072000 Ops\nResult = PASS\nn 1.5e-3 x 12\n"
    b = "Performance= 9.99 GFlop/s, Time= 0.070 msec, Size= 131072000 Ops\nResult = PASS\nn 2.5e-3 x 12\n"
    assert masked(a, o) == masked(b, o), masked(a, o)
    assert masked("x 12\n", o) != masked("x 13\n", o)
    assert masked("x 12\n", parse_opts("mask=nums")) == masked("x 13\n", parse_opts("mask=nums"))
    assert masked("1.0\n", parse_opts("mask=none")) != masked("1.5\n", parse_opts("mask=none"))
    assert masked("b\na\n", parse_opts("sort")) == masked("a\nb\n", parse_opts("sort"))
    assert masked("a\nt 1\n", parse_opts("drop=^t")) == ["a"]
    assert masked("elapsed time of kernels: 3.2 ms\n", o) == ["elapsed <masked>"]
    assert loose("a 1\nb 2.5\n") == loose("b 3.5\na 7\n")
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write('{"processes": [{"kernels": []}], "incomplete": ["pid 7: no bye"]}')
        f.flush()
        t = trace_summary(f.name, None)
    assert t["procs"] == 1 and t["incomplete"] == 1, t
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write('{"processes": [{"kernels": [{"launches": 5, "deferred": 1, "probed_launches": '
                '[{"ok": true}, {"ok": true}, {"ok": true}, {"ok": true}]}]}]}')
        f.flush()
        t = trace_summary(f.name, None)
    assert t["probed"] == 4 and t["deferred"] == 1 and t["written"] == 4 and t["built_late"] == 0, t
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write('{"processes": [{"kernels": [{"launches": 5, "deferred": 5, "instrument": {"status": "ok"}}, '
                '{"launches": 3, "deferred": 3}]}]}')
        f.flush()
        t = trace_summary(f.name, None)
    assert t["probed"] == 0 and t["deferred"] == 8 and t["built_late"] == 1, t
    return 0

if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "row":
        row(dict(zip(["idx", "name", "mode", "opts", "regex", "out", "rc", "plain_out", "prc", "wall",
                      "json", "events", "limit", "details"], sys.argv[2:])))
    elif cmd == "table":
        sys.exit(table(sys.argv[2], sys.argv[3].split()))
    elif cmd == "opts":
        parse_opts(sys.argv[2])
        print(parse_opts(sys.argv[2])["timeout"] or "")
    elif cmd == "selftest":
        sys.exit(selftest())
PY

if [ "$SELFTEST" = 1 ]; then
	python3 "$TP" selftest && echo "thirdparty.sh selftest ok"
	rc=$?
	rm -rf "$W"
	exit "$rc"
fi
[ ${#DIRS[@]} -gt 0 ] || usage

mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
REPORT=$OUT/thirdparty.txt
: >"$REPORT"
LOGS=$W/logs ROWS=$W/rows
mkdir -p "$LOGS" "$ROWS"
START=$(date +%s)
say() { echo "$@" | tee -a "$REPORT"; }
elapsed() { echo $(($(date +%s) - START)); }

say "== thirdparty.sh $(date -u '+%Y-%m-%d %H:%M:%S UTC') modes: $MODES; limit $LIMIT, dmat $DMAT_LIMIT; -j $JOBS"
if [ "$DRY" = 1 ]; then
	say "[dry-run] nothing is run"
else
	{
		nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
		nvcc --version | tail -1
		python3 -c 'import sys; print("python", sys.version.split()[0])'
		for m in torch triton cupy numpy matplotlib pandas; do
			python3 -c "import $m; print('$m', getattr($m, '__version__', '?'))" 2>/dev/null || echo "$m: not importable"
		done
		"$NTOP" --version 2>&1 | head -1
		echo "ntop: $NTOP"
	} 2>&1 | tee -a "$REPORT"
fi
[ "$DRY" = 1 ] || [ -x "$NTOP" ] || say "FAIL: no ntop at $NTOP (build it into build-gpu with cmake and carry it)"

# ---- the program list ----
PROGS=() # "listdir|name|dir|command|regex|options"
for d in "${DIRS[@]}"; do
	[ -f "$d/list.txt" ] || { say "FAIL: no $d/list.txt"; continue; }
	d=$(cd "$d" && pwd)
	if [ "$(head -1 "$d/list.txt")" = "# ntop-build: nvcc" ]; then
		mkdir -p "$APPBIN"
		for f in "$d"/*.cu; do
			[ -e "$f" ] || continue
			# shellcheck disable=SC2054 # the commas are nvcc's
			b=(nvcc -O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
				-o "$APPBIN/$(basename "$f" .cu)" "$f")
			if [ "$DRY" = 1 ]; then
				say "[dry-run] ${b[*]}"
			elif ! "${b[@]}" >"$LOGS/build-$(basename "$f" .cu).log" 2>&1; then
				say "FAIL: could not build $f ($(grep -m1 error "$LOGS/build-$(basename "$f" .cu).log"))"
			fi
		done
	fi
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in '' | '#'*) continue ;; esac
		IFS='|' read -r name dir cmd regex opts <<<"$line"
		if [ -z "$name" ] || [ -z "$cmd" ] || ! python3 "$TP" opts "${opts:-}" >/dev/null; then
			say "FAIL: bad line in $d/list.txt: $line"
			continue
		fi
		[ -n "$ONLY" ] && ! [[ $name =~ $ONLY ]] && continue
		if printf '%s\n' "${PROGS[@]}" | cut -d'|' -f2 | grep -qxF "$name"; then
			say "FAIL: program $name listed twice (its logs are named after it); the second left out"
			continue
		fi
		case $dir in /*) ;; *) dir=$d/$dir ;; esac
		PROGS+=("$d|$name|$dir|$cmd|$regex|${opts:-}")
	done <"$d/list.txt"
done
say "${#PROGS[@]} programs from ${DIRS[*]}"

# run_mode IDX NAME MODE DIR CMD TIMEOUT: one run; writes $LOGS/NAME.MODE.{out,err,rc,wall}
run_mode() {
	local idx=$1 name=$2 mode=$3 dir=$4 cmd=$5 to=$6 L=$LOGS/$2.$3 t0 rc args=()
	case $mode in
	plain) ;;
	record) args=(record -o "$L.trace" --) ;;
	dmat) args=(record -o "$L.trace" -p dmat --limit "$DMAT_LIMIT" --) ;;
	*) args=(record -o "$L.trace" -p "$mode" --limit "$LIMIT" --) ;;
	esac
	if [ "$DRY" = 1 ]; then
		if [ "$mode" = plain ]; then
			say "[dry-run] cd $dir && timeout -k 10 $to bash -c \"exec $cmd\" >$L.out 2>$L.err"
		else
			say "[dry-run] cd $dir && timeout -k 10 $to $NTOP ${args[*]} bash -c \"exec $cmd\" >$L.out 2>$L.err"
			say "[dry-run] $NTOP report $L.trace --json >$L.json"
		fi
		: >"$L.out"
		echo 0 >"$L.rc"
		echo 0.0 >"$L.wall"
		return
	fi
	if [ "$BUDGET" -gt 0 ]; then # every run ends by the budget + 60 s
		local left=$((BUDGET + 60 - $(elapsed)))
		[ "$left" -lt 10 ] && left=10
		[ "$left" -lt "$to" ] && to=$left
	fi
	t0=$(date +%s.%N)
	if [ "$mode" = plain ]; then
		(cd "$dir" && LISTDIR=${7:-} timeout -k 10 "$to" bash -c "exec $cmd") >"$L.out" 2>"$L.err"
	else
		rm -rf "$L.trace"
		(cd "$dir" && LISTDIR=${7:-} timeout -k 10 "$to" "$NTOP" "${args[@]}" bash -c "exec $cmd") >"$L.out" 2>"$L.err"
	fi
	rc=$?
	echo "$rc" >"$L.rc"
	python3 -c "import sys,time; print('%.1f' % (time.time() - float(sys.argv[1])))" "$t0" >"$L.wall"
	if [ "$mode" != plain ] && [ -d "$L.trace" ]; then
		timeout -k 5 120 "$NTOP" report "$L.trace" --json >"$L.json" 2>"$L.report.err"
		cp "$L.trace/events.log" "$L.events.log" 2>/dev/null
		rm -rf "$L.trace" # result files: large, and read by the report already
	fi
}

# run_prog IDX: every mode of one program, then its rows; what it has to say
# is printed in one piece when it is done (lanes do not interleave lines)
run_prog() {
	local idx=$1 p=${PROGS[$1]} ld name dir cmd regex opts to mode prc
	IFS='|' read -r ld name dir cmd regex opts <<<"$p"
	local R D=$W/details.$idx T0
	R=$ROWS/$(printf '%04d' "$idx").tsv
	: >"$R"
	: >"$D"
	if [ "$BUDGET" -gt 0 ] && [ "$(elapsed)" -ge "$BUDGET" ]; then
		for mode in plain $MODES; do
			printf '%s\t%s\t%s\tskip\tbudget spent\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n' "$idx" "$name" "$mode" >>"$R"
		done
		say "SKIP $name: time budget of $BUDGET s spent"
		return
	fi
	to=$(python3 "$TP" opts "$opts")
	to=${to:-$TIMEOUT}
	T0=$(elapsed)
	for mode in plain $MODES; do
		run_mode "$idx" "$name" "$mode" "$dir" "$cmd" "$to" "$ld"
		prc=$(cat "$LOGS/$name.plain.rc")
		if [ "$DRY" = 1 ]; then
			printf '%s\t%s\t%s\tdry\t\t0\t-\t0\t-\t-\t-\t-\t-\t-\t-\n' "$idx" "$name" "$mode" >>"$R"
			continue
		fi
		local L=$LOGS/$name.$mode lim=$LIMIT
		[ "$mode" = dmat ] && lim=$DMAT_LIMIT
		python3 "$TP" row "$idx" "$name" "$mode" "$opts" "$regex" "$L.out" "$(cat "$L.rc")" \
			"$LOGS/$name.plain.out" "$prc" "$(cat "$L.wall")" "$L.json" "$L.events.log" "$lim" "$D" >>"$R" ||
			printf '%s\t%s\t%s\tFAIL\tanalysis crashed\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n' "$idx" "$name" "$mode" >>"$R"
	done
	[ "$DRY" = 1 ] && return
	{
		echo "-- $name (started at $T0 s): $cmd"
		awk -F'\t' '{ printf "   %-12s %-4s %s\n", $3, $4, $5 }' "$R"
		sed 's/^/   /' "$D"
	} >"$W/block.$idx"
	tee -a "$REPORT" <"$W/block.$idx"
}

# ---- run: N programs at a time, each taking the next from a shared counter ----
N=${#PROGS[@]}
echo 0 >"$W/next"
lane() {
	local i
	while :; do
		# shellcheck disable=SC2016 # expanded by that sh
		i=$(flock "$W/next" sh -c 'i=$(cat "$1"); echo $((i + 1)) >"$1"; echo "$i"' _ "$W/next")
		[ "$i" -lt "$N" ] || break
		run_prog "$i"
	done
}
if [ "$DRY" = 1 ] || [ "$JOBS" -le 1 ]; then
	lane
else
	for _ in $(seq "$JOBS"); do lane & done
	wait
fi

# ---- report ----
cat "$ROWS"/*.tsv >"$W/rows.tsv" 2>/dev/null || : >"$W/rows.tsv"
{
	echo ""
	echo "== table ($(elapsed) s; block_sched --limit $LIMIT, dmat --limit $DMAT_LIMIT; a cell: status," \
		"probed/written/declined launches, wall time)"
	python3 "$TP" table "$W/rows.tsv" "plain $MODES"
} >"$W/table.txt"
RC=0
grep -q $'\tFAIL\t' "$W/rows.tsv" && RC=1
cat "$W/table.txt" >>"$REPORT"
cp "$REPORT" "$W/rows.tsv" "$LOGS/" 2>/dev/null
tar -czf "$OUT/thirdparty-logs.tgz" -C "$W" logs 2>/dev/null
echo ""
cat "$W/table.txt"
echo "report: $REPORT, logs: $OUT/thirdparty-logs.tgz"
rm -rf "$W"
exit "$RC"
