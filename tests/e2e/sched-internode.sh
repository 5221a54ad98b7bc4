#!/bin/sh
# sched-internode.sh - saturn_internode_bw: the profiler job sched/saturn
# submits gets --internode-bw (and --internode-nodes, the cluster's node
# count); the profile it writes holds predicted ddp/fsdp options on two
# nodes, marked predicted with a reason naming the bandwidth; with
# saturn_measure_predicted=no sched/saturn cannot measure them and leaves
# them out of its plans (logged once): every task runs planned, on one
# node, exactly once. (Measured on their nodes otherwise:
# sched-measure-nodes.sh.)
. "$(dirname "$0")/sched-lib.sh"
[ -x "$top_builddir/profiler/saturn-profile" ] && [ -x "$top_builddir/runner/saturn-run" ] ||
	skip "saturn-profile/saturn-run not built"
export SATURN_NODES=2 SATURN_GPUS_PER_NODE=4
wrap="${TMPDIR:-/tmp}/saturn-e2e-inwrap-$$"
cat >"$wrap" <<EOW
#!/bin/sh
echo "\$@" >"${TMPDIR:-/tmp}/saturn-e2e-inwrap-$$.args"
exec "$top_builddir/profiler/saturn-profile" --backend cpu --timeout 60 --trial-batches 2 "\$@"
EOW
chmod 755 "$wrap"
sched_setup 95 "saturn_profiler=$wrap,saturn_profile_time=5,saturn_internode_bw=1000000,saturn_measure_predicted=no"
cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
export PATH="$top_builddir/runner:\$PATH"
t=\${SLURM_ARRAY_TASK_ID:-0}
if [ "\${SATURN_MODE:-}" = "" ]; then
	echo "task=\$t job=\$SLURM_JOB_ID technique=\${SATURN_TECHNIQUE:-} saturn_gpus=\${SATURN_GPUS:-} nnodes=\$SLURM_JOB_NUM_NODES" >>$JOBLOG
fi
srun saturn-run --batches 40 -- saturn-emulate --model gpt2 --batch-size 8 --time-scale 0.05
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

job=$(sbatch --parsable --saturn-batch=e2e-in --array=0-2 --gres=gpu:2 --time=3 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
wait_for 150 test -s "$STATE_DIR/profiles/0/e2e-in.json" || fail "no profile written"
grep -q -- "--internode-bw 1e+06 --internode-nodes 2" "$wrap.args" || fail "profiler arguments: $(cat "$wrap.args")"
python3 - "$STATE_DIR/profiles/0/e2e-in.json" <<'P' || fail "profile: no predicted two-node option"
import json, sys
p = json.load(open(sys.argv[1]))
multi = [o for t in p["tasks"] for o in t["options"] if o.get("nodes", 1) > 1]
assert multi, "none"
for o in multi:
    assert o["nodes"] == 2 and o["status"] == "predicted" and o["technique"] in ("ddp", "fsdp"), o
    assert "(--internode-bw)" in o["reason"], o
print(len(multi), "predicted two-node options")
P
wait_for 120 queue_empty || fail "batch did not finish"
assert_each_once 3
for t in 0 1 2; do
	line=$(grep "^task=$t " "$JOBLOG")
	tech=$(field technique "$line")
	[ -n "$tech" ] && [ "$tech" != user ] || fail "task $t not planned: $line"
	[ "$(field nnodes "$line")" = 1 ] || fail "task $t on several nodes from a prediction: $line"
done
[ "$(grep -c "predicted options on several nodes are left out of the plans: they cannot be measured (saturn_measure_predicted=no)" "$CTLD_LOG")" = 1 ] ||
	fail "leaving them out not logged once"
rm -f "$wrap" "$wrap.args"
note "ok"
