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
# check IMAGE ARGS...: the README gives the command and shows the image, and
# the command writes it again byte for byte
check() {
	local img=$1
	shift
	local args="$*"
	grep -qF "ntop export $args -o doc/img/$img" README.md ||
		{ echo "FAIL: the README no longer gives: ntop export $args -o doc/img/$img"; fail=1; }
	grep -qF "(doc/img/$img)" README.md || { echo "FAIL: the README does not show doc/img/$img"; fail=1; }
	"$NTOP" export "$@" -o "$T/$img" >/dev/null || { echo "FAIL: export of $img"; fail=1; return; }
	cmp -s "$T/$img" "doc/img/$img" ||
		{ echo "FAIL: doc/img/$img is not what 'ntop export $args -o doc/img/$img' writes now"; fail=1; }
}
check timeline.png examples/session -k lm_global_add --launch 1 --width 960 --height 540
check heatmap.png examples/session-dmat -k dm_gather --view dmat --width 960 --height 540
[ "$fail" = 0 ] && echo "doc_images: all passed"
exit "$fail"
