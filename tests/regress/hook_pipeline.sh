#!/bin/bash
# The probed-launch pipeline (doc/hook.md, "Probed launches") with the fake
# driver: the launching thread neither allocates nor waits once the pool is
# warm, an app that waits between launches finds each launch's job made
# ahead, every queued result is written before the process ends (also when
# the collector is slow: the backlog shows in `results` lines), nothing is
# declined for results in flight, and result files hold the records written,
# not the maps, and a probed launch's line stands for the unprobed
# launches of its configuration after it. Plumbing only: the fake runs "kernels" at once on the CPU.
source "$(dirname "$0")/hook_lib.inc"
BURST=$B/tests/fakecuda/app_burst
[ -x "$BURST" ] || { echo "app_burst not built"; exit 77; }

run() { # NAME N [ENV=VAL...]
	local name=$1 n=$2
	shift 2
	mkdir -p "$TMP/$name"
	env NTOP_TRACE_DIR=$TMP/$name NTOP_PROBES=$S/probes/block_sched.toml NTOP_PROBE_LIMIT=100000 \
		NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR "$@" \
		"$BURST" "$PTX" "$n" > "$TMP/$name.out" 9> "$TMP/$name.log" 2> "$TMP/$name.err"
	[ $? = 0 ] || fail "$name: app failed: $(tail -3 "$TMP/$name.out" "$TMP/$name.err")"
	# a block map's folded fields (red.global.max) need its records cleared
	# before every launch: the fake says so when they were not
	grep -q "folded field was not zero" "$TMP/$name.err" && fail "$name: a block record was not cleared before a launch"
	return 0
}

# every_result NAME N: N result events and files, a final `results` line
# with nothing pending, no launch declined, no result lost
every_result() {
	local name=$1 n=$2 E=$TMP/$1.log
	local got files
	got=$(grep -c '^result ' "$E")
	files=$(find "$TMP/$name/results" -name '*.ntr' | wc -l)
	[ "$got" = "$n" ] || fail "$name: $got result events, want $n"
	[ "$files" = "$n" ] || fail "$name: $files result files, want $n"
	expect "$E" "^results .*at=final pending=0 written=$n failed=0 .* probed=$n cpu_pre_us=[0-9]+ cpu_post_us=[0-9]+ zero_waits=[0-9]+ staged=[0-9]+$" \
		"$name: final results line (with the probed launches' time on the app's thread)"
	[ "$(grep -c '^launch .*probed=1 .*cpu_ns=[0-9]' "$E")" = "$n" ] || fail "$name: probed launch lines without cpu_ns"
	grep -q '^probe .*status=declined' "$E" && fail "$name: declined: $(grep '^probe .*declined' "$E" | head -2)"
	grep -q 'lost' "$E" && fail "$name: something lost: $(grep lost "$E" | head -2)"
}

# 1. a warm pool: the steady burst allocates nothing; no burst waits
run burst 40
O=$TMP/burst.out
expect "$O" "^burst warm launches=40 allocs=[0-9]+ syncs=0 queries=[0-9]+ records=[0-9]+ timing=[0-9]+$" "warm burst: the launch path never waits"
expect "$O" "^burst steady launches=40 allocs=0 syncs=0 queries=[0-9]+ records=[0-9]+ timing=[0-9]+$" "steady burst: no allocation, no wait"
# buffers come back known zeroed: launches take them without asking the
# driver (before, every launch queried at least one buffer's event; a
# launch that outruns the collector still asks about the ones in flight)
q=$(sed -nE 's/^burst steady .* queries=([0-9]+) records=.*$/\1/p' "$O")
[ -n "$q" ] && [ "$q" -lt 40 ] || fail "steady burst: $q event queries for 40 launches, want fewer than 40"
every_result burst 80
# a probed launch whose map buffer came from a device slab allocated on its
# path says so (slab=1: a cuMemAlloc holds the app's other driver calls
# too). Built on the launch (NTOP_PROBE_ASYNC=0), the first probed launch
# finds the pool empty and no job made ahead; the steady burst allocates
# nothing, so the burst's slab lines are at most its warm allocations
run sync 5 NTOP_PROBE_ASYNC=0
every_result sync 10
first=$(grep -m1 '^launch .*probed=1' "$TMP/sync.log")
[[ $first == *" slab=1"* ]] || fail "sync: the first probed launch allocated its buffer's slab and does not say so: $first"
warm=$(sed -nE 's/^burst warm .* allocs=([0-9]+) .*$/\1/p' "$O")
slabs=$(grep -c '^launch .*probed=1.* slab=1' "$TMP/burst.log")
[ -n "$warm" ] && [ "$slabs" -le "$warm" ] || fail "burst: $slabs launches say slab=1, the warm burst allocated ${warm:-?}"
# probed launches are timed as others are (a kernel's first launch, then
# one per 10 ms): the rest queue only their end event, no start event (it
# cost the app ~2-3 us per launch on an H100)
rec=$(sed -nE 's/^burst steady .* records=([0-9]+) timing=.*$/\1/p' "$O")
[ -n "$rec" ] && [ "$rec" -ge 40 ] && [ "$rec" -lt 60 ] || fail "steady burst: $rec event records for 40 probed launches, want 40 + the few timed"
# an untimed launch's end event has no timing (cheaper to record: ~0.4 us
# against ~2 us on an H100); only a timed launch's two events have it
tim=$(sed -nE 's/^burst steady .* timing=([0-9]+)$/\1/p' "$O")
[ -n "$tim" ] && [ "$tim" = $((2 * (rec - 40))) ] || fail "steady burst: $tim records of events with timing, want 2 per timed launch ($((2 * (rec - 40))))"
untimed=$(grep -c '^result .* ns=0$' "$TMP/burst.log")
[ "$untimed" -gt 0 ] || fail "burst: every probed launch timed under the default sampling"
# an app that waits between launches: the job of each probed launch (plan,
# zeroed map buffer, end event) was made ahead: the first two's by the
# launch that built the copy (NTOP_PROBE_ASYNC=0: it waited for the build
# anyway), the later ones' by the stager thread while the launch before ran
LOOP=$B/tests/fakecuda/app_loop
# staged_run NAME [ENV=VAL...] APP [ARG...]: APP with every launch of its
# `scale` kernels probed by block_sched; sets final (its final `results`
# line), probed and staged from it
staged_run() {
	local name=$1
	shift
	mkdir -p "$TMP/$name"
	env NTOP_TRACE_DIR=$TMP/$name NTOP_PROBES=$S/probes/block_sched.toml NTOP_KERNELS=scale NTOP_PROBE_LIMIT=100000 \
		NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR "$@" \
		>"$TMP/$name.out" 9>"$TMP/$name.log" 2>&1 || fail "$name: app failed: $(tail -3 "$TMP/$name.out")"
	final=$(grep -E '^results .*at=final' "$TMP/$name.log" | head -1)
	probed=$(echo "$final" | sed -nE 's/.* probed=([0-9]+) .*/\1/p')
	staged=$(echo "$final" | sed -nE 's/.* staged=([0-9]+)$/\1/p')
}
paced() { # NAME [ENV=VAL...]
	local name=$1 final probed staged
	shift
	staged_run "$name" "$@" "$LOOP" "$PTX" "$TMP/stop-$name" 1
	[ -n "$probed" ] && [ "$probed" -ge 10 ] && [ "$staged" -ge $((probed - 1)) ] ||
		fail "$name: $staged of $probed probed launches took a job made ahead, want all (but a late one)"
	grep -q "^results .*at=final pending=0 written=$probed failed=0 " "$TMP/$name.log" ||
		fail "$name: not every probed launch's result was written: $final"
}
paced paced
# the same while the collector lags: each of its waits takes 10 ms (three
# a result), the app launches the probed kernel every ~11 ms; the jobs are
# not the collector's to make, so they are ready all the same
paced paced_lag APP_LOOP_SLEEP_MS=1 FAKECUDA_SYNC_DELAY_US=10000
# four kernels with 14 MiB jobs, launched 8 times each, one kernel after
# another 30 ms apart: the jobs made ahead for the kernels the app is done
# with give way at the 64 MiB cap, so the third and fourth get theirs made
# ahead too from their third launch (their first two find the cap full);
# kept, the first two kernels' jobs left them none (16 of 32)
staged_run kernels NTOP_PROBE_ASYNC=0 APP_KERNELS_GAP_MS=30 "$B/tests/fakecuda/app_kernels" "$PTX" 4 8 16384
[[ $final == *" written=32 "* ]] && [ -n "$staged" ] && [ "$staged" -ge 26 ] ||
	fail "kernels: ${staged:-?} of 32 probed launches of four large kernels took a job made ahead, want 26: $final"
# shapes alternating: a job made ahead of the other shape goes back unused,
# and every result still holds its own launch's warps (4 or 3 blocks of 2)
run shapes 20 APP_BURST_SHAPES=1
every_result shapes 40
n8=$(grep -c '^result .* records=8 ' "$TMP/shapes.log")
n6=$(grep -c '^result .* records=6 ' "$TMP/shapes.log")
[ "$n8" = 20 ] && [ "$n6" = 20 ] || fail "alternating shapes: $n8 results of 8 warps and $n6 of 6, want 20 each"
run timed 10 NTOP_TIME_LAUNCHES=all
expect "$TMP/timed.out" "^burst steady launches=10 allocs=0 syncs=0 queries=[0-9]+ records=20 timing=20$" "NTOP_TIME_LAUNCHES=all: a start and an end event per probed launch"
grep -q '^result .* ns=0$' "$TMP/timed.log" && fail "NTOP_TIME_LAUNCHES=all: a probed launch without its time"
every_result timed 20

# 2. records, not maps: block_sched saves one record per warp, so each file
# holds the counts and one slot per unit; a file is far smaller than the map
f=$(find "$TMP/burst/results" -name '*.ntr' | head -1)
out=$("$DUMP" "$f") || fail "ntr_dump $f"
echo "$out" | grep -Eq 'records=8( |$)' || fail "records: want 8 (4 blocks x 2 warps): $out"
disk=$(sed -nE 's/^result .* bytes=([0-9]+) disk=([0-9]+).*/\2/p' "$TMP/burst.log" | head -1)
[ -n "$disk" ] && [ "$disk" -gt 0 ] || fail "result events carry no disk= bytes"

# 2a. a block map (tests/gpu/block_span.toml, two fields every warp folds in
# with red.global.max): one record per block, and pooled buffers come back
# with their records cleared (run checks the fake's stderr)
run blockmap 20 NTOP_PROBES=$S/tests/gpu/block_span.toml FAKECUDA_MAP=block:40
every_result blockmap 40
f=$(find "$TMP/blockmap/results" -name '*.ntr' | head -1)
out=$("$DUMP" "$f") || fail "ntr_dump $f"
echo "$out" | grep -Eq 'units=4 records=4( |$)' || fail "block map: want 4 records (one per block): $out"

# 2b. dmat (64 slots of 16 bytes per thread): the fake saves one record per
# thread, so the file stores 1 slot of 64 (format v4; v6: dmat records name their site), every record kept
run dmat 5 NTOP_PROBES=$S/probes/dmat.toml FAKECUDA_MAP=thread:16
f=$(find "$TMP/dmat/results" -name '*.ntr' | head -1)
out=$("$DUMP" "$f") || fail "ntr_dump $f"
echo "$out" | grep -Eq 'records=256 dropped=0 .*version=6 warp=32 slots=1/64 ' || fail "dmat: want 256 records, 1 of 64 slots stored (v4): $out"
every_result dmat 10

# 2e. staging over NTOP_STAGING_PINNED_MAX is ordinary memory, filled in
# chunks through a pinned buffer of that size (a pinned buffer of hundreds of
# MB, one cuMemAllocHost, stalled an H100 app's launches 129 ms): with 512
# bytes and pinned allocations over 1 MiB refused by the fake, the records
# (4 KiB per launch) come back the same, 8 chunks at a time
run dmat_bounce 5 NTOP_PROBES=$S/probes/dmat.toml FAKECUDA_MAP=thread:16 NTOP_STAGING_PINNED_MAX=512 \
	FAKECUDA_HOST_ALLOC_MAX=1048576
every_result dmat_bounce 10
expect "$TMP/dmat_bounce.log" "^results .*at=final .* host_pageable=[1-9]" "bounce: results staged in ordinary memory"
expect "$TMP/dmat.log" "^results .*at=final .* host_pageable=0 " "default: small results in pinned staging"
# ordinary staging is kept for the next result (fresh pages cost the
# collector ~0.6 ms per MiB to fault in): fewer 4 KiB buffers than stagings
fin=$(grep "^results .*at=final" "$TMP/dmat_bounce.log")
staged=$(echo "$fin" | sed -nE 's/.* host_pageable=([0-9]+) .*/\1/p')
pooled=$(echo "$fin" | sed -nE 's/.* page_pooled=([0-9]+) .*/\1/p')
[ -n "$staged" ] && [ -n "$pooled" ] && [ "$pooled" -gt 0 ] && [ "$pooled" -lt $((staged * 4096)) ] ||
	fail "bounce: ordinary staging not reused ($fin)"
expect "$TMP/dmat.log" "^results .*at=final .* host_pins=[1-9] " "default: pinned staging registered"
sums() { for f in "$TMP/$1"/results/*.ntr; do "$DUMP" "$f" | sed -nE 's/.* (seq=[0-9]+) .*(fnv=[0-9a-f]+) .*/\1 \2/p'; done | sort; }
[ "$(sums dmat)" = "$(sums dmat_bounce)" ] && [ -n "$(sums dmat)" ] || fail "bounce: records differ from pinned staging"

# 2f. the app runs out of memory late: a device of 1 GiB, and after the
# bursts an allocation of all but 1 MiB of it, which fits only once the
# pool's map memory (slabs of several MiB) went back to the driver; the
# allocation succeeds on its second try, the results line counts the bytes
# given back and the hook's log says why
run lowmem 20 FAKECUDA_DEV_MEM=1073741824 APP_BURST_LATE_ALLOC=$((1073741824 - 1048576)) NTOP_LOG=$TMP/lowmem.hook.log
every_result lowmem 40
expect "$TMP/lowmem.out" "^late alloc $((1073741824 - 1048576)): ok$" "out of memory: the app's late allocation succeeded"
expect "$TMP/lowmem.log" "^results .*at=final .* dev_allocs=[1-9][0-9]* dev_pooled=0 dev_peak=[1-9][0-9]* dev_given=[1-9]" \
	"out of memory: the pool gave back all it had allocated"
expect "$TMP/lowmem.hook.log" "cuMemAlloc of $((1073741824 - 1048576)) bytes found the GPU out of memory: gave back [1-9][0-9]* bytes" \
	"out of memory: the hook's log says what it gave back"
# ... the same through the virtual memory API (cuMemCreate: PyTorch's
# expandable segments)
run lowmem_vmm 20 FAKECUDA_DEV_MEM=1073741824 APP_BURST_LATE_ALLOC=$((1073741824 - 1048576)) APP_BURST_LATE_VMM=1
every_result lowmem_vmm 40
expect "$TMP/lowmem_vmm.out" "^late alloc $((1073741824 - 1048576)): ok$" "out of memory, cuMemCreate: the allocation succeeded"
# ... and right after the bursts, while the collector (20 ms a device wait)
# still holds buffers of every slab: the allocation waits for them
run lowmem_now 20 FAKECUDA_DEV_MEM=1073741824 APP_BURST_LATE_ALLOC=$((1073741824 - 1048576)) APP_BURST_LATE_NOW=1 \
	FAKECUDA_SYNC_DELAY_US=20000 NTOP_LOG=$TMP/lowmem_now.hook.log
every_result lowmem_now 40
expect "$TMP/lowmem_now.out" "^late alloc $((1073741824 - 1048576)): ok$" "out of memory, results in flight: the allocation succeeded"
expect "$TMP/lowmem_now.hook.log" "found the GPU out of memory: gave back 0 bytes of idle map buffers" \
	"out of memory, results in flight: nothing was idle at first"
expect "$TMP/lowmem_now.hook.log" "out of memory: waited [0-9]+ ms for [1-9][0-9]* results in flight" \
	"out of memory, results in flight: the allocation waited for them"
# an app that searches for what it can allocate (3 tries of 1.2 GiB that
# fail, then 600 MiB) while the collector takes 1.5 s a device wait: the
# first failure waits for results in flight (5 s, then gives up), the
# others do not wait again
run lowmem_search 2 FAKECUDA_DEV_MEM=1073741824 APP_BURST_LATE_ALLOC=$((600 << 20)) APP_BURST_LATE_NOW=1 \
	APP_BURST_LATE_PROBE=3 FAKECUDA_SYNC_DELAY_US=1500000 NTOP_LOG=$TMP/lowmem_search.hook.log
every_result lowmem_search 4
expect "$TMP/lowmem_search.out" "^late alloc $((600 << 20)): ok$" "searching: the last allocation succeeded"
[ "$(grep -c 'out of memory: waited' "$TMP/lowmem_search.hook.log")" = 1 ] ||
	fail "searching: waits for results in flight: $(grep 'out of memory: waited' "$TMP/lowmem_search.hook.log")"
expect "$TMP/lowmem_now.log" "^results .*at=final .* dev_allocs=[1-9][0-9]* dev_pooled=0 dev_peak=[1-9][0-9]* dev_given=[1-9]" \
	"out of memory, results in flight: all given back once they came in"

# 2c. 64 KB of dynamic shared memory, allowed by the app's attribute on the
# original function: the probed copy gets the attribute too and is probed
run smem 5 APP_BURST_SMEM=65536
every_result smem 10

# 2d. a probed launch, then at once a global-mode capture on its stream,
# held while the hook drains (its device waits take 20 ms): the hook's
# threads run in relaxed capture mode, so the capture ends valid
run capture 5 APP_BURST_CAPTURE=1 FAKECUDA_SYNC_DELAY_US=20000 NTOP_TIME_LAUNCHES=all
expect "$TMP/capture.out" "^capture ok" "capture: the app's graph stayed valid"
expect "$TMP/capture.out" "app_burst: done, 0 failures" "capture: every call succeeded"

# 3. a slow collector (every device wait takes 20 ms): the app never waits
# for it, the backlog shows while it drains, every result is written at exit
# events that answer "not ready" a few times, as real ones do while the
# GPU works (the timing poller, the pool's look at buffers being cleared):
# every result still written, and no hook thread waited in
# cuEventSynchronize (a real driver spins there, slowing the app's launches)
run busy 25 FAKECUDA_QUERY_BUSY=3 FAKECUDA_SAY_EVENT_SYNC=1
every_result busy 50
grep -q "cuEventSynchronize called" "$TMP/busy.err" && fail "busy: the hook waited in cuEventSynchronize"
run slow 25 FAKECUDA_SYNC_DELAY_US=20000
O=$TMP/slow.out
expect "$O" "^burst steady launches=25 allocs=0 syncs=0 queries=[0-9]+ records=[0-9]+ timing=[0-9]+$" "slow collector: the app does not wait"
expect "$TMP/slow.log" "^results .*at=(run|exit) pending=[1-9]" "slow collector: backlog reported"
every_result slow 50

# 3b. a pool that keeps growing: 600 launches back to back while every
# device wait takes 2 ms, so the collector falls hundreds of jobs behind.
# A new slab holds as many buffers as the pool already has of that size,
# those of a slab another thread is allocating at the same time included
# (every cuMemAlloc holds the app's driver calls), so it allocates about
# log2 times: fill's block_sched maps take 64 KiB buffers, 64 to the first
# slab (4 MiB), then 64, 128, 256, 512; before, one slab of 64 per 4 MiB
# (and without counting the other thread's, the launch path and the
# stager sometimes made two slabs alike: 7 for 96 MiB)
# Every cuMemAlloc takes 3 ms here: probed launches queued while one of
# the hook's threads allocates (or registers staging) say beside=1; in the
# quiet burst of 1. above, few do
run grow 600 FAKECUDA_SYNC_DELAY_US=2000 FAKECUDA_ALLOC_DELAY_US=3000
every_result grow 1200
[ "$(grep -c '^launch .*probed=1.* beside=1' "$TMP/grow.log")" -ge 1 ] ||
	fail "grow: no probed launch says beside=1 while the hook's threads allocated slabs of 3 ms"
grep -q '^launch .*probed=0.* beside=' "$TMP/grow.log" && fail "grow: an unprobed launch line says beside"
n=$(grep -c '^launch .*probed=1' "$TMP/burst.log")
[ "$(grep -c '^launch .*beside=1' "$TMP/burst.log")" -lt $((n / 2)) ] ||
	fail "burst: most probed launches say beside=1 with nothing of the hook's held beside them"
read -r allocs pooled < <(sed -nE 's/^results .*at=final .* dev_allocs=([0-9]+) dev_pooled=([0-9]+) .*/\1 \2/p' "$TMP/grow.log")
first=$((4 << 20))
[ -n "$pooled" ] && [ "$pooled" -ge $((4 * first)) ] ||
	fail "grow: the pool holds ${pooled:-?} bytes, want at least four first slabs (the collector did not fall behind)"
most=1
for ((cap = first; cap < ${pooled:-0}; cap *= 2)); do most=$((most + 1)); done
[ -n "$allocs" ] && [ "$allocs" -le "$most" ] ||
	fail "grow: $allocs device allocations for $pooled pooled bytes, want at most $most (slabs doubling)"

# A probed launch's line carries its configuration: with every other
# launch of one configuration probed, the first among them, the unprobed
# launches emit no line (app_bench: `scale` 1000 + 20 times)
mkdir -p "$TMP/alt"
env NTOP_TRACE_DIR=$TMP/alt NTOP_PROBES=$S/probes/block_sched.toml NTOP_PROBE_LIMIT=100000 NTOP_PROBE_EVERY=2 \
	NTOP_PROBE_ASYNC=0 NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR \
	"$B/tests/fakecuda/app_bench" "$PTX" 20 >"$TMP/alt.out" 9>"$TMP/alt.log" 2>&1 ||
	fail "alt: app failed: $(tail -3 "$TMP/alt.out")"
probed=$(grep -c '^launch .*probed=1' "$TMP/alt.log")
unprobed=$(grep -c '^launch .*probed=0' "$TMP/alt.log")
[ "$probed" = 510 ] && [ "$unprobed" = 0 ] ||
	fail "alt: $probed probed and $unprobed unprobed launch lines, want 510 and none"

[ "$fails" = 0 ] && echo "hook_pipeline: ok"
exit $((fails > 0))
