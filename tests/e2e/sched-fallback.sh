#!/bin/sh
# sched-fallback.sh - a batch without a profile runs as the users asked
# (their GPU count, technique "user"), first come first served; held tasks
# show the plan as their reason; the saturn_* settings are re-read on
# `scontrol reconfigure`, bad values logged.
. "$(dirname "$0")/sched-lib.sh"
sched_setup 1

write_task_script "$SATURN_CLUSTER_DIR/task.sh" 5
job=$(sbatch --parsable --saturn-batch=e2e-fallback --array=0-5 --gres=gpu:4 --time=1 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
# 16 GPUs: tasks 0-3 now, 4-5 when the first ones end
wait_for 20 sh -c "squeue -h -j $job -t R -o %i | wc -l | grep -qx 4" || fail "4 tasks did not start"
r=$(squeue -h -j "$job" -t PD -o %R)
echo "$r" | grep -q 'saturn: starts in ~[0-9]*[sm] on n[12], 4 GPUs, user' || fail "held tasks' reason: $r"
note "held: $r"
wait_for 60 queue_empty || fail "batch did not finish"
assert_each_once 6
for t in 0 1 2 3 4 5; do
	line=$(grep "^task=$t " "$JOBLOG")
	[ "$(field gpus "$line")" = 4 ] || fail "task $t ran on $(field gpus "$line") GPUs, asked for 4"
	[ "$(field technique "$line")" = user ] || fail "task $t: SATURN_TECHNIQUE=$(field technique "$line"), expected user"
done
last_first=$(for t in 0 1 2 3; do field start "$(grep "^task=$t " "$JOBLOG")"; done | sort -n | tail -1)
first_late=$(for t in 4 5; do field start "$(grep "^task=$t " "$JOBLOG")"; done | sort -n | head -1)
awk -v a="$last_first" -v b="$first_late" 'BEGIN { exit !(b > a) }' || fail "tasks 4-5 started before tasks 0-3 (submission order)"
grep -q "batch e2e-fallback of uid 0: no profile at" "$CTLD_LOG" || fail "fallback not logged"

note "reconfigure"
sed -i 's/^SchedulerParameters=.*/&,saturn_interval=4,saturn_min_gain=7/' "$SATURN_CLUSTER_DIR/etc/slurm.conf"
scontrol reconfigure || fail "scontrol reconfigure"
wait_for 20 grep -q 'sched/saturn: interval 4s' "$CTLD_LOG" || fail "saturn_interval not re-read"
grep -q 'bad saturn_\* setting.*saturn_min_gain=7: must be a fraction' "$CTLD_LOG" || fail "bad saturn_min_gain not reported"
scontrol ping | grep -q UP || fail "slurmctld down after reconfigure"
note "ok"
