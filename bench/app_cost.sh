#!/bin/bash
# What probing costs as the application's own clock sees it, run on
# the GPU machine from the repo root in one device call (about 3-5 minutes on
# an H100; steps stop after BUDGET_S=330 s and say so):
#
#   bench/app_cost.sh [--quick] [--reps N] [--dry-run]
#   bench/app_cost.sh --analyse WORKDIR   the tables again from a kept work dir
#                                         (app_cost-logs.tgz unpacked)
#   bench/app_cost.sh --selftest          the parsers on synthetic input
#   bench/app_cost.sh --ab-rounds [--ref MODE] NAME:ROUND:REPORT...   builds side by side, round
#                                         by round, each mode less its round's MODE (plain)
#                                         (tests/gpu/batch.sh app_cost_ab prints it)
#
# examples/cuda/app_cost.cu times each of its seven kernels (one an 8 us
# kernel whose work is in a `__noinline__` device function) with a cudaEvent
# pair around every launch (APP_COST_LAUNCHES, 21, the first left out, median). It runs
# plain, under `ntop record` (nothing probed, ntop's default sampled launch
# timing; and again with NTOP_TIME_LAUNCHES=off, which tells the timing
# events' cost from the rest of the hook's; and with --no-audit, no loader
# audit module in the app), and under `ntop record -p P --wait-build --every 1 --limit
# 100000` for every built-in probe P (and block_sched again without --wait-build), the
# driver's JIT cache off (CUDA_CACHE_DISABLE=1), the app pausing APP_COST_PAUSE_MS (100) after each kernel's
# first launch in every mode (a copy built off the app's threads is then ready for the rest; wall times
# leave the pauses out), the modes interleaved, REPS (2) times each; after each
# repetition its burst mode (one warm-up launch, then 5000 one-block launches
# back to back and one sync) plain, under `ntop record` and under block_sched.
# Then it prints, last, one table: per kernel the plain app-side us per launch
# and each mode's ratio to it; per mode results written / probed launches
# requested, declined and lost launches, bytes of results/ per record,
# app and process wall time ratios, output bit-identical to plain, and the
# burst rate. Before it: ntop's own in-kernel ratio per kernel (`result ns`
# of probed launches / `time ns` of the same kernel's unprobed launches under
# `ntop record`), which is NOT what the app waits; written/requested per
# kernel; decline reasons; records per launch and block sampling.
# Output: $OUT/app_cost.txt (OUT default ./bench-out), $OUT/app_cost-logs.tgz
# (every run's stdout/stderr and events.log; result files are measured with
# du, then deleted after each run).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
# APP_COST_PROBES: a subset; P runs with --wait-build (every launch probed, the first waits for its
# copy); P-async: ntop's default (copies built off the app's threads, launches unprobed meanwhile).
# SELF_MODES (default none; e.g. "ntop-self ntop-notime-self block_sched-self"): runs with NTOP_SELF_TIME=1, whose
# `self` lines say where the hook's time on the app's thread went (a table of their own, no ratios);
# P-alt-self probes every other launch with ntop's timing off, so its unprobed launches' phases (the
# driver's call among them) compare with ntop-notime-self's in a process that probes nothing
# PAIR_MODES (default none; e.g. "block_sched-pair"): `-p P --wait-build --every 2` with every launch
# timed by ntop (NTOP_TIME_LAUNCHES=all) and by the app (APP_COST_EACH=1): probed and unprobed launches
# alternate in one process, and their difference on the app's clock, less their difference inside the
# kernel (ntop's events of the same launches), is what the probed launch adds around its kernel;
# P-alt, the same alternation with ntop's timing off: ntop's timed events cost the app's clock about
# 1 us a launch on both sides of a pair (bench/stream_marks.c), and a probed launch's own capture check
# hides among them; the in-kernel difference then comes from P-pair runs of the same repetitions
# TIMED_MODES (default none; e.g. "ntop-timed block_sched-timed"): every launch timed by ntop
# (NTOP_TIME_LAUNCHES=all), nothing probed (ntop-timed) or every launch probed as P-async does
# (P-timed): the kernel's time between ntop's events when every launch is probed, against the
# unprobed kernel's in another process, which tells what probing every launch costs there (GPU work
# beside the kernel, such as the collector's copies back; a slower launch call, which the start
# event precedes) from what it costs around it
PROBES=${APP_COST_PROBES:-"block_sched block_sched-async dmat dmat_global gmem_bytes tensorop_count warp_progress"}

# app_cost_analyse WORKDIR: the tables (python; no GPU, no ntop needed).
# WORKDIR holds runs.tsv (mode rep rc wall_s), MODE.REP.out (app output),
# MODE.REP/events.log (traces), MODE.REP.disk (bytes of results/), and the
# burst runs burst-MODE.REP.*. `app_cost_analyse --selftest` checks it.
app_cost_analyse() {
	python3 - "$@" <<'PY'
import os, re, shutil, statistics, sys, tempfile, urllib.parse

KERNELS = ["fill", "copy", "reduce", "sgemm", "fma", "saxpy", "call"]
# nothing probed: default sampled timing; NTOP_TIME_LAUNCHES=off; no loader audit module
UNPROBED = ["ntop", "ntop-notime", "ntop-noaudit"]
PROBES = "block_sched block_sched-async dmat dmat_global gmem_bytes tensorop_count warp_progress".split()
BURST_MODES = ["plain", "ntop", "block_sched"]


def read(path):
    try:
        with open(path, errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio(a, b):
    return a / b if a is not None and b else None


def fx(x):
    return "-" if x is None else f"{x:.2f}x" if x < 100 else f"{x:.0f}x"


def parse_app(text):
    """The app's lines: {kernel: median_us}, {kernel: p90_us}, {kernel: host_us}, {name: hash},
    wall_s, burst (launches, wall_s, rate), each {kernel: {launch: us}} (APP_COST_EACH=1), sched (timed
    launches, launches on another CPU than the one before, voluntary and involuntary switches)."""
    medv, p90, host, check, wall, burst, each, sched, paused = {}, {}, {}, {}, None, None, {}, None, 0.0
    for line in text.splitlines():
        m = re.match(r"(?:info: )?cost each kernel=(\w+) i=(\d+) us=([\d.]+)", line)
        if m:
            each.setdefault(m.group(1), {})[int(m.group(2))] = float(m.group(3))
        m = re.match(r"(?:info: )?cost kernel=(\w+) launches=\d+ median_us=([\d.]+) p90_us=([\d.]+)"
                     r"(?: host_us=([\d.]+))?", line)
        if m:
            medv[m.group(1)], p90[m.group(1)] = float(m.group(2)), float(m.group(3))
            if m.group(4):
                host[m.group(1)] = float(m.group(4))
        m = re.match(r"cost check (\w+) ([0-9a-f]+)$", line)
        if m:
            check[m.group(1)] = m.group(2)
        m = re.match(r"(?:info: )?cost wall_s=([\d.]+)", line)
        if m:
            wall = float(m.group(1))
        m = re.match(r"(?:info: )?cost paused_s=([\d.]+)", line)
        if m:
            paused = float(m.group(1))
        m = re.match(r"(?:info: )?cost burst launches=(\d+) wall_s=([\d.]+) rate=([\d.]+)", line)
        if m:
            burst = (int(m.group(1)), float(m.group(2)), float(m.group(3)))
        m = re.match(r"(?:info: )?cost sched launches=(\d+) moved=(\d+) vcsw=(\d+) ivcsw=(\d+)", line)
        if m:
            sched = tuple(int(g) for g in m.groups())
    return {"med": medv, "p90": p90, "host": host, "check": check, "wall": wall, "burst": burst, "each": each,
            "sched": sched, "paused": paused}


def fields(line):
    out = {}
    for tok in line.split()[1:]:
        k, _, v = tok.partition("=")
        out[k] = urllib.parse.unquote(v)
    return out


def short_name(mangled):
    m = re.search(r"k_(fill|copy|reduce|sgemm|fma|saxpy|call|tiny)", mangled)
    return m.group(1) if m else mangled


def num(f, key):
    try:
        return int(f.get(key, 0))
    except ValueError:
        return 0


def parse_events(text):
    """Per kernel (short name), summed over the processes of one trace:
    requested (= launches: every launch is asked for, --every 1), probed,
    written (result lines), declined (stats), reasons {reason: probe lines},
    records, dropped, unsampled, sampled {1 in N}, disk, rns / tns (result /
    time ns, the kernel's first launch in the process left out); plus the
    processes' final results lines summed and lost event counts."""
    names, first, first_probed, per, stats = {}, {}, {}, {}, {}
    final = {"written": 0, "failed": 0, "pending": 0, "procs": 0, "probed": 0, "cpu_pre_us": 0, "cpu_post_us": 0,
             "zero_waits": 0, "staged": 0}
    lost_events, warns = 0, {}

    def k(pk):
        return per.setdefault(names.get(pk, "kid" + str(pk[1])), {
            "requested": 0, "probed": 0, "written": 0, "declined": 0, "reasons": {}, "records": 0,
            "dropped": 0, "unsampled": 0, "sampled": set(), "disk": 0, "rns": [], "tns": [], "cpu": [],
            "first_cpu": [], "deferred": 0, "slab": 0, "held": [], "defer_held": []})
    deferred_t = {}  # (pid, kid, seq) of a `probe status=deferred` line: its time
    for line in text.splitlines():
        typ = line.split(" ", 1)[0]
        f = fields(line)
        pk = (f.get("pid"), f.get("kid"))
        seq = num(f, "seq")
        if typ == "kernel":
            names[pk] = short_name(f.get("name", ""))
        elif typ == "launch":
            first[pk] = min(first.get(pk, seq), seq)
            t_def = deferred_t.pop(pk + (seq,), None)
            if t_def is not None and f.get("probed") != "1":  # its line follows its driver calls
                k(pk)["defer_held"].append(num(f, "t") - t_def)
            if f.get("probed") == "1":
                k(pk)["probed"] += 1
                k(pk)["slab"] += f.get("slab") == "1"  # a device slab allocated on its path
                if pk not in first_probed and "cpu_ns" in f:  # holds the instrumenting unless built off-thread
                    k(pk)["first_cpu"].append(num(f, "cpu_ns"))
                first_probed.setdefault(pk, seq)
                if seq != first[pk] and "cpu_ns" in f:
                    k(pk)["cpu"].append(num(f, "cpu_ns"))
                if seq != first_probed[pk] and num(f, "cpu_ns") > HELD_NS:
                    k(pk)["held"].append((num(f, "cpu_ns"), f.get("slab") == "1", f.get("beside") == "1"))
        elif typ == "result":
            e = k(pk)
            e["written"] += 1
            for key in ("records", "dropped", "unsampled", "disk"):
                e[key] += num(f, key)
            if "sampled" in f:
                e["sampled"].add(num(f, "sampled"))
            if seq != first.get(pk) and num(f, "ns"):  # ns=0: not sampled for timing
                e["rns"].append(num(f, "ns"))
        elif typ == "time":
            if seq != first.get(pk):
                k(pk)["tns"].append(num(f, "ns"))
        elif typ == "probe" and f.get("status") == "deferred":
            deferred_t[pk + (seq,)] = num(f, "t")
        elif typ == "probe" and f.get("status") == "declined":
            r = k(pk)["reasons"]
            reason = f.get("reason", "?")
            r[reason] = r.get(reason, 0) + 1
        elif typ == "stats":
            s = stats.setdefault(pk, [0, 0, 0])
            s[0] = max(s[0], num(f, "launches"))
            s[1] = max(s[1], num(f, "declined"))
            s[2] = max(s[2], num(f, "deferred"))
        elif typ == "results" and f.get("at") == "final":
            final["procs"] += 1
            for key in ("written", "failed", "pending", "probed", "cpu_pre_us", "cpu_post_us", "zero_waits", "staged"):
                final[key] += num(f, key)
        elif typ == "lost":
            lost_events += num(f, "events")
        elif typ == "warn":
            msg = re.sub(r"\d+", "N", f.get("msg", "?"))[:160]
            warns[msg] = warns.get(msg, 0) + 1
    for pk, (launches, declined, deferred) in stats.items():
        e = k(pk)
        e["requested"] += launches
        e["declined"] += declined
        e["deferred"] += deferred
    return {"kernels": per, "final": final, "lost_events": lost_events, "warns": warns}


def load(w, probes):
    """Every run of the work dir: {mode: [run]}, burst: {mode: [run]}."""
    runs, burst = {}, {}
    for line in read(os.path.join(w, "runs.tsv")).splitlines():
        mode, rep, rc, wall = (line.split("\t") + ["", "", "", ""])[:4]
        base = mode[len("burst-"):] if mode.startswith("burst-") else None
        name = f"{mode}.{rep}"
        disk = read(os.path.join(w, name + ".disk")).strip()
        app = parse_app(read(os.path.join(w, name + ".out")))
        # the process's wall time, less the app's pauses (APP_COST_PAUSE_MS)
        run = {"rep": rep, "rc": rc, "wall": float(wall) - app["paused"] if re.match(r"^[\d.]+$", wall) else None,
               "app": app,
               "ev": parse_events(read(os.path.join(w, name, "events.log"))),
               "disk": int(disk) if disk.isdigit() else None}
        (burst.setdefault(base, []) if base else runs.setdefault(mode, [])).append(run)
    return runs, burst


def summary(w, probes):
    """The numbers of the tables, as a dict (selftest checks it)."""
    runs, burst = load(w, probes)
    modes = ["plain"] + UNPROBED + probes
    s = {"modes": modes, "app": {}, "us": {}, "host": {}, "ink": {}, "unprobed_us": {}, "per": {}, "kern": {},
         "burst": {}}
    plain = runs.get("plain", [])
    ref = next((r["app"]["check"] for r in plain if r["app"]["check"]), {})
    plain_us = {k: med([r["app"]["med"].get(k) for r in plain]) for k in KERNELS}
    plain_wall = med([r["app"]["wall"] for r in plain])
    plain_pwall = med([r["wall"] for r in plain])
    s["plain_us"] = plain_us
    s["self"] = self_rows(w)
    s["self_med"] = self_medians(w)
    s["pair"], s["pair_floor"] = pair_rows(runs)
    s["timed"], s["every"] = timed_rows(runs, s["pair_floor"])
    tns = {}
    for r in runs.get("ntop", []):
        for kern, e in r["ev"]["kernels"].items():
            tns.setdefault(kern, []).extend(e["tns"])
    s["unprobed_us"] = {k: (med(tns.get(k, [])) or 0) / 1e3 or None for k in KERNELS}
    s["unprobed_n"] = {k: len(tns.get(k, [])) for k in KERNELS}
    for mode in modes:
        rs = runs.get(mode, [])
        s["us"][mode] = {k: med([r["app"]["med"].get(k) for r in rs]) for k in KERNELS}
        s.setdefault("rep_us", {})[mode] = {r["rep"]: r["app"]["med"] for r in rs}
        s["app"][mode] = {k: ratio(s["us"][mode][k], plain_us[k]) for k in KERNELS}
        s["host"][mode] = {k: med([r["app"]["host"].get(k) for r in rs]) for k in KERNELS}
        sch = [r["app"]["sched"] for r in rs if r["app"]["sched"]]
        agg = {"runs": len(rs), "rcs": sorted({r["rc"] for r in rs}),
               "sched": tuple(med([x[i] for x in sch]) for i in range(4)) if sch else None,
               "wall_x": ratio(med([r["app"]["wall"] for r in rs]), plain_wall),
               "pwall_x": ratio(med([r["wall"] for r in rs]), plain_pwall),
               "same": None, "diff": set(), "requested": 0, "probed": 0, "written": 0, "declined": 0,
               "lost": 0, "failed": 0, "pending": 0, "lost_events": 0, "records": 0, "disk": 0,
               "disk_ev": 0, "disk_known": bool(rs), "warns": {}, "cpu_n": 0, "cpu_pre_us": 0,
               "cpu_post_us": 0, "zero_waits": 0, "staged": 0, "slab": 0, "held": [], "held_runs": 0}
        for r in rs:
            chk = r["app"]["check"]
            if ref and chk:
                agg["diff"] |= {k for k in set(ref) | set(chk) if ref.get(k) != chk.get(k)}
                agg["same"] = not agg["diff"]
            elif ref:
                agg["same"] = False
                agg["diff"].add("no output")
            ev = r["ev"]
            agg["failed"] += ev["final"]["failed"]
            agg["pending"] += ev["final"]["pending"]
            agg["cpu_n"] += ev["final"]["probed"]
            for key in ("cpu_pre_us", "cpu_post_us", "zero_waits", "staged"):
                agg[key] += ev["final"][key]
            agg["lost_events"] += ev["lost_events"]
            for msg, n in ev["warns"].items():
                agg["warns"][msg] = agg["warns"].get(msg, 0) + n
            if r["disk"] is None:
                agg["disk_known"] = False
            else:
                agg["disk"] += r["disk"]
            agg["held_runs"] += any(e["held"] for e in ev["kernels"].values())
            for kern, e in ev["kernels"].items():
                agg["held"] += e["held"]
                for key in ("requested", "probed", "written", "declined", "records", "slab"):
                    agg[key] += e[key]
                agg["disk_ev"] += e["disk"]
                kk = s["kern"].setdefault(mode, {}).setdefault(kern, {
                    "requested": 0, "probed": 0, "written": 0, "declined": 0, "reasons": {}, "records": 0,
                    "dropped": 0, "unsampled": 0, "sampled": set(), "disk": 0, "rns": [], "cpu": [],
                    "first_cpu": [], "deferred": 0, "defer_held": []})
                for key in ("requested", "probed", "written", "declined", "records", "dropped", "unsampled", "disk",
                            "deferred"):
                    kk[key] += e[key]
                kk["first_cpu"].extend(e["first_cpu"])
                kk["defer_held"].extend(e["defer_held"])
                kk["sampled"] |= e["sampled"]
                kk["rns"].extend(e["rns"])
                kk["cpu"].extend(e["cpu"])
                for reason, n in e["reasons"].items():
                    kk["reasons"][reason] = kk["reasons"].get(reason, 0) + n
        agg["lost"] = agg["probed"] - agg["written"]
        bytes_ = agg["disk"] if agg["disk_known"] else agg["disk_ev"]
        agg["b_per_record"] = bytes_ / agg["records"] if agg["records"] else None
        s["per"][mode] = agg
        s["ink"][mode] = {k: ratio(med(s["kern"].get(mode, {}).get(k, {}).get("rns", [])) or None,
                                   med(tns.get(k, []))) for k in KERNELS}
        pair = pair_ink(runs.get(mode.removesuffix("-async") + "-pair", []))
        s["ink"][mode] = {k: pair[k] if pair.get(k) is not None else v for k, v in s["ink"][mode].items()}
    for mode in BURST_MODES:
        rs = burst.get(mode, [])
        b = {"rate": med([r["app"]["burst"][2] for r in rs if r["app"]["burst"]]),
             "launches": sum(r["app"]["burst"][0] + 1 for r in rs if r["app"]["burst"]),
             "rcs": sorted({r["rc"] for r in rs}), "probed": 0, "written": 0, "declined": 0, "requested": 0,
             "reasons": {}, "failed": 0, "pending": 0}
        for r in rs:
            for e in r["ev"]["kernels"].values():
                for key in ("requested", "probed", "written", "declined"):
                    b[key] += e[key]
                for reason, n in e["reasons"].items():
                    b["reasons"][reason] = b["reasons"].get(reason, 0) + n
            b["failed"] += r["ev"]["final"]["failed"]
            b["pending"] += r["ev"]["final"]["pending"]
        s["burst"][mode] = b
    return s


HELD_NS = 150000  # a probed launch held this long (cpu_ns) is a stall the app feels, not its pace


def held_cell(agg):
    """'N in R/runs runs, lo-hi ms, S slab=1, B beside=1' for the launches held past HELD_NS."""
    h = agg["held"]
    if not h:
        return "0" if agg["runs"] else "-"
    ms = sorted(c / 1e6 for c, _, _ in h)
    return (f"{len(h)} in {agg['held_runs']}/{agg['runs']} runs, {ms[0]:.2f}-{ms[-1]:.2f} ms, "
            f"{sum(1 for _, slab, _ in h if slab)} slab=1, {sum(1 for _, _, beside in h if beside)} beside=1")


SELF_PHASES = ["u_lookup", "u_select", "u_pre", "u_drv", "u_post", "p_find", "p_prep", "p_enq", "p_drv", "p_end",
               "p_emit", "p_submit"]


def self_lines(w):
    """The `self` lines of the *-self runs: (mode, kernel, fields) in run order."""
    out = []
    for line in read(os.path.join(w, "runs.tsv")).splitlines():
        mode, rep = (line.split("\t") + [""])[:2]
        if not mode.endswith("-self"):
            continue
        names = {}
        for ev in read(os.path.join(w, f"{mode}.{rep}", "events.log")).splitlines():
            f = fields(ev)
            if ev.startswith("kernel "):
                names[f.get("kid")] = short_name(f.get("name", ""))
            elif ev.startswith("self "):
                out.append((f"{mode}.{rep}", names.get(f.get("kid"), f.get("kid")), f))
    return out


def self_rows(w):
    """The `self` lines of the *-self runs: [mode.rep, kernel, n, us per phase...]."""
    rows = []
    for run, kern, f in self_lines(w):
        n = f"{f.get('unprobed', 0)}+{f.get('probed', 0)} t{f.get('timed', 0)}"
        us = [(f"{num(f, ph + '_ns') / 1e3:.2f}" if ph + "_ns" in f else "-")
              + (f" ({num(f, ph + '_p50_ns') / 1e3:.2f})" if ph + "_p50_ns" in f else "") for ph in SELF_PHASES]
        rows.append([run, kern, n] + us)
    return rows


def self_medians(w):
    """Per *-self mode and kernel, over its runs, the median of each phase's per-run median (its mean
    where the line has none), ns: [mode, kernel, runs, unprobed hook, (lookup, select, after), driver,
    probed find, prepare and enqueue, driver, after]; the sums are of medians."""
    per = {}
    for run, kern, f in self_lines(w):
        d = per.setdefault((run.rsplit(".", 1)[0], kern), {})
        for ph in SELF_PHASES:
            key = ph + ("_p50_ns" if ph + "_p50_ns" in f else "_ns")
            if key in f:
                d.setdefault(ph, []).append(num(f, key))
    rows = []
    for (mode, kern), d in per.items():
        m = {ph: med(d[ph]) for ph in d}
        us = lambda *phs: f"{sum(m[p] for p in phs) / 1e3:.2f}" if all(p in m for p in phs) else "-"
        rows.append([mode, kern, str(max(len(v) for v in d.values()) if d else 0),
                     f"{us('u_lookup', 'u_select', 'u_pre', 'u_post')} ({us('u_lookup')}, {us('u_select')}, "
                     f"{us('u_post')})" if "u_lookup" in m else "-", us("u_drv"), us("p_find"),
                     us("p_prep", "p_enq"), us("p_drv"), us("p_end", "p_emit", "p_submit")])
    return rows


def pair_ink(rs):
    """{kernel: in-kernel ratio}, the median over a probe's *-pair runs of each run's median result ns
    over its median time ns (probed and unprobed launches alternating in one process, all timed;
    the first launch left out); None for a kernel without them."""
    out = {}
    for k in KERNELS:
        xs = [ratio(med(e["rns"]), med(e["tns"])) for e in (r["ev"]["kernels"].get(k) for r in rs)
              if e and e["rns"] and e["tns"]]
        out[k] = med(xs)
    return out


def pair_rows(runs):
    """The *-pair and *-alt runs: per mode and kernel, the medians over repetitions of (unprobed us,
    probed us, their difference on the app's clock, the same inside the kernel, the first less the
    second). Launch 0 (the first, probed: it waits for its copy) is left out; launches 2, 4, ... are
    the probed ones (--every 2), which the trace must confirm: every other launch written, none
    declined or deferred, else the row says why. An *-alt run has no timing of ntop's (none of its
    events on the stream), so its in-kernel difference is the same probe's *-pair runs' median.
    Returns the rows and {(probe, kernel): in-kernel +us} of the *-pair runs."""
    rows, floor = [], {}
    for mode in sorted((m for m in runs if m.endswith(("-pair", "-alt"))), key=lambda m: (m.rsplit("-", 1)[0],
                                                                                         m.endswith("-alt"))):
        probe, alt = mode.rsplit("-", 1)[0], mode.endswith("-alt")
        for k in KERNELS:
            cols, why = [], ""
            for r in runs[mode]:
                each = r["app"]["each"].get(k, {})
                e = r["ev"]["kernels"].get(k)
                n = len(each) + 1
                if not e or e["written"] != (n + 1) // 2 or e["declined"] or e["deferred"]:
                    why = "not every other launch probed and written" if e else "no trace"
                    continue
                pr = med([us for i, us in each.items() if i % 2 == 0])
                un = med([us for i, us in each.items() if i % 2 == 1])
                if alt:
                    ink = floor.get((probe, k))
                else:
                    ink = (med(e["rns"]) - med(e["tns"])) / 1e3 if e["rns"] and e["tns"] else None
                if pr is None or un is None or ink is None:
                    why = "no *-pair runs for the in-kernel difference" if alt and pr is not None \
                        and un is not None else "launches missing"
                    continue
                cols.append((un, pr, pr - un, ink, pr - un - ink))
            if not cols:
                rows.append([mode, k] + ["-"] * 5 + [why or "no run"])
                continue
            meds = [med([c[i] for c in cols]) for i in range(5)]
            if not alt:
                floor[(probe, k)] = meds[3]
            rows.append([mode, k] + [f"{v:+.1f}" if i >= 2 else f"{v:.1f}" for i, v in enumerate(meds)]
                        + [f"{len(cols)} runs"])
    return rows, floor


def timed_rows(runs, floor):
    """The *-timed runs (every launch timed by ntop): per probe and kernel, the unprobed kernel's time
    (ntop-timed runs) and the probed one's when every launch is probed (P-timed runs), us, each run's
    median (the first launch left out) and the median over runs; their difference, and the same from the
    probe's *-pair runs beside it. Returns the rows and {(probe, kernel): every-launch in-kernel +us}."""
    def run_meds(rs, k, key):
        return med([med(e[key]) for e in (r["ev"]["kernels"].get(k) for r in rs) if e and e[key]])
    base = runs.get("ntop-timed", [])
    rows, every = [], {}
    for mode in sorted(m for m in runs if m.endswith("-timed") and m != "ntop-timed"):
        probe = mode.removesuffix("-timed")
        for k in KERNELS:
            un, pr, f = run_meds(base, k, "tns"), run_meds(runs[mode], k, "rns"), floor.get((probe, k))
            if un is None or pr is None:
                rows.append([mode, k, "-", "-", "-", "-", "no ntop-timed runs" if un is None else "no timed results"])
                continue
            every[(probe, k)] = (pr - un) / 1e3
            rows.append([mode, k, f"{un / 1e3:.1f}", f"{pr / 1e3:.1f}", f"{every[(probe, k)]:+.1f}",
                         "-" if f is None else f"{f:+.1f}", f"{len(runs[mode])} runs"])
    return rows, every


BETWEEN_TARGET_US = 0.5  # block_sched on one-operation kernels: at most its floor + 0.5 us


def rep_diffs(s, mode, k):
    """The mode's us less plain's in each repetition that has both (the modes of a repetition run
    side by side, so this leaves out what moves between repetitions)."""
    mine, plain = s["rep_us"].get(mode, {}), s["rep_us"].get("plain", {})
    return [mine[r][k] - plain[r][k] for r in sorted(mine) if r in plain and k in mine[r] and k in plain[r]]


def between_rows(s, probes):
    """Every launch probed against plain, whole processes: the median over repetitions of the mode's us
    less plain's in the same repetition, less the probe's in-kernel difference from its *-pair runs
    (probed and unprobed launches alternating) and, where there are *-timed runs, from those (every
    launch probed); beside it the repetitions at or under the target; modes with neither left out."""
    cols = []
    for m in probes:
        probe = m.removesuffix("-async")
        for src, name in ((s["pair_floor"], m), (s.get("every", {}), m + " (every)")):
            if any((probe, k) in src for k in KERNELS):
                cols.append((name, m, src))
    rows = []
    for k in KERNELS:
        row = [k]
        for _, m, src in cols:
            d, f = rep_diffs(s, m, k), src.get((m.removesuffix("-async"), k))
            if not d or f is None:
                row.append("-")
                continue
            ok = sum(x - f <= BETWEEN_TARGET_US for x in d)
            row.append(f"{med(d) - f:+.1f} ({ok}/{len(d)})")
        rows.append(row)
    return [c[0] for c in cols], rows


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def render(s):
    modes, probes = s["modes"], s["modes"][1 + len(UNPROBED):]
    dash = ["-"] * len(UNPROBED)
    L = []
    L += ["", "## ntop's own in-kernel numbers (NOT what the app waits)", "",
          "result ns of probed launches / time ns of the same kernel's unprobed launches, medians, each",
          "kernel's first launch left out: from the probe's *-pair runs where there are (every launch timed,",
          "probed and unprobed alternating in one process), else under `ntop record` (ntop's sampled timing:",
          "a kernel's first launch, then one per 10 ms, so short loops have none).", ""]
    rows = []
    for k in KERNELS:
        u = s["unprobed_us"].get(k)
        rows.append([k, f"{u:.1f} ({s['unprobed_n'][k]})" if u else "-"] + [fx(s["ink"][m][k]) for m in probes])
    L += table(["kernel", "unprobed us (n)"] + probes, rows)
    L += ["", "## The hook's time on the app's thread per probed launch, until the probed kernel is queued", "",
          "median us of the launch lines' cpu_ns, each kernel's first (instrumenting) launch left out; with",
          "the app's stream empty the GPU idles for this long, and the app's clock sees it", ""]
    rows = []
    for k in KERNELS:
        row = [k]
        for m in probes:
            c = s["kern"].get(m, {}).get(k, {}).get("cpu", [])
            row.append(f"{med(c) / 1e3:.1f} (p90 {sorted(c)[int(0.9 * (len(c) - 1))] / 1e3:.1f})" if c else "-")
        rows.append(row)
    L += table(["kernel"] + probes, rows)
    L += ["", "## The launch statement on the app's thread (the app's steady clock around <<<>>>)", "",
          "median us; the GPU idles through it (the stream is empty at each launch), so what a mode adds",
          "here shows in the app's cudaEvent time too", ""]
    L += table(["kernel"] + modes, [[k] + [f"{s['host'][m][k]:.1f}" if s["host"][m][k] else "-" for m in modes]
                                    for k in KERNELS])
    if s.get("self"):
        L += ["", "## Where the hook's time on the app's thread went (NTOP_SELF_TIME=1 runs, mean us per launch; in",
              "brackets the median of the latest 512, which one launch held for milliseconds does not move)", "",
              "n = unprobed+probed launches timed (each kernel's first launch left out), t = unprobed ones",
              "sampled for ntop's launch timing; u_* unprobed: kernel lookup and counts, selection (timing,",
              "probe, configuration), the timing's start event, the driver's launch call, after it; p_* probed:",
              "finding the kernel and selecting, prepare (copy, plan, buffer), enqueue (waits, start event), the",
              "driver's call, end event, launch line, submit", ""]
        L += table(["run", "kernel", "n"] + SELF_PHASES, s["self"])
        L += ["", "## The hook's time on the app's thread, over the *-self runs (us)", "",
              "per mode and kernel, the median over its runs of each phase's median (its mean where a run",
              "gives none), summed: an unprobed launch's hook work (finding, selecting, the timing's start,",
              "after the call; in brackets finding, selecting, after) and the driver's launch call; a probed",
              "launch's finding and selecting, prepare and enqueue (before its kernel is queued), the driver's",
              "call, and what follows it (end event, launch line, submit)", ""]
        L += table(["mode", "kernel", "runs", "unprobed: hook (find, select, after)", "driver", "probed: find",
                    "prepare+enqueue", "driver", "after"], s["self_med"])
    if s.get("pair"):
        L += ["", "## Probed and unprobed launches alternating in one process (--every 2; *-pair: every launch",
              "timed by ntop and by the app; *-alt: by the app only)", "",
              "median us per launch over the runs: the app's cudaEvent time of its unprobed and probed launches",
              "and their difference; the same difference inside the kernel (ntop's time of the unprobed ones,",
              "result ns of the probed ones, from the *-pair runs); the first difference less the second: what",
              "the probed launch adds around its kernel on the app's clock (the probe's target: at most 0.5",
              "us). In *-pair runs both launches carry ntop's timed events (about 1 us each on this clock) and",
              "its capture check, so their difference leaves those out; *-alt runs keep them in", ""]
        L += table(["mode", "kernel", "unprobed us", "probed us", "app +us", "in-kernel +us", "around +us",
                    "runs"], s["pair"])
    if s.get("timed"):
        L += ["", "## Every launch probed, inside the kernel (*-timed runs: every launch timed by ntop)", "",
              "median us between ntop's events: unprobed (ntop-timed runs, nothing probed) and probed (every",
              "launch probed), each run's median, then over the runs; their difference, and beside it the",
              "probe's in-kernel difference with probed and unprobed launches alternating (*-pair runs). More",
              "here than there is what probing every launch adds to the time between ntop's events: GPU work",
              "beside the kernel (the copies back) and a slower launch call (the start event is recorded",
              "before it, on an idle GPU)", ""]
        L += table(["mode", "kernel", "unprobed us", "probed us", "in-kernel +us", "*-pair in-kernel +us", "runs"],
                   s["timed"])
    cols, rows = between_rows(s, probes)
    if cols:
        L += ["", "## Between processes: every launch probed against plain, less the in-kernel difference", "",
              "median over the repetitions of the mode's us per launch less plain's in the same repetition,",
              "less the probe's in-kernel +us from its *-pair runs (or, \"(every)\", from its *-timed runs):",
              "what probing every launch adds around the kernel, the probing process's other work included",
              "(the same target: at most 0.5 us on one-operation kernels); in brackets the repetitions at or",
              "under that target", ""]
        L += table(["kernel"] + cols, rows)
    L += ["", "## The first probed launch of each kernel: the hook's time on the app's thread", "",
          "median ms of its cpu_ns over the runs (it holds instrumenting and the JIT, CUDA_CACHE_DISABLE=1,",
          "unless the copy was built off the app's threads: the *-async modes, ntop's default); d = launches",
          "that ran unprobed while the copy was built; w = the longest ms from a deferred launch's `probe`",
          "line to its `launch` line, which follows its occupancy query (a driver call the driver's own JIT",
          "holds while it builds a copy on another thread)", ""]
    rows = []
    for k in KERNELS:
        row = [k]
        for m in probes:
            e = s["kern"].get(m, {}).get(k, {})
            fc = e.get("first_cpu", [])
            dh = e.get("defer_held", [])
            row.append((f"{med(fc) / 1e6:.2f}" if fc else "-") + (f" d{e['deferred']}" if e.get("deferred") else "") +
                       (f" w{max(dh) / 1e6:.2f}" if dh else ""))
        rows.append(row)
    L += table(["kernel"] + probes, rows)
    L += ["", "## Results written / probed launches requested, per kernel", "",
          "requested = launches (--every 1); d = declined (ran unprobed), l = probed without a result", ""]
    rows = []
    for k in KERNELS:
        row = [k]
        for m in probes:
            e = s["kern"].get(m, {}).get(k)
            if not e:
                row.append("-")
                continue
            c = f"{e['written']}/{e['requested']}"
            if e["declined"]:
                c += f" d{e['declined']}"
            if e["probed"] - e["written"]:
                c += f" l{e['probed'] - e['written']}"
            row.append(c)
        rows.append(row)
    L += table(["kernel"] + probes, rows)
    L += ["", "## Records per written launch (block sampling 1 in N) and result bytes on disk per launch", ""]
    rows = []
    for k in KERNELS:
        row = [k]
        for m in probes:
            e = s["kern"].get(m, {}).get(k)
            if not e or not e["written"]:
                row.append("-")
                continue
            c = f"{e['records'] / e['written']:.0f}"
            if e["sampled"]:
                c += " 1/" + ",".join(str(x) for x in sorted(e["sampled"]))
            d = e["disk"] / e["written"]
            c += f", {d / 1e6:.2f} MB" if d >= 1e5 else f", {d / 1e3:.1f} kB"
            row.append(c)
        rows.append(row)
    L += table(["kernel"] + probes, rows)
    reasons = []
    for m in probes + ["burst"]:
        src = s["kern"].get(m, {}) if m != "burst" else {"tiny": s["burst"].get("block_sched", {})}
        for k, e in src.items():
            if e.get("declined") or e.get("reasons"):
                rs = "; ".join(r + (f" ({n} lines)" if n > 1 else "") for r, n in sorted(e["reasons"].items()))
                reasons.append(f"- {m} {k}: {e['declined']} declined: {rs or 'no probe line'}")
    L += ["", "## Declined launches by kernel and reason", "",
          "(the hook writes a `probe status=declined` line once per kernel and change of reason;",
          "the count is the kernel's `stats declined=`)", ""]
    L += reasons or ["none"]
    warns = []
    for m in modes[1:]:
        ws = sorted(s["per"][m]["warns"].items(), key=lambda x: -x[1])
        warns += [f"- {m}: {n}x {msg}" for msg, n in ws[:5]]
        if len(ws) > 5:
            warns.append(f"- {m}: ... {len(ws) - 5} more kinds")
    L += ["", "## ntop warnings (warn lines, digits as N)", ""] + (warns or ["none"])
    b = s["burst"]
    bs = b.get("block_sched", {})
    L += ["", "## Burst: one-block launches back to back, one sync (after one warm-up launch)", ""]
    for m in BURST_MODES:
        rate = f"{b[m]['rate']:.0f}" if b[m]["rate"] else "-"
        L.append(f"- {m}: {rate} launches/s (exit {','.join(b[m]['rcs']) or '-'})")
    L += [f"- block_sched: {bs.get('requested', 0)} launches requested, {bs.get('probed', 0)} probed, "
          f"{bs.get('written', 0)} results written, {bs.get('declined', 0)} declined, "
          f"{bs.get('probed', 0) - bs.get('written', 0)} lost"]
    L += ["", US_TABLE, "", "median us per launch over the repetitions, every mode (app_cost.sh --ab-rounds reads",
          "these from each round's report)", ""]
    L += table(["kernel"] + modes, [[k] + [f"{s['us'][m][k]:.2f}" if s["us"][m][k] else "-" for m in modes]
                                    for k in KERNELS])
    L += ["", "## What the app's own clock sees (app_cost: cudaEvents around every launch, median of "
          "each kernel's launches after its first (20 unless APP_COST_LAUNCHES), median over repetitions; ratio to plain; in brackets ntop's in-kernel ratio "
          "of the same probed launches, the floor a probe's records set)", ""]
    rows = []
    for k in KERNELS:
        pu = s["plain_us"][k]
        rows.append([k, f"{pu:.1f}" if pu else "-"] + [fx(s["app"][m][k]) for m in UNPROBED]
                    + [fx(s["app"][m][k]) + (f" ({fx(s['ink'][m][k])})" if s["ink"][m][k] else "") for m in probes])
    per = s["per"]
    rows.append(["app wall (app's clock)", "1.00x" if per["plain"]["runs"] else "-"]
                + [fx(per[m]["wall_x"]) for m in modes[1:]])
    rows.append(["process wall (incl. exit drain)", "1.00x" if per["plain"]["runs"] else "-"]
                + [fx(per[m]["pwall_x"]) for m in modes[1:]])
    rows.append(["app thread per run: launches on another CPU than the one before / involuntary switches "
                 "(medians)"] + [f"{per[m]['sched'][1]:.0f} / {per[m]['sched'][3]:.0f}" if per[m]["sched"] else "-"
                                 for m in modes])
    rows.append(["written / requested", ""] + dash + [f"{per[m]['written']}/{per[m]['requested']}" for m in probes])
    rows.append(["declined", ""] + [str(per[m]["declined"]) for m in UNPROBED] + [str(per[m]["declined"]) for m in probes])
    rows.append(["lost (probed, no result)", ""] + dash + [
        str(per[m]["lost"]) + (f" ({per[m]['failed']} failed, {per[m]['pending']} pending)"
                               if per[m]["failed"] or per[m]["pending"] else "")
        + (f" +{per[m]['lost_events']} events" if per[m]["lost_events"] else "") for m in probes])
    rows.append(["B/record (results/ on disk)", ""] + dash
                + [f"{per[m]['b_per_record']:.2f}" if per[m]["b_per_record"] is not None else "-" for m in probes])
    rows.append(["hook CPU per probed launch, mean us: to queued / after"
                 " (first launches' instrumenting included)", ""] + dash + [
        f"{per[m]['cpu_pre_us'] / per[m]['cpu_n']:.1f} / {per[m]['cpu_post_us'] / per[m]['cpu_n']:.1f}"
        if per[m]["cpu_n"] else "-" for m in probes])
    rows.append(["probed launches that waited for zeroing", ""] + dash + [
        f"{per[m]['zero_waits']}/{per[m]['cpu_n']}" if per[m]["cpu_n"] else "-" for m in probes])
    rows.append(["probed launches whose job was made ahead", ""] + dash + [
        f"{per[m]['staged']}/{per[m]['cpu_n']}" if per[m]["cpu_n"] else "-" for m in probes])
    rows.append(["probed launches that allocated a device slab on their path (slab=1)", ""] + dash + [
        f"{per[m]['slab']}/{per[m]['probed']}" if per[m]["probed"] else "-" for m in probes])
    rows.append(["probed launches held over 0.15 ms on the app's thread, besides each kernel's first probed one "
                 "(slab=1: its own slab allocated; beside=1: the hook's threads allocated or pinned meanwhile)",
                 ""] + dash + [held_cell(per[m]) for m in probes])
    rows.append(["output = plain (bit for bit)", "ref"] + [
        "-" if per[m]["same"] is None else "yes" if per[m]["same"] else "NO: " + ",".join(sorted(per[m]["diff"]))
        for m in modes[1:]])
    rows.append(["exit status"] + [",".join(per[m]["rcs"]) or "-" for m in modes])
    rows.append(["burst launches/s"] + [
        f"{b[m]['rate']:.0f}" if m in b and b[m]["rate"] else "" for m in modes])
    L += table(["kernel", "plain us"] + modes[1:], rows)
    return "\n".join(L)


US_TABLE = "## The app's us per launch, every mode"


def us_table(text):
    """{mode: {kernel: us}} from a report's US_TABLE."""
    lines = text.split(US_TABLE, 1)[1].splitlines() if US_TABLE in text else []
    head, out = None, {}
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if head is None and cells[0] == "kernel":
            head = cells[1:]
        elif head and line.startswith("|") and cells[0] in KERNELS:
            for m, v in zip(head, cells[1:]):
                if re.match(r"^[\d.]+$", v):
                    out.setdefault(m, {})[cells[0]] = float(v)
        elif head and not line.startswith("|"):
            break
    return out


def ab_rounds(items, ref_mode="plain"):
    """Rounds of builds side by side (tests/gpu/batch.sh app_cost_ab): items NAME:ROUND:REPORT. Per later
    build, mode and kernel: each round's mode less that round's ref_mode, less the same for the first
    build of the same round; the median over rounds and in how many rounds the later build was lower."""
    rounds, names = {}, []
    for it in items:
        name, rnd, path = it.split(":", 2)
        if name not in names:
            names.append(name)
        rounds.setdefault(name, {})[rnd] = us_table(read(path))
    ref, L = names[0], []
    for name in names[1:]:
        both = sorted(set(rounds[ref]) & set(rounds[name]))
        modes = [m for m in rounds[name].get(both[0], {}) if m != ref_mode] if both else []
        rows = []
        for k in KERNELS:
            row = [k]
            for m in modes:
                ds = []
                for r in both:
                    a, b = rounds[ref][r], rounds[name][r]
                    try:
                        ds.append((b[m][k] - b[ref_mode][k]) - (a[m][k] - a[ref_mode][k]))
                    except KeyError:
                        continue
                row.append(f"{med(ds):+.2f} ({sum(d < 0 for d in ds)}/{len(ds)} lower)" if ds else "-")
            rows.append(row)
        L += ["", f"## {name} against {ref}, round by round: each mode less its round's {ref_mode}, us per launch",
              "", f"median over {len(both)} rounds of ({name}'s mode - {name}'s {ref_mode}) - ({ref}'s mode - "
              f"{ref}'s {ref_mode}) in the same round; in brackets the rounds where it was lower. Modes whose",
              "code the change left alone show what rounds differ by", ""]
        L += table(["kernel"] + modes, rows)
    return "\n".join(L)


def selftest():
    ok = True

    def want(what, got, exp):
        nonlocal ok
        if got != exp:
            print(f"selftest: {what}: got {got!r}, want {exp!r}")
            ok = False
    app = parse_app("cost check fill 00ff\ninfo: cost kernel=fill launches=20 median_us=46.50 p90_us=50.00\n"
                    "info: cost wall_s=1.5\ninfo: cost burst launches=5000 wall_s=0.010000 rate=500000\n")
    want("app", (app["med"], app["check"], app["wall"], app["burst"]),
         ({"fill": 46.5}, {"fill": "00ff"}, 1.5, (5000, 0.01, 500000.0)))
    ev = parse_events(
        "kernel t=1 pid=5 kid=1 mid=1 name=_Z6k_fillPiii ptx=1\n"
        "launch t=2 pid=5 kid=1 seq=1 probed=1 cpu_ns=1500000\n"
        "result t=3 pid=5 kid=1 seq=1 records=8 dropped=0 sampled=8 unsampled=56 disk=100 ns=9000\n"
        "launch t=2 pid=5 kid=1 seq=2 probed=1\n"
        "result t=3 pid=5 kid=1 seq=2 records=8 dropped=0 sampled=8 unsampled=56 disk=100 ns=2000\n"
        "probe t=4 pid=5 kid=1 seq=3 status=declined reason=no%20map%20buffer\n"
        "launch t=2 pid=5 kid=1 seq=4 probed=1\n"
        "probe t=10 pid=5 kid=1 seq=5 status=deferred reason=building\n"
        "launch t=30 pid=5 kid=1 seq=5 probed=0\n"
        "probe t=40 pid=5 kid=1 seq=6 status=deferred reason=building\n"
        "stats t=5 pid=5 kid=1 launches=3 timed=0 declined=1\n"
        "stats t=5 pid=5 kid=1 launches=4 timed=0 declined=1 deferred=2\n"
        "results t=6 pid=5 at=final pending=0 written=2 failed=1\n"
        "lost t=7 pid=5 events=3\n")
    e = ev["kernels"]["fill"]
    want("events", (e["requested"], e["probed"], e["written"], e["declined"], e["reasons"], e["records"],
                    e["sampled"], e["rns"], ev["final"]["failed"], ev["lost_events"]),
         (4, 3, 2, 1, {"no map buffer": 1}, 16, {8}, [2000], 1, 3))
    want("first probed", (e["deferred"], e["first_cpu"], e["defer_held"]), (2, [1500000], [20]))
    w = tempfile.mkdtemp()

    def put(name, text):
        os.makedirs(os.path.dirname(os.path.join(w, name)), exist_ok=True)
        with open(os.path.join(w, name), "w") as fh:
            fh.write(text)
    out = lambda us, wall, h: "".join(
        f"cost check {k} {h}\ninfo: cost kernel={k} launches=20 median_us={us} p90_us={us} host_us={us / 4}\n"
        for k in KERNELS) \
        + f"info: cost wall_s={wall}\n"
    HELD = {1: 2000000, 3: 900000, 5: 200000, 6: 100000}  # the first probed one and one under 0.15 ms: not held
    put("runs.tsv", "plain\t1\t0\t2.0\nntop\t1\t0\t2.2\nblock_sched\t1\t0\t5.0\nntop-self\t1\t0\t2.1\n"
        "ntop-self\t2\t0\t2.1\n"
        "burst-plain\t1\t0\t1.0\nburst-block_sched\t1\t0\t2.0\n")
    put("plain.1.out", out(10.0, 1.0, "aa") + "info: cost sched launches=147 moved=3 vcsw=10 ivcsw=2\n")
    put("ntop.1.out", out(11.0, 1.1, "aa"))
    # its process ran 5.0 s, 1.0 s of them paused: 4.0 s against plain's 2.0
    put("block_sched.1.out", out(50.0, 3.0, "aa").replace("check saxpy aa", "check saxpy bb")
        + "info: cost paused_s=1.0\n")
    put("ntop.1/events.log", "kernel t=1 pid=7 kid=2 mid=1 name=_Z6k_copyPKfPfi ptx=1\n"
        "launch t=1 pid=7 kid=2 seq=1 probed=0\ntime t=1 pid=7 kid=2 seq=1 ns=99000\n"
        "time t=1 pid=7 kid=2 seq=2 ns=4000\ntime t=1 pid=7 kid=2 seq=3 ns=4000\n"
        "warn t=1 pid=7 msg=result%2012:%20disk%20full\n"
        "stats t=1 pid=7 kid=2 launches=21 timed=3\n")
    put("block_sched.1/events.log", "kernel t=1 pid=8 kid=2 mid=1 name=_Z6k_copyPKfPfi ptx=1\n"
        + "".join(f"launch t=1 pid=8 kid=2 seq={i} probed=1{' slab=1' if i == 3 else ''}"
                  f"{f' cpu_ns={HELD[i]}' if i in HELD else ''}{' beside=1' if i == 5 else ''}\nresult t=1 pid=8 kid=2 "
                  f"seq={i} records=4 disk=10 ns={6000 if i > 1 else 90000}\n" for i in range(1, 21))
        + "launch t=1 pid=8 kid=2 seq=21 probed=1\nstats t=1 pid=8 kid=2 launches=21 timed=0\n"
        "results t=1 pid=8 at=final pending=0 written=20 failed=0\n")
    put("block_sched.1.disk", "400\n")
    put("ntop-self.2/events.log", "kernel t=1 pid=7 kid=2 mid=1 name=_Z6k_callPKfPfi ptx=1\n"
        "self t=1 pid=7 kid=2 unprobed=20 probed=0 timed=7 clock_ns=20 u_lookup_ns=300 u_select_ns=300 u_pre_ns=1500 "
        "u_drv_ns=9000 u_post_ns=200 u_drv_p50_ns=3500 u_lookup_p50_ns=100\n")
    put("ntop-self.1/events.log", "kernel t=1 pid=7 kid=2 mid=1 name=_Z6k_callPKfPfi ptx=1\n"
        "self t=1 pid=7 kid=2 unprobed=20 probed=0 timed=7 clock_ns=20 u_lookup_ns=100 u_select_ns=300 u_pre_ns=1500 "
        "u_drv_ns=3000 u_post_ns=200 u_drv_p50_ns=2500\n")
    put("block_sched-pair.1.out", "".join(f"info: cost each kernel=fill i={i} us={50.0 if i % 2 == 0 else 46.0}\n"
                                          for i in range(1, 21)))
    put("block_sched-pair.1/events.log", "kernel t=1 pid=6 kid=1 mid=1 name=_Z6k_fillPiii ptx=1\n"
        + "".join(f"launch t=1 pid=6 kid=1 seq={i} probed=1\nresult t=1 pid=6 kid=1 seq={i} records=4 "
                  f"disk=10 ns={47000 if i else 90000}\n" for i in range(0, 21, 2))
        + "".join(f"time t=1 pid=6 kid=1 seq={i} ns=45000\n" for i in range(1, 21, 2))
        + "stats t=1 pid=6 kid=1 launches=21 timed=21\n")
    put("block_sched-alt.1.out", "".join(f"info: cost each kernel=fill i={i} us={49.0 if i % 2 == 0 else 45.5}\n"
                                         for i in range(1, 21)))
    put("block_sched-alt.1/events.log", "kernel t=1 pid=4 kid=1 mid=1 name=_Z6k_fillPiii ptx=1\n"
        + "".join(f"launch t=1 pid=4 kid=1 seq={i} probed=1\nresult t=1 pid=4 kid=1 seq={i} records=4 "
                  f"disk=10 ns=0\n" for i in range(0, 21, 2))
        + "stats t=1 pid=4 kid=1 launches=21 timed=0\n")
    put("ntop-timed.1/events.log", "kernel t=1 pid=3 kid=1 mid=1 name=_Z6k_fillPiii ptx=1\n"
        + "".join(f"time t=1 pid=3 kid=1 seq={i} ns={90000 if i == 0 else 44000}\n" for i in range(21)))
    put("block_sched-timed.1/events.log", "kernel t=1 pid=2 kid=1 mid=1 name=_Z6k_fillPiii ptx=1\n"
        + "".join(f"time t=1 pid=2 kid=1 seq={i} ns=44000\n" for i in range(3))
        + "".join(f"launch t=1 pid=2 kid=1 seq={i} probed=1\nresult t=1 pid=2 kid=1 seq={i} records=4 "
                  f"disk=10 ns=47500\n" for i in range(3, 21)))
    with open(os.path.join(w, "runs.tsv"), "a") as fh:
        fh.write("block_sched-pair\t1\t0\t3.0\nblock_sched-alt\t1\t0\t3.0\n"
                 "ntop-timed\t1\t0\t2.0\nblock_sched-timed\t1\t0\t3.0\n")
    put("burst-plain.1.out", "info: cost burst launches=5000 wall_s=0.01 rate=500000\n")
    put("burst-block_sched.1.out", "info: cost burst launches=5000 wall_s=0.1 rate=50000\n")
    put("burst-block_sched.1/events.log", "kernel t=1 pid=9 kid=1 mid=1 name=_Z6k_tinyPi ptx=1\n"
        "probe t=1 pid=9 kid=1 seq=9 status=declined reason=busy\n"
        "stats t=1 pid=9 kid=1 launches=5001 timed=0 declined=1\n")
    s = summary(w, ["block_sched"])
    p = s["per"]["block_sched"]
    want("app ratio", (s["app"]["ntop"]["fill"], s["app"]["block_sched"]["copy"]), (1.1, 5.0))
    want("in-kernel", (s["unprobed_us"]["copy"], s["ink"]["block_sched"]["copy"]), (4.0, 1.5))
    want("in-kernel from the pair runs", round(s["ink"]["block_sched"]["fill"], 4), round(47 / 45, 4))
    want("per mode", (p["requested"], p["written"], p["declined"], p["lost"], p["b_per_record"], p["wall_x"],
                      p["pwall_x"], p["same"], p["diff"]), (21, 20, 0, 1, 5.0, 3.0, 2.0, False, {"saxpy"}))
    want("ntop same", s["per"]["ntop"]["same"], True)
    want("burst", (s["burst"]["plain"]["rate"], s["burst"]["block_sched"]["rate"],
                   s["burst"]["block_sched"]["declined"], s["burst"]["block_sched"]["requested"]),
         (500000.0, 50000.0, 1, 5001))
    want("sched", s["per"]["plain"]["sched"], (147, 3, 10, 2))
    two = {"rep_us": {"plain": {"1": {"fill": 10.0}, "2": {"fill": 11.0}, "3": {"fill": 9.0}},
                      "block_sched": {"1": {"fill": 10.3}, "2": {"fill": 12.5}}},
           "pair_floor": {("block_sched", "fill"): 0.0}}
    want("between, repetitions paired", between_rows(two, ["block_sched"])[1][0], ["fill", "+0.9 (1/2)"])
    text = render(s)
    for frag in ("| app thread per run: launches on another CPU than the one before / involuntary switches "
                 "(medians) | 3 / 2 | - |", "| probed launches that allocated a device slab on their path (slab=1) |  | - | - | - | 1/21 |",
                 "| copy | 10.0 | 1.10x | - | - | 5.00x (1.50x) |", "| written / requested |  | - | - | - | 20/21 |",
                 "| lost (probed, no result) |  | - | - | - | 1 |", "NO: saxpy", "| copy | 4.0 (2) | 1.50x |",
                 "| copy | 2.5 | 2.8 | - | - | 12.5 |", "burst tiny: 1 declined: busy",
                 "| ntop-self.1 | call | 20+0 t7 | 0.10 | 0.30 | 1.50 | 3.00 (2.50) | 0.20 | - |",
                 "| ntop-self | call | 2 | 2.10 (0.10, 0.30, 0.20) | 3.00 | - | - | - | - |",
                 "| probed launches held over 0.15 ms on the app's thread, besides each kernel's first probed one "
                 "(slab=1: its own slab allocated; beside=1: the hook's threads allocated or pinned meanwhile) |"
                 "  | - | - | - | 2 in 1/1 runs, 0.20-0.90 ms, 1 slab=1, 1 beside=1 |",
                 "| burst launches/s | 500000 |  |  |  | 50000 |", "ntop: 1x result N: disk full",
                 "| block_sched-pair | fill | 46.0 | 50.0 | +4.0 | +2.0 | +2.0 | 1 runs |",
                 "| block_sched-pair | copy | - | - | - | - | - | no trace |",
                 "| block_sched-alt | fill | 45.5 | 49.0 | +3.5 | +2.0 | +1.5 | 1 runs |",
                 "| fill | +38.0 (0/1) | +36.5 (0/1) |", "| copy | - | - |",
                 "| block_sched-timed | fill | 44.0 | 47.5 | +3.5 | +2.0 | 1 runs |",
                 "| block_sched-timed | copy | - | - | - | - | no ntop-timed runs |"):
        if frag not in text:
            print("selftest: table lacks", repr(frag))
            ok = False
    for f in ("| fill | 10.0 | 1.10x |", US_TABLE, "| fill | 10.00 | 11.00 |"):
        if f not in text:
            print("selftest: report lacks", repr(f))
            ok = False
    rep = lambda plain, bs: f"x\n{US_TABLE}\n\n| kernel | plain | block_sched |\n|---|---|---|\n" \
        f"| fill | {plain} | {bs} |\n| copy | 5.00 | 6.00 |\n\nrest\n| fill | 99 | 99 |\n"
    for name, rnd, plain, bs in (("a", 1, 10.0, 12.0), ("b", 1, 10.5, 12.0), ("a", 2, 10.0, 12.5), ("b", 2, 10.0, 12.1)):
        put(f"{name}{rnd}.txt", rep(plain, bs))
    want("us table", us_table(read(os.path.join(w, "a1.txt"))), {"plain": {"fill": 10.0, "copy": 5.0},
                                                                    "block_sched": {"fill": 12.0, "copy": 6.0}})
    ab = ab_rounds([f"{n}:{r}:{os.path.join(w, f'{n}{r}.txt')}" for r in (1, 2) for n in "ab"])
    ab += ab_rounds([f"{n}:{r}:{os.path.join(w, f'{n}{r}.txt')}" for r in (1, 2) for n in "ab"], "block_sched")
    for f in ("## b against a", "| fill | -0.45 (2/2 lower) |", "| copy | +0.00 (0/2 lower) |",
              "less its round's block_sched", "| fill | +0.45 (0/2 lower) |"):
        if f not in ab:
            print("selftest: ab rounds lack", repr(f), ab)
            ok = False
    empty = tempfile.mkdtemp()
    render(summary(empty, PROBES))  # a dry run: nothing there, must not fail
    shutil.rmtree(w)
    shutil.rmtree(empty)
    print("app_cost selftest", "ok" if ok else "FAILED")
    if not ok:
        print(text)
    return 0 if ok else 1


if sys.argv[1:] == ["--selftest"]:
    sys.exit(selftest())
if sys.argv[1:2] == ["--ab-rounds"]:
    args = sys.argv[2:]
    ref_mode = args[1] if args[:1] == ["--ref"] and len(args) > 2 else "plain"
    print(ab_rounds(args[2:] if args[:1] == ["--ref"] else args, ref_mode))
    sys.exit(0)
print(render(summary(sys.argv[1], sys.argv[2].split() if len(sys.argv) > 2 else PROBES)))
PY
}

case "${1:-}" in
--selftest)
	app_cost_analyse --selftest
	exit $?
	;;
--ab-rounds)
	shift
	[ $# -gt 0 ] || { echo "usage: bench/app_cost.sh --ab-rounds [--ref MODE] NAME:ROUND:REPORT..." >&2; exit 2; }
	app_cost_analyse --ab-rounds "$@"
	exit $?
	;;
--analyse)
	[ -d "${2:-}" ] || { echo "usage: bench/app_cost.sh --analyse WORKDIR" >&2; exit 2; }
	app_cost_analyse "$2" "$PROBES"
	exit $?
	;;
esac

OUT=${OUT:-$ROOT/bench-out}
STEP_S=${NTOP_BENCH_STEP_S:-150}
BUDGET_S=${BUDGET_S:-330}
. bench/lib.sh
REPS=2
BURST=5000
LAUNCHES=${APP_COST_LAUNCHES:-21}
[[ $LAUNCHES =~ ^[1-9][0-9]*$ ]] || { echo "APP_COST_LAUNCHES needs a positive integer" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--quick) REPS=1 ;;
	--reps)
		REPS=${2:-}
		[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "--reps needs a positive integer" >&2; exit 2; }
		shift
		;;
	--dry-run) DRY_RUN=1 ;;
	*) echo "usage: bench/app_cost.sh [--quick] [--reps N] [--dry-run] | --analyse DIR | --selftest" >&2; exit 2 ;;
	esac
	shift
done
lib_init app_cost app_cost.txt

env_info "ntop app-side cost (bench/app_cost.sh)"
say "repetitions: $REPS; launches per kernel: $LAUNCHES; burst: $BURST; step timeout ${STEP_S}s; budget ${BUDGET_S}s"
ensure_examples_fresh app_cost
ensure_ntop

# one MODE REP ARGS...: one app_cost run (ARGS), plain or under ntop, noted in
# runs.tsv (mode rep exit wall_s); the trace keeps events.log, its results/
# is measured (MODE.REP.disk: bytes) and deleted.
one() {
	local mode=$1 rep=$2 name="$1.$2" probe=${1#burst-}; shift 2
	case $probe in
	plain) step "$W/$name" "$EX/app_cost" "$@" ;;
	ntop) rec "$name" -- "$EX/app_cost" "$@" ;;
	ntop-notime) NTOP_TIME_LAUNCHES=off rec "$name" -- "$EX/app_cost" "$@" ;;
	ntop-noaudit) rec "$name" --no-audit -- "$EX/app_cost" "$@" ;;
	*-async) rec "$name" -p "${probe%-async}" --every 1 --limit 100000 -- "$EX/app_cost" "$@" ;;
	ntop-self) NTOP_SELF_TIME=1 NTOP_LOG=$W/$name.hook.log rec "$name" -- "$EX/app_cost" "$@" ;;
	ntop-notime-self) NTOP_TIME_LAUNCHES=off NTOP_SELF_TIME=1 rec "$name" -- "$EX/app_cost" "$@" ;;
	*-alt) NTOP_TIME_LAUNCHES=off APP_COST_EACH=1 rec "$name" -p "${probe%-alt}" --wait-build --every 2 \
		--limit 100000 -- "$EX/app_cost" "$@" ;;
	*-pair) NTOP_TIME_LAUNCHES=all APP_COST_EACH=1 rec "$name" -p "${probe%-pair}" --wait-build --every 2 \
		--limit 100000 -- "$EX/app_cost" "$@" ;;
	*-alt-self) NTOP_TIME_LAUNCHES=off NTOP_SELF_TIME=1 rec "$name" -p "${probe%-alt-self}" --wait-build --every 2 \
		--limit 100000 -- "$EX/app_cost" "$@" ;;
	*-self) NTOP_SELF_TIME=1 rec "$name" -p "${probe%-self}" --wait-build --every 1 --limit 100000 -- "$EX/app_cost" "$@" ;;
	ntop-timed) NTOP_TIME_LAUNCHES=all rec "$name" -- "$EX/app_cost" "$@" ;;
	*-timed) NTOP_TIME_LAUNCHES=all rec "$name" -p "${probe%-timed}" --every 1 --limit 100000 -- "$EX/app_cost" "$@" ;;
	*) rec "$name" -p "$probe" --wait-build --every 1 --limit 100000 -- "$EX/app_cost" "$@" ;;
	esac
	printf '%s\t%s\t%s\t%s\n' "$mode" "$rep" "$STEP_RC" "$STEP_WALL" >>"$W/runs.tsv"
	if [ -d "$W/$name/results" ]; then
		results_bytes "$W/$name/results" >"$W/$name.disk"
		rm -rf "${W:?}/$name/results"
	fi
}

: >"$W/runs.tsv"
export CUDA_CACHE_DISABLE=1 # every first probed launch pays its JIT, as on a fresh machine
export APP_COST_PAUSE_MS=${APP_COST_PAUSE_MS:-100}
say "== warm-up (plain, not counted: GPU clocks, page cache)"
step "$W/warmup" "$EX/app_cost" 3
# shellcheck disable=SC2206 # lists of mode names
MODES=(plain ntop ntop-notime ntop-noaudit $PROBES ${SELF_MODES:-} ${PAIR_MODES:-} ${TIMED_MODES:-})
for rep in $(seq "$REPS"); do
	# each repetition starts one mode later (APP_COST_OFFSET more): a run's
	# place in the sequence moves the app's clock by as much as a change
	# does, and with a fixed order it would sit on one mode's every run
	for i in "${!MODES[@]}"; do
		mode=${MODES[$(((i + rep - 1 + ${APP_COST_OFFSET:-0}) % ${#MODES[@]}))]}
		say "== $mode (rep $rep)"
		one "$mode" "$rep" "$LAUNCHES"
	done
	say "== burst $BURST: plain, ntop, block_sched (rep $rep)"
	for mode in plain ntop block_sched; do
		one "burst-$mode" "$rep" burst "$BURST"
	done
done

say ""
app_cost_analyse "$W" "$PROBES" 2>&1 | tee -a "$REPORT"
lib_finish app_cost-logs.tgz
