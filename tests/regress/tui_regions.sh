#!/bin/bash
# The warps view and the source-line view of `ntop view`, driven in a
# private tmux server on traces recorded over the driver test double
# (FAKECUDA_MAP=regions:1024: every warp in region ld from +100 to +300
# cycles, in st from +300 to +700, and exits at +1000, one warp per block
# and per SM; FAKECUDA_MAP=dmat: a 4-byte load per thread, consecutive):
# Enter on a regions launch opens its warps, every cell of a lane against
# those times (ASCII: a letter per region, '-' in no region), the cursor
# readout naming the region and its source site, zoom and fit, the region
# table, block / SM lanes and stepping, `i` opening memory by source line
# (4 sectors per request), refusals saying why, help, a clean exit.
. "${NTOP_SOURCE_DIR:?}/tests/regress/tui_lib.inc"
B=$NTOP_BINARY_DIR
APP=$B/tests/fakecuda/app_launch
FAKE=$B/tests/fakecuda/driver/libcuda.so.1
[ -x "$APP" ] && [ -f "$FAKE" ] || { echo "skip: the driver test double is not built"; exit 77; }
mkdir -p "$T/cfg"
export XDG_CONFIG_HOME="$T/cfg" HOME="$T" NTOP_THEMES_DIR="$NTOP_SOURCE_DIR/themes"
record() { # NAME MAP ARGS...
	local name=$1 map=$2
	shift 2
	NTOP_REAL_LIBCUDA=$FAKE NTOP_HOOK_DIR=$B/lib/ntop FAKECUDA_MAP=$map "$NTOP" record "$@" --limit 2 -k scale \
		-o "$T/$name" -- "$APP" "$NTOP_SOURCE_DIR/tests/fakecuda/kernels.ptx" 0 >"$T/$name.out" 2>&1 ||
		{ echo "FAIL: record $name: $(tail -3 "$T/$name.out")"; exit 1; }
}
record reg regions:1024 -p regions -r ld=@load -r st=@store
record dm dmat -p dmat
W=100
H=30
lane() { screen | grep -E '^ +[0-9]+\.[0-9]+ ' | head -1; }
readout() { line $((H - 1)); }

# ---- warps: ASCII, so each cell says its region ----
run_ntop $W $H LC_ALL=C NO_COLOR=1 view "$T/reg"
wait_for 'KERNEL' || bad "UI did not start: $(screen)"
# two kernels are named scale: the second row (by launches) is the one
# launched once, 4 blocks of 32 threads (the other's block size depends on
# which of the app's threads launched first)
keys / s c a l e Enter
wait_for '\(2 of . kernels' || bad "filter: $(screen | tail -1)"
keys j Enter
wait_for 'launches 1  PTX' || bad "not the kernel launched once: $(line 4)"
wait_for 'regions ld, st: 28 records, 0 dropped' || bad "launches view summary: $(screen)"
screen | grep -q 'Enter warps' || bad "launches hints: $(screen | tail -1)"
keys Enter
wait_for '^regions: SM 0, 1 warp  \(of 4 recorded\)' || bad "Enter: no warps view: $(line 2)"
# 1000 cycles over 90 columns (11.1 a column): columns 9..26 hold cycles of
# ld (100..300), 27..62 of st (300..700), the rest of no region
lane | grep -Eq '^ +0\.0 -{9}a{18}b{36}-{27}$' || bad "the lane of warp 0.0: '$(lane)'"
screen | grep -Eq '^a ld  b st' || bad "legend: $(screen | grep -E '^a ')"
screen | grep -q 'cycles 0 .. 1.0k since the first warp shown entered' || bad "axis: $(screen | grep cycles)"
[ "$(readout)" = "warp 0.0  SM 0  t 0 cyc  in no region" ] || bad "readout at 0: '$(readout)'"
tm send-keys -t "$UI" -N 12 L
wait_line $((H - 1)) ' ld: 200 cycles from ptx:[0-9]+$' 3 || bad "readout in ld: '$(readout)'"
tm send-keys -t "$UI" -N 20 L
wait_line $((H - 1)) ' st: 400 cycles from ptx:[0-9]+$' 3 || bad "readout in st: '$(readout)'"
# zoom twice around the cursor (cycle 355.6): cycles 230.6..480.6, 2.8 a column
keys + +
wait_for 'cycles 231 .. 481 since' 3 || bad "+ +: axis $(screen | grep cycles)"
lane | grep -Eq '^ +0\.0 a{25}b{65}$' || bad "zoomed lane: '$(lane)'"
keys 0
wait_for 'cycles 0 .. 1.0k' 3 || bad "0: not fitted again: $(screen | grep cycles)"
# the table of every warp
keys t
wait_for '^regions: all 4 warps recorded' 3 || bad "t: $(line 2)"
screen | grep -Eq '^ld +@load +4 +4 +200 +200 +20\.0%$' || bad "t: ld row: $(screen | grep '^ld')"
screen | grep -Eq '^st +@store +4 +4 +400 +400 +40\.0%$' || bad "t: st row: $(screen | grep '^st')"
screen | grep -Eq '^\(none\) +in no region +40\.0%$' || bad "t: gap row: $(screen | grep '^(none)')"
keys t
# lanes by block, then the next block (one warp each, on SM 1)
keys b
wait_for '^regions: block 0, 1 warp ' 3 || bad "b: $(line 2)"
keys ']'
wait_for '^regions: block 1, 1 warp ' 3 || bad "]: $(line 2)"
[ "$(readout)" = "warp 1.0  SM 1  t 0 cyc  in no region" ] || bad "readout in block 1: '$(readout)'"
keys '['
wait_for '^regions: block 0, 1 warp ' 3 || bad "[: $(line 2)"
keys '?'
wait_for 'ntop keys' 3 || bad "? shows no help"
screen | grep -q 'heatmap/warps/lines' || bad "help lacks the launches' keys"
keys q
# back in the launches view: w opens the warps too, i and d say why not
keys q
wait_for '^ +SEQ +GRID' 3 || bad "q: not back in the launches view: $(line 2)"
keys w
wait_for '^regions: SM 0' 3 || bad "w: $(line 2)"
keys q
wait_for '^ +SEQ +GRID' 3 || bad "q after w: $(line 2)"
keys i
wait_for 'has no dmat records naming their sites' 3 || bad "i on a regions launch: $(screen | tail -1)"
keys q q q
restored 0 "warps q"

# ---- colours: a region is a coloured background, the same in the legend ----
run_ntop $W $H view "$T/reg"
wait_for 'KERNEL' || bad "colour UI did not start"
keys / s c a l e Enter j Enter Enter
wait_for '^regions: SM 0, 1 warp ' || bad "colour warps: $(line 2)"
screen_sgr | grep -E '0\.0' | grep -Eq '48;5;[0-9]+m {18}.*48;5;[0-9]+m {36}' || bad "colour lane: no bars of 18 and 36 cells"
keys q q q q
restored 0 "colour q"

# ---- memory by source line ----
run_ntop $W $H view "$T/dm"
wait_for 'KERNEL' || bad "dmat UI did not start"
keys / s c a l e Enter Enter
wait_for 'dmat: [0-9]+ memory accesses' || bad "dmat launches: $(screen)"
screen | grep -q 'i lines' || bad "dmat hints lack i: $(screen | tail -1)"
keys i
wait_for '^memory by source line: launch [0-9]+, [0-9]+ accesses' 3 || bad "i: $(line 2)"
# one 4-byte load per thread, 32 consecutive a request: N accesses make N/32
# requests of 4 sectors each, all in one page
n=$(line 2 | grep -Eo '[0-9]+ accesses' | cut -d' ' -f1)
[ -n "$n" ] && [ $((n % 32)) = 0 ] || bad "accesses: '$(line 2)'"
screen | grep -Eq "^ptx:[0-9]+ +load +$n +4\.00 +$((n / 32)) +$((n / 8)) +$((4 * n)) +1\$" ||
	bad "load line of $n accesses: $(screen | grep '^ptx')"
screen | grep -Eq '^ptx:[0-9]+ +not run +0 ' || bad "the store's line without records: $(screen | grep '^ptx')"
# Enter: the heatmap of that line's accesses only (all of them: one line)
keys Enter
wait_for "^DMAT launch [0-9]+ .* only ptx:[0-9]+ loads" 3 || bad "Enter on the load line: $(line 2)"
wait_for "^$n accesses  [0-9.]+ [KM]?i?B  ld 100%  1 page of 4 KiB" 3 || bad "the line's heatmap totals: $(line $((H - 1)))"
keys q
wait_for '^memory by source line' 3 || bad "q from the line's heatmap: $(line 2)"
keys j Enter
wait_for 'made no records: nothing to draw' 3 || bad "Enter on a line not run: $(screen | tail -1)"
keys q
wait_for '^ +SEQ +GRID' 3 || bad "q from lines: $(line 2)"
keys w
wait_for 'has no regions records' 3 || bad "w on a dmat launch: $(screen | tail -1)"
keys q q q
restored 0 "lines q"

# ---- 80x24: the lane scaled to 70 columns (14.3 cycles each), nothing wider ----
W=80
H=24
run_ntop $W $H LC_ALL=C NO_COLOR=1 view "$T/reg"
wait_for 'KERNEL' || bad "80x24 UI did not start"
keys / s c a l e Enter j Enter
wait_for 'launches 1  PTX' || bad "80x24: not the kernel launched once: $(line 4)"
keys Enter
wait_for '^regions: SM 0, 1 warp ' || bad "80x24 warps: $(line 2)"
lane | grep -Eq '^ +0\.0 -{7}a{14}b{28}-{21}$' || bad "80x24 lane: '$(lane)'"
wait_line $((H - 1)) '^warp 0\.0  SM 0  t 0 cyc  in no region$' 3 || bad "80x24 readout: '$(readout)'"
screen | grep -Eq '^a ld  b st' || bad "80x24 legend"
[ "$(widest)" -le 80 ] || bad "80x24 warps: a line of $(widest) cells"
keys q q q q
restored 0 "80x24 warps q"
run_ntop $W $H LC_ALL=C NO_COLOR=1 view "$T/dm"
wait_for 'KERNEL' || bad "80x24 dmat UI did not start"
keys / s c a l e Enter Enter i
wait_for '^memory by source line' 3 || bad "80x24 lines: $(line 2)"
screen | grep -Eq '^ptx:[0-9]+ +load +[0-9]+ +4\.00 ' || bad "80x24 lines: no sectors per request: $(screen | grep '^ptx')"
[ "$(widest)" -le 80 ] || bad "80x24 lines: a line of $(widest) cells"
keys q q q q
restored 0 "80x24 lines q"

# ---- block sampling said: the launch line names the blocks kept ----
NTOP_WARP_MAP_TARGET=20000 record smp regions:1024 -p regions -r ld=@load -r st=@store
run_ntop $W $H LC_ALL=C NO_COLOR=1 view "$T/smp"
wait_for 'KERNEL' || bad "sampled UI did not start"
keys / s c a l e Enter j Enter
wait_for 'launches 1  PTX' || bad "sampled: not the kernel launched once: $(line 4)"
wait_for 'regions \(blocks 0-1 of 4\) ld, st: 14 record' || bad "sampled launch line: $(screen | grep regions)"
keys Enter
wait_for '^regions: SM 0, 1 warp  \(of 2 recorded\)' || bad "sampled warps view: $(line 2)"
keys q q q q
restored 0 "sampled q"

[ "$fail" = 0 ] && echo "tui_regions: all passed"
exit "$fail"
