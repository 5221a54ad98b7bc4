#!/bin/sh
# sched-multinode.sh - a Saturn batch mixing one-node and two-node tasks on
# a four-node cluster (4 GPUs each). The profile gives tasks 0-1 only a
# two-node option (2 GPUs per node) and tasks 2-3 a one-node option (4
# GPUs); a second batch without a profile asks --nodes=2 --gres=gpu:1.
# Each multi-node task must start on exactly the nodes the plan named
# (SLURM_JOB_NODELIST, scontrol show job), with the planned GPUs on every
# one of them, `saturn status` must draw it on each of its nodes, and every
# task runs exactly once. --nodes as a range is refused. Then a two-node
# task requeued by Slurm is re-held, re-planned and runs again on two nodes.
. "$(dirname "$0")/sched-lib.sh"
export SATURN_NODES=4 SATURN_GPUS_PER_NODE=4 SATURN_CRED_EXPIRE=10
sched_setup 91
SATURN="$top_builddir/cli/saturn"

cat >"$(profile_file e2e-mn)" <<'EOP'
{ "format": "saturn-profile/1", "batch": "e2e-mn", "created": 1,
  "tasks": [ { "signature": "big/bs8", "task_ids": "0-1", "batches": 10,
    "options": [ { "technique": "ddp", "gpus": 2, "nodes": 2, "sec_per_batch": 1.2, "status": "measured" } ] },
             { "signature": "small/bs8", "task_ids": "2-3", "batches": 10,
    "options": [ { "technique": "ddp", "gpus": 4, "sec_per_batch": 1.0, "status": "measured" } ] } ] }
EOP
# logs the job's nodes and, per node, the GPUs a one-task-per-node step gets
cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
t=\${SLURM_ARRAY_TASK_ID:-u}
per=\$(srun -N "\$SLURM_JOB_NUM_NODES" --ntasks-per-node=1 sh -c 'echo "\$SLURMD_NODENAME:\$(echo \$CUDA_VISIBLE_DEVICES | tr , "\n" | grep -c .)"' | sort | tr '\n' ' ')
sleep \${TASK_SECONDS:-12}
echo "task=\$t job=\$SLURM_JOB_ID nodelist=\$SLURM_JOB_NODELIST nnodes=\$SLURM_JOB_NUM_NODES saturn_gpus=\${SATURN_GPUS:-} saturn_nodes=\${SATURN_NODES:-} per=\$(echo \$per | tr ' ' ',')" >>$JOBLOG
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

# a node range is refused with a message naming it
out=$(sbatch --parsable --saturn-batch=e2e-mn-range -N 1-2 --gres=gpu:1 -o /dev/null --wrap true 2>&1) &&
	fail "sbatch -N 1-2 accepted: $out"
echo "$out" | grep -q 'one node count' || fail "-N 1-2: unexpected message: $out"

job=$(sbatch --parsable --saturn-batch=e2e-mn --array=0-3 --gres=gpu:1 --time=3 -o "$SATURN_CLUSTER_DIR/out-%a" "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
ujob=$(sbatch --parsable --saturn-batch=e2e-mn-user -N 2 --gres=gpu:1 --time=3 -o "$SATURN_CLUSTER_DIR/out-u" "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch -N 2"
note "array $job, two-node job $ujob"

# while they run: each multi-node task on exactly its planned nodes
checked=""
i=0
while [ $i -lt 240 ] && ! queue_empty; do
	i=$((i + 1))
	cp "$STATE_DIR/state.json" "$SATURN_CLUSTER_DIR/plan.json" 2>/dev/null || { sleep 0.5; continue; }
	for id in ${job}_0 ${job}_1 $ujob; do
		case " $checked " in *" $id "*) continue ;; esac
		st=$(squeue -h -j "$id" -o %T 2>/dev/null)
		[ "$st" = RUNNING ] || continue
		sj=$(scontrol show job -d "$id")
		nodes=$(echo "$sj" | sed -n 's/^ *NodeList=\([^ ]*\).*/\1/p' | head -1)
		set -- $(scontrol show hostnames "$nodes")
		[ $# = 2 ] || fail "$id runs on $# node(s) ($nodes), planned 2: $sj"
		# the plan's nodes of this task (state.json: "nodes":[...])
		planned=$(tr -d ' \n' <"$SATURN_CLUSTER_DIR/plan.json" | sed 's/},{/}\n{/g' | grep "\"id\":\"$id\"" |
			sed -n 's/.*"nodes":\[\([^]]*\)\].*/\1/p' | tr -d '"' | tr ',' '\n' | sort | tr '\n' ' ')
		actual=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
		[ "$planned" = "$actual" ] || fail "$id runs on $actual, the plan says '$planned'"
		want=2
		[ "$id" = "$ujob" ] && want=1
		# "Nodes=n[1-2] CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1)": per node
		g=0
		for l in $(echo "$sj" | sed -n 's/^ *Nodes=\([^ ]*\) .*GRES=gpu:\([0-9]*\)(IDX.*/\1@\2/p'); do
			[ "${l#*@}" = "$want" ] || fail "$id: ${l#*@} GPUs on ${l%@*}, planned $want per node"
			g=$((g + $(scontrol show hostnames "${l%@*}" | wc -l)))
		done
		[ "$g" = 2 ] || fail "$id: $want GPUs on $g node(s), not on each of its 2: $(echo "$sj" | grep 'GRES=')"
		echo "$sj" | grep -q 'NumNodes=2 ' || fail "$id: NumNodes is not 2: $(echo "$sj" | grep NumNodes)"
		# saturn status draws it on both nodes
		status=$("$SATURN" status --state-dir "$STATE_DIR" 2>&1) || fail "saturn status: $status"
		drawn=$(echo "$status" | awk -v id="$id" '/^Node /{ n = $2 }
			{ for (i = 1; i <= NF; i++) if ($i ~ ("^[A-Za-z0-9]=" id "$")) print n }' | sort -u | tr '\n' ' ')
		[ "$drawn" = "$planned" ] || fail "saturn status draws $id on '$drawn', planned on '$planned': $status"
		note "saturn status draws $id on $drawn"
		checked="$checked $id"
	done
	sleep 0.5
done
for id in ${job}_0 ${job}_1 $ujob; do
	case " $checked " in *" $id "*) ;; *) fail "never saw $id running" ;; esac
done
wait_for 240 queue_empty || fail "batch did not finish"
note "job log:"
cat "$JOBLOG"

# every task exactly once, with the planned shape
for t in 0 1 2 3 u; do
	c=$(grep -c "^task=$t " "$JOBLOG" || true)
	[ "$c" = 1 ] || fail "task $t ran $c times"
done
for t in 0 1 u; do
	line=$(grep "^task=$t " "$JOBLOG")
	[ "$(field nnodes "$line")" = 2 ] || fail "task $t: SLURM_JOB_NUM_NODES=$(field nnodes "$line")"
	[ "$(field saturn_nodes "$line")" = 2 ] || fail "task $t: SATURN_NODES=$(field saturn_nodes "$line")"
	want=2
	[ $t = u ] && want=1
	[ "$(field saturn_gpus "$line")" = $want ] || fail "task $t: SATURN_GPUS=$(field saturn_gpus "$line")"
	per=$(field per "$line")
	[ "$(echo "$per" | tr ',' '\n' | grep -c ":$want\$")" = 2 ] || fail "task $t: GPUs per node $per, want $want on each of 2"
done
for t in 2 3; do
	line=$(grep "^task=$t " "$JOBLOG")
	[ "$(field nnodes "$line")" = 1 ] || fail "task $t: on $(field nnodes "$line") nodes"
	[ "$(field per "$line" | tr ',' '\n' | grep -c ':4$')" = 1 ] || fail "task $t: GPUs $(field per "$line")"
done
grep -q "released .* per node on n[0-9],n[0-9]" "$CTLD_LOG" || fail "no multi-node release in the log"

# A running two-node task requeued by Slurm comes back pending, pinned to
# its two nodes with a begin time ahead: sched/saturn re-holds it, plans it
# again and releases it onto two nodes once more; it completes once. A
# requeue by `scontrol requeue` is one the task made itself as far as the
# plugin can tell (doc/security.md, "A task that requeues itself"): it
# starts again no earlier than its last release plus its claimed runtime,
# here its time limit (no profile): 1 minute.
rq=$(sbatch --parsable --saturn-batch=e2e-mn-user --array=5 -N 2 --requeue --gres=gpu:1 --time=1 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch requeue task"
wait_for 60 sh -c "squeue -h -j $rq -t R -o %i | grep -q ." || fail "task $rq did not start"
first=$(squeue -h -j "$rq" -t R -o %N)
[ "$(scontrol show hostnames "$first" | wc -l)" = 2 ] || fail "task $rq started on $first, not 2 nodes"
scontrol requeue "$rq" || fail "scontrol requeue $rq"
wait_for 60 grep -aq "re-held JobId=$rq.*requeued after running on n" "$CTLD_LOG" || fail "the requeued two-node task was not re-held"
wait_for 30 sh -c "squeue -h -j $rq -o %R | grep -q 'requeued itself'" ||
	fail "the requeued task's reason does not name the charge: $(squeue -h -j "$rq" -o %R)"
wait_for 150 queue_empty || fail "the requeued task did not finish"
[ "$(grep -c "^task=5 " "$JOBLOG")" = 1 ] || fail "the requeued task completed $(grep -c "^task=5 " "$JOBLOG") times"
line=$(grep "^task=5 " "$JOBLOG")
[ "$(field nnodes "$line")" = 2 ] || fail "the requeued task ran again on $(field nnodes "$line") node(s)"
[ "$(field per "$line" | tr ',' '\n' | grep -c ':1$')" = 2 ] || fail "the requeued task: GPUs $(field per "$line")"
[ "$(grep -ac "released JobId=$rq.* per node on n[0-9],n[0-9]" "$CTLD_LOG")" = 2 ] || fail "task $rq not released twice on two nodes"
note "ok"
