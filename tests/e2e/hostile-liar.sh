#!/bin/sh
# hostile-liar.sh - a running task that lies about its progress does not
# strand another user's task. The attacker's 8-GPU task on n1 reports that
# it has 1 batch of 100 left (~2 s) and then runs on for minutes. The
# victim's 8-GPU task is planned onto n1 (it "frees first") and released
# there, pinned. n2 frees up (an ordinary job ends) while n1 stays busy.
# Before: the victim waited, pinned to n1, for the liar's real end while n2
# idled. Now: 60 s (SATURN_LATE_GRACE_S) after its release the victim is
# re-held and re-planned, the liar is marked as having overrun its plan
# (SATURN_OVERRAN) and planned until its time limit, and the victim runs on
# n2 long before the liar ends.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
export SATURN_NODES=2
hostile_users
sched_setup 16
hostile_dirs

LIAR=$(profile_file liar "$HOSTILE_UID") || fail "no profile folder for $HOSTILE_USER"
cat >"$LIAR" <<'EOP'
{ "format": "saturn-profile/1", "batch": "liar",
  "tasks": [ { "signature": "l", "task_ids": "0", "batches": 100,
    "options": [ { "technique": "ddp", "gpus": 8, "sec_per_batch": 2, "status": "measured" } ] } ] }
EOP
chown "$HOSTILE_UID" "$LIAR"

# The liar: "99 of 100 batches done" as soon as it starts, then 240 s more.
cat >"$SATURN_CLUSTER_DIR/liar.sh" <<'EOS'
#!/bin/sh
[ -n "${SATURN_PROGRESS_FILE:-}" ] &&
	printf '{"format":"saturn-progress/1","job_id":%s,"batches_done":99,"batches_total":100}\n' \
		"$SLURM_JOB_ID" >"$SATURN_PROGRESS_FILE"
sleep 240
EOS
chmod 755 "$SATURN_CLUSTER_DIR/liar.sh"
write_task_script "$SATURN_CLUSTER_DIR/victim.sh" 2

# n2: an ordinary (non-Saturn) job holds its 8 GPUs for 40 s of its 3-minute
# limit, so the plan sees n2 busy for 3 minutes and the liar's n1 free in ~2 s.
other=$(sbatch --parsable -w n2 --gres=gpu:8 --time=3 -o /dev/null --wrap 'sleep 40') ||
	fail "sbatch of the ordinary job"
wait_for 30 sh -c "squeue -h -j $other -t R -o %i | grep -q ." || { sched_dump; fail "the ordinary job did not start"; }

liar=$(as_attacker sbatch --parsable --saturn-batch=liar --gres=gpu:8 --time=6 -o /dev/null \
	"$SATURN_CLUSTER_DIR/liar.sh") || fail "attacker sbatch"
wait_for 40 sh -c "squeue -h -j $liar -t R -o %N | grep -qx n1" ||
	{ sched_dump; fail "the liar did not start on n1"; }
wait_for 30 sh -c "ls $STATE_DIR/progress/$HOSTILE_UID/*.json" || { sched_dump; fail "no progress file written"; }
liar_start=$(date +%s)

victim=$(as_victim sbatch --parsable --saturn-batch=small --gres=gpu:8 --time=2 -o /dev/null \
	"$SATURN_CLUSTER_DIR/victim.sh") || fail "victim sbatch"
# released onto n1, trusting the liar's progress (else the test proves nothing)
wait_for 40 sh -c "grep -a 'released JobId=$victim (task' '$CTLD_LOG' | grep -q ' on n1,'" ||
	{ sched_dump; fail "the victim was not released onto the liar's node n1"; }

# The victim must run long before the liar's real end (liar_start + 240 s):
# within the grace (60 s) + a few cycles after n2 frees (40 s).
wait_for 150 sh -c "[ -z \"\$(squeue -h -j $victim -o %i)\" ]" ||
	{ sched_dump; fail "the victim's task did not run while the liar's node stayed busy"; }
done_at=$(date +%s)
[ -n "$(squeue -h -j "$liar" -t R -o %i)" ] ||
	fail "the liar ended before the victim ran: the test proves nothing"
assert_each_once 1
line=$(grep -a '^task=0 ' "$JOBLOG")
[ "$(field node "$line")" = n2 ] || fail "the victim ran on $(field node "$line"), expected n2: $line"
grep -a 're-planning (n1 still busy' "$CTLD_LOG" | grep -q . ||
	{ sched_dump; fail "no re-plan of the late release was logged"; }
note "victim done $((done_at - liar_start)) s after the liar started (liar runs 240 s)"
scancel "$liar" "$other"
note "ok"
