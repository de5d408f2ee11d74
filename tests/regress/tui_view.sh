#!/bin/bash
# ntop view on the bundled recorded session, driven in a private tmux server:
# the kernel list at 80x24 and 120x40, sort, filter, a kernel's launches, the
# timeline (lanes, header numbers, cursor readout), PNG export (size from the
# IHDR, pixels decoded and not all one colour), resize, help, quitting with the
# terminal restored (alternate screen, cursor, mouse), Ctrl-C, SIGTERM, the
# saved settings, the refusals that need no terminal, and the text report
# when the output is not a terminal.
. "${NTOP_SOURCE_DIR:?}/tests/regress/tui_lib.inc"
S=$NTOP_SOURCE_DIR
cp -r "$S/examples/session" "$T/session"
# the recorded app's pid and its first SMs: read from the session, since a
# re-recorded session has others (SM ids have gaps where SMs are disabled)
APP_PID=$(grep -m1 '^hello ' "$T/session/events.log" | sed -E 's/.* pid=([0-9]+) .*/\1/')
mkdir -p "$T/cfg"
export XDG_CONFIG_HOME="$T/cfg" HOME="$T" NTOP_THEMES_DIR="$S/themes"

# refusals (no terminal needed)
"$NTOP" view 2>"$T/err"; [ $? = 2 ] || bad "no dir: exit status"
grep -q "which trace directory" "$T/err" || bad "no dir message: $(cat "$T/err")"
"$NTOP" view "$T/nope" 2>"$T/err"; [ $? = 2 ] || bad "missing dir: exit status"
"$NTOP" view --bogus "$T/session" 2>"$T/err"; [ $? = 2 ] || bad "bad option: exit status"
"$NTOP" view "$T/session" </dev/null >"$T/out" 2>"$T/err"; [ $? = 0 ] || bad "piped: exit status"
grep -q "not a terminal: the text report" "$T/err" || bad "piped: no note: $(cat "$T/err")"
grep -q "lm_vec_add" "$T/out" || bad "piped: no report: $(head -5 "$T/out")"
"$NTOP" view --theme nosuch "$T/session" 2>"$T/err"; [ $? = 2 ] || bad "unknown theme: exit status"
"$NTOP" view --help | grep -q "^Usage: ntop view" || bad "view --help"
"$NTOP" --help | grep -q "^  view " || bad "ntop --help lacks view"

start() { # start W H [ntop args...]: a shell in tmux running ntop, then the prompt
	local w=$1 h=$2
	shift 2
	fresh "$w" "$h"
	tm send-keys -t "$UI" "clear; echo \$\$ > $T/shell.pid; $NTOP view $* $T/session; echo NTOP-EXIT=\$?" Enter
	wait_for 'KERNEL' || bad "UI did not start at ${w}x$h: $(screen)"
}
# ---- 80x24 ----
start 80 24
s=$(screen)
for k in lm_vec_add lm_coop_sync lm_node_iota lm_captured_axpy; do
	echo "$s" | grep -q "$k" || bad "80x24: $k not listed"
done
echo "$s" | grep -q '9 kernels' || bad "80x24: status counts: $(echo "$s" | tail -1)"
echo "$s" | grep -q 'NVIDIA H200, 132 SMs' || bad "80x24: GPU in the title"
echo "$s" | grep -q 'declined: strea' || bad "80x24: declined kernel"
[ "$(echo "$s" | wc -l)" -le 24 ] || bad "80x24: more than 24 lines"
[ "$(widest)" -le 80 ] || bad "80x24: a line longer than 80 cells"
# sort: reverse changes the first row; by name puts lm_block3d first
first() { screen | sed -n 3p; }
before=$(first)
keys S
wait_true '[ "$(first)" != "$before" ]' || bad "S did not change the order ($before)"
keys F12 # column 11: the kernel name
wait_for 'sorted by name' || bad "F12: $(screen | tail -1)"
first | grep -Eq 'lm_vec_add|lm_block3d' || bad "sort by name: $(first)"
f12=$(first)
keys S
wait_true '[ "$(first)" != "$f12" ]' || bad "S after F12: same first row"
by_name=$(first)
keys S
wait_true '[ "$(first)" != "$by_name" ]' || bad "sort by name reversed: same first row"
# filter
keys / g l o b
wait_for '/glob_' || bad "filter prompt"
wait_true '[ "$(screen | grep -c lm_)" = 2 ]' || bad "filter /glob shows $(screen | grep -c lm_) kernels"
keys Enter
wait_for '\(2 of 9 kernels' || bad "filter count line"
keys Escape
wait_true '[ "$(screen | grep -c lm_)" = 9 ]' || bad "Esc did not clear the filter"
# a kernel's launches
keys / v e c _ a d d Enter Enter
wait_for 'No.block:4096 Running:' || bad "launches view: $(screen)"
screen | grep -q 'mangled _Z10lm_vec_addPKfS0_Pfi' || bad "launches view: mangled name"
# the timeline
keys Enter
wait_for 'waves/SM' || bad "timeline header: $(screen | head -4)"
s=$(screen)
echo "$s" | grep -q '4096 blocks' || bad "timeline: block count"
first_sm=$(echo "$s" | grep -Em1 '^ +[0-9]+ [ ▀▄█]' | awk '{print $1}')
[ -n "$first_sm" ] || bad "timeline: no SM lane"
[ "$(echo "$s" | grep -Ec '^ +[0-9]+ [ ▀▄█]')" -ge 2 ] || bad "timeline: fewer than 2 SM lanes"
echo "$s" | grep -q "cursor SM $first_sm" || bad "timeline: cursor readout"
keys + +
wait_change "$s" || bad "zoom did not redraw"
keys 0 t
wait_for 'cycles, each SM from its first block' || bad "t: SM clock axis"
keys t c
wait_for 'colour by duration' || bad "c: $(screen | tail -1)"
# export
keys e
png="$T/session/export/lm_vec_add-k1-p$APP_PID-1-timeline.png"
wait_for "exported .*lm_vec_add-k1-p$APP_PID" 20 || bad "export path not in the status line: $(screen | tail -1)"
[ -s "$png" ] || bad "e wrote no PNG (screen: $(screen | tail -1); export: $(ls "$T/session/export" 2>&1))"
if [ -s "$png" ]; then
	python3 - "$png" <<'EOF' || bad "PNG check failed"
import struct, sys, zlib
d = open(sys.argv[1], 'rb').read()
assert d[:8] == b'\x89PNG\r\n\x1a\n', "signature"
w, h, depth, ctype = struct.unpack('>IIBB', d[16:26])
assert (w, h, depth, ctype) == (1600, 900, 8, 2), (w, h, depth, ctype)
pos, idat = 8, b''
while pos < len(d):
    n, typ = struct.unpack('>I4s', d[pos:pos + 8])
    if typ == b'IDAT':
        idat += d[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
stride = w * 3
assert len(raw) == h * (stride + 1), "pixel data size"
prev = bytearray(stride)
colours = set()
for y in range(0, 600):  # title, header and the plot's top
    f = raw[y * (stride + 1)]
    row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = row[i - 3] if i >= 3 else 0
        b = prev[i]
        c = prev[i - 3] if i >= 3 else 0
        if f == 1: row[i] = (row[i] + a) & 255
        elif f == 2: row[i] = (row[i] + b) & 255
        elif f == 3: row[i] = (row[i] + ((a + b) >> 1)) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 10 == 0:
        for x in range(0, w, 7):
            colours.add(bytes(row[x * 3:x * 3 + 3]))
    prev = row
assert len(colours) > 20, "only %d colours" % len(colours)
EOF
fi
# resize: redrawn at the new size, nothing left over
keys q
# resized_screen W H REGEX: the screen once it is W x H and matches (the
# resize asked again meanwhile: on a loaded machine one was seen not to take)
resized_screen() {
	local i
	for ((i = 0; i < 60; i++)); do
		tm resize-window -t "$UI" -x "$1" -y "$2"
		s=$(screen)
		[ "$(echo "$s" | wc -l)" = "$2" ] && echo "$s" | grep -Eq -- "$3" && return 0
		sleep 0.2
	done
	return 1
}
resized_screen 120 40 'No.block:4096 Running'
[ "$(echo "$s" | wc -l)" = 40 ] || bad "120x40: $(echo "$s" | wc -l) lines"
echo "$s" | head -1 | grep -Eq '^ntop .* NVIDIA H200, 132 SMs *$' || bad "120x40 title: $(echo "$s" | head -1)"
echo "$s" | tail -1 | grep -Eq 'help|exported' || bad "120x40: status line not at the bottom: $(echo "$s" | tail -1)"
echo "$s" | grep -q 'No.block:4096 Running:[0-9]* Scheduling:[0-9]* (cycle)' || bad "120x40: launch summary cut"
resized_screen 60 16 '.'

[ "$(echo "$s" | wc -l)" = 16 ] || bad "60x16: line count"
[ "$(widest)" -le 60 ] || bad "60x16: line longer than 60"
resized_screen 80 24 '.'
# help
keys '?'
wait_for 'ntop keys' || bad "? shows no help"
screen | grep -q 'zoom at cursor; 0: fit' || bad "help lacks the timeline keys"
keys q q
wait_for 'KERNEL' || bad "back to the kernel list"
# log pane: the newest lines, long ones wrapped in full
keys L
wait_for 'pid [0-9]+ exiting after 15 launches' || bad "log pane: last line"
screen | grep -q '^  .*ms JIT)' || bad "log pane: no wrapped line: $(screen | tail -8)"
keys L q
restored 0 "q"
grep -q '^sort = name$' "$T/cfg/ntop/ntop.conf" 2>/dev/null || bad "settings not saved: $(cat "$T/cfg/ntop/ntop.conf" 2>&1)"
grep -q '^sort_reverse = 1$' "$T/cfg/ntop/ntop.conf" 2>/dev/null || bad "sort order not saved"

# ---- 120x40, settings loaded, mouse off; Ctrl-C quits (no application) ----
start 120 40 --no-mouse
s=$(screen)
echo "$s" | grep -q 'KERNEL▲' || bad "saved sort (name, reversed) not applied: $(echo "$s" | sed -n 2p)"
echo "$s" | grep -q 'PID' && bad "120x40: PID column shown for a one-process trace"
echo "$s" | grep -q 'lm_vec_add(float const\*, float const\*, float\*, int)' || bad "120x40: full name not shown"
keys C-c
restored 0 "Ctrl-C"

# ---- SIGTERM restores the terminal ----
fresh 80 24
tm send-keys -t "$UI" "clear; bash -c 'echo \$\$ > $T/ntop.pid; exec $NTOP view $T/session'; echo NTOP-EXIT=\$?" Enter
wait_for 'KERNEL' || bad "UI did not start for SIGTERM"
kill -TERM "$(cat "$T/ntop.pid")"
restored 0 "SIGTERM"

# ---- ASCII and no colour ----
fresh 80 24
tm send-keys -t "$UI" "clear; LC_ALL=C NO_COLOR=1 $NTOP view $T/session; echo NTOP-EXIT=\$?" Enter
wait_for 'KERNEL' || bad "UI did not start in ASCII"
keys / v e c Enter Enter Enter
wait_for 'waves/SM' || bad "ASCII timeline"
wait_for '^ +[0-9]+ [#=]' || bad "ASCII lanes: $(screen | sed -n 5p)"
screen | grep -q '[▀▄█]' && bad "UTF-8 glyphs in ASCII mode"
keys q q q
restored 0 "ASCII"

# ---- the frame limit (sanitizer runs) ----
fresh 80 24
tm send-keys -t "$UI" "clear; $NTOP view --exit-after-frames 3 $T/session; echo NTOP-EXIT=\$?" Enter
restored 0 "--exit-after-frames"

[ "$fail" = 0 ] && echo "tui_view: all passed"
exit "$fail"
