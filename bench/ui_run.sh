#!/bin/bash
# The UI benchmarks in one run, on the CPU machine (no GPU needed: the live
# UI runs over the fake driver). See bench/README.md.
#
#   bench/ui_run.sh [BUILD_DIR]     default ../build-bench-rel (Release)
#
# Configures BUILD_DIR as Release when it is new, builds what it needs, then
# runs bench/timeline_bench (1M blocks, median of 5) and bench/ui_bench.py
# (idle / storm / storm-vary / storm-max, 3 alternating runs each) one after
# the other, and writes everything with the machine's description to
# $OUT/ui-bench.txt (OUT defaults to ./bench-out).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
B=${1:-$ROOT/../build-bench-rel}
OUT=${OUT:-$ROOT/bench-out}
mkdir -p "$OUT"
REPORT=$OUT/ui-bench.txt
# (re)build, so the binaries match the tree the report names
[ -f "$B/CMakeCache.txt" ] || cmake -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null ||
	{ echo "ui_run: cmake failed" >&2; exit 1; }
cmake --build "$B" -j"$(nproc)" --target ntop ntop_hook fakecuda app_storm timeline_bench >/dev/null ||
	{ echo "ui_run: build failed" >&2; exit 1; }
B=$(cd "$B" && pwd)
{
	echo "# ntop UI benchmarks $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "machine: $(uname -n), $(nproc) CPUs, $(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -1), $(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" status --porcelain 2>/dev/null | grep -q . && echo ' (with local changes)')"
	echo "build: $B ($(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$B/CMakeCache.txt"), NTOP_SANITIZE=$(sed -n 's/^NTOP_SANITIZE:BOOL=//p' "$B/CMakeCache.txt"))"
	echo
	echo "## timeline_bench"
	"$B/bench/timeline_bench"
	echo
	echo "## ui_bench.py"
	python3 "$ROOT/bench/ui_bench.py" --build "$B" --runs 3 --cycles 12 --max
	echo
	echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$REPORT"
