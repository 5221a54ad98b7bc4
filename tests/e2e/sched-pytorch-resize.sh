#!/bin/sh
# sched-pytorch-resize.sh - a reconfiguration with real training: a Saturn
# batch of one task trains contrib/pytorch/train.py (DDP, gloo on the CPU,
# ranks started by saturn-run under srun) on a node of 4 fake GPUs of
# which another job holds 2 "for 10 minutes" (it ends after ~20 s). The
# plan gives the task the 2 free GPUs; once all 4 are free, sched/saturn
# signals it (SIGUSR1), train.py checkpoints (model, optimizer, batch, RNG)
# and saturn-run exits 75, Slurm requeues the job (RequeueExit=75,
# cred_expire=5), the plugin re-holds it and releases it on 4 GPUs, and
# train.py resumes from its checkpoint with 4 ranks. The sleep per batch is
# 0.8 s / SATURN_GPUS, so DDP on 4 GPUs really is twice as fast as on 2,
# as the profile says. Asserts: the decision is logged (-> ddp on 4
# GPUs) and so is its realised gain; the job started twice (2 GPUs, then 4 after one requeue), was
# re-held, and completed once; the batch log holds every global batch
# once, world=2 before the checkpoint's batch and world=4 from it on; the
# loss fell (mean of the last tenth below the first tenth).
# Skipped (77) without PyTorch in /usr/bin/python3 (the python3 first on
# PATH may lack it).
py=/usr/bin/python3
$py -c 'import torch' 2>/dev/null || {
	echo "SKIP: no PyTorch in $py"
	exit 77
}
. "$(dirname "$0")/sched-lib.sh"
export SATURN_NODES=1 SATURN_GPUS_PER_NODE=4 SATURN_CRED_EXPIRE=5 SATURN_REQUEUE_EXIT=75
# saturn_reconfigure_max=1: the restarted task is left alone (one restart)
sched_setup 77 "saturn_reconfigure_margin=5,saturn_reconfigure_checkpoint=5,saturn_reconfigure_startup=5,saturn_reconfigure_max=1"

N=200
# what the task script below does: 0.8 s / GPUs per batch (sleep) plus a
# little compute; DDP scales well (2 GPUs twice as slow as 4)
cat >"$(profile_file e2e-pt)" <<EOP
{ "format": "saturn-profile/1", "batch": "e2e-pt", "created": 1,
  "tasks": [ { "signature": "mlp32x2/bs16", "task_ids": "0", "batches": $N,
    "options": [
      { "technique": "single", "gpus": 1, "sec_per_batch": 0.82, "status": "measured" },
      { "technique": "ddp", "gpus": 2, "sec_per_batch": 0.42, "status": "measured" },
      { "technique": "ddp", "gpus": 4, "sec_per_batch": 0.22, "status": "measured" } ] } ] }
EOP
D=$SATURN_CLUSTER_DIR
STARTLOG="$D/starts.log"
BLOG="$D/batches.log"
: >"$STARTLOG"
cat >"$D/task.sh" <<EOS
#!/bin/sh
export PATH="$top_builddir/runner:\$PATH" OMP_NUM_THREADS=1
echo "start job=\$SLURM_JOB_ID restarts=\${SLURM_RESTART_COUNT:-0} saturn_gpus=\${SATURN_GPUS:-} technique=\${SATURN_TECHNIQUE:-} at=\$(date +%s)" >>$STARTLOG
sleep_s=\$(awk "BEGIN { print 0.8 / \${SATURN_GPUS:-1} }")
srun saturn-run --batches $N --grace 30 -- $py "$top_srcdir/contrib/pytorch/train.py" \\
	--hidden 32 --layers 2 --batch-size 16 --lr 0.003 --batch-sleep \$sleep_s \\
	--checkpoint $D/ck.pt --batch-log $BLOG
rc=\$?
echo "run job=\$SLURM_JOB_ID restarts=\${SLURM_RESTART_COUNT:-0} saturn_gpus=\${SATURN_GPUS:-} rc=\$rc" >>$STARTLOG
[ \$rc = 0 ] && echo "task=0 job=\$SLURM_JOB_ID technique=\${SATURN_TECHNIQUE:-} saturn_gpus=\${SATURN_GPUS:-} end=\$(date +%s)" >>$JOBLOG
exit \$rc
EOS
chmod 755 "$D/task.sh"

# 2 of the 4 GPUs taken for "10 minutes" (the job ends after 20 s)
sbatch --parsable -w n1 --gres=gpu:2 --time=10 -o /dev/null --wrap 'sleep 20' >/dev/null || fail "sbatch blocker"
wait_for 30 sh -c '[ "$(squeue -h -t R -o %i | wc -l)" = 1 ]' || fail "the other job did not start"

t0=$(date +%s)
job=$(sbatch --parsable --saturn-batch=e2e-pt --saturn-reconfigure --requeue --array=0 --gres=gpu:1 \
	--time=10 --open-mode=append -o "$D/task.out" "$D/task.sh") || fail "sbatch"
note "array $job submitted"
# Slurm names a one-task array's only task by the array's id
jid="$job\\(_0\\)\\{0,1\\}[ (]"
wait_for 40 grep -q '^start ' "$STARTLOG" || fail "the task did not start"
grep -q '^start .*restarts=0 saturn_gpus=2 technique=ddp ' "$STARTLOG" ||
	{ cat "$STARTLOG"; fail "the task did not start with ddp on 2 GPUs"; }

wait_for 120 grep -q 'sched/saturn: reconfiguring JobId=' "$CTLD_LOG" || fail "no reconfiguration logged"
grep -a 'sched/saturn: reconfiguring JobId=' "$CTLD_LOG" | sed 's/^/# /'
grep -aq "reconfiguring JobId=$jid.*ddp on 2 GPU(s).*-> ddp on 4 GPU(s).*expected gain [0-9]" "$CTLD_LOG" ||
	fail "decision is not ddp 2 -> 4 GPUs with its gain"
note "decision at +$(($(date +%s) - t0)) s"

wait_for 180 queue_empty || fail "batch did not finish"
note "done at +$(($(date +%s) - t0)) s; starts and runs:"
sed 's/^/#   /' "$STARTLOG"
grep -a 'checkpointed at\|stopped without' "$D/task.out" | sed 's/^/#   /'

# the job: one requeue, one completed run
assert_each_once 1
line=$(grep '^task=0 ' "$JOBLOG")
[ "$(field saturn_gpus "$line")" = 4 ] || fail "the task completed on $(field saturn_gpus "$line") GPUs, not 4: $line"
[ "$(grep -c '^start ' "$STARTLOG")" = 2 ] || fail "the task started $(grep -c '^start ' "$STARTLOG") times, expected 2"
grep -q '^run .*restarts=0 saturn_gpus=2 rc=75$' "$STARTLOG" || fail "the 2-GPU run did not end with 75 (checkpoint)"
grep -q '^start .*restarts=1 saturn_gpus=4 technique=ddp ' "$STARTLOG" || fail "the task was not restarted once on 4 GPUs"
grep -q '^run .*restarts=1 saturn_gpus=4 rc=0$' "$STARTLOG" || fail "the 4-GPU run did not complete"
grep -aq "re-held JobId=$jid" "$CTLD_LOG" || fail "the task was not re-held after its requeue"
[ "$(grep -ac "sched/saturn: reconfiguring JobId=$jid" "$CTLD_LOG")" = 1 ] || fail "the task was reconfigured more than once"
wait_for 20 grep -aq "reconfigured JobId=$jid.*ended .*realised gain" "$CTLD_LOG" || fail "no realised gain logged"
grep -a 'sched/saturn: reconfigured JobId=' "$CTLD_LOG" | sed 's/^/# /'
k=$(sed -n 's/.*checkpointed at batch \([0-9]*\);.*/\1/p' "$D/task.out")
[ -n "$k" ] || { cat "$D/task.out"; fail "saturn-run did not report a checkpoint"; }

# the training: every batch once, 2 ranks then 4 from the checkpoint on,
# the loss falling
$py - "$BLOG" $N "$k" <<'P' || { sed 's/^/#   /' "$BLOG"; fail "batch log of the resize"; }
import sys
path, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [dict(f.split("=") for f in l.split()) for l in open(path)]
batches = [int(r["batch"]) for r in rows]
assert sorted(batches) == list(range(n)), "batches lost or repeated: %s" % batches
assert 0 < k < n, "checkpoint at batch %d, not mid-run" % k
world = {int(r["batch"]): int(r["world"]) for r in rows}
assert all(world[b] == 2 for b in range(k)), "world before batch %d is not 2" % k
assert all(world[b] == 4 for b in range(k, n)), "world from batch %d on is not 4" % k
loss = [float(r["loss"]) for r in sorted(rows, key=lambda r: int(r["batch"]))]
t = max(1, n // 10)
first, last = sum(loss[:t]) / t, sum(loss[-t:]) / t
assert last < first, "loss did not fall: first tenth %.4f, last tenth %.4f" % (first, last)
print("# resize at batch %d of %d: each batch once, world 2 -> 4, loss %.4f -> %.4f" % (k, n, first, last))
P
note "ok"
