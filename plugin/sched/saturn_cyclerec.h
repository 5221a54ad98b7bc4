/* saturn_cyclerec.h - saturn_record_cycles: each cycle written as
 * saturn-cycle/1 for `saturn replay` (saturn_cyclerec.c; agent thread, no
 * locks).
 */
#ifndef SCHED_SATURN_CYCLEREC_H
#define SCHED_SATURN_CYCLEREC_H

#include "cycle_record.h"
#include "planner.h"
#include "sched_cycle.h"

#include "saturn_ctx.h"

/* Before saturn_cycle_run: with saturn_record_cycles on and Saturn tasks
 * in the snapshot, capture the inputs and the state (cap) and record the
 * planner's results on tape (in->tape set). Otherwise nothing (cap
 * empty). */
void saturn_cyclerec_begin(const saturn_ctx_t *ctx, saturn_cycle_in_t *in,
			   const saturn_cycle_state_t *st, saturn_cycle_capture_t *cap,
			   saturn_plan_tape_t *tape);
/* After it: write STATE_DIR/cycles/cycle-SEQ.json (saturn-cycle/1, 0600)
 * and drop the one past the last saturn_record_cycles; cap and tape
 * freed. Problems are logged (once until a record is written again). */
void saturn_cyclerec_end(const saturn_ctx_t *ctx, const saturn_cycle_in_t *in,
			 saturn_cycle_capture_t *cap, saturn_plan_tape_t *tape,
			 const saturn_cycle_out_t *out, const saturn_cycle_state_t *st);

#endif /* SCHED_SATURN_CYCLEREC_H */
