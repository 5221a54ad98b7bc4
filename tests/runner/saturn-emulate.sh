#!/bin/sh
# saturn-emulate: timing model output, OOM exit status and message, progress
# lines, the time-scale factor.
. "$top_srcdir/tests/runner/common.sh"

out=$(saturn-emulate --model gpt2-xl --batch-size 16 --technique single --print-model)
echo "$out" | grep -q 'sec_per_batch=1.255' || fail "model: $out"
pcie=$(saturn-emulate --model gpt2-xl --batch-size 16 --technique ddp --gpus 8 --link pcie --print-model)
nvl=$(saturn-emulate --model gpt2-xl --batch-size 16 --technique ddp --gpus 8 --link nvlink --print-model)
p=$(echo "$pcie" | sed 's/.*comm_s=\([0-9.]*\).*/\1/'); n=$(echo "$nvl" | sed 's/.*comm_s=\([0-9.]*\).*/\1/')
awk -v p="$p" -v n="$n" 'BEGIN { exit !(p > 10 * n) }' || fail "PCIe vs NVLink: $p vs $n"

saturn-emulate --model llama-7b --batch-size 8 --technique single --time-scale 0 >"$tmp/out" 2>"$tmp/err"
[ $? = 3 ] || fail "OOM exit status"
grep -q "out of memory" "$tmp/err" || fail "OOM message"
grep -q "^SATURN_OOM peak_mem_mb=" "$tmp/out" || fail "OOM protocol line"

start=$(date +%s.%N)
saturn-emulate --model gpt2-xl --batch-size 16 --technique single --batches 20 --time-scale 0.02 >"$tmp/out" \
	|| fail "run"
end=$(date +%s.%N)
# 20 x 1.255 s x 0.02 = 0.50 s (+ start-up 2.5 s x 0.02): it sleeps at
# least that long, and the scale is applied (unscaled: 27.6 s); the upper
# bound leaves 20x for a loaded machine, it is no timing measurement
awk -v a="$start" -v b="$end" 'BEGIN { d = b - a; exit !(d >= 0.5 && d < 11) }' || fail "wall time"
tail -1 "$tmp/out" | grep -q "^SATURN_PROGRESS batches_done=20 batches_total=20" || fail "progress: $(tail -1 "$tmp/out")"
saturn-emulate --model nosuch --batch-size 1 2>/dev/null; [ $? = 2 ] || fail "unknown model"
exit 0
