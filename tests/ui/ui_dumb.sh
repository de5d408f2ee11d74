#!/bin/bash
# Terminals the UI cannot drive: TERM=dumb, TERM unset, a TERM terminfo does
# not know, for `ntop view` and live `ntop PROGRAM` (refused before the
# program starts): one line naming what works instead ('ntop record',
# 'ntop report'), a non-zero exit, the terminal left alone. Output that is
# not a terminal gets the text report instead of the UI; a terminal on
# stdout but not on stdin is refused.
. "${NTOP_SOURCE_DIR:?}/tests/regress/tui_lib.inc"
S=$NTOP_SOURCE_DIR
cp -r "$S/examples/session" "$T/session"
mkdir -p "$T/cfg" "$T/work"
export XDG_CONFIG_HOME="$T/cfg" HOME="$T" LC_ALL=C.UTF-8

# refused WHAT REGEX ENV...: ntop view in a tmux shell with ENV (an env
# argument list) exits 2 with one line on stderr matching REGEX, which names
# ntop record and ntop report, and draws no UI
refused() {
	local what=$1 re=$2
	shift 2
	fresh 80 24
	tm send-keys -t "$UI" "cd $T/work; clear; env $* $NTOP view $T/session 2>$T/err; echo NTOP-EXIT=\$?" Enter
	wait_for 'NTOP-EXIT=[0-9]' || { bad "$what: ntop did not end: $(screen | tail -3)"; return; }
	screen | grep -q 'NTOP-EXIT=2' || bad "$what: exit status: $(screen | grep NTOP-EXIT)"
	[ "$(wc -l <"$T/err")" = 1 ] || bad "$what: not one line: $(cat "$T/err")"
	grep -Eq -- "$re" "$T/err" || bad "$what: message: $(cat "$T/err")"
	grep -q "'ntop record'" "$T/err" && grep -q "'ntop report'" "$T/err" || bad "$what: no way out named: $(cat "$T/err")"
	screen | grep -q KERNEL && bad "$what: the UI drew"
	[ "$(tm display -p -t "$UI" '#{alternate_on}')" = 0 ] || bad "$what: left the alternate screen on"
}
refused "TERM=dumb" "^ntop: TERM=dumb cannot move the cursor" TERM=dumb
refused "TERM unset" "^ntop: TERM is not set" -u TERM
refused "TERM=nosuch" "^ntop: TERM=nosuch-term is unknown to terminfo" TERM=nosuch-term

# live mode: refused before a session directory is made or the program runs
fresh 80 24
tm send-keys -t "$UI" "cd $T/work; clear; env TERM=dumb $NTOP -- touch $T/ran 2>$T/err; echo NTOP-EXIT=\$?" Enter
wait_for 'NTOP-EXIT=[0-9]' || bad "live dumb: ntop did not end"
screen | grep -q 'NTOP-EXIT=2' || bad "live dumb: exit status: $(screen | grep NTOP-EXIT)"
grep -q "TERM=dumb cannot move the cursor" "$T/err" || bad "live dumb: message: $(cat "$T/err")"
[ -e "$T/ran" ] && bad "live dumb: the program ran"
[ -e "$T/work/ntop-trace" ] && bad "live dumb: a session directory was made"

# not a terminal on stdout: the report; on stdin only: refused
"$NTOP" view "$T/session" >"$T/out" 2>"$T/err" </dev/null
[ $? = 0 ] || bad "piped: exit status"
grep -q "^ntop: standard output is not a terminal: the text report of $T/session instead of the UI$" "$T/err" ||
	bad "piped: note: $(cat "$T/err")"
grep -q 'lm_global_add' "$T/out" && grep -q 'No.block:4096' "$T/out" || bad "piped: no report: $(head -5 "$T/out")"
fresh 80 24
tm send-keys -t "$UI" "cd $T/work; clear; $NTOP view $T/session </dev/null 2>$T/err; echo NTOP-EXIT=\$?" Enter
wait_for 'NTOP-EXIT=2' || bad "stdin not a terminal: $(screen | tail -2)"
grep -q "needs a terminal on stdin and stdout" "$T/err" || bad "stdin not a terminal: $(cat "$T/err")"
[ "$fail" = 0 ] && echo "ui_dumb: all passed"
exit "$fail"
