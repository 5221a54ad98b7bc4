#!/bin/sh
# multi-cluster.sh - three users' batches arriving over time on the
# one-machine cluster, sched/saturn's multi-user objectives against stock
# Slurm (sched/backfill, priority/multifactor, the users' own requests);
# not part of `make check` (figures for doc/benchmarks.md, "Several users
# on the cluster, longer tasks").
#
# Batches (demo sweep tasks, contrib/demo/sweep.sbatch; ids 0-9 gpt2-medium,
# 10+ gpt2-xl; every task asks for --gres=gpu:4, the users' own request):
#   a  user A (saturnuser)   12 tasks (5 medium, 7 xl)   at 0
#   b  user B (saturnuser2)   4 tasks (4 medium)          at MC_GAP
#   c  user C (saturnuser3)   6 tasks (3 medium, 3 xl)    at 2 x MC_GAP
# Task times are the demo profile's scaled by MC_SCALE (2: a medium task
# on 4 GPUs takes 27 s, an xl one 54 s), and so are the profiles
# sched/saturn plans with. Cases, each on a fresh 2 x 8-GPU
# cluster with priority/multifactor (and, with MC_ACCOUNTING=1, slurmdbd
# and the fair-share factor):
#   multi     sched/backfill (stock Slurm), all three batches
#   stock     sched/saturn, saturn_objective=bounded, saturn_bound=stock
#   share     sched/saturn, saturn_objective=bounded (fair-share bound)
#   weighted  sched/saturn, saturn_objective=weighted
#   makespan  sched/saturn, saturn_objective=makespan
#   alone-a, alone-b, alone-c   sched/backfill, the batch alone (the
#             reference of the slowdowns)
# Prints per case and batch its completion (last task end - its
# submission, s) and the case's makespan (last end - first submission);
# then a table: completion, slowdown over the batch alone under stock
# Slurm, makespan. Per case, the slurmctld.log and task logs are kept in
# MC_KEEP (if set).
#
# usage (root, from the source tree): tests/bench/multi-cluster.sh [BUILD_DIR]
# Environment: MC_CASES (default "multi stock weighted alone-a alone-b
#   alone-c"), MC_GAP (30), MC_SCALE (2), MC_ACCOUNTING (1), MC_PARAMS
#   (sched/saturn's common parameters), MC_KEEP, SATURN_PORT_BASE (18500).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
GAP=${MC_GAP:-30}
export DEMO_TIME_SCALE=${MC_SCALE:-2}
CASES=${MC_CASES:-multi stock weighted alone-a alone-b alone-c}
COMMON=${MC_PARAMS:-saturn_interval=3,saturn_solver_time=1,saturn_release_slack=5}
export SATURN_CLUSTER_DIR=/tmp/multi-cluster-$$
export SATURN_PORT_BASE=${SATURN_PORT_BASE:-18500}
export SATURN_NODES=2 SATURN_GPUS_PER_NODE=8 SATURN_AUTH=none
export SATURN_PLUGIN_DIR="$BUILD/plugin/slurm"
export SATURN_PRIORITY=multifactor
U3=${SATURN_THIRD_USER:-saturnuser3}
if [ "${MC_ACCOUNTING:-1}" = 1 ]; then
	export SATURN_ACCOUNTING=1
	export SATURN_ACCOUNTING_USERS="root saturnuser saturnuser2 $U3"
fi
[ "$(id -u)" = 0 ] || {
	echo "multi-cluster: run as root" >&2
	exit 1
}
[ -f "$SATURN_PLUGIN_DIR/sched_saturn.so" ] || {
	echo "multi-cluster: no $SATURN_PLUGIN_DIR/sched_saturn.so (build first)" >&2
	exit 1
}
top_srcdir=$ROOT
. "$ROOT/tests/e2e/hostile-lib.sh"
hostile_users
id -u "$U3" >/dev/null 2>&1 || useradd -M -d /nonexistent -s /bin/sh "$U3" >/dev/null 2>&1 ||
	{ echo "multi-cluster: cannot create user $U3" >&2; exit 1; }
CL="$ROOT/scripts/cluster.sh"
trap 'sh "$CL" stop >/dev/null 2>&1 || true' EXIT INT TERM
RES=/tmp/multi-cluster-results.$$

# run_as USER CMD...: CMD as USER in a folder of its own
run_as() {
	u=$1
	shift
	d="$SATURN_CLUSTER_DIR/home-$u"
	[ -d "$d" ] || { mkdir -m 700 "$d" && chown "$u" "$d"; }
	runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" \
		sh -c 'cd "$0" || exit 1; exec "$@"' "$d" "$@"
}

# profile NAME USER TASKS_JSON: the batch's profile, in its user's folder
profile() {
	uid=$(id -u "$2")
	pd="$SATURN_CLUSTER_DIR/state/saturn/profiles/$uid"
	n=0
	until [ -d "$SATURN_CLUSTER_DIR/state/saturn/profiles" ]; do
		n=$((n + 1))
		[ $n -le 80 ] || { echo "multi-cluster: no profiles folder" >&2; exit 1; }
		sleep 0.25
	done
	[ -d "$pd" ] || { mkdir -m 700 "$pd" && chown "$uid" "$pd"; }
	printf '{ "format": "saturn-profile/1", "batch": "%s", "created": 1, "tasks": [ %s ] }\n' \
		"$1" "$3" >"$pd/$1.json"
	chown "$uid" "$pd/$1.json"
	chmod 600 "$pd/$1.json"
}
# the options' seconds per batch as the tasks run them (the profile's,
# scaled like the tasks: a profile measured on these tasks)
sc() {
	awk -v x="$1" -v s="$DEMO_TIME_SCALE" 'BEGIN { printf "%.4f", x * s }'
}
MED="\"options\": [
	{ \"technique\": \"single\", \"gpus\": 1, \"sec_per_batch\": $(sc 1.00), \"status\": \"measured\" },
	{ \"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": $(sc 0.56), \"status\": \"measured\" },
	{ \"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": $(sc 0.34), \"status\": \"measured\" },
	{ \"technique\": \"ddp\", \"gpus\": 8, \"sec_per_batch\": $(sc 0.30), \"status\": \"measured\" } ]"
XL="\"options\": [
	{ \"technique\": \"fsdp\", \"gpus\": 2, \"sec_per_batch\": $(sc 1.20), \"status\": \"measured\" },
	{ \"technique\": \"fsdp\", \"gpus\": 4, \"sec_per_batch\": $(sc 0.68), \"status\": \"measured\" },
	{ \"technique\": \"fsdp\", \"gpus\": 8, \"sec_per_batch\": $(sc 0.55), \"status\": \"measured\" } ]"

# batch B: user, task ids, medium ids, xl ids, task count
spec() {
	case $1 in
	a) echo "$HOSTILE_USER 0-4,10-16 0-4 10-16 12" ;;
	b) echo "$VICTIM_USER 0-3 0-3 - 4" ;;
	c) echo "$U3 5-7,17-19 5-7 17-19 6" ;;
	esac
}

# submit BATCH: as its user; prints the submission time
submit() {
	set -- "$1" $(spec "$1")
	sat=
	[ "$SATURN_SCHED" = saturn ] && sat="--saturn-batch=$1"
	t=$(date +%s.%N)
	run_as "$2" env DEMO_LOG="$SATURN_CLUSTER_DIR/$1.log" DEMO_TIME_SCALE="$DEMO_TIME_SCALE" \
		sbatch --parsable $sat --array="$3" --gres=gpu:4 --time=20 -o /dev/null \
		"$SATURN_CLUSTER_DIR/sweep.sbatch" >/dev/null
	echo "$t"
}

# first start and last end in a batch's log
first_start() {
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^start=/) { s = substr($i, 7) + 0; if (m == "" || s < m) m = s } }
		END { printf "%.3f\n", m }' "$1"
}
last_end() {
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^end=/) { e = substr($i, 5) + 0; if (e > m) m = e } }
		END { printf "%.3f\n", m }' "$1"
}

: >"$RES"
for c in $CASES; do
	case $c in
	multi | alone-*) export SATURN_SCHED=backfill SATURN_SCHED_PARAMS= ;;
	stock) export SATURN_SCHED=saturn SATURN_SCHED_PARAMS="$COMMON,saturn_objective=bounded,saturn_bound=stock" ;;
	share) export SATURN_SCHED=saturn SATURN_SCHED_PARAMS="$COMMON,saturn_objective=bounded,saturn_bound=share" ;;
	weighted) export SATURN_SCHED=saturn SATURN_SCHED_PARAMS="$COMMON,saturn_objective=weighted" ;;
	makespan) export SATURN_SCHED=saturn SATURN_SCHED_PARAMS="$COMMON,saturn_objective=makespan" ;;
	*) echo "multi-cluster: unknown case $c" >&2; exit 1 ;;
	esac
	case $c in
	alone-*) batches=${c#alone-} ;;
	*) batches="a b c" ;;
	esac
	sh "$CL" stop >/dev/null 2>&1 || true
	rm -rf "$SATURN_CLUSTER_DIR"
	sh "$CL" start >/tmp/multi-cluster-start.$$ 2>&1 || {
		tail -20 /tmp/multi-cluster-start.$$ >&2
		echo "multi-cluster: $c: cluster did not start" >&2
		exit 1
	}
	. "$SATURN_CLUSTER_DIR/env"
	echo "# $c: $(scontrol show config | grep -E '^(SchedulerType|PriorityType|SchedulerParameters) ' | tr -s ' ' | tr '\n' ' ')"
	cp "$ROOT/contrib/demo/sweep.sbatch" "$SATURN_CLUSTER_DIR/sweep.sbatch"
	chmod 755 "$SATURN_CLUSTER_DIR/sweep.sbatch"
	for b in a b c; do
		: >"$SATURN_CLUSTER_DIR/$b.log"
		chmod 666 "$SATURN_CLUSTER_DIR/$b.log"
	done
	if [ "$SATURN_SCHED" = saturn ]; then
		for b in $batches; do
			set -- $(spec "$b")
			j="{ \"signature\": \"med\", \"task_ids\": \"$3\", \"batches\": 40, $MED }"
			[ "$4" = - ] || j="$j, { \"signature\": \"xl\", \"task_ids\": \"$4\", \"batches\": 40, $XL }"
			profile "$b" "$1" "$j"
		done
	fi
	t0=
	k=0
	for b in $batches; do
		# arrivals at 0, GAP, 2 GAP after the first (alone: at once)
		if [ -n "$t0" ]; then
			k=$((k + 1))
			now=$(date +%s.%N)
			w=$(awk -v t0="$t0" -v n="$now" -v g="$GAP" -v k="$k" 'BEGIN { w = t0 + k * g - n; printf "%.2f", (w > 0 ? w : 0) }')
			sleep "$w"
		fi
		ts=$(submit "$b")
		[ -n "$t0" ] || t0=$ts
		eval "sub_$b=$ts"
	done
	n=0
	while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
		n=$((n + 1))
		[ $n -le 2400 ] || { echo "multi-cluster: $c did not finish in 20 minutes" >&2; exit 1; }
		sleep 0.5
	done
	end=0
	for b in $batches; do
		set -- $(spec "$b")
		lg="$SATURN_CLUSTER_DIR/$b.log"
		got=$(grep -c '^task=' "$lg" || true)
		[ "$got" = "$5" ] || { echo "multi-cluster: $c: $got of $5 tasks of $b logged" >&2; exit 1; }
		for i in $(awk '{ sub(/^task=/, "", $1); print $1 }' "$lg" | sort | uniq -d); do
			echo "multi-cluster: $c: task $i of $b ran twice" >&2
			exit 1
		done
		eval "ts=\$sub_$b"
		le=$(last_end "$lg")
		fs=$(first_start "$lg")
		echo "mc: $c $b $(awk -v e="$le" -v s="$ts" 'BEGIN { printf "%.1f", e - s }') first-start $(awk -v e="$fs" -v s="$ts" 'BEGIN { printf "%.1f", e - s }')" | tee -a "$RES"
		end=$(awk -v a="$end" -v b="$le" 'BEGIN { print (b > a ? b : a) }')
	done
	echo "mc: $c makespan $(awk -v e="$end" -v s="$t0" 'BEGIN { printf "%.1f", e - s }')" | tee -a "$RES"
	if [ "$SATURN_SCHED" = saturn ]; then
		grep -a 'sched/saturn: plan p' "$SATURN_CLUSTER_DIR/log/slurmctld.log" | tail -n 2 | sed 's/^\[[^]]*\] /  /'
	fi
	if [ -n "${MC_KEEP:-}" ]; then
		mkdir -p "$MC_KEEP/$c"
		cp "$SATURN_CLUSTER_DIR/log/slurmctld.log" "$SATURN_CLUSTER_DIR"/?.log "$MC_KEEP/$c/" 2>/dev/null || true
	fi
done
sh "$CL" stop >/dev/null 2>&1 || true
rm -rf "$SATURN_CLUSTER_DIR"
echo "# completion (s) / slowdown over the batch alone under stock Slurm; makespan (s)"
awk '$1 == "mc:" && $3 != "makespan" { comp[$2 "," $3] = $4; cases[$2] = 1 }
	$1 == "mc:" && $3 == "makespan" { mk[$2] = $4 }
	END {
		for (b = 0; b < 3; b++) { n = substr("abc", b + 1, 1); alone[n] = comp["alone-" n "," n] }
		printf "%-10s %-14s %-14s %-14s %s\n", "case", "a", "b", "c", "makespan"
		for (c in cases) {
			if (c ~ /^alone-/) continue
			line = sprintf("%-10s", c)
			for (b = 0; b < 3; b++) {
				n = substr("abc", b + 1, 1)
				s = alone[n] > 0 ? sprintf("%.2f", comp[c "," n] / alone[n]) : "-"
				line = line sprintf(" %-14s", comp[c "," n] " / " s)
			}
			print line " " mk[c]
		}
		for (b = 0; b < 3; b++) { n = substr("abc", b + 1, 1); if (alone[n] > 0) printf "alone-%s    %s\n", n, alone[n] }
	}' "$RES"
rm -f "$RES" /tmp/multi-cluster-start.$$
