#!/bin/sh
# site-plot.sh - PNG plots of site-bench.sh runs (gnuplot, Debian's
# gnuplot-nox): slurmctld RSS over time, and the latency of sbatch and of a
# full squeue over time, one line per run.
# usage: tests/bench/site-plot.sh OUT_PREFIX RUN_DIR...
#   writes OUT_PREFIX-rss.png, OUT_PREFIX-sbatch.png, OUT_PREFIX-squeue.png;
#   each RUN_DIR is a site-load.sh output folder (its name is the label).
set -eu
command -v gnuplot >/dev/null 2>&1 || {
	echo "site-plot: gnuplot not installed (apt-get install gnuplot-nox)" >&2
	exit 2
}
[ $# -ge 2 ] || {
	echo "usage: $0 OUT_PREFIX RUN_DIR..." >&2
	exit 2
}
pre=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rss=
sb=
sq=
for d in "$@"; do
	n=$(basename "$d")
	t0=$(cat "$d/t0")
	awk -F, 'NR > 1 { print $1, $2 / 1024 }' "$d/rss.csv" >"$tmp/$n.rss"
	for op in sbatch squeue; do
		awk -F, -v op="$op" -v t0="$t0" '$1 == op && $4 == 0 { print $2 - int(t0 / 1000000), $3 / 1000 }' \
			"$d/lat.csv" >"$tmp/$n.$op"
	done
	rss="$rss${rss:+, }'$tmp/$n.rss' using 1:2 with lines title '$n'"
	sb="$sb${sb:+, }'$tmp/$n.sbatch' using 1:2 with points pt 7 ps 0.4 title '$n'"
	sq="$sq${sq:+, }'$tmp/$n.squeue' using 1:2 with linespoints pt 7 ps 0.4 title '$n'"
done
gnuplot <<EOF
set terminal png size 900,450
set key top left
set grid
set xlabel 'seconds since the start of the load'
set output '$pre-rss.png'
set ylabel 'slurmctld RSS (MB)'
plot $rss
set logscale y
set output '$pre-sbatch.png'
set ylabel 'sbatch latency (ms, log)'
plot $sb
set output '$pre-squeue.png'
set ylabel 'squeue latency (ms, log), full queue as root'
plot $sq
EOF
echo "site-plot: $pre-rss.png $pre-sbatch.png $pre-squeue.png"
