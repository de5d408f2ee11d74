#!/bin/bash
# -rdc builds: the fatbin the runtime loads holds SASS only; the PTX of each
# translation unit sits in the executable's __nv_relfatbin (app_rdc embeds
# both, from tests/corpus/images). Under `ntop record -p block_sched` the
# module gets that PTX (source=rdc), each kernel is instrumented from its
# translation unit's PTX (rdc_cross, which calls a device function of the
# other unit, linked with that unit: the fake's JIT, like the real one,
# refuses an unresolved extern function) and every launch is probed. The
# same image copied to the heap lies in no ELF: SASS only, and the reason
# says so.
source "$(dirname "$0")/hook_lib.inc"
NTOP=$B/bin/ntop
RDC=$B/tests/fakecuda/app_rdc
[ -x "$NTOP" ] && [ -x "$RDC" ] || { echo "ntop or app_rdc not built"; exit 77; }
export NTOP_HOOK_DIR=$HOOKDIR NTOP_REAL_LIBCUDA=$FAKE

"$NTOP" record -o "$TMP/rdc" -p block_sched -- "$RDC" 3 > "$TMP/rdc.out" 2>&1 || fail "rdc: $(cat "$TMP/rdc.out")"
expect "$TMP/rdc.out" "^app_rdc: 3 launches, 0 failures$" "rdc: app output"
E=$TMP/rdc/events.log
expect "$E" "^module .*kind=fatbin .*ptx=2 sass=1 source=rdc" "rdc: the relocatable fatbins' PTX entries"
for k in _Z9rdc_scalePffi _Z9rdc_crossPfi; do
	kid=$(grep "^kernel .*ptx=1 name=$k$" "$E" | sed 's/.* kid=\([0-9]*\) .*/\1/')
	[ -n "$kid" ] || fail "rdc: $k without PTX"
	expect "$E" "^instrument .*kid=$kid status=ok probes=block_sched" "rdc: $k instrumented"
	[ "$(grep -c "^result .*kid=$kid " "$E")" = 3 ] || fail "rdc: $k: $(grep -c "^result .*kid=$kid " "$E") results, want 3"
done

"$NTOP" record -o "$TMP/heap" -p block_sched -- "$RDC" 1 heap > "$TMP/heap.out" 2>&1 || fail "heap: $(cat "$TMP/heap.out")"
E=$TMP/heap/events.log
expect "$E" "^kernel .*ptx=0 reason=SASS%20only:%20the%20image%20has%20no%20PTX;.*the%20image%20lies%20in%20no%20loaded%20executable" \
	"heap: SASS only, no ELF around it"
expect "$E" "^probe .*status=declined" "heap: declined"

[ "$fails" = 0 ] && echo "hook_rdc: ok"
exit $((fails > 0))
