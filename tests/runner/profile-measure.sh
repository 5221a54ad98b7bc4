#!/bin/sh
# saturn-profile --measure on the CPU stand-in (no Slurm): a predicted
# option re-measured becomes measured, close to what an exhaustive run
# measures, and its technique's other predictions are re-fitted (after the
# profile's predictions were made 2x wrong); an option that runs out of
# memory becomes oom (and the predictions below it); the cache entry is
# refreshed; errors leave the profile byte-identical with exit 2; a trial
# that cannot run or a changed signature gives exit 1.
. "$top_srcdir/tests/runner/common.sh"

cat > "$tmp/b.sbatch" <<'S'
#!/bin/sh
case "$SLURM_ARRAY_TASK_ID" in 0) model=gpt2-xl ;; *) model=${MODEL1:-llama-7b} ;; esac
[ "$SATURN_MODE" = trial ] && [ -n "$FAIL_TRIAL" ] && exit 3
exec saturn-run --batches 400 -- saturn-emulate --model $model --batch-size 8 --lr 0.0$SLURM_ARRAY_TASK_ID --time-scale 0.05
S
chmod +x "$tmp/b.sbatch"
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
P="$tmp/p.json" C="$tmp/cache"
sp() { saturn-profile --batch m --script "$tmp/b.sbatch" --backend cpu --cache "$C" "$@"; }
sp --task-ids 0-1 --output "$P" --techniques single,ddp,fsdp 2>"$tmp/p.err" || { cat "$tmp/p.err"; fail "profile"; }
sp --task-ids 1 --output "$tmp/x.json" --techniques fsdp --exhaustive --no-cache 2>/dev/null || fail "exhaustive"
opt() { # opt FILE TASK TECH GPUS FIELD
	python3 - "$@" <<'Q'
import json, sys
f, task, tech, g, field = sys.argv[1:]
for t in json.load(open(f))["tasks"]:
    if int(task) in t["task_ids"]:
        print([o for o in t["options"] if o["technique"] == tech and o["gpus"] == int(g)][0][field])
Q
}
[ "$(opt "$P" 1 fsdp 6 status)" = predicted ] || fail "fsdp on 6 GPUs not predicted: $(opt "$P" 1 fsdp 6 status)"

# ddp's one-GPU count is single's measured time (lent, predicted); a
# --measure re-fit of ddp keeps it, and keeps fitting with it
cp "$P" "$tmp/lent.json"
g0=$(python3 - "$tmp/lent.json" <<'Q'
import json, sys
t = [t for t in json.load(open(sys.argv[1]))["tasks"] if 0 in t["task_ids"]][0]
o = {(o["technique"], o["gpus"]): o for o in t["options"]}
assert o["single", 1]["status"] == "measured", o["single", 1]
assert o["ddp", 1]["status"] == "predicted" and "measured time of single" in o["ddp", 1]["reason"], o["ddp", 1]
print([g for (tech, g), x in sorted(o.items()) if tech == "ddp" and g > 1 and x["status"] == "predicted"][0])
Q
) || fail "ddp on one GPU not lent by single"
sp --output "$tmp/lent.json" --measure "0:ddp:$g0" --escalate 0 2>"$tmp/l.err" || { cat "$tmp/l.err"; fail "measure ddp"; }
python3 - "$tmp/lent.json" "$P" <<'Q' || fail "lent one-GPU count after --measure"
import json, sys
def get(f):
    t = [t for t in json.load(open(f))["tasks"] if 0 in t["task_ids"]][0]
    return {o["gpus"]: o for o in t["options"] if o["technique"] == "ddp"}
now, was = get(sys.argv[1]), get(sys.argv[2])
assert now[1] == was[1], (now[1], was[1])
Q

# make every fsdp prediction of task 1 twice too slow, then measure one
python3 - "$P" <<'Q'
import json, sys
p = json.load(open(sys.argv[1]))
for t in p["tasks"]:
    if 1 in t["task_ids"]:
        for o in t["options"]:
            if o["technique"] == "fsdp" and o["status"] == "predicted":
                o["sec_per_batch"] *= 2
json.dump(p, open(sys.argv[1], "w"))
Q
cp "$P" "$tmp/wrong.json"
# --escalate 0: the other predictions are only re-fitted
sp --output "$P" --measure 1:fsdp:6 --escalate 0 2>"$tmp/m.err" || { cat "$tmp/m.err"; fail "measure"; }
! grep -q "other predicted" "$tmp/m.err" || fail "escalated with --escalate 0"
grep -q "measure 1:fsdp:6 (sig .*llama-7b.*): predicted [0-9.]* s/batch, measured [0-9.]* s/batch (-[0-9]*%)" "$tmp/m.err" ||
	{ cat "$tmp/m.err"; fail "measure line"; }
[ "$(opt "$P" 1 fsdp 6 status)" = measured ] || fail "not measured"
python3 - "$P" "$tmp/x.json" "$tmp/wrong.json" <<'Q' || fail "measured value or re-fit"
import json, sys
def get(f, tech):
    for t in json.load(open(f))["tasks"]:
        if 1 in t["task_ids"]:
            return {o["gpus"]: o for o in t["options"] if o["technique"] == tech}
now, exh, wrong = get(sys.argv[1], "fsdp"), get(sys.argv[2], "fsdp"), get(sys.argv[3], "fsdp")
err = lambda a, b: abs(a / b - 1)
assert err(now[6]["sec_per_batch"], exh[6]["sec_per_batch"]) < 0.25, (now[6], exh[6])
refit = [g for g in now if wrong[g]["status"] == "predicted" and g != 6]
assert refit, wrong
for g in refit:
    assert now[g]["status"] == "predicted", now[g]
    assert err(now[g]["sec_per_batch"], wrong[g]["sec_per_batch"]) > 0.3, (g, now[g], wrong[g])
    assert err(now[g]["sec_per_batch"], exh[g]["sec_per_batch"]) < 0.25, (g, now[g], exh[g])
    assert "re-fitted" in now[g]["reason"], now[g]
print("re-fitted", refit)
Q
# default --escalate 15: a 2x miss measures fsdp's other predicted counts too
cp "$P" "$tmp/refit.json"
cp "$tmp/wrong.json" "$P"
sp --output "$P" --measure 1:fsdp:6 2>"$tmp/e.err" || { cat "$tmp/e.err"; fail "measure (escalate)"; }
grep -q "measure 1:fsdp:6: -[0-9]*% off its prediction (more than --escalate 15%): measuring [0-9]* other predicted fsdp counts\? too" "$tmp/e.err" ||
	{ cat "$tmp/e.err"; fail "escalation line"; }
python3 - "$P" "$tmp/x.json" "$tmp/wrong.json" <<'Q' || fail "escalated measurements"
import json, sys
def get(f, tech):
    for t in json.load(open(f))["tasks"]:
        if 1 in t["task_ids"]:
            return {o["gpus"]: o for o in t["options"] if o["technique"] == tech}
now, exh, wrong = get(sys.argv[1], "fsdp"), get(sys.argv[2], "fsdp"), get(sys.argv[3], "fsdp")
was = [g for g in now if wrong[g]["status"] == "predicted"]
assert len(was) > 1, wrong
for g in was:
    assert now[g]["status"] == "measured", now[g]
    assert abs(now[g]["sec_per_batch"] / exh[g]["sec_per_batch"] - 1) < 0.25, (g, now[g], exh[g])
print("escalated", was)
Q
cp "$tmp/refit.json" "$P"
# the refreshed cache entry serves a later batch: 0 trials, fsdp 6 measured
sp --task-ids 1 --output "$tmp/c.json" --techniques single,ddp,fsdp 2>"$tmp/c.err" || fail "cached run"
grep -q ": 0 trials in" "$tmp/c.err" || fail "cache not used after --measure"
[ "$(opt "$tmp/c.json" 1 fsdp 6 status)" = measured ] || fail "cache entry not refreshed"

# an option predicted to fit that runs out of memory: oom, and below it too
python3 - "$P" <<'Q'
import json, sys
p = json.load(open(sys.argv[1]))
for t in p["tasks"]:
    if 1 in t["task_ids"]:
        for o in t["options"]:
            if o["technique"] == "ddp" and o["gpus"] in (4, 8):
                o.update(status="measured" if o["gpus"] == 8 else "predicted", sec_per_batch=0.05, reason="edited")
json.dump(p, open(sys.argv[1], "w"))
Q
sp --output "$P" --measure 1:ddp:8 2>"$tmp/o.err" || { cat "$tmp/o.err"; fail "measure oom"; }
[ "$(opt "$P" 1 ddp 8 status)" = oom ] || fail "ddp 8 not oom"
[ "$(opt "$P" 1 ddp 4 status)" = oom ] || fail "ddp 4 still predicted below an oom"
grep -q "measure 1:ddp:8 .*now oom" "$tmp/o.err" || fail "oom line"

# errors: exit 2, profile byte-identical
cp "$P" "$tmp/before.json"
for l in 1:fsdp x:fsdp:2 1:nope:2 1:fsdp:0 1:fsdp:two 9:fsdp:2 0:fsdp:99 0:pipeline:2 1:fsdp:2,1:fsdp:2 "" "1:fsdp:2,"; do
	sp --output "$P" --measure "$l" 2>"$tmp/e.err"
	[ $? = 2 ] || fail "--measure '$l' not a usage error"
	grep -q "item '" "$tmp/e.err" || fail "--measure '$l': no item named: $(cat "$tmp/e.err")"
	cmp -s "$P" "$tmp/before.json" || fail "--measure '$l' changed the profile"
done
sp --output "$tmp/none.json" --measure 1:fsdp:2 2>/dev/null
[ $? = 2 ] || fail "missing profile"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	cp "$P" "$tmp/foreign.json" && chown nobody "$tmp/foreign.json" && cp "$P" "$tmp/f0.json"
	sp --output "$tmp/foreign.json" --measure 1:fsdp:2 2>"$tmp/f.err"
	[ $? = 2 ] && grep -q "owned by uid" "$tmp/f.err" || fail "profile of another user"
	cmp -s "$tmp/foreign.json" "$tmp/f0.json" || fail "foreign profile changed"
fi

# a trial that cannot run, a changed signature, too many GPUs: exit 1, unchanged (fsdp 7: predicted by the sweep, which measures 3, 5 and 8)
FAIL_TRIAL=1 sp --output "$P" --measure 1:fsdp:7 2>"$tmp/n.err"
[ $? = 1 ] || fail "trial without a report: exit status"
grep -q "measure 1:fsdp:7: no trial report" "$tmp/n.err" || fail "no-report message"
cmp -s "$P" "$tmp/before.json" || fail "failed trial changed the profile"
MODEL1=gpt2-medium sp --output "$P" --measure 1:fsdp:7 2>"$tmp/s.err"
[ $? = 1 ] && grep -q "signature is .*gpt2-medium.*skipped" "$tmp/s.err" || fail "signature mismatch"
CUDA_VISIBLE_DEVICES=0,1 sp --output "$P" --measure 1:fsdp:7,1:fsdp:2 2>"$tmp/g.err"
[ $? = 1 ] && grep -q "7 GPUs asked for, the allocation has 2" "$tmp/g.err" || fail "too many GPUs"
[ "$(opt "$P" 1 fsdp 7 status)" = predicted ] || fail "fsdp 7 changed"
exit 0
