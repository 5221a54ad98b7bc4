#!/bin/sh
# bad-numbers.sh - number options take the whole value or refuse it (lib/
# numparse.c): "abc", "" or "1x" are not 0. Each program exits with its
# usage status (saturn-profile, saturn-emulate, saturn-hwbench: 2; saturn:
# 64; saturn-run: 125, its own failures) and a message naming the option.
# And --backend auto says when it falls back to the CPU stand-in.
. "$top_srcdir/tests/runner/common.sh"
PATH="$top_builddir/cli:$PATH"

# expect STATUS OPTION CMD...: exit STATUS, stderr names OPTION, no stdout
expect() {
	want=$1 opt=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = "$want" ] || fail "$*: exit $rc, expected $want ($(cat "$tmp/err"))"
	grep -q -- "$opt: '" "$tmp/err" || fail "$*: message does not name $opt: $(cat "$tmp/err")"
	[ ! -s "$tmp/out" ] || fail "$*: printed on stdout"
}

P="--batch b --script /dev/null --task-ids 0 --output $tmp/p.json"
expect 2 --warmup saturn-profile --warmup abc $P
expect 2 --warmup saturn-profile --warmup "" $P
expect 2 --warmup saturn-profile --warmup -1 $P
expect 2 --trial-batches saturn-profile --trial-batches 0 $P
expect 2 --trial-batches saturn-profile --trial-batches 2x $P
expect 2 --timeout saturn-profile --timeout 0 $P
expect 2 --timeout saturn-profile --timeout nan $P
expect 2 --max-gpus saturn-profile --max-gpus " 4" $P
expect 2 --cache-max-age saturn-profile --cache-max-age "" $P
expect 2 --escalate saturn-profile --escalate abc $P
[ ! -e "$tmp/p.json" ] || fail "a refused option still wrote a profile"

expect 125 --batches saturn-run --batches "" -- true
expect 125 --batches saturn-run --batches abc -- true
expect 125 --grace saturn-run --grace 1x -- true
expect 125 --resume saturn-run --resume -1 -- true
SATURN_BATCHES=abc expect 125 SATURN_BATCHES saturn-run -- true

expect 2 --batch-size saturn-emulate --model gpt2 --batch-size ""
expect 2 --batch-size saturn-emulate --model gpt2 --batch-size 1.5
expect 2 --batches saturn-emulate --model gpt2 --batch-size 8 --batches abc
expect 2 --seed saturn-emulate --model gpt2 --batch-size 8 --seed x

expect 64 --time-limit saturn plan --time-limit "" x.json
expect 64 --seed saturn plan --seed 4294967296 x.json

expect 2 --gpus saturn-hwbench --backend cpu --gpus abc
expect 2 --gemm-n saturn-hwbench --backend cpu --gemm-n ""

# valid values still work
saturn-run --batches 0 --grace 1.5 -- true || fail "valid saturn-run options refused"
saturn-emulate --model gpt2 --batch-size 8 --batches 1 --time-scale 0 --seed 7 >/dev/null ||
	fail "valid saturn-emulate options refused"

# --backend auto (the default) on a machine without a usable CUDA device:
# one line on stderr says the numbers come from the CPU stand-in; with a
# device, the profile is a GPU's.
printf '#!/bin/sh\nexec saturn-run --batches 100 -- saturn-emulate --model gpt2-xl --batch-size 8 --time-scale 0.001\n' >"$tmp/s.sbatch"
chmod +x "$tmp/s.sbatch"
CUDA_VISIBLE_DEVICES=0 saturn-profile --batch b --script "$tmp/s.sbatch" --task-ids 0 --techniques single \
	--no-cache --output "$tmp/auto.json" 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "profile with --backend auto"; }
if grep -q '"gpu_model": *"cpu-standin"' "$tmp/auto.json"; then
	n=$(grep -c -- "--backend auto: .*using the CPU stand-in" "$tmp/err")
	[ "$n" = 1 ] || fail "stand-in used, $n fallback lines: $(cat "$tmp/err")"
else
	! grep -q "using the CPU stand-in" "$tmp/err" || fail "fallback line without the stand-in"
fi
echo "$(grep -- '--backend auto' "$tmp/err")"
exit 0
