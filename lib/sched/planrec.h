/* planrec.h - the plan record of a released task: what sched/saturn decided
 * for it, kept in the job's AdminComment (or Comment) so that Slurm's
 * accounting (sacct -o JobID,State,Start,End,AllocTRES,AdminComment) shows
 * it after the job has ended:
 *
 *   saturn: batch=lr-sweep task=3 technique=fsdp gpus=4 node=n2
 *           plan=p1764590000-7 pred_spb=0.25 obs_spb=0.27
 *
 * (one line; spb = seconds per batch, one training step; pred_spb is what
 * the plan assumed, obs_spb what the task's progress reports measured while
 * it ran, each left out when unknown; task is left out for a job that is
 * not an array task). The record is one segment of the field: text already
 * there (an admin's AdminComment, a user's Comment) is kept in front of it,
 * separated by "; " (not "|", which sacct -P puts between its columns); a
 * later release (after a requeue) replaces the segment, so a job carries
 * exactly one record. Slurm-free, no I/O.
 */
#ifndef SATURN_PLANREC_H
#define SATURN_PLANREC_H

#include <stddef.h>

#include "sched_core.h"

/* saturn_record: which field of the job record holds the plan record. */
enum {
	SATURN_PLANREC_NONE = 0,      /* none: nothing recorded */
	SATURN_PLANREC_ADMIN_COMMENT, /* admin_comment (default): users cannot change it */
	SATURN_PLANREC_COMMENT,	      /* comment: stored by slurmdbd only with
				       * AccountingStoreFlags=job_comment; the job's
				       * user may rewrite it */
};

#define SATURN_PLANREC_PREFIX "saturn: "
#define SATURN_PLANREC_SEP "; "
/* longest record saturn_planrec_format writes, NUL included */
#define SATURN_PLANREC_MAX 512

typedef struct saturn_planrec {
	const char *batch;
	int task_id; /* array task id; -1: not an array task */
	const char *technique;
	int gpus;
	const char *node;
	const char *plan_id;
	double pred_spb; /* <= 0 or not finite: unknown, left out */
	double obs_spb;	 /* likewise */
} saturn_planrec_t;

/* The setting's name of a SATURN_PLANREC_* value. */
const char *saturn_planrec_field_name(int field);

/* Write r as one line (the format above) into buf (len >= 1; truncated to
 * fit, always NUL-terminated). NULL strings are written as "?". Returns the
 * length written. */
size_t saturn_planrec_format(const saturn_planrec_t *r, char *buf, size_t len);

/* The field's new text with record as its plan record: old (NULL or "" for
 * none) with its previous plan record, if any, replaced; other text of old
 * kept in front, "; " between. malloc'd, or NULL (ENOMEM). */
char *saturn_planrec_merge(const char *old, const char *record);

/* The plan record inside text (pointer into text, up to its end), or NULL
 * when text holds none. */
const char *saturn_planrec_find(const char *text);

/* text with the plan record's obs_spb set to obs_spb (added, or replaced),
 * malloc'd; NULL when text holds no plan record, obs_spb is not > 0 and
 * finite, the record would not change (the same value at the precision
 * written), or on ENOMEM. */
char *saturn_planrec_observe(const char *text, double obs_spb);

/* The planned speed of decision d (decided from build b): the
 * sec_per_batch of exactly the option the plan chose (its identity, d->task
 * and d->option: the profile's speed, a class's own profile's on that
 * class, corrected by runtime feedback), or 0 when d names no option or
 * one from no profile (the user's request: planned from the user's time
 * limit). O(1). */
double saturn_planrec_predicted_spb(const saturn_sched_build_t *b, const saturn_decision_t *d);

/* A plan record read back (from sacct's AdminComment or Comment). */
typedef struct saturn_planrec_read {
	char batch[SATURN_BATCH_NAME_MAX + 1];
	int task_id; /* -1: none */
	char technique[SATURN_TECH_LEN];
	int gpus; /* 0: none */
	char node[SATURN_NODE_NAME_MAX + 1];
	char plan_id[64];
	double pred_spb, obs_spb; /* 0: none */
} saturn_planrec_read_t;

/* Parse the plan record inside text (saturn_planrec_find) into r:
 * key=value words, unknown keys ignored. 0, or -1 when text holds no
 * record, or with err naming the word when a value is malformed (a number
 * that is not one, a name over its limit); r is then partly filled. */
int saturn_planrec_parse(const char *text, saturn_planrec_read_t *r, saturn_error_t *err);

#endif /* SATURN_PLANREC_H */
