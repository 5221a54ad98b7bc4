#!/bin/sh
# sched-measure.sh - saturn_measure_predicted: a batch whose profile offers
# only `predicted` options (made so from a real profile, predictions
# halved) is not released onto them: its tasks stay held "saturn: measuring
# predicted ddp on N GPUs (job M)" while one saturn-measure:NAME job runs
# saturn-profile --measure; the profile comes back with those options
# measured, and every task runs once on a measured option. Then the failure
# path: a measurement job that fails leaves the tasks to run on the
# predictions (logged), each once, after one measurement job.
. "$(dirname "$0")/sched-lib.sh"
[ -x "$top_builddir/profiler/saturn-profile" ] && [ -x "$top_builddir/runner/saturn-run" ] ||
	skip "saturn-profile/saturn-run not built"
"$top_builddir/profiler/saturn-profile" --help 2>&1 | grep -q -- --measure || skip "saturn-profile has no --measure"
wrap="${TMPDIR:-/tmp}/saturn-e2e-measwrap-$$"
cat >"$wrap" <<EOW
#!/bin/sh
echo "\$*" >>"\${0}.calls"
case "\$*" in *--measure*) [ -e "\${0}.fail" ] && exit 3; sleep 4 ;; esac
exec "$top_builddir/profiler/saturn-profile" --backend cpu --timeout 60 --trial-batches 2 "\$@"
EOW
chmod 755 "$wrap"
sched_setup 52 "saturn_profiler=$wrap,saturn_profile_time=5"
write_emulate_task "$SATURN_CLUSTER_DIR/task.sh"

# a real profile of the task (outside Slurm), then every option but ddp
# dropped and every ddp option turned into a prediction, half the time
make_profile() { # NAME
	SATURN_SRUN= CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 PATH="$top_builddir/runner:$PATH" \
		"$top_builddir/profiler/saturn-profile" --backend cpu --no-cache --trial-batches 2 \
		--batch "$1" --script "$SATURN_CLUSTER_DIR/task.sh" --task-ids 0-2 \
		--output "$SATURN_CLUSTER_DIR/$1.real.json" 2>"$SATURN_CLUSTER_DIR/$1.prof.log" ||
		fail "local profile: $(tail -3 "$SATURN_CLUSTER_DIR/$1.prof.log")"
	python3 - "$SATURN_CLUSTER_DIR/$1.real.json" "$(profile_file "$1")" <<'P' || fail "profile edit"
import json, sys
p = json.load(open(sys.argv[1]))
assert len(p["tasks"]) == 1, "one signature expected"
t = p["tasks"][0]
t["options"] = [dict(o, status="predicted", sec_per_batch=o["sec_per_batch"] / 2)
                for o in t["options"] if o["technique"] == "ddp" and o["sec_per_batch"] > 0]
assert len(t["options"]) >= 4, t["options"]
json.dump(p, open(sys.argv[2] + ".tmp", "w"))
P
	mv "$(profile_file "$1").tmp" "$(profile_file "$1")"
}

make_profile e2e-meas
job=$(sbatch --parsable --saturn-batch=e2e-meas --array=0-2 --gres=gpu:2 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
wait_for 30 grep -q "batch e2e-meas of uid 0: measuring predicted option(s) [0-9]:ddp:[0-9]" "$CTLD_LOG" ||
	fail "no measurement job submitted"
mj=$(sed -n 's/.*batch e2e-meas of uid 0: measuring predicted option(s) .* (job \([0-9]*\), round 1).*/\1/p' "$CTLD_LOG" | head -1)
note "measurement job $mj: $(grep -o 'measuring predicted option(s) [^ ]*' "$CTLD_LOG" | head -1)"
[ "$(squeue -h -j "$mj" -o %j 2>/dev/null)" = "saturn-measure:e2e-meas" ] || fail "job $mj is not saturn-measure:e2e-meas"
wait_for 10 sh -c "squeue -h -j $job -t PD -o %R | grep -q 'saturn: measuring predicted ddp on [0-9]* GPUs (job $mj)'" ||
	fail "reason while measuring: $(squeue -h -j "$job" -o %R)"
[ -z "$(grep '^task=' "$JOBLOG")" ] || fail "a task started on a prediction"
wait_for 120 queue_empty || fail "batch did not finish"
assert_each_once 3
grep -q -- "--measure" "$wrap.calls" || fail "the profiler was not called with --measure"
grep -q -- "--cache $STATE_DIR/profiles/0/cache" "$wrap.calls" || fail "no --cache PROFILE_DIR/UID/cache: $(cat "$wrap.calls")"
grep -q -- "--output $STATE_DIR/profiles/0/e2e-meas.json" "$wrap.calls" || fail "no --output PROFILE_DIR/UID/NAME.json: $(cat "$wrap.calls")"
for t in 0 1 2; do
	line=$(grep "^task=$t " "$JOBLOG")
	[ "$(field technique "$line")" = ddp ] || fail "task $t: $line"
	g=$(field saturn_gpus "$line")
	python3 - "$(profile_file e2e-meas)" "$g" <<'P' || fail "task $t ran on ddp x$g, not measured"
import json, sys
p = json.load(open(sys.argv[1]))
o = [o for o in p["tasks"][0]["options"] if o["technique"] == "ddp" and o["gpus"] == int(sys.argv[2])]
assert o and o[0]["status"] == "measured", o
P
done
# logged by the first cycle after the job ended (the queue can be empty
# before that cycle ran)
wait_for 30 grep -q "batch e2e-meas of uid 0: measurement job $mj ended" "$CTLD_LOG" ||
	fail "measurement end not logged"
rounds=$(grep -c "batch e2e-meas of uid 0: measuring predicted option" "$CTLD_LOG")
note "measurement rounds: $rounds"
[ "$rounds" -le 8 ] || fail "$rounds measurement rounds"

note "failure path: the measurement job fails"
: >"$JOBLOG"
touch "$wrap.fail"
make_profile e2e-meas2
job=$(sbatch --parsable --saturn-batch=e2e-meas2 --array=0-2 --gres=gpu:2 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch 2"
wait_for 30 grep -q "batch e2e-meas2 of uid 0: measuring predicted option" "$CTLD_LOG" || fail "no measurement job for e2e-meas2"
wait_for 120 queue_empty || fail "batch 2 did not finish"
assert_each_once 3
grep -q "batch e2e-meas2 of uid 0: task [0-9] relies on the predicted ddp" "$CTLD_LOG" || fail "reliance on the prediction not logged"
[ "$(grep -c 'batch e2e-meas2 of uid 0: measuring predicted option' "$CTLD_LOG")" = 1 ] || fail "more than one measurement job after a failure"
python3 - "$(profile_file e2e-meas2)" <<'P' || fail "failed measurement changed the profile"
import json, sys
p = json.load(open(sys.argv[1]))
assert all(o["status"] == "predicted" for o in p["tasks"][0]["options"])
P
rm -f "$wrap" "$wrap.calls" "$wrap.fail"
note "ok"
