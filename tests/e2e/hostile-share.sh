#!/bin/sh
# hostile-share.sh - under saturn_fairness=share a profile that understates
# its work does not jump the fair-share queue. One node of 8 GPUs; every
# task takes all 8 GPUs for 4 s and has a 2-minute time limit. The
# attacker ($HOSTILE_USER) submits 4 tasks whose profile claims 1.5 s each;
# right after, the victim ($VICTIM_USER) submits 2 tasks with an honest
# profile (40 x 0.1 s). Before: the finish tags came from the
# claims, the attacker's (4 x 12 GPU-s) came before the victim's (2 x 32)
# and all its tasks ran first. (A release slack of 1 s: only a task
# planned to start now is released.) Now a task counts at least the GPU-seconds its time
# limit allows (what Slurm enforces): the attacker's 4 tasks count more
# than the victim's 2, so both of the victim's tasks start before the
# attacker's tasks still held then (at most one, already released, may
# start first).
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_users
export SATURN_NODES=1
sched_setup 17 "saturn_fairness=share,saturn_interval=2,saturn_release_slack=1"
hostile_dirs
A=$HOSTILE_UID
B=$VICTIM_UID

fa=$(profile_file liar "$A")
fb=$(profile_file honest "$B")
opts='"technique": "ddp", "gpus": 8, "sec_per_batch": 0.1, "status": "measured"'
echo "{ \"format\": \"saturn-profile/1\", \"batch\": \"liar\", \"created\": 1, \"tasks\": [ { \"signature\": \"m\", \"task_ids\": \"0-3\", \"batches\": 15, \"options\": [ { $opts } ] } ] }" >"$fa"
echo "{ \"format\": \"saturn-profile/1\", \"batch\": \"honest\", \"created\": 1, \"tasks\": [ { \"signature\": \"m\", \"task_ids\": \"0-1\", \"batches\": 40, \"options\": [ { $opts } ] } ] }" >"$fb"
chown "$A" "$fa"
chown "$B" "$fb"
chmod 600 "$fa" "$fb"

cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
echo "user=\$(id -u) task=\${SLURM_ARRAY_TASK_ID:-0} start=\$(date +%s.%N)" >>$JOBLOG
sleep 4
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

ja=$(as_attacker sbatch --parsable --saturn-batch=liar --array=0-3 --gres=gpu:8 --time=2 -o /dev/null \
	"$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch as $HOSTILE_USER"
# the victim right after: at most the attacker's first task can be released
# before the controller sees both batches (no race with its later releases)
tb=$(date +%s.%N)
jb=$(as_victim sbatch --parsable --saturn-batch=honest --array=0-1 --gres=gpu:8 --time=2 -o /dev/null \
	"$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch as $VICTIM_USER"
note "attacker: array $ja; victim: array $jb submitted at $tb"
wait_for 180 queue_empty || fail "the batches did not finish"

assert_users_once "$A:4" "$B:2"
grep -aq 'sched/saturn: plan .*method share/' "$CTLD_LOG" || fail "no plan with method share logged"
blast=$(last_start "$B")
early=$(starts_between "$A" "$tb" "$blast")
note "victim's last task started at $blast; attacker's tasks started between the victim's submission and then: $early"
cat "$JOBLOG"
[ "$early" -le 1 ] || fail "$early of the attacker's tasks started before the victim's last task: its understated profile jumped the queue"
note "ok"
