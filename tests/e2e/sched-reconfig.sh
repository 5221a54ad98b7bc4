#!/bin/sh
# sched-reconfig.sh - reconfiguring running tasks on a real cluster: two
# tasks of a batch that opted in (--saturn-reconfigure) start on the one
# GPU per node that other jobs leave free (those jobs ask for 10 minutes);
# the other jobs end after ~20 s, so the tail of the batch would run on 1
# GPU of a half-idle node. sched/saturn signals both tasks (SIGUSR1),
# saturn-run checkpoints and exits 75, Slurm requeues them (RequeueExit=75,
# cred_expire=5), they come back held, and the next plan releases them on 8
# GPUs; they resume from their progress file. Asserts: the decision is
# logged with its expected gain, each task was requeued once and finished
# on 8 GPUs, every task completed exactly once, and the batch ended well
# before the first plan's makespan (what it would have taken on 1 GPU).
# First, as a control, the same batch without the opt-in is left alone.
. "$(dirname "$0")/sched-lib.sh"
export SATURN_NODES=2 SATURN_GPUS_PER_NODE=8 SATURN_CRED_EXPIRE=5 SATURN_REQUEUE_EXIT=75
sched_setup 75 "saturn_reconfigure_margin=10,saturn_reconfigure_checkpoint=5,saturn_reconfigure_startup=5"

# gpt2-xl, batch size 16, time scale 0.1 (saturn-emulate --print-model
# figures x 0.1): 1200 batches take ~150 s on 1 GPU, ~23 s on 8.
cat >"$(profile_file e2e-rc)" <<'EOP'
{ "format": "saturn-profile/1", "batch": "e2e-rc", "created": 1,
  "tasks": [ { "signature": "gpt2-xl/bs16", "task_ids": "0-1", "batches": 1200,
    "options": [
      { "technique": "single", "gpus": 1, "sec_per_batch": 0.1255153, "status": "measured" },
      { "technique": "ddp", "gpus": 2, "sec_per_batch": 0.0649178, "status": "measured" },
      { "technique": "ddp", "gpus": 4, "sec_per_batch": 0.0346190, "status": "measured" },
      { "technique": "ddp", "gpus": 8, "sec_per_batch": 0.0194696, "status": "measured" } ] } ] }
EOP
STARTLOG="$SATURN_CLUSTER_DIR/starts.log"
: >"$STARTLOG"
cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
export PATH="$top_builddir/runner:\$PATH"
t=\${SLURM_ARRAY_TASK_ID:-0}
echo "start task=\$t job=\$SLURM_JOB_ID restarts=\${SLURM_RESTART_COUNT:-0} saturn_gpus=\${SATURN_GPUS:-} at=\$(date +%s)" >>$STARTLOG
srun saturn-run --batches 1200 --grace 20 -- saturn-emulate --model gpt2-xl --batch-size 16 --time-scale 0.1
rc=\$?
[ \$rc = 0 ] && echo "task=\$t job=\$SLURM_JOB_ID technique=\${SATURN_TECHNIQUE:-} saturn_gpus=\${SATURN_GPUS:-} end=\$(date +%s)" >>$JOBLOG
exit \$rc
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

# a bad value is refused at submission
out=$(sbatch --saturn-batch=e2e-bad --saturn-reconfigure=maybe --gres=gpu:1 --wrap true 2>&1) &&
	fail "sbatch accepted --saturn-reconfigure=maybe: $out"
echo "$out" | grep -q "bad --saturn-reconfigure value 'maybe'" || fail "no clear error for --saturn-reconfigure=maybe: $out"

# 7 of the 8 GPUs of each node taken for "10 minutes" (they end after 20 s):
# one job on both nodes, so that both nodes' GPUs come free in the same
# cycle (two jobs, one a node, end seconds apart on a loaded machine, and a
# cycle in between rightly moves both tasks onto the first node that is free)
blockers() {
	sbatch --parsable -N2 -w n1,n2 --gres=gpu:7 --time=10 -o /dev/null --wrap 'sleep 20' >/dev/null ||
		fail "sbatch blocker on n1 and n2"
	wait_for 30 sh -c '[ "$(squeue -h -t R -o %i | wc -l)" = 1 ]' || fail "the other job did not start"
}

# Control: the same batch without --saturn-reconfigure (saturn_reconfigure
# is no) keeps running on 1 GPU after the other jobs end.
blockers
ctl=$(sbatch --parsable --saturn-batch=e2e-rc --requeue --array=0-1 --gres=gpu:1 --time=10 -o /dev/null \
	"$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch (control)"
wait_for 40 sh -c "[ \$(grep -c '^start ' $STARTLOG) -ge 2 ]" || fail "the control tasks did not start"
wait_for 60 sh -c '[ "$(squeue -h -t R -o %b | grep -c "gpu:7")" = 0 ]' || fail "the other job did not end"
sleep 15 # several cycles with the GPUs idle
grep -aq 'reconfiguring JobId=' "$CTLD_LOG" && fail "a task that did not opt in was reconfigured"
[ "$(squeue -h -j "$ctl" -t R -o %b | grep -c 'gpu:1')" = 2 ] || fail "the control tasks do not run on 1 GPU each"
note "control: not opted in, still on 1 GPU with the other GPUs idle"
scancel "$ctl"
wait_for 60 queue_empty || fail "control batch not cancelled"
: >"$STARTLOG"
: >"$JOBLOG"

blockers

t0=$(date +%s)
job=$(sbatch --parsable --saturn-batch=e2e-rc --saturn-reconfigure --requeue --array=0-1 --gres=gpu:1 \
	--time=10 -o "$SATURN_CLUSTER_DIR/task-%a.out" "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
note "array $job submitted"
wait_for 40 sh -c "[ \$(grep -c '^start ' $STARTLOG) -ge 2 ]" || fail "the tasks did not start"
grep -q 'saturn_gpus=1 ' "$STARTLOG" || { cat "$STARTLOG"; fail "the tasks did not start on 1 GPU"; }
wait_for 20 grep -q "\"${job}_1\"" "$STATE_DIR/state.json" || fail "no state with the batch's plan"
first_end=$(awk -F'[:,]' '/"makespan_end"/ { gsub(/ /, "", $2); print int($2); exit }' "$STATE_DIR/state.json")
note "first plan ends at $first_end ($((first_end - t0)) s after the submission)"
[ $((first_end - t0)) -ge 100 ] || fail "first plan ends $((first_end - t0)) s after the submission: not the 1-GPU plan"

# the decision, with its expected gain
wait_for 90 grep -q 'sched/saturn: reconfiguring JobId=' "$CTLD_LOG" || fail "no reconfiguration logged"
grep -a 'sched/saturn: reconfiguring JobId=' "$CTLD_LOG" | head -2 | sed 's/^/# /'
grep -aq 'reconfiguring JobId=.*-> ddp on 8 GPU(s).*expected gain [0-9]' "$CTLD_LOG" || fail "decision without the 8-GPU option or its gain"

wait_for 240 queue_empty || fail "batch did not finish"
t1=$(date +%s)
note "starts:"
sed 's/^/#   /' "$STARTLOG"
assert_each_once 2
for i in 0 1; do
	grep -aq "re-held JobId=${job}_$i(" "$CTLD_LOG" || fail "task $i was not re-held after its requeue"
done
for i in 0 1; do
	line=$(grep "^task=$i " "$JOBLOG")
	[ "$(field saturn_gpus "$line")" = 8 ] || fail "task $i finished with $(field saturn_gpus "$line") GPUs, not 8: $line"
	grep -q "^start task=$i .*restarts=1 saturn_gpus=8 " "$STARTLOG" || fail "task $i was not restarted once on 8 GPUs"
	c=$(grep -c "^start task=$i " "$STARTLOG")
	[ "$c" = 2 ] || fail "task $i started $c times, expected 2 (once, then after the requeue)"
done
wait_for 20 grep -aq 'sched/saturn: reconfigured JobId=.* ended .*realised gain' "$CTLD_LOG" || fail "no realised gain logged"
grep -a 'sched/saturn: reconfigured JobId=' "$CTLD_LOG" | sed 's/^/# /'
note "batch done at +$((t1 - t0)) s; the first plan said +$((first_end - t0)) s"
[ "$t1" -lt $((first_end - 30)) ] || fail "the batch ended at +$((t1 - t0)) s, not sooner than the 1-GPU plan (+$((first_end - t0)) s)"
note "ok"
