#!/usr/bin/env python3
"""Summarises a bench/app_cost.sh work directory into the table of
doc/performance.md ("What the app's own clock sees").

  app_cost.py WORKDIR "PROBE..."   the table
  app_cost.py selftest             parsers against synthetic input

Numbers per mode are medians over the repetitions. Which number is which:
  - app x: the app's own cudaEvent time per launch (median of 20), as a
    ratio to the plain run: what the user waits;
  - in-kernel x: ntop's `result ns` of probed launches over the `time ns` of
    the same kernel unprobed (the `ntop` mode times every launch): how much
    slower the probed kernel itself ran, NOT what the app waits.
"""
import os
import re
import statistics
import sys
import urllib.parse

KERNELS = ["fill", "copy", "reduce", "sgemm", "fma", "saxpy"]
# app_cost's kernels as the hook names them (mangled)
KERNEL_OF = {"k_fill": "fill", "k_copy": "copy", "k_reduce": "reduce", "k_sgemm": "sgemm", "k_fma": "fma",
             "k_saxpy": "saxpy", "k_tiny": "tiny"}


def parse_app(text):
    """{kernel: median_us}, {kernel: hash}, wall_s, burst rate."""
    med, check, wall, rate = {}, {}, None, None
    for line in text.splitlines():
        m = re.match(r"info: cost kernel=(\w+) launches=\d+ median_us=([\d.]+)", line)
        if m:
            med[m.group(1)] = float(m.group(2))
        m = re.match(r"cost check (\w+) ([0-9a-f]+)", line)
        if m:
            check[m.group(1)] = m.group(2)
        m = re.match(r"info: cost wall_s=([\d.]+)", line)
        if m:
            wall = float(m.group(1))
        m = re.match(r"info: cost burst wall_s=[\d.]+ rate=([\d.]+)", line)
        if m:
            rate = float(m.group(1))
    return med, check, wall, rate


def fields(line):
    out = {}
    for tok in line.split()[1:]:
        k, _, v = tok.partition("=")
        out[k] = urllib.parse.unquote(v)
    return out


def short_name(mangled):
    for k, v in KERNEL_OF.items():
        if k in mangled:
            return v
    return mangled


def parse_events(text):
    """Per kernel: probed launches, results, records, disk bytes, declined
    (count and reasons), result ns, time ns; process results lines."""
    names, per = {}, {}
    final = {"written": 0, "failed": 0, "pending": 0}
    lost_events = 0

    def k(kid):
        return per.setdefault(names.get(kid, kid), {"probed": 0, "results": 0, "records": 0, "disk": 0,
                                                    "declined": 0, "reasons": set(), "rns": [], "tns": []})
    for line in text.splitlines():
        typ = line.split(" ", 1)[0]
        f = fields(line)
        pk = (f.get("pid"), f.get("kid"))
        if typ == "kernel":
            names[pk] = short_name(f.get("name", ""))
        elif typ == "launch" and f.get("probed") == "1":
            k(pk)["probed"] += 1
        elif typ == "result":
            e = k(pk)
            e["results"] += 1
            e["records"] += int(f.get("records", 0))
            e["disk"] += int(f.get("disk", 0))
            e["rns"].append(int(f.get("ns", 0)))
        elif typ == "time":
            k(pk)["tns"].append(int(f.get("ns", 0)))
        elif typ == "probe" and f.get("status") == "declined":
            k(pk)["reasons"].add(f.get("reason", "?")[:80])
        elif typ == "stats" and "declined" in f:
            e = k(pk)
            e["declined"] = max(e["declined"], int(f["declined"]))
        elif typ == "results" and f.get("at") == "final":
            for key in final:
                final[key] += int(f.get(key, 0))
        elif typ == "lost":
            lost_events += int(f.get("events", 0))
    return per, final, lost_events


def read(path):
    try:
        with open(path, errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_ratio(x):
    return "-" if x is None else f"{x:.2f}x"


def summarise(w, probes):
    modes = ["plain", "ntop"] + probes
    runs = {}
    for line in read(os.path.join(w, "runs.tsv")).splitlines():
        mode, rep, rc, wall = (line.split("\t") + ["", "", "", ""])[:4]
        runs.setdefault(mode, []).append((rep, rc, wall))
    app, ev = {}, {}
    for mode in modes:
        for rep, rc, _ in runs.get(mode, []):
            name = f"{mode}.{rep}"
            app.setdefault(mode, []).append((rc, parse_app(read(os.path.join(w, name + ".out")))))
            if mode != "plain":
                disk = read(os.path.join(w, name + ".disk")).strip()
                ev.setdefault(mode, []).append((parse_events(read(os.path.join(w, name, "events.log"))),
                                                int(disk) if disk else 0))
    plain_med = {k: med([a[1][0].get(k) for a in app.get("plain", [])]) for k in KERNELS}
    plain_check = app["plain"][0][1][1] if app.get("plain") else {}
    plain_wall = med([a[1][2] for a in app.get("plain", [])])
    lines = ["", "App-side time per launch (cudaEvents in the app, median of 20 launches; ratio to plain)", ""]
    lines.append("| kernel | plain us | " + " | ".join(modes[1:]) + " |")
    lines.append("|---" * (len(modes) + 1) + "|")
    for kern in KERNELS:
        row = [kern, f"{plain_med[kern]:.1f}" if plain_med[kern] else "-"]
        for mode in modes[1:]:
            m = med([a[1][0].get(kern) for a in app.get(mode, [])])
            row.append(fmt_ratio(m / plain_med[kern] if m and plain_med[kern] else None))
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Per mode (summed over repetitions)", "",
              "| mode | exit | output = plain | wall x | probed | results | declined | lost | B/record | in-kernel x (median over kernels) |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    timed = {}
    for (per, _, _), _ in ev.get("ntop", []):
        for kern, e in per.items():
            timed.setdefault(kern, []).extend(e["tns"])
    for mode in modes:
        rcs = ",".join(sorted({a[0] for a in app.get(mode, [])}))
        same = all(a[1][1] == plain_check for a in app.get(mode, [])) if plain_check else False
        wall = med([a[1][2] for a in app.get(mode, [])])
        wall_x = fmt_ratio(wall / plain_wall if wall and plain_wall else None)
        probed = results = declined = records = disk = lost = 0
        ink = []
        for (per, final, lost_ev), d in ev.get(mode, []):
            disk += d
            lost += final["failed"] + final["pending"] + lost_ev
            for kern, e in per.items():
                probed += e["probed"]
                results += e["results"]
                declined += e["declined"]
                records += e["records"]
                t = med(timed.get(kern, []))
                r = med(e["rns"])
                if t and r:
                    ink.append(r / t)
        bpr = f"{disk / records:.2f}" if records else "-"
        lines.append(f"| {mode} | {rcs or '-'} | {'yes' if same else 'NO'} | {wall_x} | {probed} | {results} | "
                     f"{declined} | {lost} | {bpr} | {fmt_ratio(med(ink))} |")
    reasons = set()
    for mode in modes:
        for (per, _, _), _ in ev.get(mode, []):
            for e in per.values():
                reasons |= {f"{mode}: {r}" for r in e["reasons"]}
    if reasons:
        lines += ["", "Decline reasons:"] + sorted(f"  {r}" for r in reasons)
    prate = parse_app(read(os.path.join(w, "burst.plain.out")))[3]
    brate = parse_app(read(os.path.join(w, "burst.block_sched.out")))[3]
    bper, bfinal, _ = parse_events(read(os.path.join(w, "burst.block_sched", "events.log")))
    bres = sum(e["results"] for e in bper.values())
    bprobed = sum(e["probed"] for e in bper.values())
    lines += ["", f"Burst of one-block launches: plain {prate or 0:.0f}/s, block_sched {brate or 0:.0f}/s probed "
              f"launches ({bprobed} probed, {bres} results written, {bfinal['failed'] + bfinal['pending']} lost)"]
    return "\n".join(lines)


def selftest():
    out = "cost check fill 00ff\ninfo: cost kernel=fill launches=20 median_us=46.50 p90_us=50.00\ninfo: cost wall_s=1.5\n"
    medv, check, wall, _ = parse_app(out)
    ok = medv == {"fill": 46.5} and check == {"fill": "00ff"} and wall == 1.5
    evs = ("kernel t=1 pid=5 kid=1 mid=1 name=_Z6k_fillPiii ptx=1\n"
           "launch t=2 pid=5 kid=1 seq=1 probed=1\n"
           "result t=3 pid=5 kid=1 seq=1 records=8 disk=100 ns=2000\n"
           "probe t=4 pid=5 kid=1 seq=2 status=declined reason=no%20room\n"
           "stats t=5 pid=5 kid=1 launches=2 declined=1\n"
           "results t=6 pid=5 at=final pending=0 written=1 failed=0\n")
    per, final, lost = parse_events(evs)
    e = per.get("fill", {})
    ok &= e.get("probed") == 1 and e.get("results") == 1 and e.get("disk") == 100 and e.get("declined") == 1
    ok &= e.get("reasons") == {"no room"} and final["written"] == 1 and lost == 0
    print("app_cost selftest", "ok" if ok else "FAILED")
    return 0 if ok else 1


def main(argv):
    if argv == ["selftest"]:
        return selftest()
    if len(argv) != 2:
        print(__doc__)
        return 2
    print(summarise(argv[0], argv[1].split()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
