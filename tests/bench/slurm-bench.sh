#!/bin/sh
# slurm-bench.sh - sched/saturn on the one-machine cluster (not part of
# `make check`; prints figures for doc/benchmarks.md, sections "Slurm").
#
#  1. makespan: a mixed-model sweep of 16 tasks (4 model sizes x 4 tasks;
#     gpt2-xl does not fit one GPU, llama-7b neither one nor two: their
#     profile has "oom" there), durations compressed to seconds, on 2 nodes
#     x 8 fake GPUs, in two variants: "exact" (the tasks run at the
#     profile's speed) and "true" (each model's true speed is its profile's
#     x a factor in 0.7 .. 1.5; the tasks sleep the true time and report it
#     in their progress files, the profile keeps the planned numbers). Each
#     variant runs under sched/saturn (default settings, runtime feedback
#     on; BENCH_SATURN_PARAMS=saturn_feedback=no runs it without, to
#     compare the two side by side) and under stock sched/backfill with
#     EVERY feasible uniform request gpu:N (N in 1, 2, 4, 8 that every task
#     can run with); the best one is the baseline, gpu:8 is printed for
#     reference. The floor is the clairvoyant plan: `saturn plan` offline on
#     the true speeds (no Slurm latency). BENCH_RUNS times (default 1).
#  2. latency (run first): stock sched/backfill on the same cluster, idle: submission
#     to start of a one-task job, and end of a job to start of the next one
#     waiting for its GPUs (jobs of -N2 --gres=gpu:8 one after the other).
#  3. locks: 1,000 pending Saturn tasks (one array, a profile covering all
#     of them) held behind a job that holds every GPU; the debug log of each
#     sched/saturn cycle gives the time under read locks (snapshot), under
#     write locks (apply) and the planning time; then the blocker ends and
#     the cycle that releases tasks is measured too.
#
# usage (root): tests/bench/slurm-bench.sh [BUILD_DIR]
# Environment: BENCH_RUNS, BENCH_VARIANTS ("exact true"), BENCH_SKIP_MAKESPAN=1,
#   BENCH_SKIP_LATENCY=1, BENCH_SKIP_LOCKS=1, BENCH_SCALE (task durations x
#   this, default 1), BENCH_SATURN_PARAMS (SchedulerParameters of the
#   makespan runs under sched/saturn, comma-separated saturn_* keys, e.g.
#   saturn_feedback=no; default none: the defaults), BENCH_SATURN_VARIANTS
#   (several sched/saturn settings side by side in one run, each against
#   the same uniform requests and clairvoyant plan: space-separated
#   LABEL=PARAMS, e.g. "fb=saturn_feedback=yes nofb=saturn_feedback=no";
#   default "saturn=$BENCH_SATURN_PARAMS"), SATURN_PORT_BASE (default
#   18200), BENCH_TIMES (log or sacct, default log: where the
#   makespans' task end times come from: the tasks' own log lines
#   (date +%s.%N) or Slurm's accounting (the clusters run with
#   SATURN_ACCOUNTING=1, i.e. slurmdbd and MariaDB; sacct's End, whole
#   seconds, so each makespan may read up to 1 s longer)),
#   BENCH_FAMILY (mixed: the models above; scaling: models whose scaling
#   differs more, see MODELS below), BENCH_BATCHES (batches per task,
#   default 50: longer tasks with the profile unchanged, unlike
#   BENCH_SCALE), BENCH_CHECKPOINT=1 (every task runs under saturn-run
#   and checkpoints on SIGUSR1, resumes from its progress; the clusters
#   get RequeueExit=75 and cred_expire=5, sched/saturn's jobs --requeue:
#   reconfiguration can act, e.g. a variant
#   "rc=saturn_reconfigure=yes,saturn_reconfigure_checkpoint=2,...";
#   BENCH_SCALE does not apply there), BENCH_STARTUP (seconds a resumed
#   task sleeps before its first batch, default 5).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-${SATURN_BUILD:-/tmp/saturn-demo-build}}
BUILD=$(cd "$BUILD" && pwd)
RUNS=${BENCH_RUNS:-1}
PORT=${SATURN_PORT_BASE:-18200}
[ "$(id -u)" = 0 ] || {
	echo "slurm-bench: run as root" >&2
	exit 1
}
CL="$ROOT/scripts/cluster.sh"
TIMES=${BENCH_TIMES:-log}
case $TIMES in
log) ;;
sacct) export SATURN_ACCOUNTING=1 ;;
*)
	echo "slurm-bench: BENCH_TIMES must be log or sacct" >&2
	exit 1
	;;
esac
SATURN_BIN="$BUILD/cli/saturn"
export SATURN_PORT_BASE=$PORT SATURN_NODES=2 SATURN_GPUS_PER_NODE=8
export SATURN_PLUGIN_DIR="$BUILD/plugin/slurm"

stats() { # numbers on stdin -> "n=N mean=M min=A max=B median=D"
	sort -n | awk '{ v[NR] = $1; s += $1 } END {
		if (NR == 0) { print "n=0"; exit }
		printf "n=%d mean=%.3f min=%.3f median=%.3f max=%.3f\n", NR, s / NR, v[1], v[int((NR + 1) / 2)], v[NR] }'
}
wait_empty() { # SECONDS
	n=0
	while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
		n=$((n + 1))
		[ $n -le $(($1 * 2)) ] || return 1
		sleep 0.5
	done
}
makespan() { # LOG SUBMIT_EPOCH: last end minus submission
	awk -v t0="$2" '{ for (i = 1; i <= NF; i++) if ($i ~ /^end=/) { e = substr($i, 5) + 0; if (e > m) m = e } }
		END { printf "%.1f\n", m - t0 }' "$1"
}
makespan_sacct() { # ARRAY_JOB SUBMIT_EPOCH N: last End in sacct minus submission
	k=0
	# the records of the last tasks reach slurmdbd shortly after their end
	while :; do
		ends=$(SLURM_TIME_FORMAT=%s sacct -n -X -P -j "$1" -o End 2>/dev/null | grep -c '^[0-9][0-9]*$' || true)
		[ "$ends" -ge "$3" ] && break
		k=$((k + 1))
		[ $k -le 240 ] || {
			echo "slurm-bench: sacct shows $ends of $3 task ends of job $1 after 120 s" >&2
			return 1
		}
		sleep 0.5
	done
	SLURM_TIME_FORMAT=%s sacct -n -X -P -j "$1" -o End | awk -v t0="$2" '/^[0-9]+$/ { if ($1 > m) m = $1 } END { printf "%.1f\n", m - t0 }'
}
cluster_start() { # SCHED PARAMS DIR
	export SATURN_SCHED=$1 SATURN_SCHED_PARAMS=$2 SATURN_CLUSTER_DIR=$3
	sh "$CL" stop >/dev/null 2>&1 || true
	sh "$CL" start 2>&1 | tail -n1
	. "$SATURN_CLUSTER_DIR/env"
}
trap 'sh "$CL" stop >/dev/null 2>&1 || true' EXIT INT TERM

echo "# slurm-bench on $(uname -n), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg), task times from $TIMES"

# The mixed sweep: per model, 4 tasks, 50 batches, the profile's seconds per
# batch at 1/2/4/8 GPUs (none: out of memory) and the "true" variant's
# factor. Task ids: model k has tasks 4k .. 4k+3.
FAMILY=${BENCH_FAMILY:-mixed}
case $FAMILY in
mixed)
	MODELS='bert-large/bs32  0.20 0.12 0.085 0.075 0.7
gpt2-medium/bs16 0.40 0.22 0.13  0.10  1.5
gpt2-xl/bs8      none 0.60 0.34  0.22  0.9
llama-7b/bs4     none none 0.70  0.42  1.3'
	;;
scaling)
	# Models whose scaling differs as it does in real sweeps: a
	# data-parallel CNN that is compute-bound and scales near-linearly
	# (ResNet-50 with DDP over NVLink: ~95% efficiency per doubling); a
	# small LSTM language model whose step is latency- and
	# all-reduce-bound, flat beyond one GPU; BERT-large fine-tuning,
	# sublinear beyond 2 GPUs (as in the first family); a 7B decoder that
	# needs FSDP over at least 4 GPUs to fit (optimizer state), then
	# scales sublinearly. True factors as in the first family's range.
	MODELS='resnet50/bs256   0.40 0.21 0.11  0.058 0.7
lstm-lm/bs64     0.10 0.09 0.085 0.08  1.5
bert-large/bs32  0.20 0.12 0.085 0.075 1.3
llama-7b/bs4     none none 0.70  0.42  0.9'
	;;
*)
	echo "slurm-bench: BENCH_FAMILY must be mixed or scaling" >&2
	exit 1
	;;
esac
TASKS=16
BATCHES=${BENCH_BATCHES:-50}
CKPT=${BENCH_CHECKPOINT:-0}
STARTUP=${BENCH_STARTUP:-5}
if [ "$CKPT" = 1 ]; then
	# RequeueExit=75 and the shortest requeue delay cluster.sh allows
	# (cred_expire + 1 = 6 s), for every cluster of the run alike
	export SATURN_REQUEUE_EXIT=75 SATURN_CRED_EXPIRE=5
fi
# work folder: new and private to this run (profiles, task scripts, logs,
# plans); kept at the end for a look at the task logs
W=$(mktemp -d /tmp/slurm-bench.XXXXXX)
chmod 755 "$W"
echo "# work folder: $W"
# the task program under saturn-run (BENCH_CHECKPOINT=1): SPB BATCHES
# STARTUP; sleeps the batches from SATURN_RESUME_BATCH on, about 1 s at a
# time, reporting progress on SATURN_PROGRESS_PIPE; on SIGUSR1 it saves a
# checkpoint (one batch's time) and exits; a resumed start first sleeps
# STARTUP s (loading the checkpoint, rebuilding the process group; the
# first start's is taken as part of the profile's time, as before)
cat >"$W/child.sh" <<'EOC'
#!/bin/sh
spb=$1 batches=$2 startup=$3
b=${SATURN_RESUME_BATCH:-0}
b=${b%%.*}
ck=0
trap 'ck=1' USR1
exec 3>"${SATURN_PROGRESS_PIPE:-/dev/stdout}"
[ "$b" -gt 0 ] && sleep "$startup"
# batches per sleep: about 1 s of work
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
	sleep "$spb" # a checkpoint costs about one batch
	echo "SATURN_CHECKPOINTED batch=$b" >&3
fi
exit 0
EOC
chmod 755 "$W/child.sh"

# gen VARIANT: $W/VARIANT.profile.json (planned), .truth.problem.json
# (true speeds, for the clairvoyant plan), .sbatch (sleeps the true time)
gen() {
	echo "$MODELS" | python3 -c '
import json, sys
variant, batches = sys.argv[1], int(sys.argv[2])
tasks, cases = [], []
for k, line in enumerate(l for l in sys.stdin if l.strip()):
    f = line.split()
    sig, spb, fac = f[0], f[1:5], float(f[5]) if variant == "true" else 1.0
    opts = []
    for g, v in zip((1, 2, 4, 8), spb):
        tech = "single" if g == 1 else ("ddp" if sig.startswith(("bert", "gpt2-medium", "resnet", "lstm")) else "fsdp")
        if v == "none":
            opts.append({"technique": tech, "gpus": g, "status": "oom", "reason": "CUDA out of memory (stand-in)"})
        else:
            opts.append({"technique": tech, "gpus": g, "sec_per_batch": float(v), "status": "measured"})
            cases.append("%d) case $gpus in %d) spb=%.4f t=%s ;; esac ;;" % (k, g, float(v) * fac, tech))
    tasks.append({"signature": sig, "task_ids": "%d-%d" % (4 * k, 4 * k + 3), "batches": batches, "options": opts})
prof = {"format": "saturn-profile/1", "batch": "mixed-" + variant, "created": 1764400000, "tasks": tasks}
json.dump(prof, open(sys.argv[3] + ".profile.json", "w"), indent=1)
# one case per (model, gpus): merge into a case per model
by = {}
for c in cases:
    k = c.split(")")[0]
    by.setdefault(k, []).append(c[c.index("case $gpus in") + len("case $gpus in"):c.rindex("esac")].strip())
with open(sys.argv[3] + ".cases", "w") as out:
    for k, arms in by.items():
        out.write("%s) case $gpus in %s esac ;;\n" % (k, " ".join(arms)))
' "$1" "$BATCHES" "$W/$1"
	python3 "$ROOT/contrib/demo/profile2problem.py" "$W/$1.profile.json" >"$W/$1.problem.json"
	scales=$(echo "$MODELS" | awk -v v="$1" '{ printf " --scale %s=%s", $1, v == "true" ? $6 : 1 }')
	# shellcheck disable=SC2086 # word splitting of the options is wanted
	python3 "$ROOT/contrib/demo/profile2problem.py" $scales "$W/$1.profile.json" >"$W/$1.truth.problem.json"
	{
		cat <<EOS
#!/bin/sh
#SBATCH --time=10
# one task of the mixed sweep ($1): sleeps $BATCHES batches x the true
# seconds per batch of its model at the GPUs it runs with, in 10 chunks,
# reporting progress (its true speed) after each.
task=\${SLURM_ARRAY_TASK_ID:-0}
cvd=\${CUDA_VISIBLE_DEVICES:-}
ngpus=\$(echo "\$cvd" | tr ',' '\n' | grep -c .)
gpus=\${SATURN_GPUS:-\$ngpus}
spb=
case \$((task / 4)) in
EOS
		cat "$W/$1.cases"
		cat <<'EOS'
esac
[ -n "$spb" ] || { echo "task $task: out of memory on $gpus GPUs" >&2; exit 1; }
EOS
		cat <<EOS
batches=$BATCHES
EOS
		if [ "$CKPT" = 1 ]; then
			cat <<EOS
# under saturn-run: checkpoints on SIGUSR1 (exit 75, requeued), resumes
# from the batch in its progress file
export PATH="$BUILD/runner:\$PATH"
srun saturn-run --direct --batches \$batches --grace 30 -- "$W/child.sh" "\$spb" \$batches $STARTUP
rc=\$?
[ \$rc = 0 ] || exit \$rc
end=\$(date +%s.%N)
echo "task=\$task job=\$SLURM_JOB_ID node=\$SLURMD_NODENAME gpus=\$gpus technique=\${SATURN_TECHNIQUE:-\$t} restarts=\${SLURM_RESTART_COUNT:-0} end=\$end" >>"\$BENCH_LOG"
EOS
		else
			cat <<EOS
chunk=\$(awk -v b=\$batches -v s=\$spb "BEGIN { printf \"%.3f\", b * s * ${BENCH_SCALE:-1} / 10 }")
start=\$(date +%s.%N)
for i in 1 2 3 4 5 6 7 8 9 10; do
	sleep "\$chunk"
	if [ -n "\${SATURN_PROGRESS_FILE:-}" ]; then
		printf '{"format":"saturn-progress/1","job_id":%s,"batches_done":%s,"batches_total":%s,"sec_per_batch":%s,"updated":%s}\n' \\
			"\$SLURM_JOB_ID" \$((batches * i / 10)) "\$batches" "\$spb" "\$(date +%s)" >"\$SATURN_PROGRESS_FILE.tmp.\$\$" &&
			mv "\$SATURN_PROGRESS_FILE.tmp.\$\$" "\$SATURN_PROGRESS_FILE"
	fi
done
end=\$(date +%s.%N)
echo "task=\$task job=\$SLURM_JOB_ID node=\$SLURMD_NODENAME gpus=\$gpus technique=\${SATURN_TECHNIQUE:-\$t} start=\$start end=\$end" >>"\$BENCH_LOG"
EOS
		fi
	} >"$W/$1.sbatch"
	chmod 644 "$W/$1.sbatch" "$W/$1.profile.json"
}

# plan_makespan PROBLEM: the planner's makespan (seconds) for PROBLEM, 5 s
plan_makespan() {
	"$SATURN_BIN" plan --time-limit 5 "$1" | sed -n 's/^Makespan:.*(\([0-9.]*\) s)$/\1/p'
}

# run_sweep VARIANT LABEL SBATCH_OPTIONS...: submit, wait, print makespan
run_sweep() {
	v=$1 label=$2
	shift 2
	log="$W/$v-$label-$r.log"
	: >"$log"
	chmod 666 "$log"
	t0=$(date +%s.%N)
	arr=$(BENCH_LOG="$log" sbatch --parsable --array=0-$((TASKS - 1)) -o /dev/null "$@" "$W/$v.sbatch")
	wait_empty 900 || {
		echo "slurm-bench: $v $label did not finish in 15 minutes" >&2
		exit 1
	}
	n=$(grep -c '^task=' "$log" || true)
	[ "$n" = "$TASKS" ] || {
		echo "slurm-bench: $v $label: $n of $TASKS tasks logged" >&2
		exit 1
	}
	if [ "$TIMES" = sacct ]; then
		makespan_sacct "$arr" "$t0" "$TASKS"
	else
		makespan "$log" "$t0"
	fi
}

if [ "${BENCH_SKIP_LATENCY:-0}" != 1 ]; then
	echo
	echo "== Slurm's start latency (stock sched/backfill, idle cluster)"
	cluster_start backfill "" /tmp/slurm-bench-backfill
	L="$W/latency.log"
	: >"$L"
	chmod 666 "$L"
	for _ in 1 2 3 4 5 6; do
		t0=$(date +%s.%N)
		sbatch --parsable --gres=gpu:8 -o /dev/null --wrap "echo sub=$t0 start=\$(date +%s.%N) >>$L" >/dev/null
		wait_empty 60 || true
		sleep 1
	done
	awk '{ split($1, a, "="); split($2, b, "="); print b[2] - a[2] }' "$L" >"$W/lat-submit"
	echo "  submission to start, s: $(stats <"$W/lat-submit")"
	: >"$L"
	for _ in 1 2 3 4 5 6 7 8; do
		sbatch --parsable -N2 --gres=gpu:8 -o /dev/null --wrap "echo start=\$(date +%s.%N) >>$L; sleep 3; echo end=\$(date +%s.%N) >>$L" >/dev/null
	done
	wait_empty 120 || true
	awk -F= '$1 == "end" { e = $2 } $1 == "start" && e { print $2 - e }' "$L" >"$W/lat-next"
	echo "  end of a job to start of the next (all GPUs each), s: $(stats <"$W/lat-next")"
	sh "$CL" stop >/dev/null 2>&1
fi

if [ "${BENCH_SKIP_MAKESPAN:-0}" != 1 ]; then
	VARIANTS=${BENCH_VARIANTS:-exact true}
	SATS=${BENCH_SATURN_VARIANTS:-saturn=${BENCH_SATURN_PARAMS:-}}
	REQ=
	[ "$CKPT" = 1 ] && REQ=--requeue
	for v in $VARIANTS; do
		gen "$v"
	done
	# the variants share their options (only the speeds differ)
	FEAS=$(python3 "$ROOT/contrib/demo/profile2problem.py" --feasible "$W/${VARIANTS%% *}.profile.json")
	echo "models (profile s/batch at 1/2/4/8 GPUs, true-variant factor):"
	echo "$MODELS" | sed 's/^/  /'
	echo "feasible uniform requests: $(echo "$FEAS" | sed 's/\([0-9]*\)/gpu:\1/g')"
	for r in $(seq 1 "$RUNS"); do
		# sched/saturn (defaults, or BENCH_SATURN_PARAMS, or each of
		# BENCH_SATURN_VARIANTS), both variants on one cluster each
		for sv in $SATS; do
			label=${sv%%=*} params=${sv#*=}
			cluster_start saturn "$params" /tmp/slurm-bench-saturn
			[ -z "$params" ] || echo "  sched/saturn ($label) with SchedulerParameters $params"
			STATE="$SATURN_CLUSTER_DIR/state/saturn"
			until [ -d "$STATE/profiles" ]; do sleep 0.2; done
			[ -d "$STATE/profiles/0" ] || mkdir -m 700 "$STATE/profiles/0"
			for v in $VARIANTS; do
				cp "$W/$v.profile.json" "$STATE/profiles/0/mixed-$v.json"
				mark=$(wc -l <"$SATURN_CLUSTER_DIR/log/slurmctld.log")
				# shellcheck disable=SC2086 # REQ: no word or one
				m=$(run_sweep "$v" "$label" --saturn-batch="mixed-$v" --gres=gpu:8 $REQ)
				echo "$m" >"$W/$v.$label.$r"
				echo "run $r $v: sched/saturn ($label) ${m}s"
				tail -n +"$((mark + 1))" "$SATURN_CLUSTER_DIR/log/slurmctld.log" | grep -a "sched/saturn: plan p" >"$W/$v.plans-$label.$r" || true
				sed -n '1s/^\[[^]]*\] /  first plan: /p' "$W/$v.plans-$label.$r"
				echo "  plans made during the run: $(wc -l <"$W/$v.plans-$label.$r")"
				if [ "$CKPT" = 1 ]; then
					nrc=$(tail -n +"$((mark + 1))" "$SATURN_CLUSTER_DIR/log/slurmctld.log" | grep -ac 'reconfiguring JobId=' || true)
					nrs=$(grep -c 'restarts=[1-9]' "$W/$v-$label-$r.log" || true)
					echo "  reconfigurations decided: $nrc; tasks that ended after a restart: $nrs"
				fi
			done
			cp "$SATURN_CLUSTER_DIR/log/slurmctld.log" "$W/$label-slurmctld-$r.log" 2>/dev/null || true
			sh "$CL" stop >/dev/null 2>&1
		done
		# stock Slurm, every feasible uniform request
		cluster_start backfill "" /tmp/slurm-bench-backfill
		for v in $VARIANTS; do
			for g in $FEAS; do
				m=$(run_sweep "$v" "gpu$g" --gres=gpu:$g)
				echo "$m" >"$W/$v.gpu$g.$r"
				echo "run $r $v: stock backfill, every task gpu:$g: ${m}s"
			done
		done
		sh "$CL" stop >/dev/null 2>&1
	done
	echo
	echo "== makespan, $RUNS run(s) per figure (mean), seconds; ratios of the means"
	for v in $VARIANTS; do
		best='' bestg=''
		U8=
		line=
		for g in $FEAS; do
			m=$(cat "$W/$v.gpu$g."* | stats | sed 's/.*mean=\([0-9.]*\).*/\1/')
			eval "U$g=$m"
			line="$line gpu:$g=$m"
			if [ -z "$best" ] || awk -v a="$m" -v b="$best" 'BEGIN { exit !(a < b) }'; then
				best=$m bestg=$g
			fi
		done
		"$SATURN_BIN" plan --json --time-limit 5 "$W/$v.truth.problem.json" >"$W/$v.truth.plan.json"
		clair=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["makespan_s"])' "$W/$v.truth.plan.json")
		# Slurm's latency along the clairvoyant plan: submission to first
		# start, then one end-to-next-start per task in the longest chain of
		# tasks one after the other on one GPU (medians measured above;
		# 1 s each when the latency part was skipped)
		chain=$(python3 -c '
import json, sys
c = {}
for a in json.load(open(sys.argv[1]))["tasks"]:
    for g in a["gpu_ids"]:
        c[(a["node"], g)] = c.get((a["node"], g), 0) + 1
print(max(c.values()) if c else 0)' "$W/$v.truth.plan.json")
		ls=$( [ -s "$W/lat-submit" ] && stats <"$W/lat-submit" | sed 's/.*median=\([0-9.]*\).*/\1/' || echo 1)
		ln=$( [ -s "$W/lat-next" ] && stats <"$W/lat-next" | sed 's/.*median=\([0-9.]*\).*/\1/' || echo 1)
		floor=$(awk -v c="$clair" -v k="$chain" -v a="$ls" -v b="$ln" 'BEGIN { printf "%.1f", 1.05 * c + a + (k - 1) * b }')
		planned=$(plan_makespan "$W/$v.problem.json")
		u8=$U8
		echo "$v: stock backfill$line; best uniform gpu:$bestg"
		for sv in $SATS; do
			label=${sv%%=*}
			sat=$(cat "$W/$v.$label."* | stats | sed 's/.*mean=\([0-9.]*\).*/\1/')
			echo " $v, sched/saturn ($label): $sat"
			awk -v s="$sat" -v b="$best" -v g="$bestg" -v u8="$u8" -v c="$clair" -v p="$planned" -v k="$chain" -v f="$floor" 'BEGIN {
				printf "  saturn / best uniform (gpu:%d): %.3f (target <= 0.85: %s by %.3f)\n", g, s / b, s / b <= 0.85 ? "met" : "missed", s / b - 0.85
				if (u8 != "") printf "  saturn / gpu:8 (reference):     %.3f\n", s / u8
				printf "  clairvoyant plan (offline, true speeds): %.1f s; saturn / clairvoyant %.3f\n", c, s / c
				printf "  target 1.05 x clairvoyant + latency (%d tasks in its longest chain): %.1f s: %s by %.1f s\n", k, f, s <= f ? "met" : "missed", s - f }'
			echo "$v $label=$sat best=gpu:$bestg backfill=$best clairvoyant=$clair" >>"$W/summary"
		done
		echo "  plan from the profile (offline): $planned s"
	done
fi

[ "${BENCH_SKIP_LOCKS:-0}" = 1 ] && exit 0

export SATURN_CLUSTER_DIR=/tmp/slurm-bench-locks SATURN_SCHED=saturn SATURN_DEBUG=debug
export SATURN_SCHED_PARAMS="saturn_interval=2,saturn_solver_time=2"
sh "$CL" stop >/dev/null 2>&1 || true
sh "$CL" start 2>&1 | tail -n1
. "$SATURN_CLUSTER_DIR/env"
LOG="$SATURN_CLUSTER_DIR/log/slurmctld.log"
STATE="$SATURN_CLUSTER_DIR/state/saturn"
until [ -d "$STATE/profiles" ]; do sleep 0.2; done
mkdir -p -m 700 "$STATE/profiles/0" # PROFILE_DIR/UID/NAME.json, UID 0: root submits
cat >"$STATE/profiles/0/bench.json" <<'EOP'
{ "format": "saturn-profile/1", "batch": "bench", "created": 1,
  "tasks": [ { "signature": "m/bs8", "task_ids": "0-999", "batches": 100,
    "options": [ { "technique": "single", "gpus": 1, "sec_per_batch": 1.0, "status": "measured" },
                 { "technique": "ddp", "gpus": 2, "sec_per_batch": 0.55, "status": "measured" },
                 { "technique": "ddp", "gpus": 4, "sec_per_batch": 0.32, "status": "measured" },
                 { "technique": "fsdp", "gpus": 8, "sec_per_batch": 0.21, "status": "measured" } ] } ] }
EOP
blocker=$(sbatch --parsable -N2 --exclusive --gres=gpu:8 -o /dev/null --wrap 'sleep 600')
until squeue -h -j "$blocker" -t R -o %i | grep -q .; do sleep 0.2; done
mark=$(wc -l <"$LOG")
job=$(sbatch --parsable --saturn-batch=bench --array=0-999 --gres=gpu:1 --time=10 -o /dev/null --wrap 'sleep 1')
echo "1000 tasks submitted (array $job), held behind job $blocker; measuring cycles for 30 s"
sleep 30
tail -n +"$mark" "$LOG" | grep -a 'sched/saturn: cycle: 1000 Saturn task' >/tmp/slurm-bench-cycles.$$ || true
echo "cycles measured: $(wc -l </tmp/slurm-bench-cycles.$$)"
echo "  under read locks (snapshot), ms: $(sed -n 's/.*snapshot \([0-9.]*\) ms under read locks.*/\1/p' /tmp/slurm-bench-cycles.$$ | stats)"
echo "  waiting for read locks, ms:      $(sed -n 's/.*(waited \([0-9.]*\) ms).*/\1/p' /tmp/slurm-bench-cycles.$$ | stats)"
echo "  under write locks (apply), ms:   $(sed -n 's/.*apply \([0-9.]*\) ms under write locks.*/\1/p' /tmp/slurm-bench-cycles.$$ | stats)"
echo "  plan (build+solve, no locks), ms: $(sed -n 's/.*plan \([0-9.]*\) ms, apply.*/\1/p' /tmp/slurm-bench-cycles.$$ | stats)"
echo "  cycle latency (snapshot+plan+apply), ms: $(sed -n 's/.*snapshot \([0-9.]*\) ms under read locks (waited \([0-9.]*\) ms), plan \([0-9.]*\) ms, apply \([0-9.]*\) ms.*/\1 \2 \3 \4/p' /tmp/slurm-bench-cycles.$$ | awk '{ print $1 + $2 + $3 + $4 }' | stats)"
mark=$(wc -l <"$LOG")
scancel "$blocker"
sleep 8
tail -n +"$mark" "$LOG" | grep -a 'sched/saturn: cycle: .* released' | grep -v ' 0 released' >/tmp/slurm-bench-rel.$$ || true
echo "cycles that released tasks: $(wc -l </tmp/slurm-bench-rel.$$)"
sed -n 's/.*cycle: \([0-9]*\) Saturn.*apply \([0-9.]*\) ms under write locks, \([0-9]*\) released.*/  \3 released (of \1): \2 ms under write locks/p' /tmp/slurm-bench-rel.$$ | head -5
grep -a 'sched/saturn: plan p' "$LOG" | tail -n 1 | sed 's/^\[[^]]*\] /  /'
rm -f /tmp/slurm-bench-cycles.$$ /tmp/slurm-bench-rel.$$
scancel "$job" 2>/dev/null || true
