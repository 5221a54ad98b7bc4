#!/bin/sh
# hostile-requeue.sh - a task that requeues itself does not keep its place
# ahead of another user's task. One node of 8 GPUs, RequeueExit=75. The
# attacker's profile claims 600 s on all 8 GPUs; its task starts, and the
# victim's 8-GPU task (4 s, honest profile) is planned after it ("starts in
# ~10m"). Then the attacker's task gives up its run: first by `scontrol
# requeue` as its user, then, with a second task, by exiting 75 after 15 s
# (Slurm requeues it; MaxBatchRequeue does not count RequeueExit). Before:
# sched/saturn re-held it and planned the full 600 s again from then, ahead
# of the victim, run after run (the carried plan kept it first), so the
# victim waited ~10 minutes with the GPUs mostly idle. Now
# a task that requeued itself is charged like a running task (it starts no
# earlier than the release of the run it gave up plus its claimed 600 s)
# and queued behind the tasks submitted before its requeue: the victim runs
# within a few cycles, and the attacker does not run again before it.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_users
export SATURN_NODES=1 SATURN_CRED_EXPIRE=10 SATURN_REQUEUE_EXIT=75
sched_setup 86
hostile_dirs

fa=$(profile_file loop "$HOSTILE_UID")
fb=$(profile_file honest "$VICTIM_UID")
echo '{ "format": "saturn-profile/1", "batch": "loop", "created": 1, "tasks": [ { "signature": "m", "task_ids": "0", "batches": 600, "options": [ { "technique": "ddp", "gpus": 8, "sec_per_batch": 1, "status": "measured" } ] } ] }' >"$fa"
echo '{ "format": "saturn-profile/1", "batch": "honest", "created": 1, "tasks": [ { "signature": "m", "task_ids": "0", "batches": 40, "options": [ { "technique": "ddp", "gpus": 8, "sec_per_batch": 0.1, "status": "measured" } ] } ] }' >"$fb"
chown "$HOSTILE_UID" "$fa"
chown "$VICTIM_UID" "$fb"
chmod 600 "$fa" "$fb"

# the attacker: logs each start, then gives up the run after RUN seconds
cat >"$SATURN_CLUSTER_DIR/loop.sh" <<EOS
#!/bin/sh
echo "attacker job=\$SLURM_JOB_ID restarts=\${SLURM_RESTART_COUNT:-0} start=\$(date +%s)" >>$JOBLOG
sleep \${RUN:-15}
exit 75
EOS
cat >"$SATURN_CLUSTER_DIR/victim.sh" <<EOS
#!/bin/sh
echo "victim job=\$SLURM_JOB_ID start=\$(date +%s)" >>$JOBLOG
sleep 4
EOS
chmod 755 "$SATURN_CLUSTER_DIR/loop.sh" "$SATURN_CLUSTER_DIR/victim.sh"

# reason JOB: the job's pending reason as squeue shows it
reason() {
	squeue -h -j "$1" -o %R 2>/dev/null
}

# attack HOW RUN: the attacker's task starts, the victim's is planned after
# it; the attacker gives up its run (HOW: exit, or requeue); the victim
# must have run within 45 s of that, before the attacker's next start.
attack() {
	a=$(as_attacker sbatch --parsable --saturn-batch=loop --requeue --gres=gpu:8 --time=15 -o /dev/null \
		--export=ALL,RUN="$2" "$SATURN_CLUSTER_DIR/loop.sh") || fail "attacker sbatch ($1)"
	wait_for 40 grep -q "^attacker job=$a restarts=0 " "$JOBLOG" || fail "the attacker's task $a did not start ($1)"
	v=$(as_victim sbatch --parsable --saturn-batch=honest --gres=gpu:8 --time=2 -o /dev/null \
		"$SATURN_CLUSTER_DIR/victim.sh") || fail "victim sbatch ($1)"
	# planned after the attacker's claimed 600 s (else the test proves nothing)
	wait_for 20 sh -c "squeue -h -j $v -o %R | grep -q 'starts in ~[0-9]*m'" ||
		fail "the victim's task $v was not planned after the attacker's ($1): $(reason "$v")"
	note "$1: victim $v: $(reason "$v")"
	if [ "$1" = requeue ]; then
		as_attacker scontrol requeue "$a" || fail "scontrol requeue $a as $HOSTILE_USER"
	else
		wait_for 40 sh -c "[ -z \"\$(squeue -h -j $a -t R -o %i)\" ]" ||
			fail "the attacker's task $a did not exit ($1)"
	fi
	gave_up=$(date +%s)
	wait_for 45 grep -q "^victim job=$v " "$JOBLOG" ||
		fail "the victim's task $v did not run within 45 s of the attacker's $1 (reason: $(reason "$v"); attacker: $(reason "$a"))"
	note "$1: victim ran $(($(date +%s) - gave_up)) s after the attacker gave up its run"
	grep -q "^attacker job=$a restarts=1 " "$JOBLOG" &&
		fail "the attacker's task $a ran again before the victim's ($1)"
	# (the victim may start in the cycle between its exit and Slurm's requeue)
	wait_for 15 grep -aq "JobId=$a (batch loop) requeued itself (restart 1): charged like a running task" "$CTLD_LOG" ||
		fail "no charge of $a logged ($1)"
	wait_for 10 sh -c "squeue -h -j $a -o %R | grep -q 'requeued itself: not before'" ||
		fail "the attacker's reason does not say why it waits ($1): $(reason "$a")"
	note "$1: attacker $a: $(reason "$a")"
	ATTACKERS="${ATTACKERS:-} $a"
}

# `scontrol requeue` first: Slurm requeues the running task in one step,
# and without the rule the victim is never released (the test fails
# there). After an exit 75 the task is completing, neither running nor
# pending, until its epilog is done and Slurm requeues it: a cycle that
# falls in that moment releases the victim whatever the rule (on main it
# did in one of two runs), so that case comes second and checks the
# charge and the reason.
attack requeue 300
attack exit 15
cat "$JOBLOG"
[ "$(grep -c '^victim ' "$JOBLOG")" = 2 ] || fail "the victim's tasks did not run once each"
# shellcheck disable=SC2086
scancel $ATTACKERS
note "ok"
