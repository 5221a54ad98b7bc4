/* test_sched_multinode.c - sched/saturn's Slurm-free side of tasks that
 * span several nodes: profile options with "nodes", the user's --nodes=k
 * rule, running tasks pinned on every node, decisions naming every node,
 * the persisted state that `saturn status` draws, and the users' limits'
 * relist with gangs (and the option it lists a task over its cap on). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairness.h"
#include "feedback.h"
#include "multiuser.h"
#include "planner.h"
#include "profile.h"
#include "sched_core.h"

#include "sched_fixture.h"

/* tasks 0-1: ddp on 1 node x 4 GPUs (measured), ddp on 2 nodes x 4 GPUs
 * (measured, faster), fsdp on 2 nodes x 2 (predicted: left out unless it
 * can be measured on 2 nodes) */
static const char profile_text[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"mn\", \"created\": 1,"
	" \"tasks\": [ {\"signature\": \"m/bs8\", \"task_ids\": \"0-3\", \"batches\": 100,"
	" \"options\": ["
	"  {\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 1.0, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 4, \"nodes\": 2, \"sec_per_batch\": 0.55, \"status\": \"measured\"},"
	"  {\"technique\": \"fsdp\", \"gpus\": 2, \"nodes\": 2, \"sec_per_batch\": 0.5, \"status\": \"predicted\"} ] } ] }";

static const saturn_profile_t *lookup(const char *batch, long uid, void *arg)
{
	(void)uid;
	return strcmp(batch, "mn") ? NULL : arg;
}

/* nnodes nodes of 4 GPUs, n held tasks of batch `batch` asking for 1 GPU
 * on req_nodes nodes. */
static saturn_snapshot_t *cluster(int nnodes, int n, const char *batch, int req_nodes)
{
	saturn_snapshot_t *s = saturn_snapshot_create();

	ck_assert_ptr_nonnull(s);
	s->now = 1000;
	for (int k = 0; k < nnodes; k++) {
		saturn_snap_node_t *node = saturn_snapshot_add_node(s);

		snprintf(node->name, sizeof(node->name), "n%d", k + 1);
		node->gpus = 4;
	}
	for (int i = 0; i < n; i++) {
		saturn_snap_job_t *j = saturn_snapshot_add_job(s);

		j->job_id = 7;
		j->array_job_id = 7;
		j->task_id = i;
		snprintf(j->batch, sizeof(j->batch), "%s", batch);
		j->state = SATURN_SNAP_HELD;
		j->req_gpus = 1;
		j->req_nodes = req_nodes;
		j->time_limit_s = 600;
		j->submit_time = 900;
	}
	return s;
}

static saturn_profile_t *profile(void)
{
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);

	ck_assert_msg(pr != NULL, "%s", err.text);
	return pr;
}

START_TEST(test_profile_nodes_roundtrip)
{
	saturn_profile_t *pr = profile(), *again;
	saturn_error_t err = {{0}};
	saturn_option_t *o = NULL;
	char *text;
	int n;

	ck_assert_int_eq(pr->tasks[0].noptions, 3);
	ck_assert_int_eq(saturn_profile_option_nodes(&pr->tasks[0].options[0]), 1);
	ck_assert_int_eq(pr->tasks[0].options[1].nodes, 2);
	n = saturn_profile_options(&pr->tasks[0], &o);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(saturn_option_nodes(&o[0]), 1);
	ck_assert_int_eq(o[1].nodes, 2);
	for (int i = 0; i < n; i++)
		saturn_option_clear(&o[i]);
	free(o);
	text = saturn_profile_to_json(pr);
	ck_assert_ptr_nonnull(text);
	again = saturn_profile_parse(text, strlen(text), &err);
	ck_assert_msg(again != NULL, "%s", err.text);
	ck_assert_int_eq(again->tasks[0].options[1].nodes, 2);
	ck_assert_int_eq(saturn_profile_option_nodes(&again->tasks[0].options[0]), 1);
	free(text);
	saturn_profile_destroy(again);
	saturn_profile_destroy(pr);
}
END_TEST

static const struct bad_profile {
	const char *opt;
	const char *expect;
} bad_profiles[] = {
	{"{\"technique\": \"ddp\", \"gpus\": 4, \"nodes\": 0, \"sec_per_batch\": 1, \"status\": \"measured\"}", "nodes"},
	{"{\"technique\": \"ddp\", \"gpus\": 4, \"nodes\": 257, \"sec_per_batch\": 1, \"status\": \"measured\"}", "nodes"},
	{"{\"technique\": \"ddp\", \"gpus\": 4, \"nodes\": \"2\", \"sec_per_batch\": 1, \"status\": \"measured\"}", "nodes"},
	{"{\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 1, \"status\": \"measured\"},"
	 "{\"technique\": \"ddp\", \"gpus\": 4, \"nodes\": 1, \"sec_per_batch\": 1, \"status\": \"measured\"}", "listed twice"},
};

START_TEST(test_profile_nodes_bad)
{
	char text[1024];
	saturn_error_t err = {{0}};
	saturn_profile_t *pr;

	snprintf(text, sizeof(text),
		 "{\"format\": \"saturn-profile/1\", \"batch\": \"mn\", \"created\": 1, \"tasks\": ["
		 " {\"signature\": \"s\", \"task_ids\": \"0\", \"batches\": 1, \"options\": [%s] } ] }",
		 bad_profiles[_i].opt);
	pr = saturn_profile_parse(text, strlen(text), &err);
	ck_assert_ptr_null(pr);
	ck_assert_msg(strstr(err.text, bad_profiles[_i].expect), "'%s' lacks '%s'", err.text,
		      bad_profiles[_i].expect);
}
END_TEST

/* The options a held task gets: all measured ones for --nodes=1, only the
 * two-node one for --nodes=2, the predicted two-node one only when it can
 * be measured (measure_multinode); a user
 * request of 3 nodes without a profile is one option on 3 nodes. */
START_TEST(test_build_options)
{
	saturn_profile_t *pr = profile();
	saturn_error_t err = {{0}};
	saturn_sched_build_t b;
	saturn_snapshot_t *s;

	s = cluster(4, 1, "mn", 1);
	ck_assert_int_eq(saturn_sched_build(s, lookup, pr, &b, &err), 0);
	ck_assert_int_eq(b.problem->tasks[0].noptions, 2);
	ck_assert_int_eq(saturn_option_nodes(&b.problem->tasks[0].options[0]), 1);
	ck_assert_int_eq(b.problem->tasks[0].options[1].nodes, 2);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);

	s = cluster(4, 1, "mn", 2);
	ck_assert_int_eq(saturn_sched_build(s, lookup, pr, &b, &err), 0);
	ck_assert_int_eq(b.problem->tasks[0].noptions, 1);
	ck_assert_int_eq(b.problem->tasks[0].options[0].nodes, 2);
	ck_assert_str_eq(b.problem->tasks[0].options[0].technique, "ddp");
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);

	/* partitions of at most 1 node a job: the two-node option is left out */
	s = cluster(4, 1, "mn", 1);
	s->jobs[0].part_max_nodes = 1;
	ck_assert_int_eq(saturn_sched_build(s, lookup, pr, &b, &err), 0);
	ck_assert_int_eq(b.problem->tasks[0].noptions, 1);
	ck_assert_int_eq(saturn_option_nodes(&b.problem->tasks[0].options[0]), 1);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);

	/* per-job QOS/association limits (Slurm checks them only when it
	 * starts the job, never on the controller's release): an option
	 * beyond them would be released and never start */
	for (int lim = 0; lim < 2; lim++) {
		s = cluster(4, 1, "mn", 1);
		if (lim == 0)
			s->jobs[0].max_job_gpus = 4; /* 2 x 4 GPUs is 8 */
		else
			s->jobs[0].max_job_nodes = 1;
		ck_assert_int_eq(saturn_sched_build(s, lookup, pr, &b, &err), 0);
		ck_assert_int_eq(b.problem->tasks[0].noptions, 1);
		ck_assert_int_eq(saturn_option_nodes(&b.problem->tasks[0].options[0]), 1);
		ck_assert_int_eq(b.problem->tasks[0].options[0].gpus, 4);
		saturn_sched_build_free(&b);
		saturn_snapshot_destroy(s);
	}
	/* at most 2 GPUs per node: no profile option fits, the user's 1 GPU */
	s = cluster(4, 1, "mn", 1);
	s->jobs[0].max_node_gpus = 2;
	ck_assert_int_eq(saturn_sched_build(s, lookup, pr, &b, &err), 0);
	ck_assert_int_eq(b.problem->tasks[0].noptions, 1);
	ck_assert_str_eq(b.problem->tasks[0].options[0].technique, "user");
	ck_assert_int_eq(b.problem->tasks[0].options[0].gpus, 1);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
	/* measurable (saturn_measure_predicted with saturn_profiler): the
	 * predicted two-node fsdp joins the measured options; with --nodes=2
	 * too */
	s = cluster(4, 1, "mn", 1);
	s->measure_multinode = 1;
	ck_assert_int_eq(saturn_sched_build(s, lookup, pr, &b, &err), 0);
	ck_assert_int_eq(b.problem->tasks[0].noptions, 3);
	ck_assert_str_eq(b.problem->tasks[0].options[2].technique, "fsdp");
	ck_assert_int_eq(b.problem->tasks[0].options[2].nodes, 2);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
	s = cluster(4, 1, "mn", 2);
	s->measure_multinode = 1;
	ck_assert_int_eq(saturn_sched_build(s, lookup, pr, &b, &err), 0);
	ck_assert_int_eq(b.problem->tasks[0].noptions, 2);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);

	/* --nodes=3: no profile option spans 3: the user's own request */
	s = cluster(4, 1, "mn", 3);
	ck_assert_int_eq(saturn_sched_build(s, lookup, pr, &b, &err), 0);
	ck_assert_int_eq(b.problem->tasks[0].noptions, 1);
	ck_assert_str_eq(b.problem->tasks[0].options[0].technique, "user");
	ck_assert_int_eq(b.problem->tasks[0].options[0].nodes, 3);
	ck_assert_int_eq(b.problem->tasks[0].options[0].gpus, 1);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);

	/* more nodes than the cluster has: skipped with a reason */
	s = cluster(2, 2, "other", 1);
	s->jobs[1].req_nodes = 3;
	ck_assert_int_eq(saturn_sched_build(s, lookup, pr, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 1);
	ck_assert_int_eq(b.nskipped, 1);
	ck_assert_msg(strstr(b.skip_reason[0], "needs 3 nodes with 1 GPUs each"), "%s", b.skip_reason[0]);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
	saturn_profile_destroy(pr);
}
END_TEST

/* A plan of two-node tasks: decisions name both nodes, the held one's
 * reason says "2 nodes", the state file lists both nodes with the GPU ids
 * of each and reads back. */
START_TEST(test_decide_and_state)
{
	saturn_snapshot_t *s = cluster(2, 2, "other", 2);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;
	saturn_decision_t *d;
	saturn_sched_state_t *st;
	char *json;
	int nd;

	s->jobs[0].req_gpus = s->jobs[1].req_gpus = 4;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	nd = saturn_sched_decide(s, &b, plan, 5, &d);
	ck_assert_int_eq(nd, 2);
	for (int i = 0; i < nd; i++) {
		char list[2 * (SATURN_NODE_NAME_MAX + 1) + 1], tiny[4];

		ck_assert_int_eq(d[i].nnodes, 2);
		ck_assert_int_eq(d[i].gpus, 4);
		ck_assert_int_eq(saturn_sched_nodelist(plan, &d[i], list, sizeof(list)), 0);
		ck_assert_msg(!strcmp(list, "n1,n2") || !strcmp(list, "n2,n1"), "%s", list);
		/* too small a buffer, or a plan it was not decided from: refused */
		ck_assert_int_eq(saturn_sched_nodelist(plan, &d[i], tiny, sizeof(tiny)), -1);
		ck_assert_str_eq(tiny, "");
		d[i].nnodes = 1;
		ck_assert_int_eq(saturn_sched_nodelist(plan, &d[i], list, sizeof(list)), -1);
		d[i].nnodes = 2;
	}
	ck_assert_int_eq(d[0].release + d[1].release, 1);
	for (int i = 0; i < nd; i++)
		if (!d[i].release)
			ck_assert_msg(strstr(d[i].reason, "on 2 nodes (n") &&
					      strstr(d[i].reason, ", 4 GPUs per node, user"),
				      "%s", d[i].reason);
	json = saturn_sched_state_to_json(s, &b, plan, "p1", 1000);
	ck_assert_ptr_nonnull(json);
	st = saturn_sched_state_parse(json, strlen(json), &err);
	ck_assert_msg(st != NULL, "%s", err.text);
	ck_assert_int_eq(st->ntasks, 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(st->tasks[i].nnodes, 2);
		ck_assert_int_eq(st->tasks[i].gpus, 4);
		ck_assert_ptr_nonnull(st->tasks[i].more_nodes);
		ck_assert_str_ne(st->tasks[i].more_nodes[0], st->tasks[i].node);
		ck_assert_ptr_nonnull(st->tasks[i].gpu_ids);
		ck_assert_int_eq(st->tasks[i].gpu_ids[4], 0); /* second node's first id */
	}
	saturn_sched_state_destroy(st);
	free(json);
	free(d);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

static const struct bad_state {
	const char *task;
	const char *expect;
} bad_states[] = {
	{"\"node\":\"n1\",\"nodes\":[\"n2\",\"n1\"],\"gpus\":1", "must repeat node"},
	{"\"node\":\"n1\",\"nodes\":[\"n1\",\"n2\"],\"gpus\":1,\"gpu_ids\":[0]", "per node on 2 nodes"},
	{"\"node\":\"n1\",\"nodes\":[\"n1\",\"n2\"],\"gpus\":2,\"gpu_ids\":[0,0,1,0]", "listed twice"},
	{"\"node\":\"n1\",\"nodes\":[\"n1\",7],\"gpus\":1", "nodes[1]"},
};

START_TEST(test_state_bad)
{
	char text[512];
	saturn_error_t err = {{0}};
	saturn_sched_state_t *st;

	snprintf(text, sizeof(text),
		 "{\"format\":\"saturn-sched-state/1\",\"plan_id\":\"p\",\"updated\":1,\"makespan_end\":2,"
		 "\"tasks\":[{\"id\":\"1\",%s,\"start\":1,\"end\":2}]}",
		 bad_states[_i].task);
	st = saturn_sched_state_parse(text, strlen(text), &err);
	ck_assert_msg(st == NULL, "accepted %s", text);
	ck_assert_msg(strstr(err.text, bad_states[_i].expect), "'%s' lacks '%s'", err.text,
		      bad_states[_i].expect);
}
END_TEST

/* A running task on two nodes is pinned on both with its ids there; the
 * held task planned next to it waits for its GPUs; GPU counts that differ
 * between its nodes are a contradiction: left out. */
START_TEST(test_running_gang)
{
	saturn_snapshot_t *s = cluster(2, 2, "other", 1);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;
	saturn_snap_job_t *r = &s->jobs[0];

	r->state = SATURN_SNAP_RUNNING;
	r->start_time = 990;
	r->node = 0;
	r->gpu_mask = 0xf;
	r->nnodes = 2;
	r->more_node[0] = 1;
	r->more_mask[0] = 0xf;
	r->gpus = 4;
	snprintf(r->technique, sizeof(r->technique), "user");
	s->jobs[1].req_gpus = 1;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 2);
	ck_assert(b.problem->tasks[0].is_running);
	ck_assert_int_eq(saturn_running_nnodes(&b.problem->tasks[0].running), 2);
	ck_assert_int_eq(saturn_running_node_at(&b.problem->tasks[0].running, 1), 1);
	ck_assert_int_eq(b.problem->tasks[0].options[0].nodes, 2);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	/* the held task starts when the running one ends (every GPU busy) */
	for (int i = 0; i < plan->nassign; i++)
		if (plan->assign[i].task == 1)
			ck_assert_double_ge(plan->assign[i].start_s, 1);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);

	r->more_mask[0] = 0x3;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.nskipped, 1);
	ck_assert_msg(strstr(b.skip_reason[0], "different GPU counts"), "%s", b.skip_reason[0]);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Runtime feedback: a running task on 2 nodes takes its prior from the
 * two-node option (0.55), not the one-node one of its technique and
 * count (1.0), and records no correction (the key has no node count):
 * the held task's one-node option keeps its profile speed. */
START_TEST(test_feedback_gang)
{
	saturn_profile_t *pr = profile();
	saturn_snapshot_t *s = cluster(4, 2, "mn", 1);
	saturn_fb_t *fb = saturn_fb_create();
	saturn_error_t err = {{0}};
	saturn_sched_build_t b;
	saturn_snap_job_t *r = &s->jobs[0];

	ck_assert_ptr_nonnull(fb);
	r->state = SATURN_SNAP_RUNNING;
	r->start_time = 900;
	r->node = 0;
	r->gpu_mask = 0xf;
	r->nnodes = 2;
	r->more_node[0] = 1;
	r->more_mask[0] = 0xf;
	r->gpus = 4;
	snprintf(r->technique, sizeof(r->technique), "ddp");
	r->batches_done = 50;
	r->batches_left = 50;
	r->progress_spb = 2.0; /* much slower than its profile */
	r->progress_updated = 999;
	ck_assert_int_eq(saturn_sched_feedback(fb, s, lookup, pr), 0);
	ck_assert_double_eq_tol(r->prior_spb, 0.55, 1e-9);
	ck_assert_int_eq(fb->ncorr, 0);
	ck_assert_int_eq(saturn_sched_build(s, lookup, pr, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 2);
	for (int t = 0; t < 2; t++)
		if (!b.problem->tasks[t].is_running)
			for (int o = 0; o < b.problem->tasks[t].noptions; o++)
				ck_assert_double_eq_tol(b.problem->tasks[t].options[o].sec_per_batch,
							saturn_option_nodes(&b.problem->tasks[t].options[o]) > 1 ? 0.55 : 1.0,
							1e-9);
	saturn_sched_build_free(&b);
	saturn_fb_destroy(fb);
	saturn_snapshot_destroy(s);
	saturn_profile_destroy(pr);
}
END_TEST

/* The users' limits on a plan with a gang: the gang is re-listed on its
 * planned nodes with the others (it was refused as a one-node task and
 * the whole step failed, reported as out of memory: a plan with users'
 * limits and a gang was never within the limits). */
START_TEST(test_limits_gang)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};
	saturn_planner_opts_t o = fx_opts(0.2);
	saturn_plan_t *plan;
	saturn_mu_t m;
	int four = 4;
	double spb = 1;

	fx_add_node(p, "n1", 4);
	fx_add_node(p, "n2", 4);
	fx_add_task(p, "big", 100, 1, &four, &spb);
	p->tasks[0].options[0].nodes = 2; /* 2 nodes x 4 GPUs */
	fx_add_task(p, "s1", 100, 1, &four, &spb);
	fx_add_task(p, "s2", 100, 1, &four, &spb);
	ck_assert_int_eq(saturn_problem_check(p, &err), 0);
	/* one user, one task at once */
	ck_assert_int_eq(saturn_mu_init(&m, 3, 1, 1, 1), 0);
	for (int t = 0; t < 3; t++)
		m.group_of_task[t][0] = 0;
	m.max_jobs[0] = 1;
	plan = saturn_planner_solve(p, &o, &err);
	ck_assert_ptr_nonnull(plan);
	ck_assert_int_eq(saturn_mu_limits_check(&m, p, plan, &err), -1);
	ck_assert_msg(saturn_mu_apply_limits(&m, p, plan, &err) == 0, "%s", err.text);
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
	ck_assert_msg(saturn_mu_limits_check(&m, p, plan, &err) == 0, "%s", err.text);
	ck_assert_int_eq(saturn_assign_nnodes(&plan->assign[0]), 2);
	ck_assert_double_eq_tol(plan->makespan_s, 300, 1e-6);
	ck_assert_msg(saturn_mu_compact(&m, p, plan, &err) == 0, "%s", err.text);
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
	saturn_plan_destroy(plan);
	saturn_mu_free(&m);
	saturn_problem_destroy(p);
}
END_TEST

/* The users' limits on a small plan set by hand (test_limits_*): task 0,
 * "big" (100 s), of a user capped at 2 GPUs, with an option a row of
 * capped_opt_t; nodes n1.. of 4 GPUs and, with t4, one more of 1 GPU of
 * class t4; the tasks added after it are in no group. */
typedef struct capped {
	saturn_problem_t *p;
	saturn_plan_t *plan;
	saturn_mu_t m;
} capped_t;

/* gpus GPUs on nodes nodes (0: one) at spb s a batch, of class t4 or any */
typedef struct capped_opt {
	int gpus, nodes;
	double spb;
	int t4;
} capped_opt_t;

static void capped_init(capped_t *c, int n4, int t4, int nopt, const capped_opt_t *opt)
{
	int gpus[4];
	double spb[4];
	char name[8];

	ck_assert_int_le(nopt, 4);
	c->p = saturn_problem_create();
	c->plan = NULL;
	for (int n = 0; n < n4 + !!t4; n++) {
		snprintf(name, sizeof(name), "n%d", n + 1);
		fx_add_node(c->p, name, n < n4 ? 4 : 1);
	}
	if (t4)
		c->p->nodes[n4].klass = strdup("t4");
	for (int o = 0; o < nopt; o++) {
		gpus[o] = opt[o].gpus;
		spb[o] = opt[o].spb;
	}
	fx_add_task(c->p, "big", 100, nopt, gpus, spb);
	for (int o = 0; o < nopt; o++) {
		c->p->tasks[0].options[o].nodes = opt[o].nodes;
		if (opt[o].t4)
			c->p->tasks[0].options[o].klass = strdup("t4");
	}
}

/* After the other tasks are added: the problem checked, big's group capped
 * at 2 GPUs, an empty plan of every task to set. */
static void capped_ready(capped_t *c)
{
	saturn_error_t err = {{0}};

	ck_assert_msg(saturn_problem_check(c->p, &err) == 0, "%s", err.text);
	ck_assert_int_eq(saturn_mu_init(&c->m, c->p->ntasks, 1, 1, 1), 0);
	c->m.group_of_task[0][0] = 0;
	c->m.max_gpus[0] = 2;
	c->plan = saturn_plan_create(c->p->ntasks);
	ck_assert_ptr_nonnull(c->plan);
}

/* The plan as set (GPU ids handed out, valid) under the users' limits:
 * over tasks counted over their caps, the plan valid and within the caps
 * after. */
static void capped_apply(capped_t *c, double makespan_s, int over)
{
	saturn_error_t err = {{0}};

	ck_assert_msg(saturn_plan_assign_gpus(c->plan, c->p, &err) == 0, "%s", err.text);
	c->plan->makespan_s = makespan_s;
	ck_assert_msg(saturn_plan_validate(c->plan, c->p, &err) == 0, "%s", err.text);
	ck_assert_int_eq(saturn_mu_apply_limits(&c->m, c->p, c->plan, &err), over);
	ck_assert_msg(saturn_plan_validate(c->plan, c->p, &err) == 0, "%s", err.text);
	ck_assert_msg(saturn_mu_limits_check(&c->m, c->p, c->plan, &err) == 0, "%s", err.text);
}

static void capped_free(capped_t *c)
{
	saturn_plan_destroy(c->plan);
	saturn_mu_free(&c->m);
	saturn_problem_destroy(c->p);
}

/* A gang whose capped group has no option within the cap to go on (3 nodes
 * x 2 GPUs: not its planned 2 nodes) stays on its own option, counted over
 * the cap, on its nodes; a later task is not listed over its GPUs (it was:
 * the gang was kept as planned holding nothing, the two overlapped and the
 * plan was refused). */
START_TEST(test_limits_gang_kept)
{
	/* the gang: 2 nodes x 4 GPUs, or 3 nodes x 2 GPUs */
	static const capped_opt_t opt[2] = {{4, 2, 1, 0}, {2, 3, 1, 0}};
	capped_t c;
	const saturn_assign_t *g, *s;
	int four = 4, gang_nodes[2] = {0, 1};
	double spb = 1;

	capped_init(&c, 3, 0, 2, opt);
	fx_add_task(c.p, "small", 100, 1, &four, &spb);
	capped_ready(&c);
	/* gang on n1 + n2 over [0, 100), small on n1 after it */
	ck_assert_int_eq(saturn_plan_set_nodes(c.plan, 0, c.p, 0, 0, gang_nodes, 0, NULL), 0);
	ck_assert_int_eq(saturn_plan_set(c.plan, 1, c.p, 1, 0, 0, 100, NULL), 0);
	capped_apply(&c, 200, 1);
	g = &c.plan->assign[0];
	s = &c.plan->assign[1];
	/* the gang as planned */
	ck_assert_int_eq(g->option, 0);
	ck_assert_int_eq(saturn_assign_nnodes(g), 2);
	ck_assert_int_eq(saturn_assign_node_at(g, 0), 0);
	ck_assert_int_eq(saturn_assign_node_at(g, 1), 1);
	ck_assert_double_eq_tol(g->start_s, 0, 1e-9);
	/* small earlier, but on the free node, not on the gang's GPUs */
	ck_assert_double_eq_tol(s->start_s, 0, 1e-9);
	ck_assert_int_eq(s->node, 2);
	capped_free(&c);
}
END_TEST

/* A one-node task whose capped group has no option within the cap that a
 * node holds (2 GPUs of class t4, whose only node has 1) stays on its own
 * option, counted over the cap; a later task is not listed over its GPUs
 * (it was: the task was kept as planned holding nothing, the two
 * overlapped on n1 and the step failed). */
START_TEST(test_limits_kept)
{
	/* big: 4 GPUs of any class, or 2 of class t4 (its node has 1) */
	static const capped_opt_t opt[2] = {{4, 0, 1, 0}, {2, 0, 1, 1}};
	capped_t c;
	const saturn_assign_t *b, *s;
	int four = 4;
	double spb = 1;

	capped_init(&c, 1, 1, 2, opt);
	fx_add_task(c.p, "small", 100, 1, &four, &spb);
	capped_ready(&c);
	/* big on n1 over [0, 100), small on n1 after it */
	ck_assert_int_eq(saturn_plan_set(c.plan, 0, c.p, 0, 0, 0, 0, NULL), 0);
	ck_assert_int_eq(saturn_plan_set(c.plan, 1, c.p, 1, 0, 0, 100, NULL), 0);
	capped_apply(&c, 200, 1);
	b = &c.plan->assign[0];
	s = &c.plan->assign[1];
	/* big as planned, small still after it (n2 is too small for it) */
	ck_assert_int_eq(b->option, 0);
	ck_assert_int_eq(b->node, 0);
	ck_assert_double_eq_tol(b->start_s, 0, 1e-9);
	ck_assert_int_eq(s->node, 0);
	ck_assert_double_eq_tol(s->start_s, 100, 1e-9);
	capped_free(&c);
}
END_TEST

/* A task over its cap with no option within it that a node holds (big,
 * from 10) is re-listed on its own option in its turn like the others: a,
 * listed before it, moves to n1 at 0 and big to n2 after c, not over a's
 * run (when big was kept as planned it held n1 only from its turn, a was
 * moved over its run from 10 and the step failed). */
START_TEST(test_limits_kept_earlier)
{
	/* big: 4 GPUs of any class, or 2 of class t4 (its node has 1) */
	static const capped_opt_t opt[2] = {{4, 0, 1, 0}, {2, 0, 1, 1}};
	capped_t c;
	int four = 4;
	double spb = 1;

	capped_init(&c, 2, 1, 2, opt);
	c.p->tasks[0].release_s = 10;
	fx_add_task(c.p, "c", 5, 1, &four, &spb);
	fx_add_task(c.p, "a", 100, 1, &four, &spb);
	capped_ready(&c);
	/* big on n1 over [10, 110); c on n2 over [0, 5), then a */
	ck_assert_int_eq(saturn_plan_set(c.plan, 0, c.p, 0, 0, 0, 10, NULL), 0);
	ck_assert_int_eq(saturn_plan_set(c.plan, 1, c.p, 1, 0, 1, 0, NULL), 0);
	ck_assert_int_eq(saturn_plan_set(c.plan, 2, c.p, 2, 0, 1, 5, NULL), 0);
	capped_apply(&c, 110, 1);
	/* a earlier on n1; big on its own option on n2 from its release */
	ck_assert_int_eq(c.plan->assign[2].node, 0);
	ck_assert_double_eq_tol(c.plan->assign[2].start_s, 0, 1e-9);
	ck_assert_int_eq(c.plan->assign[0].option, 0);
	ck_assert_int_eq(c.plan->assign[0].node, 1);
	ck_assert_double_eq_tol(c.plan->assign[0].start_s, 10, 1e-9);
	capped_free(&c);
}
END_TEST

/* Over its cap, a task goes on its fastest option within the cap that the
 * relist has somewhere to list, not the fastest one: 2 GPUs of class t4
 * (whose node has 1), 2 GPUs on 2 nodes for a task planned on one, 2 GPUs
 * on 3 nodes for a gang planned on 2, each fastest, fit no node it can go
 * to. (It took the fastest, was kept as planned on 4 GPUs, over its cap
 * and not counted.) */
static const struct capped_case {
	int n4, t4, nopt;
	capped_opt_t opt[3];
	int planned_nodes, want;
} capped_cases[] = {
	{2, 1, 3, {{4, 0, 1, 0}, {2, 0, 0.5, 1}, {2, 0, 0.8, 0}}, 1, 2},
	{2, 0, 3, {{4, 0, 1, 0}, {2, 2, 0.5, 0}, {2, 0, 0.8, 0}}, 1, 2},
	{3, 0, 3, {{4, 2, 1, 0}, {2, 3, 0.5, 0}, {2, 2, 0.8, 0}}, 2, 2},
};

START_TEST(test_limits_option_fits)
{
	const struct capped_case *k = &capped_cases[_i];
	int nodes[2] = {0, 1};
	const saturn_assign_t *a;
	capped_t c;

	capped_init(&c, k->n4, k->t4, k->nopt, k->opt);
	capped_ready(&c);
	ck_assert_int_eq(saturn_plan_set_nodes(c.plan, 0, c.p, 0, 0, nodes, 0, NULL), 0);
	capped_apply(&c, 100, 0);
	a = &c.plan->assign[0];
	ck_assert_int_eq(a->option, k->want);
	ck_assert_int_eq(a->gpus, 2);
	ck_assert_int_eq(saturn_assign_nnodes(a), k->planned_nodes);
	ck_assert_double_eq_tol(a->start_s, 0, 1e-9);
	ck_assert_double_eq_tol(a->end_s, 80, 1e-9);
	capped_free(&c);
}
END_TEST

/* Fair-share stages with gangs: a running gang holds its GPUs on every
 * node in the stages, and a gang planned in a stage keeps all its nodes
 * (each stage entry was set on its first node alone: refused, and the
 * plan failed as out of memory). */
START_TEST(test_fair_plan_gang)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};
	saturn_planner_opts_t o = fx_opts(0.3);
	saturn_plan_t *plan;
	saturn_task_t *r;
	double tag[3] = {0, 1, 2};
	int one = 1, four = 4;
	double spb = 1;

	fx_add_node(p, "n1", 4);
	fx_add_node(p, "n2", 4);
	/* r runs on GPU 0 of n1 and n2 for 50 s */
	fx_add_task(p, "r", 50, 1, &one, &spb);
	p->tasks[0].options[0].nodes = 2;
	r = &p->tasks[0];
	r->is_running = true;
	r->running.node = 0;
	r->running.nnodes = 2;
	r->running.more_nodes = calloc(1, sizeof(int));
	r->running.more_nodes[0] = 1;
	r->running.option = 0;
	r->running.ngpus = 1;
	r->running.gpu_ids = calloc(2, sizeof(int));
	/* stage 1: s1 on 4 GPUs of one node; stage 2: big on 2 x 4 */
	fx_add_task(p, "s1", 100, 1, &four, &spb);
	fx_add_task(p, "big", 100, 1, &four, &spb);
	p->tasks[2].options[0].nodes = 2;
	ck_assert_int_eq(saturn_problem_check(p, &err), 0);
	plan = saturn_fair_plan(p, tag, &o, &err);
	ck_assert_msg(plan != NULL, "%s", err.text);
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
	ck_assert_double_eq_tol(plan->assign[1].start_s, 50, 1e-6);
	ck_assert_int_eq(saturn_assign_nnodes(&plan->assign[2]), 2);
	ck_assert_double_eq_tol(plan->assign[2].start_s, 150, 1e-6);
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_profile_nodes_roundtrip);
	tcase_add_loop_test(tc, test_profile_nodes_bad, 0, sizeof(bad_profiles) / sizeof(bad_profiles[0]));
	tcase_add_test(tc, test_build_options);
	tcase_add_test(tc, test_decide_and_state);
	tcase_add_loop_test(tc, test_state_bad, 0, sizeof(bad_states) / sizeof(bad_states[0]));
	tcase_add_test(tc, test_running_gang);
	tcase_add_test(tc, test_feedback_gang);
	tcase_add_test(tc, test_limits_gang);
	tcase_add_test(tc, test_limits_gang_kept);
	tcase_add_test(tc, test_limits_kept);
	tcase_add_test(tc, test_limits_kept_earlier);
	tcase_add_loop_test(tc, test_limits_option_fits, 0, sizeof(capped_cases) / sizeof(capped_cases[0]));
	tcase_add_test(tc, test_fair_plan_gang);
}

int main(void)
{
	return fx_run_suite("sched_multinode", 0, add_tests);
}
