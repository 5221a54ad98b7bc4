#!/bin/sh
# site-load-small.sh - tests/bench/site-load.sh at a small scale (8 nodes x
# 8 fake GPUs in three classes and three partitions, ~100 Saturn tasks from
# 4 users beside ordinary jobs, 2 minutes of load with cancellations,
# updates, a drained node, a node set DOWN and a slurmctld restart) under
# sched/saturn: no task lost or run twice, slurmctld up after the restart
# and at the end, every plugin cycle within saturn_interval, and no lock
# held for 500 ms or more (a guard against I/O or a pass without bound under
# the locks). The targets of issue 22 (p99 < 5 ms, max < 50 ms) are a
# benchmark's (tests/bench/site-bench.sh, doc/benchmarks-site.md): this
# test prints its figures against them but does not fail on a wall-clock
# figure that one preemption on a loaded 2-core machine can decide.
. "$(dirname "$0")/sched-lib.sh"
command -v bash >/dev/null 2>&1 || skip "bash not installed (site-load.sh needs it)"
export SATURN_GPU_CLASSES="a100:pcie:3 h100:nvlink:3 l40:pcie:2"
export SATURN_PARTITIONS="gpu:n[1-8] a100:n[1-3] h100:n[4-6]"
export SATURN_SLURMD_DEBUG=error
# a task requeued by the DOWN node waits this long, not Slurm's 120 s
export SATURN_CRED_EXPIRE=10
sched_setup 44
OUT="$SATURN_CLUSTER_DIR/site-load"
SL_OUT=$OUT SL_DURATION=${SITE_SMALL_DURATION:-120} SL_TASKS=100 SL_USERS=4 \
	SL_BATCH_MIN=10 SL_BATCH_MAX=40 SL_JOB_RATE=20 SL_WORK_MIN=10 SL_WORK_MAX=30 \
	SL_JOB_WORK_MIN=5 SL_JOB_WORK_MAX=20 SL_CANCELS=3 SL_UPDATES=3 SL_SAMPLE=3 \
	SL_DRAIN_MAX=150 SL_USER_PREFIX=saturnsite \
	bash "$top_srcdir/tests/bench/site-load.sh" >"$SATURN_CLUSTER_DIR/site-load.out" 2>&1
rc=$?
cat "$SATURN_CLUSTER_DIR/site-load.out"
[ -f "$OUT/figures.csv" ] || fail "site-load.sh wrote no figures (exit $rc)"
fig() {
	awk -F, -v k="$1" '$1 == k { print $2 }' "$OUT/figures.csv"
}
for k in tasks_lost tasks_twice tasks_unexpected submit_failures; do
	[ "$(fig $k)" = 0 ] || fail "$k is $(fig $k), expected 0"
done
[ "$rc" = 0 ] || fail "site-load.sh exited $rc"
[ "$(fig tasks_expected)" -ge 100 ] || fail "only $(fig tasks_expected) tasks submitted"
# the restart happened and slurmctld answers after it and now
[ -s "$OUT/restart_ms" ] || fail "no slurmctld restart"
grep -q 'sched/saturn: resuming after restart' "$CTLD_LOG" || fail "sched/saturn did not resume after the restart"
scontrol ping | grep -q 'is UP' || fail "slurmctld is not up at the end"
# the node events were taken
grep -q 'was .*State=DOWN' "$OUT/node-events.log" || fail "no node set DOWN"
grep -q 'was .*State=DRAIN' "$OUT/node-events.log" || fail "no node drained"
# every cycle within saturn_interval (3 s here)
[ "$(fig sat_cycles)" -gt 0 ] || fail "no sched/saturn cycle line in slurmctld.log (SlurmctldDebug=debug?)"
[ "$(fig sat_cycle_overruns)" = 0 ] || fail "$(fig sat_cycle_overruns) cycle(s) longer than saturn_interval ($(fig sat_cycle_max_ms) ms max)"
# lock holds, read and write: none of 500 ms or more; against the
# benchmark's targets (p99 < 5 ms, max < 50 ms) for the log
for rw in read write; do
	n=$(fig lock_${rw}_n)
	[ "$n" -gt 0 ] || fail "no $rw lock hold logged"
	awk -v m="$(fig lock_${rw}_max_ms)" 'BEGIN { exit !(m < 500) }' ||
		fail "$rw lock held $(fig lock_${rw}_max_ms) ms (p99 $(fig lock_${rw}_p99_ms) ms; guard 500 ms)"
	awk -v p="$(fig lock_${rw}_p99_ms)" -v m="$(fig lock_${rw}_max_ms)" 'BEGIN { exit !(p < 5 && m < 50) }' ||
		note "$rw lock holds p99 $(fig lock_${rw}_p99_ms) ms, max $(fig lock_${rw}_max_ms) ms: above the benchmark's targets (5 and 50 ms) in this run"
done
note "ok: $(fig tasks_expected) tasks, $(fig tasks_cancelled) cancelled, $(fig tasks_requeued) requeued; cycle max $(fig sat_cycle_max_ms) ms; locks read p99 $(fig lock_read_p99_ms) max $(fig lock_read_max_ms), write p99 $(fig lock_write_p99_ms) max $(fig lock_write_max_ms) ms"
