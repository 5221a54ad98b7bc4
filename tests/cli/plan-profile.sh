#!/bin/sh
# plan-profile.sh - `saturn plan --profile=NxG` plans a profile's tasks
# offline with every usable option, predicted multi-node ones included
# (sched/saturn leaves those out until measured), and says so; bad --profile
# values and profiles without a usable option are refused by name.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/common.sh"

cat >"$TMP/p.json" <<'J'
{"format": "saturn-profile/1", "batch": "b", "created": 1,
 "tasks": [{"signature": "m/bs8", "task_ids": "0", "batches": 1000,
  "options": [{"technique": "ddp", "gpus": 8, "sec_per_batch": 1.0, "status": "measured"},
              {"technique": "ddp", "gpus": 8, "nodes": 2, "sec_per_batch": 0.6, "status": "predicted",
               "reason": "predicted from the inter-node bandwidth 25 GB/s (--internode-bw)"}]},
  {"signature": "m/bs16", "task_ids": "1-2", "batches": 100,
  "options": [{"technique": "ddp", "gpus": 4, "sec_per_batch": 1.0, "status": "measured"},
              {"technique": "ddp", "gpus": 2, "status": "oom"}]}]}
J
"$SATURN" plan --time-limit 1 --profile=2x8 "$TMP/p.json" >"$TMP/out" 2>"$TMP/err" ||
	fail "plan --profile: exit $? $(cat "$TMP/err")"
grep -q "^0 .*node0+node1" "$TMP/out" || { cat "$TMP/out"; fail "task 0 not on two nodes"; }
grep -q "Makespan: .*700.0 s" "$TMP/out" || { cat "$TMP/out"; fail "makespan not 700 s"; }
grep -q "1 predicted multi-node option(s); 1 task(s) run on several nodes" "$TMP/out" ||
	fail "no note on predicted multi-node options"
[ "$(grep -c '^[012] ' "$TMP/out")" -eq 3 ] || fail "not every task id planned once"
# one node: the two-node option cannot be used
"$SATURN" plan --time-limit 1 --profile=1x8 "$TMP/p.json" >"$TMP/out1" 2>"$TMP/err" ||
	fail "plan --profile=1x8: exit $? $(cat "$TMP/err")"
grep -q "node0+node1" "$TMP/out1" && fail "two-node option on one node"
grep -q "Makespan: .*1100.0 s" "$TMP/out1" || { cat "$TMP/out1"; fail "one-node makespan not 1100 s"; }
# refusals
for bad in 2 0x8 2x0 2x8x 2y8 x8; do
	"$SATURN" plan --profile="$bad" "$TMP/p.json" >/dev/null 2>"$TMP/err"
	[ $? = 64 ] || fail "--profile=$bad must be a usage error"
	grep -q "must be NODESxGPUS" "$TMP/err" || fail "--profile=$bad: message"
done
"$SATURN" plan --profile=2x8 --objective=share "$TMP/p.json" >/dev/null 2>&1
[ $? = 64 ] || fail "--profile with --objective must be a usage error"
sed 's/"sec_per_batch": 1.0, "status": "measured"}, *$/"status": "oom"},/' "$TMP/p.json" >"$TMP/none.json"
grep -q '"gpus": 4, "status": "oom"' "$TMP/none.json" || fail "test setup: sed"
"$SATURN" plan --profile=2x8 "$TMP/none.json" >/dev/null 2>"$TMP/err"
[ $? = 2 ] || fail "a task without usable option must be bad input"
grep -q "task 1 (m/bs16) has no usable option" "$TMP/err" || fail "message: $(cat "$TMP/err")"
exit 0
