#!/bin/sh
# hostile-fs.sh - an unprivileged user attacks sched/saturn's files while
# its own and another user's batches are profiled and run: it tries to make
# folders in PROFILE_DIR, STATE_DIR/progress, STATE_DIR/jobs and
# STATE_DIR/scripts (not writable: must fail, so no other user's folder can
# be squatted), and plants a symlink to a root-owned 0600 file or a root
# 0700 folder, or a FIFO, at every name it can still write (and a 20 GiB
# sparse file as a profile): its own profile
# cache folder PROFILE_DIR/UID/cache, its profiles PROFILE_DIR/UID/NAME.json,
# its progress files STATE_DIR/progress/UID/JOBID.json and entries of its
# jobs folder STATE_DIR/jobs/UID. Asserted: the root file and folder keep
# their mode and owner, slurmctld keeps answering, the victim's batch runs
# every task exactly once on its profile, the attacker's own tasks run too
# (on the users' requests where its files were refused), and slurmctld.log
# names each refused file; once the jobs ended their progress files (the
# planted ones too) are swept. Also: `saturn status` on a FIFO state file fails
# at once.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
[ -x "$top_builddir/profiler/saturn-profile" ] && [ -x "$top_builddir/runner/saturn-run" ] ||
	skip "saturn-profile/saturn-run not built"
hostile_users
job_bin >/dev/null || fail "cannot stage the job-side programs"
BIN=$JOB_BIN
wrap="${TMPDIR:-/tmp}/saturn-e2e-fswrap-$$"
cat >"$wrap" <<EOW
#!/bin/sh
sleep 6 # time for the attacker to plant its cache link before the profiler looks
exec "$BIN/saturn-profile" --backend cpu --timeout 60 --trial-batches 2 "\$@"
EOW
chmod 755 "$wrap"
sched_setup 60 "saturn_profiler=$wrap,saturn_profile_time=5"
hostile_dirs
H=$HOSTILE_UID
V=$VICTIM_UID
P="$STATE_DIR/profiles"

# root's things every link points at
SECRET="$SATURN_CLUSTER_DIR/root-secret"
RDIR="$SATURN_CLUSTER_DIR/root-dir"
echo secret >"$SECRET"
chmod 600 "$SECRET"
mkdir -m 700 "$RDIR"
secret0=$(mode_owner "$SECRET")
rdir0=$(mode_owner "$RDIR")
untouched() {
	[ "$(mode_owner "$SECRET")" = "$secret0" ] || fail "$1: root file now $(mode_owner "$SECRET"), was $secret0"
	[ "$(mode_owner "$RDIR")" = "$rdir0" ] || fail "$1: root folder now $(mode_owner "$RDIR"), was $rdir0"
	[ "$(cat "$SECRET")" = secret ] || fail "$1: root file changed"
	scontrol ping >/dev/null 2>&1 || fail "$1: slurmctld does not answer"
}

# the controller's layout
wait_for 20 test -d "$P" || fail "no $P"
for x in "$STATE_DIR:755" "$P:755" "$STATE_DIR/progress:755" "$STATE_DIR/jobs:755" "$STATE_DIR/scripts:711"; do
	[ "$(mode_owner "${x%:*}")" = "${x#*:} 0" ] || fail "${x%:*}: $(mode_owner "${x%:*}"), want ${x#*:} 0"
done

# (1) no folder the attacker can write lies on the way to anyone's files
# (as_attacker sets $d: the loop variable is $x)
for x in "$P/$V" "$P/cache" "$STATE_DIR/progress/$V" "$STATE_DIR/jobs/$V" "$STATE_DIR/scripts/x" "$P/$H"; do
	as_attacker mkdir "$x" 2>/dev/null && fail "attacker could make $x"
	as_attacker ln -s "$RDIR" "$x" 2>/dev/null && fail "attacker could plant a link at $x"
	[ -e "$x" ] || [ -L "$x" ] && fail "$x exists after the attempt"
done
note "attacker cannot make folders or links in the controller's folders"

# scripts: the victim's batch logs to the job log; the attacker's tasks
# plant a FIFO (task 0) or links (tasks 1, 2) at their progress file
write_emulate_task "$SATURN_CLUSTER_DIR/victim.sh"
ALOG="$SATURN_CLUSTER_DIR/attacker.log"
: >"$ALOG"
chmod 666 "$ALOG"
cat >"$SATURN_CLUSTER_DIR/attacker.sh" <<EOS
#!/bin/sh
export PATH="$BIN:\$PATH"
t=\${SLURM_ARRAY_TASK_ID:-0}
if [ "\${SATURN_MODE:-}" = "" ]; then
	echo "task=\$t job=\$SLURM_JOB_ID batch=\$SATURN_BATCH progress=\${SATURN_PROGRESS_FILE:-}" >>$ALOG
	if [ -n "\${SATURN_PROGRESS_FILE:-}" ] && [ "\$SATURN_BATCH" = evil-a ]; then
		case \$t in
		0) mkfifo "\$SATURN_PROGRESS_FILE" ;;
		1) ln -s "$SECRET" "\$SATURN_PROGRESS_FILE" ;;
		*) ln -s "$RDIR" "\$SATURN_PROGRESS_FILE" ;;
		esac
		# and entries of its jobs folder
		ln -s "$SECRET" "$STATE_DIR/jobs/\$(id -u)/link-\$t" 2>/dev/null
	fi
	sleep \${TASK_SLEEP:-12}
	exit 0
fi
\${SATURN_SRUN-srun} saturn-run --batches 40 -- saturn-emulate --model gpt2 --batch-size 8 --time-scale 0.001
EOS
chmod 755 "$SATURN_CLUSTER_DIR/attacker.sh" "$SATURN_CLUSTER_DIR/victim.sh"

# (2) the attacker's first batch: profiled; its cache folder becomes a link
aj=$(as_attacker sbatch --parsable --saturn-batch=evil-a --array=0-2 --gres=gpu:2 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/attacker.sh") ||
	fail "attacker sbatch"
wait_for 30 test -d "$P/$H" || fail "no per-user folder $P/$H"
[ "$(mode_owner "$P/$H")" = "700 $H" ] || fail "$P/$H: $(mode_owner "$P/$H"), want 700 $H"
as_attacker ln -s "$RDIR" "$P/$H/cache" || fail "attacker cannot write its own folder"
# its next profiles: a FIFO and a link to root's file
as_attacker mkfifo "$P/$H/evil-b.json" || fail "mkfifo"
as_attacker ln -s "$SECRET" "$P/$H/evil-c.json" || fail "ln"
# and one of 20 GiB (sparse): never read into slurmctld's memory
as_attacker truncate -s 20G "$P/$H/evil-d.json" || fail "truncate"
wait_for 30 sh -c "squeue -h -n saturn-profile:evil-a -o %i | grep -q ." || fail "no profiler job for evil-a"
note "attacker's profiler job $(squeue -h -n saturn-profile:evil-a -o %i), cache linked to $RDIR"
untouched "after the cache link"

# (3) the victim's batch, profiled and planned, meanwhile
vj=$(as_victim sbatch --parsable --saturn-batch=victim --array=0-2 --gres=gpu:4 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/victim.sh") ||
	fail "victim sbatch"
# (4) the attacker's batches whose profile is a FIFO or a link
bj=$(TASK_SLEEP=1 as_attacker sbatch --parsable --saturn-batch=evil-b --gres=gpu:1 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/attacker.sh") ||
	fail "attacker sbatch evil-b"
cj=$(TASK_SLEEP=1 as_attacker sbatch --parsable --saturn-batch=evil-c --gres=gpu:1 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/attacker.sh") ||
	fail "attacker sbatch evil-c"
dj=$(TASK_SLEEP=1 as_attacker sbatch --parsable --saturn-batch=evil-d --gres=gpu:1 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/attacker.sh") ||
	fail "attacker sbatch evil-d"
note "victim $vj, attacker $aj, $bj, $cj, $dj"
wait_for 30 grep -q "batch evil-b of uid $H: profile refused: $P/$H/evil-b.json: a FIFO" "$CTLD_LOG" ||
	fail "FIFO profile not refused by name"
wait_for 30 grep -q "batch evil-c of uid $H: profile refused: $P/$H/evil-c.json: a symbolic link" "$CTLD_LOG" ||
	fail "linked profile not refused by name"
wait_for 30 grep -q "batch evil-d of uid $H: profile refused: $P/$H/evil-d.json: larger than" "$CTLD_LOG" ||
	fail "huge profile not refused by name"
scontrol ping >/dev/null 2>&1 || fail "slurmctld does not answer after the huge profile"
untouched "after the planted profiles"

# (5) the attacker's tasks plant a FIFO and links at their progress files
wait_for 150 sh -c "grep -q 'batch=evil-a' '$ALOG'" || fail "the attacker's tasks never ran"
wait_for 60 grep -q "progress file refused: $STATE_DIR/progress/$H/[0-9]*.json: a FIFO" "$CTLD_LOG" ||
	fail "FIFO progress file not refused by name"
wait_for 30 grep -q "progress file refused: $STATE_DIR/progress/$H/[0-9]*.json: a symbolic link" "$CTLD_LOG" ||
	fail "linked progress file not refused by name"
untouched "after the planted progress files"
grep 'refused' "$CTLD_LOG" | sed 's/^/#   /' | head -8

wait_for 240 queue_empty || fail "batches did not finish"
untouched "at the end"
# the victim: every task once, planned with its own profile
assert_each_once 3
[ "$(mode_owner "$P/$V/victim.json")" = "644 $V" ] || [ "$(stat -c %u "$P/$V/victim.json" 2>/dev/null)" = "$V" ] ||
	fail "victim's profile: $(mode_owner "$P/$V/victim.json")"
grep -q "batch victim of uid $V: profile $P/$V/victim.json loaded" "$CTLD_LOG" ||
	fail "the victim's profile was not loaded"
grep -q "^task=0 .*plan=p" "$JOBLOG" || fail "the victim's tasks were not planned"
# the attacker: each of its 6 tasks once as well
for b in "evil-a 0" "evil-a 1" "evil-a 2" "evil-b 0" "evil-c 0" "evil-d 0"; do
	c=$(grep -c "^task=${b#* } .*batch=${b% *} " "$ALOG" || true)
	[ "$c" = 1 ] || fail "attacker task $b ran $c times"
done
# the attacker's profiler refused its own linked cache folder
grep -qs "profile cache $P/$H/cache: a symbolic link (refused)" "$STATE_DIR/jobs/$H/"*.out ||
	fail "the profiler did not refuse the linked cache: $(cat "$STATE_DIR/jobs/$H/"*.out 2>/dev/null | head -5)"
for x in "$P/$V" "$STATE_DIR/progress/$V" "$STATE_DIR/jobs/$V" "$STATE_DIR/jobs/$H" "$STATE_DIR/progress/$H"; do
	[ "$(mode_owner "$x")" = "700 ${x##*/}" ] || fail "$x: $(mode_owner "$x")"
done
for f in "$STATE_DIR/scripts/"*; do
	[ -e "$f" ] || continue # removed with their batches (none left)
	[ "$(stat -c %a "$f")" = 600 ] || fail "script copy $f: $(mode_owner "$f")"
done

# (6) progress files of ended jobs are swept (unlinkat: links and FIFOs
# go, what they named stays)
wait_for 200 sh -c "[ -z \"\$(find '$STATE_DIR/progress/$H' '$STATE_DIR/progress/$V' -mindepth 1)\" ]" ||
	fail "progress files left after the jobs ended: $(ls -l "$STATE_DIR/progress/$H" "$STATE_DIR/progress/$V")"
untouched "after the sweep"
note "progress files of ended jobs removed"

# (7) saturn status on a FIFO state file: an error, not a hang
mkdir -p "$SATURN_CLUSTER_DIR/fifostate"
mkfifo "$SATURN_CLUSTER_DIR/fifostate/state.json"
timeout 10 "$top_builddir/cli/saturn" status --state-dir "$SATURN_CLUSTER_DIR/fifostate" 2>"$SATURN_CLUSTER_DIR/status.err"
rc=$?
[ $rc = 2 ] || fail "saturn status on a FIFO: exit $rc (124: it blocked)"
grep -q "state.json: a FIFO" "$SATURN_CLUSTER_DIR/status.err" || fail "status error: $(cat "$SATURN_CLUSTER_DIR/status.err")"
rm -f "$wrap"
job_bin_clean
note "ok"
