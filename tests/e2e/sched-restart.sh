#!/bin/sh
# sched-restart.sh - slurmctld restarts in the middle of a batch: the batch
# resumes, no task is lost and none runs twice.
. "$(dirname "$0")/sched-lib.sh"
sched_setup 4

write_task_script "$SATURN_CLUSTER_DIR/task.sh" 5
job=$(sbatch --parsable --saturn-batch=e2e-restart --array=0-7 --gres=gpu:8 --time=1 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
wait_for 20 sh -c "squeue -h -j $job -t R -o %i | grep -q ." || fail "nothing started"
wait_for 10 test -s "$STATE_DIR/state.json" || fail "no state persisted"
note "restarting slurmctld with $(squeue -h -j "$job" -t R -o %i | wc -l) task(s) running"
sh "$CLUSTER" restart-ctld >/dev/null 2>&1 || fail "restart-ctld"
wait_for 20 grep -q 'sched/saturn: resuming after restart' "$CTLD_LOG" || fail "no resume logged"
wait_for 90 queue_empty || fail "batch did not finish after the restart"
assert_each_once 8
note "ok"
