#!/bin/sh
# fuzz-jobside.sh - build tests/runner/fuzz_jobside.c with clang's libFuzzer
# straight from the lib sources and run it for FUZZ_SECONDS (default 10).
# Skipped (77) without clang, its libFuzzer runtime, json-c or hwloc.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
CC=${FUZZ_CC:-clang}
LIB="$top_srcdir/lib"
command -v "$CC" >/dev/null 2>&1 || { echo "SKIP: $CC not found"; exit 77; }
pkg-config --exists json-c hwloc 2>/dev/null || { echo "SKIP: json-c/hwloc not found"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/saturn-fuzz-js.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
: >"$WORK/config.h"
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return d && n > 99 ? 0 : 0; }\n' >"$WORK/probe.c"
"$CC" -fsanitize=fuzzer "$WORK/probe.c" -o "$WORK/probe" >/dev/null 2>&1 || { echo "SKIP: no libFuzzer runtime"; exit 77; }
mkdir -p "$WORK/corpus" "$WORK/crash"
printf '\000{"format":"saturn-progress/1","job_id":1,"batches_done":3,"batches_total":9,"sec_per_batch":0.5,"updated":1}' >"$WORK/corpus/0"
printf '\001SATURN_PROGRESS batches_done=3 sec_per_batch=0.5 peak_mem_mb=9' >"$WORK/corpus/1"
printf '\002{"stages":2,"micro_batches":4,"cpu_offload":true}' >"$WORK/corpus/2"
printf "\003torchrun --n={gpus} 'a b' {command} {{x}}" >"$WORK/corpus/3"
printf '\004[technique z]\ngpus = 1-8\nlaunch = x {command}\nenv = A=1\nparam = p int 1 gpus 2\n' >"$WORK/corpus/4"
printf '\005Name=gpu Links=-1,2,0\nName=gpu Links=2,-1,0\n' >"$WORK/corpus/5"
# fractional counts must round-trip (found by this fuzzer)
printf '\000{"format":"saturn-progress/1","batches_done":0.5,"batches_total":1e300}' >"$WORK/corpus/6"
# shellcheck disable=SC2046
"$CC" -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I"$WORK" -iquote "$LIB/model" -iquote "$LIB/sched" -iquote "$LIB/job" \
	$(pkg-config --cflags json-c hwloc) "$top_srcdir/tests/runner/fuzz_jobside.c" \
	"$LIB/model/error.c" "$LIB/sched/progress.c" "$LIB/job/technique.c" "$LIB/job/technique_conf.c" "$LIB/job/technique_plugin.c" "$LIB/job/template.c" "$LIB/job/topology.c" \
	"$LIB/model/formats.c" "$LIB/model/safefile.c" "$LIB/model/safetext.c" "$LIB/model/jsonutil.c" "$LIB/model/model.c" "$LIB/model/option.c" "$LIB/model/validate.c" \
	$(pkg-config --libs json-c hwloc) -ldl -lm -o "$WORK/fuzz" 2>"$WORK/build.log" \
	|| { cat "$WORK/build.log"; echo "FAIL: cannot build"; exit 1; }
if ! "$WORK/fuzz" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -max_len=4096 -timeout=10 \
	-artifact_prefix="$WORK/crash/" "$WORK/corpus" >"$WORK/run.log" 2>&1; then
	tail -n 40 "$WORK/run.log"
	for f in "$WORK/crash"/*; do [ -f "$f" ] && od -c "$f" | head -n 20; done
	echo "FAIL: fuzz_jobside found a problem"
	exit 1
fi
grep -E "stat::number_of_executed_runs" "$WORK/run.log"
exit 0
