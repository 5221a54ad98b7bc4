/* idset.h - sets of ids written as ranges, the way Slurm's --array and
 * flux-core's idset write them: "0-15", "1,3,5-7", "0-15:2". Used for
 * array task ids (saturn-profile --task-ids, the task_ids strings of
 * saturn-profile/1). One parser, one rule, unit-tested in
 * tests/unit/test_idset.c. Never prints or exits.
 */
#ifndef SATURN_IDSET_H
#define SATURN_IDSET_H

#include "error.h"

/* Largest array task id we accept: well above Slurm's MaxArraySize limit
 * (at most 4000001, so task ids up to 4000000). */
#define SATURN_TASK_ID_MAX 67108863

/* Parse s: comma-separated items, each ID, LO-HI (LO <= HI) or LO-HI:STEP
 * (STEP >= 1: LO, LO+STEP, ... up to HI), decimal digits only (no sign, no
 * space, no empty item), every id in [0, max_id], no id twice, at most
 * max_count ids in all (max_id >= 0, max_count >= 1).
 * Returns the number of ids (>= 1) and sets *ids to a malloc'd array of
 * them in the order written (the caller frees it). On failure returns -1
 * with *ids NULL, errno EINVAL (s NULL or malformed, an id out of range, a
 * duplicate, too many ids) or ENOMEM, and err (if not NULL) filled with one
 * line that starts with "what: " (what may be NULL) and names the item, e.g.
 * "--task-ids: '7-3' is not an id range like 0-15, 1,3,5-7 or 0-15:2". */
int saturn_idset_parse(const char *what, const char *s, int max_id,
		       int max_count, int **ids, saturn_error_t *err);

#endif /* SATURN_IDSET_H */
