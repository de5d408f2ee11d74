#!/usr/bin/env python3
"""gmem_bytes and tensorop_count against Nsight Compute (tests/gpu/ncu_probes.sh
runs the apps; this script picks the metrics and compares).

Sub-commands:
  metrics QUERY_OUT CHOSEN_JSON [--attempt N]
      reads `ncu --query-metrics` output, picks for every quantity the first
      candidate whose metrics all exist (attempt N > 0, or no usable query:
      candidate N of each, so a failed ncu run can retry with the fallbacks),
      writes the choice to CHOSEN_JSON and prints the comma-separated list
  analyse WORKDIR [--ntop PATH] [--tol PCT]
      WORKDIR holds probe.<app>[.<probe>]/ (ntop traces), ncu.<app>.csv and
      chosen.json; prints the comparison table. Exit 1 if a value that should
      equal ncu's does not (beyond --tol, default 0.5 %), 0 otherwise
  selftest
      synthetic ncu CSV, query output, events and result files (no GPU)

What is compared, per kernel, per launch (medians over the probed launches
and over the launches ncu profiled; both apps run with the same arguments):

  quantity      probe (sum over every thread/warp record of a launch)
  load bytes    gmem_bytes.load    bytes of ld.global / ld.global.nc
  store bytes   gmem_bytes.store   bytes of st.global
  atomic bytes  gmem_bytes.atomic  bytes of atom.global / red.global
  async bytes   gmem_bytes.async   bytes of cp.async.ca/cg global->shared
  HMMA          tensorop_count     mma + 2 x wmma
  HGMMA         tensorop_count     wgmma
  tensor pipe   tensorop_count     mma + 2 x wmma + wgmma (informational)

The ncu metrics, and why (Nsight Compute metrics reference, sm_90):
  * sm__sass_data_bytes_mem_global_op_{ld,st,atom,red,ldgsts}.sum: bytes the
    executed SASS global-memory instructions asked for, counted per thread
    (predicated-off threads excluded). That is what the probe adds up per
    thread from each PTX access's size, so the two must be EQUAL, coalesced
    or not. The smsp__ variant has the same sum.
  * l1tex__t_bytes_pipe_lsu_mem_global_op_{ld,st,atom,red}.sum (fallback when
    the sass metrics are missing): bytes of the 32-byte sectors L1TEX looked
    up. Equal to the requested bytes only for fully coalesced, sector-aligned
    accesses (memk_copy); larger for scattered ones (memk_strided: one
    sector per 4-byte load, 8x). Reported as "ncu >= probe".
  * smsp__inst_executed_pipe_tensor_op_hmma.sum: warp-level HMMA instructions.
    PTX mma.sync.m16n8k16 (and m16n8k8) compile to ONE HMMA each on sm_80/
    sm_90; wmma.mma.sync m16n16k16 (f16/bf16) to TWO HMMA.16816 (two n=8
    halves). So ncu = mma + 2 x wmma. Other wmma shapes (m32n8k16, m8n32k16)
    are also two; tf32/int8/fp64 shapes differ (not in our examples).
  * smsp__inst_executed_pipe_tensor_op_gmma.sum: wgmma.mma_async (HGMMA),
    counted once per warp of the warpgroup, as the probe counts it (every warp
    executes the instruction): EQUAL. Triton's tl.dot on Hopper is wgmma.
  * smsp__inst_executed_pipe_tensor.sum: every tensor-pipe instruction
    (informational; also counts integer and fp64 MMA).
  * smsp__sass_inst_executed_op_global_{ld,st}.sum: warp-level load/store
    instruction counts, printed beside the bytes to explain a difference.

Probe values per launch come from the result files read directly
(ntr_read.py) and, when this ntop has it, from `ntop export DIR -k KERNEL
--pid P --view records --map M --launch N -o F.csv` (columns summed by field
name); where both work they must agree (a FAIL line otherwise), where the
file reader refuses a file (a newer format) the export's sums are used.
"""
import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_trace import Trace, ival, ncu_base_name, read_events  # noqa: E402
import ntr_read  # noqa: E402

# quantity -> (probe terms [(map, field, factor)], candidates [(metrics summed,
# relation)]); relation "equal" must match, "ge" means ncu >= probe is fine,
# "info" is never a failure.
QUANTITIES = [
    ("load bytes", [("gmem_bytes", "load", 1)], [
        (["sm__sass_data_bytes_mem_global_op_ld.sum"], "equal"),
        (["smsp__sass_data_bytes_mem_global_op_ld.sum"], "equal"),
        (["l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum"], "ge")]),
    ("store bytes", [("gmem_bytes", "store", 1)], [
        (["sm__sass_data_bytes_mem_global_op_st.sum"], "equal"),
        (["smsp__sass_data_bytes_mem_global_op_st.sum"], "equal"),
        (["l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum"], "ge")]),
    ("atomic bytes", [("gmem_bytes", "atomic", 1)], [
        (["sm__sass_data_bytes_mem_global_op_atom.sum", "sm__sass_data_bytes_mem_global_op_red.sum"], "equal"),
        (["smsp__sass_data_bytes_mem_global_op_atom.sum", "smsp__sass_data_bytes_mem_global_op_red.sum"], "equal"),
        (["l1tex__t_bytes_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_bytes_pipe_lsu_mem_global_op_red.sum"], "ge")]),
    ("async bytes", [("gmem_bytes", "async", 1)], [
        (["sm__sass_data_bytes_mem_global_op_ldgsts.sum"], "equal"),
        (["smsp__sass_data_bytes_mem_global_op_ldgsts.sum"], "equal"),
        (["l1tex__t_bytes_pipe_lsu_mem_global_op_ldgsts.sum"], "ge")]),
    ("HMMA", [("tensorop_count", "mma", 1), ("tensorop_count", "wmma", 2)], [
        (["smsp__inst_executed_pipe_tensor_op_hmma.sum"], "equal"),
        (["sm__inst_executed_pipe_tensor_op_hmma.sum"], "equal")]),
    ("HGMMA", [("tensorop_count", "wgmma", 1)], [
        (["smsp__inst_executed_pipe_tensor_op_gmma.sum"], "equal"),
        (["sm__inst_executed_pipe_tensor_op_gmma.sum"], "equal")]),
    ("tensor pipe", [("tensorop_count", "mma", 1), ("tensorop_count", "wmma", 2), ("tensorop_count", "wgmma", 1)], [
        (["smsp__inst_executed_pipe_tensor.sum"], "info"),
        (["sm__inst_executed_pipe_tensor.sum"], "info")]),
]
CONTEXT = ["smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum"]
RELATION_TEXT = {"equal": "equal", "ge": "ncu >= probe (sectors)", "info": "about equal", "missing": "no metric"}
EXPLAIN = {"HMMA": "= mma + 2 x wmma", "HGMMA": "= wgmma (per warp)", "tensor pipe": "~ mma + 2 x wmma + wgmma"}
FOOTER = """Expected relations: bytes: sm__sass_data_bytes_* count the bytes each executed
global instruction requested per thread, as the probe does: equal, coalesced or not
(l1tex__t_bytes_* fallbacks count 32-byte sectors: equal only when coalesced).
HMMA: PTX mma.sync m16n8k16 = 1 SASS HMMA.16816, wmma.mma m16n16k16 (f16) = 2 HMMA.16816,
so ncu = mma + 2 x wmma. HGMMA: one wgmma.mma_async per warp of the warpgroup, both count per warp."""


def median(xs):
    return statistics.median(xs) if xs else None


# --------------------------------------------------------------------------
# metric choice
# --------------------------------------------------------------------------


def query_names(text):
    """Base metric names listed by `ncu --query-metrics` (first token of each
    row that looks like unit__counter)."""
    names = set()
    for line in text.splitlines():
        tok = line.strip().split(" ")[0].split("\t")[0] if line.strip() else ""
        if re.fullmatch(r"[a-z0-9_]+__[a-z0-9_]+", tok):
            names.add(tok)
    return names


def base(metric):
    return metric.split(".")[0]


def choose(names, attempt=0):
    """{quantity: {"metrics": [...], "relation": r}} and the context metrics."""
    chosen = {}
    for q, _, cands in QUANTITIES:
        pick = None
        if names and attempt == 0:
            pick = next((c for c in cands if all(base(m) in names for m in c[0])), None)
            if pick is None:
                chosen[q] = {"metrics": [], "relation": "missing",
                             "why": "none of " + ", ".join(m for c in cands for m in c[0]) + " in --query-metrics"}
                continue
        else:
            pick = cands[min(attempt, len(cands) - 1)]
        chosen[q] = {"metrics": pick[0], "relation": pick[1]}
    ctx = [m for m in CONTEXT if not names or base(m) in names] if attempt == 0 else []
    return chosen, ctx


def metric_list(chosen, ctx):
    out = []
    for q in chosen.values():
        for m in q["metrics"]:
            if m not in out:
                out.append(m)
    for m in ctx:
        if m not in out:
            out.append(m)
    return out


def cmd_metrics(query_path, chosen_path, attempt):
    text = ""
    try:
        with open(query_path, errors="replace") as f:
            text = f.read()
    except OSError:
        pass
    names = query_names(text)
    chosen, ctx = choose(names, attempt)
    with open(chosen_path, "w") as f:
        json.dump({"attempt": attempt, "query_names": len(names), "quantities": chosen, "context": ctx}, f, indent=1)
    for q, c in chosen.items():
        if c["relation"] == "missing":
            print(f"ncu_probes: {q}: {c['why']}", file=sys.stderr)
    print(",".join(metric_list(chosen, ctx)))
    return 0


# --------------------------------------------------------------------------
# ncu CSV
# --------------------------------------------------------------------------


def num(text):
    try:
        return float((text or "").replace(",", ""))
    except ValueError:
        return None


def ncu_launches(path):
    """[(kernel name, {metric: value})] per profiled launch, in order, from
    `ncu --csv --print-units base` output (ncu's ==PROF== lines and the
    app's own output may be mixed in)."""
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return []
    rows = [l for l in lines[start:] if l.startswith('"')]
    order, by_id = [], {}
    for row in csv.DictReader(io.StringIO("\n".join(rows))):
        lid = row.get("ID")
        if lid is None or lid == "ID":
            continue
        if lid not in by_id:
            by_id[lid] = (row.get("Kernel Name") or "?", {})
            order.append(lid)
        v = num(row.get("Metric Value"))
        if v is not None and row.get("Metric Name"):
            by_id[lid][1][row["Metric Name"]] = v
    return [by_id[i] for i in order]


# --------------------------------------------------------------------------
# probe values
# --------------------------------------------------------------------------


def export_has_records(ntop):
    if not ntop:
        return False
    try:
        p = subprocess.run([ntop, "export", "--help"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    # the --view line lists the views: "--view timeline|dmat|records ..."
    return re.search(r"--view\s+[a-z|]*\brecords\b", p.stdout + p.stderr) is not None


def csv_sums(text):
    """{(map or '', field): sum} from a records CSV: numeric columns summed
    per row, keyed by the row's map/probe column when there is one."""
    out = {}
    rd = csv.DictReader(io.StringIO(text))
    if not rd.fieldnames:
        return out
    mapcol = next((c for c in rd.fieldnames if c.lower() in ("map", "probe")), None)
    for row in rd:
        mp = row.get(mapcol, "") if mapcol else ""
        for c, v in row.items():
            if c is None or c == mapcol:
                continue
            try:
                x = int(v, 0)
            except (TypeError, ValueError):
                x = num(v)
                if x is None:
                    continue
            out[(mp, c)] = out.get((mp, c), 0) + x
    return out


def export_launch(ntop, trace_dir, kernel, pid, n, tmp, maps):
    """{(map, field): sum} of the n-th probed launch through `ntop export
    --view records --map M` for each map, or (None, why)."""
    sums = {}
    for mp in maps:
        out = os.path.join(tmp, f"export-{pid}-{n}-{mp}.csv")
        cmd = [ntop, "export", trace_dir, "-k", kernel, "--pid", str(pid), "--view", "records",
               "--map", mp, "--launch", str(n), "-o", out]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, str(e)
        if p.returncode != 0 or not os.path.exists(out):
            return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[0]
        with open(out, errors="replace") as f:
            for (_, field), v in csv_sums(f.read()).items():
                sums[(mp, field)] = v
        os.remove(out)
    return sums, None


def value_from(sums, terms, by_map):
    """Sum of factor x field over the terms; None when a field is absent."""
    total = 0
    for mp, field, factor in terms:
        if by_map:
            v = sums.get(mp, {}).get(field)
        else:
            v = sums.get((mp, field), sums.get(("", field)))
        if v is None:
            return None
        total += factor * v
    return total


def probe_launches(work, app, ntop=None, log=print):
    """{kernel name: [{map: {field: sum}} per probed launch]} over the
    probe.<app>* traces; notes on stdout how the values were read."""
    out = {}
    use_export = export_has_records(ntop)
    export_failed = set()  # kernels export could not read: said once, not per launch
    for d in sorted(os.listdir(work)):
        if not (d == f"probe.{app}" or d.startswith(f"probe.{app}.")) or not os.path.isdir(os.path.join(work, d)):
            continue
        tdir = os.path.join(work, d)
        tr = Trace(read_events(tdir)[0])
        for key, results in tr.results.items():
            name = tr.kernels.get(key, {}).get("name") or f"kid{key[1]}"
            for n, r in enumerate(sorted(results, key=lambda r: ival(r, "seq", 0)), 1):
                sums, why = {}, None
                try:
                    h = ntr_read.read_file(os.path.join(tdir, r.get("file", "")))
                    sums = {m["name"]: ntr_read.field_sums(m) for m in h["maps"]}
                except ntr_read.NtrError as e:
                    why = str(e)
                # the CSV cross-check once per kernel and only for small
                # launches: parsing millions of CSV lines is minutes
                small = ival(r, "records", 0) <= 1000000
                if use_export and n == 1 and small and (tdir, key) not in export_failed:
                    maps = list(sums) or ["gmem_bytes", "tensorop_count"]
                    ex, ewhy = export_launch(ntop, tdir, name, key[0], n, tdir, maps)
                    if ex is None:
                        export_failed.add((tdir, key))
                        log(f"  NOTE {app} {name} launch {n}: ntop export --view records failed "
                            f"(result files used): {ewhy}")
                    else:
                        for q, terms, _ in QUANTITIES:
                            a, b = value_from(sums, terms, True), value_from(ex, terms, False)
                            if a is not None and b is not None and a != b:
                                log(f"  FAIL {app} {name} launch {n}: {q} from export {b} != result file {a}")
                        if not sums:
                            sums = {mp: {} for mp in {m for m, _ in ex}}
                            for (mp, f), v in ex.items():
                                sums.setdefault(mp, {})[f] = v
                if why and not sums:
                    log(f"  FAIL {app} {name} seq {r.get('seq')}: {why}")
                    continue
                out.setdefault(name, []).append(sums)
    return out, use_export


# --------------------------------------------------------------------------
# comparison
# --------------------------------------------------------------------------


def same_kernel(ncu_name, probe_name):
    if ncu_name == probe_name:
        return True
    b = ncu_base_name(ncu_name)
    return bool(b) and b in probe_name


def compare(probe, ncu, chosen, tol):
    """Rows (kernel, quantity, probe, ncu, metric text, diff %, relation, status)."""
    rows = []
    names = list(probe)
    for nname, _ in ncu:
        if not any(same_kernel(nname, p) for p in names) and nname not in names:
            names.append(nname)
    for name in names:
        plaunches = probe.get(name, [])
        nl = [m for n, m in ncu if n == name] or [m for n, m in ncu if same_kernel(n, name)]
        for q, terms, cands in QUANTITIES:
            c = chosen.get(q, {})
            pv = [v for v in (value_from(s, terms, True) for s in plaunches) if v is not None]
            # the chosen metrics first, then any other candidate the CSV holds
            # (a retry with fallbacks may have measured some apps differently)
            order = ([(c["metrics"], c["relation"])] if c.get("metrics") else []) + list(cands)
            mets, rel = c.get("metrics") or [], c.get("relation", "missing")
            nv = []
            for ms, r in order:
                vals = [[m.get(x) for x in ms] for m in nl]
                nv = [sum(v) for v in vals if all(y is not None for y in v)]
                if nv:
                    mets, rel = ms, r
                    break
            p, n = median(pv), median(nv)
            if p is None and n is None:
                status = "n/a"
            elif p is None:
                status = "no probe value"
            elif n is None:
                status = "no ncu value" if rel != "missing" else "metric missing"
            elif p == 0 and n == 0:
                status = "zero"
            elif rel == "info":
                status = "info"
            else:
                d = abs(p - n) / max(abs(n), 1)
                if d * 100 <= tol:
                    status = "ok"
                elif rel == "ge" and n > p:
                    status = "ok (ncu larger: uncoalesced?)"
                else:
                    status = "DIFF"
            if len(set(pv)) > 1:
                status += f" (probe varies {min(pv):g}-{max(pv):g})"
            if len(set(nv)) > 1:
                status += f" (ncu varies {min(nv):g}-{max(nv):g})"
            diff = None if p is None or not n else (p - n) / n * 100
            rows.append((name, q, p, n, " + ".join(mets) or "-", diff, rel, status, len(pv), len(nv)))
    return rows


def fmt_num(v):
    if v is None:
        return "n/a"
    return f"{int(v)}" if float(v).is_integer() else f"{v:.4g}"


def short(name, n=36):
    m = re.match(r"_Z(\d+)", name)
    if m:
        k = int(m.group(1))
        return name[m.end():m.end() + k]
    return name if len(name) <= n else name[: n - 3] + "..."


def analyse(work, ntop=None, tol=0.5):
    try:
        with open(os.path.join(work, "chosen.json")) as f:
            chosen = json.load(f)["quantities"]
    except (OSError, ValueError, KeyError) as e:
        print(f"FAIL: no usable chosen.json in {work} ({e}): metrics unknown")
        chosen = {}
    apps = sorted({d.split(".")[1] for d in os.listdir(work) if d.startswith(("probe.", "ncu."))
                   and len(d.split(".")) >= 2 and d.split(".")[1] != "csv"}) if os.path.isdir(work) else []
    all_rows = []
    sources = set()
    for app in apps:
        probe, used_export = probe_launches(work, app, ntop)
        sources.add("ntop export --view records (checked against the result files)" if used_export
                    else "the result files (tests/gpu/ntr_read.py)")
        ncu = ncu_launches(os.path.join(work, f"ncu.{app}.csv"))
        if not ncu:
            print(f"  WARN {app}: no ncu rows in ncu.{app}.csv")
        if not probe:
            print(f"  WARN {app}: no probed launch with results")
        for r in compare(probe, ncu, chosen, tol):
            all_rows.append((app,) + r)
    # a zero probe value with no ncu value says nothing
    shown = [r for r in all_rows if r[8] not in ("zero", "n/a") and (r[3] or r[4])]
    print("| app | kernel | quantity | probe | ncu | ncu metric | diff % | expected | status | launches p/n |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for app, name, q, p, n, met, diff, rel, status, np_, nn in shown:
        exp = EXPLAIN.get(q, "= probe") if rel in ("equal", "info") else RELATION_TEXT.get(rel, rel)
        print(f"| {app} | `{short(name)}` | {q} | {fmt_num(p)} | {fmt_num(n)} | {met} | "
              f"{'n/a' if diff is None else f'{diff:+.2f}'} | {exp} | {status} | {np_}/{nn} |")
    zero = len(all_rows) - len(shown)
    print(f"({zero} rows where both are zero, or the probe is zero and ncu has no value, are not shown)")
    missing = sorted({q for q, c in chosen.items() if c.get("relation") == "missing"})
    if missing:
        print("no ncu metric for: " + ", ".join(missing))
    print(FOOTER)
    print("probe values from " + (", ".join(sorted(sources)) or "nothing"))
    bad = [r for r in shown if r[8].startswith("DIFF")]
    ok = [r for r in shown if r[8].startswith("ok")]
    print(f"{len(ok)} ok, {len(bad)} DIFF, {len(shown) - len(ok) - len(bad)} other")
    for r in bad:
        print(f"DIFF: {r[0]} {short(r[1])} {r[2]}: probe {fmt_num(r[3])} vs ncu {fmt_num(r[4])} ({r[5]})")
    return 1 if bad else 0


# --------------------------------------------------------------------------
# selftest
# --------------------------------------------------------------------------


NCU_CSV = '''==PROF== Connected to process 4242 (/x/tensorops)
checksum to_wmma_gemm 0123456789abcdef
==PROF== Profiling "_Z12to_wmma_gemmPK6__halfS1_Pf" - 0: 0%....50%....100% - 9 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","tensorops","127.0.0.1","_Z12to_wmma_gemmPK6__halfS1_Pf","1","7","(128, 1, 1)","(64, 1, 1)","0","9.0","Command line profiler metrics","sm__sass_data_bytes_mem_global_op_ld.sum","byte","4,194,304"
"0","4242","tensorops","127.0.0.1","_Z12to_wmma_gemmPK6__halfS1_Pf","1","7","(128, 1, 1)","(64, 1, 1)","0","9.0","Command line profiler metrics","sm__sass_data_bytes_mem_global_op_st.sum","byte","262,144"
"0","4242","tensorops","127.0.0.1","_Z12to_wmma_gemmPK6__halfS1_Pf","1","7","(128, 1, 1)","(64, 1, 1)","0","9.0","Command line profiler metrics","smsp__inst_executed_pipe_tensor_op_hmma.sum","inst","8192"
"1","4242","tensorops","127.0.0.1","_Z11to_mma_syncPK6__halfS1_Pf","1","7","(128, 1, 1)","(128, 1, 1)","0","9.0","Command line profiler metrics","sm__sass_data_bytes_mem_global_op_ld.sum","byte","0"
"1","4242","tensorops","127.0.0.1","_Z11to_mma_syncPK6__halfS1_Pf","1","7","(128, 1, 1)","(128, 1, 1)","0","9.0","Command line profiler metrics","sm__sass_data_bytes_mem_global_op_st.sum","byte","262,144"
"1","4242","tensorops","127.0.0.1","_Z11to_mma_syncPK6__halfS1_Pf","1","7","(128, 1, 1)","(128, 1, 1)","0","9.0","Command line profiler metrics","smsp__inst_executed_pipe_tensor_op_hmma.sum","inst","8000"
==PROF== Disconnected from process 4242
tensorops ok launches=2
'''

QUERY = '''Device NVIDIA H200 (GH100)
---------------------------------------------------------------------- ----------------------------------
Metric Name                                                            Metric Description
sm__sass_data_bytes_mem_global_op_ld                                   # of bytes requested by global loads
sm__sass_data_bytes_mem_global_op_st                                   # of bytes requested by global stores
smsp__inst_executed_pipe_tensor_op_hmma                                # of warp instructions executed by tensor pipe (HMMA)
l1tex__t_bytes_pipe_lsu_mem_global_op_atom                             # of bytes for atomics
l1tex__t_bytes_pipe_lsu_mem_global_op_red                              # of bytes for reductions
smsp__sass_inst_executed_op_global_ld                                  # of warp instructions
'''


def selftest():
    import tempfile
    fails = 0

    def expect(cond, what):
        nonlocal fails
        if not cond:
            fails += 1
            print(f"ncu_probes selftest FAIL: {what}")

    names = query_names(QUERY)
    expect("sm__sass_data_bytes_mem_global_op_ld" in names and "Metric" not in names and len(names) == 6,
           f"query names {sorted(names)}")
    chosen, ctx = choose(names)
    expect(chosen["load bytes"] == {"metrics": ["sm__sass_data_bytes_mem_global_op_ld.sum"], "relation": "equal"},
           f"load choice {chosen['load bytes']}")
    expect(chosen["atomic bytes"]["relation"] == "ge" and len(chosen["atomic bytes"]["metrics"]) == 2,
           f"atomic fallback {chosen['atomic bytes']}")
    expect(chosen["HGMMA"]["relation"] == "missing", f"gmma missing {chosen['HGMMA']}")
    expect(ctx == ["smsp__sass_inst_executed_op_global_ld.sum"], f"context {ctx}")
    c1, _ = choose(set(), attempt=1)
    expect(c1["load bytes"]["metrics"] == ["smsp__sass_data_bytes_mem_global_op_ld.sum"], "attempt 1")
    c0, ctx0 = choose(set())
    expect(c0["HGMMA"]["metrics"] == ["smsp__inst_executed_pipe_tensor_op_gmma.sum"] and len(ctx0) == 2,
           "no query: first candidates")

    with tempfile.TemporaryDirectory() as w:
        with open(os.path.join(w, "ncu.tensorops.csv"), "w") as f:
            f.write(NCU_CSV)
        nl = ncu_launches(os.path.join(w, "ncu.tensorops.csv"))
        expect(len(nl) == 2 and nl[0][1]["sm__sass_data_bytes_mem_global_op_ld.sum"] == 4194304,
               f"ncu rows {nl}")
        with open(os.path.join(w, "chosen.json"), "w") as f:
            json.dump({"quantities": chosen}, f)
        # probe trace: wmma kernel 2 launches (thread map load/store sums,
        # warp map wmma 4096), mma kernel 1 launch with mma 8192 (ncu says
        # 8000: a DIFF) and async bytes.
        t = os.path.join(w, "probe.tensorops")
        os.makedirs(os.path.join(t, "results"))
        ev = ["kernel t=1 pid=9 kid=1 mid=1 name=_Z12to_wmma_gemmPK6__halfS1_Pf ptx=1",
              "kernel t=1 pid=9 kid=2 mid=1 name=_Z11to_mma_syncPK6__halfS1_Pf ptx=1"]

        def write(seq, kid, loads, stores, asyncs, mma, wmma):
            threads = 128
            recs = b"".join(ntr_read.struct.pack("<IIII", loads // threads, stores // threads, 0, asyncs // threads)
                            for _ in range(threads))
            cnt = ntr_read.struct.pack(f"<{threads}I", *([16] * threads))
            warps = 4
            trec = b"".join(ntr_read.struct.pack("<IIII", mma // warps, wmma // warps, 0, 0) for _ in range(warps))
            tcnt = ntr_read.struct.pack(f"<{warps}I", *([16] * warps))
            gb = ("gmem_bytes", 1, 1, 16, [("load", 4, 0), ("store", 4, 4), ("atomic", 4, 8), ("async", 4, 12)],
                  threads, cnt, recs, False)
            tc = ("tensorop_count", 2, 1, 16, [("mma", 4, 0), ("wmma", 4, 4), ("wgmma", 4, 8), ("tcgen05", 4, 12)],
                  warps, tcnt, trec, False)
            name = f"9-{seq}.ntr"
            with open(os.path.join(t, "results", name), "wb") as f:
                f.write(ntr_read.write_bytes("k", "gmem_bytes,tensorop_count", [gb, tc], seq=seq, pid=9, kid=kid))
            ev.append(f"result t=2 pid=9 kid={kid} seq={seq} file=results/{name} maps=2 records=132 dropped=0 "
                      f"bytes=4096 ns=100")

        write(1, 1, 4194304, 262144, 0, 0, 4096)
        write(2, 1, 4194304, 262144, 0, 0, 4096)
        write(3, 2, 0, 262144, 6291456, 8192, 0)
        with open(os.path.join(t, "events.log"), "w") as f:
            f.write("\n".join(ev) + "\n")
        probe, used = probe_launches(w, "tensorops", None, log=lambda s: None)
        expect(not used and len(probe.get("_Z12to_wmma_gemmPK6__halfS1_Pf", [])) == 2, f"probe {probe}")
        rows = {(r[0], r[1]): r for r in compare(probe, nl, chosen, 0.5)}
        w_ld = rows.get(("_Z12to_wmma_gemmPK6__halfS1_Pf", "load bytes"))
        expect(w_ld and w_ld[2] == 4194304 and w_ld[3] == 4194304 and w_ld[7] == "ok", f"wmma load {w_ld}")
        w_h = rows.get(("_Z12to_wmma_gemmPK6__halfS1_Pf", "HMMA"))
        expect(w_h and w_h[2] == 8192 and w_h[7] == "ok", f"wmma HMMA = 2 x wmma {w_h}")
        m_h = rows.get(("_Z11to_mma_syncPK6__halfS1_Pf", "HMMA"))
        expect(m_h and m_h[7] == "DIFF" and abs(m_h[5] - 2.4) < 1e-9, f"mma HMMA diff {m_h}")
        m_as = rows.get(("_Z11to_mma_syncPK6__halfS1_Pf", "async bytes"))
        expect(m_as and m_as[2] == 6291456 and m_as[3] is None, f"async without ncu metric {m_as}")
        m_g = rows.get(("_Z11to_mma_syncPK6__halfS1_Pf", "HGMMA"))
        expect(m_g and m_g[7] == "metric missing", f"gmma missing {m_g}")
        expect(csv_sums("map,unit,load,store\ngmem_bytes,0,4,8\ngmem_bytes,1,4,0\n") ==
               {("gmem_bytes", "unit"): 1, ("gmem_bytes", "load"): 8, ("gmem_bytes", "store"): 8}, "csv sums")
        expect(value_from({("", "mma"): 3, ("", "wmma"): 2}, QUANTITIES[4][1], False) == 7, "value_from csv")
        import contextlib
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = analyse(w)
        text = buf.getvalue()
        expect(rc == 1 and "DIFF: tensorops to_mma_sync HMMA: probe 8192 vs ncu 8000" in text, "analyse:\n" + text)
        with open(os.path.join(w, "q.txt"), "w") as f:
            f.write(QUERY)
        with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
            cmd_metrics(os.path.join(w, "q.txt"), os.path.join(w, "c.json"), 0)
        expect(out.getvalue().strip().split(",")[0] == "sm__sass_data_bytes_mem_global_op_ld.sum",
               f"metrics list {out.getvalue()}")
    expect(ntr_read.selftest() == 0, "ntr_read selftest")
    print("ncu_probes selftest", "FAILED" if fails else "ok")
    return 1 if fails else 0


def main(argv):
    if argv == ["selftest"]:
        return selftest()
    if len(argv) >= 3 and argv[0] == "metrics":
        attempt = int(argv[4]) if len(argv) == 5 and argv[3] == "--attempt" else 0
        return cmd_metrics(argv[1], argv[2], attempt)
    if len(argv) >= 2 and argv[0] == "analyse":
        ntop, tol = None, 0.5
        rest = argv[2:]
        while rest:
            if rest[0] == "--ntop" and len(rest) > 1:
                ntop = rest[1]
            elif rest[0] == "--tol" and len(rest) > 1:
                tol = float(rest[1])
            else:
                print(__doc__)
                return 2
            rest = rest[2:]
        return analyse(argv[1], ntop, tol)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
