#!/bin/sh
# run-bench.sh - run the planner benchmark: every family (the real-data
# gavel* families included: tests/bench/data/README.md), 6 instances each,
# the default time limits (5 s up to 32 jobs, 10 s above). Run it from the
# build folder (where `make` built tests/bench/saturn-bench), or set
# SATURN_BENCH to the program. Extra arguments go to saturn-bench.
# Not part of `make check`.
set -e
bench=${SATURN_BENCH:-./tests/bench/saturn-bench}
if [ ! -x "$bench" ]; then
	echo "run-bench.sh: $bench not found: run from the build folder after make" >&2
	exit 2
fi
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $bench --runs 6 $*"
exec "$bench" --runs 6 "$@"
