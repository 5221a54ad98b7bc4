/* jobreq.h - the rules of a Saturn job request, shared by every side that
 * reads one: the SPANK plugin (sbatch/salloc/srun), job_submit/saturn and
 * sched/saturn (inside slurmctld) and the programs. Batch-name syntax, the
 * default name, and the reading of Slurm's TRES-per-X request strings
 * ("gres:gpu:4,gres:mps:100").
 * Plain C with no Slurm types and no dependency (libsaturn-base), unit-tested
 * in tests/unit/test_jobreq.c. Nothing here allocates, prints or exits.
 */
#ifndef SATURN_JOBREQ_H
#define SATURN_JOBREQ_H

#include <stddef.h>

/* Longest batch name, in bytes (not counting the NUL): SATURN_BATCH_NAME_MAX,
 * from the one name-limits header. */
#include "saturn_limits.h"

/* Format a one-line reason into why[len] (nothing when why is NULL or len
 * is 0): the "why" out-parameter of the checks here and in
 * plugin/common/submit_rules.c. */
__attribute__((format(printf, 3, 4))) void saturn_why(char *why, size_t len, const char *fmt,
						      ...);

/* Environment name the tag travels under in the job's SPANK (job control)
 * environment: SATURN_BATCH=NAME in job_desc->spank_job_env and
 * job_ptr->spank_job_env (visible inside the job as SLURM_SPANK_SATURN_BATCH).
 */
#define SATURN_BATCH_ENV "SATURN_BATCH"

/* The user's own GPU request (tres_per_node as submitted, e.g.
 * "gres:gpu:2"), which sched/saturn saves in a task's supplemental
 * environment when it first releases it with the plan's count, and puts
 * back when it re-holds the task: a held task always asks for what its
 * user asked (saturn release --all releases it so). */
#define SATURN_USER_GRES_ENV "SATURN_USER_GRES"

/* The job's --saturn-reconfigure[=yes|no]: SATURN_RECONFIGURE=yes or no in
 * the same environment (sched/saturn may restart the running task with
 * another option; reconfig.h). Absent: saturn_reconfigure decides. */
#define SATURN_RECONFIGURE_ENV "SATURN_RECONFIGURE"

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
	int other; /* number of other entries (non-GPU GRES, TRES but cpu) */
	/* CPUs of a "cpu=N" entry (Slurm 23.11 and later put -c N into
	 * tres_per_task so); 0 when none. Not counted in other. */
	int cpus;
	char first_other[64]; /* the first non-GPU entry, for messages */
	/* The GPU type asked for ("gres:gpu:a100:2" -> "a100"); "" when the
	 * GPU entries name none, or name several different types (then
	 * gpu_types_mixed is 1). A type longer than 63 bytes is cut. */
	char gpu_type[64];
	int gpu_types_mixed;
} saturn_tres_req_t;

/* Parse a Slurm TRES-per-X request string as found in job_desc_msg_t's and
 * job_record_t's tres_per_node / tres_per_job / tres_per_task /
 * tres_per_socket: comma-separated entries, each
 *   [gres:|gres/]NAME                 count 1
 *   [gres:|gres/]NAME:COUNT           when COUNT reads as a count
 *   [gres:|gres/]NAME:TYPE            otherwise (count 1; a type may start
 *                                     with a digit, e.g. MIG's "3g.20gb")
 *   [gres:|gres/]NAME:TYPE:COUNT
 *   [gres:|gres/]NAME[:TYPE]=COUNT    Slurm's TRES form ("gres/gpu=4")
 *   cpu=COUNT                         a CPU count (req->cpus, not other)
 * as Slurm 22.05 to 26.05 write them (gres_prepend_tres_type, xfmt_tres). COUNT is
 * decimal with an optional k/m/g suffix (x1024), from 1 to 1000000.
 * GPU counts of several gpu entries add up. tres may be NULL or empty
 * (nothing asked for).
 * Returns 0 and fills *req; -1 on a malformed entry (empty entry, name or
 * type, bad or zero count, more than 1000000 GPUs in all), with a one-line
 * reason in why[len] (when why is not NULL) and *req unspecified. */
int saturn_tres_parse(const char *tres, saturn_tres_req_t *req, char *why,
		      size_t len);

#endif /* SATURN_JOBREQ_H */
