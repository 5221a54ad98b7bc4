#!/bin/sh
# status-speed.sh - `saturn status` shows, per running task, the speed its
# profile predicted against the one observed (runtime feedback), and no
# such column when the state has no observed speed.
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
      "gpus": 4, "node": "n1", "gpu_ids": [0, 1, 2, 3], "start": $((now - 10)), "end": $((now + 50)),
      "spb_profile": 0.5, "spb_observed": 1.02 },
    { "id": "7_1", "batch": "sweep", "uid": 0, "job_id": 7, "state": "planned", "technique": "ddp",
      "gpus": 2, "node": "n1", "gpu_ids": [4, 5], "start": $((now + 50)), "end": $((now + 100)) } ],
  "corrections": [ { "uid": 0, "batch": "sweep", "signature": "m/bs8", "technique": "fsdp",
      "gpus": 4, "class": "", "ratio": 2.04, "batches": 60, "updated": $now } ] }
EOF2
out=$("$SATURN" status --state-dir "$d") || { echo "status failed: $out"; exit 1; }
echo "$out"
echo "$out" | grep -q '^TASK .*END  SPEED (PROFILED -> OBSERVED)$' || { echo "no speed column"; exit 1; }
echo "$out" | grep -q '^7_0 .*spb 0\.50 -> 1\.02 (x2\.0)$' || { echo "bad speed of 7_0"; exit 1; }
echo "$out" | grep -q '^7_1 .* -$' || { echo "7_1 should show -"; exit 1; }
# without observed speeds: the table as before
sed -i 's/"spb_profile": 0.5, "spb_observed": 1.02//; s/"end": \([0-9]*\),$/"end": \1/' "$d/state.json"
out=$("$SATURN" status --state-dir "$d") || { echo "status failed: $out"; exit 1; }
echo "$out" | grep -q 'SPEED' && { echo "speed column without observed speeds"; exit 1; }
# a bad correction is named
sed -i 's/"ratio": 2.04/"ratio": -1/' "$d/state.json"
out=$("$SATURN" status --state-dir "$d" 2>&1) && { echo "bad correction accepted"; exit 1; }
echo "$out" | grep -q 'corrections\[0\]\.[a-z]*: ' || { echo "error does not name the entry: $out"; exit 1; }
echo ok
