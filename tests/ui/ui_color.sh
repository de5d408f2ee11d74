#!/bin/bash
# The UI in colour (TERM=xterm-256color, UTF-8) at 80x24 and 60x15, on
# traces that are the user's own: the walk of ui_walk.inc, blocks told apart
# by colour, PNGs written beside the traces (DIR/export/).
. "${NTOP_SOURCE_DIR:?}/tests/ui/ui_walk.inc"
walk color 80 24 own
walk color 60 15 own
[ "$fail" = 0 ] && echo "ui_color: all passed"
exit "$fail"
