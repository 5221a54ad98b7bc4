#!/bin/sh
# hostile-node.sh - a node dies in the middle of a batch. The task running
# on it is requeued by Slurm (--requeue) and comes back pending, pinned to
# the dead node with a begin time in the future; sched/saturn must re-hold
# it and plan it again (no pending task stays pinned to the dead node, no
# held task waits "on n1"), the rest of the batch runs on n2, a task an
# operator releases by hand is put back into the hold, and once the node is
# back every task has run exactly once.
. "$(dirname "$0")/sched-lib.sh"
# a requeued job may start again 11 s after its requeue (Slurm's default is
# 121 s: the plan counts it either way, see doc/security-parts/nodefail.md)
export SATURN_CRED_EXPIRE=10 SATURN_NODES=2
sched_setup 68

N=6
write_task_script "$SATURN_CLUSTER_DIR/task.sh" 15
job=$(sbatch --parsable --saturn-batch=e2e-node --array=0-$((N - 1)) --gres=gpu:8 --time=1 \
	--requeue -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"

# one task running on each node
running_on() {
	squeue -h -j "$job" -t R -o '%i %N' | grep -q " $1\$"
}
wait_for 40 running_on n1 || fail "no task started on n1"
wait_for 20 running_on n2 || fail "no task started on n2"
# Slurm 24.11 counts a node's answers to RPCs in a thread that runs every
# 2 s (agent.c, _agent_nodes_update): the answer to the victim's launch,
# counted after the node is set DOWN below, would bring n1 back at once
# (ReturnToService=2). The node dies some seconds after its last answer.
sleep 3
victim=$(squeue -h -j "$job" -t R -o '%i %N' | awk '$2 == "n1" { print $1; exit }')
victim_raw=$(squeue -h -j "$job" -t R -o '%i %A' | awk -v v="$victim" '$1 == v { print $2 }')

# n1 dies: its slurmd and the victim's processes (its slurmstepd and all
# below it) are killed, then the node is marked down. A slurmd left alive
# would register again and ReturnToService=2 would bring n1 back at once.
# job_pids RAWID: the victim's batch script on n1 of this cluster (found by
# its spool path: other clusters on the machine have job ids of their own),
# its slurmstepd, and everything below them.
job_pids() {
	ps -eo pid=,ppid=,args= | awk -v script="$(printf '%s/spool/n1/job%05d/slurm_script' "$SATURN_CLUSTER_DIR" "$1")" '
		{ pid[NR] = $1; ppid[NR] = $2; cmd[$1] = $3; if ($3 == "/bin/sh" && $4 == script && NF == 4) { mark[$1] = 1; parent = $2 } }
		END {
			if (parent != "" && cmd[parent] == "slurmstepd:")
				mark[parent] = 1
			do {
				more = 0
				for (i = 1; i <= NR; i++)
					if (!(pid[i] in mark) && (ppid[i] in mark)) { mark[pid[i]] = 1; more = 1 }
			} while (more)
			for (p in mark) print p
		}'
}
note "task $victim (JobId=$victim_raw) runs on n1: n1 dies"
down_at=$(date +%s)
kill -9 "$(cat "$SATURN_CLUSTER_DIR/run/slurmd-n1.pid")" || fail "cannot kill slurmd of n1"
pids=$(job_pids "$victim_raw")
[ -n "$pids" ] || fail "no processes of JobId=$victim_raw found"
# never more than the step's own few processes, never this shell
[ "$(echo "$pids" | wc -l)" -le 10 ] || fail "JobId=$victim_raw: too many processes: $pids"
echo "$pids" | grep -qx "$$" && fail "JobId=$victim_raw: process list holds this shell"
# stopped first, all of them, then killed: killed one by one, the batch
# script could outlive its sleep by a moment, write its end line and exit
# 0 (the task then counted as run, and not requeued)
# shellcheck disable=SC2086
kill -STOP $pids 2>/dev/null
# shellcheck disable=SC2086
kill -9 $pids 2>/dev/null
scontrol update nodename=n1 state=down reason=test || fail "scontrol update state=down"

# Pending records of the batch (split tasks and the array's meta record)
# still required to run on n1.
pending_pinned_n1() {
	scontrol -o show job "$job" | awk '/JobState=PENDING/ && /ReqNodeList=n1 / { print $1, $2 }'
}
no_pin_n1() {
	[ -z "$(pending_pinned_n1)" ]
}
no_reason_n1() {
	! squeue -h -r -j "$job" -t PD -o '%i %r' | grep -q 'on n1'
}
wait_for 20 sh -c "squeue -h -r -j $job -t PD -o %i | grep -qx '$victim'" ||
	fail "task $victim was not requeued after n1 went down"
wait_for 20 grep -aq "re-held JobId=$victim(.*requeued after running on n1" "$CTLD_LOG" ||
	fail "requeued task $victim was not re-held"
wait_for 30 no_pin_n1 || fail "pending task(s) still pinned to the dead n1: $(pending_pinned_n1)"
wait_for 30 no_reason_n1 || fail "held task(s) still planned on n1: $(squeue -h -r -j "$job" -t PD -o '%i %r' | grep 'on n1')"
grep -aq "re-held.*re-planning" "$CTLD_LOG" || fail "no re-hold logged"
note "no pending task pinned to n1, none planned on it"

# An operator releases a held task by hand: out of the plan, so it is
# held again (n2 is busy and n1 down: it cannot start meanwhile).
# The last task is still held in the array record; release it while a task
# has just started on n2.
fresh_on_n2() {
	squeue -h -j "$job" -t R -o '%N %M' | awk '$1 == "n2" && $2 ~ /^0:0[0-5]$/ { ok = 1 } END { exit !ok }'
}
held="${job}_$((N - 1))"
wait_for 60 fresh_on_n2 || fail "no task started on n2 after n1 went down"
squeue -h -r -j "$job" -t PD -o '%i %r' | grep -q "^$held saturn:" ||
	fail "task $held is not held: $(squeue -h -r -j "$job" -t PD -o '%i %r')"
note "releasing held task $held by hand"
scontrol release "$held" || fail "scontrol release $held"
wait_for 20 grep -aq "re-held JobId=$held(.*left its hold outside the plan" "$CTLD_LOG" ||
	fail "task $held released by hand was not held again"
# ... and one pinned to the dead n1 and released by hand: re-held, un-pinned
pinned="${job}_$((N - 2))"
if squeue -h -r -j "$job" -t PD -o '%i %r' | grep -q "^$pinned saturn:"; then
	note "pinning held task $pinned to n1 and releasing it by hand"
	scontrol update jobid="$pinned" nodelist=n1 || fail "scontrol update $pinned nodelist=n1"
	scontrol release "$pinned" || fail "scontrol release $pinned"
	wait_for 20 grep -aq "re-held JobId=$pinned(.*re-planning (node n1 down)" "$CTLD_LOG" ||
		fail "task $pinned pinned to the dead n1 was not re-held"
	wait_for 10 no_pin_n1 || fail "task $pinned still pinned to n1: $(pending_pinned_n1)"
fi

# The rest runs on n2 while n1 is down: two more tasks end there.
ran_on_n2_since_down() {
	[ "$(awk -v t="$down_at" '/node=n2/ { for (i = 1; i <= NF; i++) if ($i ~ /^start=/) { split($i, a, "="); if (a[2] + 0 >= t) n++ } } END { print n + 0 }' "$JOBLOG")" -ge "$1" ]
}
wait_for 90 ran_on_n2_since_down 2 || fail "tasks did not go on on n2 while n1 was down"
awk -v t="$down_at" '/node=n1/ { for (i = 1; i <= NF; i++) if ($i ~ /^start=/) { split($i, a, "="); if (a[2] + 0 >= t) bad = 1 } } END { exit bad }' "$JOBLOG" ||
	fail "a task started on n1 while it was down"
no_pin_n1 || fail "pending task(s) pinned to the dead n1: $(pending_pinned_n1)"
sinfo -h -n n1 -o %T | grep -q '^down' || fail "n1 did not stay down: $(sinfo -h -n n1 -o %T)"

note "bringing n1 back"
(
	setsid "${SATURN_SLURM_BIN:-/usr/sbin}/slurmd" -D -N n1 >>"$SATURN_CLUSTER_DIR/log/slurmd-n1.out" 2>&1 </dev/null &
	echo $! >"$SATURN_CLUSTER_DIR/run/slurmd-n1.started.pid"
)
wait_for 10 test -s "$SATURN_CLUSTER_DIR/run/slurmd-n1.pid"
scontrol update nodename=n1 state=resume 2>/dev/null # may be back already (ReturnToService=2)
wait_for 30 sh -c "sinfo -h -n n1 -o %T | grep -Eq '^(idle|mixed|allocated)'" ||
	fail "n1 did not come back: $(sinfo -h -n n1 -o '%T %E')"
wait_for 150 queue_empty || fail "batch did not finish after n1 came back"
assert_each_once $N
grep -aq "error.*re-hold failed" "$CTLD_LOG" && fail "a re-hold failed"
note "ok"
