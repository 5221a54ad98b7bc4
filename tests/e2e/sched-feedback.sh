#!/bin/sh
# sched-feedback.sh - runtime feedback on a real cluster: the running tasks
# of a batch report (progress file) half the speed their profile promised;
# sched/saturn records the correction (x2) in its state, plans the held
# tasks of the same signature with the corrected speed, `saturn status`
# shows profiled -> observed speed, and every task still runs once.
. "$(dirname "$0")/sched-lib.sh"
sched_setup 71

# 4 tasks of 8 GPUs on 2 nodes of 8: two run, two wait. The profile says
# 1000 x 0.05 s; the tasks report 0.1 s per batch (and end early).
cat >"$(profile_file e2e-fb)" <<'EOP'
{ "format": "saturn-profile/1", "batch": "e2e-fb", "created": 1,
  "tasks": [ { "signature": "m/bs8", "task_ids": "0-3", "batches": 1000,
    "options": [ { "technique": "ddp", "gpus": 8, "sec_per_batch": 0.05, "status": "measured" } ] } ] }
EOP
cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
t=\${SLURM_ARRAY_TASK_ID:-0}
[ -n "\${SATURN_PROGRESS_FILE:-}" ] &&
	printf '{"format":"saturn-progress/1","job_id":%s,"batches_done":40,"batches_total":1000,"sec_per_batch":0.1,"updated":%s}\n' \
		"\$SLURM_JOB_ID" "\$(date +%s)" >"\$SATURN_PROGRESS_FILE.tmp" &&
	mv "\$SATURN_PROGRESS_FILE.tmp" "\$SATURN_PROGRESS_FILE"
sleep 12
echo "task=\$t job=\$SLURM_JOB_ID technique=\${SATURN_TECHNIQUE:-} saturn_gpus=\${SATURN_GPUS:-}" >>$JOBLOG
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

job=$(sbatch --parsable --saturn-batch=e2e-fb --array=0-3 --gres=gpu:8 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
note "array $job submitted"
wait_for 30 sh -c "squeue -h -j $job -t R -o %i | grep -q ." || { sched_dump; fail "no task started"; }

# the state: a correction of 2 for (uid 0, e2e-fb, m/bs8, ddp, 8 GPUs)
wait_for 20 grep -q '"corrections"' "$STATE_DIR/state.json" ||
	{ sched_dump; cat "$STATE_DIR/state.json"; fail "no corrections in the state"; }
cp "$STATE_DIR/state.json" "$SATURN_CLUSTER_DIR/fb.json"
tr -d ' \n' <"$SATURN_CLUSTER_DIR/fb.json" >"$SATURN_CLUSTER_DIR/fb1.json"
grep -Eq '"corrections":\[\{"uid":0,"batch":"e2e-fb","signature":"m\\?/bs8","technique":"ddp","gpus":8,"class":"","ratio":2(\.0*)?,' \
	"$SATURN_CLUSTER_DIR/fb1.json" || { cat "$SATURN_CLUSTER_DIR/fb.json"; fail "correction not x2 for the signature"; }
grep -Eq '"spb_profile":0\.050*[0-9]*,"spb_observed":0\.10*[0-9]*[,}]' "$SATURN_CLUSTER_DIR/fb1.json" ||
	{ cat "$SATURN_CLUSTER_DIR/fb.json"; fail "no profiled/observed speed of a running task"; }
# held tasks planned with 1000 x 0.1 s = 100 s, not the profile's 50 s
durs=$(awk -F'"' '
	/"state":/ { st = $4 }
	/"start":/ { s = $3; gsub(/[:, ]/, "", s) }
	/"end":/ { e = $3; gsub(/[:, ]/, "", e); if (st == "planned") print e - s }
' "$SATURN_CLUSTER_DIR/fb.json")
note "planned durations of the held tasks: $(echo $durs)"
[ -n "$durs" ] || { cat "$SATURN_CLUSTER_DIR/fb.json"; fail "no held task in the state"; }
for d in $durs; do
	awk -v d="$d" 'BEGIN { exit !(d > 99.9 && d < 100.1) }' || fail "held task planned for $d s, not 100 s (corrected)"
done
out=$("$top_builddir/cli/saturn" status --state-dir "$STATE_DIR") || fail "saturn status: $out"
echo "$out" | grep -q 'spb 0\.05 -> 0\.10 (x2\.0)' || { echo "$out"; fail "saturn status shows no speed"; }
note "saturn status:"
echo "$out" | sed -n '/^TASK/,/^$/p'

wait_for 120 queue_empty || { sched_dump; fail "batch did not finish"; }
assert_each_once 4
note "ok"
