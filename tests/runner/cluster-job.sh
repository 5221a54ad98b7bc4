#!/bin/sh
# On the one-machine Slurm cluster (scripts/cluster.sh, stock scheduler, port
# base 19000): (1) a job whose environment carries a Saturn assignment runs
# `srun saturn-run ... -- saturn-emulate`, sees its technique and GPUs and
# its progress file reaches batches_total; (2) saturn-profile runs as a
# one-node job over its fake GPUs with concurrent srun steps inside the
# allocation (SLURM_OVERLAP). Skipped (77) when the Slurm daemons are absent
# or the cluster does not start.
. "$top_srcdir/tests/runner/common.sh"

command -v slurmctld >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ] || { echo "no slurmctld: skipped"; exit 77; }
export SATURN_CLUSTER_DIR="$tmp/cluster" SATURN_PORT_BASE=$((${SATURN_E2E_PORT_BASE:-17000} + 2000)) SATURN_NODES=1 \
	SATURN_GPUS_PER_NODE=4 SATURN_SCHED=backfill SATURN_AUTH=none SATURN_TIMEOUT=60
cl="$top_srcdir/scripts/cluster.sh"
if ! sh "$cl" start >"$tmp/cluster.log" 2>&1; then
	cat "$tmp/cluster.log"
	sh "$cl" stop >/dev/null 2>&1
	echo "cluster did not start: skipped"
	exit 77
fi
trap 'sh "$cl" stop >/dev/null 2>&1; rm -rf "$tmp"' EXIT
. "$SATURN_CLUSTER_DIR/env"
bin="$top_builddir/runner:$top_builddir/profiler"

# (1) a planned job (the environment sched/saturn would set)
mkdir -p "$tmp/progress" && chmod 1733 "$tmp/progress"
cat > "$tmp/job.sbatch" <<S
#!/bin/sh
export PATH="$bin:\$PATH"
export SATURN_TECHNIQUE=fsdp SATURN_GPUS=2 SATURN_TECHNIQUE_PARAMS='{"activation_checkpointing":1}'
export SATURN_PROGRESS_FILE="$tmp/progress/\$SLURM_JOB_ID.json" SATURN_BATCH=b SATURN_PLAN_ID=p1
srun saturn-run --direct --batches 40 -- sh -c 'echo "seen \$SATURN_TECHNIQUE \$SATURN_GPUS \$CUDA_VISIBLE_DEVICES \$SATURN_FSDP_ACTIVATION_CHECKPOINTING"; exec saturn-emulate --model gpt2 --batch-size 8 --time-scale 0.01'
S
job=$(sbatch --parsable --gres=gpu:4 -o "$tmp/job.out" "$tmp/job.sbatch") || fail "sbatch"
i=0; while squeue -h -j "$job" 2>/dev/null | grep -q .; do sleep 1; i=$((i+1)); [ $i -gt 90 ] && fail "job $job did not end"; done
grep -q "^seen fsdp 2 [0-9]*,[0-9]* 1$" "$tmp/job.out" || fail "job environment: $(cat "$tmp/job.out")"
grep -q "\"job_id\":$job,\"batches_done\":40,\"batches_total\":40" "$tmp/progress/$job.json" \
	|| fail "progress: $(cat "$tmp/progress/$job.json" 2>&1)"

# (2) the companion profiler job
cat > "$tmp/sweep.sbatch" <<S
#!/bin/sh
export PATH="$bin:\$PATH"
case "\$SLURM_ARRAY_TASK_ID" in 0) m=gpt2 ;; *) m=gpt2-large ;; esac
srun saturn-run --batches 100 -- saturn-emulate --model \$m --batch-size 8 --time-scale 0.01
S
cat > "$tmp/prof.sbatch" <<S
#!/bin/sh
export PATH="$bin:\$PATH"
saturn-profile --batch b --script "$tmp/sweep.sbatch" --task-ids 0-1 --output "$tmp/p.json" --backend cpu --timeout 60
S
job=$(sbatch --parsable --gres=gpu:4 -J saturn-profile:b -o "$tmp/prof.out" "$tmp/prof.sbatch") || fail "sbatch profile"
i=0; while squeue -h -j "$job" 2>/dev/null | grep -q .; do sleep 1; i=$((i+1)); [ $i -gt 150 ] && fail "profile job did not end"; done
grep -q "profile written" "$tmp/prof.out" || fail "profile job: $(cat "$tmp/prof.out")"
python3 - "$tmp/p.json" <<'P' || fail "profile content"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["hardware"][0]["gpus"] == 4
assert len(p["tasks"]) == 2
for t in p["tasks"]:
    assert any(o["status"] == "measured" and o["gpus"] == 4 for o in t["options"]), t
P
exit 0
