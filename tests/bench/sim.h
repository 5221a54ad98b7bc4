/* sim.h - saturn-sim's shared state: a GPU cluster of nodes of several GPU
 * types, jobs with measured speeds per type and GPU count, and the two
 * schedulers that place them (sim-sched.c). saturn-sim.c runs the events
 * and reports; see its header for the model and its simplifications.
 */
#ifndef SATURN_SIM_H
#define SATURN_SIM_H

#include <stdio.h>

#define SIM_MAX_TYPES 4
#define SIM_MAX_JT 64
#define SIM_NSCALE 4 /* 1, 2, 4, 8 GPUs */
#define SIM_GPN 8    /* GPUs per node */

/* Steps per second per job type, GPU type and count (0: not measured). */
typedef struct sim_tab {
	int ntypes, njt;
	char type[SIM_MAX_TYPES][24];
	char jt[SIM_MAX_JT][64];
	double sps[SIM_MAX_JT][SIM_MAX_TYPES][SIM_NSCALE];
} sim_tab_t;

enum { SJ_FUTURE, SJ_QUEUED, SJ_RUNNING, SJ_DONE };

typedef struct sim_job {
	int jt;          /* index into sim_tab.jt */
	int g;           /* GPUs the user asks for (1..8, capped) */
	int kreq;        /* index of the count the user asks for (backfill) */
	double steps;
	double arrival;  /* seconds from the trace's start */
	int user;
	int state;
	int starts;      /* how often it was started (must end as 1) */
	int type, node, k;
	int gpu[SIM_GPN];
	double alloc_t;  /* GPUs held from here */
	double start;    /* work starts (alloc_t + latency) */
	double end;      /* true end */
	double limit_end;/* end by its time limit (backfill's view) */
} sim_job_t;

typedef struct sim_node {
	int type;
	int owner[SIM_GPN]; /* job index or -1 */
} sim_node_t;

typedef struct sim {
	const sim_tab_t *tab;
	int nnodes;
	sim_node_t *nodes;
	int njobs;
	sim_job_t *jobs;
	int use_saturn;
	double latency;      /* per start, seconds */
	double latency_first;/* a start decided at the job's own arrival */
	double limit_factor; /* backfill: time limit = this x true runtime */
	int prefer_newest;   /* backfill: nodes of the last type first */
	double interval;     /* saturn: cycle period (0: on every event) */
	double solve_s;      /* saturn: planner time limit per cycle */
	unsigned long evals; /* saturn: planner annealing decodes per cycle */
	int max_plan;        /* saturn: held jobs planned per cycle (0: all) */
	double min_gain;     /* saturn: keep the last plan unless one is shorter
			      * by this fraction (0: no warm start) */
	struct sim_saturn *sat; /* saturn: the cycle's state and profiles
				 * (sim-sched.c), made at the first cycle */
	double solve_delay;  /* saturn: a cycle that searched starts its jobs
			      * this much later (the plugin's solve time) */
	double extra;        /* added to the next starts' latency */
	double now;
	int *queue, nqueue;  /* queued jobs, arrival order */
	int *run, nrun;      /* running jobs */
	int busy_gpus;
	int errors;          /* invariant violations (over-commit, ...) */
	/* counters */
	long cycles, passes;
	double solve_wall;
} sim_t;

/* Runtime of job j on type t with count index k (steps / speed), or a
 * negative number when that option was not measured. */
double sim_runtime(const sim_t *s, const sim_job_t *j, int t, int k);

/* Give job ji the 2^k GPUs listed in gpu[] (or, gpu NULL, the first free
 * ones) of node n at s->now: it works from now + latency for its runtime.
 * Counts an error (over-commit) when a GPU is not free. Returns 0 or -1. */
int sim_start(sim_t *s, int ji, int n, int k, const int *gpu);

/* One EASY-backfill pass over the queue (sim-sched.c). */
void sim_backfill(sim_t *s);

/* One sched/saturn cycle (saturn_cycle_run): plan the held jobs, start the
 * ones released now. Returns when the next cycle is due (absolute), or -1. */
double sim_saturn_cycle(sim_t *s);
/* Free what the cycles kept (NULL allowed). */
void sim_saturn_free(struct sim_saturn *z);

#endif /* SATURN_SIM_H */
