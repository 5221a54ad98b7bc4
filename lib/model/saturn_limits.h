/* saturn_limits.h - the name limits of Saturn, in one place.
 *
 * Every limit is a length in bytes, not counting the terminating NUL: a
 * buffer that holds such a name is LIMIT + 1 bytes, so a name of exactly
 * LIMIT characters is stored whole (two names that differ only in their
 * last character never merge into one). Parsers and checks accept names of
 * 1..LIMIT characters and reject longer ones with a message; they never cut
 * a name to fit.
 *
 * Named saturn_limits.h, not limits.h: several programs put lib/ on their
 * include path with -I, where a limits.h of ours would shadow the C
 * library's <limits.h>.
 *
 * Plain C macros, no other header: included by libsaturn, by the Slurm
 * plugins (plugin/common/submit_rules.h) and by the job-side programs.
 */
#ifndef SATURN_LIMITS_H
#define SATURN_LIMITS_H

/* Batch name (--saturn-batch, SATURN_BATCH): [A-Za-z0-9._-], checked by
 * saturn_batch_name_check() (plugin/common/submit_rules.h). */
#define SATURN_BATCH_NAME_MAX 64

/* Technique name ([technique NAME] in saturn-techniques.conf and the
 * SATURN_TECHNIQUE a task is released with): [a-z0-9_-]. */
#define SATURN_TECHNIQUE_NAME_MAX 32

/* Slurm node name: Slurm's node names are host names (HOST_NAME_MAX in
 * slurm/slurm.h is 64). */
#define SATURN_NODE_NAME_MAX 64

/* Any other identifier read from a file: task ids, node and class names and
 * techniques in problems and plans (saturn-problem/1, saturn-plan/1),
 * signatures and words in profiles. */
#define SATURN_ID_MAX 256

#endif /* SATURN_LIMITS_H */
