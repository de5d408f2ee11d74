#!/bin/bash
# The block map of tests/gpu/block_span.toml against block_sched's warp
# records of the same launches, on a GPU (tests/gpu/check_block_records.py
# says what is checked): examples/cuda/block_skew.cu (warps that end 8x apart, known
# in advance) and app_cost's kernels, each under
# `ntop record -p block_sched -p tests/gpu/block_span.toml`, outputs as plain.
# Run from the repository root with the Release build in build-gpu/;
# writes $OUT/block_records.txt. Exit status: number of failed checks.
set -u
# its checks read kernels' first launches: probed copies built on the launch (record --wait-build)
export NTOP_PROBE_ASYNC=0
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
NTOP=${NTOP:-build-gpu/bin/ntop}
EX=${EX:-/tmp/ntop-block-records-ex}
W=$(mktemp -d /tmp/block_records.XXXXXX)
SPIN=${SPIN:-20000}
export PATH=$PATH:/usr/local/cuda/bin
fails=0
report() { tee -a "$OUT/block_records.txt"; }
: >"$OUT/block_records.txt"
tests/gpu/build_examples.sh "$EX" block_skew app_cost >/dev/null || { echo "examples failed to build" | report; exit 1; }

same_output() { # name plain probed
	if diff <(grep -v '^info:' "$2") <(grep -v '^info:\|^ntop' "$3") >/dev/null; then
		echo "ok   $1: output as plain" | report
	else
		echo "FAIL $1: output differs from plain" | report
		fails=$((fails + 1))
	fi
}

"$EX/block_skew" --spin "$SPIN" >"$W/skew.plain" 2>&1
"$NTOP" record -p block_sched -p tests/gpu/block_span.toml -o "$W/skew" -- "$EX/block_skew" --spin "$SPIN" \
	>"$W/skew.probed" 2>&1
same_output block_skew "$W/skew.plain" "$W/skew.probed"
python3 tests/gpu/check_block_records.py --spin "$SPIN" "$W/skew" 2>&1 | report
[ "${PIPESTATUS[0]}" = 0 ] || fails=$((fails + 1))

"$EX/app_cost" 3 >"$W/cost.plain" 2>&1
"$NTOP" record -p block_sched -p tests/gpu/block_span.toml --every 1 --limit 2 -o "$W/cost" -- "$EX/app_cost" 3 \
	>"$W/cost.probed" 2>&1
same_output app_cost "$W/cost.plain" "$W/cost.probed"
python3 tests/gpu/check_block_records.py "$W/cost" 2>&1 | report
[ "${PIPESTATUS[0]}" = 0 ] || fails=$((fails + 1))
"$NTOP" report "$W/skew" 2>&1 | tail -8 | report
rm -rf "$W"
echo "block_records: $fails failed" | report
exit $fails
