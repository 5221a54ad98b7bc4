/* submit_rules.c - the allow-list of what a user may change on a Saturn
 * task (see submit_rules.h); batch names and TRES strings are in
 * lib/model/jobreq.c. Deliberately free of Slurm headers and of allocation, so
 * the plugins and the unit test can use it.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "submit_rules.h"

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
	/* the same from Slurm 25.11 on (job_id became step_id.job_id) */
	{"step_id", {SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE, SATURN_MODIFY_IGNORE}},
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
			saturn_why(why, len,
				"%s is not a field a user may change on a %s Saturn task",
				f[i].option ? f[i].option : "part of the request",
				saturn_task_phase_name(phase));
		else
			saturn_why(why, len,
				"%s (%s) may not be changed on a %s Saturn task: %s",
				f[i].option ? f[i].option : f[i].field, f[i].field,
				saturn_task_phase_name(phase),
				refuse_reason(f[i].field, phase));
		return -1;
	}
	return 0;
}
