#!/bin/sh
# hostile-node-typed.sh - a node with typed GPUs (SATURN_GPU_CLASSES: n1-n2,
# two "a100" each) is set DOWN under a running task of an untyped batch
# (--gres=gpu:2). sched/saturn released the task with its node's type
# (gres:gpu:a100:2); Slurm requeues it (--requeue) and sched/saturn must
# hold it again with its user's own request (gres:gpu:2). Before: Slurm
# refused the untyped request beside the typed one left in the job's GRES
# list ("_update_job: invalid GRES"), the task stayed released, and the
# plugin logged "not held after update" and tried again every cycle for the
# whole requeue delay, under the write locks (site-scale benchmark, issue
# 22). Now the task is re-held at once and asks for gres:gpu:2 again; then
# an operator requeues a second running task by hand (`scontrol requeue`):
# re-held the same way; every task runs exactly once, and no re-hold fails.
. "$(dirname "$0")/sched-lib.sh"
export SATURN_GPU_CLASSES="a100:pcie:2" SATURN_GPUS_PER_NODE=2 SATURN_CRED_EXPIRE=10
sched_setup 45

N=4
write_task_script "$SATURN_CLUSTER_DIR/task.sh" 12
job=$(sbatch --parsable --saturn-batch=e2e-typed-node --array=0-$((N - 1)) --gres=gpu:2 --time=1 \
	--requeue -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"

running_on() {
	squeue -h -j "$job" -t R -o '%i %N' | grep -q " $1\$"
}
# the re-hold of task $1 went wrong: Slurm kept it released
not_held_count() {
	grep -ac "not held after update" "$CTLD_LOG" || true
}

wait_for 40 running_on n1 || fail "no task started on n1"
# see hostile-node.sh: the node goes down some seconds after its last answer
sleep 3
victim=$(squeue -h -j "$job" -t R -o '%i %N' | awk '$2 == "n1" { print $1; exit }')
grep -aq "released JobId=[^ ]* (task $victim of batch .*gres[:/]gpu:a100:2, class a100x2-" "$CTLD_LOG" ||
	fail "task $victim was not released typed: $(grep -a "(task $victim of batch" "$CTLD_LOG")"
note "task $victim runs on n1 (released gres:gpu:a100:2): n1 goes down"
scontrol update nodename=n1 state=down reason=test || fail "scontrol update state=down"
wait_for 20 sh -c "squeue -h -r -j $job -t PD -o %i | grep -qx '$victim'" ||
	fail "task $victim was not requeued after n1 went down"
wait_for 20 grep -aq "re-held JobId=$victim(.*requeued after running on n1.*; asks for gres[:/]gpu:2 again" "$CTLD_LOG" ||
	fail "requeued task $victim was not re-held ($(not_held_count) 'not held after update' lines): $(grep -a -m1 -B1 'not held after update' "$CTLD_LOG")"
[ "$(not_held_count)" = 0 ] || fail "$(not_held_count) 'not held after update' lines: $(grep -a -m1 -B1 'not held after update' "$CTLD_LOG")"
scontrol -o show job "$victim" | grep -q 'TresPerNode=[^ ]*gpu:2\( \|$\)' ||
	fail "re-held task $victim does not ask for gpu:2: $(scontrol -o show job "$victim" | grep -o 'TresPerNode=[^ ]*')"
note "task $victim re-held with gres:gpu:2"

scontrol update nodename=n1 state=resume 2>/dev/null # may be back already (ReturnToService=2)
wait_for 30 sh -c "sinfo -h -n n1 -o %T | grep -Eq '^(idle|mixed|allocated)'" ||
	fail "n1 did not come back: $(sinfo -h -n n1 -o '%T %E')"

# an operator requeues a running (typed) task by hand: re-held the same way
wait_for 60 sh -c "squeue -h -j $job -t R -o %i | grep -vqx '$victim'" || fail "no other task running"
other=$(squeue -h -j "$job" -t R -o '%i' | grep -vx "$victim" | head -n 1)
note "requeueing running task $other by hand"
scontrol requeue "$other" || fail "scontrol requeue $other"
wait_for 20 grep -aq "re-held JobId=$other(.*requeued after running on n[12].*; asks for gres[:/]gpu:2 again" "$CTLD_LOG" ||
	fail "task $other requeued by hand was not re-held ($(not_held_count) 'not held after update' lines)"

wait_for 150 queue_empty || fail "batch did not finish"
assert_each_once $N
[ "$(not_held_count)" = 0 ] || fail "$(not_held_count) 'not held after update' lines"
grep -aq "error.*re-hold failed" "$CTLD_LOG" && fail "a re-hold failed"
note "ok"
