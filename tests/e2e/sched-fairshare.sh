#!/bin/sh
# sched-fairshare.sh - saturn_objective=weighted under priority/multifactor
# with fair share (cluster.sh SATURN_ACCOUNTING=1 SATURN_PRIORITY=
# multifactor: PriorityWeightFairshare=100000, recomputed each minute): the
# order of two users' batches follows their fair-share priorities. One
# node of 8 GPUs; every task takes the 8 GPUs for 4 s.
#
# 1. User A ($HOSTILE_USER) runs a plain job on the whole node for 6 s;
#    once Slurm's fair-share factor has it (sshare: A's FairShare below
#    B's, within about a minute), A submits 3 tasks and, when one runs,
#    B ($VICTIM_USER) submits 3. The batches' work is the same and A's
#    jobs are older (the age factor favours A), so only fair share puts
#    B first: B's 3 tasks start before A's tasks still held then (at most
#    one of A's, released already, may start first).
# Every Saturn task runs exactly once.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
[ -x /usr/sbin/slurmdbd ] || skip "slurmdbd not installed (scripts/install-deps.sh)"
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || skip "MariaDB not installed (scripts/install-deps.sh)"
hostile_users
export SATURN_NODES=1 SATURN_ACCOUNTING=1 SATURN_PRIORITY=multifactor
export SATURN_ACCOUNTING_USERS="root $HOSTILE_USER $VICTIM_USER"
# usage is added at a job's end only when limits are enforced
export SATURN_ACCOUNTING_ENFORCE=associations,limits
export SATURN_DB_TIMEOUT=${SATURN_DB_TIMEOUT:-600}
sched_setup 94 "saturn_objective=weighted,saturn_interval=2"
hostile_dirs
A=$HOSTILE_UID
B=$VICTIM_UID
scontrol show config | grep -q 'PriorityWeightFairShare *= *100000' ||
	fail "PriorityWeightFairShare is not 100000: $(scontrol show config | grep -i fairshare)"

opts='"options": [ { "technique": "ddp", "gpus": 8, "sec_per_batch": 0.1, "status": "measured" } ]'
for ub in "$A:fa" "$B:fb"; do
	u=${ub%:*}
	n=${ub#*:}
	f=$(profile_file "$n" "$u")
	echo "{ \"format\": \"saturn-profile/1\", \"batch\": \"$n\", \"created\": 1, \"tasks\": [ { \"signature\": \"m\", \"task_ids\": \"0-2\", \"batches\": 40, $opts } ] }" >"$f"
	chown "$u" "$f"
	chmod 600 "$f"
done
cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
echo "user=\$(id -u) job=\${SLURM_JOB_NAME} task=\${SLURM_ARRAY_TASK_ID:-0} start=\$(date +%s.%N)" >>$JOBLOG
sleep \${1:-4}
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

# fair share of user U (sshare's FairShare column)
fs_of() {
	sshare -n -P -a -A saturn -o User,FairShare 2>/dev/null | awk -F'|' -v u="$1" '$1 == u { print $2 }'
}

# --- A's usage ------------------------------------------------------------
as_attacker sbatch --parsable -J usage --gres=gpu:8 -c 16 --time=1 -o /dev/null \
	"$SATURN_CLUSTER_DIR/task.sh" 6 >/dev/null || fail "sbatch usage as $HOSTILE_USER"
wait_for 60 grep -q "^user=$A job=usage " "$JOBLOG" || fail "A's plain job did not start"
wait_for 30 queue_empty || fail "A's plain job did not end"
# the factor is recomputed each minute (PriorityCalcPeriod=1)
fs_below() {
	awk -v a="$(fs_of "$HOSTILE_USER")" -v b="$(fs_of "$VICTIM_USER")" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0) }'
}
wait_for 90 fs_below || true
fa=$(fs_of "$HOSTILE_USER")
fb=$(fs_of "$VICTIM_USER")
note "fair share: A ($HOSTILE_USER) $fa, B ($VICTIM_USER) $fb"
awk -v a="$fa" -v b="$fb" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0) }' ||
	fail "A's fair share ($fa) is not below B's ($fb) after A's usage: $(sshare -a -l 2>&1 | tail -5)"

# --- the batches -------------------------------------------------------------
starts() {
	awk -v u="$1" -v j="$2" '$1 == "user=" u && $2 == "job=" j { print substr($4, 7) }' "$JOBLOG" | sort -n
}
as_attacker sbatch --parsable -J fa --saturn-batch=fa --array=0-2 --gres=gpu:8 --time=2 \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh" >/dev/null || fail "sbatch fa as $HOSTILE_USER"
wait_for 60 grep -q "^user=$A job=fa " "$JOBLOG" || fail "no task of A started"
tb=$(date +%s.%N)
as_victim sbatch --parsable -J fb --saturn-batch=fb --array=0-2 --gres=gpu:8 --time=2 \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh" >/dev/null || fail "sbatch fb as $VICTIM_USER"
wait_for 120 queue_empty || fail "the batches did not finish"
cat "$JOBLOG"
for ub in "$A:fa" "$B:fb"; do
	for i in 0 1 2; do
		c=$(grep -c "^user=${ub%:*} job=${ub#*:} task=$i " "$JOBLOG" || true)
		[ "$c" = 1 ] || fail "user ${ub%:*} batch ${ub#*:} task $i ran $c times (expected exactly once)"
	done
done
blast=$(starts "$B" fb | tail -n 1)
early=$(starts "$A" fa | awk -v tb="$tb" -v bl="$blast" '$1 > tb && $1 < bl { n++ } END { print n + 0 }')
note "B's last task started at $blast; A's tasks started between B's submission and then: $early"
[ "$early" -le 1 ] || fail "$early of A's tasks started before B's last task (at most 1: the one already released); fair share not followed"
note "ok: batches in fair-share order"
