#!/bin/sh
# saturn-profile --internode-bw on the CPU stand-in: predicted ddp/fsdp
# options on 2..K nodes, marked predicted with a reason naming the
# bandwidth, on whole and half nodes; none for pipelines; the profile cache keeps measurements only.
. "$top_srcdir/tests/runner/common.sh"

cat > "$tmp/sweep.sbatch" <<'S'
#!/bin/sh
saturn-run --batches 400 -- saturn-emulate --model gpt2-xl --batch-size 8 --lr 0.01 --time-scale 0.5
S
chmod +x "$tmp/sweep.sbatch"
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 saturn-profile --batch b1 --script "$tmp/sweep.sbatch" \
	--task-ids 0 --output "$tmp/p.json" --backend cpu --cache "$tmp/cache" \
	--internode-bw 400 --internode-nodes 4 2>"$tmp/err" || { cat "$tmp/err"; fail "profile"; }
grep -q "predicted from the inter-node bandwidth 400 GB/s" "$tmp/err" || { cat "$tmp/err"; fail "no summary line"; }
python3 - "$tmp/p.json" <<'P' || fail "profile content"
import json, sys
p = json.load(open(sys.argv[1]))
opts = p["tasks"][0]["options"]
multi = [o for o in opts if o.get("nodes", 1) > 1]
assert multi, "no multi-node option"
techs = {o["technique"] for o in multi}
assert techs <= {"ddp", "fsdp"} and "ddp" in techs, techs
for o in multi:
    assert 2 <= o["nodes"] <= 4, o
    assert o["status"] == "predicted", o
    assert "400 GB/s (--internode-bw)" in o["reason"] and "re-measured before use" in o["reason"], o
    one = [x for x in opts if x["technique"] == o["technique"] and x["gpus"] == o["gpus"] and x.get("nodes", 1) == 1][0]
    assert o["sec_per_batch"] < one["sec_per_batch"], (o, one)
    assert o["gpus"] in (4, 8), o
print(len(multi), "multi-node options:", sorted((o["technique"], o["nodes"], o["gpus"]) for o in multi))
P
# the cache holds no prediction of a bandwidth: a run without it has none
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 saturn-profile --batch b1 --script "$tmp/sweep.sbatch" \
	--task-ids 0 --output "$tmp/q.json" --backend cpu --cache "$tmp/cache" 2>"$tmp/err2" ||
	{ cat "$tmp/err2"; fail "cached profile"; }
python3 - "$tmp/q.json" <<'P' || fail "cache kept predicted multi-node options"
import json, sys
p = json.load(open(sys.argv[1]))
assert not [o for o in p["tasks"][0]["options"] if o.get("nodes", 1) > 1]
P
saturn-profile --internode-bw 0x --batch b --script x --task-ids 0 --output y 2>"$tmp/err3"
[ $? = 2 ] || fail "bad --internode-bw must be a usage error"
grep -q -- "--internode-bw" "$tmp/err3" || fail "message must name --internode-bw"
exit 0
