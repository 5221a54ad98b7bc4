#!/bin/sh
# status-sacct.sh - `saturn status --sacct` against a stand-in sacct (first
# in PATH; it records its arguments and prints \x1f-separated rows as sacct
# -P --delimiter does): tasks grouped by batch and user from the plan
# records in AdminComment or Comment (a user's text in front kept apart),
# jobs without a record left out, the batch's makespan, the batch filter,
# --since and --user passed on, a failing sacct reported.
set -u
SATURN="${top_builddir:-.}/cli/saturn"
[ -x "$SATURN" ] || { echo "no $SATURN"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
U=$(printf '\037')
cat >"$d/rows" <<EOF2
7_0${U}alice${U}COMPLETED${U}1000${U}1100${U}n1${U}billing=1,gres/gpu=4${U}saturn: batch=sweep task=0 technique=fsdp gpus=4 node=n1 plan=p1-1 pred_spb=0.25 obs_spb=0.3${U}
7_1${U}alice${U}COMPLETED${U}1010${U}1130${U}n2${U}billing=1,gres/gpu=2${U}${U}my | note; saturn: batch=sweep task=1 technique=ddp gpus=2 node=n2 plan=p1-1 pred_spb=0.5
8${U}bob${U}RUNNING${U}1200${U}Unknown${U}n1${U}gres/gpu=1${U}admin text; saturn: batch=other technique=single gpus=1 node=n1 plan=p1-2${U}
9${U}bob${U}COMPLETED${U}1000${U}1001${U}n1${U}gres/gpu=1${U}${U}not saturn
EOF2
mkdir "$d/bin"
cat >"$d/bin/sacct" <<EOF2
#!/bin/sh
echo "\$*" >"$d/args"
echo "SLURM_TIME_FORMAT=\$SLURM_TIME_FORMAT" >>"$d/args"
[ -f "$d/fail" ] && { echo "sacct: error: Problem talking to the database" >&2; exit 1; }
case "\$*" in
*"-o JobID,User "*) if [ -f "$d/ids" ]; then cat "$d/ids"; else cut -d"$U" -f1,2 "$d/rows"; fi ;;
*) cat "$d/rows" ;;
esac
EOF2
chmod 755 "$d/bin/sacct"
export PATH="$d/bin:$PATH" TZ=UTC

out=$("$SATURN" status --sacct) || { echo "status --sacct failed: $out"; exit 1; }
echo "$out"
grep -q -- '-X -n -P --delimiter=.* -S now-30days -a$' "$d/args" || { echo "sacct args: $(cat "$d/args")"; exit 1; }
grep -q '^SLURM_TIME_FORMAT=%s$' "$d/args" || { echo "no epoch times asked"; exit 1; }
echo "$out" | grep -q '^Batch sweep of alice: 2 tasks, 2 ended; first start 01-01 00:16:40, last end 01-01 00:18:50, makespan 0:02:10 (130 s)$' ||
	{ echo "bad sweep line"; exit 1; }
echo "$out" | grep -q '^0 *7_0 *COMPLETED .* 0:01:40 *n1 *4 fsdp *0.25 *0.3$' || { echo "bad row task 0"; exit 1; }
echo "$out" | grep -q '^1 *7_1 *COMPLETED .* 0:02:00 *n2 *2 ddp *0.5 *-$' || { echo "bad row task 1 (record in Comment)"; exit 1; }
echo "$out" | grep -q '^Batch other of bob: 1 task, 0 ended; first start 01-01 00:20:00, last end -$' || { echo "bad other line"; exit 1; }
echo "$out" | grep -q '^- *8 *RUNNING .* - *n1 *1 single *- *-$' || { echo "bad row of job 8"; exit 1; }
echo "$out" | grep -q '^.* 9 ' && { echo "job 9 has no plan record but is shown"; exit 1; }

out=$("$SATURN" status --sacct --since 2026-01-01 --user root other) || { echo "filtered failed: $out"; exit 1; }
grep -q -- '-S 2026-01-01 -u root$' "$d/args" || { echo "sacct args: $(cat "$d/args")"; exit 1; }
echo "$out" | grep -q '^Batch sweep' && { echo "batch filter ignored"; exit 1; }
echo "$out" | grep -q '^Batch other of bob' || { echo "batch other missing"; exit 1; }

# a Comment with line breaks forges whole lines after its own: a record
# for bob's job 8 (listed twice), for a job sacct does not list (99), and
# for alice's job 7_0 under bob's name; sacct's own JobID,User list says
# which lines are real. Only bob's (attacker's) own job 9 keeps its row.
cp "$d/rows" "$d/rows.good"
printf '7_0%salice
7_1%salice
8%sbob
9%smallory
' "$U" "$U" "$U" "$U" >"$d/ids"
cat >"$d/rows" <<EOF2
7_0${U}alice${U}COMPLETED${U}1000${U}1100${U}n1${U}gres/gpu=4${U}saturn: batch=sweep task=0 technique=fsdp gpus=4 node=n1 plan=p1-1${U}
8${U}bob${U}RUNNING${U}1200${U}Unknown${U}n1${U}gres/gpu=1${U}saturn: batch=other technique=single gpus=1 node=n1 plan=p1-2${U}
9${U}mallory${U}COMPLETED${U}1000${U}1001${U}n1${U}gres/gpu=1${U}${U}saturn: batch=mine technique=ddp gpus=1 node=n1 plan=p1-3
8${U}bob${U}COMPLETED${U}1200${U}1201${U}n1${U}gres/gpu=64${U}saturn: batch=other technique=fsdp gpus=64 node=n1 plan=p1-2${U}
99${U}alice${U}COMPLETED${U}1000${U}9000${U}n1${U}gres/gpu=8${U}saturn: batch=sweep task=5 technique=fsdp gpus=8 node=n1 plan=p1-1${U}
7_1${U}bob${U}COMPLETED${U}1000${U}1001${U}n1${U}gres/gpu=8${U}saturn: batch=forged task=1 technique=x gpus=8 node=n1 plan=p1-1${U}
EOF2
out=$("$SATURN" status --sacct 2>"$d/err") || { echo "forged: status --sacct failed: $out"; exit 1; }
echo "$out"
cat "$d/err"
echo "$out" | grep -q '^Batch mine of mallory: 1 task' || { echo "forged: mallory's own row missing"; exit 1; }
echo "$out" | grep -q '^Batch sweep of alice: 1 task,' || { echo "forged: alice's sweep should be task 0 only"; exit 1; }
echo "$out" | grep -q '^Batch other' && { echo "forged: job 8 is listed twice, its rows must be left out"; exit 1; }
echo "$out" | grep -q 'forged\| 99 \|fsdp *8\| 64 ' && { echo "forged: a forged row is shown"; exit 1; }
grep -q '4 plan record(s) left out' "$d/err" || { echo "forged: no warning: $(cat "$d/err")"; exit 1; }
cp "$d/rows.good" "$d/rows"
rm -f "$d/ids"

"$SATURN" status --sacct nothing-like-this >/dev/null 2>&1
[ $? = 1 ] || { echo "no such batch: not exit 1"; exit 1; }
touch "$d/fail"
err=$("$SATURN" status --sacct 2>&1)
[ $? = 1 ] || { echo "failing sacct: not exit 1"; exit 1; }
echo "$err" | grep -q 'sacct failed (exit 1)' || { echo "failing sacct: $err"; exit 1; }
echo "ok"
