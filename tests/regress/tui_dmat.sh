#!/bin/bash
# The DMAT heatmap view of `ntop view`, driven in a private tmux server on a
# synthetic trace (tests/fakecuda/mk_dmat_trace.c, whose comment gives the
# access pattern): opening it from the kernel list and the launches view
# (Enter, d), the title and totals, every plot cell against the binning of
# the known records (UTF-8 half blocks: lit or not; ASCII: the density glyph),
# address labels and the collapsed gap, the cursor readout in A and in B,
# zoom, pan, page scrolling, the range key (and scrolling kept inside the
# range), PNG export, the SM clock / global timer switch and its refusal
# without a gtime field, help, back with q and Esc, and a clean exit.
. "${NTOP_SOURCE_DIR:?}/tests/regress/tui_lib.inc"
GEN="${NTOP_BINARY_DIR}/tests/fakecuda/mk_dmat_trace"
[ -x "$GEN" ] || { echo "skip: mk_dmat_trace (the trace writer) not built"; exit 77; }
"$GEN" "$T/trace" || { echo "FAIL: could not write the trace"; exit 1; }
mkdir -p "$T/cfg"
export XDG_CONFIG_HOME="$T/cfg" HOME="$T" NTOP_THEMES_DIR="$NTOP_SOURCE_DIR/themes"
W=100
H=30

# plot MODE CASE T0 T1 Y0 Y1: every plot cell of the screen against the
# records of CASE binned as dmat_bin does for the window [T0,T1) x [Y0,Y1)
# (cursor on the bottom-left bin), and the address labels left of it. MODE
# utf8: two bins per cell, blank exactly where both are empty; ascii: one
# bin per cell, its density glyph.
cat >"$T/plot.py" <<'EOF'
import math, sys
mode, case = sys.argv[1], sys.argv[2]
t0, t1, y0, y1 = (float(a) for a in sys.argv[3:7])
width = int(sys.argv[7])
# the records of mk_dmat_trace.c as (axis time, collapsed row)
recs = {
    # copy_read, SM cycles: A page p at 100 p; B page u % 16 (rows 64..79) at 6400 + 25 u
    'copy': [(100 * p, p) for p in range(64)] + [(6400 + 25 * u, 64 + u % 16) for u in range(64)],
    # gtime_scan: page j at cycle 10 j in both blocks; global: 5 j and 50000 + 5 j ns
    'gsm': [(10 * j, j) for j in range(32)] * 2,
    'gglob': [(5 * j, j) for j in range(32)] + [(50000 + 5 * j, j) for j in range(32)],
}[case]
# collapsed rows: first row of each range, and a row's page address
runs = [0, 64] if case == 'copy' else [0]
nrows = 80 if case == 'copy' else 32
def addr(r):
    if case != 'copy':
        return 0x7f0200000000 + r * 4096
    return 0x7f0000000000 + r * 4096 if r < 64 else 0x7f0100000000 + (r - 64) * 4096
lines = sys.stdin.read().split('\n')
marker = '\u25b2' if mode == 'utf8' else '^'
axis = next(i for i in range(3, len(lines)) if marker in lines[i])
plot_x = lines[axis].index(marker)  # the cursor is on bin column 0
plot_y, plot_h, plot_w = 3, axis - 3, width - plot_x
rpc = 2 if mode == 'utf8' else 1
cols, rows = plot_w, plot_h * rpc
tw, yh = t1 - t0, y1 - y0
zoomed = rows > yh
g = [[0] * cols for _ in range(rows)]
for t, p in recs:
    t = float(t)
    if t < t0 or t >= t1:
        continue
    col = min(int(math.floor((t - t0) * cols / tw)), cols - 1)
    if not zoomed:
        c = p + 0.5
        if c < y0 or c >= y1:
            continue
        g[min(int(math.floor((c - y0) * rows / yh)), rows - 1)][col] += 1
        continue
    if p + 1 <= y0 or p >= y1:
        continue
    ra = max(int(math.floor((p - y0) * rows / yh)), 0)
    rb = min(int(math.ceil((p + 1 - y0) * rows / yh)) - 1, rows - 1)
    for r in range(ra, rb + 1):
        g[r][col] += 1
mx = max(max(r) for r in g)
def scale(n):
    if n <= 1 or mx <= 1:
        return 1.0 if n and mx <= 1 else 0.0
    return 1.0 if n >= mx else math.log(n) / math.log(mx)
ramp = ' .:-=+*#%@'
bad = []
for y in range(plot_h):
    row = lines[plot_y + y].ljust(width)[plot_x:plot_x + plot_w]
    want = ''
    for x in range(plot_w):
        if mode == 'utf8':
            top, bot = rows - 1 - 2 * y, rows - 2 - 2 * y
            lt = g[top][x] > 0 or (x, top) == (0, 0)
            lb = g[bot][x] > 0 or (x, bot) == (0, 0)
            ok = {(0, 0): ' ', (1, 0): '\u2580', (0, 1): '\u2584', (1, 1): '\u2588\u2580'}[(lt, lb)]
            if row[x] not in ok:
                bad.append('cell (%d,%d): %r, want one of %r (bins %d %d)' % (x, y, row[x], ok, g[top][x], g[bot][x]))
            want += ok[0]
        else:
            n = g[rows - 1 - y][x]
            i = min(1 + int(math.floor(scale(n) * 8 + 1e-9)), 9) if n else 0
            c = ramp[i] if n or (x, rows - 1 - y) != (0, 0) else '+'
            if row[x] != c:
                bad.append('cell (%d,%d): %r, want %r (%d accesses, max %d)' % (x, y, row[x], c, n, mx))
            want += c
    # address labels: where a range starts (gap marker) and on the bottom
    # row; a row holds the pages whose centre it holds, or zoomed (more bin
    # rows than pages) every page it overlaps, as the bins do
    h = yh / plot_h
    a = y0 + (plot_h - 1 - y) * h
    if zoomed:
        ra, rb = max(math.floor(a), 0), min(math.ceil(a + h), nrows)
        starts = [r0 for r0 in runs[1:] if a <= r0 < a + h]
    else:
        ra, rb = max(math.ceil(a - 0.5), 0), min(math.ceil(a + h - 0.5), nrows)
        starts = [r0 for r0 in runs[1:] if ra <= r0 < rb]
    lab = lines[plot_y + y][:plot_x].rstrip()
    if ra >= rb:
        want_lab = ''
    elif starts:
        want_lab = '0x%x' % addr(starts[0])
        want_lab = want_lab.ljust(plot_x - 1) + ('\u2504' if mode == 'utf8' else '-')
    elif y == plot_h - 1:
        want_lab = '0x%x' % addr(ra)
    else:
        want_lab = ''
    if lab != want_lab:
        bad.append('label of row %d: %r, want %r' % (y, lab, want_lab))
if bad:
    print('%d cells differ, e.g. %s' % (len(bad), '; '.join(bad[:4])))
    sys.exit(1)
print('ok %d x %d cells, %d accesses in view, max %d' % (plot_w, plot_h, sum(map(sum, g)), mx))
EOF
plot() { screen | python3 "$T/plot.py" "$@" "$W" >"$T/plot.out" || bad "plot $*: $(cat "$T/plot.out")"; }
# the time axis labels as words ("0 2.0k 4.0k 6.0k")
axis_words() { screen | grep -m1 '[▲^]' | sed 's/[▲╵|^]/ /g' | xargs; }
# the cursor readout (third line)
readout() { line 3; }
footer() { line $((H - 1)); }
BOTTOM=$((H - 4)) # the plot's lowest text row
want_axis() { want=$1; wait_true '[ "$(axis_words)" = "$want" ]' 3 || bad "$2: axis labels '$(axis_words)', want '$1'"; }
want_readout() { wait_for "^$1\$" 3 || bad "$2: readout '$(readout)', want /$1/"; }

# ---- copy_read: open it from the kernel list as a user would ----
run_ntop $W $H view "$T/trace"
wait_for 'KERNEL' || bad "UI did not start: $(screen)"
keys / c o p y Enter
wait_for '\(1 of 2 kernels' || bad "filter: $(screen | tail -1)"
keys Enter
wait_for '^ +4 +1 ok +128 +8 .*dmat: 128 memory accesses recorded' || bad "launches view: $(screen)"
screen | grep -q 'Enter heatmap' || bad "launches hints: $(screen | tail -1)"
keys Enter
wait_for '^DMAT launch 4  grid 1  block 64  pages of 4 KiB  copy_read\(float const\*, float\*\)' ||
	bad "Enter: no heatmap title: $(line 2)"
# totals: 64 loads of A + 64 stores to B, 4 bytes each; 8 saves past cap 2
footer | grep -Eq '^128 accesses  512 B  ld 50% st 50%  80 pages of 4 KiB in 2 ranges  8 dropped past cap 2' ||
	bad "footer: '$(footer)'"
screen | grep -q "x: cycles since each block's first access" || bad "legend: SM cycles"
# bin (0,0) covers cycles 0..95 and rows 0..1.6: pages 0 and 1, page 0 read at cycle 0
want_readout 't 0-95 cycles  0x7f0000000000-0x7f0000001fff \(2 pages\)  1 access' "open"
want_axis "0 2.0k 4.0k 6.0k" "fit"
plot utf8 copy 0 7976 0 80
# labels (also checked by plot): A at the bottom, B above a collapsed gap
[ "$(screen | grep -c '^0x7f0')" = 2 ] || bad "labels: $(screen | grep '^0x')"
line $BOTTOM | grep -q '^0x7f0000000000 ' || bad "A label not on the bottom plot row: $(line $BOTTOM)"
screen | grep -q '^0x7f0100000000 ┄' || bad "no B label with a gap marker"

# cursor: one bin right (page 1 read at cycle 100), then into B at cycle 6.4k:
# 46 bin rows of 80/46 pages, so bin row 37 holds B pages 0 and 1, stored at
# cycles 6400 and 6425 (column 67 of 84 covers cycles 6362..6457)
keys L
want_readout 't 95-190 cycles  0x7f0000000000-0x7f0000001fff \(2 pages\)  1 access' "L"
keys H
want_readout 't 0-95 cycles  0x7f0000000000-0x7f0000001fff \(2 pages\)  1 access' "H"
tm send-keys -t "$UI" -N 37 K
tm send-keys -t "$UI" -N 67 L
want_readout 't 6.4k-6.5k cycles  0x7f0100000000-0x7f0100001fff \(2 pages\)  2 accesses' "cursor into B"
keys J
want_readout 't 6.4k-6.5k cycles  0x7f000003f000-0x7f000003ffff \(1 page\)  0 accesses' "J: A's last page"

# zoom: twice as fine around the cursor, then back
keys 0
want_readout 't 0-95 cycles  0x7f0000000000-0x7f0000001fff \(2 pages\)  1 access' "0 (fit)"
keys +
want_readout 't 24-71 cycles  0x7f0000000000-0x7f0000001fff \(2 pages\)  0 accesses' "+"
want_axis "1.0k 2.0k 3.0k" "+"
# no global timer in this map: t refuses, says why, and keeps the zoom
keys t
wait_for 'no global timer: map dmat has no gtime:u64 field, only the SM clock' 3 ||
	bad "t without gtime: $(screen | tail -1)"
want_axis "1.0k 2.0k 3.0k" "t refused"
want_readout 't 24-71 cycles  0x7f0000000000-0x7f0000001fff \(2 pages\)  0 accesses' "t refused"
screen | grep -q "x: cycles since each block's first access" || bad "t refused: legend changed"
# pan a quarter of the window later (the cursor stays on the window's first
# column), back, and the cursor 21 columns left to the first column again
keys l
want_readout 't 1.0k-1.1k cycles  0x7f0000000000-0x7f0000001fff \(2 pages\)  0 accesses' "l"
want_axis "2.0k 3.0k 4.0k" "l"
keys h
tm send-keys -t "$UI" -N 21 H
want_readout 't 24-71 cycles  0x7f0000000000-0x7f0000001fff \(2 pages\)  0 accesses' "h"
want_axis "1.0k 2.0k 3.0k" "h"
keys -
want_axis "0 2.0k 4.0k 6.0k" "-"
want_readout 't 0-95 cycles  0x7f0000000000-0x7f0000001fff \(2 pages\)  1 access' "-"

# rows: z halves the page axis (A's lower pages only: 40 pages in 46 bin
# rows, zoomed past a row per page), PgUp shows B, g goes back to the lowest
# address, k / j scroll one text row (1.74 pages: the bottom row starts in
# page 1, and its label names page 1, as the readout of its first bin does)
keys z
wait_gone '^0x7f0100000000' 3 || bad "z: B still shown"
keys PPage
wait_for '^0x7f0100000000 ┄' 3 || bad "PgUp: B not shown: $(screen | grep '^0x')"
keys g
wait_gone '^0x7f0100000000' 3 || bad "g: B still shown"
wait_line $BOTTOM '^0x7f0000000000 ' 3 || bad "g: bottom label $(line $BOTTOM)"
keys k
wait_line $BOTTOM '^0x7f0000001000 ' 3 || bad "k: bottom label $(line $BOTTOM)"
keys j
wait_line $BOTTOM '^0x7f0000000000 ' 3 || bad "j: bottom label $(line $BOTTOM)"
# fit, zoom rows, lowest address, one text row up: the cursor stays on the
# bottom-left bin (pages 1.74..2.61), whose first page is the one labelled
keys 0 z g k
want_readout 't 0-95 cycles  0x7f0000001000-0x7f0000002fff \(2 pages\)  0 accesses' "0 z g k: the labelled page"
wait_line $BOTTOM '^0x7f0000001000 ' 3 || bad "0 z g k: bottom label $(line $BOTTOM)"
# paging up and down comes back to the same rows, exactly
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do keys k; done
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do keys j; done
want_readout 't 0-95 cycles  0x7f0000001000-0x7f0000002fff \(2 pages\)  0 accesses' "13 k, 13 j"
wait_line $BOTTOM '^0x7f0000001000 ' 3 || bad "13 k, 13 j: bottom label $(line $BOTTOM)"

# ranges: A alone, scrolling stays in A, B alone (nothing before cycle 6400), all
keys 0 a
wait_for 'range 1 of 2: 0x7f0000000000, 256 KiB, 64 accesses' 3 || bad "a: flash $(screen | tail -1)"
footer | grep -q '^range 1 of 2  |  128 accesses' || bad "a: footer '$(footer)'"
screen | grep -q '^0x7f0100000000' && bad "a: B shown with A alone"
plot utf8 copy 0 7976 0 64
keys PPage G L # L: drawn once its readout shows, so PgUp and G were handled
want_readout 't 95-190 cycles  .*' "range 1: L"
screen | grep -q '^0x7f0100000000' && bad "range 1: PgUp / G scrolled out of A"
footer | grep -q '^range 1 of 2' || bad "range 1 lost on scrolling"
keys a
wait_for 'range 2 of 2: 0x7f0100000000, 64 KiB, 64 accesses' 3 || bad "a a: flash $(screen | tail -1)"
screen | grep -q '^0x7f0000000000' && bad "a a: A shown with B alone"
want_readout 't 0-95 cycles  0x7f0100000000-0x7f0100000fff \(1 page\)  0 accesses' "B alone"
plot utf8 copy 0 7976 64 80
keys a
wait_for 'every address range \(2\)' 3 || bad "a a a: $(screen | tail -1)"
footer | grep -q '^128 accesses' || bad "a a a: footer '$(footer)'"

# PNG export of the view
keys e
png="$T/trace/export/copy_read-k1-p700-4-dmat.png"
wait_for "exported .*copy_read-k1-p700-4-dmat.png" 5 || bad "e: $(screen | tail -1)"
python3 - "$png" <<'EOF' || bad "exported PNG"
import os, struct, sys, zlib
d = open(sys.argv[1], 'rb').read()
assert d[:8] == b'\x89PNG\r\n\x1a\n', "signature"
w, h, depth, ctype = struct.unpack('>IIBB', d[16:26])
assert (w, h, depth, ctype) == (1600, 900, 8, 2), (w, h, depth, ctype)
pos, idat, end = 8, b'', False
while pos < len(d):
    n, typ = struct.unpack('>I4s', d[pos:pos + 8])
    assert zlib.crc32(d[pos + 4:pos + 8 + n]) == struct.unpack('>I', d[pos + 8 + n:pos + 12 + n])[0], typ
    idat += d[pos + 8:pos + 8 + n] if typ == b'IDAT' else b''
    end = typ == b'IEND'
    pos += 12 + n
assert end and pos == len(d), "chunks"
raw = zlib.decompress(idat)
assert len(raw) == h * (w * 3 + 1), "pixel data size %d" % len(raw)
assert len(d) > 4000, "%d bytes" % len(d)
EOF

# back to the launches view with q; d opens the heatmap too; Esc goes back
keys q
wait_for '^ +SEQ +GRID STATUS' 3 || bad "q: not back in the launches view: $(line 2)"
keys d
wait_for '^DMAT launch 4 ' 3 || bad "d: no heatmap: $(line 2)"
keys Escape
wait_for '^ +SEQ +GRID STATUS' 3 || bad "Esc: not back in the launches view: $(line 2)"

# ---- gtime_scan: both clocks, t switches ----
keys q
wait_for 'KERNEL' 3 || bad "q: kernel list"
keys Escape / g t i m e Enter Enter
wait_for '^ +5 +2 ok +64 +0 ' 3 || bad "gtime_scan launches: $(screen)"
keys d
wait_for '^DMAT launch 5  grid 2  block 32  pages of 4 KiB  gtime_scan\(float const\*\)' 3 || bad "d: $(line 2)"
footer | grep -Eq '^64 accesses  512 B  ld 100%  32 pages of 4 KiB in 1 range *$' || bad "gtime footer: '$(footer)'"
# both blocks overlaid at their first access: page 0 twice at cycle 0
want_readout 't 0-4 cycles  0x7f0200000000-0x7f0200000fff \(1 page\)  2 accesses' "gtime SM"
want_axis "0 50 100 150 200 250" "gtime SM"
plot utf8 gsm 0 311 0 32
keys t
wait_for 'x axis: global timer, aligned across SMs' 3 || bad "t: $(screen | tail -1)"
screen | grep -q 'x: µs since the first access (global timer)' || bad "t: legend"
want_axis "0 10 20 30 40" "t global"
want_readout 't 0.0-0.6 µs  0x7f0200000000-0x7f0200000fff \(1 page\)  1 access' "t global"
# block 1 ran 50 µs after block 0: two columns, 0 and 83
plot utf8 gglob 0 50156 0 32
# the rows shown survive the switch; time is refitted
pages() { readout | grep -o '0x[0-9a-f]*-0x[0-9a-f]* ([0-9]* pages*)'; }
keys z k k
want_readout 't 0.0-0.6 µs  0x7f0200001000-0x7f0200001fff \(1 page\)  1 access' "z k k"
r=$(pages)
keys t
wait_for "x axis: SM clock cycles since each block's first access" 3 || bad "t t: $(screen | tail -1)"
want_axis "0 50 100 150 200 250" "t t"
[ -n "$r" ] && [ "$(pages)" = "$r" ] || bad "t t: rows changed: '$(readout)' after '$r'"
screen | grep -q "x: cycles since each block's first access" || bad "t t: legend"

# help lists the heatmap keys
keys '?'
wait_for 'ntop keys' 3 || bad "? shows no help"
screen | grep -q 'SM clock / global time' || bad "help lacks t"
screen | grep -q 'heatmap: rows, range' || bad "help lacks z Z a"
keys q q q q
restored 0 "q"

# ---- ASCII: one bin per cell, the density glyph of each count ----
run_ntop $W $H LC_ALL=C NO_COLOR=1 view "$T/trace"
wait_for 'KERNEL' || bad "ASCII UI did not start"
keys / c o p y Enter Enter Enter
wait_for '^DMAT launch 4 ' || bad "ASCII heatmap: $(line 2)"
screen | grep -q '[▀▄█▲]' && bad "UTF-8 glyphs in ASCII mode"
plot ascii copy 0 7976 0 80
line $BOTTOM | grep -q '^0x7f0000000000 ' || bad "ASCII: A label $(line $BOTTOM)"
screen | grep -q '^0x7f0100000000 -' || bad "ASCII: B label and gap marker"
keys q q q
restored 0 "ASCII q"

# ---- allocations: ranges named a<n> <size> from the hook's alloc events ----
cp -r "$T/trace" "$T/alloc"
python3 - "$T/alloc/events.log" <<'PY'
import sys
p = sys.argv[1]
l = open(p).read().split("\n")
i = next(k for k, x in enumerate(l) if x.startswith("launch ") and " seq=4 " in x)
l[i:i] = ["alloc t=8000 pid=700 n=1 base=0x7f0000000000 bytes=262144 api=cuMemAlloc",
          "alloc t=8001 pid=700 n=2 base=0x7f0100000000 bytes=65536 api=cuMemAllocAsync",
          "alloc t=8002 pid=700 n=3 base=0x7f0200000000 bytes=4096 api=cuMemAlloc",
          "free t=8003 pid=700 base=0x7f0200000000 api=cuMemFree"]
open(p, "w").write("\n".join(l))
PY
run_ntop $W $H view "$T/alloc"
wait_for 'KERNEL' || bad "alloc UI did not start"
keys / c o p y Enter Enter Enter
wait_for '^DMAT launch 4 ' || bad "alloc heatmap: $(line 2)"
wait_for '^a2 64 KiB +┄' 3 || bad "alloc: B not labelled a2: $(screen | grep -E '^(a[0-9]|0x)')"
screen | grep -q '^a1 256 KiB ' || bad "alloc: A not labelled a1: $(screen | grep -E '^(a[0-9]|0x)')"
screen | grep -q 'a3' && bad "alloc: the freed allocation a3 is shown"
wait_for ', a1 256 KiB\+0x0\)' 3 || bad "alloc: readout $(line 3)"
keys q q q
restored 0 "alloc q"
"$NTOP" export "$T/alloc" -k copy_read --view dmat -o "$T/alloc.png" >"$T/alloc.out" 2>&1 || bad "alloc export: $(cat "$T/alloc.out")"

[ "$fail" = 0 ] && echo "tui_dmat: all passed"
exit "$fail"
