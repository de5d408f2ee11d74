#!/bin/bash
# Disassemble -> reassemble on every kernel of the AMDGPU corpus and, when
# installed, of rocRAND (src/engine/amdgpu_disasm.c, amdgpu_asm.c): with
# nothing inserted the code comes back byte-identical; re-encoded from the
# disassembly text it is identical or differs only in listed don't-care
# fields; with an s_nop before every instruction every branch still reaches
# its instruction and every s_getpc_b64 unit its address. Skips (77) without
# llvm-objdump-19/llvm-mc-19.
set -u
DUMP="${NTOP_BINARY_DIR:?}/tests/amdgpu/amdgpu_dump"
SRC="${NTOP_SOURCE_DIR:?}"
[ -x "$DUMP" ] || { echo "FAIL: $DUMP not built"; exit 1; }
command -v llvm-objdump-19 >/dev/null && command -v llvm-mc-19 >/dev/null ||
	{ echo "skip: llvm-19 not installed (./setup.sh installs it)"; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }
C="$SRC/tests/corpus/amdgpu"
out=$("$DUMP" roundtrip "$C"/*.z.hipfb "$C"/reduce.gfx1100w64.co) || bad "corpus round trip"
echo "corpus: $out"
# 4 targets x (vecadd 3 + reduce + grid3d + calls + mfma) + the wave64 object;
# calls holds s_getpc_b64 units on every target
echo "$out" | grep -q '^roundtrip: 29 kernels: 29 identical as words, 29 with s_nop inserted correct ([1-9][0-9]* s_getpc_b64 units); from text 29 identical' ||
	bad "corpus counts"
ROCRAND=/usr/lib/x86_64-linux-gnu/librocrand.so.1
if [ -f "$ROCRAND" ]; then
	out=$("$DUMP" roundtrip "$ROCRAND") || bad "rocRAND round trip"
	echo "rocRAND: $out"
	echo "$out" | grep -Eq '^roundtrip: ([0-9]+) kernels: \1 identical as words, \1 with s_nop inserted correct' ||
		bad "rocRAND counts"
else
	echo "note: $ROCRAND not installed: rocRAND not round-tripped"
fi
[ $fail = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
