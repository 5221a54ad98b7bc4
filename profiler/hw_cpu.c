/* hw_cpu.c - the CPU stand-in backend: the visible device ids become GPUs
 * with the memory and link bandwidth of the emulator's hardware model
 * (SATURN_EMU_* variables, lib/emulate.h). Collectives are computed for real
 * on small host buffers (so the correctness pass means something) and their
 * time is the modelled one, so bus bandwidth comes out as modelled. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void cpu_close(void *ctx)
{
	free(ctx);
}

const saturn_hw_ops_t saturn_hw_cpu = {
    "cpu", cpu_open, cpu_gpu_info, cpu_collective, cpu_close,
};
