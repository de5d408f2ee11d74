#!/bin/bash
# The hook's own CPU time while a process probes, on any machine, over the
# test double of the driver (no GPU: what is measured is the CPU the hook's
# threads take, the stager, the collector and the event writer looking for
# work, not a kernel's time). tests/fakecuda/app_loop launches `fill` every
# ~1 ms and `scale` every tenth iteration, forks once, and both processes
# probe `scale` with block_sched for SECONDS; the builds given take turns,
# REPS rounds. Prints, per build, the user + system seconds of each run
# (the app's process tree; the app itself does almost nothing) and the wall
# seconds, then their medians.
#
#   bench/hook_cpu.sh [--reps N] [--seconds S] NAME:BUILD_DIR...
#
# A build dir needs its test double (tests/fakecuda, built unless
# NTOP_TESTS=OFF). Example, two builds side by side:
#   bench/hook_cpu.sh --reps 3 before:build-before head:build-gpu
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
REPS=2
SECONDS_RUN=3
usage() { echo "usage: bench/hook_cpu.sh [--reps N] [--seconds S] NAME:BUILD_DIR..." >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--reps) REPS=${2:-}; [[ $REPS =~ ^[1-9][0-9]*$ ]] || usage; shift ;;
	--seconds) SECONDS_RUN=${2:-}; [[ $SECONDS_RUN =~ ^[1-9][0-9]*$ ]] || usage; shift ;;
	-*) usage ;;
	*) break ;;
	esac
	shift
done
[ $# -gt 0 ] || usage
for spec in "$@"; do
	dir=${spec#*:}
	[ "$spec" != "$dir" ] || usage
	[[ $dir == /* ]] || dir=$ROOT/$dir
	for f in tests/fakecuda/app_loop tests/fakecuda/driver/libcuda.so.1 lib/ntop/libcuda.so.1; do
		[ -e "$dir/$f" ] || { echo "hook_cpu: $dir has no $f (a build with its tests)" >&2; exit 2; }
	done
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# one NAME DIR: one run; prints "cpu_s wall_s" (the children's rusage, so
# the forked app_loop child counts too: its parent waits for it)
one() {
	local name=$1 dir=$2 t=$TMP/$1.$RANDOM
	[[ $dir == /* ]] || dir=$ROOT/$dir
	mkdir -p "$t"
	env NTOP_PROBES="$ROOT/probes/block_sched.toml" NTOP_KERNELS=scale NTOP_PROBE_LIMIT=1000000 \
		NTOP_TRACE_DIR="$t" NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA="$dir/tests/fakecuda/driver/libcuda.so.1" \
		LD_LIBRARY_PATH="$dir/lib/ntop" APP_LOOP_SLEEP_MS=1 \
		python3 -c '
import resource, subprocess, sys, time
t0 = time.monotonic()
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(9,))
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{ru.ru_utime + ru.ru_stime:.2f} {time.monotonic() - t0:.2f} {rc}")
' "$dir/tests/fakecuda/app_loop" "$ROOT/tests/fakecuda/kernels.ptx" "$t/stop" "$SECONDS_RUN" 9>"$t/events.log"
	grep -q '^result ' "$t/events.log" || echo "hook_cpu: $name wrote no result" >&2
	rm -rf "$t"
}

for rep in $(seq "$REPS"); do
	for spec in "$@"; do
		one "${spec%%:*}" "${spec#*:}" >"$TMP/one"
		read -r cpu wall rc <"$TMP/one"
		[ "$rc" = 0 ] || echo "hook_cpu: ${spec%%:*} round $rep: app_loop exited $rc" >&2
		echo "${spec%%:*} $cpu $wall" >>"$TMP/runs"
	done
done
echo "| build | CPU s (user + system), each run | median | wall s, median |"
echo "| --- | --- | ---: | ---: |"
for spec in "$@"; do
	awk -v n="${spec%%:*}" '$1 == n { c[++k] = $2; w[k] = $3; s = s (k > 1 ? ", " : "") $2 }
		function med(a, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
		END { printf "| %s | %s | %.2f | %.2f |\n", n, s, med(c, k), med(w, k) }' "$TMP/runs"
done
