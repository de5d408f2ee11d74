#!/bin/bash
# The live UI with probed copies built off the app's threads (the default:
# NTOP_PROBE_ASYNC unset), over the fake driver with a 1 s JIT
# (FAKECUDA_JIT_DELAY_MS): a probe picked on fill says in the log that the
# copy is being built and launches run unprobed meanwhile, the request is
# not marked failed, launches then come probed, and the launches view says
# how many ran unprobed while the copy was built.
. "$(dirname "$0")/tui_app.inc"
fresh 100 30
tm send-keys -t "$UI" "clear; unset NTOP_PROBE_ASYNC; FAKECUDA_JIT_DELAY_MS=1000 $NTOP -o $TMP/s -- $LOOP $PTX $TMP/stop 60; echo NTOP-EXIT=\$?" Enter
wait_for ' fill *$' || fail "fill not listed: $(screen)"
keys / f i l l Enter g
keys p
wait_for 'probes for fill' || fail "probe picker: $(screen)"
keys Tab Enter # every launch, block_sched
keys L
wait_for 'building the probed copy of fill off the app.s threads: launch [0-9]+ and those' || fail "log: $(screen | tail -8)"
keys L
wait_for 'probed [0-9]+' 15 || fail "no probed launch: $(screen | grep fill)"
screen | grep ' fill *$' | grep -q 'failed' && fail "the request marked failed: $(screen | grep fill)"
grep -q '^probe .*status=deferred' "$TMP/s/events.log" || fail "no deferred line in events.log"
keys Enter
wait_for 'launch(es)? ran unprobed while the probed copy was built; the first probed launch is the first row' ||
	fail "launches view: $(screen | head -8)"
keys q
touch "$TMP/stop"
wait_for 'exited with status 0' 20 || fail "exit: $(screen | tail -2)"
keys q
wait_for 'NTOP-EXIT=0' || fail "ntop exit: $(screen | tail -3)"
tui_app_done tui_probe_async
