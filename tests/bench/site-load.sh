#!/bin/bash
# site-load.sh - replay a site's mix for a set time against a running
# one-machine cluster (scripts/cluster.sh start; sched/saturn or stock
# sched/backfill), measure how slurmctld keeps up, and check that every task
# ran exactly once. Not part of `make check` (tests/e2e/site-load-small.sh
# runs a small version); figures in doc/benchmarks-site.md.
#
# The mix (seeded: the same events under either scheduler):
#   - Saturn batches: arrays of SL_BATCH_MIN..SL_BATCH_MAX tasks (log-uniform
#     sizes) adding up to SL_TASKS, from SL_USERS users (round robin),
#     arriving uniformly over the first 60% of the load; each asks gpu:1, 2
#     or 4 in partition gpu (60%) or another one; 80% come with a profile
#     (single 1 GPU, ddp 2/4/8), so sched/saturn plans their GPU counts.
#     Under sched/backfill the same arrays are submitted without
#     --saturn-batch and run with the GPUs they asked for.
#   - ordinary jobs, SL_JOB_RATE submissions a minute: CPU-only and GPU
#     (gpu:1/2/4/8), single jobs and arrays of 2-8, nice 0, 50 or 500.
#   - scancel of SL_CANCELS held (pending) and as many running Saturn
#     tasks; SL_UPDATES `scontrol update` of a user's own pending job
#     (Nice=100) and as many by the operator (Priority= of an ordinary job).
#   - node events (SL_NODE_EVENTS=1): one node drained at 30% of the load
#     and resumed at 50%, another set DOWN at 40% (its tasks are killed and
#     requeued by Slurm) and resumed at 60%;
#   - one slurmctld restart at 70% (SL_RESTART=1; scripts/cluster.sh
#     restart-ctld).
# Tasks (task.sh) sleep WORK seconds x the speed-up of their GPU count
# (1: 1.00, 2: 0.56, 4: 0.34, 8: 0.30 of it; the demo profile's medium
# model) and log a start and an end line. After SL_DURATION seconds no more
# events; the queue is drained (at most SL_DRAIN_MAX s).
#
# Measured (figures.csv, metric,value; figures.txt the same as a table):
#   sbatch/squeue/scancel/scontrol latency p50/p99/max, timed around the
#   client alone (site-timed.sh; failed calls counted apart), a full squeue
#   as root and a user's own squeue every SL_SAMPLE s; slurmctld RSS, the
#   RSS of all of the instance's processes and the number of slurmstepd
#   over time (rss.csv: PSS and the sum of RSS); state.json and job_state sizes; sdiag (main and
#   backfill cycles, RPC counts and mean times; the sdiag before the restart
#   and at the end of the load added up); sched/saturn's cycle (snapshot +
#   lock wait + plan + apply, from its debug line: needs SlurmctldDebug=debug),
#   its lock holds (read: snapshot; write: apply, re-hold, plan records),
#   solve times and plan gaps; ordinary jobs' waits (start - submission);
#   the Saturn makespan; exactly once: per task, ends == 1 unless cancelled
#   (lost: 0 ends; twice: 2 or more), starts beyond one (requeued after the
#   node was set DOWN) counted apart. Exit 0 when no task was lost or ran
#   twice, 1 otherwise, 2 on a usage error.
#
# usage (root): SATURN_CLUSTER_DIR=DIR tests/bench/site-load.sh
# Environment [defaults]: SL_OUT [$SATURN_CLUSTER_DIR/site-load],
#   SL_DURATION [300], SL_USERS [10], SL_TASKS [1000], SL_BATCH_MIN [10],
#   SL_BATCH_MAX [500], SL_JOB_RATE [60], SL_WORK_MIN/MAX (Saturn task s on
#   one GPU) [20 60], SL_JOB_WORK_MIN/MAX [10 60], SL_CANCELS [10],
#   SL_UPDATES [10], SL_NODE_EVENTS [1], SL_RESTART [1], SL_SAMPLE [5],
#   SL_DRAIN_MAX [1200], SL_SEED [1], SL_USER_PREFIX [saturnload];
#   SL_END [drain]: drain (a task still queued after SL_DRAIN_MAX s counts
#   as lost) or cancel (a controller-scale run with more work than the
#   load's time: after SL_DRAIN_MAX s the jobs left are recorded in
#   left.txt and cancelled; those tasks count as left, not lost, and the
#   exactly-once check covers every other task);
#   SL_REANALYSE=DIR: only analyse a finished run's folder again.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ME=site-load
die() {
	echo "$ME: error: $*" >&2
	exit 2
}
say() {
	echo "$ME: $*" >&2
}
# SL_REANALYSE=DIR: only the analysis again, of a finished run's folder
if [ -n "${SL_REANALYSE:-}" ]; then
	cd "$SL_REANALYSE" && [ -f meta.env ] || die "SL_REANALYSE: no meta.env in '$SL_REANALYSE'"
	. ./meta.env
	. "$ROOT/tests/bench/site-lib.sh"
	analyse
	exit $?
fi
[ "$(id -u)" = 0 ] || die "run as root (test users, scontrol as the operator)"
D=${SATURN_CLUSTER_DIR:-}
[ -n "$D" ] && [ -f "$D/env" ] || die "SATURN_CLUSTER_DIR must name a running cluster (scripts/cluster.sh start)"
export SATURN_CLUSTER_DIR=$D
. "$D/env"
OUT=${SL_OUT:-$D/site-load}
DUR=${SL_DURATION:-300}
NU=${SL_USERS:-10}
NT=${SL_TASKS:-1000}
BMIN=${SL_BATCH_MIN:-10}
BMAX=${SL_BATCH_MAX:-500}
JRATE=${SL_JOB_RATE:-60}
WMIN=${SL_WORK_MIN:-20}
WMAX=${SL_WORK_MAX:-60}
JWMIN=${SL_JOB_WORK_MIN:-10}
JWMAX=${SL_JOB_WORK_MAX:-60}
NCANCEL=${SL_CANCELS:-10}
NUPD=${SL_UPDATES:-10}
NODEEV=${SL_NODE_EVENTS:-1}
RESTART=${SL_RESTART:-1}
SAMPLE=${SL_SAMPLE:-5}
DRAIN_MAX=${SL_DRAIN_MAX:-1200}
SEED=${SL_SEED:-1}
UP=${SL_USER_PREFIX:-saturnload}
END=${SL_END:-drain}
case $END in drain | cancel) ;; *) die "SL_END must be drain or cancel, not '$END'" ;; esac
for v in DUR NU NT BMIN BMAX JRATE WMIN WMAX JWMIN JWMAX NCANCEL NUPD SAMPLE DRAIN_MAX SEED; do
	case ${!v} in
	'' | *[!0-9]*) die "$v (SL_*) must be a whole number, not '${!v}'" ;;
	esac
done
[ "$BMIN" -ge 1 ] && [ "$BMAX" -ge "$BMIN" ] && [ "$BMAX" -le 1000 ] || die "SL_BATCH_MIN..SL_BATCH_MAX must be 1..1000, MIN <= MAX"
[ "$NU" -ge 1 ] && [ "$SAMPLE" -ge 1 ] && [ "$DUR" -ge 10 ] || die "SL_USERS and SL_SAMPLE must be >= 1, SL_DURATION >= 10"
case "$UP" in *[!a-z0-9]* | '') die "SL_USER_PREFIX must be lower-case letters and digits" ;; esac
scontrol ping 2>/dev/null | grep -q 'is UP' || die "slurmctld of $D does not answer"

SCHED=$(scontrol show config | awk '$1 == "SchedulerType" { print $3 }')
PARAMS=$(scontrol show config | awk '$1 == "SchedulerParameters" { print $3 }')
INTERVAL=$(echo "$PARAMS" | tr ',' '\n' | sed -n 's/^saturn_interval=//p')
: "${INTERVAL:=10}"
NODES=$(sinfo -h -N -o '%N' | sort -u | wc -l)
GPUS=$(sinfo -h -N -o '%N %G' | sort -u | awk '{ n = split($2, a, ":"); g += a[n] + 0 } END { print g }')
PARTS=$(sinfo -h -o '%R' | tr '\n' ' ')
NODELIST=$(sinfo -h -N -o '%N' | sort -u -V | tr '\n' ' ')

rm -rf "$OUT"
mkdir -p "$OUT"
chmod 755 "$OUT"
cd "$OUT" || die "cannot cd to $OUT"
for f in tasks.log lat.csv; do
	: >"$f"
	chmod 666 "$f"
done
: >submit.log
: >cancel.log
: >events.log
echo "t,ctld_rss_kb,inst_pss_kb,nsteps,inst_rss_kb,running,pending,state_json_b,job_state_b,load1" >rss.csv
cp "$ROOT/tests/bench/site-timed.sh" timed.sh
chmod 755 timed.sh
cat >task.sh <<EOS
#!/bin/sh
# task.sh WORK: start line, sleep WORK x the speed-up of the GPUs, end line
# (none when killed: a task killed by a node set DOWN and requeued by Slurm
# must not count as a run that ended)
trap 'exit 143' TERM INT
k=\${SLURM_ARRAY_JOB_ID:+\${SLURM_ARRAY_JOB_ID}_\${SLURM_ARRAY_TASK_ID}}
k=\${k:-\$SLURM_JOB_ID}
g=\${SATURN_GPUS:-}
[ -n "\$g" ] || g=\$(echo "\${CUDA_VISIBLE_DEVICES:-}" | tr ',' '\\n' | grep -c .)
case \$g in 0 | 1) f=1000 ;; 2 | 3) f=560 ;; 4 | 5 | 6 | 7) f=340 ;; *) f=300 ;; esac
ms=\$((\$1 * f))
echo "S \$k \$SLURM_JOB_ID \$(date +%s.%N) \$SLURMD_NODENAME \$g" >>$OUT/tasks.log
sleep \$(printf '%d.%03d' \$((ms / 1000)) \$((ms % 1000))) || exit 143
echo "E \$k \$SLURM_JOB_ID \$(date +%s.%N)" >>$OUT/tasks.log
EOS
chmod 755 task.sh

# ---- users -----------------------------------------------------------------
i=0
while [ $i -lt "$NU" ]; do
	u=$UP$i
	id "$u" >/dev/null 2>&1 || useradd -M -d /nonexistent -s /bin/sh "$u" >/dev/null 2>&1 ||
		id "$u" >/dev/null 2>&1 || die "cannot create test user $u"
	i=$((i + 1))
done

# as USER OP CMD...: CMD as USER, timed as OP
as() {
	u=$1
	shift
	runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" "$OUT/timed.sh" "$OUT/lat.csv" "$@"
}
# as_root OP CMD...: CMD as root (the operator), timed as OP
as_root() {
	"$OUT/timed.sh" "$OUT/lat.csv" "$@"
}

# ---- the events (offsets in ms from the start) ------------------------------
awk -v seed="$SEED" -v dur="$DUR" -v nt="$NT" -v bmin="$BMIN" -v bmax="$BMAX" -v nu="$NU" \
	-v jrate="$JRATE" -v wmin="$WMIN" -v wmax="$WMAX" -v jwmin="$JWMIN" -v jwmax="$JWMAX" \
	-v ncancel="$NCANCEL" -v nupd="$NUPD" -v nodeev="$NODEEV" -v restart="$RESTART" \
	-v parts="$PARTS" -v nodes="$NODELIST" '
function ri(a, b) { return a + int(rand() * (b - a + 1)) }
function ms(x) { return int(x * 1000) }
function part() { r = rand(); if (np == 1 || r < 0.6) return p[1]; return p[2 + int(rand() * (np - 1))] }
BEGIN {
	srand(seed)
	np = split(parts, p, " ")
	nn = split(nodes, nd, " ")
	left = nt; b = 0
	while (left > 0) {
		n = int(exp(log(bmin) + rand() * (log(bmax) - log(bmin))) + 0.5)
		if (n > left || left - n < bmin) n = left
		gg = rand(); g = gg < 0.5 ? 1 : (gg < 0.85 ? 2 : 4)
		printf "%d SAT %d %d %d %d %d %s %d\n", ms(rand() * dur * 0.6), b % nu, b, n, g,
			ri(wmin, wmax), part(), rand() < 0.8
		left -= n; b++
	}
	nj = int(jrate * dur / 60)
	for (j = 0; j < nj; j++) {
		gpu = rand() < 0.5; arr = rand() < 0.3 ? ri(2, 8) : 0
		gg = rand(); g = gpu ? (gg < 0.5 ? 1 : (gg < 0.8 ? 2 : (gg < 0.95 ? 4 : 8))) : 0
		nc = rand(); nice = nc < 0.6 ? 0 : (nc < 0.9 ? 50 : 500)
		printf "%d JOB %d %d %d %d %d %s %d\n", ms(rand() * dur), ri(0, nu - 1), j, arr, g,
			ri(jwmin, jwmax), part(), nice
	}
	for (j = 0; j < ncancel; j++) {
		printf "%d CANCEL_HELD\n", ms(dur * (0.1 + 0.8 * rand()))
		printf "%d CANCEL_RUN\n", ms(dur * (0.1 + 0.8 * rand()))
	}
	for (j = 0; j < nupd; j++) {
		printf "%d UPD_USER %d\n", ms(dur * (0.1 + 0.8 * rand())), ri(0, nu - 1)
		printf "%d UPD_OP %d\n", ms(dur * (0.1 + 0.8 * rand())), ri(1, 10000)
	}
	if (nodeev && nn >= 2) {
		a = nd[2]; d = nd[int(nn / 2) + 1]
		if (d == a) d = nd[1]
		printf "%d DRAIN %s\n%d RESUME %s\n", ms(dur * 0.3), a, ms(dur * 0.5), a
		printf "%d DOWN %s\n%d RESUME %s\n", ms(dur * 0.4), d, ms(dur * 0.6), d
	}
	if (restart)
		printf "%d RESTART\n", ms(dur * 0.7)
	printf "%d END\n", ms(dur)
}' | sort -n -k1,1 >events.txt

. "$ROOT/tests/bench/site-lib.sh"

# ---- run ---------------------------------------------------------------------
say "$SCHED, $NODES nodes, $GPUS GPUs, partitions $PARTS; $(grep -c ' SAT ' events.txt) Saturn batches ($NT tasks), $(grep -c ' JOB ' events.txt) ordinary submissions over ${DUR}s; output $OUT"
RANDOM=$SEED
T0=${EPOCHREALTIME/./}
echo "$T0" >t0
sampler &
SAMPLER=$!
trap 'touch "$OUT/.stop"; kill "$SAMPLER" 2>/dev/null' EXIT
trap 'exit 1' INT TERM
lag_max=0
while read -r off act a1 a2 a3 a4 a5 a6 a7; do
	now=$(((${EPOCHREALTIME/./} - T0) / 1000))
	if [ "$off" -gt "$now" ]; then
		w=$((off - now))
		sleep "$(printf '%d.%03d' $((w / 1000)) $((w % 1000)))"
	elif [ $((now - off)) -gt "$lag_max" ]; then
		lag_max=$((now - off))
	fi
	echo "$off $act $a1 ${a2:-}" >>events.log
	case $act in
	SAT) ev_sat "$a1" "$a2" "$a3" "$a4" "$a5" "$a6" "$a7" ;;
	JOB) ev_job "$a1" "$a2" "$a3" "$a4" "$a5" "$a6" "$a7" ;;
	CANCEL_HELD) ev_cancel PENDING ;;
	CANCEL_RUN) ev_cancel RUNNING ;;
	UPD_USER) ev_upd_user "$a1" ;;
	UPD_OP) ev_upd_op "$a1" ;;
	DRAIN) ev_node "$a1" State=DRAIN Reason=site-load-drain ;;
	DOWN) ev_node "$a1" State=DOWN Reason=site-load-down ;;
	RESUME) ev_node "$a1" State=RESUME ;;
	RESTART) ev_restart ;;
	END) break ;;
	esac
done <events.txt
sdiag >sdiag-2.txt 2>&1
T_LOAD=${EPOCHREALTIME/./}
say "load done (max lag behind the schedule $((lag_max / 1000)) s); draining"
# jobs left in the queue; a failed squeue (an overloaded slurmctld times
# out) counts as not drained
queue_left() {
	ql=$(squeue -h -o %i 2>/dev/null) || return 0
	[ -n "$ql" ]
}
n=0
while queue_left || ! scontrol ping 2>/dev/null | grep -q 'is UP'; do
	n=$((n + 2))
	[ $n -le "$DRAIN_MAX" ] || { say "queue not empty after ${DRAIN_MAX}s of drain"; break; }
	sleep 2
done
squeue -h -r -o %i >left.txt 2>&1 || echo "squeue failed" >>left.txt
T_CANCEL=
if [ "$END" = cancel ] && [ -s left.txt ]; then
	T_CANCEL=${EPOCHREALTIME/./}
	say "SL_END=cancel: cancelling the $(wc -l <left.txt) jobs left"
	# shellcheck disable=SC2046 # one word per job
	scancel $(grep -v failed left.txt | cut -d_ -f1 | sort -u) 2>/dev/null || true
	n=0
	while queue_left && [ $n -lt 300 ]; do
		n=$((n + 2))
		sleep 2
	done
fi
T_END=${EPOCHREALTIME/./}
touch .stop
wait "$SAMPLER" 2>/dev/null
trap - EXIT
sdiag >sdiag-3.txt 2>&1
for v in D SLURM_CONF SCHED NODES GPUS DUR NT INTERVAL T0 T_LOAD T_CANCEL T_END END; do
	echo "$v='${!v}'"
done >meta.env
analyse
