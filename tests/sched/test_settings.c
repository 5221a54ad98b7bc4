/* test_settings.c - lib/sched/sched_settings.c: the one table of every
 * saturn_* key (rows well formed, defaults, a good and a bad value of
 * every key, the reconfiguration keys in the same struct, unknown keys)
 * and doc/sched_saturn.8 naming every key of the table. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planrec.h"
#include "reconfig.h"
#include "sched_core.h"

#include "sched_fixture.h"

/* One good value of each key and what the field holds after it (num for
 * NUM/INT/BOOL/CHOICE fields, str for paths and the node classes' text).
 * Every key of the table must have a row here (test_every_key_tested). */
static const struct good_case {
	const char *key, *value;
	double num;
	const char *str;
} good_cases[] = {
	{"saturn_interval", "5", 5, NULL},
	{"saturn_solver_time", "0.5", 0.5, NULL},
	{"saturn_state_dir", "/var/x", 0, "/var/x"},
	{"saturn_profile_dir", "/var/p", 0, "/var/p"},
	{"saturn_min_gain", "0.2", 0.2, NULL},
	{"saturn_backfill", "no", 0, NULL},
	{"saturn_release_slack", "0", 0, NULL},
	{"saturn_profiler", "/usr/bin/saturn-profile", 0, "/usr/bin/saturn-profile"},
	{"saturn_profile_time", "45", 45, NULL},
	{"saturn_profile_cache", "false", 0, NULL},
	{"saturn_internode_bw", "25", 25, NULL},
	{"saturn_measure_predicted", "0", 0, NULL},
	{"saturn_node_classes", "fast:h100+h200;slow:a100", 0, "fast:h100+h200;slow:a100"},
	{"saturn_max_tasks", "100", 100, NULL},
	{"saturn_profile_cache_mb", "32", 32, NULL},
	{"saturn_profile_cache_total_mb", "0", 0, NULL},
	{"saturn_companion_jobs", "1", 1, NULL},
	{"saturn_fairness", "share", SATURN_FAIR_SHARE, NULL},
	{"saturn_objective", "bounded", SATURN_FAIR_BOUNDED, NULL},
	{"saturn_bound", "stock", SATURN_BOUND_STOCK, NULL},
	{"saturn_feedback", "no", 0, NULL},
	{"saturn_record", "comment", SATURN_PLANREC_COMMENT, NULL},
	{"saturn_record_cycles", "20", 20, NULL},
	{"saturn_reconfigure", "yes", 1, NULL},
	{"saturn_reconfigure_margin", "10", 10, NULL},
	{"saturn_reconfigure_max", "0", 0, NULL},
	{"saturn_reconfigure_checkpoint", "5", 5, NULL},
	{"saturn_reconfigure_startup", "1", 1, NULL},
};
#define NGOOD ((int)(sizeof(good_cases) / sizeof(good_cases[0])))

static const saturn_setting_def_t *row(const char *key)
{
	int n;
	const saturn_setting_def_t *t = saturn_settings_table(&n);

	for (int i = 0; i < n; i++)
		if (!strcmp(t[i].key, key))
			return &t[i];
	return NULL;
}

/* Every row: a saturn_ key, once; a doc line; its field's size fits its
 * type and lies within the struct; a range holding the default; a
 * message for a bad value (or choices to make it from). */
START_TEST(test_table_rows)
{
	int n;
	const saturn_setting_def_t *t = saturn_settings_table(&n);

	ck_assert_int_ge(n, 24);
	for (int i = 0; i < n; i++) {
		const saturn_setting_def_t *d = &t[i];

		ck_assert_msg(!strncmp(d->key, "saturn_", 7), "%s", d->key);
		for (int k = 0; k < i; k++)
			ck_assert_msg(strcmp(t[k].key, d->key), "%s twice", d->key);
		ck_assert_msg(d->doc && d->doc[0], "%s: no doc", d->key);
		ck_assert_msg(d->offset + d->size <= sizeof(saturn_sched_settings_t), "%s", d->key);
		switch (d->type) {
		case SATURN_SET_NUM:
			ck_assert_msg(d->size == sizeof(double), "%s: not a double", d->key);
			break;
		case SATURN_SET_INT:
		case SATURN_SET_BOOL:
		case SATURN_SET_CHOICE:
			ck_assert_msg(d->size == sizeof(int), "%s: not an int", d->key);
			break;
		case SATURN_SET_PATH:
		case SATURN_SET_PATH_NONE:
			ck_assert_msg(d->size == sizeof(char *), "%s: not a string", d->key);
			break;
		case SATURN_SET_CUSTOM:
			ck_assert_msg(d->parse != NULL, "%s: no parser", d->key);
			break;
		}
		if (d->type == SATURN_SET_NUM || d->type == SATURN_SET_INT)
			ck_assert_msg(d->lo <= d->dflt && d->dflt <= d->hi, "%s: default out of range",
				      d->key);
		if (d->type == SATURN_SET_CHOICE) {
			int hit = 0;

			ck_assert_msg(d->choices && d->choices[0].word, "%s: no choices", d->key);
			for (const saturn_setting_choice_t *c = d->choices; c->word; c++)
				hit |= c->value == (int)d->dflt;
			ck_assert_msg(hit, "%s: default not a choice", d->key);
		} else {
			ck_assert_msg(d->why && !strncmp(d->why, "must be", 7), "%s: no message",
				      d->key);
		}
	}
}
END_TEST

/* The defaults the parsers had before the table. */
START_TEST(test_defaults)
{
	saturn_sched_settings_t s;
	saturn_reconfig_settings_t rs;

	saturn_sched_settings_init(&s);
	ck_assert_double_eq(s.interval_s, 10);
	ck_assert_double_eq(s.solver_time_s, 2);
	ck_assert_double_eq(s.min_gain, 0.05);
	ck_assert_int_eq(s.backfill, 1);
	ck_assert_double_eq(s.release_slack_s, 5);
	ck_assert_ptr_null(s.state_dir);
	ck_assert_ptr_null(s.profile_dir);
	ck_assert_ptr_null(s.profiler);
	ck_assert_int_eq(s.profile_time_min, 30);
	ck_assert_int_eq(s.measure_predicted, 1);
	ck_assert_int_eq(s.profile_cache, 1);
	ck_assert_double_eq(s.internode_gbs, 0);
	ck_assert_int_eq(s.fairness, SATURN_FAIR_NONE);
	ck_assert_int_eq(s.bound, SATURN_BOUND_SHARE);
	ck_assert_int_eq(s.feedback, 1);
	ck_assert_int_eq(s.record, SATURN_PLANREC_ADMIN_COMMENT);
	ck_assert_ptr_null(s.node_classes);
	ck_assert_int_eq(s.max_tasks, SATURN_MAX_TASKS);
	ck_assert_int_eq(s.profile_cache_mb, 64);
	ck_assert_int_eq(s.profile_cache_total_mb, 1024);
	ck_assert_int_eq(s.companion_jobs, 2);
	ck_assert_int_eq(s.reconfig.default_on, 0);
	ck_assert_double_eq(s.reconfig.margin_s, 60);
	ck_assert_int_eq(s.reconfig.max_restarts, 2);
	ck_assert_double_eq(s.reconfig.checkpoint_s, 30);
	ck_assert_double_eq(s.reconfig.startup_s, 30);
	ck_assert_double_eq(s.reconfig.requeue_delay_s, 121);
	saturn_reconfig_settings_init(&rs);
	ck_assert_mem_eq(&rs, &s.reconfig, sizeof(rs));
	saturn_sched_settings_free(&s);
}
END_TEST

START_TEST(test_every_key_tested)
{
	int n;
	const saturn_setting_def_t *t = saturn_settings_table(&n);

	for (int i = 0; i < n; i++) {
		int hit = 0;

		for (int k = 0; k < NGOOD; k++)
			hit |= !strcmp(good_cases[k].key, t[i].key);
		ck_assert_msg(hit, "%s has no case in good_cases", t[i].key);
	}
}
END_TEST

/* A good value lands in the row's field, amid other SchedulerParameters. */
START_TEST(test_good_value)
{
	const struct good_case *c = &good_cases[_i];
	const saturn_setting_def_t *d = row(c->key);
	saturn_sched_settings_t s;
	saturn_error_t err = {{0}};
	char text[256];
	const char *f;

	ck_assert_msg(d != NULL, "%s not in the table", c->key);
	snprintf(text, sizeof(text), "bf_interval=30,%s=%s,default_queue_depth=9", c->key,
		 c->value);
	saturn_sched_settings_init(&s);
	ck_assert_msg(saturn_sched_settings_parse(&s, text, &err) == 0, "%s: %s", text, err.text);
	f = (const char *)&s + d->offset;
	switch (d->type) {
	case SATURN_SET_NUM:
		ck_assert_double_eq(*(const double *)f, c->num);
		break;
	case SATURN_SET_INT:
	case SATURN_SET_BOOL:
	case SATURN_SET_CHOICE:
		ck_assert_int_eq(*(const int *)f, (int)c->num);
		break;
	case SATURN_SET_PATH:
	case SATURN_SET_PATH_NONE:
		ck_assert_str_eq(*(char *const *)f, c->str);
		break;
	case SATURN_SET_CUSTOM: /* saturn_node_classes */
		ck_assert_ptr_nonnull(s.node_classes);
		ck_assert_str_eq(s.node_classes_text, c->str);
		break;
	}
	saturn_sched_settings_free(&s);
}
END_TEST

/* A bad value of every key: counted, named with its key and value in the
 * error, and the settings left as they were. */
START_TEST(test_bad_value)
{
	int n;
	const saturn_setting_def_t *t = saturn_settings_table(&n);
	const saturn_setting_def_t *d = &t[_i];
	saturn_sched_settings_t s, before;
	saturn_error_t err = {{0}};
	char text[128], want[128];

	ck_assert_int_lt(_i, n);
	saturn_sched_settings_init(&s);
	memcpy(&before, &s, sizeof(s));
	snprintf(text, sizeof(text), "%s=@x", d->key);
	snprintf(want, sizeof(want), "SchedulerParameters %s=@x: ", d->key);
	ck_assert_int_eq(saturn_sched_settings_parse(&s, text, &err), 1);
	ck_assert_msg(strstr(err.text, want), "'%s' lacks '%s'", err.text, want);
	if (d->why)
		ck_assert_msg(strstr(err.text, d->why) || d->type == SATURN_SET_CUSTOM, "'%s'",
			      err.text);
	else
		ck_assert_msg(strstr(err.text, "must be "), "'%s'", err.text);
	ck_assert_mem_eq(&s, &before, sizeof(s));
	saturn_sched_settings_free(&s);
}
END_TEST

static const struct msg_case {
	const char *params;
	int bad;
	const char *expect;
} msg_cases[] = {
	{"saturn_objective=fast", 1, "saturn_objective=fast: must be makespan, share, weighted or bounded"},
	{"saturn_fairness=x", 1, "saturn_fairness=x: must be none or share"},
	{"saturn_bound=x", 1, "saturn_bound=x: must be share or stock"},
	{"saturn_record=x", 1, "saturn_record=x: must be admin_comment, comment or none"},
	{"saturn_reconfigure=1", 1, "saturn_reconfigure=1: must be yes or no"},
	{"saturn_max_tasks=100001", 1, "must be a whole number of tasks from 1 to 100000"},
	{"saturn_reconfigure_max=2.5", 1, "saturn_reconfigure_max=2.5: must be a whole number"},
	{"saturn_interval", 1, "SchedulerParameters saturn_interval: needs a value"},
	{"saturn_reconfigure_bogus=1,saturn_interval=x", 2, "saturn_reconfigure_bogus=1: unknown saturn_ key"},
	{"saturn_node_classes=:", 1, "saturn_node_classes=:"},
	{"saturn_zzz=1", 1, "saturn_zzz=1: unknown saturn_ key (known, after saturn_: interval, "},
	{"Saturn_interval=x,interval=x,saturn_interval=7", 0, NULL},
};

START_TEST(test_messages)
{
	const struct msg_case *c = &msg_cases[_i];
	saturn_sched_settings_t s;

	saturn_sched_settings_init(&s);
	fx_setting(&s, c->params, c->bad, c->expect);
	saturn_sched_settings_free(&s);
}
END_TEST

/* An unknown key's error names every key of the table. */
START_TEST(test_unknown_lists_keys)
{
	int n;
	const saturn_setting_def_t *t = saturn_settings_table(&n);
	saturn_sched_settings_t s;
	saturn_error_t err = {{0}};

	saturn_sched_settings_init(&s);
	ck_assert_int_eq(saturn_sched_settings_parse(&s, "saturn_intervall=5", &err), 1);
	ck_assert_msg(strstr(err.text, "saturn_intervall=5: unknown saturn_ key (did you mean saturn_interval? "),
		      "%s", err.text);
	ck_assert_msg(err.text[strlen(err.text) - 1] == ')', "cut short: %s", err.text);
	for (int i = 0; i < n; i++) {
		char word[80];

		snprintf(word, sizeof(word), " %s,", t[i].key + 7);
		if (i == n - 1)
			snprintf(word, sizeof(word), " %s)", t[i].key + 7);
		ck_assert_msg(strstr(err.text, word), "'%s' lacks '%s'", err.text, word);
	}
	saturn_sched_settings_free(&s);
}
END_TEST

/* doc/sched_saturn.8 has an entry (".B KEY=...") for every key. */
START_TEST(test_man_page)
{
	const char *top = getenv("top_srcdir");
	char path[4096], *text;
	int n;
	const saturn_setting_def_t *t = saturn_settings_table(&n);
	FILE *f;
	long len;

	ck_assert_msg(top != NULL, "top_srcdir not set (run it with make check)");
	snprintf(path, sizeof(path), "%s/doc/sched_saturn.8", top);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + 1);
	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	for (int i = 0; i < n; i++) {
		char entry[96];

		snprintf(entry, sizeof(entry), "\n.B %s=", t[i].key);
		ck_assert_msg(strstr(text, entry), "%s does not document %s (no '.B %s=' entry)", path,
			      t[i].key, t[i].key);
	}
	free(text);
}
END_TEST

static void add_tests(TCase *tc)
{
	int n;

	saturn_settings_table(&n);
	tcase_add_test(tc, test_table_rows);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_every_key_tested);
	tcase_add_loop_test(tc, test_good_value, 0, NGOOD);
	tcase_add_loop_test(tc, test_bad_value, 0, n);
	tcase_add_loop_test(tc, test_messages, 0, sizeof(msg_cases) / sizeof(msg_cases[0]));
	tcase_add_test(tc, test_unknown_lists_keys);
	tcase_add_test(tc, test_man_page);
}

int main(void)
{
	return fx_run_suite("settings", 30, add_tests);
}
