/* cycle_record.h - one scheduling cycle written as JSON ("saturn-cycle/1")
 * and read back, so that `saturn replay` can run it again offline
 * (cycle_replay.c) and say whether the same inputs still give the same
 * outputs.
 *
 * A record holds a cycle's inputs (the settings, the snapshot as
 * gathered, the batches' profiles, their measurement records, the
 * profiler facts and the users' companion jobs, requeue_ok), the state it started from
 * (saturn_cycle_state_t), the planner's results (the tape, planner.h), and
 * what it gave: the outputs (decisions, profiler and measurement jobs,
 * holds and records,
 * reconfiguration, next due time, log) and the state it left. The layout is in doc/formats.md
 * ("saturn-cycle/1").
 *
 * The run changes its snapshot and its state in place, so the recorder
 * serialises both before the run (saturn_cycle_capture) and writes the
 * document after it (saturn_cycle_record_to_json).
 *
 * Numbers: doubles are written as the shortest decimal that reads back as
 * the same value, so equal values give equal text; 64-bit masks and keys
 * (uint64_t) as strings "0x..." (JSON readers lose integers above 2^53).
 *
 * Records may come from other sites: the parser bounds every count and
 * name, checks every index into the snapshot's nodes, and names the field
 * it refuses ("snapshot.jobs[3].gpus: must be an integer from 0 to ...").
 * Unknown keys are ignored; a field left out takes its default (the
 * snapshot's: saturn_snapshot_add_job).
 */
#ifndef SATURN_CYCLE_RECORD_H
#define SATURN_CYCLE_RECORD_H

#include <stddef.h>

#include "sched_cycle.h"

#define SATURN_CYCLE_FORMAT "saturn-cycle/1"

/* A record's file name in a recording directory, from its cycle number:
 * name order is cycle order (`saturn replay DIR` reads cycle-*.json in
 * name order). */
#define SATURN_CYCLE_FILE_FORMAT "cycle-%010d.json"

/* Bounds of a record (the parser refuses more). */
#define SATURN_CYCLE_MAX_NODES 65536		      /* snapshot nodes */
#define SATURN_CYCLE_MAX_JOBS 1000000		      /* snapshot jobs */
#define SATURN_CYCLE_MAX_BUSY 1000000		      /* snapshot busy entries */
#define SATURN_CYCLE_MAX_PROFILES 100000	      /* profile set entries */
#define SATURN_CYCLE_MAX_TAPE 4096		      /* planner results of one cycle */
#define SATURN_CYCLE_MAX_FB 1000000		      /* feedback corrections, and jobs */
#define SATURN_CYCLE_MAX_BYTES (1024UL * 1024 * 1024) /* a record file */

/* --- writing ---------------------------------------------------------- */

/* What a record needs from before the run: the snapshot and the state as
 * they were (the run changes both in place). */
typedef struct saturn_cycle_capture {
	char *snapshot; /* saturn_snapshot_to_json */
	char *state_in; /* saturn_cycle_state_to_json */
} saturn_cycle_capture_t;

/* Fill cap from in->snap and st, before saturn_cycle_run. 0, or -1
 * (ENOMEM; cap emptied). Free with saturn_cycle_capture_free. */
int saturn_cycle_capture(saturn_cycle_capture_t *cap, const saturn_cycle_in_t *in,
			 const saturn_cycle_state_t *st);
/* Free the texts (not cap itself); NULL allowed. */
void saturn_cycle_capture_free(saturn_cycle_capture_t *cap);

/* The saturn-cycle/1 document of one cycle (pretty-printed, malloc'd), or
 * NULL (ENOMEM, or a capture that does not parse: not ours). cycle: its
 * number; sched_params: SchedulerParameters as the settings were parsed
 * from (NULL: none); requeue_delay_s: the settings' reconfig one (not a
 * key: the plugin's); in: the run's inputs (requeue_ok and profiles taken
 * from it; the snapshot from before); before: saturn_cycle_capture made
 * before the run; tape: the recording tape the run was given (NULL: none,
 * an empty list); out and state_out: what the run gave. in, before, out
 * and state_out must not be NULL. */
char *saturn_cycle_record_to_json(int cycle, const char *sched_params, double requeue_delay_s,
				  const saturn_cycle_in_t *in, const saturn_cycle_capture_t *before,
				  const saturn_plan_tape_t *tape, const saturn_cycle_out_t *out,
				  const saturn_cycle_state_t *state_out);

/* The parts as JSON text (compact, fixed key order; malloc'd, NULL on
 * ENOMEM). The snapshot: every field but its pointers (feedback,
 * class_rules, class_profile: the cycle sets them). The state: its plan
 * (saturn-plan/1 with each entry's indices kept), its numbers and its
 * feedback table. */
char *saturn_snapshot_to_json(const saturn_snapshot_t *s);
char *saturn_cycle_state_to_json(const saturn_cycle_state_t *st);

/* The outputs alone, canonical: equal outputs give equal text; the
 * "out" object of a record. */
char *saturn_cycle_out_to_json(const saturn_cycle_out_t *out);

/* --- reading ---------------------------------------------------------- */

/* A snapshot from saturn_snapshot_to_json's text: a new snapshot
 * (saturn_snapshot_destroy), or NULL with err naming the field. */
saturn_snapshot_t *saturn_snapshot_from_json(const char *buf, size_t len, saturn_error_t *err);

/* A state from saturn_cycle_state_to_json's text into st (zeroed first;
 * its plan and feedback are new, the caller's: free them with
 * saturn_cycle_record_state_clear). 0, or -1 with err (st zeroed). */
int saturn_cycle_state_from_json(const char *buf, size_t len, saturn_cycle_state_t *st,
				 saturn_error_t *err);
/* Destroy st's plan and feedback and zero it; NULL allowed. (The same as
 * saturn_cycle_state_free, without needing the cycle.) */
void saturn_cycle_record_state_clear(saturn_cycle_state_t *st);

/* A parsed record: everything owned. */
typedef struct saturn_cycle_record {
	int cycle;
	char *sched_params; /* NULL when recorded null */
	double requeue_delay_s;
	int requeue_ok;
	int requeued_now;	       /* saturn_cycle_in_t's, as recorded */
	unsigned long max_evals;
	saturn_snapshot_t *snap;       /* its pointers NULL */
	saturn_profset_t profiles;     /* owns = 1 */
	saturn_measset_t measure;      /* the measurement records given (none: empty) */
	saturn_uidtab_t companions;    /* the users' companion jobs given */
	saturn_profstate_t profiler;   /* the profiler facts given (none: empty) */
	saturn_cycle_state_t state_in; /* plan and feedback owned */
	saturn_plan_tape_t tape;       /* mode SATURN_TAPE_PLAY, pos 0 */
	char *out;		       /* the recorded "out", compact (for saturn_cycle_out_diff) */
	char *state_out;	       /* the recorded "state_out", compact (checked like
					* state_in; for saturn_cycle_state_diff) */
} saturn_cycle_record_t;

/* Parse len bytes of one saturn-cycle/1 document into rec (zeroed
 * first). 0, or -1 with err naming the field ("format: unsupported
 * \"saturn-cycle/9\" (expected \"saturn-cycle/1\")",
 * "snapshot.jobs[3].batch: longer than 64 characters"); rec is then
 * empty. Free with saturn_cycle_record_free. */
int saturn_cycle_record_parse(const char *buf, size_t len, saturn_cycle_record_t *rec,
			      saturn_error_t *err);

/* Read path and parse it; err starts with the path. Its folder is opened
 * as named; the record itself through that descriptor
 * (saturn_file_read_at): a regular file of one link, any owner, at most
 * SATURN_CYCLE_MAX_BYTES; a symlink, FIFO, device or folder is refused
 * without blocking (records may come from another site, or from a folder
 * others can write). 0 or -1 (rec empty). */
int saturn_cycle_record_load(const char *path, saturn_cycle_record_t *rec, saturn_error_t *err);

/* Free what rec holds (not rec itself) and zero it; NULL allowed. */
void saturn_cycle_record_free(saturn_cycle_record_t *rec);

/* --- comparing -------------------------------------------------------- */

/* Compare two "out" objects (a record's and saturn_cycle_out_to_json of
 * a replay) structurally: the same keys, arrays of the same length, equal
 * strings and numbers (1 and 1.0 are equal); "solve_s" keys are ignored
 * at any depth (the planner's time). 0 when equal; 1 with buf naming the
 * first difference ("out.decisions[2].release: 1 recorded, 0 replayed");
 * -1 with buf saying which text is not JSON. */
int saturn_cycle_out_diff(const char *recorded_out_json, const char *replayed_out_json, char *buf,
			  size_t len);

/* The same for two states (saturn_cycle_state_to_json): plan id and
 * sequence, the times, the plan itself and the feedback table; paths
 * start with "state_out". */
int saturn_cycle_state_diff(const char *recorded_state_json, const char *replayed_state_json,
			    char *buf, size_t len);

/* --- replaying (cycle_replay.c) -------------------------------------- */

/* Run the cycle of rec again: its settings (sched_params parsed with
 * saturn_sched_settings_parse onto the defaults, requeue_delay_s into
 * cfg.reconfig), a copy of its snapshot and of its state_in, its tape
 * played back; then compare the outputs with rec->out and the state left
 * with rec->state_out. rec is unchanged. 0 when both are the same; 1 with
 * diff naming the first difference (outputs first); -1 with err when the
 * replay could not run (ENOMEM). */
int saturn_cycle_replay_one(const saturn_cycle_record_t *rec, char *diff, size_t len,
			    saturn_error_t *err);

#endif /* SATURN_CYCLE_RECORD_H */
