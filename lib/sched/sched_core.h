/* sched_core.h - the Slurm-free half of sched/saturn.
 *
 * sched/saturn copies what it needs out of slurmctld under read locks into a
 * plain snapshot (sched_snapshot.h), releases the locks, and everything from
 * there to "which job gets released with what" happens here, without Slurm:
 * settings parsing, building the planner problem from the snapshot and the
 * batches' profiles (or the users' own requests when a batch has none), the
 * first-come-first-served fallback plan, the decisions per job (release now
 * or show the plan as the reason text), progress files, and the persisted
 * state (saturn-sched-state/1). The plugin then re-validates and applies the
 * decisions under the write locks. All of it is unit-tested without Slurm.
 *
 * This header includes one header per concept, so that a file may include
 * sched_core.h alone: sched_settings.h (the saturn_* keys),
 * sched_snapshot.h (the snapshot), sched_build.h (the problem),
 * sched_decision.h (the decisions, the carried plan); it declares the
 * runtime feedback pass and the persisted state itself.
 */
#ifndef SATURN_SCHED_CORE_H
#define SATURN_SCHED_CORE_H

#include <stdint.h>

#include "feedback.h"
#include "model.h"
#include "node_class.h"
#include "profile.h"
#include "saturn_limits.h"
#include "sched_build.h"
#include "sched_decision.h"
#include "sched_settings.h"
#include "sched_snapshot.h"

/* --- runtime feedback (feedback.h) ----------------------------------- */

/* Once per cycle, after the progress files are read into s: fold every
 * running job's report into fb (saturn_fb_job_report), fill its obs_spb,
 * prior_spb (from its batch's profile: lookup as for the build, may be
 * NULL) and first_report, record the ratio observed / profiled for its
 * key (saturn_fb_record, at s->now), forget ended jobs and the
 * corrections of batches with no job left in s, and set
 * s->feedback = fb. Returns 0, or -1 (ENOMEM: fb keeps what it had, the
 * snapshot's feedback fields may be partly filled; s->feedback is set
 * all the same). fb NULL is saturn_feedback=no: s->feedback = NULL and
 * every job's obs_spb, prior_spb and first_report 0, so that the build
 * plans with the profile only, as before feedback existed; returns 0.
 * In both cases, a running job's progress report older than its start
 * (start_time: the previous run's, before a requeue) loses its
 * progress_spb and progress_updated (0) and keeps its batches. */
int saturn_sched_feedback(saturn_fb_t *fb, saturn_snapshot_t *s, saturn_profile_lookup_fn lookup,
			  void *arg);

/* --- persisted state (saturn-sched-state/1) -------------------------- */

/* Serialise the plan (times made absolute with now), per task its snapshot
 * state and batch (name and uid), and the GPU nodes planned on with their GPU counts;
 * with s->feedback, the corrections and, per running task, the profiled
 * and observed sec_per_batch.
 * malloc'd JSON text or NULL (ENOMEM). */
char *saturn_sched_state_to_json(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
				 const saturn_plan_t *plan, const char *plan_id,
				 double now);

/* The parts of a persisted state the plugin and `saturn status` need. */
typedef struct saturn_sched_state_task {
	char *id, *batch, *technique, *node, *state;
	long uid; /* the batch's user; -1 in states written before it was recorded */
	long job_id; /* the Slurm job; 0 when absent */
	int gpus;
	int *gpu_ids; /* gpus ids per node (nnodes x gpus, node after node), or
		       * NULL when absent (the plan named none) */
	int nnodes;   /* nodes it spans ("nodes"); 0 reads as 1 */
	char **more_nodes; /* the nodes after node (nnodes - 1), or NULL */
	double start, end; /* epochs */
	/* running tasks: the profile's and the observed sec_per_batch
	 * (runtime feedback); 0 when unknown or absent */
	double spb_profile, spb_observed;
} saturn_sched_state_task_t;

typedef struct saturn_sched_state_node {
	char *name;
	int gpus;
	char *klass; /* its node class (node_class.h); NULL in states written before */
} saturn_sched_state_node_t;

typedef struct saturn_sched_state {
	char *plan_id;
	double updated, makespan_end; /* epochs */
	double makespan_s, lower_bound_s, solve_s;
	char *method;
	int ntasks;
	saturn_sched_state_task_t *tasks;
	int nnodes; /* the GPU nodes planned on (0 in states written before) */
	saturn_sched_state_node_t *nodes;
	int ncorr; /* the runtime feedback's corrections (0 in states written before) */
	saturn_fb_corr_t *corr;
} saturn_sched_state_t;

/* The state's format and its version. A change that an older reader
 * would misread bumps the version; fields added within a version are
 * optional (absent in states written before). */
#define SATURN_SCHED_STATE_VERSION 1
#define SATURN_SCHED_STATE_FORMAT "saturn-sched-state/1"

/* N of a format string "saturn-sched-state/N"; -1 when format is NULL, of
 * another document or N is not a plain number. */
int saturn_sched_state_version(const char *format);

/* Parse (every field saturn_sched_state_to_json writes; unknown keys are
 * ignored); NULL with err naming the field. A state of another version
 * than SATURN_SCHED_STATE_VERSION is refused with a message that says
 * "format: version N ..." (older, or written by a newer sched/saturn):
 * callers ignore it, since the job records, not the state, say which task
 * is held, released or running. */
saturn_sched_state_t *saturn_sched_state_parse(const char *buf, size_t len,
					       saturn_error_t *err);
void saturn_sched_state_destroy(saturn_sched_state_t *st);

#endif /* SATURN_SCHED_CORE_H */
