#!/bin/sh
# cluster-procs.sh - the processes of a scripts/cluster.sh instance (sourced
# by it, not run): pid files, the instance's daemons and its jobs' own
# processes, found by pid or by the SLURM_CONF in their environment, never
# by process name alone, and stopped TERM first, then KILL.

is_int() {
	case "$1" in
	'' | *[!0-9]*) return 1 ;;
	esac
	return 0
}

# Pid from a pid file, or nothing.
pid_of() {
	[ -f "$1" ] || return 0
	p=$(cat "$1" 2>/dev/null || true)
	is_int "$p" && echo "$p"
	return 0
}

alive() {
	[ -n "$1" ] && kill -0 "$1" 2>/dev/null
}

# Every process whose environment names this instance's slurm.conf, one
# line each, classified once: "PID JOB DAEMON", JOB 1 when its environment
# also holds a SLURM_JOB_ID (a job's batch script and its children), DAEMON
# 1 when its comm is one of our daemons: slurmctld, slurmd (and slurmdbd),
# slurmstepd, slurmscriptd, mariadbd (not a user's shell that sourced the
# env file). The one /proc scan instance_pids and job_pids both use.
conf_pids() {
	envs=$(grep -slzxF "SLURM_CONF=$CONF" /proc/[0-9]*/environ 2>/dev/null || true)
	[ -n "$envs" ] || return 0
	# shellcheck disable=SC2086
	jobs=$(grep -slz '^SLURM_JOB_ID=' $envs 2>/dev/null || true)
	for e in $envs; do
		p=${e#/proc/}
		p=${p%/environ}
		job=0
		case "
$jobs
" in
		*"
$e
"*) job=1 ;;
		esac
		daemon=0
		c=$(cat "/proc/$p/comm" 2>/dev/null || true)
		case "$c" in
		slurmctld* | slurmd* | slurmstepd* | slurmscriptd* | mariadbd*) daemon=1 ;;
		esac
		echo "$p $job $daemon"
	done
	return 0
}

# Every process of this instance: the pids we recorded and its daemons by
# their environment (conf_pids: slurmd children too, slurmstepd and
# slurmscriptd). Matched by pid, never by process name.
instance_pids() {
	for f in "$D"/run/*.pid; do
		[ -f "$f" ] || continue
		p=$(pid_of "$f")
		alive "$p" && echo "$p"
	done
	# (case, not &&: the loop ends with status 0 under set -e)
	conf_pids | while read -r p job daemon; do
		case "$daemon" in
		1) echo "$p" ;;
		esac
	done
	return 0
}

# The processes of this instance's jobs (a batch script and its children:
# SLURM_CONF of this instance and a SLURM_JOB_ID in their environment,
# conf_pids). With slurmctld down, stop cannot cancel them, and once their
# slurmstepd is killed they would run on, orphaned, and write into a later
# run's files.
job_pids() {
	conf_pids | while read -r p job daemon; do
		case "$job" in
		1) [ "$p" = $$ ] || echo "$p" ;;
		esac
	done
	return 0
}

# Send TERM to the pids "$2...", wait up to $1 seconds for all, then KILL.
stop_pids() {
	secs=$1
	shift
	live=
	for p in "$@"; do
		alive "$p" || continue
		kill -TERM "$p" 2>/dev/null || true
		live="$live $p"
	done
	n=0
	while [ -n "$live" ]; do
		still=
		for p in $live; do
			alive "$p" && still="$still $p"
		done
		live=$still
		[ -n "$live" ] || break
		if [ $n -ge $((secs * 10)) ]; then
			note "pids$live did not stop after ${secs}s: SIGKILL"
			# shellcheck disable=SC2086
			kill -KILL $live 2>/dev/null || true
			sleep 0.2
			break
		fi
		sleep 0.1
		n=$((n + 1))
	done
}

# Pids named by the pid files "$@" (deduplicated).
pids_of_files() {
	for f in "$@"; do
		[ -f "$f" ] && pid_of "$f"
	done | sort -u
}
