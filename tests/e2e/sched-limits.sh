#!/bin/sh
# sched-limits.sh - association limits under sched/saturn, on a cluster with
# accounting (cluster.sh SATURN_ACCOUNTING=1) and
# AccountingStorageEnforce=associations,limits,qos. User A
# ($HOSTILE_USER) has GrpTRES=gres/gpu=4 and MaxJobs=2 on its association
# (sacctmgr, after the start: slurmdbd passes it to slurmctld); user B
# ($VICTIM_USER) has no limit. One node of 8 GPUs. A submits 6 tasks, then
# B 4; each task may take 1, 2 or 4 GPUs (8, 5 or 4 s, as its profile
# says). Without the limits the plan would run A's tasks on 1 GPU each, 4
# or more at once.
#
# Sampled every half second while the batches run (squeue, the persisted
# plan): A never has more than 2 tasks or 4 GPUs running or released
# (held tasks are not counted), Slurm never keeps one of A's released tasks
# pending for A's limits (AssocGrpGRES, AssocMaxJobsLimit: Saturn released
# it within them), and no persisted plan has more than 2 of A's tasks or 4
# of A's GPUs at the same time. B's batch is not slowed by A's: its first
# task starts within 20 s of its submission and its last ends no later
# than A's last. Every task of both users runs exactly once, on the GPUs
# its plan gave it.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
. "$(dirname "$0")/mu-lib.sh"
mu_accounting associations,limits,qos
MAXG=4
MAXJ=2
sched_setup 93 "saturn_interval=2"
mu_users
scontrol show config | grep -q 'AccountingStorageEnforce *= .*limits' ||
	fail "AccountingStorageEnforce has no limits: $(scontrol show config | grep AccountingStorageEnforce)"

sacctmgr -i modify user "$HOSTILE_USER" set GrpTRES=gres/gpu=$MAXG MaxJobs=$MAXJ >/dev/null ||
	fail "sacctmgr modify user $HOSTILE_USER"
# slurmdbd passes the change to slurmctld's assoc_mgr
wait_for 60 sh -c "scontrol show assoc_mgr users=$HOSTILE_USER flags=assoc 2>/dev/null |
	grep -q 'GrpTRES=.*gres/gpu=$MAXG(' && scontrol show assoc_mgr users=$HOSTILE_USER flags=assoc |
	grep -q 'MaxJobs=$MAXJ('" ||
	fail "slurmctld does not have A's limits: $(scontrol show assoc_mgr users=$HOSTILE_USER flags=assoc 2>&1 | grep -i 'user=\|grptres\|maxjobs')"
note "A ($HOSTILE_USER): GrpTRES=gres/gpu=$MAXG MaxJobs=$MAXJ"

opts='"options": [ { "technique": "ddp", "gpus": 1, "sec_per_batch": 0.2, "status": "measured" },
	{ "technique": "ddp", "gpus": 2, "sec_per_batch": 0.125, "status": "measured" },
	{ "technique": "fsdp", "gpus": 4, "sec_per_batch": 0.1, "status": "measured" } ]'
mu_profile "$A" lim 0-5 "$opts"
mu_profile "$B" free 0-3 "$opts"

# a task takes what its profile says for its GPU count (40 batches)
cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
g=\${SATURN_GPUS:-0}
n=\$(echo "\${CUDA_VISIBLE_DEVICES:-}" | tr ',' '\n' | grep -c .)
start=\$(date +%s.%N)
case \$g in 1) sleep 8 ;; 2) sleep 5 ;; *) sleep 4 ;; esac
echo "user=\$(id -u) batch=\${SATURN_BATCH:-} task=\${SLURM_ARRAY_TASK_ID:-0} job=\$SLURM_JOB_ID saturn_gpus=\$g gpus=\$n start=\$start end=\$(date +%s.%N)" >>$JOBLOG
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

# sampler: A's tasks running and released (pending, priority > 0) with
# their GPUs, the reasons of A's released tasks; each new persisted plan
SAMPLES="$SATURN_CLUSTER_DIR/samples.txt"
PLANS="$SATURN_CLUSTER_DIR/plans"
mkdir -p "$PLANS"
: >"$SAMPLES"
sampler() {
	k=0
	while [ -d "$PLANS" ] && [ ! -e "$SATURN_CLUSTER_DIR/sampler.stop" ]; do
		squeue -h -u "$HOSTILE_USER" -t PD,R,CF -o '%i|%T|%Q|%b|%r' 2>/dev/null |
			awk -F'|' -v now="$(date +%s.%N)" '
				function gpus(b) { if (match(b, /gpu[:=][0-9]+/)) return substr(b, RSTART + 4, RLENGTH - 4) + 0; return 0 }
				$2 == "RUNNING" || $2 == "CONFIGURING" { rj++; rg += gpus($4) }
				$2 == "PENDING" && $3 + 0 > 0 { pj++; pg += gpus($4); why = why " " $1 ":" $5 }
				END { printf "%s run=%d/%d released=%d/%d%s\n", now, rj, rg, pj, pg, why }' >>"$SAMPLES"
		if [ -s "$STATE_DIR/state.json" ] && ! cmp -s "$STATE_DIR/state.json" "$PLANS/last.json"; then
			cp "$STATE_DIR/state.json" "$PLANS/last.json" 2>/dev/null &&
				cp "$PLANS/last.json" "$PLANS/plan-$k.json" && k=$((k + 1))
		fi
		sleep 0.5
	done
}
sampler &
SAMPLER=$!
stop_sampler() {
	touch "$SATURN_CLUSTER_DIR/sampler.stop"
	wait "$SAMPLER" 2>/dev/null || true
}

ja=$(as_attacker sbatch --parsable -J lim --saturn-batch=lim --array=0-5 --gres=gpu:$MAXG --time=2 \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || { stop_sampler; fail "sbatch as $HOSTILE_USER"; }
tb=$(date +%s.%N)
jb=$(as_victim sbatch --parsable -J free --saturn-batch=free --array=0-3 --gres=gpu:8 --time=2 \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || { stop_sampler; fail "sbatch as $VICTIM_USER"; }
note "A: array $ja; B: array $jb submitted at $tb"
wait_for 150 queue_empty || { stop_sampler; fail "the batches did not finish"; }
stop_sampler
note "job log:"
cat "$JOBLOG"

# --- every task once, on its planned GPUs ----------------------------------
for u in "$A:lim:6" "$B:free:4"; do
	uid=${u%%:*}
	rest=${u#*:}
	bn=${rest%%:*}
	n=${rest#*:}
	for i in $(seq 0 $((n - 1))); do
		c=$(grep -c "^user=$uid batch=$bn task=$i " "$JOBLOG" || true)
		[ "$c" = 1 ] || fail "user $uid batch $bn task $i ran $c times (expected exactly once)"
	done
done
[ "$(grep -c '^user=' "$JOBLOG")" = 10 ] || fail "$(grep -c '^user=' "$JOBLOG") task runs logged, expected 10"
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	if (v["saturn_gpus"] != v["gpus"] || v["gpus"] + 0 < 1) { print; bad = 1 } } END { exit bad }' "$JOBLOG" ||
	fail "a task ran on other GPUs than its plan gave it (above)"

# --- A within its limits at every sample ------------------------------------
nsamp=$(wc -l <"$SAMPLES")
[ "$nsamp" -ge 10 ] || fail "only $nsamp squeue samples"
over=$(awk -v mj=$MAXJ -v mg=$MAXG '{
	split($2, r, "[=/]"); split($3, p, "[=/]")
	if (r[2] + p[2] > mj || r[3] + p[3] > mg) print }' "$SAMPLES")
[ -z "$over" ] || fail "A over its limits (MaxJobs=$MAXJ, GrpTRES=gres/gpu=$MAXG) running + released:
$over"
held=$(grep -E 'Assoc(GrpGRES|GrpGres|MaxJobsLimit|GrpTRES|GrpJobs)|AssocGrp|AssocMax' "$SAMPLES" || true)
[ -z "$held" ] || fail "Slurm kept released tasks of A pending for A's limits:
$held"
maxrun=$(awk '{ split($2, r, "[=/]"); if (r[2] > m) m = r[2] } END { print m + 0 }' "$SAMPLES")
note "$nsamp samples; A's running tasks at most $maxrun at once"
[ "$maxrun" -ge 1 ] || fail "no sample saw a task of A running"
# the job log agrees: never more than MAXJ of A's tasks or MAXG GPUs at once
# (an end before a start at the same time)
olog=$(awk -v u="$A" '$1 == "user=" u { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		print v["start"], 1, v["gpus"]; print v["end"], -1, -v["gpus"] }' "$JOBLOG" |
	sort -k1,1n -k2,2n | awk '{ j += $2; g += $3; if (j > mj) mj = j; if (g > mg) mg = g } END { print mj + 0, mg + 0 }')
note "A's tasks by the job log: at most $olog (tasks GPUs) at once"
set -- $olog
[ "$1" -le $MAXJ ] && [ "$2" -le $MAXG ] || fail "A's tasks ran $1 at once on $2 GPUs (limits $MAXJ, $MAXG)"

# --- every persisted plan within A's limits ----------------------------------
nplans=$(ls "$PLANS"/plan-*.json 2>/dev/null | wc -l)
[ "$nplans" -ge 1 ] || fail "no persisted plan sampled"
for f in "$PLANS"/plan-*.json; do
	r=$(awk -F'"' -v u="$A" '
		/"id":/ { uid = -1; g = 0; s = 0 }
		/"uid":/ { x = $3; gsub(/[:, ]/, "", x); uid = x }
		/"gpus":/ { x = $3; gsub(/[:, ]/, "", x); g = x }
		/"start":/ { x = $3; gsub(/[:, ]/, "", x); s = x }
		/"end":/ { x = $3; gsub(/[:, ]/, "", x); if (uid == u) { print s, 1, g; print x, -1, -g } }' "$f" |
		sort -k1,1g -k2,2n | awk '{ j += $2; g += $3; if (j > mj) mj = j; if (g > mg) mg = g } END { print mj + 0, mg + 0 }')
	set -- $r
	[ "$1" -le $MAXJ ] && [ "$2" -le $MAXG ] || {
		cat "$f"
		fail "plan $f: $1 of A's tasks on $2 GPUs at once (limits $MAXJ, $MAXG)"
	}
done
note "$nplans persisted plans, each within A's limits"
grep -aq 'need more GPUs than their QOS or association allows' "$CTLD_LOG" &&
	fail "a task of A was planned over its limits: $(grep -a 'need more GPUs than their' "$CTLD_LOG" | head -1)"

# --- B not slowed by A ---------------------------------------------------------
bfirst=$(awk -v u="$B" '$1 == "user=" u { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }; print v["start"] }' "$JOBLOG" | sort -g | head -n 1)
blast=$(awk -v u="$B" '$1 == "user=" u { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }; print v["end"] }' "$JOBLOG" | sort -g | tail -n 1)
alast=$(awk -v u="$A" '$1 == "user=" u { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }; print v["end"] }' "$JOBLOG" | sort -g | tail -n 1)
note "B submitted $tb, first start $bfirst, last end $blast; A's last end $alast"
awk -v a="$bfirst" -v b="$tb" 'BEGIN { exit !(a - b <= 20) }' || fail "B's first task started $bfirst, more than 20 s after its submission"
awk -v a="$blast" -v b="$alast" 'BEGIN { exit !(a <= b + 1) }' || fail "B's batch ended after A's (limited) batch"
note "ok: A within GrpTRES=gres/gpu=$MAXG MaxJobs=$MAXJ; B not slowed; every task once"
