#!/bin/bash
# Regenerates tests/corpus/ptx/*.ptx from tests/corpus/src/*.cu with nvcc.
# Output names: <source>.<arch>.ptx; debug variants <source>.<arch>.g.ptx
# (-G: .loc, .file and .section .debug_* blocks) and relocatable-device-code
# variants <source>.<arch>.rdc.ptx (-rdc: every device function kept, .weak/.extern).
# Files named triton_*.ptx are added by hand and are left alone.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null || NVCC=/usr/local/cuda/bin/nvcc
src=$here/src
out=$here/ptx
mkdir -p "$out"

# gen <source> <arch>... : arch is 75, 80 or 90a.
gen() {
	local name=$1; shift
	local a
	for a in "$@"; do
		"$NVCC" -ptx -std=c++17 -gencode=arch=compute_$a,code=sm_$a \
			-o "$out/$name.sm_$a.ptx" "$src/$name.cu"
	done
}

for f in vecadd reduce calls sgemm atomics printf_assert blocks3d; do
	gen $f 75 80 90a
done
gen tensor 80 90a
gen cpasync 80 90a
gen hopper 90a
gen bulk 90a

"$NVCC" -ptx -std=c++17 -G -gencode=arch=compute_80,code=sm_80 \
	-o "$out/calls.sm_80.g.ptx" "$src/calls.cu"
"$NVCC" -ptx -std=c++17 -lineinfo -gencode=arch=compute_90a,code=sm_90a \
	-o "$out/reduce.sm_90a.lineinfo.ptx" "$src/reduce.cu"
"$NVCC" -ptx -std=c++17 -rdc=true -gencode=arch=compute_80,code=sm_80 \
	-o "$out/calls.sm_80.rdc.ptx" "$src/calls.cu"
"$NVCC" -ptx -std=c++17 -rdc=true -gencode=arch=compute_75,code=sm_75 \
	-o "$out/printf_assert.sm_75.rdc.ptx" "$src/printf_assert.cu"
