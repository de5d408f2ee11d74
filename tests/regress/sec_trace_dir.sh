#!/bin/bash
# Trust boundaries of the trace directory (doc/security.md): ntop
# record refuses a directory another local user could write into or swap
# (mode 0777 or 0770, owned by someone else, a symbolic link), and the hook
# writes nothing through a link planted below the directory (NTOP_KEEP_PTX
# files, result files, a results/ link), nothing into a directory that is
# open to others or not the one ntop made, and ignores a control file that
# others can write or that is a link. Without a GPU: a stand-in hook
# directory for record, the fake driver for the hook.
source "$(dirname "$0")/hook_lib.inc"
NTOP=$B/bin/ntop
[ -x "$NTOP" ] || { echo "ntop not built"; exit 77; }

# ---- ntop record: which directories it accepts ----
mkdir "$TMP/stand-in"
: > "$TMP/stand-in/libcuda.so.1"
rec() { # DIR: record /bin/true into DIR; sets $out and $rc
	out=$(NTOP_HOOK_DIR=$TMP/stand-in "$NTOP" record -o "$1" -- /bin/true 2>&1)
	rc=$?
}
refused() { # DIR WHY-REGEX WHAT
	rec "$1"
	[ "$rc" = 2 ] || fail "$3: rc $rc, want 2 (refused): $out"
	echo "$out" | grep -Eq -- "$2" || fail "$3: message: $out"
	[ -e "$1/events.log" ] && fail "$3: events.log written into it"
}

mkdir "$TMP/open"; chmod 0777 "$TMP/open"
refused "$TMP/open" "trace directory: $TMP/open is writable by everyone \(mode 0777\)" "a 0777 directory"
mkdir "$TMP/group"; chmod 0770 "$TMP/group"
refused "$TMP/group" "is writable by its group \(mode 0770\)" "a group-writable directory"
# the planted-directory attack: another user's 0777 directory with their control file
mkdir "$TMP/planted"; chmod 0777 "$TMP/planted"
echo "control version=1 gen=1" > "$TMP/planted/control"
refused "$TMP/planted" "writable by everyone" "a prepared directory with a control file"
mkdir "$TMP/real"
ln -s "$TMP/real" "$TMP/link"
refused "$TMP/link" "trace directory: $TMP/link is a symbolic link" "a symbolic link to an empty directory"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	mkdir "$TMP/theirs"; chown nobody "$TMP/theirs"; chmod 0700 "$TMP/theirs"
	refused "$TMP/theirs" "belongs to uid $(id -u nobody), not to you" "another user's directory"
fi
mkdir "$TMP/mine"
rec "$TMP/mine"
[ "$rc" = 0 ] && [ -f "$TMP/mine/events.log" ] || fail "an empty directory of one's own: rc $rc: $out"

# ---- the hook: files below the directory ----
run_app() { # TRACE-DIR EVENTS-LOG [ENV=VAL...] -- bash snippet run first, then the app (same pid)
	local dir=$1 log=$2
	shift 2
	local pre=""
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do pre="$pre $1"; shift; done
	shift
	env NTOP_TRACE_DIR="$dir" NTOP_PROBES=$S/probes/block_sched.toml NTOP_PROBE_LIMIT=5 NTOP_EVENT_FD=9 \
		NTOP_REAL_LIBCUDA=$FAKE LD_LIBRARY_PATH=$HOOKDIR $pre \
		bash -c "$1"'; exec "$0" "$@"' "$APP" "$PTX" 3 > "$TMP/app.out" 2>&1 9> "$log"
	[ $? = 3 ] || fail "app failed under the hook: $(tail -3 "$TMP/app.out")"
}

echo "victim" > "$TMP/victim"
mkdir "$TMP/victim-dir"
mkdir "$TMP/t1"
# links planted where NTOP_KEEP_PTX and the result writer will write
run_app "$TMP/t1" "$TMP/t1.log" NTOP_KEEP_PTX=1 -- '
	for k in 1 2 3 4; do
		mkdir -p "$NTOP_TRACE_DIR/kernels/$$-$k"
		ln -s '"$TMP"'/victim "$NTOP_TRACE_DIR/kernels/$$-$k/probed.ptx"
		ln -s '"$TMP"'/victim "$NTOP_TRACE_DIR/kernels/$$-$k/pruned.ptx"
	done
	mkdir -p "$NTOP_TRACE_DIR/results"
	for s in 1 2 3 4 5 6; do ln -s '"$TMP"'/victim "$NTOP_TRACE_DIR/results/$$-$s.ntr"; done'
[ "$(cat "$TMP/victim")" = victim ] || fail "a planted link was written through: victim now holds $(head -c 80 "$TMP/victim")"
n=$(find "$TMP/t1/kernels" -name probed.ptx -type f | wc -l)
[ "$n" -ge 1 ] || fail "NTOP_KEEP_PTX: no probed.ptx replaced the planted link"
n=$(find "$TMP/t1/results" -name '*.ntr' -type f | wc -l)
[ "$n" -ge 1 ] || fail "no result file replaced the planted links"
expect "$TMP/t1.log" "^result " "results written beside the planted links"

# a results/ that is a link: refused, said, nothing written there
mkdir "$TMP/t2"
ln -s "$TMP/victim-dir" "$TMP/t2/results"
run_app "$TMP/t2" "$TMP/t2.log" -- ':'
[ -z "$(ls "$TMP/victim-dir")" ] || fail "results written through a results/ link: $(ls "$TMP/victim-dir")"
expect "$TMP/t2.log" "^warn .*msg=result%20.*results%20is%20a%20symbolic%20link" "results/ link refused with a reason"

# a trace directory others can write into, or not the one ntop made
mkdir "$TMP/t3"; chmod 0777 "$TMP/t3"
run_app "$TMP/t3" "$TMP/t3.log" -- ':'
[ -e "$TMP/t3/results" ] && fail "the hook wrote into a 0777 trace directory"
expect "$TMP/t3.log" "^warn .*msg=result%20.*writable%20by%20everyone" "0777 trace directory refused with a reason"
mkdir "$TMP/t4"
run_app "$TMP/t4" "$TMP/t4.log" NTOP_TRACE_DIR_ID=1:2 -- ':'
[ -e "$TMP/t4/results" ] && fail "the hook wrote into a directory that is not NTOP_TRACE_DIR_ID"
expect "$TMP/t4.log" "^warn .*msg=result%20.*not%20the%20trace%20directory%20ntop%20made" "swapped directory refused"

# ---- the hook: the control file ----
ctl() { # MODE-OR-link: a control file selecting every kernel's launches
	local c=$TMP/ctl-$1
	rm -rf "$c" "$c.real"
	printf 'control version=1 gen=1\nprobe name=fill probes=%s mode=every\n' "$S/probes/block_sched.toml" > "$c.real"
	if [ "$1" = link ]; then chmod 0600 "$c.real"; ln -s "$c.real" "$c"; else mv "$c.real" "$c"; chmod "$1" "$c"; fi
	echo "$c"
}
mkdir "$TMP/t5"
C=$(ctl 0600)
run_app "$TMP/t5" "$TMP/t5.log" NTOP_CONTROL=$C NTOP_PROBES= -- ':'
expect "$TMP/t5.log" "^launch .*probed=1" "a control file of one's own (0600) is obeyed"
for m in 0666 0620 link; do
	mkdir "$TMP/t5$m"
	C=$(ctl $m)
	run_app "$TMP/t5$m" "$TMP/t5$m.log" NTOP_CONTROL=$C NTOP_PROBES= -- ':'
	grep -q '^launch .*probed=1' "$TMP/t5$m.log" && fail "control file ($m) obeyed"
	case $m in
	link) why="a%20symbolic%20link" ;;
	*) why="writable%20by%20group%20or%20others" ;;
	esac
	expect "$TMP/t5$m.log" "^warn .*msg=control%20file%20.*ignored:%20$why" "control file ($m) ignored with a reason"
done

[ "$fails" = 0 ] && echo "sec_trace_dir: all passed"
exit $((fails > 0))
