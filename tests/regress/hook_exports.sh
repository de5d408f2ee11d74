#!/bin/bash
# The checked-in export list equals the toolkit stub's exports, and the hook
# exports exactly those names plus its marker and the entry the NVRTC and
# nvJitLink stand-ins hand their outputs to (-fvisibility=hidden).
source "$(dirname "$0")/hook_lib.inc"
LIST=$S/src/hook/cuda/cuda_exports.txt
STUB=${CUDA_STUB:-/usr/local/cuda/lib64/stubs/libcuda.so}
command -v nm > /dev/null || exit 77
if [ -f "$STUB" ]; then
	nm -D --defined-only "$STUB" | awk '{print $3}' | sort -u > "$TMP/stub.txt"
	diff "$LIST" "$TMP/stub.txt" > "$TMP/diff.txt" || { fail "cuda_exports.txt differs from $STUB"; cat "$TMP/diff.txt"; }
fi
nm -D --defined-only "$HOOKDIR/libcuda.so.1" | awk '{print $3}' | sort -u > "$TMP/hook.txt"
(cat "$LIST"; echo ntop_hook_marker; echo ntop_hook_jit_output; echo ntop_hook_jit_note) | sort -u > "$TMP/want.txt"
diff "$TMP/want.txt" "$TMP/hook.txt" > "$TMP/diff2.txt" || { fail "hook exports differ"; head -20 "$TMP/diff2.txt"; }
readelf -d "$HOOKDIR/libcuda.so.1" | grep -q 'SONAME.*\[libcuda.so.1\]' || fail "SONAME is not libcuda.so.1"
exit $((fails != 0))
