#!/bin/bash
# Regenerates the AMDGPU corpus (tests/corpus/amdgpu/*) from src/*.hip with
# Debian's clang-19 (apt: clang-19; no ROCm install, no GPU). Outputs:
#   NAME.z.hipfb       compressed offload bundle (zstd, CCOB v2) of every source
#                      for gfx90a, gfx942, gfx1100, gfx1201
#   vecadd.hipfb       the same bundle uncompressed
#   vecadd.ARCH.co     bare code objects (what hipModuleLoadData gets)
#   reduce.gfx1100w64.co  gfx1100 in wave64 (-mwavefrontsize64)
#   libhipvec.so       a host shared library with a .hip_fatbin section
#                      (gfx90a, gfx1100, compressed) and __hipRegister* calls
#   triton.KERNEL.ARCH.hsaco  src/triton_kernels.py compiled by Triton's AMD
#                      backend for gfx90a, gfx942 (wave64) and gfx1100
#                      (wave32) by triton_build.py: needs the pinned
#                      `pip install triton==3.9.0` (its own LLVM;
#                      no GPU, no ROCm), the same bytes on every run
# A fixed -cuid and directory name make the objects the same bytes wherever
# and however they are built (the compressed and plain bundles of vecadd
# hold identical objects: test_amdgpu checks it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CLANG=${CLANG:-clang-19}
TRITON_VERSION=3.9.0
arches=(--offload-arch=gfx90a --offload-arch=gfx942 --offload-arch=gfx1100 --offload-arch=gfx1201)
dev=(-x hip --cuda-device-only -nogpulib -nogpuinc -O2 -cuid=ntopcorpus)
work=/tmp/ntop-amdgpu-corpus
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
cp "$here"/src/*.hip "$here"/src/*.h "$work"/
cd "$work"

for f in vecadd reduce grid3d calls mfma buffer wmma; do
	"$CLANG" "${dev[@]}" "${arches[@]}" --offload-compress -c $f.hip -o "$here/$f.z.hipfb"
done
"$CLANG" "${dev[@]}" "${arches[@]}" -c vecadd.hip -o "$here/vecadd.hipfb"
for a in gfx90a gfx942 gfx1100 gfx1201; do
	"$CLANG" "${dev[@]}" --offload-arch=$a --no-gpu-bundle-output -c vecadd.hip -o "$here/vecadd.$a.co"
done
"$CLANG" "${dev[@]}" --offload-arch=gfx1100 -mwavefrontsize64 --no-gpu-bundle-output -c reduce.hip \
	-o "$here/reduce.gfx1100w64.co"
"$CLANG" -x hip -nogpulib -nogpuinc -O2 -cuid=ntopcorpus -fPIC --offload-arch=gfx90a --offload-arch=gfx1100 --offload-compress \
	-c vecadd.hip -o vecadd.host.o
"$CLANG" -shared vecadd.host.o -o "$here/libhipvec.so"

# Triton last: another triton version writes other bytes, so refuse it
have=$(python3 -c 'import triton; print(triton.__version__)' 2>/dev/null) ||
	{ echo "regen.sh: triton not installed: pip install triton==$TRITON_VERSION" >&2; exit 1; }
[ "$have" = "$TRITON_VERSION" ] ||
	{ echo "regen.sh: triton $have installed, the corpus is built by $TRITON_VERSION" >&2; exit 1; }
TRITON_CACHE_DIR="$work/triton-cache" python3 "$here/triton_build.py"
