#!/bin/sh
# status.sh - `saturn status` renders sched/saturn's persisted state
# (saturn-sched-state/1): counts, batches with their users, table, Gantt
# chart, batch and user filters, errors.
set -u
SATURN="${top_builddir:-.}/cli/saturn"
[ -x "$SATURN" ] || { echo "no $SATURN"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
now=$(date +%s)
cat >"$d/state.json" <<EOF2
{ "format": "saturn-sched-state/1", "plan_id": "p1-7", "updated": $now, "makespan_s": 100,
  "makespan_end": $((now + 100)), "lower_bound_s": 90, "solve_s": 1, "method": "anneal",
  "tasks": [
    { "id": "7_0", "batch": "sweep", "uid": 0, "job_id": 8, "state": "running", "technique": "fsdp",
      "gpus": 4, "node": "n1", "gpu_ids": [0, 1, 2, 3], "start": $((now - 10)), "end": $((now + 50)) },
    { "id": "7_1", "batch": "sweep", "uid": 0, "job_id": 7, "state": "planned", "technique": "ddp",
      "gpus": 2, "node": "n1", "gpu_ids": [4, 5], "start": $((now + 50)), "end": $((now + 100)) },
    { "id": "9", "batch": "other", "uid": 4000000001, "job_id": 9, "state": "released", "technique": "user",
      "gpus": 1, "node": "n2", "gpu_ids": [0], "start": $now, "end": $((now + 20)) } ] }
EOF2
out=$("$SATURN" status --state-dir "$d") || { echo "status failed: $out"; exit 1; }
echo "$out"
echo "$out" | grep -q '^Plan p1-7 (anneal).*3 tasks: 1 running, 1 released, 1 planned' || { echo "bad header"; exit 1; }
echo "$out" | grep -q '^7_1 *ddp *2 *n1 *4-5 ' || { echo "bad table row"; exit 1; }
echo "$out" | grep -q 'Node n1 (' || { echo "no Gantt chart"; exit 1; }
# the batches with their users (a name when the system knows the uid)
echo "$out" | grep -q '^BATCH *USER *TASKS *RUNNING *RELEASED *PLANNED' || { echo "no batch table"; exit 1; }
echo "$out" | grep -q "^sweep *$(id -nu 0) (0) *2 *1 *0 *1\$" || { echo "bad batch row sweep"; exit 1; }
echo "$out" | grep -q '^other *uid 4000000001 *1 *0 *1 *0$' || { echo "bad batch row other"; exit 1; }
# without "nodes" (older states) sizes come from the plan: n1 shows GPUs 0-5
echo "$out" | grep -q '^Node n1 (6 GPUs)' || { echo "derived node size"; exit 1; }
# with "nodes": the real GPU counts, and idle nodes too
sed 's|^  "tasks": \[|  "nodes": [ { "name": "n1", "gpus": 8 }, { "name": "n2", "gpus": 8 }, { "name": "n3", "gpus": 4 } ],\n  "tasks": [|' \
	"$d/state.json" >"$d/s2.json"
mkdir "$d/with-nodes" && mv "$d/s2.json" "$d/with-nodes/state.json"
out2=$("$SATURN" status --state-dir "$d/with-nodes") || { echo "status with nodes failed: $out2"; exit 1; }
for l in '^Node n1 (8 GPUs)' '^Node n2 (8 GPUs)' '^Node n3 (4 GPUs)'; do
	echo "$out2" | grep -q "$l" || { echo "nodes: no /$l/"; echo "$out2"; exit 1; }
done
sed -i 's|"gpus": 4 } \]|"gpus": 0 } ]|' "$d/with-nodes/state.json"
"$SATURN" status --state-dir "$d/with-nodes" 2>"$d/err"; [ $? = 2 ] || { echo "bad nodes entry should exit 2"; exit 1; }
grep -q 'nodes\[2\]\.gpus: must be an integer from 1 to 64' "$d/err" || { echo "nodes error: $(cat "$d/err")"; exit 1; }
# the same name for two users: two batches, told apart by --user
sed 's|"id": "9", "batch": "other"|"id": "9", "batch": "sweep"|' "$d/state.json" >"$d/two.json"
mkdir "$d/two" && mv "$d/two.json" "$d/two/state.json"
out=$("$SATURN" status --state-dir "$d/two" sweep) || { echo "status sweep failed"; exit 1; }
[ "$(echo "$out" | grep -c '^sweep ')" = 2 ] || { echo "two users' sweep should be two batches: $out"; exit 1; }
out=$("$SATURN" status --state-dir "$d/two" --user 4000000001 sweep) || { echo "--user uid failed"; exit 1; }
echo "$out" | grep -q '1 task of batch sweep of user uid 4000000001: 0 running, 1 released' || { echo "user filter: $out"; exit 1; }
echo "$out" | grep -q '^7_' && { echo "user filter shows another user's task: $out"; exit 1; }
out=$("$SATURN" status --state-dir "$d/two" -u "$(id -nu 0)") || { echo "--user name failed"; exit 1; }
echo "$out" | grep -q "2 tasks of user $(id -nu 0) (0)" || { echo "user name filter: $out"; exit 1; }
"$SATURN" status --state-dir "$d/two" --user 12345 >/dev/null; [ $? = 1 ] || { echo "a user without tasks should exit 1"; exit 1; }
"$SATURN" status --state-dir "$d/two" --user no-such-user-x 2>"$d/err"; [ $? = 64 ] || { echo "unknown user should exit 64"; exit 1; }
grep -q 'no-such-user-x: no such user' "$d/err" || { echo "unknown user message: $(cat "$d/err")"; exit 1; }
out=$("$SATURN" status --state-dir "$d" other) || exit 1
echo "$out" | grep -q '1 task of batch other: 0 running, 1 released, 0 planned' || { echo "batch filter: $out"; exit 1; }
"$SATURN" status --state-dir "$d" nosuch >/dev/null; [ $? = 1 ] || { echo "unknown batch should exit 1"; exit 1; }
"$SATURN" status --state-dir "$d/missing" 2>/dev/null; [ $? = 2 ] || { echo "missing state should exit 2"; exit 1; }
echo '{"format":"x"}' >"$d/state.json"
"$SATURN" status --state-dir "$d" 2>"$d/err"; [ $? = 2 ] || { echo "bad state should exit 2"; exit 1; }
grep -q 'format' "$d/err" || { echo "error should name the field"; exit 1; }
# a FIFO at state.json: a clear error at once, never a wait for a writer
mkdir "$d/fifo" && mkfifo "$d/fifo/state.json"
timeout 10 "$SATURN" status --state-dir "$d/fifo" 2>"$d/err"
rc=$?
[ $rc = 2 ] || { echo "FIFO state should exit 2, got $rc (124: it blocked)"; exit 1; }
grep -q "$d/fifo/state.json: a FIFO.*refused" "$d/err" || { echo "FIFO error: $(cat "$d/err")"; exit 1; }
# a symlink at state.json is not followed
mkdir "$d/link" && ln -s "$d/state.json" "$d/link/state.json"
timeout 10 "$SATURN" status --state-dir "$d/link" 2>"$d/err"
[ $? = 2 ] || { echo "symlinked state should exit 2"; exit 1; }
grep -q "$d/link/state.json: a symbolic link.*refused" "$d/err" || { echo "link error: $(cat "$d/err")"; exit 1; }
echo ok
