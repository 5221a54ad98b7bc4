#!/bin/sh
# sched-multinode-ddp.sh - real training across two slurmd nodes: a Saturn
# batch whose profile has only a two-node option (ddp, 2 GPUs per node)
# trains contrib/pytorch/train.py (DDP, gloo on the CPU). sched/saturn
# releases it onto both nodes; saturn-run in the batch script starts the
# 4 ranks as one srun step (2 per node, MASTER_ADDR the loopback address:
# the nodes of the one-machine cluster share it). Asserts: the job ran on
# n1 and n2, ranks 0-3 ran 2 on each node, every global batch is logged
# once with world=4, and the loss fell.
# Skipped (77) without PyTorch in /usr/bin/python3 (the python3 first on
# PATH may lack it).
py=/usr/bin/python3
$py -c 'import torch' 2>/dev/null || {
	echo "SKIP: no PyTorch in $py"
	exit 77
}
. "$(dirname "$0")/sched-lib.sh"
export SATURN_NODES=2 SATURN_GPUS_PER_NODE=2
sched_setup 92

N=60
cat >"$(profile_file e2e-mnddp)" <<EOP
{ "format": "saturn-profile/1", "batch": "e2e-mnddp", "created": 1,
  "tasks": [ { "signature": "mlp32x2/bs16", "task_ids": "0", "batches": $N,
    "options": [ { "technique": "ddp", "gpus": 2, "nodes": 2, "sec_per_batch": 0.2, "status": "measured" } ] } ] }
EOP
D=$SATURN_CLUSTER_DIR
BLOG="$D/batches.log"
RLOG="$D/ranks.log"
: >"$RLOG"
chmod 666 "$RLOG"
cat >"$D/task.sh" <<EOS
#!/bin/sh
export PATH="$top_builddir/runner:\$PATH" OMP_NUM_THREADS=1 SATURN_MASTER_ADDR=127.0.0.1 GLOO_SOCKET_IFNAME=lo
echo "job=\$SLURM_JOB_ID nodelist=\$SLURM_JOB_NODELIST nnodes=\$SLURM_JOB_NUM_NODES saturn_gpus=\${SATURN_GPUS:-}" >>$JOBLOG
saturn-run --batches $N --grace 30 -- sh -c 'echo "node=\$SLURMD_NODENAME rank=\$RANK local=\$LOCAL_RANK world=\$WORLD_SIZE" >>$RLOG; exec $py "$top_srcdir/contrib/pytorch/train.py" --hidden 32 --layers 2 --batch-size 16 --lr 0.003 --batch-log $BLOG'
rc=\$?
echo "rc=\$rc" >>$JOBLOG
exit \$rc
EOS
chmod 755 "$D/task.sh"

job=$(sbatch --parsable --saturn-batch=e2e-mnddp --array=0 --gres=gpu:1 --time=5 -o "$D/task.out" "$D/task.sh") || fail "sbatch"
note "array $job submitted"
wait_for 240 queue_empty || fail "the task did not finish"
note "job log:"
sed 's/^/#   /' "$JOBLOG"
note "ranks:"
sort "$RLOG" | sed 's/^/#   /'
grep -q '^rc=0$' "$JOBLOG" || { sed 's/^/#   /' "$D/task.out"; fail "the training failed"; }
line=$(grep '^job=' "$JOBLOG")
[ "$(field nnodes "$line")" = 2 ] || fail "the task ran on $(field nnodes "$line") node(s)"
[ "$(field saturn_gpus "$line")" = 2 ] || fail "SATURN_GPUS=$(field saturn_gpus "$line"), planned 2 per node"
[ "$(scontrol show hostnames "$(field nodelist "$line")" | sort | tr '\n' ' ')" = "n1 n2 " ] ||
	fail "the task ran on $(field nodelist "$line"), not n1 and n2"
for n in n1 n2; do
	[ "$(grep -c "^node=$n .*world=4\$" "$RLOG")" = 2 ] || fail "not 2 ranks of world 4 on $n: $(cat "$RLOG")"
done
[ "$(sed -n 's/.* rank=\([0-9]*\) .*/\1/p' "$RLOG" | sort -n | tr '\n' ' ')" = "0 1 2 3 " ] ||
	fail "ranks are not 0-3: $(cat "$RLOG")"
$py - "$BLOG" $N <<'P' || { sed 's/^/#   /' "$BLOG"; fail "batch log"; }
import sys
path, n = sys.argv[1], int(sys.argv[2])
rows = [dict(f.split("=") for f in l.split()) for l in open(path)]
assert sorted(int(r["batch"]) for r in rows) == list(range(n)), "batches lost or repeated"
assert all(int(r["world"]) == 4 for r in rows), "world is not 4 throughout"
loss = [float(r["loss"]) for r in sorted(rows, key=lambda r: int(r["batch"]))]
t = max(1, n // 10)
first, last = sum(loss[:t]) / t, sum(loss[-t:]) / t
assert last < first, "loss did not fall: %.4f -> %.4f" % (first, last)
print("# %d batches on 2 nodes x 2 ranks, loss %.4f -> %.4f" % (n, first, last))
P
note "ok"
