#!/bin/bash
# The README's screenshots are ntop's own output: each doc/img file is
# written again by the command the README gives and must come out byte for
# byte the same (rendering is deterministic). When a renderer change makes
# this fail, run the command shown and commit the new image.
set -u
NTOP="${NTOP_BINARY_DIR:?}/bin/ntop"
[ -x "$NTOP" ] || { echo "FAIL: $NTOP not built"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "${NTOP_SOURCE_DIR:?}" || exit 1
fail=0
args="examples/session -k lm_global_add --launch 1 --width 960 --height 540"
grep -qF "ntop export $args" README.md || { echo "FAIL: the README no longer gives: ntop export $args"; fail=1; }
grep -qF "(doc/img/timeline.png)" README.md || { echo "FAIL: the README does not show doc/img/timeline.png"; fail=1; }
"$NTOP" export $args -o "$T/timeline.png" >/dev/null || { echo "FAIL: export"; exit 1; }
cmp -s "$T/timeline.png" doc/img/timeline.png ||
	{ echo "FAIL: doc/img/timeline.png is not what 'ntop export $args -o doc/img/timeline.png' writes now"; fail=1; }
[ "$fail" = 0 ] && echo "doc_images: all passed"
exit "$fail"
