#!/bin/sh
# run-bench.sh - run the planner benchmark (all families, 6 instances each,
# the default time limits: 5 s up to 32 jobs, 10 s above) from a build
# folder. Extra arguments go to saturn-bench. Not part of `make check`.
set -e
here=$(pwd)
bench="$here/tests/bench/saturn-bench"
[ -x "$bench" ] || { echo "run from the build folder after make" >&2; exit 2; }
exec "$bench" --runs 6 "$@"
