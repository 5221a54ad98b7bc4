/* task_cap.c - the task cap (sched_core.h): past saturn_max_tasks, the
 * held tasks a problem takes are the first in Slurm's queue order; the
 * rest stay held with a reason. Before this, the problem builder failed
 * with E2BIG once all users together held more than SATURN_MAX_TASKS tasks
 * and the cycle planned nobody. O(n log n), Slurm-free.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched_core.h"

int saturn_sched_queue_cmp(const saturn_snap_job_t *a, const saturn_snap_job_t *b)
{
	uint32_t xa = a->array_job_id ? a->array_job_id : a->job_id;
	uint32_t ya = b->array_job_id ? b->array_job_id : b->job_id;

	if (a->prio > 0 && b->prio > 0 && a->prio != b->prio)
		return a->prio > b->prio ? -1 : 1;
	if (a->submit_time != b->submit_time)
		return a->submit_time < b->submit_time ? -1 : 1;
	if (xa != ya)
		return xa < ya ? -1 : 1;
	return (a->task_id > b->task_id) - (a->task_id < b->task_id);
}

static _Thread_local const saturn_snapshot_t *cap_s;

static int cmp_held(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	int c = saturn_sched_queue_cmp(&cap_s->jobs[a], &cap_s->jobs[b]);

	return c ? c : (a > b) - (a < b);
}

int saturn_sched_task_cap(const saturn_snapshot_t *s, int cap, unsigned char *keep)
{
	int nheld = 0, nother = 0, room, out;
	int *held;

	if (cap <= 0 || cap > SATURN_MAX_TASKS)
		cap = SATURN_MAX_TASKS;
	for (int i = 0; i < s->njobs; i++) {
		keep[i] = 1;
		if (s->jobs[i].state == SATURN_SNAP_HELD)
			nheld++;
		else
			nother++;
	}
	if (nheld + nother <= cap)
		return 0;
	room = cap > nother ? cap - nother : 0;
	if (!(held = malloc(sizeof(int) * (size_t)nheld))) {
		errno = ENOMEM;
		return -1;
	}
	nheld = 0;
	for (int i = 0; i < s->njobs; i++)
		if (s->jobs[i].state == SATURN_SNAP_HELD)
			held[nheld++] = i;
	cap_s = s;
	qsort(held, (size_t)nheld, sizeof(int), cmp_held);
	cap_s = NULL;
	for (int k = room; k < nheld; k++)
		keep[held[k]] = 0;
	out = nheld > room ? nheld - room : 0;
	free(held);
	return out;
}
