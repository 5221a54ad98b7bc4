#!/bin/sh
# sched-noharm.sh - saturn_objective=bounded with saturn_bound=stock on the
# cluster: a small batch of user B arriving after user A's finishes no
# later than stock Slurm would finish it with B's own requests (first come,
# first served, every task on the GPUs it asked for), plus a tolerance for
# Slurm's latency; so does A's later batch; every task runs exactly once.
# One node of 8 GPUs; every task asks for --gres=gpu:4 and has only that
# option in its profile, so the plan changes the order, not the sizes.
#
# A submits a1 (2 tasks of 16 s); once both run, B submits b (2 tasks of
# 15 s) and A at once a2 (1 task of 45 s). With E1 = the end of a1, stock
# Slurm runs b on both halves of the node at E1 (ends E1 + 15), then a2
# (E1 + 60): B's bound is E1 + 15, a2's E1 + 60. The shortest makespan
# (saturn_objective=makespan) starts a2 at E1 and b's two tasks one after
# the other on the other half: B ends at E1 + 30, 15 s past its bound, so
# this test fails under it (NOHARM_PARAMS=saturn_objective=makespan).
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_users
export SATURN_NODES=1 SATURN_PRIORITY=multifactor
TOL=${NOHARM_TOLERANCE:-6}
sched_setup 98 "saturn_interval=2,saturn_release_slack=2,${NOHARM_PARAMS:-saturn_objective=bounded,saturn_bound=stock}"
hostile_dirs
A=$HOSTILE_UID
B=$VICTIM_UID
grep -aq 'sched/saturn: interval ' "$CTLD_LOG" || fail "no startup line in slurmctld.log"

# profile USER NAME TASKS SEC_PER_BATCH (40 batches, 4 GPUs only)
profile() {
	f=$(profile_file "$2" "$1")
	echo "{ \"format\": \"saturn-profile/1\", \"batch\": \"$2\", \"created\": 1, \"tasks\": [ { \"signature\": \"m\", \"task_ids\": \"0-$(($3 - 1))\", \"batches\": 40, \"options\": [ { \"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": $4, \"status\": \"measured\" } ] } ] }" >"$f"
	chown "$1" "$f"
	chmod 600 "$f"
}
profile "$A" a1 2 0.4
profile "$B" b 2 0.375
profile "$A" a2 1 1.125

cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
s=\$(date +%s.%N)
echo "begin user=\$(id -u) job=\${SLURM_JOB_NAME} task=\${SLURM_ARRAY_TASK_ID:-0}" >>$JOBLOG
case \$SLURM_JOB_NAME in a1) sleep 16 ;; b) sleep 15 ;; *) sleep 45 ;; esac
echo "done user=\$(id -u) job=\${SLURM_JOB_NAME} task=\${SLURM_ARRAY_TASK_ID:-0} start=\$s end=\$(date +%s.%N)" >>$JOBLOG
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

sub() { # as_who name n
	$1 sbatch --parsable -J "$2" --saturn-batch="$2" --array=0-$(($3 - 1)) --gres=gpu:4 --time=3 \
		-o /dev/null "$SATURN_CLUSTER_DIR/task.sh" >/dev/null || fail "sbatch $2"
}
# last end of user U's batch J
last_end() {
	awk -v u="user=$1" -v j="job=$2" '$1 == "done" && $2 == u && $3 == j { e = substr($6, 5) + 0; if (e > m) m = e } END { printf "%.3f\n", m }' "$JOBLOG"
}
each_once() { # user job n
	for i in $(seq 0 $(($3 - 1))); do
		c=$(grep -c "^done user=$1 job=$2 task=$i " "$JOBLOG" || true)
		[ "$c" = 1 ] || fail "user $1 batch $2 task $i ran $c times (expected exactly once)"
	done
}

sub as_attacker a1 2
wait_for 90 sh -c "[ \$(grep -c '^begin user=$A job=a1 ' '$JOBLOG') -ge 2 ]" || fail "a1's two tasks did not start"
sub as_victim b 2
sub as_attacker a2 1
wait_for 300 queue_empty || fail "the batches did not finish"
cat "$JOBLOG"
each_once "$A" a1 2
each_once "$B" b 2
each_once "$A" a2 1
[ "$(grep -c '^done ' "$JOBLOG")" = 5 ] || fail "$(grep -c '^done ' "$JOBLOG") task runs logged, expected 5"

# the bounds as the plugin computes them (saturn_mu_stock_deadlines: first
# come first served with the users' own requests, running tasks where they
# are), from the measured end of a1
e1=$(last_end "$A" a1)
eb=$(last_end "$B" b)
ea2=$(last_end "$A" a2)
note "a1 ended at $e1; b at +$(awk -v a="$eb" -v b="$e1" 'BEGIN { printf "%.1f", a - b }') s (stock: +15, tolerance $TOL s); a2 at +$(awk -v a="$ea2" -v b="$e1" 'BEGIN { printf "%.1f", a - b }') s (stock: +60)"
grep -a 'sched/saturn: plan p' "$CTLD_LOG" | tail -n 3
awk -v e="$eb" -v d="$e1" -v t="$TOL" 'BEGIN { exit !(e <= d + 15 + t) }' ||
	fail "B's batch ended $(awk -v a="$eb" -v b="$e1" 'BEGIN { printf "%.1f", a - b - 15 }') s after its stock bound (tolerance $TOL s)"
awk -v e="$ea2" -v d="$e1" -v t="$TOL" 'BEGIN { exit !(e <= d + 60 + t) }' ||
	fail "A's later batch ended $(awk -v a="$ea2" -v b="$e1" 'BEGIN { printf "%.1f", a - b - 60 }') s after its stock bound (tolerance $TOL s)"
note "ok: every batch within its stock bound (+$TOL s); every task once"
