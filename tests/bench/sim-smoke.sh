#!/bin/sh
# bench/sim-smoke.sh - saturn-sim (doc/benchmarks-site.md, "Simulation
# beyond one machine") on 50 jobs of a Philly-derived trace, 2 nodes x 8
# V100s, every job arriving at once: both schedulers run it through, every
# job is started and ended exactly once with no GPU given to two jobs at a
# time (the simulator's own checks, which are seen to fire on an injected
# over-commit), the run is the same twice (an evaluation budget, not a
# clock), and the planner's makespan is below backfill's on the users'
# requests (one-GPU requests of jobs that scale: the planner widens them).
set -u
SIM=${top_builddir:-..}/tests/bench/saturn-sim
[ -x "$SIM" ] || { echo "sim-smoke: $SIM not built"; exit 1; }
W=$(mktemp -d /tmp/sim-smoke.XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT
fail() { echo "sim-smoke: FAIL: $*"; cat "$W/out" 2>/dev/null; exit 1; }
ARGS="--jobs 50 --gpus 16 --types v100 --compress 1e6 --users 5 --interval 0 --solve-s 60 --evals 500"

"$SIM" $ARGS > "$W/out" 2> "$W/err" || fail "exit status $? ($(cat "$W/err"))"
[ ! -s "$W/err" ] || fail "messages: $(cat "$W/err")"
grep -q '^invariant violations  *0  *0$' "$W/out" || fail "invariant violations"
mb=$(awk '/^makespan \(h\)/ { print $3 }' "$W/out")
ms=$(awk '/^makespan \(h\)/ { print $4 }' "$W/out")
[ -n "$mb" ] && [ -n "$ms" ] || fail "no makespan row"
awk -v b="$mb" -v s="$ms" 'BEGIN { exit !(s + 0 < b + 0) }' ||
	fail "saturn makespan $ms h not below backfill's $mb h"
echo "sim-smoke: 50 jobs, makespan backfill $mb h, saturn $ms h"

# the same figures again (wall-clock rows aside)
"$SIM" $ARGS > "$W/out2" 2>&1 || fail "second run"
grep -v wall "$W/out" > "$W/a"
grep -v wall "$W/out2" > "$W/b"
cmp -s "$W/a" "$W/b" || fail "two runs differ: $(diff "$W/a" "$W/b" | head -5)"

# the checks fire: an over-commit injected into the backfill model
SATURN_SIM_FAULT=1 "$SIM" $ARGS --sched backfill > "$W/out" 2> "$W/err"
rc=$?
[ "$rc" = 1 ] || fail "injected over-commit: exit status $rc, expected 1"
grep -q 'not free' "$W/err" || fail "injected over-commit not reported"

# bad input names its field
"$SIM" --gpus 4 > "$W/out" 2> "$W/err" && fail "--gpus 4 accepted"
grep -q -- '--gpus' "$W/err" || fail "--gpus 4: $(cat "$W/err")"
echo "sim-smoke: ok"
