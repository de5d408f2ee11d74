#!/usr/bin/env python3
"""Checks one program of tests/gpu/jit_programs.sh (PTX for NVRTC,
nvJitLink, Triton/Inductor and -rdc kernels; kernels in CUDA graphs) from
its plain run, its run under `ntop record -p block_sched` and that run's
`ntop report --json`.

Sub-commands:
  app NAME --plain-out F --plain-rc N --probed-out F --probed-rc N
           --report JSON --events LOG --user REGEX [--limit-kernels REGEX]
           [--before JSON] [--source S] --rows ROWS
      PASS/FAIL lines for one program and one row (JSON) appended to ROWS.
      --user: the program's own kernels (searched in the mangled and the
      demangled name); each must have PTX, be instrumented (status ok) and
      have every probed launch written with one record per warp and none
      dropped. --limit-kernels: kernels that hit a documented limit; listed
      with their reasons, not counted as failures. --before: the report of
      the same program under the ntop of before the change (the share of
      launched kernels with PTX, before and after). --source: a PTX
      source (nvrtc, nvjitlink) at least one module must have (a `module`
      line's source=). Exit 0 = no FAIL.
  table ROWS     the summary table
  selftest       this script's checks on synthetic data (no GPU)
"""
import json
import re
import sys


def kernels_of(report):
    """Every kernel of every process in a `ntop report --json`."""
    for proc in report.get("processes", []):
        for k in proc.get("kernels", []):
            yield k


def matches(regex, k):
    return bool(regex) and bool(re.search(regex, k.get("name", "")) or re.search(regex, k.get("demangled") or ""))


def share(report):
    """(launched kernels with PTX, launched kernels)."""
    launched = [k for k in kernels_of(report) if k.get("launches", 0) > 0]
    return sum(1 for k in launched if k.get("ptx")), len(launched)


def sources(events_text):
    """How many modules each PTX source gave (events.log `module` lines)."""
    count = {}
    for line in events_text.splitlines():
        if line.startswith("module "):
            m = re.search(r" source=(\S+)", line)
            s = m.group(1) if m else "?"
            count[s] = count.get(s, 0) + 1
    return count


def check_kernel(k):
    """Problems of one of the program's own kernels (empty: it was probed
    right) and (probed launches, launches with one record per warp)."""
    problems = []
    name = k.get("demangled") or k.get("name")
    if not k.get("ptx"):
        problems.append(f"{name}: no PTX: {k.get('ptx_reason')}")
    inst = k.get("instrument") or {}
    if k.get("ptx") and inst.get("status") != "ok":
        problems.append(f"{name}: instrumentation {inst.get('status')}: {inst.get('reason')}")
    probed = k.get("probed_launches") or []
    good = 0
    for p in probed:
        bs = p.get("block_sched") or {}
        ok = p.get("ok") and bs.get("warps_recorded") == bs.get("warps_expected") and not p.get("records_dropped")
        good += bool(ok)
        if not ok:
            problems.append(f"{name} seq {p.get('seq')}: ok={p.get('ok')} error={p.get('error')} "
                            f"warps {bs.get('warps_recorded')}/{bs.get('warps_expected')} "
                            f"dropped {p.get('records_dropped')}")
    if k.get("ptx") and not probed:
        problems.append(f"{name}: never probed ({k.get('launches')} launches; declined: "
                        f"{k.get('declined_reason')})")
    return problems, len(probed), good


def analyse(name, plain_out, plain_rc, probed_out, probed_rc, report, events_text, user, limit, before,
            source=""):
    """The checks of one program: (row dict, list of FAIL strings, list of notes)."""
    fails, notes = [], []
    if source and source not in sources(events_text):
        fails.append(f"no module's PTX came from {source}")
    same = plain_rc == 0 and probed_rc == 0 and plain_out == probed_out
    if plain_rc != 0:
        fails.append(f"plain run exit {plain_rc}")
    if probed_rc != 0:
        fails.append(f"run under ntop exit {probed_rc}")
    if plain_out != probed_out:
        fails.append("output differs from the plain run")
    own = [k for k in kernels_of(report) if matches(user, k) and not matches(limit, k) and k.get("launches", 0) > 0]
    lim = [k for k in kernels_of(report) if matches(limit, k)]
    if not own:
        fails.append(f"no kernel of the program (/{user}/) was listed")
    probed = good = kernels_ok = 0
    for k in own:
        problems, n, g = check_kernel(k)
        probed += n
        good += g
        kernels_ok += not problems
        fails.extend(problems)
    for k in lim:
        inst = k.get("instrument") or {}
        notes.append(f"limit: {k.get('demangled') or k.get('name')}: ptx={k.get('ptx')} "
                     f"instrument={inst.get('status')} reason={inst.get('reason') or k.get('declined_reason')}")
    with_ptx, launched = share(report)
    row = {
        "name": name, "same": same, "own": f"{kernels_ok}/{len(own)}", "probed": probed,
        "warps_ok": f"{good}/{probed}", "ptx_share": f"{with_ptx}/{launched}",
        "before": "%d/%d" % share(before) if before else "-",
        "sources": ",".join(f"{s}:{n}" for s, n in sorted(sources(events_text).items())) or "-",
        "fails": len(fails),
    }
    return row, fails, notes


def cmd_app(argv):
    opts = {}
    for i in range(1, len(argv), 2):
        opts[argv[i]] = argv[i + 1] if i + 1 < len(argv) else ""
    name = argv[0]

    def text(key):
        try:
            with open(opts[key], errors="replace") as f:
                return f.read()
        except (KeyError, OSError):
            return ""

    def load(key):
        try:
            with open(opts[key]) as f:
                return json.load(f)
        except (KeyError, OSError, ValueError):
            return {}

    row, fails, notes = analyse(name, text("--plain-out"), int(opts.get("--plain-rc", "1")), text("--probed-out"),
                                int(opts.get("--probed-rc", "1")), load("--report"), text("--events"),
                                opts.get("--user", ""), opts.get("--limit-kernels", ""), load("--before") or None,
                                opts.get("--source", ""))
    for f in fails:
        print(f"  FAIL {name}: {f}")
    for n in notes:
        print(f"  note {name}: {n}")
    if not fails:
        print(f"  PASS {name}: output as plain, own kernels probed {row['own']}, warps {row['warps_ok']}, "
              f"PTX share {row['ptx_share']} (before {row['before']}), sources {row['sources']}")
    with open(opts["--rows"], "a") as f:
        f.write(json.dumps(row) + "\n")
    return 1 if fails else 0


COLUMNS = [("name", "program"), ("same", "out=plain"), ("own", "own probed"), ("probed", "probed launches"),
           ("warps_ok", "1 rec/warp"), ("ptx_share", "PTX share"), ("before", "before"), ("sources", "PTX sources"),
           ("fails", "FAIL")]


def cmd_table(path):
    rows = []
    try:
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except OSError:
        pass
    cells = [[h for _, h in COLUMNS]] + [[str(r.get(k, "-")) for k, _ in COLUMNS] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    for c in cells:
        print("  ".join(v.ljust(w) for v, w in zip(c, widths)).rstrip())
    print(f"total FAIL: {sum(int(r.get('fails', 1)) for r in rows)}")
    return 0


def selftest():
    bs = {"warps_recorded": 8, "warps_expected": 8}
    good = {"name": "_Z6kernelPf", "demangled": "kernel(float*)", "launches": 20, "ptx": True,
            "instrument": {"status": "ok"},
            "probed_launches": [{"seq": 1, "ok": True, "records_dropped": 0, "block_sched": bs}]}
    aten = {"name": "_ZN2at6native", "launches": 5, "ptx": False, "ptx_reason": "SASS only"}
    lim = {"name": "_Z9rdc_crossPfi", "launches": 10, "ptx": True,
           "instrument": {"status": "failed", "reason": "JIT: unresolved extern function"}}
    rep = {"processes": [{"kernels": [good, aten, lim]}]}
    ev = "module mid=1 source=nvrtc\nmodule mid=2 source=app\nmodule mid=3 source=nvrtc\nkernel kid=1\n"
    row, fails, notes = analyse("t", "a\n", 0, "a\n", 0, rep, ev, "kernel|rdc_", "rdc_cross", None)
    assert not fails, fails
    assert row["own"] == "1/1" and row["warps_ok"] == "1/1" and row["ptx_share"] == "2/3", row
    assert row["sources"] == "app:1,nvrtc:2" and row["before"] == "-", row
    assert notes and "unresolved" in notes[0], notes
    # a wrong record count, a changed output, an unprobed kernel: each a FAIL
    bad = json.loads(json.dumps(good))
    bad["probed_launches"][0]["block_sched"]["warps_recorded"] = 7
    never = dict(good, name="_Z5otherv", demangled="other()", probed_launches=[])
    rep2 = {"processes": [{"kernels": [bad, never]}]}
    row, fails, _ = analyse("t", "a\n", 0, "b\n", 0, rep2, "", "kernel|other", "", rep)
    assert len(fails) == 3 and row["same"] is False and row["warps_ok"] == "0/1", fails
    assert row["before"] == "2/3" and row["own"] == "0/2", row
    assert any("never probed" in f for f in fails) and any("warps 7/8" in f for f in fails), fails
    # the PTX source asked for: there, or a FAIL
    _, fails, _ = analyse("t", "a\n", 0, "a\n", 0, rep, ev, "kernel|rdc_", "rdc_cross", None, "nvrtc")
    assert not fails, fails
    _, fails, _ = analyse("t", "a\n", 0, "a\n", 0, rep, ev, "kernel|rdc_", "rdc_cross", None, "nvjitlink")
    assert fails == ["no module's PTX came from nvjitlink"], fails
    # nothing of the program listed
    _, fails, _ = analyse("t", "", 0, "", 0, {"processes": []}, "", "kernel", "", None)
    assert fails == ["no kernel of the program (/kernel/) was listed"], fails
    print("jit_programs_check selftest: ok")
    return 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "app":
        return cmd_app(argv[2:])
    if len(argv) == 3 and argv[1] == "table":
        return cmd_table(argv[2])
    if len(argv) == 2 and argv[1] == "selftest":
        return selftest()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
