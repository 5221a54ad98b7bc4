#!/bin/sh
# hostile-env.sh - the SATURN_* variables sched/saturn reads back from a
# job (SATURN_USER_GRES: the user's own GPU request restored at re-hold and
# by `saturn release --all`; SATURN_REQ_NODES: the user's node count;
# SATURN_PLAN_ID: "released by a plan"; SATURN_NOT_BEFORE: Slurm's requeue
# delay) live in the job's supplemental environment (details->env_sup),
# which only slurmctld writes. A user who sets them in the job's own
# environment (sbatch --export) or in its SPANK environment (a plugin of
# the user's own plugstack.conf, as a crafted RPC could) gets nothing from
# it: the attacker asks for 1 GPU on one node and sets
# SATURN_USER_GRES=gres:gpu:8, SATURN_REQ_NODES=2, SATURN_NODES=2,
# SATURN_PLAN_ID, SATURN_GPUS, SATURN_TECHNIQUE and a SATURN_NOT_BEFORE far
# in the future in both. Asserted: an operator's release of a held task is
# still seen as outside the plan and re-held, asking for 1 GPU again; every
# attacker task is released by the plan with 1 GPU on one node, without
# delay, and runs once; the victim's batch runs once.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_users
SATURN_NODES=2 SATURN_GPUS_PER_NODE=8
export SATURN_NODES SATURN_GPUS_PER_NODE
sched_setup 97
hostile_dirs

cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
t=\${SLURM_ARRAY_TASK_ID:-0}
n=\$(echo "\${CUDA_VISIBLE_DEVICES:-}" | tr ',' '\n' | grep -c .)
sleep \${1:-1}
echo "who=\$(id -un) task=\$t job=\$SLURM_JOB_ID gpus=\$n nnodes=\$SLURM_JOB_NUM_NODES saturn_gpus=\${SATURN_GPUS:-} saturn_nodes=\${SATURN_NODES:-} plan=\${SATURN_PLAN_ID:-} env_gres=\${SATURN_USER_GRES:-} env_reqn=\${SATURN_REQ_NODES:-} spank_gres=\${SLURM_SPANK_SATURN_USER_GRES:-}" >>$JOBLOG
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

# the victim fills both nodes for a while, so the attacker's tasks stay held
block=$(as_victim sbatch --parsable --saturn-batch=block --array=0-1 --gres=gpu:8 --time=3 \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh" 25) || fail "victim sbatch"
wait_for 60 sh -c "[ \$(squeue -h -j $block -t R -o %i | wc -l) = 2 ]" ||
	{ sched_dump; fail "the victim's tasks did not start"; }

# The attacker's own slurm.conf with a SPANK plugin that writes what it is
# told into the job's SPANK environment (tests/e2e/spank_rawtag.c): the same
# variables there, and in the job's environment (--export).
RAW="$top_builddir/tests/e2e/.libs/spank_rawtag.so"
[ -f "$RAW" ] || skip "test plugin spank_rawtag.so not built"
cp "$RAW" "$HOSTILE_OUT/spank_rawtag.so"
printf 'required %s\n' "$HOSTILE_OUT/spank_rawtag.so" >"$HOSTILE_OUT/plugstack.conf"
sed "s,^PlugStackConfig=.*,PlugStackConfig=$HOSTILE_OUT/plugstack.conf," "$SLURM_CONF" >"$HOSTILE_OUT/slurm.conf"
cp "$SATURN_CLUSTER_DIR/etc/gres.conf" "$HOSTILE_OUT/gres.conf"
chmod 644 "$HOSTILE_OUT"/plugstack.conf "$HOSTILE_OUT"/slurm.conf "$HOSTILE_OUT"/gres.conf "$HOSTILE_OUT"/spank_rawtag.so
FORGED="SATURN_USER_GRES=gres:gpu:8 SATURN_REQ_NODES=2 SATURN_NODES=2 SATURN_PLAN_ID=p1-1 SATURN_NOT_BEFORE=4000000000 SATURN_GPUS=8 SATURN_TECHNIQUE=fsdp"
att=$(runuser -u "$HOSTILE_USER" -- env SLURM_CONF="$HOSTILE_OUT/slurm.conf" PATH="$PATH" \
	SATURN_RAW_TAG=greedy SATURN_RAW_SPANK_ENV="$FORGED" \
	sh -c 'cd "$0" && exec sbatch "$@"' "$HOSTILE_OUT" --parsable --array=0-1 --gres=gpu:1 --time=2 \
	--export="ALL,$(echo "$FORGED" | tr ' ' ',')" \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh" 1) || fail "attacker sbatch"
wait_for 30 sh -c "squeue -h -j $att -o '%i %r' | grep -q 'saturn'" ||
	{ sched_dump; fail "the attacker's tasks are not held by Saturn"; }

# an operator lifts the hold of one held task: it is outside the plan (its
# user's SATURN_PLAN_ID is not the controller's) and is held again, asking
# for the user's 1 GPU (its user's SATURN_USER_GRES is not read)
scontrol release "${att}_0" || fail "root's release of ${att}_0"
wait_for 30 sh -c "grep -a 're-held JobId=' '$CTLD_LOG' | grep -q 'batch greedy'" ||
	{ sched_dump; fail "the attacker's released task was not re-held: its own SATURN_PLAN_ID was trusted"; }
line=$(grep -a 're-held JobId=' "$CTLD_LOG" | grep 'batch greedy' | head -1)
note "$line"
echo "$line" | grep -q 'left its hold outside the plan' || fail "re-held for another reason: $line"
echo "$line" | grep -q 'asks for gres[:/]gpu[:=]1 again' ||
	fail "the re-held task asks for more than its user's 1 GPU: $line"

wait_for 150 sh -c "[ -z \"\$(squeue -h -j $block,$att -o %i)\" ]" ||
	{ sched_dump; fail "the batches did not finish"; }
cat "$JOBLOG"
for t in 0 1; do
	c=$(grep -c "^who=$HOSTILE_USER task=$t " "$JOBLOG" || true)
	[ "$c" = 1 ] || fail "attacker task $t ran $c times"
	c=$(grep -c "^who=$VICTIM_USER task=$t " "$JOBLOG" || true)
	[ "$c" = 1 ] || fail "victim task $t ran $c times"
	l=$(grep "^who=$HOSTILE_USER task=$t " "$JOBLOG")
	[ "$(field gpus "$l")" = 1 ] || fail "attacker task $t ran on $(field gpus "$l") GPUs: $l"
	[ "$(field nnodes "$l")" = 1 ] || fail "attacker task $t ran on $(field nnodes "$l") nodes: $l"
	[ "$(field saturn_gpus "$l")" = 1 ] || fail "attacker task $t: SATURN_GPUS: $l"
	[ "$(field saturn_nodes "$l")" = 1 ] || fail "attacker task $t: SATURN_NODES: $l"
	case "$(field plan "$l")" in p1-1 | "") fail "attacker task $t not released by a plan: $l" ;; esac
	# the forged values did reach the job, in both environments; the
	# controller's own SATURN_USER_GRES (the user's real request) wins
	[ "$(field env_reqn "$l")" = 2 ] && [ "$(field spank_gres "$l")" = gres:gpu:8 ] ||
		fail "attacker task $t: the forged variables were not delivered: $l"
	[ "$(gres_norm "$(field env_gres "$l")")" = gres:gpu:1 ] || fail "attacker task $t: SATURN_USER_GRES is not its request: $l"
done
grep -a 'sched/saturn: released ' "$CTLD_LOG" | grep 'batch greedy' | grep -v ': 1 GPU(s) on n[0-9]*,' &&
	fail "an attacker task was released with more than 1 GPU on one node"
note "ok"
