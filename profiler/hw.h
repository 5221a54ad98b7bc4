/* hw.h - the profiler's hardware access, behind an operations table.
 *
 * Backends: "cpu" (a stand-in that reports the visible device ids as GPUs
 * with modelled memory and collective bandwidth, lib/job/emulate.h, and a real
 * plain-C SGEMM for its matrix-multiply figure), and "cuda" (the CUDA runtime
 * for memory, NCCL for collectives, cuBLAS for the matrix multiply), compiled
 * only with HAVE_CUDA / HAVE_NCCL / HAVE_CUBLAS. Errors carry file:line and
 * the API's message.
 */
#ifndef SATURN_PROFILER_HW_H
#define SATURN_PROFILER_HW_H

#include <stddef.h>

#include "emulate.h"
#include "error.h"

typedef struct saturn_hw_ops {
	const char *name;
	/* Open the first ngpus visible GPUs. 0, or -1 with err (e.g. "no
	 * CUDA device"). */
	int (*open)(void **ctx, int ngpus, saturn_error_t *err);
	/* GPU i's model and memory (MiB). */
	int (*gpu_info)(void *ctx, int i, char *model, size_t len,
			double *mem_mb, saturn_error_t *err);
	/* One collective over GPUs 0..n-1 of `bytes` bytes per rank (all-
	 * reduce) or per rank's output (all-gather): `warmup` untimed
	 * iterations, `iters` timed ones; seconds per timed iteration in
	 * *sec; then a separate correctness pass with known values sets
	 * *correct. */
	int (*collective)(void *ctx, saturn_collective_t c, int n, size_t bytes,
			  int warmup, int iters, double *sec, int *correct,
			  saturn_error_t *err);
	/* One n x n x n matrix product C = A B on GPU `gpu`: `warmup`
	 * untimed products, `iters` timed ones; seconds per timed product in
	 * *sec (the data is non-zero, not all equal); then a separate
	 * correctness pass on a small product with known values sets
	 * *correct. Precision is the backend's (cuda: BF16 inputs, FP32
	 * accumulation and output, tensor cores; cpu: FP32). 0, or -1 with
	 * err ("built without cuBLAS", allocation or library failures). */
	int (*gemm)(void *ctx, int gpu, int n, int warmup, int iters,
		    double *sec, int *correct, saturn_error_t *err);
	void (*close)(void *ctx);
} saturn_hw_ops_t;

extern const saturn_hw_ops_t saturn_hw_cpu;
#ifdef HAVE_CUDA
extern const saturn_hw_ops_t saturn_hw_cuda;
#endif

/* nccl-tests bus bandwidth (GB/s) of a collective over n GPUs measured with
 * ops: algbw = bytes / time; all-reduce busbw = algbw * 2(n-1)/n (each byte
 * crosses 2(n-1) links of a ring for n ranks); all-gather busbw = algbw *
 * (n-1)/n with bytes = the gathered output. 0, or -1 with err (also when
 * the correctness pass fails). */
int saturn_hw_busbw(const saturn_hw_ops_t *ops, void *ctx,
		    saturn_collective_t c, int n, double *busbw,
		    saturn_error_t *err);

/* Matrix sizes the probe uses: big enough to be compute-bound on an H100
 * class GPU (2 * 8192^3 = 1.1 TFLOP per product), small enough to stay
 * well under a second on the CPU stand-in. */
#define SATURN_GEMM_N_GPU 8192
#define SATURN_GEMM_N_CPU 256

/* GEMM throughput (TFLOP/s) of GPU `gpu` with ops: an n x n x n product is
 * 2n^3 floating-point operations (n^3 multiply-adds), so TFLOP/s = 2n^3 /
 * seconds per product / 1e12, after the backend's untimed warm-up, over its
 * timed products. 0, or -1 with err (also when the correctness pass fails
 * or the op is missing). */
int saturn_hw_gemm_tflops(const saturn_hw_ops_t *ops, void *ctx, int gpu,
			  int n, double *tflops, saturn_error_t *err);

#endif /* SATURN_PROFILER_HW_H */
