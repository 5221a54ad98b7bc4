/* rehold_wait.c - re-holds that Slurm refused (rehold_wait.h). */
#include "config.h"

#include <stddef.h>

#include "rehold_wait.h"

static saturn_rehold_wait_entry_t *find(const saturn_rehold_wait_t *w, uint32_t job_id, int task_id)
{
	if (!w || !job_id)
		return NULL;
	for (int i = 0; i < SATURN_REHOLD_WAIT_MAX; i++)
		if (w->e[i].job_id == job_id && w->e[i].task_id == task_id)
			return (saturn_rehold_wait_entry_t *)&w->e[i];
	return NULL;
}

int saturn_rehold_wait_skip(const saturn_rehold_wait_t *w, uint32_t job_id, int task_id, double now)
{
	const saturn_rehold_wait_entry_t *e = find(w, job_id, task_id);

	return e && now < e->retry_at;
}

int saturn_rehold_wait_refused(saturn_rehold_wait_t *w, uint32_t job_id, int task_id, double now)
{
	saturn_rehold_wait_entry_t *e = find(w, job_id, task_id);

	if (!w || !job_id)
		return 0;
	if (!e) {
		/* a free entry, else the one due first (the oldest refusal) */
		e = &w->e[0];
		for (int i = 0; i < SATURN_REHOLD_WAIT_MAX; i++) {
			if (!w->e[i].job_id) {
				e = &w->e[i];
				break;
			}
			if (w->e[i].retry_at < e->retry_at)
				e = &w->e[i];
		}
		e->job_id = job_id;
		e->task_id = task_id;
		e->refusals = 0;
	}
	e->retry_at = now + SATURN_REHOLD_RETRY_S;
	return ++e->refusals;
}

int saturn_rehold_wait_done(saturn_rehold_wait_t *w, uint32_t job_id, int task_id)
{
	saturn_rehold_wait_entry_t *e = find(w, job_id, task_id);
	int n;

	if (!e)
		return 0;
	n = e->refusals;
	e->job_id = 0;
	e->task_id = -1;
	e->retry_at = 0;
	e->refusals = 0;
	return n;
}
