#!/bin/sh
# sched-fail.sh - a task that fails and tasks cancelled while held or
# running do not stall the batch: it re-plans and the rest run once each.
. "$(dirname "$0")/sched-lib.sh"
sched_setup 2

write_task_script "$SATURN_CLUSTER_DIR/task.sh" 4 1
job=$(sbatch --parsable --saturn-batch=e2e-fail --array=0-7 --gres=gpu:8 --time=1 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
start=$(date +%s)
# two tasks of 8 GPUs at a time: 0-1, then 2-3, 4-5, 6-7
wait_for 20 sh -c "squeue -h -j $job -t R -o %i | grep -q ." || fail "nothing started"
scancel "${job}_5" || fail "scancel held task"
wait_for 30 sh -c "squeue -h -j ${job}_2 -t R -o %i | grep -q ." || fail "task 2 did not start"
scancel "${job}_2" || fail "scancel running task"
wait_for 60 queue_empty || fail "batch stalled"
el=$(($(date +%s) - start))
note "batch done in ${el}s"
[ "$el" -le 45 ] || fail "batch took ${el}s: stalled?"
for t in 0 3 4 6 7; do
	c=$(grep -c "^task=$t " "$JOBLOG" || true)
	[ "$c" = 1 ] || fail "task $t ran $c times"
done
for t in 1 2 5; do
	! grep -q "^task=$t " "$JOBLOG" || fail "task $t should not have completed"
done
scontrol show job "${job}_1" | grep -q 'JobState=FAILED' || fail "task 1 not FAILED: $(scontrol show job "${job}_1" | grep JobState)"
grep -q 'sched/saturn: plan p' "$CTLD_LOG" || fail "no plan logged"
note "ok"
