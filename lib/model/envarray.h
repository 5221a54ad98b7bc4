/* envarray.h - "NAME=value" arrays as Slurm keeps them (a job's SPANK
 * environment spank_job_env[spank_job_env_size], its supplementary
 * environment env_sup[env_cnt]) and as execve() takes them. One lookup
 * rule for every reader: an entry matches NAME when it starts with NAME
 * followed by '='; the first match wins; NULL entries are skipped.
 * Plain C with no Slurm types and no dependency (libsaturn-base), unit-tested
 * in tests/unit/test_jobreq.c. Nothing here allocates, prints or exits.
 */
#ifndef SATURN_ENVARRAY_H
#define SATURN_ENVARRAY_H

#include <stddef.h>

/* Index of the first "NAME=..." entry among env[0..n), or -1 when there is
 * none, when env is NULL, or when name is NULL, empty or contains '='. */
long saturn_env_index(char *const *env, size_t n, const char *name);

/* The value of NAME (the text after "NAME=" of the first match, inside
 * env's own storage), or NULL as for saturn_env_index. */
const char *saturn_env_value(char *const *env, size_t n, const char *name);

#endif /* SATURN_ENVARRAY_H */
