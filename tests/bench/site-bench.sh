#!/bin/sh
# site-bench.sh - the site-scale benchmark: for each size, a fresh
# one-machine cluster (scripts/cluster.sh) of NODES x 8 fake GPUs in three
# classes (3/8 a100 PCIe, 3/8 h100 NVLink, the rest l40 PCIe) and three
# partitions (gpu: all, the default; a100; h100), once under sched/saturn
# and once under stock sched/backfill, back to back and alternating which
# goes first, each running tests/bench/site-load.sh with the same seed.
# Not part of `make check`; figures in doc/benchmarks-site.md.
#
# usage (root): tests/bench/site-bench.sh [BUILD_DIR]
# Environment [defaults]:
#   SB_SIZES    NODES:TASKS pairs [64:1000]
#   SB_REPEAT   runs of each scheduler per size, alternating the order [1]
#   SB_SCHEDS   the schedulers, in the first round's order [saturn backfill]
#   SB_OUT      results folder [/tmp/site-bench]; per run NODES-TASKS-SCHED-R/
#               (site-load.sh's files and the slurmctld.log), and
#               results.csv (metric, then one column per run) and results.md
#   SB_SATURN_PARAMS  sched/saturn's SchedulerParameters [its defaults]
#   SATURN_PORT_BASE  [38000]; slurmd take the next NODES ports
#   SATURN_AUTH [munge], SL_* (site-load.sh's settings) passed through.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
SIZES=${SB_SIZES:-64:1000}
REPEAT=${SB_REPEAT:-1}
SCHEDS=${SB_SCHEDS:-saturn backfill}
for s in $SCHEDS; do
	case $s in saturn | backfill) ;; *)
		echo "site-bench: SB_SCHEDS: saturn or backfill, not '$s'" >&2
		exit 2
		;;
	esac
done
OUTD=${SB_OUT:-/tmp/site-bench}
export SATURN_PORT_BASE=${SATURN_PORT_BASE:-38000}
export SATURN_CLUSTER_DIR=${SB_CLUSTER_DIR:-/tmp/site-bench-cluster}
export SATURN_PLUGIN_DIR="$BUILD/plugin/slurm"
export SATURN_DEBUG=debug SATURN_SLURMD_DEBUG=error SATURN_SLURMD_WAVE=32
export SATURN_MAX_JOBS=${SATURN_MAX_JOBS:-30000} SATURN_TIMEOUT=${SATURN_TIMEOUT:-300}
[ "$(id -u)" = 0 ] || {
	echo "site-bench: run as root" >&2
	exit 2
}
[ -f "$SATURN_PLUGIN_DIR/sched_saturn.so" ] || {
	echo "site-bench: no $SATURN_PLUGIN_DIR/sched_saturn.so (build first)" >&2
	exit 2
}
CL="$ROOT/scripts/cluster.sh"
trap 'sh "$CL" stop >/dev/null 2>&1 || true' EXIT
trap 'exit 1' INT TERM
mkdir -p "$OUTD"
runs=
rc=0
for size in $SIZES; do
	n=${size%%:*}
	t=${size#*:}
	a=$((n * 3 / 8))
	h=$((n * 3 / 8))
	l=$((n - a - h))
	export SATURN_GPU_CLASSES="a100:pcie:$a h100:nvlink:$h l40:pcie:$l"
	export SATURN_PARTITIONS="gpu:n[1-$n] a100:n[1-$a] h100:n[$((a + 1))-$((a + h))]"
	r=1
	while [ $r -le "$REPEAT" ]; do
		order=$SCHEDS
		[ $((r % 2)) = 0 ] && order=$(echo "$SCHEDS" | awk '{ for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "") }')
		for s in $order; do
			export SATURN_SCHED=$s
			if [ "$s" = saturn ]; then
				export SATURN_SCHED_PARAMS="${SB_SATURN_PARAMS:-}"
			else
				export SATURN_SCHED_PARAMS=
			fi
			run=$n-$t-$s-$r
			sh "$CL" stop >/dev/null 2>&1 || true
			rm -rf "$SATURN_CLUSTER_DIR"
			echo "site-bench: $run: starting $n nodes ($SATURN_GPU_CLASSES), $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
			st=$(date +%s.%N)
			sh "$CL" start >"$OUTD/$run.start.log" 2>&1 || {
				tail -n 20 "$OUTD/$run.start.log" >&2
				echo "site-bench: $run: cluster did not start" >&2
				exit 1
			}
			echo "site-bench: $run: up in $(awk -v s="$st" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s" >&2
			rm -rf "${OUTD:?}/$run"
			SL_OUT="$OUTD/$run" SL_TASKS=$t "$ROOT/tests/bench/site-load.sh" >"$OUTD/$run.log" 2>&1 || {
				rc=1
				echo "site-bench: $run: site-load.sh failed (see $OUTD/$run.log)" >&2
			}
			cp "$SATURN_CLUSTER_DIR/log/slurmctld.log" "$OUTD/$run/" 2>/dev/null || true
			sh "$CL" stop >/dev/null 2>&1 || true
			runs="$runs $run"
		done
		r=$((r + 1))
	done
done
# one table: metric, then each run's value
awk -F, -v runs="$runs" '
	BEGIN { n = split(runs, R, " ") }
	{ split(FILENAME, p, "/"); run = p[length(p) - 1]
	  if (!($1 in seen)) { seen[$1] = 1; order[++m] = $1 }
	  v[$1, run] = $2 }
	END { printf "metric"; for (i = 1; i <= n; i++) printf ",%s", R[i]; print ""
	      for (j = 1; j <= m; j++) { printf "%s", order[j]
	        for (i = 1; i <= n; i++) printf ",%s", ((order[j], R[i]) in v) ? v[order[j], R[i]] : "-"; print "" } }' \
	$(for x in $runs; do echo "$OUTD/$x/figures.csv"; done) >"$OUTD/results.csv"
awk -F, 'NR == 1 { printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; printf "\n|"; for (i = 1; i <= NF; i++) printf "---|"; print ""; next }
	{ printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; print "" }' "$OUTD/results.csv" >"$OUTD/results.md"
cat "$OUTD/results.md"
exit $rc
