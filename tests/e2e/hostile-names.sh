#!/bin/sh
# hostile-names.sh - a batch is (user, name): two users who both call their
# batch `sweep` (and both call another one `grid`) get two batches each,
# never one. The attacker first puts a profile for `sweep` asking for 8
# GPUs and fsdp in its own folder PROFILE_DIR/UID/sweep.json; then
#  - the victim's `sweep` is not planned from it and its profiling is not
#    suppressed: the victim gets its own profiler job, run as the victim,
#    with only the victim's task ids, and its tasks run on the victim's own
#    profile, never on 8 GPUs/fsdp;
#  - both users' `grid` (no profile) get one profiler job each, each with
#    only its own user's task ids;
#  - the attacker can neither write into the victim's profile folder nor
#    read it, nor put a profile where the controller reads another user's;
#  - every task of both users runs exactly once;
#  - `saturn status` shows the two `sweep` batches with their users, and
#    --user keeps one of them.
# The profiler is a stand-in (writes a one-option profile: ddp on 2 GPUs)
# so that the test is about the controller's keys, not about profiling.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
[ -x "$top_builddir/cli/saturn" ] || skip "saturn not built"
hostile_users
wrap="${TMPDIR:-/tmp}/saturn-e2e-namewrap-$$"
calls="$wrap.calls"
cat >"$wrap" <<'EOW'
#!/bin/sh
# saturn-profile stand-in: records who ran it with what, writes a profile
# offering ddp on 2 GPUs for the task ids it was given
echo "uid=$(id -u) $*" >>"$0.calls"
ids= out= batch=
while [ $# -gt 0 ]; do
	case $1 in
	--task-ids) ids=$2; shift ;;
	--output) out=$2; shift ;;
	--batch) batch=$2; shift ;;
	esac
	shift
done
sleep 2
cat >"$out.tmp" <<EOP || exit 1
{ "format": "saturn-profile/1", "batch": "$batch", "created": 1,
  "tasks": [ { "signature": "m/bs8", "task_ids": "$ids", "batches": 10,
    "options": [ { "technique": "ddp", "gpus": 2, "sec_per_batch": 0.2, "status": "measured" } ] } ] }
EOP
mv "$out.tmp" "$out"
EOW
chmod 755 "$wrap"
: >"$calls"
chmod 666 "$calls"
sched_setup 62 "saturn_profiler=$wrap,saturn_profile_time=5"
hostile_dirs
SATURN="$top_builddir/cli/saturn"
A=$HOSTILE_UID
V=$VICTIM_UID
note "attacker $HOSTILE_USER ($A), victim $VICTIM_USER ($V)"

cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
echo "task=\${SLURM_ARRAY_TASK_ID:-0} user=\$(id -u) batch=\${SATURN_BATCH:-} job=\$SLURM_JOB_ID technique=\${SATURN_TECHNIQUE:-} saturn_gpus=\${SATURN_GPUS:-}" >>$JOBLOG
sleep \${TASK_SLEEP:-1}
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

# The users' folders, as sched/saturn makes them: 0700, each user's own.
# The attacker writes its profile for `sweep` first: 8 GPUs, fsdp.
AP=$(profile_file sweep "$A") || fail "attacker's profile folder"
VP=$(profile_file sweep "$V") || fail "victim's profile folder"
PROFILES="$STATE_DIR/profiles"
as_attacker sh -c "cat >'$AP'" <<'EOP' || fail "attacker cannot write its own profile"
{ "format": "saturn-profile/1", "batch": "sweep", "created": 1,
  "tasks": [ { "signature": "m/bs8", "task_ids": "0-9", "batches": 10,
    "options": [ { "technique": "fsdp", "gpus": 8, "sec_per_batch": 0.1, "status": "measured" } ] } ] }
EOP
[ "$(mode_owner "$AP")" != missing ] || fail "attacker's profile not written"
# ... and cannot put one for the victim, nor where an older controller looked
as_attacker sh -c "echo '{}' >'$VP'" 2>/dev/null && fail "attacker wrote into the victim's profile folder"
as_attacker sh -c "echo '{}' >'$PROFILES/sweep.json'" 2>/dev/null && fail "attacker wrote into PROFILE_DIR itself"
as_attacker ls "$PROFILES/$V" >/dev/null 2>&1 && fail "attacker can list the victim's profile folder"
[ "$(mode_owner "$PROFILES")" = "755 0" ] || fail "PROFILE_DIR is $(mode_owner "$PROFILES"), not 755 root"

# attacker: sweep 0-1 (its profile) and grid 0-2; victim: sweep 4-5 and
# grid 5-6 (no profile): the task ids tell whose they are
as_attacker env TASK_SLEEP=60 sbatch --parsable --saturn-batch=sweep --array=0-0 --gres=gpu:1 --time=3 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh" >"$SATURN_CLUSTER_DIR/a-sweep" || fail "attacker sbatch sweep"
as_attacker sbatch --parsable --saturn-batch=grid --array=0-2 --gres=gpu:1 --time=3 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh" >"$SATURN_CLUSTER_DIR/a-grid" || fail "attacker sbatch grid"
as_victim env TASK_SLEEP=5 sbatch --parsable --saturn-batch=sweep --array=4-5 --gres=gpu:1 --time=3 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh" >"$SATURN_CLUSTER_DIR/v-sweep" || fail "victim sbatch sweep"
as_victim sbatch --parsable --saturn-batch=grid --array=5-6 --gres=gpu:1 --time=3 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh" >"$SATURN_CLUSTER_DIR/v-grid" || fail "victim sbatch grid"
note "attacker sweep $(cat "$SATURN_CLUSTER_DIR/a-sweep") grid $(cat "$SATURN_CLUSTER_DIR/a-grid"); victim sweep $(cat "$SATURN_CLUSTER_DIR/v-sweep") grid $(cat "$SATURN_CLUSTER_DIR/v-grid")"

# the controller's records are per user (kept while their batch has tasks)
seen=
see_records() {
	for r in "profiler-$V-sweep" "profiler-$A-grid" "profiler-$V-grid"; do
		[ -f "$STATE_DIR/$r.job" ] && case " $seen " in *" $r "*) ;; *) seen="$seen $r" ;; esac
	done
	[ -e "$STATE_DIR/profiler-sweep.job" ] && fail "a record keyed by the name alone"
	[ "$(echo $seen | wc -w)" = 3 ]
}
wait_for 120 see_records || fail "records seen:$seen (expected profiler-$V-sweep, profiler-$A-grid, profiler-$V-grid)"
# `saturn status`: the two sweep batches, each with its user
wait_for 120 sh -c "'$SATURN' status --state-dir '$STATE_DIR' sweep | grep -c '^sweep ' | grep -qx 2" ||
	fail "saturn status never showed two sweep batches: $("$SATURN" status --state-dir "$STATE_DIR" 2>&1 | head -12)"
st=$("$SATURN" status --state-dir "$STATE_DIR" sweep)
echo "$st" | grep -q "^sweep *$HOSTILE_USER ($A) " || fail "no attacker sweep row: $st"
echo "$st" | grep -q "^sweep *$VICTIM_USER ($V) " || fail "no victim sweep row: $st"
st=$("$SATURN" status --state-dir "$STATE_DIR" --user "$VICTIM_USER" sweep) || fail "status --user"
echo "$st" | grep -q "^sweep *$HOSTILE_USER ($A) " && fail "--user $VICTIM_USER shows the attacker's batch: $st"
echo "$st" | grep -q "^sweep *$VICTIM_USER ($V) " || fail "--user $VICTIM_USER: $st"
note "status: $(echo "$st" | grep '^sweep ')"

wait_for 240 queue_empty || fail "the batches did not finish"

# every task once: attacker sweep 0, grid 0-2; victim sweep 4-5, grid 5-6
for e in "$A sweep 0" "$A grid 0" "$A grid 1" "$A grid 2" "$V sweep 4" "$V sweep 5" "$V grid 5" "$V grid 6"; do
	set -- $e
	c=$(grep -c "^task=$3 user=$1 batch=$2 " "$JOBLOG" || true)
	[ "$c" = 1 ] || fail "task $3 of uid $1's $2 ran $c times"
done
[ "$(grep -c '^task=' "$JOBLOG")" = 8 ] || fail "$(grep -c '^task=' "$JOBLOG") task runs logged, expected 8"

# the attacker's sweep ran from its own profile; the victim's never did
line=$(grep "user=$A batch=sweep " "$JOBLOG")
[ "$(field technique "$line")" = fsdp ] && [ "$(field saturn_gpus "$line")" = 8 ] ||
	fail "attacker's sweep not planned from its profile: $line"
for t in 4 5; do
	line=$(grep "^task=$t user=$V batch=sweep " "$JOBLOG")
	[ "$(field technique "$line")" = ddp ] && [ "$(field saturn_gpus "$line")" = 2 ] ||
		fail "victim's sweep task $t not run from the victim's own profile: $line"
done

# profiler jobs: one per (user, batch) without a profile, run as that user,
# with only that user's task ids; none for the attacker's sweep
cat "$calls" | sed 's/^/# call: /'
[ "$(grep -c . "$calls")" = 3 ] || fail "$(grep -c . "$calls") profiler runs, expected 3"
grep -q "^uid=$V .*--batch sweep .*--task-ids 4,5 .*--output $PROFILES/$V/sweep.json" "$calls" ||
	fail "no victim profiler job for sweep with task ids 4,5 into its own folder"
grep -q "^uid=$A .*--batch grid .*--task-ids 0,1,2 .*--output $PROFILES/$A/grid.json" "$calls" ||
	fail "no attacker profiler job for grid with task ids 0,1,2"
grep -q "^uid=$V .*--batch grid .*--task-ids 5,6 .*--output $PROFILES/$V/grid.json" "$calls" ||
	fail "no victim profiler job for grid with task ids 5,6"
grep -q "^uid=$A .*--batch sweep" "$calls" && fail "a profiler job for the attacker's sweep, which has a profile"
[ "$(mode_owner "$PROFILES/$V/sweep.json" | cut -d' ' -f2)" = "$V" ] || fail "victim's profile not the victim's"
grep -q "batch sweep of uid $A: profile $PROFILES/$A/sweep.json loaded" "$CTLD_LOG" || fail "attacker's profile load not logged"
grep -q "batch sweep of uid $V: profile $PROFILES/$A" "$CTLD_LOG" && fail "victim's batch looked at the attacker's profile"
rm -f "$wrap" "$calls"
note "ok"
