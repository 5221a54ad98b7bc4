#!/bin/sh
# sched-classes-measure.sh - saturn_measure_predicted with a class profile
# (SATURN_GPU_CLASSES: n1-n2 "a100" over PCIe, n3-n4 "h100" over NVLink):
# the batch's profile is measured, class h100's own profile
# (NAME@h100x2-nvlink.json) offers only predicted ddp options, faster. A
# task planned on h100 relies on them, so it stays held while a job
# saturn-measure:NAME@h100x2-nvlink runs saturn-profile --measure on h100
# GPUs (gres gpu:h100:N) and rewrites the class's profile (not the batch's);
# then every task runs once.
. "$(dirname "$0")/sched-lib.sh"
[ -x "$top_builddir/profiler/saturn-profile" ] && [ -x "$top_builddir/runner/saturn-run" ] ||
	skip "saturn-profile/saturn-run not built"
"$top_builddir/profiler/saturn-profile" --help 2>&1 | grep -q -- --measure || skip "saturn-profile has no --measure"
wrap="${TMPDIR:-/tmp}/saturn-e2e-clsmeaswrap-$$"
cat >"$wrap" <<EOW
#!/bin/sh
echo "\$*" >>"\${0}.calls"
case "\$*" in *--measure*) sleep 4 ;; esac
exec "$top_builddir/profiler/saturn-profile" --backend cpu --timeout 60 --trial-batches 2 "\$@"
EOW
chmod 755 "$wrap"
export SATURN_GPU_CLASSES="a100:pcie:2 h100:nvlink:2" SATURN_GPUS_PER_NODE=2
sched_setup 90 "saturn_profiler=$wrap,saturn_profile_time=5,saturn_measure_predicted=yes"
write_emulate_task "$SATURN_CLUSTER_DIR/task.sh"

# a real profile of the task (outside Slurm, 2 GPUs): the batch's as it is;
# h100's own with its ddp options predicted at a quarter of the time
bp=$(profile_file e2e-cm)
cp="${bp%/*}/e2e-cm@h100x2-nvlink.json"
SATURN_SRUN= CUDA_VISIBLE_DEVICES=0,1 PATH="$top_builddir/runner:$PATH" \
	"$top_builddir/profiler/saturn-profile" --backend cpu --no-cache --trial-batches 2 \
	--batch e2e-cm --script "$SATURN_CLUSTER_DIR/task.sh" --task-ids 0-2 \
	--output "$SATURN_CLUSTER_DIR/real.json" 2>"$SATURN_CLUSTER_DIR/prof.log" ||
	fail "local profile: $(tail -3 "$SATURN_CLUSTER_DIR/prof.log")"
python3 - "$SATURN_CLUSTER_DIR/real.json" "$bp" "$cp" <<'P' || fail "profile edit"
import json, sys
p = json.load(open(sys.argv[1]))
json.dump(p, open(sys.argv[2] + ".tmp", "w"))
assert len(p["tasks"]) == 1, "one signature expected"
t = p["tasks"][0]
t["class"] = "h100x2-nvlink"
t["options"] = [dict(o, status="predicted", sec_per_batch=o["sec_per_batch"] / 4)
                for o in t["options"] if o["technique"] == "ddp" and o["sec_per_batch"] > 0]
assert t["options"], "no ddp option"
json.dump(p, open(sys.argv[3] + ".tmp", "w"))
P
mv "$bp.tmp" "$bp"
mv "$cp.tmp" "$cp"
batch_sum=$(md5sum <"$bp")

job=$(sbatch --parsable --saturn-batch=e2e-cm --array=0-2 --gres=gpu:2 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
wait_for 40 grep -q "batch e2e-cm@h100x2-nvlink of uid 0: measuring predicted option(s) [0-9]:ddp:[0-9]" "$CTLD_LOG" ||
	fail "no measurement job for class h100: $(grep 'measur' "$CTLD_LOG" | tail -5)"
mj=$(sed -n 's/.*batch e2e-cm@h100x2-nvlink of uid 0: measuring predicted option(s) .* (job \([0-9]*\), round 1).*/\1/p' "$CTLD_LOG" | head -1)
note "measurement job $mj"
# its record, kept while the batch has tasks (removed with the batch)
wait_for 10 test -s "$STATE_DIR/measure-0-e2e-cm@h100x2-nvlink.job" || fail "no measurement record for the class"
grep -q "batch e2e-cm of uid 0: submitted measurement job $mj (gres[:/]gpu:h100:" "$CTLD_LOG" ||
	fail "job $mj not on h100 GPUs: $(grep "submitted measurement job $mj" "$CTLD_LOG")"
wait_for 120 queue_empty || fail "batch did not finish"
assert_each_once 3
sacct_name=$(grep -- "--measure" "$wrap.calls" | head -1)
case "$sacct_name" in
*"--class h100x2-nvlink"*"--output $cp"*) ;;
*) fail "the measurement was not of the class profile: $sacct_name" ;;
esac
[ "$(md5sum <"$bp")" = "$batch_sum" ] || fail "the batch's profile was rewritten"
python3 - "$cp" <<'P' || fail "no option measured in $cp"
import json, sys
p = json.load(open(sys.argv[1]))
assert any(o["status"] == "measured" for o in p["tasks"][0]["options"]), p["tasks"][0]["options"]
P
# the batch and its measurement job ended: the record and script copy go
gone() {
	[ ! -e "$STATE_DIR/measure-0-e2e-cm@h100x2-nvlink.job" ] &&
		[ ! -e "$STATE_DIR/scripts/0-e2e-cm@h100x2-nvlink.measure.script" ]
}
wait_for 30 gone || fail "the measurement record or script copy of the ended batch is left"
rm -f "$wrap" "$wrap.calls"
note "ok"
