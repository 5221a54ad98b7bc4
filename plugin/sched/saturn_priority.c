/* saturn_priority.c - under the snapshot's read locks: the priority a
 * Saturn job would have under priority/multifactor were it not held, and
 * the QOS and association limits on its GPUs and running jobs
 * (lib/sched/multiuser.h plans with them).
 *
 * Held jobs have priority 0 and Slurm computes no factors for them
 * (decay_apply_weighted_factors skips priority 0), so the factors are
 * computed here the way priority/multifactor's set_priority_factors() and
 * _get_priority_internal() do, from the same inputs, without writing to
 * the job: age from the submission (a held job accrues no age; it would
 * have), fair share (Fair Tree's fs_factor, or the classic 2^(-usage /
 * shares)), association, partition and QOS priorities (normalised unless
 * the NO_NORMAL_* flags say otherwise), site factor and nice. Job size and
 * TRES factors are left out: Saturn chooses the size. With another
 * priority plugin (priority/basic: first come, first served) the weight is
 * 0 (unknown: every batch weighs the same).
 */
#include "config.h" /* Slurm's */

#include <stdio.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm_compat.h" /* plugin/common: one place for what differs between releases */

#include "src/common/assoc_mgr.h"
#include "src/common/list.h"
#include "src/common/read_config.h"
#include SATURN_PRIORITY_H
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "sched_core.h"

#include "saturn_priority.h"

/* scopes of the limits' keys: the kind in the top bits */
#define KEY_ASSOC (1ULL << 60)
#define KEY_QOS_USER (2ULL << 60)
#define KEY_QOS (3ULL << 60)

static int set64(uint64_t v)
{
	return v != INFINITE64 && v != NO_VAL64;
}

static int set32(uint32_t v)
{
	return v != INFINITE && v != NO_VAL;
}

static int clamp_int(uint64_t v)
{
	return v > 1000000 ? 1000000 : (int)v;
}

/* factors x weights, as priority/multifactor sums them (>= 1) */
static double job_prio(job_record_t *job_ptr, double now)
{
	uint32_t fl = slurm_conf.priority_flags;
	double age = 0, fs = 0, assoc = 0, part = 0, qos = 0, p;

	if (!slurm_conf.priority_type || !xstrstr(slurm_conf.priority_type, "multifactor"))
		return 0;
	if (slurm_conf.priority_weight_age && slurm_conf.priority_max_age && job_ptr->details) {
		double diff = now - (double)job_ptr->details->submit_time;

		age = diff <= 0 ? 0 : diff >= slurm_conf.priority_max_age ? 1 :
					  diff / slurm_conf.priority_max_age;
	}
	if (job_ptr->part_ptr && job_ptr->part_ptr->priority_job_factor)
		part = (fl & PRIORITY_FLAGS_NO_NORMAL_PART) ? job_ptr->part_ptr->priority_job_factor :
							       job_ptr->part_ptr->norm_priority;
	if (job_ptr->assoc_ptr && job_ptr->assoc_ptr->usage) {
		slurmdb_assoc_rec_t *a = job_ptr->assoc_ptr;
#if SATURN_HAS_CALC_FS_FACTOR
		slurmdb_assoc_rec_t *f = a;

		if (a->shares_raw == SLURMDB_FS_USE_PARENT && a->usage->fs_assoc_ptr)
			f = a->usage->fs_assoc_ptr;
#endif
		if (fl & PRIORITY_FLAGS_FAIR_TREE)
			fs = a->usage->fs_factor;
#if SATURN_HAS_CALC_FS_FACTOR
		else if (f->usage && !fuzzy_equal(f->usage->usage_efctv, NO_VAL))
			fs = priority_g_calc_fs_factor(f->usage->usage_efctv,
						       (long double)f->usage->shares_norm);
#else
		else /* kept up to date by priority/multifactor (25.11 on) */
			fs = a->usage->fs_factor;
#endif
		assoc = (fl & PRIORITY_FLAGS_NO_NORMAL_ASSOC) ? a->priority : a->usage->priority_norm;
		if (!set32(a->priority) && (fl & PRIORITY_FLAGS_NO_NORMAL_ASSOC))
			assoc = 0;
	}
	if (job_ptr->qos_ptr && job_ptr->qos_ptr->priority && job_ptr->qos_ptr->usage)
		qos = (fl & PRIORITY_FLAGS_NO_NORMAL_QOS) ? job_ptr->qos_ptr->priority :
							     job_ptr->qos_ptr->usage->norm_priority;
	if (!(fs >= 0 && fs <= 1))
		fs = 0;
	p = age * slurm_conf.priority_weight_age + fs * slurm_conf.priority_weight_fs +
	    assoc * slurm_conf.priority_weight_assoc + part * slurm_conf.priority_weight_part +
	    qos * slurm_conf.priority_weight_qos +
	    (double)((int64_t)job_ptr->site_factor - NICE_OFFSET) -
	    (job_ptr->details ? (double)((int64_t)job_ptr->details->nice - NICE_OFFSET) : 0);
	return p < 1 ? 1 : p > 4294967295.0 ? 4294967295.0 : p;
}

static slurmdb_used_limits_t *qos_user_used(slurmdb_qos_rec_t *q, uint32_t uid)
{
	slurmdb_used_limits_t *u, *found = NULL;
	struct listIterator *it;

	if (!q->usage || !q->usage->user_limit_list)
		return NULL;
	it = list_iterator_create(q->usage->user_limit_list);
	while ((u = list_next(it)))
		if (u->uid == uid) {
			found = u;
			break;
		}
	list_iterator_destroy(it);
	return found;
}

/* GPU caps and counts of the limits on job_ptr (assoc_mgr locked) */
static void job_limits(saturn_snap_job_t *j, job_record_t *job_ptr, int gpu_pos)
{
	slurmdb_assoc_rec_t *a = job_ptr->assoc_ptr;
	slurmdb_qos_rec_t *q = job_ptr->qos_ptr;
	int k = 0;

	/* the user's association (GrpTRES=gres/gpu, MaxJobs), then the first
	 * account above it with a GrpTRES=gres/gpu or GrpJobs */
	for (int depth = 0; a && a->usage && depth < 32 && k < 2; depth++) {
		saturn_snap_limit_t *l = &j->limits[k];
		int g = gpu_pos >= 0 && a->grp_tres_ctld && set64(a->grp_tres_ctld[gpu_pos]);
		int mj = (depth == 0 && set32(a->max_jobs)) || set32(a->grp_jobs);

		if (g || mj) {
			l->key = KEY_ASSOC | a->id;
			if (g)
				l->max_gpus = clamp_int(a->grp_tres_ctld[gpu_pos]);
			if (depth == 0 && set32(a->max_jobs))
				l->max_jobs = clamp_int(a->max_jobs);
			if (set32(a->grp_jobs) && (!l->max_jobs || (int)a->grp_jobs < l->max_jobs))
				l->max_jobs = clamp_int(a->grp_jobs);
			if (g && a->usage->grp_used_tres)
				l->used_gpus = clamp_int(a->usage->grp_used_tres[gpu_pos]);
			l->used_jobs = clamp_int(a->usage->used_jobs);
			if (!l->max_gpus && !l->max_jobs)
				l->key = 0;
			else
				k++;
		}
		a = a->usage->parent_assoc_ptr;
	}
	if (!q || !q->usage)
		return;
	/* QOS per user (MaxTRESPerUser=gres/gpu, MaxJobsPerUser) */
	{
		saturn_snap_limit_t *l = &j->limits[k];
		int g = gpu_pos >= 0 && q->max_tres_pu_ctld && set64(q->max_tres_pu_ctld[gpu_pos]);

		if (g || set32(q->max_jobs_pu)) {
			slurmdb_used_limits_t *u = qos_user_used(q, job_ptr->user_id);

			l->key = KEY_QOS_USER | ((uint64_t)q->id << 32) | job_ptr->user_id;
			l->max_gpus = g ? clamp_int(q->max_tres_pu_ctld[gpu_pos]) : 0;
			l->max_jobs = set32(q->max_jobs_pu) ? clamp_int(q->max_jobs_pu) : 0;
			if (u) {
				l->used_jobs = clamp_int(u->jobs);
				if (g && u->tres)
					l->used_gpus = clamp_int(u->tres[gpu_pos]);
			}
			k++;
		}
	}
	/* the QOS as a whole (GrpTRES=gres/gpu, GrpJobs) */
	if (k < SATURN_SNAP_LIMITS) {
		saturn_snap_limit_t *l = &j->limits[k];
		int g = gpu_pos >= 0 && q->grp_tres_ctld && set64(q->grp_tres_ctld[gpu_pos]);

		if (g || set32(q->grp_jobs)) {
			l->key = KEY_QOS | q->id;
			l->max_gpus = g ? clamp_int(q->grp_tres_ctld[gpu_pos]) : 0;
			l->max_jobs = set32(q->grp_jobs) ? clamp_int(q->grp_jobs) : 0;
			l->used_jobs = clamp_int(q->usage->grp_used_jobs);
			if (g && q->usage->grp_used_tres)
				l->used_gpus = clamp_int(q->usage->grp_used_tres[gpu_pos]);
		}
	}
}

/* The smaller of two limits (0: none) and a TRES limit of an array */
static int tighter(int have, const uint64_t *arr, int pos)
{
	int v;

	if (!arr || pos < 0 || !set64(arr[pos]))
		return have;
	v = clamp_int(arr[pos]);
	return have == 0 || v < have ? v : have;
}

/* Per-job limits (assoc_mgr locked): MaxTRESPerJob / MaxTRESPerNode of the
 * QOS, MaxTRES / MaxTRESPerNode of the user's association, for gres/gpu
 * and node. The smaller wins; Slurm lets a QOS limit override the
 * association's, so this may leave out an option Slurm would allow,
 * never keep one it would not start. */
static void job_max_limits(saturn_snap_job_t *j, job_record_t *job_ptr, int gpu_pos)
{
	slurmdb_assoc_rec_t *a = job_ptr->assoc_ptr;
	slurmdb_qos_rec_t *q = job_ptr->qos_ptr;

	if (q) {
		j->max_job_gpus = tighter(j->max_job_gpus, q->max_tres_pj_ctld, gpu_pos);
		j->max_node_gpus = tighter(j->max_node_gpus, q->max_tres_pn_ctld, gpu_pos);
		j->max_job_nodes = tighter(j->max_job_nodes, q->max_tres_pj_ctld, TRES_ARRAY_NODE);
	}
	if (a) {
		j->max_job_gpus = tighter(j->max_job_gpus, a->max_tres_ctld, gpu_pos);
		j->max_node_gpus = tighter(j->max_node_gpus, a->max_tres_pn_ctld, gpu_pos);
		j->max_job_nodes = tighter(j->max_job_nodes, a->max_tres_ctld, TRES_ARRAY_NODE);
	}
}

int saturn_prio_lock(void)
{
	assoc_mgr_lock_t locks = {.assoc = READ_LOCK, .qos = READ_LOCK, .tres = READ_LOCK};
	slurmdb_tres_rec_t tres = {0};

	assoc_mgr_lock(&locks);
	tres.type = "gres";
	tres.name = "gpu";
	return assoc_mgr_find_tres_pos(&tres, true);
}

void saturn_prio_unlock(void)
{
	assoc_mgr_lock_t locks = {.assoc = READ_LOCK, .qos = READ_LOCK, .tres = READ_LOCK};

	assoc_mgr_unlock(&locks);
}

void saturn_snap_prio_limits(saturn_snap_job_t *j, job_record_t *job_ptr, double now, int gpu_pos)
{
	memset(j->limits, 0, sizeof(j->limits));
	j->max_job_gpus = j->max_node_gpus = j->max_job_nodes = 0;
	j->prio = job_prio(job_ptr, now);
	if (accounting_enforce & ACCOUNTING_ENFORCE_LIMITS) {
		job_limits(j, job_ptr, gpu_pos);
		job_max_limits(j, job_ptr, gpu_pos);
	}
}
