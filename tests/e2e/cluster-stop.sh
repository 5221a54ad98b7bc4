#!/bin/sh
# cluster-stop.sh - scripts/cluster.sh stop, with a running job, a job
# step (srun) and held Saturn jobs in the queue, leaves no process of the
# instance behind: no daemon from its pid files, no process (slurmstepd, the
# job's own) carrying its SLURM_CONF, and munged gone.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
e2e_setup 4

# Every live process whose environment names this instance's slurm.conf
# (run with SLURM_CONF unset so that grep and sed do not count).
instance_procs() {
	(
		unset SLURM_CONF
		grep -slzxF "SLURM_CONF=$CONF_PATH" /proc/[0-9]*/environ 2>/dev/null |
			sed 's,^/proc/\([0-9]*\)/environ$,\1,'
	) | while read -r p; do
		[ -r "/proc/$p/comm" ] && echo "$p"
	done
}
CONF_PATH=$SLURM_CONF

run=$(e2e_sbatch_user --gres=gpu:2 -o run.out --wrap 'srun sleep 300') || fail "job refused"
held=$(e2e_sbatch_user --saturn-batch=stopme --array=0-3 --gres=gpu:1 --wrap true) || fail "tagged job refused"
wait_for 15 job_state_is "$run" RUNNING || fail "job $run not running: $(job_state "$run")"
wait_for 10 sh -c "pgrep -u '$E2E_USER' -x sleep >/dev/null" || fail "the job's sleep did not start"
[ -n "$(instance_procs)" ] || fail "no process of the instance found while running (test is blind)"
pids=$(cat "$SATURN_CLUSTER_DIR"/run/*.pid | sort -u)
munged=$(cat "$SATURN_CLUSTER_DIR/run/munged.pid" 2>/dev/null || true)

sh "$CLUSTER" stop >"$E2E_DIR/stop.log" 2>&1 || fail "stop failed: $(cat "$E2E_DIR/stop.log")"

for p in $pids $munged; do
	kill -0 "$p" 2>/dev/null && fail "pid $p ($(cat /proc/$p/comm 2>/dev/null)) still alive after stop"
done
left=$(instance_procs)
[ -z "$left" ] || fail "processes left: $(for p in $left; do printf '%s(%s) ' "$p" "$(cat /proc/$p/comm 2>/dev/null)"; done)"
# (the user's sleep carried SLURM_CONF too: covered above)
ls "$SATURN_CLUSTER_DIR"/run/*.pid >/dev/null 2>&1 && fail "pid files left in run/"
scontrol ping >/dev/null 2>&1 && fail "slurmctld still answers"
note "stop left no process (daemons, slurmstepd, job processes, munged)"
