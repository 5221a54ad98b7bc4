/* hw.c - the measurement discipline shared by all backends (nccl-tests):
 * untimed warm-up, timed iterations, a correctness pass, then the figure
 * (bus bandwidth of a collective, TFLOP/s of a matrix product). */
#include "config.h"

#include "hw.h"

#define BW_BYTES (64u << 20) /* large enough to be bandwidth-bound */
#define BW_WARMUP 5
#define BW_ITERS 20
#define GEMM_WARMUP 3
#define GEMM_ITERS 10

int saturn_hw_busbw(const saturn_hw_ops_t *ops, void *ctx,
		    saturn_collective_t c, int n, double *busbw,
		    saturn_error_t *err)
{
	double sec = 0, algbw;
	int correct = 0;

	*busbw = 0;
	if (n < 2)
		return 0;
	if (ops->collective(ctx, c, n, BW_BYTES, BW_WARMUP, BW_ITERS, &sec,
			    &correct, err) < 0)
		return -1;
	if (!correct)
		return saturn_error_set(
		    err, "%s: %s over %d GPUs returned wrong values", ops->name,
		    c == SATURN_ALLREDUCE ? "all-reduce" : "all-gather", n);
	if (!(sec > 0))
		return saturn_error_set(err, "%s: collective took no time",
					ops->name);
	algbw = BW_BYTES / sec / 1e9;
	if (c == SATURN_ALLREDUCE)
		*busbw = algbw * 2.0 * (n - 1) /
			 n; /* ring: 2(n-1)/n of the data per link */
	else
		*busbw = algbw * (n - 1) /
			 n; /* each rank receives (n-1)/n of the output */
	return 0;
}

int saturn_hw_gemm_tflops(const saturn_hw_ops_t *ops, void *ctx, int gpu,
			  int n, double *tflops, saturn_error_t *err)
{
	double sec = 0;
	int correct = 0;

	*tflops = 0;
	if (!ops->gemm)
		return saturn_error_set(err, "%s: no matrix-multiply probe",
					ops->name);
	if (n < 1)
		return saturn_error_set(err, "%s: GEMM size %d", ops->name, n);
	if (ops->gemm(ctx, gpu, n, GEMM_WARMUP, GEMM_ITERS, &sec, &correct,
		      err) < 0)
		return -1;
	if (!correct)
		return saturn_error_set(
		    err, "%s: matrix product on GPU %d returned wrong values",
		    ops->name, gpu);
	if (!(sec > 0))
		return saturn_error_set(err, "%s: matrix product took no time",
					ops->name);
	/* n^3 multiply-adds = 2n^3 FLOPs per product (the usual GEMM count,
	 * as cuBLAS and nccl-tests-style benchmarks report it) */
	*tflops = 2.0 * (double)n * n * n / sec / 1e12;
	return 0;
}
