#!/bin/sh
# run-slurm.sh - the project's tests on another Slurm release than the
# host's: build and test this tree inside that release's root
# (scripts/slurm-root.sh: Debian 13 with Slurm 24.11, or Debian 13 with a
# Slurm 26.05 built from SATURN_SLURM_TREE), with its own build folder
# (build-slurm-VERSION) and port block, the same tests/run-all.sh.
#
#   tests/run-slurm.sh 24.11            the core set (below)
#   SATURN_SLURM_TESTS=all tests/run-slurm.sh 24.11     every test
#   SATURN_SLURM_TREE=DIR tests/run-slurm.sh 26.05       (see slurm-root.sh)
#
# The core set: loading the plugins, holding a batch, other users' jobs and
# the submission rules, a plan and its releases, failures, a node lost
# (requeue and re-hold), a slurmctld restart, reconfiguration of running
# tasks, multi-node tasks, typed node classes, accounting, user updates,
# backfill beside sched/saturn, turning Saturn off, the profiler job, the
# Debian packages; the cycle (its unit tests, the recorded cycles replayed,
# the plugin files' call graph as built for this release); and the unit
# tests that read this release's structures.
# The last line reads "Slurm VERSION: N passed, N failed, N skipped".
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || {
	echo "usage: $0 VERSION (22.05, 24.11 or 26.05)" >&2
	exit 2
}
v=$1

CORE="unit/test_submit_rules unit/test_jobreq sched/test_node_class
  sched/test_cycle sched/replay-fixtures.sh sched/plugin-graph.sh
  e2e/plugins-load.sh e2e/held-array.sh e2e/other-jobs.sh e2e/sched-plan.sh
  e2e/sched-fail.sh e2e/hostile-node.sh e2e/sched-restart.sh e2e/sched-reconfig.sh
  e2e/sched-multinode.sh e2e/sched-classes.sh e2e/sched-accounting.sh
  e2e/hostile-modify.sh e2e/sched-backfill.sh e2e/sched-off.sh e2e/sched-profiler.sh
  pkg/deb.sh"

case "${SATURN_SLURM_TESTS:-core}" in
core) tests=$(echo $CORE) ;;
all) tests= ;;
*) tests=$SATURN_SLURM_TESTS ;;
esac

t0=$(date +%s)
# 26.05 needs a Slurm source tree of one's own (the archive does not serve
# Debian's): skipped, not failed, on a machine that has neither it nor a root
if [ "$v" = 26.05 ] && [ -z "${SATURN_SLURM_TREE:-}" ] &&
	! [ -f "$("$top/scripts/slurm-root.sh" "$v" path)/.saturn-root" ]; then
	echo "# Slurm 26.05: no root and no SATURN_SLURM_TREE (a Slurm 26.05.x source tree): skipped"
	echo "Slurm $v: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
"$top/scripts/slurm-root.sh" "$v" create || {
	echo "Slurm $v: 0 passed, 1 failed, 0 skipped (no root)"
	exit 1
}
src=
if [ "$v" = 26.05 ]; then
	r=$("$top/scripts/slurm-root.sh" "$v" path)
	src=$(ls -d "$r"/var/cache/saturn-slurm/slurm-26.05.* 2>/dev/null | head -n 1)
	src=${src#"$r"}
fi
out=$(mktemp "${TMPDIR:-/tmp}/run-slurm-$v.XXXXXX")
rc=0
# shellcheck disable=SC2086
env SATURN_OTHER_SLURM= SATURN_DEPS_CORE=1 ${src:+SATURN_DEPS_NO_SLURM=1} \
	SATURN_BUILD_DIR="$top/build-slurm-$v" SATURN_TESTS="$tests" \
	SATURN_SLURM_SOURCE="$src" \
	SATURN_E2E_PORT_BASE="${SATURN_OTHER_E2E_PORT_BASE:-25000}" \
	SATURN_SCHED_E2E_PORT_BASE="${SATURN_OTHER_SCHED_PORT_BASE:-26000}" \
	"$top/scripts/slurm-root.sh" "$v" run tests/run-all.sh 2>&1 | tee "$out" || rc=1
line=$(tail -n 1 "$out")
rm -f "$out"
echo "# Slurm $v: $(($(date +%s) - t0)) s"
case "$line" in
*" passed, "*" failed, "*" skipped") echo "Slurm $v: $line" ;;
*) echo "Slurm $v: 0 passed, 1 failed, 0 skipped (run-all.sh gave no summary)" ;;
esac
