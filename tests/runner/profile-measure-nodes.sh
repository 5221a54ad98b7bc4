#!/bin/sh
# saturn-profile --measure TASK:TECHNIQUE:GPUSxNODES (no Slurm): the item
# names a predicted option on NODES nodes; bad node counts are usage errors
# (exit 2, the profile byte-identical); outside a job of that many nodes the
# item is skipped (exit 1, unchanged); in a two-node job (SLURM_JOB_NUM_NODES
# and a stand-in srun that starts the step's ranks here) the trial runs as
# one step of 2 x GPUS ranks and the option becomes measured with its nodes,
# its one-node options untouched; the old TASK:TECHNIQUE:GPUS still names
# the one-node option.
. "$top_srcdir/tests/runner/common.sh"

cat >"$tmp/b.sbatch" <<'S'
#!/bin/sh
[ "$SATURN_MODE" = trial ] && echo "trial nodes=$SLURM_JOB_NUM_NODES gpus=$SATURN_GPUS" >>"$TRIALS"
exec saturn-run --batches 400 -- saturn-emulate --model gpt2 --batch-size 8 --time-scale 0.05
S
chmod +x "$tmp/b.sbatch"
# srun stand-in: every task of the step here, with the step's task variables
cat >"$tmp/srun" <<'S'
#!/bin/sh
n=1 per=1
while [ $# -gt 0 ]; do
	case "$1" in
	--ntasks=*) n=${1#--ntasks=} ;;
	--ntasks-per-node=*) per=${1#--ntasks-per-node=} ;;
	--*) ;;
	*) break ;;
	esac
	shift
done
echo "srun ntasks=$n per=$per" >>"$TRIALS"
i=0 pids=
while [ $i -lt $n ]; do
	SLURM_PROCID=$i SLURM_LOCALID=$((i % per)) SLURM_NODEID=$((i / per)) "$@" &
	pids="$pids $!"
	i=$((i + 1))
done
rc=0
for p in $pids; do wait $p || rc=$?; done
exit $rc
S
chmod +x "$tmp/srun"
export CUDA_VISIBLE_DEVICES=0,1,2,3 TRIALS="$tmp/trials.log"
unset SLURM_JOB_NUM_NODES SLURM_NNODES
P="$tmp/p.json"
sp() { saturn-profile --batch m --script "$tmp/b.sbatch" --backend cpu --trial-batches 2 "${CACHE:---no-cache}" "$@"; }
sp --task-ids 0 --output "$P" --techniques ddp 2>"$tmp/p.err" || { cat "$tmp/p.err"; fail "profile"; }
# a predicted two-node ddp option on 2 GPUs per node, as --internode-bw adds
python3 - "$P" <<'Q' || fail "profile edit"
import json, sys
p = json.load(open(sys.argv[1]))
t = p["tasks"][0]
one = [o for o in t["options"] if o["technique"] == "ddp" and o["gpus"] == 2][0]
t["options"].append(dict(one, nodes=2, status="predicted", sec_per_batch=0.001, reason="edited"))
json.dump(p, open(sys.argv[1], "w"))
Q
opt() { # opt TECH GPUS NODES FIELD
	python3 - "$P" "$@" <<'Q'
import json, sys
f, tech, g, n, field = sys.argv[1:]
o = [o for o in json.load(open(f))["tasks"][0]["options"]
     if o["technique"] == tech and o["gpus"] == int(g) and o.get("nodes", 1) == int(n)]
print(o[0].get(field, "") if o else "none")
Q
}
[ "$(opt ddp 2 2 status)" = predicted ] || fail "edit: no predicted two-node option"

# errors: exit 2, the item named, the profile byte-identical
cp "$P" "$tmp/before.json"
for l in 0:ddp:2x 0:ddp:2x0 0:ddp:2xa 0:ddp:2x-1 0:ddp:2x+2 0:ddp:2x2x2 0:ddp:2y2 0:ddp:2x3 0:ddp:3x2 0:ddp:2x9999; do
	sp --output "$P" --measure "$l" 2>"$tmp/e.err"
	[ $? = 2 ] || fail "--measure '$l' not a usage error"
	grep -q "item '$l'" "$tmp/e.err" || fail "--measure '$l': no item named: $(cat "$tmp/e.err")"
	cmp -s "$P" "$tmp/before.json" || fail "--measure '$l' changed the profile"
done
grep -q "xNODES: want a node count" "$tmp/e.err" || fail "bad node count: $(cat "$tmp/e.err")"

# outside a two-node job: skipped, exit 1, unchanged
sp --output "$P" --measure 0:ddp:2x2 2>"$tmp/o.err"
[ $? = 1 ] && grep -q "measure 0:ddp:2x2: 2 nodes asked for, the allocation has 1; skipped" "$tmp/o.err" ||
	fail "two-node item outside a two-node job: $(cat "$tmp/o.err")"
cmp -s "$P" "$tmp/before.json" || fail "skipped item changed the profile"

# in a two-node job: one step of 4 ranks, 2 per node (saturn-emulate through
# the ranks launcher, not run directly); measured with its nodes
: >"$TRIALS"
SLURM_JOB_NUM_NODES=2 SATURN_SRUN="$tmp/srun" SATURN_MASTER_ADDR=127.0.0.1 SATURN_DIRECT_COMMANDS=none \
	CACHE=--cache="$tmp/cache" sp --output "$P" --measure 0:ddp:2x2 --escalate 0 2>"$tmp/m.err" || { cat "$tmp/m.err"; cat "$TRIALS"; fail "measure 0:ddp:2x2"; }
grep -q "^trial nodes=2 gpus=2" "$TRIALS" || fail "trial not on 2 nodes: $(cat "$TRIALS")"
grep -q "^srun ntasks=4 per=2" "$TRIALS" || fail "no step of 4 ranks, 2 per node: $(cat "$TRIALS")"
grep -q "measure 0:ddp:2x2 (sig .*): predicted .*, measured" "$tmp/m.err" || fail "measure line: $(cat "$tmp/m.err")"
[ "$(opt ddp 2 2 status)" = measured ] || fail "two-node option not measured: $(opt ddp 2 2 status)"
# the cache entry it refreshed keeps one-node options only
ls "$tmp/cache"/* >/dev/null 2>&1 || fail "no cache entry written"
! grep -q '"nodes"' "$tmp/cache"/* || fail "a multi-node option in the cache: $(cat "$tmp/cache"/*)"
[ "$(opt ddp 2 1 status)" = "$(python3 -c 'import json,sys; print([o for o in json.load(open(sys.argv[1]))["tasks"][0]["options"] if o["technique"]=="ddp" and o["gpus"]==2 and o.get("nodes",1)==1][0]["status"])' "$tmp/before.json")" ] ||
	fail "the one-node ddp on 2 GPUs changed"

# the old form names the one-node option; a one-node trial in a two-node job stays on one node
: >"$TRIALS"
SLURM_JOB_NUM_NODES=2 SATURN_SRUN="$tmp/srun" sp --output "$P" --measure 0:ddp:2 --escalate 0 2>"$tmp/s.err" ||
	{ cat "$tmp/s.err"; fail "measure 0:ddp:2"; }
grep -q "^trial nodes=1 gpus=2" "$TRIALS" || fail "one-node trial: $(cat "$TRIALS")"
! grep -q "^srun" "$TRIALS" || fail "one-node trial went through srun: $(cat "$TRIALS")"
[ "$(opt ddp 2 1 status)" = measured ] || fail "one-node option not measured"
exit 0
