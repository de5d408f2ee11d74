#!/bin/bash
# `cmake --install` of the test build into a temporary prefix, then the
# installed ntop run from elsewhere with no NTOP_*_DIR overrides: it must find
# its probes, themes and hook under the prefix (src/cli/cli_paths.c looks
# beside the binary), never in the source or build tree. Checks: the layout
# (bin/ntop, lib/ntop/libcuda.so.1 and its libcuda.so link, share/ntop/probes,
# share/ntop/themes, share/man/man1/ntop.1), --version, probes, check, report,
# view (a few frames in tmux), record (the hook dir put first on the app's
# LD_LIBRARY_PATH, the loader audit module on its LD_AUDIT, and the hook and
# module the loader actually loads, over the fake driver) and export with a
# theme that only exists in the installed themes directory. Writes only under its temporary directory (and cmake's
# install_manifest.txt in the build tree, which `cmake --install` always writes).
set -u
B="${NTOP_BINARY_DIR:?}"
S="${NTOP_SOURCE_DIR:?}"
command -v cmake >/dev/null || { echo "skip: no cmake"; exit 77; }
[ -x "$B/bin/ntop" ] && [ -f "$B/lib/ntop/libcuda.so.1" ] || { echo "FAIL: ntop or its hook not built"; exit 1; }
TMP=$(mktemp -d)
SOCK="$TMP/tmux.sock"
trap 'tmux -S "$SOCK" kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
P="$TMP/prefix"
NTOP="$P/bin/ntop"

unset NTOP_PROBES_DIR NTOP_HOOK_DIR NTOP_THEMES_DIR DESTDIR
export HOME="$TMP/home" XDG_CONFIG_HOME="$TMP/home/.config"
mkdir -p "$HOME" "$TMP/elsewhere"
cp -r "$S/examples/session" "$TMP/session"

cmake --install "$B" --prefix "$P" >"$TMP/install.log" 2>&1 || { cat "$TMP/install.log"; echo "FAIL: cmake --install"; exit 1; }

# ---- the layout ----
[ -x "$NTOP" ] || fail "no bin/ntop"
[ -f "$P/lib/ntop/libcuda.so.1" ] && [ ! -L "$P/lib/ntop/libcuda.so.1" ] || fail "no lib/ntop/libcuda.so.1"
[ "$(readlink "$P/lib/ntop/libcuda.so" 2>/dev/null)" = libcuda.so.1 ] || fail "lib/ntop/libcuda.so is not a link to libcuda.so.1"
objdump -p "$P/lib/ntop/libcuda.so.1" 2>/dev/null | grep -q 'SONAME *libcuda.so.1' ||
	{ command -v objdump >/dev/null && fail "installed hook's SONAME is not libcuda.so.1"; }
[ -f "$P/lib/ntop/libntop_audit.so" ] || fail "no lib/ntop/libntop_audit.so (the loader audit module)"
[ -f "$P/lib/ntop/libntop_hip.so" ] || fail "no lib/ntop/libntop_hip.so (the HIP hook for ROCm 6/7)"
# the JIT stand-ins, each in its own directory, when the toolkit had them
for j in nvrtc/libnvrtc nvjitlink/libnvJitLink; do
	if ls "$B/lib/ntop/$j".so.* >/dev/null 2>&1; then
		ls "$P/lib/ntop/$j".so.* >/dev/null 2>&1 || fail "lib/ntop/$j.so.N not installed"
	fi
done
for f in "$S"/probes/*.toml; do
	[ -f "$P/share/ntop/probes/$(basename "$f")" ] || fail "probe $(basename "$f") not installed"
done
for f in "$S"/themes/*.toml; do
	[ -f "$P/share/ntop/themes/$(basename "$f")" ] || fail "theme $(basename "$f") not installed"
done
cmp -s "$S/doc/ntop.1" "$P/share/man/man1/ntop.1" || fail "man page not installed in share/man/man1"
left=$(find "$P" -type f ! -path "$P/bin/ntop" ! -path "$P/lib/ntop/*" ! -path "$P/share/ntop/*" ! -path "$P/share/man/man1/ntop.1")
[ -z "$left" ] || fail "unexpected installed files: $left"

cd "$TMP/elsewhere" || exit 1

# ---- --version, probes, check ----
"$NTOP" --version >"$TMP/out" 2>&1 || fail "--version exit status"
grep -Eq '^ntop [0-9]+\.[0-9]+\.[0-9]+' "$TMP/out" || fail "--version: $(cat "$TMP/out")"
"$NTOP" probes >"$TMP/out" 2>&1 || fail "probes exit status: $(cat "$TMP/out")"
grep -q "^Built-in probes in $P/share/ntop/probes:" "$TMP/out" || fail "probes not from the prefix: $(head -1 "$TMP/out")"
grep -q '^block_sched ' "$TMP/out" || fail "probes: block_sched not listed"
"$NTOP" check block_sched >"$TMP/out" 2>&1 || fail "check block_sched: $(cat "$TMP/out")"
grep -q '^ok: block_sched' "$TMP/out" || fail "check block_sched output: $(cat "$TMP/out")"
"$NTOP" check "$P/share/ntop/probes/dmat.toml" >"$TMP/out" 2>&1 || fail "check the installed dmat.toml: $(cat "$TMP/out")"
# a name the source tree has but the prefix does not: found only if ntop looked elsewhere
mv "$P/share/ntop/probes/gmem_bytes.toml" "$TMP/gmem_bytes.toml"
"$NTOP" check gmem_bytes >"$TMP/out" 2>&1 && fail "check found gmem_bytes outside the prefix"
grep -q "$P/share/ntop/probes/gmem_bytes.toml" "$TMP/out" || fail "missing probe message: $(cat "$TMP/out")"
mv "$TMP/gmem_bytes.toml" "$P/share/ntop/probes/gmem_bytes.toml"

# ---- report ----
"$NTOP" report "$TMP/session" >"$TMP/out" 2>&1 || fail "report exit status: $(tail -3 "$TMP/out")"
grep -q 'lm_vec_add' "$TMP/out" || fail "report lacks lm_vec_add"

# ---- export: themes from the installed directory ----
"$NTOP" export "$TMP/session" -k lm_vec_add --theme light -o "$TMP/light.png" >"$TMP/out" 2>&1 ||
	fail "export --theme light: $(cat "$TMP/out")"
head -c 8 "$TMP/light.png" 2>/dev/null | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a' || fail "light.png is not a PNG"
# a theme only the installed directory has (a copy of light under another name)
sed 's/^name = .*/name = "installed"/' "$P/share/ntop/themes/light.toml" >"$P/share/ntop/themes/installed.toml"
"$NTOP" export "$TMP/session" -k lm_vec_add --theme installed -o "$TMP/installed.png" >"$TMP/out" 2>&1 ||
	fail "export --theme installed (from $P/share/ntop/themes): $(cat "$TMP/out")"
cmp -s "$TMP/light.png" "$TMP/installed.png" || fail "the installed copy of light drew a different PNG"
"$NTOP" export "$TMP/session" -k lm_vec_add --theme nosuch -o "$TMP/nosuch.png" >/dev/null 2>&1 &&
	fail "export accepted an unknown theme"

# ---- record: the installed hook ----
"$NTOP" record -o "$TMP/rec" -- /bin/true >"$TMP/out" 2>&1 || fail "record /bin/true: $(cat "$TMP/out")"
[ -s "$TMP/rec/events.log" ] || fail "record wrote no events.log"
"$NTOP" record -o "$TMP/rec2" -- /bin/sh -c 'echo "LDP=$LD_LIBRARY_PATH"; echo "LDA=$LD_AUDIT"' >"$TMP/out" 2>&1 ||
	fail "record sh: $(cat "$TMP/out")"
ldp=$(sed -n 's/^LDP=//p' "$TMP/out" "$TMP/rec2/app.log" 2>/dev/null | head -1)
[ "${ldp%%:*}" = "$(cd "$P/lib/ntop" && pwd -P)" ] || fail "hook dir on LD_LIBRARY_PATH is '${ldp%%:*}', not $P/lib/ntop"
lda=$(sed -n 's/^LDA=//p' "$TMP/out" 2>/dev/null | head -1)
[ "$lda" = "$(cd "$P/lib/ntop" && pwd -P)/libntop_audit.so" ] || fail "LD_AUDIT is '$lda', not the installed module"
APP="$B/tests/fakecuda/app_launch"
FAKE="$B/tests/fakecuda/driver/libcuda.so.1"
if [ -x "$APP" ] && [ -f "$FAKE" ]; then
	NTOP_REAL_LIBCUDA="$FAKE" LD_DEBUG=libs LD_DEBUG_OUTPUT="$TMP/ld" \
		"$NTOP" record -o "$TMP/rec3" -- "$APP" "$S/tests/fakecuda/kernels.ptx" 0 >"$TMP/out" 2>&1 ||
		fail "record app_launch: $(tail -3 "$TMP/out")"
	grep -q '^hello ' "$TMP/rec3/events.log" 2>/dev/null || fail "the installed hook did not start (no hello event)"
	grep -q '^kernel .*name=fill' "$TMP/rec3/events.log" 2>/dev/null || fail "no kernels recorded through the installed hook"
	grep -hq "calling init: $(cd "$P/lib/ntop" && pwd -P)/libcuda.so.1\$" "$TMP"/ld.* 2>/dev/null ||
		fail "the loader did not load $P/lib/ntop/libcuda.so.1: $(grep -h 'init: .*libcuda' "$TMP"/ld.* 2>/dev/null | head -3)"
	grep -hq "calling init: $(cd "$P/lib/ntop" && pwd -P)/libntop_audit.so\$" "$TMP"/ld.* 2>/dev/null ||
		fail "the loader did not load $P/lib/ntop/libntop_audit.so"
else
	echo "note: fake driver apps not built; the hook load itself is not checked"
fi

# ---- view: a few frames in a terminal ----
if command -v tmux >/dev/null; then
	tmux -S "$SOCK" new-session -d -s v -x 80 -y 24 \
		"cd $TMP/elsewhere; $NTOP view --exit-after-frames 3 $TMP/session 2>$TMP/view.out; echo \$? >$TMP/view.rc"
	for i in $(seq 100); do [ -s "$TMP/view.rc" ] && break; sleep 0.1; done
	[ "$(cat "$TMP/view.rc" 2>/dev/null)" = 0 ] || fail "view exited with '$(cat "$TMP/view.rc" 2>/dev/null)': $(tail -3 "$TMP/view.out")"
else
	echo "note: no tmux; ntop view not run"
fi

[ "$fails" = 0 ] && echo "install: all passed"
exit "$fails"
