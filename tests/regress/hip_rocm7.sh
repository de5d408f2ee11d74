#!/bin/bash
# ntop on ROCm 6/7-shaped HIP programs, over the ROCm-7-shaped build of the
# HIP test double (tests/fakehip/runtime7/libamdhip64.so.7: version 7.1,
# hipGetProcAddress, ROCm 6's device properties; plumbing only, no AMD GPU,
# and no real ROCm 6/7 library has been seen). ntop has no stand-in for
# these runtimes: the loader audit module binds their hooked calls to the
# HIP hook (libntop_hip.so). Proven here: a program that drives the runtime
# as Triton 3.9's AMD launcher does (app_triton_hip: dlopen by absolute
# path, every call through hipGetProcAddress, a Triton code object, Triton's
# argument layout) recorded with block_sched and with dmat: its output and
# status unchanged, the device read from the R0600 properties, the kernel
# instrumented, its hipModuleLaunchKernel and hipDrvLaunchKernelEx launches
# probed, its cooperative launches (hipModuleLaunchCooperativeKernel, and
# hipDrvLaunchKernelEx with the cooperative attribute and a priority)
# probed through the same cooperative call with the attributes passed on
# while the probed copy still fits, declined naming the numbers once it
# does not (the fake's occupancy from the VGPRs, FAKEHIP_VGPRS=64: the
# original fits 8 workgroups per CU, the probed copy 4), Triton's cluster
# attribute declined, the results;
# app_hip linked against libamdhip64.so.7, lazily and BIND_NOW (registration
# from a dlopen'ed library, every entry point): probed launches; without
# ntop, with --no-audit, and when the hook cannot be opened, the programs
# run as they do alone. Skips (77) without llvm-19.
. "${NTOP_SOURCE_DIR:?}/tests/regress/tui_lib.inc"
B=${NTOP_BINARY_DIR:?}
S=${NTOP_SOURCE_DIR:?}
F=$B/tests/fakehip
C=$S/tests/corpus/amdgpu
R7=$F/runtime7/libamdhip64.so.7
CO=$C/triton.tt_add.gfx90a.hsaco
DUMP=$B/tests/fakecuda/ntr_dump
[ -x "$F/app_triton_hip" ] && [ -x "$F/app_hip7" ] && [ -x "$F/app_hip7_now" ] && [ -f "$R7" ] &&
	[ -f "$B/lib/ntop/libntop_hip.so" ] || { echo "FAIL: HIP 6/7 hook or its test double not built"; exit 1; }
command -v llvm-mc-19 >/dev/null && command -v llvm-objdump-19 >/dev/null ||
	{ echo "skip: llvm-19 not installed (./setup.sh installs it)"; exit 77; }
# expect FILE REGEX WHAT
expect() { grep -Eq -- "$2" "$1" || bad "$3 (no line matching '$2' in $(basename "$1"))"; }

# ---- the program alone ----
"$F/app_triton_hip" "$R7" "$CO" >"$T/plain" 2>"$T/plain.err" || bad "app_triton_hip alone: $(cat "$T/plain.err")"
expect "$T/plain" '^device: AMD fake gfx90a arch=gfx90a:sramecc\+:xnack- cus=104 warp=64 cooperative=1$' \
	"alone: the R0600 properties through hipGetProcAddress"
expect "$T/plain" '^app_triton_hip: all correct$' "alone: every launch right"
[ "$(grep -c ': ok$' "$T/plain")" = 6 ] || bad "alone: 6 launches"

# ---- block_sched through hipGetProcAddress ----
E=$T/bs/events.log
L=$T/bs.launches # the fake's line per launch: how the hook launched each
FAKEHIP_LAUNCH_LOG=$L "$NTOP" record -p block_sched -o "$T/bs" -- "$F/app_triton_hip" "$R7" "$CO" >"$T/out" 2>"$T/err" ||
	bad "record: exit status $?: $(tail -3 "$T/err")"
cmp -s "$T/plain" "$T/out" || bad "record: the program's output changed: $(diff "$T/plain" "$T/out" | head -5)"
expect "$E" "^hello .* driver=$R7\$" "hello names the ROCm 7 runtime"
expect "$E" '^module .* api=hipModuleLoadDataEx kind=co .* co=1 ' "the Triton code object loaded"
expect "$E" '^kernel .* name=tt_add$' "the kernel"
expect "$E" '^device .* name=AMD%20fake%20gfx90a cc=0 arch=gfx90a:sramecc\+:xnack- sms=104 clock_khz=1700000' \
	"device facts from hipGetDevicePropertiesR0600"
expect "$E" '^instrument .* status=ok probes=block_sched .* target=gfx90a ' "tt_add instrumented"
[ "$(grep -c '^launch .* api=hipModuleLaunchKernel .* probed=1 ' "$E")" = 2 ] || bad "2 probed hipModuleLaunchKernel"
[ "$(grep -c '^launch .* api=hipDrvLaunchKernelEx .* probed=1 ' "$E")" = 2 ] ||
	bad "2 probed hipDrvLaunchKernelEx (no attributes; priority and cooperative)"
expect "$E" '^launch .* seq=6 api=hipModuleLaunchCooperativeKernel .* probed=1 ' "the cooperative launch probed"
expect "$E" '^probe .* seq=5 status=declined reason=hipDrvLaunchKernelEx%20launch%20attribute%204%20\(cluster%20dimension\)' \
	"Triton's cluster attribute declined with the reason"
[ "$(grep -c '^probe .*declined' "$E")" = 1 ] || bad "one decline: $(grep '^probe .*declined' "$E")"
expect "$L" '^hipDrvLaunchKernelEx kernel=tt_add probed=1 cooperative=1 grid=1 attrs=8:1,2:1 rc=0$' \
	"the probed copy launched by hipDrvLaunchKernelEx with the app's attributes"
expect "$L" '^hipModuleLaunchCooperativeKernel kernel=tt_add probed=1 cooperative=1 grid=1 attrs=- rc=0$' \
	"the probed copy launched by hipModuleLaunchCooperativeKernel"
expect "$L" '^hipDrvLaunchKernelEx kernel=tt_add probed=0 cooperative=0 grid=1 attrs=4:1,2:0 rc=0$' \
	"the cluster launch ran the original"
[ "$(grep -c '^result ' "$E")" = 5 ] || bad "5 results"
first=$(ls "$T/bs/results" | sort -t- -k2 -n | head -1)
d=$("$DUMP" "$T/bs/results/$first")
echo "result: $d"
# one workgroup of 256 work-items: 4 wave64 records
echo "$d" | grep -Eq 'kernel=tt_add .* units=4 records=4 dropped=0 .*blocks=1 .*warp=64 ' ||
	bad "result file: 4 wave64 records"
"$NTOP" report "$T/bs" >"$T/rep" 2>&1 || bad "report failed"
expect "$T/rep" 'device 0: AMD fake gfx90a, gfx90a:sramecc\+:xnack-, 104 CUs' "report: the device"
expect "$T/rep" 'probed: yes \(block_sched\)' "report: tt_add probed"

# ---- cooperative launches against the probed copy's occupancy ----
# FAKEHIP_VGPRS=64: tt_add (5 VGPRs) fits 8 workgroups of 256 per CU, its
# probed copy (12) 4: 400 workgroups fit 104 CUs either way, 500 only the
# original's.
for g in 400 500; do
	FAKEHIP_VGPRS=64 "$F/app_triton_hip" "$R7" "$CO" $g >"$T/alone$g" 2>&1 || bad "grid $g alone failed"
	L=$T/co$g.launches
	FAKEHIP_VGPRS=64 FAKEHIP_LAUNCH_LOG=$L "$NTOP" record -p block_sched -o "$T/co$g" -- \
		"$F/app_triton_hip" "$R7" "$CO" $g >"$T/out" 2>"$T/err" || bad "grid $g: exit status $?: $(tail -3 "$T/err")"
	cmp -s "$T/alone$g" "$T/out" || bad "grid $g: the program's output changed: $(diff "$T/alone$g" "$T/out" | head -3)"
done
E=$T/co400/events.log
[ "$(grep -c '^launch .* grid=400,1,1 .* probed=1 ' "$E")" = 2 ] || bad "grid 400: both cooperative launches probed"
[ "$(grep -c '^probe .*declined.*cooperative' "$E")" = 0 ] || bad "grid 400: no cooperative launch declined"
[ "$(grep -c '^[a-zA-Z]* kernel=tt_add probed=1 cooperative=1 grid=400 ' "$T/co400.launches")" = 2 ] ||
	bad "grid 400: the probed copy launched cooperatively twice: $(cat "$T/co400.launches")"
d=$("$DUMP" "$T/co400/results/$(ls "$T/co400/results" | sort -t- -k2 -n | tail -1)")
echo "cooperative result: $d"
echo "$d" | grep -Eq 'kernel=tt_add .*seq=6 .* units=1600 records=1600 dropped=0 .*blocks=400 ' ||
	bad "grid 400: the cooperative launch's 1600 wave records"
E=$T/co500/events.log
why='cooperative%20launch:%20the%20probed%20copy%20\(12%20VGPRs,%20the%20original%205\)%20fits%204%20workgroups%20per%20CU%20x%20104%20CUs,%20500%20workgroups%20must%20be%20co-resident'
for s in 4 6; do
	expect "$E" "^probe .* seq=$s status=declined reason=$why\$" "grid 500: launch $s declined naming the numbers"
done
[ "$(grep -c '^launch .* grid=500,1,1 .* probed=0 ' "$E")" = 2 ] || bad "grid 500: both ran unprobed"
[ "$(grep -c '^[a-zA-Z]* kernel=tt_add probed=0 cooperative=1 grid=500 .* rc=0$' "$T/co500.launches")" = 2 ] ||
	bad "grid 500: the originals ran cooperatively: $(cat "$T/co500.launches")"
[ "$(grep -c '^result ' "$E")" = 3 ] || bad "grid 500: 3 results"

# ---- dmat ----
E=$T/dm/events.log
FAKEHIP_MAP=thread:16 "$NTOP" record -p dmat -o "$T/dm" -- "$F/app_triton_hip" "$R7" "$CO" >"$T/out" 2>"$T/err" ||
	bad "dmat: exit status $?: $(tail -3 "$T/err")"
cmp -s "$T/plain" "$T/out" || bad "dmat: the program's output changed"
expect "$E" '^instrument .* status=ok probes=dmat .* target=gfx90a .* sites=[1-9]' "dmat: tt_add instrumented"
[ "$(grep -c '^result ' "$E")" = 5 ] || bad "dmat: 5 results"
d=$("$DUMP" "$T/dm/results/$(ls "$T/dm/results" | sort -t- -k2 -n | head -1)")
echo "dmat result: $d"
echo "$d" | grep -Eq 'kernel=tt_add .* units=256 records=256 dropped=0 ' || bad "dmat: 256 work-item records"

# ---- a probed launch the runtime refuses ----
# The original runs, and the refusal's error is not left for the
# program's next hipGetLastError (app_triton_hip checks it at the end; it
# used to read 719 there and fail).
E=$T/fail/events.log
FAKEHIP_FAIL_PROBED=1 "$NTOP" record -p block_sched -o "$T/fail" -- "$F/app_triton_hip" "$R7" "$CO" >"$T/out" 2>"$T/err" ||
	bad "a refused probed launch: exit status $?: $(tail -3 "$T/err")"
cmp -s "$T/plain" "$T/out" || bad "a refused probed launch: the program's output changed: $(diff "$T/plain" "$T/out" | head -3)"
expect "$E" '^probe .* status=declined reason=probed%20launch%20failed%20\(HIP%20error%20719\);%20the%20original%20ran' \
	"a refused probed launch: declined with the runtime's error"
[ "$(grep -c '^result ' "$E")" = 0 ] || bad "a refused probed launch: no result"

# ---- an application linked against libamdhip64.so.7, lazy and BIND_NOW ----
export LD_LIBRARY_PATH=$F/runtime7${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for app in app_hip7 app_hip7_now; do
	tr=$T/$app
	FAKEHIP_LAUNCH_LOG=$tr.launches "$NTOP" record -p block_sched -o "$tr" -- "$F/$app" "$C/libhipvec.so" \
		"$C/vecadd.hipfb" 2 >"$T/out" 2>"$T/err" || bad "$app: exit status $?: $(tail -3 "$T/err")"
	grep -qx "app_hip: 16 launches, all correct" "$T/out" || bad "$app: the output changed: $(tail -2 "$T/out")"
	expect "$tr/events.log" "^hello .* driver=$R7\$" "$app: hello names the runtime"
	expect "$tr/events.log" '^module .* api=__hipRegisterFatBinary kind=hipfb .* co=2 ' "$app: registration"
	for api in hipLaunchKernel hipExtLaunchKernel hipLaunchCooperativeKernel hipModuleLaunchKernel \
		hipExtModuleLaunchKernel; do
		expect "$tr/events.log" "^launch .* api=$api .* probed=1 " "$app: a probed $api launch"
	done
	[ "$(grep -c '^hipModuleLaunchCooperativeKernel kernel=vecadd probed=1 cooperative=1 grid=4 ' "$tr.launches")" = 2 ] ||
		bad "$app: hipLaunchCooperativeKernel probed through hipModuleLaunchCooperativeKernel (2 rounds)"
	[ "$(grep -c '^result ' "$tr/events.log")" = 14 ] || bad "$app: 14 results"
done

# ---- without the hook: as alone ----
"$NTOP" record --no-audit -p block_sched -o "$T/na" -- "$F/app_triton_hip" "$R7" "$CO" >"$T/out" 2>&1 ||
	bad "--no-audit: the program failed"
grep -v '^ntop: ' "$T/out" | cmp -s "$T/plain" - || bad "--no-audit: the output changed"
grep -q '^hello ' "$T/na/events.log" && bad "--no-audit: the hook was loaded"
: >"$T/libntop_hip.so" # a hook that cannot be opened: every call goes to the runtime
LD_AUDIT=$B/lib/ntop/libntop_audit.so NTOP_AUDIT_MAP="libamdhip64.so.[67]*>$T/libntop_hip.so" \
	"$F/app_triton_hip" "$R7" "$CO" >"$T/out" 2>&1 || bad "unopenable hook: the program failed: $(cat "$T/out")"
cmp -s "$T/plain" "$T/out" || bad "unopenable hook: the output changed: $(diff "$T/plain" "$T/out" | head -3)"
for app in app_hip7 app_hip7_now; do
	"$F/$app" "$C/libhipvec.so" "$C/vecadd.hipfb" 1 >"$T/alone" 2>&1 || bad "$app alone failed"
	LD_AUDIT=$B/lib/ntop/libntop_audit.so NTOP_AUDIT_MAP="libamdhip64.so.[67]*>$T/libntop_hip.so" \
		"$F/$app" "$C/libhipvec.so" "$C/vecadd.hipfb" 1 >"$T/out" 2>&1 || bad "unopenable hook: $app failed"
	cmp -s "$T/alone" "$T/out" || bad "unopenable hook: $app: $(diff "$T/alone" "$T/out" | head -3)"
done
[ $fail = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
