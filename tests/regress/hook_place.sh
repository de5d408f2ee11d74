#!/bin/bash
# Which form of a probed kernel the hook launches (engine.h: map addresses
# kept from the entry, or computed at each exit; hook_cuda_place.c), with the
# fake driver, whose register count charges FAKECUDA_ENTRY_REGS per map a
# copy keeps addresses for and whose occupancy follows registers x threads:
#  - the entry form costs no blocks per SM at 64 threads: it is launched;
#  - when it does (FAKECUDA_ENTRY_REGS=16: 38 registers, 26 blocks per SM
#    against the original's 32), the exit form is built, fits 32, and runs;
#  - when the exit form cannot be built, the entry form runs, with a warning.
# Every launch is probed and written in each case: the choice never costs a
# result. Plumbing only: what the forms cost on a GPU is in doc/performance.md.
source "$(dirname "$0")/hook_lib.inc"
BURST=$B/tests/fakecuda/app_burst
[ -x "$BURST" ] || { echo "app_burst not built"; exit 77; }

run() { # NAME [ENV=VAL...]
	local name=$1
	shift
	mkdir -p "$TMP/$name"
	env NTOP_TRACE_DIR=$TMP/$name NTOP_PROBES=$S/probes/block_sched.toml \
		NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR "$@" \
		"$BURST" "$PTX" 4 > "$TMP/$name.out" 9> "$TMP/$name.log"
	[ $? = 0 ] || fail "$name: app failed: $(tail -3 "$TMP/$name.out")"
	local got
	got=$(grep -c '^result ' "$TMP/$name.log")
	[ "$got" = 8 ] || fail "$name: $got results, want 8"
	grep -q '^probe .*status=declined' "$TMP/$name.log" && fail "$name: declined: $(grep declined "$TMP/$name.log" | head -1)"
	[ "$(grep -c '^instrument ' "$TMP/$name.log")" = 1 ] || fail "$name: want one instrument line"
}

run entry
expect "$TMP/entry.log" "^instrument .*status=ok .*regs_orig=20 regs_probed=26 addr=entry occ_orig=32 occ_probed=32( |$)" \
	"entry form kept: it costs no blocks per SM"

run cliff FAKECUDA_ENTRY_REGS=16
expect "$TMP/cliff.log" "^instrument .*status=ok .*regs_orig=20 regs_probed=22 addr=exit occ_orig=32 occ_probed=32( |$)" \
	"exit form launched where the entry form costs blocks per SM"

run noexit FAKECUDA_ENTRY_REGS=16 FAKECUDA_JIT_FAIL_EXIT_FORM=1
expect "$TMP/noexit.log" "^instrument .*status=ok .*regs_probed=38 addr=entry occ_orig=32 occ_probed=26( |$)" \
	"the exit form failed: the entry form runs, its cost shown"
expect "$TMP/noexit.log" "^warn .*map%20addresses%20at%20the%20exits%20failed%20\\(driver%20JIT%20failed.*launching%20the%20one%20that%20keeps%20them%20from%20the%20entry" \
	"the exit form's failure is said"

# 1-D launches get a copy that reads no y/z indices, others a general one:
# alternating 1-D and 2-D launches of one kernel build both and launch each
# only with its own shape (the fake driver fails a 1-D copy launched 2-D).
mkdir -p "$TMP/shapes"
NTOP_TRACE_DIR=$TMP/shapes NTOP_PROBES=$S/probes/block_sched.toml NTOP_EVENT_FD=9 NTOP_REAL_LIBCUDA=$FAKE \
	LD_LIBRARY_PATH=$HOOKDIR APP_BURST_SHAPES=2 "$BURST" "$PTX" 4 > "$TMP/shapes.out" 2>&1 9> "$TMP/shapes.log" ||
	fail "shapes: app failed: $(tail -3 "$TMP/shapes.out")"
[ "$(grep -c '^result ' "$TMP/shapes.log")" = 8 ] || fail "shapes: $(grep -c '^result ' "$TMP/shapes.log") results, want 8"
grep -q '^probe .*status=declined' "$TMP/shapes.log" && fail "shapes: declined: $(grep declined "$TMP/shapes.log" | head -1)"
expect "$TMP/shapes.log" "^instrument .*status=ok .* shape=1d( |$)" "1-D launches: the 1-D copy"
expect "$TMP/shapes.log" "^instrument .*status=ok .* shape=any( |$)" "2-D launches: the general copy"
[ "$(grep -c '^instrument ' "$TMP/shapes.log")" = 2 ] || fail "shapes: want two instrument lines"

[ "$fails" = 0 ] && echo "hook_place: ok"
exit $((fails > 0))
