#!/bin/sh
# hostile-numbers.sh - one user's bad numbers never stop planning for the
# other: the attacker's batch has a profile whose batches x sec_per_batch is
# beyond the model's limits, and its running tasks write progress files
# with batches_total 1e300. The controller refuses both with a message
# naming the field, plans the attacker from the request, and the victim's
# batch (a sane profile) is planned and runs, every task exactly once;
# "cannot build the problem" is never logged.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_users
sched_setup 23
hostile_dirs

# attacker: 10^10 batches x 10^10 s; victim: 4 x 10 x 0.5 s on 4 GPUs,
# each in the user's own folder PROFILE_DIR/UID
BAD=$(profile_file bad "$HOSTILE_UID") || fail "no profile folder for $HOSTILE_USER"
GOOD=$(profile_file good "$VICTIM_UID") || fail "no profile folder for $VICTIM_USER"
cat >"$BAD" <<'EOP'
{ "format": "saturn-profile/1", "batch": "bad",
  "tasks": [ { "signature": "b", "task_ids": "0-1", "batches": 1e10,
    "options": [ { "technique": "ddp", "gpus": 4, "sec_per_batch": 1e10, "status": "measured" } ] } ] }
EOP
cat >"$GOOD" <<'EOP'
{ "format": "saturn-profile/1", "batch": "good",
  "tasks": [ { "signature": "g", "task_ids": "0-3", "batches": 10,
    "options": [ { "technique": "ddp", "gpus": 4, "sec_per_batch": 0.5, "status": "measured" } ] } ] }
EOP
chown "$HOSTILE_UID" "$BAD"
chown "$VICTIM_UID" "$GOOD"

# The attacker's tasks report an absurd amount of work left, then run on.
cat >"$SATURN_CLUSTER_DIR/bad.sh" <<'EOS'
#!/bin/sh
[ -n "${SATURN_PROGRESS_FILE:-}" ] &&
	printf '{"format":"saturn-progress/1","job_id":%s,"batches_done":5,"batches_total":1e300}\n' \
		"$SLURM_JOB_ID" >"$SATURN_PROGRESS_FILE"
sleep 20
EOS
chmod 755 "$SATURN_CLUSTER_DIR/bad.sh"
write_task_script "$SATURN_CLUSTER_DIR/good.sh" 3

bad=$(as_attacker sbatch --parsable --saturn-batch=bad --array=0-1 --gres=gpu:4 --time=5 \
	-o /dev/null "$SATURN_CLUSTER_DIR/bad.sh") || fail "attacker sbatch"
wait_for 30 sh -c "squeue -h -j $bad -t R -o %i | grep -q ." || { sched_dump; fail "attacker's batch did not start"; }
wait_for 30 sh -c "ls $STATE_DIR/progress/$HOSTILE_UID/*.json" || { sched_dump; fail "no progress file written"; }
note "attacker's tasks run; progress file: $(cat "$STATE_DIR"/progress/*.json | head -1)"

good=$(as_victim sbatch --parsable --saturn-batch=good --array=0-3 --gres=gpu:4 --time=2 \
	-o /dev/null "$SATURN_CLUSTER_DIR/good.sh") || fail "victim sbatch"
wait_for 120 sh -c "[ -z \"\$(squeue -h -j $good -o %i)\" ]" || { sched_dump; fail "victim's batch did not finish"; }
assert_each_once 4

grep -a 'profile rejected' "$CTLD_LOG" | grep -q 'bad.json: tasks\[0\] (b).options\[0\]: batches x sec_per_batch' ||
	{ sched_dump; fail "the attacker's profile was not refused with the field named"; }
grep -a 'progress file .*ignored' "$CTLD_LOG" | grep -q 'batches_total: 1e+300 is beyond the limit' ||
	{ sched_dump; fail "the attacker's progress file was not refused with the field named"; }
if grep -aq 'cannot build the problem' "$CTLD_LOG"; then
	sched_dump
	fail "a bad input stopped the plan for everybody"
fi
grep -a 'sched/saturn: plan ' "$CTLD_LOG" | grep -q . || fail "no plan logged"
scancel "$bad"
note "ok"
