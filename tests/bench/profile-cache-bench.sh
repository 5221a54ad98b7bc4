#!/bin/sh
# profile-cache-bench.sh - trials and wall time of saturn-profile for a batch
# with a cold profile cache versus a second batch (same commands, another
# name) with a warm one, on the CPU stand-in with 8 fake GPUs. Not run by
# make check. Usage, from the build folder:
#   sh SRCDIR/tests/bench/profile-cache-bench.sh [RUNS] [TIME_SCALE]
runs=${1:-3} scale=${2:-0.02}
PATH="$(pwd)/runner:$(pwd)/profiler:$PATH"
export PATH
command -v saturn-profile >/dev/null || { echo "run from the build folder" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/b.sbatch" <<S
#!/bin/sh
# 8 tasks, 4 signatures (2 models x 2 batch sizes), learning rates differ
m=\$(( SLURM_ARRAY_TASK_ID % 2 )); b=\$(( SLURM_ARRAY_TASK_ID / 2 % 2 ))
model=gpt2-large; [ \$m = 1 ] && model=llama-7b
exec saturn-run --batches 400 -- saturn-emulate --model \$model --batch-size \$(( 8 << b )) --lr 0.0\$SLURM_ARRAY_TASK_ID --time-scale $scale
S
chmod +x "$tmp/b.sbatch"
one() { # one NAME CACHE -> "trials seconds"
	s=$(date +%s.%N)
	CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 saturn-profile --batch "$1" --script "$tmp/b.sbatch" --task-ids 0-7 \
		--output "$tmp/$1.json" --backend cpu --cache "$2" 2>"$tmp/$1.err" || { cat "$tmp/$1.err" >&2; exit 1; }
	e=$(date +%s.%N)
	echo "$(sed -n 's/.*: \([0-9]*\) trials in .*/\1/p' "$tmp/$1.err") $(echo "$e - $s" | bc)"
}
echo "run cold_trials cold_s warm_trials warm_s"
for r in $(seq "$runs"); do
	rm -rf "$tmp/cache"
	c=$(one cold$r "$tmp/cache")
	w=$(one warm$r "$tmp/cache")
	echo "$r $c $w"
done
