/* cycle_fixture.h - the fillers and builders of test_cycle_record.c: a
 * snapshot, a state, a plan, a tape and outputs with every field set to a
 * distinct non-zero value, and a recorded cycle of them all. */
#ifndef SATURN_CYCLE_FIXTURE_H
#define SATURN_CYCLE_FIXTURE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle_record.h"

#define SETS(buf, ...) (memset((buf), 0, sizeof(buf)), snprintf((buf), sizeof(buf), __VA_ARGS__))
#define NNODES 20

/* --- fillers: every field, distinct, non-zero --------------------------- */

static void fill_job(void *p, int k)
{
	saturn_snap_job_t *j = p;
	int v = 1000 * (k + 1);

	j->job_id = 4000000000u + (uint32_t)v;
	j->array_job_id = (uint32_t)v + 2;
	j->task_id = v + 3;
	SETS(j->batch, "batch-%d-%s", k,
	     k == 0 ? "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" : "");
	j->uid = v + 4;
	j->state = k % 2 ? SATURN_SNAP_RELEASED : SATURN_SNAP_RUNNING;
	j->req_gpus = v + 5;
	j->time_limit_s = v + 6.1;
	j->submit_time = 1.7e9 + v + 0.3;
	j->start_time = 1.7e9 + v + 0.7;
	j->node = 1 + k;
	j->gpu_mask = 0x8000000000000000ull | (uint64_t)(v + 9);
	SETS(j->technique, "tech%d", k);
	j->gpus = v + 10;
	j->batches_left = v + 11.5;
	j->batches_done = v + 12.25;
	j->progress_spb = 0.1 * (v + 13);
	j->progress_updated = 1.7e9 + v + 14.1;
	j->obs_spb = 0.1 * (v + 15);
	j->prior_spb = 0.1 * (v + 16);
	j->first_report = 1.7e9 + v + 17.3;
	j->part_mask = 0x4000000000000000ull | (uint64_t)(v + 18);
	SETS(j->pinned, "node-%d", k);
	SETS(j->pinned_state, "down-%d", k);
	j->planned = v + 19;
	j->requeued = v + 20;
	j->exit_held = v + 21;
	j->begin_time = 1.7e9 + v + 22.9;
	j->not_before = 1.7e9 + v + 23.9;
	j->reconfigure = -1;
	j->requeue = v + 24;
	j->restarts = v + 25;
	j->req_nodes = v + 26;
	j->nnodes = SATURN_SNAP_MAX_NODES;
	for (int i = 0; i < SATURN_SNAP_MAX_NODES - 1; i++) {
		j->more_node[i] = 1 + (i + k) % (NNODES - 1);
		j->more_mask[i] = (1ull << ((i + k) % 64)) | 0x10000ull * (uint64_t)(i + 1);
	}
	j->part_max_nodes = v + 27;
	j->max_job_gpus = v + 28;
	j->max_node_gpus = v + 29;
	j->max_job_nodes = v + 30;
	SETS(j->gpu_type, "a100-%d", k);
	/* a name at its limit is kept whole */
	memset(j->constraint, 0, sizeof(j->constraint));
	memset(j->constraint, 'c', SATURN_CONSTRAINT_MAX);
	j->constraint[0] = (char)('A' + k);
	j->constraint_bad = v + 31;
	j->prio = v + 32.5;
	for (int i = 0; i < SATURN_SNAP_LIMITS; i++) {
		j->limits[i].key = 0xf000000000000000ull + (uint64_t)(v + i);
		j->limits[i].max_gpus = v + 40 + i;
		j->limits[i].max_jobs = v + 50 + i;
		j->limits[i].used_gpus = v + 60 + i;
		j->limits[i].used_jobs = v + 70 + i;
	}
	j->released_at = 1.7e9 + v + 33.3;
	j->bounces = v + 34;
	j->overran = v + 35;
	SETS(j->never, "PartitionTimeLimit: job %d \"quoted\"\n", k);
	j->excused = v + 36;
	j->charged_from = 1.7e9 + v + 37.7;
	j->requeued_at = 1.7e9 + v + 38.8;
}

static void fill_node(void *p, int k)
{
	saturn_snap_node_t *n = p;

	SETS(n->name, "gpu-node-%02d", k);
	n->gpus = 1 + k % SATURN_MAX_GPUS_PER_NODE;
	n->part_mask = 0x2000000000000000ull | (uint64_t)(k + 1);
	SETS(n->gpu_types, "a100,h100-%d", k);
	SETS(n->link, "nvl%d", k);
	SETS(n->features, "f%d,ib,big", k);
	SETS(n->klass, "class-%d", k);
}

static void fill_busy(void *p, int k)
{
	saturn_snap_busy_t *b = p;

	b->node = 1 + k;
	b->gpu_mask = 0x8000000000000001ull << (k % 2);
	b->until = 1.7e9 + 0.1 * (k + 1);
}

static void fill_corr(void *p, int k)
{
	saturn_fb_corr_t *c = p;

	c->key.uid = 1000 + k;
	SETS(c->key.batch, "sweep-%d", k);
	SETS(c->key.signature, "gpt2/bs%d", 8 + k);
	SETS(c->key.technique, "fsdp%d", k);
	c->key.gpus = 2 + k;
	SETS(c->key.klass, "h100x%d", k);
	c->ratio = 1.3 + 0.1 * k;
	c->batches = 20.5 + k;
	c->updated = 1.7e9 + 0.3 * (k + 1);
}

static void fill_fbjob(void *p, int k)
{
	saturn_fb_job_t *j = p;

	j->job_id = 3000000000u + (uint32_t)k;
	j->first_done = 3.5 + k;
	j->first_updated = 1.7e9 + 1.1 * (k + 1);
	j->last_updated = 1.7e9 + 2.2 * (k + 1);
	j->spb = 0.37 + k;
	j->seen = 1 + k;
}

/* The bytes of a size-byte struct that fill leaves alone. */
static size_t fill_covers(size_t size, void (*fill)(void *, int))
{
	unsigned char *a = malloc(size), *b = malloc(size);
	size_t left = 0;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	memset(a, 0, size);
	memset(b, 0xff, size);
	fill(a, 0);
	fill(b, 0);
	for (size_t i = 0; i < size; i++)
		left += a[i] != b[i];
	free(a);
	free(b);
	return left;
}

/* --- builders --------------------------------------------------------- */

static saturn_snapshot_t *full_snapshot(void)
{
	saturn_snapshot_t *s = saturn_snapshot_create();

	ck_assert_ptr_nonnull(s);
	s->now = 1.7e9 + 0.123;
	s->max_tasks = 5000;
	s->measure_multinode = 1;
	for (int k = 0; k < NNODES; k++)
		fill_node(saturn_snapshot_add_node(s), k);
	for (int k = 0; k < 3; k++)
		fill_busy(saturn_snapshot_add_busy(s), k);
	for (int k = 0; k < 4; k++)
		fill_job(saturn_snapshot_add_job(s), k);
	return s;
}

static void snapshot_eq(const saturn_snapshot_t *a, const saturn_snapshot_t *b)
{
	ck_assert(a->now == b->now);
	ck_assert_int_eq(a->max_tasks, b->max_tasks);
	ck_assert_int_eq(a->measure_multinode, b->measure_multinode);
	ck_assert_int_eq(a->nnodes, b->nnodes);
	ck_assert_int_eq(a->nbusy, b->nbusy);
	ck_assert_int_eq(a->njobs, b->njobs);
	for (int i = 0; i < a->nnodes; i++)
		ck_assert_msg(!memcmp(&a->nodes[i], &b->nodes[i], sizeof(a->nodes[i])), "node %d",
			      i);
	for (int i = 0; i < a->nbusy; i++)
		ck_assert_msg(!memcmp(&a->busy[i], &b->busy[i], sizeof(a->busy[i])), "busy %d", i);
	for (int i = 0; i < a->njobs; i++)
		ck_assert_msg(!memcmp(&a->jobs[i], &b->jobs[i], sizeof(a->jobs[i])), "job %d", i);
}

static char *xstrdup(const char *s)
{
	char *c = strdup(s);

	ck_assert_ptr_nonnull(c);
	return c;
}

/* A plan of two entries, the second on two nodes, with its indices. */
static saturn_plan_t *make_plan(double makespan)
{
	saturn_plan_t *p = saturn_plan_create(2);
	saturn_assign_t *a;

	ck_assert_ptr_nonnull(p);
	p->makespan_s = makespan;
	p->lower_bound_s = makespan - 0.3;
	p->solve_s = 0.77;
	snprintf(p->method, sizeof(p->method), "anneal");
	snprintf(p->status, sizeof(p->status), "good-enough");
	a = &p->assign[0];
	a->task_id = xstrdup("17_3");
	a->technique = xstrdup("fsdp");
	a->node_name = xstrdup("gpu-node-01");
	a->task = 0;
	a->option = 5;
	a->node = 1;
	a->gpus = 2;
	a->gpu_ids = calloc(2, sizeof(int));
	a->gpu_ids[0] = 2;
	a->gpu_ids[1] = 3;
	a->start_s = 12.5;
	a->end_s = makespan - 1.1;
	a->nnodes = 1;
	a = &p->assign[1];
	a->task_id = xstrdup("17_4");
	a->technique = xstrdup("ddp");
	a->node_name = xstrdup("gpu-node-02");
	a->task = 1;
	a->option = 7;
	a->node = 2;
	a->gpus = 1;
	a->gpu_ids = calloc(2, sizeof(int));
	a->gpu_ids[0] = 0;
	a->gpu_ids[1] = 4;
	a->start_s = 0.1;
	a->end_s = makespan;
	a->nnodes = 2;
	a->more_nodes = calloc(1, sizeof(int));
	a->more_names = calloc(1, sizeof(char *));
	a->more_nodes[0] = 3;
	a->more_names[0] = xstrdup("gpu-node-03");
	return p;
}

static void plan_eq(const saturn_plan_t *a, const saturn_plan_t *b)
{
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert(a->makespan_s == b->makespan_s);
	ck_assert(a->lower_bound_s == b->lower_bound_s);
	ck_assert(a->solve_s == b->solve_s);
	ck_assert_str_eq(a->method, b->method);
	ck_assert_str_eq(a->status, b->status);
	ck_assert_int_eq(a->nassign, b->nassign);
	for (int i = 0; i < a->nassign; i++) {
		const saturn_assign_t *x = &a->assign[i], *y = &b->assign[i];
		int k = saturn_assign_nnodes(x);

		ck_assert_str_eq(x->task_id, y->task_id);
		ck_assert_str_eq(x->technique, y->technique);
		ck_assert_str_eq(x->node_name, y->node_name);
		ck_assert_int_eq(x->task, y->task);
		ck_assert_int_eq(x->option, y->option);
		ck_assert_int_eq(x->node, y->node);
		ck_assert_int_eq(x->gpus, y->gpus);
		ck_assert(x->start_s == y->start_s);
		ck_assert(x->end_s == y->end_s);
		ck_assert_int_eq(k, saturn_assign_nnodes(y));
		ck_assert(!memcmp(x->gpu_ids, y->gpu_ids, sizeof(int) * (size_t)(x->gpus * k)));
		for (int j = 0; j + 1 < k; j++) {
			ck_assert_int_eq(x->more_nodes[j], y->more_nodes[j]);
			ck_assert_str_eq(x->more_names[j], y->more_names[j]);
		}
	}
}

static saturn_fb_t *make_fb(void)
{
	saturn_fb_t *fb = saturn_fb_create();

	ck_assert_ptr_nonnull(fb);
	fb->corr = calloc(2, sizeof(*fb->corr));
	fb->jobs = calloc(3, sizeof(*fb->jobs));
	fb->cap_corr = fb->ncorr = 2;
	fb->cap_jobs = fb->njobs = 3;
	for (int k = 0; k < 2; k++)
		fill_corr(&fb->corr[k], k);
	for (int k = 0; k < 3; k++)
		fill_fbjob(&fb->jobs[k], k);
	return fb;
}

static void make_state(saturn_cycle_state_t *st, unsigned long seq)
{
	memset(st, 0, sizeof(*st));
	st->plan = make_plan(3600.25);
	snprintf(st->plan_id, sizeof(st->plan_id), "p1700000000-%lu", seq);
	st->plan_seq = seq;
	st->plan_now = 1.7e9 + 0.5;
	st->made_now = 1.7e9 - 9.75;
	st->made_makespan = 4000.125;
	st->solve_due = 1;
	st->feedback = make_fb();
}

static void state_eq(const saturn_cycle_state_t *a, const saturn_cycle_state_t *b)
{
	plan_eq(a->plan, b->plan);
	ck_assert_str_eq(a->plan_id, b->plan_id);
	ck_assert_uint_eq(a->plan_seq, b->plan_seq);
	ck_assert(a->plan_now == b->plan_now);
	ck_assert(a->made_now == b->made_now);
	ck_assert(a->made_makespan == b->made_makespan);
	ck_assert_int_eq(a->solve_due, b->solve_due);
	ck_assert_ptr_nonnull(b->feedback);
	ck_assert_int_eq(a->feedback->ncorr, b->feedback->ncorr);
	ck_assert_int_eq(a->feedback->njobs, b->feedback->njobs);
	ck_assert(!memcmp(a->feedback->corr, b->feedback->corr,
			  sizeof(saturn_fb_corr_t) * (size_t)a->feedback->ncorr));
	ck_assert(!memcmp(a->feedback->jobs, b->feedback->jobs,
			  sizeof(saturn_fb_job_t) * (size_t)a->feedback->njobs));
}

static void fill_decision(saturn_decision_t *d, int k)
{
	memset(d, 0, sizeof(*d));
	d->job = 1 + k;
	d->release = 1;
	SETS(d->node, "gpu-node-%02d", k);
	d->gpus = 4 + k;
	SETS(d->technique, "fsdp%d", k);
	d->start_s = 0.1 + k;
	SETS(d->reason, "saturn: starts in ~%dm on n%d", k + 2, k);
	d->nnodes = 2 + k;
	d->assign = 5 + k;
	SETS(d->gpu_type, "h100-%d", k);
	SETS(d->klass, "h100x8-nvlink-%d", k);
}

/* Outputs with every field set (what saturn_cycle_run would fill). */
static void make_out(saturn_cycle_out_t *out)
{
	static char reasons[1][128] = {"saturn: no usable GPU node"};
	static int skipped[1] = {3};

	memset(out, 0, sizeof(*out));
	out->kind = SATURN_CYCLE_NEW;
	snprintf(out->plan_id, sizeof(out->plan_id), "p1700000000-8");
	out->nd = 3;
	out->d = calloc(3, sizeof(*out->d));
	for (int k = 0; k < 3; k++)
		fill_decision(&out->d[k], k);
	out->reconf.ncandidates = 2;
	out->reconf.nchoices = 1;
	out->reconf.choices = calloc(1, sizeof(*out->reconf.choices));
	out->reconf.choices[0] = (saturn_reconfig_choice_t){.job = 2,
							    .task = 1,
							    .node = "gpu-node-04",
							    .gpus = 8,
							    .technique = "ddp",
							    .start_s = 151.5,
							    .old_end_s = 9000.1,
							    .new_end_s = 7000.3};
	out->reconf.old_makespan_s = 9100.7;
	out->reconf.new_makespan_s = 7100.9;
	out->reconf.gain_s = 1999.8;
	out->reconf.old_value = 0.3;
	out->reconf.new_value = 0.2;
	snprintf(out->reconf.why, sizeof(out->reconf.why), "gain 12s below the margin 60s");
	out->next_due_s = 42.5;
	out->solve_s = 1.25;
	out->built = 1;
	out->build.nskipped = 1;
	out->build.skipped = skipped;
	out->build.skip_reason = reasons;
	out->nlog = out->cap_log = 2;
	out->log = calloc(2, sizeof(*out->log));
	out->log[0] =
	    (saturn_cycle_log_t){SATURN_CYCLE_INFO, xstrdup("plan p1700000000-8: 3 tasks")};
	out->log[1] = (saturn_cycle_log_t){SATURN_CYCLE_DEBUG2, xstrdup("a line with \"quotes\"")};
}

static void free_out(saturn_cycle_out_t *out)
{
	free(out->d);
	free(out->reconf.choices);
	for (int i = 0; i < out->nlog; i++)
		free(out->log[i].text);
	free(out->log);
}

static const char profile_text[] =
    "{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1.5,"
    " \"tasks\": [ {\"signature\": \"m/bs8\", \"task_ids\": \"0-5\", \"batches\": 100,"
    " \"options\": ["
    "  {\"technique\": \"single\", \"gpus\": 1, \"sec_per_batch\": 1.1, \"status\": \"measured\"},"
    "  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.55, \"status\": \"predicted\"}"
    " ] } ] }";

static saturn_profile_t *make_profile(void)
{
	saturn_error_t err = {{0}};
	saturn_profile_t *p = saturn_profile_parse(profile_text, strlen(profile_text), &err);

	ck_assert_msg(p != NULL, "%s", err.text);
	return p;
}

/* Everything a recorded cycle holds. */
typedef struct fixture {
	saturn_snapshot_t *snap;
	saturn_profset_t ps;
	saturn_cycle_state_t st_in, st_out;
	saturn_plan_tape_t tape;
	saturn_cycle_out_t out;
	saturn_cycle_in_t in;
	char *doc;
} fixture_t;

static void fixture_make(fixture_t *f)
{
	saturn_cycle_capture_t cap = {0};

	memset(f, 0, sizeof(*f));
	f->snap = full_snapshot();
	f->ps.owns = 1;
	ck_assert_int_eq(saturn_profset_add(&f->ps, 1001, "sweep", "", make_profile()), 0);
	ck_assert_int_eq(saturn_profset_add(&f->ps, 1001, "sweep", "h100x8", make_profile()), 0);
	ck_assert_int_eq(saturn_profset_add(&f->ps, 1002, "other", NULL, NULL), 0);
	make_state(&f->st_in, 7);
	make_state(&f->st_out, 8);
	f->tape.mode = SATURN_TAPE_RECORD;
	{
		saturn_plan_t *p1 = make_plan(100.5), *p2 = make_plan(90.25);

		ck_assert_int_eq(saturn_plan_tape_push(&f->tape, p1), 0);
		ck_assert_int_eq(saturn_plan_tape_push(&f->tape, NULL), 0);
		ck_assert_int_eq(saturn_plan_tape_push(&f->tape, p2), 0);
		saturn_plan_destroy(p1);
		saturn_plan_destroy(p2);
	}
	make_out(&f->out);
	f->in.snap = f->snap;
	f->in.profiles = &f->ps;
	f->in.requeue_ok = 1;
	f->in.tape = &f->tape;
	ck_assert_int_eq(saturn_cycle_capture(&cap, &f->in, &f->st_in), 0);
	f->doc = saturn_cycle_record_to_json(12, "saturn_interval=5,saturn_min_gain=0.1", 121.5,
					     &f->in, &cap, &f->tape, &f->out, &f->st_out);
	ck_assert_ptr_nonnull(f->doc);
	saturn_cycle_capture_free(&cap);
}

static void fixture_free(fixture_t *f)
{
	saturn_snapshot_destroy(f->snap);
	saturn_profset_free(&f->ps);
	saturn_cycle_record_state_clear(&f->st_in);
	saturn_cycle_record_state_clear(&f->st_out);
	saturn_plan_tape_free(&f->tape);
	free_out(&f->out);
	free(f->doc);
}

#endif /* SATURN_CYCLE_FIXTURE_H */
