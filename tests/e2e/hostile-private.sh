#!/bin/sh
# hostile-private.sh - Slurm's PrivateData holds for sched/saturn's state.
# With PrivateData=jobs users see only their own jobs in Slurm; before, any
# user read every other user's Saturn jobs (batch names, job ids, nodes,
# techniques, planned times, signatures) from STATE_DIR/state.json (0644)
# or with `saturn status`. Now:
#  - without PrivateData everyone sees everything, as before (users read
#    STATE_DIR/users/all.json, 0644); state.json itself is 0600;
#  - after PrivateData=jobs and a reconfigure, all.json is removed; the
#    attacker cannot read state.json, list STATE_DIR/users or read the
#    victim's view, and `saturn status` (table and --json) shows it none of
#    the victim's batch, only its own; the victim sees its own batch; root
#    sees both;
#  - the victim's view goes once the victim has no task left.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
[ -x "$top_builddir/cli/saturn" ] || skip "saturn not built"
hostile_users
sched_setup 12
hostile_dirs
JOB_BIN=$(job_bin) || fail "job_bin"
# the test's exit status survives the clean-up
trap 'r=$?; job_bin_clean; (exit $r); sched_teardown' EXIT INT TERM
cp "$top_builddir/cli/saturn" "$JOB_BIN/saturn" && chmod 755 "$JOB_BIN/saturn" || fail "copy saturn"
SATURN="$JOB_BIN/saturn"
V=$VICTIM_UID
A=$HOSTILE_UID
USERS="$STATE_DIR/users"
write_task_script "$SATURN_CLUSTER_DIR/task.sh" 40

# the victim's batch: more 8-GPU tasks than nodes, so some stay planned
vj=$(as_victim sbatch --parsable --saturn-batch=victim-secret --array=0-3 --gres=gpu:8 --time=5 \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "victim sbatch"
wait_for 60 grep -q '"victim-secret"' "$STATE_DIR/state.json" || fail "the victim's batch never reached the state"
[ "$(mode_owner "$STATE_DIR/state.json" | cut -d' ' -f1)" = 600 ] ||
	fail "state.json is $(mode_owner "$STATE_DIR/state.json"), not 0600"
as_attacker cat "$STATE_DIR/state.json" >/dev/null 2>&1 && fail "the attacker reads state.json"

# (1) no PrivateData: everyone sees everything, as before
wait_for 30 test -f "$USERS/all.json" || fail "no public view without PrivateData"
[ "$(mode_owner "$USERS/all.json")" = "644 0" ] || fail "all.json is $(mode_owner "$USERS/all.json")"
as_attacker "$SATURN" status --state-dir "$STATE_DIR" >"$SATURN_CLUSTER_DIR/st1" 2>&1 ||
	fail "attacker's saturn status without PrivateData: $(cat "$SATURN_CLUSTER_DIR/st1")"
grep -q victim-secret "$SATURN_CLUSTER_DIR/st1" || fail "without PrivateData the batch is not shown to others: $(head "$SATURN_CLUSTER_DIR/st1")"

# (2) PrivateData=jobs
echo "PrivateData=jobs" >>"$SATURN_CLUSTER_DIR/etc/slurm.conf"
scontrol reconfigure || fail "scontrol reconfigure"
wait_for 30 sh -c "! test -e '$USERS/all.json'" || fail "the public view stayed after PrivateData=jobs"
as_victim squeue -h -o %i >/dev/null || fail "victim squeue"
[ -z "$(as_attacker squeue -h -u "$VICTIM_USER" -o %i)" ] || fail "PrivateData=jobs not in force in Slurm itself"
wait_for 30 test -f "$USERS/$V.json" || fail "no view of the victim"
[ "$(mode_owner "$USERS/$V.json")" = "400 $V" ] || fail "the victim's view is $(mode_owner "$USERS/$V.json"), not 0400 $V"
[ "$(mode_owner "$USERS")" = "711 0" ] || fail "STATE_DIR/users is $(mode_owner "$USERS"), not 0711 root"
as_attacker cat "$STATE_DIR/state.json" >/dev/null 2>&1 && fail "the attacker reads state.json under PrivateData"
as_attacker cat "$USERS/$V.json" >/dev/null 2>&1 && fail "the attacker reads the victim's view"
as_attacker ls "$USERS" >/dev/null 2>&1 && fail "the attacker lists STATE_DIR/users"
as_attacker "$SATURN" status --state-dir "$STATE_DIR" >"$SATURN_CLUSTER_DIR/st2" 2>&1 &&
	fail "the attacker (no task) got a status: $(head "$SATURN_CLUSTER_DIR/st2")"
grep -q victim-secret "$SATURN_CLUSTER_DIR/st2" && fail "the attacker sees the victim's batch"
grep -q "no Saturn state visible" "$SATURN_CLUSTER_DIR/st2" || fail "no clear message: $(cat "$SATURN_CLUSTER_DIR/st2")"
as_attacker "$SATURN" status --state-dir "$STATE_DIR" --json 2>/dev/null | grep -q victim-secret &&
	fail "the attacker sees the victim's batch with --json"
# the victim sees its own
as_victim "$SATURN" status --state-dir "$STATE_DIR" >"$SATURN_CLUSTER_DIR/st3" 2>&1 ||
	fail "victim's saturn status: $(cat "$SATURN_CLUSTER_DIR/st3")"
grep -q victim-secret "$SATURN_CLUSTER_DIR/st3" || fail "the victim does not see its batch"
# the attacker's own batch: it sees that, still not the victim's
aj=$(as_attacker sbatch --parsable --saturn-batch=mine --gres=gpu:8 --time=5 \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "attacker sbatch"
wait_for 30 test -f "$USERS/$A.json" || fail "no view of the attacker"
as_attacker "$SATURN" status --state-dir "$STATE_DIR" >"$SATURN_CLUSTER_DIR/st4" 2>&1 ||
	fail "attacker's status of its own batch: $(cat "$SATURN_CLUSTER_DIR/st4")"
grep -q mine "$SATURN_CLUSTER_DIR/st4" || fail "the attacker does not see its own batch"
grep -q victim-secret "$SATURN_CLUSTER_DIR/st4" && fail "the attacker sees the victim's batch next to its own"
as_attacker "$SATURN" status --state-dir "$STATE_DIR" --json | grep -q victim-secret &&
	fail "the attacker's --json holds the victim's batch"
# root sees both
"$SATURN" status --state-dir "$STATE_DIR" >"$SATURN_CLUSTER_DIR/st5" 2>&1 || fail "root's status"
grep -q victim-secret "$SATURN_CLUSTER_DIR/st5" && grep -q mine "$SATURN_CLUSTER_DIR/st5" ||
	fail "root does not see both batches: $(head -20 "$SATURN_CLUSTER_DIR/st5")"

# (3) the victim's batch ends: its view goes
scancel "$vj" || fail "scancel"
wait_for 40 sh -c "! test -e '$USERS/$V.json'" || fail "the view of a user with no task left stayed"
scancel "$aj"
note "ok"
