#!/bin/sh
# hostile-never.sh - a task Slurm will never start is never released.
# With EnforcePartLimits=NO (Slurm's default) a job whose --time is over its
# partition's MaxTime is accepted and left pending (PartitionTimeLimit).
# The attacker holds one such 8-GPU task per node; released, each would be
# planned as "starting now" on its node in every cycle, and the victim's
# task would never start while every GPU idles. Now the attacker's tasks
# stay held with a reason naming the limit, and the victim's task runs.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_users
sched_setup 10
hostile_dirs

scontrol update PartitionName=gpu MaxTime=5 || fail "scontrol update PartitionName=gpu MaxTime=5"
write_task_script "$SATURN_CLUSTER_DIR/task.sh" 2

bad=$(as_attacker sbatch --parsable --saturn-batch=forever --array=0-1 --gres=gpu:8 --time=30 \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "attacker sbatch (--time over MaxTime)"
sleep 8
good=$(as_victim sbatch --parsable --saturn-batch=small --gres=gpu:8 --time=2 \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "victim sbatch"
wait_for 60 sh -c "[ -z \"\$(squeue -h -j $good -o %i)\" ]" ||
	fail "the victim's task did not run while the attacker's never-starting tasks were held"
assert_each_once 1
for t in 0 1; do
	r=$(squeue -h -j "${bad}_$t" -o '%p|%r' 2>/dev/null)
	case $r in
	0.0000*'|'*"Slurm will not start it: PartitionTimeLimit"*) ;;
	*) fail "attacker's task $t: '$r', expected held with a reason naming PartitionTimeLimit" ;;
	esac
done
if grep -a "released .*batch forever" "$CTLD_LOG" | grep -q .; then
	fail "a task over its partition's MaxTime was released"
fi
# fixed by its user (a time limit within MaxTime), it is planned and runs
scontrol update JobId="${bad}" TimeLimit=2 || fail "shorter time limit refused"
wait_for 60 sh -c "[ -z \"\$(squeue -h -j $bad -o %i)\" ]" ||
	fail "the attacker's tasks did not run once their time limit fit"
note "ok"
