#!/bin/sh
# sched-profiler.sh - saturn_profiler: a tagged array with no profile gets
# one companion job saturn-profile:NAME (the built saturn-profile, CPU
# backend), its tasks held "saturn: profiling (job N)"; the profile appears
# and the tasks run planned (SATURN_TECHNIQUE/SATURN_GPUS) exactly once; a
# slurmctld restart while it runs submits no second job.
# Then the failure path: saturn_profiler=/bin/false falls back to the
# users' requests, every task once.
. "$(dirname "$0")/sched-lib.sh"
[ -x "$top_builddir/profiler/saturn-profile" ] && [ -x "$top_builddir/runner/saturn-run" ] ||
	skip "saturn-profile/saturn-run not built"
wrap="${TMPDIR:-/tmp}/saturn-e2e-profwrap-$$"
cat >"$wrap" <<EOW
#!/bin/sh
sleep 8 # long enough for the restart below to find the job running
exec "$top_builddir/profiler/saturn-profile" --backend cpu --timeout 60 --trial-batches 2 "\$@"
EOW
chmod 755 "$wrap"
sched_setup 50 "saturn_profiler=$wrap,saturn_profile_time=5"
write_emulate_task "$SATURN_CLUSTER_DIR/task.sh"

job=$(sbatch --parsable --saturn-batch=e2e-prof --array=0-2 --gres=gpu:4 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
wait_for 20 sh -c "squeue -h -n saturn-profile:e2e-prof -o %i | grep -q ." || fail "no saturn-profile:e2e-prof job"
pj=$(squeue -h -n saturn-profile:e2e-prof -o %i)
note "profiler job $pj"
wait_for 10 sh -c "squeue -h -j $job -o %R | grep -q 'saturn: profiling (job $pj)'" || fail "reason while profiling: $(squeue -h -j "$job" -o %R)"
[ -z "$(grep '^task=' "$JOBLOG")" ] || fail "a task ran while profiling"
note "restarting slurmctld while profiler job $pj runs"
sh "$CLUSTER" restart-ctld >/dev/null 2>&1 || fail "restart-ctld"
wait_for 20 grep -q "batch e2e-prof: profiler job $pj recorded before restart" "$CTLD_LOG" ||
	fail "profiler job not recovered after the restart"
wait_for 150 test -s "$STATE_DIR/profiles/0/e2e-prof.json" || fail "no profile written"
wait_for 90 queue_empty || fail "batch did not finish"
assert_each_once 3
for t in 0 1 2; do
	line=$(grep "^task=$t " "$JOBLOG")
	tech=$(field technique "$line")
	[ -n "$tech" ] && [ "$tech" != user ] || fail "task $t not planned: $line"
	[ -n "$(field saturn_gpus "$line")" ] || fail "task $t: no SATURN_GPUS: $line"
done
grep -q "batch e2e-prof: submitted profiler job $pj" "$CTLD_LOG" || fail "submission not logged"
[ "$(grep -c 'submitted profiler job' "$CTLD_LOG")" = 1 ] || fail "more than one profiler job"

note "failure path: /bin/false"
: >"$JOBLOG"
sed -i "s|saturn_profiler=$wrap|saturn_profiler=/bin/false|" "$SATURN_CLUSTER_DIR/etc/slurm.conf"
scontrol reconfigure || fail "reconfigure"
sleep 2
# 6 x 4 GPUs on 16: two tasks wait, their reason says why
job=$(TASK_SLEEP=6 sbatch --parsable --saturn-batch=e2e-fail --array=0-5 --gres=gpu:4 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch 2"
wait_for 30 grep -q "batch e2e-fail: profiler job [0-9]* ended without a usable profile" "$CTLD_LOG" || fail "no fallback logged"
wait_for 20 sh -c "squeue -h -j $job -t PD -o %R | grep -q \"saturn: profiler job [0-9]* failed, users' requests; starts in\"" ||
	fail "fallback reason: $(squeue -h -j "$job" -o %R)"
note "held: $(squeue -h -j "$job" -t PD -o %R | head -1)"
wait_for 90 queue_empty || fail "fallback batch did not finish"
assert_each_once 6
for t in 0 1 2 3 4 5; do
	[ "$(field technique "$(grep "^task=$t " "$JOBLOG")")" = user ] || fail "task $t not run as the user asked"
done
rm -f "$wrap"
note "ok"
