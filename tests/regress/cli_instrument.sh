#!/bin/bash
# ntop instrument on corpus PTX: writes probed PTX with the map parameter and
# the probe's reads of %clock64/%smid; ambiguous and unknown names exit 2;
# --assemble runs ptxas when the toolkit is there.
set -u
NTOP="${NTOP_BINARY_DIR:?}/bin/ntop"
SRC="${NTOP_SOURCE_DIR:?}"
[ -x "$NTOP" ] || { echo "FAIL: $NTOP not built"; exit 1; }
PTX="$SRC/tests/corpus/ptx/vecadd.sm_80.ptx"
[ -f "$PTX" ] || { echo "skip: no PTX corpus"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

out=$("$NTOP" instrument -p block_sched -k vecadd "$PTX" -o "$T/v.ptx" 2>&1)
rc=$?
if [ "$rc" != 0 ] && echo "$out" | grep -qi 'not implemented'; then
	echo "skip: engine not there yet: $out"
	exit 77
fi
[ "$rc" = 0 ] || bad "rc $rc: $out"
[ -s "$T/v.ptx" ] || bad "no output written"
echo "$out" | grep -q '^kernel: vecadd$' || bad "kernel line: $out"
echo "$out" | grep -Eq '^sites: [1-9]' || bad "sites line: $out"
echo "$out" | grep -Eq '^time: parse [0-9.]+ ms' || bad "time line: $out"
echo "$out" | grep -q '^map block_sched (probe block_sched): per warp, 1 x 24 B' || bad "map line: $out"
# exactly one kernel parameter that the input does not have: the map pointer
params() { grep -Eo '^[[:space:]]*\.param[[:space:]]+\.[a-z0-9]+[[:space:]]+[A-Za-z_0-9]+' "$1" | awk '{print $3}' | sort -u; }
added=$(comm -13 <(params "$PTX") <(params "$T/v.ptx") | wc -l)
[ "$added" = 1 ] || bad "expected one added map parameter, got $added"
grep -q '%clock64' "$T/v.ptx" && grep -q '%smid' "$T/v.ptx" || bad "probe code missing"
grep -q 'saxpy' "$T/v.ptx" && bad "other kernels were not pruned"

# demangled substring picks the C++ kernel
out=$("$NTOP" instrument -p block_sched -k 'saxpy(float' "$PTX" -o "$T/s.ptx" 2>&1) || bad "saxpy: $out"
echo "$out" | grep -q '_Z5saxpyfPKfPfl' || bad "mangled name shown: $out"

out=$("$NTOP" instrument -p block_sched -k a "$PTX" -o "$T/x.ptx" 2>&1)
[ $? = 2 ] || bad "ambiguous name should exit 2"
echo "$out" | grep -q "matches 2 kernels" && echo "$out" | grep -q '^  vecadd$' || bad "candidates: $out"
[ -e "$T/x.ptx" ] && bad "wrote output for an ambiguous name"
out=$("$NTOP" instrument -p block_sched -k nosuch "$PTX" -o "$T/x.ptx" 2>&1)
[ $? = 2 ] || bad "unknown kernel should exit 2"
"$NTOP" instrument -p block_sched "$PTX" -o "$T/x.ptx" >/dev/null 2>&1
[ $? = 2 ] || bad "missing -k should exit 2"
"$NTOP" instrument -p block_sched -k vecadd "$PTX" -o "$T/x.ptx" --frob >/dev/null 2>&1
[ $? = 2 ] || bad "unknown option should exit 2"
"$NTOP" instrument -p block_sched -k vecadd "$PTX" -o "$T/x.ptx" --arch 90 --arch sm_x >/dev/null 2>&1
[ $? = 2 ] || bad "bad --arch should exit 2"
out=$("$NTOP" instrument -p block_sched -k vecadd /etc/hostname -o "$T/x.ptx" 2>&1)
[ $? = 1 ] || bad "non-image should exit 1: $out"

# NEUTRINO's positions are substrings: its tensorop_count counts wmma.mma.sync
# too (entry, the wmma, exit: 3 sites; a prefix match would give 2)
out=$("$NTOP" instrument -p "$SRC/tests/corpus/neutrino/tensorop_count.toml" -k wmma \
	"$SRC/tests/corpus/ptx/tensor.sm_80.ptx" -o "$T/w.ptx" 2>&1) || bad "NEUTRINO tensorop_count: $out"
echo "$out" | grep -q '^sites: 3 instrumented' || bad "NEUTRINO tensorop_count on wmma: $out"
grep -A4 'wmma.mma.sync' "$T/w.ptx" | grep -q 'add.u64' || bad "nothing counts after wmma.mma.sync"

# --1d: the copy for 1-D launches reads no y/z extents (the general one does)
grep -q '%ntid.y' "$T/v.ptx" && grep -q '%nctaid.y' "$T/v.ptx" || bad "the general copy reads no y extents"
out=$("$NTOP" instrument -p block_sched -k vecadd "$PTX" -o "$T/v1.ptx" --1d 2>&1) || bad "--1d: $out"
echo "$out" | grep -q '^shape: launches with 1-D blocks and a 1-D grid only' || bad "--1d not said: $out"
grep -q '%ntid.y\|%nctaid.y\|%tid.y\|%ctaid.y' "$T/v1.ptx" && bad "--1d copy reads y indices"
"$NTOP" instrument -p block_sched -k vecadd "$PTX" -o "$T/b1.ptx" --1d-block >/dev/null 2>&1 || bad "--1d-block"
grep -q '%ntid.y' "$T/b1.ptx" || grep -q '%nctaid.y' "$T/b1.ptx" || bad "--1d-block left out the grid's y too"
grep -q '%ntid.y' "$T/b1.ptx" && bad "--1d-block copy reads ntid.y"

PTXAS=${NTOP_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [ -x "$PTXAS" ]; then
	out=$("$NTOP" instrument -p block_sched -k vecadd "$PTX" -o "$T/v.ptx" --assemble 2>&1)
	[ $? = 0 ] || bad "--assemble: $out"
	echo "$out" | grep -Eq '^ptxas -arch=sm_80: registers [0-9]+ unprobed, [0-9]+ probed' || bad "registers: $out"
	out=$("$NTOP" instrument -p block_sched -k vecadd "$PTX" -o "$T/v1.ptx" --1d --assemble 2>&1)
	[ $? = 0 ] || bad "--1d --assemble: $out"
else
	echo "note: no ptxas, --assemble not tested"
fi

[ "$fail" = 0 ] && echo "cli_instrument: all passed"
exit "$fail"
