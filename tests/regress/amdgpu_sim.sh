#!/bin/bash
# The code ntop inserts into AMD kernels, run per simulated wave
# (src/engine/amdgpu/amdgpu_sim.c; tests/amdgpu/amdgpu_simrun.c drives it): every
# corpus kernel probed with each built-in AMD probe (dmat_global included:
# its records hold the real-time counter's read; warp_progress: a record at
# entry, before every s_barrier or gfx12 s_barrier_signal and at the exit;
# tensorop_count: MFMA and WMMA issues per wave, and every barrier or matrix
# instruction must have probe code before it) and with block_sched, dmat
# and gmem_bytes together, then
# three small launches (2x2x1 workgroups of 100 work-items: partial waves;
# 2x1x2 of 8x4x2: three-dimensional ids; 1 of 33) run wave by wave: the
# prologue, every site with EXEC all, every other, half or no lanes and
# known addresses in the traced instruction's registers (buffer accesses:
# a V# of one of seven kinds, plain with every lane in range, Triton's
# masked lanes out of range, num_records ending at the middle lane, and
# V#s with a stride, swizzling, a thread id added or gfx10+'s structured
# range check, whose lanes must record nothing), the exit with an
# arbitrary EXEC. After each site the kernel's registers, EXEC, VCC and SCC
# must be as they were; afterwards every unit's count and records must be
# what the probe means (unit index from workgroup and wave or work-item
# ids, the first cap records of each lane, addresses, sizes, kinds, the
# clock and timer reads, the packed CU id). wave64 on gfx90a, gfx942 and
# gfx1100 (-mwavefrontsize64), wave32 on gfx1100 and gfx1201. The same on
# every 20th rocRAND kernel. Skips (77) without llvm-19.
set -u
BIN="${NTOP_BINARY_DIR:?}"
SRC="${NTOP_SOURCE_DIR:?}"
PROBE="$BIN/tests/amdgpu/amdgpu_probe"
[ -x "$PROBE" ] || { echo "FAIL: $PROBE not built"; exit 1; }
command -v llvm-mc-19 >/dev/null && command -v llvm-objdump-19 >/dev/null ||
	{ echo "skip: llvm-19 not installed (./setup.sh installs it)"; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }
C="$SRC/tests/corpus/amdgpu"
P="$SRC/probes/amd"
ALL="$P/block_sched.toml,$P/dmat.toml,$P/gmem_bytes.toml"
for p in block_sched dmat dmat_global gmem_bytes warp_progress tensorop_count all; do
	probes="$P/$p.toml"
	[ $p = all ] && probes=$ALL
	out=$("$PROBE" sim "$probes" "$C"/*.z.hipfb "$C"/reduce.gfx1100w64.co "$C"/*.hsaco) || bad "$p: differences"
	echo "$p: $(echo "$out" | grep '^sim:')"
	echo "$out" | grep '^FAIL' | head -5
	# wmma.hip: one WMMA per wave of its gfx1100 and gfx1201 kernels (26
	# wave32 waves each); mfma.hip and Triton's tl.dot on gfx90a/gfx942
	[ $p != tensorop_count ] || echo "$out" | grep -q '^tensorop_count: 130 MFMA and 52 WMMA issues in the records checked$' ||
		bad "tensorop_count: MFMA and WMMA counts"
	echo "$out" | grep -Eq '^sim: 46 kernels: 43 simulated, 3 refused, 0 failed; 793 waves, [1-9][0-9]* sites, [1-9][0-9]* units, [1-9][0-9]* records checked, 0 differences$' ||
		bad "$p counts"
done
ROCRAND=/usr/lib/x86_64-linux-gnu/librocrand.so.1
if [ -f "$ROCRAND" ]; then
	out=$("$PROBE" sim --every 20 "$ALL" "$ROCRAND") || bad "rocRAND: differences"
	echo "rocRAND, every 20th kernel, all three probes: $(echo "$out" | grep '^sim:')"
	echo "$out" | sed -n 's/^refused [^:]*: kernel [^:]*: \([^:]*\):.*/  refused: \1/p; s/^refused [^:]*: \([^:]*\):.*/  refused: \1/p' |
		sort | uniq -c
	echo "$out" | grep '^FAIL' | head -5
	echo "$out" | grep -Eq '^sim: 28 kernels: [1-9][0-9]* simulated, [0-9]+ refused, 0 failed; .* 0 differences$' ||
		bad "rocRAND counts"
else
	echo "note: $ROCRAND not installed: rocRAND not simulated"
fi
[ $fail = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
