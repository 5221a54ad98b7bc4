#!/bin/sh
# sched-classes-profile.sh - per-class profiles on a two-class cluster
# (SATURN_GPU_CLASSES: n1-n2 "a100" over PCIe, n3-n4 "h100" over NVLink):
# a batch without a profile gets its profiler job and one more per class
# (saturn-profile:NAME@CLASS, asking for that class's GPU type, running
# saturn-profile --class CLASS), each class's profile is written
# (PROFILE_DIR/UID/NAME@CLASS.json, "class" inside) and loaded, the tasks
# are planned from the profiles and released with typed GRES, every task
# exactly once. slurmctld restarts while the class profiler jobs run (they
# sleep first): the tasks still wait for them (found again by name).
. "$(dirname "$0")/sched-lib.sh"
[ -x "$top_builddir/profiler/saturn-profile" ] && [ -x "$top_builddir/runner/saturn-run" ] ||
	skip "saturn-profile/saturn-run not built"
wrap="${TMPDIR:-/tmp}/saturn-e2e-clsprofwrap-$$"
cat >"$wrap" <<EOW
#!/bin/sh
# the node's recorded topology (cluster.sh: etc/gres-nodes/NODE.conf; the
# instance folder sched_setup makes)
g="${TMPDIR:-/tmp}/saturn-e2e-$(basename "$0" .sh)-$$/etc/gres-nodes/\$SLURMD_NODENAME.conf"
# the class jobs outlive the batch's own: slurmctld restarts meanwhile
case " \$* " in *" --class "*) sleep 30 ;; esac
exec "$top_builddir/profiler/saturn-profile" --backend cpu --timeout 60 --trial-batches 2 --gres-conf "\$g" "\$@"
EOW
chmod 755 "$wrap"
export SATURN_GPU_CLASSES="a100:pcie:2 h100:nvlink:2" SATURN_GPUS_PER_NODE=2
sched_setup 88 "saturn_profiler=$wrap,saturn_profile_time=5"
write_emulate_task "$SATURN_CLUSTER_DIR/task.sh"

job=$(sbatch --parsable --saturn-batch=e2e-cls --array=0-3 --gres=gpu:2 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
note "array $job"
wait_for 30 grep -q "batch e2e-cls of uid 0: submitted profiler job .*gres[:/]gpu:h100:2" "$CTLD_LOG" ||
	fail "no profiler job for class h100x2-nvlink: $(grep 'submitted profiler' "$CTLD_LOG")"
grep -q "batch e2e-cls of uid 0: submitted profiler job .*gres[:/]gpu:a100:2.*--output .*/e2e-cls@a100x2-pcie.json" "$CTLD_LOG" ||
	fail "no profiler job for class a100x2-pcie"
grep -q "batch e2e-cls of uid 0: submitted profiler job .*gres[:/]gpu:2, .*--output .*/e2e-cls.json" "$CTLD_LOG" ||
	fail "no profiler job for the batch"
wait_for 150 test -s "$STATE_DIR/profiles/0/e2e-cls.json" || fail "no batch profile"
if ! ls "$STATE_DIR"/profiles/0/e2e-cls@*.json >/dev/null 2>&1; then
	note "restarting slurmctld while the class profiler jobs run"
	sh "$CLUSTER" restart-ctld >/dev/null 2>&1 || fail "restart-ctld"
	wait_for 30 grep -q 'sched/saturn: 2 class profiler job(s) found among the jobs' "$CTLD_LOG" ||
		fail "the class profiler jobs were not found again: $(grep 'class profiler' "$CTLD_LOG")"
else
	note "the class profiles came before the batch's: no restart checked"
fi
for c in a100x2-pcie h100x2-nvlink; do
	f="$STATE_DIR/profiles/0/e2e-cls@$c.json"
	wait_for 150 test -s "$f" || fail "no profile $f"
	grep -q "\"class\": *\"$c\"" "$f" || fail "$f does not say class $c"
	# measured on that class's interconnect (its nodes' gres.conf Links=)
	grep -q "\"interconnect\": *\"${c#*-}\"" "$f" || fail "$f: interconnect not ${c#*-}: $(grep interconnect "$f")"
	wait_for 30 grep -q "profile $f loaded" "$CTLD_LOG" || fail "$f not loaded"
done
wait_for 150 test -s "$STATE_DIR/profiles/0/e2e-cls.json" || fail "no batch profile"
# no task released before every class profile was loaded (the first
# release may come a cycle or more after the last load: the class profiler
# job that wrote the file is still in the queue until it ends)
wait_for 60 grep -q "released JobId=${job}_" "$CTLD_LOG" || fail "no task released"
first=$(grep -n "released JobId=${job}_" "$CTLD_LOG" | head -1 | cut -d: -f1)
for c in a100x2-pcie h100x2-nvlink; do
	l=$(grep -n "profile .*/e2e-cls@$c.json loaded" "$CTLD_LOG" | head -1 | cut -d: -f1)
	[ -n "$first" ] && [ -n "$l" ] && [ "$l" -lt "$first" ] ||
		fail "a task was released (log line $first) before the $c profile was loaded (line $l)"
done
wait_for 150 queue_empty || fail "batch did not finish"
assert_each_once 4
for t in 0 1 2 3; do
	line=$(grep "^task=$t " "$JOBLOG")
	tech=$(field technique "$line")
	[ -n "$tech" ] && [ "$tech" != user ] || fail "task $t not planned from a profile: $line"
	grep -q "released JobId=[^ ]* (task ${job}_$t of batch .*gres[:/]gpu:[ah]100:[0-9], class [ah]100x2-" "$CTLD_LOG" ||
		fail "task $t not released with a typed GRES: $(grep "(task ${job}_$t of batch" "$CTLD_LOG")"
done
[ "$(grep -c 'batch e2e-cls of uid 0: submitted profiler job' "$CTLD_LOG")" = 3 ] ||
	fail "expected 3 profiler jobs (batch + 2 classes): $(grep -c 'submitted profiler job' "$CTLD_LOG")"
rm -f "$wrap"
note "ok"
