#!/bin/sh
# The GEMM throughput probe on the CPU stand-in: saturn-profile records a
# positive gemm_tflops in the profile and says so on stderr;
# --show-topology --backend cpu prints the device line, plain
# --show-topology does not; saturn-hwbench reports the same op.
. "$top_srcdir/tests/runner/common.sh"

printf '#!/bin/sh\nexec saturn-run --batches 100 -- saturn-emulate --model gpt2-xl --batch-size 8 --time-scale 0.001\n' >"$tmp/s.sbatch"
chmod +x "$tmp/s.sbatch"
CUDA_VISIBLE_DEVICES=0,1 saturn-profile --backend cpu --batch g --script "$tmp/s.sbatch" --task-ids 0 \
	--techniques single --output "$tmp/p.json" 2>"$tmp/err" || { cat "$tmp/err"; fail "profile"; }
grep -q "GEMM on GPU 0 (fp32 on the host CPU, not a GPU, n=256): [0-9.e-]* TFLOP/s" "$tmp/err" ||
	fail "no GEMM line: $(cat "$tmp/err")"
python3 - "$tmp/p.json" <<'P' || fail "gemm_tflops in the profile"
import json, sys
h = json.load(open(sys.argv[1]))["hardware"][0]
assert 0 < h["gemm_tflops"] < 100, h   # a CPU core, not a GPU
P
# --quiet keeps the figure, drops the line
CUDA_VISIBLE_DEVICES=0 saturn-profile --backend cpu --quiet --batch g --script "$tmp/s.sbatch" --task-ids 0 \
	--techniques single --output "$tmp/q.json" 2>"$tmp/err" || { cat "$tmp/err"; fail "quiet profile"; }
grep -q "GEMM" "$tmp/err" && fail "--quiet printed the GEMM line"
grep -q '"gemm_tflops"' "$tmp/q.json" || fail "quiet profile lacks gemm_tflops"

out=$(saturn-profile --show-topology --topology "$top_srcdir/contrib/topologies/pcie-8gpu.xml" --backend cpu) ||
	fail "show-topology --backend cpu"
echo "$out" | head -1 | grep -q "^gpus=8 interconnect=pcie" || fail "topology line: $out"
echo "$out" | tail -1 | grep -q "^device backend=cpu gpu_mem_mb=[0-9]* gemm_tflops=[0-9.e-]* gemm_n=256 gemm_precision=fp32-host-cpu model=cpu-standin$" ||
	fail "device line: $out"
tf=$(echo "$out" | tail -1 | sed 's/.*gemm_tflops=\([^ ]*\).*/\1/')
python3 -c "import sys; sys.exit(0 if float('$tf') > 0 else 1)" || fail "device gemm_tflops=$tf"
saturn-profile --show-topology --topology "$top_srcdir/contrib/topologies/pcie-8gpu.xml" | grep -q "^device" &&
	fail "device line without --backend"
SATURN_EMU_GPU_MEM_GB=40 saturn-profile --show-topology --backend cpu | grep -q "^device .*gpu_mem_mb=40960 " ||
	fail "device memory from the stand-in's model"

out=$(saturn-hwbench --backend cpu --gpus 2) || fail "saturn-hwbench: $out"
echo "$out" | grep -q "^gemm n=256 precision=fp32-host-cpu tflops=[0-9.e-]* correct=yes$" || fail "hwbench gemm: $out"
echo "$out" | grep -q "^allreduce gpus=2 .*busbw_gbs=[0-9.]* correct=yes$" || fail "hwbench all-reduce: $out"
out=$(saturn-hwbench --backend cpu --gemm-n 100) || fail "hwbench n=100: $out"
echo "$out" | grep -q "^gemm n=100 .*correct=yes$" || fail "hwbench n=100: $out"
saturn-hwbench --backend nosuch >/dev/null 2>&1; [ $? = 77 ] || fail "unknown backend not 77"
exit 0
