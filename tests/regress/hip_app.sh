#!/bin/bash
# A HIP application built the way users build them, end to end over the HIP
# test double (tests/fakehip: kernels "run" on the CPU; no AMD GPU):
# tests/fakehip/app_vecadd.hip, with the ROCm headers (Debian's
# libamdhip64-dev), compiled for host and device in one step by clang++-19
# (-x hip --offload-arch=gfx90a, ROCm's device libraries from
# rocm-device-libs) and, where installed, by Debian's hipcc (clang 15),
# linked against libamdhip64. The compiler's own registration
# (__hipRegisterFatBinary/__hipRegisterFunction) and <<<>>> launches go
# through ntop's HIP stand-in to the fake: `ntop record -p block_sched`
# instruments the clang-built code object (the fake saves every object it
# is given: the registered one is the object clang-offload-bundler
# unbundles from the app, the probed one is byte for byte what `ntop
# instrument` makes of the app), then `ntop report` and `ntop export --view
# timeline` (the PNG read back); `-p dmat_global` (its GCN version) drawn
# as a heatmap in global and CU-cycle time. Skips (77) when clang++-19, the HIP
# headers, the device libraries or LLVM 19's tools are missing
# (./setup.sh installs them); hipcc missing is said and its build left out.
. "${NTOP_SOURCE_DIR:?}/tests/regress/tui_lib.inc"
B=${NTOP_BINARY_DIR:?}
S=${NTOP_SOURCE_DIR:?}
F=$B/tests/fakehip
DUMP=$B/tests/fakecuda/ntr_dump
DEVLIBS=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode
KERNEL=_Z6vecaddPfPKfS1_i
[ -f "$F/runtime/libamdhip64.so.5" ] && [ -f "$B/lib/ntop/hip/libamdhip64.so.5" ] ||
	{ echo "FAIL: HIP stand-in or its test double not built"; exit 1; }
skip() { echo "skip: $1 (./setup.sh installs it)"; exit 77; }
command -v llvm-mc-19 >/dev/null && command -v llvm-objdump-19 >/dev/null && command -v llvm-readelf-19 >/dev/null ||
	skip "llvm-19 not installed"
command -v clang++-19 >/dev/null && command -v clang-offload-bundler-19 >/dev/null || skip "clang-19 not installed"
[ -f /usr/include/hip/hip_runtime.h ] && [ -e /usr/lib/x86_64-linux-gnu/libamdhip64.so ] ||
	skip "the HIP headers and libamdhip64.so (libamdhip64-dev) are not installed"
[ -f "$DEVLIBS/ockl.bc" ] || skip "ROCm's device libraries ($DEVLIBS, rocm-device-libs) are not installed"
export NTOP_REAL_LIBAMDHIP64=$F/runtime/libamdhip64.so.5
# a sanitized test double inside an app not built with ASan needs the runtime first
asan=$(ldd "$F/runtime/libamdhip64.so.5" 2>/dev/null | sed -nE 's/.*libasan[^ ]* => ([^ ]+).*/\1/p' | head -1)
[ -n "$asan" ] && export LD_PRELOAD=$asan ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# expect FILE REGEX WHAT
expect() { grep -Eq -- "$2" "$1" || bad "$3 (no line matching '$2' in $(basename "$1"))"; }

SRC=$S/tests/fakehip/app_vecadd.hip
builds=(clang)
clang++-19 -x hip --offload-arch=gfx90a -O2 --rocm-device-lib-path="$DEVLIBS" "$SRC" -o "$T/app_clang" -lamdhip64 \
	>"$T/cc.log" 2>&1 || bad "clang++-19 could not build the app: $(tail -5 "$T/cc.log")"
if command -v hipcc >/dev/null; then
	builds+=(hipcc)
	hipcc --offload-arch=gfx90a -O2 "$SRC" -o "$T/app_hipcc" >"$T/hipcc.log" 2>&1 ||
		bad "hipcc could not build the app: $(tail -5 "$T/hipcc.log")"
else
	echo "note: hipcc not installed (Debian package hipcc): only the clang++-19 build is tested"
fi

# check NAME: one build, recorded and reported
check() {
	local n=$1 app=$T/app_$1 tr=$T/tr_$1 sv=$T/sv_$1
	[ -x "$app" ] || return
	# built like a HIP app: the runtime by its SONAME, HIP's symbol versions, device code in .hip_fatbin
	readelf -d "$app" | grep -q 'NEEDED.*\[libamdhip64.so.5\]' || bad "$n: the app does not need libamdhip64.so.5"
	readelf -V "$app" | grep -q 'Name: hip_4.2' || bad "$n: no hip_4.2 version reference"
	nm -D "$app" | grep -q ' U __hipRegisterFatBinary@hip_4.2' || bad "$n: the app does not register its code"
	# the code object the compiler put in the app, unbundled by LLVM's tool
	objcopy -O binary --only-section=.hip_fatbin "$app" "$T/$n.hipfb" &&
		clang-offload-bundler-19 --unbundle --type=o --input="$T/$n.hipfb" \
			--targets=hipv4-amdgcn-amd-amdhsa--gfx90a --output="$T/$n.orig.co" ||
		bad "$n: clang-offload-bundler-19 found no gfx90a object in the app"

	out=$(LD_LIBRARY_PATH=$F/runtime "$app" 2 2>&1)
	[ "$out" = "app_vecadd: 6 launches, all correct" ] || bad "$n: on the test double alone: $out"

	mkdir -p "$sv"
	FAKEHIP_SAVE=$sv "$NTOP" record -p block_sched -o "$tr" -- "$app" 2 >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc = 0 ] || bad "$n: record: exit status $rc: $(tail -3 "$T/err")"
	grep -qx "app_vecadd: 6 launches, all correct" "$T/out" || bad "$n: record: the app's output changed: $(cat "$T/out")"
	E=$tr/events.log
	expect "$E" '^hello .* driver=.*/fakehip/runtime/' "$n: hello names the real runtime"
	expect "$E" '^module .* api=__hipRegisterFatBinary kind=hipfb .* co=1 ' "$n: the compiler's registration"
	expect "$E" "^kernel .* ptx=1 name=$KERNEL\$" "$n: the registered kernel"
	# instructions within the kernel symbol's size (the padding after it is not the kernel's)
	read -r addr size < <(llvm-readelf-19 -sW "$T/$n.orig.co" | awk -v k=$KERNEL '$8 == k && $4 == "FUNC" {print $2, $3; exit}')
	insns=$(llvm-objdump-19 -d --disassemble-symbols=$KERNEL "$T/$n.orig.co" |
		awk -v end=$((16#$addr + size)) 'match($0, /\/\/ [0-9A-F]+:/) {
			a = 0; h = substr($0, RSTART + 3, RLENGTH - 4)
			for (i = 1; i <= length(h); i++) a = a * 16 + index("0123456789ABCDEF", substr(h, i, 1)) - 1
			if (a < end) n++ } END {print n + 0}')
	expect "$E" "^instrument .* status=ok probes=block_sched .* target=gfx90a lines_in=$insns " \
		"$n: instrumented ($insns instructions as llvm-objdump-19 counts them)"
	[ "$(grep -c "^launch .* api=hipLaunchKernel .* probed=1 " "$E")" = 6 ] ||
		bad "$n: 6 probed hipLaunchKernel launches (<<<>>>, hipLaunchKernelGGL, hipLaunchKernel, 2 rounds)"
	[ "$(grep -c '^result ' "$E")" = 6 ] || bad "$n: 6 results"
	grep '^probe .*declined' "$E" && bad "$n: declined launches"
	# what the runtime was given: the app's own object, then the probed copy of it
	cmp -s "$sv/1.co" "$T/$n.orig.co" || bad "$n: the registered object is not the one the compiler built"
	"$NTOP" instrument -p block_sched -k $KERNEL --arch gfx90a:sramecc+:xnack- "$app" -o "$T/$n.ref.co" >/dev/null 2>&1 ||
		bad "$n: ntop instrument on the app failed"
	cmp -s "$sv/2.co" "$T/$n.ref.co" || bad "$n: the probed object loaded is not ntop instrument's of the app"
	llvm-readelf-19 -S "$sv/2.co" 2>&1 | grep -q ' \.ntop\.text ' || bad "$n: the probed object has no .ntop.text"
	r=$(ls "$tr/results" | sort -t- -k2 -n | head -1)
	d=$([ -n "$r" ] && "$DUMP" "$tr/results/$r")
	echo "$n: $(grep '^instrument' "$E" | cut -d' ' -f4-) / result: $d"
	echo "$d" | grep -Eq "kernel=$KERNEL .* units=16 records=16 dropped=0 .*blocks=4 version=5 warp=64 " ||
		bad "$n: result file: 16 wave64 records"

	"$NTOP" report "$tr" >"$T/rep" 2>&1 || bad "$n: report failed"
	expect "$T/rep" 'device 0: AMD fake gfx90a, gfx90a:sramecc\+:xnack-, 104 CUs' "$n: report: the device"
	expect "$T/rep" '^  \[1\] vecadd\(float\*, float const\*, float const\*, int\)$' "$n: report: the demangled kernel"
	expect "$T/rep" 'launches 6  grid 4,1,1  block 256,1,1' "$n: report: launches"
	expect "$T/rep" 'seq 6: No.block:4 Running:[0-9]+ Scheduling:[0-9]+' "$n: report: block_sched of the last launch"
	"$NTOP" export "$tr" -k vecadd --view timeline -o "$T/$n.png" >"$T/exp" 2>&1 || bad "$n: export: $(cat "$T/exp")"
	python3 - "$T/$n.png" <<'PY' || bad "$n: export: not a 1600x900 PNG"
import struct, sys
b = open(sys.argv[1], 'rb').read()
sys.exit(0 if b[:8] == b'\x89PNG\r\n\x1a\n' and struct.unpack('>II', b[16:24]) == (1600, 900) else 1)
PY
	expect "$T/exp" '4 blocks on 4 CUs' "$n: export: 4 blocks on 4 CUs"
}

# dmat_global's GCN version on the clang build: both time bases drawn (the
# fake fills one 24-byte record per work-item)
dmat_global() {
	local app=$T/app_clang tr=$T/tr_dg
	[ -x "$app" ] || return
	FAKEHIP_MAP=thread:24 "$NTOP" record -p dmat_global -o "$tr" -- "$app" 1 >"$T/out" 2>"$T/err" ||
		bad "dmat_global: record failed: $(tail -3 "$T/err")"
	expect "$tr/events.log" '^instrument .* status=ok probes=dmat_global .* target=gfx90a .* sites=3 ' \
		"dmat_global: instrumented (3 memory sites)"
	[ "$(grep -c '^result ' "$tr/events.log")" = 3 ] || bad "dmat_global: 3 results"
	"$NTOP" export "$tr" -k vecadd --view dmat --time global -o "$T/dg.png" >"$T/exp" 2>&1 ||
		bad "dmat_global: export: $(cat "$T/exp")"
	expect "$T/exp" '1024 accesses .* global time' "dmat_global: the heatmap in global time"
	"$NTOP" export "$tr" -k vecadd --view dmat -o "$T/dc.png" >"$T/exp" 2>&1 || bad "dmat_global: export: $(cat "$T/exp")"
	expect "$T/exp" '1024 accesses .* CU-cycle time' "dmat_global: the heatmap in CU cycles"
}

for n in "${builds[@]}"; do
	check "$n"
done
dmat_global
echo "built and recorded: ${builds[*]}"
[ $fail = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
