/* sched_settings.c - the saturn_* keys of SchedulerParameters
 * (sched_settings.h): one table of every key, the defaults and the parser
 * it drives, freeing. Bad values keep the previous value and are counted,
 * never fatal.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planrec.h"
#include "sched_core.h"

/* --- the table ------------------------------------------------------- */

/* offset and size of a field of saturn_sched_settings_t */
#define FIELD(f) offsetof(saturn_sched_settings_t, f), sizeof(((saturn_sched_settings_t *)0)->f)

static const saturn_setting_choice_t fairness_words[] = {
	{"none", SATURN_FAIR_NONE}, {"share", SATURN_FAIR_SHARE}, {NULL, 0}};
static const saturn_setting_choice_t objective_words[] = {
	{"makespan", SATURN_FAIR_NONE}, {"share", SATURN_FAIR_SHARE},
	{"weighted", SATURN_FAIR_WEIGHTED}, {"bounded", SATURN_FAIR_BOUNDED}, {NULL, 0}};
static const saturn_setting_choice_t bound_words[] = {
	{"share", SATURN_BOUND_SHARE}, {"stock", SATURN_BOUND_STOCK}, {NULL, 0}};
static const saturn_setting_choice_t record_words[] = {
	{"admin_comment", SATURN_PLANREC_ADMIN_COMMENT}, {"comment", SATURN_PLANREC_COMMENT},
	{"none", SATURN_PLANREC_NONE}, {NULL, 0}};
static const saturn_setting_choice_t yes_no_words[] = {{"yes", 1}, {"no", 0}, {NULL, 0}};

static int parse_classes(saturn_sched_settings_t *s, const char *v, char *why, size_t len);

/* One row per key. To add a key: a row here (in the man page's order), its
 * field in saturn_sched_settings_t, its paragraph in doc/sched_saturn.8. */
static const saturn_setting_def_t table[] = {
	{"saturn_interval", SATURN_SET_NUM, FIELD(interval_s), 1, 3600, 10, NULL, NULL,
	 "must be a number of seconds from 1 to 3600", "seconds between planning cycles"},
	{"saturn_solver_time", SATURN_SET_NUM, FIELD(solver_time_s), 0.05, 600, 2, NULL, NULL,
	 "must be a number of seconds from 0.05 to 600", "the planner's time budget per cycle"},
	{"saturn_state_dir", SATURN_SET_PATH, FIELD(state_dir), 0, 0, 0, NULL, NULL,
	 "must be an absolute path", "the state folder (default StateSaveLocation/saturn)"},
	{"saturn_profile_dir", SATURN_SET_PATH, FIELD(profile_dir), 0, 0, 0, NULL, NULL,
	 "must be an absolute path", "the profiles folder (default STATE_DIR/profiles)"},
	{"saturn_min_gain", SATURN_SET_NUM, FIELD(min_gain), 0, 1, 0.05, NULL, NULL,
	 "must be a fraction from 0 to 1 (e.g. 0.05)", "least gain for a new plan to replace the kept one"},
	{"saturn_backfill", SATURN_SET_BOOL, FIELD(backfill), 0, 0, 1, NULL, NULL,
	 "must be yes or no", "run sched/backfill beside us for other jobs"},
	{"saturn_release_slack", SATURN_SET_NUM, FIELD(release_slack_s), 0, 3600, 5, NULL, NULL,
	 "must be a number of seconds from 0 to 3600", "release a task due within this many seconds"},
	{"saturn_profiler", SATURN_SET_PATH_NONE, FIELD(profiler), 0, 0, 0, NULL, NULL,
	 "must be an absolute path or none", "the saturn-profile program for profiler jobs"},
	{"saturn_profile_time", SATURN_SET_INT, FIELD(profile_time_min), 1, 10080, 30, NULL, NULL,
	 "must be a whole number of minutes from 1 to 10080", "profiler jobs' time limit, minutes"},
	{"saturn_profile_cache", SATURN_SET_BOOL, FIELD(profile_cache), 0, 0, 1, NULL, NULL,
	 "must be yes or no", "profiler jobs reuse PROFILE_DIR/cache/UID"},
	{"saturn_internode_bw", SATURN_SET_NUM, FIELD(internode_gbs), 0, 1e6, 0, NULL, NULL,
	 "must be a bandwidth in GB/s from 0 (none) to 1e6",
	 "bus bandwidth across nodes for predicted multi-node options"},
	{"saturn_measure_predicted", SATURN_SET_BOOL, FIELD(measure_predicted), 0, 0, 1, NULL, NULL,
	 "must be yes or no", "measure a predicted option before releasing a task onto it"},
	{"saturn_node_classes", SATURN_SET_CUSTOM, FIELD(node_classes), 0, 0, 0, NULL, parse_classes,
	 "must be NAME:MATCH[+MATCH...][;NAME:...] or none", "the admin's node classes"},
	{"saturn_max_tasks", SATURN_SET_INT, FIELD(max_tasks), 1, SATURN_MAX_TASKS, SATURN_MAX_TASKS,
	 NULL, NULL, "must be a whole number of tasks from 1 to 100000", "most tasks one plan takes"},
	{"saturn_profile_cache_mb", SATURN_SET_INT, FIELD(profile_cache_mb), 0, 1048576, 64, NULL,
	 NULL, "must be a whole number of MiB from 0 (no cap) to 1048576",
	 "MiB of parsed profiles cached per user (budget.h)"},
	{"saturn_profile_cache_total_mb", SATURN_SET_INT, FIELD(profile_cache_total_mb), 0, 1048576,
	 1024, NULL, NULL, "must be a whole number of MiB from 0 (no cap) to 1048576",
	 "MiB of parsed profiles cached for all users"},
	{"saturn_companion_jobs", SATURN_SET_INT, FIELD(companion_jobs), 0, 1000, 2, NULL, NULL,
	 "must be a whole number of jobs from 0 (no limit) to 1000",
	 "profiler and measurement jobs one user may have at once"},
	{"saturn_fairness", SATURN_SET_CHOICE, FIELD(fairness), 0, 0, SATURN_FAIR_NONE,
	 fairness_words, NULL, NULL, "how users share the GPUs (older name of saturn_objective)"},
	{"saturn_objective", SATURN_SET_CHOICE, FIELD(fairness), 0, 0, SATURN_FAIR_NONE,
	 objective_words, NULL, NULL, "what the plan optimises between users"},
	{"saturn_bound", SATURN_SET_CHOICE, FIELD(bound), 0, 0, SATURN_BOUND_SHARE, bound_words,
	 NULL, NULL, "the no-harm bound of saturn_objective=bounded"},
	{"saturn_feedback", SATURN_SET_BOOL, FIELD(feedback), 0, 0, 1, NULL, NULL,
	 "must be yes or no", "runtime feedback corrects the profiles' speeds"},
	{"saturn_record", SATURN_SET_CHOICE, FIELD(record), 0, 0, SATURN_PLANREC_ADMIN_COMMENT,
	 record_words, NULL, NULL, "where a released task's plan record goes"},
	{"saturn_record_cycles", SATURN_SET_INT, FIELD(record_cycles), 0, 100000, 0, NULL, NULL,
	 "must be a whole number of cycles from 0 (off) to 100000",
	 "keep the last N cycles' inputs and outputs in STATE_DIR/cycles (saturn replay)"},
	{"saturn_reconfigure", SATURN_SET_CHOICE, FIELD(reconfig.default_on), 0, 0, 0, yes_no_words,
	 NULL, NULL, "reconfigure running tasks that did not say (--saturn-reconfigure)"},
	{"saturn_reconfigure_margin", SATURN_SET_NUM, FIELD(reconfig.margin_s), 0, 86400, 60, NULL,
	 NULL, "must be seconds from 0 to 86400", "least gain of a reconfiguration, seconds"},
	{"saturn_reconfigure_max", SATURN_SET_INT, FIELD(reconfig.max_restarts), 0, 1000, 2, NULL,
	 NULL, "must be a whole number from 0 to 1000", "most restarts of one task (0 = never)"},
	{"saturn_reconfigure_checkpoint", SATURN_SET_NUM, FIELD(reconfig.checkpoint_s), 0, 86400, 30,
	 NULL, NULL, "must be seconds from 0 to 86400", "seconds from the signal to the task's exit"},
	{"saturn_reconfigure_startup", SATURN_SET_NUM, FIELD(reconfig.startup_s), 0, 86400, 30, NULL,
	 NULL, "must be seconds from 0 to 86400", "seconds from a restart to the first batch"},
};

#define NROWS ((int)(sizeof(table) / sizeof(table[0])))

const saturn_setting_def_t *saturn_settings_table(int *n)
{
	if (n)
		*n = NROWS;
	return table;
}

/* --- settings -------------------------------------------------------- */

static void *field(saturn_sched_settings_t *s, const saturn_setting_def_t *d)
{
	return (char *)s + d->offset;
}

void saturn_sched_settings_init(saturn_sched_settings_t *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < NROWS; i++) {
		const saturn_setting_def_t *d = &table[i];

		switch (d->type) {
		case SATURN_SET_NUM:
			*(double *)field(s, d) = d->dflt;
			break;
		case SATURN_SET_INT:
		case SATURN_SET_BOOL:
		case SATURN_SET_CHOICE:
			*(int *)field(s, d) = (int)d->dflt;
			break;
		default: /* strings, rules: NULL */
			break;
		}
	}
	s->reconfig.requeue_delay_s = 121; /* Slurm's cred_expire 120, + 1 */
}

void saturn_sched_settings_free(saturn_sched_settings_t *s)
{
	if (!s)
		return;
	for (int i = 0; i < NROWS; i++)
		if (table[i].type == SATURN_SET_PATH || table[i].type == SATURN_SET_PATH_NONE) {
			char **p = field(s, &table[i]);

			free(*p);
			*p = NULL;
		}
	saturn_class_rules_free(s->node_classes);
	s->node_classes = NULL;
	free(s->node_classes_text);
	s->node_classes_text = NULL;
}

int saturn_setting_num(const char *v, double lo, double hi, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(d) || d < lo || d > hi)
		return -1;
	*out = d;
	return 0;
}

static int parse_bool(const char *v, int *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "1") || !strcmp(v, "true")) {
		*out = 1;
		return 0;
	}
	if (!strcmp(v, "no") || !strcmp(v, "0") || !strcmp(v, "false")) {
		*out = 0;
		return 0;
	}
	return -1;
}

static int parse_path(const char *v, char **out)
{
	char *d;

	if (v[0] != '/' || strlen(v) > 1024)
		return -1;
	d = strdup(v);
	if (!d)
		return -1;
	free(*out);
	*out = d;
	return 0;
}

/* saturn_node_classes=NAME:MATCH[+MATCH...][;...] (node_class.h); "none"
 * clears it. why gets the rules parser's message. */
static int parse_classes(saturn_sched_settings_t *s, const char *v, char *why, size_t len)
{
	saturn_class_rules_t *r;
	saturn_error_t e = {""};
	char *text;

	if (!strcmp(v, "none")) {
		saturn_class_rules_free(s->node_classes);
		free(s->node_classes_text);
		s->node_classes = NULL;
		s->node_classes_text = NULL;
		return 0;
	}
	r = saturn_class_rules_parse(v, &e);
	text = strdup(v);
	if (!r || !text || saturn_class_rules_count(r) == 0) {
		snprintf(why, len, "%s", !r ? e.text + (strncmp(e.text, "saturn_node_classes: ", 21) ? 0 : 21)
				       : "must be NAME:MATCH[+MATCH...][;NAME:...] or none");
		saturn_class_rules_free(r);
		free(text);
		return -1;
	}
	saturn_class_rules_free(s->node_classes);
	free(s->node_classes_text);
	s->node_classes = r;
	s->node_classes_text = text;
	return 0;
}

/* "must be A, B or C" of a choice row */
static void choices_why(const saturn_setting_choice_t *c, char *why, size_t len)
{
	size_t n = 0;
	int k = 0;

	while (c[k].word)
		k++;
	snprintf(why, len, "must be");
	for (int i = 0; i < k; i++) {
		n = strlen(why);
		snprintf(why + n, len - n, "%s%s", i == 0 ? " " : i == k - 1 ? " or " : ", ",
			 c[i].word);
	}
}

/* Apply one row to val. 0, or -1 with why filled. */
static int apply(saturn_sched_settings_t *s, const saturn_setting_def_t *d, const char *val,
		 char *why, size_t len)
{
	void *f = field(s, d);
	double m;
	int rc = -1;

	switch (d->type) {
	case SATURN_SET_NUM:
		rc = saturn_setting_num(val, d->lo, d->hi, f);
		break;
	case SATURN_SET_INT:
		if (saturn_setting_num(val, d->lo, d->hi, &m) == 0 && m == (int)m) {
			*(int *)f = (int)m;
			rc = 0;
		}
		break;
	case SATURN_SET_BOOL:
		rc = parse_bool(val, f);
		break;
	case SATURN_SET_CHOICE:
		for (const saturn_setting_choice_t *c = d->choices; c->word; c++)
			if (!strcmp(val, c->word)) {
				*(int *)f = c->value;
				rc = 0;
				break;
			}
		if (rc < 0 && !d->why) {
			choices_why(d->choices, why, len);
			return -1;
		}
		break;
	case SATURN_SET_PATH_NONE:
		if (!strcmp(val, "none")) {
			free(*(char **)f);
			*(char **)f = NULL;
			rc = 0;
			break;
		}
		/* fall through */
	case SATURN_SET_PATH:
		rc = parse_path(val, f);
		break;
	case SATURN_SET_CUSTOM:
		return d->parse(s, val, why, len);
	}
	if (rc < 0)
		snprintf(why, len, "%s", d->why ? d->why : "bad value");
	return rc;
}

static const saturn_setting_def_t *find_row(const char *key)
{
	for (int i = 0; i < NROWS; i++)
		if (!strcmp(table[i].key, key))
			return &table[i];
	return NULL;
}

/* Edit distance of a and b (insert, delete, replace one character), capped
 * at 99 for a word longer than 63. */
static int distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), row[64];

	if (la > 63 || lb > 63)
		return 99;
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int diag = row[0];

		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* "unknown saturn_ key (did you mean saturn_feedback? known, after
 * saturn_: interval, ...)": the nearest key within 2 edits, and every key
 * of the table, short enough for an error. */
static void unknown_why(const char *key, char *why, size_t len)
{
	const char *near = NULL;
	int best = 3;
	size_t n;

	for (int i = 0; i < NROWS; i++) {
		int d = distance(key, table[i].key);

		if (d < best) {
			best = d;
			near = table[i].key;
		}
	}
	snprintf(why, len, "unknown saturn_ key (");
	if (near) {
		n = strlen(why);
		snprintf(why + n, len - n, "did you mean %s? ", near);
	}
	n = strlen(why);
	snprintf(why + n, len - n, "known, after saturn_:");
	for (int i = 0; i < NROWS; i++) {
		n = strlen(why);
		snprintf(why + n, len - n, "%s%s", i ? ", " : " ", table[i].key + 7);
	}
	n = strlen(why);
	snprintf(why + n, len - n, ")");
}

int saturn_sched_settings_parse(saturn_sched_settings_t *s, const char *params,
				saturn_error_t *err)
{
	char *copy, *tok, *save = NULL;
	int bad = 0;

	if (!params || !params[0])
		return 0;
	copy = strdup(params);
	if (!copy) {
		saturn_error_set(err, "out of memory");
		return 1;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		const saturn_setting_def_t *d;
		char why[SATURN_ERROR_LEN];

		if (strncmp(tok, "saturn_", 7) != 0)
			continue;
		if (!eq) {
			if (!bad++)
				saturn_error_set(err, "SchedulerParameters %s: needs a value (key=value)",
						 tok);
			continue;
		}
		*eq = '\0';
		d = find_row(tok);
		if (!d)
			unknown_why(tok, why, sizeof(why));
		else if (apply(s, d, eq + 1, why, sizeof(why)) == 0)
			continue;
		if (!bad++)
			saturn_error_set(err, "SchedulerParameters %s=%s: %s", tok, eq + 1, why);
	}
	free(copy);
	return bad;
}
