/* test_budget.c - bounded resources (lib/sched/budget.c; issue #20,
 * problems 4 and 8): the per-uid counters, the profile cache budget (per
 * user, in all, the heaviest user paying), the size of a parsed profile,
 * the batches with tasks, the per-user limit on companion jobs and the
 * names of the files kept per batch. No Slurm, no files. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_policy.h"
#include "budget.h"
#include "profile.h"
#include "sched_core.h"

#include "sched_fixture.h"

#define MiB ((size_t)1 << 20)

START_TEST(test_uidtab)
{
	saturn_uidtab_t t = {0};

	ck_assert_uint_eq(saturn_uidtab_get(&t, 5), 0);
	ck_assert_int_eq(saturn_uidtab_add(&t, 1002, 7), 0);
	ck_assert_int_eq(saturn_uidtab_add(&t, 1001, 3), 0);
	ck_assert_int_eq(saturn_uidtab_add(&t, 1003, 1), 0);
	ck_assert_int_eq(saturn_uidtab_add(&t, 1002, 2), 0);
	ck_assert_int_eq(t.n, 3);
	ck_assert_int_eq(t.e[0].uid, 1001); /* sorted */
	ck_assert_int_eq(t.e[2].uid, 1003);
	ck_assert_uint_eq(saturn_uidtab_get(&t, 1002), 9);
	/* never below 0; a negative delta for an unknown uid adds nothing */
	ck_assert_int_eq(saturn_uidtab_add(&t, 1001, -10), 0);
	ck_assert_uint_eq(saturn_uidtab_get(&t, 1001), 0);
	ck_assert_int_eq(saturn_uidtab_add(&t, 9, -1), 0);
	ck_assert_int_eq(t.n, 3);
	/* many uids, in any order */
	for (long u = 2000; u > 1500; u--)
		ck_assert_int_eq(saturn_uidtab_add(&t, u, u), 0);
	for (long u = 1501; u <= 2000; u++)
		ck_assert_uint_eq(saturn_uidtab_get(&t, u), (size_t)u);
	saturn_uidtab_clear(&t);
	ck_assert_uint_eq(saturn_uidtab_get(&t, 1002), 0);
	saturn_uidtab_free(&t);
	saturn_uidtab_free(NULL);
}
END_TEST

START_TEST(test_budget_user)
{
	saturn_budget_t b;
	char why[256];

	saturn_budget_init(&b, 64 * MiB, 1024 * MiB);
	ck_assert_int_eq(saturn_budget_check(&b, 1001, 15 * MiB, NULL, NULL, why, sizeof(why)),
			 SATURN_BUDGET_OK);
	ck_assert_str_eq(why, "");
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(saturn_budget_charge(&b, 1001, 15 * MiB), 0);
	/* the fifth 15 MiB profile of the same user is over its 64 MiB */
	ck_assert_int_eq(saturn_budget_check(&b, 1001, 15 * MiB, NULL, NULL, why, sizeof(why)),
			 SATURN_BUDGET_USER);
	ck_assert_msg(strstr(why, "60.0 MiB of this user's profiles cached + 15.0 MiB > the per-user budget of 64 MiB (saturn_profile_cache_mb)"),
		      "%s", why);
	/* another user is not affected */
	ck_assert_int_eq(saturn_budget_check(&b, 1002, 15 * MiB, NULL, NULL, why, sizeof(why)),
			 SATURN_BUDGET_OK);
	/* giving back makes room */
	saturn_budget_uncharge(&b, 1001, 15 * MiB);
	ck_assert_int_eq(saturn_budget_check(&b, 1001, 15 * MiB, NULL, NULL, NULL, 0),
			 SATURN_BUDGET_OK);
	ck_assert_uint_eq(b.total, 45 * MiB);
	/* giving back more than was charged stops at nothing */
	saturn_budget_uncharge(&b, 1001, 100 * MiB);
	ck_assert_uint_eq(b.total, 0);
	/* one profile over the cap on its own */
	ck_assert_int_eq(saturn_budget_check(&b, 1003, 65 * MiB, NULL, NULL, NULL, 0),
			 SATURN_BUDGET_USER);
	saturn_budget_free(&b);
}
END_TEST

START_TEST(test_budget_total)
{
	saturn_budget_t b;
	char why[256];
	long victim = -1;
	size_t need = 0;

	/* 100 MiB in all, 60 per user */
	saturn_budget_init(&b, 60 * MiB, 100 * MiB);
	ck_assert_int_eq(saturn_budget_charge(&b, 1001, 60 * MiB), 0);
	ck_assert_int_eq(saturn_budget_charge(&b, 1002, 30 * MiB), 0);
	/* 1003 wants 20: the total is full; 1001 holds 60 > 20: 1001 pays */
	ck_assert_int_eq(saturn_budget_check(&b, 1003, 20 * MiB, &victim, &need, why, sizeof(why)),
			 SATURN_BUDGET_EVICT);
	ck_assert_int_eq(victim, 1001);
	ck_assert_uint_eq(need, 10 * MiB);
	/* 1001 itself wants more: it is the heaviest, so it is refused */
	saturn_budget_set_caps(&b, 100 * MiB, 100 * MiB);
	ck_assert_int_eq(saturn_budget_check(&b, 1001, 20 * MiB, &victim, &need, why, sizeof(why)),
			 SATURN_BUDGET_TOTAL);
	ck_assert_msg(strstr(why, "(saturn_profile_cache_total_mb)"), "%s", why);
	/* 1002 (30) wants 25: 1001 (60) still holds more than 55: evict 1001 */
	victim = -1;
	ck_assert_int_eq(saturn_budget_check(&b, 1002, 25 * MiB, &victim, NULL, NULL, 0),
			 SATURN_BUDGET_EVICT);
	ck_assert_int_eq(victim, 1001);
	/* 1002 wants 35: it would hold 65 > 60: refused, nobody pays for it */
	ck_assert_int_eq(saturn_budget_check(&b, 1002, 35 * MiB, &victim, NULL, NULL, 0),
			 SATURN_BUDGET_TOTAL);
	/* no total cap: only the user's */
	saturn_budget_set_caps(&b, 100 * MiB, 0);
	ck_assert_int_eq(saturn_budget_check(&b, 1002, 35 * MiB, NULL, NULL, NULL, 0),
			 SATURN_BUDGET_OK);
	/* no caps at all */
	saturn_budget_set_caps(&b, 0, 0);
	ck_assert_int_eq(saturn_budget_check(&b, 1002, 1000 * MiB, NULL, NULL, NULL, 0),
			 SATURN_BUDGET_OK);
	saturn_budget_free(&b);
}
END_TEST

/* After evicting as told, the refused user fits: max-min fair, and the
 * victim is not then entitled to take it back. */
START_TEST(test_budget_evict_settles)
{
	saturn_budget_t b;
	long victim = -1;
	size_t need = 0;

	saturn_budget_init(&b, 0, 40 * MiB);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(saturn_budget_charge(&b, 1001, 10 * MiB), 0);
	ck_assert_int_eq(saturn_budget_check(&b, 1002, 10 * MiB, &victim, &need, NULL, 0),
			 SATURN_BUDGET_EVICT);
	ck_assert_uint_eq(need, 10 * MiB);
	saturn_budget_uncharge(&b, victim, 10 * MiB);
	ck_assert_int_eq(saturn_budget_check(&b, 1002, 10 * MiB, NULL, NULL, NULL, 0),
			 SATURN_BUDGET_OK);
	ck_assert_int_eq(saturn_budget_charge(&b, 1002, 10 * MiB), 0);
	/* 1001 (30) asks again for 10: 1002 holds 10, not more than 40 */
	ck_assert_int_eq(saturn_budget_check(&b, 1001, 10 * MiB, NULL, NULL, NULL, 0),
			 SATURN_BUDGET_TOTAL);
	/* 1003 arrives: 1001 still the heaviest */
	ck_assert_int_eq(saturn_budget_check(&b, 1003, 10 * MiB, &victim, NULL, NULL, 0),
			 SATURN_BUDGET_EVICT);
	ck_assert_int_eq(victim, 1001);
	saturn_budget_free(&b);
}
END_TEST

static const char prof_small[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"b\", \"tasks\": [{\"signature\": \"s\","
	" \"task_ids\": \"0-1\", \"batches\": 10, \"options\": [{\"technique\": \"ddp\", \"gpus\": 2,"
	" \"sec_per_batch\": 0.2, \"status\": \"measured\"}]}]}";

/* A profile of ntasks signatures, each with a params text of plen
 * characters and task ids "0-(nids-1)". */
static char *big_profile(int ntasks, int plen, int nids)
{
	size_t cap = (size_t)ntasks * ((size_t)plen + 256) + 256, n = 0;
	char *buf = malloc(cap);

	ck_assert_ptr_nonnull(buf);
	n += (size_t)snprintf(buf + n, cap - n,
			      "{\"format\": \"saturn-profile/1\", \"batch\": \"b\", \"tasks\": [");
	for (int t = 0; t < ntasks; t++) {
		n += (size_t)snprintf(buf + n, cap - n,
				      "%s{\"signature\": \"s%d\", \"task_ids\": \"%d-%d\", \"batches\": 10,"
				      " \"options\": [{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.2,"
				      " \"status\": \"measured\", \"params\": {\"x\": \"",
				      t ? "," : "", t, t * nids, t * nids + nids - 1);
		memset(buf + n, 'a', (size_t)plen);
		n += (size_t)plen;
		n += (size_t)snprintf(buf + n, cap - n, "\"}}]}");
	}
	snprintf(buf + n, cap - n, "]}");
	return buf;
}

START_TEST(test_profile_mem_bytes)
{
	saturn_error_t err = {{0}};
	saturn_profile_t *small = saturn_profile_parse(prof_small, strlen(prof_small), &err), *big;
	char *txt = big_profile(50, 20000, 1000);
	size_t s, bsz;

	ck_assert_msg(small != NULL, "%s", err.text);
	big = saturn_profile_parse(txt, strlen(txt), &err);
	ck_assert_msg(big != NULL, "%s", err.text);
	ck_assert_uint_eq(saturn_profile_mem_bytes(NULL), 0);
	s = saturn_profile_mem_bytes(small);
	ck_assert_uint_gt(s, sizeof(saturn_profile_t) + sizeof(saturn_profile_task_t) +
				     sizeof(saturn_profile_option_t));
	ck_assert_uint_lt(s, 4096);
	/* the params texts (50 x 20000 characters) and the task ids (50 x
	 * 1000 ints) are counted */
	bsz = saturn_profile_mem_bytes(big);
	ck_assert_uint_ge(bsz, 50 * 20000 + 50 * 1000 * sizeof(int));
	ck_assert_uint_lt(bsz, 2 * (50 * 20000 + 50 * 1000 * sizeof(int)));
	saturn_profile_destroy(small);
	saturn_profile_destroy(big);
	free(txt);
}
END_TEST

static saturn_snap_job_t *add_job(saturn_snapshot_t *s, int state, const char *batch, long uid)
{
	saturn_snap_job_t *j = saturn_snapshot_add_job(s);

	ck_assert_ptr_nonnull(j);
	j->job_id = (uint32_t)(100 + s->njobs);
	j->state = state;
	snprintf(j->batch, sizeof(j->batch), "%s", batch);
	j->uid = uid;
	j->node = -1;
	return j;
}

START_TEST(test_live)
{
	saturn_snapshot_t *s = fx_snapshot(1000, 1, 8);
	saturn_live_t l;

	ck_assert_int_eq(saturn_live_from_snapshot(s, &l), 0);
	ck_assert_int_eq(l.n, 0);
	ck_assert_int_eq(saturn_live_has(&l, 1001, "sweep"), 0);
	saturn_live_free(&l);
	add_job(s, SATURN_SNAP_HELD, "sweep", 1001);
	add_job(s, SATURN_SNAP_RUNNING, "grid", 1002);
	add_job(s, SATURN_SNAP_RELEASED, "sweep", 1001);
	add_job(s, SATURN_SNAP_HELD, "sweep", 1003);
	add_job(s, SATURN_SNAP_HELD, "a.b-c_d", 1001);
	ck_assert_int_eq(saturn_live_from_snapshot(s, &l), 0);
	ck_assert_int_eq(l.n, 4); /* (1001, sweep) once */
	ck_assert_int_eq(saturn_live_has(&l, 1001, "sweep"), 1);
	ck_assert_int_eq(saturn_live_has(&l, 1003, "sweep"), 1);
	ck_assert_int_eq(saturn_live_has(&l, 1002, "grid"), 1);
	/* per user: another user's batch of the name does not count */
	ck_assert_int_eq(saturn_live_has(&l, 1002, "sweep"), 0);
	ck_assert_int_eq(saturn_live_has(&l, 1001, "grid"), 0);
	/* NAME@CLASS: its batch NAME */
	ck_assert_int_eq(saturn_live_has(&l, 1001, "sweep@h100"), 1);
	ck_assert_int_eq(saturn_live_has(&l, 1002, "sweep@h100"), 0);
	ck_assert_int_eq(saturn_live_has(&l, 1001, "a.b-c_d"), 1);
	ck_assert_int_eq(saturn_live_has(&l, 1001, "swee"), 0);
	ck_assert_int_eq(saturn_live_has(&l, 1001, "sweeps"), 0);
	saturn_live_free(&l);
	saturn_snapshot_destroy(s);
}
END_TEST

static void push_submit(saturn_bpol_actions_t *l, saturn_bpol_kind_t kind, int tag)
{
	saturn_bpol_action_t *a;

	l->a = realloc(l->a, (size_t)(l->n + 1) * sizeof(*l->a));
	ck_assert_ptr_nonnull(l->a);
	l->cap = l->n + 1;
	a = &l->a[l->n++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->tag = tag;
	a->gpus = 8;
	a->ntasks = 2;
	a->tasks = malloc(2 * sizeof(int));
	a->tasks[0] = 3;
	a->tasks[1] = 4;
	a->text = strdup("0,1");
}

START_TEST(test_companion_wait)
{
	saturn_bpol_actions_t l = {0};

	push_submit(&l, SATURN_BPOL_SUBMIT_PROFILER, 7);
	/* under the limit, or no limit: nothing changes */
	ck_assert_int_eq(saturn_budget_companion_wait(&l, 0, 1, 2), 0);
	ck_assert_int_eq(saturn_budget_companion_wait(&l, 0, 50, 0), 0);
	ck_assert_int_eq(l.n, 1);
	ck_assert_int_eq(l.a[0].kind, SATURN_BPOL_SUBMIT_PROFILER);
	/* at the limit: HOLD (with the reason), DROP of the same tasks, LOG */
	ck_assert_int_eq(saturn_budget_companion_wait(&l, 0, 2, 2), 1);
	ck_assert_int_eq(l.n, 3);
	ck_assert_int_eq(l.a[0].kind, SATURN_BPOL_HOLD);
	ck_assert_str_eq(l.a[0].text,
			 "saturn: waiting: 2 profiler or measurement job(s) of this user already (saturn_companion_jobs=2)");
	ck_assert_int_eq(l.a[0].ntasks, 2);
	ck_assert_int_eq(l.a[1].kind, SATURN_BPOL_DROP);
	ck_assert_int_eq(l.a[1].tag, 7);
	ck_assert_int_eq(l.a[1].ntasks, 2);
	ck_assert_int_eq(l.a[1].tasks[1], 4);
	ck_assert_int_eq(l.a[2].kind, SATURN_BPOL_LOG);
	ck_assert_ptr_nonnull(strstr(l.a[2].text, "no profiler job now"));
	/* not a submission any more */
	ck_assert_int_eq(saturn_budget_companion_wait(&l, 0, 2, 2), -1);
	ck_assert_int_eq(saturn_budget_companion_wait(&l, 5, 2, 2), -1);
	/* a measurement: HOLD of its decisions, no DROP */
	push_submit(&l, SATURN_BPOL_SUBMIT_MEASURE, 9);
	ck_assert_int_eq(saturn_budget_companion_wait(&l, 3, 3, 1), 1);
	ck_assert_int_eq(l.n, 5);
	ck_assert_int_eq(l.a[3].kind, SATURN_BPOL_HOLD);
	ck_assert_int_eq(l.a[4].kind, SATURN_BPOL_LOG);
	ck_assert_ptr_nonnull(strstr(l.a[4].text, "no measurement job now"));
	saturn_bpol_actions_free(&l);
}
END_TEST

struct name_case {
	const char *name;
	int script; /* 0 record, 1 script copy */
	int rc;
	long uid;
	const char *key, *kind;
};

static const struct name_case name_cases[] = {
	{"profiler-1001-sweep.job", 0, 0, 1001, "sweep", "profiler"},
	{"measure-1001-sweep.job", 0, 0, 1001, "sweep", "measure"},
	{"measure-0-a.b-c@h100+x.job", 0, 0, 0, "a.b-c@h100+x", "measure"},
	{"profiler-1001-my-batch-2.job", 0, 0, 1001, "my-batch-2", "profiler"},
	{"profiler-sweep.job", 0, -1, 0, NULL, NULL}, /* before batches were per user */
	{"profiler-1001-.job", 0, -1, 0, NULL, NULL},
	{"profiler-1001-sweep.jobx", 0, -1, 0, NULL, NULL},
	{"profiler-1001-sw/eep.job", 0, -1, 0, NULL, NULL},
	{"profiler-1001-sw@a@b.job", 0, -1, 0, NULL, NULL},
	{"profiler-1001-sweep@.job", 0, -1, 0, NULL, NULL},
	{"state.json", 0, -1, 0, NULL, NULL},
	{"1001-sweep.profile.script", 1, 0, 1001, "sweep", "profiler"},
	{"1001-sweep.measure.script", 1, 0, 1001, "sweep", "measure"},
	{"1001-a.b@h100.profile.script", 1, 0, 1001, "a.b@h100", "profiler"},
	{"1001-sweep.profile.script.tmp", 1, -1, 0, NULL, NULL},
	{"1001-sweep.other.script", 1, -1, 0, NULL, NULL},
	{"x-sweep.profile.script", 1, -1, 0, NULL, NULL},
	{"1001-.profile.script", 1, -1, 0, NULL, NULL},
	{".profile.script", 1, -1, 0, NULL, NULL},
};

START_TEST(test_file_names)
{
	const struct name_case *c = &name_cases[_i];
	char key[80] = "?", kind[16] = "?";
	long uid = -1;
	int rc = c->script ? saturn_budget_script_name(c->name, &uid, key, sizeof(key), kind,
							sizeof(kind))
			   : saturn_budget_record_name(c->name, &uid, key, sizeof(key), kind,
							sizeof(kind));

	ck_assert_msg(rc == c->rc, "%s: rc %d", c->name, rc);
	if (rc < 0)
		return;
	ck_assert_int_eq(uid, c->uid);
	ck_assert_str_eq(key, c->key);
	ck_assert_str_eq(kind, c->kind);
}
END_TEST

START_TEST(test_settings)
{
	saturn_sched_settings_t st;
	saturn_error_t err = {{0}};

	saturn_sched_settings_init(&st);
	ck_assert_int_eq(st.profile_cache_mb, SATURN_BUDGET_USER_MB);
	ck_assert_int_eq(st.profile_cache_total_mb, SATURN_BUDGET_TOTAL_MB);
	ck_assert_int_eq(st.companion_jobs, SATURN_COMPANION_JOBS);
	ck_assert_int_eq(saturn_sched_settings_parse(&st,
						     "saturn_profile_cache_mb=32,saturn_profile_cache_total_mb=0,saturn_companion_jobs=1",
						     &err),
			 0);
	ck_assert_int_eq(st.profile_cache_mb, 32);
	ck_assert_int_eq(st.profile_cache_total_mb, 0);
	ck_assert_int_eq(st.companion_jobs, 1);
	/* bad values keep the previous one, the key named */
	ck_assert_int_eq(saturn_sched_settings_parse(&st, "saturn_companion_jobs=-1", &err), 1);
	ck_assert_msg(strstr(err.text, "saturn_companion_jobs=-1: must be a whole number of jobs"),
		      "%s", err.text);
	ck_assert_int_eq(st.companion_jobs, 1);
	ck_assert_int_eq(saturn_sched_settings_parse(&st, "saturn_profile_cache_mb=1.5", &err), 1);
	ck_assert_msg(strstr(err.text, "saturn_profile_cache_mb=1.5: must be a whole number of MiB"),
		      "%s", err.text);
	ck_assert_int_eq(saturn_sched_settings_parse(&st, "saturn_profile_cache_total_mb=2000000", &err),
			 1);
	ck_assert_int_eq(st.profile_cache_mb, 32);
	ck_assert_int_eq(st.profile_cache_total_mb, 0);
	saturn_sched_settings_free(&st);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_uidtab);
	tcase_add_test(tc, test_budget_user);
	tcase_add_test(tc, test_budget_total);
	tcase_add_test(tc, test_budget_evict_settles);
	tcase_add_test(tc, test_profile_mem_bytes);
	tcase_add_test(tc, test_live);
	tcase_add_test(tc, test_companion_wait);
	tcase_add_loop_test(tc, test_file_names, 0, N(name_cases));
	tcase_add_test(tc, test_settings);
}

int main(void)
{
	return fx_run_suite("budget", 0, add_tests);
}
