#!/bin/sh
# sched-fairshare.sh - saturn_objective=weighted under priority/multifactor
# with fair share (cluster.sh SATURN_ACCOUNTING=1 SATURN_PRIORITY=
# multifactor: PriorityWeightFairshare=100000, recomputed each minute): the
# order of two users' batches follows their fair-share priorities. One
# node of 8 GPUs; every task takes the 8 GPUs for 4 s.
#
# 1. User A ($HOSTILE_USER) runs a plain job on the whole node for 6 s;
#    once Slurm's fair-share factor has it (sshare: A's FairShare below
#    B's, within about a minute), A submits 3 tasks and, when one runs,
#    B ($VICTIM_USER) submits 3. The batches' work is the same and A's
#    jobs are older (the age factor favours A), so only fair share puts
#    B first: B's 3 tasks start before A's tasks still held then (at most
#    one of A's, released already, may start first).
# Every Saturn task runs exactly once.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
. "$(dirname "$0")/mu-lib.sh"
# usage is added at a job's end only when limits are enforced
mu_accounting associations,limits
export SATURN_PRIORITY=multifactor
sched_setup 94 "saturn_objective=weighted,saturn_interval=2"
mu_users
scontrol show config | grep -q 'PriorityWeightFairShare *= *100000' ||
	fail "PriorityWeightFairShare is not 100000: $(scontrol show config | grep -i fairshare)"

opts='"options": [ { "technique": "ddp", "gpus": 8, "sec_per_batch": 0.1, "status": "measured" } ]'
mu_profile "$A" fa 0-2 "$opts"
mu_profile "$B" fb 0-2 "$opts"
mu_task_script

# fair share of user U (sshare's FairShare column)
fs_of() {
	sshare -n -P -a -A saturn -o User,FairShare 2>/dev/null | awk -F'|' -v u="$1" '$1 == u { print $2 }'
}

# --- A's usage ------------------------------------------------------------
as_attacker sbatch --parsable -J usage --gres=gpu:8 -c 16 --time=1 -o /dev/null \
	"$SATURN_CLUSTER_DIR/task.sh" 6 >/dev/null || fail "sbatch usage as $HOSTILE_USER"
wait_for 60 grep -q "^user=$A job=usage " "$JOBLOG" || fail "A's plain job did not start"
wait_for 30 queue_empty || fail "A's plain job did not end"
# the factor is recomputed each minute (PriorityCalcPeriod=1)
fs_below() {
	awk -v a="$(fs_of "$HOSTILE_USER")" -v b="$(fs_of "$VICTIM_USER")" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0) }'
}
wait_for 90 fs_below || true
fa=$(fs_of "$HOSTILE_USER")
fb=$(fs_of "$VICTIM_USER")
note "fair share: A ($HOSTILE_USER) $fa, B ($VICTIM_USER) $fb"
awk -v a="$fa" -v b="$fb" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0) }' ||
	fail "A's fair share ($fa) is not below B's ($fb) after A's usage: $(sshare -a -l 2>&1 | tail -5)"

# --- the batches -------------------------------------------------------------
mu_b_first fa fb 3 "fair share"
note "ok: batches in fair-share order"
