#!/bin/bash
# Disassemble -> reassemble on every kernel of the AMDGPU corpus and, when
# installed, of rocRAND (src/engine/amdgpu/amdgpu_disasm.c, amdgpu_asm.c): with
# nothing inserted the code comes back byte-identical; re-encoded from the
# disassembly text it is identical or differs only in listed don't-care
# fields; with an s_nop before every instruction every branch still reaches
# its instruction and every s_getpc_b64 unit its address; the registers each
# kernel's text names fit its metadata, and probe registers land above them
# or are refused by name (rocRAND has kernels using s0-s105). Skips (77) without
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
out=$("$DUMP" roundtrip "$C"/*.z.hipfb "$C"/reduce.gfx1100w64.co "$C"/*.hsaco) || bad "corpus round trip"
echo "corpus: $out"
# 4 targets x (vecadd 3 + reduce + grid3d + calls + mfma) + the wave64 object
# + Triton's 3 kernels x 3 targets; calls holds s_getpc_b64 units on every
# target; Triton's gfx1100 objects hold a word LLVM 19 cannot decode (refused)
echo "$out" | grep -q '^roundtrip: 46 kernels: 43 identical as words, 43 with s_nop inserted correct ([1-9][0-9]* s_getpc_b64 units); from text 43 identical, 0 differing only in vopc_cmpx_vdst; 3 refused (a word LLVM 19 cannot decode); 0 failed$' ||
	bad "corpus counts"
# every corpus kernel: the registers its text names equal the metadata's
# counts, and 4 SGPRs + 2 VGPRs fit above them
echo "$out" | grep -q '^registers: 43 kernels within their metadata counts (43 at them exactly); probe registers (4 SGPRs, 2 VGPRs): 43 placed, 0 refused' ||
	bad "corpus register counts"
ROCRAND=/usr/lib/x86_64-linux-gnu/librocrand.so.1
if [ -f "$ROCRAND" ]; then
	out=$("$DUMP" roundtrip "$ROCRAND") || bad "rocRAND round trip"
	echo "rocRAND: $out"
	echo "$out" | grep -Eq '^roundtrip: ([0-9]+) kernels: \1 identical as words, \1 with s_nop inserted correct' ||
		bad "rocRAND counts"
	echo "$out" | grep -Eq '^registers: ([0-9]+) kernels within their metadata counts .* ([0-9]+) placed, ([0-9]+) refused' ||
		bad "rocRAND register counts"
	n=$(echo "$out" | sed -n 's/^roundtrip: \([0-9]*\) kernels.*/\1/p')
	read -r within placed refused < <(echo "$out" | sed -n 's/^registers: \([0-9]*\) kernels within.*: \([0-9]*\) placed, \([0-9]*\) refused/\1 \2 \3/p')
	[ "$within" = "$n" ] && [ $((placed + refused)) = "$n" ] || bad "rocRAND: $within of $n within counts, $placed + $refused allocations"
else
	echo "note: $ROCRAND not installed: rocRAND not round-tripped"
fi
[ $fail = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
