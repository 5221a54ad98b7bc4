#!/bin/sh
# sched-objective.sh - saturn_objective=weighted under priority/multifactor:
# the order of two users' batches follows the priorities Slurm would give
# their (held) jobs, and other jobs keep their place by priority in both
# directions. One node of 8 GPUs; every task takes the 8 GPUs for 4 s.
#
# 1. A ($HOSTILE_USER) submits 4 tasks with --nice=5000 (priority 1);
#    once one runs, B ($VICTIM_USER) submits 4 (priority ~1000: age, job
#    size). The batches' work is the same (A's running task counts), so
#    only the weights put B first: B's 4 tasks start before A's tasks still
#    held then (at most one of A's, released already, may start first).
#    With equal weights (no priorities) A would go first.
# 2. A higher-priority job that is not a Saturn task (B's, nice 0),
#    submitted while A's low-priority tasks run, starts when the running
#    one ends: Slurm orders it before A's released tasks.
# 3. A lower-priority job that is not a Saturn task (A's, --nice=5000),
#    submitted while B's tasks wait, starts after B's tasks.
# Every Saturn task runs exactly once.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
. "$(dirname "$0")/mu-lib.sh"
hostile_users
export SATURN_NODES=1 SATURN_PRIORITY=multifactor
sched_setup 81 "saturn_objective=weighted,saturn_interval=2"
mu_users
grep -aq 'sched/saturn: interval .*fairness weighted' "$CTLD_LOG" || fail "startup log does not name the weighted objective"

opts='"options": [ { "technique": "ddp", "gpus": 8, "sec_per_batch": 0.1, "status": "measured" } ]'
for ub in "$A:low" "$B:high" "$A:low2" "$B:high2"; do
	mu_profile "${ub%:*}" "${ub#*:}" 0-3 "$opts"
done
mu_task_script

# --- 1. order by priority ---------------------------------------------------
mu_b_first low high 4 "the priorities" --nice=5000
grep -aEq 'sched/saturn: plan .*method (smith|deadline)/' "$CTLD_LOG" || fail "no staged plan (method smith or deadline) logged"

# --- 2. a higher-priority plain job is not held back by A's tasks -----------
as_attacker sbatch --parsable -J low2 --saturn-batch=low2 --nice=5000 --array=0-3 --gres=gpu:8 --time=2 \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh" >/dev/null || fail "sbatch low2"
wait_for 60 grep -q "^user=$A job=low2 " "$JOBLOG" || fail "no task of low2 started"
tp=$(date +%s.%N)
as_victim sbatch --parsable -J plainhi --gres=gpu:8 --time=1 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh" >/dev/null ||
	fail "sbatch plainhi"
wait_for 180 queue_empty || fail "low2 and plainhi did not finish"
each_once "$A" low2 4
phi=$(starts "$B" plainhi | head -n 1)
[ -n "$phi" ] || fail "plainhi did not run"
before=$(starts "$A" low2 | awk -v tp="$tp" -v s="$phi" '$1 > tp && $1 < s { n++ } END { print n + 0 }')
note "plain job of priority ~1000 started at $phi; A's tasks started before it after its submission: $before"
[ "$before" -le 0 ] || fail "$before of A's low-priority tasks started ahead of a higher-priority job"

# --- 3. a lower-priority plain job does not jump B's tasks ------------------
as_victim sbatch --parsable -J high2 --saturn-batch=high2 --array=0-3 --gres=gpu:8 --time=2 \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh" >/dev/null || fail "sbatch high2"
wait_for 60 grep -q "^user=$B job=high2 " "$JOBLOG" || fail "no task of high2 started"
as_attacker sbatch --parsable -J plainlo --nice=5000 --gres=gpu:8 --time=1 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh" >/dev/null ||
	fail "sbatch plainlo"
wait_for 180 queue_empty || fail "high2 and plainlo did not finish"
each_once "$B" high2 4
plo=$(starts "$A" plainlo | head -n 1)
hlast=$(starts "$B" high2 | tail -n 1)
note "low-priority plain job started at $plo; B's last task at $hlast"
cat "$JOBLOG"
awk -v a="$plo" -v b="$hlast" 'BEGIN { exit !(a > b) }' || fail "the low-priority plain job started before B's last task"
note "ok: batches in priority order; other jobs by priority both ways"
