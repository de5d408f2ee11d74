#!/bin/bash
# ntop export on a synthetic trace directory written by test_timeline
# --write-fixture: PNG sizes (parsed from the IHDR chunk), which launch is
# picked, the summary line, and the exit codes of every error path.
set -u
NTOP="${NTOP_BINARY_DIR:?}/bin/ntop"
FIX="${NTOP_BINARY_DIR}/bin/test_timeline"
[ -x "$NTOP" ] || { echo "FAIL: $NTOP not built"; exit 1; }
[ -x "$FIX" ] || { echo "skip: test_timeline (the fixture writer) not built"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$FIX" --write-fixture "$T/trace" || { echo "FAIL: could not write the fixture"; exit 1; }

# "W H bitdepth colourtype" from a PNG's IHDR, or "bad"
pnginfo() {
	python3 - "$1" <<'EOF'
import struct, sys
try:
    d = open(sys.argv[1], 'rb').read(33)
    assert d[:8] == b'\x89PNG\r\n\x1a\n' and d[12:16] == b'IHDR'
    w, h, depth, ctype = struct.unpack('>IIBB', d[16:26])
    print(w, h, depth, ctype)
except Exception:
    print('bad')
EOF
}

# default: the last probed launch with block_sched results (seq 3, 264 blocks)
out=$("$NTOP" export "$T/trace" -k vecadd -o "$T/a.png" 2>&1)
[ $? = 0 ] || bad "default export: $out"
[ "$(pnginfo "$T/a.png")" = "1600 900 8 2" ] || bad "default size: $(pnginfo "$T/a.png")"
echo "$out" | grep -q "^wrote $T/a.png: 1600x900, 264 blocks on 132 SMs, SM-cycle time" || bad "summary: $out"
echo "$out" | grep -q '^note:' && bad "auto time mode should not print a fallback note: $out"

# first launch, every option
out=$("$NTOP" export "$T/trace" --kernel _Z6vecadd --launch 1 --width 800 --height 400 --color duration \
	--theme mono --time sm --output "$T/b.png" 2>&1)
[ $? = 0 ] || bad "options: $out"
[ "$(pnginfo "$T/b.png")" = "800 400 8 2" ] || bad "800x400: $(pnginfo "$T/b.png")"
echo "$out" | grep -q "3000 blocks on 132 SMs, SM-cycle time, colour by duration, theme mono" || bad "summary: $out"
out=$("$NTOP" export "$T/trace" -k vecadd --launch=1 --time=global -o "$T/c.png" --width 320 --height 200 2>&1)
[ $? = 0 ] && echo "$out" | grep -q "global time" || bad "global time: $out"
[ "$(pnginfo "$T/c.png")" = "320 200 8 2" ] || bad "smallest size: $(pnginfo "$T/c.png")"
# asking for global time without a global timer falls back and says so
out=$("$NTOP" export "$T/trace" -k vecadd --time global -o "$T/d.png" 2>&1)
[ $? = 0 ] && echo "$out" | grep -q '^note: no global timer' || bad "fallback note: $out"
# a theme file by path
cp "$NTOP_SOURCE_DIR/themes/light.toml" "$T/mine.toml"
"$NTOP" export "$T/trace" -k vecsub --theme "$T/mine.toml" -o "$T/e.png" >/dev/null 2>&1 || bad "theme by path"
[ "$(pnginfo "$T/e.png")" = "1600 900 8 2" ] || bad "theme by path: no PNG"

# errors: usage or inputs ntop cannot use exit 2, broken files and failed writes 1
expect() { # rc pattern args...
	local want=$1 pat=$2
	shift 2
	out=$("$NTOP" export "$@" 2>&1)
	local rc=$?
	[ "$rc" = "$want" ] || bad "'$*' exited $rc, want $want: $out"
	echo "$out" | grep -q -- "$pat" || bad "'$*' should say '$pat': $out"
}
expect 2 "matches 2 kernels" "$T/trace" -k vec -o "$T/x.png"
expect 2 "pid 500 kid 2  vecsub" "$T/trace" -k vec -o "$T/x.png"
expect 2 "no kernel matches 'nosuch'" "$T/trace" -k nosuch -o "$T/x.png"
expect 2 "recorded probes gmem_bytes" "$T/trace" -k memk -o "$T/x.png"
expect 2 "no block_sched results" "$T/trace" -k memk -o "$T/x.png"
expect 2 "never probed" "$T/trace" -k idler -o "$T/x.png"
expect 2 "bad size" "$T/trace" -k vecadd -o "$T/x.png" --width 100
expect 2 "bad size" "$T/trace" -k vecadd -o "$T/x.png" --height 20000
expect 2 "positive number" "$T/trace" -k vecadd -o "$T/x.png" --width wide
expect 2 "takes 1..2" "$T/trace" -k vecadd -o "$T/x.png" --launch 3
expect 2 "sm or global" "$T/trace" -k vecadd -o "$T/x.png" --time wall
expect 2 "index or duration" "$T/trace" -k vecadd -o "$T/x.png" --color rainbow
expect 2 "no theme 'neon'" "$T/trace" -k vecadd -o "$T/x.png" --theme neon
printf '[colors]\nbackground = "#12"\n' > "$T/bad.toml"
expect 2 "bad.toml:2:14:" "$T/trace" -k vecadd -o "$T/x.png" --theme "$T/bad.toml"
expect 2 "only 'timeline'" "$T/trace" -k vecadd -o "$T/x.png" --view heatmap
# without -o: the UI's file name, in the current directory
out=$(cd "$T" && "$NTOP" export trace -k vecadd 2>&1)
echo "$out" | grep -q '^wrote vecadd-k1-p500-3-timeline.png: 1600x900' && [ -s "$T/vecadd-k1-p500-3-timeline.png" ] ||
	bad "default file name: $out"
expect 2 "give -k" "$T/trace" -o "$T/x.png"
expect 2 "unknown option" "$T/trace" -k vecadd -o "$T/x.png" --frob
expect 2 "nosuchdir is not a trace directory: .*events.log" "$T/nosuchdir" -k vecadd -o "$T/x.png"
expect 1 "$T/nodir/x.png" "$T/trace" -k vecadd -o "$T/nodir/x.png"
[ -e "$T/x.png" ] && bad "an error path wrote $T/x.png"

# a corrupt result file: the work failed (1), and says which launch
cp -r "$T/trace" "$T/broken"
head -c 100 "$T/trace/results/500-3.ntr" > "$T/broken/results/500-3.ntr"
expect 1 "launch seq 3" "$T/broken" -k vecadd --launch 2 -o "$T/x.png"
# without --launch the broken last launch is reported and the one before drawn
out=$("$NTOP" export "$T/broken" -k vecadd -o "$T/f.png" 2>&1)
[ $? = 0 ] && echo "$out" | grep -q "3000 blocks" && echo "$out" | grep -q "launch seq 3" || bad "skip broken: $out"

out=$("$NTOP" export --help)
[ $? = 0 ] && echo "$out" | grep -q '^Examples:' && echo "$out" | grep -q -- '--time sm|global' || bad "--help: $out"
"$NTOP" --help | grep -q '^  export ' || bad "ntop --help does not list export"
"$NTOP" help export | grep -q '^Usage: ntop export' || bad "ntop help export"

[ "$fail" = 0 ] && echo "ok"
exit $fail
