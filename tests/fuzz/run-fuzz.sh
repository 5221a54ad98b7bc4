#!/bin/sh
# run-fuzz.sh - build the libFuzzer harnesses with clang straight from the
# lib sources (no automake needed) and run each for a bounded time.
#
#   FUZZ_SECONDS=20 (per harness)  FUZZ_TARGETS="problem plan profile validate build text cycle"
#   FUZZ_KEEP=DIR (keep the build, grown corpora and crash files there)
#
# Exit 0 when no harness crashed, 1 on any crash, leak, sanitizer report or
# round-trip failure (the reproducer is printed), 77 when clang or its
# libFuzzer runtime or json-c is missing. Seeds: tests/fuzz/corpus/NAME/.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
FUZZ_TARGETS=${FUZZ_TARGETS:-"problem plan profile validate build text cycle"}
CC=${FUZZ_CC:-clang}
LIB="$top_srcdir/lib"
HERE="$top_srcdir/tests/fuzz"

command -v "$CC" >/dev/null 2>&1 || { echo "SKIP: $CC not found" >&2; exit 77; }
pkg-config --exists json-c 2>/dev/null || { echo "SKIP: json-c (pkg-config) not found" >&2; exit 77; }
if [ -n "${FUZZ_KEEP:-}" ]; then
	WORK=$FUZZ_KEEP
	mkdir -p "$WORK" || exit 99
else
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/saturn-fuzz.XXXXXX") || exit 99
	trap 'rm -rf "$WORK"' EXIT
fi

# a minimal config.h: what the lib sources need from configure
cat >"$WORK/config.h" <<'H'
#define _GNU_SOURCE 1
#define PACKAGE_NAME "saturn-slurm"
#define PACKAGE_VERSION "fuzz"
H
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return d && n > 99 ? 0 : 0; }\n' >"$WORK/probe.c"
if ! "$CC" -fsanitize=fuzzer "$WORK/probe.c" -o "$WORK/probe" >/dev/null 2>&1; then
	echo "SKIP: $CC has no libFuzzer runtime (-fsanitize=fuzzer)" >&2
	exit 77
fi

CFLAGS="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
SRCS="$LIB/model/error.c $LIB/model/model.c $LIB/model/formats.c $LIB/model/jsonutil.c $LIB/model/validate.c $LIB/model/profile.c $LIB/model/idset.c"
# the file helpers, where a tree has them in a file of their own
[ -f "$LIB/model/safefile.c" ] && SRCS="$SRCS $LIB/model/safefile.c"
# the character sets of users' text (every parser of a user's file uses it)
[ -f "$LIB/model/safetext.c" ] && SRCS="$SRCS $LIB/model/safetext.c"
# the options' identity (copy, clear, the one match from outside)
[ -f "$LIB/model/option.c" ] && SRCS="$SRCS $LIB/model/option.c"
# fuzz_build: the snapshot -> problem build of sched/saturn, with progress
# files and the persisted state
BUILD_SRCS="$LIB/sched/sched_settings.c $LIB/sched/sched_snapshot.c $LIB/sched/sched_build.c $LIB/sched/build_options.c $LIB/sched/build_classes.c $LIB/sched/sched_plan.c $LIB/sched/sched_decide.c $LIB/sched/requeue.c $LIB/sched/feedback.c $LIB/sched/planrec.c $LIB/sched/node_class.c $LIB/sched/batch_policy.c $LIB/sched/sched_state.c $LIB/sched/progress.c $LIB/planner/bounds.c $LIB/planner/instance.c $LIB/planner/listsched.c"
# the files split by purpose (the GPU model, the measurement job), where the
# tree has them
[ -f "$LIB/planner/gpumodel.c" ] && BUILD_SRCS="$BUILD_SRCS $LIB/planner/gpumodel.c"
[ -f "$LIB/sched/bpol_measure.c" ] && BUILD_SRCS="$BUILD_SRCS $LIB/sched/bpol_measure.c"
# the task cap and the class-aware LP bound (lp_solve), where the tree has them
[ -f "$LIB/sched/task_cap.c" ] && BUILD_SRCS="$BUILD_SRCS $LIB/sched/task_cap.c"
BUILD_LIBS=
if [ -f "$LIB/planner/lpbound.c" ]; then
	BUILD_SRCS="$BUILD_SRCS $LIB/planner/lpbound.c"
	BUILD_LIBS="-llpsolve55 -lcolamd -ldl"
fi
status=0
for t in $FUZZ_TARGETS; do
	bin="$WORK/fuzz_$t"
	srcs=$SRCS
	libs=
	[ "$t" = build ] && srcs="$SRCS $BUILD_SRCS" && libs=$BUILD_LIBS
	# fuzz_text: what a user writes in a job's Comment, --constraint, --gres
	# (the plan record reads the decision's option: the decisions' code too)
	[ "$t" = text ] && srcs="$SRCS $BUILD_SRCS $LIB/model/jobreq.c" && libs=$BUILD_LIBS
	# fuzz_cycle: a recorded scheduling cycle (saturn-cycle/1); the planner
	# for its tape; the measurement records (their text: bpol_measure.c, and
	# what it needs of the decisions' code)
	if [ "$t" = cycle ]; then
		srcs=$(printf '%s\n' $SRCS $BUILD_SRCS "$LIB"/model/jobreq.c "$LIB"/sched/cycle_record.c "$LIB"/sched/cycle_snapjson.c "$LIB"/sched/cycle_statejson.c "$LIB"/sched/cycle_diff.c "$LIB"/sched/cycle_measjson.c "$LIB"/sched/cycle_profjson.c "$LIB"/sched/profstate.c "$LIB"/sched/measset.c "$LIB"/sched/budget.c "$LIB"/sched/profset.c "$LIB"/sched/sched_snapshot.c "$LIB"/sched/feedback.c "$LIB"/sched/node_class.c "$LIB"/planner/*.c | sort -u | tr '\n' ' ')
		libs="-llpsolve55 -lcolamd -ldl"
	fi
	# shellcheck disable=SC2086
	if ! "$CC" $CFLAGS -I"$WORK" -I"$LIB/model" -I"$LIB/planner" -I"$LIB/sched" $(pkg-config --cflags json-c) \
		"$HERE/fuzz_$t.c" $srcs $(pkg-config --libs json-c) $libs -lm -o "$bin" 2>"$WORK/build-$t.log"; then
		cat "$WORK/build-$t.log" >&2
		echo "FAIL: cannot build fuzz_$t" >&2
		exit 1
	fi
	mkdir -p "$WORK/corpus-$t" "$WORK/crash-$t"
	echo "fuzz_$t: ${FUZZ_SECONDS}s from $(ls "$HERE/corpus/$t" | wc -l) seeds"
	# corpus-$t grows; the seed folder is only read
	if ! "$bin" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -max_len=65536 \
		-timeout=10 -dict="$HERE/json.dict" -print_final_stats=1 \
		-artifact_prefix="$WORK/crash-$t/" "$WORK/corpus-$t" "$HERE/corpus/$t" \
		>"$WORK/run-$t.log" 2>&1; then
		tail -n 60 "$WORK/run-$t.log" >&2
		for f in "$WORK/crash-$t"/*; do
			[ -f "$f" ] || continue
			echo "reproducer $f:" >&2
			od -c "$f" | head -n 20 >&2
		done
		echo "FAIL: fuzz_$t found a problem" >&2
		status=1
	else
		grep -E "stat::number_of_executed_runs|cov:" "$WORK/run-$t.log" | tail -n 2
	fi
done
exit $status
