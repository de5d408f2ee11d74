#!/bin/bash
# The app-survival checks of issue 10 on the GPU machine, in one device call:
# each program runs plain, under `ntop record`, `-p block_sched` and
# `-p dmat`; its exit status and output (lines not starting with "info:")
# must equal the plain run's, and the trace must list its processes. Prints
# a table last; writes $OUT/apps_run.txt. Programs: tests/gpu/apps/*.cu (built
# here with nvcc), tests/gpu/apps/mp_spawn.py (CuPy, spawn + close_fds), and
# the examples launch_modes (graphs, capture, Ex, cooperative) and
# threads_fork (threads and fork).
#
#   tests/gpu/apps_run.sh [LIST]
#
# LIST (optional): programs nobody here wrote, one per line "NAME|DIR|CMD"
# (run in DIR; nothing is built): their numbers are masked before outputs
# are compared (they print timings), and only they are run.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT" build-examples/apps
NTOP=${NTOP:-$ROOT/build-gpu/bin/ntop}
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
W=$(mktemp -d /tmp/ntop-apps.XXXXXX)
LIST=${1:-}
[ -n "$LIST" ] && LIST=$(cd "$(dirname "$LIST")" && pwd)/$(basename "$LIST")
NTOP=$(cd "$(dirname "$NTOP")" && pwd)/$(basename "$NTOP")
[ -z "$LIST" ] && for f in tests/gpu/apps/*.cu; do
	n=$(basename "$f" .cu)
	nvcc -O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
		-o "build-examples/apps/$n" "$f" || echo "FAILED to build $n"
done
[ -z "$LIST" ] && tests/gpu/build_examples.sh build-examples launch_modes threads_fork >/dev/null 2>&1
progs=("capture_after_probe:build-examples/apps/capture_after_probe"
	"ctx_cycle:build-examples/apps/ctx_cycle"
	"dyn_smem_big:build-examples/apps/dyn_smem_big"
	"mp_spawn:python3 tests/gpu/apps/mp_spawn.py"
	"launch_modes:build-examples/launch_modes"
	"threads_fork:build-examples/threads_fork")
MASK=0
if [ -n "$LIST" ]; then
	progs=()
	while IFS= read -r line; do
		[ -n "$line" ] && [ "${line#\#}" = "$line" ] && progs+=("$line")
	done <"$LIST"
	MASK=1
fi
# cmp_form FILE: the lines compared (timings masked for third-party output)
cmp_form() {
	if [ "$MASK" = 1 ]; then
		grep -v '^info:' "$1" | sed -E 's/[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/N/g'
	else
		grep -v '^info:' "$1"
	fi
}
TABLE=$OUT/apps_run.txt # written as it goes: a run cut short keeps its rows
printf '| program | mode | exit | output = plain | processes | launches | probed | results | declined |\n|---|---|---|---|---|---|---|---|---|\n' >"$TABLE"
for p in "${progs[@]}"; do
	dir=$ROOT
	if [ "$MASK" = 1 ]; then
		name=${p%%|*} rest=${p#*|}
		dir=${rest%%|*} cmd=${rest#*|}
		case $dir in /*) ;; *) dir=$ROOT/$dir ;; esac
	else
		name=${p%%:*} cmd=${p#*:}
	fi
	cd "$dir" || continue
	# shellcheck disable=SC2086
	timeout 120 $cmd >"$W/$name.plain" 2>"$W/$name.plain.err"
	prc=$?
	cmp_form "$W/$name.plain" >"$W/$name.plain.cmp"
	for mode in record block_sched dmat; do
		args=()
		[ "$mode" != record ] && args=(-p "$mode" --limit "${APPS_LIMIT:-1000}")
		# shellcheck disable=SC2086
		timeout "${APPS_STEP_S:-300}" "$NTOP" record -o "$W/$name.$mode" "${args[@]}" -- $cmd >"$W/$name.$mode.out" 2>"$W/$name.$mode.err"
		rc=$?
		cmp_form "$W/$name.$mode.out" >"$W/$name.$mode.cmp"
		same=no
		cmp -s "$W/$name.plain.cmp" "$W/$name.$mode.cmp" && same=yes
		E=$W/$name.$mode/events.log
		procs=$(grep -c '^hello ' "$E" 2>/dev/null)
		launches=$(grep -h '^stats ' "$E" 2>/dev/null | awk '{for(i=1;i<=NF;i++) if($i ~ /^(pid|kid|launches)=/) {split($i,a,"="); v[a[1]]=a[2]} k=v["pid"]":"v["kid"]; if (v["launches"]>m[k]) m[k]=v["launches"]} END {s=0; for (k in m) s+=m[k]; print s+0}')
		probed=$(grep -c '^launch .*probed=1' "$E" 2>/dev/null)
		results=$(grep -c '^result ' "$E" 2>/dev/null)
		declined=$(grep -h '^stats .*declined=' "$E" 2>/dev/null | sed -E 's/.* pid=([0-9]+) kid=([0-9]+) .*declined=([0-9]+).*/\1:\2 \3/' | sort -k1,1 -k2n | awk '{m[$1]=$2} END {s=0; for (k in m) s+=m[k]; print s+0}')
		printf '| %s | %s | %s (plain %s) | %s | %s | %s | %s | %s | %s |\n' "$name" "$mode" "$rc" "$prc" "$same" \
			"$procs" "$launches" "$probed" "$results" "$declined" >>"$TABLE"
		[ "$same" = no ] && { echo "== $name $mode output differs:"; diff "$W/$name.plain.cmp" "$W/$name.$mode.cmp" | head -5; tail -3 "$W/$name.$mode.err"; }
		grep -h '^probe .*declined\|^warn ' "$E" 2>/dev/null | cut -c1-200 | sort -u | head -4
	done
	cd "$ROOT" || exit 2
done
cat "$TABLE"
tar -czf "$OUT/apps-logs.tgz" -C "$W" --exclude='*.ntr' . 2>/dev/null
