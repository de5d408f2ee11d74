#!/usr/bin/env python3
"""UI responsiveness under a launch storm (bench/README.md).

Runs the live UI (`ntop -o DIR -- app_storm ...`) over the fake driver
(tests/fakecuda) in a private tmux server and measures input-to-redraw
latency: a key that changes the screen is sent with `tmux send-keys` and
`tmux capture-pane` is polled until the change shows. One cycle is four
samples: `/` (the filter prompt opens), `s`, `t` (the filter text grows),
Esc (the prompt closes). Each key goes 100-300 ms (uniformly random) after
the previous one showed, like typing, so keys do not lock onto the UI's
frame clock (at most 20 frames a second: a key sent right after a frame
waits for the next one). The same is measured with the app idle (all
kernels launched once, then sleeping), with a steady storm (same launch
configuration, so the hook writes only periodic `stats` lines), with a
storm whose grid changes every launch (a `launch` event line per launch),
with 8 processes (ranks) of 200 kernels each storming at once (the kernel
list groups their kernels by name: 200 rows of "8 proc") and, with --max,
with the app launching back to back. Scenarios alternate
run by run, so they share the machine's state.

Also reported per scenario: the launch rate the app achieved (its own
count, checked against the hook's `exit ... launches=` line), events the
hook lost, and the CPU time of the UI process (utime + stime from
/proc/PID/stat over the measuring window, as % of one core).

The latency includes tmux itself (send-keys starting, the server relaying
input and output) and the polling step; the `poll` column says how long one
capture-pane took, the resolution of the measurement.

usage: bench/ui_bench.py [--build DIR] [--runs N] [--cycles N] [--rate N]
                         [--max] [--out FILE]
"""
import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLS, ROWS = 120, 40
KERNELS = 16
GAP_MIN, GAP_MAX = 0.1, 0.3  # seconds between a key showing and the next key
CLK_TCK = os.sysconf("SC_CLK_TCK")


class Tmux:
    def __init__(self, sock):
        self.sock = sock

    def __call__(self, *args, check=True):
        return subprocess.run(["tmux", "-S", self.sock] + list(args), check=check,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout

    def screen(self):
        return self("capture-pane", "-p", "-t", "ui")


def wait_for(pred, tm, timeout):
    """Polls the screen until pred(screen) holds; returns (seconds, polls) or None."""
    t0 = time.monotonic()
    polls = 0
    while True:
        polls += 1
        if pred(tm.screen()):
            return time.monotonic() - t0, polls
        if time.monotonic() - t0 > timeout:
            return None


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return int(rest[11]) + int(rest[12])  # utime, stime (fields 14, 15)


def prompt(text):
    """The filter prompt line is '/TEXT_  (n of m kernels; ...)'."""
    pat = re.compile(r"^/" + re.escape(text) + r"_ ", re.M)
    return lambda s: pat.search(s) is not None


def no_prompt(s):
    return re.search(r"^/[a-z]*_ ", s, re.M) is None


STEPS = [("/", prompt("")), ("s", prompt("s")), ("t", prompt("st")), ("Escape", no_prompt)]


def one_run(b, name, app_args, cycles, work, ready):
    """Starts the UI on app_storm, measures, stops; returns a dict."""
    d = tempfile.mkdtemp(prefix=name + ".", dir=work)
    tm = Tmux(os.path.join(d, "tmux.sock"))
    stop = os.path.join(d, "stop")
    sess = os.path.join(d, "session")
    env = {
        "HOME": d, "XDG_CONFIG_HOME": d,
        "NTOP_REAL_LIBCUDA": os.path.join(b, "tests/fakecuda/driver/libcuda.so.1"),
        "NTOP_HOOK_DIR": os.path.join(b, "lib/ntop"),
    }
    envs = " ".join("%s=%s" % kv for kv in env.items())
    cmd = "env %s bash -c 'echo $$ > %s/ntop.pid; exec %s/bin/ntop -o %s -- %s/bench/app_storm %s --stop %s'" % (
        envs, d, b, sess, b, " ".join(app_args), stop)
    tm("new-session", "-d", "-s", "ui", "-x", str(COLS), "-y", str(ROWS), cmd)
    res = {"name": name, "lat": [], "print": [], "esc": [], "polls": [], "cap_ms": []}
    try:
        if wait_for(ready, tm, 15) is None:
            raise RuntimeError("%s: the UI never listed all kernels:\n%s" % (name, tm.screen()))
        time.sleep(1.0)  # past the start: every kernel known, the storm steady
        pid = int(open(os.path.join(d, "ntop.pid")).read())
        c0, t0 = cpu_ticks(pid), time.monotonic()
        for _ in range(cycles):
            for key, pred in STEPS:
                time.sleep(random.uniform(GAP_MIN, GAP_MAX))
                ts = time.monotonic()
                tm("send-keys", "-t", "ui", key)
                r = wait_for(pred, tm, 5)
                if r is None:
                    raise RuntimeError("%s: key %s never showed:\n%s" % (name, key, tm.screen()))
                lat = time.monotonic() - ts
                res["lat"].append(lat * 1e3)
                res["esc" if key == "Escape" else "print"].append(lat * 1e3)
                res["polls"].append(r[1])
        c1, t1 = cpu_ticks(pid), time.monotonic()
        res["ui_cpu"] = 100.0 * (c1 - c0) / CLK_TCK / (t1 - t0)
        res["window_s"] = t1 - t0
        # the resolution: one capture-pane on this screen
        for _ in range(10):
            ts = time.monotonic()
            tm.screen()
            res["cap_ms"].append((time.monotonic() - ts) * 1e3)
        open(stop, "w").close()
        if wait_for(lambda s: "exited with status" in s or "killed by signal" in s, tm, 30) is None:
            raise RuntimeError("%s: the app did not finish:\n%s" % (name, tm.screen()))
        tm("send-keys", "-t", "ui", "q")
        app_log = open(os.path.join(sess, "app.log")).read()
        m = re.search(r"app_storm: launches=(\d+) seconds=([0-9.]+) rate=(\d+)", app_log)
        if not m:
            raise RuntimeError("%s: no app_storm line in app.log: %s" % (name, app_log[-300:]))
        res["launches"], res["app_s"], res["rate"] = int(m.group(1)), float(m.group(2)), int(m.group(3))
        ev = open(os.path.join(sess, "events.log")).read()
        hook = re.findall(r"^exit .* launches=(\d+)", ev, re.M)
        res["hook_launches"] = sum(int(x) for x in hook) if hook else -1
        res["lost"] = sum(int(x) for x in re.findall(r"^lost .*events=(\d+)", ev, re.M))
        res["event_lines"] = ev.count("\n")
    finally:
        open(stop, "w").close()
        tm("kill-server", check=False)
        time.sleep(0.2)
        shutil.rmtree(d, ignore_errors=True)
    return res


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(ROOT), "build-bench-rel"),
                    help="build tree with bin/ntop, lib/ntop, tests/fakecuda and bench/app_storm")
    ap.add_argument("--runs", type=int, default=3, help="runs per scenario (alternating)")
    ap.add_argument("--cycles", type=int, default=12, help="key cycles (4 samples each) per run")
    ap.add_argument("--rate", type=int, default=120000, help="storm launches per second")
    ap.add_argument("--max", action="store_true", help="also a back-to-back storm")
    ap.add_argument("--out", help="also write the report here")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    for p in ("bin/ntop", "lib/ntop/libcuda.so.1", "tests/fakecuda/driver/libcuda.so.1", "bench/app_storm"):
        if not os.path.exists(os.path.join(b, p)):
            sys.exit("ui_bench: %s/%s missing (build ntop, ntop_hook, fakecuda and app_storm)" % (b, p))
    if not shutil.which("tmux"):
        sys.exit("ui_bench: needs tmux")
    base = ["--kernels", str(KERNELS), "--seconds", "120"]
    last = "storm_k%03d" % (KERNELS - 1)
    scen = [("idle", base + ["--rate", "0"], last),
            ("storm", base + ["--rate", str(a.rate)], last),
            ("storm-vary", base + ["--rate", str(a.rate), "--vary"], last),
            ("ranks-8x200", ["--kernels", "200", "--procs", "8", "--seconds", "120", "--rate", str(a.rate // 8)],
             "8 proc")]
    if a.max:
        scen.append(("storm-max", base + ["--rate", "max"], last))
    work = tempfile.mkdtemp(prefix="ntop-uibench.")
    out = {n: [] for n, _, _ in scen}
    try:
        for i in range(a.runs):
            for n, args, ready in scen:
                r = one_run(b, n, args, a.cycles, work, lambda s, w=ready: w in s)
                out[n].append(r)
                print("run %d %-10s median %6.1f ms  rate %7d/s  ui cpu %5.1f%%" %
                      (i + 1, n, statistics.median(r["lat"]), r["rate"], r["ui_cpu"]), file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = []
    say = lines.append
    say("# ntop UI benchmark %s" % time.strftime("%Y-%m-%dT%H:%M:%S"))
    say("machine: %s, %d CPUs; build %s; tmux %s; %dx%d; %d runs x %d samples per scenario" % (
        os.uname().nodename, os.cpu_count(), b, Tmux("")("-V").strip(), COLS, ROWS, a.runs, a.cycles * len(STEPS)))
    say("")
    say("| scenario | launches/s (median of runs, min-max) | event lines/s | keys / s t: median | p95 | "
        "Esc: median | p95 | all keys: median | p95 | per-run medians (all) | UI CPU, % of one core | events lost | one poll |")
    say("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n, _, _ in scen:
        rs = out[n]
        pooled = {k: [x for r in rs for x in r[k]] for k in ("lat", "print", "esc")}
        rates = [r["rate"] for r in rs]
        mism = [r for r in rs if r["hook_launches"] != r["launches"]]
        say("| %s | %d (%d-%d) | %.0f | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %s | %.1f%% | %d | %.1f ms |%s" % (
            n, statistics.median(rates), min(rates), max(rates),
            statistics.median([r["event_lines"] / r["app_s"] for r in rs]),
            statistics.median(pooled["print"]), pct(pooled["print"], 95),
            statistics.median(pooled["esc"]), pct(pooled["esc"], 95),
            statistics.median(pooled["lat"]), pct(pooled["lat"], 95),
            " ".join("%.1f" % statistics.median(r["lat"]) for r in rs),
            statistics.median([r["ui_cpu"] for r in rs]), sum(r["lost"] for r in rs),
            statistics.median([x for r in rs for x in r["cap_ms"]]),
            "" if not mism else "  (hook counted %s launches, app %s)" % (
                [r["hook_launches"] for r in mism], [r["launches"] for r in mism])))
    rep = "\n".join(lines)
    print(rep)
    if a.out:
        with open(a.out, "w") as f:
            f.write(rep + "\n")


if __name__ == "__main__":
    main()
