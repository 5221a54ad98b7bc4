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

#endif
