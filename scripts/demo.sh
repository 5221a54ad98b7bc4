#!/bin/sh
# demo.sh - Saturn for Slurm in five minutes on one machine.
#
# Builds what it needs (Debian packages, the matching Slurm source, this
# project with its Slurm plugins), starts a one-machine cluster (2 nodes x 8
# fake GPUs) under sched/saturn, submits the example sweep
# (contrib/demo: 16 fine-tuning tasks whose durations follow a profile,
# compressed to seconds) as the users would (`--gres=gpu:8` for every
# task), shows the plan Saturn made, waits for it, then runs the same sweep
# with stock Slurm (sched/backfill, the users' fixed requests) and prints
# both makespans and the time saved.
#
# usage: scripts/demo.sh            (as root)
# Environment: SATURN_BUILD (build folder, default /tmp/saturn-demo-build),
#   SATURN_CLUSTER_DIR (default /tmp/saturn-demo), SATURN_PORT_BASE (16800),
#   DEMO_TIME_SCALE (1 = the profile's seconds; 0.5 halves every task),
#   DEMO_SKIP_BASELINE=1 (only the Saturn run).
# The machine-readable result is the last line:
#   demo: saturn=SECONDS backfill=SECONDS ratio=R
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SATURN_BUILD:-/tmp/saturn-demo-build}
export SATURN_CLUSTER_DIR=${SATURN_CLUSTER_DIR:-/tmp/saturn-demo}
export SATURN_PORT_BASE=${SATURN_PORT_BASE:-16800}
export SATURN_NODES=2 SATURN_GPUS_PER_NODE=8
export DEMO_TIME_SCALE=${DEMO_TIME_SCALE:-1}
BATCH=demo-sweep
TASKS=16

say() {
	printf '\n== %s\n' "$*"
}
die() {
	echo "demo: error: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "run as root (it starts slurmctld/slurmd and creates fake GPU devices)"

# --- build ------------------------------------------------------------------
say "Building (packages, Slurm source, saturn-slurm)"
if [ -x "$ROOT/scripts/install-deps.sh" ]; then
	"$ROOT/scripts/install-deps.sh" >/dev/null || die "scripts/install-deps.sh failed"
fi
SRC=$("$ROOT/scripts/slurm-source.sh" 2>/dev/null | tail -n1) || die "scripts/slurm-source.sh failed"
[ -f "$SRC/src/slurmctld/slurmctld.h" ] || die "no Slurm source ($SRC)"
if [ ! -f "$BUILD/plugin/slurm/sched_saturn.so" ] || [ ! -f "$BUILD/plugin/slurm/job_submit_saturn.so" ]; then
	[ -x "$ROOT/configure" ] || (cd "$ROOT" && autoreconf -fi >/dev/null 2>&1) || die "autoreconf failed"
	mkdir -p "$BUILD"
	(cd "$BUILD" && "$ROOT/configure" --with-slurm-source="$SRC" >configure.log 2>&1) ||
		die "configure failed (see $BUILD/configure.log)"
	(cd "$BUILD" && make -j"$(nproc)" >make.log 2>&1) || die "make failed (see $BUILD/make.log)"
fi
export SATURN_PLUGIN_DIR="$BUILD/plugin/slurm"
echo "plugins: $SATURN_PLUGIN_DIR"

CLUSTER="$ROOT/scripts/cluster.sh"
cleanup() {
	sh "$CLUSTER" stop >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM

# wait_empty SECONDS
wait_empty() {
	n=0
	while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
		n=$((n + 1))
		[ $n -le $(($1 * 2)) ] || return 1
		sleep 0.5
	done
}

# makespan LOG SUBMIT_EPOCH: last end minus submission
makespan() {
	awk -v t0="$2" '{ for (i = 1; i <= NF; i++) if ($i ~ /^end=/) { e = substr($i, 5) + 0; if (e > m) m = e } }
		END { printf "%.1f\n", m - t0 }' "$1"
}

# --- run 1: sched/saturn ----------------------------------------------------
say "Run 1: the sweep under sched/saturn (profile: contrib/demo/profile.json)"
export SATURN_SCHED=saturn SATURN_SCHED_PARAMS="saturn_interval=5,saturn_solver_time=1,saturn_release_slack=10"
sh "$CLUSTER" stop >/dev/null 2>&1 || true
sh "$CLUSTER" start 2>&1 | tail -n1
. "$SATURN_CLUSTER_DIR/env"
STATE="$SATURN_CLUSTER_DIR/state/saturn"
n=0
until [ -d "$STATE/profiles" ]; do
	n=$((n + 1))
	[ $n -le 40 ] || die "sched/saturn did not create $STATE/profiles"
	sleep 0.25
done
# PROFILE_DIR/UID/NAME.json, in the submitting user's folder (0700, theirs)
PDIR="$STATE/profiles/$(id -u)"
[ -d "$PDIR" ] || { mkdir -m 700 "$PDIR" && chown "$(id -u)" "$PDIR"; } || die "cannot make $PDIR"
cp "$ROOT/contrib/demo/profile.json" "$PDIR/$BATCH.json"
LOG1="$SATURN_CLUSTER_DIR/saturn-tasks.log"
: >"$LOG1"
chmod 666 "$LOG1"
echo "\$ sbatch --saturn-batch=$BATCH --array=0-$((TASKS - 1)) --gres=gpu:8 contrib/demo/sweep.sbatch"
t0=$(date +%s.%N)
DEMO_LOG="$LOG1" sbatch --parsable --saturn-batch=$BATCH --array=0-$((TASKS - 1)) --gres=gpu:8 \
	-o /dev/null "$ROOT/contrib/demo/sweep.sbatch" >/dev/null || die "sbatch failed"
n=0
until grep -q "sched/saturn: plan p" "$SATURN_CLUSTER_DIR/log/slurmctld.log" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 60 ] || die "no plan after 30 s (see $SATURN_CLUSTER_DIR/log/slurmctld.log)"
	sleep 0.5
done
sleep 1
echo
grep -a "sched/saturn: plan p" "$SATURN_CLUSTER_DIR/log/slurmctld.log" | head -n1 | sed 's/^\[[^]]*\] /slurmctld: /'
echo
if [ -x "$BUILD/cli/saturn" ] && "$BUILD/cli/saturn" status --state-dir "$STATE" >/dev/null 2>&1; then
	echo "\$ saturn status"
	"$BUILD/cli/saturn" status --state-dir "$STATE" || true
else
	echo "plan (from $STATE/state.json):"
	awk -F'"' '/"id":/ { id = $4 } /"technique":/ { t = $4 } /"node":/ { nd = $4 }
		/"gpus":/ { g = $3; gsub(/[:, ]/, "", g) } /"start":/ { s = $3; gsub(/[:, ]/, "", s) }
		/"end":/ { e = $3; gsub(/[:, ]/, "", e); printf "  %-8s %-7s %2s GPUs on %s  %6.1fs .. %6.1fs\n", id, t, g, nd, s - now, e - now }' \
		now="$(date +%s)" "$STATE/state.json"
fi
echo
echo "\$ squeue"
squeue -o '%.10i %.8T %.13b %.6N %R' | head -n 20
wait_empty 600 || die "the Saturn run did not finish in 10 minutes"
S1=$(makespan "$LOG1" "$t0")
[ "$(grep -c '^task=' "$LOG1")" = "$TASKS" ] || die "Saturn run: $(grep -c '^task=' "$LOG1") of $TASKS tasks logged"
echo "Saturn run done: makespan ${S1}s"
sh "$CLUSTER" stop >/dev/null 2>&1

if [ "${DEMO_SKIP_BASELINE:-0}" = 1 ]; then
	echo "demo: saturn=$S1"
	exit 0
fi

# --- run 2: stock Slurm -----------------------------------------------------
say "Run 2: the same sweep with stock Slurm (sched/backfill, every task --gres=gpu:8)"
export SATURN_SCHED=backfill SATURN_SCHED_PARAMS=
sh "$CLUSTER" start 2>&1 | tail -n1
. "$SATURN_CLUSTER_DIR/env"
LOG2="$SATURN_CLUSTER_DIR/backfill-tasks.log"
: >"$LOG2"
chmod 666 "$LOG2"
echo "\$ sbatch --array=0-$((TASKS - 1)) --gres=gpu:8 contrib/demo/sweep.sbatch"
t0=$(date +%s.%N)
DEMO_LOG="$LOG2" sbatch --parsable --array=0-$((TASKS - 1)) --gres=gpu:8 \
	-o /dev/null "$ROOT/contrib/demo/sweep.sbatch" >/dev/null || die "sbatch failed"
sleep 2
squeue -o '%.10i %.8T %.13b %.6N %R' | head -n 8
wait_empty 900 || die "the stock run did not finish in 15 minutes"
S2=$(makespan "$LOG2" "$t0")
[ "$(grep -c '^task=' "$LOG2")" = "$TASKS" ] || die "stock run: $(grep -c '^task=' "$LOG2") of $TASKS tasks logged"
echo "Stock run done: makespan ${S2}s"
sh "$CLUSTER" stop >/dev/null 2>&1

say "Result"
awk -v a="$S1" -v b="$S2" 'BEGIN {
	printf "  sched/saturn (planned techniques and GPU counts): %7.1f s\n", a
	printf "  stock Slurm (users'"'"' gpu:8 requests, backfill):  %7.1f s\n", b
	printf "  time saved: %.1f s (%.0f%%), makespan ratio %.2f\n", b - a, 100 * (b - a) / b, a / b
	printf "demo: saturn=%.1f backfill=%.1f ratio=%.3f\n", a, b, a / b }'
