#!/usr/bin/env python3
"""Checks a trace of tests/gpu/multi_gpu.sh for device attribution:

  check_devices.py KIND TRACE_DIR [PERFETTO.json]

KIND multi_gpu: scale_dev's launches with 4096 blocks on device 0 and
8192 on device 1, the report's probed launches on the same, the kernel on
GPUs 0 and 1; torch: launches on both devices; ddp: each process with
launches used one device, two processes two different ones. Every KIND:
`ntop report --json` says nothing is incomplete; a Perfetto file, when
given, has a process per GPU for a process that used two. Prints one line:
'ok ...' or 'FAIL ...' (exit status 1)."""
import json
import os
import subprocess
import sys


def events(path):
    for line in open(os.path.join(path, "events.log"), errors="replace"):
        w = line.split()
        if w:
            yield w[0], dict(x.split("=", 1) for x in w[1:] if "=" in x)


def main():
    kind, trace = sys.argv[1], sys.argv[2]
    ntop = os.environ.get("NTOP", "ntop")
    rep = json.loads(subprocess.run([ntop, "report", "--json", trace], capture_output=True, text=True).stdout)
    bad = []
    if rep.get("incomplete"):
        bad.append("incomplete: %s" % rep["incomplete"])
    names, devs_of_pid, launches = {}, {}, 0
    for t, f in events(trace):
        if t == "kernel":
            names[(f["pid"], f["kid"])] = f.get("name", "?")
        if t != "launch" or "dev" not in f:
            continue
        launches += 1
        pid, dev, grid = f["pid"], int(f["dev"]), int(f["grid"].split(",")[0])
        devs_of_pid.setdefault(pid, set()).add(dev)
        name = names.get((pid, f["kid"]), "?")
        if kind == "multi_gpu" and "scale_dev" in name and dev != {4096: 0, 8192: 1}.get(grid, -1):
            bad.append("%s grid %d on dev %d" % (name, grid, dev))
    if not launches:
        bad.append("no launch line with dev=")
    all_devs = set().union(*devs_of_pid.values()) if devs_of_pid else set()
    if kind in ("multi_gpu", "torch") and all_devs != {0, 1}:
        bad.append("devices %s, want 0 and 1" % sorted(all_devs))
    if kind == "ddp":
        one = [d for d in devs_of_pid.values()]
        if len(one) != 2 or any(len(d) != 1 for d in one) or one[0] == one[1]:
            bad.append("rank devices %s" % one)
    for p in rep.get("processes", []):
        for k in p.get("kernels", []):
            for l in k.get("probed_launches", []):
                if kind == "multi_gpu" and l.get("grid") and l.get("device") != {4096: 0, 8192: 1}.get(l["grid"][0]):
                    bad.append("probed seq %s grid %s device %s" % (l["seq"], l["grid"], l.get("device")))
    if len(sys.argv) > 3:
        ev = json.load(open(sys.argv[3]))["traceEvents"]
        gpu_procs = [e for e in ev if e["ph"] == "M" and e["name"] == "process_name" and ", GPU " in e["args"]["name"]]
        if kind == "multi_gpu" and len(gpu_procs) != 2:
            bad.append("perfetto: %d GPU processes" % len(gpu_procs))
    print(("FAIL " + "; ".join(bad[:4])) if bad else
          "ok %d launch lines with dev=, devices %s" % (launches, ",".join(map(str, sorted(all_devs)))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
