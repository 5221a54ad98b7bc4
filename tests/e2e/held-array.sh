#!/bin/sh
# held-array.sh - a tagged array is held by job_submit/saturn with an admin
# hold whose reason names the batch; its user can neither release it nor
# change its priority, GPUs or node count; an operator can release it and it
# then runs with the batch name in its environment. A bare --saturn-batch
# names the batch after the job.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
e2e_setup 2

job=$(e2e_sbatch_user --saturn-batch=sweep1 --array=0-3 --gres=gpu:2 -o 'o-%A_%a.out' \
	--wrap 'echo "batch=$SLURM_SPANK_SATURN_BATCH cvd=$CUDA_VISIBLE_DEVICES"') || fail "submission refused"
wait_for 5 job_reason_is "$job" "saturn: waiting for plan (batch sweep1)" ||
	fail "job $job reason '$(job_reason "$job")', want the saturn hold"
[ "$(job_field "$job" Priority)" = 0 ] || fail "job $job priority $(job_field "$job" Priority), want 0"
[ "$(job_field "$job" Reason)" = "saturn:_waiting_for_plan_(batch_sweep1)" ] ||
	fail "scontrol Reason '$(job_field "$job" Reason)'"

# The user cannot lift or change the hold.
as_user scontrol release "$job" >"$OUT/err" 2>&1 && fail "user released job $job"
grep -q "held state" "$OUT/err" || fail "release refusal without a reason: $(cat "$OUT/err")"
as_user scontrol update jobid="$job" priority=100 >/dev/null 2>&1 && fail "user changed the priority"
as_user scontrol hold "$job" >/dev/null 2>&1 && fail "user re-held (user hold) the job"
as_user scontrol uhold "$job" >/dev/null 2>&1 && fail "user set a user hold"
as_user scontrol update jobid="$job" gres=gpu:8 >/dev/null 2>&1 && fail "user changed the GPUs"
as_user scontrol update jobid="$job" numnodes=2 >/dev/null 2>&1 && fail "user asked for 2 nodes"
sleep 3 # two scheduling passes: nothing may start it
job_state_is "$job" PENDING || fail "job $job left PENDING: $(job_state "$job")"
job_reason_is "$job" "saturn: waiting for plan (batch sweep1)" || fail "reason changed: $(job_reason "$job")"
# Other updates stay allowed (time limit).
as_user scontrol update jobid="$job" timelimit=30 || fail "user could not change the time limit"

# A bare --saturn-batch takes the (sanitized) job name.
job2=$(e2e_sbatch_user --saturn-batch -J 'my sweep' --gres=gpu:1 --wrap true) || fail "bare option refused"
wait_for 5 job_reason_is "$job2" "saturn: waiting for plan (batch my_sweep)" ||
	fail "job $job2 reason '$(job_reason "$job2")', want batch my_sweep"

# An operator (root) may release: the tasks then run, tagged.
scontrol release "$job" || fail "root could not release $job"
wait_for 20 queue_has_only "$job2" || fail "array $job did not run after release"
for t in 0 1 2 3; do
	f="$OUT/o-${job}_$t.out"
	grep -q '^batch=sweep1 cvd=[0-9],[0-9]$' "$f" || fail "task $t output: $(cat "$f" 2>&1)"
done
note "array held (admin hold, reason with batch), user cannot release or alter it; root release runs it"
