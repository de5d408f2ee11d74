#!/bin/bash
# Several GPUs on one machine, checked on a two-GPU machine in one device
# call (run from the repository root with the Release build as build-gpu/):
#
#   tests/gpu/multi_gpu.sh
#
# Programs: examples/cuda/multi_gpu.cu (one process, cudaSetDevice, 4096
# blocks on GPU 0 and 8192 on GPU 1), tests/gpu/multi_gpu/torch_two_gpus.py
# (PyTorch on cuda:0 and cuda:1), tests/gpu/multi_gpu/ddp_train.py under
# torchrun --nproc_per_node=2 (DDP, NCCL). Each plain, then under ntop
# record, -p block_sched and -p dmat: output as plain, every launch on the
# right GPU and nothing incomplete (tests/gpu/multi_gpu/check_devices.py),
# Perfetto with a process per GPU. CuPy with a warm on-disk kernel cache
# (tests/gpu/multi_gpu/cupy_warm.py run plain first): every kernel probed
# under -p block_sched, and what CUPY_CACHE_IN_MEMORY=0 does instead. The
# UI's kernel list of the two-GPU app at 80x24 ($OUT/ui_multi_gpu.txt).
#
# $OUT (default ./gpu-out): multi_gpu.txt (a line per check), the reports;
# logs in multi_gpu-logs.tgz.
set -u
# its checks read kernels' first launches: probed copies built on the launch (record --wait-build)
export NTOP_PROBE_ASYNC=0
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
NTOP=${NTOP:-$ROOT/build-gpu/bin/ntop}
export NTOP
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d)
TABLE=$OUT/multi_gpu.txt
export PATH=$PATH:/usr/local/cuda/bin
: >"$TABLE"
row() { printf '%-46s %s\n' "$1" "$2" | tee -a "$TABLE"; }
ours() { grep -E '^(multi_gpu|torch_two_gpus|ddp_train|cupy_warm):' "$1"; }
CHECK="python3 tests/gpu/multi_gpu/check_devices.py"

{
	echo "multi_gpu $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null)"
	nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>/dev/null
} | tee -a "$TABLE"
tests/gpu/build_examples.sh "$W/ex" multi_gpu >"$W/build.log" 2>&1 || row build "FAIL: $(tail -3 "$W/build.log")"

# app KIND NAME CMD...: plain, then each mode
app() {
	local kind=$1 name=$2
	shift 2
	"$@" >"$W/$name.plain" 2>&1
	[ -n "$(ours "$W/$name.plain")" ] || { row "$name: plain" "FAIL: $(tail -2 "$W/$name.plain")"; return; }
	local m args
	for m in record block_sched dmat; do
		case $m in
		record) args=() ;;
		block_sched) args=(-p block_sched --limit 5) ;;
		dmat) args=(-p dmat --limit 2) ;;
		esac
		"$NTOP" record "${args[@]}" -o "$W/$name-$m" -- "$@" >"$W/$name-$m.out" 2>&1
		local same=identical
		[ "$(ours "$W/$name.plain")" = "$(ours "$W/$name-$m.out")" ] || same=DIFFERS
		local pf=()
		if [ $m = block_sched ]; then
			"$NTOP" export "$W/$name-$m" --format perfetto -o "$W/$name-$m.json" >/dev/null 2>&1
			pf=("$W/$name-$m.json")
		fi
		"$NTOP" report "$W/$name-$m" >"$W/$name-$m.report.txt" 2>&1
		row "$name $m: output $same" "$($CHECK "$kind" "$W/$name-$m" "${pf[@]}" 2>&1 | tail -1)"
	done
}

app multi_gpu multi_gpu "$W/ex/multi_gpu"
app torch torch_two_gpus python3 tests/gpu/multi_gpu/torch_two_gpus.py
app ddp ddp torchrun --standalone --nproc_per_node=2 tests/gpu/multi_gpu/ddp_train.py

# CuPy with a warm disk cache
export CUPY_CACHE_DIR=$W/cupy-cache
python3 tests/gpu/multi_gpu/cupy_warm.py >"$W/cupy.plain" 2>&1
python3 tests/gpu/multi_gpu/cupy_warm.py >"$W/cupy.plain2" 2>&1
cached=$(find "$CUPY_CACHE_DIR" -type f | wc -l)
probed() { # TRACE: "P of K warm_ kernels probed"
	"$NTOP" report --json "$1" | python3 -c '
import json, sys
ks = [k for p in json.load(sys.stdin)["processes"] for k in p["kernels"] if "warm_" in (k["name"] or "")]
print("%d of %d warm_ kernels probed; %s" % (sum(1 for k in ks if k["probed_launches"]), len(ks),
      "; ".join(sorted(set((k.get("ptx_reason") or "PTX")[:60] for k in ks)))))'
}
"$NTOP" record -p block_sched --limit 2 -o "$W/cupy" -- python3 tests/gpu/multi_gpu/cupy_warm.py >"$W/cupy.out" 2>&1
same=identical
[ "$(ours "$W/cupy.plain")" = "$(ours "$W/cupy.out")" ] || same=DIFFERS
row "cupy warm cache ($cached files): output $same" "$(probed "$W/cupy")"
CUPY_CACHE_IN_MEMORY=0 "$NTOP" record -p block_sched --limit 2 -o "$W/cupy0" -- python3 tests/gpu/multi_gpu/cupy_warm.py \
	>"$W/cupy0.out" 2>&1
row "cupy, CUPY_CACHE_IN_MEMORY=0 by the user" "$(probed "$W/cupy0")"

# a two-rank job recorded per rank (torchrun runs ntop record), read as one
torchrun --standalone --nproc_per_node=2 --no-python "$NTOP" record -p block_sched --limit 2 \
	-o "$W/job-%h-r%r" -- python3 tests/gpu/multi_gpu/ddp_train.py >"$W/job.out" 2>&1
same=identical
[ "$(ours "$W/ddp.plain")" = "$(ours "$W/job.out")" ] || same=DIFFERS
"$NTOP" report "$W"/job-*-r0 "$W"/job-*-r1 >"$W/job.report.txt" 2>&1
"$NTOP" report --json "$W"/job-*-r0 "$W"/job-*-r1 >"$W/job.json" 2>&1
row "torchrun + ntop record per rank: output $same" "$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
ranks = sorted(x["rank"] for x in t["traces"])
devs = {}
for p in t["processes"]:
    for k in p["kernels"]:
        for d in k.get("devices", []):
            devs.setdefault(p["rank"], set()).add(d["ordinal"])
print("traces of ranks %s; GPUs by rank %s; incomplete %d" % (ranks, {r: sorted(v) for r, v in sorted(devs.items())},
      len(t["incomplete"])))' "$W/job.json" 2>&1 | tail -1)"

# the UI at 80x24: the two-GPU app's kernel list, the DDP run's (grouped
# over the ranks) and the per-rank job's
shot() { # NAME DIR...
	local name=$1
	shift
	tmux -S "$W/tmux.sock" new-session -d -x 80 -y 24 "env TERM=xterm-256color $NTOP view $*; sleep 5"
	sleep 2
	tmux -S "$W/tmux.sock" capture-pane -p >"$OUT/ui_$name.txt"
	tmux -S "$W/tmux.sock" kill-server 2>/dev/null
	row "UI at 80x24: $name" "$(head -1 "$OUT/ui_$name.txt" | sed 's/  */ /g' | cut -c1-70)"
}
if command -v tmux >/dev/null; then
	shot multi_gpu "$W/multi_gpu-block_sched"
	shot ddp "$W/ddp-block_sched"
	shot job "$W"/job-*-r0 "$W"/job-*-r1
else
	row "UI at 80x24" "skipped: no tmux"
fi
tar -C "$W" -czf "$OUT/multi_gpu-logs.tgz" --exclude='*.ntr' --exclude='cupy-cache' --exclude='ex' . 2>/dev/null
rm -rf "$W"
echo "=== table"
cat "$TABLE"
