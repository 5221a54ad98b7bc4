#!/bin/sh
# contrib/gpu/gpu-check.sh - the one-shot check for a machine with a GPU
# (issue 4 item 8): build the project with the CUDA/NCCL/cuBLAS probes, run
# tests/runner/cuda-probe.sh, record GPU 0's memory, its GEMM throughput
# and the NCCL all-reduce/all-gather bandwidth on 1 GPU, profile a tiny
# batch on 1 GPU with saturn-profile, and, when PyTorch sees the GPU, run a
# real trial of contrib/pytorch/train.py through saturn-run (trial mode,
# technique single, 1 GPU), then one with ddp on every GPU PyTorch sees:
# ranks started by saturn-run itself (saturn-ranks, saturn-run(1) LAUNCH OF
# RANKS), NCCL between them. Everything lands in $OUT/gpu-figures.txt, ready
# to paste into doc/benchmarks.md ("GPU machine"), with the logs beside it.
#
# Usage, from anywhere (the repository is the one holding this script):
#   OUT=/some/dir contrib/gpu/gpu-check.sh            # the real thing
#   OUT=/some/dir contrib/gpu/gpu-check.sh --dry-run  # same steps, CPU stand-in
#
# Every step runs under a time limit; a failing step is reported in the
# figures file ("step NAME=FAILED ...") and the next steps still run. The
# whole check is meant to finish within about 8 minutes with 16 cores.
# Nothing is downloaded; nothing outside $OUT, the build folder and /tmp is
# written except the autotools files autoreconf makes in the source tree.
#
# Environment:
#   OUT                     output folder (default ./gpu-check-out)
#   GPU_CHECK_BACKEND       cuda (default) or cpu (= --dry-run): with cpu the
#                           same steps use the CPU stand-in; the figures are
#                           then the host's, never a GPU's
#   GPU_CHECK_BUILD         build folder (default /tmp/gpu-check-build)
#   GPU_CHECK_USE_BUILD     an existing, built build folder: skip the build
#   GPU_CHECK_JOBS          make -j (default 16)
#   GPU_CHECK_CUDA          CUDA toolkit (default /usr/local/cuda)
#   GPU_CHECK_DIST          a `make dist` tarball to build from instead of the
#                           checkout (for a machine without autotools: make it
#                           where they exist, carry it along)
#   GPU_CHECK_STANDALONE=1  also build saturn-hwbench without the project's
#                           library (done anyway when the full build fails)
#
# What was tested where: the CPU path (--dry-run) runs in the project's tests
# (tests/runner/gpu-check.sh) on machines without a GPU; the CUDA path
# compiles there but has not run on a GPU from this script's first version
# on; its first real run is the one that fills doc/benchmarks.md.
set -u

dry=0
case "${1:-}" in
--dry-run) dry=1 ;;
"") ;;
-h | --help) sed -n '2,35p' "$0"; exit 0 ;;
*) echo "usage: $0 [--dry-run]" >&2; exit 2 ;;
esac
backend=${GPU_CHECK_BACKEND:-cuda}
[ $dry = 1 ] && backend=cpu
case "$backend" in cpu | cuda) ;; *) echo "GPU_CHECK_BACKEND: cpu or cuda" >&2; exit 2 ;; esac
src=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
build=${GPU_CHECK_USE_BUILD:-${GPU_CHECK_BUILD:-/tmp/gpu-check-build}}
jobs=${GPU_CHECK_JOBS:-16}
cuda=${GPU_CHECK_CUDA:-/usr/local/cuda}
work=$(mktemp -d /tmp/gpu-check.XXXXXX) || exit 2
trap 'rm -rf "$work"' EXIT
LOG="$OUT/gpu-check.log"
RAW="$work/raw"
: >"$LOG"
: >"$RAW"
t_start=$(date +%s)

say() { echo "gpu-check: $*" | tee -a "$LOG" >&2; }
raw() { echo "$*" >>"$RAW"; }
# step NAME LIMIT CMD...: run CMD with its output in the log; record
# "step NAME=ok|skipped|FAILED (exit N)"; never stops the script.
step() {
	name=$1 limit=$2
	shift 2
	say "step $name: $*"
	t0=$(date +%s)
	timeout -k 10 "$limit" "$@" >>"$LOG" 2>&1
	rc=$?
	case $rc in
	0) st=ok ;;
	77) st="skipped (exit 77)" ;;
	124 | 137) st="FAILED (timeout after ${limit}s)" ;;
	*) st="FAILED (exit $rc)" ;;
	esac
	raw "step $name=$st ($(($(date +%s) - t0)) s)"
	say "step $name: $st"
	return $rc
}
# "VALUE UNIT", or "not measured" when VALUE is empty
unit() { if [ -n "$1" ]; then echo "$1 $2"; else echo "not measured"; fi; }
# key=value from a file of such lines (first match)
kv() { sed -n "s/^$1=//p" "$2" 2>/dev/null | head -1; }

say "backend=$backend source=$src build=$build out=$OUT"
{
	echo "== environment"
	date -u
	uname -a
	command -v nvidia-smi >/dev/null && nvidia-smi -L && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
	[ -x "$cuda/bin/nvcc" ] && "$cuda/bin/nvcc" --version | tail -2
	ls "$cuda/include/nccl.h" "$cuda/include/cublas_v2.h" 2>&1
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())' 2>&1
} >>"$LOG" 2>&1
raw "driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
raw "cuda_toolkit=$("$cuda/bin/nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"

# --- a CUDA folder for configure: the toolkit, plus NCCL from elsewhere
# (/usr/include, or the nvidia-nccl wheel beside PyTorch) when the toolkit
# lacks it --------------------------------------------------------------------
cuda_cfg=$cuda
if [ "$backend" = cuda ] && [ -f "$cuda/include/cuda_runtime.h" ] && [ ! -f "$cuda/include/nccl.h" ]; then
	nccl_inc= nccl_lib=
	for d in /usr/include $(python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null)/include; do
		[ -f "$d/nccl.h" ] && { nccl_inc=$d; break; }
	done
	for d in /usr/lib/x86_64-linux-gnu "${nccl_inc%/include}/lib"; do
		ls "$d"/libnccl.so* >/dev/null 2>&1 && { nccl_lib=$d; break; }
	done
	if [ -n "$nccl_inc" ] && [ -n "$nccl_lib" ]; then
		cuda_cfg="$work/cuda"
		mkdir -p "$cuda_cfg/include" "$cuda_cfg/lib64"
		ln -s "$cuda"/include/* "$cuda_cfg/include/" 2>/dev/null
		ln -s "$cuda"/lib64/* "$cuda_cfg/lib64/" 2>/dev/null
		ln -sf "$nccl_inc"/nccl*.h "$cuda_cfg/include/"
		for f in "$nccl_lib"/libnccl.so*; do ln -sf "$f" "$cuda_cfg/lib64/"; done
		[ -e "$cuda_cfg/lib64/libnccl.so" ] || ln -s "$(ls "$nccl_lib"/libnccl.so* | head -1)" "$cuda_cfg/lib64/libnccl.so"
		say "NCCL from $nccl_inc and $nccl_lib (toolkit has none)"
	else
		say "no NCCL found: the collectives will report 'built without NCCL'"
	fi
fi

# --- 1. build ------------------------------------------------------------------
built=0
if [ -n "${GPU_CHECK_USE_BUILD:-}" ]; then
	raw "step build=existing build folder $build"
	[ -x "$build/profiler/saturn-profile" ] && built=1
else
	cfg="--with-slurm-source=no"
	[ "$backend" = cuda ] && cfg="$cfg --with-cuda=$cuda_cfg"
	mkdir -p "$build"
	bsrc=$src
	if [ -n "${GPU_CHECK_DIST:-}" ]; then
		mkdir -p "$work/dist"
		step unpack-dist 60 tar -C "$work/dist" -xzf "$GPU_CHECK_DIST"
		bsrc=$(ls -d "$work"/dist/*/ 2>/dev/null | head -1)
		bsrc=${bsrc%/}
	elif command -v autoreconf >/dev/null; then
		step autoreconf 180 sh -c "cd '$src' && autoreconf -fi"
	elif [ -x "$src/configure" ]; then
		raw "step autoreconf=skipped (no autoreconf; using the existing configure)"
	else
		raw "step autoreconf=FAILED (no autoreconf here and no configure: set GPU_CHECK_DIST)"
	fi
	[ -x "$bsrc/configure" ] &&
		step configure 180 sh -c "cd '$build' && '$bsrc/configure' $cfg" &&
		step make 360 make -C "$build" -j"$jobs" &&
		built=1
	l=$(grep 'CUDA runtime:' "$LOG" | tail -1 | sed 's/^ *//')
	[ -n "$l" ] && raw "configure_summary=$l"
fi
PATH="$build/runner:$build/profiler:$PATH"
export PATH
hwbench="$build/profiler/saturn-hwbench"

# --- 1b. saturn-hwbench on its own: CUDA runtime, NCCL and cuBLAS only (no
# lp_solve, hwloc, json-c), for a machine where the full build fails --------
if [ -f "$cuda_cfg/include/cuda_runtime.h" ] &&
	{ [ "${GPU_CHECK_STANDALONE:-0}" = 1 ] || { [ "$backend" = cuda ] && [ $built = 0 ]; }; }; then
	mkdir -p "$work/sa"
	defs="#define HAVE_CUDA 1"
	libs="-lcudart"
	[ -f "$cuda_cfg/include/nccl.h" ] && defs="$defs
#define HAVE_NCCL 1" && libs="-lnccl $libs"
	[ -f "$cuda_cfg/include/cublas_v2.h" ] && defs="$defs
#define HAVE_CUBLAS 1" && libs="-lcublas $libs"
	printf '%s\n#define _GNU_SOURCE 1\n' "$defs" >"$work/sa/config.h"
	if step standalone-hwbench 180 cc -O2 -Wall -Wno-unused-parameter -Wno-format-truncation \
		-DHWBENCH_STANDALONE -I"$work/sa" -I"$src/lib/model" -I"$src/lib/job" -I"$src/profiler" -I"$cuda_cfg/include" \
		"$src/profiler/hwbench.c" "$src/profiler/hw.c" "$src/profiler/hw_cuda.c" "$src/lib/model/error.c" \
		"$src/lib/model/numparse.c" "$src/lib/model/safetext.c" \
		-o "$work/sa/saturn-hwbench" -L"$cuda_cfg/lib64" -Wl,-rpath,"$cuda_cfg/lib64" $libs; then
		[ $built = 0 ] && [ "$backend" = cuda ] && hwbench="$work/sa/saturn-hwbench"
		step standalone-hwbench-run 120 "$work/sa/saturn-hwbench" --backend cuda --gpus 1
	fi
fi

# --- 2. the CUDA probe test ------------------------------------------------------
if [ $built = 1 ]; then
	step cuda-probe-test 180 env top_srcdir="$src" top_builddir="$build" \
		SATURN_SHARED_DIR="${SATURN_SHARED_DIR:-}" sh "$src/tests/runner/cuda-probe.sh"
fi

# --- 3. device line: memory and GEMM through saturn-profile --------------------
if [ $built = 1 ]; then
	step show-topology 180 sh -c "CUDA_VISIBLE_DEVICES=\${CUDA_VISIBLE_DEVICES:-0} saturn-profile --backend $backend --show-topology >'$work/topo' 2>'$work/topo.err'; rc=\$?; cat '$work/topo' '$work/topo.err'; exit \$rc"
	dev=$(grep '^device ' "$work/topo" 2>/dev/null)
	[ -n "$dev" ] && raw "show_topology: $dev"
fi

# --- 4. the hardware bench: memory, GEMM, NCCL on 1 GPU ------------------------
if [ -x "$hwbench" ]; then
	g=1
	[ "$backend" = cpu ] && g=2 # the stand-in models collectives from 2 GPUs
	step hwbench 180 sh -c "'$hwbench' --backend $backend --gpus $g >'$work/bench'; rc=\$?; cat '$work/bench'; exit \$rc"
	sed 's/^/hwbench: /' "$work/bench" >>"$RAW"
fi

# --- 5. a tiny profile on 1 GPU ------------------------------------------------
torch_gpu=0
if [ "$backend" = cuda ] && timeout 120 python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
	torch_gpu=1
fi
raw "torch_cuda=$torch_gpu"
train="python3 $src/contrib/pytorch/train.py --hidden 4096 --layers 8 --batch-size 256"
emu="saturn-emulate --model gpt2-xl --batch-size 8 --time-scale 0.001"
if [ $torch_gpu = 1 ]; then workload=$train; else workload=$emu; fi
raw "workload=$workload"
if [ $built = 1 ]; then
	printf '#!/bin/sh\nexec saturn-run --batches 200 -- %s\n' "$workload" >"$work/batch.sbatch"
	chmod +x "$work/batch.sbatch"
	step profile 240 env CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}" saturn-profile \
		--backend "$backend" --batch gpu-check --script "$work/batch.sbatch" --task-ids 0 \
		--max-gpus 1 --techniques single --trial-batches 5 --warmup 2 --timeout 150 \
		--output "$OUT/profile.json"
	python3 - "$OUT/profile.json" >>"$RAW" 2>>"$LOG" <<'P'
import json, sys
p = json.load(open(sys.argv[1]))
h = p["hardware"][0]
print("profile_gpu_model=%s" % h.get("gpu_model"))
print("profile_gpu_mem_mb=%.0f" % h.get("gpu_mem_mb", 0))
print("profile_gemm_tflops=%.4g" % h.get("gemm_tflops", 0))
for t in p["tasks"]:
    for o in t["options"]:
        print("profile_option %s gpus=%d status=%s sec_per_batch=%.6g peak_mem_mb=%.0f%s" % (
            o["technique"], o["gpus"], o["status"], o.get("sec_per_batch", 0),
            o.get("peak_mem_mb", 0), (" reason=" + o["reason"]) if o.get("reason") else ""))
P
fi

# --- 6. a real trial of the PyTorch example (1 GPU, single) --------------------
if [ $built = 1 ]; then
	if [ $torch_gpu = 1 ] || [ "$backend" = cpu ]; then
		step trial 240 env SATURN_MODE=trial SATURN_TECHNIQUE=single SATURN_GPUS=1 \
			SATURN_TRIAL_WARMUP=3 SATURN_TRIAL_BATCHES=20 SATURN_TRIAL_TIMEOUT=200 \
			SATURN_REPORT_FILE="$OUT/trial.json" CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}" \
			saturn-run -- $workload
		[ -s "$OUT/trial.json" ] && raw "trial_report=$(cat "$OUT/trial.json")"
	else
		raw "step trial=skipped (PyTorch does not see a GPU here)"
	fi
fi

# --- 6b. data parallel through saturn-run's rank launcher: train.py with
# ddp on every GPU PyTorch sees (NCCL; one rank per GPU, each taking GPU
# LOCAL_RANK); the dry run: 2 ranks on the CPU with gloo, when some python3
# has PyTorch --------------------------------------------------------------------
ddp_py= ddp_gpus=0 ddp_args=
if [ $torch_gpu = 1 ]; then
	ddp_py=python3
	ddp_gpus=$(timeout 120 python3 -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null)
	ddp_args="--hidden 4096 --layers 8 --batch-size 256"
elif [ "$backend" = cpu ]; then
	for p in python3 /usr/bin/python3; do
		timeout 120 $p -c 'import torch' >/dev/null 2>&1 && { ddp_py=$p; break; }
	done
	ddp_gpus=2
	ddp_args="--hidden 64 --layers 2 --batch-size 16"
fi
if [ $built = 1 ]; then
	if [ -n "$ddp_py" ] && [ "${ddp_gpus:-0}" -ge 1 ] 2>/dev/null; then
		raw "trial_ddp_gpus=$ddp_gpus"
		raw "workload_ddp=$ddp_py contrib/pytorch/train.py $ddp_args"
		step trial-ddp 240 env SATURN_MODE=trial SATURN_TECHNIQUE=ddp SATURN_GPUS=$ddp_gpus \
			SATURN_TRIAL_WARMUP=3 SATURN_TRIAL_BATCHES=20 SATURN_TRIAL_TIMEOUT=200 \
			SATURN_REPORT_FILE="$OUT/trial-ddp.json" OMP_NUM_THREADS=1 \
			saturn-run --verbose -- $ddp_py "$src/contrib/pytorch/train.py" $ddp_args
		[ -s "$OUT/trial-ddp.json" ] && raw "trial_ddp_report=$(cat "$OUT/trial-ddp.json")"
	else
		raw "step trial-ddp=skipped (no PyTorch that sees a GPU, or none at all in the dry run)"
	fi
fi

# --- 7. the figures --------------------------------------------------------------
b="$work/bench"
mem=$(kv gpu0_mem_mb "$b")
model=$(kv gpu0_model "$b")
gemm=$(sed -n 's/^gemm .*tflops=\([0-9.e+-]*\).*/\1/p' "$b" 2>/dev/null)
gemm_n=$(sed -n 's/^gemm n=\([0-9]*\) .*/\1/p' "$b" 2>/dev/null)
coll() { sed -n "s/^$1 gpus=$2 .*time_us=\([0-9.]*\) algbw_gbs=\([0-9.]*\) busbw_gbs=\([0-9.]*\).*/\1 us, algbw \2 GB\/s, busbw \3 GB\/s/p" "$b" 2>/dev/null; }
g1=1
[ "$backend" = cpu ] && g1=2
ar=$(coll allreduce $g1)
ag=$(coll allgather $g1)
{
	echo "## GPU machine"
	echo
	if [ "$backend" = cpu ]; then
		echo "DRY RUN on the CPU stand-in (--dry-run): these are the host's figures and the"
		echo "stand-in's model, NOT a GPU's. Do not paste them into doc/benchmarks.md."
		echo
	fi
	echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname) by \`contrib/gpu/gpu-check.sh\`"
	echo "(backend $backend; GPU ${model:-unknown}; driver $(kv driver "$RAW" | sed 's/^$/n\/a/'); CUDA toolkit $(kv cuda_toolkit "$RAW" | sed 's/^$/n\/a/');"
	echo "$(nproc 2>/dev/null || echo '?') CPU cores). One run of each figure."
	echo
	if [ "$backend" = cpu ]; then
		how_mem="the stand-in's model (SATURN_EMU_GPU_MEM_GB)"
		how_gemm="plain-C blocked SGEMM (FP32) on one host core, n=${gemm_n:-?}, 3 untimed + 10 timed products (wall clock)"
		how_ar="the stand-in's modelled time, 64 MiB per rank, values checked"
		how_ag="the stand-in's modelled time, 64 MiB output, values checked"
	else
		how_mem="CUDA runtime \`cudaGetDeviceProperties\` (\`totalGlobalMem\`)"
		how_gemm="cuBLAS \`cublasGemmEx\`, BF16 inputs, FP32 accumulate and output, n=${gemm_n:-?}, 3 untimed + 10 timed products (CUDA events)"
		how_ar="NCCL \`ncclAllReduce\` float sum, 64 MiB per rank, 5 untimed + 20 timed, values checked"
		how_ag="NCCL \`ncclAllGather\`, 64 MiB output, 5 untimed + 20 timed, values checked"
	fi
	echo "| figure | value | how |"
	echo "|---|---|---|"
	echo "| GPU 0 memory | $(unit "$mem" MiB) | $how_mem |"
	echo "| GEMM throughput, GPU 0 | $(unit "$gemm" TFLOP/s) | $how_gemm; 2n³ FLOPs per product; checked on a small product of known integers |"
	echo "| all-reduce, $g1 GPU(s) | ${ar:-not measured} | $how_ar; nccl-tests busbw = algbw·2(n-1)/n (0 for one GPU) |"
	echo "| all-gather, $g1 GPU(s) | ${ag:-not measured} | $how_ag; busbw = algbw·(n-1)/n (0 for one GPU) |"
	pg=$(kv profile_gemm_tflops "$RAW")
	pm=$(kv profile_gpu_mem_mb "$RAW")
	echo "| profile (saturn-profile, 1 GPU) | $([ -n "$pg$pm" ] && echo "gemm_tflops $pg, gpu_mem_mb $pm" || echo "not run") | \`saturn-profile --backend $backend --max-gpus 1 --techniques single --trial-batches 5 --warmup 2\`, workload below |"
	sed -n 's/^profile_option \([^ ]*\) \(.*\)$/| profile option \1 | \2 | trial through saturn-run |/p' "$RAW"
	tr=$(kv trial_report "$RAW" | sed 's/|/\//g')
	echo "| trial (saturn-run trial mode, single, 1 GPU) | ${tr:-not run} | 3 warm-up + 20 measured batches |"
	td=$(kv trial_ddp_report "$RAW" | sed 's/|/\//g')
	tg=$(kv trial_ddp_gpus "$RAW")
	echo "| trial (saturn-run trial mode, ddp, ${tg:-0} GPU(s)) | ${td:-not run} | train.py, ranks started by saturn-run (saturn-ranks), $([ "$backend" = cpu ] && echo "gloo on the CPU" || echo NCCL), 3 warm-up + 20 measured batches |"
	echo
	echo "Workload: \`$(kv workload "$RAW")\`."
	wd=$(kv workload_ddp "$RAW")
	[ -n "$wd" ] && echo "Workload of the ddp trial: \`$wd\`."
	echo
	echo "Steps (a failure here does not stop the later steps; the log is gpu-check.log):"
	echo
	grep '^step ' "$RAW" | sed 's/^step /- /'
	echo
	echo "Raw lines:"
	echo
	echo '```'
	grep -v '^step ' "$RAW"
	echo '```'
} >"$OUT/gpu-figures.txt"
say "done in $(($(date +%s) - t_start)) s: $OUT/gpu-figures.txt"
cat "$OUT/gpu-figures.txt"
exit 0
