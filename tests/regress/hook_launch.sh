#!/bin/bash
# The hook inside the fakecuda test app: every kernel and launch entry point
# listed, capture launches declined with a reason, probed launches produce
# result files with plausible records, the app's output and exit code are
# unchanged, a fork child says hello with its own pid. Plumbing only: the
# fake driver runs no GPU code (doc/hook.md).
source "$(dirname "$0")/hook_lib.inc"

LD_LIBRARY_PATH=$(dirname "$FAKE") "$APP" "$PTX" 3 > "$TMP/base.out"
base_rc=$?
mkdir -p "$TMP/trace"
NTOP_TRACE_DIR=$TMP/trace NTOP_PROBES=$S/probes/block_sched.toml NTOP_PROBE_LIMIT=20 NTOP_EVENT_FD=9 \
	NTOP_REAL_LIBCUDA=$FAKE NTOP_LOG=$TMP/hook.log LD_LIBRARY_PATH=$HOOKDIR NTOP_STAGING_PINNED_MAX=16M \
	"$APP" "$PTX" 3 > "$TMP/hook.out" 9> "$TMP/events.log"
rc=$?
[ "$base_rc" = 3 ] || fail "baseline app exited $base_rc"
[ "$rc" = "$base_rc" ] || fail "exit code $rc with the hook, $base_rc without"
cmp -s "$TMP/base.out" "$TMP/hook.out" || { fail "app output changed"; diff "$TMP/base.out" "$TMP/hook.out"; }
grep -q "export table says 42, 0 failures" "$TMP/hook.out" || fail "app reported failures: $(cat "$TMP/hook.out")"

E=$TMP/events.log
expect "$E" "^hello .*driver=$FAKE" "hello names the fake driver"
# a number the hook cannot read keeps its default and says so
expect "$E" "^warn .*msg=NTOP_STAGING_PINNED_MAX=16M%20is%20not%20a%20whole%20number%20\(bytes%20or%20a%20count\),%204194304%20used" \
	"an unreadable number in the environment is warned about"
expect "$E" "^device .*cc=90 sms=4" "device line"
expect "$E" "^module .*api=cuModuleLoadData kind=ptx" "PTX module"
expect "$E" "^module .*api=cuLibraryLoadData" "library load"
expect "$E" "^module .*kind=cubin .*source=numba" "cuLink cubin tied to its PTX"
expect "$E" "^kernel .*ptx=1 name=fill$" "kernel fill"
expect "$E" "^kernel .*ptx=1 name=scale$" "kernel scale"
for api in cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx cuLaunchKernelEx_ptsz \
	cuLaunchCooperativeKernel cuLaunchCooperativeKernel_ptsz; do
	expect "$E" "^launch .* api=$api .*probed=1" "probed launch through $api"
done
expect "$E" "^probe .*status=declined reason=stream%20capture%20active" "capture launch declined"
expect "$E" "^launch .*capture=1 probed=0" "capture launch listed"
expect "$E" "^graph .*api=capture" "captured kernel listed as graph node"
expect "$E" "^graph .*api=cuGraphAddKernelNode grid=11,1,1" "explicit graph node"
expect "$E" "^graph .*api=cuGraphLaunch .*launches=2" "graph replays counted"
expect "$E" "^instrument .*status=ok probes=block_sched regs_orig=[0-9]+ regs_probed=[0-9]+" "instrument line"
expect "$E" "^stats .*launches=" "stats line"
# device allocations named by order and size; the free pairs by base
expect "$E" "^alloc .* n=1 base=0x[0-9a-f]+ bytes=4096 api=cuMemAlloc$" "alloc line"
abase=$(grep -m1 '^alloc ' "$E" | sed -E 's/.* base=(0x[0-9a-f]+).*/\1/')
expect "$E" "^free .* base=$abase api=cuMemFree$" "free line for the same base"
expect "$E" "^exit .*launches=" "exit line"
[ "$(grep -c '^hello' "$E")" = 2 ] || fail "expected hello from parent and fork child"
[ "$(grep '^hello' "$E" | sed -E 's/.* pid=([0-9]+).*/\1/' | sort -u | wc -l)" = 2 ] || fail "child hello has the parent's pid"
# the child inherits the parent's kernels, not its event stream: the kernel it
# launches is announced again under the child's pid, before its launch line
child=$(grep '^hello' "$E" | grep -v " pid=$(grep -m1 '^hello' "$E" | sed -E 's/.* pid=([0-9]+).*/\1/') " | sed -E 's/.* pid=([0-9]+).*/\1/')
grep -q "^kernel .* pid=$child .*name=fill" "$E" || fail "fork child $child: no kernel line for the kernel it launches"
grep -q "^launch .* pid=$child " "$E" || fail "fork child $child: no launch line"
# At most NTOP_PROBE_LIMIT probed launches per kernel, even from 4 threads.
for kid in $(grep '^kernel' "$E" | sed -E 's/.* kid=([0-9]+) .*/\1/'); do
	n=$(grep -E "^launch .* pid=$(grep -m1 '^hello' "$E" | sed -E 's/.* pid=([0-9]+).*/\1/') kid=$kid .*probed=1" "$E" | wc -l)
	[ "$n" -le 20 ] || fail "kernel $kid probed $n times, limit 20"
done

nres=$(grep -c '^result ' "$E")
nfiles=$(ls "$TMP/trace/results" 2>/dev/null | wc -l)
[ "$nres" -ge 10 ] || fail "only $nres result lines"
[ "$nres" = "$nfiles" ] || fail "$nres result lines but $nfiles files"
for f in "$TMP"/trace/results/*.ntr; do
	out=$("$DUMP" "$f") || { fail "unreadable result $f"; continue; }
	echo "$out" | grep -Eq "maps=1 units=([0-9]+) records=\1 dropped=0 smid_max=[0-3] sms=4" ||
		fail "implausible result: $out"
done
# Grid 5 x 64 threads launched with `extra`: 10 warps recorded.
seq5=$(grep -E '^launch .*api=cuLaunchKernel_ptsz grid=5,1,1 .*probed=1' "$E" | sed -E 's/.* seq=([0-9]+) .*/\1/')
[ -n "$seq5" ] && "$DUMP" "$TMP"/trace/results/*-"$seq5".ntr | grep -q "units=10 records=10" ||
	fail "extra-packed probed launch has no 10-warp result"
grep -q '^[a-z]* t=[0-9]* pid=[0-9]*' "$E" || fail "lines lack t= and pid="
awk 'length($0) > 4096 { exit 1 }' "$E" || fail "an event line exceeds 4096 bytes"
[ $fails = 0 ] || { echo "--- events"; cut -c1-200 "$E"; echo "--- log"; cat "$TMP/hook.log"; }
exit $((fails != 0))
