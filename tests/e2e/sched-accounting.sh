#!/bin/sh
# sched-accounting.sh - the plan record in Slurm's accounting: on a cluster
# with slurmdbd and MariaDB (cluster.sh SATURN_ACCOUNTING=1), every task of
# a small batch has its plan (batch, task, technique, GPU count, node, plan
# id, predicted and observed seconds per batch) in its AdminComment as
# sacct shows it after the job ended, once per task, matching the GPUs and
# node Slurm allocated; a user's own Comment stays as it was. With
# saturn_record=comment (after scontrol reconfigure) the record goes into
# Comment, after the user's text, and AdminComment stays empty. `saturn
# status --sacct` shows the ended batch from sacct. Every task runs exactly
# once. cluster.sh stops slurmdbd and MariaDB, and a new start begins with
# empty accounting.
. "$(dirname "$0")/sched-lib.sh"
[ -x /usr/sbin/slurmdbd ] || skip "slurmdbd not installed (scripts/install-deps.sh)"
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || skip "MariaDB not installed (scripts/install-deps.sh)"
export SATURN_ACCOUNTING=1
# MariaDB's first start and slurmdbd's tables on a loaded machine
export SATURN_DB_TIMEOUT=${SATURN_DB_TIMEOUT:-600}
sched_setup 83
scontrol show config | grep -q 'AccountingStorageType *= accounting_storage/slurmdbd' ||
	fail "AccountingStorageType is not accounting_storage/slurmdbd"
sacct -n -X >/dev/null 2>&1 || fail "sacct does not answer: $(sacct -n -X 2>&1 | tail -2)"

# 4 tasks; ddp 2 GPUs 40 x 0.1 s, fsdp 4 GPUs 40 x 0.06 s. The tasks report
# 0.07 s per batch and run ~8 s (two cycles see the report).
cat >"$(profile_file e2e-acct)" <<'EOP'
{ "format": "saturn-profile/1", "batch": "e2e-acct", "created": 1,
  "tasks": [ { "signature": "m/bs8", "task_ids": "0-3", "batches": 40,
    "options": [ { "technique": "ddp", "gpus": 2, "sec_per_batch": 0.1, "status": "measured" },
                 { "technique": "fsdp", "gpus": 4, "sec_per_batch": 0.06, "status": "measured" } ] } ] }
EOP
cp "$(profile_file e2e-acct)" "$(profile_file e2e-acct2)"
sed -i 's/"batch": "e2e-acct"/"batch": "e2e-acct2"/; s/"0-3"/"0-1"/' "$(profile_file e2e-acct2)"
cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
t=\${SLURM_ARRAY_TASK_ID:-0}
[ -n "\${SATURN_PROGRESS_FILE:-}" ] &&
	printf '{"format":"saturn-progress/1","job_id":%s,"batches_done":20,"batches_total":40,"sec_per_batch":0.07,"updated":%s}\n' \
		"\$SLURM_JOB_ID" "\$(date +%s)" >"\$SATURN_PROGRESS_FILE.tmp" &&
	mv "\$SATURN_PROGRESS_FILE.tmp" "\$SATURN_PROGRESS_FILE"
sleep 8
echo "task=\$t job=\$SLURM_JOB_ID batch=\${SATURN_BATCH:-} node=\$SLURMD_NODENAME technique=\${SATURN_TECHNIQUE:-} saturn_gpus=\${SATURN_GPUS:-} plan=\${SATURN_PLAN_ID:-}" >>$JOBLOG
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

# rec_field NAME TEXT: value of NAME=... in a plan record
rec_field() {
	echo "$2" | sed 's/.*saturn: //' | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# check_batch ARRAY N BATCH FIELD: the sacct rows of ARRAY's N tasks, each
# (variables other than wait_for's n)
# once, COMPLETED, with one plan record in FIELD (AdminComment or Comment)
# that matches the job log and the allocation.
check_batch() {
	arr=$1
	ntask=$2
	batch=$3
	col=$4
	# every task's final record reaches slurmdbd some time after its end
	wait_for 120 sh -c "[ \$(sacct -n -X -P -j $arr -s CD -o JobID | wc -l) -ge $ntask ]" ||
		fail "sacct does not show $ntask completed tasks of $arr: $(sacct -n -X -P -j "$arr" -o JobID,State)"
	wait_for 60 sh -c "[ \$(sacct -n -X -P -j $arr -o $col | grep -c 'obs_spb=') -ge $ntask ]" || true
	sacct -n -X -P -j "$arr" -o JobID,State,Start,End,AllocTRES,NodeList,AdminComment,Comment >"$SATURN_CLUSTER_DIR/sacct-$arr.txt"
	note "sacct -j $arr:"
	cat "$SATURN_CLUSTER_DIR/sacct-$arr.txt"
	rows=$(wc -l <"$SATURN_CLUSTER_DIR/sacct-$arr.txt")
	[ "$rows" = "$ntask" ] || fail "sacct shows $rows rows for $arr, expected $ntask (one per task)"
	for t in $(seq 0 $((ntask - 1))); do
		row=$(grep "^${arr}_$t|" "$SATURN_CLUSTER_DIR/sacct-$arr.txt")
		[ "$(echo "$row" | grep -c .)" = 1 ] || fail "task ${arr}_$t: $(echo "$row" | grep -c .) sacct rows, expected 1"
		state=$(echo "$row" | cut -d'|' -f2)
		tres=$(echo "$row" | cut -d'|' -f5)
		nodes=$(echo "$row" | cut -d'|' -f6)
		if [ "$col" = AdminComment ]; then
			rec=$(echo "$row" | cut -d'|' -f7)
			other=$(echo "$row" | cut -d'|' -f8)
		else
			rec=$(echo "$row" | cut -d'|' -f8)
			other=$(echo "$row" | cut -d'|' -f7)
		fi
		[ "$state" = COMPLETED ] || fail "task ${arr}_$t: state $state"
		[ "$(echo "$rec" | grep -o 'saturn: ' | wc -l)" = 1 ] || fail "task ${arr}_$t: not exactly one plan record in $col: '$rec'"
		logline=$(grep "^task=$t job=" "$JOBLOG" | grep " batch=$batch ")
		[ "$(rec_field batch "$rec")" = "$batch" ] || fail "task ${arr}_$t: batch in record: '$rec'"
		[ "$(rec_field task "$rec")" = "$t" ] || fail "task ${arr}_$t: task in record: '$rec'"
		tech=$(rec_field technique "$rec")
		gpus=$(rec_field gpus "$rec")
		[ "$tech" = "$(field technique "$logline")" ] || fail "task ${arr}_$t: record technique $tech, ran with $(field technique "$logline")"
		[ "$gpus" = "$(field saturn_gpus "$logline")" ] || fail "task ${arr}_$t: record gpus $gpus, ran with $(field saturn_gpus "$logline")"
		echo "$tres" | grep -q "gres/gpu=$gpus\(,\|$\)" || fail "task ${arr}_$t: record gpus=$gpus, AllocTRES $tres"
		[ "$(rec_field node "$rec")" = "$nodes" ] || fail "task ${arr}_$t: record node $(rec_field node "$rec"), ran on $nodes"
		[ "$(rec_field plan "$rec")" = "$(field plan "$logline")" ] || fail "task ${arr}_$t: record plan $(rec_field plan "$rec"), SATURN_PLAN_ID $(field plan "$logline")"
		case "$tech" in
		ddp) want=0.1 ;;
		fsdp) want=0.06 ;;
		*) fail "task ${arr}_$t: technique '$tech'" ;;
		esac
		[ "$(rec_field pred_spb "$rec")" = "$want" ] || fail "task ${arr}_$t: pred_spb $(rec_field pred_spb "$rec"), profile says $want"
		[ "$(rec_field obs_spb "$rec")" = 0.07 ] || fail "task ${arr}_$t: obs_spb '$(rec_field obs_spb "$rec")', reported 0.07"
		OTHER=$other
	done
}

# default (saturn_record=admin_comment); a user's Comment stays theirs
job=$(sbatch --parsable --saturn-batch=e2e-acct --array=0-3 --gres=gpu:8 --time=2 --comment="user note" \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch"
note "array $job submitted"
wait_for 120 queue_empty || fail "batch did not finish"
assert_each_once 4
check_batch "$job" 4 e2e-acct AdminComment
[ "$OTHER" = "user note" ] || fail "the user's Comment became '$OTHER'"

# saturn status --sacct: the ended batch from Slurm's accounting
out=$("$top_builddir/cli/saturn" status --sacct e2e-acct) || fail "saturn status --sacct: $out"
note "saturn status --sacct e2e-acct:"
echo "$out"
echo "$out" | grep -q '^Batch e2e-acct of root: 4 tasks, 4 ended; first start .*, makespan [0-9:]* ([0-9]* s)$' ||
	fail "saturn status --sacct: no batch line with its makespan"
for t in 0 1 2 3; do
	rec=$(grep "^${job}_$t|" "$SATURN_CLUSTER_DIR/sacct-$job.txt" | cut -d'|' -f7)
	echo "$out" | grep -Eq "^$t +${job}_$t +COMPLETED .* $(rec_field node "$rec") +$(rec_field gpus "$rec") $(rec_field technique "$rec") +$(rec_field pred_spb "$rec") +0.07\$" ||
		fail "saturn status --sacct: no row for task $t as sacct has it"
done
"$top_builddir/cli/saturn" status --sacct no-such-batch >/dev/null && fail "saturn status --sacct: a batch that does not exist shown"

note "saturn_record=comment"
n0=$(grep -c 'sched/saturn: interval' "$CTLD_LOG")
sed -i 's/^SchedulerParameters=.*/&,saturn_record=comment/' "$SATURN_CLUSTER_DIR/etc/slurm.conf"
scontrol reconfigure || fail "scontrol reconfigure"
wait_for 30 sh -c "[ \$(grep -c 'sched/saturn: interval' $CTLD_LOG) -gt $n0 ]" || fail "settings not re-read"
: >"$JOBLOG"
job2=$(sbatch --parsable --saturn-batch=e2e-acct2 --array=0-1 --gres=gpu:8 --time=2 --comment="user note" \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "sbatch 2"
wait_for 120 queue_empty || fail "second batch did not finish"
assert_each_once 2
check_batch "$job2" 2 e2e-acct2 Comment
[ -z "$OTHER" ] || fail "AdminComment '$OTHER' with saturn_record=comment"
grep -q "^${job2}_0|.*|user note; saturn: batch=e2e-acct2 " "$SATURN_CLUSTER_DIR/sacct-$job2.txt" ||
	fail "the user's Comment is not kept in front of the record"

# a clean stop: slurmdbd and MariaDB gone, their ports free; a new start
# (the database's files reused) begins with empty accounting
note "stop and start again"
dbpid=$(cat "$SATURN_CLUSTER_DIR/run/mariadbd.pid") && dbdpid=$(cat "$SATURN_CLUSTER_DIR/run/slurmdbd.pid") ||
	fail "no pid file of mariadbd or slurmdbd"
sh "$CLUSTER" stop >"$SATURN_CLUSTER_DIR.stop.log" 2>&1 || { cat "$SATURN_CLUSTER_DIR.stop.log"; fail "cluster stop"; }
for p in $dbpid $dbdpid; do
	kill -0 "$p" 2>/dev/null && fail "pid $p ($(cat /proc/$p/comm 2>/dev/null)) still alive after stop"
done
sh "$CLUSTER" start >"$SATURN_CLUSTER_DIR.start2.log" 2>&1 || { cat "$SATURN_CLUSTER_DIR.start2.log"; fail "second start"; }
left=$(sacct -n -X -a -S now-1days -o JobID 2>&1) || fail "sacct after the second start: $left"
[ -z "$(echo "$left" | tr -d ' \n')" ] || fail "accounting not empty after a new start: $left"
sacctmgr -n -P show assoc format=account,user | grep -qx 'saturn|root' || fail "no association saturn|root after the second start"
rm -f "$SATURN_CLUSTER_DIR.stop.log" "$SATURN_CLUSTER_DIR.start2.log"
note "ok"
