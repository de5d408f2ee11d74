#!/bin/bash
# The interactive UI on the real GPU, driven through tmux like a user would:
# `ntop -- fill` lists the kernel live, a probe picked with `p` brings
# block_sched results, the launches view and the SM timeline open, `e` exports
# a PNG, quitting kills the app; then a Triton app's kernels are listed;
# then regions picked from train_forward's source lines with its copy built
# off the app's threads (the default), its output as plain.
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
# Regions picked from train_forward's own source lines (-lineinfo), its
# copy built off the app's threads (the default); the app's result
# compared with a plain run's.
tm kill-session -t ui 2>/dev/null
plain=$("$EX/train_loop" 800 | grep checksum)
tm new-session -d -s ui -x 120 -y 40 "$NTOP -o $W/regions -- $EX/train_loop 800; echo NTOP-EXIT=\$?; sleep 30"
check 'train_forward' 30 "train_forward listed live"
keys / t r a i n _ f o r w a r d Enter
keys p
check 'probes for' 5 "probe picker opens on train_forward"
row=$(screen | grep -E '\[.\] ' | grep -n '\] regions ' | cut -d: -f1)
keys Space # block_sched off: the regions copy alone
for ((i = 1; i < ${row:-1}; i++)); do keys j; done
keys r
check 'train_loop.cu:[0-9]+ ' 30 "the regions page lists train_forward's source lines"
screen >"$OUTD/tui-regions-page.txt"
first=$(screen | grep -n 'LINE .*CODE .*CLASSES' | cut -d: -f1)
loop=$(screen | grep -nE 'train_loop.cu:[0-9]+ .* loop ' | head -1 | cut -d: -f1)
keys l # load=@load
if [ -n "$first" ] && [ -n "$loop" ]; then
	for ((i = first + 1; i < loop; i++)); do keys j; done
	keys o # the loop's iterations
	check 'regions: a load=@load b iter[0-9]+=@loop:train_loop.cu:[0-9]+' 5 "a class and a loop picked"
else
	fail "no line in a loop listed"
fi
keys Enter
check 'requested regions \(regions picked\) on train_forward' 5 "the regions copy requested"
check 'probed [0-9]' 30 "a probed launch arrives with the regions picked"
keys Enter
check 'ran unprobed while the probed copy was built' 10 "the launches view says what ran unprobed"
screen >"$OUTD/tui-regions-launches.txt"
keys Enter
check '^regions: SM' 15 "the warps view opens"
screen >"$OUTD/tui-regions-warps.txt"
keys q q Escape
check 'exited with status 0' 60 "train_loop exit reported"
keys q
check 'NTOP-EXIT=0' 10 "ntop exits with the app's status"
E=$W/regions/events.log
grep -q '^source .*path=kernels/' "$E" && pass "the kernel's PTX saved for the picker" || fail "no source event"
grep -q '^probe .*status=deferred' "$E" && pass "launches deferred while the copy was built" || fail "no deferred line"
cpu=$(grep -E '^launch .*probed=1' "$E" | head -1 | sed -nE 's/.* cpu_ns=([0-9]+).*/\1/p')
echo "first probed launch of train_forward: cpu_ns=${cpu:-?} (async build)"
[ -n "$cpu" ] && [ "$cpu" -le 1000000 ] && pass "first probed launch held the app's thread <= 1 ms" ||
	fail "first probed launch held the app's thread ${cpu:-?} ns"
got=$(grep checksum "$W/regions/app.log" 2>/dev/null)
[ -n "$plain" ] && [ "$got" = "$plain" ] && pass "train_loop's checksum as plain" || fail "checksum: '$got' vs '$plain'"
echo "tui checks failed: $fails"
exit $((fails > 0))
