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
fail=0 objects=0 kds=0 kd_lines=0 notes_lines=0 undecoded=0 unprinted=0
bad() { echo "FAIL: $*"; fail=1; }

# readelf's YAML flattened the way amdgpu_dump notes prints the tree:
# "key: value" per scalar, "key:" per container, "value" per array item.
flatten_yaml() {
	sed -n '/^        ---$/,/^\.\.\.$/p' | sed '1d;$d' |
		sed -E 's/^[[:space:]]*(- )*//; s/:[[:space:]]+/: /; s/^'"'"'(.*)'"'"'$/\1/; s/: '"'"'(.*)'"'"'$/: \1/'
}

check_object() { # file label
	local co=$1 label=$2
	objects=$((objects + 1))
	# metadata: the whole tree, in order
	"$DUMP" notes "$co" >"$T/ours.notes" 2>"$T/err" || { bad "$label: notes: $(cat "$T/err")"; return; }
	"$READELF" --notes "$co" | flatten_yaml >"$T/theirs.notes"
	if ! cmp -s "$T/ours.notes" "$T/theirs.notes"; then
		bad "$label: metadata differs from llvm-readelf --notes:"
		diff "$T/ours.notes" "$T/theirs.notes" | head -10
	fi
	notes_lines=$((notes_lines + $(wc -l <"$T/ours.notes")))
	# e_flags
	local ours theirs
	ours=$("$DUMP" flags "$co")
	theirs=$("$READELF" -h "$co" | sed -n 's/^ *Flags: *//p')
	[ "$ours" = "$theirs" ] || bad "$label: e_flags '$ours', llvm-readelf '$theirs'"
	# descriptors: each line we print must be llvm-objdump's line for that kernel
	"$DUMP" kd "$co" >"$T/ours.kd" || { bad "$label: kd failed"; return; }
	# (llvm-objdump 19 crashes on rocRAND's older objects after printing
	# every descriptor: what it printed is still compared, kernel by kernel)
	local rc
	{ "$OBJDUMP" -D -j .rodata "$co" >"$T/theirs.kd" 2>&1; } 2>/dev/null
	rc=$?
	if grep -q '^; error decoding' "$T/theirs.kd"; then
		# LLVM 19's disassembler refuses gfx12 descriptors that its own
		# assembler writes (SGPR granule bits set on gfx10+): nothing to hold ours against
		undecoded=$((undecoded + $(grep -c '^; error decoding' "$T/theirs.kd")))
		return
	fi
	awk -v out="$T/k" '/^\.amdhsa_kernel /{n++} n{print > (out "." n)} /^\.end_amdhsa_kernel/{close(out "." n)}' \
		"$T/ours.kd"
	local f name theirs_block missing
	for f in "$T"/k.*; do
		name=$(head -1 "$f" | cut -d' ' -f2)
		awk -v k="$name" '$0 == ".amdhsa_kernel " k {p=1} p{print} /^\.end_amdhsa_kernel/{p=0}' \
			"$T/theirs.kd" >"$T/theirs.block"
		if [ ! -s "$T/theirs.block" ]; then
			[ "$rc" = 0 ] && bad "$label kernel $name: llvm-objdump printed no descriptor for it"
			unprinted=$((unprinted + 1))
			continue
		fi
		missing=$(grep -vxF -f "$T/theirs.block" "$f")
		[ -z "$missing" ] || bad "$label kernel $name: descriptor lines llvm-objdump does not print: $missing"
		kds=$((kds + 1))
		kd_lines=$((kd_lines + $(wc -l <"$f")))
	done
	rm -f "$T"/k.*
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

for img in "$SRC"/tests/corpus/amdgpu/*.hipfb "$SRC"/tests/corpus/amdgpu/*.co "$SRC"/tests/corpus/amdgpu/*.so; do
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
