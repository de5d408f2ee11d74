#!/usr/bin/env python3
"""How the regions of the warps of one SM overlap in time, from the CSV of
`ntop export --view regions -o F.csv` (block,warp,smid,region,name,start,
end,cycles,begin_line,end_line; start/end in the SM's cycles):

  regions_overlap.py F.csv [--sm N | --block N]   (default: block 0's SM)

Prints, over the span from the first segment's start to the last one's end
on that SM:
  - per region: the share of the span when at least one warp was in it,
    and the mean number of warps in it then;
  - per pair of regions: the share of the span when both were running (in
    different warps or the same one), and how much of the first region's
    busy time the second covered;
  - per warp: its cycles in each region.
Used by tests/gpu/inside_kernel.sh's case step for doc/case-attention.md."""
import argparse
import collections
import csv
import itertools
import sys


def load(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.append((int(r["block"]), int(r["warp"]), int(r["smid"]), r["name"], int(r["start"]), int(r["end"])))
    return rows


def union(intervals):
    """Sorted, merged [a, b) intervals."""
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(iv):
    return sum(b - a for a, b in iv)


def intersect(x, y):
    out, i, j = [], 0, 0
    while i < len(x) and j < len(y):
        a, b = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if a < b:
            out.append([a, b])
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--sm", type=int)
    g.add_argument("--block", type=int)
    a = ap.parse_args()
    rows = load(a.csv)
    if not rows:
        sys.exit("no segments in %s" % a.csv)
    if a.block is not None:
        pick = [r for r in rows if r[0] == a.block]
        what = "block %d" % a.block
    else:
        sm = a.sm if a.sm is not None else next(r[2] for r in rows if r[0] == 0)
        pick = [r for r in rows if r[2] == sm]
        what = "SM %d" % sm
    if not pick:
        sys.exit("no segments on %s" % what)
    t0, t1 = min(r[4] for r in pick), max(r[5] for r in pick)
    span = max(t1 - t0, 1)
    warps = sorted({(r[0], r[1]) for r in pick})
    names = sorted({r[3] for r in pick})
    busy = {n: union([(r[4], r[5]) for r in pick if r[3] == n]) for n in names}
    total = {n: sum(r[5] - r[4] for r in pick if r[3] == n) for n in names}
    print("%s: %d warps, %d segments, span %d cycles" % (what, len(warps), len(pick), span))
    print("%-10s %12s %14s" % ("region", "busy share", "warps in it"))
    for n in names:
        b = length(busy[n])
        print("%-10s %11.1f%% %14.2f" % (n, 100.0 * b / span, total[n] / b if b else 0))
    print("%-10s %-10s %12s %18s" % ("region", "with", "both share", "of first covered"))
    for x, y in itertools.permutations(names, 2):
        both = length(intersect(busy[x], busy[y]))
        bx = length(busy[x])
        print("%-10s %-10s %11.1f%% %17.1f%%" % (x, y, 100.0 * both / span, 100.0 * both / bx if bx else 0))
    per = collections.defaultdict(lambda: collections.Counter())
    for r in pick:
        per[(r[0], r[1])][r[3]] += r[5] - r[4]
    print("%-10s " % "warp" + " ".join("%10s" % n for n in names))
    for w in warps[:16]:
        print("%-10s " % ("%d.%d" % w) + " ".join("%10d" % per[w][n] for n in names))
    if len(warps) > 16:
        print("(%d more warps)" % (len(warps) - 16))


if __name__ == "__main__":
    main()
