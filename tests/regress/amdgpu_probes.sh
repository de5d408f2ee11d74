#!/bin/bash
# The built-in AMD probes (probes/amd/*.toml) on real code: each probe alone
# and all three together on every corpus kernel, and together on every 20th
# rocRAND kernel, through amdgpu_instrument (verify, inject, write the probed
# code object, check that its kernel disassembles to the original plus
# exactly the inserted code). Every kernel is probed or refused with one of
# the engine's named reasons; the counts are printed and the corpus ones
# held to. Each probed object is then read by llvm-readelf-19 and
# llvm-objdump-19 without a warning, its metadata equals llvm-readelf's
# (with ntop_launch and the maps' arguments), its descriptor llvm-objdump's.
# Then `ntop instrument` on AMD images: a bundle, a HIP library, --arch,
# ambiguous names, PTX probes refused, an assembler error reported at the
# probe's line. Skips (77) without llvm-19.
set -u
BIN="${NTOP_BINARY_DIR:?}"
SRC="${NTOP_SOURCE_DIR:?}"
NTOP="$BIN/bin/ntop"
DUMP="$BIN/tests/amdgpu/amdgpu_dump"
PROBE="$BIN/tests/amdgpu/amdgpu_probe"
READELF=$(command -v llvm-readelf-19 || true)
OBJDUMP=$(command -v llvm-objdump-19 || true)
[ -x "$PROBE" ] && [ -x "$NTOP" ] || { echo "FAIL: ntop or the amdgpu test tools not built"; exit 1; }
[ -n "$READELF" ] && [ -n "$OBJDUMP" ] && command -v llvm-mc-19 >/dev/null ||
	{ echo "skip: llvm-19 not installed (./setup.sh installs it)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
. "$SRC/tests/regress/amdgpu_lib.inc"
C="$SRC/tests/corpus/amdgpu"
P="$SRC/probes/amd"
CORPUS=("$C"/*.z.hipfb "$C"/reduce.gfx1100w64.co "$C"/*.hsaco)

run() { # name probes expected-regex files...
	local name=$1 probes=$2 want=$3
	shift 3
	mkdir -p "$T/$name"
	out=$("$PROBE" run "$T/$name" "$probes" "$@") || bad "$name: amdgpu_probe run failed"
	echo "$name: $(echo "$out" | grep '^run:')"
	echo "$out" | sed -n 's/^refused [^:]*: \(.*\)/  refused: \1/p' | sed 's/kernel [^ ]*[: ]//' | sort | uniq -c
	echo "$out" | grep '^FAIL'
	echo "$out" | grep -Eq "$want" || bad "$name counts"
}

# 37 clang kernels on gfx90a, gfx942, gfx1100 (wave32 and wave64), gfx1201
# and 9 Triton kernels on gfx90a, gfx942, gfx1100: the 3 Triton gfx1100 ones
# refused (a word LLVM 19 cannot decode), the others probed; the memory
# probes find every global access and the raw buffer ones: Triton's 4
# (tt_rowsum on gfx90a and gfx942) and buffer.hip's 16 (4 per target),
# its 4 loads with an SGPR soffset left without an address (named); code
# lands inside 16 s_clause windows. (Before buffer accesses were traced and
# buffer.hip and wmma.hip joined the corpus: 38 kernels, 35 probed, 206
# memory sites, 412 with all three, 10 tensorop_count sites.)
run block_sched "$P/block_sched.toml" \
	'^run: 46 kernels: 43 probed and checked \(0 sites, 0 without a plain address, 43 exits, 0 clause hints dropped;.*, 3 refused, 0 failed$' \
	"${CORPUS[@]}"
run dmat "$P/dmat.toml" \
	'^run: 46 kernels: 43 probed and checked \(338 sites, 4 without a plain address, 43 exits, 16 clause hints dropped;.*, 3 refused, 0 failed$' \
	"${CORPUS[@]}"
run dmat_global "$P/dmat_global.toml" \
	'^run: 46 kernels: 43 probed and checked \(338 sites, 4 without a plain address, 43 exits, 16 clause hints dropped;.*, 3 refused, 0 failed$' \
	"${CORPUS[@]}"
run gmem_bytes "$P/gmem_bytes.toml" \
	'^run: 46 kernels: 43 probed and checked \(338 sites, 4 without a plain address, 43 exits, 16 clause hints dropped;.*, 3 refused, 0 failed$' \
	"${CORPUS[@]}"
# 59 barriers (s_barrier, gfx1201's s_barrier_signal; not s_barrier_wait)
run warp_progress "$P/warp_progress.toml" \
	'^run: 46 kernels: 43 probed and checked \(59 sites, 0 without a plain address, 43 exits, 0 clause hints dropped;.*, 3 refused, 0 failed$' \
	"${CORPUS[@]}"
# 10 MFMA (mfma.hip and Triton's tl.dot on gfx90a and gfx942) and 2 WMMA
# (wmma.hip on gfx1100 and gfx1201); Triton's gfx1100 WMMA kernel is among
# the 3 refused
run tensorop_count "$P/tensorop_count.toml" \
	'^run: 46 kernels: 43 probed and checked \(12 sites, 0 without a plain address, 43 exits, 0 clause hints dropped;.*, 3 refused, 0 failed$' \
	"${CORPUS[@]}"
run all "$P/block_sched.toml,$P/dmat.toml,$P/gmem_bytes.toml" \
	'^run: 46 kernels: 43 probed and checked \(676 sites, 8 without a plain address, 43 exits, 16 clause hints dropped;.*, 3 refused, 0 failed$' \
	"${CORPUS[@]}"
# Every probed code object against tests/corpus/amdgpu/probed.sha256: a
# change of the probed output shows as the lines that differ;
# NTOP_UPDATE_DIGESTS=1 rewrites the file (for a change meant to alter it).
DIGESTS="$SRC/tests/corpus/amdgpu/probed.sha256"
for d in block_sched dmat dmat_global gmem_bytes warp_progress tensorop_count all; do
	while read -r n proc kernel; do
		echo "$(sha256sum <"$T/$d/$n.co" | cut -c1-64) $d $proc $kernel"
	done <"$T/$d/list"
done | LC_ALL=C sort -k2 >"$T/digests"
if [ -n "${NTOP_UPDATE_DIGESTS:-}" ]; then
	cp "$T/digests" "$DIGESTS"
	echo "wrote $(wc -l <"$T/digests") digests to $DIGESTS"
elif ! diff "$DIGESTS" "$T/digests" >"$T/digests.diff"; then
	bad "probed code objects differ from tests/corpus/amdgpu/probed.sha256 (NTOP_UPDATE_DIGESTS=1 rewrites it):"
	head -40 "$T/digests.diff"
else
	echo "probed code objects: $(wc -l <"$DIGESTS") digests as in tests/corpus/amdgpu/probed.sha256"
fi
check_written "$T/dmat" ntop_launch ntop_map_dmat
check_written "$T/dmat_global" ntop_launch ntop_map_dmat_global
check_written "$T/warp_progress" ntop_launch ntop_map_warp_progress
check_written "$T/tensorop_count" ntop_launch ntop_map_tensorop_count
check_written "$T/all" ntop_launch ntop_map_block_sched ntop_map_dmat ntop_map_gmem_bytes
ROCRAND=/usr/lib/x86_64-linux-gnu/librocrand.so.1
if [ -f "$ROCRAND" ]; then
	mkdir -p "$T/r"
	out=$("$PROBE" run --every 20 "$T/r" "$P/block_sched.toml,$P/dmat.toml,$P/gmem_bytes.toml" "$ROCRAND") ||
		bad "rocRAND: amdgpu_probe run failed"
	echo "rocRAND, all three probes, every 20th kernel: $(echo "$out" | grep '^run:')"
	echo "$out" | sed -n 's/^refused [^:]*: \(.*\)/  refused: \1/p' | sed 's/kernel [^ ]*[: ]//' | sort | uniq -c
	echo "$out" | grep '^FAIL'
	echo "$out" | grep -Eq '^run: 28 kernels: [0-9]+ probed and checked .*, [0-9]+ refused, 0 failed$' || bad "rocRAND counts"
	check_written "$T/r" ntop_launch ntop_map_dmat
else
	echo "note: $ROCRAND not installed: rocRAND not probed"
fi
echo "checked $objects probed objects with llvm-readelf and llvm-objdump: $notes_lines metadata lines," \
	"$kds descriptors ($kd_lines lines); $undecoded descriptors LLVM 19 cannot decode"

# ntop instrument on AMD images
out=$("$NTOP" instrument -p block_sched -p dmat -k vecadd --arch gfx90a "$C/vecadd.z.hipfb" -o "$T/v.co" 2>&1) ||
	bad "instrument vecadd: $out"
echo "$out" | grep -q '^image: .*vecadd.z.hipfb (AMD, 4 code objects), object hipv4-amdgcn-amd-amdhsa--gfx90a$' ||
	bad "image line: $out"
echo "$out" | grep -Eq '^checked: the probed kernel disassembles to its [0-9]+ instructions plus exactly [1-9][0-9]* inserted' ||
	bad "check line: $out"
echo "$out" | grep -q '^map block_sched (probe block_sched): per wave, 1 x 24 B$' || bad "map line: $out"
echo "$out" | grep -q '^map dmat (probe dmat): per work-item, 64 x 16 B$' || bad "map line: $out"
[ "$("$DUMP" flags "$T/v.co" 2>/dev/null | cut -d, -f2)" = " gfx90a" ] || bad "the written object is not a gfx90a code object"
# a buffer access with an SGPR soffset: counted, not instrumented, and why
out=$("$NTOP" instrument -p dmat -k buf_copy --arch gfx1201 "$C/buffer.z.hipfb" -o "$T/b.co" 2>&1) ||
	bad "instrument buf_copy: $out"
echo "$out" | grep -q '^instructions: [0-9]*; sites: 4 instrumented (1 more without a plain address for ADDR/BYTES, not instrumented: a buffer access with an soffset: whether the range check counts it is not modelled)' ||
	bad "buffer sites line: $out"
out=$("$NTOP" instrument -p gmem_bytes -k 'scale<double' "$C/libhipvec.so" -o "$T/s.co" 2>&1) || bad "instrument libhipvec: $out"
echo "$out" | grep -q '_Z5scaleIdEvPT_S0_i' || bad "mangled name: $out"
echo "$out" | grep -q 'probing the first; --arch picks another' || bad "several objects not named: $out"
"$NTOP" instrument -p gmem_bytes -k scale "$C/libhipvec.so" -o "$T/x.co" >"$T/out" 2>&1
[ $? = 2 ] && grep -q "matches 2 kernels" "$T/out" || bad "an ambiguous name must exit 2: $(cat "$T/out")"
"$NTOP" instrument -p gmem_bytes -k vecadd --arch gfx1030 "$C/vecadd.z.hipfb" -o "$T/x.co" >"$T/out" 2>&1
[ $? = 2 ] && grep -q "no code object for gfx1030" "$T/out" || bad "a missing target must exit 2: $(cat "$T/out")"
"$NTOP" instrument -p "$SRC/probes/block_sched.toml" -k vecadd "$C/vecadd.gfx90a.co" -o "$T/x.co" >"$T/out" 2>&1
[ $? = 1 ] && grep -q 'written in PTX' "$T/out" || bad "a PTX probe on AMD code must be refused: $(cat "$T/out")"
"$NTOP" instrument -p block_sched -k vecadd --arch gfx90a "$SRC/tests/corpus/ptx/vecadd.sm_80.ptx" -o "$T/x.ptx" \
	>"$T/out" 2>&1
[ $? = 2 ] && grep -q 'names an AMD GPU' "$T/out" || bad "--arch gfx on PTX must exit 2: $(cat "$T/out")"
# what the verifier cannot know (a lane mask is a pair in wave64, one SGPR
# in wave32): llvm-mc's refusal, at the probe file's line, for that target
cat >"$T/mask.toml" <<'TOML'
ntop_probe = 1
name = "mask"
isa = "gcn"
[[hook]]
at = "entry"
asm = """
.sgpr %a:2, %m
.vgpr %v:2
v_mad_u64_u32 %v, %m, v0, 1, %a
"""
TOML
"$NTOP" instrument -p "$T/mask.toml" -k vecadd --arch gfx90a "$C/vecadd.z.hipfb" -o "$T/x.co" >"$T/out" 2>&1
[ $? = 1 ] && grep -q "mask.toml:9: the assembler refuses this for gfx90a: invalid operand" "$T/out" ||
	bad "an assembler error must name the probe's line: $(cat "$T/out")"
"$NTOP" instrument -p "$T/mask.toml" -k vecadd --arch gfx1100 "$C/vecadd.z.hipfb" -o "$T/x.co" >"$T/out" 2>&1 ||
	bad "the same snippet is wave32 code on gfx1100: $(cat "$T/out")"
[ $fail = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
