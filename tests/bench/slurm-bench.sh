#!/bin/sh
# slurm-bench.sh - sched/saturn on the one-machine cluster (not part of
# `make check`; prints figures for doc/benchmarks.md, section "Slurm").
#
#  1. makespan: the demo sweep (contrib/demo, 16 tasks, durations from the
#     profile compressed to seconds) under sched/saturn and under stock
#     sched/backfill with the users' fixed gpu:8 requests, one after the
#     other (scripts/demo.sh), BENCH_RUNS times (default 1): ratio per run,
#     mean and spread.
#  2. locks: 1,000 pending Saturn tasks (one array, a profile covering all
#     of them) held behind a job that holds every GPU; the debug log of each
#     sched/saturn cycle gives the time under read locks (snapshot), under
#     write locks (apply) and the planning time; then the blocker ends and
#     the cycle that releases tasks is measured too.
#
# usage (root): tests/bench/slurm-bench.sh [BUILD_DIR]
# Environment: BENCH_RUNS, BENCH_SKIP_MAKESPAN=1, BENCH_SKIP_LOCKS=1,
#   SATURN_PORT_BASE (default 18200).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-${SATURN_BUILD:-/tmp/saturn-demo-build}}
RUNS=${BENCH_RUNS:-1}
PORT=${SATURN_PORT_BASE:-18200}
[ "$(id -u)" = 0 ] || {
	echo "slurm-bench: run as root" >&2
	exit 1
}

stats() { # numbers on stdin -> "n=N mean=M min=A max=B median=D"
	sort -n | awk '{ v[NR] = $1; s += $1 } END {
		if (NR == 0) { print "n=0"; exit }
		printf "n=%d mean=%.3f min=%.3f median=%.3f max=%.3f\n", NR, s / NR, v[1], v[int((NR + 1) / 2)], v[NR] }'
}

echo "# slurm-bench on $(uname -n), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"

if [ "${BENCH_SKIP_MAKESPAN:-0}" != 1 ]; then
	: >/tmp/slurm-bench-ratios.$$
	for r in $(seq 1 "$RUNS"); do
		out=$(SATURN_BUILD="$BUILD" SATURN_CLUSTER_DIR=/tmp/slurm-bench-demo SATURN_PORT_BASE=$PORT \
			sh "$ROOT/scripts/demo.sh" 2>&1 | tail -n1)
		echo "run $r: $out"
		echo "$out" | sed -n 's/.*ratio=\([0-9.]*\).*/\1/p' >>/tmp/slurm-bench-ratios.$$
	done
	echo "makespan ratio saturn/backfill: $(stats </tmp/slurm-bench-ratios.$$) (target <= 0.65)"
	rm -f /tmp/slurm-bench-ratios.$$
fi

[ "${BENCH_SKIP_LOCKS:-0}" = 1 ] && exit 0

export SATURN_CLUSTER_DIR=/tmp/slurm-bench-locks SATURN_PORT_BASE=$PORT SATURN_NODES=2 SATURN_GPUS_PER_NODE=8
export SATURN_PLUGIN_DIR="$BUILD/plugin/slurm" SATURN_SCHED=saturn SATURN_DEBUG=debug
export SATURN_SCHED_PARAMS="saturn_interval=2,saturn_solver_time=2"
CL="$ROOT/scripts/cluster.sh"
trap 'sh "$CL" stop >/dev/null 2>&1 || true' EXIT INT TERM
sh "$CL" stop >/dev/null 2>&1 || true
sh "$CL" start 2>&1 | tail -n1
. "$SATURN_CLUSTER_DIR/env"
LOG="$SATURN_CLUSTER_DIR/log/slurmctld.log"
STATE="$SATURN_CLUSTER_DIR/state/saturn"
until [ -d "$STATE/profiles" ]; do sleep 0.2; done
# PROFILE_DIR/UID/NAME.json: the benchmark submits as root (uid 0)
mkdir -p -m 700 "$STATE/profiles/0"
cat >"$STATE/profiles/0/bench.json" <<'EOP'
{ "format": "saturn-profile/1", "batch": "bench", "created": 1,
  "tasks": [ { "signature": "m/bs8", "task_ids": "0-999", "batches": 100,
    "options": [ { "technique": "single", "gpus": 1, "sec_per_batch": 1.0, "status": "measured" },
                 { "technique": "ddp", "gpus": 2, "sec_per_batch": 0.55, "status": "measured" },
                 { "technique": "ddp", "gpus": 4, "sec_per_batch": 0.32, "status": "measured" },
                 { "technique": "fsdp", "gpus": 8, "sec_per_batch": 0.21, "status": "measured" } ] } ] }
EOP
blocker=$(sbatch --parsable -N2 --exclusive --gres=gpu:8 -o /dev/null --wrap 'sleep 600')
until squeue -h -j "$blocker" -t R -o %i | grep -q .; do sleep 0.2; done
mark=$(wc -l <"$LOG")
job=$(sbatch --parsable --saturn-batch=bench --array=0-999 --gres=gpu:1 --time=10 -o /dev/null --wrap 'sleep 1')
echo "1000 tasks submitted (array $job), held behind job $blocker; measuring cycles for 30 s"
sleep 30
tail -n +"$mark" "$LOG" | grep -a 'sched/saturn: cycle: 1000 Saturn task' >/tmp/slurm-bench-cycles.$$ || true
echo "cycles measured: $(wc -l </tmp/slurm-bench-cycles.$$)"
echo "  under read locks (snapshot), ms: $(sed -n 's/.*snapshot \([0-9.]*\) ms under read locks.*/\1/p' /tmp/slurm-bench-cycles.$$ | stats)"
echo "  waiting for read locks, ms:      $(sed -n 's/.*(waited \([0-9.]*\) ms).*/\1/p' /tmp/slurm-bench-cycles.$$ | stats)"
echo "  under write locks (apply), ms:   $(sed -n 's/.*apply \([0-9.]*\) ms under write locks.*/\1/p' /tmp/slurm-bench-cycles.$$ | stats)"
echo "  plan (build+solve, no locks), ms: $(sed -n 's/.*plan \([0-9.]*\) ms, apply.*/\1/p' /tmp/slurm-bench-cycles.$$ | stats)"
echo "  cycle latency (snapshot+plan+apply), ms: $(sed -n 's/.*snapshot \([0-9.]*\) ms under read locks (waited \([0-9.]*\) ms), plan \([0-9.]*\) ms, apply \([0-9.]*\) ms.*/\1 \2 \3 \4/p' /tmp/slurm-bench-cycles.$$ | awk '{ print $1 + $2 + $3 + $4 }' | stats)"
mark=$(wc -l <"$LOG")
scancel "$blocker"
sleep 8
tail -n +"$mark" "$LOG" | grep -a 'sched/saturn: cycle: .* released' | grep -v ' 0 released' >/tmp/slurm-bench-rel.$$ || true
echo "cycles that released tasks: $(wc -l </tmp/slurm-bench-rel.$$)"
sed -n 's/.*cycle: \([0-9]*\) Saturn.*apply \([0-9.]*\) ms under write locks, \([0-9]*\) released.*/  \3 released (of \1): \2 ms under write locks/p' /tmp/slurm-bench-rel.$$ | head -5
grep -a 'sched/saturn: plan p' "$LOG" | tail -n 1 | sed 's/^\[[^]]*\] /  /'
rm -f /tmp/slurm-bench-cycles.$$ /tmp/slurm-bench-rel.$$
scancel "$job" 2>/dev/null || true
