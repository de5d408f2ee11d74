#!/bin/bash
# ntop's loader audit module (src/hook/audit/rtld_audit.c, plumbing over the fake
# driver and the NVRTC test double): app_dlopen links neither library and
# opens both by absolute path, as CuPy and Numba do, yet under `ntop record
# -p block_sched` the loader hands it ntop's stand-ins, so the cubin NVRTC
# made is tied to its PTX and probed. The stand-ins' own opens of the real
# libraries (DIR/./FILE) pass through: the same files named plainly come
# back as the stand-ins, which is what a stand-in would get (itself: no real
# library, every compile failing) without that form. A user's LD_AUDIT
# still runs, before ntop's; --no-audit leaves LD_AUDIT as the user had it
# and the absolute opens bypass the stand-ins again, saying why. A rule
# whose stand-in is missing, or no rule, changes nothing and prints nothing.
source "$(dirname "$0")/hook_lib.inc"
NTOP=$B/bin/ntop
DL=$B/tests/fakecuda/app_dlopen
USER_AUDIT=$B/tests/fakecuda/libaudit_user.so
AUDIT=$HOOKDIR/libntop_audit.so
[ -x "$NTOP" ] && [ -x "$DL" ] && [ -f "$USER_AUDIT" ] || { echo "ntop, app_dlopen or audit_user not built"; exit 77; }
[ -f "$AUDIT" ] || { echo "FAIL: $AUDIT not built"; exit 1; }
FNVRTC=$(ls "$B"/tests/fakecuda/jit/nvrtc/libnvrtc.so.* | grep -v '\.so$' | head -1)
through() { echo "$(dirname "$1")/./$(basename "$1")"; }
export NTOP_HOOK_DIR=$HOOKDIR NTOP_REAL_LIBCUDA=$FAKE NTOP_REAL_LIBNVRTC=$FNVRTC NTOP_REAL_LIBNVJITLINK=$TMP/none/x
unset LD_AUDIT NTOP_AUDIT_MAP

# probed: expect_probed DIR WHAT
expect_probed() {
	local E=$1/events.log
	expect "$E" "^module .*api=cuModuleLoadData kind=cubin .*ptx=1 .*source=nvrtc" "$2: cubin tied to its PTX"
	expect "$E" "^kernel .*ptx=1 name=fill$" "$2: kernel with PTX"
	expect "$E" "^instrument .*status=ok probes=block_sched" "$2: instrumented from the PTX"
	[ "$(grep -c '^result ' "$E")" = 3 ] || fail "$2: $(grep -c '^result ' "$E") results, want 3"
}

# ---- the driver and NVRTC by absolute path: both reach the stand-ins ----
"$NTOP" record -o "$TMP/abs" -p block_sched -- "$DL" run "$FAKE" "$FNVRTC" "$PTX" 3 > "$TMP/abs.out" 2> "$TMP/abs.err" ||
	fail "abs: exit $?: $(cat "$TMP/abs.out" "$TMP/abs.err")"
expect "$TMP/abs.out" "^app_dlopen: 3 launches, 0 failures$" "abs: app output"
expect "$TMP/abs/events.log" "^hello .* driver=$FAKE$" "abs: the driver stand-in forwards to the fake driver"
expect_probed "$TMP/abs" abs

# ---- the stand-ins' own opens pass through; the same files named plainly do not ----
"$NTOP" record -o "$TMP/which" -- "$DL" which "$FNVRTC" "$(through "$FNVRTC")" "$FAKE" "$(through "$FAKE")" \
	"$(dirname "$FNVRTC")/libnvrtc.so" > "$TMP/which.out" 2>&1 || fail "which: $(cat "$TMP/which.out")"
expect "$TMP/which.out" "^$FNVRTC stand-in$" "NVRTC by absolute path: not sent to the stand-in"
expect "$TMP/which.out" "^$(through "$FNVRTC") library$" "NVRTC as DIR/./FILE: redirected (a stand-in would load itself)"
expect "$TMP/which.out" "^$FAKE stand-in$" "driver by absolute path: not sent to the stand-in"
expect "$TMP/which.out" "^$(through "$FAKE") library$" "driver as DIR/./FILE: redirected (the hook would load itself)"
expect "$TMP/which.out" "^$(dirname "$FNVRTC")/libnvrtc.so stand-in$" "unversioned link to libnvrtc.so.N: not redirected"

# ---- the environment: the user's LD_AUDIT first, ntop's appended; --no-audit leaves it ----
cat > "$TMP/env.sh" << 'EOF'
#!/bin/sh
echo "LD_AUDIT=[$LD_AUDIT] MAP=[${NTOP_AUDIT_MAP-unset}]"
EOF
chmod +x "$TMP/env.sh"
LD_AUDIT=$USER_AUDIT "$NTOP" record -o "$TMP/env1" -- "$TMP/env.sh" > "$TMP/env1.out" 2>&1
expect "$TMP/env1.out" "^LD_AUDIT=\[$USER_AUDIT:$AUDIT\] MAP=\[libcuda\.so\.\*=$HOOKDIR/libcuda\.so\.1$" \
	"user LD_AUDIT kept, ntop's module appended"
# (the rule is the last one unless ntop also found nvJitLink or a HIP runtime)
expect "$TMP/env1.out" "^libnvrtc\.so\.[0-9]+\.\*=$HOOKDIR/nvrtc/libnvrtc\.so\.[0-9]+\]?$" "NVRTC rule in NTOP_AUDIT_MAP"
LD_AUDIT=$USER_AUDIT "$NTOP" record --no-audit -o "$TMP/env2" -- "$TMP/env.sh" > "$TMP/env2.out" 2>&1
expect "$TMP/env2.out" "^LD_AUDIT=\[$USER_AUDIT\] MAP=\[unset\]$" "--no-audit: LD_AUDIT as the user had it"
# an NTOP_AUDIT_MAP ntop inherited is not passed on
NTOP_AUDIT_MAP="libfoo.so=/x" "$NTOP" record --no-audit -o "$TMP/env3" -- "$TMP/env.sh" > "$TMP/env3.out" 2>&1
expect "$TMP/env3.out" "^LD_AUDIT=\[\] MAP=\[unset\]$" "--no-audit: no inherited audit rules"

# ---- a user's audit module still runs, before ntop's ----
LD_AUDIT=$USER_AUDIT AUDIT_USER_LOG=$TMP/user.log "$NTOP" record -o "$TMP/user" -p block_sched -- \
	"$DL" run "$FAKE" "$FNVRTC" "$PTX" 3 > "$TMP/user.out" 2>&1 || fail "user: $(cat "$TMP/user.out")"
expect "$TMP/user.out" "^app_dlopen: 3 launches, 0 failures$" "user: app output"
expect "$TMP/user.log" "^ORIG $FNVRTC$" "user: the user's module saw the app's own open of NVRTC"
expect_probed "$TMP/user" user

# ---- --no-audit: today's behaviour (opens by path bypass the stand-ins) ----
"$NTOP" record --no-audit -o "$TMP/off" -p block_sched -- "$DL" run libcuda.so.1 "$FNVRTC" "$PTX" 3 \
	> "$TMP/off.out" 2>&1 || fail "off: $(cat "$TMP/off.out")"
expect "$TMP/off.out" "^app_dlopen: 3 launches, 0 failures$" "off: app output"
E=$TMP/off/events.log
expect "$E" "^kernel .*ptx=0 reason=SASS%20only" "off: NVRTC by path is SASS only"
expect "$E" "nvrtc:%20no%20call%20reached%20the%20stand-in%20\\(the%20app%20did%20not%20load%20libnvrtc%20by%20name%20and%20ntop's%20loader%20audit%20was%20off" \
	"off: the reason names --no-audit"
grep -q '^result ' "$E" && fail "off: a result without PTX"
"$NTOP" record --no-audit -o "$TMP/off2" -- "$DL" run "$FAKE" "$FNVRTC" "$PTX" 1 > "$TMP/off2.out" 2>&1 ||
	fail "off2: $(cat "$TMP/off2.out")"
grep -q '^hello ' "$TMP/off2/events.log" && fail "off2: the driver by path reached the hook with --no-audit"
expect "$TMP/off2.out" "the hook was not loaded" "off2: says the hook was not loaded"

# ---- the module alone: a missing stand-in or no rule changes nothing, prints nothing ----
NTOP_AUDIT_MAP="libnvrtc.so.*=$TMP/none/libnvrtc.so.13" LD_AUDIT=$AUDIT "$DL" which "$FNVRTC" > "$TMP/miss.out" 2>&1
[ "$(cat "$TMP/miss.out")" = "$FNVRTC library" ] || fail "missing stand-in: $(cat "$TMP/miss.out")"
NTOP_AUDIT_MAP="garbage
=
libnvrtc.so.*=relative/path" LD_AUDIT=$AUDIT "$DL" which "$FNVRTC" > "$TMP/bad.out" 2>&1
[ "$(cat "$TMP/bad.out")" = "$FNVRTC library" ] || fail "bad rules: $(cat "$TMP/bad.out")"
LD_AUDIT=$AUDIT "$DL" which "$FNVRTC" > "$TMP/none.out" 2>&1
[ "$(cat "$TMP/none.out")" = "$FNVRTC library" ] || fail "no rules: $(cat "$TMP/none.out")"

[ "$fails" = 0 ] && echo "hook_audit: ok"
exit $((fails > 0))
