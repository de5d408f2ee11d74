#!/bin/bash
# ntop check: good probes pass (exit 0), bad ones fail (exit 1) with
# FILE:LINE:COL (schema and verifier) in the message; usage errors exit 2.
set -u
NTOP="${NTOP_BINARY_DIR:?}/bin/ntop"
[ -x "$NTOP" ] || { echo "FAIL: $NTOP not built"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# run CMD...: sets $out (stdout+stderr) and $rc
run() { out=$("$@" 2>&1); rc=$?; }

run "$NTOP" check block_sched
[ "$rc" = 0 ] || bad "built-in block_sched: rc $rc: $out"
echo "$out" | grep -q '^ok: block_sched (map block_sched: per warp, 1 x 24 B' || bad "ok line: $out"
echo "$out" | grep -q '2 hooks)' || bad "hook count: $out"

# NEUTRINO's files in both layouts load; what a file leaves to ntop is a note
SRC="${NTOP_SOURCE_DIR:?}"
run "$NTOP" check "$SRC"/tests/corpus/neutrino/*.toml
[ "$rc" = 0 ] || bad "NEUTRINO corpus: rc $rc: $out"
[ "$(echo "$out" | grep -c '^ok: ')" = "$(ls "$SRC"/tests/corpus/neutrino/*.toml | wc -l)" ] || bad "NEUTRINO corpus: $out"
echo "$out" | grep -A1 '^ok: program_progress ' | grep -q '^  note: %sample is written but never declared' ||
	bad "implicit register note: $out"
echo "$out" | grep -A1 '^ok: dsl_dmat ' | grep -q '^  note: map Trace: sized at run time ("dynamic"): ntop keeps 64' ||
	bad "dynamic map note: $out"

cat > "$T/typo.toml" <<'TOML'
ntop_probe = 1
name = "typo"
description = "x"
colour = 3
[[hook]]
at = "entry"
asm = "mov.u32 %r1, 0;"
TOML
run "$NTOP" check "$T/typo.toml"
[ "$rc" = 1 ] || bad "unknown key: rc $rc"
echo "$out" | grep -q "$T/typo.toml:4:1: .*colour" || bad "unknown key message: $out"

cat > "$T/branch.toml" <<'TOML'
ntop_probe = 1
name = "branch"
description = "x"

[[hook]]
at = "entry"
asm = """
.reg .b32 %x;
bra.uni L1;
"""
TOML
run "$NTOP" check "$T/branch.toml"
[ "$rc" = 1 ] || bad "branching snippet: rc $rc"
echo "$out" | grep -q "$T/branch.toml:9:1: .*bra" || bad "verifier message: $out"

# A form feed inside an opcode: ptxas reads `st.global`, so must the verifier
# (it passed `ntop check` as `st\f.global`, one token, before).
printf 'ntop_probe = 1\nname = "ff"\n[[hook]]\nat = "entry"\nasm = "st\\f.global.u32 [%%rd1], 0;"\n' > "$T/ff.toml"
run "$NTOP" check "$T/ff.toml"
[ "$rc" = 1 ] || bad "form feed store: rc $rc: $out"
echo "$out" | grep -q "$T/ff.toml:5:8: rule 5 .*st.global.u32 \[%rd1\], 0;" || bad "form feed message: $out"

printf 'ntop_probe = 1\nname = "cut\n' > "$T/cut.toml"
run "$NTOP" check "$T/cut.toml"
[ "$rc" = 1 ] || bad "syntax error: rc $rc"
echo "$out" | grep -Eq "$T/cut.toml:2:[0-9]+: " || bad "syntax message: $out"

# one bad among good ones: every probe is reported, exit 1
run "$NTOP" check block_sched "$T/branch.toml" block_sched
[ "$rc" = 1 ] || bad "mixed: rc $rc"
[ "$(echo "$out" | grep -c '^ok: ')" = 2 ] || bad "mixed ok lines: $out"

run "$NTOP" check no_such_probe
[ "$rc" = 1 ] || bad "missing built-in: rc $rc"
echo "$out" | grep -q "no built-in probe 'no_such_probe'" || bad "missing message: $out"

run "$NTOP" check
[ "$rc" = 2 ] || bad "no args: rc $rc"
run "$NTOP" check --frobnicate x.toml
[ "$rc" = 2 ] || bad "unknown option: rc $rc"
echo "$out" | grep -q "unknown option '--frobnicate'" || bad "unknown option message: $out"
run "$NTOP" check --help
[ "$rc" = 0 ] && echo "$out" | grep -q 'Usage: ntop check' || bad "help: $rc $out"

[ "$fail" = 0 ] && echo "cli_check: all passed"
exit "$fail"
