#!/bin/bash
# Attach, detach and re-attach on a GPU, in one device call (from the
# repository root, the Release build as build-gpu/, tmux on the machine):
#
#   tests/gpu/attach_gpu.sh
#
# examples/cuda/train_loop.cu runs plain, then under `ntop record` (headless,
# about 40 s); a viewer attached in tmux (`ntop attach`, the newest running
# session) picks block_sched on train_forward, opens its launches and the
# timeline, and quits (the job goes on); a second viewer attaches and
# finds the request; `ntop` alone shows the GPUs (NVML) with the job's
# process counted as ntop's. Checks: output identical to plain, probed
# launches written, nothing incomplete. $OUT: attach_gpu.txt and the
# screens (screen_*.txt).
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
NTOP=${NTOP:-$ROOT/build-gpu/bin/ntop}
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d)
TABLE=$OUT/attach_gpu.txt
export PATH=$PATH:/usr/local/cuda/bin XDG_STATE_HOME=$W/state XDG_CONFIG_HOME=$W/cfg
: >"$TABLE"
row() { printf '%-40s %s\n' "$1" "$2" | tee -a "$TABLE"; }
SOCK=$W/tmux.sock
tm() { tmux -S "$SOCK" "$@"; }
screen() { tm capture-pane -p -t ui; }
wait_screen() { # REGEX SECONDS
	for _ in $(seq $((${2:-10} * 10))); do screen | grep -Eq -- "$1" && return 0; sleep 0.1; done
	return 1
}
shot() { screen >"$OUT/screen_$1.txt"; }
{
	echo "attach_gpu $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null)"
	nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>/dev/null
} | tee -a "$TABLE"
tests/gpu/build_examples.sh "$W/ex" train_loop >"$W/build.log" 2>&1 || row build "FAIL: $(tail -3 "$W/build.log")"
"$W/ex/train_loop" 2500 >"$W/plain.out" 2>&1
"$NTOP" record -o "$W/job" -- "$W/ex/train_loop" 2500 >"$W/job.out" 2>&1 &
REC=$!
for _ in $(seq 100); do grep -q '^launch' "$W/job/events.log" 2>/dev/null && break; sleep 0.1; done

# viewer 1
tm new-session -d -s ui -x 100 -y 30 "env TERM=xterm-256color $NTOP attach; echo VIEWER-EXIT=\$?; sleep 60"
wait_screen 'train_forward' 15 || row "viewer 1" "FAIL: no kernels: $(screen | head -3)"
shot attach1
tm send-keys -t ui / t r a i n _ f o r w a r d Enter
sleep 0.5
tm send-keys -t ui p
wait_screen 'probes for' 5 || row "viewer 1: picker" "FAIL: $(screen | tail -2)"
tm send-keys -t ui Enter
wait_screen 'probed [0-9]' 20 && row "viewer 1: block_sched picked live" "probed: $(screen | grep -o 'probed [0-9]*' | head -1)" ||
	row "viewer 1: block_sched picked live" "FAIL: $(screen | grep -i train_forward | head -1)"
tm send-keys -t ui Enter
wait_screen 'No.block:' 10 || row "viewer 1: launches" "FAIL: $(screen | sed -n 5,9p | head -2)"
tm send-keys -t ui Enter
wait_screen 'waves/SM' 10 && row "viewer 1: timeline" "ok" || row "viewer 1: timeline" "FAIL: $(screen | head -3)"
shot timeline
tm send-keys -t ui q q q q
wait_screen 'VIEWER-EXIT=0' 10 && row "viewer 1: quit" "exit 0" || row "viewer 1: quit" "FAIL: $(screen | tail -2)"
kill -0 $REC 2>/dev/null && row "job after viewer 1 left" "running" || row "job after viewer 1 left" "FAIL: ended"
tm kill-server 2>/dev/null

# viewer 2, and the start screen
tm new-session -d -s ui -x 100 -y 30 "env TERM=xterm-256color $NTOP attach; echo VIEWER-EXIT=\$?; sleep 60"
wait_screen 'train_forward' 15
tm send-keys -t ui L
wait_screen 'probe request.? already' 5 && row "viewer 2: re-attached" "found the request" ||
	row "viewer 2: re-attached" "FAIL: $(screen | tail -4 | head -2)"
shot attach2
tm kill-server 2>/dev/null
tm new-session -d -s ui -x 100 -y 30 "env TERM=xterm-256color $NTOP; echo START-EXIT=\$?; sleep 60"
wait_screen '^Sessions' 10
sleep 1.5
shot start
row "start screen: GPUs" "$(screen | grep -Ec '^ +[0-9]+  NVIDIA') GPU rows; $(screen | grep -c 'ntop)') with ntop's processes"
tm kill-server 2>/dev/null

wait $REC
same=identical
diff <(grep -Ev '^(info|ntop):' "$W/plain.out") <(grep -Ev '^(info|ntop):' "$W/job.out") >/dev/null || same=DIFFERS
row "job output" "$same"
"$NTOP" report --json "$W/job" >"$W/job.json" 2>&1
row "job trace" "$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
n = sum(1 for p in t["processes"] for k in p["kernels"] for r in k["probed_launches"] if r["ok"])
print("%d probed launches written; incomplete %d" % (n, len(t["incomplete"])))' "$W/job.json" 2>&1 | tail -1)"
tar -C "$W" -czf "$OUT/attach_gpu-logs.tgz" --exclude='*.ntr' --exclude=ex . 2>/dev/null
rm -rf "$W"
echo "=== table"
cat "$TABLE"
