#!/bin/sh
# reconfig-bench.sh - the restart's own gain (issue 23): the same batch,
# from the same first plan, run with and without --saturn-reconfigure on
# one sched/saturn cluster, so the difference is the reconfiguration alone.
# Not part of `make check`; prints figures for doc/benchmarks.md
# ("Reconfiguration: the restart's own gain").
#
# The scenario ("tail"): 2 nodes x 8 fake GPUs; another job holds 6 GPUs of
# each node with a 10-minute time limit but ends after BENCH_BLOCK_S (20)
# seconds. The batch: 4 tasks, 2 of a model that scales near-linearly
# (0.40 / 0.21 / 0.11 / 0.058 s per batch on 1 / 2 / 4 / 8 GPUs, 300
# batches) and 2 of one that scales sublinearly (0.20 / 0.12 / 0.085 /
# 0.075, 600 batches): 120 s each on 1 GPU. With 2 GPUs free per node for
# 10 minutes as far as the planner knows, its first plan is forced: each
# task on 1 GPU, makespan 120 s = the area bound (every task at its
# fewest GPU-seconds), whatever the solver's time or seed; the benchmark
# checks that both runs' first plans are the same (the logged plan line,
# and each task's technique, GPU count and node as released) and says so.
# When the other job ends, 12 GPUs free up: a reconfiguring run may
# restart the tasks on more GPUs; the other keeps them on 1 GPU.
#
# Every task runs under saturn-run (--direct) around a small program that
# sleeps its batches about 1 s at a time, reports progress, checkpoints on
# SIGUSR1 (one batch's time, then exit 75: RequeueExit=75, cred_expire=5)
# and resumes after BENCH_STARTUP (5) s. Both variants run on one cluster,
# one after the other, BENCH_RUNS (3) times, each with its own batch name
# and profile copy (no runtime feedback carried from one run to the next).
#
# Reported per run: the makespan of each variant; the first plans and
# whether they are identical; each restart with its expected gain (the
# plugin's "reconfiguring JobId=" line: the task's end before -> after,
# and the makespan's) against the realised gain (the task's end in the run
# without reconfiguration minus its end in the run with it, both from the
# submission); the latency from the GPUs' release (the other job's end) to
# the signal, the task's exit, Slurm's requeue, the re-hold, the release
# with its new option and the resumed task's start; and the decisions that
# restarted nothing although the restart would have shortened the plan
# (the plugin's debug "no reconfiguration (N candidate(s)): WHY" lines,
# with their gain), with why.
#
# usage (root): tests/bench/reconfig-bench.sh [BUILD_DIR]
# Environment: BENCH_RUNS (3), SATURN_PORT_BASE (18700), BENCH_BLOCK_S
#   (20), BENCH_STARTUP (5), BENCH_PARAMS (SchedulerParameters added to
#   the bench's: saturn_reconfigure_checkpoint=2,
#   saturn_reconfigure_startup=7, saturn_reconfigure_margin=10; the
#   plugin's defaults otherwise: saturn_interval 10, saturn_solver_time 2).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-${SATURN_BUILD:-/tmp/saturn-demo-build}}
BUILD=$(cd "$BUILD" && pwd)
RUNS=${BENCH_RUNS:-3}
BLOCK=${BENCH_BLOCK_S:-20}
STARTUP=${BENCH_STARTUP:-5}
[ "$(id -u)" = 0 ] || {
	echo "reconfig-bench: run as root" >&2
	exit 1
}
CL="$ROOT/scripts/cluster.sh"
export SATURN_PORT_BASE=${SATURN_PORT_BASE:-18700} SATURN_NODES=2 SATURN_GPUS_PER_NODE=8
export SATURN_PLUGIN_DIR="$BUILD/plugin/slurm" SATURN_SCHED=saturn SATURN_DEBUG=debug
export SATURN_REQUEUE_EXIT=75 SATURN_CRED_EXPIRE=5
export SATURN_CLUSTER_DIR=/tmp/reconfig-bench-$SATURN_PORT_BASE
export SATURN_SCHED_PARAMS="saturn_reconfigure_checkpoint=2,saturn_reconfigure_startup=7,saturn_reconfigure_margin=10${BENCH_PARAMS:+,$BENCH_PARAMS}"
W=$(mktemp -d /tmp/reconfig-bench.XXXXXX)
chmod 755 "$W"
trap 'sh "$CL" stop >/dev/null 2>&1 || true' EXIT INT TERM

echo "# reconfig-bench on $(uname -n), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# SchedulerParameters $SATURN_SCHED_PARAMS; other job ends after ${BLOCK}s; resume start-up ${STARTUP}s; work folder $W"

# the task program (as slurm-bench.sh's BENCH_CHECKPOINT=1): SPB BATCHES STARTUP
cat >"$W/child.sh" <<'EOC'
#!/bin/sh
spb=$1 batches=$2 startup=$3
b=${SATURN_RESUME_BATCH:-0}
b=${b%%.*}
ck=0
trap 'ck=1' USR1
exec 3>"${SATURN_PROGRESS_PIPE:-/dev/stdout}"
[ "$b" -gt 0 ] && sleep "$startup"
k=$(awk -v s="$spb" 'BEGIN { k = int(1 / s + 0.5); print k < 1 ? 1 : k }')
while [ "$b" -lt "$batches" ] && [ "$ck" = 0 ]; do
	n=$k
	[ $((b + n)) -le "$batches" ] || n=$((batches - b))
	sleep "$(awk -v s="$spb" -v n="$n" 'BEGIN { printf "%.3f", s * n }')" &
	p=$!
	wait $p || true
	if [ "$ck" = 1 ]; then
		kill $p 2>/dev/null || true
		break
	fi
	b=$((b + n))
	echo "SATURN_PROGRESS batches_done=$b batches_total=$batches sec_per_batch=$spb" >&3
done
if [ "$ck" = 1 ]; then
	sleep "$spb"
	echo "SATURN_CHECKPOINTED batch=$b" >&3
fi
exit 0
EOC
# tasks 0-1: near-linear model, 300 batches; 2-3: sublinear, 600 batches
cat >"$W/task.sh" <<EOS
#!/bin/sh
#SBATCH --time=10
task=\${SLURM_ARRAY_TASK_ID:-0}
gpus=\${SATURN_GPUS:-1}
if [ "\$task" -lt 2 ]; then
	batches=300
	case \$gpus in 1) spb=0.40 ;; 2) spb=0.21 ;; 4) spb=0.11 ;; *) spb=0.058 ;; esac
else
	batches=600
	case \$gpus in 1) spb=0.20 ;; 2) spb=0.12 ;; 4) spb=0.085 ;; *) spb=0.075 ;; esac
fi
echo "start task=\$task job=\$SLURM_JOB_ID restarts=\${SLURM_RESTART_COUNT:-0} gpus=\$gpus node=\$SLURMD_NODENAME at=\$(date +%s.%N)" >>"\$BENCH_LOG"
export PATH="$BUILD/runner:\$PATH"
srun saturn-run --direct --batches \$batches --grace 30 -- "$W/child.sh" "\$spb" \$batches $STARTUP
rc=\$?
[ \$rc = 0 ] || exit \$rc
echo "end task=\$task job=\$SLURM_JOB_ID restarts=\${SLURM_RESTART_COUNT:-0} gpus=\$gpus technique=\${SATURN_TECHNIQUE:-} node=\$SLURMD_NODENAME at=\$(date +%s.%N)" >>"\$BENCH_LOG"
EOS
chmod 755 "$W/child.sh" "$W/task.sh"
profile() { # BATCH
	cat <<EOP
{ "format": "saturn-profile/1", "batch": "$1", "created": 1764400000,
  "tasks": [
   { "signature": "linear/bs256", "task_ids": "0-1", "batches": 300, "options": [
      { "technique": "single", "gpus": 1, "sec_per_batch": 0.40, "status": "measured" },
      { "technique": "ddp", "gpus": 2, "sec_per_batch": 0.21, "status": "measured" },
      { "technique": "ddp", "gpus": 4, "sec_per_batch": 0.11, "status": "measured" },
      { "technique": "ddp", "gpus": 8, "sec_per_batch": 0.058, "status": "measured" } ] },
   { "signature": "sublinear/bs32", "task_ids": "2-3", "batches": 600, "options": [
      { "technique": "single", "gpus": 1, "sec_per_batch": 0.20, "status": "measured" },
      { "technique": "ddp", "gpus": 2, "sec_per_batch": 0.12, "status": "measured" },
      { "technique": "ddp", "gpus": 4, "sec_per_batch": 0.085, "status": "measured" },
      { "technique": "ddp", "gpus": 8, "sec_per_batch": 0.075, "status": "measured" } ] } ] }
EOP
}

sh "$CL" stop >/dev/null 2>&1 || true
sh "$CL" start 2>&1 | tail -n1
. "$SATURN_CLUSTER_DIR/env"
LOG="$SATURN_CLUSTER_DIR/log/slurmctld.log"
STATE="$SATURN_CLUSTER_DIR/state/saturn"
until [ -d "$STATE/profiles" ]; do sleep 0.2; done
[ -d "$STATE/profiles/0" ] || mkdir -m 700 "$STATE/profiles/0"

wait_empty() { # SECONDS
	n=0
	while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
		n=$((n + 1))
		[ $n -le $(($1 * 2)) ] || return 1
		sleep 0.5
	done
}

# one VARIANT (keep|rc) of run R: writes $W/R.VARIANT.{meta,log,ctld}
run_variant() {
	v=$1 r=$2
	batch="rcb-$v-$r"
	profile "$batch" >"$STATE/profiles/0/$batch.json"
	log="$W/$r.$v.log"
	: >"$log"
	chmod 666 "$log"
	mark=$(wc -l <"$LOG")
	blk=$(sbatch --parsable -N2 -w n1,n2 --gres=gpu:6 --time=10 -o /dev/null --wrap "sleep $BLOCK")
	until [ "$(squeue -h -j "$blk" -t R -o %i)" = "$blk" ]; do sleep 0.2; done
	opt=
	[ "$v" = rc ] && opt=--saturn-reconfigure
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086 # opt: no word or one
	arr=$(BENCH_LOG="$log" sbatch --parsable --saturn-batch="$batch" $opt --requeue --array=0-3 \
		--gres=gpu:1 -o /dev/null "$W/task.sh")
	wait_empty 600 || {
		echo "reconfig-bench: run $r $v did not finish in 10 minutes" >&2
		exit 1
	}
	sleep 1 # the last lines of the log
	tail -n +"$((mark + 1))" "$LOG" >"$W/$r.$v.ctld"
	echo "t0=$t0 blocker=$blk array=$arr load=$(cut -d' ' -f1 /proc/loadavg)" >"$W/$r.$v.meta"
}

for r in $(seq 1 "$RUNS"); do
	for v in keep rc; do
		run_variant "$v" "$r"
		echo "run $r $v: done ($(cat "$W/$r.$v.meta"))"
	done
done
cp "$LOG" "$W/slurmctld.log"
sh "$CL" stop >/dev/null 2>&1 || true
echo
python3 "$ROOT/tests/bench/reconfig-report.py" "$W" "$RUNS"
