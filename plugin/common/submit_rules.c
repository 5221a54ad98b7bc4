/* submit_rules.c - batch-name syntax, default batch names and the reading
 * of Slurm TRES request strings, shared by spank_saturn.so and
 * job_submit_saturn.so (see submit_rules.h). Deliberately free of Slurm
 * headers and of allocation, so both plugins and the unit test can use it.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "submit_rules.h"

static int name_char_ok(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

__attribute__((format(printf, 3, 4))) static void
set_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

int saturn_batch_name_check(const char *name, char *why, size_t len)
{
	size_t n;

	if (!name || !*name) {
		set_why(why, len, "the name is empty");
		return -1;
	}
	n = strlen(name);
	if (n > SATURN_BATCH_NAME_MAX) {
		set_why(why, len, "the name is longer than %d characters",
			SATURN_BATCH_NAME_MAX);
		return -1;
	}
	if (name[0] == '-' || name[0] == '.') {
		set_why(why, len, "the name must not start with '-' or '.'");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (!name_char_ok(c)) {
			if (isprint(c) && c != ' ')
				set_why(why, len,
					"character '%c' not allowed (use A-Z a-z 0-9 . _ -)",
					c);
			else
				set_why(why, len,
					"character 0x%02x not allowed (use A-Z a-z 0-9 . _ -)",
					c);
			return -1;
		}
	}
	return 0;
}

char *saturn_batch_name_default(const char *job_name,
				char out[SATURN_BATCH_NAME_MAX + 1])
{
	size_t o = 0;

	if (job_name) {
		for (const char *p = job_name; *p && o < SATURN_BATCH_NAME_MAX;
		     p++) {
			int c = (unsigned char)*p;

			if (o == 0 && (c == '-' || c == '.'))
				continue;
			out[o++] = name_char_ok(c) ? (char)c : '_';
		}
	}
	out[o] = '\0';
	if (o == 0)
		snprintf(out, SATURN_BATCH_NAME_MAX + 1, "%s",
			 SATURN_BATCH_DEFAULT);
	return out;
}

/* Parse a GRES count ("4", "2k"); 0 on success. */
static int parse_count(const char *s, size_t n, long long *out)
{
	char buf[32];
	char *end;
	long long v;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (!isdigit((unsigned char)buf[0]))
		return -1;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		v *= 1024;
		end++;
		break;
	case 'm':
	case 'M':
		v *= 1024 * 1024;
		end++;
		break;
	case 'g':
	case 'G':
		v *= 1024LL * 1024 * 1024;
		end++;
		break;
	default:
		return -1;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

int saturn_tres_parse(const char *tres, saturn_tres_req_t *req, char *why,
		      size_t len)
{
	const char *p = tres;

	memset(req, 0, sizeof(*req));
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *e = p, *name, *colon, *last;
		size_t name_len;
		long long count = 1;

		if (n >= 5 && (!strncmp(e, "gres:", 5) || !strncmp(e, "gres/", 5))) {
			e += 5;
			n -= 5;
		}
		name = e;
		colon = memchr(e, ':', n);
		name_len = colon ? (size_t)(colon - e) : n;
		if (name_len == 0) {
			set_why(why, len, "empty GRES name in '%s'", tres);
			return -1;
		}
		if (colon) {
			/* NAME:TYPE, NAME:COUNT or NAME:TYPE:COUNT: the count
			 * is the last field when it starts with a digit. */
			last = e + n;
			while (last > colon + 1 && last[-1] != ':')
				last--;
			if (isdigit((unsigned char)*last)) {
				if (parse_count(last, (size_t)(e + n - last), &count) ||
				    count <= 0 || count > 1000000) {
					set_why(why, len,
						"bad count in GRES request '%.*s'",
						(int)n, e);
					return -1;
				}
			}
		}
		if (name_len == 3 && !strncmp(name, "gpu", 3)) {
			if (req->gpus + count > 1000000) {
				set_why(why, len, "too many GPUs in '%s'", tres);
				return -1;
			}
			req->gpus += (int)count;
		} else {
			if (!req->other)
				snprintf(req->first_other, sizeof(req->first_other),
					 "%.*s", (int)n, e);
			req->other++;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* --- the update allow-list ------------------------------------------------ */

/* Every field a non-operator may set in an update of a Saturn task, per
 * phase (held, released-not-started, running). Anything else is refused;
 * saturn-slurm(8) has the reasons, field by field:
 * - the plan decides when, where and with how many GPUs a task runs, so
 *   hold/priority/nice, GPUs/TRES, node counts and lists, CPUs, memory,
 *   features, partition, QOS, account, reservation, begin time, deadline,
 *   dependency and array throttle stay as submitted (a change of partition,
 *   QOS or account changes where the task may run and under which limits);
 * - a released task holds capacity in the plan, a running one runs once.
 * A shorter time limit only brings the task's end closer (the planner uses
 * the limit as an upper bound of the runtime). */
static const struct modify_allow {
	const char *field;
	saturn_modify_rule_t rule[SATURN_PHASE_COUNT];
} modify_allow[] = {
	/* what the user may change */
	{"comment", {SATURN_MODIFY_ALLOW, SATURN_MODIFY_ALLOW, SATURN_MODIFY_ALLOW}},
	{"name", {SATURN_MODIFY_ALLOW, SATURN_MODIFY_ALLOW, SATURN_MODIFY_ALLOW}},
	{"mail_type", {SATURN_MODIFY_ALLOW, SATURN_MODIFY_ALLOW, SATURN_MODIFY_ALLOW}},
	{"mail_user", {SATURN_MODIFY_ALLOW, SATURN_MODIFY_ALLOW, SATURN_MODIFY_ALLOW}},
	{"time_limit", {SATURN_MODIFY_DECREASE, SATURN_MODIFY_DECREASE, SATURN_MODIFY_DECREASE}},
	/* slurmctld fills it in with the job's owner (only a super user may
	 * send another one, and then acts as that user) */
	{"user_id", {SATURN_MODIFY_SAME, SATURN_MODIFY_SAME, SATURN_MODIFY_SAME}},
	/* which job: set by scontrol and slurmctld for every update */
	{"job_id", {SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE}},
	{"job_id_str", {SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE}},
	{"array_bitmap", {SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE}},
	/* the sender's host, set by slurmctld */
	{"alloc_node", {SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE}},
	/* derived by slurmctld while unpacking: the hashes of the (refused)
	 * script and environment, and the select plugin's empty job info */
	{"script_hash", {SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE}},
	{"env_hash", {SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE}},
	{"select_jobinfo", {SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE}},
};

saturn_modify_rule_t saturn_modify_rule(const char *field,
					saturn_task_phase_t phase)
{
	if (!field || (int)phase < 0 || phase >= SATURN_PHASE_COUNT)
		return SATURN_MODIFY_REFUSE;
	for (size_t i = 0; i < sizeof(modify_allow) / sizeof(modify_allow[0]); i++)
		if (!strcmp(modify_allow[i].field, field))
			return modify_allow[i].rule[phase];
	return SATURN_MODIFY_REFUSE;
}

const char *saturn_task_phase_name(saturn_task_phase_t phase)
{
	switch (phase) {
	case SATURN_PHASE_HELD:
		return "held";
	case SATURN_PHASE_RELEASED:
		return "released (not started)";
	case SATURN_PHASE_RUNNING:
		return "running";
	default:
		return "unknown";
	}
}

int saturn_modify_is_hold_field(const char *field)
{
	return field && (!strcmp(field, "priority") || !strcmp(field, "nice") ||
			 !strcmp(field, "alloc_sid"));
}

/* Why a field is refused, in the words a user understands. */
static const char *refuse_reason(const char *field, saturn_task_phase_t phase)
{
	static const struct {
		const char *field;
		const char *why;
	} reasons[] = {
		{"priority", "the plan decides when it starts"},
		{"nice", "the plan decides when it starts"},
		{"alloc_sid", "the plan decides when it starts"},
		{"site_factor", "the plan decides when it starts"},
		{"begin_time", "the plan decides when it starts"},
		{"deadline", "the plan decides when it starts"},
		{"dependency", "the plan orders the batch"},
		{"array_inx", "the plan decides how many tasks run at once"},
		{"tres_per_node", "the plan sets the GPU count"},
		{"tres_per_job", "the plan sets the GPU count"},
		{"tres_per_task", "the plan sets the GPU count"},
		{"tres_per_socket", "the plan sets the GPU count"},
		{"req_nodes", "the plan picks the node"},
		{"exc_nodes", "the plan picks the node"},
		{"min_nodes", "the plan picks the node"},
		{"max_nodes", "the plan picks the node"},
		{"features", "the plan picks the node"},
		{"prefer", "the plan picks the node"},
		{"partition", "it would change where the task may run"},
		{"qos", "it would change the task's limits and priority"},
		{"account", "it would change the task's limits and priority"},
		{"reservation", "it would change where the task may run"},
		{"time_limit", "only a shorter time limit is accepted"},
		{"user_id", "a job keeps its owner"},
	};

	for (size_t i = 0; field && i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (!strcmp(reasons[i].field, field))
			return reasons[i].why;
	if (phase == SATURN_PHASE_RUNNING)
		return "a running task keeps what it was started with";
	return "only Comment, JobName, MailType, MailUser and a shorter TimeLimit may be changed";
}

int saturn_modify_check(const saturn_modify_field_t *f, size_t n,
			saturn_task_phase_t phase, size_t *bad, char *why,
			size_t len)
{
	for (size_t i = 0; i < n; i++) {
		int ok;

		switch (saturn_modify_rule(f[i].field, phase)) {
		case SATURN_MODIFY_ALLOW:
		case SATURN_MODIFY_IGNORE:
			ok = 1;
			break;
		case SATURN_MODIFY_DECREASE:
			ok = f[i].has_current && f[i].value <= f[i].current;
			break;
		case SATURN_MODIFY_SAME:
			ok = f[i].has_current && f[i].value == f[i].current;
			break;
		default:
			ok = 0;
			break;
		}
		if (ok)
			continue;
		if (bad)
			*bad = i;
		if (!f[i].field)
			set_why(why, len,
				"%s is not a field a user may change on a %s Saturn task",
				f[i].option ? f[i].option : "part of the request",
				saturn_task_phase_name(phase));
		else
			set_why(why, len,
				"%s (%s) may not be changed on a %s Saturn task: %s",
				f[i].option ? f[i].option : f[i].field, f[i].field,
				saturn_task_phase_name(phase),
				refuse_reason(f[i].field, phase));
		return -1;
	}
	return 0;
}
