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

/* --- measurement ------------------------------------------------------------ */

/* The record of a batch's measurement jobs. The strings are malloc'd and
 * owned by the record (saturn_meas_rec_free). */
typedef struct saturn_meas_rec {
	uint32_t job_id;   /* the running measurement job; 0 = none */
	uint32_t array_id; /* the submission measured for; 0 = none yet */
	int rounds;        /* jobs submitted for that submission */
	char *tried;       /* keys "TECHNIQUE:GPUS@SIGNATURE\n" tried, or NULL */
	char *items;       /* the running job's --measure list, or NULL */
} saturn_meas_rec_t;

/* Free the strings and zero rec; NULL is allowed. */
void saturn_meas_rec_free(saturn_meas_rec_t *rec);

/* The record's file text (malloc'd), or NULL (ENOMEM). */
char *saturn_meas_rec_format(const saturn_meas_rec_t *rec);

/* Parse a record's text into rec (which must hold no strings). 0, or -1
 * with rec zeroed (EINVAL: malformed first line; ENOMEM). */
int saturn_meas_rec_parse(const char *text, saturn_meas_rec_t *rec);

/* One cycle's measurement work: the decisions grouped by batch, and the
 * batches with a decision due on a predicted option. */
typedef struct saturn_bpol_measure {
	int nd;
	char *mark;                /* per decision: internal marks */
	const char **sig;          /* per decision: signature of the predicted
				    * option it uses, or NULL (points into the
				    * profile: valid while the profile is) */
	saturn_batch_groups_t groups;
	int nbatches;              /* batches with a due decision */
	int *group;                /* batch b: its group in groups */
	int *due;                  /* batch b: its first due decision */
	/* Node classes: a decision on a node of class X whose task has a
	 * profile of class X's own (s->class_profile) relies on that
	 * profile's options; the batch's decisions are then split by the
	 * profile they rely on, one entry b (and one measurement job, on a
	 * node of that class, writing NAME@X.json) per class. */
	const char **klass;        /* per decision: the class whose profile its
				    * option is from (points into d), NULL = the
				    * batch's profile */
	const char **bclass;       /* batch b: the class of its options, or NULL */
} saturn_bpol_measure_t;

/* Find the decisions of d[0..nd-1] (about s) on a predicted option of their
 * batch's profile (lookup, as for saturn_sched_build; it must not reload),
 * or of their node class's own profile (s->class_profile, when s has one
 * and it covers the task: the options the build planned that class with),
 * and the batches with one about to be released. 0 with w filled (free
 * with saturn_bpol_measure_free; w->nbatches may be 0), or -1 (ENOMEM, w
 * empty). */
int saturn_bpol_measure_prepare(const saturn_snapshot_t *s, const saturn_decision_t *d, int nd,
				saturn_profile_lookup_fn lookup, void *arg,
				saturn_bpol_measure_t *w);

/* Free what prepare filled (not w); NULL allowed. */
void saturn_bpol_measure_free(saturn_bpol_measure_t *w);

/* The GPU type a job must ask for to run on node class klass of s: the
 * one type every node of that class has (its gpu_types, one type), or
 * NULL when the class has no node or no single type. Points into s. */
const char *saturn_bpol_class_gpu_type(const saturn_snapshot_t *s, const char *klass);

/* The decision for batch b (0 <= b < w->nbatches) of w: the batch of
 * s->jobs[d[w->due[b]].job], whose record rec is (updated in place: reset
 * for a new submission; with a SUBMIT_MEASURE its options count as tried
 * and the round is counted). Appends with tag: HOLD of the due decisions
 * while a measurement job runs, logs of due options left to their
 * prediction, or one SUBMIT_MEASURE. Returns the number of SUBMIT_MEASURE
 * actions appended (0 or 1), or -1 (ENOMEM: rec and out unchanged). */
int saturn_bpol_measure_batch(const saturn_snapshot_t *s, const saturn_decision_t *d,
			      saturn_bpol_measure_t *w, int b, saturn_meas_rec_t *rec, int tag,
			      saturn_bpol_actions_t *out);

/* The outcome of carrying out the SUBMIT_MEASURE out->a[i] (decisions d)
 * for the batch of rec: job_id the measurement job, 0 when it could not be
 * submitted. Appends a log, SAVE, and HOLD of each listed decision with
 * "saturn: measuring predicted TECH on N GPUs (job J)". 0, or -1 (ENOMEM,
 * or not a SUBMIT_MEASURE: rec and out unchanged). */
int saturn_bpol_measure_submitted(const saturn_decision_t *d, saturn_bpol_actions_t *out, int i,
				  uint32_t job_id, saturn_meas_rec_t *rec);

/* Each cycle, for every record with a job: job is what the plugin found
 * about rec->job_id, now the time (epoch). A job that ended, or is still
 * pending SATURN_BPOL_MEASURE_WAIT_S after its submission, is no longer
 * waited for: rec's job and items are cleared, a log and SAVE appended.
 * Returns 1 when rec changed, 0 when not, -1 (ENOMEM: unchanged). */
int saturn_bpol_measure_poll(saturn_meas_rec_t *rec, const saturn_companion_t *job, double now,
			     int tag, saturn_bpol_actions_t *out);

/* Technique names go into a shell line: 1 when t is letters, digits and
 * _.+- only (1 to SATURN_TECHNIQUE_NAME_MAX of them), else 0. */
int saturn_bpol_technique_ok(const char *t);

#endif /* SATURN_BATCH_POLICY_H */
