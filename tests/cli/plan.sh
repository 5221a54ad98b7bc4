#!/bin/sh
# plan.sh - `saturn plan` on the example sweeps: the human output has the
# table, a Gantt chart, makespan, bound and solver lines; --json parses back
# and plans every task once; --compare prints the time saved.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/common.sh"

GPT2="$SWEEPS/gpt2-sweep.json"

"$SATURN" plan --time-limit 2 "$GPT2" >"$TMP/out" 2>"$TMP/err" || fail "plan: exit $? $(cat "$TMP/err")"
for want in "TASK" "TECHNIQUE" "GPU IDS" "sweep_15" "Node node1 (8 GPUs)" "GPU 7 |" "A=sweep_" \
	"Makespan:" "Lower bound:" "gap" "Solver:"; do
	grep -qF -- "$want" "$TMP/out" || fail "plan output lacks '$want'"
done
[ "$(grep -c '^sweep_' "$TMP/out")" -eq 16 ] || fail "table does not have 16 rows"

"$SATURN" plan --json --time-limit 2 "$GPT2" >"$TMP/plan.json" 2>"$TMP/err" || fail "--json: exit $?"
if command -v python3 >/dev/null 2>&1; then
	python3 - "$TMP/plan.json" <<'PY' || fail "--json output is not a valid saturn-plan/1"
import json, sys
plan = json.load(open(sys.argv[1]))
assert plan["format"] == "saturn-plan/1", plan["format"]
ids = sorted(t["id"] for t in plan["tasks"])
assert ids == sorted("sweep_%d" % i for i in range(16)), ids
assert abs(plan["makespan_s"] - max(t["end_s"] for t in plan["tasks"])) < 1e-3
assert plan["lower_bound_s"] <= plan["makespan_s"] + 1e-6
for t in plan["tasks"]:
    assert len(t["gpu_ids"]) == t["gpus"]
PY
fi
grep -q "TECHNIQUE" "$TMP/plan.json" && fail "--json printed the table"

# stdin, two node classes
"$SATURN" plan --time-limit 2 - <"$SWEEPS/two-class.json" >"$TMP/out" 2>"$TMP/err" || fail "two-class: exit $?"
grep -q "Node a100-1 (4 GPUs)" "$TMP/out" || fail "two-class: no chart for a100-1"

# busy GPUs and a pinned running task: the running task keeps GPUs 0-1 from
# 0:00:00, busy GPU 3 shows as '#'
cat >"$TMP/busy.json" <<'JSON'
{"format": "saturn-problem/1",
 "nodes": [{"name": "n1", "gpus": 4, "busy": [{"gpu_ids": [3], "until_s": 3000}]}],
 "tasks": [{"id": "run", "batches": 1000, "options": [{"technique": "ddp", "gpus": 2, "sec_per_batch": 2}],
            "running": {"node": "n1", "gpu_ids": [0, 1], "technique": "ddp"}},
           {"id": "late", "batches": 100, "release_s": 500, "options": [{"technique": "single", "gpus": 1, "sec_per_batch": 20}]}]}
JSON
"$SATURN" plan --time-limit 1 "$TMP/busy.json" >"$TMP/out" 2>"$TMP/err" || fail "busy: exit $? $(cat "$TMP/err")"
grep -Eq "^run +ddp +2 +n1 +0-1 +0:00:00 +0:33:20" "$TMP/out" || fail "busy: running task moved: $(cat "$TMP/out")"
grep -q "#=busy" "$TMP/out" || fail "busy: no busy legend"
grep -q "GPU 3 |#" "$TMP/out" || fail "busy: GPU 3 not shown busy"
start=$(awk '$1 == "late" { split($6, t, ":"); print t[1] * 3600 + t[2] * 60 + t[3] }' "$TMP/out")
[ -n "$start" ] && [ "$start" -ge 500 ] || fail "busy: late task starts at '$start' s, before its release (500 s)"

"$SATURN" plan --compare --time-limit 2 "$GPT2" >"$TMP/out" 2>"$TMP/err" || fail "--compare: exit $?"
grep -q "time saved: " "$TMP/out" || fail "--compare lacks 'time saved'"
grep -q "Best baseline: " "$TMP/out" || fail "--compare lacks the best baseline"
for g in 1 2 4 8; do
	grep -Eq "^  $g GPUs?" "$TMP/out" || fail "--compare lacks the $g-GPU baseline"
done
# a task spanning two nodes (saturn-problem/2): the table lists both nodes
# and their GPUs, each node's chart shows it, --json writes saturn-plan/2
cat >"$TMP/two.json" <<'JSON'
{"format": "saturn-problem/2",
 "nodes": [{"name": "a", "gpus": 4}, {"name": "b", "gpus": 4}, {"name": "c", "gpus": 4}],
 "tasks": [{"id": "big", "batches": 100, "options": [{"technique": "fsdp", "gpus": 4, "nodes": 2, "sec_per_batch": 0.5}]},
	   {"id": "small", "batches": 100, "options": [{"technique": "ddp", "gpus": 2, "sec_per_batch": 0.4}]},
	   {"id": "long", "batches": 300, "options": [{"technique": "ddp", "gpus": 4, "sec_per_batch": 0.4}]}]}
JSON
"$SATURN" plan --time-limit 1 "$TMP/two.json" >"$TMP/out" 2>"$TMP/err" || fail "two nodes: exit $? $(cat "$TMP/err")"
grep -Eq "^big +fsdp +4 +[abc]\+[abc] +0-3/0-3 +0:00:00 +0:00:50" "$TMP/out" || fail "two nodes: table: $(cat "$TMP/out")"
[ "$(grep -c '=big' "$TMP/out")" = 2 ] || fail "two nodes: big not on two charts: $(cat "$TMP/out")"
"$SATURN" plan --json --time-limit 1 "$TMP/two.json" >"$TMP/two-plan.json" || fail "two nodes --json: exit $?"
grep -q '"saturn-plan/2"' "$TMP/two-plan.json" || fail "two nodes: not saturn-plan/2"
sed 's#saturn-problem/2#saturn-problem/1#' "$TMP/two.json" >"$TMP/two1.json"
"$SATURN" plan "$TMP/two1.json" >"$TMP/out" 2>"$TMP/err"
[ $? = 2 ] && grep -q 'options\[0\].nodes: needs format version 2' "$TMP/err" || fail "nodes in version 1: $(cat "$TMP/err")"
exit 0
