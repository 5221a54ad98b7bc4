/* submit_rules.h - the rules a Saturn submission must follow, shared by the
 * SPANK plugin (client side, sbatch/salloc/srun) and job_submit/saturn
 * (slurmctld side): the allow-list of updates, plus (from lib/model/jobreq.h,
 * shared with sched/saturn) batch-name syntax, the default name, and the
 * reading of Slurm's TRES-per-X request strings ("gres:gpu:4,gres:mps:100").
 * Plain C with no Slurm types, so it is unit-tested directly
 * (tests/unit/test_submit_rules.c). Nothing here allocates, prints or exits.
 */
#ifndef SATURN_SUBMIT_RULES_H
#define SATURN_SUBMIT_RULES_H

#include <stddef.h>

#include "jobreq.h" /* batch names and TRES strings (lib/) */

/* --- what a user may change on a Saturn task (scontrol update) -------------
 *
 * An allow-list: job_submit/saturn's job_modify() lists every part of an
 * update request (job_desc_msg_t) that differs from its unset value and
 * accepts the update from a non-operator only when each one is allowed for
 * the task's phase. A field this table does not name is refused, so a field
 * Slurm adds later is refused until someone decides otherwise here.
 * Operators (root, SlurmUser, AdminLevel=Operator/Administrator, and
 * sched/saturn itself) are not checked at all: see saturn-slurm(8). */

/* Where a Saturn task stands, as far as an update is concerned. */
typedef enum saturn_task_phase {
	SATURN_PHASE_HELD = 0, /* pending with priority 0: waiting for the plan */
	SATURN_PHASE_RELEASED, /* pending, released by the plan, not started */
	SATURN_PHASE_RUNNING,  /* started: running, suspended or completing */
	SATURN_PHASE_COUNT
} saturn_task_phase_t;

/* What the allow-list says about one field in one phase. */
typedef enum saturn_modify_rule {
	SATURN_MODIFY_REFUSE = 0, /* the default for every field not listed */
	SATURN_MODIFY_ALLOW,      /* any value */
	SATURN_MODIFY_DECREASE,   /* a value not above the current one */
	SATURN_MODIFY_SAME,       /* only the value the job already has */
	SATURN_MODIFY_IGNORE,     /* request bookkeeping filled in by the
				   * client or slurmctld, not a change */
} saturn_modify_rule_t;

/* One part of an update request that is set. */
typedef struct saturn_modify_field {
	const char *field;  /* job_desc_msg_t member ("time_limit"); NULL for a
			     * part of the request no table names */
	const char *option; /* what scontrol calls it ("TimeLimit"), for
			     * messages; may be NULL */
	int has_current;    /* value and current are meaningful */
	unsigned long long value;   /* the requested value */
	unsigned long long current; /* the job's value now */
} saturn_modify_field_t;

/* The rule for job_desc_msg_t member `field` (e.g. "time_limit") in `phase`.
 * Returns SATURN_MODIFY_REFUSE for a NULL, unknown or unlisted field and
 * for a phase out of range. */
saturn_modify_rule_t saturn_modify_rule(const char *field,
					saturn_task_phase_t phase);

/* Short words for a phase in messages: "held", "released (not started)",
 * "running"; "unknown" when out of range. Static storage. */
const char *saturn_task_phase_name(saturn_task_phase_t phase);

/* Decide one update from a non-operator: f[0..n) are the parts of the
 * request that are set. Returns 0 when every one is allowed in `phase`;
 * otherwise -1, with the index of the first refused entry in *bad (when bad
 * is not NULL) and a one-line reason naming it in why[len], e.g.
 * "Nice (nice) may not be changed on a held Saturn task: the plan decides
 * when it starts". DECREASE and SAME entries without has_current are
 * refused. Changes nothing else. */
int saturn_modify_check(const saturn_modify_field_t *f, size_t n,
			saturn_task_phase_t phase, size_t *bad, char *why,
			size_t len);

/* 1 when `field` is part of a job's hold or priority (priority, nice,
 * alloc_sid: scontrol hold, uhold, release and Nice), 0 otherwise. The
 * plugin answers these with ESLURM_JOB_HELD on a held task. */
int saturn_modify_is_hold_field(const char *field);

#endif
