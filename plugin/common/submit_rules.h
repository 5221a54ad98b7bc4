/* submit_rules.h - the rules a Saturn submission must follow, shared by the
 * SPANK plugin (client side, sbatch/salloc/srun) and job_submit/saturn
 * (slurmctld side): batch-name syntax, the default name, and the reading of
 * Slurm's TRES-per-X request strings ("gres:gpu:4,gres:mps:100").
 * Plain C with no Slurm types, so it is unit-tested directly
 * (tests/unit/test_submit_rules.c). Nothing here allocates, prints or exits.
 */
#ifndef SATURN_SUBMIT_RULES_H
#define SATURN_SUBMIT_RULES_H

#include <stddef.h>

/* Longest batch name, in bytes (not counting the NUL):
 * SATURN_BATCH_NAME_MAX, from the one name-limits header. */
#include "../../lib/saturn_limits.h"

/* Environment name the tag travels under in the job's SPANK (job control)
 * environment: SATURN_BATCH=NAME in job_desc->spank_job_env and
 * job_ptr->spank_job_env (visible inside the job as SLURM_SPANK_SATURN_BATCH). */
#define SATURN_BATCH_ENV "SATURN_BATCH"

/* Name used when neither the option nor the job name gives a usable one. */
#define SATURN_BATCH_DEFAULT "batch"

/* Check a batch name: 1 to SATURN_BATCH_NAME_MAX characters from
 * [A-Za-z0-9._-], not starting with '-' or '.'.
 * Returns 0 when valid; -1 when not, with a one-line reason (no trailing
 * newline, e.g. "character ' ' not allowed (use A-Z a-z 0-9 . _ -)") in
 * why[len] when why is not NULL. name may be NULL (invalid). */
int saturn_batch_name_check(const char *name, char *why, size_t len);

/* Derive a valid batch name from a job name: every character outside
 * [A-Za-z0-9._-] becomes '_', leading '-' and '.' are dropped, the result is
 * cut to SATURN_BATCH_NAME_MAX. When nothing usable is left (job_name NULL,
 * empty, or only '-'/'.'), SATURN_BATCH_DEFAULT is used.
 * out must hold SATURN_BATCH_NAME_MAX + 1 bytes; out always ends up valid
 * (saturn_batch_name_check(out) == 0). Returns out. */
char *saturn_batch_name_default(const char *job_name,
				char out[SATURN_BATCH_NAME_MAX + 1]);

/* What one TRES-per-X string asks for. */
typedef struct saturn_tres_req {
	int gpus;  /* GPUs asked for ("gres:gpu[:type][:N]"); 0 when none */
	int other; /* number of non-GPU GRES entries */
	char first_other[64]; /* the first non-GPU entry, for messages */
} saturn_tres_req_t;

/* Parse a Slurm TRES-per-X request string as found in job_desc_msg_t's
 * tres_per_node / tres_per_job / tres_per_task / tres_per_socket:
 * comma-separated entries "gres:NAME[:TYPE][:COUNT]" (also "gres/NAME..."
 * and a bare "NAME[:TYPE][:COUNT]"); a missing COUNT means 1; COUNT may
 * carry a k/m/g suffix. tres may be NULL or empty (nothing asked for).
 * Returns 0 and fills *req; -1 on a malformed entry (empty name, bad or
 * zero count), with the reason in why[len] and *req unspecified. */
int saturn_tres_parse(const char *tres, saturn_tres_req_t *req, char *why,
		      size_t len);

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
