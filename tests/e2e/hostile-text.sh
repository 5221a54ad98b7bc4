#!/bin/sh
# hostile-text.sh - text from a user's profile never reaches root's records
# as it is (doc/security.md, "Clean text"). The attacker's profile names a
# technique "x\nerror: forged line by mallory" (31 characters, within the
# 32 a technique may have), a signature and a reason with a line break and
# a terminal escape. Before this test's change the technique was copied
# verbatim into slurmctld.log ("released ..." and "plan ... techniques:"),
# into the job's AdminComment plan record and into squeue reasons: the log
# got a line of the attacker's choosing. Now the profile is refused at
# load with the field and the byte named, the attacker's tasks are planned
# from their request (technique "user"), slurmctld.log has no line the
# attacker wrote, the records hold only safe text, and the victim's batch
# runs from its own profile, every task of both users exactly once.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_users
sched_setup 30
hostile_dirs

FORGE=$(profile_file forge "$HOSTILE_UID") || fail "no profile folder for $HOSTILE_USER"
GOOD=$(profile_file good "$VICTIM_UID") || fail "no profile folder for $VICTIM_USER"
cat >"$FORGE" <<'EOP'
{ "format": "saturn-profile/1", "batch": "forge",
  "tasks": [ { "signature": "s", "task_ids": "0-1", "batches": 10,
    "options": [ { "technique": "x\nerror: forged line by mallory", "gpus": 2, "sec_per_batch": 0.2,
                   "status": "measured" },
                 { "technique": "ddp", "gpus": 1, "status": "oom", "reason": "r\u001b[2J\nerror: forged reason" } ] } ] }
EOP
cat >"$GOOD" <<'EOP'
{ "format": "saturn-profile/1", "batch": "good",
  "tasks": [ { "signature": "g", "task_ids": "0-1", "batches": 10,
    "options": [ { "technique": "ddp", "gpus": 2, "sec_per_batch": 0.2, "status": "measured" } ] } ] }
EOP
chown "$HOSTILE_UID" "$FORGE"
chown "$VICTIM_UID" "$GOOD"
write_array_task "$SATURN_CLUSTER_DIR/task.sh" 2

forge=$(as_attacker sbatch --parsable --saturn-batch=forge --array=0-1 --gres=gpu:1 --time=2 \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "attacker sbatch"
good=$(as_victim sbatch --parsable --saturn-batch=good --array=0-1 --gres=gpu:1 --time=2 \
	-o /dev/null "$SATURN_CLUSTER_DIR/task.sh") || fail "victim sbatch"
wait_for 90 sh -c "[ -z \"\$(squeue -h -j $forge,$good -o %i)\" ]" || fail "the batches did not finish"
assert_array_once "$forge" 2
assert_array_once "$good" 2

# refused at load, the field and the byte named
grep -a 'profile rejected' "$CTLD_LOG" | grep -q "forge.json: tasks\[0\] (s).options\[0\].technique: character 0x0a at offset 1 is not allowed" ||
	fail "the attacker's profile was not refused naming the technique and the byte"
# no line of slurmctld.log is the attacker's: every line is Slurm's own,
# beginning with its time stamp
if grep -an 'forged' "$CTLD_LOG" | grep -v 'profile rejected' | grep -q .; then
	grep -an 'forged' "$CTLD_LOG" | head
	fail "the attacker's text reached slurmctld.log"
fi
if grep -av '^\[' "$CTLD_LOG" | grep -q .; then
	grep -anv '^\[' "$CTLD_LOG" | head -5
	fail "slurmctld.log has a line without Slurm's time stamp"
fi
# the records: planned from the request, technique "user", one clean line
for t in 0 1; do
	ac=$(scontrol -o show job "${forge}_$t" 2>/dev/null | grep -o 'AdminComment=saturn: [^=]*=[^ ]* [^=]*=[^ ]* technique=[^ ]*')
	case "$ac" in
	*' technique=user') ;;
	*) fail "attacker task $t: plan record \"$ac\" does not say technique=user" ;;
	esac
	scontrol show job "${forge}_$t" | grep -q 'mallory' && fail "attacker task $t: its record holds the forged text"
done
grep -a "released JobId=.*batch good" "$CTLD_LOG" | grep -q 'technique ddp' ||
	fail "the victim's batch was not planned from its own profile"
note "ok"
