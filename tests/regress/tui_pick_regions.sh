#!/bin/bash
# Regions picked in the live UI from a kernel's own source lines, over the
# fake driver in a private tmux server: the probe picker's `r` on the
# regions probe asks the program for the kernel's PTX (a `source` line in
# the control file), lists its source lines with their text, instruction
# classes and loops, and a line range (Space .. Space) plus a class (s)
# become a copy of the probe in the session's probes/ that the control file
# requests; the program instruments fill with it. Refusals say why.
. "$(dirname "$0")/tui_app.inc"
mkdir -p "$TMP/src"

# fill with line information: lines 3-6 of $TMP/src/fill.cu, whose text
# the page shows beside each line
printf '%s\n' '// fill.cu' '__global__ void fill(int *out, int n) {' '  int i = blockIdx.x * blockDim.x + threadIdx.x;' \
	'  if (i >= n) return;' '  out[i] = i;' '  atomicAdd(&fill_calls, 1);' '}' > "$TMP/src/fill.cu"
awk -v f="$TMP/src/fill.cu" '
	/^\.address_size/ { print; print ".file\t1 \"" f "\""; next }
	/ld.param.u64 \t%rd1, \[fill_param_0\]/ { print "\t.loc\t1 3 0" }
	/setp.ge.s32/ { print "\t.loc\t1 4 0" }
	/cvta.to.global.u64 \t%rd2, %rd1;/ && !done { print "\t.loc\t1 5 0"; done = 1 }
	/atom.global.add/ { print "\t.loc\t1 6 0" }
	{ print }' "$PTX" > "$TMP/lines.ptx"
grep -c '\.loc' "$TMP/lines.ptx" | grep -qx 4 || { echo "FAIL: the test's PTX: $(grep -n loc "$TMP/lines.ptx")"; exit 1; }

fresh 100 30
tm send-keys -t "$UI" "clear; $NTOP -o $TMP/s -- $LOOP $TMP/lines.ptx $TMP/stop 60; echo NTOP-EXIT=\$?" Enter
wait_for ' fill *$' || fail "fill not listed: $(screen)"
keys / f i l l Enter
keys p
wait_for 'probes for fill' || fail "probe picker: $(screen)"
# the cursor starts on the first probe (checked); r there (block_sched) is
# refused; Space unchecks it, so the regions copy is asked for alone
keys r
wait_for 'block_sched records no regions' || fail "r on block_sched: $(screen | tail -2)"
keys Space
row=$(screen | grep -E '^ *. *\[.\] ' | grep -n '\] regions ' | cut -d: -f1)
[ -n "$row" ] || fail "the regions probe is not offered: $(screen)"
for _ in $(seq $((row - 1))); do keys j; done
keys r
wait_for 'regions for fill' || fail "r on regions: no regions page: $(screen)"
wait_for 'fill.cu:5 .* store .* out\[i\] = i;' || fail "source lines not listed: $(screen)"
screen | grep -q 'fill.cu:3 ' || fail "line 3 not listed"
grep -q '^source name=fill$' "$TMP/s/control" || fail "control file without the source request: $(cat "$TMP/s/control")"
ls "$TMP"/s/kernels/*/source.ptx >/dev/null 2>&1 || fail "no source.ptx in the trace"
# Enter with nothing chosen is refused; then lines 5..6 and the store class
keys Enter
wait_for 'no region chosen' || fail "Enter with no region: $(screen | tail -2)"
keys Home
for _ in 1 2; do keys j; done
keys Space j Space
wait_for 'regions: a L5_6=fill.cu:5-6' || fail "range 5-6: $(screen | grep -E 'regions:|added')"
keys s
wait_for 'b store=@store' || fail "class store: $(screen | grep regions:)"
keys Enter
wait_for 'requested regions \(regions picked\) on fill' || fail "apply: $(screen | tail -2)"
f=$(sed -nE 's/^probe name=fill probes=([^ ]*regions-[0-9]+-[0-9]+-[0-9]+\.toml) mode=next$/\1/p' "$TMP/s/control")
[ -n "$f" ] && [ -f "$f" ] || fail "control file: $(cat "$TMP/s/control")"
case $f in "$TMP"/s/probes/*) ;; *) fail "the copy is not in the session's probes/: $f" ;; esac
grep -qx 'regions = \["L5_6=fill.cu:5-6", "store=@store"\]' "$f" || fail "the copy's regions: $(grep regions "$f")"
for _ in $(seq 100); do grep -q '^instrument .*status=ok probes=regions' "$TMP/s/events.log" && break; sleep 0.1; done
grep -q '^instrument .*status=ok probes=regions' "$TMP/s/events.log" ||
	fail "fill not instrumented with the copy: $(grep -E '^instrument|^warn' "$TMP/s/events.log" | cut -c1-200)"
touch "$TMP/stop"
wait_for 'exited with status 0' 20 || fail "exit: $(screen | tail -2)"
keys q
wait_for 'NTOP-EXIT=0' || fail "ntop exit: $(screen | tail -3)"
tui_app_done tui_pick_regions
