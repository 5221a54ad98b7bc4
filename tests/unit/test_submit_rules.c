/* test_submit_rules.c - the allow-list of what a user may change on a
 * Saturn task by update, member by member of job_desc_msg_t; and (with the
 * Slurm source) the reading of a real job_desc_msg_t into the list of set
 * members (modify_fields.c). Batch names and TRES strings: test_jobreq.c. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "submit_rules.h"

/* --- the update allow-list ------------------------------------------------ */

#define A SATURN_MODIFY_ALLOW
#define D SATURN_MODIFY_DECREASE
#define S SATURN_MODIFY_SAME
#define I SATURN_MODIFY_IGNORE
#define R SATURN_MODIFY_REFUSE

/* Every member of job_desc_msg_t in Slurm 22.05.8, 24.11.5 and 26.05 (the
 * union: a member one release lacks is simply never looked up there) with
 * what a user may do with it on a held, a released-not-started and a
 * running Saturn task. The policy itself lives in submit_rules.c; this is
 * its specification. */
static const struct rule_case {
	const char *field;
	saturn_modify_rule_t rule[SATURN_PHASE_COUNT];
} rule_cases[] = {
	{"account", {R, R, R}},
	{"acctg_freq", {R, R, R}},
	{"admin_comment", {R, R, R}},
	{"alloc_node", {I, I, I}},
	{"alloc_resp_port", {R, R, R}},
	{"alloc_tls_cert", {R, R, R}},
	{"alloc_sid", {R, R, R}},
	{"argc", {R, R, R}},
	{"argv", {R, R, R}},
	{"array_inx", {R, R, R}},
	{"array_bitmap", {I, I, I}},
	{"batch_features", {R, R, R}},
	{"begin_time", {R, R, R}},
	{"bitflags", {R, R, R}},
	{"burst_buffer", {R, R, R}},
	{"clusters", {R, R, R}},
	{"cluster_features", {R, R, R}},
	{"comment", {A, A, A}},
	{"contiguous", {R, R, R}},
	{"container", {R, R, R}},
	{"container_id", {R, R, R}},
	{"container_type", {R, R, R}},
	{"core_spec", {R, R, R}},
	{"cpu_bind", {R, R, R}},
	{"cpu_bind_type", {R, R, R}},
	{"cpu_freq_min", {R, R, R}},
	{"cpu_freq_max", {R, R, R}},
	{"cpu_freq_gov", {R, R, R}},
	{"cpus_per_tres", {R, R, R}},
	{"crontab_entry", {R, R, R}},
	{"deadline", {R, R, R}},
	{"delay_boot", {R, R, R}},
	{"dependency", {R, R, R}},
	{"end_time", {R, R, R}},
	{"environment", {R, R, R}},
	{"env_hash", {I, I, I}},
	{"env_size", {R, R, R}},
	{"extra", {R, R, R}},
	{"exc_nodes", {R, R, R}},
	{"features", {R, R, R}},
	{"fed_siblings_active", {R, R, R}},
	{"fed_siblings_viable", {R, R, R}},
	{"group_id", {R, R, R}},
	{"het_job_offset", {R, R, R}},
	{"id", {R, R, R}},
	{"immediate", {R, R, R}},
	{"job_id", {I, I, I}},
	{"job_id_str", {I, I, I}},
	{"job_size_str", {R, R, R}},
	{"kill_on_node_fail", {R, R, R}},
	{"licenses", {R, R, R}},
	{"licenses_tot", {R, R, R}},
	{"mail_type", {A, A, A}},
	{"mail_user", {A, A, A}},
	{"mcs_label", {R, R, R}},
	{"mem_bind", {R, R, R}},
	{"mem_bind_type", {R, R, R}},
	{"mem_per_tres", {R, R, R}},
	{"mem_update_delay", {R, R, R}},
	{"mem_update_margin", {R, R, R}},
	{"name", {A, A, A}},
	{"network", {R, R, R}},
	{"nice", {R, R, R}},
	{"num_tasks", {R, R, R}},
	{"oom_kill_step", {R, R, R}},
	{"open_mode", {R, R, R}},
	{"origin_cluster", {R, R, R}},
	{"other_port", {R, R, R}},
	{"overcommit", {R, R, R}},
	{"partition", {R, R, R}},
	{"plane_size", {R, R, R}},
	{"power_flags", {R, R, R}},
	{"prefer", {R, R, R}},
	{"priority", {R, R, R}},
	{"profile", {R, R, R}},
	{"qos", {R, R, R}},
	{"reboot", {R, R, R}},
	{"resp_host", {R, R, R}},
	{"restart_cnt", {R, R, R}},
	{"req_nodes", {R, R, R}},
	{"requeue", {R, R, R}},
	{"reservation", {R, R, R}},
	{"resv_port_cnt", {R, R, R}},
	{"script", {R, R, R}},
	{"script_buf", {R, R, R}},
	{"script_hash", {I, I, I}},
	{"segment_size", {R, R, R}},
	{"shared", {R, R, R}},
	{"site_factor", {R, R, R}},
	{"spank_job_env", {R, R, R}},
	{"spank_job_env_size", {R, R, R}},
	{"step_id", {I, I, I}},
	{"submit_line", {R, R, R}},
	{"task_dist", {R, R, R}},
	{"time_limit", {D, D, D}},
	{"time_min", {R, R, R}},
	{"tres_bind", {R, R, R}},
	{"tres_freq", {R, R, R}},
	{"tres_per_job", {R, R, R}},
	{"tres_per_node", {R, R, R}},
	{"tres_per_socket", {R, R, R}},
	{"tres_per_task", {R, R, R}},
	{"user_id", {S, S, S}},
	{"wait_all_nodes", {R, R, R}},
	{"warn_flags", {R, R, R}},
	{"warn_signal", {R, R, R}},
	{"warn_time", {R, R, R}},
	{"work_dir", {R, R, R}},
	{"cpus_per_task", {R, R, R}},
	{"min_cpus", {R, R, R}},
	{"max_cpus", {R, R, R}},
	{"min_nodes", {R, R, R}},
	{"max_nodes", {R, R, R}},
	{"boards_per_node", {R, R, R}},
	{"sockets_per_board", {R, R, R}},
	{"sockets_per_node", {R, R, R}},
	{"cores_per_socket", {R, R, R}},
	{"threads_per_core", {R, R, R}},
	{"ntasks_per_node", {R, R, R}},
	{"ntasks_per_socket", {R, R, R}},
	{"ntasks_per_core", {R, R, R}},
	{"ntasks_per_board", {R, R, R}},
	{"ntasks_per_tres", {R, R, R}},
	{"pn_min_cpus", {R, R, R}},
	{"pn_min_memory", {R, R, R}},
	{"pn_min_tmp_disk", {R, R, R}},
	{"req_context", {R, R, R}},
	{"req_switch", {R, R, R}},
	{"select_jobinfo", {I, I, I}},
	{"selinux_context", {R, R, R}},
	{"std_err", {R, R, R}},
	{"std_in", {R, R, R}},
	{"std_out", {R, R, R}},
	{"tres_req_cnt", {R, R, R}},
	{"wait4switch", {R, R, R}},
	{"wckey", {R, R, R}},
	{"x11", {R, R, R}},
	{"x11_magic_cookie", {R, R, R}},
	{"x11_target", {R, R, R}},
	{"x11_target_port", {R, R, R}},
	/* a member a later Slurm adds, and nonsense */
	{"future_member", {R, R, R}},
	{"", {R, R, R}},
	{"Comment", {R, R, R}},
	{NULL, {R, R, R}},
};

START_TEST(test_modify_rule)
{
	const struct rule_case *c = &rule_cases[_i];

	for (int p = 0; p < SATURN_PHASE_COUNT; p++)
		ck_assert_msg(saturn_modify_rule(c->field, p) == c->rule[p],
			      "%s in phase %s: rule %d, want %d",
			      c->field ? c->field : "(null)",
			      saturn_task_phase_name(p),
			      saturn_modify_rule(c->field, p), c->rule[p]);
	ck_assert_int_eq(saturn_modify_rule(c->field, SATURN_PHASE_COUNT), R);
	ck_assert_int_eq(saturn_modify_rule(c->field, (saturn_task_phase_t)-1), R);
}
END_TEST

/* Whole requests through saturn_modify_check. */
#define FLD(f, o) {f, o, 0, 0, 0}
#define CUR(f, o, v, c) {f, o, 1, v, c}
static const struct check_case {
	saturn_task_phase_t phase;
	saturn_modify_field_t set[4];
	size_t n;
	int rc;
	size_t bad;
	const char *why; /* substring of the reason */
} check_cases[] = {
	{SATURN_PHASE_HELD, {FLD(NULL, NULL)}, 0, 0, 0, NULL},
	{SATURN_PHASE_HELD,
	 {FLD("job_id_str", "JobId"), CUR("user_id", "UserID", 1000, 1000),
	  FLD("alloc_node", NULL), FLD("comment", "Comment")}, 4, 0, 0, NULL},
	{SATURN_PHASE_HELD, {FLD("job_id_str", "JobId"), FLD("nice", "Nice")}, 2,
	 -1, 1, "Nice (nice) may not be changed on a held Saturn task: the plan decides when it starts"},
	{SATURN_PHASE_RELEASED, {FLD("priority", "Priority")}, 1, -1, 0,
	 "on a released (not started) Saturn task"},
	{SATURN_PHASE_RUNNING, {FLD("requeue", "Requeue")}, 1, -1, 0,
	 "Requeue (requeue) may not be changed on a running Saturn task: a running task keeps"},
	{SATURN_PHASE_HELD, {FLD("array_inx", "ArrayTaskThrottle")}, 1, -1, 0,
	 "ArrayTaskThrottle (array_inx) may not be changed on a held Saturn task: the plan decides how many tasks run at once"},
	{SATURN_PHASE_HELD, {FLD("partition", "Partition")}, 1, -1, 0,
	 "where the task may run"},
	{SATURN_PHASE_HELD, {FLD("work_dir", "WorkDir")}, 1, -1, 0,
	 "only Comment, JobName, MailType, MailUser and a shorter TimeLimit"},
	/* time limit: shorter or equal only, and only with the job's value */
	{SATURN_PHASE_HELD, {CUR("time_limit", "TimeLimit", 5, 10)}, 1, 0, 0, NULL},
	{SATURN_PHASE_RUNNING, {CUR("time_limit", "TimeLimit", 10, 10)}, 1, 0, 0, NULL},
	{SATURN_PHASE_RELEASED, {CUR("time_limit", "TimeLimit", 11, 10)}, 1, -1, 0,
	 "only a shorter time limit"},
	{SATURN_PHASE_HELD, {FLD("time_limit", "TimeLimit")}, 1, -1, 0, "TimeLimit"},
	/* the owner: only the job's own */
	{SATURN_PHASE_HELD, {CUR("user_id", "UserID", 0, 1000)}, 1, -1, 0, "keeps its owner"},
	{SATURN_PHASE_HELD, {FLD("user_id", "UserID")}, 1, -1, 0, "UserID"},
	/* an allowed field does not carry a refused one through */
	{SATURN_PHASE_HELD,
	 {FLD("comment", "Comment"), FLD("name", "JobName"), FLD("tres_per_node", "TresPerNode")},
	 3, -1, 2, "TresPerNode (tres_per_node) may not be changed on a held Saturn task: the plan sets the GPU count"},
	/* a part no table names */
	{SATURN_PHASE_HELD, {FLD("comment", "Comment"), FLD(NULL, "an unknown part of the request")},
	 2, -1, 1, "an unknown part of the request is not a field a user may change on a held Saturn task"},
	{SATURN_PHASE_RUNNING, {FLD(NULL, NULL)}, 1, -1, 0, "part of the request is not"},
};

START_TEST(test_modify_check)
{
	const struct check_case *c = &check_cases[_i];
	char why[256] = "";
	size_t bad = 99;
	int rc = saturn_modify_check(c->set, c->n, c->phase, &bad, why, sizeof(why));

	ck_assert_msg(rc == c->rc, "case %d: rc %d, want %d (%s)", _i, rc, c->rc, why);
	if (rc == 0)
		return;
	ck_assert_msg(bad == c->bad, "case %d: bad %zu, want %zu", _i, bad, c->bad);
	ck_assert_msg(strstr(why, c->why) != NULL, "case %d: reason '%s' lacks '%s'",
		      _i, why, c->why);
}
END_TEST

START_TEST(test_modify_hold_fields)
{
	ck_assert(saturn_modify_is_hold_field("priority"));
	ck_assert(saturn_modify_is_hold_field("nice"));
	ck_assert(saturn_modify_is_hold_field("alloc_sid"));
	ck_assert(!saturn_modify_is_hold_field("comment"));
	ck_assert(!saturn_modify_is_hold_field(NULL));
	ck_assert_str_eq(saturn_task_phase_name(SATURN_PHASE_COUNT), "unknown");
}
END_TEST

#ifdef HAVE_MODIFY_FIELDS
/* --- reading a real job_desc_msg_t ------------------------------------------ */
#include "slurm/slurm.h"
#include "modify_fields.h"

/* The rule a member gets in the specification above (R when absent). */
static const struct rule_case *spec_of(const char *field)
{
	for (size_t i = 0; i < sizeof(rule_cases) / sizeof(rule_cases[0]); i++)
		if (rule_cases[i].field && !strcmp(rule_cases[i].field, field))
			return &rule_cases[i];
	return NULL;
}

START_TEST(test_fields_fresh)
{
	job_desc_msg_t d;
	saturn_modify_field_t set[SATURN_JOB_DESC_FIELDS_MAX];

	saturn_job_desc_init(&d);
	ck_assert_uint_eq(saturn_job_desc_fields(&d, set, SATURN_JOB_DESC_FIELDS_MAX), 0);
	/* the same values slurm_init_job_desc_msg() gives */
	ck_assert_uint_eq(d.nice, NO_VAL);
	ck_assert_uint_eq(d.priority, NO_VAL);
	ck_assert_uint_eq(d.requeue, NO_VAL16);
	ck_assert_uint_eq(d.pn_min_memory, NO_VAL64);
	ck_assert_uint_eq(d.overcommit, NO_VAL8);
	ck_assert_uint_eq(d.begin_time, 0);
	ck_assert_ptr_null(d.partition);
}
END_TEST

#ifdef HAVE_LIBSLURM
/* saturn_job_desc_init() gives every member the value Slurm's own
 * slurm_init_job_desc_msg() gives it (libslurm of the same release): the
 * unset values of the table are Slurm's, not a guess (24.11 changed
 * user_id and group_id from NO_VAL to SLURM_AUTH_NOBODY, 25.11 added
 * step_id at a non-zero initializer). */
START_TEST(test_fields_init_is_slurms)
{
	job_desc_msg_t mine, slurms;
	saturn_modify_field_t set[SATURN_JOB_DESC_FIELDS_MAX];
	long api = slurm_api_version();

	if (SLURM_VERSION_MAJOR(api) != SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER) ||
	    SLURM_VERSION_MINOR(api) != SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER)) {
		printf("# libslurm %ld.%02ld is not the release of the headers: not compared\n",
		       (long)SLURM_VERSION_MAJOR(api), (long)SLURM_VERSION_MINOR(api));
		return;
	}
	saturn_job_desc_init(&mine);
	slurm_init_job_desc_msg(&slurms);
	/* member by member through the table (padding aside) ... */
	ck_assert_uint_eq(saturn_job_desc_fields(&slurms, set, SATURN_JOB_DESC_FIELDS_MAX), 0);
	ck_assert_uint_eq(mine.user_id, slurms.user_id);
	ck_assert_uint_eq(mine.group_id, slurms.group_id);
	ck_assert_uint_eq(mine.priority, slurms.priority);
	ck_assert_uint_eq(mine.pn_min_memory, slurms.pn_min_memory);
}
END_TEST
#endif

/* Each member, set alone, is reported under its own name, and the check
 * refuses it unless the specification allows it. */
START_TEST(test_fields_each)
{
	job_desc_msg_t d;
	saturn_modify_field_t set[SATURN_JOB_DESC_FIELDS_MAX];
	const struct rule_case *spec;
	const char *field;
	size_t n, nrows;
	char why[256];

	ck_assert_int_eq(saturn_job_desc_row(_i, &nrows, &field, NULL, NULL), 0);
	saturn_job_desc_init(&d);
	ck_assert_int_eq(saturn_job_desc_poke(&d, _i), 0);
	n = saturn_job_desc_fields(&d, set, SATURN_JOB_DESC_FIELDS_MAX);
	ck_assert_msg(n == 1, "%s: %zu entries", field, n);
	ck_assert_str_eq(set[0].field, field);
	spec = spec_of(field);
	ck_assert_msg(spec != NULL, "%s: not in the specification", field);
	for (int p = 0; p < SATURN_PHASE_COUNT; p++) {
		int rc;

		/* give ordered rules a current value the poked one passes */
		set[0].has_current = 1;
		set[0].current = set[0].value;
		rc = saturn_modify_check(set, n, p, NULL, why, sizeof(why));
		ck_assert_msg((rc == 0) == (spec->rule[p] != R),
			      "%s in phase %d: rc %d (%s)", field, p, rc, why);
	}
}
END_TEST

/* Every byte of job_desc_msg_t that no row covers (padding today; a
 * member a later Slurm adds tomorrow) makes the request refused. */
START_TEST(test_fields_uncovered)
{
	unsigned char covered[sizeof(job_desc_msg_t)] = {0};
	size_t nrows, off, size, run = 0;
	saturn_modify_field_t set[SATURN_JOB_DESC_FIELDS_MAX];

	saturn_job_desc_row(0, &nrows, NULL, NULL, NULL);
	ck_assert_uint_ge(nrows, 128); /* Slurm 22.05.8 has 128 members */
	for (size_t i = 0; i < nrows; i++) {
		saturn_job_desc_row(i, NULL, NULL, &off, &size);
		ck_assert_uint_le(off + size, sizeof(job_desc_msg_t));
		for (size_t k = off; k < off + size; k++) {
			ck_assert_msg(!covered[k], "byte %zu covered twice", k);
			covered[k] = 1;
		}
	}
	for (size_t k = 0; k < sizeof(job_desc_msg_t); k++) {
		job_desc_msg_t d;
		size_t n;

		if (covered[k]) {
			run = 0;
			continue;
		}
		/* nothing but alignment padding may be left uncovered: a
		 * run of 8 bytes or more would hide a member */
		ck_assert_msg(++run < 8, "bytes %zu..%zu covered by no row", k + 1 - run, k);
		saturn_job_desc_init(&d);
		((unsigned char *)&d)[k] = 0x5a;
		n = saturn_job_desc_fields(&d, set, SATURN_JOB_DESC_FIELDS_MAX);
		ck_assert_msg(n == 1 && set[0].field == NULL,
			      "byte %zu: %zu entries", k, n);
		for (int p = 0; p < SATURN_PHASE_COUNT; p++)
			ck_assert_int_eq(saturn_modify_check(set, n, p, NULL, NULL, 0), -1);
	}
}
END_TEST

/* scontrol's own requests, as slurmctld hands them to job_modify. */
START_TEST(test_fields_scontrol)
{
	job_desc_msg_t d;
	saturn_modify_field_t set[SATURN_JOB_DESC_FIELDS_MAX];
	size_t n;

	/* scontrol update jobid=7 nice=10: refused on a held task */
	saturn_job_desc_init(&d);
	d.job_id_str = "7";
	d.user_id = 1000;
	d.nice = NICE_OFFSET + 10;
	n = saturn_job_desc_fields(&d, set, SATURN_JOB_DESC_FIELDS_MAX);
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++) {
		set[i].has_current = 1;
		set[i].current = set[i].value; /* the owner's own uid */
	}
	ck_assert_int_eq(saturn_modify_check(set, n, SATURN_PHASE_HELD, NULL, NULL, 0), -1);

	/* scontrol uhold 7 */
	saturn_job_desc_init(&d);
	d.job_id_str = "7";
	d.priority = 0;
	d.alloc_sid = ALLOC_SID_USER_HOLD;
	n = saturn_job_desc_fields(&d, set, SATURN_JOB_DESC_FIELDS_MAX);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(saturn_modify_check(set, n, SATURN_PHASE_HELD, NULL, NULL, 0), -1);

	/* scontrol update jobid=7 comment=x name=y: accepted; the packing
	 * of every request sets USE_DEFAULT_* in bitflags, which is no change */
	saturn_job_desc_init(&d);
	d.job_id_str = "7";
	d.bitflags = USE_DEFAULT_ACCT | USE_DEFAULT_PART | USE_DEFAULT_QOS |
		     USE_DEFAULT_WCKEY;
	d.comment = "x";
	d.name = "y";
	n = saturn_job_desc_fields(&d, set, SATURN_JOB_DESC_FIELDS_MAX);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(saturn_modify_check(set, n, SATURN_PHASE_HELD, NULL, NULL, 0), 0);
	ck_assert_int_eq(saturn_modify_check(set, n, SATURN_PHASE_RUNNING, NULL, NULL, 0), 0);

	/* ResetAccrueTime beside them is refused */
	d.bitflags |= RESET_ACCRUE_TIME;
	n = saturn_job_desc_fields(&d, set, SATURN_JOB_DESC_FIELDS_MAX);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(saturn_modify_check(set, n, SATURN_PHASE_HELD, NULL, NULL, 0), -1);
	d.bitflags &= ~RESET_ACCRUE_TIME;

	/* too small an output array still counts everything */
	d.nice = 5;
	ck_assert_uint_eq(saturn_job_desc_fields(&d, set, 1), 4);
}
END_TEST
#endif

int main(void)
{
	Suite *s = suite_create("submit_rules");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_modify_rule, 0,
			    sizeof(rule_cases) / sizeof(rule_cases[0]));
	tcase_add_loop_test(tc, test_modify_check, 0,
			    sizeof(check_cases) / sizeof(check_cases[0]));
	tcase_add_test(tc, test_modify_hold_fields);
#ifdef HAVE_MODIFY_FIELDS
	{
		size_t nrows;

		saturn_job_desc_row(0, &nrows, NULL, NULL, NULL);
		tcase_add_test(tc, test_fields_fresh);
#ifdef HAVE_LIBSLURM
		tcase_add_test(tc, test_fields_init_is_slurms);
#endif
		tcase_add_loop_test(tc, test_fields_each, 0, (int)nrows);
		tcase_add_test(tc, test_fields_uncovered);
		tcase_add_test(tc, test_fields_scontrol);
	}
#endif
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
