#!/usr/bin/env python3
"""Turns what bench/run.sh measured into the ratios of doc/performance.md.

  bench.py analyse WORKDIR   prints the results table (stdout)
  bench.py selftest          checks the arithmetic on synthetic data

WORKDIR holds:
  times.tsv        lines "metric<TAB>mode<TAB>iteration<TAB>seconds", mode is
                   plain or ntop (launch_loop: the app's own measured loop
                   time; torch: the whole process wall time)
  bs.<app>/        traces of `ntop record -p block_sched --every 2` runs with
                   NTOP_TIME_LAUNCHES=all
  jit.<app>/       further traces whose instrument events count (first launch)
Events are read from events.log (doc/events.md): `result ... seq ns` for
probed launches, `time ... seq ns` for the others, `instrument ... ms_*`.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
from check_trace import Trace, ival, read_events  # noqa: E402

TARGETS = {
    "unprobed": 1.02,
    "torch": 1.10,
    "instrument_ms": 10.0,
    "block_sched": 1.10,
    "block_sched_sgemm": 1.02,
}


def median(xs):
    return statistics.median(xs) if xs else None


def verdict(value, target):
    if value is None:
        return "n/a"
    return "meets" if value <= target else "MISSES"


def fmt(v, unit="x", digits=3):
    return "n/a" if v is None else f"{v:.{digits}f}{unit}"


def read_times(path):
    """{metric: {mode: [seconds...]}}"""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4:
                continue
            try:
                v = float(parts[3])
            except ValueError:
                continue
            out.setdefault(parts[0], {}).setdefault(parts[1], []).append(v)
    return out


def spread(xs):
    """'min-max' of a list, to show run-to-run noise beside a median."""
    return f"{min(xs):.4g}-{max(xs):.4g}" if xs else "n/a"


def ratio_of_medians(modes):
    p, n = median(modes.get("plain", [])), median(modes.get("ntop", []))
    if not p or n is None:
        return None, p, n
    return n / p, p, n


def block_sched_slowdowns(trace):
    """[(kernel name, probed median ns, unprobed median ns, n probed,
    n unprobed, ratio)] for every kernel with both kinds of launches. The
    first launch of each kernel (lazy loading, instrumentation) is left out."""
    rows = []
    for key, f in trace.kernels.items():
        probed = {r.get("seq"): ival(r, "ns") for r in trace.results.get(key, [])}
        timed = {t.get("seq"): ival(t, "ns") for t in trace.times.get(key, [])}
        seqs = [ival({"s": s}, "s", 0) for s in list(probed) + list(timed)]
        first = str(min(seqs)) if seqs else None
        p = [v for s, v in probed.items() if s != first and v]
        u = [v for s, v in timed.items() if s != first and s not in probed and v]
        if not p or not u:
            continue
        pm, um = median(p), median(u)
        rows.append((f.get("name", "?"), pm, um, len(p), len(u), pm / um if um else None))
    return sorted(rows)


def instrument_times(traces):
    """[(kernel, engine ms, jit ms)] from instrument status=ok events."""
    rows = []
    for tr in traces:
        for key, evs in tr.instrument.items():
            for e in evs:
                if e.get("status") != "ok":
                    continue
                eng = sum(float(e.get(k, 0) or 0) for k in ("ms_parse", "ms_prune", "ms_inject", "ms_emit"))
                jit = float(e.get("ms_jit", 0) or 0)
                name = tr.kernels.get(key, {}).get("name", "?")
                rows.append((name, eng, jit))
    return rows


def short(name, n=48):
    return name if len(name) <= n else name[: n - 3] + "..."


def analyse(work):
    times = read_times(os.path.join(work, "times.tsv"))
    print("| metric | measured | target | verdict | detail |")
    print("| --- | --- | --- | --- | --- |")
    ll = times.get("launch_loop", {})
    r, p, n = ratio_of_medians(ll)
    print(f"| unprobed launch overhead (launch_loop under ntop record / plain) | {fmt(r)} | "
          f"<= {TARGETS['unprobed']}x | {verdict(r, TARGETS['unprobed'])} | "
          f"median loop {fmt(p, ' s', 4)} plain (range {spread(ll.get('plain', []))}), "
          f"{fmt(n, ' s', 4)} ntop (range {spread(ll.get('ntop', []))}), "
          f"{len(ll.get('plain', []))}+{len(ll.get('ntop', []))} runs |")
    tt = times.get("torch", {})
    r, p, n = ratio_of_medians(tt)
    print(f"| torch_ops.py wall time under ntop record / plain | {fmt(r)} | <= {TARGETS['torch']}x | "
          f"{verdict(r, TARGETS['torch'])} | median {fmt(p, ' s', 2)} plain (range {spread(tt.get('plain', []))}), "
          f"{fmt(n, ' s', 2)} ntop (range {spread(tt.get('ntop', []))}) |")

    traces = []
    names = sorted(d for d in os.listdir(work) if os.path.isdir(os.path.join(work, d))) if os.path.isdir(work) else []
    for d in names:
        if d.startswith("bs.") or d.startswith("jit."):
            traces.append((d, Trace(read_events(os.path.join(work, d))[0])))
    ins = instrument_times([t for _, t in traces])
    eng = median([e for _, e, _ in ins])
    tot = median([e + j for _, e, j in ins])
    print(f"| first-launch instrumentation, engine only (median over {len(ins)} kernels) | "
          f"{fmt(eng, ' ms', 2)} | <= {TARGETS['instrument_ms']:g} ms | {verdict(eng, TARGETS['instrument_ms'])} | "
          f"max {fmt(max([e for _, e, _ in ins], default=None), ' ms', 2)} |")
    print(f"| first-launch instrumentation, engine + JIT (median) | {fmt(tot, ' ms', 2)} | "
          f"<= {TARGETS['instrument_ms']:g} ms | {verdict(tot, TARGETS['instrument_ms'])} | "
          f"max {fmt(max([e + j for _, e, j in ins], default=None), ' ms', 2)} |")
    for d, tr in traces:
        if not d.startswith("bs."):
            continue
        rows = block_sched_slowdowns(tr)
        if not rows:
            print(f"| block_sched slowdown, {d[3:]} | n/a | | n/a | no kernel with both probed and timed launches |")
        for name, pm, um, np_, nu, rr in rows:
            target = TARGETS["block_sched_sgemm"] if "sgemm" in name else TARGETS["block_sched"]
            print(f"| block_sched slowdown, {d[3:]}: `{short(name)}` | {fmt(rr)} | <= {target}x | "
                  f"{verdict(rr, target)} | median {pm / 1e3:.1f} us probed ({np_}), {um / 1e3:.1f} us unprobed ({nu}) |")
    if ins:
        print()
        print("Instrumentation per kernel (ms): engine, JIT")
        for name, e, j in sorted(ins):
            print(f"  {e:8.2f} {j:8.2f}  {short(name, 90)}")
    return 0


def selftest():
    import tempfile
    fails = 0

    def expect(cond, what):
        nonlocal fails
        if not cond:
            fails += 1
            print(f"selftest FAIL: {what}")

    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "times.tsv"), "w") as f:
            f.write("launch_loop\tplain\t1\t1.0\nlaunch_loop\tntop\t1\t1.01\n"
                    "launch_loop\tplain\t2\t1.2\nlaunch_loop\tntop\t2\t5\nlaunch_loop\tplain\t3\t0.9\n"
                    "launch_loop\tntop\t3\t1.03\nbad line\n")
        t = read_times(os.path.join(d, "times.tsv"))
        r, p, n = ratio_of_medians(t["launch_loop"])
        expect(p == 1.0 and n == 1.03 and abs(r - 1.03) < 1e-9, f"medians {r} {p} {n}")
        os.makedirs(os.path.join(d, "bs.fill"))
        ev = ["kernel t=1 pid=5 kid=1 mid=1 name=fill ptx=1",
              "instrument t=2 pid=5 kid=1 status=ok ms_parse=1 ms_prune=0.5 ms_inject=0.25 ms_emit=0.25 ms_jit=20"]
        # seq 1 first (left out); probed 2,4,6 at 110 ns; unprobed 3,5,7 at 100 ns.
        ev.append("result t=3 pid=5 kid=1 seq=1 ns=900000 records=1 dropped=0")
        for s in range(2, 8):
            typ = "result" if s % 2 == 0 else "time"
            ev.append(f"{typ} t=4 pid=5 kid=1 seq={s} ns={110 if s % 2 == 0 else 100}")
        ev.append("time t=5 pid=5 kid=1 seq=2 ns=111")  # timing of a probed launch: ignored
        with open(os.path.join(d, "bs.fill", "events.log"), "w") as f:
            f.write("\n".join(ev) + "\n")
        tr = Trace(read_events(os.path.join(d, "bs.fill"))[0])
        rows = block_sched_slowdowns(tr)
        expect(len(rows) == 1 and rows[0][3:5] == (3, 3) and abs(rows[0][5] - 1.1) < 1e-9, f"slowdown {rows}")
        ins = instrument_times([tr])
        expect(ins == [("fill", 2.0, 20.0)], f"instrument {ins}")
        expect(verdict(1.02, 1.02) == "meets" and verdict(1.03, 1.02) == "MISSES", "verdict")
    print("selftest", "FAILED" if fails else "ok")
    return 1 if fails else 0


def main(argv):
    if len(argv) == 2 and argv[0] == "analyse":
        return analyse(argv[1])
    if argv == ["selftest"]:
        return selftest()
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
