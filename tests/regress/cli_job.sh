#!/bin/bash
# A multi-node job's traces read as one, over the driver test double:
# `ntop record -o DIR-%h-r%r` under a launcher's RANK (and the refusals
# without one), the record line's host and rank, then two ranks' traces
# whose processes have the same pid (a copy of rank 0's made rank 1 of
# another host, as two nodes would give): `ntop report A B` (text, JSON,
# CSV) keeps them apart with their host and rank, `ntop export --format
# perfetto` gives each a process, and `ntop view A B` groups their kernels
# by name ("2 proc") with each rank's process under the group.
. "${NTOP_SOURCE_DIR:?}/tests/regress/tui_lib.inc"
B=$NTOP_BINARY_DIR
S=$NTOP_SOURCE_DIR
APP=$B/tests/fakecuda/app_devices
FAKE=$B/tests/fakecuda/driver/libcuda.so.1
[ -x "$APP" ] && [ -f "$FAKE" ] || { echo "skip: the driver test double is not built"; exit 77; }
mkdir -p "$T/cfg"
export XDG_CONFIG_HOME="$T/cfg" HOME="$T" NTOP_THEMES_DIR="$S/themes"
host=$(hostname -s 2>/dev/null || hostname)
host=${host%%.*}

RANK=0 FAKECUDA_DEVICES=2 NTOP_REAL_LIBCUDA=$FAKE NTOP_HOOK_DIR=$B/lib/ntop "$NTOP" record -p block_sched --limit 1 \
	-k scale -o "$T/run-%h-r%r" -- "$APP" "$S/tests/fakecuda/kernels.ptx" 3 >"$T/rec.out" 2>&1 || bad "record: $(tail -3 "$T/rec.out")"
A=$T/run-$host-r0
[ -f "$A/events.log" ] || bad "no trace at $A: $(ls "$T")"
head -1 "$A/events.log" | grep -q " host=$host rank=0$" || bad "record line: $(head -1 "$A/events.log" | cut -c1-200)"
env -u RANK -u SLURM_PROCID -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u PMIX_RANK "$NTOP" record -o "$T/x-%r" -- /bin/true \
	>"$T/norank.out" 2>&1
[ $? = 2 ] && grep -q "uses %r, but no rank is set" "$T/norank.out" || bad "%r without a rank: $(cat "$T/norank.out")"
[ -e "$T/x-%r" ] && bad "a directory was made for %r without a rank"
"$NTOP" record -o "$T/x-%q" -- /bin/true >"$T/bad.out" 2>&1
[ $? = 2 ] && grep -q "'%q' is not %h" "$T/bad.out" || bad "%q: $(cat "$T/bad.out")"
SLURM_PROCID=7 "$NTOP" record -o "$T/s-%r-%%" -- /bin/true >/dev/null 2>&1
[ -d "$T/s-7-%" ] || bad "SLURM_PROCID and %%: $(ls "$T")"

# rank 1 on another host, the same pids (tests/fakecuda/app_devices.c: one
# process, a fill per device and scale on both)
Bd=$T/run-node2-r1
cp -r "$A" "$Bd"
sed -i "1s/ host=$host rank=0$/ host=node2 rank=1/" "$Bd/events.log"
pid=$(grep '^hello' "$A/events.log" | head -1 | sed -E 's/.* pid=([0-9]+) .*/\1/')
"$NTOP" report "$A" "$Bd" >"$T/job.txt" 2>&1 || bad "report of the job: $(head -3 "$T/job.txt")"
grep -q "^Job: 2 traces read as one$" "$T/job.txt" || bad "job header: $(head -3 "$T/job.txt")"
grep -Eq "^  .*/run-node2-r1: host node2, rank 1, [0-9]+ process(es)?, status 0$" "$T/job.txt" || bad "rank 1's line: $(grep node2 "$T/job.txt" | head -2)"
grep -q "^Process $pid on $host (rank 0) " "$T/job.txt" || bad "rank 0's process: $(grep '^Process' "$T/job.txt")"
grep -q "^Process $pid on node2 (rank 1) " "$T/job.txt" || bad "rank 1's process: $(grep '^Process' "$T/job.txt")"
grep -q "^Times: each host's wall clock" "$T/job.txt" || bad "what the times are"
[ "$(grep -c 'seq [0-9]*: No.block' "$T/job.txt")" = "$((2 * $(grep -c 'seq [0-9]*: No.block' <("$NTOP" report "$A"))))" ] ||
	bad "each rank's probed launches: $(grep -c 'seq [0-9]*: No.block' "$T/job.txt")"
"$NTOP" report --json "$A" "$Bd" >"$T/job.json" || bad "report --json"
python3 - "$T/job.json" "$pid" "$host" <<'PY' || bad "report --json of the job"
import json, sys
t = json.load(open(sys.argv[1]))
pid, host = int(sys.argv[2]), sys.argv[3]
assert [(x["host"], x["rank"]) for x in t["traces"]] == [(host, 0), ("node2", 1)], t["traces"]
ps = [(p["pid"], p["host"], p["rank"]) for p in t["processes"] if p["pid"] == pid]
assert ps == [(pid, host, 0), (pid, "node2", 1)], ps
PY
"$NTOP" report --csv "$A" "$Bd" >"$T/job.csv" || bad "report --csv"
python3 - "$T/job.csv" "$pid" <<'PY' || bad "report --csv of the job"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["pid"] == sys.argv[2] and r["name"] == "scale"]
assert sorted(r["rank"] for r in rows) == ["0", "1"], [(r["host"], r["rank"]) for r in rows]
PY
"$NTOP" export "$A" "$Bd" --format perfetto -o "$T/job-pf.json" >"$T/pf.out" 2>&1 || bad "perfetto of the job: $(cat "$T/pf.out")"
python3 - "$T/job-pf.json" "$pid" <<'PY' || bad "perfetto: a process per rank"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = sorted(e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name" and ", GPU " not in e["args"]["name"])
host = [n for n in names if "pid %s on" % sys.argv[2] in n]
assert len(host) == 2 and "(rank 0)" in host[0] + host[1] and "node2 (rank 1)" in host[0] + host[1], names
PY
"$NTOP" report "$A" "$T/none" >"$T/none.out" 2>&1
[ $? = 2 ] && grep -q "not a trace directory: .*none/events.log" "$T/none.out" || bad "a job with a missing trace: $(cat "$T/none.out")"

# the UI: kernels grouped across the ranks, each rank's process under them
run_ntop 80 24 LC_ALL=C NO_COLOR=1 view "$A" "$Bd"
wait_for 'KERNEL' || bad "UI did not start: $(screen)"
[ "$(screen | grep -Ec '2 proc .*\+ fill *$')" = 2 ] || bad "fill (one per device) not grouped over the ranks: $(screen | grep fill)"
keys / s c a l e Enter Enter
wait_true '[ "$(screen | grep -Ec "^ *\(?$pid\)? .*  scale *$")" = 2 ]' || bad "Enter: the ranks' processes: $(screen | grep scale)"
keys j Enter
wait_for "pid $pid on [a-z0-9]+ \(rank [01]\)" || bad "launches view names the rank: $(screen | sed -n 3,5p)"
keys q q q q
restored 0 "q"
[ "$fail" = 0 ] && echo "cli_job: all passed"
exit "$fail"
