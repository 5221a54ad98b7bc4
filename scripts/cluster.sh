#!/bin/sh
# cluster.sh - a whole Slurm cluster on one machine, for tests, the demo and
# benchmarks: its own munged, one slurmctld and N slurmd (multiple-slurmd,
# NodeAddr=127.0.0.1, distinct ports), each node with fake GPUs (character
# devices cloned from /dev/null), select/cons_tres, fast scheduler settings,
# all state, logs and sockets inside one instance folder. Nothing under
# /etc/slurm is read or written: clients use the instance's SLURM_CONF, which
# `start` writes to $SATURN_CLUSTER_DIR/env (". $SATURN_CLUSTER_DIR/env").
#
# usage: cluster.sh start|stop|status|wait-idle|restart-ctld
#
# Environment (defaults in brackets):
#   SATURN_CLUSTER_DIR    instance folder [/tmp/saturn-cluster]
#   SATURN_PORT_BASE      slurmctld port; slurmd ports follow it [16800]
#   SATURN_NODES          number of nodes n1..nN [2]
#   SATURN_GPUS_PER_NODE  fake GPUs per node [8]
#   SATURN_CPUS_PER_NODE  CPUs each node claims [2 per GPU, at least 2]
#   SATURN_SCHED          saturn (sched/saturn) or backfill (stock) [saturn]
#   SATURN_PLUGIN_DIR     build folder holding our plugin .so files; put before
#                         Debian's PluginDir [unset: Debian's only]
#   SATURN_SCHED_PARAMS   extra SchedulerParameters, comma-separated [none]
#   SATURN_AUTH           munge or none (auth/none: tests only) [munge]
#   SATURN_DEBUG          SlurmctldDebug/SlurmdDebug level [info]
#   SATURN_SLURMD_DEBUG   SlurmdDebug level alone (e.g. error: hundreds of
#                         slurmd logging at debug cost disk and CPU)
#                         [SATURN_DEBUG]
#   SATURN_DEBUG_FLAGS    DebugFlags= (e.g. Backfill: sched/backfill logs
#                         each cycle's time) [none]
#   SATURN_MAX_JOBS       MaxJobCount= (jobs slurmctld keeps, every array
#                         task counted; Slurm's default 10000 is too few
#                         for 10,000 held tasks beside other jobs) [Slurm's]
#   SATURN_SLURMD_WAVE    start slurmd in waves of this many, each wave
#                         registered (idle) before the next starts, so
#                         hundreds of nodes do not register all at once
#                         on a small machine [0: all at once]
#   SATURN_CRED_EXPIRE    AuthInfo=cred_expire=N: seconds a requeued batch job
#                         waits before it may start again (5 or more) [Slurm's, 120]
#   SATURN_REQUEUE_EXIT   RequeueExit=CODES: exit codes that requeue a batch
#                         job (75: saturn-run after a checkpoint) [none]
#   SATURN_TIMEOUT        seconds to wait in start/stop/wait-idle [60]
#   SATURN_SLURM_BIN      folder of the Slurm daemons [/usr/sbin]
#   SATURN_SLURM_PLUGINS  folder of Slurm's own plugins [the first of
#                         LIBDIR/slurm-wlm (Debian) and LIBDIR/slurm (built
#                         from source) that holds sched_backfill.so]
# Another Slurm release than the host's: run this script inside its root,
# scripts/slurm-root.sh VERSION run scripts/cluster.sh start
#   SATURN_PARTITIONS     partitions, space-separated NAME:NODES (Slurm node
#                         lists, e.g. "a:n1 b:n[2-3]"); the first is the
#                         default [one partition gpu with all nodes]
#   SATURN_GPU_CLASSES    typed fake GPUs in node classes, space-separated
#                         TYPE:LINK:COUNT (LINK nvlink or pcie), e.g.
#                         "a100:pcie:2 h100:nvlink:2": n1-n2 get
#                         Gres=gpu:a100:GPUS, Feature=a100,pcie and gres.conf
#                         Links= of no NVLink, n3-n4 gpu:h100 linked in
#                         pairs (Links=...,2,...), each node's own lines
#                         also in etc/gres-nodes/nK.conf (a profiler's
#                         --gres-conf); replaces SATURN_NODES
#                         [unset: untyped GPUs, no features, no Links=]
#   SATURN_PRIORITY       basic or multifactor: PriorityType=priority/NAME;
#                         multifactor weighs age and job size, and with
#                         SATURN_ACCOUNTING=1 fair share (Fair Tree,
#                         PriorityWeightFairshare=100000, recomputed each
#                         minute) [basic]
#   SATURN_ACCOUNTING     1: job accounting (sacct, sacctmgr): a private
#                         MariaDB and a slurmdbd, see ACCOUNTING below [0]
#   SATURN_ACCOUNTING_USERS  users added to account "saturn" with sacctmgr
#                         (those that exist here) [root saturnuser]
#   SATURN_ACCOUNTING_ENFORCE  AccountingStorageEnforce (e.g.
#                         associations,limits,qos) [none]
#   SATURN_DBD_PORT       slurmdbd's port [SATURN_PORT_BASE + 8]
#   SATURN_DB_PORT        MariaDB's port, on 127.0.0.1 [SATURN_PORT_BASE + 9]
#   SATURN_DB_TIMEOUT     seconds to wait for MariaDB and slurmdbd [180]
#
# SITE SCALE (tests/bench/site-bench.sh, doc/benchmarks-site.md): 64-256
# nodes x 8 fake GPUs, e.g. SATURN_GPU_CLASSES="a100:pcie:24 h100:nvlink:24
# l40:pcie:16" SATURN_PARTITIONS="gpu:n[1-64] a100:n[1-24] h100:n[25-48]"
# SATURN_SLURMD_DEBUG=error SATURN_SLURMD_WAVE=32 SATURN_MAX_JOBS=30000;
# slurmd ports PORT+1..PORT+NODES. Memory (RSS, Slurm 22.05.8): slurmd
# 6.3 MB, idle slurmctld 9-19 MB plus ~30 KB a job it keeps (MinJobAge=600),
# a running task 7.2 MB (slurmstepd 5.7, its shell and sleep 1.5), so
#     RSS ~ 19 MB + NODES x 6.3 MB + JOBS x 30 KB + RUNNING x 7.2 MB:
# 256 nodes and 10,000 jobs ~1.9 GB; within 12 GiB of the 24 GiB machine
# (12288 - 1900) / 7.2 ~ 1,440 tasks at once, so not 2,048 one-GPU tasks
# (14.7 GB) but a mix of 2 GPUs a task or more. RSS counts shared pages in
# every process; PSS is lower (1.4 GB for 128 nodes and ~750 tasks, 2-2.7 MB
# a task). The CPU limits first: ~12 task launches a second fill 2 cores.
#
# ACCOUNTING (SATURN_ACCOUNTING=1): scripts/cluster-acct.sh, sourced by this
# script, says how the private MariaDB and slurmdbd run.
# Our plugins are used when found in the PluginDir list: spank_saturn.so
# (plugstack.conf), job_submit_saturn.so (JobSubmitPlugins=saturn) and, with
# SATURN_SCHED=saturn, sched_saturn.so (required).
set -eu

D=${SATURN_CLUSTER_DIR:-/tmp/saturn-cluster}
PORT=${SATURN_PORT_BASE:-16800}
NODES=${SATURN_NODES:-2}
GPUS=${SATURN_GPUS_PER_NODE:-8}
SCHED=${SATURN_SCHED:-saturn}
AUTH=${SATURN_AUTH:-munge}
DEBUG=${SATURN_DEBUG:-info}
SLURMD_DEBUG=${SATURN_SLURMD_DEBUG:-$DEBUG}
DEBUG_FLAGS=${SATURN_DEBUG_FLAGS:-}
MAX_JOBS=${SATURN_MAX_JOBS:-}
WAVE=${SATURN_SLURMD_WAVE:-0}
TIMEOUT=${SATURN_TIMEOUT:-60}
SBIN=${SATURN_SLURM_BIN:-/usr/sbin}
ACCT=${SATURN_ACCOUNTING:-0}
# shellcheck disable=SC2034 # used by cluster-acct.sh
DB_TIMEOUT=${SATURN_DB_TIMEOUT:-180}
CLASSES=${SATURN_GPU_CLASSES:-}
if [ -n "$CLASSES" ]; then
	NODES=0
	for spec in $CLASSES; do
		case "$spec" in
		*[!A-Za-z0-9_.:-]* | *:*:*:* | :* | *::*) echo "cluster.sh: error: SATURN_GPU_CLASSES: '$spec' is not TYPE:LINK:COUNT" >&2; exit 1 ;;
		*:nvlink:[1-9]* | *:pcie:[1-9]*) ;;
		*) echo "cluster.sh: error: SATURN_GPU_CLASSES: '$spec' is not TYPE:LINK:COUNT (LINK nvlink or pcie)" >&2; exit 1 ;;
		esac
		cnt=${spec##*:}
		case "$cnt" in *[!0-9]*) echo "cluster.sh: error: SATURN_GPU_CLASSES: '$spec': COUNT must be a number" >&2; exit 1 ;; esac
		NODES=$((NODES + cnt))
	done
fi
if [ -n "${SATURN_CPUS_PER_NODE:-}" ]; then
	CPUS=$SATURN_CPUS_PER_NODE
else
	CPUS=$((GPUS * 2))
	[ "$CPUS" -ge 2 ] || CPUS=2
fi

ME=cluster.sh
die() {
	echo "$ME: error: $*" >&2
	exit 1
}
note() {
	echo "$ME: $*" >&2
}

case "$D" in
/*) ;;
*) D="$(pwd)/$D" ;;
esac
CONF="$D/etc/slurm.conf"
# accounting: acct_settings, acct_conf, start_db, start_dbd
# shellcheck source=scripts/cluster-acct.sh
. "$(dirname "$0")/cluster-acct.sh"

# processes: is_int, pid_of, alive, instance_pids, job_pids, stop_pids,
# pids_of_files
# shellcheck source=scripts/cluster-procs.sh
. "$(dirname "$0")/cluster-procs.sh"

# The build's plugins are copied into the instance (mode 755/644): the
# build folder may sit where the cluster's users cannot read it (a checkout
# under /root), and sbatch loads the SPANK plugin as the submitting user.
stage_plugins() {
	[ -n "${SATURN_PLUGIN_DIR:-}" ] || return 0
	[ "$SATURN_PLUGIN_DIR" = "$D/plugins" ] && return 0
	rm -rf "$D/plugins"
	mkdir -p "$D/plugins"
	for f in "$SATURN_PLUGIN_DIR"/*.so; do
		[ -f "$f" ] && cp "$f" "$D/plugins/"
	done
	chmod 755 "$D/plugins"
	chmod 644 "$D/plugins"/*.so 2>/dev/null
	SATURN_PLUGIN_DIR="$D/plugins"
}

plugin_dirs() {
	echo "${SATURN_PLUGIN_DIR:+$SATURN_PLUGIN_DIR:}$DEBIAN_PLUGIN_DIR"
}

# Is plugin file $1 in the PluginDir list?
find_plugin() {
	old_ifs=$IFS
	IFS=:
	for d in $(plugin_dirs); do
		if [ -f "$d/$1" ]; then
			IFS=$old_ifs
			echo "$d/$1"
			return 0
		fi
	done
	IFS=$old_ifs
	return 1
}

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
# Slurm's own plugins: Debian's folder (slurm-wlm), or where a Slurm built
# from source installs them (LIBDIR/slurm), or SATURN_SLURM_PLUGINS.
DEBIAN_PLUGIN_DIR=${SATURN_SLURM_PLUGINS:-}
if [ -z "$DEBIAN_PLUGIN_DIR" ]; then
	for d in /usr/lib/$multiarch/slurm-wlm /usr/lib/$multiarch/slurm /usr/lib/slurm /usr/local/lib/slurm; do
		if [ -f "$d/sched_backfill.so" ]; then
			DEBIAN_PLUGIN_DIR=$d
			break
		fi
	done
	: "${DEBIAN_PLUGIN_DIR:=/usr/lib/$multiarch/slurm-wlm}"
fi

# Slurm client commands against this instance.
sq() {
	SLURM_CONF="$CONF" "$@"
}

ctld_up() {
	sq scontrol ping 2>/dev/null | grep -q 'is UP'
}

# Wait (bounded) until all nodes are idle; 0 when they are.
wait_nodes_idle() {
	n=0
	while [ $n -lt $((TIMEOUT * 5)) ]; do
		st=$(sq sinfo -h -N -o '%T' 2>/dev/null | sort -u | tr '\n' ' ')
		[ "$st" = "idle " ] && return 0
		[ $((n % 10)) = 9 ] && revive_slurmd "$NODES"
		sleep 0.2
		n=$((n + 1))
	done
	note "nodes not idle after ${TIMEOUT}s: $st"
	return 1
}

# Start the slurmd of node n$1 (pid in run/slurmd-nN.started.pid).
start_slurmd() {
	setsid "$SBIN/slurmd" -D -N "n$1" >>"$D/log/slurmd-n$1.out" 2>&1 </dev/null &
	echo $! >"$D/run/slurmd-n$1.started.pid"
}

# Start again each slurmd of n1..n$1 that exited because its port was taken
# (ports in Linux's ephemeral range, 32768-60999, may be held a moment by
# an outgoing connection), every 2 s, at most 30 times each.
revive_slurmd() {
	k=1
	while [ $k -le "$1" ]; do
		if ! alive "$(pid_of "$D/run/slurmd-n$k.started.pid")" &&
			grep -q 'Address already in use' "$D/log/slurmd-n$k.out" 2>/dev/null &&
			[ "$(grep -c '^cluster.sh: port taken' "$D/log/slurmd-n$k.out")" -lt 30 ]; then
			echo "cluster.sh: port taken: slurmd started again" >>"$D/log/slurmd-n$k.out"
			[ "$(grep -c "^cluster.sh: port taken" "$D/log/slurmd-n$k.out")" -gt 1 ] ||
				note "n$k: slurmd's port $((PORT + k)) is taken: starting it again every 2 s"
			start_slurmd $k
		fi
		k=$((k + 1))
	done
}

# Number of idle nodes.
nodes_idle() {
	sq sinfo -h -N -o '%T' 2>/dev/null | grep -c '^idle$' || true
}

# Wait (bounded) until at least $1 nodes are idle (registered); 0 when they are.
wait_nodes_registered() {
	n=0
	while [ $n -lt $((TIMEOUT * 5)) ]; do
		[ "$(nodes_idle)" -ge "$1" ] && return 0
		[ $((n % 10)) = 9 ] && revive_slurmd "$1"
		sleep 0.2
		n=$((n + 1))
	done
	return 1
}

# Wait (bounded) until the queue is empty (no pending/running/completing job).
wait_queue_empty() {
	n=0
	while [ $n -lt $(($1 * 5)) ]; do
		left=$(sq squeue -h -t PD,R,CG,S,CF,RQ,SE,RS,ST -o '%i' 2>/dev/null | wc -l) || left=1
		[ "$left" = 0 ] && return 0
		sleep 0.2
		n=$((n + 1))
	done
	return 1
}

# SATURN_GPU_CLASSES: the NodeName lines (class_nodes) and the gres.conf
# lines (class_gres) of the typed classes, nodes numbered in order.
gpu_class_conf() {
	class_nodes=
	class_gres=
	k=1
	for spec in $CLASSES; do
		type=${spec%%:*}
		rest=${spec#*:}
		link=${rest%%:*}
		cnt=${rest#*:}
		a=$k
		b=$((k + cnt - 1))
		if [ "$a" = "$b" ]; then
			nl=n$a
			pl=$((PORT + a))
		else
			nl="n[$a-$b]"
			pl="[$((PORT + a))-$((PORT + b))]"
		fi
		class_nodes="${class_nodes}NodeName=$nl NodeAddr=127.0.0.1 Port=$pl CPUs=$CPUS Gres=gpu:$type:$GPUS Feature=$type,$link State=UNKNOWN
"
		# one line per GPU: Links= counts to every GPU (-1 itself); NVLink
		# nodes link GPUs in pairs (0-1, 2-3, ...) with 2 links, PCIe ones
		# have none
		g=0
		while [ $g -lt "$GPUS" ]; do
			links=
			h=0
			while [ $h -lt "$GPUS" ]; do
				if [ $h = $g ]; then
					l=-1
				elif [ "$link" = nvlink ] && [ $((h / 2)) = $((g / 2)) ]; then
					l=2
				else
					l=0
				fi
				links="$links${links:+,}$l"
				h=$((h + 1))
			done
			class_gres="${class_gres}NodeName=$nl Name=gpu Type=$type File=$D/dev/nvidia$g Links=$links
"
			# each node's own lines: its recorded topology, for a
			# profiler on it (saturn-profile --gres-conf FILE)
			n=$a
			while [ $n -le $b ]; do
				echo "NodeName=n$n Name=gpu Type=$type File=$D/dev/nvidia$g Links=$links" >>"$D/etc/gres-nodes/n$n.conf"
				n=$((n + 1))
			done
			g=$((g + 1))
		done
		k=$((b + 1))
	done
}

write_conf() {
	is_int "$PORT" && is_int "$NODES" && is_int "$GPUS" && is_int "$CPUS" ||
		die "SATURN_PORT_BASE, SATURN_NODES, SATURN_GPUS_PER_NODE and SATURN_CPUS_PER_NODE must be integers"
	[ "$NODES" -ge 1 ] || die "SATURN_NODES must be at least 1"
	is_int "$WAVE" || die "SATURN_SLURMD_WAVE must be a number of slurmd (0: all at once), not '$WAVE'"
	[ -z "$MAX_JOBS" ] || { is_int "$MAX_JOBS" && [ "$MAX_JOBS" -ge 1 ]; } ||
		die "SATURN_MAX_JOBS must be a positive number of jobs, not '$MAX_JOBS'"
	case "$DEBUG_FLAGS" in
	*[!A-Za-z0-9_,]*) die "SATURN_DEBUG_FLAGS must be a comma-separated list of DebugFlags (e.g. Backfill), not '$DEBUG_FLAGS'" ;;
	esac
	case "$SLURMD_DEBUG" in
	*[!a-z0-9]* | '') die "SATURN_SLURMD_DEBUG must be a Slurm debug level (e.g. error, info, debug), not '$SLURMD_DEBUG'" ;;
	esac
	extra_conf=
	[ -z "$DEBUG_FLAGS" ] || extra_conf="DebugFlags=$DEBUG_FLAGS"
	[ -z "$MAX_JOBS" ] || extra_conf="$extra_conf${extra_conf:+
}MaxJobCount=$MAX_JOBS"
	acct_settings
	first=$((PORT + 1))
	last=$((PORT + NODES))
	if [ "$NODES" = 1 ]; then
		nodes=n1
		ports=$first
	else
		nodes="n[1-$NODES]"
		ports="[$first-$last]"
	fi

	case "$SCHED" in
	saturn)
		find_plugin sched_saturn.so >/dev/null ||
			die "SATURN_SCHED=saturn but sched_saturn.so is not in PluginDir $(plugin_dirs) (set SATURN_PLUGIN_DIR to the build's plugin/slurm folder, or SATURN_SCHED=backfill)"
		schedtype=sched/saturn
		;;
	backfill) schedtype=sched/backfill ;;
	*) die "SATURN_SCHED must be saturn or backfill, not '$SCHED'" ;;
	esac

	params="batch_sched_delay=0,sched_interval=2,sched_min_interval=100000,bf_interval=1,bf_resolution=1,bf_continue,default_queue_depth=1000"
	[ -n "${SATURN_SCHED_PARAMS:-}" ] && params="$params,$SATURN_SCHED_PARAMS"

	case "$AUTH" in
	munge)
		auth="AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.socket.2
CredType=cred/munge"
		;;
	none)
		auth="AuthType=auth/none
CredType=cred/none"
		;;
	*) die "SATURN_AUTH must be munge or none" ;;
	esac
	if [ -n "${SATURN_CRED_EXPIRE:-}" ]; then
		case "$SATURN_CRED_EXPIRE" in
		'' | *[!0-9]*) die "SATURN_CRED_EXPIRE must be a number of seconds" ;;
		esac
		if [ "$AUTH" = munge ]; then
			auth=$(printf '%s\n' "$auth" | sed "s|^AuthInfo=.*|&,cred_expire=$SATURN_CRED_EXPIRE|")
		else
			auth="$auth
AuthInfo=cred_expire=$SATURN_CRED_EXPIRE"
		fi
	fi

	requeue_exit=
	if [ -n "${SATURN_REQUEUE_EXIT:-}" ]; then
		case "$SATURN_REQUEUE_EXIT" in
		*[!0-9,-]*) die "SATURN_REQUEUE_EXIT must be exit codes (e.g. 75 or 75,76)" ;;
		esac
		requeue_exit="RequeueExit=$SATURN_REQUEUE_EXIT"
	fi

	partitions="PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
	if [ -n "${SATURN_PARTITIONS:-}" ]; then
		partitions=
		set -f
		for spec in $SATURN_PARTITIONS; do
			pname=${spec%%:*}
			pnodes=${spec#*:}
			case "$spec" in
			*:*) ;;
			*) pname= ;;
			esac
			case "$pname:$pnodes" in
			:* | *: | *[!A-Za-z0-9_-]*:* | *:*[=:]*)
				die "SATURN_PARTITIONS: '$spec' is not NAME:NODES (e.g. a:n1 b:n[2-3])"
				;;
			esac
			if [ -z "$partitions" ]; then
				partitions="PartitionName=$pname Nodes=$pnodes Default=YES MaxTime=INFINITE State=UP"
			else
				partitions="$partitions
PartitionName=$pname Nodes=$pnodes MaxTime=INFINITE State=UP"
			fi
		done
		set +f
	fi

	case ${SATURN_PRIORITY:-basic} in
	basic) priority="PriorityType=priority/basic" ;;
	multifactor)
		# Age grows to its full weight in 1 minute and small jobs are
		# favoured, so a compressed run sees both factors; the fair-share
		# factor needs accounting (slurmdbd), which this cluster lacks.
		priority="PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityMaxAge=00:01:00
PriorityWeightJobSize=1000
PriorityFavorSmall=YES"
		# with accounting: fair share too, its factor recomputed each
		# minute (Slurm's shortest PriorityCalcPeriod)
		if [ "$ACCT" = 1 ]; then
			priority="$priority
PriorityWeightFairshare=100000
PriorityCalcPeriod=1"
		fi
		;;
	*) die "SATURN_PRIORITY must be basic or multifactor" ;;
	esac
	jobsubmit=
	if find_plugin job_submit_saturn.so >/dev/null; then
		jobsubmit="JobSubmitPlugins=saturn"
	fi
	spank=$(find_plugin spank_saturn.so || true)

	node_lines="NodeName=$nodes NodeAddr=127.0.0.1 Port=$ports CPUs=$CPUS Gres=gpu:$GPUS State=UNKNOWN"
	if [ -n "$CLASSES" ]; then
		rm -rf "$D/etc/gres-nodes"
		mkdir -p "$D/etc/gres-nodes"
		gpu_class_conf
		node_lines=$class_nodes
	fi

	cat >"$D/etc/slurm.conf" <<EOF
# Generated by saturn-slurm scripts/cluster.sh for instance $D
ClusterName=saturn
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$first
SlurmUser=root
SlurmdUser=root
$auth
PluginDir=$(plugin_dirs)
PlugStackConfig=$D/etc/plugstack.conf
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd-%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd-%n.log
SlurmctldDebug=$DEBUG
SlurmdDebug=$SLURMD_DEBUG
$extra_conf
SchedulerType=$schedtype
SchedulerParameters=$params
$priority
$jobsubmit
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
$(acct_conf)
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=600
KillWait=2
$requeue_exit
InactiveLimit=0
Waittime=0
MessageTimeout=10
$node_lines
$partitions
EOF

	{
		echo "# Generated by saturn-slurm scripts/cluster.sh (fake GPUs: /dev/null clones)"
		echo "AutoDetect=off"
		if [ -n "$CLASSES" ]; then
			printf '%s' "$class_gres"
		elif [ "$GPUS" -gt 0 ]; then
			last_gpu=$((GPUS - 1))
			if [ "$GPUS" = 1 ]; then
				echo "NodeName=$nodes Name=gpu File=$D/dev/nvidia0"
			else
				echo "NodeName=$nodes Name=gpu File=$D/dev/nvidia[0-$last_gpu]"
			fi
		fi
	} >"$D/etc/gres.conf"

	{
		echo "# Generated by saturn-slurm scripts/cluster.sh"
		[ -n "$spank" ] && echo "required $spank"
	} >"$D/etc/plugstack.conf"
	return 0
}

start_munged() {
	[ "$AUTH" = munge ] || return 0
	chmod 711 "$D/munge"
	[ -f "$D/munge/munge.key" ] || mungekey -c -k "$D/munge/munge.key" >/dev/null 2>&1 ||
		die "mungekey failed"
	chmod 600 "$D/munge/munge.key"
	rm -f "$D/munge/munge.socket.2" "$D/munge/munge.socket.2.lock"
	munged --socket="$D/munge/munge.socket.2" --key-file="$D/munge/munge.key" \
		--log-file="$D/log/munged.log" --pid-file="$D/run/munged.pid" \
		--seed-file="$D/munge/munged.seed" --num-threads=2 >"$D/log/munged.out" 2>&1 ||
		die "munged did not start (see $D/log/munged.log)"
	n=0
	while [ ! -S "$D/munge/munge.socket.2" ] && [ $n -lt 50 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	[ -S "$D/munge/munge.socket.2" ] || die "munged socket did not appear (see $D/log/munged.log)"
}

start() {
	[ "$(id -u)" = 0 ] || die "start needs root (slurmd runs jobs as their users)"
	for b in slurmctld slurmd; do
		[ -x "$SBIN/$b" ] || die "$SBIN/$b not found (apt-get install slurmctld slurmd slurm-client munge)"
	done
	for f in "$D"/run/*.pid; do
		[ -f "$f" ] || continue
		p=$(pid_of "$f")
		if alive "$p"; then
			die "instance $D is already running (pid $p from $f); run: $0 stop"
		fi
	done
	mkdir -p "$D"
	chmod 755 "$D"
	mkdir -p "$D/etc" "$D/state" "$D/spool" "$D/log" "$D/run" "$D/munge" "$D/dev"
	stage_plugins
	rm -f "$D"/run/*.pid
	# A fresh cluster each start: no jobs, node state or logs from a
	# previous run.
	rm -rf "$D/state" "$D/spool"
	rm -f "$D"/log/*
	mkdir -p "$D/state" "$D/spool"
	i=0
	while [ $i -lt "$GPUS" ]; do
		[ -c "$D/dev/nvidia$i" ] || mknod -m 666 "$D/dev/nvidia$i" c 1 3 ||
			die "mknod $D/dev/nvidia$i failed"
		i=$((i + 1))
	done
	write_conf
	printf 'SLURM_CONF=%s\nexport SLURM_CONF\n' "$CONF" >"$D/env"

	start_munged

	export SLURM_CONF="$CONF"
	if [ "$ACCT" = 1 ]; then
		start_db
		start_dbd
	fi
	setsid "$SBIN/slurmctld" -D -i >"$D/log/slurmctld.out" 2>&1 </dev/null &
	echo $! >"$D/run/slurmctld.started.pid"
	n=0
	until ctld_up; do
		alive "$(pid_of "$D/run/slurmctld.started.pid")" || {
			tail -n 20 "$D/log/slurmctld.log" "$D/log/slurmctld.out" >&2 2>/dev/null || true
			die "slurmctld exited at startup (see $D/log/slurmctld.log)"
		}
		[ $n -lt $((TIMEOUT * 10)) ] || die "slurmctld does not answer after ${TIMEOUT}s (see $D/log/slurmctld.log)"
		sleep 0.1
		n=$((n + 1))
	done
	i=1
	while [ $i -le "$NODES" ]; do
		mkdir -p "$D/spool/n$i"
		: >"$D/log/slurmd-n$i.out"
		start_slurmd $i
		# SATURN_SLURMD_WAVE: this wave registered before the next
		if [ "$WAVE" -gt 0 ] && [ $((i % WAVE)) = 0 ] && [ $i -lt "$NODES" ]; then
			wait_nodes_registered "$i" || die "only $(nodes_idle) of the first $i nodes registered after ${TIMEOUT}s (see $D/log/)"
		fi
		i=$((i + 1))
	done
	wait_nodes_idle || {
		tail -n 20 "$D"/log/slurmd-n1.log >&2 2>/dev/null || true
		die "nodes did not become idle (see $D/log/)"
	}
	acct_note=
	[ "$ACCT" = 1 ] && acct_note=", accounting (slurmdbd $DBD_PORT, MariaDB $DB_PORT)"
	note "up: $NODES nodes x $GPUS GPUs, $SCHED, port $PORT$acct_note, instance $D (. $D/env)"
}

stop() {
	if [ -f "$CONF" ]; then
		if ctld_up; then
			# Cancel every job and wait for an empty queue first:
			# slurmstepd outlives slurmd otherwise.
			ids=$(sq squeue -h -o '%A' 2>/dev/null || true)
			if [ -n "$ids" ]; then
				# shellcheck disable=SC2086
				sq scancel $ids 2>/dev/null || true
				wait_queue_empty "$TIMEOUT" || note "jobs still in the queue after ${TIMEOUT}s; stopping anyway"
			fi
		fi
	fi
	# the jobs' own processes (what scancel could not end)
	# shellcheck disable=SC2046
	stop_pids 5 $(job_pids)
	# slurmd before slurmctld, then munged; by pid.
	# shellcheck disable=SC2046
	stop_pids 10 $(pids_of_files "$D"/run/slurmd-*.pid)
	# shellcheck disable=SC2046
	stop_pids 20 $(pids_of_files "$D"/run/slurmctld*.pid)
	# Accounting: slurmdbd once slurmctld has handed it its records, then
	# MariaDB (an InnoDB shutdown may take a while on a loaded machine).
	# shellcheck disable=SC2046
	stop_pids 20 $(pids_of_files "$D"/run/slurmdbd*.pid)
	# shellcheck disable=SC2046
	stop_pids 60 $(pids_of_files "$D"/run/mariadbd*.pid)
	# Anything left (slurmstepd of a job that would not die, slurmscriptd).
	# shellcheck disable=SC2046
	stop_pids 5 $(instance_pids | grep -vx "$(pid_of "$D/run/munged.pid")" || true)
	stop_pids 5 $(pid_of "$D/run/munged.pid")
	rm -f "$D"/run/*.pid
	left=$(instance_pids)
	[ -z "$left" ] || die "processes of $D still alive: $left"
	note "stopped $D"
}

status() {
	[ -f "$CONF" ] || {
		echo "no instance in $D"
		return 1
	}
	up=0
	for f in "$D"/run/*.pid; do
		[ -f "$f" ] || continue
		case "$f" in
		*.started.pid) continue ;;
		esac
		p=$(pid_of "$f")
		name=$(basename "$f" .pid)
		if alive "$p"; then
			echo "$name: running (pid $p)"
		else
			echo "$name: not running"
		fi
	done
	if ctld_up; then
		sq sinfo -N -o '%N %T %G' || true
		sq squeue || true
		return 0
	fi
	echo "slurmctld: not answering"
	return 1
}

# Wait until no job is queued or running and all nodes are idle.
wait_idle() {
	[ -f "$CONF" ] || die "no instance in $D"
	ctld_up || die "slurmctld of $D is not answering"
	wait_queue_empty "$TIMEOUT" || die "queue not empty after ${TIMEOUT}s"
	wait_nodes_idle || die "nodes not idle after ${TIMEOUT}s"
}

# Restart slurmctld only (keeps its state; tests of restart mid-batch).
restart_ctld() {
	[ -f "$CONF" ] || die "no instance in $D"
	# shellcheck disable=SC2046
	stop_pids 20 $(pids_of_files "$D"/run/slurmctld*.pid)
	rm -f "$D"/run/slurmctld*.pid
	export SLURM_CONF="$CONF"
	setsid "$SBIN/slurmctld" -D >>"$D/log/slurmctld.out" 2>&1 </dev/null &
	echo $! >"$D/run/slurmctld.started.pid"
	n=0
	until ctld_up; do
		alive "$(pid_of "$D/run/slurmctld.started.pid")" || die "slurmctld exited at restart (see $D/log/slurmctld.log)"
		[ $n -lt $((TIMEOUT * 10)) ] || die "slurmctld does not answer after ${TIMEOUT}s"
		sleep 0.1
		n=$((n + 1))
	done
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
wait-idle) wait_idle ;;
restart-ctld) restart_ctld ;;
*)
	echo "usage: $0 start|stop|status|wait-idle|restart-ctld" >&2
	exit 2
	;;
esac
