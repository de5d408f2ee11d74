#!/usr/bin/env python3
"""Checks block_sched's block records against block_sched_warp's warp
records of the same launches (both probes in one probed copy: `ntop record
-p block_sched -p block_sched_warp`), read with ntr_read.py:

  - every block has a record, on the SM all its warps report;
  - its start is within TOL cycles of its earliest warp's start (thread 0
    stores it; the two probes read their clocks a few instructions apart);
  - its end is within TOL cycles of its last warp's end (every warp folds
    its exit clock in with red.global.max);
  - for examples/cuda/block_skew.cu's kernels (--spin N): a block lives at
    least 8 * N cycles (its last warp spins that long) and its end is the
    last warp's, not thread 0's (which leaves after N cycles, or at once).

  check_block_records.py [--spin N] [--tol CYCLES] TRACE_DIR
  check_block_records.py selftest

Prints a line per probed launch and a summary; exit 1 on any failure.
"""
import glob
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ntr_read  # noqa: E402

SKEW_KERNELS = ("bs_stagger", "bs_early")


def fields(m):
    return {f[0]: (f[2], f[1]) for f in m["fields"]}


def get(rec, off, typ):
    return struct.unpack_from("<Q" if typ == ntr_read.TYPE_U64 else "<I", rec, off)[0]


def block_records(m):
    """[(start, gstart, end, smid) or None] per block of a block map."""
    f, out = fields(m), []
    counts = memoryview(m["counts"]).cast("I")
    for b in range(m["units"]):
        if counts[b] < m["rec_size"]:
            out.append(None)
            continue
        rec = m["records"][b * m["rec_size"]:(b + 1) * m["rec_size"]]
        out.append(tuple(get(rec, *f[k]) for k in ("start", "gstart", "end", "smid")))
    return out


def warp_extents(m, block):
    """[(first start, last end, {smid}) or None] per block of a warp map."""
    f, upb = fields(m), (block[0] * block[1] * block[2] + 31) // 32
    counts = memoryview(m["counts"]).cast("I")
    out = []
    for b in range(m["units"] // upb):
        starts, ends, sms = [], [], set()
        for u in range(b * upb, (b + 1) * upb):
            if counts[u] < m["rec_size"]:
                continue
            rec = m["records"][u * m["rec_size"]:(u + 1) * m["rec_size"]]
            s = get(rec, *f["start"])
            starts.append(s)
            ends.append(s + get(rec, *f["elapsed"]))
            sms.add(get(rec, *f["smid"]))
        out.append((min(starts), max(ends), sms) if starts else None)
    return out


def check_launch(h, spin, tol):
    """(problems, summary line) of one result file's header h."""
    maps = {m["name"]: m for m in h["maps"]}
    blk, wrp = maps.get("block_sched"), maps.get("block_sched_warp")
    if not blk or blk["level"] != "block":
        return [f"seq {h['seq']}: no block_sched block map"], ""
    recs = block_records(blk)
    problems = [f"block {b}: no record" for b, r in enumerate(recs) if r is None][:5]
    problems += [f"block {b}: end {r[2]} before start {r[0]}" for b, r in enumerate(recs)
                 if r and r[2] < r[0]][:5]
    line = f"{h['kernel'][:40]} seq {h['seq']}: {len(recs)} blocks"
    if wrp:
        ext = warp_extents(wrp, h["block"])
        if len(ext) != len(recs):
            return problems + [f"{len(ext)} blocks of warps, {len(recs)} block records"], line
        ds, de = [], []
        for b, (r, w) in enumerate(zip(recs, ext)):
            if not r or not w:
                continue
            if w[2] != {r[3]}:
                problems.append(f"block {b}: SM {r[3]}, its warps on {sorted(w[2])}")
            ds.append(r[0] - w[0])
            de.append(r[2] - w[1])
        if ds:
            worst_s, worst_e = max(ds, key=abs), max(de, key=abs)
            line += f", start - first warp's {min(ds)}..{max(ds)}, end - last warp's {min(de)}..{max(de)} cycles"
            if abs(worst_s) > tol:
                problems.append(f"a block's start is {worst_s} cycles from its first warp's (tolerance {tol})")
            if abs(worst_e) > tol:
                problems.append(f"a block's end is {worst_e} cycles from its last warp's (tolerance {tol})")
    if spin and h["kernel"] in SKEW_KERNELS:
        lives = [r[2] - r[0] for r in recs if r]
        short = [x for x in lives if x < 8 * spin]
        line += f", lives {min(lives)}..{max(lives)} cycles (last warp spins {8 * spin})"
        if short:
            problems.append(f"{len(short)} blocks end before their last warp could ({min(short)} < {8 * spin} "
                            f"cycles): thread 0's end, not the block's")
    return problems, line


def check_dir(trace, spin, tol):
    files = sorted(glob.glob(os.path.join(trace, "results", "*.ntr")))
    fails = launches = 0
    kernels = set()
    for path in files:
        h = ntr_read.read_file(path)
        problems, line = check_launch(h, spin, tol)
        launches += 1
        kernels.add(h["kernel"])
        print(("FAIL " if problems else "ok   ") + line)
        for p in problems:
            print("     " + p)
        fails += bool(problems)
    missing = [k for k in SKEW_KERNELS if spin and k not in kernels]
    for k in missing:
        print(f"FAIL no result of {k}")
    print(f"block records: {launches - fails}/{launches} launches ok" + (f", {len(missing)} kernels missing"
                                                                        if missing else ""))
    return 1 if fails or missing or not launches else 0


def selftest():
    """Synthetic files: two blocks of two warps; a good pair, then a block
    record whose end is thread 0's warp's."""
    def blkmap(recs):
        f = [("start", 8, 0), ("gstart", 8, 8), ("end", 8, 16), ("smid", 4, 24), ("pad", 4, 28)]
        data = b"".join(struct.pack("<QQQII", s, 7, e, sm, 0) for s, e, sm in recs)
        return ("block_sched", 3, 1, 32, f, len(recs), struct.pack(f"<{len(recs)}I", *[32] * len(recs)), data,
                False)

    def warpmap(ws):
        f = [("start", 8, 0), ("gstart", 8, 8), ("elapsed", 4, 16), ("smid", 4, 20)]
        data = b"".join(struct.pack("<QQII", s, 7, el, sm) for s, el, sm in ws)
        return ("block_sched_warp", 2, 1, 24, f, len(ws), struct.pack(f"<{len(ws)}I", *[24] * len(ws)), data,
                False)

    warps = [(1000, 100, 3), (1002, 900, 3), (5000, 50, 4), (5001, 60, 4)]
    good = ntr_read.read_bytes(ntr_read.write_bytes("bs_stagger", "block_sched,block_sched_warp",
                                                    [blkmap([(1000, 1902, 3), (5000, 5061, 4)]), warpmap(warps)],
                                                    block=(64, 1, 1), grid=(2, 1, 1)))
    bad = ntr_read.read_bytes(ntr_read.write_bytes("bs_stagger", "block_sched,block_sched_warp",
                                                   [blkmap([(1000, 1100, 3), (5000, 5061, 5)]), warpmap(warps)],
                                                   block=(64, 1, 1), grid=(2, 1, 1)))
    p1, _ = check_launch(good, 0, 10)
    p2, _ = check_launch(bad, 0, 10)
    p3, _ = check_launch(good, 100, 10)
    ok = not p1 and len(p2) == 2 and any("SM 5" in p for p in p2) and len(p3) == 1
    print("selftest", "ok" if ok else f"FAILED: {p1} {p2} {p3}")
    return 0 if ok else 1


def main(argv):
    if argv[1:] == ["selftest"]:
        return selftest()
    spin, tol, rest = 0, 2000, argv[1:]
    while len(rest) > 1 and rest[0] in ("--spin", "--tol"):
        if rest[0] == "--spin":
            spin = int(rest[1])
        else:
            tol = int(rest[1])
        rest = rest[2:]
    if len(rest) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    return check_dir(rest[0], spin, tol)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
