#!/bin/sh
# The CUDA/NCCL/cuBLAS backend on a real device; skipped (77) without CUDA or
# a GPU. Where a device answers: the hardware summary, a positive GEMM
# figure (gemm_tflops) in the profile and on the --show-topology device line.
. "$top_srcdir/tests/runner/common.sh"

printf '#!/bin/sh\nexit 0\n' > "$tmp/s.sbatch"
CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} saturn-profile --backend cuda --batch b --script "$tmp/s.sbatch" \
	--task-ids 0 --output "$tmp/p.json" 2>"$tmp/err"
rc=$?
[ $rc = 77 ] && { cat "$tmp/err"; exit 77; }
# a device exists: the hardware part must have worked (no signature -> exit 1)
grep -q "GPUs (" "$tmp/err" || fail "cuda probe: $(cat "$tmp/err")"
grep -q "GEMM on GPU 0 (bf16 in, fp32 accumulate, n=8192): [0-9.e+]* TFLOP/s" "$tmp/err" ||
	fail "cuda GEMM: $(cat "$tmp/err")"
# no signature means no profile file: the device line carries the same probe
out=$(CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} saturn-profile --backend cuda --show-topology 2>"$tmp/err2")
dev=$(echo "$out" | grep '^device backend=cuda ')
[ -n "$dev" ] || fail "no device line: $out $(cat "$tmp/err2")"
tf=$(echo "$dev" | sed 's/.*gemm_tflops=\([^ ]*\).*/\1/')
mem=$(echo "$dev" | sed 's/.*gpu_mem_mb=\([^ ]*\).*/\1/')
awk -v t="$tf" -v m="$mem" 'BEGIN { exit !(t > 0 && m > 0) }' || fail "gemm_tflops=$tf gpu_mem_mb=$mem: $dev"
# and a profile with a signature records it
printf '#!/bin/sh\nexec saturn-run --batches 100 -- saturn-emulate --model gpt2-xl --batch-size 8 --time-scale 0.001\n' >"$tmp/e.sbatch"
chmod +x "$tmp/e.sbatch"
CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} saturn-profile --backend cuda --batch b --script "$tmp/e.sbatch" \
	--task-ids 0 --max-gpus 1 --techniques single --output "$tmp/p.json" 2>"$tmp/err3" ||
	fail "cuda profile: $(cat "$tmp/err3")"
python3 -c "import json; h = json.load(open('$tmp/p.json'))['hardware'][0]; assert h['gemm_tflops'] > 0 and h['gpu_mem_mb'] > 0, h" ||
	fail "profile gemm_tflops: $(cat "$tmp/p.json")"
exit 0
