#!/usr/bin/env python3
"""Turns what bench/dmat.sh measured into the dmat slowdown table.

  dmat.py analyse WORKDIR   prints the tables (stdout)
  dmat.py sizes TRACEDIR    writes TRACEDIR/ntr_sizes.tsv (result file sizes,
                            so dmat.sh can delete the big result files early)
  dmat.py selftest          checks the arithmetic on synthetic events

WORKDIR holds (bench/dmat.sh writes them):
  times.tsv            "app<TAB>mode<TAB>run<TAB>exit status<TAB>wall seconds"
                       per process run (plain: the app alone)
  <mode>.<app>.<run>/  trace directories, mode one of
                       timed     `ntop record` without probes: unprobed durations
                       dmat      `ntop record -p dmat` (dmat@<bytes> with a map
                                 budget other than the hook's default)
                       bs        `ntop record -p block_sched` (reference)
                       all with NTOP_TIME_LAUNCHES=all.
Per kernel: unprobed durations from `time ... ns` events of the timed runs,
probed durations from `result ... ns` of the dmat and bs runs; the first
launch of a kernel in each process is left out (lazy loading, cold caches)
unless it is the only one (then it is used and marked *). records, dropped
and map bytes come from the result events; bytes on disk from the result
files (or ntr_sizes.tsv). What happened to each kernel under dmat: probed,
declined (probe events, with the reason), instrumentation failed, no PTX,
sampled (any key with "sampl" in its name on result, probe or launch
events: the hook's block sampling, when it lands), never launched.
"""
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "gpu"))
from check_trace import Trace, ival, read_events  # noqa: E402

TARGET = 3.0  # dmat slowdown target (probed / unprobed kernel time)
SIZES = "ntr_sizes.tsv"


def median(xs):
    return statistics.median(xs) if xs else None


def short_name(name, n=40):
    """'_Z10lm_vec_addPKfS0_Pfi' -> 'lm_vec_add'; others shortened."""
    m = re.match(r"_Z(?:N\d*)?(\d+)", name or "")
    if m:
        k = int(m.group(1))
        ident = name[m.end():m.end() + k]
        if len(ident) == k:
            return ident
    name = name or "?"
    return name if len(name) <= n else name[: n - 3] + "..."


def us(ns):
    return "n/a" if ns is None else f"{ns / 1e3:.1f}"


def ratio(a, b):
    return a / b if a is not None and b else None


def fx(v):
    return "n/a" if v is None else f"{v:.2f}x"


# --------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------


def read_times(path):
    """{(app, mode): [(run, rc, seconds)]}"""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) != 5:
                continue
            try:
                out.setdefault((p[0], p[1]), []).append((p[2], int(p[3]), float(p[4])))
            except ValueError:
                continue
    return out


def read_sizes(trace_dir):
    """{relative result path: bytes} from ntr_sizes.tsv, else from the files."""
    sizes = {}
    p = os.path.join(trace_dir, SIZES)
    if os.path.exists(p):
        with open(p) as f:
            for line in f:
                name, _, n = line.rstrip("\n").partition("\t")
                if n.isdigit():
                    sizes[name] = int(n)
        return sizes
    rdir = os.path.join(trace_dir, "results")
    if os.path.isdir(rdir):
        for fn in os.listdir(rdir):
            if fn.endswith(".ntr"):
                sizes["results/" + fn] = os.path.getsize(os.path.join(rdir, fn))
    return sizes


def write_sizes(trace_dir):
    sizes = read_sizes(trace_dir) if not os.path.exists(os.path.join(trace_dir, SIZES)) else {}
    with open(os.path.join(trace_dir, SIZES), "w") as f:
        for name, n in sorted(sizes.items()):
            f.write(f"{name}\t{n}\n")
    return len(sizes)


def sampled_keys(fields):
    return [f"{k}={v}" for k, v in fields.items() if "sampl" in k]


class KernelRun:
    """What one trace says about one kernel (by name), all processes merged."""

    def __init__(self):
        self.unprobed = []   # ns, first launch left out
        self.probed = []     # ns, first launch left out
        self.first_unprobed = []
        self.first_probed = []
        self.records = []    # per probed launch
        self.dropped = []
        self.map_bytes = []
        self.file_bytes = 0
        self.records_on_disk = 0  # records of launches whose file size is known
        self.outcomes = {}   # reason with numbers blanked -> [first text, count]
        self.ptx = None

    def note(self, text):
        key = re.sub(r"\d+", "N", text)
        o = self.outcomes.setdefault(key, [text, 0])
        o[1] += 1


def trace_kernels(trace_dir):
    """{kernel name: KernelRun} of one trace directory."""
    tr = Trace(read_events(trace_dir)[0])
    sizes = read_sizes(trace_dir)
    out = {}
    for key, kf in tr.kernels.items():
        name = kf.get("name") or f"kid{key[1]}"
        kr = out.setdefault(name, KernelRun())
        if kf.get("ptx") == "0":
            kr.note("no PTX" + (f" ({kf['reason']})" if kf.get("reason") else ""))
            kr.ptx = False
        seqs = [ival(f, "seq", 0) for evs in (tr.launches.get(key, []), tr.times.get(key, []),
                                             tr.results.get(key, [])) for f in evs if ival(f, "seq")]
        first = min(seqs) if seqs else None
        probed_seqs = {ival(r, "seq") for r in tr.results.get(key, [])}
        for t in tr.times.get(key, []):
            s = ival(t, "seq")
            if s in probed_seqs or not ival(t, "ns"):
                continue
            (kr.first_unprobed if s == first else kr.unprobed).append(ival(t, "ns"))
        for r in tr.results.get(key, []):
            s = ival(r, "seq")
            if ival(r, "ns"):
                (kr.first_probed if s == first else kr.probed).append(ival(r, "ns"))
            kr.records.append(ival(r, "records", 0))
            kr.dropped.append(ival(r, "dropped", 0))
            kr.map_bytes.append(ival(r, "bytes", 0))
            fb = sizes.get(r.get("file", ""))
            if fb is not None:
                kr.file_bytes += fb
                kr.records_on_disk += ival(r, "records", 0)
            for s_ in sampled_keys(r):
                kr.note("sampled " + s_)
        if tr.results.get(key):
            kr.note("probed")
        for ins in tr.instrument.get(key, []):
            if ins.get("status") != "ok":
                kr.note(f"instrument {ins.get('status')}: {ins.get('reason', '')}")
        for d in tr.declined.get(key, []):
            kr.note(f"declined: {d.get('reason', '')}")
            for s_ in sampled_keys(d):
                kr.note("sampled " + s_)
        for la in tr.launches.get(key, []):
            for s_ in sampled_keys(la):
                kr.note("sampled " + s_)
    return out


# --------------------------------------------------------------------------
# aggregation
# --------------------------------------------------------------------------


def collect(work):
    """{(mode, app): {kernel: [KernelRun per run]}} over the trace dirs."""
    runs = {}
    if not os.path.isdir(work):
        return runs
    for d in sorted(os.listdir(work)):
        path = os.path.join(work, d)
        parts = d.split(".")
        if not os.path.isdir(path) or len(parts) != 3 or parts[0] == "plain":
            continue
        mode, app = parts[0], parts[1]
        for name, kr in trace_kernels(path).items():
            runs.setdefault((mode, app), {}).setdefault(name, []).append(kr)
    return runs


def durations(krs, probed):
    """(median ns, used only first launches, n)."""
    vals = [v for k in krs for v in (k.probed if probed else k.unprobed)]
    if vals:
        return median(vals), False, len(vals)
    vals = [v for k in krs for v in (k.first_probed if probed else k.first_unprobed)]
    return median(vals), bool(vals), len(vals)


def cell(med, first, n):
    return "n/a" if med is None else f"{us(med)}{'*' if first else ''} ({n})"


def summarize(runs, dmat_mode):
    """Rows [(app, kernel, plain, dmat, bs, slowdown, bs slowdown, krs)]."""
    apps = sorted({a for (m, a) in runs})
    rows = []
    for app in apps:
        names = set()
        for m in ("timed", dmat_mode, "bs"):
            names |= set(runs.get((m, app), {}))
        for name in sorted(names, key=short_name):
            plain = durations(runs.get(("timed", app), {}).get(name, []), False)
            dm_krs = runs.get((dmat_mode, app), {}).get(name, [])
            dm = durations(dm_krs, True)
            bs = durations(runs.get(("bs", app), {}).get(name, []), True)
            rows.append((app, name, plain, dm, bs, ratio(dm[0], plain[0]), ratio(bs[0], plain[0]), dm_krs))
    return rows


def outcome(krs):
    if not krs:
        return "not launched in dmat runs"
    o = {}
    for k in krs:
        for key, (text, n) in k.outcomes.items():
            o.setdefault(key, [text, 0])[1] += n
    if not o:
        return "launched, never probed (no result, no reason: limit reached?)"
    # "probed" counts result events: say it once; others with their count
    return "; ".join(text if key == "probed" else f"{text}{f' (x{n})' if n > 1 else ''}"
                     for key, (text, n) in sorted(o.items()))


def analyse(work):
    times = read_times(os.path.join(work, "times.tsv"))
    runs = collect(work)
    dmat_modes = sorted({m for (m, _) in runs if m.startswith("dmat")} |
                        {m for (_, m) in times if m.startswith("dmat")})
    if not dmat_modes:
        print("no dmat runs found in", work)
        dmat_modes = ["dmat"]
    over = []
    for mode in dmat_modes:
        rows = summarize(runs, mode)
        print(f"## {mode}: kernel durations (us, median (launches)); slowdown = probed / unprobed")
        print("| app | kernel | plain | dmat | slowdown | block_sched | bs slowdown | records/launch | "
              "dropped/launch | B on disk/access | what happened |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        tot_bytes = tot_recs = 0
        for app, name, plain, dm, bs, sd, bsd, krs in rows:
            recs = median([r for k in krs for r in k.records])
            drop = median([r for k in krs for r in k.dropped])
            fb = sum(k.file_bytes for k in krs)
            rd = sum(k.records_on_disk for k in krs)
            tot_bytes += fb
            tot_recs += rd
            bpa = f"{fb / rd:.2f}" if rd else "n/a"
            print(f"| {app} | `{short_name(name)}` | {cell(*plain)} | {cell(*dm)} | {fx(sd)} | {cell(*bs)} | "
                  f"{fx(bsd)} | {'n/a' if recs is None else int(recs)} | {'n/a' if drop is None else int(drop)} | "
                  f"{bpa} | {outcome(krs)} |")
            if sd is not None and sd > TARGET:
                over.append((mode, app, name, sd))
        print()
        allb = f"{tot_bytes / tot_recs:.2f} bytes per recorded access ({tot_bytes} bytes, {tot_recs} records)" \
            if tot_recs else "n/a (no records)"
        print(f"{mode}: trace bytes on disk over all kernels: {allb}")
        print()
    print("## app wall time (s, median of runs; exit status != 0 counted apart)")
    modes = ["plain", "timed"] + dmat_modes + ["bs"]
    print("| app | " + " | ".join(modes) + " | " + " | ".join(f"{m} - plain" for m in dmat_modes) + " |")
    print("| --- " * (1 + len(modes) + len(dmat_modes)) + "|")
    for app in sorted({a for (a, _) in times}):
        meds = {}
        cells = []
        for m in modes:
            ok = [s for _, rc, s in times.get((app, m), []) if rc == 0]
            bad = len(times.get((app, m), [])) - len(ok)
            meds[m] = median(ok)
            cells.append(("n/a" if meds[m] is None else f"{meds[m]:.2f}") + (f" ({bad} failed)" if bad else ""))
        waits = [("n/a" if meds[m] is None or meds["plain"] is None else f"{meds[m] - meds['plain']:+.2f}")
                 for m in dmat_modes]
        print(f"| {app} | " + " | ".join(cells) + " | " + " | ".join(waits) + " |")
    print()
    print("* = only first launches measured (the kernel ran once per process): cold, not comparable")
    if over:
        for mode, app, name, sd in over:
            print(f"OVER TARGET ({mode}): {app} {short_name(name)} {sd:.2f}x > {TARGET:g}x")
    else:
        print(f"no measured kernel over the {TARGET:g}x target")
    return 0


# --------------------------------------------------------------------------
# selftest
# --------------------------------------------------------------------------


def selftest():
    import tempfile
    fails = 0

    def expect(cond, what):
        nonlocal fails
        if not cond:
            fails += 1
            print(f"dmat selftest FAIL: {what}")

    def trace(d, lines, results=None):
        os.makedirs(os.path.join(d, "results"))
        with open(os.path.join(d, "events.log"), "w") as f:
            f.write("\n".join(lines) + "\n")
        for name, n in (results or {}).items():
            with open(os.path.join(d, "results", name), "wb") as f:
                f.write(b"\0" * n)

    k1 = "kernel t=1 pid=5 kid=1 mid=1 name=_Z4copyPf ptx=1"
    k2 = "kernel t=1 pid=5 kid=2 mid=1 name=_Z3bigPf ptx=1"
    k3 = "kernel t=1 pid=5 kid=3 mid=1 name=sass_k ptx=0 reason=SASS%20only"
    with tempfile.TemporaryDirectory() as w:
        with open(os.path.join(w, "times.tsv"), "w") as f:
            f.write("app\tplain\t1\t0\t1.0\napp\tdmat\t1\t0\t3.5\napp\tdmat\t2\t1\t9\napp\ttimed\t1\t0\t1.2\nbad\n")
        # timed: copy seq 1 (first, left out) 500, 2..4 at 100; big once at 50 (first only)
        trace(os.path.join(w, "timed.app.1"), [k1, k2, k3,
              "launch t=2 pid=5 kid=1 seq=1 grid=1,1,1 block=32,1,1", "time t=2 pid=5 kid=1 seq=1 ns=500",
              "time t=2 pid=5 kid=1 seq=2 ns=100", "time t=2 pid=5 kid=1 seq=3 ns=100",
              "time t=2 pid=5 kid=1 seq=4 ns=120", "launch t=2 pid=5 kid=2 seq=5 grid=1,1,1 block=32,1,1",
              "time t=2 pid=5 kid=2 seq=5 ns=50", "time t=2 pid=5 kid=3 seq=6 ns=7"])
        # dmat: copy probed 1..3 at 1000 (seq 1 left out: 9999), big declined,
        # sass_k unprobeable; two files of 600 bytes for 2x100 records
        trace(os.path.join(w, "dmat.app.1"), [k1, k2, k3,
              "launch t=2 pid=5 kid=1 seq=1 grid=1,1,1 block=32,1,1 probed=1",
              "result t=3 pid=5 kid=1 seq=1 file=results/5-1.ntr maps=1 records=100 dropped=0 bytes=4096 ns=9999",
              "result t=3 pid=5 kid=1 seq=2 file=results/5-2.ntr maps=1 records=100 dropped=4 bytes=4096 ns=1000",
              "result t=3 pid=5 kid=1 seq=3 file=results/5-3.ntr maps=1 records=100 dropped=4 bytes=4096 ns=1000 "
              "sampled_blocks=8",
              "probe t=4 pid=5 kid=2 seq=5 status=declined reason=map%20budget%20exhausted",
              "instrument t=4 pid=5 kid=3 status=failed reason=no%20PTX"],
              {"5-1.ntr": 600, "5-2.ntr": 600})
        rows = summarize(collect(w), "dmat")
        by = {short_name(r[1]): r for r in rows}
        expect(set(by) == {"copy", "big", "sass_k"}, f"kernels {sorted(by)}")
        c = by.get("copy")
        expect(c and c[2] == (100, False, 3) and c[3] == (1000, False, 2) and abs(c[5] - 10) < 1e-9,
               f"copy row {c and c[2:6]}")
        b = by.get("big")
        expect(b and b[2] == (50, True, 1) and b[3][0] is None and b[5] is None, f"big row {b and b[2:6]}")
        expect(b and "declined: map budget exhausted" in outcome(b[7]), f"big outcome {b and outcome(b[7])}")
        expect(c and "sampled sampled_blocks=8" in outcome(c[7]) and "probed" in outcome(c[7]),
               f"copy outcome {c and outcome(c[7])}")
        s = by.get("sass_k")
        expect(s and "no PTX (SASS only)" in outcome(s[7]), f"sass outcome {s and outcome(s[7])}")
        krs = c[7] if c else []
        expect(sum(k.file_bytes for k in krs) == 1200 and sum(k.records_on_disk for k in krs) == 200,
               "bytes on disk")
        expect(write_sizes(os.path.join(w, "dmat.app.1")) == 2, "sizes written")
        os.remove(os.path.join(w, "dmat.app.1", "results", "5-1.ntr"))
        expect(read_sizes(os.path.join(w, "dmat.app.1")).get("results/5-1.ntr") == 600, "sizes kept")
        t = read_times(os.path.join(w, "times.tsv"))
        expect(t.get(("app", "dmat")) == [("1", 0, 3.5), ("2", 1, 9.0)], f"times {t}")
        expect(short_name("_Z10lm_vec_addPKfS0_Pfi") == "lm_vec_add" and short_name("triton_k") == "triton_k",
               "short_name")
        import contextlib
        import io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            analyse(w)
        text = buf.getvalue()
        expect("OVER TARGET (dmat): app copy 10.00x" in text, "over-target line")
        expect("6.00 bytes per recorded access" in text, "bytes per access over all")
        expect("| app | 1.00 | 1.20 | 3.50 (1 failed) | n/a | +2.50 |" in text, "wall row:\n" + text)
    print("dmat selftest", "FAILED" if fails else "ok")
    return 1 if fails else 0


def main(argv):
    if len(argv) == 2 and argv[0] == "analyse":
        return analyse(argv[1])
    if len(argv) == 2 and argv[0] == "sizes":
        write_sizes(argv[1])
        return 0
    if argv == ["selftest"]:
        return selftest()
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
