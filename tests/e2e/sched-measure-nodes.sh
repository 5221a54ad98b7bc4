#!/bin/sh
# sched-measure-nodes.sh - a predicted multi-node option is measured on its
# nodes before a task runs on it (saturn_measure_predicted with
# saturn_profiler). Four nodes of 4 GPUs; the batch's profile has ddp on
# one node measured (slow) and ddp on 2 nodes x 2 GPUs predicted (fast).
# The plan puts the tasks on the two-node option; they stay held
# "saturn: measuring predicted ddp on 2 GPUs x 2 nodes (job M)" while one
# saturn-measure:NAME job on 2 nodes (gres 2 GPUs per node) runs
# saturn-profile --measure TASK:ddp:2x2; the profile comes back with that
# option measured (nodes 2), and every task then runs once, on 2 nodes.
. "$(dirname "$0")/sched-lib.sh"
[ -x "$top_builddir/profiler/saturn-profile" ] && [ -x "$top_builddir/runner/saturn-run" ] ||
	skip "saturn-profile/saturn-run not built"
export SATURN_NODES=4 SATURN_GPUS_PER_NODE=4
wrap="${TMPDIR:-/tmp}/saturn-e2e-mnmeas-$$"
cat >"$wrap" <<EOW
#!/bin/sh
echo "nodes=\${SLURM_JOB_NUM_NODES:-} \$*" >>"\${0}.calls"
exec "$top_builddir/profiler/saturn-profile" --backend cpu --timeout 60 --trial-batches 2 "\$@"
EOW
chmod 755 "$wrap"
sched_setup 96 "saturn_profiler=$wrap,saturn_profile_time=5"
B=e2e-mnmeas
cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
export PATH="$top_builddir/runner:\$PATH"
t=\${SLURM_ARRAY_TASK_ID:-0}
if [ "\${SATURN_MODE:-}" = "" ]; then
	echo "task=\$t job=\$SLURM_JOB_ID technique=\${SATURN_TECHNIQUE:-} saturn_gpus=\${SATURN_GPUS:-} nnodes=\$SLURM_JOB_NUM_NODES" >>$JOBLOG
fi
saturn-run --batches 40 -- saturn-emulate --model gpt2 --batch-size 8 --time-scale 0.001
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

# a real profile of the task (outside Slurm), then ddp on one node kept
# measured but 20x slower, and a predicted ddp on 2 nodes x 2 GPUs added
SATURN_SRUN= CUDA_VISIBLE_DEVICES=0,1,2,3 PATH="$top_builddir/runner:$PATH" \
	"$top_builddir/profiler/saturn-profile" --backend cpu --no-cache --trial-batches 2 \
	--batch "$B" --script "$SATURN_CLUSTER_DIR/task.sh" --task-ids 0-1 --techniques ddp \
	--output "$SATURN_CLUSTER_DIR/real.json" 2>"$SATURN_CLUSTER_DIR/prof.log" ||
	fail "local profile: $(tail -3 "$SATURN_CLUSTER_DIR/prof.log")"
python3 - "$SATURN_CLUSTER_DIR/real.json" "$(profile_file "$B")" <<'P' || fail "profile edit"
import json, sys
p = json.load(open(sys.argv[1]))
assert len(p["tasks"]) == 1, "one signature expected"
t = p["tasks"][0]
one = [dict(o, sec_per_batch=o["sec_per_batch"] * 20) for o in t["options"]
       if o["technique"] == "ddp" and o["sec_per_batch"] > 0 and o.get("nodes", 1) == 1]
two = [o for o in one if o["gpus"] == 2][0]
t["options"] = one + [dict(two, nodes=2, status="predicted", sec_per_batch=two["sec_per_batch"] / 100,
                           reason="edited for the test")]
json.dump(p, open(sys.argv[2] + ".tmp", "w"))
P
mv "$(profile_file "$B").tmp" "$(profile_file "$B")"

job=$(sbatch --parsable --saturn-batch=$B --array=0-1 --gres=gpu:1 --time=3 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
wait_for 60 grep -q "batch $B of uid 0: measuring predicted option(s) [01]:ddp:2x2" "$CTLD_LOG" ||
	fail "no two-node measurement job submitted: $(grep "batch $B" "$CTLD_LOG" | tail -5)"
mj=$(sed -n "s/.*batch $B of uid 0: measuring predicted option(s) .* (job \([0-9]*\), round 1).*/\1/p" "$CTLD_LOG" | head -1)
note "measurement job $mj: $(grep -o 'measuring predicted option(s) [^ ]*' "$CTLD_LOG" | head -1)"
grep -q "submitted measurement job $mj (gres[:/]gpu:2, 2 node(s)" "$CTLD_LOG" ||
	fail "measurement job not on 2 nodes with 2 GPUs each: $(grep "submitted measurement job $mj" "$CTLD_LOG")"
wait_for 10 sh -c "squeue -h -j $job -t PD -o %R | grep -q 'saturn: measuring predicted ddp on 2 GPUs x 2 nodes (job $mj)'" ||
	fail "reason while measuring: $(squeue -h -j "$job" -o %R)"
[ -z "$(grep '^task=' "$JOBLOG")" ] || fail "a task started on a prediction"
wait_for 180 queue_empty || fail "batch did not finish"
assert_each_once 2
grep -q "^nodes=2 .*--measure '\?[01]:ddp:2x2" "$wrap.calls" || fail "the profiler did not measure on 2 nodes: $(cat "$wrap.calls")"
python3 - "$(profile_file "$B")" <<'P' || fail "the two-node option is not measured"
import json, sys
p = json.load(open(sys.argv[1]))
o = [o for o in p["tasks"][0]["options"] if o.get("nodes", 1) == 2]
assert len(o) == 1 and o[0]["status"] == "measured" and o[0]["gpus"] == 2, o
P
for t in 0 1; do
	line=$(grep "^task=$t " "$JOBLOG")
	[ "$(field technique "$line")" = ddp ] || fail "task $t: $line"
	[ "$(field nnodes "$line")" = 2 ] || fail "task $t not on 2 nodes: $line"
	[ "$(field saturn_gpus "$line")" = 2 ] || fail "task $t not on 2 GPUs per node: $line"
done
grep -q "batch $B of uid 0: measurement job $mj ended" "$CTLD_LOG" || fail "measurement end not logged"
[ "$(grep -c "batch $B of uid 0: measuring predicted option" "$CTLD_LOG")" = 1 ] || fail "more than one measurement job"
rm -f "$wrap" "$wrap.calls"
note "ok"
