#!/bin/bash
# The UI without colour (TERM=vt100, NO_COLOR, UTF-8) at 80x24 and 60x15, on
# traces that belong to someone else: the walk of ui_walk.inc, blocks told
# apart by alternating glyphs (█ ▒), densities by glyphs, the cursor in
# reverse video, PNGs written to the current directory with the reason in
# the log.
. "${NTOP_SOURCE_DIR:?}/tests/ui/ui_walk.inc"
others "$T/session"
others "$T/dmat"
walk mono 80 24 others
walk mono 60 15 others
fresh 80 24
tm send-keys -t "$UI" "cd $T/work; env TERM=vt100 NO_COLOR=1 $NTOP view $T/session; echo NTOP-EXIT=\$?" Enter
wait_for KERNEL || bad "mono: the UI did not start"
keys / g l o b a l _ a d d Enter Enter Enter e
wait_for '^exported ' 20 || bad "mono: no export: $(screen | tail -1)"
keys @
wait_for "not writing into the trace directory $T/session" || bad "mono: no reason in the log: $(screen | tail -6)"
keys q q q
restored 0 "mono: the reason"
[ "$fail" = 0 ] && echo "ui_mono: all passed"
exit "$fail"
