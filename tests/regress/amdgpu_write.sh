#!/bin/bash
# Probed AMDGPU code objects written by ntop (src/engine/amdgpu/amdgpu_write.c) and
# held against LLVM 19's tools, for every kernel of the corpus and a sample
# of rocRAND (every 20th kernel; all 560 take minutes): amdgpu_probe write
# appends a map argument, loads it at entry into SGPRs allocated above the
# kernel's, puts an s_nop before every vector memory instruction and program
# end, and checks that the new object's disassembly is the original plus
# exactly that code (branches and s_getpc_b64 units still reach their
# targets). Then, per written object: llvm-readelf-19 --all reads it without
# a warning, llvm-objdump-19 -d disassembles it without one and lists the
# kernel in the new section, our metadata tree equals llvm-readelf --notes,
# the appended argument is there, and every descriptor field we decode
# equals llvm-objdump's. Skips (77) without llvm-19.
set -u
BIN="${NTOP_BINARY_DIR:?}"
SRC="${NTOP_SOURCE_DIR:?}"
DUMP="$BIN/tests/amdgpu/amdgpu_dump"
PROBE="$BIN/tests/amdgpu/amdgpu_probe"
READELF=$(command -v llvm-readelf-19 || true)
OBJDUMP=$(command -v llvm-objdump-19 || true)
[ -x "$DUMP" ] && [ -x "$PROBE" ] || { echo "FAIL: amdgpu test tools not built"; exit 1; }
[ -n "$READELF" ] && [ -n "$OBJDUMP" ] && command -v llvm-mc-19 >/dev/null ||
	{ echo "skip: llvm-19 not installed (./setup.sh installs it)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 objects=0
bad() { echo "FAIL: $*"; fail=1; }
. "$SRC/tests/regress/amdgpu_lib.inc"

C="$SRC/tests/corpus/amdgpu"
mkdir -p "$T/c"
out=$("$PROBE" write "$T/c" "$C"/*.z.hipfb "$C"/reduce.gfx1100w64.co "$C"/*.hsaco) || bad "corpus: amdgpu_probe write failed"
echo "corpus: $out" | grep -v '^corpus: refused'
echo "$out" | grep -Eq '^write: 46 kernels: 43 written and checked \([0-9]+ original instructions, [1-9][0-9]* inserted, [1-9][0-9]* branches, [1-9][0-9]* s_getpc_b64 units\), 3 refused, 0 failed' ||
	bad "corpus counts"
check_written "$T/c" ntop_map0
corpus=$objects
ROCRAND=/usr/lib/x86_64-linux-gnu/librocrand.so.1
if [ -f "$ROCRAND" ]; then
	mkdir -p "$T/r"
	out=$("$PROBE" write --every 20 "$T/r" "$ROCRAND") || bad "rocRAND: amdgpu_probe write failed"
	echo "rocRAND (every 20th kernel): $(echo "$out" | grep '^write:')"
	echo "$out" | sed -n 's/^refused [^:]*: \([^:]*\):.*/refused: \1/p' | sort | uniq -c
	echo "$out" | grep -Eq '^write: 28 kernels: ([0-9]+) written and checked .*, ([0-9]+) refused, 0 failed' ||
		bad "rocRAND counts"
	# the only refusals: gfx803 (not a probed family) and kernels using s0-s105
	echo "$out" | grep '^refused' | grep -v 'gfx8 code is not probed' | grep -v 'no free SGPRs' && bad "other refusals"
	check_written "$T/r" ntop_map0
else
	echo "note: $ROCRAND not installed: rocRAND not written"
fi
echo "checked $objects written objects ($corpus from the corpus) with llvm-readelf and llvm-objdump:" \
	"$notes_lines metadata lines, $kds descriptors ($kd_lines lines); $undecoded descriptors LLVM 19 cannot decode"
[ $fail = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
