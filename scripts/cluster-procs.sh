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

# Every process of this instance: the pids we recorded and any process whose
# environment names this instance's slurm.conf (slurmd children: slurmstepd,
# slurmscriptd). Matched by pid, never by process name.
instance_pids() {
	for f in "$D"/run/*.pid; do
		[ -f "$f" ] || continue
		p=$(pid_of "$f")
		alive "$p" && echo "$p"
	done
	for e in $(grep -slzxF "SLURM_CONF=$CONF" /proc/[0-9]*/environ 2>/dev/null || true); do
		p=${e#/proc/}
		p=${p%/environ}
		# Only daemons of ours: slurmctld, slurmd (and slurmdbd), slurmstepd,
		# slurmscriptd, mariadbd (their comm), not a user's shell that sourced
		# the env file.
		c=$(cat "/proc/$p/comm" 2>/dev/null || true)
		case "$c" in
		slurmctld* | slurmd* | slurmstepd* | slurmscriptd* | mariadbd*) echo "$p" ;;
		esac
	done
	return 0
}

# The processes of this instance's jobs (a batch script and its children:
# SLURM_CONF of this instance and a SLURM_JOB_ID in their environment).
# With slurmctld down, stop cannot cancel them, and once their slurmstepd
# is killed they would run on, orphaned, and write into a later run's files.
job_pids() {
	for e in $(grep -slzxF "SLURM_CONF=$CONF" /proc/[0-9]*/environ 2>/dev/null || true); do
		grep -qz '^SLURM_JOB_ID=' "$e" 2>/dev/null || continue
		p=${e#/proc/}
		p=${p%/environ}
		[ "$p" != $$ ] && echo "$p"
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
