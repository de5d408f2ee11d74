#!/bin/bash
# Function attributes on probed copies (without them, kernels with more than
# 48 KB of dynamic shared memory were declined, "probed launch failed (CUDA
# error 1)"). The fake driver, like the GPU, refuses a launch with more than
# 48 KB unless the launched function's MAX_DYNAMIC_SHARED_SIZE_BYTES allows
# it; app_attr sets attributes through every setter (cuFuncSetAttribute,
# cuKernelSetAttribute on a library CUkernel, cuFuncSetAttribute given a
# CUkernel, cuFuncSetCacheConfig, cuKernelSetCacheConfig,
# cuFuncSetSharedMemConfig), raises the limit after the probed copy exists,
# and sets some behind the hook's back; under `ntop record -p block_sched`
# each case is probed (a result file, nothing declined) and the fake reports
# every attribute the app set on the copy it launched. FAKECUDA_KERNEL_ATTR=
# strict: cuFuncGetAttribute refuses a CUkernel, as the real driver does.
source "$(dirname "$0")/hook_lib.inc"
NTOP=$B/bin/ntop
ATTR=$B/tests/fakecuda/app_attr
[ -x "$NTOP" ] && [ -x "$ATTR" ] || { echo "ntop or app_attr not built"; exit 77; }
export NTOP_HOOK_DIR=$HOOKDIR NTOP_REAL_LIBCUDA=$FAKE FAKECUDA_STRICT_CTX=1 FAKECUDA_KERNEL_ATTR=strict

# the fake models the GPU: 64 KB without the attribute fails with error 1,
# alone and under the hook (the app sees what it would without ntop)
LD_LIBRARY_PATH=$(dirname "$FAKE") "$ATTR" "$PTX" control >"$TMP/control.out" 2>&1 ||
	fail "control: $(cat "$TMP/control.out")"
"$NTOP" record -o "$TMP/control" -p block_sched -- "$ATTR" "$PTX" control >"$TMP/control-hook.out" 2>&1 ||
	fail "control under the hook: $(head -3 "$TMP/control-hook.out")"
expect "$TMP/control-hook.out" "^control: 64 KB without the attribute -> 1$" "control under the hook: error 1"

"$NTOP" record -o "$TMP/attr" -p block_sched -- "$ATTR" "$PTX" >"$TMP/attr.out" 2>"$TMP/attr.err" ||
	fail "app_attr: exit $?: $(grep FAIL "$TMP/attr.out" | head -3) $(grep -v '^ntop:' "$TMP/attr.err" | head -2)"
for c in func raise kernel kfunc unseen unseen_kernel; do
	expect "$TMP/attr.out" "^$c probed=1 .* ok$" "$c: probed with every attribute on the copy"
done
E=$TMP/attr/events.log
grep -q '^probe .*status=declined' "$E" && fail "declined: $(grep '^probe .*declined' "$E" | head -2)"
got=$(grep -c '^result ' "$E")
[ "$got" = 6 ] || fail "$got results, want 6"

[ "$fails" = 0 ] && echo "hook_attr: ok"
exit $((fails > 0))
