#!/bin/bash
# The HIP test double alone (tests/fakehip, no ntop): app_hip, linked
# against the fake libamdhip64.so.5, launches vecadd through every entry
# point ntop's HIP stand-in hooks and checks each sum the fake computed on
# the CPU; on gfx90a (wave64) and gfx1100 (wave32) devices. The fake reads
# the corpus' compressed bundles (libhipvec.so's .hip_fatbin) and a plain
# bundle. A launch with arguments that do not fit the kernel's kernarg
# segment fails, and the fake's exports are versioned like HIP 5.2.3's.
set -u
BIN="${NTOP_BINARY_DIR:?}"
SRC="${NTOP_SOURCE_DIR:?}"
F="$BIN/tests/fakehip"
C="$SRC/tests/corpus/amdgpu"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
[ -x "$F/app_hip" ] && [ -f "$F/runtime/libamdhip64.so.5" ] || { echo "FAIL: fakehip not built"; exit 1; }
for arch in "gfx90a:sramecc+:xnack-" gfx1100; do
	out=$(FAKEHIP_ARCH=$arch LD_LIBRARY_PATH="$F/runtime" "$F/app_hip" "$C/libhipvec.so" "$C/vecadd.hipfb" 2 2>&1)
	rc=$?
	echo "$arch: $out"
	[ $rc = 0 ] || bad "$arch: app_hip exited $rc"
	echo "$out" | grep -qx "app_hip: 16 launches, all correct" || bad "$arch: not every launch computed vecadd"
done
# no code object for the device: the module load fails, the app says so
out=$(FAKEHIP_ARCH=gfx942 LD_LIBRARY_PATH="$F/runtime" "$F/app_hip" "$C/libhipvec.so" "$C/vecadd.gfx90a.co" 2>&1)
[ $? = 1 ] && echo "$out" | grep -q "cannot load" || bad "gfx942 device given a gfx90a object: $out"
# the app's references carry HIP's symbol versions
readelf -V "$F/app_hip" | grep -q "Name: hip_4.2" || bad "app_hip has no hip_4.2 version reference"
readelf --dyn-syms -W "$F/runtime/libamdhip64.so.5" | grep -q "hipGraphLaunch@@hip_4.3" || bad "fake: hipGraphLaunch is not hip_4.3"
[ $fail = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
