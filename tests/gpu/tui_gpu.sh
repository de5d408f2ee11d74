#!/bin/bash
# The interactive UI on the real GPU, driven through tmux like a user would:
# `ntop -- fill` lists the kernel live, a probe picked with `p` brings
# block_sched results, the launches view and the SM timeline open, `e` exports
# a PNG, quitting kills the app; then a Triton app's kernels are listed.
# Usage (repo root, GPU machine): tests/gpu/tui_gpu.sh OUTDIR
# Writes OUTDIR/tui-*.txt (screens) and prints PASS/FAIL lines.
set -u
OUTD=${1:-gpu-out}
mkdir -p "$OUTD"
NTOP=${NTOP:-build-gpu/bin/ntop}
EX=${EX:-build-examples}
W=$(mktemp -d /tmp/ntop-tui.XXXXXX)
SOCK=$W/tmux.sock
tm() { tmux -S "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null' EXIT
fails=0
pass() { echo "PASS tui: $*"; }
fail() { echo "FAIL tui: $*"; fails=$((fails + 1)); }
screen() { tm capture-pane -p -t ui; }
wait_for() { # REGEX SECONDS
	local i n=$(( ${2:-10} * 10 ))
	for ((i = 0; i < n; i++)); do screen | grep -Eq -- "$1" && return 0; sleep 0.1; done
	return 1
}
keys() { tm send-keys -t ui "$@"; sleep 0.4; }
check() { # REGEX SECONDS WHAT
	if wait_for "$1" "$2"; then pass "$3"; else fail "$3: $(screen | grep -v '^ *$' | head -6 | tr '\n' '|')"; fi
}

export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8
tm new-session -d -s ui -x 120 -y 40 "$NTOP -o $W/live -- $EX/fill 20000; echo NTOP-EXIT=\$?; sleep 30"
check 'fill_half4' 20 "fill_half4 listed live"
check 'running' 5 "status line shows the app running"
screen >"$OUTD/tui-list.txt"
keys / f i l l Enter
keys p
check 'probes for' 5 "probe picker opens"
screen >"$OUTD/tui-picker.txt"
keys Enter
check 'probed [0-9]' 30 "a probed launch arrives after picking block_sched"
keys Enter
check 'No.block:[0-9]+ Running:' 15 "launches view shows the block_sched line"
screen >"$OUTD/tui-launches.txt"
keys Enter
check 'waves/SM' 15 "timeline view opens"
screen >"$OUTD/tui-timeline.txt"
keys e
sleep 1
png=$(ls "$W"/live/export/*.png 2>/dev/null | head -1)
if [ -n "$png" ]; then
	pass "e exported $(basename "$png")"
	cp "$png" "$OUTD/tui-timeline.png"
else
	fail "no PNG in $W/live/export"
fi
keys q q Escape
keys q
if wait_for 'still running' 5; then keys k; fi
check 'NTOP-EXIT=' 20 "ntop exits"
grep -q '^result ' "$W/live/events.log" && pass "results recorded live" || fail "no result events in the live trace"

tm kill-session -t ui 2>/dev/null
tm new-session -d -s ui -x 120 -y 40 "$NTOP -o $W/triton -- python3 examples/python/triton_add.py; echo NTOP-EXIT=\$?; sleep 30"
check 'add_kernel' 60 "Triton kernels listed live"
check 'exited with status 0' 60 "Triton app exit reported"
screen >"$OUTD/tui-triton.txt"
keys q
check 'NTOP-EXIT=0' 10 "ntop exits with the app's status"
echo "tui checks failed: $fails"
exit $((fails > 0))
