/* modify_fields.h - read a Slurm 22.05 job update request (job_desc_msg_t)
 * into the list of its parts that are set, for the Slurm-free allow-list in
 * submit_rules.h. Needs only Slurm's public slurm/slurm.h (types and NO_VAL
 * constants), no Slurm symbol, so the unit test links it directly.
 *
 * Every member of job_desc_msg_t has a row in the table (name, offset,
 * size, unset value). A part of the request that no row covers but differs
 * from a freshly initialised request (a member a later Slurm adds) is
 * reported too, with field NULL: the allow-list refuses it.
 */
#ifndef SATURN_MODIFY_FIELDS_H
#define SATURN_MODIFY_FIELDS_H

#include <stddef.h>

#include "submit_rules.h"

struct job_descriptor; /* job_desc_msg_t, slurm/slurm.h */

/* Largest number of entries saturn_job_desc_fields() can report. */
#define SATURN_JOB_DESC_FIELDS_MAX 160

/* List the parts of *d that differ from their unset value (the values
 * slurm_init_job_desc_msg() gives, or what slurmctld's unpacking of an
 * update leaves) into out[0..max): field and option are static strings;
 * value holds the requested number for integer members (0 for others);
 * has_current is 0 (the caller adds the job's value where a rule needs it).
 * When bytes outside every known member differ, one more entry with field
 * NULL and option "an unknown part of the request" is added.
 * Returns the number of entries found (which may exceed max: only max are
 * stored). d is not changed. */
size_t saturn_job_desc_fields(const struct job_descriptor *d,
			      saturn_modify_field_t *out, size_t max);

/* The rows of the table, for the unit test: *n gets their number; row i's
 * member name, byte offset and size are returned through the pointers
 * (NULL pointers are skipped). Returns 0, or -1 when i >= *n. */
int saturn_job_desc_row(size_t i, size_t *n, const char **field,
			size_t *offset, size_t *size);

/* Set member row i of *d to a value other than its unset one (for the
 * unit test; pointers get the address of a static byte, never freed).
 * Returns 0, or -1 when i is out of range. */
int saturn_job_desc_poke(struct job_descriptor *d, size_t i);

/* Initialise *d to the unset value of every member, like
 * slurm_init_job_desc_msg() (which the unit test cannot link). */
void saturn_job_desc_init(struct job_descriptor *d);

#endif
