#!/bin/sh
# hostile-modify.sh - what a user may change on a Saturn task with
# `scontrol update` is an allow-list (job_modify in job_submit/saturn,
# submit_rules.c): as the job's own user, every field scontrol can update is
# tried on (a) a held task, (b) a released task that has not started and
# (c) a running task. The allowed ones (Comment, JobName, MailType,
# MailUser, a shorter TimeLimit) take effect; every other one is refused,
# named in slurmctld's log, and changes nothing: the held task stays held
# with priority 0, the running one keeps running, and every task runs
# exactly once, inside the plan. Also: ArrayTaskThrottle on the whole
# array, scontrol hold/uhold/release, scancel (still works), and root
# (an operator) may still update.
. "$(dirname "$0")/sched-lib.sh"
. "$top_srcdir/tests/e2e/hostile-lib.sh"
hostile_users
# a second partition over the same nodes: Partition=other is a valid change
export SATURN_PARTITIONS="gpu:n[1-2] other:n[1-2]"
sched_setup 64
hostile_dirs

# 4 tasks of 8 GPUs each on 2 nodes of 8 GPUs: at most 2 run at once, the
# rest stay held. Tasks wait for $GO before they log and end.
GO="$SATURN_CLUSTER_DIR/go"
GO_B="$SATURN_CLUSTER_DIR/go-b"
# profile NAME SECONDS: one 8-GPU ddp option of SECONDS, in the attacker's
# own profile folder
profile() {
	pf=$(profile_file "$1" "$HOSTILE_UID") || fail "no profile folder for $HOSTILE_USER"
	cat >"$pf" <<EOP
{ "format": "saturn-profile/1", "batch": "$1", "created": 1,
  "tasks": [ { "signature": "m/bs8", "task_ids": "0-3", "batches": $2,
    "options": [ { "technique": "ddp", "gpus": 8, "sec_per_batch": 1.0, "status": "measured" } ] } ] }
EOP
	chown "$HOSTILE_UID" "$pf"
}
profile e2e-mod 100
profile e2e-mod-f 2
profile e2e-mod-b 100
TASK="$SATURN_CLUSTER_DIR/task.sh"
cat >"$TASK" <<EOS
#!/bin/sh
t=\${SLURM_ARRAY_TASK_ID:-0}
n=0
while [ ! -e "\${WAIT_FOR:-$GO}" ] && [ \$n -lt 600 ]; do sleep 1; n=\$((n + 1)); done
echo "task=\$t job=\$SLURM_JOB_ID batch=\${SLURM_SPANK_SATURN_BATCH:-} saturn_gpus=\${SATURN_GPUS:-} plan=\${SATURN_PLAN_ID:-}" >>$JOBLOG
EOS
chmod 755 "$TASK"

# (b) first: a released task that has not started. n2 is taken by another
# job (root's, 60 min); n1 by the attacker's task F, whose profile says it
# ends after 2 s while it really waits for $GO_B: the plan then releases
# the attacker's task B onto n1, where it waits for the GPUs.
FILL=$(sbatch --parsable -w n2 --gres=gpu:8 --time=60 -o /dev/null \
	--wrap "while [ ! -e $GO_B ]; do sleep 1; done") || fail "sbatch filler"
wait_for 30 sh -c "squeue -h -j $FILL -t R -o %i | grep -q ." || fail "filler $FILL did not start"
F=$(as_attacker env WAIT_FOR="$GO_B" sbatch --parsable --saturn-batch=e2e-mod-f --gres=gpu:8 --time=60 \
	-o /dev/null "$TASK") || fail "sbatch F"
wait_for 40 sh -c "squeue -h -j $F -t R -o %i | grep -q ." || fail "F ($F) did not start"
B=$(as_attacker sbatch --parsable --saturn-batch=e2e-mod-b --gres=gpu:8 --time=60 \
	-o /dev/null "$TASK") || fail "sbatch B"
wait_for 40 sh -c "scontrol show job $B | grep -q ' Priority=[1-9]'" ||
	fail "B ($B) was not released: $(scontrol show job "$B" | grep -o 'Priority=[0-9]*\|Reason=[^ ]*')"
scontrol show job "$B" | grep -q 'JobState=PENDING' || fail "B is not pending"
note "B $B: released, not started (n1 taken by F $F, n2 by $FILL)"

A=$(as_attacker sbatch --parsable --saturn-batch=e2e-mod --array=0-3 --gres=gpu:1 --time=60 \
	-o /dev/null "$TASK") || fail "sbatch A"
sleep 7 # two planning cycles
R=$F
HELD=
for t in 0 1 2 3; do
	j=$(scontrol show job -o "${A}_$t" 2>/dev/null || scontrol show job -o "$A")
	case "$j" in *" Priority=0 "*"JobState=PENDING "*) HELD="$HELD $t" ;; esac
done
set -- $HELD
[ $# -ge 2 ] || fail "fewer than 2 held tasks of $A: '$HELD'"
H=${A}_$1
eval "S=${A}_\${$#}"
note "A $A: held$HELD (updates on $H, scancel of $S); running: F $R"

# The fields a refused update must leave as they were.
FIELDS='JobName|Priority|Nice|Account|QOS|JobState|Requeue|Restarts|TimeLimit|TimeMin|Deadline|Partition|ReqNodeList|ExcNodeList|NumNodes|NumCPUs|NumTasks|CPUs/Task|MinCPUsNode|MinMemoryNode|MinTmpDiskNode|Features|Prefer|Reservation|Dependency|Comment|AdminComment|TresPerNode|TresPerJob|TresPerTask|TresPerSocket|MailUser|MailType|OverSubscribe|Contiguous|Licenses|WorkDir|StdOut|ArrayTaskThrottle|Reboot|DelayBoot|Switches|CpusPerTres|MemPerTres|TresBind|TresFreq|SiteFactor|BurstBuffer|ClusterFeatures|CoreSpec|Network'
fields() {
	scontrol show job -o "$1" | head -1 | tr ' ' '\n' | grep -E "^($FIELDS)=" | sort
}

# refused ID PHASE OPTION ARGS...: the user's update fails, the log names
# OPTION and the phase (OPTION "-": Slurm itself refuses before any
# job_submit hook), and the fields are unchanged.
refused() {
	id=$1 phase=$2 opt=$3
	shift 3
	before=$(fields "$id")
	n=$(wc -l <"$CTLD_LOG")
	if as_attacker scontrol "$@" >"$SATURN_CLUSTER_DIR/err" 2>&1; then
		fail "$phase $id: 'scontrol $*' accepted from the user"
	fi
	if [ "$opt" != - ]; then
		tail -n +$((n + 1)) "$CTLD_LOG" | grep -F "(batch " | grep -F "$phase task) refused: $opt (" >/dev/null ||
			fail "$phase $id: 'scontrol $*': no refusal naming $opt in slurmctld.log: $(tail -n +$((n + 1)) "$CTLD_LOG" | grep saturn | tail -3)"
	fi
	after=$(fields "$id")
	[ "$before" = "$after" ] ||
		fail "$phase $id: refused 'scontrol $*' changed the job: $(echo "$before" >"$SATURN_CLUSTER_DIR/b"; echo "$after" | diff "$SATURN_CLUSTER_DIR/b" - | grep '^[<>]' | tr '\n' ' ')"
	REFUSED=$((REFUSED + 1))
}

# every update scontrol accepts, as KEY=VALUE for ID, with the option the
# log names for it
refuse_all() {
	id=$1 phase=$2
	refused "$id" "$phase" Nice update jobid="$id" nice=10
	refused "$id" "$phase" Nice update jobid="$id" nice
	refused "$id" "$phase" Priority update jobid="$id" priority=100
	refused "$id" "$phase" hold/uhold hold "$id"
	refused "$id" "$phase" hold/uhold uhold "$id"
	refused "$id" "$phase" Priority release "$id"
	refused "$id" "$phase" TresPerNode update jobid="$id" gres=gpu:8
	refused "$id" "$phase" TresPerNode update jobid="$id" TresPerNode=gres:gpu:2
	refused "$id" "$phase" TresPerJob update jobid="$id" TresPerJob=gres:gpu:2
	refused "$id" "$phase" TresPerTask update jobid="$id" TresPerTask=gres:gpu:1
	refused "$id" "$phase" TresPerSocket update jobid="$id" TresPerSocket=gres:gpu:1
	refused "$id" "$phase" NumNodes update jobid="$id" NumNodes=2
	refused "$id" "$phase" ReqNodeList update jobid="$id" ReqNodeList=n2
	refused "$id" "$phase" ExcNodeList update jobid="$id" ExcNodeList=n1
	refused "$id" "$phase" Partition update jobid="$id" Partition=other
	refused "$id" "$phase" QOS update jobid="$id" QOS=normal
	refused "$id" "$phase" Account update jobid="$id" Account=other
	refused "$id" "$phase" Features update jobid="$id" Features=fast
	refused "$id" "$phase" Prefer update jobid="$id" Prefer=fast
	refused "$id" "$phase" StartTime update jobid="$id" StartTime=now+3600
	refused "$id" "$phase" Dependency update jobid="$id" Dependency=singleton
	# Slurm 23.11 and later refuse a throttle on one task themselves,
	# before any hook ("only allowed on ArrayJobId")
	if slurm_at_least 23.11; then
		refused "$id" "$phase" - update jobid="$id" ArrayTaskThrottle=1
	else
		refused "$id" "$phase" ArrayTaskThrottle update jobid="$id" ArrayTaskThrottle=1
	fi
	refused "$id" "$phase" TimeLimit update jobid="$id" TimeLimit=120
	refused "$id" "$phase" TimeMin update jobid="$id" TimeMin=5
	refused "$id" "$phase" Deadline update jobid="$id" Deadline=now+7200
	refused "$id" "$phase" EndTime update jobid="$id" EndTime=now+600
	refused "$id" "$phase" Requeue update jobid="$id" Requeue=0
	refused "$id" "$phase" NumCPUs update jobid="$id" NumCPUs=4
	refused "$id" "$phase" NumTasks update jobid="$id" NumTasks=2
	refused "$id" "$phase" CPUsPerTask update jobid="$id" CPUsPerTask=2
	refused "$id" "$phase" MinCPUsNode update jobid="$id" MinCPUsNode=2
	refused "$id" "$phase" MinMemoryNode update jobid="$id" MinMemoryNode=100
	refused "$id" "$phase" MinTmpDiskNode update jobid="$id" MinTmpDiskNode=10
	refused "$id" "$phase" ReqSockets update jobid="$id" ReqSockets=1
	refused "$id" "$phase" ReqCores update jobid="$id" ReqCores=1
	refused "$id" "$phase" ReqThreads update jobid="$id" ReqThreads=1
	refused "$id" "$phase" TasksPerNode update jobid="$id" TasksPerNode=1
	refused "$id" "$phase" ReservationName update jobid="$id" ReservationName=r1
	refused "$id" "$phase" Licenses update jobid="$id" Licenses=lic
	refused "$id" "$phase" WorkDir update jobid="$id" WorkDir=/tmp
	refused "$id" "$phase" StdOut update jobid="$id" StdOut=/tmp/out
	refused "$id" "$phase" OverSubscribe update jobid="$id" OverSubscribe=yes
	refused "$id" "$phase" Contiguous update jobid="$id" Contiguous=yes
	refused "$id" "$phase" CoreSpec update jobid="$id" CoreSpec=1
	refused "$id" "$phase" DelayBoot update jobid="$id" DelayBoot=10
	refused "$id" "$phase" Reboot update jobid="$id" Reboot=yes
	refused "$id" "$phase" WCKey update jobid="$id" WCKey=wk
	refused "$id" "$phase" Switches update jobid="$id" Switches=1
	refused "$id" "$phase" CpusPerTres update jobid="$id" CpusPerTres=gpu:2
	refused "$id" "$phase" MemPerTres update jobid="$id" MemPerTres=gpu:100
	refused "$id" "$phase" TresBind update jobid="$id" TresBind=gpu:closest
	refused "$id" "$phase" TresFreq update jobid="$id" TresFreq=gpu:low
	refused "$id" "$phase" ClusterFeatures update jobid="$id" ClusterFeatures=cf
	refused "$id" "$phase" ResetAccrueTime update jobid="$id" ResetAccrueTime
	# refused by Slurm itself, never shown to a job_submit hook
	refused "$id" "$phase" - update jobid="$id" AdminComment=x
	refused "$id" "$phase" - update jobid="$id" BurstBuffer=x
	refused "$id" "$phase" - update jobid="$id" SiteFactor=100
	# an allowed field does not carry a refused one through
	refused "$id" "$phase" Nice update jobid="$id" Comment=sneak nice=10
}

# allowed ID: the allow-listed fields take effect.
allowed() {
	id=$1
	as_attacker scontrol update jobid="$id" Comment="ok-$2" JobName="renamed-$2" MailType=END \
		MailUser=nobody@example.com TimeLimit=50 >"$SATURN_CLUSTER_DIR/err" 2>&1 ||
		fail "$2 $id: allowed update refused: $(cat "$SATURN_CLUSTER_DIR/err")"
	f=$(fields "$id")
	for want in "Comment=ok-$2" "JobName=renamed-$2" MailType=END MailUser=nobody@example.com TimeLimit=00:50:00; do
		echo "$f" | grep -qx "$want" || fail "$2 $id: $want not applied: $(echo "$f" | tr '\n' ' ')"
	done
}

REFUSED=0

note "(a) held task $H"
refuse_all "$H" held
as_attacker scontrol update jobid="$H" nice=10 >"$SATURN_CLUSTER_DIR/err" 2>&1
grep -q "held state" "$SATURN_CLUSTER_DIR/err" || fail "nice on a held task: unclear error: $(cat "$SATURN_CLUSTER_DIR/err")"
as_attacker scontrol update jobid="$H" partition=other >"$SATURN_CLUSTER_DIR/err" 2>&1
grep -q "Access/permission denied" "$SATURN_CLUSTER_DIR/err" || fail "partition on a held task: unclear error: $(cat "$SATURN_CLUSTER_DIR/err")"
allowed "$H" held

note "(b) released task $B (not started)"
refuse_all "$B" "released (not started)"
allowed "$B" released

note "(c) running task $R"
refuse_all "$R" running
allowed "$R" running
note "$REFUSED refused updates, each naming its field and changing nothing"

# ArrayTaskThrottle on the whole array: Slurm sets it before any hook; the
# refusal puts it back.
as_attacker scontrol update jobid="$A" ArrayTaskThrottle=1 >/dev/null 2>&1 && fail "user set ArrayTaskThrottle on $A"
for t in $HELD; do
	scontrol show job "${A}_$t" | grep -q 'ArrayTaskThrottle=[1-9]' && fail "${A}_$t has a throttle: $(scontrol show job "${A}_$t" | grep -o 'ArrayTaskThrottle=[0-9]*')"
done
grep -q "refused: ArrayTaskThrottle (array_inx) may not be changed" "$CTLD_LOG" || fail "no ArrayTaskThrottle refusal in the log"

# Nothing lifted a hold: the held tasks are still held, 2 planning cycles on.
sleep 7
for t in $HELD; do
	scontrol show job "${A}_$t" | grep -q 'JobState=PENDING' || fail "${A}_$t left PENDING"
	scontrol show job "${A}_$t" | grep -q ' Priority=0 ' || fail "${A}_$t lost its hold: $(scontrol show job "${A}_$t" | grep -o 'Priority=[0-9]*')"
done
squeue -h -j "$R" -t R -o %i | grep -q . || fail "$R no longer running"

# An operator (root) may still update, beyond the allow-list; the task
# stays held (only a release or a priority change would lift the hold).
scontrol update jobid="$H" Comment=by-root TimeLimit=90 || fail "root could not update $H"
f=$(fields "$H")
echo "$f" | grep -qx Comment=by-root || fail "root's Comment not applied"
echo "$f" | grep -qx TimeLimit=01:30:00 || fail "root's longer TimeLimit not applied"
echo "$f" | grep -qx Priority=0 || fail "root's update released $H"

# scancel is no update: the user may still cancel a held and a released task.
as_attacker scancel "$S" || fail "user could not scancel held $S"
as_attacker scancel "$B" || fail "user could not scancel released $B"
# (a cancelled pending task of an array is taken out of its meta record:
# "Job ID_T not found")
wait_for 20 sh -c "scontrol show job -o $S 2>&1 | grep -q 'JobState=CANCELLED\|not found'" ||
	fail "$S not cancelled: $(scontrol show job -o "$S" 2>&1 | cut -c1-300)"
wait_for 20 sh -c "scontrol show job $B | grep -q JobState=CANCELLED" || fail "$B not cancelled"

# Let the tasks end: each remaining task of A runs exactly once, in the plan.
touch "$GO_B" "$GO"
wait_for 240 queue_empty || fail "A did not finish"
s=${S#*_}
for t in 0 1 2 3; do
	c=$(grep -c "^task=$t job=.* batch=e2e-mod " "$JOBLOG" || true)
	if [ "$t" = "$s" ]; then
		[ "$c" = 0 ] || fail "cancelled task $t ran"
		continue
	fi
	[ "$c" = 1 ] || fail "task $t ran $c times (expected exactly once)"
	line=$(grep "^task=$t job=.* batch=e2e-mod " "$JOBLOG")
	[ "$(field saturn_gpus "$line")" = 8 ] || fail "task $t ran outside the plan: $line"
	[ -n "$(field plan "$line")" ] || fail "task $t ran without SATURN_PLAN_ID: $line"
done
grep -q "batch=e2e-mod-b" "$JOBLOG" && fail "cancelled B ran"
note "ok"
