/* sched_settings.c - the saturn_* keys of SchedulerParameters: defaults,
 * parsing with range checks, freeing (sched_core.h). Bad values keep the
 * previous value and are counted, never fatal.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planrec.h"
#include "sched_core.h"

/* --- settings -------------------------------------------------------- */

void saturn_sched_settings_init(saturn_sched_settings_t *s)
{
	memset(s, 0, sizeof(*s));
	s->interval_s = 10.0;
	s->solver_time_s = 2.0;
	s->min_gain = 0.05;
	s->backfill = 1;
	s->release_slack_s = 5.0;
	s->profile_time_min = 30;
	s->measure_predicted = 1;
	s->profile_cache = 1;
	s->feedback = 1;
	s->record = SATURN_PLANREC_ADMIN_COMMENT;
	s->max_tasks = SATURN_MAX_TASKS;
}

void saturn_sched_settings_free(saturn_sched_settings_t *s)
{
	if (!s)
		return;
	free(s->state_dir);
	free(s->profile_dir);
	free(s->profiler);
	s->state_dir = s->profile_dir = s->profiler = NULL;
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
		const char *key = tok, *val, *why = NULL;
		char err_classes[SATURN_ERROR_LEN];

		if (strncmp(tok, "saturn_", 7) != 0)
			continue;
		if (!eq) {
			why = "needs a value (key=value)";
			goto bad;
		}
		*eq = '\0';
		val = eq + 1;
		if (!strcmp(key, "saturn_interval")) {
			if (saturn_setting_num(val, 1, 3600, &s->interval_s) < 0)
				why = "must be a number of seconds from 1 to 3600";
		} else if (!strcmp(key, "saturn_solver_time")) {
			if (saturn_setting_num(val, 0.05, 600, &s->solver_time_s) < 0)
				why = "must be a number of seconds from 0.05 to 600";
		} else if (!strcmp(key, "saturn_min_gain")) {
			if (saturn_setting_num(val, 0, 1, &s->min_gain) < 0)
				why = "must be a fraction from 0 to 1 (e.g. 0.05)";
		} else if (!strcmp(key, "saturn_release_slack")) {
			if (saturn_setting_num(val, 0, 3600, &s->release_slack_s) < 0)
				why = "must be a number of seconds from 0 to 3600";
		} else if (!strcmp(key, "saturn_backfill")) {
			if (parse_bool(val, &s->backfill) < 0)
				why = "must be yes or no";
		} else if (!strcmp(key, "saturn_state_dir")) {
			if (parse_path(val, &s->state_dir) < 0)
				why = "must be an absolute path";
		} else if (!strcmp(key, "saturn_profile_dir")) {
			if (parse_path(val, &s->profile_dir) < 0)
				why = "must be an absolute path";
		} else if (!strcmp(key, "saturn_profiler")) {
			if (!strcmp(val, "none")) {
				free(s->profiler);
				s->profiler = NULL;
			} else if (parse_path(val, &s->profiler) < 0) {
				why = "must be an absolute path or none";
			}
		} else if (!strcmp(key, "saturn_profile_time")) {
			double m;

			if (saturn_setting_num(val, 1, 10080, &m) < 0 || m != (int)m)
				why = "must be a whole number of minutes from 1 to 10080";
			else
				s->profile_time_min = (int)m;
		} else if (!strcmp(key, "saturn_measure_predicted")) {
			if (parse_bool(val, &s->measure_predicted) < 0)
				why = "must be yes or no";
		} else if (!strcmp(key, "saturn_internode_bw")) {
			if (saturn_setting_num(val, 0, 1e6, &s->internode_gbs) < 0)
				why = "must be a bandwidth in GB/s from 0 (none) to 1e6";
		} else if (!strcmp(key, "saturn_profile_cache")) {
			if (parse_bool(val, &s->profile_cache) < 0)
				why = "must be yes or no";
		} else if (!strcmp(key, "saturn_fairness")) {
			if (!strcmp(val, "none"))
				s->fairness = SATURN_FAIR_NONE;
			else if (!strcmp(val, "share"))
				s->fairness = SATURN_FAIR_SHARE;
			else
				why = "must be none or share";
		} else if (!strcmp(key, "saturn_objective")) {
			if (!strcmp(val, "makespan"))
				s->fairness = SATURN_FAIR_NONE;
			else if (!strcmp(val, "share"))
				s->fairness = SATURN_FAIR_SHARE;
			else if (!strcmp(val, "weighted"))
				s->fairness = SATURN_FAIR_WEIGHTED;
			else if (!strcmp(val, "bounded"))
				s->fairness = SATURN_FAIR_BOUNDED;
			else
				why = "must be makespan, share, weighted or bounded";
		} else if (!strcmp(key, "saturn_bound")) {
			if (!strcmp(val, "share"))
				s->bound = SATURN_BOUND_SHARE;
			else if (!strcmp(val, "stock"))
				s->bound = SATURN_BOUND_STOCK;
			else
				why = "must be share or stock";
		} else if (!strcmp(key, "saturn_feedback")) {
			if (parse_bool(val, &s->feedback) < 0)
				why = "must be yes or no";
		} else if (!strcmp(key, "saturn_record")) {
			if (saturn_planrec_field_parse(val, &s->record) < 0)
				why = "must be admin_comment, comment or none";
		} else if (!strcmp(key, "saturn_max_tasks")) {
			double m;

			if (saturn_setting_num(val, 1, SATURN_MAX_TASKS, &m) < 0 || m != (int)m)
				why = "must be a whole number of tasks from 1 to 100000";
			else
				s->max_tasks = (int)m;
		} else if (!strcmp(key, "saturn_node_classes")) {
			if (parse_classes(s, val, err_classes, sizeof(err_classes)) < 0)
				why = err_classes;
		} else if (!strncmp(key, "saturn_reconfigure", 18)) {
			/* reconfig.c: saturn_reconfig_settings_parse */
		} else {
			why = "unknown saturn_ key (known: saturn_interval, saturn_solver_time, saturn_state_dir, saturn_profile_dir, saturn_min_gain, saturn_backfill, saturn_release_slack, saturn_profiler, saturn_profile_time, saturn_measure_predicted, saturn_profile_cache, saturn_internode_bw, saturn_fairness, saturn_objective, saturn_bound, saturn_feedback, saturn_record, saturn_node_classes, saturn_max_tasks, saturn_reconfigure*)";
		}
		if (!why)
			continue;
		if (eq)
			*eq = '=';
bad:
		if (!bad++)
			saturn_error_set(err, "SchedulerParameters %s: %s", tok, why);
	}
	free(copy);
	return bad;
}
