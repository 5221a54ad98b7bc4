#!/bin/sh
# class-cluster.sh - a mixed sweep on a two-class cluster (not part of
# `make check`; figures for doc/benchmarks.md, "Two GPU classes on the
# Slurm test cluster").
#
# The cluster: SATURN_GPU_CLASSES="a100:pcie:2 h100:nvlink:2", 4 fake GPUs
# a node (n1-n2 a100 over PCIe, n3-n4 h100 over NVLink: 16 GPUs). The
# sweep: 12 tasks, 40 batches each; tasks 0-5 gpt2-medium (single on 1 GPU,
# ddp on 2 and 4), 6-11 gpt2-xl (fsdp on 2 and 4, out of memory on 1). On
# an h100 node every option runs CLASS_SPEEDUP (default 0.5) times the
# a100 time. Each task sleeps its true time (node class x GPUs), compressed
# by CLASS_SCALE (default 0.5; the profiles say the compressed times, so
# they are exact), and logs its end.
# Cases, each on a fresh cluster, one after the other:
#   saturn          sched/saturn, request --gres=gpu:1; the batch's profile
#                   (a100 numbers) and one per class (NAME@CLASS.json)
#   saturn-typed    the same with --gres=gpu:h100:1 (the user asks for h100)
#   saturn-noclass  sched/saturn, --gres=gpu:1, the batch's profile only (as
#                   if no class profiler job had run)
#   backfill-gpuN   stock sched/backfill, every task --gres=gpu:N (N 2, 4)
#   backfill-h100:N stock sched/backfill, --gres=gpu:h100:N (N 2, 4)
# Prints per case the makespan (last task end - submission, s); the last
# lines are "class: CASE SECONDS".
#
# usage (root, from the source tree): tests/bench/class-cluster.sh [BUILD_DIR]
# Environment: CLASS_CASES (space-separated, default all seven),
#   CLASS_SCALE (0.5), CLASS_SPEEDUP (0.5), SATURN_PORT_BASE (18600),
#   CLASS_KEEP=1 (keep the work folder with each case's slurmctld.log),
#   CLASS_SATURN_PARAMS (SchedulerParameters under sched/saturn, default
#   saturn_interval=2,saturn_solver_time=2).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
BUILD=$(cd "$BUILD" && pwd)
SCALE=${CLASS_SCALE:-0.5}
SPEEDUP=${CLASS_SPEEDUP:-0.5}
CASES=${CLASS_CASES:-saturn saturn-typed saturn-noclass backfill-gpu2 backfill-gpu4 backfill-h100:2 backfill-h100:4}
export SATURN_CLUSTER_DIR=/tmp/class-cluster-$$
export SATURN_PORT_BASE=${SATURN_PORT_BASE:-18600}
export SATURN_GPU_CLASSES="a100:pcie:2 h100:nvlink:2" SATURN_GPUS_PER_NODE=4
export SATURN_PLUGIN_DIR="$BUILD/plugin/slurm"
[ "$(id -u)" = 0 ] || {
	echo "class-cluster: run as root" >&2
	exit 1
}
[ -f "$SATURN_PLUGIN_DIR/sched_saturn.so" ] || {
	echo "class-cluster: no $SATURN_PLUGIN_DIR/sched_saturn.so (build first)" >&2
	exit 1
}
CL="$ROOT/scripts/cluster.sh"
trap 'sh "$CL" stop >/dev/null 2>&1 || true' EXIT INT TERM
W=$(mktemp -d /tmp/class-cluster.XXXXXX)
chmod 755 "$W"

# options FACTOR: the sweep's profile tasks, a100 seconds per batch x FACTOR
options() {
	awk -v f="$1" 'BEGIN {
	printf "{ \"signature\": \"gpt2-medium/bs16\", \"task_ids\": \"0-5\", \"batches\": 40, \"options\": [\n"
	printf "  { \"technique\": \"single\", \"gpus\": 1, \"sec_per_batch\": %.3f, \"status\": \"measured\" },\n", 1.00 * f
	printf "  { \"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": %.3f, \"status\": \"measured\" },\n", 0.56 * f
	printf "  { \"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": %.3f, \"status\": \"measured\" } ] },\n", 0.34 * f
	printf "{ \"signature\": \"gpt2-xl/bs8\", \"task_ids\": \"6-11\", \"batches\": 40, \"options\": [\n"
	printf "  { \"technique\": \"fsdp\", \"gpus\": 1, \"status\": \"oom\", \"reason\": \"CUDA out of memory (stand-in)\" },\n"
	printf "  { \"technique\": \"fsdp\", \"gpus\": 2, \"sec_per_batch\": %.3f, \"status\": \"measured\" },\n", 1.20 * f
	printf "  { \"technique\": \"fsdp\", \"gpus\": 4, \"sec_per_batch\": %.3f, \"status\": \"measured\" } ] }\n", 0.68 * f }'
}
# profile FILE CLASS FACTOR
profile() {
	{
		printf '{ "format": "saturn-profile/1", "batch": "mixed", "created": 1, "tasks": [\n'
		options "$3" | sed "s/\"batches\": 40,/\"batches\": 40, \"class\": \"$2\",/"
		printf '] }\n'
	} >"$1"
	chmod 600 "$1"
}

# the task: true seconds per batch by model, GPUs and the node's class
cat >"$W/task.sh" <<EOS
#!/bin/sh
#SBATCH --time=10
task=\${SLURM_ARRAY_TASK_ID:-0}
cvd=\${CUDA_VISIBLE_DEVICES:-}
gpus=\${SATURN_GPUS:-\$(echo "\$cvd" | tr ',' '\n' | grep -c .)}
case \$SLURMD_NODENAME in n1 | n2) f=1 ;; *) f=$SPEEDUP ;; esac
if [ "\$task" -lt 6 ]; then
	case \$gpus in 1) spb=1.00 ;; 2 | 3) spb=0.56 ;; *) spb=0.34 ;; esac
else
	case \$gpus in
	1) echo "task \$task: out of memory on 1 GPU" >&2; exit 1 ;;
	2 | 3) spb=1.20 ;; *) spb=0.68 ;;
	esac
fi
t=\$(awk -v s=\$spb -v f=\$f "BEGIN { printf \"%.3f\", 40 * s * f * $SCALE }")
start=\$(date +%s.%N)
sleep "\$t"
echo "task=\$task node=\$SLURMD_NODENAME gpus=\$gpus technique=\${SATURN_TECHNIQUE:-user} start=\$start end=\$(date +%s.%N)" >>"$W/tasks.log"
EOS
chmod 755 "$W/task.sh"

: >"$W/results"
for c in $CASES; do
	case $c in
	saturn) sched=saturn req=gpu:1 ;;
	saturn-typed) sched=saturn req=gpu:h100:1 ;;
	saturn-noclass) sched=saturn req=gpu:1 ;;
	backfill-gpu*) sched=backfill req=gpu:${c#backfill-gpu} ;;
	backfill-h100:*) sched=backfill req=gpu:h100:${c#backfill-h100:} ;;
	*) echo "class-cluster: unknown case $c" >&2; exit 1 ;;
	esac
	export SATURN_SCHED=$sched
	export SATURN_SCHED_PARAMS="${CLASS_SATURN_PARAMS:-saturn_interval=2,saturn_solver_time=2}"
	[ "$sched" = saturn ] || SATURN_SCHED_PARAMS=
	sh "$CL" stop >/dev/null 2>&1 || true
	rm -rf "$SATURN_CLUSTER_DIR"
	sh "$CL" start >/dev/null 2>&1 || { echo "class-cluster: $c: cluster did not start" >&2; exit 1; }
	. "$SATURN_CLUSTER_DIR/env"
	: >"$W/tasks.log"
	chmod 666 "$W/tasks.log"
	sat=
	if [ "$sched" = saturn ]; then
		pd="$SATURN_CLUSTER_DIR/state/saturn/profiles"
		n=0
		until [ -d "$pd" ]; do
			n=$((n + 1))
			[ $n -le 80 ] || { echo "class-cluster: no profiles folder" >&2; exit 1; }
			sleep 0.25
		done
		mkdir -p -m 700 "$pd/0"
		profile "$pd/0/mixed.json" a100x4-pcie "$SCALE"
		if [ "$c" != saturn-noclass ]; then
			profile "$pd/0/mixed@a100x4-pcie.json" a100x4-pcie "$SCALE"
			profile "$pd/0/mixed@h100x4-nvlink.json" h100x4-nvlink \
				"$(awk -v a="$SCALE" -v b="$SPEEDUP" 'BEGIN { print a * b }')"
		fi
		sat=--saturn-batch=mixed
	fi
	t0=$(date +%s.%N)
	sbatch --parsable $sat --array=0-11 --gres="$req" --time=10 -o /dev/null "$W/task.sh" >/dev/null
	n=0
	while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
		n=$((n + 1))
		[ $n -le 1200 ] || { echo "class-cluster: $c did not finish in 10 minutes" >&2; exit 1; }
		sleep 0.5
	done
	[ "$(grep -c '^task=' "$W/tasks.log")" = 12 ] ||
		{ echo "class-cluster: $c: $(grep -c '^task=' "$W/tasks.log") of 12 tasks logged" >&2; exit 1; }
	ms=$(awk -v t0="$t0" '{ for (i = 1; i <= NF; i++) if ($i ~ /^end=/) { e = substr($i, 5) + 0; if (e > m) m = e } }
		END { printf "%.1f\n", m - t0 }' "$W/tasks.log")
	echo "# $c (--gres=$req): $(sed 's/ start=.*//; s/task=//' "$W/tasks.log" | sort -n | tr '\n' ';')"
	[ "$sched" = saturn ] && grep -a 'sched/saturn: plan p' "$SATURN_CLUSTER_DIR/log/slurmctld.log" | head -n 1 | sed 's/^\[[^]]*\] /#   /'
	echo "class: $c $ms" | tee -a "$W/results"
	[ -z "${CLASS_KEEP:-}" ] || cp "$SATURN_CLUSTER_DIR/log/slurmctld.log" "$W/$c.slurmctld.log"
done
sh "$CL" stop >/dev/null 2>&1 || true
rm -rf "$SATURN_CLUSTER_DIR"
cat "$W/results"
if [ -n "${CLASS_KEEP:-}" ]; then echo "# kept: $W"; else rm -rf "$W"; fi
