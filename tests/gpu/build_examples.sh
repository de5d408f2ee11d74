#!/bin/bash
# Builds examples/cuda/*.cu into ${1:-build-examples}/ (run from anywhere);
# app names after the directory build only those apps.
# Every app embeds sm_90 SASS plus compute_90 PTX (so ntop can probe it);
# sass_only is built without PTX to check that such kernels are listed with a
# reason. Needs nvcc (PATH or /usr/local/cuda/bin). Exit status: number of
# apps that failed to build.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build-examples}
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null || NVCC=/usr/local/cuda/bin/nvcc
mkdir -p "$out"
src=$root/examples/cuda
common=(-O3 -std=c++17 -lineinfo)
ptx=(-gencode "arch=compute_90,code=sm_90" -gencode "arch=compute_90,code=compute_90")
sass=(-gencode "arch=compute_90,code=sm_90")

build() { # name flags...
	local name=$1; shift
	if "$NVCC" "${common[@]}" "$@" -o "$out/$name" "$src/$name.cu" >"$out/$name.build.log" 2>&1; then
		echo "built $name"
	else
		echo "FAILED to build $name (see $out/$name.build.log):"
		cat "$out/$name.build.log"
		return 1
	fi
}

shift $(($# > 0 ? 1 : 0))
only=" $* "
want() { [ "$only" = "  " ] || [[ "$only" == *" $1 "* ]]; }

pids=()
for app in launch_modes fill sgemm memk launch_loop tensorops patterns app_cost block_skew regions_check multi_gpu train_loop; do
	want "$app" || continue
	build "$app" "${ptx[@]}" &
	pids+=($!)
done
if want driver_api; then
	build driver_api "${ptx[@]}" -lcuda &
	pids+=($!)
fi
if want threads_fork; then
	build threads_fork "${ptx[@]}" -lpthread &
	pids+=($!)
fi
if want sass_only; then
	build sass_only "${sass[@]}" &
	pids+=($!)
fi
fails=0
for p in "${pids[@]}"; do
	wait "$p" || fails=$((fails + 1))
done
exit $fails
