/* hw_cpu.c - the CPU stand-in backend: the visible device ids become GPUs
 * with the memory and link bandwidth of the emulator's hardware model
 * (SATURN_EMU_* variables, lib/job/emulate.h). Collectives are computed for real
 * on small host buffers (so the correctness pass means something) and their
 * time is the modelled one, so bus bandwidth comes out as modelled. The
 * matrix multiply is not modelled: a blocked plain-C SGEMM runs on this CPU
 * and is timed for real, so its TFLOP/s is the host core's figure (a small
 * fraction of one GFLOP/s to a few tens of GFLOP/s), never a GPU's. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw.h"

struct cpu_ctx {
	int ngpus;
	saturn_emu_hw_t hw;
};

static int cpu_open(void **ctx, int ngpus, saturn_error_t *err)
{
	struct cpu_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return saturn_error_set(err, "out of memory");
	if (saturn_emu_hw_from_env(&c->hw, err) < 0) {
		free(c);
		return -1;
	}
	c->ngpus = ngpus;
	*ctx = c;
	return 0;
}

static int cpu_gpu_info(void *ctx, int i, char *model, size_t len,
			double *mem_mb, saturn_error_t *err)
{
	struct cpu_ctx *c = ctx;

	if (i < 0 || i >= c->ngpus)
		return saturn_error_set(err, "cpu: no GPU %d", i);
	snprintf(model, len, "cpu-standin");
	*mem_mb = c->hw.gpu_mem_gb * 1024;
	return 0;
}

static int cpu_collective(void *ctx, saturn_collective_t coll, int n,
			  size_t bytes, int warmup, int iters, double *sec,
			  int *correct, saturn_error_t *err)
{
	struct cpu_ctx *c = ctx;
	enum { COUNT = 1024 };
	float *buf;
	double busbw = saturn_emu_busbw(&c->hw, n, coll);

	if (n < 2 || n > c->ngpus)
		return saturn_error_set(
		    err, "cpu: collective over %d of %d GPUs", n, c->ngpus);
	buf = calloc((size_t)n * COUNT, sizeof(float));
	if (!buf)
		return saturn_error_set(err, "out of memory");
	/* correctness: rank r contributes r+1 everywhere */
	for (int r = 0; r < n; r++)
		for (int k = 0; k < COUNT; k++)
			buf[r * COUNT + k] = (float)(r + 1);
	*correct = 1;
	for (int k = 0; k < COUNT; k++) {
		float s = 0;

		for (int r = 0; r < n; r++)
			s += buf[r * COUNT + k];
		if (coll == SATURN_ALLREDUCE && s != (float)(n * (n + 1) / 2))
			*correct = 0;
	}
	free(buf);
	/* time of one iteration from the modelled bus bandwidth */
	*sec = (double)bytes / 1e9 / busbw *
	       (coll == SATURN_ALLREDUCE ? 2.0 * (n - 1) / n : (n - 1.0) / n);
	return 0;
}

#define GEMM_BLOCK 64
#define GEMM_CHECK_N 48 /* not a multiple of the block: edges are checked */

/* C = A B, n x n row-major FP32, blocked for the cache (i, k, j order so the
 * inner loop streams rows of B and C). */
static void sgemm_blocked(int n, const float *a, const float *b, float *c)
{
	memset(c, 0, (size_t)n * n * sizeof(float));
	for (int ii = 0; ii < n; ii += GEMM_BLOCK)
		for (int kk = 0; kk < n; kk += GEMM_BLOCK)
			for (int jj = 0; jj < n; jj += GEMM_BLOCK) {
				int ie = ii + GEMM_BLOCK < n ? ii + GEMM_BLOCK : n;
				int ke = kk + GEMM_BLOCK < n ? kk + GEMM_BLOCK : n;
				int je = jj + GEMM_BLOCK < n ? jj + GEMM_BLOCK : n;

				for (int i = ii; i < ie; i++)
					for (int k = kk; k < ke; k++) {
						float av = a[(size_t)i * n + k];
						const float *br = b + (size_t)k * n;
						float *cr = c + (size_t)i * n;

						for (int j = jj; j < je; j++)
							cr[j] += av * br[j];
					}
			}
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Small integers: every product and sum is exact in FP32, so the check can
 * compare for equality. */
static float check_a(int i, int k)
{
	return (float)((i + 2 * k) % 5 - 2);
}

static float check_b(int k, int j)
{
	return (float)((3 * k + j) % 7 - 3);
}

static int cpu_gemm(void *ctx, int gpu, int n, int warmup, int iters,
		    double *sec, int *correct, saturn_error_t *err)
{
	struct cpu_ctx *c = ctx;
	size_t nn = (size_t)n * n, cn = GEMM_CHECK_N * GEMM_CHECK_N;
	float *a, *b, *m;
	volatile float sink = 0;
	double t0;

	if (gpu < 0 || gpu >= c->ngpus)
		return saturn_error_set(err, "cpu: no GPU %d", gpu);
	if (n < 1 || n > 16384 || iters < 1 || warmup < 0)
		return saturn_error_set(err, "cpu: GEMM n=%d iters=%d", n,
					iters);
	nn = nn > cn ? nn : cn;
	a = malloc(nn * sizeof(float));
	b = malloc(nn * sizeof(float));
	m = malloc(nn * sizeof(float));
	if (!a || !b || !m) {
		free(a);
		free(b);
		free(m);
		return saturn_error_set(err, "cpu: GEMM n=%d: out of memory",
					n);
	}
	/* timed data: non-zero and not all equal */
	for (size_t k = 0; k < (size_t)n * n; k++) {
		a[k] = (float)((k * 7 + 3) % 13) * 0.125f - 0.75f;
		b[k] = (float)((k * 5 + 1) % 11) * 0.25f - 1.25f;
	}
	for (int it = 0; it < warmup; it++) {
		sgemm_blocked(n, a, b, m);
		sink += m[it % n];
	}
	t0 = now_sec();
	for (int it = 0; it < iters; it++) {
		sgemm_blocked(n, a, b, m);
		sink += m[it % n];
	}
	*sec = (now_sec() - t0) / iters;
	(void)sink;

	/* correctness pass: a small product with known values */
	for (int i = 0; i < GEMM_CHECK_N; i++)
		for (int k = 0; k < GEMM_CHECK_N; k++) {
			a[i * GEMM_CHECK_N + k] = check_a(i, k);
			b[i * GEMM_CHECK_N + k] = check_b(i, k);
		}
	sgemm_blocked(GEMM_CHECK_N, a, b, m);
	*correct = 1;
	for (int i = 0; i < GEMM_CHECK_N; i++)
		for (int j = 0; j < GEMM_CHECK_N; j++) {
			float want = 0;

			for (int k = 0; k < GEMM_CHECK_N; k++)
				want += check_a(i, k) * check_b(k, j);
			if (m[i * GEMM_CHECK_N + j] != want)
				*correct = 0;
		}
	free(a);
	free(b);
	free(m);
	return 0;
}

static void cpu_close(void *ctx)
{
	free(ctx);
}

const saturn_hw_ops_t saturn_hw_cpu = {
    "cpu", cpu_open, cpu_gpu_info, cpu_collective, cpu_gemm, cpu_close,
};
