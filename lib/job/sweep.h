/* sweep.h - fewer trials than exhaustive profiling: which GPU counts of one
 * technique to measure, and a scaling model that predicts the rest.
 *
 * Scaling model (doc/saturn-profile.1, doc/emulator.md):
 *   t(g) = a·comp(g) + b + c·comm(g)
 * comp(g) = 1/g for data-parallel and sharded techniques and (m+g-1)/(m·g)
 * for a GPipe pipeline of m micro-batches (m may depend on g: the count
 * each trial runs with); comm(g) is the communication
 * volume over the measured NCCL bus bandwidth of g GPUs: 2(g-1)/g / busbw_ar
 * (all-reduce of gradients), 3(g-1)/g / busbw_ag (FSDP: two all-gathers and a
 * reduce-scatter), (m+g-1)/m / busbw_ar(2) (pipeline: point to point
 * between neighbouring stages, at the bandwidth of one pair). a, b, c >= 0
 * are fitted by non-negative least squares; with two measured counts b
 * is taken as 0.
 *
 * Trial selection per technique on GPU counts [lo, hi]: measure lo and hi,
 * where a range from 1 starts at 2 and then measures 1 unless 2 ran out of
 * memory (one GPU communicates nothing, so it never stands alone for the
 * multi-GPU side); memory per GPU never grows with g, so OOM at hi means
 * OOM everywhere, and OOM at the low end with success at hi is bisected to
 * the smallest feasible count. Then at most one more count: for a pipeline
 * whose micro-batch count changes with g, where it stops changing (else the
 * middle of the widest unmeasured gap); otherwise only when the fit is
 * unsure, at the count where it is least sure: with two measured counts,
 * where the two two-term models (comp + comm, comp + constant) disagree by
 * more than 5 %; with more, where leaving out an inner count (or the
 * one-GPU count) moves a prediction by more than 5 %, or the middle of the
 * widest gap when the fit misses its points by more than 2.5 % RMS.
 * Every count between the smallest feasible one and hi not measured is
 * predicted; when the fit misses its own points by more than 2 % RMS, a
 * count between two measured ones is predicted from a fit through those
 * two alone. Slurm-free.
 */
#ifndef SATURN_SWEEP_H
#define SATURN_SWEEP_H

#include "error.h"

typedef enum saturn_scale_kind {
	SATURN_SCALE_DATA = 0, /* ddp and unknown techniques */
	SATURN_SCALE_SHARDED,  /* fsdp */
	SATURN_SCALE_PIPELINE, /* pipeline */
} saturn_scale_kind_t;

/* The kind for a technique name. */
saturn_scale_kind_t saturn_scale_kind(const char *technique);

/* Measured bus bandwidths (GB/s) by GPU count: ar[g], ag[g] for
 * 2 <= g <= max; 0 = not measured (then comm uses (g-1)/g alone). */
typedef struct saturn_bw_table {
	int max;
	const double *ar;
	const double *ag;
} saturn_bw_table_t;

#define SATURN_SCALE_MAX_GPUS 64

typedef struct saturn_scale_fit {
	saturn_scale_kind_t kind;
	int micro; /* pipeline micro-batches */
	/* micro-batches on g GPUs when they depend on g (0: micro) */
	int micro_g[SATURN_SCALE_MAX_GPUS + 1];
	double a, b, c;
	int npoints;
	double rms_rel; /* relative RMS residual of the fit */
} saturn_scale_fit_t;

double saturn_scale_comp(saturn_scale_kind_t kind, int g, int micro);
double saturn_scale_comm(saturn_scale_kind_t kind, int g, int micro,
			 const saturn_bw_table_t *bw);

/* Fit n >= 1 points (g[i], t[i] > 0). With one point only a is fitted.
 * 0, or -1 with err (no points, bad values). */
int saturn_scale_fit(saturn_scale_kind_t kind, int micro, int n, const int *g,
		     const double *t, const saturn_bw_table_t *bw,
		     saturn_scale_fit_t *fit, saturn_error_t *err);

/* The same with the pipeline's micro-batch count per GPU count:
 * micro_g[g] for g <= ng (0 or beyond ng: micro), e.g. the resolved
 * micro_batches parameter of each trial. micro_g may be NULL. */
int saturn_scale_fit_micro(saturn_scale_kind_t kind, int micro,
			   const int *micro_g, int ng, int n, const int *g,
			   const double *t, const saturn_bw_table_t *bw,
			   saturn_scale_fit_t *fit, saturn_error_t *err);

double saturn_scale_predict(const saturn_scale_fit_t *fit, int g,
			    const saturn_bw_table_t *bw);

/* --- trial selection --------------------------------------------------- */

typedef enum saturn_point_state {
	SATURN_PT_UNKNOWN = 0,
	SATURN_PT_PENDING, /* handed out, no result yet */
	SATURN_PT_MEASURED,
	SATURN_PT_OOM, /* measured OOM */
	SATURN_PT_FAILED,
	SATURN_PT_TIMEOUT,
	SATURN_PT_OOM_PRED, /* OOM implied by another count's OOM */
	SATURN_PT_PREDICTED,
} saturn_point_state_t;

typedef struct saturn_point {
	saturn_point_state_t state;
	double sec_per_batch;
	double peak_mem_mb;
	char reason[160];
} saturn_point_t;

typedef struct saturn_sweep saturn_sweep_t;

/* A sweep of one technique over GPU counts lo..hi (1 <= lo <= hi). With
 * exhaustive set, every count is measured. The bandwidth table is copied.
 * NULL on ENOMEM or bad arguments. */
saturn_sweep_t *saturn_sweep_create(saturn_scale_kind_t kind, int micro, int lo,
				    int hi, const saturn_bw_table_t *bw,
				    int exhaustive);
void saturn_sweep_destroy(saturn_sweep_t *sw);

/* The pipeline's micro-batch count on g GPUs when it differs from the
 * sweep's micro (the trial's resolved parameters); before any result. */
void saturn_sweep_set_micro(saturn_sweep_t *sw, int g, int micro);

/* A measurement of the same work on g GPUs by another technique that runs
 * the same program there: ddp and fsdp (default parameters) on one GPU run
 * the single-GPU program with no communication, so the sweep uses the
 * `single` technique's measurement instead of a trial of its own. The
 * sweep takes it where it would measure g (only when lent before that),
 * fits with it, and reports g as PREDICTED with reason `from` (the option
 * is then re-measured before a plan relies on it, like any prediction).
 * Ignored outside lo..hi, for a non-positive time, or with exhaustive. */
void saturn_sweep_lend(saturn_sweep_t *sw, int g, double sec_per_batch,
		       double peak_mem_mb, const char *from);

/* 1 when count g's result is the lent measurement (saturn_sweep_lend). */
int saturn_sweep_borrowed(const saturn_sweep_t *sw, int g);

/* GPU counts to measure now (their results do not depend on each other):
 * up to max written to gpus[]. Returns how many; 0 with nothing pending
 * means the sweep is complete (then predictions are filled in). */
int saturn_sweep_next(saturn_sweep_t *sw, int *gpus, int max);

/* Record a result for a count handed out by saturn_sweep_next(). state is
 * MEASURED, OOM, FAILED or TIMEOUT. reason may be NULL. */
void saturn_sweep_report(saturn_sweep_t *sw, int gpus,
			 saturn_point_state_t state, double sec_per_batch,
			 double peak_mem_mb, const char *reason);

/* 1 when saturn_sweep_next() has reported completion. */
int saturn_sweep_done(const saturn_sweep_t *sw);

/* Measure count g of a finished sweep after all: g must be PREDICTED and
 * not lent. saturn_sweep_next() then hands g out (several probed counts
 * at once), and once the results are reported fits again with them (the
 * other predictions made anew, a lent count kept). 1 when taken, else 0. */
int saturn_sweep_probe(saturn_sweep_t *sw, int g);

/* Close calls between the finished sweeps sws[0..n-1] of one task (NULL
 * entries and unfinished sweeps are left out): at each GPU count, when the
 * slower of the two fastest options is within tol (relative) of the faster
 * and at least one of them is predicted (a lent count is no contender), a
 * fit's error can decide the choice, so each predicted one of the two is
 * worth a trial. Writes up to max (<= SATURN_SWEEP_CLOSE_MAX) of those
 * sweeps' indices and counts to who[] and gpus[], the closest calls first,
 * and returns how many. */
#define SATURN_SWEEP_CLOSE_MAX 16
/* What saturn-profile passes: within 3 % (1.5 times the typical noise of
 * one measurement), at most two trials per task (doc/benchmarks.md,
 * "Close calls between predictions"). */
#define SATURN_SWEEP_CLOSE_TOL 0.03
#define SATURN_SWEEP_CLOSE_PER_TASK 2
int saturn_sweep_close_calls(saturn_sweep_t *const *sws, int n, double tol,
			     int max, int *who, int *gpus);

/* Result for a count (NULL outside lo..hi). */
const saturn_point_t *saturn_sweep_point(const saturn_sweep_t *sw, int gpus);

/* Counts measured so far (trials run), and the fit used for predictions
 * (NULL before completion or without at least one measured count). */
int saturn_sweep_trials(const saturn_sweep_t *sw);
const saturn_scale_fit_t *saturn_sweep_fit(const saturn_sweep_t *sw);

/* The smallest count whose default run did not OOM, or 0 when all OOM or
 * unknown (the profiler then tries memory-saving parameters below it). */
int saturn_sweep_feasible_from(const saturn_sweep_t *sw);

#endif /* SATURN_SWEEP_H */
