/* saturn_snapshot.c - sched/saturn's view of slurmctld: under the read
 * locks, copy the usable GPU nodes, the Saturn jobs (held, released,
 * running) with the partitions they may run in, and the GPUs other jobs
 * hold into libsaturn's plain snapshot (what the running jobs' progress
 * files say is added outside the locks: saturn_read_progress in
 * saturn_files.c).
 */
#include "config.h" /* Slurm's */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jobenv.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "slurm_compat.h" /* plugin/common: one place for what differs between releases */

#include "src/common/bitstring.h"
#include SATURN_GRES_H
#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "envarray.h"
#include "formats.h"
#include "jobreq.h"
#include "profile.h"
#include "progress.h"
#include "sched_core.h"

#include "saturn_priority.h"
#include "saturn_profcache.h"
#include "saturn_snapshot.h"

static const char *job_batch(job_record_t *job_ptr)
{
	return saturn_env_value(job_ptr->spank_job_env, job_ptr->spank_job_env_size,
				SATURN_BATCH_ENV);
}

/* GPUs per node the job asked for (tres_per_node, as job_submit/saturn
 * normalised it; once released, the request before the release, kept in
 * SATURN_USER_GRES) and their type into j; 0 GPUs when it cannot be
 * read. */
static void gpus_from_tres(job_record_t *job_ptr, saturn_snap_job_t *j)
{
	saturn_tres_req_t r;
	char why[160];
	const char *tres = job_ptr->tres_per_node;
	const char *user = job_ptr->details ? saturn_env_value(job_ptr->details->env_sup,
								job_ptr->details->env_cnt,
								SATURN_USER_GRES_ENV) : NULL;

	if (user)
		tres = user;
	if (saturn_tres_parse(tres, &r, why, sizeof(why)) < 0) {
		debug("sched/saturn: %pJ: %s", job_ptr, why);
		return;
	}
	j->req_gpus = r.gpus;
	snprintf(j->gpu_type, sizeof(j->gpu_type), "%s", r.gpu_type);
	if (r.gpu_types_mixed)
		j->constraint_bad = 1;
}

/* The user's --constraint into j (a longer one than the snapshot keeps
 * cannot be planned: constraint_bad). */
static void job_constraint(job_record_t *job_ptr, saturn_snap_job_t *j)
{
	const char *f = job_ptr->details ? job_ptr->details->features : NULL;

	if (!f || !f[0])
		return;
	if (strlen(f) > SATURN_CONSTRAINT_MAX)
		j->constraint_bad = 1;
	else
		snprintf(j->constraint, sizeof(j->constraint), "%s", f);
}

/* What the node's hardware says for its class (node_class.h): its GPU
 * types (gres type names), the interconnect of its GPUs (gres Links=
 * counts: a linked pair is NVLink, links recorded without one PCIe) and
 * its features. */
static void node_hw(node_record_t *node_ptr, saturn_snap_node_t *n)
{
	struct listIterator *it;
	gres_state_t *gs;
	size_t at = 0;

	if (node_ptr->features_act || node_ptr->features)
		snprintf(n->features, sizeof(n->features), "%s",
			 node_ptr->features_act ? node_ptr->features_act : node_ptr->features);
	if (!node_ptr->gres_list)
		return;
	it = list_iterator_create(node_ptr->gres_list);
	while ((gs = list_next(it))) {
		gres_node_state_t *ns = gs->gres_data;

		if (xstrcmp(gs->gres_name, "gpu") || !ns)
			continue;
		for (int t = 0; t < ns->type_cnt; t++) {
			int w;

			if (!ns->type_name || !ns->type_name[t] || !ns->type_name[t][0] ||
			    !ns->type_cnt_avail || !ns->type_cnt_avail[t])
				continue;
			w = snprintf(n->gpu_types + at, sizeof(n->gpu_types) - at, "%s%s",
				     at ? "," : "", ns->type_name[t]);
			if (w < 0 || (size_t)w >= sizeof(n->gpu_types) - at) {
				n->gpu_types[at] = '\0';
				break;
			}
			at += (size_t)w;
		}
		if (ns->link_len > 0 && ns->links_cnt) {
			int linked = 0;

			for (int a = 0; a < ns->topo_cnt && a < ns->link_len && !linked; a++)
				for (int b = 0; ns->links_cnt[a] && b < ns->link_len; b++)
					if (a != b && ns->links_cnt[a][b] > 0)
						linked = 1;
			snprintf(n->link, sizeof(n->link), "%s",
				 linked ? SATURN_LINK_NVLINK : SATURN_LINK_PCIE);
		}
	}
	list_iterator_destroy(it);
}

static int node_gpus(node_record_t *node_ptr)
{
	struct listIterator *it;
	gres_state_t *gs;
	int n = 0;

	if (!node_ptr->gres_list)
		return 0;
	it = list_iterator_create(node_ptr->gres_list);
	while ((gs = list_next(it))) {
		if (xstrcmp(gs->gres_name, "gpu"))
			continue;
		n = (int)((gres_node_state_t *)gs->gres_data)->gres_cnt_avail;
	}
	list_iterator_destroy(it);
	return n > 64 ? 64 : n;
}

/* For each node of a running job's allocation: call fn with the snapshot
 * node index and the GPU mask the job holds there. */
static void job_gpu_masks(job_record_t *job_ptr, const int *snap_of_node,
			  void (*fn)(int snode, uint64_t mask, void *arg), void *arg)
{
	bitstr_t *nodes = job_ptr->job_resrcs && job_ptr->job_resrcs->node_bitmap ?
				  job_ptr->job_resrcs->node_bitmap : job_ptr->node_bitmap;
	struct listIterator *it;
	gres_state_t *gs;

	if (!job_ptr->gres_list_alloc || !nodes)
		return;
	it = list_iterator_create(job_ptr->gres_list_alloc);
	while ((gs = list_next(it))) {
		gres_job_state_t *gj = gs->gres_data;
		int k = 0;

		if (xstrcmp(gs->gres_name, "gpu") || !gj || !gj->gres_bit_alloc)
			continue;
		/* first to last set bit, not bit_size for every bit up to it */
		for (int n = bit_ffs(nodes), last = bit_fls(nodes); n >= 0 && n <= last; n++) {
			uint64_t mask = 0;

			if (!bit_test(nodes, n))
				continue;
			if (k >= (int)gj->node_cnt)
				break;
			if (gj->gres_bit_alloc[k]) {
				bitstr_t *b = gj->gres_bit_alloc[k];

				for (int g = 0, gn = bit_size(b); g < gn && g < 64; g++)
					if (bit_test(b, g))
						mask |= 1ULL << g;
			}
			k++;
			if (snap_of_node[n] >= 0 && mask)
				fn(snap_of_node[n], mask, arg);
		}
	}
	list_iterator_destroy(it);
}

/* Every node of a running Saturn task (a multi-node one has several):
 * the first SATURN_SNAP_MAX_NODES go into the snapshot job, the GPUs of
 * any further node become busy entries until its end, so that the plan
 * never counts them free. */
struct gang_acc {
	int n;
	int node[SATURN_SNAP_MAX_NODES];
	uint64_t mask[SATURN_SNAP_MAX_NODES];
	saturn_snapshot_t *s;
	double until;
	int failed;
};

static void busy_entry(saturn_snapshot_t *s, int snode, uint64_t mask, double until, int *failed)
{
	saturn_snap_busy_t *b = saturn_snapshot_add_busy(s);

	if (!b) {
		*failed = 1;
		return;
	}
	b->node = snode;
	b->gpu_mask = mask;
	b->until = until;
}

static void take_all(int snode, uint64_t mask, void *arg)
{
	struct gang_acc *a = arg;

	if (a->n < SATURN_SNAP_MAX_NODES) {
		a->node[a->n] = snode;
		a->mask[a->n++] = mask;
		return;
	}
	busy_entry(a->s, snode, mask, a->until, &a->failed);
}

/* Into j: the first node as node/gpu_mask, the others as more_node/
 * more_mask. The model's gang has the same GPU count on every node; an
 * allocation that differs keeps the first node as the task and the rest
 * as busy GPUs. -1 on ENOMEM. */
static int set_running_nodes(saturn_snapshot_t *s, saturn_snap_job_t *j, struct gang_acc *a)
{
	int same = 1;

	if (a->failed)
		return -1;
	if (a->n == 0)
		return 0; /* j->node stays -1: "running on a node that is not usable" */
	for (int k = 1; k < a->n; k++)
		if (__builtin_popcountll(a->mask[k]) != __builtin_popcountll(a->mask[0]))
			same = 0;
	j->node = a->node[0];
	j->gpu_mask = a->mask[0];
	j->nnodes = same ? a->n : 1;
	for (int k = 1; k < a->n; k++) {
		if (same) {
			j->more_node[k - 1] = a->node[k];
			j->more_mask[k - 1] = a->mask[k];
			continue;
		}
		busy_entry(s, a->node[k], a->mask[k], a->until, &a->failed);
	}
	if (!same)
		info("sched/saturn: JobId=%u runs with different GPU counts on its %d nodes: planned as on %s, the others' GPUs as busy",
		     j->job_id, a->n, s->nodes[a->node[0]].name);
	return a->failed ? -1 : 0;
}

struct busy_ctx {
	saturn_snapshot_t *s;
	double until;
	int failed;
};

static void add_busy(int snode, uint64_t mask, void *arg)
{
	struct busy_ctx *c = arg;
	saturn_snap_busy_t *b = saturn_snapshot_add_busy(c->s);

	if (!b) {
		c->failed = 1;
		return;
	}
	b->node = snode;
	b->gpu_mask = mask;
	b->until = c->until;
}

/* A new snapshot job for job_ptr (a record; an array's pending tasks each
 * get one) with what every state shares; NULL on ENOMEM. */
static saturn_snap_job_t *add_job(saturn_snapshot_t *s, job_record_t *job_ptr, const char *batch,
				  uint64_t part_mask, int gpu_pos)
{
	saturn_snap_job_t *j = saturn_snapshot_add_job(s);

	if (!j)
		return NULL;
	j->job_id = job_ptr->job_id;
	j->part_mask = part_mask;
	snprintf(j->batch, sizeof(j->batch), "%s", batch);
	j->uid = job_ptr->user_id;
	gpus_from_tres(job_ptr, j);
	job_constraint(job_ptr, j);
	if (job_ptr->time_limit != NO_VAL && job_ptr->time_limit != INFINITE)
		j->time_limit_s = job_ptr->time_limit * 60.0;
	j->submit_time = job_ptr->details ? (double)job_ptr->details->submit_time : 0;
	j->array_job_id = job_ptr->array_job_id;
	if (job_ptr->details) {
		const char *tech = saturn_env_value(job_ptr->details->env_sup,
						    job_ptr->details->env_cnt, SATURN_TECHNIQUE_ENV);
		const char *g = saturn_env_value(job_ptr->details->env_sup,
						 job_ptr->details->env_cnt, SATURN_GPUS_ENV);

		snprintf(j->technique, sizeof(j->technique), "%s", tech ? tech : "user");
		j->gpus = g ? atoi(g) : j->req_gpus;
	}
	saturn_snap_prio_limits(j, job_ptr, s->now, gpu_pos);
	return j;
}

/* The state text of a node that is not among the usable ones. */
static const char *node_unusable(char *name)
{
	node_record_t *node_ptr = find_node_record(name);

	if (!node_ptr)
		return "gone";
	if (IS_NODE_DOWN(node_ptr))
		return "down";
	if (IS_NODE_DRAIN(node_ptr))
		return "drained";
	if (IS_NODE_NO_RESPOND(node_ptr))
		return "not responding";
	if (IS_NODE_FUTURE(node_ptr))
		return "future";
	return "without usable GPUs";
}

/* RequeueExitHold's hold (special exit, user hold, after a run), not one its
 * user set: `scontrol requeuehold State=SpecialExit` leaves this text. */
static int exit_held(job_record_t *job_ptr)
{
	return job_ptr->priority == 0 && job_ptr->state_reason == WAIT_HELD_USER &&
	       (job_ptr->job_state & JOB_SPECIAL_EXIT) && job_ptr->restart_cnt > 0 &&
	       xstrcmp(job_ptr->state_desc, "job requeued in special exit state");
}

/* What the reconfiguration (reconfig.h) needs of a running job: the
 * user's --saturn-reconfigure, whether Slurm may requeue it, and how often
 * it was requeued (Slurm's restart count, kept in Slurm's own state). */
static void running_fields(saturn_snap_job_t *j, job_record_t *job_ptr)
{
	const char *rc = saturn_env_value(job_ptr->spank_job_env, job_ptr->spank_job_env_size,
					  SATURN_RECONFIGURE_ENV);

	j->reconfigure = !rc ? 0 : !strcmp(rc, "yes") ? 1 : -1;
	j->requeue = job_ptr->batch_flag && job_ptr->details && job_ptr->details->requeue;
	j->restarts = job_ptr->restart_cnt;
}

/* The most nodes a job may have in the partition(s) it may run in (the
 * largest MaxNodes among them); 0 = no limit. */
static int part_max_nodes(job_record_t *job_ptr)
{
	uint32_t most = 0;

	if (job_ptr->part_ptr_list) {
		struct listIterator *it = list_iterator_create(job_ptr->part_ptr_list);
		part_record_t *part_ptr;

		while ((part_ptr = list_next(it)))
			if (part_ptr->max_nodes == INFINITE || part_ptr->max_nodes > most)
				most = part_ptr->max_nodes;
		list_iterator_destroy(it);
	} else if (job_ptr->part_ptr) {
		most = job_ptr->part_ptr->max_nodes;
	}
	return most == INFINITE || most == NO_VAL || most > SATURN_MAX_TASK_NODES ? 0 : (int)most;
}

/* The node counts of a pending job: req_nodes, the user's own (kept in
 * SATURN_REQ_NODES once a release changed the job's count, else the
 * job's minimum), and nnodes, the count it has now (a released one: what
 * it was released with). */
static void pending_nodes(saturn_snap_job_t *j, job_record_t *job_ptr)
{
	job_details_t *d = job_ptr->details;
	const char *rn = saturn_env_value(d->env_sup, d->env_cnt, SATURN_REQ_NODES_ENV);
	long own = rn ? strtol(rn, NULL, 10) : 0;
	int now = d->min_nodes != NO_VAL && d->min_nodes > 1 ? (int)d->min_nodes : 1;

	if (now > SATURN_MAX_TASK_NODES)
		now = SATURN_MAX_TASK_NODES;
	j->nnodes = now;
	j->req_nodes = own >= 1 && own <= SATURN_MAX_TASK_NODES ? (int)own : now;
	j->part_max_nodes = part_max_nodes(job_ptr);
}

/* The snapshot's index of node name, -1 when not usable: Slurm's name
 * hash, not a search of the snapshot's nodes per released task. */
static int snap_node(const int *snap_of_node, char *name)
{
	node_record_t *node_ptr = find_node_record2(name); /* no error logged */

	return node_ptr ? snap_of_node[node_ptr->index] : -1;
}

/* A released task pinned to several nodes: usable only when every one of
 * them is; else j->node = -1 with the first unusable one named in pinned
 * and pinned_state (saturn_sched_rehold_cause re-holds it). */
static void pinned_nodes(const int *snap_of_node, saturn_snap_job_t *j, const char *req_nodes)
{
	struct hostlist *hl = hostlist_create(req_nodes);
	char *host;
	int first = -1;

	if (!hl) {
		snprintf(j->pinned, sizeof(j->pinned), "%.64s", req_nodes);
		snprintf(j->pinned_state, sizeof(j->pinned_state), "gone");
		j->node = -1;
		return;
	}
	while ((host = hostlist_shift(hl))) {
		int n = snap_node(snap_of_node, host);

		if (n < 0) {
			snprintf(j->pinned, sizeof(j->pinned), "%s", host);
			snprintf(j->pinned_state, sizeof(j->pinned_state), "%s", node_unusable(host));
			free(host);
			hostlist_destroy(hl);
			j->node = -1;
			return;
		}
		if (first < 0) {
			first = n;
			snprintf(j->pinned, sizeof(j->pinned), "%s", host);
		}
		free(host);
	}
	hostlist_destroy(hl);
	j->node = first;
}

/* A number sched/saturn keeps in a job's supplemental environment
 * (slurmctld alone writes it); 0 when absent or not a number >= 0. */
static double env_num(job_details_t *d, const char *name)
{
	const char *v = d ? saturn_env_value(d->env_sup, d->env_cnt, name) : NULL;
	char *end;
	double x;

	if (!v)
		return 0;
	x = strtod(v, &end);
	return end != v && !*end && x >= 0 && x < 1e12 ? x : 0;
}

/* What saturn_sched_decide_rehold needs of a pending job. */
static void pending_fields(const int *snap_of_node, saturn_snap_job_t *j, job_record_t *job_ptr)
{
	job_details_t *d = job_ptr->details;
	const char *nb = saturn_env_value(d->env_sup, d->env_cnt, SATURN_NOT_BEFORE_ENV);

	j->planned = saturn_env_value(d->env_sup, d->env_cnt, SATURN_PLAN_ID_ENV) != NULL;
	j->requeued = job_ptr->restart_cnt > 0;
	j->exit_held = exit_held(job_ptr);
	j->begin_time = (double)d->begin_time;
	j->not_before = nb ? strtod(nb, NULL) : 0;
	j->released_at = env_num(d, SATURN_RELEASED_AT_ENV);
	j->bounces = (int)env_num(d, SATURN_BOUNCES_ENV);
	j->restarts = job_ptr->restart_cnt;
	j->excused = (int)env_num(d, SATURN_EXCUSED_ENV);
	if (j->state == SATURN_SNAP_HELD) {
		j->charged_from = env_num(d, SATURN_CHARGED_FROM_ENV);
		j->requeued_at = env_num(d, SATURN_REQUEUED_AT_ENV);
	}
	pending_nodes(j, job_ptr);
	if (j->state == SATURN_SNAP_HELD || !d->req_nodes || !d->req_nodes[0])
		return;
	if (j->nnodes > 1 || strchr(d->req_nodes, ',') || strchr(d->req_nodes, '[')) {
		pinned_nodes(snap_of_node, j, d->req_nodes);
		return;
	}
	snprintf(j->pinned, sizeof(j->pinned), "%s", d->req_nodes);
	j->node = snap_node(snap_of_node, d->req_nodes);
	if (j->node < 0)
		snprintf(j->pinned_state, sizeof(j->pinned_state), "%s", node_unusable(d->req_nodes));
}

/* The distinct partitions of the Saturn jobs of one snapshot, numbered in
 * order of appearance (bit k of the part_mask fields). */
struct snap_parts {
	int n;
	part_record_t *ptr[SATURN_MAX_PARTS];
};

static int part_bit(struct snap_parts *sp, part_record_t *part_ptr)
{
	static int warned;

	for (int k = 0; k < sp->n; k++)
		if (sp->ptr[k] == part_ptr)
			return k;
	if (sp->n < SATURN_MAX_PARTS) {
		sp->ptr[sp->n] = part_ptr;
		return sp->n++;
	}
	if (!warned++)
		info("sched/saturn: Saturn jobs in more than %d partitions: jobs in partition %s (and other late ones) are planned on any node",
		     SATURN_MAX_PARTS, part_ptr->name);
	return -1;
}

/* Why Slurm's scheduler would never start job_ptr in part_ptr as the job
 * is (the name of its pending reason), or NULL when it may. With
 * EnforcePartLimits=NO (Slurm's default) such a job is accepted and left
 * pending; released by a plan, it would hold its GPUs in every plan. */
static const char *part_refuses(part_record_t *part_ptr, job_record_t *job_ptr)
{
	if (job_ptr->time_limit != NO_VAL && job_ptr->time_limit != INFINITE &&
	    part_ptr->max_time != INFINITE && part_ptr->max_time != NO_VAL &&
	    job_ptr->time_limit > part_ptr->max_time && job_ptr->limit_set.time != ADMIN_SET_LIMIT)
		return "PartitionTimeLimit";
	if (!validate_group(part_ptr, job_ptr->user_id) ||
	    part_policy_valid_acct(part_ptr, job_ptr->account, NULL) != SLURM_SUCCESS)
		return "PartitionConfig";
	return NULL;
}

/* Bits of the partitions job_ptr may run in (part_ptr_list for a job
 * submitted to several, else part_ptr); 0 = unknown: any node. Partitions
 * Slurm would never start it in (part_refuses) are left out; when that is
 * every one, never says why (as "REASON (partition NAME)"). */
static uint64_t job_part_mask(struct snap_parts *sp, job_record_t *job_ptr, char *never,
			      size_t len)
{
	uint64_t mask = 0;
	int usable = 0, unknown = 0;
	const char *why = NULL, *where = NULL;
	part_record_t *part_ptr;

	never[0] = '\0';
	if (job_ptr->part_ptr_list) {
		struct listIterator *it = list_iterator_create(job_ptr->part_ptr_list);

		while ((part_ptr = list_next(it))) {
			const char *r = part_refuses(part_ptr, job_ptr);
			int k;

			if (r) {
				if (!why) {
					why = r;
					where = part_ptr->name;
				}
				continue;
			}
			usable++;
			if ((k = part_bit(sp, part_ptr)) < 0)
				unknown = 1;
			else
				mask |= 1ULL << k;
		}
		list_iterator_destroy(it);
	} else if ((part_ptr = job_ptr->part_ptr)) {
		const char *r = part_refuses(part_ptr, job_ptr);
		int k;

		if (r) {
			why = r;
			where = part_ptr->name;
		} else {
			usable++;
			if ((k = part_bit(sp, part_ptr)) >= 0)
				mask = 1ULL << k;
		}
	}
	if (!usable && why)
		snprintf(never, len, "%s (partition %.40s)", why, where ? where : "?");
	return unknown ? 0 : mask;
}

/* Slurm's pending reasons of a released job that no end of another job
 * will clear (as it is, it will never start), by squeue's name. */
static const struct {
	uint32_t reason;
	const char *name;
} never_reasons[] = {
	{WAIT_PART_TIME_LIMIT, "PartitionTimeLimit"}, {WAIT_PART_CONFIG, "PartitionConfig"},
	{WAIT_PART_NODE_LIMIT, "PartitionNodeLimit"}, {WAIT_PN_MEM_LIMIT, "MinMemoryPerNode"},
	{WAIT_ACCOUNT, "InvalidAccount"}, {WAIT_QOS, "InvalidQOS"},
	{WAIT_QOS_MAX_WALL_PER_JOB, "QOSMaxWallDurationPerJobLimit"},
	{WAIT_ASSOC_MAX_WALL_PER_JOB, "AssocMaxWallDurationPerJobLimit"},
	{FAIL_ACCOUNT, "FAIL_ACCOUNT"}, {FAIL_QOS, "FAIL_QOS"}, {FAIL_BAD_CONSTRAINTS, "BadConstraints"},
};

static const char *reason_never_clears(uint32_t reason)
{
	for (size_t i = 0; i < sizeof(never_reasons) / sizeof(never_reasons[0]); i++)
		if (never_reasons[i].reason == reason)
			return never_reasons[i].name;
	return NULL;
}

/* What a SATURN_NEVER note is tied to: the job's time limit, partitions,
 * account and QOS; changing any of them (scontrol update) drops it. */
static void never_key(job_record_t *job_ptr, char *buf, size_t len)
{
	snprintf(buf, len, "%u/%.64s/%.64s/%u", job_ptr->time_limit,
		 job_ptr->partition ? job_ptr->partition : "", job_ptr->account ? job_ptr->account : "",
		 job_ptr->qos_id);
}

void saturn_never_note(job_record_t *job_ptr, const char *never, char *buf, size_t len)
{
	char key[160];

	never_key(job_ptr, key, sizeof(key));
	snprintf(buf, len, "%s|%s", key, never);
}

/* The never of a pending job: the partitions' (held), Slurm's pending
 * reason (released), or an earlier re-hold's note while the job is
 * unchanged. */
static void pending_never(saturn_snap_job_t *j, job_record_t *job_ptr, const char *part_never)
{
	const char *note = saturn_env_value(job_ptr->details->env_sup, job_ptr->details->env_cnt,
					    SATURN_NEVER_ENV);
	const char *r;
	char key[160];
	size_t kl;

	j->never[0] = '\0';
	if (part_never[0]) {
		snprintf(j->never, sizeof(j->never), "%s", part_never);
		return;
	}
	if (j->state == SATURN_SNAP_RELEASED && (r = reason_never_clears(job_ptr->state_reason))) {
		snprintf(j->never, sizeof(j->never), "%s", r);
		return;
	}
	if (!note)
		return;
	never_key(job_ptr, key, sizeof(key));
	kl = strlen(key);
	if (!strncmp(note, key, kl) && note[kl] == '|')
		snprintf(j->never, sizeof(j->never), "%s", note + kl + 1);
}

static int said_multinode; /* logged once per slurmctld */

/* Fill s under the read locks. Returns the number of Saturn jobs, or -1 on
 * ENOMEM (snapshot incomplete: the cycle is skipped). */
int saturn_take_snapshot(const saturn_ctx_t *ctx, saturn_snapshot_t *s, int **snap_of_node_p)
{
	node_record_t *node_ptr;
	job_record_t *job_ptr;
	struct listIterator *it;
	int *snap_of_node, nsaturn = 0, gpu_pos;
	struct snap_parts sp = {0};
	uint64_t part_mask;
	char part_never[96];

	saturn_snapshot_reset(s);
	s->now = (double)time(NULL);
	s->class_rules = ctx->cfg.node_classes;
	s->class_profile = saturn_lookup_class_profile;
	/* read only: the lookup takes it as the callbacks' void * */
	s->class_profile_arg = (void *)ctx;
	s->measure_multinode = ctx->cfg.profiler && ctx->cfg.measure_predicted;
	s->max_tasks = ctx->cfg.max_tasks;
	if (!s->measure_multinode && !said_multinode) {
		said_multinode = 1;
		info("sched/saturn: predicted options on several nodes are left out of the plans: they cannot be measured (%s)",
		     ctx->cfg.profiler ? "saturn_measure_predicted=no" : "no saturn_profiler");
	}
	xrecalloc(*snap_of_node_p, node_record_count ? node_record_count : 1, sizeof(int));
	snap_of_node = *snap_of_node_p;
	for (int i = 0; i < node_record_count; i++)
		snap_of_node[i] = -1;
	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		saturn_snap_node_t *n;
		int g;

		if (IS_NODE_DOWN(node_ptr) || IS_NODE_DRAIN(node_ptr) ||
		    IS_NODE_FUTURE(node_ptr) || IS_NODE_NO_RESPOND(node_ptr))
			continue;
		g = node_gpus(node_ptr);
		if (g <= 0)
			continue;
		if (!(n = saturn_snapshot_add_node(s)))
			return -1;
		snprintf(n->name, sizeof(n->name), "%s", node_ptr->name);
		n->gpus = g;
		node_hw(node_ptr, n);
		snap_of_node[node_ptr->index] = s->nnodes - 1;
	}

	gpu_pos = saturn_prio_lock(); /* once for all jobs, not per job */
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		const char *batch;
		saturn_snap_job_t *j;

		/* ended jobs (MinJobAge keeps thousands): not searched */
		if (!IS_JOB_RUNNING(job_ptr) && !IS_JOB_SUSPENDED(job_ptr) &&
		    !IS_JOB_PENDING(job_ptr))
			continue;
		batch = job_batch(job_ptr);
		if (IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) {
			if (!batch) {
				struct busy_ctx c = {s, (double)job_ptr->end_time, 0};

				job_gpu_masks(job_ptr, snap_of_node, add_busy, &c);
				if (c.failed)
					goto nomem;
			} else {
				struct gang_acc a = {.s = s, .until = (double)job_ptr->end_time};

				/* part_mask 0: pinned to its nodes anyway */
				if (!(j = add_job(s, job_ptr, batch, 0, gpu_pos)))
					goto nomem;
				nsaturn++;
				j->task_id = job_ptr->array_task_id == NO_VAL ? -1 : (int)job_ptr->array_task_id;
				j->state = SATURN_SNAP_RUNNING;
				j->start_time = (double)job_ptr->start_time;
				job_gpu_masks(job_ptr, snap_of_node, take_all, &a);
				if (set_running_nodes(s, j, &a) < 0)
					goto nomem;
				running_fields(j, job_ptr);
				j->overran = env_num(job_ptr->details, SATURN_OVERRAN_ENV) > 0;
			}
			continue;
		}
		if (!batch || !IS_JOB_PENDING(job_ptr) || !job_ptr->details)
			continue;
		if (job_ptr->priority == 0 && job_ptr->state_reason != WAIT_HELD &&
		    !exit_held(job_ptr))
			continue; /* held by the user (or failed): not ours to release */
		part_mask = job_part_mask(&sp, job_ptr, part_never, sizeof(part_never));
		if (job_ptr->array_recs && job_ptr->array_recs->task_id_bitmap) {
			bitstr_t *b = job_ptr->array_recs->task_id_bitmap;
			int first = -1, last = bit_fls(b);

			for (int t = bit_ffs(b); t >= 0 && t <= last; t++) { /* not to bit_size */
				if (!bit_test(b, t))
					continue;
				if (first >= 0) {
					/* unsplit tasks share the meta record's fields */
					if (!(j = saturn_snapshot_add_job_copy(s, first)))
						goto nomem;
					j->task_id = t;
					nsaturn++;
					continue;
				}
				if (!(j = add_job(s, job_ptr, batch, part_mask, gpu_pos)))
					goto nomem;
				nsaturn++;
				j->task_id = t;
				j->state = job_ptr->priority == 0 && !exit_held(job_ptr) ?
						   SATURN_SNAP_HELD : SATURN_SNAP_RELEASED;
				j->node = -1;
				pending_fields(snap_of_node, j, job_ptr);
				pending_never(j, job_ptr, part_never);
				first = s->njobs - 1;
			}
			continue;
		}
		if (!(j = add_job(s, job_ptr, batch, part_mask, gpu_pos)))
			goto nomem;
		nsaturn++;
		j->task_id = job_ptr->array_task_id == NO_VAL ? -1 : (int)job_ptr->array_task_id;
		/* an exit-held task counts as released: ours to re-hold */
		j->state = job_ptr->priority == 0 && !exit_held(job_ptr) ? SATURN_SNAP_HELD :
									   SATURN_SNAP_RELEASED;
		j->node = -1;
		pending_fields(snap_of_node, j, job_ptr);
		pending_never(j, job_ptr, part_never);
	}
	list_iterator_destroy(it);
	saturn_prio_unlock();
	/* each usable node: the partitions (of Saturn jobs) containing it that
	 * start jobs (a DOWN or INACTIVE partition's jobs wait: they get no
	 * node, so they are left held with the reason saying so) */
	for (int i = 0; i < node_record_count; i++) {
		if (snap_of_node[i] < 0)
			continue;
		for (int k = 0; k < sp.n; k++)
			if ((sp.ptr[k]->state_up & PARTITION_SCHED) && sp.ptr[k]->node_bitmap &&
			    i < bit_size(sp.ptr[k]->node_bitmap) &&
			    bit_test(sp.ptr[k]->node_bitmap, i))
				s->nodes[snap_of_node[i]].part_mask |= 1ULL << k;
	}
	return nsaturn;
nomem:
	list_iterator_destroy(it);
	saturn_prio_unlock();
	return -1;
}
