#!/bin/sh
# contrib/gpu/gpu-check.sh --dry-run on the CPU stand-in, against this build:
# the figures file has every expected line and the steps are recorded; with
# a CUDA toolkit, the standalone saturn-hwbench compiles (and skips for want
# of a device). A failing step must show in the file, not stop the script.
. "$top_srcdir/tests/runner/common.sh"

py=python3
command -v $py >/dev/null || { echo "no python3: skipped"; exit 77; }
sa=0
[ -f /usr/local/cuda/include/cuda_runtime.h ] && sa=1
OUT="$tmp/out" GPU_CHECK_USE_BUILD="$top_builddir" GPU_CHECK_STANDALONE=$sa \
	timeout 300 sh "$top_srcdir/contrib/gpu/gpu-check.sh" --dry-run >"$tmp/log" 2>&1 ||
	{ cat "$tmp/log"; fail "gpu-check.sh exit $?"; }
f="$tmp/out/gpu-figures.txt"
[ -s "$f" ] || fail "no gpu-figures.txt"
for l in '^## GPU machine$' '^DRY RUN on the CPU stand-in' \
	'^| GPU 0 memory | 81920 MiB |' \
	'^| GEMM throughput, GPU 0 | [0-9.e-]* TFLOP/s | plain-C blocked SGEMM' \
	'^| all-reduce, 2 GPU(s) | [0-9.]* us, algbw [0-9.]* GB/s, busbw [0-9.]* GB/s |' \
	'^| all-gather, 2 GPU(s) | [0-9.]* us, algbw' \
	'^| profile (saturn-profile, 1 GPU) | gemm_tflops [0-9.e-]*, gpu_mem_mb 81920 |' \
	'^| profile option single | gpus=1 status=measured sec_per_batch=' \
	'^| trial (saturn-run trial mode, single, 1 GPU) | {"status":"measured"' \
	'^- build=existing build folder' '^- cuda-probe-test=skipped (exit 77)' \
	'^- show-topology=ok' '^- hwbench=ok' '^- profile=ok' '^- trial=ok' \
	'^show_topology: device backend=cpu gpu_mem_mb=81920 gemm_tflops=[0-9.e-]* gemm_n=256 ' \
	'^hwbench: gemm n=256 precision=fp32-host-cpu tflops=[0-9.e-]* correct=yes$'; do
	grep -q -- "$l" "$f" || { cat "$f"; fail "gpu-figures.txt lacks /$l/"; }
done
# the ddp trial goes through saturn-run's rank launcher: 2 ranks, gloo
tp=
for p in python3 /usr/bin/python3; do $p -c 'import torch' 2>/dev/null && { tp=$p; break; }; done
if [ -n "$tp" ]; then
	grep -q '^- trial-ddp=ok' "$f" || { cat "$tmp/out/gpu-check.log"; fail "ddp trial step"; }
	grep -q '^| trial (saturn-run trial mode, ddp, 2 GPU(s)) | {"status":"measured"' "$f" ||
		{ cat "$f"; fail "ddp trial row"; }
	grep -q 'saturn-run: technique ddp on 2 GPUs, 2 ranks on 1 node(s), MASTER_ADDR=127.0.0.1 MASTER_PORT=[0-9]*:' \
		"$tmp/out/gpu-check.log" || fail "ddp trial not launched as 2 ranks"
else
	grep -q '^- trial-ddp=skipped' "$f" || { cat "$f"; fail "ddp trial not skipped without PyTorch"; }
fi
if [ $sa = 1 ]; then
	grep -q '^- standalone-hwbench=ok' "$f" || { cat "$tmp/out/gpu-check.log"; fail "standalone hwbench did not build"; }
fi
# the GEMM figure is a real, positive measurement
g=$(sed -n 's/^hwbench: gemm .*tflops=\([0-9.e-]*\) .*/\1/p' "$f")
$py -c "import sys; sys.exit(0 if float('$g') > 0 else 1)" || fail "GEMM tflops $g"
$py -c "import json; h = json.load(open('$tmp/out/profile.json'))['hardware'][0]; assert h['gemm_tflops'] > 0, h" ||
	fail "profile.json lacks gemm_tflops"
[ -s "$tmp/out/gpu-check.log" ] || fail "no log"

# a failing step is recorded and the later steps still run: a build folder
# without saturn-profile (only the hwbench step can run)
mkdir -p "$tmp/fake/profiler"
cp "$top_builddir/profiler/saturn-hwbench" "$tmp/fake/profiler/" 2>/dev/null ||
	cp "$top_builddir/profiler/.libs/saturn-hwbench" "$tmp/fake/profiler/"
OUT="$tmp/out2" GPU_CHECK_USE_BUILD="$tmp/fake" timeout 300 sh "$top_srcdir/contrib/gpu/gpu-check.sh" --dry-run \
	>"$tmp/log2" 2>&1 || { cat "$tmp/log2"; fail "gpu-check.sh without a build"; }
grep -q '^- hwbench=ok' "$tmp/out2/gpu-figures.txt" || { cat "$tmp/out2/gpu-figures.txt"; fail "hwbench step after a missing build"; }
grep -q '^| trial (saturn-run trial mode, single, 1 GPU) | not run |' "$tmp/out2/gpu-figures.txt" ||
	{ cat "$tmp/out2/gpu-figures.txt"; fail "trial row without a build"; }
grep -q '^| profile (saturn-profile, 1 GPU) | not run |' "$tmp/out2/gpu-figures.txt" || fail "profile row without a build"
exit 0
