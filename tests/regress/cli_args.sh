#!/bin/bash
# Bad arguments across the commands: each exits 2 with one line naming the
# program once ("ntop: ..." or "ntop COMMAND: ...") and, for usage errors, a
# hint to --help on the next; nothing on stdout; nothing is run or written.
set -u
NTOP="${NTOP_BINARY_DIR:?}/bin/ntop"
[ -x "$NTOP" ] || { echo "FAIL: $NTOP not built"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# args... ; want: exit 2, stdout empty, first stderr line exactly $want,
# then at most the --help hint
check() {
	local want=$1
	shift
	"$NTOP" "$@" </dev/null >"$T/out" 2>"$T/err"
	local rc=$?
	[ "$rc" = 2 ] || bad "'ntop $*' exited $rc, want 2"
	[ -s "$T/out" ] && bad "'ntop $*' wrote to stdout: $(cat "$T/out")"
	[ "$(head -n 1 "$T/err")" = "$want" ] || bad "'ntop $*' said: $(head -n 1 "$T/err") (want: $want)"
	local rest
	rest=$(tail -n +2 "$T/err")
	case "$rest" in
	"" | "Try 'ntop --help'." | "Try 'ntop "*" --help'.") ;;
	*) bad "'ntop $*' said more than a line and a hint: $(cat "$T/err")" ;;
	esac
	grep -q 'ntop ntop' "$T/err" && bad "'ntop $*' names the program twice: $(cat "$T/err")"
}

check "ntop: unknown option '--bogus'" --bogus
check "ntop: unknown option '-x'" -x ./app
check "ntop: no command 'bogus' (the commands: record, report, instrument, check, probes, export, view, attach, ls)" help bogus
check "ntop report: unknown option '--yaml'" report . --yaml
check "ntop: $T/none is not a trace directory: $T/none/events.log: No such file or directory" report "$T/none"
check "ntop: $T/none is not a trace directory: $T/none/events.log: No such file or directory" \
	export "$T/none" -k k -o x.png
check "ntop record: option -p needs a value" record -p
check "ntop export: which trace directory? (ntop record prints it)" export
check "ntop view: unknown option '--bogus'" view --bogus .
check "ntop probes: unexpected argument 'extra'" probes extra
check "ntop: cannot open $T/none.ptx: No such file or directory" instrument -p block_sched -k k "$T/none.ptx" -o x.ptx
[ -z "$(ls -A "$T" | grep -v '^out$\|^err$')" ] || bad "bad arguments left files: $(ls -A "$T")"

[ "$fail" = 0 ] && echo "cli_args: all passed"
exit "$fail"
