#!/usr/bin/env python3
"""DMAT accuracy check (NEUTRINO's Table 2, for ntop): does the dmat probe
record exactly the global memory accesses a kernel makes?

examples/cuda/patterns.cu knows every access of its kernels in advance and
writes them with --dump-expected (CSV: kernel,block,thread,k,addr,bytes,kind,
k = the access's index in the thread's program order). `ntop export DIR -k
KERNEL --view records` writes what the dmat map kept (CSV:
block,thread,unit,slot,addr,clock,sizekind; sizekind = bytes | kind << 24).
This script compares the two per kernel (tests/gpu/dmat_accuracy.sh runs it
on the GPU machine).

Sub-commands:
  check --expected EXP.csv --records-dir DIR [--report REPORT.json]
        [--cap 64] [--kernels a,b,...] [--examples 3]
      DIR holds KERNEL.csv for each kernel of EXP.csv. Prints one PASS/FAIL
      line per check and kernel, then a table row per kernel. Exit 0 = no FAIL.
  selftest
      checks the comparison on synthetic CSVs (no GPU).

Checks, per kernel (expected = the first CAP accesses of each thread, the
probe keeps no more):
  records    the records CSV exists and parses
  threads    threads with records == threads that access memory (threads
             guarded off, e.g. past n, must have none)
  addresses  per thread, the multiset of recorded addresses == expected
  order      per thread, the recorded address sequence == expected order
  sizes      per access, recorded bytes == expected
  kinds      per access, recorded kind == expected (1 load, 2 store,
             3 atomic, 4 async load, 5 async store)
  slots      each thread's slots run 0, 1, 2, ... in the file
  clock      per thread, the 32-bit SM clock never goes back; one wrap past
             2^32 is allowed (a forward step of less than 2^31 cycles)
  cap        threads with more than CAP accesses kept exactly CAP records
             (only for kernels that have such threads)
  dropped    records_dropped of the kernel's last probed launch in `ntop
             report --json` == sum over threads of max(0, accesses - CAP)
"""
import collections
import json
import os
import sys
import tempfile

CAP_DEFAULT = 64
WRAP = 1 << 32
HALF = 1 << 31
KIND_NAMES = {1: "load", 2: "store", 3: "atomic", 4: "async load", 5: "async store"}


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------


def read_expected(path):
    """Yields (kernel, {(block, thread): [(addr, bytes, kind), ...]}) per
    kernel, streaming: the file is written kernel after kernel."""
    kernel, threads, k_next = None, {}, {}
    with open(path) as f:
        head = f.readline().strip().split(",")
        want = ["kernel", "block", "thread", "k", "addr", "bytes", "kind"]
        if head != want:
            raise ValueError(f"{path}: header {head}, want {want}")
        for n, line in enumerate(f, 2):
            p = line.rstrip("\n").split(",")
            if len(p) != 7:
                raise ValueError(f"{path}:{n}: {len(p)} fields, want 7")
            if p[0] != kernel:
                if kernel is not None:
                    yield kernel, threads
                kernel, threads, k_next = p[0], {}, {}
            key = (int(p[1]), int(p[2]))
            k = int(p[3])
            if k != k_next.get(key, 0):
                raise ValueError(f"{path}:{n}: thread {key} access {k} out of order")
            k_next[key] = k + 1
            threads.setdefault(key, []).append((int(p[4], 0), int(p[5]), int(p[6])))
    if kernel is not None:
        yield kernel, threads


def read_records(path):
    """{(block, thread): [(slot, addr, bytes, kind, clock), ...]} in file order."""
    out = {}
    with open(path) as f:
        head = f.readline().strip().split(",")
        try:
            ib, it, isl, ia, ic, isk = (head.index(c) for c in ("block", "thread", "slot", "addr", "clock", "sizekind"))
        except ValueError:
            raise ValueError(f"{path}: header {head} lacks block,thread,slot,addr,clock,sizekind")
        for n, line in enumerate(f, 2):
            p = line.rstrip("\n").split(",")
            if len(p) != len(head):
                raise ValueError(f"{path}:{n}: {len(p)} fields, want {len(head)}")
            sk = int(p[isk])
            out.setdefault((int(p[ib]), int(p[it])), []).append(
                (int(p[isl]), int(p[ia], 0), sk & 0xFFFFFF, sk >> 24, int(p[ic])))
    return out


def kernel_matches(entry, kernel):
    """A report kernel entry is `kernel` when its mangled or demangled name
    is it (extern "C"), or its demangled name before the argument list is it,
    possibly inside a namespace."""
    name = entry.get("name") or ""
    dem = entry.get("demangled") or ""
    base = dem.split("(")[0].strip()
    return kernel in (name, dem, base) or base.endswith("::" + kernel) or (
        not dem and f"{len(kernel)}{kernel}" in name)


def report_dropped(doc, kernel):
    """(records_dropped of the kernel's last probed launch, launches) or
    (None, 0) when the report has none."""
    last, n = None, 0
    for proc in doc.get("processes") or []:
        for k in proc.get("kernels") or []:
            if not kernel_matches(k, kernel):
                continue
            for pl in k.get("probed_launches") or []:
                n += 1
                last = pl.get("records_dropped")
    return last, n


# --------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------


def clock_problem(clocks):
    """None when the clocks never go back (one wrap allowed), else why."""
    wraps = 0
    for a, b in zip(clocks, clocks[1:]):
        if (b - a) % WRAP >= HALF:
            return f"clock went back from {a} to {b}"
        if b < a:
            wraps += 1
    return None if wraps <= 1 else f"clock wrapped {wraps} times"


class Result:
    def __init__(self, kernel):
        self.kernel = kernel
        self.lines = []   # (status, check, detail)
        self.row = None

    def add(self, ok, check, detail):
        self.lines.append(("PASS" if ok else "FAIL", check, detail))

    def status(self, check):
        return next((s for s, c, _ in self.lines if c == check), None)

    def failed(self):
        return [c for s, c, _ in self.lines if s == "FAIL"]


def multiset_common(a, b):
    return sum((collections.Counter(a) & collections.Counter(b)).values())


def compare_kernel(kernel, exp, rec, cap, dropped_rec, n_examples=3):
    """Runs every check of one kernel: exp as read_expected gives it, rec as
    read_records does, dropped_rec from the report (None: not known)."""
    r = Result(kernel)
    kept = {t: a[:cap] for t, a in exp.items()}
    n_exp = sum(len(a) for a in kept.values())
    n_rec = sum(len(a) for a in rec.values())
    drop_exp = sum(max(0, len(a) - cap) for a in exp.values())
    examples = collections.defaultdict(list)

    def note(check, msg):
        if len(examples[check]) < n_examples:
            examples[check].append(msg)

    extra = sorted(set(rec) - set(kept))
    missing = sorted(set(kept) - set(rec))
    for t in extra[:n_examples]:
        note("threads", f"block {t[0]} thread {t[1]} has {len(rec[t])} records, expected none")
    for t in missing[:n_examples]:
        note("threads", f"block {t[0]} thread {t[1]} has no records, expected {len(kept[t])}")
    bad = collections.Counter()
    matched = 0
    # Threads on one side only fail "threads" alone; the per-thread checks
    # below look at the threads on both sides.
    for t in sorted(set(kept) & set(rec)):
        e = kept[t]
        g = rec[t]
        where = f"block {t[0]} thread {t[1]}"
        if [x[0] for x in g] != list(range(len(g))):
            bad["slots"] += 1
            note("slots", f"{where}: slots {[x[0] for x in g][:8]}")
        why = clock_problem([x[4] for x in g])
        if why:
            bad["clock"] += 1
            note("clock", f"{where}: {why}")
        got = [x[1:4] for x in g]
        if got == e:  # the common case, and the fast path
            matched += len(e)
            continue
        matched += multiset_common(e, got)
        ea, ga = [x[0] for x in e], [x[1] for x in g]
        if collections.Counter(ea) != collections.Counter(ga):
            bad["addresses"] += 1
            only_e = sorted(set(ea) - set(ga))[:3]
            only_g = sorted(set(ga) - set(ea))[:3]
            note("addresses", f"{where}: {len(ga)} recorded, {len(ea)} expected; missing "
                 f"{[hex(a) for a in only_e]}, unexpected {[hex(a) for a in only_g]}")
        if ea != ga:
            bad["order"] += 1
            i = next((i for i, (x, y) in enumerate(zip(ea, ga)) if x != y), min(len(ea), len(ga)))
            note("order", f"{where}: access {i} expected "
                 f"{hex(ea[i]) if i < len(ea) else 'none'}, recorded {hex(ga[i]) if i < len(ga) else 'none'}")
        # Sizes and kinds per access: by position when the order is right,
        # else by address, over the addresses both sides have (a wrong
        # address is the address check's failure, not this one's).
        both = set(ea) & set(ga)
        for check, col in (("sizes", 1), ("kinds", 2)):
            if ea == ga:
                diff = [(i, x[col], y[col + 1]) for i, (x, y) in enumerate(zip(e, g)) if x[col] != y[col + 1]]
            else:
                es = collections.Counter((x[0], x[col]) for x in e if x[0] in both)
                gs = collections.Counter((y[1], y[col + 1]) for y in g if y[1] in both)
                diff = [(hex(a), v, None) for (a, v) in (es - gs)]
            if diff:
                bad[check] += 1
                i, want, have = diff[0]
                if check == "kinds":
                    want, have = (KIND_NAMES.get(v, v) for v in (want, have))
                note(check, f"{where}: access {i}: expected {want}, recorded {have}")
        if len(exp.get(t, [])) > cap and len(g) != cap:
            bad["cap"] += 1
            note("cap", f"{where}: {len(g)} records kept, expected {cap} of {len(exp[t])} accesses")

    def line(check, n_bad, what):
        detail = f"{what}" if not n_bad else f"{n_bad} threads wrong: " + "; ".join(examples[check])
        r.add(n_bad == 0, check, detail)

    r.add(True, "records", f"{n_rec} records of {len(rec)} threads")
    n_thr = len(extra) + len(missing)
    r.add(n_thr == 0, "threads", f"{len(kept)} threads access memory, {len(rec)} have records" +
          ("" if not n_thr else f" ({len(extra)} unexpected, {len(missing)} missing): " + "; ".join(examples["threads"])))
    line("addresses", bad["addresses"], f"{n_exp} addresses as expected")
    line("order", bad["order"], "every thread in program order")
    line("sizes", bad["sizes"], "sizes as expected")
    line("kinds", bad["kinds"], "kinds as expected")
    line("slots", bad["slots"], "slots contiguous from 0")
    line("clock", bad["clock"], "clocks non-decreasing per thread")
    over = sum(1 for a in exp.values() if len(a) > cap)
    if over:
        line("cap", bad["cap"], f"{over} threads over the cap kept {cap} records each")
    if dropped_rec is None:
        r.lines.append(("SKIP", "dropped", f"no report value (expected {drop_exp})"))
    else:
        r.add(dropped_rec == drop_exp, "dropped", f"report says {dropped_rec}, expected {drop_exp}")
    denom = max(n_exp, n_rec)
    pct = 100.0 * matched / denom if denom else 100.0
    r.row = {"kernel": kernel, "threads": len(kept), "expected": n_exp, "recorded": n_rec,
             "match": pct, "order": r.status("order") == "PASS", "clock": r.status("clock") == "PASS",
             "dropped_exp": drop_exp, "dropped_rec": dropped_rec}
    return r


def missing_kernel(kernel, why):
    r = Result(kernel)
    r.add(False, "records", why)
    r.row = {"kernel": kernel, "threads": None, "expected": None, "recorded": None, "match": None,
             "order": False, "clock": False, "dropped_exp": None, "dropped_rec": None}
    return r


def table(rows):
    head = ("kernel", "threads", "acc.expected", "acc.recorded", "exact%", "order", "clock", "dropped exp/rec")
    out = [head]
    for w in rows:
        def v(x):
            return "-" if x is None else str(x)
        out.append((w["kernel"], v(w["threads"]), v(w["expected"]), v(w["recorded"]),
                    "-" if w["match"] is None else f"{w['match']:.2f}", "ok" if w["order"] else "BAD",
                    "ok" if w["clock"] else "BAD", f"{v(w['dropped_exp'])}/{v(w['dropped_rec'])}"))
    width = [max(len(r[i]) for r in out) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(width[i]) if i == 0 else c.rjust(width[i]) for i, c in enumerate(r))
                     for r in out)


def check(expected, records_dir, report, cap, kernels, n_examples=3, out=print, sampled=1):
    """Runs every kernel; returns the list of Results (printing as it goes).
    sampled=N: the trace was recorded with block sampling 1 in N (ntop
    record --sample-blocks N), so only blocks whose index is a multiple of N
    are expected to have records."""
    doc = None
    if report:
        with open(report) as f:
            doc = json.load(f)
    results, seen = [], set()
    for kernel, exp in read_expected(expected):
        if kernels and kernel not in kernels:
            continue
        seen.add(kernel)
        if sampled > 1:
            exp = {key: v for key, v in exp.items() if key[0] % sampled == 0}
        path = os.path.join(records_dir, kernel + ".csv")
        try:
            rec = read_records(path)
        except (OSError, ValueError) as e:
            results.append(missing_kernel(kernel, f"cannot read the records: {e}"))
        else:
            dropped, launches = (None, 0) if doc is None else report_dropped(doc, kernel)
            r = compare_kernel(kernel, exp, rec, cap, dropped, n_examples)
            if doc is not None and launches != 1:
                r.add(False, "launches", f"{launches} probed launches in the report, want 1")
            results.append(r)
        for status, c, detail in results[-1].lines:
            out(f"{status} {kernel} {c}: {detail}")
    for k in sorted(set(kernels or []) - seen):
        results.append(missing_kernel(k, "not in the expected accesses file"))
        out(f"FAIL {k} records: not in the expected accesses file")
    return results


# --------------------------------------------------------------------------
# Self-test
# --------------------------------------------------------------------------


def _write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def _synth(cap=4):
    """Expected accesses of two kernels and matching records (lists of CSV
    lines): 'lin' with 2 accesses per thread, thread (1,3) guarded off;
    'many' with thread (0,0) doing cap + 3 accesses."""
    exp = ["kernel,block,thread,k,addr,bytes,kind"]
    rec = {"lin": ["block,thread,unit,slot,addr,clock,sizekind"],
           "many": ["block,thread,unit,slot,addr,clock,sizekind"]}
    for b in range(2):
        for t in range(4):
            if (b, t) == (1, 3):
                continue
            for k, (a, n, kind) in enumerate([(0x1000 + 4 * (4 * b + t), 4, 1), (0x9000 + 4 * (4 * b + t), 4, 2)]):
                exp.append(f"lin,{b},{t},{k},{hex(a)},{n},{kind}")
                clock = 0xFFFFFFF8 + 16 * k if (b, t) == (0, 1) else 500 + 7 * k
                rec["lin"].append(f"{b},{t},{4 * b + t},{k},{hex(a)},{clock % WRAP},{n | kind << 24}")
    for t in range(2):
        n_acc = cap + 3 if t == 0 else 2
        for k in range(n_acc):
            a, n, kind = 0x20000 + 64 * t + 16 * k, 16 if k % 2 else 8, 3 if k == 1 else 1
            exp.append(f"many,0,{t},{k},{hex(a)},{n},{kind}")
            if k < cap:
                rec["many"].append(f"0,{t},{t},{k},{hex(a)},{100 + k},{n | kind << 24}")
    return exp, rec


def _report(dropped_many, dropped_lin=0):
    return {"processes": [{"kernels": [
        {"name": "_Z3linPKfPf", "demangled": "lin(const float*, float*)",
         "probed_launches": [{"records_dropped": dropped_lin}]},
        {"name": "many", "demangled": None, "probed_launches": [{"records_dropped": dropped_many}]},
        {"name": "_Z4lintv", "demangled": "lint()", "probed_launches": [{"records_dropped": 99}]}]}]}


def selftest():
    fails = 0

    def expect(cond, what):
        nonlocal fails
        if not cond:
            fails += 1
            print(f"selftest FAIL: {what}")

    cap = 4
    expect(clock_problem([1, 2, 2, 5]) is None, "rising clocks")
    expect(clock_problem([WRAP - 5, 3, 9]) is None, "one wrap is allowed")
    expect(clock_problem([10, 9]) is not None, "a clock going back")
    expect(clock_problem([10, 10 + HALF]) is not None, "a forward jump of 2^31 is a step back")
    expect(clock_problem([WRAP - 5, 3, WRAP - 2, 1]) is not None, "two wraps (the second a step back)")
    doc = _report(3)
    expect(report_dropped(doc, "lin") == (0, 1), f"report match by demangled name {report_dropped(doc, 'lin')}")
    expect(report_dropped(doc, "many") == (3, 1), "report match by extern C name")
    expect(report_dropped(doc, "nosuch") == (None, 0), "no such kernel")
    expect(kernel_matches({"name": "_ZN2ns3linEv", "demangled": "ns::lin()"}, "lin"), "namespaced kernel")
    expect(not kernel_matches({"name": "_Z6linearv", "demangled": "linear()"}, "lin"), "no prefix match")

    def run(mutate=None, report=_report(3), kernels=None):
        exp, rec = _synth(cap)
        if mutate:
            mutate(exp, rec)
        with tempfile.TemporaryDirectory() as d:
            _write(os.path.join(d, "exp.csv"), exp)
            for k, lines in rec.items():
                if lines is not None:
                    _write(os.path.join(d, k + ".csv"), lines)
            rp = None
            if report is not None:
                rp = os.path.join(d, "report.json")
                with open(rp, "w") as f:
                    json.dump(report, f)
            got = check(os.path.join(d, "exp.csv"), d, rp, cap, kernels, out=lambda s: None)
        return {r.kernel: r for r in got}

    def fails_only(res, kernel, checks, what):
        got = sorted(res[kernel].failed())
        expect(got == sorted(checks), f"{what}: failed {got}, want {sorted(checks)}")
        for k, r in res.items():
            if k != kernel:
                expect(not r.failed(), f"{what}: {k} failed {r.failed()}")

    res = run()
    expect(all(not r.failed() for r in res.values()), f"clean data: {[(k, r.lines) for k, r in res.items()]}")
    row = res["many"].row
    expect(row["threads"] == 2 and row["expected"] == cap + 2 and row["recorded"] == cap + 2
           and row["match"] == 100.0 and row["dropped_exp"] == 3 and row["dropped_rec"] == 3, f"row {row}")
    expect(res["many"].status("cap") == "PASS" and res["lin"].status("cap") is None, "cap line only where needed")
    expect(res["lin"].row["threads"] == 7 and res["lin"].row["expected"] == 14, f"lin row {res['lin'].row}")

    def edit(kernel, line, col, value):
        def f(exp, rec):
            p = rec[kernel][line].split(",")
            p[col] = value
            rec[kernel][line] = ",".join(p)
        return f

    fails_only(run(edit("lin", 1, 4, "0x5")), "lin", ["addresses", "order"], "wrong address")
    r = run(edit("lin", 1, 4, "0x5"))["lin"].row
    expect(abs(r["match"] - 100.0 * 13 / 14) < 1e-9, f"match % with one wrong address: {r['match']}")
    fails_only(run(edit("lin", 2, 6, str(8 | 2 << 24))), "lin", ["sizes"], "wrong size")
    fails_only(run(edit("lin", 2, 6, str(4 | 3 << 24))), "lin", ["kinds"], "wrong kind")
    fails_only(run(edit("lin", 6, 5, "400")), "lin", ["clock"], "clock going back")  # thread (0,2)

    def swap(exp, rec):  # thread (0,0)'s two records, slots kept in place
        a, b = rec["lin"][1].split(","), rec["lin"][2].split(",")
        a[4:], b[4:] = b[4:], a[4:]
        rec["lin"][1], rec["lin"][2] = ",".join(a), ",".join(b)
    fails_only(run(swap), "lin", ["order", "clock"], "swapped accesses")

    def slot_gap(exp, rec):
        rec["lin"][2] = rec["lin"][2].replace("0,0,0,1,", "0,0,0,2,", 1)
    fails_only(run(slot_gap), "lin", ["slots"], "slot gap")

    def guarded_off(exp, rec):  # thread (1,3) recorded although it must not access
        rec["lin"].append(f"1,3,7,0,0x101c,9,{4 | 1 << 24}")
    fails_only(run(guarded_off), "lin", ["threads"], "record of a guarded-off thread")
    expect(run(guarded_off)["lin"].row["match"] < 100.0, "an unexpected record lowers the match %")

    def lost_thread(exp, rec):
        rec["lin"] = [x for x in rec["lin"] if not x.startswith("0,3,")]
    fails_only(run(lost_thread), "lin", ["threads"], "thread without records")

    def over_cap(exp, rec):  # the probe kept one record past the cap
        rec["many"].insert(cap + 1, f"0,0,0,{cap},0x{0x20000 + 16 * cap:x},200,{8 | 1 << 24}")
    fails_only(run(over_cap), "many", ["addresses", "order", "cap"], "record past the cap")
    fails_only(run(report=_report(2)), "many", ["dropped"], "dropped count off")
    fails_only(run(report=_report(3, dropped_lin=1)), "lin", ["dropped"], "drops where none should be")
    res = run(report=None)
    expect(res["many"].status("dropped") == "SKIP" and not res["many"].failed(), "no report: dropped skipped")

    def no_file(exp, rec):
        rec["many"] = None
    fails_only(run(no_file), "many", ["records"], "missing records file")
    res = run(kernels=["lin", "ghost"])
    expect(sorted(res) == ["ghost", "lin"] and res["ghost"].failed() == ["records"] and not res["lin"].failed(),
           "--kernels restricts and reports kernels missing from the expected file")
    rep = {"processes": [{"kernels": [{"name": "many", "probed_launches": [{"records_dropped": 3}] * 2}]}]}
    expect(run(report=rep)["many"].failed() == ["launches"], "two probed launches of one kernel")

    txt = table([res["lin"].row, res["ghost"].row])
    expect(txt.splitlines()[0].startswith("kernel") and "100.00" in txt and " - " in txt, f"table:\n{txt}")

    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "e.csv")
        _write(p, ["kernel,block,thread,k,addr,bytes,kind", "a,0,0,1,0x1,4,1"])
        try:
            list(read_expected(p))
            expect(False, "an access list not starting at k = 0 must be refused")
        except ValueError:
            pass
        _write(p, ["block,thread,slot,addr", "0,0,0,0x1"])
        try:
            read_records(p)
            expect(False, "records without clock/sizekind must be refused")
        except ValueError:
            pass
    print("selftest: " + ("ok" if not fails else f"{fails} failures"))
    return 1 if fails else 0


# --------------------------------------------------------------------------


def main(argv):
    if len(argv) >= 1 and argv[0] == "selftest":
        return selftest()
    if not argv or argv[0] != "check":
        print(__doc__)
        return 2
    import argparse
    ap = argparse.ArgumentParser(prog="check_dmat.py check")
    ap.add_argument("--expected", required=True)
    ap.add_argument("--records-dir", required=True)
    ap.add_argument("--report")
    ap.add_argument("--cap", type=int, default=CAP_DEFAULT)
    ap.add_argument("--kernels", default="")
    ap.add_argument("--examples", type=int, default=3)
    ap.add_argument("--sampled", type=int, default=1,
                    help="recorded with --sample-blocks N: expect records of blocks N*k only")
    a = ap.parse_args(argv[1:])
    kernels = [k for k in a.kernels.split(",") if k]
    try:
        results = check(a.expected, a.records_dir, a.report, a.cap, kernels, a.examples, sampled=a.sampled)
    except (OSError, ValueError) as e:
        print(f"FAIL check: {e}")
        return 1
    print()
    print(table([r.row for r in results]))
    n_fail = sum(len(r.failed()) for r in results)
    print(f"dmat accuracy: {len(results)} kernels, {n_fail} FAIL checks")
    return 1 if n_fail or not results else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
