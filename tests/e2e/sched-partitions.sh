#!/bin/sh
# sched-partitions.sh - sched/saturn plans each task only on nodes of its
# partition(s): with partitions a (n1) and b (n2), a batch in b without a
# profile (users' requests) runs only on n2 and a batch in a with a profile
# (the planner) only on n1, at the same time, every task exactly once and
# no release refused by Slurm; a job in a,b may use both; a batch whose
# partition cannot start jobs (State=DOWN) stays held with a reason saying
# so, and runs once the partition is up again.
. "$(dirname "$0")/sched-lib.sh"
export SATURN_PARTITIONS="a:n1 b:n2 c:n1"
sched_setup 54

grep -q '^PartitionName=a Nodes=n1 Default=YES' "$SATURN_CLUSTER_DIR/etc/slurm.conf" ||
	fail "SATURN_PARTITIONS did not make partition a (default)"
sinfo -h -p b -o '%N' | grep -qx n2 || fail "partition b is not n2: $(sinfo -h -p b -o %N)"

cat >"$(profile_file e2e-part-a)" <<'EOP'
{ "format": "saturn-profile/1", "batch": "e2e-part-a", "created": 1,
  "tasks": [ { "signature": "m/bs8", "task_ids": "0-3", "batches": 10,
    "options": [ { "technique": "ddp", "gpus": 4, "sec_per_batch": 0.4, "status": "measured" },
                 { "technique": "fsdp", "gpus": 8, "sec_per_batch": 0.3, "status": "measured" } ] } ] }
EOP
LOGA="$SATURN_CLUSTER_DIR/jobs-a.log"
LOGB="$SATURN_CLUSTER_DIR/jobs-b.log"
LOGAB="$SATURN_CLUSTER_DIR/jobs-ab.log"
LOGC="$SATURN_CLUSTER_DIR/jobs-c.log"
for l in a b ab c; do
	JOBLOG="$SATURN_CLUSTER_DIR/jobs-$l.log"
	: >"$JOBLOG"
	chmod 666 "$JOBLOG"
	write_task_script "$SATURN_CLUSTER_DIR/task-$l.sh" 5
done
JOBLOG=$LOGB

scontrol update PartitionName=c State=DOWN || fail "scontrol update PartitionName=c State=DOWN"
# b first: before partitions were honoured, the users'-requests plan put
# two of its four 4-GPU tasks on the free n1, where Slurm refused them,
# again every cycle: they never ran.
jb=$(sbatch --parsable -p b --saturn-batch=e2e-part-b --array=0-3 --gres=gpu:4 --time=1 -o /dev/null \
	"$SATURN_CLUSTER_DIR/task-b.sh") || fail "sbatch -p b"
ja=$(sbatch --parsable -p a --saturn-batch=e2e-part-a --array=0-3 --gres=gpu:4 --time=1 -o /dev/null \
	"$SATURN_CLUSTER_DIR/task-a.sh") || fail "sbatch -p a"
jab=$(sbatch --parsable -p a,b --saturn-batch=e2e-part-ab --array=0-1 --gres=gpu:4 --time=1 -o /dev/null \
	"$SATURN_CLUSTER_DIR/task-ab.sh") || fail "sbatch -p a,b"
jc=$(sbatch --parsable -p c --saturn-batch=e2e-part-c --array=0 --gres=gpu:2 --time=1 -o /dev/null \
	"$SATURN_CLUSTER_DIR/task-c.sh") || fail "sbatch -p c"
note "arrays: b $jb, a $ja, a,b $jab, c $jc (partition c down)"

# the held tasks of b are planned on n2 only
wait_for 20 sh -c "squeue -h -j $jb -t R -o %i | grep -q ." || fail "no task of b started"
r=$(squeue -h -j "$jb" -t PD -o %R)
note "b held: $(echo "$r" | head -1)"
echo "$r" | grep -q 'on n1' && fail "a held task of b is planned on n1: $r"
wait_for 20 sh -c "squeue -h -j $ja -t R -o %i | grep -q ." || fail "no task of a started"
wait_for 15 sh -c "squeue -h -j $jc -o %R | grep -q 'saturn: no usable GPU node in partition(s) of this job'" ||
	fail "c's reason: $(squeue -h -j "$jc" -o %R)"
note "c held: $(squeue -h -j "$jc" -o %R)"

wait_for 120 sh -c "[ -z \"\$(squeue -h -j $ja,$jb,$jab -o %i)\" ]" || fail "batches a, b, a,b did not finish"
[ -s "$LOGC" ] && fail "c ran while its partition was down"
scontrol update PartitionName=c State=UP || fail "scontrol update PartitionName=c State=UP"
wait_for 60 queue_empty || fail "c did not run once its partition was up"

for l in a b c; do
	JOBLOG="$SATURN_CLUSTER_DIR/jobs-$l.log"
	case $l in a) n=4 want=n1 ;; b) n=4 want=n2 ;; c) n=1 want=n1 ;; esac
	assert_each_once $n
	while read -r line; do
		[ "$(field node "$line")" = $want ] || fail "partition $l: task $(field task "$line") ran on $(field node "$line"): $line"
	done <"$JOBLOG"
done
grep -q 'technique=ddp\|technique=fsdp' "$LOGA" || fail "a did not run by its profile: $(cat "$LOGA")"
JOBLOG=$LOGAB
assert_each_once 2
# a and b overlapped in time
sa=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^start=/) { sub(/start=/, "", $i); print $i } }' "$LOGA" | sort -n | head -1)
eb=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^end=/) { sub(/end=/, "", $i); print $i } }' "$LOGB" | sort -n | tail -1)
awk -v a="$sa" -v b="$eb" 'BEGIN { exit !(a < b) }' || fail "a started only after b ended"
grep -a 'sched/saturn: JobId=.*release with .* failed' "$CTLD_LOG" && fail "Slurm refused a release"
grep -aq "left held: saturn: no usable GPU node in partition(s) of this job" "$CTLD_LOG" ||
	fail "c's skip not logged"
note "ok"
