#!/bin/sh
# sweep-example.sh - contrib/sweeps/sweep.sbatch runs as a Saturn batch on
# the one-machine cluster: each array task takes its line of
# contrib/sweeps/params.txt (model, batch size, learning rate), trains
# (saturn-emulate through saturn-run) with the technique and GPU count the
# plan gave its model, and every task runs exactly once. A task id beyond
# the file fails with a message naming the file.
. "$(dirname "$0")/sched-lib.sh"
sched_setup 85
SW="$SATURN_CLUSTER_DIR/sweep"
mkdir -p "$SW"
cp "$top_srcdir/contrib/sweeps/sweep.sbatch" "$top_srcdir/contrib/sweeps/params.txt" "$SW/"
chmod 755 "$SW" && chmod 644 "$SW/params.txt" && chmod 755 "$SW/sweep.sbatch"
ntasks=$(grep -cv '^[[:space:]]*\(#\|$\)' "$SW/params.txt")
[ "$ntasks" = 8 ] || fail "params.txt has $ntasks parameter lines, expected 8"

# Profile (what saturn-profile would measure): the gpt2 tasks 0-3 run best
# with ddp on 2 GPUs, the gpt2-medium tasks 4-7 with fsdp on 4.
cat >"$(profile_file e2e-sweep)" <<'EOP'
{ "format": "saturn-profile/1", "batch": "e2e-sweep", "created": 1,
  "tasks": [ { "signature": "gpt2/bs8-16", "task_ids": "0-3", "batches": 40,
      "options": [ { "technique": "single", "gpus": 1, "sec_per_batch": 0.2, "status": "measured" },
                   { "technique": "ddp", "gpus": 2, "sec_per_batch": 0.05, "status": "measured" } ] },
    { "signature": "gpt2-medium/bs8-16", "task_ids": "4-7", "batches": 40,
      "options": [ { "technique": "ddp", "gpus": 2, "sec_per_batch": 0.4, "status": "measured" },
                   { "technique": "fsdp", "gpus": 4, "sec_per_batch": 0.1, "status": "measured" } ] } ] }
EOP

cd "$SW" || fail "cd $SW"
export PATH="${JOB_BIN:-$top_builddir/runner}:$PATH" SWEEP_LOG="$JOBLOG"
job=$(sbatch --parsable --saturn-batch=e2e-sweep --array=0-7 --gres=gpu:1 --time=5 \
	-o "$SW/task-%a.out" sweep.sbatch params.txt) || fail "sbatch"
note "sweep $job submitted"
wait_for 180 queue_empty || fail "sweep did not finish"
assert_each_once "$ntasks"
i=0
grep -v '^[[:space:]]*\(#\|$\)' "$SW/params.txt" | while read -r model bs lr; do
	line=$(grep "^task=$i " "$JOBLOG")
	[ "$(field model "$line")" = "$model" ] && [ "$(field batch_size "$line")" = "$bs" ] &&
		[ "$(field lr "$line")" = "$lr" ] || fail "task $i ran with '$line', params.txt line says $model $bs $lr"
	case $model in
	gpt2) want="ddp 2" ;;
	*) want="fsdp 4" ;;
	esac
	got="$(field technique "$line") $(field saturn_gpus "$line")"
	[ "$got" = "$want" ] || fail "task $i ($model) ran with $got, planned $want"
	grep -q "^sweep: task $i: model=$model batch_size=$bs lr=$lr technique=$(field technique "$line") gpus=$(field saturn_gpus "$line")$" "$SW/task-$i.out" ||
		fail "task $i output: $(cat "$SW/task-$i.out")"
	i=$((i + 1))
done || exit 1
note "tasks:"
cat "$JOBLOG"

# a task id with no line: a clear error, exit 2
bad=$(sbatch --parsable --array=9 --gres=gpu:1 --time=2 -o "$SW/bad.out" sweep.sbatch params.txt) || fail "sbatch bad"
wait_for 60 queue_empty || fail "bad task did not end"
grep -q "sweep: params.txt has no line for array task 9" "$SW/bad.out" || fail "no clear error: $(cat "$SW/bad.out")"
note "bad task $bad: $(cat "$SW/bad.out")"
note "ok"
