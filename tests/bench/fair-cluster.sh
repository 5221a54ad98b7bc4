#!/bin/sh
# fair-cluster.sh - two users' batches on the one-machine cluster (not part
# of `make check`; figures for doc/benchmarks.md, "Sharing the cluster
# between users").
#
# User A ($SATURN_HOSTILE_USER, saturnuser) submits a large batch (24 tasks
# of the demo sweep, contrib/demo: 10 gpt2-medium + 14 gpt2-xl), user B
# ($SATURN_VICTIM_USER, saturnuser2) a small one (4 gpt2-medium tasks)
# FAIR_GAP seconds later; every task asks for --gres=gpu:4 (the users' own
# request, what stock Slurm gives them). Task times are the profile's,
# compressed by FAIR_SCALE. Cases, each on a fresh 2 x 8-GPU cluster:
#   saturn-AB   sched/saturn, both batches          saturn-A / saturn-B: alone
#   share-AB    sched/saturn with saturn_fairness=share
#   weighted-AB, bounded-AB, stock-AB   sched/saturn with priority/multifactor
#               and saturn_objective=weighted, =bounded (saturn_bound=share),
#               =bounded with saturn_bound=stock (not in the default cases)
#   basic-AB    sched/backfill, priority/basic      basic-A / basic-B: alone
#   multi-AB    sched/backfill, priority/multifactor (age + job size; no
#               fair-share factor: it needs slurmdbd, which is not here)
# Prints per case and batch its completion (last task end - submission, s);
# the last lines are "fair: CASE BATCH SECONDS".
#
# usage (root, from the source tree): tests/bench/fair-cluster.sh [BUILD_DIR]
# Environment: FAIR_CASES (default all eight, space-separated), FAIR_GAP (20),
#   FAIR_SCALE (0.5), SATURN_PORT_BASE (18400).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
GAP=${FAIR_GAP:-20}
export DEMO_TIME_SCALE=${FAIR_SCALE:-0.5}
CASES=${FAIR_CASES:-saturn-AB share-AB saturn-A saturn-B basic-AB basic-A basic-B multi-AB}
export SATURN_CLUSTER_DIR=/tmp/fair-cluster-$$
export SATURN_PORT_BASE=${SATURN_PORT_BASE:-18400}
export SATURN_NODES=2 SATURN_GPUS_PER_NODE=8 SATURN_AUTH=none
export SATURN_PLUGIN_DIR="$BUILD/plugin/slurm"
[ "$(id -u)" = 0 ] || {
	echo "fair-cluster: run as root" >&2
	exit 1
}
[ -f "$SATURN_PLUGIN_DIR/sched_saturn.so" ] || {
	echo "fair-cluster: no $SATURN_PLUGIN_DIR/sched_saturn.so (build first)" >&2
	exit 1
}
top_srcdir=$ROOT
. "$ROOT/tests/e2e/hostile-lib.sh"
hostile_users
CL="$ROOT/scripts/cluster.sh"
trap 'sh "$CL" stop >/dev/null 2>&1 || true' EXIT INT TERM

# profile NAME UID TASKS_JSON: the batch's profile, in its user's folder
profile() {
	pd="$SATURN_CLUSTER_DIR/state/saturn/profiles/$2"
	n=0
	until [ -d "$SATURN_CLUSTER_DIR/state/saturn/profiles" ]; do
		n=$((n + 1))
		[ $n -le 80 ] || { echo "fair-cluster: no profiles folder" >&2; exit 1; }
		sleep 0.25
	done
	[ -d "$pd" ] || { mkdir -m 700 "$pd" && chown "$2" "$pd"; }
	printf '{ "format": "saturn-profile/1", "batch": "%s", "created": 1, "tasks": [ %s ] }\n' \
		"$1" "$3" >"$pd/$1.json"
	chown "$2" "$pd/$1.json"
	chmod 600 "$pd/$1.json"
}
MED='"options": [
	{ "technique": "single", "gpus": 1, "sec_per_batch": 1.00, "status": "measured" },
	{ "technique": "ddp", "gpus": 2, "sec_per_batch": 0.56, "status": "measured" },
	{ "technique": "ddp", "gpus": 4, "sec_per_batch": 0.34, "status": "measured" },
	{ "technique": "ddp", "gpus": 8, "sec_per_batch": 0.30, "status": "measured" } ]'
XL='"options": [
	{ "technique": "fsdp", "gpus": 2, "sec_per_batch": 1.20, "status": "measured" },
	{ "technique": "fsdp", "gpus": 4, "sec_per_batch": 0.68, "status": "measured" },
	{ "technique": "fsdp", "gpus": 8, "sec_per_batch": 0.55, "status": "measured" } ]'

# completion LOG SUBMIT_EPOCH: last end - submission
completion() {
	awk -v t0="$2" '{ for (i = 1; i <= NF; i++) if ($i ~ /^end=/) { e = substr($i, 5) + 0; if (e > m) m = e } }
		END { printf "%.1f\n", m - t0 }' "$1"
}

# submit USER BATCH ARRAY LOG: one batch, as its user
submit() {
	sat=
	[ "$SATURN_SCHED" = saturn ] && sat="--saturn-batch=$2"
	as "$1" env DEMO_LOG="$4" DEMO_TIME_SCALE="$DEMO_TIME_SCALE" \
		sbatch --parsable $sat --array="$3" --gres=gpu:4 --time=10 -o /dev/null \
		"$SATURN_CLUSTER_DIR/sweep.sbatch" >/dev/null
}

: >/tmp/fair-cluster-results.$$
for c in $CASES; do
	case $c in
	saturn-*) export SATURN_SCHED=saturn SATURN_PRIORITY=basic \
		SATURN_SCHED_PARAMS="saturn_interval=3,saturn_solver_time=1,saturn_release_slack=10,saturn_fairness=none" ;;
	share-*) export SATURN_SCHED=saturn SATURN_PRIORITY=basic \
		SATURN_SCHED_PARAMS="saturn_interval=3,saturn_solver_time=1,saturn_release_slack=10,saturn_fairness=share" ;;
	weighted-*) export SATURN_SCHED=saturn SATURN_PRIORITY=multifactor \
		SATURN_SCHED_PARAMS="saturn_interval=3,saturn_solver_time=1,saturn_release_slack=10,saturn_objective=weighted" ;;
	bounded-*) export SATURN_SCHED=saturn SATURN_PRIORITY=multifactor \
		SATURN_SCHED_PARAMS="saturn_interval=3,saturn_solver_time=1,saturn_release_slack=10,saturn_objective=bounded" ;;
	stock-*) export SATURN_SCHED=saturn SATURN_PRIORITY=multifactor \
		SATURN_SCHED_PARAMS="saturn_interval=3,saturn_solver_time=1,saturn_release_slack=10,saturn_objective=bounded,saturn_bound=stock" ;;
	basic-*) export SATURN_SCHED=backfill SATURN_PRIORITY=basic SATURN_SCHED_PARAMS= ;;
	multi-*) export SATURN_SCHED=backfill SATURN_PRIORITY=multifactor SATURN_SCHED_PARAMS= ;;
	*) echo "fair-cluster: unknown case $c" >&2; exit 1 ;;
	esac
	who=${c#*-}
	sh "$CL" stop >/dev/null 2>&1 || true
	rm -rf "$SATURN_CLUSTER_DIR"
	sh "$CL" start >/dev/null 2>&1 || { echo "fair-cluster: $c: cluster did not start" >&2; exit 1; }
	. "$SATURN_CLUSTER_DIR/env"
	echo "# $c: $(scontrol show config | grep -E '^(SchedulerType|PriorityType) ' | tr -s ' ' | tr '\n' ' ')"
	hostile_dirs
	cp "$ROOT/contrib/demo/sweep.sbatch" "$SATURN_CLUSTER_DIR/sweep.sbatch"
	chmod 755 "$SATURN_CLUSTER_DIR/sweep.sbatch"
	LA="$SATURN_CLUSTER_DIR/a.log" LB="$SATURN_CLUSTER_DIR/b.log"
	: >"$LA"
	: >"$LB"
	chmod 666 "$LA" "$LB"
	if [ "$SATURN_SCHED" = saturn ]; then
		profile big "$HOSTILE_UID" "{ \"signature\": \"med\", \"task_ids\": \"0-9\", \"batches\": 40, $MED },
			{ \"signature\": \"xl\", \"task_ids\": \"10-23\", \"batches\": 40, $XL }"
		profile small "$VICTIM_UID" "{ \"signature\": \"med\", \"task_ids\": \"0-3\", \"batches\": 40, $MED }"
	fi
	ta= tb=
	case $who in
	AB)
		ta=$(date +%s.%N)
		submit "$HOSTILE_USER" big 0-23 "$LA"
		sleep "$GAP"
		tb=$(date +%s.%N)
		submit "$VICTIM_USER" small 0-3 "$LB"
		;;
	A)
		ta=$(date +%s.%N)
		submit "$HOSTILE_USER" big 0-23 "$LA"
		;;
	B)
		tb=$(date +%s.%N)
		submit "$VICTIM_USER" small 0-3 "$LB"
		;;
	esac
	n=0
	while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
		n=$((n + 1))
		[ $n -le 1200 ] || { echo "fair-cluster: $c did not finish in 10 minutes" >&2; exit 1; }
		sleep 0.5
	done
	if [ -n "$ta" ]; then
		[ "$(grep -c '^task=' "$LA")" = 24 ] || { echo "fair-cluster: $c: $(grep -c '^task=' "$LA") of 24 A tasks logged" >&2; exit 1; }
		echo "fair: $c A $(completion "$LA" "$ta")" | tee -a /tmp/fair-cluster-results.$$
	fi
	if [ -n "$tb" ]; then
		[ "$(grep -c '^task=' "$LB")" = 4 ] || { echo "fair-cluster: $c: $(grep -c '^task=' "$LB") of 4 B tasks logged" >&2; exit 1; }
		echo "fair: $c B $(completion "$LB" "$tb")" | tee -a /tmp/fair-cluster-results.$$
	fi
	[ "$SATURN_SCHED" = saturn ] && grep -a 'sched/saturn: plan p' "$SATURN_CLUSTER_DIR/log/slurmctld.log" | tail -n 1 | sed 's/^\[[^]]*\] /  /'
done
sh "$CL" stop >/dev/null 2>&1 || true
rm -rf "$SATURN_CLUSTER_DIR"
cat /tmp/fair-cluster-results.$$
rm -f /tmp/fair-cluster-results.$$
