#!/bin/bash
# The UI in ASCII (LANG=C, TERM=xterm-256color) at 80x24 and 60x15: the walk
# of ui_walk.inc with '#'/'=' blocks and density glyphs, no UTF-8 at all.
. "${NTOP_SOURCE_DIR:?}/tests/ui/ui_walk.inc"
walk ascii 80 24 own
walk ascii 60 15 own
[ "$fail" = 0 ] && echo "ui_ascii: all passed"
exit "$fail"
