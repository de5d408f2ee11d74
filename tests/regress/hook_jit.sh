#!/bin/bash
# NVRTC and nvJitLink (plumbing, with test doubles that make a cubin out of
# the PTX they are given): under `ntop record -p block_sched` the launcher
# puts the stand-ins (lib/ntop/nvrtc, lib/ntop/nvjitlink) on the search path
# because it finds a real library for each ($NTOP_REAL_LIBNVRTC...), the app
# (linked against the toolkit's libraries, versioned symbols) reaches them,
# they hand the cubin and its PTX to the driver stand-in, and the module the
# driver loads from that cubin is probed from the PTX (source=nvrtc /
# nvjitlink, ptx=1, instrument ok, one result per launch). Without a real
# library to forward to, no stand-in is put there, and the kernel says why it
# has no PTX, naming every source looked at. The stand-ins' exports equal the
# toolkit libraries', versioned alike.
source "$(dirname "$0")/hook_lib.inc"
NTOP=$B/bin/ntop
JIT=$B/tests/fakecuda/app_jit
[ -x "$NTOP" ] && [ -x "$JIT" ] || { echo "ntop or app_jit not built"; exit 77; }
export NTOP_HOOK_DIR=$HOOKDIR NTOP_REAL_LIBCUDA=$FAKE
FNVRTC=$(ls "$B"/tests/fakecuda/jit/nvrtc/libnvrtc.so.* | grep -v '\.so$' | head -1)
FNJL=$(ls "$B"/tests/fakecuda/jit/nvjitlink/libnvJitLink.so.* | grep -v '\.so$' | head -1)

# nvjitlink-lto: the input is (the fake's) LTO-IR, as Numba gives it; the
# stand-in links it again with -ptx for the PTX
for j in nvrtc nvjitlink nvjitlink-lto; do
	NTOP_LOG=$TMP/$j.log NTOP_REAL_LIBNVRTC=$FNVRTC NTOP_REAL_LIBNVJITLINK=$FNJL "$NTOP" record -o "$TMP/$j" \
		-p block_sched -- "$JIT" "$j" "$PTX" 3 > "$TMP/$j.out" 2> "$TMP/$j.err" ||
		fail "$j: exit $?: $(cat "$TMP/$j.out")"
	expect "$TMP/$j.out" "^app_jit $j: 3 launches, 0 failures$" "$j: app output"
	E=$TMP/$j/events.log
	expect "$E" "^module .*api=cuModuleLoadData kind=cubin .*ptx=1 .*source=${j%-lto}" "$j: cubin tied to its PTX"
	expect "$E" "^kernel .*ptx=1 name=fill$" "$j: kernel with PTX"
	expect "$E" "^instrument .*status=ok probes=block_sched" "$j: instrumented from the PTX"
	[ "$(grep -c '^result ' "$E")" = 3 ] || fail "$j: $(grep -c '^result ' "$E") results, want 3"
	grep -q '^probe .*status=declined' "$E" && fail "$j: declined: $(grep '^probe .*declined' "$E" | head -1)"
done
expect "$TMP/nvjitlink-lto.log" "nvjitlink: link .*: input type 3, [0-9]+ bytes, rc 0: LTO-IR kept" "lto: input kept"
expect "$TMP/nvjitlink-lto.log" "nvjitlink: link .*: PTX of its LTO-IR: made" "lto: PTX made by a relink"
expect "$TMP/nvjitlink.log" "nvjitlink: link .*: cubin of [0-9]+ bytes taken, handed over with its PTX" \
	"nvjitlink: cubin handed over"

# no real library: no stand-in on the search path (the app reaches the
# double directly here), the kernel says what was looked at
LD_LIBRARY_PATH=$(dirname "$FNVRTC") NTOP_REAL_LIBNVRTC=$TMP/none/libnvrtc.so.13 NTOP_REAL_LIBNVJITLINK=$TMP/none/x \
	"$NTOP" record -o "$TMP/bare" -p block_sched -- "$JIT" nvrtc "$PTX" 1 > "$TMP/bare.out" 2>&1 ||
	fail "bare: $(cat "$TMP/bare.out")"
E=$TMP/bare/events.log
expect "$E" "^kernel .*ptx=0 reason=SASS%20only:%20the%20cubin%20has%20no%20PTX;%20looked%20for%20it%20in:%20cuLink" \
	"bare: SASS only with the sources looked at"
expect "$E" "nvrtc:%20not%20watched%20\\(ntop%20found%20no%20real%20libnvrtc%20to" "bare: NVRTC not watched, and why"
expect "$E" "no%20cubin%20of%20the%20[0-9]+%20loaded%20bytes%20in%20the%20Triton%20caches" "bare: Triton caches named"

# exports: the toolkit's names, versioned like the real libraries
for lib in nvrtc/libnvrtc nvjitlink/libnvJitLink; do
	list=$S/src/jit/$(basename "$(dirname "$lib")")_exports.txt
	real=$(ls /usr/local/cuda/lib64/"$(basename "$lib")".so.* 2>/dev/null | grep -v alt | head -1)
	if [ -n "$real" ]; then
		nm -D --defined-only "$real" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort -u > "$TMP/real.txt"
		diff "$list" "$TMP/real.txt" > /dev/null || fail "$list differs from $real"
	fi
	so=$(ls "$HOOKDIR/$lib".so.* | head -1)
	nm -D --defined-only "$so" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort -u > "$TMP/got.txt"
	(cat "$list"; echo ntop_hook_marker) | sort -u > "$TMP/want.txt"
	diff "$TMP/want.txt" "$TMP/got.txt" > /dev/null || fail "$so exports: $(diff "$TMP/want.txt" "$TMP/got.txt" | head -3)"
	nm -D --defined-only "$so" | grep -q "nvrtcCompileProgram@@libnvrtc.so\|nvJitLinkCreate@@libnvJitLink.so" ||
		fail "$so: symbols not versioned"
done

[ "$fails" = 0 ] && echo "hook_jit: ok"
exit $((fails > 0))
