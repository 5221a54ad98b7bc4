/* batch_policy.h - what sched/saturn does about each batch's companion jobs
 * (the profiler job saturn-profile:NAME and the measurement job
 * saturn-measure:NAME), as pure functions: the snapshot (grouped by batch
 * (uid, name), saturn_batch_groups), the batch's record and the facts the
 * plugin looked up go in; the record comes out updated and a list of
 * actions comes out for the plugin to carry out (submit, hold, drop, log,
 * save the record). No Slurm, no file access, no clock: the plugin gathers
 * the facts (does PROFILE_DIR/UID/NAME.json exist, the state of companion
 * job N, the time) under one lock per pass and does what the actions say.
 * Never prints or exits. Unit-tested in tests/sched/test_policy.c.
 *
 * A batch's submission is the array job id of its tasks (the job id of a
 * job that is not an array); a batch name used again by a new submission
 * starts afresh.
 *
 * Profiler (saturn_profiler set), per batch with tasks in the snapshot,
 * each cycle; "plan" = the batch is planned this cycle:
 *
 *   state        fact                                  actions            next
 *   any          PROFILE_DIR/UID/NAME.json exists      none (plan)        PROFILED
 *   any          record for another submission         log; reset         (rows below)
 *   fell back    -                                     none (plan, note)  FELL_BACK
 *   none         a task released or running            none (plan)        UNPROFILED
 *   none         all held, a GPU node for the batch    SUBMIT_PROFILER    SUBMITTING
 *   none         no GPU node in the batch's partitions log; FALL_BACK     FELL_BACK
 *   SUBMITTING   submitted as job N                    SAVE; HOLD+DROP    PROFILING
 *   SUBMITTING   submission failed                     log; FALL_BACK     FELL_BACK
 *   PROFILING N  job N pending, running (or unknown)   HOLD+DROP held     PROFILING
 *   PROFILING N  job N ended (and still no profile)    log; FALL_BACK;    FELL_BACK
 *                                                      SAVE
 *
 * HOLD+DROP: the held tasks show "saturn: profiling (job N)" and leave this
 * cycle's snapshot; released and running tasks stay in it.
 *
 * Measurement (saturn_measure_predicted with saturn_profiler), after the
 * decisions: per batch with a decision about to release a task onto a
 * `predicted` option of its profile ("due"):
 *
 *   state        fact                                  actions            next
 *   any          record for another submission         reset (silent)     (rows below)
 *   MEASURING N  -                                     HOLD due tasks     MEASURING N
 *   idle         option not tried, rounds < 8, its     SUBMIT_MEASURE     (outcome)
 *                technique a plain name, GPUs on a     (every such option
 *                node, < 16 items in the job           the plan uses: due
 *                                                      first, later ones
 *                                                      needing no more GPUs)
 *   idle         option tried already, or cap hit     log "relies on the  idle
 *                                                      prediction"
 *   (outcome)    submitted as job N                    log; SAVE; HOLD     MEASURING N
 *                                                      the listed due ones
 *   (outcome)    submission failed                     log; SAVE          idle
 *   MEASURING N  poll: job N ended                     log; SAVE          idle
 *   MEASURING N  poll: N pending > 5 min               log; SAVE          idle
 *
 * Each option (technique, GPU count, signature) is tried once per
 * submission whatever the outcome; at most SATURN_BPOL_MEASURE_ROUNDS
 * measurement jobs per submission; one measurement job per batch at a time.
 *
 * Records (STATE_DIR/KIND-UID-NAME.job, written by the plugin, root only;
 * formats unchanged from before this file, parsed and written here only):
 *   profiler: "JOBID ARRAYID[ fallback]\n"
 *   measure:  "JOBID ARRAYID ROUNDS ITEMS\n" then the tried keys, one per
 *             line "TECHNIQUE:GPUS@SIGNATURE" ("TECHNIQUE:GPUSxNODES@SIGNATURE"
 *             for an option on NODES > 1 nodes); ITEMS is the running job's
 *             --measure list, "-" for none; JOBID 0 = no job running.
 *
 * Multi-node options (#12): a predicted option on k > 1 nodes is measured
 * like the others, on k nodes: its item is TASK:TECHNIQUE:GPUSxK, the job
 * asks for as many nodes as its items' most (action nodes; GPUs per node)
 * and is measurable only when the batch's partitions have k nodes with its
 * GPU count; a later option needing more nodes than the due ones is not
 * added.
 */
#ifndef SATURN_BATCH_POLICY_H
#define SATURN_BATCH_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "sched_core.h"

/* At most this many measurement jobs per submission of a batch: a plan
 * that keeps moving to other predicted options then runs on predictions. */
#define SATURN_BPOL_MEASURE_ROUNDS 8
/* At most this many options in one measurement job. */
#define SATURN_BPOL_MEASURE_ITEMS 16
/* A measurement job still pending after this long (its GPUs are taken by
 * long jobs) is not waited for: the held tasks go on the predictions, and
 * the job still updates the profile whenever it runs. */
#define SATURN_BPOL_MEASURE_WAIT_S 300

/* --- actions ------------------------------------------------------------ */

typedef enum saturn_bpol_kind {
	/* submit saturn-profile:NAME with gpus GPUs; text: the task ids
	 * ("0,1,2", for --task-ids); tasks: the held snapshot jobs to hold
	 * and drop once it is submitted (saturn_bpol_profiler_submitted) */
	SATURN_BPOL_SUBMIT_PROFILER = 1,
	/* submit saturn-measure:NAME with gpus GPUs per node on nodes nodes;
	 * text: the --measure list ("TASK:TECHNIQUE:GPUS[xNODES],...";
	 * techniques letters, digits and _.+- only; xNODES for an option on
	 * NODES > 1 nodes); tasks: the decisions to hold once it is submitted
	 * (saturn_bpol_measure_submitted) */
	SATURN_BPOL_SUBMIT_MEASURE,
	/* keep tasks held with reason text (profiler: snapshot job indices;
	 * measurement: decision indices, which stop releasing) */
	SATURN_BPOL_HOLD,
	/* leave tasks (snapshot job indices) out of this cycle's snapshot */
	SATURN_BPOL_DROP,
	/* the batch is planned from its users' requests (the record says so:
	 * saturn_bpol_profiler_note) */
	SATURN_BPOL_FALL_BACK,
	/* write the batch's record (it changed) */
	SATURN_BPOL_SAVE,
	/* log text (after "batch NAME of uid UID: ") at level */
	SATURN_BPOL_LOG,
} saturn_bpol_kind_t;

typedef enum saturn_bpol_level {
	SATURN_BPOL_DEBUG = 0,
	SATURN_BPOL_INFO,
	SATURN_BPOL_ERROR,
} saturn_bpol_level_t;

typedef struct saturn_bpol_action {
	saturn_bpol_kind_t kind;
	int tag;                   /* the caller's tag of the batch (e.g. its group) */
	saturn_bpol_level_t level; /* LOG */
	int gpus;                  /* SUBMIT_*: GPUs (per node) */
	int nodes;                 /* SUBMIT_MEASURE: nodes (0 or 1 = one) */
	int ntasks;
	int *tasks;                /* SUBMIT_*, HOLD, DROP (malloc'd) */
	char *text;                /* SUBMIT_*, HOLD, LOG (malloc'd) */
} saturn_bpol_action_t;

/* Actions in the order to carry them out. Zero it before the first use;
 * the functions below append to it. */
typedef struct saturn_bpol_actions {
	int n, cap;
	saturn_bpol_action_t *a;
} saturn_bpol_actions_t;

/* Free every action and the array; l is zeroed (ready for reuse). NULL
 * is allowed. */
void saturn_bpol_actions_free(saturn_bpol_actions_t *l);

/* The state of a companion job as the plugin found it. */
typedef enum saturn_companion_state {
	SATURN_COMPANION_UNKNOWN = 0, /* not looked up */
	SATURN_COMPANION_ENDED,       /* gone, finished or completing */
	SATURN_COMPANION_PENDING,
	SATURN_COMPANION_RUNNING,
} saturn_companion_state_t;

typedef struct saturn_companion {
	uint32_t job_id;                /* the job this is about */
	saturn_companion_state_t state;
	double pending_since;           /* PENDING: its submit time (epoch) */
} saturn_companion_t;

/* --- profiler ------------------------------------------------------------ */

/* The record of a batch's profiler job (plain data; the plugin keeps one
 * per batch (uid, name) and persists it). */
typedef struct saturn_prof_rec {
	uint32_t job_id;   /* the profiler job; 0 = none submitted */
	uint32_t array_id; /* the submission it profiles; 0 = none yet */
	int fell_back;     /* no usable profile came: planned from the users' requests */
} saturn_prof_rec_t;

/* Where a batch stands after saturn_bpol_profiler(). */
typedef enum saturn_bpol_pstate {
	SATURN_BPOL_PROFILED = 0, /* it has a profile file: planned from it */
	SATURN_BPOL_UNPROFILED,   /* no profile, no job, tasks already out: planned as asked */
	SATURN_BPOL_SUBMITTING,   /* a SUBMIT_PROFILER to carry out, then ..._submitted() */
	SATURN_BPOL_PROFILING,    /* waiting for the profiler job: held tasks out of the cycle */
	SATURN_BPOL_FELL_BACK,    /* planned from the users' requests, with a note */
} saturn_bpol_pstate_t;

/* The profiler's decision for one batch this cycle. s->jobs[m[0..n-1]]:
 * the batch's tasks (n >= 1, one (uid, name), ascending: a group of
 * saturn_batch_groups). profile_exists: PROFILE_DIR/UID/NAME.json is
 * there, whatever it holds (saturn_lookup_profile judges it). rec: the
 * batch's record, updated in place (not read when profile_exists: may then
 * be NULL). job: what the plugin found about rec->job_id (NULL or another
 * job id = UNKNOWN, taken as still running). Actions are appended to out
 * with tag. Returns the batch's saturn_bpol_pstate_t, or -1 (ENOMEM: rec
 * and out unchanged). */
int saturn_bpol_profiler(const saturn_snapshot_t *s, const int *m, int n, int profile_exists,
			 saturn_prof_rec_t *rec, const saturn_companion_t *job, int tag,
			 saturn_bpol_actions_t *out);

/* Per-class profiler jobs (one per node class the batch's partitions
 * offer, besides its profiler job): while one of them is pending or
 * running (or not looked up), the held tasks of s->jobs[m[0..n-1]] (one
 * batch) wait for it like for the profiler job: HOLD "saturn: profiling
 * class CLASS (job N)" and DROP, with tag. jobs[k] and classes[k]: the
 * k-th class job as the plugin found it and its class; an ended one (it
 * wrote NAME@CLASS.json or not) is not waited for: the class is then
 * planned from the batch's profile. Returns 1 when the tasks wait, 0 when
 * not, -1 (ENOMEM: out unchanged). */
int saturn_bpol_class_wait(const saturn_snapshot_t *s, const int *m, int n,
			   const saturn_companion_t *jobs, const char *const *classes, int njobs,
			   int tag, saturn_bpol_actions_t *out);

/* The class profiler jobs are the plugin's memory: after a slurmctld
 * restart it finds them again among the jobs by name. Whether name is a
 * class profiler job's, "saturn-profile:BATCH@CLASS" (BATCH without '/'
 * or '@', shorter than blen; CLASS a node class name: letters, digits,
 * '.', '_', '-', '+', no leading '.', at most SATURN_CLASS_NAME_MAX and
 * shorter than klen): 0 with batch and klass filled, or -1 (EINVAL;
 * batch and klass "" when their sizes allow). */
int saturn_bpol_class_job_name(const char *name, char *batch, size_t blen, char *klass,
			       size_t klen);

/* The outcome of carrying out the SUBMIT_PROFILER out->a[i] for the batch
 * of rec: job_id the profiler job, 0 when it could not be submitted.
 * Updates rec and appends (with the action's tag) SAVE, HOLD and DROP of
 * its tasks, or a log and FALL_BACK. Returns PROFILING or FELL_BACK, or -1
 * (ENOMEM, or out->a[i] not a SUBMIT_PROFILER: rec and out unchanged). */
int saturn_bpol_profiler_submitted(saturn_bpol_actions_t *out, int i, uint32_t job_id,
				   saturn_prof_rec_t *rec);

/* "saturn: profiler job N failed, users' requests; " into buf for a
 * record that fell back, else "". Returns buf. */
const char *saturn_bpol_profiler_note(const saturn_prof_rec_t *rec, char *buf, size_t len);

/* The record as its file holds it ("JOBID ARRAYID[ fallback]\n") into buf
 * (>= 32 bytes). Returns buf. */
const char *saturn_prof_rec_format(const saturn_prof_rec_t *rec, char *buf, size_t len);

/* Parse a record's text. 0 with rec filled, or -1 (EINVAL: not two
 * numbers, then optionally "fallback"; rec zeroed). */
int saturn_prof_rec_parse(const char *text, saturn_prof_rec_t *rec);

/* The measurement job's records and decisions (bpol_measure.c). */
#include "bpol_measure.h"

#endif /* SATURN_BATCH_POLICY_H */
