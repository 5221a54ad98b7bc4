#!/bin/sh
# plan-objective.sh - `saturn plan --objective`: the batches of a
# saturn-problem/1 ("batches": users, weights, submissions, limits) planned
# for each objective; a heavier batch goes first under weighted; a user's
# max_jobs holds in the plan; bad batches are refused by name.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/common.sh"

# batch x (alice): 3 tasks of 1000 s on 8 GPUs, batch y (bob): 1 task of
# 4000 s. On one node, weighted (Smith's rule: work / weight) runs x first
# at equal weights (3000 < 4000) and y first when it weighs 10.
mk() { # weight of y, max_jobs of x, nodes
	cat <<JSON
{"format": "saturn-problem/1",
 "nodes": [{"name": "n1", "gpus": 8}${3:+, {\"name\": \"n2\", \"gpus\": 8\}}],
 "tasks": [
  {"id": "x1", "batches": 1000, "options": [{"technique": "ddp", "gpus": 8, "sec_per_batch": 1}]},
  {"id": "x2", "batches": 1000, "options": [{"technique": "ddp", "gpus": 8, "sec_per_batch": 1}]},
  {"id": "x3", "batches": 1000, "options": [{"technique": "ddp", "gpus": 8, "sec_per_batch": 1}]},
  {"id": "y1", "batches": 4000, "options": [{"technique": "ddp", "gpus": 8, "sec_per_batch": 1}]}],
 "batches": [
  {"name": "x", "user": "alice", "tasks": ["x1", "x2", "x3"], "max_jobs": $2},
  {"name": "y", "user": "bob", "weight": $1, "tasks": ["y1"]}]}
JSON
}

for obj in makespan share weighted bounded; do
	mk 1 0 >"$TMP/p.json"
	"$SATURN" plan --objective=$obj --time-limit 1 "$TMP/p.json" >"$TMP/out" 2>"$TMP/err" ||
		fail "$obj: exit $? $(cat "$TMP/err")"
	grep -q "^Objective $obj: 2 batch(es) of 2 user(s)" "$TMP/out" || fail "$obj: no objective lines: $(cat "$TMP/out")"
	grep -q "batch 1 (user 1, weight 1, submitted +0s): done at" "$TMP/out" || fail "$obj: no line for batch y"
	"$SATURN" plan --objective=$obj --json --time-limit 1 "$TMP/p.json" >"$TMP/plan.json" ||
		fail "$obj --json: exit $?"
	grep -q '"saturn-plan/1"' "$TMP/plan.json" || fail "$obj --json: not a plan"
done

# equal weights: x first, y done at 7000 s; y weighs 10: y first, done at 4000 s
mk 1 0 >"$TMP/p.json"
"$SATURN" plan --objective=weighted --time-limit 1 "$TMP/p.json" >"$TMP/out" 2>&1 || fail "weighted: exit $?"
grep -q "batch 1 (user 1, weight 1, submitted +0s): done at 7000s" "$TMP/out" || fail "weighted: y not last: $(cat "$TMP/out")"
mk 10 0 >"$TMP/p.json"
"$SATURN" plan --objective=weighted --time-limit 1 "$TMP/p.json" >"$TMP/out" 2>&1 || fail "weighted: exit $?"
grep -q "batch 1 (user 1, weight 10, submitted +0s): done at 4000s" "$TMP/out" || fail "weighted: y not first: $(cat "$TMP/out")"

# two nodes; alice may run one task at a time (max_jobs 1): under every
# objective x's three tasks never overlap
mk 1 1 2 >"$TMP/p.json"
command -v python3 >/dev/null 2>&1 && for obj in makespan share weighted bounded; do
	"$SATURN" plan --objective=$obj --json --time-limit 1 "$TMP/p.json" >"$TMP/plan.json" 2>&1 ||
		fail "max_jobs $obj: exit $?"
	python3 - "$TMP/plan.json" <<'PY' || fail "max_jobs $obj: alice's tasks overlap: $(cat "$TMP/plan.json")"
import json, sys
x = sorted((t["start_s"], t["end_s"]) for t in json.load(open(sys.argv[1]))["tasks"] if t["id"][0] == "x")
assert len(x) == 3 and all(x[i][1] <= x[i + 1][0] + 1e-6 for i in range(2)), x
PY
done

# --bound=stock: y asks for 8 GPUs, x for 8: first come first served puts x
# (listed first) before y: deadlines 3000 s and 7000 s, both met
mk 1 0 | sed 's/"max_jobs": 0}/"max_jobs": 0, "request_gpus": 8}/; s/"weight": 1, /"weight": 1, "request_gpus": 8, /' >"$TMP/p.json"
"$SATURN" plan --objective=bounded --bound=stock --time-limit 1 "$TMP/p.json" >"$TMP/out" 2>&1 || fail "stock: exit $?"
grep -q "stock deadline" "$TMP/out" || fail "stock: deadlines not named: $(cat "$TMP/out")"
grep -q "batch 0 (user 0, weight 1, submitted +0s): done at 3000s, deadline 3000s" "$TMP/out" || fail "stock: x: $(cat "$TMP/out")"
grep -q "batch 1 (user 1, weight 1, submitted +0s): done at 7000s, deadline 7000s" "$TMP/out" || fail "stock: y: $(cat "$TMP/out")"
"$SATURN" plan --objective=bounded --bound=fifo "$TMP/p.json" >"$TMP/out" 2>&1
[ $? = 64 ] || fail "bad bound: not a usage error"

# refused input, by name
mk 1 0 | sed 's/"tasks": \["y1"\]/"tasks": ["y9"]/' >"$TMP/bad.json"
"$SATURN" plan --objective=weighted "$TMP/bad.json" >"$TMP/out" 2>&1 && fail "unknown task accepted"
grep -q 'batches\[1\].tasks\[0\]: no task "y9" in the problem' "$TMP/out" || fail "unknown task: $(cat "$TMP/out")"
mk 1 0 | sed 's/"tasks": \["y1"\]/"tasks": ["x1"]/' >"$TMP/bad.json"
"$SATURN" plan --objective=weighted "$TMP/bad.json" >"$TMP/out" 2>&1 && fail "task in two batches accepted"
grep -q 'task "x1" is in two batches' "$TMP/out" || fail "two batches: $(cat "$TMP/out")"
mk 0 0 >"$TMP/bad.json"
"$SATURN" plan --objective=weighted "$TMP/bad.json" >"$TMP/out" 2>&1 && fail "weight 0 accepted"
grep -q 'batches\[1\].weight' "$TMP/out" || fail "weight 0: $(cat "$TMP/out")"
"$SATURN" plan --objective=fastest "$TMP/p.json" >"$TMP/out" 2>&1
[ $? = 64 ] || fail "bad objective: not a usage error"
grep -q "must be makespan, share, weighted or bounded" "$TMP/out" || fail "bad objective: $(cat "$TMP/out")"
echo "ok"
