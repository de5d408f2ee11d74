#!/bin/bash
# Every code object in Debian's ROCm libraries, when installed (librocrand1:
# setup.sh installs it; librocsparse0, 1.3 GB, only if someone did): all
# bundles found, every object opened, every kernel's descriptor agrees with
# its metadata, every metadata note written back byte-identical. Prints the
# counts. Skips (77) when neither library is there.
set -u
DUMP="${NTOP_BINARY_DIR:?}/tests/amdgpu/amdgpu_dump"
[ -x "$DUMP" ] || { echo "FAIL: $DUMP not built"; exit 1; }
libs=()
for l in /usr/lib/x86_64-linux-gnu/librocrand.so.1 /usr/lib/x86_64-linux-gnu/librocsparse.so.0; do
	[ -f "$l" ] && libs+=("$l")
done
[ ${#libs[@]} -gt 0 ] || { echo "skip: neither librocrand1 nor librocsparse0 installed"; exit 77; }
out=$("$DUMP" summary "${libs[@]}")
rc=$?
echo "$out"
fail=0
[ $rc = 0 ] || { echo "FAIL: amdgpu_dump summary exit $rc"; fail=1; }
# each library: at least one bundle and one kernel, nothing failed
for l in "${libs[@]}"; do
	echo "$out" | grep -Eq "^$l: [1-9][0-9]* bundles, [1-9][0-9]* objects, [1-9][0-9]* kernels, 0 failed" ||
		{ echo "FAIL: $l not fully read"; fail=1; }
done
[ $fail = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
