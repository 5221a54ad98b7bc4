/* hwbench.c - saturn-hwbench: the profiler's hardware probes on their own,
 * for contrib/gpu/gpu-check.sh and doc/benchmarks.md. Prints, as key=value
 * lines, GPU 0's model and memory, its GEMM throughput (hw.h's
 * discipline: warm-up, timed products, correctness pass, 2n^3 FLOPs per
 * product) and, for each GPU count from 1 to --gpus, the all-reduce and
 * all-gather time of 64 MiB with nccl-tests' algorithm and bus bandwidth
 * (busbw is 0 for one GPU by nccl-tests' formula; algbw is then a local
 * copy). Not installed. Built with the project (noinst), or standalone
 * without the project's library when HWBENCH_STANDALONE is defined (CUDA
 * backend only; see contrib/gpu/gpu-check.sh).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"
#include "numparse.h"

#define BENCH_BYTES (64u << 20)
#define BENCH_WARMUP 5
#define BENCH_ITERS 20

static void usage(FILE *f)
{
	fprintf(f, "usage: saturn-hwbench [--backend cpu|cuda] [--gpus N] "
		   "[--gemm-n N]\n");
}

static const saturn_hw_ops_t *pick(const char *name)
{
#ifndef HWBENCH_STANDALONE
	if (strcmp(name, "cpu") == 0)
		return &saturn_hw_cpu;
#endif
#ifdef HAVE_CUDA
	if (strcmp(name, "cuda") == 0)
		return &saturn_hw_cuda;
#endif
	return NULL;
}

/* One collective over n GPUs: algbw = bytes / time; busbw as hw.c. */
static void bench_coll(const saturn_hw_ops_t *ops, void *ctx,
		       saturn_collective_t c, int n)
{
	const char *cn = c == SATURN_ALLREDUCE ? "allreduce" : "allgather";
	saturn_error_t err = {{0}};
	double sec = 0, algbw, busbw;
	int correct = 0;

	if (ops->collective(ctx, c, n, BENCH_BYTES, BENCH_WARMUP, BENCH_ITERS,
			    &sec, &correct, &err) < 0) {
		printf("%s gpus=%d bytes=%u error=%s\n", cn, n, BENCH_BYTES,
		       err.text);
		return;
	}
	if (!correct || !(sec > 0)) {
		printf("%s gpus=%d bytes=%u error=%s\n", cn, n, BENCH_BYTES,
		       !correct ? "wrong values" : "took no time");
		return;
	}
	algbw = BENCH_BYTES / sec / 1e9;
	/* nccl-tests: all-reduce 2(n-1)/n, all-gather (n-1)/n */
	busbw = algbw * (c == SATURN_ALLREDUCE ? 2.0 * (n - 1) / n
					       : (n - 1.0) / n);
	printf("%s gpus=%d bytes=%u time_us=%.1f algbw_gbs=%.2f "
	       "busbw_gbs=%.2f correct=yes\n",
	       cn, n, BENCH_BYTES, sec * 1e6, algbw, busbw);
}

/* An option value numparse refused: print its message; exit status 2. */
static int bad_option(const saturn_error_t *err)
{
	fprintf(stderr, "saturn-hwbench: %s\n", err->text);
	return 2;
}

int main(int argc, char **argv)
{
	const char *backend = "cuda";
	const saturn_hw_ops_t *ops;
	saturn_error_t err = {{0}};
	void *ctx = NULL;
	char model[256];
	double mem = 0, tf = 0;
	int gpus = 1, gn = 0, rc = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc)
			backend = argv[++i];
		else if (strcmp(argv[i], "--gpus") == 0 && i + 1 < argc) {
			if (saturn_parse_int("--gpus", argv[++i], 1, 64, &gpus,
					     &err) < 0)
				return bad_option(&err);
		} else if (strcmp(argv[i], "--gemm-n") == 0 && i + 1 < argc) {
			if (saturn_parse_int("--gemm-n", argv[++i], 0, INT_MAX,
					     &gn, &err) < 0)
				return bad_option(&err);
		} else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!(ops = pick(backend))) {
		fprintf(stderr, "saturn-hwbench: backend %s not built in\n",
			backend);
		return 77;
	}
	if (!gn)
		gn = strcmp(backend, "cpu") == 0 ? SATURN_GEMM_N_CPU
						 : SATURN_GEMM_N_GPU;
	if (ops->open(&ctx, gpus, &err) < 0) {
		fprintf(stderr, "saturn-hwbench: %s backend: %s\n", ops->name,
			err.text);
		return strstr(err.text, "no CUDA device") ? 77 : 1;
	}
	printf("backend=%s\n", ops->name);
	if (ops->gpu_info(ctx, 0, model, sizeof(model), &mem, &err) < 0) {
		printf("gpu0 error=%s\n", err.text);
		rc = 1;
	} else {
		printf("gpu0_model=%s\n", model);
		printf("gpu0_mem_mb=%.0f\n", mem);
	}
	if (saturn_hw_gemm_tflops(ops, ctx, 0, gn, &tf, &err) < 0) {
		printf("gemm n=%d error=%s\n", gn, err.text);
		rc = 1;
	} else {
		printf("gemm n=%d precision=%s tflops=%.4g correct=yes\n", gn,
		       strcmp(ops->name, "cpu") == 0 ? "fp32-host-cpu"
						     : "bf16-fp32acc",
		       tf);
	}
	for (int n = 1; n <= gpus; n++) {
		bench_coll(ops, ctx, SATURN_ALLREDUCE, n);
		bench_coll(ops, ctx, SATURN_ALLGATHER, n);
	}
	ops->close(ctx);
	return rc;
}
