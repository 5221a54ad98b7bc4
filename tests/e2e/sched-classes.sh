#!/bin/sh
# sched-classes.sh - a heterogeneous cluster (SATURN_GPU_CLASSES: n1-n2
# two "a100" GPUs each over PCIe, n3-n4 two "h100" over NVLink, gres.conf
# Links=): sched/saturn derives the two node classes from the nodes, shows
# them (state.json, `saturn status`), plans an untyped batch over both and
# releases every task with the GPU type of its node (gres:gpu:TYPE:N); a
# user's typed request (--gres=gpu:h100:1) runs on h100 nodes only and a
# --constraint=pcie batch on the PCIe nodes only; a type no node has stays
# held with a reason naming it; every task runs exactly once.
. "$(dirname "$0")/sched-lib.sh"
export SATURN_GPU_CLASSES="a100:pcie:2 h100:nvlink:2" SATURN_GPUS_PER_NODE=2
sched_setup 87
SATURN="$top_builddir/cli/saturn"

note "nodes: typed GRES and features"
scontrol show node n1 | grep -q 'Gres=gpu:a100:2' || fail "n1 has no gpu:a100:2: $(scontrol show node n1 | grep Gres)"
scontrol show node n4 | grep -q 'Gres=gpu:h100:2' || fail "n4 has no gpu:h100:2"
scontrol show node n3 | grep -q 'AvailableFeatures=h100,nvlink' || fail "n3 features: $(scontrol show node n3 | grep Features)"
grep -q 'Links=-1,2' "$SATURN_CLUSTER_DIR/etc/gres.conf" || fail "no NVLink Links= in gres.conf"

write_task_script "$SATURN_CLUSTER_DIR/task.sh" 3
# 8 untyped tasks, 1 GPU each: both classes are used
a=$(sbatch --parsable --saturn-batch=e2e-any --array=0-7 --gres=gpu:1 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch untyped"
note "untyped array $a"
wait_for 60 test -s "$STATE_DIR/state.json" || fail "no plan persisted"
wait_for 30 grep -q '"class":"h100x2-nvlink"' "$STATE_DIR/state.json" || fail "no class h100x2-nvlink in state.json: $(grep -c class "$STATE_DIR/state.json")"
grep -q '"class":"a100x2-pcie"' "$STATE_DIR/state.json" || fail "no class a100x2-pcie in state.json"
out=$("$SATURN" status --state-dir "$STATE_DIR" 2>&1) || true
echo "$out" | grep -q '^Node classes: a100x2-pcie: n1 n2 (4 GPUs); h100x2-nvlink: n3 n4 (4 GPUs)' ||
	fail "saturn status shows no classes: $(echo "$out" | head -5)"
grep -q 'sched/saturn: 2 node classes: a100x2-pcie: 2 nodes, 4 GPUs; h100x2-nvlink: 2 nodes, 4 GPUs' "$CTLD_LOG" ||
	fail "classes not logged: $(grep 'node class' "$CTLD_LOG" | head -2)"
wait_for 120 queue_empty || fail "untyped batch did not finish"
assert_each_once 8
# released typed, with the type of the node it ran on
for t in 0 1 2 3 4 5 6 7; do
	line=$(grep "^task=$t " "$JOBLOG")
	node=$(field node "$line")
	case "$node" in n1 | n2) want=a100 ;; n3 | n4) want=h100 ;; *) fail "task $t on '$node'" ;; esac
	grep -q "released JobId=${a}_$t(.*gres[:/]gpu:$want:1, class ${want}x2-" "$CTLD_LOG" ||
		fail "task $t ran on $node but was not released with gres:gpu:$want:1: $(grep "released JobId=${a}_$t " "$CTLD_LOG")"
done
nodes=$(sed -n 's/.* node=\(n[0-9]\) .*/\1/p' "$JOBLOG" | sort -u | tr '\n' ' ')
case "$nodes" in *n1*n3* | *n2*n3* | *n1*n4* | *n2*n4*) ;; *) fail "untyped batch did not use both classes: $nodes" ;; esac

note "a typed request: h100 only"
: >"$JOBLOG"
h=$(sbatch --parsable --saturn-batch=e2e-h100 --array=0-5 --gres=gpu:h100:1 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch typed"
wait_for 120 queue_empty || fail "typed batch did not finish"
assert_each_once 6
if grep -q ' node=n[12] ' "$JOBLOG"; then
	fail "a task that asked for h100 ran on an a100 node: $(grep ' node=n[12] ' "$JOBLOG")"
fi
grep "released JobId=${h}_" "$CTLD_LOG" | grep -v -q 'gres[:/]gpu:h100:1,' &&
	fail "typed task released without its type: $(grep "released JobId=${h}_" "$CTLD_LOG" | grep -v 'gres[:/]gpu:h100:1,' | head -1)"

note "--constraint=pcie: PCIe nodes only"
: >"$JOBLOG"
c=$(sbatch --parsable --saturn-batch=e2e-pcie --array=0-3 --gres=gpu:1 --constraint=pcie --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch constraint"
wait_for 120 queue_empty || fail "constrained batch did not finish"
assert_each_once 4
if grep -q ' node=n[34] ' "$JOBLOG"; then
	fail "a --constraint=pcie task ran on an NVLink node"
fi

note "a type no node has: held, the reason says so"
v=$(sbatch --parsable --saturn-batch=e2e-v100 --gres=gpu:v100:1 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch v100"
wait_for 30 sh -c "squeue -h -j $v -o %R | grep -q 'no usable GPU node has GPU type v100'" ||
	fail "v100 job reason: $(squeue -h -j "$v" -o %R)"
squeue -h -j "$v" -o %T | grep -q PENDING || fail "v100 job not pending"
scancel "$v"
wait_for 30 queue_empty || fail "v100 job not cancelled"
note "ok"
