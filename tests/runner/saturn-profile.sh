#!/bin/sh
# saturn-profile end to end on the CPU stand-in (no Slurm): 3 tasks, 2
# signatures, 8 fake GPUs; then the same in exhaustive mode, and errors.
. "$top_srcdir/tests/runner/common.sh"

cat > "$tmp/sweep.sbatch" <<'S'
#!/bin/sh
case "$SLURM_ARRAY_TASK_ID" in 0|1) model=gpt2-xl ;; *) model=llama-7b ;; esac
s=$(date +%s.%N)
saturn-run --batches 400 -- saturn-emulate --model $model --batch-size 8 --lr 0.0$SLURM_ARRAY_TASK_ID --time-scale 0.01
rc=$?
[ "$SATURN_MODE" = trial ] && echo "$s $(date +%s.%N) $CUDA_VISIBLE_DEVICES $SATURN_GPUS" >> "$TRIAL_LOG"
exit $rc
S
chmod +x "$tmp/sweep.sbatch"
export TRIAL_LOG="$tmp/trials.log"
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 saturn-profile --batch b1 --script "$tmp/sweep.sbatch" \
	--task-ids 0-2 --output "$tmp/p.json" --backend cpu 2>"$tmp/err" || { cat "$tmp/err"; fail "profile"; }
grep -q "trial 1 of" "$tmp/err" || fail "no progress line"
grep -q "ETA" "$tmp/err" || fail "no ETA"
py=python3
$py - "$tmp/p.json" <<'P' || fail "profile content"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["format"] == "saturn-profile/1" and p["batch"] == "b1"
hw = p["hardware"][0]
assert hw["gpus"] == 8 and hw["interconnect"] == "nvswitch", hw
assert len(hw["nccl"]) == 7 and hw["nccl"][0]["allreduce_busbw_gbs"] > 0
tasks = {t["signature"].split()[2]: t for t in p["tasks"]}
assert sorted(tasks["gpt2-xl"]["task_ids"]) == [0, 1] and tasks["llama-7b"]["task_ids"] == [2]
st = lambda t, tech, g: [o for o in tasks[t]["options"] if o["technique"] == tech and o["gpus"] == g][0]
assert st("gpt2-xl", "ddp", 4)["status"] == "predicted"
assert st("gpt2-xl", "ddp", 8)["status"] == "measured"
# ddp and fsdp on one GPU: single's measurement, no trial of their own
assert st("gpt2-xl", "single", 1)["status"] == "measured"
for tech in ("ddp", "fsdp"):
    o = st("gpt2-xl", tech, 1)
    assert o["status"] == "predicted" and "measured time of single" in o["reason"], o
    assert o["sec_per_batch"] == st("gpt2-xl", "single", 1)["sec_per_batch"], o
assert st("llama-7b", "single", 1)["status"] == "oom"
# offload where single fits on one GPU: not measured on purpose; measured
# where single runs out of memory
o = st("gpt2-xl", "offload", 1)
assert o["status"] == "skipped" and "single runs on 1 GPU" in o["reason"], o
assert not o.get("sec_per_batch"), o
assert st("llama-7b", "offload", 1)["status"] != "skipped"
assert st("llama-7b", "ddp", 4)["status"] == "oom"
f1 = st("llama-7b", "fsdp", 1)
assert f1["status"] == "measured" and f1["params"]["activation_checkpointing"] == 1, f1
assert st("gpt2-xl", "pipeline", 4)["params"]["stages"] == 4
n = sum(len(t["options"]) for t in p["tasks"])
meas = sum(1 for t in p["tasks"] for o in t["options"] if o["status"] in ("measured", "oom", "failed", "timeout") and "memory per GPU" not in (o.get("reason") or ""))
print("options", n, "trial-backed", meas)
P
# concurrent trials ran on disjoint GPU subsets of the right size
$py - "$tmp/trials.log" <<'P' || fail "GPU subsets"
import sys
rows = [l.split() for l in open(sys.argv[1])]
trials = [(float(a), float(b), set(c.split(",")), int(g)) for a, b, c, g in rows]
assert all(len(t[2]) == t[3] for t in trials), trials
over = 0
for i, x in enumerate(trials):
    for y in trials[i + 1:]:
        if x[0] < y[1] and y[0] < x[1]:
            over += 1
            assert not (x[2] & y[2]), (x, y)
assert over > 0, "no trials ran concurrently"
print(len(trials), "trials,", over, "overlapping pairs")
P
# a script without saturn-run: no signature, exit 1
printf '#!/bin/sh\ntrue\n' > "$tmp/bad.sbatch"
CUDA_VISIBLE_DEVICES=0 saturn-profile --batch b --script "$tmp/bad.sbatch" --task-ids 0 --output "$tmp/q.json" \
	--backend cpu 2>/dev/null
[ $? = 1 ] || fail "no-signature exit status"
[ -e "$tmp/q.json" ] && fail "profile written without signatures"
saturn-profile --batch b --script x --task-ids 0 --output y 2>/dev/null
[ $? = 2 ] || fail "no GPUs must be a usage error"
exit 0
