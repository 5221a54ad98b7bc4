/* sched_cycle.h - one scheduling cycle of sched/saturn as one call.
 *
 * The plugin gathers the cycle's inputs (the snapshot under one read-lock
 * section, then the progress files and the batches' profiles without
 * locks), calls saturn_cycle_run(), and carries out its outputs (the
 * decisions under one write-lock section that re-validates each against
 * the live job record; the reconfiguration signals). Everything between
 * -- runtime feedback, building the problem, the carried plan, planning
 * (fair share, the multi-user objectives, the makespan, first come first
 * served), choosing between the carried and the new plan, deciding once,
 * the users' limits on releases, batches waiting for their profiler jobs
 * (cycle_profiler.h), holding a release onto a predicted option
 * for a measurement job (cycle_measure.h: the plugin submits the jobs the
 * cycle asks for), when the next cycle is due, and whether
 * running tasks are restarted with another option -- happens here, with no
 * file, lock or clock of its own: the same inputs and the same planner
 * results give the same outputs (cycle_record.h records them; `saturn
 * replay` runs them again).
 *
 * The planner's search is bounded by time, so its results depend on the
 * machine. A cycle's planner calls go through a tape (saturn_plan_tape_t,
 * planner.h): recorded live, played back on replay, so that a replay
 * checks every decision around the search exactly.
 */
#ifndef SATURN_SCHED_CYCLE_H
#define SATURN_SCHED_CYCLE_H

#include "budget.h"
#include "cycle_measure.h"
#include "cycle_profiler.h"
#include "feedback.h"
#include "model.h"
#include "planner.h"
#include "profile.h"
#include "reconfig.h"
#include "sched_build.h"
#include "sched_decision.h"
#include "sched_settings.h"
#include "sched_snapshot.h"

/* --- the profiles a cycle plans with --------------------------------- */

/* The batches' profiles loaded once for the cycle: per batch (uid, name),
 * its profile (klass "") and its per-class profiles (klass a node class),
 * or prof NULL where the file is absent or was refused. The cycle looks
 * profiles up here only (saturn_profset_lookup*), never in files. */
typedef struct saturn_profset_entry {
	long uid;
	char batch[SATURN_BATCH_NAME_MAX + 1];
	char klass[SATURN_CLASS_NAME_MAX + 1];
	const saturn_profile_t *prof; /* owned when the set owns its profiles */
} saturn_profset_entry_t;

typedef struct saturn_profset {
	int n, cap;
	saturn_profset_entry_t *e;
	int owns; /* 1: saturn_profset_free destroys the profiles (a parsed record) */
} saturn_profset_t;

/* Add (uid, batch, klass) -> prof (NULL: known absent); klass NULL or ""
 * is the batch's own profile. An entry for the same key is replaced. 0, or
 * -1 on ENOMEM or a name over its limit (nothing added). */
int saturn_profset_add(saturn_profset_t *ps, long uid, const char *batch, const char *klass,
		       const saturn_profile_t *prof);
/* The entry of (uid, batch, klass) or NULL. */
const saturn_profset_entry_t *saturn_profset_find(const saturn_profset_t *ps, long uid,
						  const char *batch, const char *klass);
/* saturn_profile_lookup_fn over a set (arg: the set): the batch's own
 * profile, or NULL. */
const saturn_profile_t *saturn_profset_lookup(const char *batch, long uid, void *arg);
/* The signature of saturn_snapshot_t.class_profile over a set (arg: the
 * set): the profile of the batch measured on klass, or NULL. */
const saturn_profile_t *saturn_profset_lookup_class(const char *batch, long uid,
						    const char *klass, void *arg);
/* Empty the set (destroying the profiles when it owns them); NULL allowed. */
void saturn_profset_free(saturn_profset_t *ps);

/* --- inputs, state, outputs ----------------------------------------- */

typedef struct saturn_cycle_in {
	/* The snapshot as gathered: held, released and running tasks, nodes,
	 * busy GPUs; the progress files read into it (batches_left,
	 * batches_done, progress_spb, progress_updated); the tasks re-held
	 * this cycle already marked held. The cycle writes its feedback
	 * fields (obs_spb, prior_spb, first_report), s->feedback,
	 * s->class_rules (cfg's) and s->class_profile (the profile set's);
	 * the tasks' states stay as gathered (the apply marks the ones it
	 * releases). The caller keeps it for the apply. */
	saturn_snapshot_t *snap;
	const saturn_profset_t *profiles;
	const saturn_sched_settings_t *cfg;
	/* RequeueExit(Hold) lists the checkpoint's exit status 75: running
	 * tasks may be restarted (saturn_reconfig_requeues). */
	int requeue_ok;
	/* Tasks re-held this cycle because they requeued themselves
	 * (saturn_sched_self_requeued): they ran in the carried plan ahead of
	 * the tasks planned after them, so it is not carried. */
	int requeued_now;
	/* The planner's search (saturn_planner_opts_t.abort_cb): stop early
	 * (slurmctld shutting down). May be NULL. */
	int (*abort_cb)(void *arg);
	void *abort_arg;
	/* At most this many annealing decodes per search
	 * (saturn_planner_opts_t.max_evals; 0: none, the clock alone): an
	 * offline caller (a simulation) that wants plans independent of the
	 * machine's load. The plugin leaves it 0. */
	unsigned long max_evals;
	/* The planner results: NULL to solve; a recording tape to record
	 * every result; a playing tape to replay them (planner.h). */
	saturn_plan_tape_t *tape;
	/* Measurement (cfg->profiler and cfg->measure_predicted): the
	 * batches' measurement records (a batch with none starts from an
	 * empty one), and each user's profiler and measurement jobs pending
	 * or running (cfg->companion_jobs limits them). NULL: none. */
	const saturn_measset_t *measure;
	const saturn_uidtab_t *companions;
	/* Profiler jobs (cfg->profiler): per batch of the snapshot, whether
	 * it has a profile file, its profiler record and the state of its
	 * profiler and per-class profiler jobs (cycle_profiler.h). A batch
	 * without an entry (or NULL) is planned as it is. */
	const saturn_profstate_t *profiler;
} saturn_cycle_in_t;

/* What a cycle leaves to the next one. Zero it before the first cycle
 * (saturn_cycle_state_init); saturn_cycle_state_free empties it. */
typedef struct saturn_cycle_state {
	saturn_plan_t *plan;    /* the plan kept: carried into the next cycle; NULL */
	char plan_id[64];       /* its id, "pNOW-SEQ"; "" before the first */
	unsigned long plan_seq; /* the last plan's sequence number */
	double plan_now;        /* the snapshot time of the cycle that kept it */
	/* when the kept plan was made and its makespan then (the switch
	 * rule: saturn_sched_switch_gain); 0: not known (restored) */
	double made_now, made_makespan;
	/* runtime feedback (feedback.h), kept across cycles; NULL until the
	 * first running task reports (and under saturn_feedback=no) */
	saturn_fb_t *feedback;
	/* The previous cycle released tasks from the carried plan and left
	 * the search to this one (decisions are made once per cycle: a task
	 * due under a carried plan that holds to its prediction starts
	 * without waiting for a search; the search follows in the next
	 * cycle). A carried plan that has slipped is searched against first. */
	int solve_due;
	/* what was logged, so that a condition that lasts is logged when it
	 * changes and every 10 minutes, not every cycle: the tasks left held
	 * (their number, when), no usable node (when), fair share given up
	 * for tasks on several nodes (1 once logged) */
	int skipped_logged;
	double skipped_at, nonodes_at;
	int share_multinode_logged;
} saturn_cycle_state_t;

void saturn_cycle_state_init(saturn_cycle_state_t *st);
void saturn_cycle_state_free(saturn_cycle_state_t *st);

/* One log line of the cycle, for the plugin's log at its level. */
typedef enum saturn_cycle_level {
	SATURN_CYCLE_ERROR = 0,
	SATURN_CYCLE_INFO,
	SATURN_CYCLE_VERBOSE,
	SATURN_CYCLE_DEBUG,
	SATURN_CYCLE_DEBUG2,
} saturn_cycle_level_t;

typedef struct saturn_cycle_log {
	saturn_cycle_level_t level;
	char *text; /* without the "sched/saturn: " prefix */
} saturn_cycle_log_t;

typedef enum saturn_cycle_plan_kind {
	SATURN_CYCLE_NO_PLAN = 0, /* nothing to plan (no task, no node, no
				   * problem built); no plan kept */
	SATURN_CYCLE_CARRIED,     /* the carried plan kept */
	SATURN_CYCLE_NEW,         /* a new plan adopted (out->plan_id) */
} saturn_cycle_plan_kind_t;

typedef struct saturn_cycle_out {
	saturn_cycle_plan_kind_t kind;
	/* the problem as built (tasks left held with their reasons:
	 * build.nskipped); valid until saturn_cycle_out_free */
	saturn_sched_build_t build;
	int built;              /* build filled */
	const saturn_plan_t *plan; /* the plan decided from (the state's), or NULL */
	char plan_id[64];
	/* the decisions, one per held task of the plan: made once */
	int nd;
	saturn_decision_t *d;
	/* running tasks to restart with another option (reconfig.h);
	 * reconf.nchoices 0 when none */
	saturn_reconfig_result_t reconf;
	/* seconds after the snapshot when the next cycle must run for a task
	 * due then (0: at once, as soon as the loop allows); -1: none */
	double next_due_s;
	/* the plan's solve time as the planner reported it (not compared on
	 * replay: a recorded tape gives the recorded one) */
	double solve_s;
	/* measurement jobs to submit (the tasks waiting for each are held in
	 * d with "saturn: measuring predicted ..."), and the measurement
	 * records this cycle changed, whole (the plugin keeps and writes
	 * them) */
	int nmeasure;
	saturn_cycle_measure_t *measure;
	saturn_measset_t meas_records;
	/* profiler jobs to submit; the tasks taken out of the cycle to wait
	 * for a profiler job (not in the decisions: the plugin sets their
	 * reasons); the profiler records this cycle changed */
	int nprofilers, nprof_holds, nprof_records;
	saturn_cycle_profiler_t *profilers;
	saturn_cycle_prof_hold_t *prof_holds;
	saturn_cycle_prof_rec_t *prof_records;
	int nlog, cap_log;
	saturn_cycle_log_t *log;
} saturn_cycle_out_t;

/* Run one cycle: in (whose snapshot it updates, see saturn_cycle_in_t)
 * and st (the previous cycle's state, updated in place to the next) into
 * out (zeroed by the call; free with saturn_cycle_out_free). Returns 0, or
 * -1 on ENOMEM or a problem that cannot be built (logged into out, no
 * decision, out->kind SATURN_CYCLE_NO_PLAN; st keeps its plan, or the
 * plan this cycle chose when deciding from it ran out of memory, and the
 * feedback folded in). The same in, st and planner results (in->tape
 * playing) give the same out and st: no clock, file or lock is read. */
int saturn_cycle_run(const saturn_cycle_in_t *in, saturn_cycle_state_t *st,
		     saturn_cycle_out_t *out);

void saturn_cycle_out_free(saturn_cycle_out_t *out);

/* The outcome of submitting out->measure[i]: job_id the job, 0 when it
 * could not be submitted. rec is the batch's record as the plugin keeps
 * it (out->meas_records' copy, updated: the job and its list, or no job).
 * With a job, the held decisions' reasons name it ("... (job J)"). Without
 * one the tasks stay held this cycle; the options count as tried, so the
 * next cycle relies on their predictions. Appends to acts (zeroed before
 * the first call) the LOG and SAVE actions for the plugin to carry out
 * (saturn_bpol_*). 0, or -1 (ENOMEM: rec updated as far as it could be, a
 * SAVE appended where it could be). */
int saturn_cycle_measure_submitted(saturn_cycle_out_t *out, int i, uint32_t job_id,
				   saturn_meas_rec_t *rec, saturn_bpol_actions_t *acts);

/* The outcome of submitting out->profilers[i]: job_id the job, 0 when it
 * could not be submitted. rec is the batch's record as the plugin keeps
 * it (out->prof_records' copy), updated: the job, or fallen back to the
 * users' requests. With a job, the reasons of the tasks waiting for it
 * name it ("saturn: profiling (job N)"); without one they stay held this
 * cycle and the next plans them from their requests. Appends the LOG and
 * SAVE actions for the plugin to carry out to acts. 0, or -1 (ENOMEM). */
int saturn_cycle_profiler_submitted(saturn_cycle_out_t *out, int i, uint32_t job_id,
				    saturn_prof_rec_t *rec, saturn_bpol_actions_t *acts);

/* internal (cycle_measure.c, cycle_profiler.c): the measurement step on
 * out's decisions; the profiler step (takes the waiting tasks out of
 * in->snap: returns their number); the note of a batch that fell back
 * put before its held decisions' reasons; appending a log line to out
 * (dropped on ENOMEM) */
void saturn_cycle_measure_step(const saturn_cycle_in_t *in, saturn_cycle_out_t *out);
int saturn_cycle_profiler_step(const saturn_cycle_in_t *in, saturn_cycle_out_t *out);
void saturn_cycle_profiler_notes(const saturn_cycle_in_t *in, saturn_cycle_out_t *out);
__attribute__((format(printf, 3, 4))) void
saturn_cycle_log(saturn_cycle_out_t *out, saturn_cycle_level_t level, const char *fmt, ...);

#endif /* SATURN_SCHED_CYCLE_H */
