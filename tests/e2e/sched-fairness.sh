#!/bin/sh
# sched-fairness.sh - saturn_fairness=share: a small batch of one user
# submitted while another user's large batch runs is planned before the
# rest of the large one (the users one after the other in order of their
# fair-share finish tags), not wherever the shortest makespan of both puts
# it. One node of 8 GPUs; every task takes all 8 GPUs for 4 s. User A
# ($HOSTILE_USER) submits 6 tasks; once the first runs, user B
# ($VICTIM_USER) submits 2. B's tag (its submission + 2 x 32 GPU-s / 4 GPUs)
# is before A's (A's submission + 6 x 32 / 4), so both of B's tasks must
# start before A's tasks still held then; at most one of A's tasks may
# start first (the one already released, due when the running one ends:
# saturn_release_slack). The plan is logged with method share; every task
# of both users runs exactly once.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_users
export SATURN_NODES=1
sched_setup 79 "saturn_fairness=share,saturn_interval=2"
hostile_dirs
A=$HOSTILE_UID
B=$VICTIM_UID

opts='"options": [ { "technique": "ddp", "gpus": 8, "sec_per_batch": 0.1, "status": "measured" } ]'
fa=$(profile_file big "$A")
fb=$(profile_file small "$B")
echo "{ \"format\": \"saturn-profile/1\", \"batch\": \"big\", \"created\": 1, \"tasks\": [ { \"signature\": \"m\", \"task_ids\": \"0-5\", \"batches\": 40, $opts } ] }" >"$fa"
echo "{ \"format\": \"saturn-profile/1\", \"batch\": \"small\", \"created\": 1, \"tasks\": [ { \"signature\": \"m\", \"task_ids\": \"0-1\", \"batches\": 40, $opts } ] }" >"$fb"
chown "$A" "$fa"
chown "$B" "$fb"
chmod 600 "$fa" "$fb"

cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
echo "user=\$(id -u) task=\${SLURM_ARRAY_TASK_ID:-0} start=\$(date +%s.%N)" >>$JOBLOG
sleep 4
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

ja=$(as_attacker sbatch --parsable --saturn-batch=big --array=0-5 --gres=gpu:8 --time=2 -o /dev/null \
	"$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch as $HOSTILE_USER"
wait_for 60 grep -q "^user=$A " "$JOBLOG" || fail "no task of A started"
tb=$(date +%s.%N)
jb=$(as_victim sbatch --parsable --saturn-batch=small --array=0-1 --gres=gpu:8 --time=2 -o /dev/null \
	"$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch as $VICTIM_USER"
note "A: array $ja; B: array $jb submitted at $tb"
wait_for 180 queue_empty || fail "the batches did not finish"

assert_users_once "$A:6" "$B:2"
grep -aq 'sched/saturn: plan .*method share/' "$CTLD_LOG" || fail "no plan with method share logged"
# B's last start, and A's tasks started after B's submission but before it
blast=$(last_start "$B")
early=$(starts_between "$A" "$tb" "$blast")
note "B's last task started at $blast; A's tasks started between B's submission and then: $early"
cat "$JOBLOG"
[ "$early" -le 1 ] || fail "$early of A's tasks started after B's submission and before B's last task (at most 1: the one already released)"
note "ok: B planned before the rest of A"
