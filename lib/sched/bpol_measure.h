/* bpol_measure.h - the decisions about each batch's measurement job
 * (saturn-measure:NAME; the state machine: batch_policy.h, which includes
 * this header): its record, which predicted options to measure, polling
 * it (bpol_measure.c).
 */
#ifndef SATURN_BPOL_MEASURE_H
#define SATURN_BPOL_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "batch_policy.h"

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

/* Copy src into dst (which holds no strings): 0, or -1 (ENOMEM, dst
 * zeroed). */
int saturn_meas_rec_copy(saturn_meas_rec_t *dst, const saturn_meas_rec_t *src);

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
 * or of a node class's own profile (s->class_profile): the profile option
 * each decision names (d->source, d->prof_opt: the option the plan chose,
 * never one matched by technique and GPU count), and the batches with one
 * about to be released. 0 with w filled (free
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

/* The reason a decision d held for the measurement of its option shows:
 * "saturn: measuring predicted TECH on N GPUs[ x K nodes][ (job J)]", the
 * job's id once it is submitted (job_id 0: not yet). Into buf (len
 * bytes); returns buf. */
const char *saturn_bpol_measure_reason(const saturn_decision_t *d, uint32_t job_id, char *buf,
				       size_t len);

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

#endif /* SATURN_BPOL_MEASURE_H */
