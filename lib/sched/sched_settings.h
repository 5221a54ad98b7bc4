/* sched_settings.h - the saturn_* keys of SchedulerParameters: the settings
 * struct, the one table of every key (name, type, range, default, field,
 * one line of documentation) and its parser (sched_settings.c).
 *
 * The plugin parses slurm.conf's SchedulerParameters once at init and at
 * each reconfigure into one saturn_sched_settings_t (the reconfiguration
 * keys into its .reconfig member); every pass of a cycle reads that struct.
 * Included by sched_core.h.
 *
 * To add a key: a field below, one row in the table of sched_settings.c,
 * and its paragraph in doc/sched_saturn.8 (tests/sched/test_settings fails
 * for a key the page does not name).
 */
#ifndef SATURN_SCHED_SETTINGS_H
#define SATURN_SCHED_SETTINGS_H

#include <stddef.h>

#include "error.h"
#include "node_class.h"

/* SchedulerParameters saturn_reconfigure* keys (reconfig.h). */
typedef struct saturn_reconfig_settings {
	int default_on;       /* saturn_reconfigure=yes|no: the default of jobs that
			       * did not say (--saturn-reconfigure) (no) */
	double margin_s;      /* saturn_reconfigure_margin: least gain, seconds (60) */
	int max_restarts;     /* saturn_reconfigure_max: a task restarted this often
			       * (Slurm's restart count) is left alone (2; 0 = never) */
	double checkpoint_s;  /* saturn_reconfigure_checkpoint: seconds from the signal
			       * to the exit (30) */
	double startup_s;     /* saturn_reconfigure_startup: seconds from the new start
			       * to the first batch (30) */
	double requeue_delay_s; /* not a key: cred_expire + 1 (the plugin reads
				 * AuthInfo; 121 by default) */
} saturn_reconfig_settings_t;

typedef struct saturn_sched_settings {
	double interval_s;     /* saturn_interval: seconds between cycles (10) */
	double solver_time_s;  /* saturn_solver_time: planner budget (2) */
	char *state_dir;       /* saturn_state_dir: NULL = StateSaveLocation/saturn */
	char *profile_dir;     /* saturn_profile_dir: NULL = STATE_DIR/profiles */
	double min_gain;       /* saturn_min_gain: fraction, 0..1 (0.05) */
	int backfill;          /* saturn_backfill: load sched/backfill (1) */
	double release_slack_s; /* saturn_release_slack: release when due within (5) */
	char *profiler;        /* saturn_profiler: saturn-profile program, NULL = none */
	int profile_time_min;  /* saturn_profile_time: profiler job time limit, min (30) */
	int measure_predicted; /* saturn_measure_predicted: re-measure a predicted option
				* before releasing a task onto it (1; needs saturn_profiler) */
	int profile_cache;     /* saturn_profile_cache: profiler jobs reuse PROFILE_DIR/cache/UID (1) */
	double internode_gbs;  /* saturn_internode_bw: bus bandwidth of a collective across
				* nodes, GB/s, handed to the profiler jobs (--internode-bw)
				* for predicted multi-node options; 0 = none (0) */
	int fairness;          /* saturn_fairness / saturn_objective: SATURN_FAIR_* */
	int bound;             /* saturn_bound: the no-harm bound of saturn_objective=bounded,
				* SATURN_BOUND_SHARE (fair-share split) or _STOCK (stock
				* Slurm with the users' requests) (multiuser.h) */
	int feedback;          /* saturn_feedback: runtime feedback (feedback.h) corrects
				* the profile's speeds (1); 0 = the profile only */
	int record;            /* saturn_record: where a released task's plan record
				* goes, SATURN_PLANREC_* (planrec.h; admin_comment) */
	saturn_class_rules_t *node_classes; /* saturn_node_classes: the admin's
					     * classes (node_class.h), NULL = derived */
	char *node_classes_text; /* the setting as given, NULL = none */
	int max_tasks;         /* saturn_max_tasks: most tasks one plan takes; past it
				* the first in Slurm's queue order (SATURN_MAX_TASKS) */
	/* bounded resources (budget.h): MiB of parsed profiles cached per user
	 * and in all (0 = no cap), companion jobs per user at once (0 = none) */
	int profile_cache_mb, profile_cache_total_mb, companion_jobs;
	saturn_reconfig_settings_t reconfig; /* saturn_reconfigure* */
	int record_cycles;     /* saturn_record_cycles: keep the inputs and outputs of the
				* last N cycles in STATE_DIR/cycles for `saturn replay`
				* (sched_cycle.h); 0 = off (0) */
} saturn_sched_settings_t;

/* saturn_fairness: none = one plan of every user's tasks (shortest
 * makespan of all); share = users planned one after the other in order of
 * their fair-share finish tags (fairness.h). */
enum { SATURN_FAIR_NONE = 0, SATURN_FAIR_SHARE = 1 };
/* saturn_objective (multiuser.h) selects the same field: makespan (= none),
 * share, weighted (flow times weighted by Slurm's priorities) or bounded
 * (no batch later than its fair-share deadline where a plan can, then the
 * shortest makespan). */
enum { SATURN_FAIR_WEIGHTED = 2, SATURN_FAIR_BOUNDED = 3 };
enum { SATURN_BOUND_SHARE = 0, SATURN_BOUND_STOCK = 1 };

/* --- the table of keys ------------------------------------------------ */

/* How a key's value is read, and the type of its field. */
typedef enum saturn_setting_type {
	SATURN_SET_NUM,       /* a number in [lo, hi]; double field */
	SATURN_SET_INT,       /* a whole number in [lo, hi]; int field */
	SATURN_SET_BOOL,      /* yes|no (also 1|0, true|false); int field */
	SATURN_SET_CHOICE,    /* one of the row's choices; int field */
	SATURN_SET_PATH,      /* an absolute path (<= 1024 bytes); char * field */
	SATURN_SET_PATH_NONE, /* an absolute path, or none (NULL); char * field */
	SATURN_SET_CUSTOM,    /* the row's own parser (default: zero, NULL) */
} saturn_setting_type_t;

/* A word a SATURN_SET_CHOICE key accepts and the value it stores. */
typedef struct saturn_setting_choice {
	const char *word;
	int value;
} saturn_setting_choice_t;

typedef struct saturn_setting_def {
	const char *key;            /* "saturn_interval" */
	saturn_setting_type_t type;
	size_t offset;              /* of the field in saturn_sched_settings_t */
	size_t size;                /* of the field (checked by the unit test) */
	double lo, hi;              /* NUM, INT: the range */
	double dflt;                /* NUM, INT, BOOL, CHOICE: the default */
	const saturn_setting_choice_t *choices; /* CHOICE: ends with word NULL */
	/* CUSTOM: parse val into s; 0, or -1 with why (len bytes) filled */
	int (*parse)(saturn_sched_settings_t *s, const char *val, char *why, size_t len);
	const char *why;            /* what a bad value must be ("must be ...");
				     * NULL for CHOICE: "must be A, B or C" */
	const char *doc;            /* one line: what it sets */
} saturn_setting_def_t;

/* The table: every saturn_* key, in the order of doc/sched_saturn.8.
 * *n (may be NULL) gets the number of rows. */
const saturn_setting_def_t *saturn_settings_table(int *n);

/* Defaults of every key from the table (strings NULL, the rules none),
 * reconfig.requeue_delay_s 121 (Slurm's cred_expire 120, + 1). */
void saturn_sched_settings_init(saturn_sched_settings_t *s);

/* One saturn_*= value as a number: a whole decimal string in [lo, hi],
 * finite. 0 with *out set, or -1 (*out unchanged). */
int saturn_setting_num(const char *v, double lo, double hi, double *out);

/* Free the strings and the rules (s itself is the caller's). NULL is
 * allowed. */
void saturn_sched_settings_free(saturn_sched_settings_t *s);

/* Parse every saturn_* key out of a SchedulerParameters string (comma
 * separated key=value; keys without the saturn_ prefix are ignored; NULL
 * is an empty string) into s, which must have been initialised. Bad values
 * keep the previous value; returns the number of bad keys (0 = all good)
 * with err describing the first, naming the key and the value
 * ("SchedulerParameters saturn_interval=abc: must be a number of seconds
 * from 1 to 3600"); an unknown saturn_ key is bad. */
int saturn_sched_settings_parse(saturn_sched_settings_t *s, const char *params,
				saturn_error_t *err);

#endif /* SATURN_SCHED_SETTINGS_H */
