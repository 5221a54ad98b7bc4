#!/bin/sh
# other-jobs.sh - jobs without --saturn-batch are untouched by the plugins
# (they run at once, no SATURN_BATCH, their priority and holds work as in
# stock Slurm), and Saturn submissions the planner cannot honour are refused
# with a message: several nodes, no GPUs, --gpus-per-task, a dependency, an
# array throttle, a heterogeneous job. --gpus=N becomes gres:gpu:N per node.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
e2e_setup 3

# A held Saturn array beside them must not matter.
held=$(e2e_sbatch_user --saturn-batch=bystander --array=0-7 --gres=gpu:8 --wrap true) || fail "tagged array refused"

plain=$(e2e_sbatch_user --gres=gpu:3 -o plain.out \
	--wrap 'echo "cvd=$CUDA_VISIBLE_DEVICES spank=${SLURM_SPANK_SATURN_BATCH-unset}"') || fail "plain job refused"
wait_for 15 job_state_is "$plain" COMPLETED || fail "plain job $plain: $(job_state "$plain")"
grep -q '^cvd=[0-9],[0-9],[0-9] spank=unset$' "$OUT/plain.out" || fail "plain job output: $(cat "$OUT/plain.out")"

# A user may still hold and release their own non-Saturn job.
uj=$(e2e_sbatch_user -H --gres=gpu:1 --wrap true) || fail "held plain job refused"
wait_for 5 job_reason_is "$uj" JobHeldUser || fail "plain -H job reason '$(job_reason "$uj")'"
as_user scontrol release "$uj" || fail "user could not release their own plain job"
wait_for 15 job_state_is "$uj" COMPLETED || fail "released plain job $uj: $(job_state "$uj")"

# Refused Saturn submissions: the message names the problem.
refuse() {
	want=$1
	shift
	if as_user sbatch --saturn-batch=r "$@" --wrap true >"$OUT/err" 2>&1; then
		fail "accepted: $*"
	fi
	grep -q -- "$want" "$OUT/err" || fail "'$*': message '$(cat "$OUT/err")' lacks '$want'"
}
refuse "one node count" -N 1-2 --gres=gpu:1
refuse "cannot be split evenly over 2 nodes" -N 2 --gpus=3
refuse "must request GPUs" -n 1
refuse "gpus-per-task is not supported" -n 2 --gpus-per-task=1
refuse "dependency is not supported" --gres=gpu:1 --dependency=after:"$plain"
refuse "array throttle" --gres=gpu:1 --array=0-3%2
refuse "bad count" --gres=gpu:0
if as_user sbatch --saturn-batch=h --gres=gpu:1 --wrap true : --gres=gpu:1 >"$OUT/err" 2>&1; then
	fail "heterogeneous Saturn job accepted"
fi
grep -q "heterogeneous" "$OUT/err" || fail "het job message: $(cat "$OUT/err")"

# --gpus=N is kept as a per-node count.
g=$(e2e_sbatch_user --saturn-batch=g --gpus=3 --wrap true) || fail "--gpus=3 refused"
[ "$(gres_norm "$(job_field "$g" TresPerNode)")" = "gres:gpu:3" ] || fail "--gpus=3 became '$(job_field "$g" TresPerNode)'"
# --nodes=2 is accepted (at least 2 nodes' worth); --gpus=4 on 2 nodes is 2 per node
g=$(e2e_sbatch_user --saturn-batch=g2 -N 2 --gpus=4 --wrap true) || fail "-N 2 --gpus=4 refused"
[ "$(gres_norm "$(job_field "$g" TresPerNode)")" = "gres:gpu:2" ] || fail "-N 2 --gpus=4 became '$(job_field "$g" TresPerNode)'"
case "$(job_field "$g" NumNodes)" in 2 | 2-2) ;; *) fail "-N 2: NumNodes='$(job_field "$g" NumNodes)'" ;; esac

job_state_is "$held" PENDING || fail "tagged array $held: $(job_state "$held")"
note "plain jobs untouched; bad Saturn requests refused with their reason"
