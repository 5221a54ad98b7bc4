#!/bin/sh
# mu-lib.sh - what the multi-user sched/saturn tests share
# (sched-objective.sh, sched-fairshare.sh, sched-limits.sh): a one-node
# cluster with accounting for root and the two hostile-lib.sh users, their
# batches' profiles, the task script that logs each task's start, and
# reading that log. Source after sched-lib.sh and hostile-lib.sh.

# mu_accounting ENFORCE: skips unless slurmdbd and MariaDB are installed;
# sets up the users (hostile_users) and asks cluster.sh for one node with
# accounting (root and both users in account saturn) and
# AccountingStorageEnforce=ENFORCE. Call before sched_setup.
mu_accounting() {
	[ -x /usr/sbin/slurmdbd ] || skip "slurmdbd not installed (scripts/install-deps.sh)"
	command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || skip "MariaDB not installed (scripts/install-deps.sh)"
	hostile_users
	export SATURN_NODES=1 SATURN_ACCOUNTING=1
	export SATURN_ACCOUNTING_USERS="root $HOSTILE_USER $VICTIM_USER"
	export SATURN_ACCOUNTING_ENFORCE="$1"
	export SATURN_DB_TIMEOUT=${SATURN_DB_TIMEOUT:-600}
}

# mu_users: after sched_setup, the users' profile folders (hostile_dirs)
# and A, B: the uids of $HOSTILE_USER and $VICTIM_USER.
mu_users() {
	hostile_dirs
	A=$HOSTILE_UID
	B=$VICTIM_UID
}

# mu_profile UID BATCH TASK_IDS OPTIONS: the profile of batch BATCH of user
# UID: one signature for tasks TASK_IDS, 40 batches each, OPTIONS (the
# "options": [...] member); owned by the user, mode 600.
mu_profile() {
	mu_f=$(profile_file "$2" "$1")
	echo "{ \"format\": \"saturn-profile/1\", \"batch\": \"$2\", \"created\": 1, \"tasks\": [ { \"signature\": \"m\", \"task_ids\": \"$3\", \"batches\": 40, $4 } ] }" >"$mu_f"
	chown "$1" "$mu_f"
	chmod 600 "$mu_f"
}

# $SATURN_CLUSTER_DIR/task.sh [SECONDS]: logs "user=UID job=NAME task=I
# start=T" to $JOBLOG, then sleeps SECONDS (4).
mu_task_script() {
	cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
echo "user=\$(id -u) job=\${SLURM_JOB_NAME} task=\${SLURM_ARRAY_TASK_ID:-0} start=\$(date +%s.%N)" >>$JOBLOG
sleep \${1:-4}
EOS
	chmod 755 "$SATURN_CLUSTER_DIR/task.sh"
}

# starts UID JOB: the start times of user UID's tasks of job name JOB in
# mu_task_script's log, earliest first.
starts() {
	awk -v u="$1" -v j="$2" '$1 == "user=" u && $2 == "job=" j { print substr($4, 7) }' "$JOBLOG" | sort -n
}

# each_once UID JOB N: fails unless tasks 0 .. N-1 of user UID's job JOB
# each started exactly once.
each_once() {
	for i in $(seq 0 $(($3 - 1))); do
		c=$(grep -c "^user=$1 job=$2 task=$i " "$JOBLOG" || true)
		[ "$c" = 1 ] || fail "user $1 batch $2 task $i ran $c times (expected exactly once)"
	done
}

# mu_b_first AJOB BJOB N WHAT [SBATCH_OPTION...]: user A ($A) submits
# batch AJOB of N tasks (each takes the 8 GPUs; SBATCH_OPTIONs added) and,
# once one of them runs, user B ($B) submits BJOB of N. When both are done,
# every task ran exactly once and B's tasks all started before A's tasks
# still held at B's submission (at most one of A's, released already, may
# start in between); fails saying WHAT was not followed otherwise.
mu_b_first() {
	mu_aj=$1 mu_bj=$2 mu_n=$3 mu_what=$4
	shift 4
	as_attacker sbatch --parsable -J "$mu_aj" --saturn-batch="$mu_aj" "$@" --array=0-$((mu_n - 1)) \
		--gres=gpu:8 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh" >/dev/null ||
		fail "sbatch $mu_aj as $HOSTILE_USER"
	wait_for 60 grep -q "^user=$A job=$mu_aj " "$JOBLOG" || fail "no task of A started"
	mu_tb=$(date +%s.%N)
	as_victim sbatch --parsable -J "$mu_bj" --saturn-batch="$mu_bj" --array=0-$((mu_n - 1)) \
		--gres=gpu:8 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh" >/dev/null ||
		fail "sbatch $mu_bj as $VICTIM_USER"
	wait_for 180 queue_empty || fail "the batches did not finish"
	cat "$JOBLOG"
	each_once "$A" "$mu_aj" "$mu_n"
	each_once "$B" "$mu_bj" "$mu_n"
	mu_blast=$(starts "$B" "$mu_bj" | tail -n 1)
	mu_early=$(starts "$A" "$mu_aj" | awk -v tb="$mu_tb" -v bl="$mu_blast" '$1 > tb && $1 < bl { n++ } END { print n + 0 }')
	note "B's last task started at $mu_blast; A's tasks started between B's submission and then: $mu_early"
	[ "$mu_early" -le 1 ] ||
		fail "$mu_early of A's tasks started before B's last task (at most 1: the one already released); $mu_what not followed"
}
