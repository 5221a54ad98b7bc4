#!/bin/sh
# bad-input.sh - every kind of bad problem file makes `saturn plan` exit 2
# with a message naming the file and the field, and print no plan.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/common.sh"

N1='{"format": "saturn-problem/1", "nodes": [{"name": "n1", "gpus": 8}], "tasks": ['
OPT='"options": [{"technique": "ddp", "gpus": 2, "sec_per_batch": 1}]'
n=0

# check NAME EXPECTED-TEXT CONTENT: CONTENT written to a file, planned.
check() {
	n=$((n + 1))
	f="$TMP/case$n.json"
	printf '%s' "$3" >"$f"
	"$SATURN" plan "$f" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq 2 ] || fail "$1: exit $rc, expected 2 ($(cat "$TMP/err"))"
	grep -qF -- "$f" "$TMP/err" || fail "$1: message does not name the file: $(cat "$TMP/err")"
	grep -qF -- "$2" "$TMP/err" || fail "$1: message lacks '$2': $(cat "$TMP/err")"
	[ ! -s "$TMP/out" ] || fail "$1: printed a plan"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "$1: more than one line: $(cat "$TMP/err")"
}

check "empty file" "empty input" ""
check "malformed" "malformed JSON" '{"format": "saturn-problem/1", "nodes": [}'
check "truncated" "truncated" "$N1{\"id\": \"t\", \"batches\": 1, $OPT"
check "not an object" "JSON object" '[1, 2, 3]'
check "wrong version" "format: unsupported \"saturn-problem/9\"" '{"format": "saturn-problem/9", "nodes": [], "tasks": []}'
check "no format" "format: missing" '{"nodes": [], "tasks": []}'
check "negative" "tasks[0] (t).batches" "$N1{\"id\": \"t\", \"batches\": -4, $OPT}]}"
check "NaN" "tasks[0] (t).batches: must be a finite number" "$N1{\"id\": \"t\", \"batches\": NaN, $OPT}]}"
check "Infinity" "tasks[0] (t).options[0].sec_per_batch: must be a finite number" \
	"$N1{\"id\": \"t\", \"batches\": 1, \"options\": [{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": Infinity}]}]}"
check "missing number" "tasks[0] (t).batches: missing" "$N1{\"id\": \"t\", $OPT}]}"
check "wrong type" "nodes[0] (n1).gpus: must be an integer" '{"format": "saturn-problem/1", "nodes": [{"name": "n1", "gpus": "eight"}], "tasks": []}'
check "non-integer" "tasks[0] (t).options[0].gpus: must be an integer" \
	"$N1{\"id\": \"t\", \"batches\": 1, \"options\": [{\"technique\": \"ddp\", \"gpus\": 1.5, \"sec_per_batch\": 1}]}]}"
check "duplicate task id" "duplicate task id \"t\"" "$N1{\"id\": \"t\", \"batches\": 1, $OPT}, {\"id\": \"t\", \"batches\": 2, $OPT}]}"
check "duplicate node" "duplicate node name" '{"format": "saturn-problem/1", "nodes": [{"name": "n1", "gpus": 8}, {"name": "n1", "gpus": 4}], "tasks": []}'
check "unknown node" "tasks[0] (t).running.node: unknown node \"n7\"" \
	"$N1{\"id\": \"t\", \"batches\": 1, $OPT, \"running\": {\"node\": \"n7\", \"gpu_ids\": [0, 1], \"technique\": \"ddp\"}}]}"
check "unknown class" "tasks[0] (t).options[0].class: no node has class \"v100\"" \
	"$N1{\"id\": \"t\", \"batches\": 1, \"options\": [{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1, \"class\": \"v100\"}]}]}"
check "no fitting option" "tasks[0] (t): no option fits any node" \
	"$N1{\"id\": \"t\", \"batches\": 1, \"options\": [{\"technique\": \"ddp\", \"gpus\": 16, \"sec_per_batch\": 1}]}]}"
check "busy GPU out of range" "nodes[0] (n1).busy[0].gpu_ids[0]" \
	'{"format": "saturn-problem/1", "nodes": [{"name": "n1", "gpus": 8, "busy": [{"gpu_ids": [8], "until_s": 5}]}], "tasks": []}'

# files that cannot be read
"$SATURN" plan "$TMP/missing.json" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || fail "missing file: exit status"
grep -q "missing.json" "$TMP/err" || fail "missing file: $(cat "$TMP/err")"
"$SATURN" plan "$TMP" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || fail "directory: exit status"
grep -q "directory" "$TMP/err" || fail "directory: $(cat "$TMP/err")"
# stdin, named as such
printf '{"format": "saturn-problem/1"' | "$SATURN" plan - >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || fail "stdin: exit status"
grep -q "^saturn: stdin: truncated" "$TMP/err" || fail "stdin: $(cat "$TMP/err")"
# binary garbage
head -c 4096 /dev/urandom >"$TMP/garbage.json"
"$SATURN" plan "$TMP/garbage.json" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || fail "garbage: exit status $(cat "$TMP/err")"
echo "$n bad-input cases rejected"
exit 0
