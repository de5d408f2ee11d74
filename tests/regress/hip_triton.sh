#!/bin/bash
# Triton's own AMD launcher under ntop, over the ROCm-7-shaped HIP test
# double (tests/fakehip/runtime7/libamdhip64.so.7; plumbing only, no AMD
# GPU, no real ROCm). triton 3.9.0 from the venv ./setup.sh test makes
# (.cache/triton-3.9.0, or $NTOP_TRITON_VENV) runs tests/fakehip/triton_add.py
# with TRITON_LIBHIP_PATH at the test double and the torch stand-in
# (tests/fakehip/torch_stub) on PYTHONPATH: Triton compiles tt_add for the
# device the double reports (gfx90a, its bundled LLVM, offline), builds its
# launcher from its driver.c, and launches through hipGetProcAddress. The
# test double computes tt_add's sums itself (it runs no GPU code). Proven:
# alone, then under `ntop record -p block_sched` and `-p dmat`, the program's
# output and status are unchanged, both compiled objects are loaded,
# instrumented and every launch probed, the result files hold the records
# the launch shapes make, and `ntop report` reads them. Skips (77) without
# the venv (no network when set-up ran), Python's headers or llvm-19.
. "${NTOP_SOURCE_DIR:?}/tests/regress/tui_lib.inc"
B=${NTOP_BINARY_DIR:?}
S=${NTOP_SOURCE_DIR:?}
F=$B/tests/fakehip
R7=$F/runtime7/libamdhip64.so.7
DUMP=$B/tests/fakecuda/ntr_dump
V=${NTOP_TRITON_VENV:-$S/.cache/triton-3.9.0}
PY=$V/bin/python
skip() { echo "skip: $*"; exit 77; }
[ -f "$R7" ] && [ -f "$B/lib/ntop/libntop_hip.so" ] || { echo "FAIL: the HIP 6/7 hook or its test double not built"; exit 1; }
"$PY" -c 'import sys, triton; sys.exit(triton.__version__ != "3.9.0")' 2>/dev/null ||
	skip "triton 3.9.0 is not installed in $V (./setup.sh test installs it from PyPI; it could not, or was not run)"
"$PY" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(sysconfig.get_paths()["include"] + "/Python.h"))' ||
	skip "Python.h is missing (python3-dev): Triton cannot build its launcher"
command -v llvm-mc-19 >/dev/null && command -v llvm-objdump-19 >/dev/null ||
	skip "llvm-19 not installed (./setup.sh installs it)"
# expect FILE REGEX WHAT
expect() { grep -Eq -- "$2" "$1" || bad "$3 (no line matching '$2' in $(basename "$1"))"; }
export TRITON_LIBHIP_PATH=$R7 TRITON_CACHE_DIR=$T/cache TRITON_HOME=$T TRITON_DEFAULT_FP_FUSION=1
export PYTHONPATH=$S/tests/fakehip/torch_stub PYTHONDONTWRITEBYTECODE=1
# a sanitized test double and hook inside Python (not built with ASan) need the runtime first
asan=$(ldd "$R7" 2>/dev/null | sed -nE 's/.*libasan[^ ]* => ([^ ]+).*/\1/p' | head -1)
[ -n "$asan" ] && export LD_PRELOAD=$asan ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
PROG=$S/tests/fakehip/triton_add.py

# ---- the program alone: Triton compiles both kernels (cached for the rest) ----
"$PY" "$PROG" >"$T/plain" 2>"$T/plain.err"
rc=$?
[ $rc = 0 ] || { cat "$T/plain" "$T/plain.err"; echo "FAIL: triton_add alone: exit status $rc"; exit 1; }
cat "$T/plain"
expect "$T/plain" '^driver: HIPDriver, target hip gfx90a warp 64$' "alone: Triton's HIP driver on the double's gfx90a"
expect "$T/plain" '^triton_add: all correct$' "alone: every launch right"
[ "$(ls "$T"/cache/*/tt_add.hsaco 2>/dev/null | wc -l)" = 2 ] || bad "alone: two tt_add code objects compiled"

# record PROBE DIR: the program under ntop record, its output as alone
record() {
	"$NTOP" record -p "$1" -o "$T/$2" -- "$PY" "$PROG" >"$T/out" 2>"$T/err" ||
		bad "$1: exit status $?: $(tail -3 "$T/err")"
	cmp -s "$T/plain" "$T/out" || bad "$1: the program's output changed: $(diff "$T/plain" "$T/out" | head -5)"
	E=$T/$2/events.log
	expect "$E" "^hello .* driver=$R7\$" "$1: hello names the runtime Triton opened"
	[ "$(grep -c '^module .* api=hipModuleLoadDataEx kind=co .* co=1 ' "$E")" = 2 ] || bad "$1: 2 modules from Triton"
	[ "$(grep -c '^kernel .* name=tt_add$' "$E")" = 2 ] || bad "$1: tt_add listed twice (two objects)"
	[ "$(grep -c "^instrument .* status=ok probes=$1 .* target=gfx90a " "$E")" = 2 ] || bad "$1: both objects instrumented"
	[ "$(grep -c '^launch .* api=hipModuleLaunchKernel .* probed=1 ' "$E")" = 3 ] || bad "$1: 3 probed launches"
	[ "$(grep -c '^result ' "$E")" = 3 ] || bad "$1: 3 results"
}
# dump DIR N: result N (launch order) as ntr_dump prints it
dump() { "$DUMP" "$T/$1/results/$(ls "$T/$1/results" | sort -t- -k2 -n | sed -n "$2p")"; }

# ---- block_sched: one record per wave (256 work-items = 4 wave64 per block) ----
record block_sched bs
for i in 1 2 3; do
	d=$(dump bs $i)
	echo "block_sched result $i: $d"
	case $i in 3) want='units=32 records=32 .*blocks=8 ' ;; *) want='units=16 records=16 .*blocks=4 ' ;; esac
	echo "$d" | grep -Eq "kernel=tt_add .*${want}.*warp=64 " || bad "block_sched result $i: want $want"
done
"$NTOP" report "$T/bs" >"$T/rep" 2>&1 || bad "report failed: $(tail -3 "$T/rep")"
expect "$T/rep" 'device 0: AMD fake gfx90a, gfx90a:sramecc\+:xnack-, 104 CUs' "report: the device"
expect "$T/rep" 'tt_add' "report: the kernel"
expect "$T/rep" 'probed: yes \(block_sched\)' "report: tt_add probed"

# ---- dmat: Triton's buffer loads and store traced per work-item ----
export FAKEHIP_MAP=thread:16
record dmat dm
grep -E "^instrument .* probes=dmat " "$T/dm/events.log" | grep -Evq ' sites=3 sites_no_addr=0 ' &&
	bad "dmat: 3 memory sites per object (2 buffer loads, 1 buffer store), each with its address"
for i in 1 3; do
	d=$(dump dm $i)
	echo "dmat result $i: $d"
	want='units=1024 records=1024 dropped=0 '
	[ $i = 3 ] && want='units=2048 records=2048 dropped=0 '
	echo "$d" | grep -Eq "kernel=tt_add .*$want" || bad "dmat result $i: want $want"
done
"$NTOP" report "$T/dm" >"$T/rep" 2>&1 || bad "dmat: report failed: $(tail -3 "$T/rep")"
expect "$T/rep" 'probed: yes \(dmat\)' "dmat: report: tt_add probed"
[ $fail = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
