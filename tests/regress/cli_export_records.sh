#!/bin/bash
# ntop export --view records end to end without a GPU: the synthetic trace of
# test_export_records --write-fixture (a dmat launch whose accesses are known,
# one thread past the cap of 64) exported to CSV and compared with the known
# accesses by tests/gpu/check_dmat.py, as tests/gpu/dmat_accuracy.sh does on
# the GPU; then a corrupted copy must fail the right checks; then the error
# paths and --help; last tests/gpu/dmat_accuracy.sh itself, with a stand-in
# for the GPU app. (test_export_records checks the CSV line by line.)
set -u
NTOP="${NTOP_BINARY_DIR:?}/bin/ntop"
FIX="${NTOP_BINARY_DIR}/bin/test_export_records"
CHECK="${NTOP_SOURCE_DIR:?}/tests/gpu/check_dmat.py"
[ -x "$NTOP" ] || { echo "FAIL: $NTOP not built"; exit 1; }
[ -x "$FIX" ] || { echo "skip: test_export_records (the fixture writer) not built"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$FIX" --write-fixture "$T/trace" || { echo "FAIL: could not write the fixture"; exit 1; }
mkdir "$T/rec"
out=$("$NTOP" export "$T/trace" -k dm_copy --view records -o "$T/rec/dm_copy.csv" 2>&1)
[ $? = 0 ] || bad "export: $out"
echo "$out" | grep -q "^wrote $T/rec/dm_copy.csv: 193 records of 19 units, map dmat (launch seq 1), 6 dropped past the cap of 64$" \
	|| bad "summary: $out"
"$NTOP" report "$T/trace" --json >"$T/report.json" || bad "report --json"

out=$(python3 "$CHECK" check --expected "$T/trace/expected.csv" --records-dir "$T/rec" --report "$T/report.json" 2>&1)
[ $? = 0 ] || bad "check_dmat on a faithful export: $out"
for c in threads addresses order sizes kinds slots clock cap dropped; do
	echo "$out" | grep -q "^PASS dm_copy $c: " || bad "no PASS line for $c: $out"
done
echo "$out" | grep -q "^PASS dm_copy dropped: report says 6, expected 6$" || bad "dropped line: $out"
echo "$out" | grep -Eq '^dm_copy +19 +193 +193 +100\.00 +ok +ok +6/6$' || bad "table row: $out"

# one address changed: addresses and order fail, the rest still pass
cp -r "$T/rec" "$T/rec2"
sed -i '5s/,0x7f000000\([0-9a-f]*\),/,0x7f100000\1,/' "$T/rec2/dm_copy.csv"
cmp -s "$T/rec/dm_copy.csv" "$T/rec2/dm_copy.csv" && bad "the sed did not change the CSV"
out=$(python3 "$CHECK" check --expected "$T/trace/expected.csv" --records-dir "$T/rec2" --report "$T/report.json" 2>&1)
[ $? = 1 ] || bad "a wrong address should exit 1: $out"
echo "$out" | grep -q "^FAIL dm_copy addresses: 1 threads wrong" || bad "address FAIL line: $out"
echo "$out" | grep -q "^FAIL dm_copy order: " || bad "order FAIL line: $out"
echo "$out" | grep -q "^PASS dm_copy clock: " || bad "clock should still pass: $out"
echo "$out" | grep -q "1 kernels, 2 FAIL checks" || bad "FAIL count: $out"
# a missing records file fails
rm "$T/rec2/dm_copy.csv"
out=$(python3 "$CHECK" check --expected "$T/trace/expected.csv" --records-dir "$T/rec2" 2>&1)
[ $? = 1 ] && echo "$out" | grep -q "^FAIL dm_copy records: cannot read" || bad "missing file: $out"

# the other maps: --map, stdout
out=$("$NTOP" export "$T/trace" -k multi --view records --map raw -o - 2>"$T/err")
[ $? = 0 ] || bad "--map raw to stdout: $(cat "$T/err")"
[ "$out" = "$(printf 'block,thread,unit,slot,raw\n0,7,7,0,0102030405060708\n0,9,9,0,f0f1f2f3f4f5f6f7')" ] || bad "raw CSV: $out"
grep -q "^wrote stdout: 2 records of 2 units, map raw" "$T/err" || bad "stdout summary: $(cat "$T/err")"

# errors
expect() { # rc pattern args...
	local want=$1 pat=$2
	shift 2
	out=$("$NTOP" export "$@" 2>&1)
	local rc=$?
	[ "$rc" = "$want" ] || bad "'$*' exited $rc, want $want: $out"
	echo "$out" | grep -q -- "$pat" || bad "'$*' should say '$pat': $out"
}
expect 2 "no map 'nope' to export" "$T/trace" -k multi --view records --map nope -o "$T/x.csv"
expect 2 "maps: w raw" "$T/trace" -k multi --view records --map nope -o "$T/x.csv"
expect 2 "--map is for --view records" "$T/trace" -k multi --map raw -o "$T/x.png"
expect 2 "are for PNGs" "$T/trace" -k multi --view records --width 800 -o "$T/x.csv"
expect 2 "does not apply" "$T/trace" -k multi --view records --time sm -o "$T/x.csv"
out=$(cd "$T" && "$NTOP" export trace -k multi --view records 2>&1)
echo "$out" | grep -q '^wrote multi-k2-p700-2-records.csv: 12 records' && [ -s "$T/multi-k2-p700-2-records.csv" ] ||
	bad "default file name: $out"
expect 2 "only 'timeline', 'dmat', 'records' and 'regions'" "$T/trace" -k multi --view csv -o "$T/x.csv"
expect 2 "never probed" "$T/trace" -k idler --view records -o "$T/x.csv"
expect 2 "ntop record -p PROBE -k 'idler'" "$T/trace" -k idler --view records -o "$T/x.csv"
expect 1 "cannot write $T/nodir/x.csv" "$T/trace" -k multi --view records -o "$T/nodir/x.csv"
[ -e "$T/x.csv" ] && bad "an error path wrote $T/x.csv"
if [ -w /dev/full ]; then
	expect 1 "write failed" "$T/trace" -k dm_copy --view records -o /dev/full
fi

# tests/gpu/dmat_accuracy.sh end to end with a stand-in patterns app that
# also plays the hook's part (the fixture's event lines and result files)
mkdir "$T/hook" "$T/ex"
: >"$T/hook/libcuda.so.1"
cat >"$T/ex/patterns" <<EOF
#!/bin/bash
echo "patterns: stand-in"
echo "info: pattern dm_copy buf in base 0x7f0000000000 bytes 98304"
echo "checksum dm_copy 0123456789abcdef"
while [ \$# -gt 0 ]; do
	if [ "\$1" = --dump-expected ]; then
		cp "$T/trace/expected.csv" "\$2"
		[ -n "\${FAKE_BAD:-}" ] && sed -i '10s/,0x7f000000/,0x7f100000/' "\$2"
		mkdir -p "\$NTOP_TRACE_DIR/results" && cp "$T/trace/results/"* "\$NTOP_TRACE_DIR/results/"
		{ grep -v '^record ' "$T/trace/events.log"
		  echo "alloc t=1 pid=1 n=1 base=0x7f0000000000 bytes=131072 api=cuMemAlloc"; } | "$NTOP_BINARY_DIR/bin/ev_send"
	fi
	shift
done
EOF
chmod +x "$T/ex/patterns"
ACC="$NTOP_SOURCE_DIR/tests/gpu/dmat_accuracy.sh"
out=$(NTOP_HOOK_DIR="$T/hook" NTOP="$NTOP" EX="$T/ex" OUT="$T/out" "$ACC" --only dm_copy 2>&1)
[ $? = 0 ] || bad "dmat_accuracy.sh on the fixture: $out"
for l in "PASS plain run" "PASS probed run" "PASS probed outputs equal the plain run's (1 checksums)" \
	"PASS dm_copy cap: " "PASS dm_copy dropped: report says 6, expected 6" "dmat accuracy: 0 FAIL" \
	"PASS allocations: all 1 buffers inside the 1 allocations the hook reported"; do
	echo "$out" | grep -qF "$l" || bad "dmat_accuracy.sh should say '$l': $out"
done
[ -s "$T/out/dmat/summary.txt" ] && tar -tzf "$T/out/dmat/dmat.tgz" | grep -q 'dm_copy.head.csv' \
	|| bad "dmat_accuracy.sh artefacts: $(ls -l "$T/out/dmat")"
out=$(FAKE_BAD=1 NTOP_HOOK_DIR="$T/hook" NTOP="$NTOP" EX="$T/ex" OUT="$T/out2" "$ACC" --only dm_copy 2>&1)
[ $? = 1 ] || bad "dmat_accuracy.sh with a wrong expected address should exit 1: $out"
echo "$out" | grep -q "^FAIL dm_copy addresses: 1 threads wrong" || bad "dmat_accuracy.sh FAIL line: $out"
tar -tzf "$T/out2/dmat/dmat.tgz" | grep -q 'dm_copy.records.csv' || bad "failed kernel's CSV not kept"

out=$("$NTOP" export --help)
echo "$out" | grep -q -- '--view timeline|dmat|records' && echo "$out" | grep -q -- '--map NAME' \
	&& echo "$out" | grep -q '0x hex' || bad "--help: $out"

[ "$fail" = 0 ] && echo "ok"
exit $fail
