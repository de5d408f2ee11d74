#!/usr/bin/env python3
"""Checks the block map of tests/gpu/block_span.toml (one record per block,
fields folded in by every warp with red.global.max) against block_sched's
warp records of the same launches (both probes in one probed copy: `ntop
record -p block_sched -p tests/gpu/block_span.toml`), read with ntr_read.py:

  - every block has a record, on the SM all its warps report;
  - its first start (~first) is within TOL cycles of its earliest warp's
    start and its end within TOL cycles of its last warp's end (the two
    probes read their clocks a few instructions apart);
  - thread 0's start (the record's start) is not before the first;
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
    """[(first start, end, smid, thread 0's start) or None] per block of a
    block map (first: the complement of the max folded in)."""
    f, out = fields(m), []
    counts = memoryview(m["counts"]).cast("I")
    for b in range(m["units"]):
        if counts[b] < m["rec_size"]:
            out.append(None)
            continue
        rec = m["records"][b * m["rec_size"]:(b + 1) * m["rec_size"]]
        first, start0, end, smid = (get(rec, *f[k]) for k in ("first", "start", "end", "smid"))
        out.append((~first & (2**64 - 1), end, smid, start0))
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
    blk, wrp = maps.get("block_span"), maps.get("block_sched")
    if not blk or blk["level"] != "block":
        return [f"seq {h['seq']}: no block_span block map"], ""
    recs = block_records(blk)
    problems = [f"block {b}: no record" for b, r in enumerate(recs) if r is None][:5]
    problems += [f"block {b}: end {r[1]} before start {r[0]}" for b, r in enumerate(recs)
                 if r and r[1] < r[0]][:5]
    problems += [f"block {b}: thread 0 started at {r[3]}, before the first warp ({r[0]})"
                 for b, r in enumerate(recs) if r and r[3] < r[0]][:5]
    line = f"{h['kernel'][:40]} seq {h['seq']}: {len(recs)} blocks"
    if any(recs):
        line += f", thread 0 {max(r[3] - r[0] for r in recs if r)} cycles after the first warp at most"
    if wrp and wrp["level"] != "warp":
        return problems + [f"block_sched's map is per {wrp['level']}, not per warp"], line
    if wrp:
        ext = warp_extents(wrp, h["block"])
        if len(ext) != len(recs):
            return problems + [f"{len(ext)} blocks of warps, {len(recs)} block records"], line
        ds, de = [], []
        for b, (r, w) in enumerate(zip(recs, ext)):
            if not r or not w:
                continue
            if w[2] != {r[2]}:
                problems.append(f"block {b}: SM {r[2]}, its warps on {sorted(w[2])}")
            ds.append(r[0] - w[0])
            de.append(r[1] - w[1])
        if ds:
            worst_s, worst_e = max(ds, key=abs), max(de, key=abs)
            line += f", start - first warp's {min(ds)}..{max(ds)}, end - last warp's {min(de)}..{max(de)} cycles"
            if abs(worst_s) > tol:
                problems.append(f"a block's start is {worst_s} cycles from its first warp's (tolerance {tol})")
            if abs(worst_e) > tol:
                problems.append(f"a block's end is {worst_e} cycles from its last warp's (tolerance {tol})")
    if spin and h["kernel"] in SKEW_KERNELS:
        lives = [r[1] - r[0] for r in recs if r]
        short = [x for x in lives if x < 8 * spin]
        line += f", lives {min(lives)}..{max(lives)} cycles (last warp spins {8 * spin})"
        if short:
            problems.append(f"{len(short)} blocks end before their last warp could ({min(short)} < {8 * spin} "
                            f"cycles): not the block's last exit")
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
    record whose end is its first warp's and whose SM is wrong."""
    def blkmap(recs):
        f = [("first", 8, 0), ("start", 8, 8), ("gstart", 8, 16), ("end", 8, 24), ("smid", 4, 32), ("pad", 4, 36)]
        data = b"".join(struct.pack("<QQQQII", ~s & (2**64 - 1), s + 1, 7, e, sm, 0) for s, e, sm in recs)
        return ("block_span", 3, 1, 40, f, len(recs), struct.pack(f"<{len(recs)}I", *[40] * len(recs)), data,
                False)

    def warpmap(ws):
        f = [("start", 8, 0), ("gstart", 8, 8), ("elapsed", 4, 16), ("smid", 4, 20)]
        data = b"".join(struct.pack("<QQII", s, 7, el, sm) for s, el, sm in ws)
        return ("block_sched", 2, 1, 24, f, len(ws), struct.pack(f"<{len(ws)}I", *[24] * len(ws)), data,
                False)

    warps = [(1000, 100, 3), (1002, 900, 3), (5000, 50, 4), (5001, 60, 4)]
    good = ntr_read.read_bytes(ntr_read.write_bytes("bs_stagger", "block_sched,block_span",
                                                    [blkmap([(1000, 1902, 3), (5000, 5061, 4)]), warpmap(warps)],
                                                    block=(64, 1, 1), grid=(2, 1, 1)))
    bad = ntr_read.read_bytes(ntr_read.write_bytes("bs_stagger", "block_sched,block_span",
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
