# lib.sh - helpers for the Slurm end-to-end tests of the SPANK and
# job_submit plugins (tests/e2e/*.sh): one private one-machine cluster per
# test (scripts/cluster.sh; port base $SATURN_E2E_PORT_BASE (17000) + 10 x the
# test's slot, so tests run in parallel), the plugins from the build folder,
# a test user, and bounded wait/assert helpers. Sourced, not run.
# Skips (exit 77) without root, Slurm, or the built plugins.
#
#   . "$top_srcdir/tests/e2e/lib.sh"
#   e2e_setup SLOT             # start; stopped again on exit (trap)
#   JOB=$(e2e_sbatch_user ARGS...)  # submit as $E2E_USER, prints the job id
#   wait_for 10 job_reason_is "$JOB" 'saturn: waiting*' || fail "..."

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir

E2E_USER=${SATURN_E2E_USER:-saturnuser}

skip() {
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	e2e_dump
	exit 1
}
note() {
	echo "# $*"
}

# Folder holding the built plugins (plugin/slurm, else libtool's .libs).
e2e_plugin_dir() {
	for d in "${SATURN_PLUGIN_DIR:-}" "$top_builddir/plugin/slurm" "$top_builddir/plugin/.libs"; do
		[ -n "$d" ] && [ -f "$d/job_submit_saturn.so" ] && [ -f "$d/spank_saturn.so" ] && {
			echo "$d"
			return 0
		}
	done
	return 1
}

# Create the unprivileged test user when missing (needs root).
e2e_user() {
	id "$E2E_USER" >/dev/null 2>&1 && return 0
	useradd -M -d /nonexistent -s /bin/sh "$E2E_USER" >/dev/null 2>&1 ||
		id "$E2E_USER" >/dev/null 2>&1 || skip "cannot create test user $E2E_USER"
}

# e2e_setup SLOT: check prerequisites, start the cluster (stock
# sched/backfill: these tests are about submission, not planning), trap stop.
e2e_setup() {
	[ "$(id -u)" = 0 ] || skip "needs root (slurmd, fake GPU devices, test user)"
	[ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] || skip "Slurm daemons not installed"
	command -v sbatch >/dev/null 2>&1 || skip "Slurm clients not installed"
	PLUGDIR=$(e2e_plugin_dir) || skip "spank_saturn.so/job_submit_saturn.so not built (configure --with-slurm-source)"
	e2e_user
	E2E_DIR=$(mktemp -d "${TMPDIR:-/tmp}/saturn-e2e-$(basename "$0" .sh).XXXXXX")
	chmod 755 "$E2E_DIR"
	mkdir -p "$E2E_DIR/out"
	chmod 1777 "$E2E_DIR/out"
	export SATURN_CLUSTER_DIR="$E2E_DIR/cluster"
	export SATURN_PORT_BASE=$((${SATURN_E2E_PORT_BASE:-17000} + 10 * $1))
	export SATURN_PLUGIN_DIR="$PLUGDIR"
	export SATURN_SCHED=${E2E_SCHED:-backfill}
	export SATURN_NODES=${E2E_NODES:-2}
	export SATURN_GPUS_PER_NODE=${E2E_GPUS:-8}
	export SATURN_TIMEOUT=${E2E_TIMEOUT:-30}
	unset SATURN_SCHED_PARAMS
	CLUSTER="$top_srcdir/scripts/cluster.sh"
	trap e2e_teardown EXIT INT TERM
	sh "$CLUSTER" start >"$E2E_DIR/start.log" 2>&1 || {
		cat "$E2E_DIR/start.log"
		fail "cluster did not start"
	}
	. "$SATURN_CLUSTER_DIR/env"
	CTLD_LOG="$SATURN_CLUSTER_DIR/log/slurmctld.log"
	OUT="$E2E_DIR/out"
	cd "$OUT" || fail "cannot cd to $OUT"
}

e2e_teardown() {
	rc=$?
	trap - EXIT INT TERM
	cd /
	if [ -n "${SATURN_CLUSTER_DIR:-}" ] && [ -f "$SATURN_CLUSTER_DIR/etc/slurm.conf" ]; then
		sh "$CLUSTER" stop >"$E2E_DIR/stop.log" 2>&1 || {
			echo "# cluster stop reported a problem:"
			cat "$E2E_DIR/stop.log"
			[ "$rc" = 0 ] && rc=1
		}
	fi
	[ "$rc" = 0 ] && [ -z "${SATURN_KEEP:-}" ] && [ -n "${E2E_DIR:-}" ] && rm -rf "$E2E_DIR"
	exit "$rc"
}

e2e_dump() {
	[ -n "${SATURN_CLUSTER_DIR:-}" ] && [ -f "$SATURN_CLUSTER_DIR/env" ] || return 0
	echo "--- squeue"
	squeue -o '%.10i %.9T %.10u %.14b %N %r' 2>&1 | head -20
	echo "--- slurmctld.log (tail)"
	tail -n 25 "$CTLD_LOG" 2>/dev/null
}

. "$top_srcdir/tests/e2e/slurm-version.sh"

# wait_for SECONDS CMD...: poll CMD every 0.2 s until it succeeds.
wait_for() {
	t=$1
	shift
	n=0
	while ! "$@" >/dev/null 2>&1; do
		n=$((n + 1))
		[ $n -le $((t * 5)) ] || return 1
		sleep 0.2
	done
	return 0
}

# Run a command as the test user, in the output folder, against this cluster.
# Arguments are passed as they are (no re-splitting).
as_user() {
	runuser -u "$E2E_USER" -- env SLURM_CONF="$SLURM_CONF" \
		sh -c 'cd "$0" || exit 1; exec "$@"' "$OUT" "$@"
}

# e2e_sbatch_user ARGS...: sbatch --parsable as the test user; prints the id.
e2e_sbatch_user() {
	as_user sbatch --parsable "$@"
}

# Fields of a job (array meta record or plain job), via scontrol.
job_field() {
	scontrol -o show job "$1" 2>/dev/null | head -n1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}
job_state() {
	job_field "$1" JobState
}
# squeue's reason column (state_desc when set): exact text.
job_reason() {
	squeue -h -j "$1" -o '%r' 2>/dev/null | head -n1
}
job_reason_is() {
	[ "$(job_reason "$1")" = "$2" ]
}
job_state_is() {
	[ "$(job_state "$1")" = "$2" ]
}
queue_empty() {
	[ -z "$(squeue -h -o %i 2>/dev/null)" ]
}
# Nothing but the given jobs left in the queue.
queue_has_only() {
	[ "$(squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ')" = "$* " ]
}
