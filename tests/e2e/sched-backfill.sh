#!/bin/sh
# sched-backfill.sh - with sched/saturn in place of sched/backfill, other
# jobs are still backfilled (sched/backfill runs beside it): a short job
# starts ahead of a big blocked job, around a Saturn batch whose released
# tasks are backfilled too.
. "$(dirname "$0")/sched-lib.sh"
sched_setup 3

long=$(sbatch --parsable -w n1 --gres=gpu:4 --time=3 -o /dev/null --wrap 'sleep 170') || fail "sbatch long"
wait_for 20 sh -c "squeue -h -j $long -t R -o %i | grep -q ." || fail "long job did not start"
big=$(sbatch --parsable -N2 --gres=gpu:8 --time=5 -o /dev/null --wrap 'sleep 5') || fail "sbatch big"
write_task_script "$SATURN_CLUSTER_DIR/task.sh" 6
job=$(sbatch --parsable --saturn-batch=e2e-bf --array=0-1 --gres=gpu:4 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch saturn"
small=$(sbatch --parsable --gres=gpu:1 --time=1 -o /dev/null --wrap 'sleep 3') || fail "sbatch small"
# the big job waits for the long one; the small one is backfilled at once
wait_for 20 sh -c "squeue -h -j $small -t R,CD -o %i | grep -q . || scontrol show job $small | grep -q JobState=COMPLETED" ||
	fail "small job not backfilled: $(squeue -h -j "$small" -o '%T %r')"
squeue -h -j "$big" -o %T | grep -q PENDING || fail "big job should still wait for the long one"
note "small job backfilled while the big one waits"
wait_for 40 sh -c "grep -c '^task=' $JOBLOG | grep -qx 2" || fail "Saturn tasks did not run around the blocked job"
squeue -h -j "$big" -o %T | grep -q PENDING || fail "big job started early"
assert_each_once 2
scancel "$long" "$big"
note "ok"
