#!/bin/bash
# The hook never breaks the app: a probe the verifier rejects runs the
# original kernel and says why; a missing real driver returns errors (no
# crash) and a warn line; the driver search skips the hook itself and a copy
# of it on LD_LIBRARY_PATH; nothing is written to the app's stdout/stderr.
source "$(dirname "$0")/hook_lib.inc"

LD_LIBRARY_PATH=$(dirname "$FAKE") "$APP" "$PTX" 3 > "$TMP/base.out" 2>&1

# 1. Probe rejected by the verifier.
NTOP_PROBES=$S/tests/fakecuda/bad_probe.toml NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE \
	LD_LIBRARY_PATH=$HOOKDIR "$APP" "$PTX" 3 > "$TMP/bad.out" 2>&1 9> "$TMP/bad.log"
rc=$?
[ $rc = 3 ] || fail "bad probe: exit code $rc"
cmp -s "$TMP/base.out" "$TMP/bad.out" || fail "bad probe: app output changed"
expect "$TMP/bad.log" "^warn .*msg=probe%20.*bad_probe.toml%20rejected" "rejected probe reported"
expect "$TMP/bad.log" "^probe .*kid=1 .*status=declined reason=.*bad_probe.toml" "declined with the verifier's reason"
grep -q '^launch .*probed=1' "$TMP/bad.log" && fail "bad probe: a launch was probed"
grep -q '^result ' "$TMP/bad.log" && fail "bad probe: results written"

# 2. No real driver: errors, not a crash; a warn line says why.
NTOP_REAL_LIBCUDA=$TMP/missing/libcuda.so.1 NTOP_EVENT_FD=9 LD_LIBRARY_PATH=$HOOKDIR \
	"$APP" "$PTX" 3 > "$TMP/nodrv.out" 2>&1 9> "$TMP/nodrv.log"
rc=$?
[ $rc -lt 128 ] || fail "no driver: app died with signal $((rc - 128))"
grep -q "cuInit failed: 100" "$TMP/nodrv.out" || fail "no driver: cuInit did not return CUDA_ERROR_NO_DEVICE: $(cat "$TMP/nodrv.out")"
expect "$TMP/nodrv.log" "^hello .*driver=none" "no driver: hello"
expect "$TMP/nodrv.log" "^warn .*msg=no%20real%20CUDA%20driver" "no driver: warn"

# 3. Search order: hook dir first, then a copy of the hook, then the fake.
mkdir -p "$TMP/copy" "$TMP/drv"
cp "$HOOKDIR/libcuda.so.1" "$TMP/copy/libcuda.so.1"
cp "$FAKE" "$TMP/drv/libcuda.so.1"
env -u NTOP_REAL_LIBCUDA NTOP_EVENT_FD=9 NTOP_LOG=$TMP/search.txt \
	LD_LIBRARY_PATH=$HOOKDIR:$TMP/copy:$TMP/drv "$APP" "$PTX" 3 > "$TMP/search.out" 2>&1 9> "$TMP/search.log"
rc=$?
[ $rc = 3 ] || fail "search: exit code $rc: $(cat "$TMP/search.out")"
expect "$TMP/search.log" "^hello .*driver=$TMP/drv/libcuda.so.1" "search picked the driver"
[ "$(grep -c '^hello' "$TMP/search.log")" = 2 ] || fail "search: a copy of the hook ran its constructor"
cmp -s "$TMP/base.out" "$TMP/search.out" || fail "search: app output changed"
exit $((fails != 0))
