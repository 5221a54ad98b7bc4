/* bench_model.h - what the planner benchmarks share (saturn-bench.c,
 * fair-bench.c): the analytic cost model of fine-tuning a model with each
 * technique (README.md, "Planner benchmark") and a seeded xorshift random
 * number generator. Static functions: each benchmark is one program. */
#ifndef SATURN_BENCH_MODEL_H
#define SATURN_BENCH_MODEL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- cost model (see README.md) ------------------------------------------ */
#define PEAK_FLOPS 312e12 /* bf16 dense, A100-class */
#define MFU 0.40
#define GPU_MEM 80e9
#define MEM_USABLE 0.85
#define BW_NVL 150e9  /* all-reduce bus bandwidth, bytes/s */
#define BW_PCIE 16e9
#define OVERLAP 0.5   /* share of communication hidden behind compute */
#define SEQ 1024
#define STEP_OVERHEAD 0.05 /* s per batch: data loading, optimizer, ... */
#define CPU_ADAM 1.0e-9    /* s per parameter per step for offloaded Adam */

typedef struct model_spec {
	const char *name;
	double params;
} model_spec_t;

static const int batch_sizes[] = {8, 16, 32, 64};

enum { T_DDP, T_FSDP, T_PIPE, T_OFFLOAD, NTECH };
static const char *tech_names[] = {"ddp", "fsdp", "pipeline", "offload"};

/* Seconds per batch of technique tech on g GPUs with bus bandwidth bw, or
 * 0 when it does not fit in memory or makes no sense. */
static inline double sec_per_batch(double P, int B, int tech, int g, double bw)
{
	double compute = 6.0 * P * B * SEQ / (g * PEAK_FLOPS * MFU);
	double state = 16.0 * P; /* fp32 master + Adam + bf16 weights/grads */
	double comm, t;

	switch (tech) {
	case T_DDP:
		if (state > MEM_USABLE * GPU_MEM)
			return 0;
		comm = g > 1 ? 2.0 * (g - 1) / g * 2.0 * P / bw : 0;
		t = compute + (1 - OVERLAP) * comm;
		break;
	case T_FSDP:
		if (g < 2 || state / g > MEM_USABLE * GPU_MEM)
			return 0;
		comm = 3.0 * (g - 1) / g * 2.0 * P / bw;
		t = compute + (1 - OVERLAP) * comm;
		break;
	case T_PIPE: {
		int micro = B / 2 > g ? B / 2 : g;

		if (g < 2 || state / g > MEM_USABLE * GPU_MEM)
			return 0;
		/* GPipe bubble; activations between stages are small. */
		t = compute * (1.0 + (double)(g - 1) / micro) +
		    (g - 1) * 2.0 * B * SEQ * sqrt(P / 12.0) * 2 / bw;
		break;
	}
	default: /* offload: one GPU, optimizer state and Adam on the CPU */
		if (g != 1)
			return 0;
		t = compute * 1.15 + CPU_ADAM * P;
		break;
	}
	return t + STEP_OVERHEAD;
}

/* --- random numbers ------------------------------------------------------- */

static uint64_t rng_state;

/* splitmix64: neighbouring seeds give unrelated xorshift states. */
static inline uint64_t seed_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x ? x : 1;
}

static inline double unif(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

static inline int irand(int n)
{
	return (int)(unif() * n);
}

static inline char *xstrdup(const char *s)
{
	char *r = strdup(s);

	if (!r) {
		perror("strdup");
		exit(2);
	}
	return r;
}

#endif /* SATURN_BENCH_MODEL_H */
