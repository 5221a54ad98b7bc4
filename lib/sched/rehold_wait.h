/* rehold_wait.h - re-holds that Slurm refused, and when to try them again.
 *
 * sched/saturn re-holds a released task (priority 0 through Slurm's update
 * code, under the job write locks) when its node died, Slurm requeued it,
 * ... (sched_decide.c). Should Slurm refuse that update, the same update
 * would be refused again every cycle (every saturn_interval), each time
 * under the write locks and with an error line: the site-scale benchmark
 * logged 1,574 of them in one run, each task's for all of Slurm's 120 s
 * requeue delay (doc/benchmarks-site.md). This table makes the plugin try such a task
 * again only SATURN_REHOLD_RETRY_S after the last refusal and log the
 * refusal once. Slurm-free; one table per controller, used by its agent
 * thread only (no locking of its own).
 */
#ifndef SATURN_REHOLD_WAIT_H
#define SATURN_REHOLD_WAIT_H

#include <stdint.h>

/* seconds between two tries of a refused re-hold */
#define SATURN_REHOLD_RETRY_S 30.0
/* refused tasks remembered at once; past it the oldest entry is reused
 * (that task is then tried at the next cycle: only a log line more) */
#define SATURN_REHOLD_WAIT_MAX 64

typedef struct {
	uint32_t job_id; /* Slurm's job id of the task's record; 0: free */
	int task_id;	 /* its array task id, -1: none */
	double retry_at; /* not tried before this time (seconds) */
	int refusals;	 /* refusals in a row */
} saturn_rehold_wait_entry_t;

typedef struct {
	saturn_rehold_wait_entry_t e[SATURN_REHOLD_WAIT_MAX];
} saturn_rehold_wait_t;

/* A task is job_id (its record's, or its array's meta record's while it
 * is not split off) and task_id (-1: not an array task). */

/* 1 when the re-hold of job_id was refused and now is before its next try
 * (the caller skips it this cycle), else 0. w NULL: 0. */
int saturn_rehold_wait_skip(const saturn_rehold_wait_t *w, uint32_t job_id, int task_id,
			    double now);

/* Slurm refused the re-hold of job_id at now: it is tried again at
 * now + SATURN_REHOLD_RETRY_S. Returns the refusals in a row, 1 the first
 * time (the caller logs an error only then); 0 when w is NULL or job_id 0. */
int saturn_rehold_wait_refused(saturn_rehold_wait_t *w, uint32_t job_id, int task_id, double now);

/* job_id was re-held, or is gone: forget it. Returns the refusals it had
 * (0: none recorded). */
int saturn_rehold_wait_done(saturn_rehold_wait_t *w, uint32_t job_id, int task_id);

#endif /* SATURN_REHOLD_WAIT_H */
