#!/bin/bash
# ntop probes lists every built-in probe of the source tree's probes/ with a
# description and its map; --version and --help of the main command.
set -u
NTOP="${NTOP_BINARY_DIR:?}/bin/ntop"
SRC="${NTOP_SOURCE_DIR:?}"
[ -x "$NTOP" ] || { echo "FAIL: $NTOP not built"; exit 1; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }

out=$(NTOP_PROBES_DIR="$SRC/probes" "$NTOP" probes 2>&1)
rc=$?
[ "$rc" = 0 ] || bad "rc $rc: $out"
for f in "$SRC"/probes/*.toml; do
	name=$(basename "$f" .toml)
	echo "$out" | grep -Eq "^$name +[^ ]" || bad "probe $name not listed: $out"
done
echo "$out" | grep -q 'map block_sched: per warp' || bad "map summary: $out"
echo "$out" | grep -q 'broken' && bad "a built-in probe does not verify: $out"

# the default location (beside the binary) must work from the build tree
out=$("$NTOP" probes 2>&1) || bad "default probes dir: $out"
echo "$out" | grep -q '^block_sched ' || bad "default dir listing: $out"

out=$(NTOP_PROBES_DIR=/nonexistent "$NTOP" probes 2>&1)
[ $? = 1 ] || bad "missing dir should fail"
"$NTOP" probes extra >/dev/null 2>&1
[ $? = 2 ] || bad "extra argument should be a usage error"

v=$("$NTOP" --version) || bad "--version rc"
echo "$v" | grep -Eq '^ntop [0-9]+\.[0-9]+\.[0-9]+$' || bad "--version: $v"
h=$("$NTOP" --help) || bad "--help rc"
for c in record report instrument check probes; do
	echo "$h" | grep -q "^  $c " || bad "--help lacks $c"
	"$NTOP" "$c" --help | grep -q "^Usage: ntop $c" || bad "$c --help"
done
out=$("$NTOP" ./some-app 2>&1 </dev/null)
[ $? = 2 ] || bad "ntop PROGRAM without a terminal should exit 2"
echo "$out" | grep -q 'needs a terminal' && echo "$out" | grep -q 'ntop record' || bad "TUI message: $out"
"$NTOP" --nope >/dev/null 2>&1
[ $? = 2 ] || bad "unknown option should exit 2"

[ "$fail" = 0 ] && echo "cli_probes: all passed"
exit "$fail"
