#!/bin/sh
# demo.sh - Saturn for Slurm in five minutes on one machine.
#
# Builds what it needs (Debian packages, the matching Slurm source, this
# project with its Slurm plugins), starts a one-machine cluster (2 nodes x 8
# fake GPUs) under sched/saturn, submits the example sweep
# (contrib/demo: 16 fine-tuning tasks whose durations follow a profile,
# compressed to seconds) as the users would (`--gres=gpu:8` for every
# task), shows the plan Saturn made, waits for it, then compares it with
# the best a user could do without Saturn: every task asking for the same
# gpu:N (N in 1, 2, 4, 8 that every task can run with) under stock Slurm
# (sched/backfill). The best N is predicted by an offline replay of each
# (`saturn plan --compare`), and only that one is run (DEMO_BASELINES=all:
# every feasible N). It prints the makespans, the ratio against the best
# uniform request and, for reference, the gpu:8 figure.
#
# usage: scripts/demo.sh            (as root)
# Environment: SATURN_BUILD (build folder, default /tmp/saturn-demo-build),
#   SATURN_CLUSTER_DIR (default /tmp/saturn-demo), SATURN_PORT_BASE (16800),
#   DEMO_TIME_SCALE (1 = the profile's seconds; 0.5 halves every task),
#   DEMO_SKIP_BASELINE=1 (only the Saturn run), DEMO_BASELINES=best|all
#   (stock Slurm with the predicted best gpu:N only, the default, or with
#   every feasible N; the best is then the best measured).
# The machine-readable result is the last line:
#   demo: saturn=SECONDS best=gpu:N backfill=SECONDS ratio=R gpu8=SECONDS
# (backfill: the best uniform request's measured makespan; gpu8: measured
# with DEMO_BASELINES=all, else predicted).
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

# --- run 2: stock Slurm, the best uniform request ----------------------------
# What a user could do without Saturn: every task asks for the same gpu:N
# (N in 1, 2, 4, 8 that every task can run with), stock Slurm backfills.
# Which N is best is predicted offline by replaying the sweep first come
# first served with each N (`saturn plan --compare`, the planner's
# baseline: backfill cannot reorder tasks of one array with one time
# limit), and only that one is run (DEMO_BASELINES=all runs every N).
say "Predicting the best uniform request (offline replay of each gpu:N, first come first served)"
SATURN_BIN="$BUILD/cli/saturn"
[ -x "$SATURN_BIN" ] || die "no $SATURN_BIN (the build did not make the CLI)"
PROBLEM="$SATURN_CLUSTER_DIR/demo-problem.json"
python3 "$ROOT/contrib/demo/profile2problem.py" "$ROOT/contrib/demo/profile.json" >"$PROBLEM" ||
	die "contrib/demo/profile2problem.py failed"
FEASIBLE=$(python3 "$ROOT/contrib/demo/profile2problem.py" --feasible "$ROOT/contrib/demo/profile.json") ||
	die "contrib/demo/profile2problem.py --feasible failed"
PRED="$SATURN_CLUSTER_DIR/demo-compare.txt"
"$SATURN_BIN" plan --compare --time-limit 1 "$PROBLEM" >"$PRED" 2>&1 || die "saturn plan --compare failed (see $PRED)"
# "  4 GPUs: makespan    0:01:22  ..." ("  1 GPU : makespan ...") -> seconds
predicted() {
	awk -v n="$1" '$1 == n && $2 ~ /^GPU/ { for (i = 3; i < NF; i++) if ($i == "makespan") {
		split($(i + 1), t, ":"); print t[1] * 3600 + t[2] * 60 + t[3]; exit } }' "$PRED"
}
BEST_N='' BEST_P=
for g in $FEASIBLE; do
	p=$(predicted "$g")
	[ -n "$p" ] || continue
	echo "  gpu:$g for every task: predicted makespan ${p}s"
	if [ -z "$BEST_P" ] || [ "$p" -lt "$BEST_P" ]; then
		BEST_N=$g BEST_P=$p
	fi
done
[ -n "$BEST_N" ] || die "no feasible uniform request (see $PRED)"
for g in 1 2 4 8; do
	case " $FEASIBLE " in *" $g "*) ;; *) echo "  gpu:$g: not every task can run with it (out of memory)" ;; esac
done
P8=$(predicted 8)
echo "  best: gpu:$BEST_N (Saturn's own plan, offline: $(awk '/^Makespan:/ { print $3 }' "$PRED" | tr -d '(')s)"
if [ "${DEMO_BASELINES:-best}" = all ]; then RUN_N=$FEASIBLE; else RUN_N=$BEST_N; fi

export SATURN_SCHED=backfill SATURN_SCHED_PARAMS=
for g in $RUN_N; do
	say "Run 2: the same sweep with stock Slurm (sched/backfill, every task --gres=gpu:$g)"
	sh "$CLUSTER" start 2>&1 | tail -n1
	. "$SATURN_CLUSTER_DIR/env"
	LOG2="$SATURN_CLUSTER_DIR/backfill-gpu$g-tasks.log"
	: >"$LOG2"
	chmod 666 "$LOG2"
	echo "\$ sbatch --array=0-$((TASKS - 1)) --gres=gpu:$g contrib/demo/sweep.sbatch"
	t0=$(date +%s.%N)
	DEMO_LOG="$LOG2" sbatch --parsable --array=0-$((TASKS - 1)) --gres=gpu:$g \
		-o /dev/null "$ROOT/contrib/demo/sweep.sbatch" >/dev/null || die "sbatch failed"
	sleep 2
	squeue -o '%.10i %.8T %.13b %.6N %R' | head -n 8
	wait_empty 900 || die "the stock run did not finish in 15 minutes"
	m=$(makespan "$LOG2" "$t0")
	[ "$(grep -c '^task=' "$LOG2")" = "$TASKS" ] || die "stock run: $(grep -c '^task=' "$LOG2") of $TASKS tasks logged"
	echo "Stock run gpu:$g done: makespan ${m}s (predicted $(predicted "$g")s)"
	eval "M$g=$m"
	sh "$CLUSTER" stop >/dev/null 2>&1
done
# with DEMO_BASELINES=all the best is the best measured one
if [ "${DEMO_BASELINES:-best}" = all ]; then
	mb=''
	for g in $RUN_N; do
		eval "m=\$M$g"
		eval "mb=\$M$BEST_N"
		awk -v m="$m" -v b="$mb" 'BEGIN { exit !(m < b) }' && BEST_N=$g
	done
fi
eval "S2=\$M$BEST_N"
eval "S8=\${M8:-}"

say "Result"
awk -v a="$S1" -v b="$S2" -v n="$BEST_N" -v p8="$P8" -v m8="$S8" -v all="${DEMO_BASELINES:-best}" 'BEGIN {
	how = " (best predicted, then run)"
	if (all == "all")
		how = " (best measured)"
	d = b - a
	word = "saved"
	if (d < 0) {
		d = -d
		word = "lost"
	}
	printf "  sched/saturn (planned techniques and GPU counts):     %7.1f s\n", a
	printf "  stock Slurm, best uniform request (gpu:%d, backfill): %7.1f s%s\n", n, b, how
	printf "  best uniform request: gpu:%d; Saturn / gpu:%d makespan ratio %.2f (%.1f s %s)\n", n, n, a / b, d, word
	g8 = p8
	if (m8 != "") {
		g8 = m8
		printf "  for reference, everyone asking gpu:8: %.1f s (measured), Saturn / gpu:8 ratio %.2f\n", m8, a / m8
	} else if (p8 != "")
		printf "  for reference, everyone asking gpu:8: %.0f s (predicted, not run), Saturn / gpu:8 ratio %.2f\n", p8, a / p8
	printf "demo: saturn=%.1f best=gpu:%d backfill=%.1f ratio=%.3f gpu8=%s\n", a, n, b, a / b, g8 }'
