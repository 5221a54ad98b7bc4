/* bench_model.h - what the planner benchmarks share (saturn-bench.c,
 * class-bench.c, fair-bench.c, multi-bench.c): the analytic cost model of
 * fine-tuning a model with each technique (README.md, "Planner benchmark"),
 * a seeded xorshift random number generator, the sweep-grid jobs and
 * problems the multi-user benchmarks build, and run statistics. Static
 * functions: each benchmark is one program. */
#ifndef SATURN_BENCH_MODEL_H
#define SATURN_BENCH_MODEL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

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

static inline void *xcalloc(size_t n, size_t s)
{
	void *r = calloc(n ? n : 1, s);

	if (!r) {
		perror("calloc");
		exit(2);
	}
	return r;
}

/* --- sweep-grid jobs (fair-bench.c, multi-bench.c) ------------------------ */

/* Draws one fine-tuning job: a 1.5B or 6B model, a batch size of
 * batch_sizes and 4000-20000 samples for 1-3 epochs. */
static inline void draw_job(double *params, int *B, double *batches)
{
	static const double model_params[] = {1.5e9, 6.0e9};
	double samples = 4000 + 16000 * unif();
	int epochs = 1 + (int)(unif() * 3);

	*params = model_params[(int)(unif() * 2)];
	*B = batch_sizes[(int)(unif() * 4)];
	*batches = ceil(samples * epochs / *B);
}

/* The options of a job on nodes of `gpus` NVLink GPUs, in a fixed order
 * (technique, then 1, 2, 4 ... gpus GPUs) so that an option index stays
 * valid across problems: into t->options (allocated here, at most NTECH x
 * log2(gpus) + 1 of them). request: only the 4-GPU one of the first
 * technique that fits (a user's ask). */
static inline void add_grid_options(saturn_task_t *t, double params, int B, int gpus, int request)
{
	t->options = xcalloc(NTECH * 4, sizeof(*t->options));
	for (int tech = 0; tech < NTECH; tech++)
		for (int g = 1; g <= gpus; g *= 2) {
			double s = sec_per_batch(params, B, tech, g, BW_NVL);
			saturn_option_t *o = &t->options[t->noptions];

			if (s <= 0 || (request && (g != 4 || t->noptions > 0)))
				continue;
			o->technique = xstrdup(tech_names[tech]);
			o->gpus = g;
			o->sec_per_batch = s;
			t->noptions++;
		}
}

/* Seconds per batch of option opt of add_grid_options() (no request), or 0. */
static inline double grid_option_spb(double params, int B, int gpus, int opt)
{
	int k = 0;

	for (int tech = 0; tech < NTECH; tech++)
		for (int g = 1; g <= gpus; g *= 2) {
			double s = sec_per_batch(params, B, tech, g, BW_NVL);

			if (s > 0 && k++ == opt)
				return s;
		}
	return 0;
}

/* Marks t running with option on node's GPUs ids[0 .. ngpus) (copied). */
static inline void set_running(saturn_task_t *t, int node, int option, int ngpus, const int *ids)
{
	t->is_running = true;
	t->running.node = node;
	t->running.option = option;
	t->running.ngpus = ngpus;
	t->running.gpu_ids = xcalloc((size_t)ngpus, sizeof(int));
	memcpy(t->running.gpu_ids, ids, (size_t)ngpus * sizeof(int));
}

/* A problem with `nodes` free nodes node0, node1 ... of `gpus` GPUs. */
static inline saturn_problem_t *grid_problem(int nodes, int gpus)
{
	saturn_problem_t *p = saturn_problem_create();

	if (!p)
		exit(2);
	for (int n = 0; n < nodes; n++) {
		saturn_node_t nd = {0};
		char name[16];

		snprintf(name, sizeof(name), "node%d", n);
		nd.name = xstrdup(name);
		nd.gpus = gpus;
		if (saturn_problem_add_node(p, &nd) < 0)
			exit(2);
	}
	return p;
}

/* --- run statistics and time ---------------------------------------------- */

typedef struct bench_stat {
	int n;
	double sum, min, max;
} stat_t;

static inline void stat_add(stat_t *s, double v)
{
	if (s->n == 0 || v < s->min)
		s->min = v;
	if (s->n == 0 || v > s->max)
		s->max = v;
	s->sum += v;
	s->n++;
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif /* SATURN_BENCH_MODEL_H */
