#!/bin/bash
# Probed copies built off the application's threads (the default: unset
# NTOP_PROBE_ASYNC), over the fake driver with a JIT that takes 200 ms (FAKECUDA_JIT_DELAY_MS):
# app_loop's launches of fill run unprobed while the copy is built (one
# `probe status=deferred` line, a `deferred` count in stats), the first
# probed launch comes after the copy's `instrument` line and its hook time
# on the app's thread (cpu_ns) holds no JIT (the builder also made that
# launch's job: plan and map buffer), deferred launches do not count
# against the limit, and the app's output is unchanged. The same run with
# NTOP_PROBE_ASYNC=0 (record --wait-build) builds on the launch: its first
# probed launch waits for the JIT. Plumbing only: the fake driver runs no GPU code.
source "$(dirname "$0")/hook_lib.inc"
LOOP=$B/tests/fakecuda/app_loop
[ -x "$LOOP" ] || { echo "app_loop not built"; exit 77; }
BS=$S/probes/block_sched.toml

# run NAME ENV...: app_loop for 2 s with block_sched on every launch (at most 5)
run() {
	local name=$1
	shift
	env "$@" NTOP_LOG=$TMP/$name.hook.log NTOP_PROBES=$BS NTOP_PROBE_LIMIT=5 NTOP_TRACE_DIR=$TMP/$name NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE \
		FAKECUDA_JIT_DELAY_MS=${JIT_MS:-200} LD_LIBRARY_PATH=$HOOKDIR timeout -s KILL 60 "$LOOP" "$PTX" "$TMP/stop-$name" 2 \
		>"$TMP/$name.out" 2>&1 9>"$TMP/$name.log"
	echo $? >"$TMP/$name.rc"
}
mkdir -p "$TMP/async" "$TMP/sync"
# timing sampled one launch a minute: only a kernel's first launch and a
# probed copy's first launch are timed
run async -u NTOP_PROBE_ASYNC NTOP_ASSEMBLER=jit NTOP_TIME_GAP_MS=60000 APP_LOOP_THREADS=1
run sync NTOP_PROBE_ASYNC=0 NTOP_ASSEMBLER=jit NTOP_TIME_GAP_MS=60000 APP_LOOP_THREADS=1
# no_thread_started NAME P K NTH: the NTH probed launch of fill in pid P
# left the process's thread count as it found it (app_loop's `threads`
# lines; its first launch of fill is i=-1)
no_thread_started() {
	local line i before after
	line=$(grep -E "^launch .* pid=$2 kid=$3 " "$TMP/$1.log" | grep -n ' probed=1' | sed -n "$4p" | cut -d: -f1)
	i=$((${line:-0} - 2))
	before=$(sed -nE "s/^threads pid=$2 i=$i before=([0-9]+) after=[0-9]+$/\1/p" "$TMP/$1.out")
	after=$(sed -nE "s/^threads pid=$2 i=$i before=[0-9]+ after=([0-9]+)$/\1/p" "$TMP/$1.out")
	[ -n "$line" ] && [ -n "$before" ] && [ "$before" = "$after" ] ||
		fail "$1: probed launch $4 of fill (i=$i) started a thread on the app's thread: ${before:-?} -> ${after:-?}"
}

for name in async sync; do
	E=$TMP/$name.log
	[ "$(cat "$TMP/$name.rc")" = 0 ] && grep -q '^app_loop: done, 0 failures$' "$TMP/$name.out" ||
		fail "$name: app: $(cat "$TMP/$name.out")"
	P=$(grep -E '^hello ' "$E" | head -1 | sed -E 's/.* pid=([0-9]+) .*/\1/')
	K=$(grep -E "^kernel .* pid=$P .*name=fill$" "$E" | sed -E 's/.* kid=([0-9]+) .*/\1/')
	[ -n "$P" ] && [ -n "$K" ] || { fail "$name: no fill kernel: $(head -5 "$E")"; continue; }
	inst=$(grep -nE "^instrument .* pid=$P kid=$K status=ok" "$E" | head -1 | cut -d: -f1)
	first=$(grep -nE "^launch .* pid=$P kid=$K .*probed=1" "$E" | head -1)
	[ -n "$inst" ] && [ -n "$first" ] || { fail "$name: no instrument or probed launch: $(grep -E '^(instrument|probe|warn) ' "$E")"; continue; }
	[ "${first%%:*}" -gt "$inst" ] || fail "$name: a probed launch before the copy's instrument line"
	cpu=$(echo "$first" | sed -nE 's/.* cpu_ns=([0-9]+).*/\1/p')
	stats=$(grep -E "^stats .* pid=$P kid=$K " "$E" | tail -1)
	echo "$stats" | grep -q ' probed=5' || fail "$name: the limit: $stats"
	seq1=$(grep -m1 -E "^launch .* pid=$P kid=$K " "$E" | sed -nE 's/.* seq=([0-9]+) .*/\1/p')
	seqp=$(echo "$first" | sed -nE 's/.* seq=([0-9]+) .*/\1/p')
	timed=$( (grep -E "^time .* pid=$P kid=$K " "$E"; grep -E "^result .* pid=$P kid=$K .*ns=[1-9]" "$E") |
		sed -nE 's/.* seq=([0-9]+) .*/\1/p' | sort -n | uniq | tr '\n' ' ')
	want=$(printf '%s\n' "$seq1" "$seqp" | sort -n | uniq | tr '\n' ' ')
	[ "$timed" = "$want" ] || fail "$name: timed launches (seq) $timed, want the first launch and the first probed one: $want"
	eval "P_$name=$P K_$name=$K cpu_$name=${cpu:-0} stats_$name=\"\$stats\" deferred_$name=\$(grep -cE \"^probe .* pid=$P kid=$K .*status=deferred\" \"\$E\")"
done
# The threads probed launches hand work to (the stager, the collector, the
# writers) were started off the launches: by the builder with the copy, or
# by the launch that built it (sync), not by the first probed launches
no_thread_started async "$P_async" "$K_async" 1
no_thread_started sync "$P_sync" "$K_sync" 2
# async: launches went by unprobed while the copy was built, said once, counted
[ "$deferred_async" = 1 ] || fail "async: $deferred_async deferred lines, want 1"
echo "$stats_async" | grep -Eq ' deferred=[1-9]' || fail "async: no deferred count: $stats_async"
[ "$cpu_async" -lt 100000000 ] || fail "async: the first probed launch held the app's thread ${cpu_async} ns (the JIT takes 200 ms)"
# ... nor that launch's job (plan, map buffer) nor the next one's: the builder made them with the copy
grep -q "fill: probed copy built off the app's threads (ok), first launches' jobs made: 2" "$TMP/async.hook.log" ||
	fail "async: builder log: $(grep -i 'built off' "$TMP/async.hook.log")"
# ... nor the driver's lazy loading of the copy's code (cuFuncLoad on the builder)
tid_load=$(grep -m1 "fill: probed function loaded" "$TMP/async.hook.log" | cut -d' ' -f2)
tid_built=$(grep -m1 "fill: probed copy built off the app's threads" "$TMP/async.hook.log" | cut -d' ' -f2)
[ -n "$tid_load" ] && [ "$tid_load" = "$tid_built" ] ||
	fail "async: the probed function not loaded by the builder thread ($tid_load, builder $tid_built)"
# the sampling gap runs from the end of a timed launch's call: the first
# launch waits 1.5 s for its JIT, app_loop launches again 0.6 s after it,
# and with a gap of 1 s that second launch is not timed
mkdir -p "$TMP/gap"
env NTOP_PROBE_ASYNC=0 NTOP_TIME_GAP_MS=1000 NTOP_PROBES=$BS NTOP_PROBE_LIMIT=5 NTOP_TRACE_DIR=$TMP/gap NTOP_EVENT_FD=9 \
	NTOP_REAL_LIBCUDA=$FAKE FAKECUDA_JIT_DELAY_MS=1500 LD_LIBRARY_PATH=$HOOKDIR timeout -s KILL 60 "$LOOP" "$PTX" \
	"$TMP/stop-gap" 1 >"$TMP/gap.out" 2>&1 9>"$TMP/gap.log" || fail "gap: app: $(cat "$TMP/gap.out")"
E=$TMP/gap.log
P=$(grep -E '^hello ' "$E" | head -1 | sed -E 's/.* pid=([0-9]+) .*/\1/')
K=$(grep -E "^kernel .* pid=$P .*name=fill$" "$E" | sed -E 's/.* kid=([0-9]+) .*/\1/')
seq2=$(grep -E "^launch .* pid=$P kid=$K " "$E" | sed -n 2p | sed -nE 's/.* seq=([0-9]+) .*/\1/p')
[ -n "$seq2" ] || fail "gap: no second launch of fill: $(grep -E '^(launch|probe) ' "$E" | head -3)"
grep -qE "^(time|result) .* pid=$P kid=$K seq=$seq2 .*ns=[1-9]" "$E" &&
	fail "gap: the second launch (seq $seq2), 0.6 s after the first one's JIT, was timed"
grep -qE "^(time|result) .* pid=$P kid=$K seq=1 .*ns=[1-9]" "$E" || fail "gap: the first launch not timed"
# sync: the first probed launch waited for the JIT, nothing deferred
[ "$deferred_sync" = 0 ] || fail "sync: deferred lines"
echo "$stats_sync" | grep -q 'deferred=' && fail "sync: a deferred count: $stats_sync"
[ "$cpu_sync" -ge 200000000 ] || fail "sync: the first probed launch took ${cpu_sync} ns of the app's thread, want the JIT's 200 ms"
# A live `next` selection (the UI's pick), NTOP_PROBE_ASYNC unset: built
# off the app's threads; the launch that found the
# copy building gives `next` back, so the first launch after the copy is
# ready is probed (each process probes its own next).
printf 'control version=1 gen=1\nprobe name=fill probes=%s mode=next\n' "$BS" >"$TMP/control"
mkdir -p "$TMP/next"
env -u NTOP_PROBE_ASYNC NTOP_CONTROL=$TMP/control NTOP_TRACE_DIR=$TMP/next NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE \
	FAKECUDA_JIT_DELAY_MS=200 LD_LIBRARY_PATH=$HOOKDIR timeout -s KILL 60 "$LOOP" "$PTX" "$TMP/stop-next" 2 \
	>"$TMP/next.out" 2>&1 9>"$TMP/next.log"
E=$TMP/next.log
P=$(grep -E '^hello ' "$E" | head -1 | sed -E 's/.* pid=([0-9]+) .*/\1/')
K=$(grep -E "^kernel .* pid=$P .*name=fill$" "$E" | sed -E 's/.* kid=([0-9]+) .*/\1/')
n=$(grep -cE "^launch .* pid=$P kid=$K .*probed=1" "$E")
[ "$n" = 1 ] || fail "next with the copy being built: $n probed launches in pid $P, want 1: $(grep -E "^(probe|instrument) " "$E" | head -3)"
grep -qE "^probe .* pid=$P kid=$K .*status=deferred" "$E" || fail "next: no deferred line"
# A probe picked while the app runs is built when the pick arrives, for the
# kernel's last launch configuration: with launches 1 s apart and a 100 ms
# JIT, the first launch after the pick is probed and none is deferred.
mkdir -p "$TMP/pick"
env -u NTOP_PROBE_ASYNC APP_LOOP_SLEEP_MS=1000 NTOP_LOG=$TMP/pick.hook.log NTOP_CONTROL=$TMP/pick.control \
	NTOP_TRACE_DIR=$TMP/pick NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE FAKECUDA_JIT_DELAY_MS=100 \
	LD_LIBRARY_PATH=$HOOKDIR timeout -s KILL 60 "$LOOP" "$PTX" "$TMP/stop-pick" 30 \
	>"$TMP/pick.out" 2>&1 9>"$TMP/pick.log" &
app=$!
E=$TMP/pick.log
P= K=
for _ in $(seq 200); do # fill's second launch in the first process: after its fork
	P=$(grep -m1 -E '^hello ' "$E" | sed -E 's/.* pid=([0-9]+) .*/\1/')
	[ -n "$P" ] && K=$(grep -m1 -E "^kernel .* pid=$P .*name=fill$" "$E" | sed -E 's/.* kid=([0-9]+) .*/\1/')
	[ -n "$K" ] && [ "$(grep -cE "^launch .* pid=$P kid=$K " "$E")" -ge 2 ] && break
	sleep 0.05
done
printf 'control version=1 gen=1\nprobe name=fill probes=%s mode=every\n' "$BS" >"$TMP/pick.control"
sleep 2.5
touch "$TMP/stop-pick"
wait "$app" || fail "pick: app: $(cat "$TMP/pick.out")"
ctl=$(grep -nE "^control .* pid=$P " "$E" | head -1 | cut -d: -f1)
after=$(tail -n +"${ctl:-1}" "$E" | grep -m1 -E "^launch .* pid=$P kid=$K ")
[ -n "$ctl" ] && echo "$after" | grep -q ' probed=1' ||
	fail "pick: the first launch after the pick was not probed: ${after:-none} (control line ${ctl:-none})"
grep -qE "^probe .* pid=$P kid=$K .*status=deferred" "$E" && fail "pick: a launch deferred: $(grep -E '^probe ' "$E" | head -2)"
grep -q "fill: probed copy queued when picked" "$TMP/pick.hook.log" || fail "pick: not queued at the pick"
# ntop record's default: launches before the copy is ready are not probed
# (app_launch's first launches of fill; a 200 ms JIT) and the summary says
# so and how to probe them; --wait-build probes them.
for mode in default --wait-build; do
	opt=()
	[ "$mode" = default ] || opt=("$mode")
	env -u NTOP_PROBE_ASYNC NTOP_REAL_LIBCUDA=$FAKE NTOP_HOOK_DIR=$HOOKDIR FAKECUDA_JIT_DELAY_MS=200 \
		"$B/bin/ntop" record -p block_sched -k fill "${opt[@]}" -o "$TMP/rec$mode" -- "$APP" "$PTX" 0 \
		>"$TMP/rec$mode.out" 2>"$TMP/rec$mode.err" || fail "record $mode: $(tail -3 "$TMP/rec$mode.err")"
done
grep -Eq '^ntop: fill \(pid [0-9]+\): [0-9]+ launch(es)? ran unprobed while its probed copy was built \(none probed: --wait-build probes a kernel.s first launch\)$' \
	"$TMP/recdefault.err" || fail "record: no deferred summary: $(cat "$TMP/recdefault.err")"
grep -q 'ran unprobed' "$TMP/rec--wait-build.err" && fail "record --wait-build: deferred: $(cat "$TMP/rec--wait-build.err")"
grep -q ', 10 probed, 10 results written' "$TMP/rec--wait-build.err" ||
	fail "record --wait-build: not every launch probed: $(cat "$TMP/rec--wait-build.err")"
# the report says what compiled the copy (jit=)
"$B/bin/ntop" report --json "$TMP/rec--wait-build" 2>&1 | grep -Eq '"jit": ?"driver"' ||
	fail "report: no jit: $("$B/bin/ntop" report --json "$TMP/rec--wait-build" 2>&1 | grep -o '"instrument":[^}]*')"
# What compiles the copy (the `instrument` line's jit=): app_loop as
# above with the default assembler, fake_ptxas and no nvJitLink (a
# toolkit's real one would take the fake's PTX), the copy taking 1 s
# whatever compiles it (past app_loop's quiet 0.6 s after its first
# launch), then ENV...
NJL=$(ls "$B"/tests/fakecuda/jit/nvjitlink/libnvJitLink.so.[0-9]* | head -1)
asm() {
	local name=$1 JIT_MS=1000
	shift
	mkdir -p "$TMP/$name"
	run "$name" -u NTOP_ASSEMBLER -u NTOP_PROBE_ASYNC NTOP_PTXAS="$B/tests/fakecuda/fake_ptxas" \
		FAKE_PTXAS_DELAY_MS=1000 FAKE_PTXAS_LOG="$TMP/$name.ptxas" NTOP_REAL_LIBNVJITLINK="$TMP/no-nvjitlink" \
		FAKE_NVJITLINK_DELAY_MS=1000 FAKE_NVJITLINK_LOG="$TMP/$name.njl" "$@"
}
# NAME JIT RAN: every copy (fill and scale, in app_loop and its fork
# child) compiled by JIT, ptxas run (yes) or not (no)
asm_is() {
	local jits ran=no
	grep -q '^app_loop: done, 0 failures$' "$TMP/$1.out" || fail "$1: app: $(cat "$TMP/$1.out")"
	jits=$(grep -E '^instrument .*status=ok' "$TMP/$1.log" | sed -nE 's/.* jit=([a-z]+).*/\1/p' | sort | uniq -c |
		awk '{ printf "%s%d %s", (NR > 1 ? ", " : ""), $1, $2 }')
	grep -q '^ptxas sm_[0-9]' "$TMP/$1.ptxas" 2>/dev/null && ran=yes
	[[ "$jits" =~ ^[0-9]+\ $2$ ]] && [ "$ran" = "$3" ] ||
		fail "$1: copies compiled by ${jits:-nothing}, ptxas run: $ran; want $2 alone, ptxas run: $3"
}
# NAME: how many of fill's launches ran unprobed while its copy was built
# in app_loop's first process: one every 2 ms once its quiet 0.6 s is
# over, until the 1 s compile ends, unless the compile holds them (the
# fake's JIT holds launches and occupancy queries while it compiles, as the
# driver's does)
deferred() {
	local p k
	p=$(grep -m1 -E '^hello ' "$TMP/$1.log" | sed -E 's/.* pid=([0-9]+) .*/\1/')
	k=$(grep -m1 -E "^kernel .* pid=$p .*name=fill$" "$TMP/$1.log" | sed -E 's/.* kid=([0-9]+) .*/\1/')
	grep -E "^stats .* pid=$p kid=$k " "$TMP/$1.log" | tail -1 | sed -nE 's/.* deferred=([0-9]+).*/\1/p'
}
asm ptxas &
asm onlaunch NTOP_PROBE_ASYNC=0 &
asm noptxas NTOP_PTXAS="$TMP/no-such-ptxas" &
asm badptx FAKE_PTXAS_FAIL=1 &
asm jit NTOP_ASSEMBLER=jit &
asm forced NTOP_ASSEMBLER=ptxas FAKE_PTXAS_FAIL=1 &
# a ptxas first in PATH too old for the PTX (an old toolkit, a newer
# Triton's PTX): the next one found builds the copy
mkdir -p "$TMP/oldptxas"
printf '#!/bin/sh\necho "ptxas fatal   : Unsupported .version 9.9; current version is 8.0" >&2\nexit 255\n' \
	>"$TMP/oldptxas/ptxas"
chmod 755 "$TMP/oldptxas/ptxas"
asm fallback NTOP_PTXAS= CUDA_HOME= PATH="$TMP/oldptxas:/usr/bin:/bin" TRITON_PTXAS_PATH="$B/tests/fakecuda/fake_ptxas" &
# nvJitLink in the app's process: where no ptxas is found, where ptxas
# fails, failing itself, forced, and one the app has loaded found without
# being named
asm njl NTOP_PTXAS="$TMP/no-such-ptxas" NTOP_REAL_LIBNVJITLINK="$NJL" &
asm njl_after FAKE_PTXAS_FAIL=1 NTOP_REAL_LIBNVJITLINK="$NJL" &
asm njl_bad NTOP_PTXAS="$TMP/no-such-ptxas" NTOP_REAL_LIBNVJITLINK="$NJL" FAKE_NVJITLINK_FAIL=1 &
asm njl_forced NTOP_ASSEMBLER=nvjitlink NTOP_REAL_LIBNVJITLINK="$NJL" &
asm njl_unneeded NTOP_REAL_LIBNVJITLINK="$NJL" &
# (loaded with LD_PRELOAD, after a sanitizer build's runtime, which must come first)
asan=$(ldd "$NJL" 2>/dev/null | sed -nE 's/.*libasan[^ ]* => ([^ ]+).*/\1/p' | head -1)
asm njl_loaded NTOP_PTXAS="$TMP/no-such-ptxas" NTOP_REAL_LIBNVJITLINK= LD_PRELOAD="${asan:+$asan }$NJL" &
wait
asm_is ptxas ptxas yes
asm_is onlaunch driver no
asm_is noptxas driver no
asm_is badptx driver yes
asm_is jit driver no
asm_is fallback ptxas yes
asm_is njl nvjitlink no
asm_is njl_after nvjitlink yes
asm_is njl_unneeded ptxas yes
# nvJitLink found but ptxas builds: the library is never loaded into the app
[ ! -s "$TMP/njl_unneeded.njl" ] || fail "njl_unneeded: nvJitLink loaded: $(head -2 "$TMP/njl_unneeded.njl")"
grep -q "probed copies built by $B/tests/fakecuda/fake_ptxas (where it fails: nvJitLink where found)" \
	"$TMP/njl_unneeded.hook.log" ||
	fail "njl_unneeded: not logged: $(grep -i -e ptxas -e nvjitlink "$TMP/njl_unneeded.hook.log" | head -2)"
asm_is njl_bad driver no
asm_is njl_forced nvjitlink no
asm_is njl_loaded nvjitlink no
grep -q "^nvjitlink sm_[0-9]" "$TMP/njl.njl" || fail "njl: nvJitLink not asked for an -arch: $(head -2 "$TMP/njl.njl")"
grep -q "no ptxas found (.*): probed copies built by nvJitLink $NJL, in the app's process" "$TMP/njl.hook.log" ||
	fail "njl: not logged: $(grep -i -e ptxas -e nvjitlink "$TMP/njl.hook.log" | head -2)"
grep -q "probed copies built by nvJitLink $NJL" "$TMP/njl_loaded.hook.log" ||
	fail "njl_loaded: the loaded one not used: $(grep -i -e ptxas -e nvjitlink "$TMP/njl_loaded.hook.log" | head -2)"
grep -q "probed copies built by $B/tests/fakecuda/fake_ptxas (where it fails: nvJitLink $NJL)" "$TMP/njl_after.hook.log" &&
	grep -q "fill: ptxas failed .*Unresolved extern function 'fake'.*; nvJitLink builds it" "$TMP/njl_after.hook.log" ||
	fail "njl_after: not logged: $(grep -i -e ptxas -e nvjitlink "$TMP/njl_after.hook.log" | head -3)"
grep -q "fill: nvJitLink compiling failed (error [0-9]*): .*FAKE_NVJITLINK_FAIL.*; the driver's JIT builds it" \
	"$TMP/njl_bad.hook.log" || fail "njl_bad: not logged: $(grep -i nvjitlink "$TMP/njl_bad.hook.log" | head -3)"
grep -q "probed copies built by $TMP/oldptxas/ptxas (where it fails: $B/tests/fakecuda/fake_ptxas" \
	"$TMP/fallback.hook.log" || fail "fallback: candidates not named: $(grep -i ptxas "$TMP/fallback.hook.log" | head -2)"
grep -q "fill: $TMP/oldptxas/ptxas: ptxas failed (status 255): .*Unsupported .version 9.9.*; trying $B/tests/fakecuda/fake_ptxas" \
	"$TMP/fallback.hook.log" || fail "fallback: not logged: $(grep -i ptxas "$TMP/fallback.hook.log" | head -3)"
# the ptxas used is named once a process (app_loop and its fork child), not at each build
n=$(grep -c "probed copies built by $B/tests/fakecuda/fake_ptxas (where it fails: nvJitLink where found)\$" \
	"$TMP/ptxas.hook.log")
[ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "ptxas: named $n times: $(grep -i ptxas "$TMP/ptxas.hook.log" | head -3)"
grep -q "no ptxas found" "$TMP/noptxas.hook.log" || fail "noptxas: not logged: $(head -3 "$TMP/noptxas.hook.log")"
grep -q "fill: ptxas failed .*Unresolved extern function 'fake'.*; the driver's JIT builds it" "$TMP/badptx.hook.log" ||
	fail "badptx: not logged: $(grep -i ptxas "$TMP/badptx.hook.log" | head -3)"
# NTOP_ASSEMBLER=ptxas: ptxas or nothing; its failure is the reason
grep -qE "^instrument .*status=failed .*reason=ptxas%20failed.*Unresolved%20extern%20function%20'fake'" "$TMP/forced.log" ||
	fail "forced: $(grep -E '^(instrument|probe) ' "$TMP/forced.log" | head -2)"
# ptxas leaves the app's launches running; the driver's JIT holds them (its
# few deferred: launches before it began and while the copy is loaded after)
d_ptxas=$(deferred ptxas) d_jit=$(deferred jit) d_njl=$(deferred njl)
echo "deferred launches while fill's copy was built: ptxas ${d_ptxas:-?}, nvJitLink ${d_njl:-?}, jit ${d_jit:-?}"
[ "${d_ptxas:-0}" -ge 40 ] && [ -n "$d_jit" ] && [ $((d_jit * 3)) -le "$d_ptxas" ] ||
	fail "deferred launches: ptxas ${d_ptxas:-?} (want 40 or more), jit ${d_jit:-?} (want a third of ptxas's at most)"
[ "${d_njl:-0}" -ge 40 ] || fail "deferred launches: nvJitLink ${d_njl:-?} (want 40 or more: it holds no launch)"
cpu=$(grep -m1 -E '^launch .*probed=1' "$TMP/ptxas.log" | sed -nE 's/.* cpu_ns=([0-9]+).*/\1/p')
[ -n "$cpu" ] && [ "$cpu" -lt 100000000 ] || fail "ptxas: the first probed launch held the app's thread ${cpu:-?} ns"
# An app exiting while nvJitLink compiles (2 s; the app runs 1 s): the
# hook waits for the compile before nvJitLink's own exit handlers tear it
# down (the fake aborts when they have run under a compile)
mkdir -p "$TMP/njl_exit"
env -u NTOP_PROBE_ASYNC -u NTOP_ASSEMBLER NTOP_PTXAS="$TMP/no-such-ptxas" NTOP_REAL_LIBNVJITLINK="$NJL" \
	FAKE_NVJITLINK_DELAY_MS=2000 NTOP_PROBES=$BS NTOP_TRACE_DIR=$TMP/njl_exit NTOP_EVENT_FD=9 \
	NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR timeout -s KILL 60 "$LOOP" "$PTX" "$TMP/stop-njl_exit" 1 \
	>"$TMP/njl_exit.out" 2>&1 9>"$TMP/njl_exit.log"
rc=$?
[ "$rc" = 0 ] && grep -q '^app_loop: done, 0 failures$' "$TMP/njl_exit.out" ||
	fail "njl_exit: app (status $rc): $(cat "$TMP/njl_exit.out")"
# An app exiting while ptxas builds (4 s) and then fails, with no
# nvJitLink: the copy is not handed to the driver's JIT under the exit
mkdir -p "$TMP/ptxas_exit"
env -u NTOP_PROBE_ASYNC -u NTOP_ASSEMBLER NTOP_PTXAS="$B/tests/fakecuda/fake_ptxas" FAKE_PTXAS_FAIL=1 \
	FAKE_PTXAS_DELAY_MS=4000 NTOP_REAL_LIBNVJITLINK="$TMP/no-nvjitlink" NTOP_LOG="$TMP/ptxas_exit.hook.log" \
	NTOP_PROBES=$BS NTOP_TRACE_DIR=$TMP/ptxas_exit NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR \
	timeout -s KILL 60 "$LOOP" "$PTX" "$TMP/stop-ptxas_exit" 1 >"$TMP/ptxas_exit.out" 2>&1 9>"$TMP/ptxas_exit.log"
rc=$?
[ "$rc" = 0 ] && grep -q '^app_loop: done, 0 failures$' "$TMP/ptxas_exit.out" ||
	fail "ptxas_exit: app (status $rc): $(cat "$TMP/ptxas_exit.out")"
grep -q "fill: ptxas failed .*; the process is exiting: not built" "$TMP/ptxas_exit.hook.log" &&
	! grep -q "probed function loaded" "$TMP/ptxas_exit.hook.log" ||
	fail "ptxas_exit: $(grep -e 'ptxas failed' -e 'function loaded' "$TMP/ptxas_exit.hook.log" | head -3)"
# The builder's 0.5 ms grace is for a copy the driver's JIT may finish at
# once, and only for the first launch that finds it building: app_loop
# launching without a pause while ptxas builds for 1 s makes its deferred
# launches well under 0.5 ms apart.
mkdir -p "$TMP/grace"
env -u NTOP_PROBE_ASYNC -u NTOP_ASSEMBLER NTOP_PTXAS="$B/tests/fakecuda/fake_ptxas" FAKE_PTXAS_DELAY_MS=1000 \
	APP_LOOP_SLEEP_MS=0 NTOP_PROBES=$BS NTOP_PROBE_LIMIT=5 NTOP_TRACE_DIR=$TMP/grace NTOP_EVENT_FD=9 \
	NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR timeout -s KILL 60 "$LOOP" "$PTX" "$TMP/stop-grace" 2 \
	>"$TMP/grace.out" 2>&1 9>"$TMP/grace.log" || fail "grace: app: $(cat "$TMP/grace.out")"
p=$(grep -m1 -E '^hello ' "$TMP/grace.log" | sed -E 's/.* pid=([0-9]+) .*/\1/')
k=$(grep -m1 -E "^kernel .* pid=$p .*name=fill$" "$TMP/grace.log" | sed -E 's/.* kid=([0-9]+) .*/\1/')
# fill's deferred launches in the first process (each has a line: app_loop
# changes the grid every launch) from 0.7 s into the build (its 0.6 s nap
# over) until its copy's instrument line: their mean gap, us
gap=$(awk -v p="$p" -v k="$k" '
	$1 == "probe" && $0 ~ " pid=" p " kid=" k " " && /status=deferred/ { split($2, a, "="); t0 = a[2] + 700000000 }
	$1 == "instrument" && $0 ~ " pid=" p " kid=" k " " { done = 1 }
	$1 == "launch" && t0 && !done && $0 ~ " pid=" p " kid=" k " " && / probed=0/ {
		split($2, a, "="); if (a[2] >= t0) { if (n++ == 0) first = a[2]; last = a[2] } }
	END { if (n > 10) printf "%d\n", (last - first) / (n - 1) / 1000; else print "" }' "$TMP/grace.log")
echo "deferred launches while ptxas built: ${gap:-?} us apart"
[ -n "$gap" ] && [ "$gap" -lt 400 ] || fail "grace: deferred launches ${gap:-?} us apart (each waited the 0.5 ms grace?)"
[ "$fails" = 0 ] && echo "hook_probe_async: all passed"
exit $((fails > 0))
