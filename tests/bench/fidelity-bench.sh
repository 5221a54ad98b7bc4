#!/bin/sh
# fidelity-bench.sh - execution fidelity of sched/saturn on the one-machine
# cluster (not part of `make check`; prints figures for doc/benchmarks.md,
# section "Execution fidelity").
#
#  1. Slurm's own latency, stock sched/backfill (2 nodes x 8 fake GPUs):
#     submission to start of a lone job (FID_PROBES times); a chain of
#     resource-blocked jobs (each wants every GPU of both nodes, all
#     submitted at once) and a chain of dependent jobs (afterany): end of
#     one to start of the next, from the jobs' own clocks.
#  2. sched/saturn on the demo sweep (contrib/demo: 16 tasks, 2 x 8 GPUs,
#     the profile's own seconds, so the profile is correct: each task sleeps
#     exactly its planned time for the option it was given): the first
#     plan's makespan ("sched/saturn: plan ...: makespan Ns") against the
#     executed makespan (first start to last end, task log), the
#     submission-to-first-start time, the number of plans made, and a
#     timeline of every start after the first wave: the end of the task
#     that freed its GPUs (task log) -> slurmctld notices it (_job_complete)
#     -> sched/saturn releases the task -> Slurm allocates it -> the script
#     starts. Timestamps: task log (epoch, ns) and slurmctld.log (ms).
#
# Variants run side by side, interleaved, FID_RUNS times each, so the
# noise of a shared machine hits all of them alike:
#   FID_VARIANTS="NAME=PLUGIN_DIR=SCHED_PARAMS ..."   (';' for ',' allowed)
# default: one variant "current" with BUILD's plugins and the demo's
# settings. The target: executed <= 1.05 x plan + Slurm's end-to-start
# latency (the backfill chain's median) x the waves of starts after the
# first.
#
# usage (root): tests/bench/fidelity-bench.sh [BUILD_DIR]
# Environment: FID_RUNS (3), FID_VARIANTS, FID_PROBES (5),
#   FID_SKIP_SLURM=1, FID_SKIP_SATURN=1, SATURN_PORT_BASE (18400),
#   FID_KEEP (folder to keep each run's logs in).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${SATURN_BUILD:-$ROOT/build}}" && pwd)
RUNS=${FID_RUNS:-3}
PROBES=${FID_PROBES:-5}
export SATURN_PORT_BASE=${SATURN_PORT_BASE:-18400}
export SATURN_NODES=2 SATURN_GPUS_PER_NODE=8
export SATURN_CLUSTER_DIR=${SATURN_CLUSTER_DIR:-/tmp/fidelity-bench.$SATURN_PORT_BASE}
DEMO_PARAMS="saturn_interval=5;saturn_solver_time=1;saturn_release_slack=10"
VARIANTS=${FID_VARIANTS:-current=$BUILD/plugin/slurm=$DEMO_PARAMS}
CL="$ROOT/scripts/cluster.sh"
TMP=$(mktemp -d /tmp/fidelity-bench.XXXXXX)
chmod 755 "$TMP"
[ "$(id -u)" = 0 ] || {
	echo "fidelity-bench: run as root" >&2
	exit 1
}
trap 'sh "$CL" stop >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT INT TERM

stats() { # numbers on stdin -> "n=N median=D min=A max=B"
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "n=0"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "n=%d median=%.2f min=%.2f max=%.2f\n", NR, m, v[1], v[NR] }'
}
median() {
	stats | sed 's/.*median=\([0-9.-]*\).*/\1/'
}
die() {
	echo "fidelity-bench: error: $*" >&2
	exit 1
}
wait_empty() { # SECONDS
	n=0
	while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
		n=$((n + 1))
		[ $n -le $(($1 * 4)) ] || return 1
		sleep 0.25
	done
}

echo "# fidelity-bench on $(uname -n), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"

# --- 1. Slurm's own latency (stock sched/backfill) -------------------------
if [ "${FID_SKIP_SLURM:-0}" != 1 ]; then
	export SATURN_SCHED=backfill SATURN_SCHED_PARAMS= SATURN_DEBUG=info
	unset SATURN_PLUGIN_DIR
	sh "$CL" stop >/dev/null 2>&1 || true
	sh "$CL" start 2>&1 | tail -n1
	. "$SATURN_CLUSTER_DIR/env"
	L="$TMP/slurm.log"
	: >"$L"
	chmod 666 "$L"
	job() { # TAG SLEEP sbatch-args...: logs "TAG start end" from the job
		tag=$1 secs=$2
		shift 2
		sbatch --parsable -o /dev/null "$@" --wrap \
			"s=\$(date +%s.%N); sleep $secs; echo $tag \$s \$(date +%s.%N) >>$L" | cut -d';' -f1
	}
	for i in $(seq 1 "$PROBES"); do
		t=$(date +%s.%N)
		job "probe$i" 0.1 --gres=gpu:1 >/dev/null
		wait_empty 60 || die "probe job did not end"
		awk -v t="$t" -v p="probe$i" '$1 == p { printf "%.3f\n", $2 - t }' "$L" >>"$TMP/submit"
	done
	echo "backfill: submission to start, s: $(stats <"$TMP/submit")"
	for i in 1 2 3 4 5 6; do
		job "blocked$i" 2 -N2 --exclusive --gres=gpu:8 >/dev/null
	done
	wait_empty 120 || die "blocked chain did not end"
	prev=
	for i in 1 2 3 4 5 6; do
		id=$(job "dep$i" 2 --gres=gpu:1 ${prev:+--dependency=afterany:$prev})
		prev=$id
	done
	wait_empty 120 || die "dependent chain did not end"
	for kind in blocked dep; do
		grep "^$kind" "$L" | sort -k2n | awk '{ if (NR > 1) printf "%.3f\n", $2 - e; e = $3 }' >"$TMP/$kind"
	done
	echo "backfill: resource-blocked chain, end to next start, s: $(stats <"$TMP/blocked")"
	echo "backfill: dependent chain (afterany), end to next start, s: $(stats <"$TMP/dep")"
	median <"$TMP/blocked" >"$TMP/slurm-lat"
	sh "$CL" stop >/dev/null 2>&1 || true
fi
LAT=$(cat "$TMP/slurm-lat" 2>/dev/null || echo "${FID_SLURM_LATENCY:-0}")

[ "${FID_SKIP_SATURN:-0}" = 1 ] && exit 0

# --- 2. sched/saturn: plan against execution --------------------------------
# analyse TASKLOG CTLDLOG SUBMIT_EPOCH -> one "key=value ..." line, then the
# timeline lines ("  ...")
analyse() {
	python3 - "$@" <<'EOP'
import re, sys, datetime
tlog, clog, t0 = sys.argv[1], sys.argv[2], float(sys.argv[3])
tasks = []
for line in open(tlog):
    kv = dict(f.split("=", 1) for f in line.split() if "=" in f)
    if "start" in kv:
        tasks.append(dict(task=int(kv["task"]), job=kv["job"], node=kv["node"], gpus=kv["saturn_gpus"],
                          start=float(kv["start"]), end=float(kv["end"])))
def ts(line):
    m = re.match(r"\[(\d+-\d+-\d+T\d+:\d+:\d+(?:\.\d+)?)\]", line)
    if not m:
        return None
    return datetime.datetime.fromisoformat(m.group(1)).replace(tzinfo=datetime.timezone.utc).timestamp()
plan = None; nplans = 0; done = {}; rel = {}; alloc = {}; cycles = []
for line in open(clog, errors="replace"):
    t = ts(line)
    if t is None:
        continue
    m = re.search(r"sched/saturn: plan (\S+): .* makespan (\d+)s, bound (\d+)s", line)
    if m:
        nplans += 1
        if plan is None:
            plan = (t, float(m.group(2)), float(m.group(3)))
    m = re.search(r"_job_complete: JobId=\S*?\(?(\d+)\)? done", line)
    if m:
        done.setdefault(m.group(1), t)
    m = re.search(r"sched/saturn: released JobId=\S*?\(?(\d+)\)? ", line)
    if m:
        rel.setdefault(m.group(1), t)
    m = re.search(r"(?:sched: Allocate|_start_job: Started) JobId=\S*?\(?(\d+)\)? ", line)
    if m:
        alloc.setdefault(m.group(1), t)
    if "sched/saturn: cycle:" in line:
        cycles.append(t)
if not tasks or plan is None:
    print("error=no-tasks-or-plan"); sys.exit(0)
first = min(x["start"] for x in tasks); last = max(x["end"] for x in tasks)
# waves: starts more than 1 s apart
starts = sorted(x["start"] for x in tasks); waves = 1
for a, b in zip(starts, starts[1:]):
    if b - a > 1.0:
        waves += 1
print("tasks=%d plan=%.1f bound=%.1f executed=%.2f submit_to_first=%.2f submit_to_plan=%.2f waves=%d plans=%d"
      % (len(tasks), plan[1], plan[2], last - first, first - t0, plan[0] - t0, waves, nplans))
# timeline: each task started after the first wave, against the latest
# end on its node before its start (the task that freed its GPUs)
for x in sorted(tasks, key=lambda x: x["start"]):
    if x["start"] - first < 1.0:
        continue
    prev = [y for y in tasks if y["node"] == x["node"] and y["end"] <= x["start"] + 0.01]
    if not prev:
        continue
    p = max(prev, key=lambda y: y["end"])
    d = done.get(p["job"]); r = rel.get(x["job"]); a = alloc.get(x["job"])
    seg = lambda u, v: "%6.2f" % (v - u) if u is not None and v is not None else "     ?"
    print("  task %2d (job %s, %s GPUs on %s): gap %.2f s = end->noticed %s, noticed->released %s, noticed/released->allocated %s, allocated->started %s%s"
          % (x["task"], x["job"], x["gpus"], x["node"], x["start"] - p["end"], seg(p["end"], d),
             seg(d, r) if r is not None and d is not None and r > d else "  early",
             seg(max(d, r) if d and r else d, a), seg(a, x["start"]),
             "" if r is None or d is None or r > d else " (released %.2f s before)" % (d - r)))
    print("GAP %.3f %s %s %s" % (x["start"] - p["end"],
          "%.3f" % (d - p["end"]) if d else "nan",
          "%.3f" % max(0.0, r - d) if r and d else "nan",
          "%.3f" % (a - max(d, r or 0)) if a and d else "nan"))
EOP
}

saturn_run() { # NAME PLUGIN_DIR PARAMS RUN
	name=$1
	export SATURN_PLUGIN_DIR=$2 SATURN_SCHED=saturn SATURN_DEBUG=debug
	export SATURN_SCHED_PARAMS=$(echo "$3" | tr ';' ',')
	sh "$CL" stop >/dev/null 2>&1 || true
	sh "$CL" start >/dev/null 2>&1 || die "cluster did not start (variant $name)"
	. "$SATURN_CLUSTER_DIR/env"
	state="$SATURN_CLUSTER_DIR/state/saturn"
	n=0
	until [ -d "$state/profiles" ]; do
		n=$((n + 1))
		[ $n -le 80 ] || die "sched/saturn did not create $state/profiles"
		sleep 0.25
	done
	mkdir -p -m 700 "$state/profiles/0"
	cp "$ROOT/contrib/demo/profile.json" "$state/profiles/0/demo-sweep.json"
	tl="$TMP/tasks.$name.$4"
	: >"$tl"
	chmod 666 "$tl"
	t0=$(date +%s.%N)
	DEMO_LOG="$tl" DEMO_TIME_SCALE=1 sbatch --parsable --saturn-batch=demo-sweep --array=0-15 \
		--gres=gpu:8 -o /dev/null "$ROOT/contrib/demo/sweep.sbatch" >/dev/null || die "sbatch failed"
	wait_empty 600 || die "variant $name: the sweep did not finish in 10 minutes"
	[ "$(grep -c '^task=' "$tl")" = 16 ] || die "variant $name: $(grep -c '^task=' "$tl") of 16 tasks logged"
	analyse "$tl" "$SATURN_CLUSTER_DIR/log/slurmctld.log" "$t0" >"$TMP/res.$name.$4"
	if [ -n "${FID_KEEP:-}" ]; then
		mkdir -p "$FID_KEEP"
		cp "$tl" "$FID_KEEP/tasks.$name.$4"
		cp "$SATURN_CLUSTER_DIR/log/slurmctld.log" "$FID_KEEP/slurmctld.$name.$4.log"
	fi
	sh "$CL" stop >/dev/null 2>&1 || true
	head -n1 "$TMP/res.$name.$4"
}

for r in $(seq 1 "$RUNS"); do
	for v in $VARIANTS; do
		name=${v%%=*} rest=${v#*=}
		echo "run $r $name: $(saturn_run "$name" "${rest%%=*}" "${rest#*=}" "$r")"
	done
done

get() { # KEY FILES...
	key=$1
	shift
	cat "$@" | head -n1000 | sed -n "s/.* $key=\([0-9.]*\).*/\1/p; s/^$key=\([0-9.]*\).*/\1/p"
}
for v in $VARIANTS; do
	name=${v%%=*}
	files=$(ls "$TMP"/res."$name".*)
	echo "== $name ($(echo "$v" | cut -d= -f3-))"
	echo "  plan makespan, s:        $(for f in $files; do head -n1 "$f"; done | get plan | stats)"
	echo "  executed makespan, s:    $(for f in $files; do head -n1 "$f"; done | get executed | stats)"
	echo "  executed / plan:         $(for f in $files; do head -n1 "$f" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); x[kv[1]] = kv[2] } printf "%.3f\n", x["executed"] / x["plan"] }'; done | stats)"
	echo "  submission to 1st start: $(for f in $files; do head -n1 "$f"; done | get submit_to_first | stats)"
	echo "  waves of starts:         $(for f in $files; do head -n1 "$f"; done | get waves | stats)"
	echo "  plans made:              $(for f in $files; do head -n1 "$f"; done | get plans | stats)"
	echo "  gap end->start (GPUs freed to next start), s:  $(cat $files | awk '$1 == "GAP" { print $2 }' | stats)"
	echo "    end -> slurmctld notices the end, s:         $(cat $files | awk '$1 == "GAP" && $3 != "nan" { print $3 }' | stats)"
	echo "    noticed -> sched/saturn releases (0: early), s: $(cat $files | awk '$1 == "GAP" && $4 != "nan" { print $4 }' | stats)"
	echo "    noticed/released -> Slurm allocates, s:     $(cat $files | awk '$1 == "GAP" && $5 != "nan" { print $5 }' | stats)"
	for f in $files; do head -n1 "$f"; done | awk -v lat="$LAT" '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); x[kv[1]] = kv[2] }
		allow = 1.05 * x["plan"] + lat * (x["waves"] - 1)
		printf "%.2f %.2f %s\n", x["executed"], allow, x["executed"] <= allow ? "met" : "missed" }' >"$TMP/target.$name"
	echo "  target executed <= 1.05 x plan + ${LAT}s x (waves - 1): $(awk '{ printf "%s%s (%.1f <= %.1f)", (NR > 1 ? ", " : ""), $3, $1, $2 }' "$TMP/target.$name")"
	if [ -n "${FID_TIMELINE:-1}" ]; then
		echo "  timeline of run 1:"
		grep '^  task' "$TMP/res.$name.1" || true
	fi
done
