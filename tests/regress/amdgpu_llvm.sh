#!/bin/bash
# ntop's AMDGPU decoders held against LLVM 19's own tools on every code
# object of the corpus (tests/corpus/amdgpu) and, when installed, of
# Debian's rocRAND: the metadata tree equals llvm-readelf --notes (every key
# and value, in order), every descriptor field we decode equals
# llvm-objdump's .amdhsa_* line for it, and e_flags read the same as
# llvm-readelf -h. Skips (77) without llvm-readelf-19/llvm-objdump-19.
set -u
BIN="${NTOP_BINARY_DIR:?}"
SRC="${NTOP_SOURCE_DIR:?}"
DUMP="$BIN/tests/amdgpu/amdgpu_dump"
READELF=$(command -v llvm-readelf-19 || true)
OBJDUMP=$(command -v llvm-objdump-19 || true)
[ -x "$DUMP" ] || { echo "FAIL: $DUMP not built"; exit 1; }
[ -n "$READELF" ] && [ -n "$OBJDUMP" ] || { echo "skip: llvm-19 not installed (./setup.sh installs it)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 objects=0
bad() { echo "FAIL: $*"; fail=1; }
. "$SRC/tests/regress/amdgpu_lib.inc"

check_object() { # file label
	local co=$1 label=$2
	objects=$((objects + 1))
	amdgpu_check_notes "$co" "$label"
	# e_flags
	local ours theirs
	ours=$("$DUMP" flags "$co")
	theirs=$("$READELF" -h "$co" | sed -n 's/^ *Flags: *//p')
	[ "$ours" = "$theirs" ] || bad "$label: e_flags '$ours', llvm-readelf '$theirs'"
	amdgpu_check_kd "$co" "$label"
}

check_file() { # image
	local img=$1 n id
	mkdir -p "$T/x"
	rm -f "$T"/x/*
	"$DUMP" extract "$img" "$T/x" >"$T/ids" 2>"$T/err" || { bad "$(basename "$img"): extract: $(cat "$T/err")"; return; }
	while read -r n id; do
		check_object "$T/x/$n.co" "$(basename "$img") $id"
	done <"$T/ids"
}

for img in "$SRC"/tests/corpus/amdgpu/*.hipfb "$SRC"/tests/corpus/amdgpu/*.co "$SRC"/tests/corpus/amdgpu/*.so \
	"$SRC"/tests/corpus/amdgpu/*.hsaco; do
	check_file "$img"
done
corpus_objects=$objects
[ "$corpus_objects" -ge 30 ] || bad "only $corpus_objects corpus objects checked"
ROCRAND=/usr/lib/x86_64-linux-gnu/librocrand.so.1
if [ -f "$ROCRAND" ]; then
	check_file "$ROCRAND"
else
	echo "note: $ROCRAND not installed: rocRAND not compared"
fi
[ "$kds" -ge 40 ] || bad "only $kds descriptors compared"
echo "compared $objects objects ($corpus_objects from the corpus): $notes_lines metadata lines," \
	"$kds descriptors ($kd_lines lines); llvm-objdump could not decode $undecoded descriptors" \
	"(gfx10+ SGPR granule bits) and crashed before $unprinted"
[ $fail = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
