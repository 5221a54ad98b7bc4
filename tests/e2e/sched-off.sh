#!/bin/sh
# sched-off.sh - turning Saturn off with a batch still held, and reading a
# state file of another format version:
#   1. a batch of 16 tasks (users ask gpu:8; the profile makes the plan run
#      them on 4 GPUs: 4 at a time on 2 nodes) under sched/saturn; a running
#      task requeued by an operator is re-held asking for its user's gpu:8
#      again (SATURN_USER_GRES), not the plan's 4; `saturn release --all`
#      refuses while sched/saturn is the scheduler (it would hold them
#      again) and changes nothing;
#   2. slurmctld restarted with a state.json of format version 99: the
#      plugin logs that it ignores it and plans afresh;
#   3. slurm.conf switched to SchedulerType=sched/backfill (JobSubmitPlugins=
#      saturn kept), slurmctld restarted: the held tasks stay held (nobody
#      plans them any more); `saturn release --all` releases them with
#      their users' request (gpu:8), notes that job_submit/saturn still
#      holds new jobs, and a task submitted afterwards is released by a
#      second run; a third run finds nothing; an ordinary user's run is
#      refused and releases nothing;
#   4. every task runs exactly once: those Saturn released on the plan's 4
#      GPUs, those `saturn release --all` released on their users' 8.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_users
export SATURN_CRED_EXPIRE=5 # a requeued task may start again after 6 s
# `saturn release` is a libslurm client: from Slurm 24.11 on, libslurm
# cannot load cred/none (its plugin needs symbols only slurmctld exports),
# and sites run munge anyway
export SATURN_AUTH=${SATURN_AUTH:-munge}
sched_setup 41
hostile_dirs

SATURN="$top_builddir/cli/saturn"
[ -x "$SATURN" ] || skip "cli/saturn not built"

held_ids() {
	squeue -h -r -t PD -o '%i %Q %r' | awk '$2 == 0 && $3 ~ /^saturn:/ { print $1 }' | sort
}
held_count() {
	held_ids | wc -l
}
# stop slurmctld (by its pid files) and wait until it is gone
stop_ctld() {
	for f in "$SATURN_CLUSTER_DIR"/run/slurmctld*.pid; do
		[ -f "$f" ] || continue
		p=$(cat "$f")
		kill -TERM "$p" 2>/dev/null || true
		wait_for 30 sh -c "! kill -0 $p 2>/dev/null" || fail "slurmctld $p did not stop"
	done
}

cat >"$(profile_file e2e-off)" <<'EOP'
{ "format": "saturn-profile/1", "batch": "e2e-off", "created": 1,
  "tasks": [ { "signature": "m/bs8", "task_ids": "0-16", "batches": 10,
    "options": [ { "technique": "ddp", "gpus": 4, "sec_per_batch": 1.0, "status": "measured" } ] } ] }
EOP
write_task_script "$SATURN_CLUSTER_DIR/task.sh" 10
job=$(sbatch --parsable --saturn-batch=e2e-off --array=0-15 --gres=gpu:8 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
wait_for 30 sh -c "squeue -h -j $job -t R -o %i | grep -q ." || fail "nothing started"
wait_for 20 sh -c "[ \$(squeue -h -t PD -o '%Q %r' | awk '\$1 == 0 && \$2 ~ /^saturn:/' | wc -l) -ge 1 ]" ||
	fail "no held tasks with a saturn reason"

# an operator requeues a running task (released on the plan's 4 GPUs): it
# is re-held with its user's request back
rq=$(squeue -h -j "$job" -t R -o '%i %b' | awk '{ sub("gres/", "gres:", $2) } $2 == "gres:gpu:4" { print $1; exit }')
[ -n "$rq" ] || fail "no running task on the plan's 4 GPUs: $(squeue -h -j "$job" -o '%i %T %b')"

scontrol requeue "$rq" || fail "scontrol requeue $rq"
wait_for 30 grep -aq "re-held JobId=$rq(.*asks for gres[:/]gpu:8 again" "$CTLD_LOG" ||
	fail "requeued task $rq was not re-held with its user's gpu:8: $(grep -a "re-held JobId=$rq(" "$CTLD_LOG")"
note "requeued $rq re-held asking for gres:gpu:8 again"

# 1. refused while sched/saturn plans
# sched/saturn itself goes on releasing tasks of its plan meanwhile: a
# task that left the held set must have a "released" line of the plugin,
# and none may have started on its user's 8 GPUs (what the CLI would give)
held_ids >"$SATURN_CLUSTER_DIR/held.before"
out=$("$SATURN" release --all 2>&1) && fail "saturn release --all succeeded under sched/saturn: $out"
echo "$out" | grep -q 'still sched/saturn' || fail "no clear refusal: $out"
held_ids >"$SATURN_CLUSTER_DIR/held.after"
for t in $(comm -23 "$SATURN_CLUSTER_DIR/held.before" "$SATURN_CLUSTER_DIR/held.after"); do
	grep -aq "sched/saturn: released JobId=$t(" "$CTLD_LOG" ||
		fail "held task $t changed after the refused release, and sched/saturn did not release it"
done
gres_norm "$(squeue -h -j "$job" -t R -o '%b')" | grep -q 'gpu:8' &&
	fail "a task runs on its user's gpu:8 after the refused release: $(squeue -h -j "$job" -t R -o '%i %b')"
"$SATURN" release --all --dry-run | grep -q 'nothing changed' || fail "--dry-run"

# 2. a state written by a newer version: ignored, with a clear log line
stop_ctld
# (json-c writes the slash escaped: "saturn-sched-state\/1")
sed -i 's|"saturn-sched-state\\*/1"|"saturn-sched-state/99"|' "$STATE_DIR/state.json"
grep -q '"saturn-sched-state/99"' "$STATE_DIR/state.json" || fail "could not plant the version-99 state"
sh "$CLUSTER" restart-ctld >/dev/null 2>&1 || fail "restart-ctld (saturn)"
wait_for 30 grep -q 'format: version 99 was written by a newer sched/saturn.*previous state ignored' "$CTLD_LOG" ||
	fail "no log line for the version-99 state"
wait_for 30 grep -q '"format": *"saturn-sched-state\\*/1"' "$STATE_DIR/state.json" ||
	fail "the state was not rewritten in version 1"
note "version-99 state ignored and replaced"

# 3. switch to sched/backfill with tasks held
wait_for 30 sh -c "[ \$(squeue -h -t PD -o '%Q %r' | awk '\$1 == 0 && \$2 ~ /^saturn:/' | wc -l) -ge 1 ]" ||
	fail "no held tasks left to strand"
stop_ctld
sed -i 's|^SchedulerType=.*|SchedulerType=sched/backfill|' "$SLURM_CONF"
sh "$CLUSTER" restart-ctld >/dev/null 2>&1 || fail "restart-ctld (backfill)"
scontrol show config | grep -q 'SchedulerType *= sched/backfill' || fail "SchedulerType is not sched/backfill"
n=$(held_count)
note "switched to sched/backfill with $n task(s) held"
sleep 6
[ "$(held_count)" = "$n" ] || fail "held tasks changed by themselves under sched/backfill"
# an ordinary user cannot release them (a copy of the program the user can
# reach: the build folder may sit under /root)
mkdir -p "$SATURN_CLUSTER_DIR/bin"
cp "$SATURN" "$SATURN_CLUSTER_DIR/bin/saturn"
chmod 755 "$SATURN_CLUSTER_DIR/bin" "$SATURN_CLUSTER_DIR/bin/saturn"
out=$(as_attacker "$SATURN_CLUSTER_DIR/bin/saturn" release --all 2>&1) &&
	fail "an ordinary user's saturn release --all succeeded: $out"
echo "$out" | grep -q 'run as root or SlurmUser' || fail "no clear refusal for an ordinary user: $out"
[ "$(held_count)" = "$n" ] || fail "an ordinary user released held tasks"
out=$("$SATURN" release --all 2>&1) || fail "saturn release --all: $out"
echo "$out" | sed 's/^/#   /'
echo "$out" | grep -q ': [1-9][0-9]* released, 0 failed' || fail "nothing released"
echo "$out" | grep -q 'JobSubmitPlugins still has saturn' || fail "no note about job_submit/saturn"
[ "$(held_count)" = 0 ] || fail "tasks still held after saturn release --all"

# a task submitted now is still held by job_submit/saturn: a second run
# releases it, a third finds nothing
late=$(sbatch --parsable --saturn-batch=e2e-off --array=16 --gres=gpu:8 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch (late)"
wait_for 20 sh -c "[ \$(squeue -h -j $late -t PD -o '%Q %r' | awk '\$1 == 0 && \$2 ~ /^saturn:/' | wc -l) = 1 ]" ||
	fail "late task not held by job_submit/saturn"
out=$("$SATURN" release --all 2>&1) || fail "second saturn release --all: $out"
echo "$out" | grep -q '1 held Saturn task record(s): 1 released, 0 failed' || fail "second release: $out"

wait_for 200 queue_empty || fail "the batch did not finish under sched/backfill"
assert_each_once 17
# released by the plan: 4 GPUs and a plan id; by saturn release: the
# user's 8 and none
bad=$(grep '^task=' "$JOBLOG" | grep -v ' gpus=4 .*plan=p' | grep -v ' gpus=8 .*plan= ' || true)
[ -z "$bad" ] || fail "tasks ran with neither the plan's 4 GPUs nor their users' 8: $bad"
grep -q ' gpus=8 .*plan= ' "$JOBLOG" || fail "no task ran after saturn release --all"

out=$("$SATURN" release --all 2>&1) || fail "third saturn release --all: $out"
echo "$out" | grep -q '^0 held Saturn task record(s): 0 released, 0 failed' || fail "third release: $out"
note "ok"
