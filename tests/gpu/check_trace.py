#!/usr/bin/env python3
"""Checks one example app's run under `ntop record -p block_sched` against a
plain run of the same app (tests/gpu/run.sh calls this on the GPU machine).

Sub-commands:
  app NAME --trace DIR --plain-out F --plain-rc N [--probed-out F --probed-rc N]
           [--ntop PATH] [--ncu-csv F] [--rows F]
      all checks for one app; prints PASS/FAIL/WARN lines and appends one
      table row (tab-separated) to --rows. Exit 0 = no FAIL.
  ncu-filter NAME     the `ncu -k regex:` filter and the launch count per
                      launch config (ncu --filter-mode per-launch-config)
  table ROWS          prints the summary table of the rows file
  events DIR          prints what events.log holds (debugging aid)
  selftest            checks this script's parsers on synthetic data (no GPU)

What is read:
  * events.log (format fixed by doc/events.md and src/trace/events.h): the
    kernel list, launch configs, instrument status, result records/dropped.
  * `ntop report DIR --json` for per-record values (smid, elapsed) and waves
    per SM. Its schema is not fixed yet: everything that depends on it is in
    report_launches() below, the one function to adjust.
  * ncu --csv output of launch__waves_per_multiprocessor (ground truth).

Stdout convention of the example apps: lines starting with "info:" carry
timings (noise); lines starting with "ntop" are taken to be ntop's own
messages; every other line must be identical between the two runs.
"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse

# --------------------------------------------------------------------------
# What each app must show. pattern: regex searched in the mangled kernel
# name. ptx: 1 = must carry PTX (probed), 0 = must be listed without PTX and
# with a reason, None = either. graph: launched only through a CUDA graph
# (a `graph` event may stand in for `launch`; a missing result is a WARN:
# probing graph replays is optional).
# --------------------------------------------------------------------------


class Expect:
    def __init__(self, pattern, ptx=1, graph=False):
        self.pattern = pattern
        self.ptx = ptx
        self.graph = graph


APPS = {
    "launch_modes": {
        "kernels": [
            Expect(r"lm_vec_add"),
            Expect(r"lm_stream_scale"),
            Expect(r"lm_ex_kernel"),
            Expect(r"lm_coop_sync"),
            Expect(r"lm_captured_axpy", graph=True),
            Expect(r"lm_node_iota", graph=True),
            Expect(r"lm_global_add"),
            Expect(r"lm_global_read"),
            Expect(r"lm_block3d"),
        ],
        "ncu": ("lm_vec_add|lm_stream_scale|lm_block3d", 1),
    },
    "fill": {"kernels": [Expect(r"fill_half4")], "ncu": ("fill_half4", 1)},
    "sgemm": {"kernels": [Expect(r"sgemm_tiled")], "ncu": ("sgemm_tiled", 1)},
    "memk": {
        "kernels": [Expect(r"memk_copy"), Expect(r"memk_scale"), Expect(r"memk_strided")],
        "ncu": ("memk_copy|memk_scale|memk_strided", 1),
    },
    "sass_only": {"kernels": [Expect(r"sass_only_kernel", ptx=0)], "ncu": None},
    "launch_loop": {"kernels": [Expect(r"empty_kernel")], "ncu": None},
    # cuModuleLoadData of PTX text, cuLaunchKernel with kernelParams and `extra`.
    "driver_api": {"kernels": [Expect(r"drv_axpy")], "ncu": ("drv_axpy", 1)},
    # Two processes (fork before CUDA), four launching threads in each.
    "threads_fork": {"kernels": [Expect(r"tf_bump")], "ncu": None},
    "triton_add": {
        "kernels": [Expect(r"triton_add_kernel"), Expect(r"triton_matmul_kernel")],
        "ncu": ("triton_add_kernel|triton_matmul_kernel", 1),
    },
    # numba-cuda links through nvJitLink (cuda.core) when its major version
    # matches the driver's, so the driver only ever sees a cubin: listed and
    # timed, with the reason; probed only where Numba uses the driver's cuLink.
    "numba_add": {"kernels": [Expect(r"nb_vec_add", ptx=None), Expect(r"nb_saxpy", ptx=None)],
                  "ncu": ("nb_vec_add|nb_saxpy", 1)},
    "torch_ops": {
        # Stock PyTorch ships SASS only: listed, timed, not probed.
        "kernels": [
            Expect(r"elementwise_kernel", ptx=0),
            Expect(r"(?i)softmax", ptx=0),
            Expect(r"reduce_kernel", ptx=0),
            Expect(r"gemm|nvjet|xmma|cutlass|sm90", ptx=None),
        ],
        "ncu": None,
    },
}

WAVES_REL_TOL = 0.01


# --------------------------------------------------------------------------
# events.log
# --------------------------------------------------------------------------


def parse_event_line(line):
    """'TYPE k=v k=v' -> (type, {k: v}) with values percent-decoded; None if
    the line is not an event."""
    parts = line.strip().split(" ")
    if not parts or not parts[0] or "=" in parts[0]:
        return None
    fields = {}
    for p in parts[1:]:
        if not p:
            continue
        k, sep, v = p.partition("=")
        if not sep:
            return None
        fields[k] = urllib.parse.unquote(v)
    return parts[0], fields


def read_events(trace_dir):
    """All events of a trace: events.log, else the hook's events-<pid>.log."""
    paths = []
    main = os.path.join(trace_dir, "events.log")
    if os.path.exists(main):
        paths = [main]
    elif os.path.isdir(trace_dir):
        paths = sorted(os.path.join(trace_dir, f) for f in os.listdir(trace_dir)
                       if f.startswith("events") and f.endswith(".log"))
    events = []
    for p in paths:
        with open(p, errors="replace") as f:
            for line in f:
                ev = parse_event_line(line)
                if ev:
                    events.append(ev)
    return events, paths


def ival(fields, key, default=None):
    v = fields.get(key)
    if v is None:
        return default
    try:
        return int(v, 0)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return default


def dims(text):
    """'x,y,z' -> (x, y, z); None if malformed."""
    try:
        d = tuple(int(x) for x in text.split(","))
    except (AttributeError, ValueError):
        return None
    return d if len(d) == 3 else None


class Trace:
    """The events of one trace, indexed by (pid, kid) and (pid, seq)."""

    def __init__(self, events):
        self.events = events
        self.kernels = {}      # (pid, kid) -> kernel fields
        self.launches = {}     # (pid, kid) -> [launch fields]
        self.launch_by_seq = {}  # (pid, seq) -> launch fields
        self.graphs = {}       # (pid, kid) -> [graph fields]
        self.instrument = {}   # (pid, kid) -> [instrument fields]
        self.results = {}      # (pid, kid) -> [result fields]
        self.declined = {}     # (pid, kid) -> [probe fields]
        self.times = {}        # (pid, kid) -> [time fields]
        self.devices = []
        self.by_type = {}
        for typ, f in events:
            self.by_type.setdefault(typ, []).append(f)
            pid = f.get("pid")
            key = (pid, f.get("kid"))
            if typ == "kernel":
                self.kernels[key] = f
            elif typ == "launch":
                self.launches.setdefault(key, []).append(f)
                self.launch_by_seq[(pid, f.get("seq"))] = f
            elif typ == "graph" and "kid" in f:
                self.graphs.setdefault(key, []).append(f)
            elif typ == "instrument":
                self.instrument.setdefault(key, []).append(f)
            elif typ == "result":
                self.results.setdefault(key, []).append(f)
            elif typ == "probe":
                self.declined.setdefault(key, []).append(f)
            elif typ == "time":
                self.times.setdefault(key, []).append(f)
            elif typ == "device":
                self.devices.append(f)

    def sms(self):
        for d in self.devices:
            n = ival(d, "sms")
            if n:
                return n
        return None

    def find(self, pattern):
        rx = re.compile(pattern)
        return sorted((k for k, f in self.kernels.items() if rx.search(f.get("name", ""))),
                      key=lambda k: (k[0] or "", int(k[1] or 0)))

    def launch_for(self, key, seq):
        """Launch config of a probed launch: the launch event of that seq,
        else the latest launch event of the kernel before it."""
        f = self.launch_by_seq.get((key[0], seq))
        if f and f.get("kid") == key[1]:
            return f
        best = None
        for f in self.launches.get(key, []):
            if ival(f, "seq", 0) <= ival({"s": seq}, "s", 0):
                best = f
        return best or (self.launches.get(key) or [None])[-1]


def expected_warps(launch):
    g, b = dims(launch.get("grid")), dims(launch.get("block"))
    if not g or not b:
        return None
    threads = b[0] * b[1] * b[2]
    return g[0] * g[1] * g[2] * ((threads + 31) // 32)


# --------------------------------------------------------------------------
# `ntop report --json`: THE FUNCTION TO ADJUST once the schema is fixed.
# --------------------------------------------------------------------------


def report_launches(ntop, trace_dir, log=None):
    """Runs `ntop report DIR --json` and returns (launches, error): one dict
    per probed launch the report describes, with the keys
        pid, seq (str or None), kernel (str or None),
        records, warps_expected, dropped (int or None)
        smid_max, elapsed_min (int or None): over all block_sched records
        sms (int or None): SM count the report assumed
        waves (float or None): waves per SM of the launch
    Until the schema is fixed this walks the JSON and takes, from every
    object carrying a "seq", the first keys it recognises (see _pick). Adjust
    here, and only here, when the report's JSON is settled."""
    try:
        p = subprocess.run([ntop, "report", trace_dir, "--json"], capture_output=True,
                           text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return [], f"ntop report failed to run: {e}"
    if log:
        with open(log, "w") as f:
            f.write(p.stdout)
            f.write("\n--- stderr ---\n" + p.stderr)
    if p.returncode != 0:
        return [], f"ntop report exited {p.returncode}: {p.stderr.strip()[:300]}"
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        return [], f"ntop report printed no JSON: {e}"
    return report_walk(doc), None


SMID_MAX_KEYS = ("smid_max", "max_smid", "sm_max")
# mean_running (src/viz/block_sched.h: cycles per SM) is a weaker stand-in
# when the report gives no per-record elapsed: > 0 means warps ran.
ELAPSED_MIN_KEYS = ("elapsed_min", "min_elapsed", "elapsed_min_cycles", "mean_running")
WAVES_KEYS = ("waves", "waves_per_sm", "waves_per_multiprocessor")


def _pick(obj, keys):
    """First numeric value under one of `keys` in obj, else in its nested
    dicts and lists of dicts (depth first, in document order)."""
    if isinstance(obj, list):
        for v in obj:
            r = _pick(v, keys)
            if r is not None:
                return r
        return None
    if not isinstance(obj, dict):
        return None
    for k in keys:
        if k in obj and isinstance(obj[k], (int, float)) and not isinstance(obj[k], bool):
            return obj[k]
    for v in obj.values():
        if isinstance(v, (dict, list)):
            r = _pick(v, keys)
            if r is not None:
                return r
    return None


def _record_lists(obj):
    """Lists of per-record dicts (with smid/elapsed) anywhere inside obj."""
    if isinstance(obj, list):
        if obj and isinstance(obj[0], dict) and "smid" in obj[0]:
            yield obj
        else:
            for v in obj:
                yield from _record_lists(v)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _record_lists(v)


def report_walk(doc):
    out = []

    def visit(obj, pid):
        if isinstance(obj, list):
            for v in obj:
                visit(v, pid)
            return
        if not isinstance(obj, dict):
            return
        pid = obj.get("pid", pid)
        if "seq" in obj:
            out.append(report_launch(obj, pid))
            return
        for v in obj.values():
            visit(v, pid)

    visit(doc, None)
    return out


def report_launch(obj, pid):
    smid_max = _pick(obj, SMID_MAX_KEYS)
    elapsed_min = _pick(obj, ELAPSED_MIN_KEYS)
    for recs in _record_lists(obj):
        sm = [r.get("smid") for r in recs if isinstance(r.get("smid"), int)]
        el = [r.get("elapsed") for r in recs if isinstance(r.get("elapsed"), (int, float))]
        if sm:
            smid_max = max(sm + ([smid_max] if smid_max is not None else []))
        if el:
            elapsed_min = min(el + ([elapsed_min] if elapsed_min is not None else []))
    kernel = obj.get("kernel") or obj.get("name")
    if isinstance(kernel, dict):
        kernel = kernel.get("name")
    return {
        "pid": None if pid is None else str(pid),
        "seq": None if obj.get("seq") is None else str(obj.get("seq")),
        "kernel": kernel if isinstance(kernel, str) else None,
        "records": _pick(obj, ("records", "records_written", "warps_recorded")),
        "warps_expected": _pick(obj, ("warps_expected",)),
        "dropped": _pick(obj, ("dropped", "records_dropped")),
        "smid_max": smid_max,
        "elapsed_min": elapsed_min,
        "sms": _pick(obj, ("sms", "device_sms")),
        "waves": _pick(obj, WAVES_KEYS),
    }


# --------------------------------------------------------------------------
# ncu
# --------------------------------------------------------------------------


def ncu_base_name(demangled):
    """The kernel's own identifier in ncu's demangled name, which is also a
    substring of the mangled name in events.log:
    'void at::native::k<4, F>(int, F)' -> 'k'; 'nb_add[v1, ...]' -> 'nb_add'."""
    head = re.split(r"[(<\[]", demangled, maxsplit=1)[0].strip()
    return re.split(r"\s|::", head)[-1] if head else demangled


def ncu_waves(path):
    """{kernel function name: [waves per SM, ...]} from `ncu --csv` output
    (ncu's own ==PROF== lines and the app's output may be mixed in)."""
    waves = {}
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return waves
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return waves
    rows = [l for l in lines[start:] if l.startswith('"')]
    for row in csv.DictReader(io.StringIO("\n".join(rows))):
        if row.get("Metric Name") != "launch__waves_per_multiprocessor":
            continue
        name = ncu_base_name(row.get("Kernel Name") or "")
        try:
            v = float((row.get("Metric Value") or "").replace(",", ""))
        except ValueError:
            continue
        waves.setdefault(name, []).append(v)
    return waves


# --------------------------------------------------------------------------
# The checks
# --------------------------------------------------------------------------


class Checker:
    def __init__(self, app):
        self.app = app
        self.fails = 0
        self.warns = 0

    def out(self, status, msg):
        if status == "FAIL":
            self.fails += 1
        elif status == "WARN":
            self.warns += 1
        print(f"  {status} {self.app}: {msg}")

    def ok(self, cond, msg, bad=None, status="FAIL"):
        self.out("PASS" if cond else status, msg if cond or not bad else f"{msg}: {bad}")
        return cond


def filtered_stdout(path):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    return [l for l in lines if not l.startswith("info:") and not l.startswith("ntop")]


def check_outputs(c, a):
    plain, probed = filtered_stdout(a.plain_out), filtered_stdout(a.probed_out)
    c.ok(a.plain_rc == 0, "plain run exits 0", f"exit {a.plain_rc}")
    c.ok(a.probed_rc == a.plain_rc, "probed run exits like the plain run",
         f"plain {a.plain_rc}, probed {a.probed_rc}")
    same = plain is not None and plain == probed and len(plain) > 0
    bad = None
    if not same and plain is not None and probed is not None:
        diff = [(x, y) for x, y in zip(plain, probed) if x != y]
        bad = (f"first difference: {diff[0][0]!r} vs {diff[0][1]!r}" if diff
               else f"{len(plain)} vs {len(probed)} lines")
    c.ok(same, "stdout identical (checksums bit-identical)", bad)
    return same and a.probed_rc == a.plain_rc == 0


def check_kernels(c, tr, spec):
    """Returns (listed, expected, probed_ok, probed_total, kernel keys)."""
    listed = 0
    keys = []
    for e in spec["kernels"]:
        found = tr.find(e.pattern)
        if not c.ok(bool(found), f"kernel /{e.pattern}/ listed", "no kernel event"):
            continue
        listed += 1
        # Libraries (cuBLAS) take handles to kernels they never launch: one
        # launched kernel per pattern is what the app's work proves.
        launched = [k for k in found
                    if tr.launches.get(k) or (e.graph and tr.graphs.get(k))]
        c.ok(bool(launched), f"/{e.pattern}/ launch seen", "kernels listed but no launch/graph event")
        for k in found:
            f = tr.kernels[k]
            short = f.get("name", "?")[:60]
            ptx = ival(f, "ptx")
            if e.ptx is not None:
                c.ok(ptx == e.ptx, f"{short} ptx={e.ptx}", f"ptx={f.get('ptx')}")
            if ptx == 0:
                c.ok(bool(f.get("reason")), f"{short} says why it has no PTX",
                     "ptx=0 without a reason")
            keys.append((k, e))
    probed_ok = probed_total = 0
    for k, e in keys:
        f = tr.kernels[k]
        if ival(f, "ptx") != 1 or not (tr.launches.get(k) or tr.graphs.get(k)):
            continue
        short = f.get("name", "?")[:60]
        probed_total += 1
        ins = tr.instrument.get(k, [])
        good = any(i.get("status") == "ok" for i in ins)
        why = "; ".join(i.get("reason", "?") for i in ins) or "no instrument event"
        for d in tr.declined.get(k, []):
            why += f"; declined seq={d.get('seq')}: {d.get('reason')}"
        status = "WARN" if e.graph else "FAIL"  # capture/graph launches may be declined
        c.ok(good, f"{short} instrumented", why, status=status)
        res = tr.results.get(k, [])
        has_res = c.ok(bool(res), f"{short} has result events", "none", status=status)
        if good and (has_res or e.graph):
            probed_ok += 1
    # Any other kernel of the app: listed ones without PTX must say why.
    for k, f in tr.kernels.items():
        if ival(f, "ptx") == 0 and not f.get("reason"):
            c.out("FAIL", f"{f.get('name', '?')[:60]} ptx=0 without a reason")
    return listed, len(spec["kernels"]), probed_ok, probed_total, keys


def check_warps(c, tr, trace_dir, keys):
    """One record per warp, nothing dropped, result files present."""
    good = total = 0
    for k, _ in keys:
        first_seq = min((r.get("seq") for r in tr.results.get(k, [])), key=lambda x: ival({"s": x}, "s"), default=None)
        for r in tr.results.get(k, []):
            total += 1
            seq = r.get("seq")
            launch = tr.launch_for(k, seq)
            want = expected_warps(launch) if launch else None
            rec, drop = ival(r, "records"), ival(r, "dropped")
            problems = []
            if want is None:
                problems.append("no launch config for this seq")
            elif rec != want:
                problems.append(f"records={rec}, warps={want} "
                                f"(grid {launch.get('grid')} block {launch.get('block')})")
            if drop != 0:
                problems.append(f"dropped={r.get('dropped')}")
            # a probed copy's first launch is always timed (as is a
            # kernel's first launch): its first result must have ns
            if not ival(r, "ns") and seq == first_seq:
                problems.append(f"ns={r.get('ns')} on the kernel's first probed launch")
            path = os.path.join(trace_dir, r.get("file", ""))
            if not r.get("file") or not os.path.isfile(path):
                problems.append(f"result file {r.get('file')} missing")
            if problems:
                c.out("FAIL", f"{tr.kernels[k].get('name', '?')[:50]} seq={seq}: " + ", ".join(problems))
            else:
                good += 1
    if total:
        c.ok(good == total, f"records == warps, dropped == 0 in {good}/{total} probed launches")
    return good, total


def check_report(c, tr, rep, rep_err, keys):
    """smid < SM count and elapsed > 0 for every reported launch."""
    if rep_err:
        c.out("FAIL", f"report: {rep_err}")
        return
    sms = tr.sms()
    c.ok(sms is not None, "device event gives the SM count", "no device event with sms=")
    if not keys or not any(tr.results.get(k) for k, _ in keys):
        return
    c.ok(len(rep) > 0, "report lists probed launches", "no object with a seq in the JSON")
    n_sm = n_el = 0
    for L in rep:
        if L["smid_max"] is not None:
            n_sm += 1
            if sms is not None and not 0 <= L["smid_max"] < sms:
                c.out("FAIL", f"report seq={L['seq']}: smid {L['smid_max']} >= {sms} SMs")
        if L["elapsed_min"] is not None:
            n_el += 1
            if not L["elapsed_min"] > 0:
                c.out("FAIL", f"report seq={L['seq']}: elapsed {L['elapsed_min']} <= 0")
        if L["warps_expected"] is not None and L["records"] != L["warps_expected"]:
            c.out("FAIL", f"report seq={L['seq']}: {L['records']} records for "
                  f"{L['warps_expected']} warps")
        if L["records"] is not None and L["seq"] is not None:
            ev = [r for k, _ in keys for r in tr.results.get(k, [])
                  if r.get("seq") == L["seq"] and (L["pid"] is None or r.get("pid") == L["pid"])]
            if ev and ival(ev[0], "records") != L["records"]:
                c.out("FAIL", f"report seq={L['seq']}: records {L['records']} but "
                      f"events.log says {ev[0].get('records')}")
    if n_sm == 0 or n_el == 0:
        c.out("WARN", "report JSON gave no smid/elapsed per launch: adjust report_launches()")
    else:
        c.out("PASS", f"smid < {sms} and elapsed > 0 in {n_sm} reported launches")


def check_waves(c, tr, rep, keys, ncu_csv):
    """Returns the table cell: 'ntop/ncu' per kernel, or a reason."""
    if not ncu_csv:
        return "-"
    ncu = ncu_waves(ncu_csv)
    if not ncu:
        c.out("WARN", f"no waves in {ncu_csv} (ncu failed?)")
        return "ncu n/a"
    cells = []
    for name, vals in sorted(ncu.items()):
        want = vals[0]
        mine = []
        for L in rep:
            kname = L["kernel"]
            if kname is None and L["seq"] is not None:
                for k, _ in keys:
                    if any(r.get("seq") == L["seq"] and r.get("pid") == L["pid"]
                           for r in tr.results.get(k, [])):
                        kname = tr.kernels[k].get("name")
            if kname and name in kname and L["waves"] is not None:
                mine.append(float(L["waves"]))
        if not mine:
            c.out("WARN", f"{name}: ncu waves/SM {want:.4g}, ntop gave none")
            cells.append(f"{name}: -/{want:.3g}")
            continue
        got = mine[0]
        rel = abs(got - want) / want if want else abs(got)
        # ncu prints two decimals: a difference within its rounding agrees.
        c.ok(rel <= WAVES_REL_TOL or abs(got - want) <= 0.005 + 1e-9,
             f"{name}: waves/SM ntop {got:.4g} vs ncu {want:.4g}",
             f"relative difference {rel:.3%} > {WAVES_REL_TOL:.0%}")
        cells.append(f"{name}: {got:.3g}/{want:.3g}")
    return "; ".join(cells)


def cmd_app(args):
    a = args
    spec = APPS.get(a.name)
    if spec is None:
        print(f"unknown app {a.name}")
        return 2
    c = Checker(a.name)
    print(f"== {a.name}")
    row = {"app": a.name, "same": "-", "listed": "-", "probed": "-", "warps": "-", "waves": "-"}
    if a.probed_out is None:  # --plain-only: the second run is a plain one
        a.probed_out, a.probed_rc = a.plain2_out, a.plain2_rc
    same = check_outputs(c, a)
    row["same"] = "yes" if same else "NO"
    if a.trace:
        events, paths = read_events(a.trace)
        if c.ok(bool(events), "events.log has events", f"nothing in {a.trace}"):
            tr = Trace(events)
            c.ok("hello" in tr.by_type, "hook said hello", "no hello event: hook not loaded?")
            if tr.by_type.get("lost"):
                c.out("FAIL", f"hook lost events: {tr.by_type['lost']}")
            for w in tr.by_type.get("warn", [])[:10]:
                c.out("INFO", f"hook warning: {w.get('msg')}")
            listed, expected, pok, ptot, keys = check_kernels(c, tr, spec)
            row["listed"] = f"{listed}/{expected} ({len(tr.kernels)} seen)"
            row["probed"] = f"{pok}/{ptot}" if ptot else "none (no PTX)"
            good, total = check_warps(c, tr, a.trace, keys)
            row["warps"] = f"{good}/{total}" if total else "-"
            rep, rep_err = ([], None)
            if a.ntop:
                rep, rep_err = report_launches(a.ntop, a.trace, log=a.report_log)
                check_report(c, tr, rep, rep_err, keys)
            row["waves"] = check_waves(c, tr, rep, keys, a.ncu_csv)
    elif a.ncu_csv:
        w = ncu_waves(a.ncu_csv)
        row["waves"] = "; ".join(f"{k}: -/{v[0]:.3g}" for k, v in sorted(w.items())) or "ncu n/a"
    print(f"  -> {a.name}: {c.fails} FAIL, {c.warns} WARN")
    if a.rows:
        with open(a.rows, "a") as f:
            f.write("\t".join([row["app"], row["same"], row["listed"], row["probed"],
                               row["warps"], row["waves"], str(c.fails)]) + "\n")
    return 1 if c.fails else 0


def cmd_table(path):
    cols = ["app", "plain==probed", "kernels listed", "probed ok", "warps ok",
            "waves/SM ntop/ncu", "fails"]
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            rows = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    widths = [max([len(cols[i])] + [len(r[i]) for r in rows if len(r) > i]) for i in range(len(cols))]
    fmt = " | ".join("{:<%d}" % w for w in widths)
    print(fmt.format(*cols))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(fmt.format(*(r + [""] * (len(cols) - len(r)))))
    return 0


def cmd_events(trace_dir):
    events, paths = read_events(trace_dir)
    tr = Trace(events)
    print(f"{len(events)} events from {paths}")
    for t, lst in sorted(tr.by_type.items()):
        print(f"  {t}: {len(lst)}")
    for k, f in sorted(tr.kernels.items(), key=lambda kv: (kv[0][0] or "", int(kv[0][1] or 0))):
        ins = tr.instrument.get(k, [{}])[0]
        print(f"  pid={k[0]} kid={k[1]} ptx={f.get('ptx')} launches={len(tr.launches.get(k, []))} "
              f"graph={len(tr.graphs.get(k, []))} instrument={ins.get('status', '-')} "
              f"results={len(tr.results.get(k, []))} {f.get('name', '?')[:70]} {f.get('reason', '')}")
    return 0


# --------------------------------------------------------------------------
# Self-test on synthetic data (runs anywhere; no GPU, no ntop).
# --------------------------------------------------------------------------

SELFTEST_EVENTS = """\
hello t=1 pid=7 ppid=1 exe=/x hook=0.1 driver=/usr/lib/libcuda.so.1
device t=2 pid=7 ordinal=0 name=NVIDIA%20H100 cc=90 sms=132 clock_khz=1980000
module t=3 pid=7 mid=1 api=cuLibraryLoadData kind=fatbin size=100 ptx=1 sass=1 source=app
kernel t=4 pid=7 kid=1 mid=1 name=_Z10fill_half4P6__halfS_i ptx=1
launch t=5 pid=7 kid=1 seq=1 api=cuLaunchKernel grid=32768,1,1 block=128,1,1 smem=0 stream=0x0 capture=0 probed=1
instrument t=6 pid=7 kid=1 status=ok probes=block_sched reason= regs_orig=8 regs_probed=12 ms_parse=0.5 ms_prune=0.1 ms_inject=0.2 ms_emit=0.1 ms_jit=30
result t=7 pid=7 kid=1 seq=1 file=results/7-1.ntr maps=1 records=131072 dropped=0 bytes=2097152 ns=60000
time t=8 pid=7 kid=1 seq=2 ns=20000
kernel t=9 pid=7 kid=2 mid=1 name=_Z16sass_only_kernelPKiPii ptx=0 reason=SASS%20only:%20rebuild%20with%20PTX
launch t=10 pid=7 kid=2 seq=3 api=cuLaunchKernel grid=3,2,2 block=7,5,3 smem=0 stream=0x0 capture=0 probed=0
garbage line without fields
"""


def selftest():
    fails = 0

    def expect(cond, what):
        nonlocal fails
        if not cond:
            fails += 1
            print(f"selftest FAIL: {what}")

    ev = parse_event_line("kernel t=1 pid=2 name=a%20b%25c ptx=0")
    expect(ev == ("kernel", {"t": "1", "pid": "2", "name": "a b%c", "ptx": "0"}), f"decode {ev}")
    expect(parse_event_line("k=v x=y") is None, "a line starting with a key is no event")
    expect(parse_event_line("garbage line") is None, "fields without '=' make no event")
    tr = Trace([e for e in map(parse_event_line, SELFTEST_EVENTS.splitlines()) if e])
    expect(tr.sms() == 132, "sms from the device event")
    expect(tr.find("fill_half4") == [("7", "1")], "find by pattern")
    expect(expected_warps(tr.launch_for(("7", "1"), "1")) == 131072, "warps of 32768x128")
    expect(expected_warps({"grid": "3,2,2", "block": "7,5,3"}) == 48, "warps of a 7x5x3 block")
    expect(expected_warps({"grid": "3,2", "block": "7,5,3"}) is None, "malformed grid")
    doc = {"launches": [{"pid": 7, "seq": 1, "kernel": "_Z10fill_half4P6__halfS_i",
                         "maps": [{"records": 131072, "dropped": 0}],
                         "block_sched": {"waves": 15.5, "smid_max": 131,
                                         "warps": [{"smid": 3, "elapsed": 10}, {"smid": 9, "elapsed": 4}]}}]}
    rep = report_walk(doc)
    expect(len(rep) == 1 and rep[0]["waves"] == 15.5 and rep[0]["smid_max"] == 131
           and rep[0]["elapsed_min"] == 4 and rep[0]["records"] == 131072, f"report walk {rep}")
    # Shaped like src/viz/block_sched.h's struct, per-SM list included.
    rep2 = report_walk([{"seq": 3, "block_sched": {
        "warps_expected": 48, "warps_recorded": 48, "records_dropped": 0, "waves": 0.01,
        "mean_running": 120.5, "sms": [{"smid": 3, "blocks": 1}, {"smid": 77, "blocks": 2}]}}])
    expect(len(rep2) == 1 and rep2[0]["records"] == 48 and rep2[0]["warps_expected"] == 48
           and rep2[0]["dropped"] == 0 and rep2[0]["smid_max"] == 77
           and rep2[0]["elapsed_min"] == 120.5 and rep2[0]["sms"] is None, f"struct-shaped report {rep2}")
    with tempfile.TemporaryDirectory() as d:
        csvp = os.path.join(d, "ncu.csv")
        with open(csvp, "w") as f:
            f.write("==PROF== Connected to process 1\nchecksum x 1\n"
                    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
                    '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'
                    '"0","1","fill","h","fill_half4(__half *, __half, int)","1","7","(128, 1, 1)",'
                    '"(32768, 1, 1)","0","9.0","Command line profiler metrics",'
                    '"launch__waves_per_multiprocessor","","15.52"\n'
                    '"1","1","fill","h","fill_half4(__half *, __half, int)","1","7","(128, 1, 1)",'
                    '"(32768, 1, 1)","0","9.0","Command line profiler metrics",'
                    '"launch__waves_per_multiprocessor","","1,015.52"\n'
                    "==PROF== Disconnected\n")
        expect(ncu_base_name("void at::native::vectorized_elementwise_kernel<4, F>(int, F)")
               == "vectorized_elementwise_kernel", "ncu name of a template")
        expect(ncu_base_name("nb_vec_add[v1,cw51c_3d]") == "nb_vec_add", "ncu name of a numba kernel")
        expect(ncu_base_name("triton_add_kernel") == "triton_add_kernel", "plain ncu name")
        w = ncu_waves(csvp)
        expect(w == {"fill_half4": [15.52, 1015.52]}, f"ncu csv {w}")
        # A whole app check on the synthetic trace, with a trace dir on disk.
        os.makedirs(os.path.join(d, "results"))
        open(os.path.join(d, "results", "7-1.ntr"), "w").close()
        with open(os.path.join(d, "events.log"), "w") as f:
            f.write(SELFTEST_EVENTS)
        for n in ("p", "q"):
            with open(os.path.join(d, n), "w") as f:
                f.write("checksum fill 0123\ninfo: 3 us\n" if n == "p" else
                        "checksum fill 0123\ninfo: 4 us\nntop: trace written\n")
        c = Checker("selftest")
        a = argparse_ns(name="fill", plain_out=os.path.join(d, "p"), plain_rc=0,
                        probed_out=os.path.join(d, "q"), probed_rc=0)
        expect(check_outputs(c, a), "outputs equal apart from info:/ntop lines")
        tr = Trace(read_events(d)[0])
        listed, expected, pok, ptot, keys = check_kernels(c, tr, APPS["fill"])
        expect((listed, expected, pok, ptot) == (1, 1, 1, 1), f"kernel checks {listed, expected, pok, ptot}")
        expect(check_warps(c, tr, d, keys) == (1, 1), "warp check")
        rep[0]["waves"] = 15.52 * 1.005
        expect(check_waves(c, tr, rep, keys, csvp).startswith("fill_half4: 15.6/15.5"), "waves cell")
        fails_before = c.fails
        rep[0]["waves"] = 14.0
        check_waves(c, tr, rep, keys, csvp)
        expect(c.fails == fails_before + 1, "waves off by 10% fail")
        listed, expected, pok, ptot, keys = check_kernels(c, tr, APPS["sass_only"])
        expect((listed, ptot) == (1, 0), "sass_only listed, nothing to probe")
    print("selftest", "FAILED" if fails else "ok")
    return 1 if fails else 0


def argparse_ns(**kw):
    import argparse
    return argparse.Namespace(**kw)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("app")
    p.add_argument("name")
    p.add_argument("--trace")
    p.add_argument("--ntop")
    p.add_argument("--plain-out", required=True)
    p.add_argument("--plain-rc", type=int, required=True)
    p.add_argument("--probed-out")
    p.add_argument("--probed-rc", type=int)
    p.add_argument("--plain2-out", help="--plain-only mode: a second plain run")
    p.add_argument("--plain2-rc", type=int)
    p.add_argument("--ncu-csv")
    p.add_argument("--report-log")
    p.add_argument("--rows")
    p = sub.add_parser("ncu-filter")
    p.add_argument("name")
    p = sub.add_parser("table")
    p.add_argument("rows")
    p = sub.add_parser("events")
    p.add_argument("dir")
    sub.add_parser("selftest")
    a = ap.parse_args(argv)
    if a.cmd == "app":
        return cmd_app(a)
    if a.cmd == "ncu-filter":
        ncu = APPS.get(a.name, {}).get("ncu")
        if ncu:
            print(f"{ncu[0]} {ncu[1]}")
        return 0
    if a.cmd == "table":
        return cmd_table(a.rows)
    if a.cmd == "events":
        return cmd_events(a.dir)
    return selftest()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
