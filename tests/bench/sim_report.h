/* sim_report.h - saturn-sim's figures: utilisation over time, per-run
 * results, the figures table, and the check against the one-machine
 * cluster (sim-report.c).
 */
#ifndef SATURN_SIM_REPORT_H
#define SATURN_SIM_REPORT_H

#include "sim.h"

/* Busy GPU-seconds per time bucket. */
typedef struct sim_util {
	double bucket_s;
	int n, cap;
	double *busy;
	double total;
	double span;    /* the arrivals' span (set by the caller) */
	double in_span; /* busy GPU-seconds within [0, span) */
} sim_util_t;

/* 0, or -1 on ENOMEM. */
int sim_util_init(sim_util_t *u, double bucket_s);
/* Counts `gpus` busy GPUs over [t0, t1). */
void sim_util_add(sim_util_t *u, double t0, double t1, int gpus);
void sim_util_free(sim_util_t *u);

typedef struct sim_result {
	const char *name;
	int njobs, gpus, users;
	double makespan, mean_jct, median_jct, p95_jct, mean_sd, median_sd, util;
	double util_span; /* utilisation over the arrivals' span */
	double done50, done90, done99; /* when 50/90/99% of the jobs had ended */
	int nbuckets;
	double *bucket_util;   /* fraction busy per bucket */
	double bucket_s;
	double *user_done;     /* per user: its last job's end */
	double *user_sd;       /* per user: mean slowdown */
	long cycles, passes;
	double solve_wall, wall_s;
	int errors;            /* invariant violations */
} sim_result_t;

/* Figures of a finished run; counts a job not started and ended exactly
 * once, or ending before its arrival, as an error. */
void sim_result(const sim_t *s, const sim_util_t *u, sim_result_t *r);
void sim_result_free(sim_result_t *r);

/* The figures table of n runs (side by side). */
void sim_print(const sim_result_t *r, int n, int users);

/* The offered load of the jobs on s's cluster. */
void sim_offered(const sim_t *s, const sim_job_t *jobs);

/* One scheduler's run (use_saturn 0: backfill) of jobs on a fresh copy of
 * base's cluster (defined in saturn-sim.c). 0, or -1 when an invariant
 * broke or the run got stuck (res->errors). */
int sim_run(sim_t *base, const sim_job_t *jobs, int use_saturn,
	    double bucket_s, sim_result_t *res);

/* --mixed: slurm-bench.sh's mixed sweep against its recorded makespans.
 * Returns the exit status. */
int sim_mixed(const sim_t *params);

#endif /* SATURN_SIM_REPORT_H */
