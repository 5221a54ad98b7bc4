/* saturn_gather.c - a cycle's inputs: the snapshot under one read-lock
 * section, then the files and the passes that keep the plugin's own
 * records (no lock, or their own short sections, each documented in
 * doc/architecture.md, "Lock sections"), and the profiles the cycle plans
 * with (lib/sched/sched_cycle.h: the cycle reads no file itself).
 */
#include "config.h" /* Slurm's */

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "sched_core.h"
#include "sched_cycle.h"

#include "saturn_clock.h"
#include "saturn_files.h"
#include "saturn_gather.h"
#include "saturn_measure.h"
#include "saturn_profcache.h"
#include "saturn_prune.h"
#include "saturn_reconfig.h"
#include "saturn_rehold.h"
#include "saturn_snapshot.h"

/* The usable nodes' classes (node_class.h), logged when they change. */
static void log_classes(saturn_snapshot_t *s)
{
	static char last[512];
	char line[512];
	int n = saturn_snapshot_classes_line(s, line, sizeof(line));

	if (!strcmp(line, last))
		return;
	snprintf(last, sizeof(last), "%s", line);
	info("sched/saturn: %d node class%s: %s", n, n == 1 ? "" : "es", line);
}

/* The profiles of every batch of s, and of each batch on every node class
 * of s, into ps. 0, or -1 (ENOMEM). */
static int load_profiles(saturn_ctx_t *ctx, saturn_snapshot_t *s, saturn_profset_t *ps)
{
	/* the distinct classes of the nodes, once (indices of a node each) */
	int *cls = xcalloc(s->nnodes ? s->nnodes : 1, sizeof(int)), ncls = 0, rc = 0;

	for (int n = 0; n < s->nnodes; n++) {
		int seen = !s->nodes[n].klass[0];

		for (int c = 0; c < ncls && !seen; c++)
			seen = !strcmp(s->nodes[cls[c]].klass, s->nodes[n].klass);
		if (!seen)
			cls[ncls++] = n;
	}
	for (int i = 0; i < s->njobs && rc == 0; i++) {
		const saturn_snap_job_t *j = &s->jobs[i];
		const saturn_profile_t *p;

		if (saturn_profset_find(ps, j->uid, j->batch, ""))
			continue;
		p = saturn_lookup_profile(j->batch, j->uid, ctx);
		rc = saturn_profset_add(ps, j->uid, j->batch, "", p);
		for (int c = 0; c < ncls && rc == 0; c++) {
			const char *k = s->nodes[cls[c]].klass;

			p = saturn_lookup_class_profile(j->batch, j->uid, k, ctx);
			if (p)
				rc = saturn_profset_add(ps, j->uid, j->batch, k, p);
		}
	}
	xfree(cls);
	return rc;
}

int saturn_gather(saturn_ctx_t *ctx, saturn_snapshot_t *s, int **snap_of_node, saturn_profset_t *ps,
		  saturn_gather_times_t *t, int *requeued_now)
{
	slurmctld_lock_t read_lock = {.conf = READ_LOCK, .job = READ_LOCK, .node = READ_LOCK,
				      .part = READ_LOCK, .fed = NO_LOCK};
	int nsaturn;

	*requeued_now = 0;
	t->t0 = now_mono();
	lock_slurmctld(read_lock);
	t->t1 = now_mono();
	t->cpu = now_thread_cpu();
	nsaturn = saturn_take_snapshot(ctx, s, snap_of_node);
	t->cpu = now_thread_cpu() - t->cpu;
	t->t2 = now_mono();
	unlock_slurmctld(read_lock);
	t->t3 = t->t2;
	if (nsaturn < 0) {
		error("sched/saturn: out of memory taking the snapshot: cycle skipped");
		return -1;
	}
	saturn_progress_sweep(ctx, s);
	saturn_reconfig_follow(ctx, s);
	/* every cycle, also one without Saturn tasks or nodes: the tasks a
	 * measurement job measured for may all have run and ended before the
	 * job's end was seen, and its record must still learn of it */
	saturn_measure_poll(ctx);
	/* what batches without tasks left behind (cached profiles, records,
	 * script copies) goes; each user's companion jobs counted */
	saturn_prune_pass(ctx, s);
	t->t3 = now_mono();
	if (nsaturn == 0)
		return 0;
	/* the tasks re-held become held tasks of s; when one requeued itself
	 * the cycle plans afresh */
	if (rehold_pass(ctx, s, requeued_now) <= 0)
		*requeued_now = 0;
	t->t3 = now_mono();
	if (s->nnodes == 0)
		return nsaturn;
	saturn_snapshot_classify(s);
	log_classes(s);
	saturn_read_progress(ctx, s);
	if (load_profiles(ctx, s, ps) < 0) {
		error("sched/saturn: out of memory gathering the profiles: cycle skipped");
		return -1;
	}
	t->t3 = now_mono();
	return nsaturn;
}
