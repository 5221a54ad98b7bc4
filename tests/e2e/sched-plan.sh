#!/bin/sh
# sched-plan.sh - a tagged array with a profile runs under sched/saturn's
# plan: held until released, each task with the planned GPU count (scontrol
# show job -d and CUDA_VISIBLE_DEVICES inside the job), in the planned
# order, every task exactly once, with the SATURN_* environment.
. "$(dirname "$0")/sched-lib.sh"
sched_setup 0

note "plugin loaded"
scontrol show config | grep -q 'SchedulerType *= sched/saturn' || fail "SchedulerType is not sched/saturn"
wait_for 10 grep -q 'sched/saturn: plugin loaded' "$CTLD_LOG" || fail "no 'plugin loaded' in slurmctld.log"
grep -q 'sched/backfill loaded' "$CTLD_LOG" || fail "sched/backfill not loaded beside sched/saturn"

# 6 tasks; 4 GPUs: 10 x 0.6 s, 8 GPUs: 10 x 0.4 s; 1-2 GPUs: too slow to pay.
cat >"$(profile_file e2e-plan)" <<'EOP'
{ "format": "saturn-profile/1", "batch": "e2e-plan", "created": 1,
  "tasks": [ { "signature": "m/bs8", "task_ids": "0-5", "batches": 10,
    "options": [ { "technique": "ddp", "gpus": 4, "sec_per_batch": 0.6, "status": "measured" },
                 { "technique": "fsdp", "gpus": 8, "sec_per_batch": 0.45, "status": "measured",
                   "params": {"cpu_offload": false} } ] } ] }
EOP
write_task_script "$SATURN_CLUSTER_DIR/task.sh" 6

# Submitted while the cluster is full: the tasks must stay held.
blocker=$(sbatch --parsable -N2 --gres=gpu:8 --exclusive -o /dev/null --wrap 'sleep 300') || fail "sbatch blocker"
wait_for 20 sh -c "squeue -h -j $blocker -o %T | grep -q RUNNING" || fail "blocker did not start"
job=$(sbatch --parsable --saturn-batch=e2e-plan --array=0-5 --gres=gpu:8 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
note "array $job submitted"
sleep 2
st=$(squeue -h -j "$job" -o '%T %r' | sort -u)
echo "$st" | grep -q 'PENDING' || fail "array not pending: $st"
wait_for 10 sh -c "squeue -h -j $job -o %R | grep -q 'saturn: waits for GPUs held by other jobs; then n., .* GPUs'" || fail "no plan in the reason: $(squeue -h -j "$job" -o %R)"
scontrol show job "${job}_0" | grep -q 'Priority=0 ' || fail "held tasks do not have priority 0"
note "held with reason: $(squeue -h -j "$job" -o %R | head -1)"
wait_for 10 test -s "$STATE_DIR/state.json" || fail "no plan persisted while blocked"
blocked=$(sed -n 's/.*"plan_id":"\([^"]*\)".*/\1/p' "$STATE_DIR/state.json")
scancel "$blocker"
# the GPUs freed: a new plan (new id) releases the first tasks
wait_for 20 sh -c "grep -q '\"plan_id\":\"' $STATE_DIR/state.json && ! grep -q '\"plan_id\":\"$blocked\"' $STATE_DIR/state.json" ||
	fail "no new plan after the cluster freed up"
cp "$STATE_DIR/state.json" "$SATURN_CLUSTER_DIR/plan0.json"

# While they run: the GRES Slurm allocated equals the plan.
wait_for 20 sh -c "squeue -h -j $job -t R -o %i | grep -q ." || fail "no task started"
for id in $(squeue -h -j "$job" -t R -o %i); do
	g=$(scontrol show job -d "$id" | sed -n 's/.*GRES=gpu:\([0-9]*\)(IDX.*/\1/p' | head -1)
	t=$(echo "$id" | sed 's/.*_//')
	planned=$(plan_tasks "$SATURN_CLUSTER_DIR/plan0.json" | awk -v id="${job}_$t" '$1 == id { print $3 }')
	[ -n "$g" ] || fail "$id: no GRES=gpu:N(IDX:..) in scontrol show job -d"
	[ "$g" = "$planned" ] || fail "$id runs with $g GPUs, plan says $planned"
done

wait_for 90 queue_empty || fail "batch did not finish"
assert_each_once 6

plan_tasks "$SATURN_CLUSTER_DIR/plan0.json" >"$SATURN_CLUSTER_DIR/plan0.txt"
note "first plan:"
cat "$SATURN_CLUSTER_DIR/plan0.txt"
t0=$(awk 'NR == 1 || $2 < m { m = $2 } END { print m }' "$SATURN_CLUSTER_DIR/plan0.txt")
while read -r line; do
	t=$(field task "$line")
	g=$(field gpus "$line")
	[ "$g" = "$(field saturn_gpus "$line")" ] || fail "task $t: CUDA_VISIBLE_DEVICES has $g GPUs, SATURN_GPUS=$(field saturn_gpus "$line")"
	p=$(awk -v id="${job}_$t" '$1 == id' "$SATURN_CLUSTER_DIR/plan0.txt")
	[ -n "$p" ] || fail "task $t not in the first plan"
	set -- $p
	[ "$(field technique "$line")" = "$4" ] || fail "task $t ran $(field technique "$line"), planned $4"
	[ -n "$(field plan "$line")" ] || fail "task $t: SATURN_PLAN_ID unset"
	# tasks planned for the start ran with the planned GPU count
	if awk -v s="$2" -v t0="$t0" 'BEGIN { exit !(s - t0 < 1) }'; then
		[ "$g" = "$3" ] || fail "task $t: $g GPUs, planned $3"
	fi
done <"$JOBLOG"

# start order as planned: a task planned later than another by > 3 s did
# not start before it
while read -r a sa ga ta na xa; do
	while read -r b sb gb tb nb xb; do
		if awk -v x="$sa" -v y="$sb" 'BEGIN { exit !(y - x > 3) }'; then
			ra=$(grep "^task=${a#*_} " "$JOBLOG")
			rb=$(grep "^task=${b#*_} " "$JOBLOG")
			awk -v x="$(field start "$ra")" -v y="$(field start "$rb")" 'BEGIN { exit !(y >= x) }' ||
				fail "$b (planned $sb) started before $a (planned $sa)"
		fi
	done <"$SATURN_CLUSTER_DIR/plan0.txt"
done <"$SATURN_CLUSTER_DIR/plan0.txt"
grep -q "sched/saturn: plan p.*method" "$CTLD_LOG" || fail "no plan summary in the log"
grep -q "sched/saturn: cycle: .* ms under read locks" "$CTLD_LOG" || fail "no lock timing in the log"
note "ok"
