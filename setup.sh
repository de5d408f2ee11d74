#!/usr/bin/env bash
# The two set-up commands of the README:
#   ./setup.sh run    install what is missing, build, and run ntop on the
#                     embedded default: the UI on the bundled example app on a
#                     GPU machine, on the bundled recorded session without one
#                     (the text report when not run from a terminal)
#   ./setup.sh test   install what is missing, build warning-free (-Werror)
#                     with gcc and clang in Release, build with sanitizers
#                     (gcc), run every test (what CI runs)
set -euo pipefail
cd "$(dirname "$0")"

packages=(cmake make gcc g++ clang pkg-config libzstd-dev liblz4-dev libncurses-dev libpng-dev tmux python3 binutils
	# the AMD path: LLVM 19 tools (corpus, reassembly, checks against
	# llvm-readelf), comgr, and rocRAND's real code objects to read; HIP's
	# headers, ROCm's device libraries and hipcc (clang 15) to build a HIP
	# app as users do (regress hip_app)
	clang-19 llvm-19 lld-19 libamd-comgr-dev librocrand1 libamdhip64-dev rocm-device-libs hipcc
	# a venv for triton (regress hip_triton); Python.h, which Triton's
	# launcher is compiled against when it first runs
	python3-venv python3-dev)

# Triton 3.9.0 from PyPI, for regress hip_triton (Triton's own AMD launcher
# over the HIP test double), in a venv of its own: the system Python is left
# alone. A failure (no network) is one line here and a skip there, never a
# failed set-up; once installed, a check of the version is all it costs.
triton_venv=${NTOP_TRITON_VENV:-$PWD/.cache/triton-3.9.0}
install_triton() {
	local py=$triton_venv/bin/python log
	"$py" -c 'import sys, triton; sys.exit(triton.__version__ != "3.9.0")' 2>/dev/null && return 0
	echo "setup: installing triton 3.9.0 (about 290 MB) into $triton_venv" >&2
	log=$(mktemp)
	if python3 -m venv "$triton_venv" >"$log" 2>&1 &&
		"$py" -m pip install -q --disable-pip-version-check --retries 1 --timeout 30 triton==3.9.0 >"$log" 2>&1; then
		rm -f "$log"
		return 0
	fi
	echo "setup: triton 3.9.0 not installed (regress hip_triton will skip): $(grep -v '^ *$' "$log" | tail -1)" >&2
	rm -f "$log"
}

install_missing() {
	local missing=()
	for p in "${packages[@]}"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "setup: installing ${missing[*]}" >&2
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

find_cuda() {
	if ! command -v nvcc >/dev/null 2>&1; then
		for d in /usr/local/cuda/bin /usr/local/cuda-13.0/bin; do
			[ -x "$d/nvcc" ] && export PATH="$d:$PATH" && return 0
		done
		echo "setup: the CUDA Toolkit (nvcc, ptxas, cuda.h) is required; install it first" >&2
		exit 1
	fi
}

have_gpu() {
	command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1
}

jobs=$(nproc 2>/dev/null || echo 2)

case "${1:-}" in
run)
	install_missing
	find_cuda
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNTOP_TESTS=OFF >/dev/null
	cmake --build build -j"$jobs"
	# The UI needs a terminal; piped or scripted runs get the text report.
	if have_gpu; then
		tests/gpu/build_examples.sh build/examples
		if [ -t 0 ] && [ -t 1 ]; then
			build/bin/ntop -- build/examples/launch_modes
		else
			dir=$(mktemp -d -t ntop-demo.XXXXXX)
			# its kernels run once or twice: probed from their first launch
			build/bin/ntop record -p block_sched --wait-build -o "$dir/trace" -- build/examples/launch_modes
			build/bin/ntop report "$dir/trace"
		fi
	else
		echo "setup: no GPU here: opening the bundled session recorded on an H200 (examples/session)" >&2
		if [ -t 0 ] && [ -t 1 ]; then
			build/bin/ntop view examples/session
		else
			build/bin/ntop report examples/session
		fi
	fi
	;;
test)
	install_missing
	find_cuda
	install_triton
	# Optimised builds see warnings a Debug build cannot (use-after-free,
	# maybe-uninitialized), and clang warns where gcc does not: both
	# compilers build everything, tests included, with warnings as errors.
	for cc in gcc clang; do
		cxx=g++
		[ "$cc" = clang ] && cxx=clang++
		echo "setup: $cc Release build (-Werror)" >&2
		CC=$cc CXX=$cxx cmake -S . -B "build-test-$cc" -DCMAKE_BUILD_TYPE=Release -DNTOP_WERROR=ON >/dev/null
		cmake --build "build-test-$cc" -j"$jobs" >/dev/null
	done
	echo "setup: gcc Debug build with ASan+UBSan (-Werror), then the tests" >&2
	cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Debug -DNTOP_SANITIZE=ON -DNTOP_WERROR=ON >/dev/null
	cmake --build build-test -j"$jobs"
	cd build-test
	ctest --output-on-failure -j"$jobs" --timeout 600
	;;
*)
	echo "usage: $0 run|test" >&2
	exit 2
	;;
esac
