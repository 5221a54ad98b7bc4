# sched-lib.sh - helpers for the sched/saturn end-to-end tests
# (tests/e2e/sched-*.sh): one private one-machine cluster per test
# (scripts/cluster.sh; port base $SATURN_SCHED_E2E_PORT_BASE (default
# SATURN_E2E_PORT_BASE + 1000, 18000) + 10 x
# the test's slot, so the tests can run in parallel), the plugins from the build folder, a job log that
# the batch script appends to, and small wait/assert helpers. Sourced, not
# run. Skips (exit 77) without root, Slurm, or the built plugins.
# SCHED_E2E_PARAMS adds SchedulerParameters (e.g. saturn_backfill=no, to see
# sched-backfill.sh fail without sched/backfill).
# Every cycle is recorded (saturn_record_cycles) and, when the test passed,
# replayed at the end with `saturn replay`: a cycle whose outputs differ
# fails the test (SATURN_E2E_REPLAY=0: neither).

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir

skip() {
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	sched_dump
	exit 1
}
note() {
	echo "# $*"
}

# Where the build put the plugins (plugin/slurm when plugin/Makefile.am
# collects them there, else libtool's .libs).
sched_plugin_dir() {
	for d in "${SATURN_PLUGIN_DIR:-}" "$top_builddir/plugin/slurm" "$top_builddir/plugin/.libs"; do
		[ -n "$d" ] && [ -f "$d/sched_saturn.so" ] && {
			echo "$d"
			return 0
		}
	done
	return 1
}

# sched_setup SLOT [extra SchedulerParameters]: start the cluster, trap stop.
sched_setup() {
	[ "$(id -u)" = 0 ] || skip "needs root (slurmd, fake GPU devices)"
	command -v slurmctld >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ] || skip "Slurm daemons not installed"
	PLUGDIR=$(sched_plugin_dir) || skip "sched_saturn.so not built (configure --with-slurm-source)"
	for p in spank_saturn.so job_submit_saturn.so; do
		[ -f "$PLUGDIR/$p" ] || skip "$p not built in $PLUGDIR"
	done
	export SATURN_CLUSTER_DIR="${TMPDIR:-/tmp}/saturn-e2e-$(basename "$0" .sh)-$$"
	export SATURN_PORT_BASE=$((${SATURN_SCHED_E2E_PORT_BASE:-$((${SATURN_E2E_PORT_BASE:-17000} + 1000))} + 10 * $1))
	export SATURN_PLUGIN_DIR="$PLUGDIR"
	export SATURN_SCHED=${SATURN_SCHED:-saturn}
	export SATURN_DEBUG=debug
	export SATURN_AUTH=${SATURN_AUTH:-none}
	REC=
	[ "${SATURN_E2E_REPLAY:-1}" = 0 ] || REC=",saturn_record_cycles=5000"
	export SATURN_SCHED_PARAMS="saturn_interval=3,saturn_solver_time=0.5$REC${2:+,$2}${SCHED_E2E_PARAMS:+,$SCHED_E2E_PARAMS}"
	CLUSTER="$top_srcdir/scripts/cluster.sh"
	trap sched_teardown EXIT INT TERM
	sh "$CLUSTER" start >"${SATURN_CLUSTER_DIR}.start.log" 2>&1 || {
		cat "${SATURN_CLUSTER_DIR}.start.log"
		fail "cluster did not start"
	}
	. "$SATURN_CLUSTER_DIR/env"
	JOBLOG="$SATURN_CLUSTER_DIR/jobs.log"
	: >"$JOBLOG"
	chmod 666 "$JOBLOG"
	CTLD_LOG="$SATURN_CLUSTER_DIR/log/slurmctld.log"
	STATE_DIR="$SATURN_CLUSTER_DIR/state/saturn"
}

sched_teardown() {
	rc=$?
	trap - EXIT INT TERM
	if [ -n "${SATURN_CLUSTER_DIR:-}" ] && [ -f "$SATURN_CLUSTER_DIR/etc/slurm.conf" ]; then
		sh "$CLUSTER" stop >/dev/null 2>&1 || echo "# cluster stop reported a problem"
		[ "$rc" = 0 ] && { sched_replay || rc=1; }
		[ "$rc" = 0 ] && [ -z "${SATURN_KEEP:-}" ] && rm -rf "$SATURN_CLUSTER_DIR" "${SATURN_CLUSTER_DIR}.start.log"
	fi
	exit "$rc"
}

# The cycles recorded in STATE_DIR/cycles run again through saturn_cycle_run
# (`saturn replay`): 0 when every one gives the outputs it recorded (or none
# was recorded), else 1 with the first difference.
sched_replay() {
	[ "${SATURN_E2E_REPLAY:-1}" != 0 ] && [ -d "${STATE_DIR:-}/cycles" ] || return 0
	SATURN_CLI="$top_builddir/cli/saturn"
	[ -x "$SATURN_CLI" ] || return 0
	n=$(ls "$STATE_DIR/cycles" | grep -c '^cycle-.*\.json$' || true)
	[ "$n" -gt 0 ] || return 0
	if out=$("$SATURN_CLI" replay "$STATE_DIR/cycles" 2>&1); then
		echo "# replay: the $n recorded cycle(s) gave the same outputs"
		return 0
	fi
	echo "$out" | grep -v ': same$' | head -5
	echo "FAIL: a recorded cycle did not replay to the same outputs (saturn replay $STATE_DIR/cycles)"
	return 1
}

sched_dump() {
	[ -n "${SATURN_CLUSTER_DIR:-}" ] || return 0
	echo "--- squeue"
	squeue -o '%.12i %.9T %.14b %N %R' 2>&1 | head -40
	echo "--- job log"
	cat "$JOBLOG" 2>/dev/null | head -40
	echo "--- slurmctld.log (saturn)"
	grep -a 'saturn\|error' "$CTLD_LOG" 2>/dev/null | tail -40
}

. "$top_srcdir/tests/e2e/slurm-version.sh"

# wait_for SECONDS CMD...: poll CMD every 0.5 s until it succeeds.
wait_for() {
	t=$1
	shift
	n=0
	while ! "$@" >/dev/null 2>&1; do
		n=$((n + 1))
		[ $n -le $((t * 2)) ] || return 1
		sleep 0.5
	done
	return 0
}

# write_emulate_task FILE: a batch script that logs task=I job=J
# technique=T saturn_gpus=G plan=P to the job log when it runs for real (not
# in the profiler's signature/trial modes), sleeps TASK_SLEEP seconds, then
# trains with saturn-emulate through saturn-run (under srun; SATURN_SRUN=
# runs it outside Slurm).
write_emulate_task() {
	cat >"$1" <<EOS
#!/bin/sh
export PATH="${JOB_BIN:-$top_builddir/runner}:\$PATH"
t=\${SLURM_ARRAY_TASK_ID:-0}
if [ "\${SATURN_MODE:-}" = "" ]; then
	echo "task=\$t job=\$SLURM_JOB_ID technique=\${SATURN_TECHNIQUE:-} saturn_gpus=\${SATURN_GPUS:-} plan=\${SATURN_PLAN_ID:-}" >>$JOBLOG
	sleep \${TASK_SLEEP:-0}
fi
\${SATURN_SRUN-srun} saturn-run --batches 40 -- saturn-emulate --model gpt2 --batch-size 8 --time-scale 0.001
EOS
	chmod 755 "$1"
}

# profile_file NAME [UID]: PROFILE_DIR/UID/NAME.json (UID 0 by default: the
# tests submit as root), after making the user's folder (0700, theirs) when
# the controller has not made it yet.
profile_file() {
	pu=${2:-0}
	wait_for 20 test -d "$STATE_DIR/profiles" || fail "sched/saturn did not make $STATE_DIR/profiles"
	if [ ! -d "$STATE_DIR/profiles/$pu" ]; then
		mkdir -m 700 "$STATE_DIR/profiles/$pu" && chown "$pu" "$STATE_DIR/profiles/$pu" ||
			fail "cannot make $STATE_DIR/profiles/$pu"
	fi
	echo "$STATE_DIR/profiles/$pu/$1.json"
}

queue_empty() {
	[ -z "$(squeue -h -o %i 2>/dev/null)" ]
}

# A batch script that records its task and sleeps: task=I job=J node=N
# gpus=G cvd=... technique=T saturn_gpus=G plan=P start=S end=E.
# Usage: write_task_script FILE SECONDS [FAIL_TASK]
write_task_script() {
	cat >"$1" <<EOS
#!/bin/sh
t=\${SLURM_ARRAY_TASK_ID:-0}
cvd=\${CUDA_VISIBLE_DEVICES:-}
n=\$(echo "\$cvd" | tr ',' '\n' | grep -c .)
start=\$(date +%s.%N)
sleep \${TASK_SECONDS:-$2}
[ "\$t" = "${3:--1}" ] && exit 3
echo "task=\$t job=\$SLURM_JOB_ID node=\$SLURMD_NODENAME gpus=\$n cvd=\$cvd technique=\${SATURN_TECHNIQUE:-} saturn_gpus=\${SATURN_GPUS:-} plan=\${SATURN_PLAN_ID:-} start=\$start end=\$(date +%s.%N)" >>$JOBLOG
EOS
	chmod 755 "$1"
}

# field NAME LINE: value of NAME=... in a job-log line
field() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# every task in 0..N-1 logged exactly once
assert_each_once() {
	for i in $(seq 0 $(($1 - 1))); do
		c=$(grep -c "^task=$i " "$JOBLOG" || true)
		[ "$c" = 1 ] || fail "task $i ran $c times (expected exactly once)"
	done
	total=$(grep -c '^task=' "$JOBLOG" || true)
	[ "$total" = "$1" ] || fail "$total task runs logged, expected $1"
}

# plan_tasks FILE: one line per task of a persisted plan (state.json):
# "ID START_EPOCH GPUS TECHNIQUE NODE STATE".
plan_tasks() {
	awk -F'"' '
		/"id":/ { id = $4 }
		/"state":/ { st = $4 }
		/"technique":/ { tech = $4 }
		/"node":/ { node = $4 }
		/"gpus":/ { g = $3; gsub(/[:, ]/, "", g) }
		/"start":/ { s = $3; gsub(/[:, ]/, "", s) }
		/"end":/ { print id, s, g, tech, node, st }
	' "$1"
}

# wait_plan SECONDS COPY: wait for the first persisted plan and copy it.
wait_plan() {
	wait_for "$1" test -s "$STATE_DIR/state.json" || return 1
	cp "$STATE_DIR/state.json" "$2"
}
