# hostile-lib.sh - helpers for the hostile-user end-to-end tests
# (tests/e2e/hostile-*.sh): a sched/saturn cluster (sched-lib.sh) and two
# unprivileged local users, $HOSTILE_USER (the attacker) and $VICTIM_USER,
# who submit and act through their own Slurm commands. Each test tries an
# attack as the attacker and asserts what the controller did: refused it,
# kept it to the attacker's own batch, and left the victim's batch and
# root's files as they were. Sourced after sched-lib.sh, not run.
#
#   . "$top_srcdir/tests/e2e/sched-lib.sh"
#   . "$top_srcdir/tests/e2e/hostile-lib.sh"
#   hostile_users                  # create both users (skip without root)
#   sched_setup SLOT [params]
#   hostile_dirs                   # job-writable folders for both users
#   JOB=$(as_attacker sbatch --parsable ...)
#   as_victim squeue ...

HOSTILE_USER=${SATURN_HOSTILE_USER:-saturnuser}
VICTIM_USER=${SATURN_VICTIM_USER:-saturnuser2}

# Create both test users when missing (needs root).
hostile_users() {
	[ "$(id -u)" = 0 ] || skip "needs root (test users, slurmd)"
	for u in "$HOSTILE_USER" "$VICTIM_USER"; do
		id "$u" >/dev/null 2>&1 && continue
		useradd -M -d /nonexistent -s /bin/sh "$u" >/dev/null 2>&1 ||
			id "$u" >/dev/null 2>&1 || skip "cannot create test user $u"
	done
	HOSTILE_UID=$(id -u "$HOSTILE_USER")
	VICTIM_UID=$(id -u "$VICTIM_USER")
}

# After sched_setup: $HOSTILE_OUT and $VICTIM_OUT, one folder each that only
# its user may write, inside the cluster folder; the job log stays 666.
hostile_dirs() {
	HOSTILE_OUT="$SATURN_CLUSTER_DIR/home-$HOSTILE_USER"
	VICTIM_OUT="$SATURN_CLUSTER_DIR/home-$VICTIM_USER"
	chmod 755 "$SATURN_CLUSTER_DIR"
	mkdir -p "$HOSTILE_OUT" "$VICTIM_OUT"
	chown "$HOSTILE_USER" "$HOSTILE_OUT"
	chown "$VICTIM_USER" "$VICTIM_OUT"
	chmod 700 "$HOSTILE_OUT" "$VICTIM_OUT"
}

# as USER CMD...: run CMD as USER in the user's folder, against this cluster.
as() {
	u=$1
	shift
	if [ "$u" = "$HOSTILE_USER" ]; then d=$HOSTILE_OUT; else d=$VICTIM_OUT; fi
	runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" \
		sh -c 'cd "$0" || exit 1; exec "$@"' "$d" "$@"
}
as_attacker() {
	as "$HOSTILE_USER" "$@"
}
as_victim() {
	as "$VICTIM_USER" "$@"
}

# File mode and owner as "MODE UID" (no link followed), or "missing".
mode_owner() {
	stat -c '%a %u' -- "$1" 2>/dev/null || echo missing
}

# job_bin: a world-readable folder holding copies of the job-side programs
# (saturn-profile, saturn-run, saturn-emulate) for jobs that run as the
# test users: a checkout under /root (mode 0700) is out of their reach, as
# it is for a fresh machine's CI clone. Sets (and prints) JOB_BIN, which
# write_emulate_task then puts first on the task's PATH; removed by
# job_bin_clean (call it from the test's end).
job_bin() {
	JOB_BIN="${TMPDIR:-/tmp}/saturn-e2e-bin-$$"
	mkdir -p "$JOB_BIN" || return 1
	for p in profiler/saturn-profile runner/saturn-run runner/saturn-emulate; do
		cp "$top_builddir/$p" "$JOB_BIN/" || return 1
	done
	chmod 755 "$JOB_BIN" "$JOB_BIN"/*
	echo "$JOB_BIN"
}
job_bin_clean() {
	[ -n "${JOB_BIN:-}" ] && rm -rf "$JOB_BIN"
}

# write_array_task FILE SECONDS: a batch script that sleeps SECONDS
# ($TASK_SECONDS when set) and then logs "array=A task=T job=J node=N
# user=U technique=X gpus=G" to the job log, so that several users' arrays
# can be told apart (assert_array_once).
write_array_task() {
	cat >"$1" <<EOS
#!/bin/sh
sleep \${TASK_SECONDS:-$2}
echo "array=\${SLURM_ARRAY_JOB_ID:-\$SLURM_JOB_ID} task=\${SLURM_ARRAY_TASK_ID:-0} job=\$SLURM_JOB_ID node=\$SLURMD_NODENAME user=\$(id -u) technique=\${SATURN_TECHNIQUE:-} gpus=\${SATURN_GPUS:-}" >>$JOBLOG
EOS
	chmod 755 "$1"
}

# assert_array_once ARRAY N: tasks 0..N-1 of ARRAY each logged exactly once.
assert_array_once() {
	for i in $(seq 0 $(($2 - 1))); do
		c=$(grep -c "^array=$1 task=$i " "$JOBLOG" || true)
		[ "$c" = 1 ] || fail "task ${1}_$i ran $c times (expected exactly once)"
	done
	total=$(grep -c "^array=$1 " "$JOBLOG" || true)
	[ "$total" = "$2" ] || fail "$total runs of array $1 logged, expected $2"
}

# For tests whose task script logs "user=UID task=I start=EPOCH" lines to
# $JOBLOG (sched-fairness.sh, hostile-share.sh):
# assert_users_once UID:N...: tasks 0..N-1 of each UID logged exactly once.
assert_users_once() {
	for u in "$@"; do
		uid=${u%:*}
		for i in $(seq 0 $((${u#*:} - 1))); do
			c=$(grep -c "^user=$uid task=$i " "$JOBLOG" || true)
			[ "$c" = 1 ] || fail "user $uid task $i ran $c times (expected exactly once)"
		done
	done
}
# last_start UID: the latest start of UID's tasks.
last_start() {
	awk -v u="$1" '$1 == "user=" u { s = substr($3, 7) + 0; if (s > m) m = s } END { printf "%.3f", m }' "$JOBLOG"
}
# starts_between UID T0 T1: how many of UID's tasks started in (T0, T1).
starts_between() {
	awk -v u="$1" -v t0="$2" -v t1="$3" '$1 == "user=" u { s = substr($3, 7) + 0; if (s > t0 && s < t1) n++ } END { print n + 0 }' "$JOBLOG"
}
