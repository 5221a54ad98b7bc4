/* fuzz_build.c - libFuzzer harness for the whole build path of sched/saturn
 * (run by run-fuzz.sh): one user's bad numbers must never stop planning
 * for everybody.
 *
 * Input: HDR (32 bytes) PROFILE '\0' PROGRESS. A snapshot of three users
 * on two 8-GPU nodes is built around it:
 *   uid 1001, batch "good":  four held array tasks with a sane profile;
 *   uid 1003, batch "other": one task running on n1 GPUs 0-1 (no profile)
 *                            and one held task (no profile);
 *   uid 1002, batch "bad":   held tasks 0-2, task 3 running on n2 and
 *                            task 4 released, all with fields taken from
 *                            HDR (GPU counts, time limits, start, technique,
 *                            GPU ids on n2 - Slurm never gives one GPU to
 *                            two jobs, so the bad user's stay on n2), the
 *                            profile PROFILE as saturn_profile_parse()
 *                            reads it, and the running task's progress file
 *                            PROGRESS as saturn_progress_observe() reads
 *                            it from a file, folded into the runtime
 *                            feedback (saturn_sched_feedback()) before the
 *                            build.
 * HDR byte 0 bit 0 swaps the parsed profile for one built in memory from
 * raw doubles of HDR (NaN, infinities, negatives, 1e300: what a loader
 * would refuse, handed over by a lookup anyway); bit 1 likewise sets the
 * running task's batches_left (and batches done, reported speed) to raw
 * doubles of HDR.
 *
 * Asserts: saturn_sched_build() never fails; every task of "good" and
 * "other" is in the problem and none is skipped, and the held tasks of
 * "good" keep their profile's speeds (no correction crosses users); every
 * skipped job has a
 * reason; the FCFS plan of the problem is valid, and so is that plan
 * carried (saturn_sched_carry()), with a lower bound not above its
 * makespan; decisions and the state file can be made and the state parses
 * back.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"
#include "progress.h"
#include "sched_core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HDR 32

static const char good_text[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"good\", \"tasks\": ["
	" {\"signature\": \"g\", \"task_ids\": \"0-3\", \"batches\": 100, \"options\": ["
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.5, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 0.3, \"status\": \"measured\"} ] } ] }";

static saturn_profile_t *good_profile;
static char progress_path[64];

struct profiles {
	const saturn_profile_t *good, *bad;
};

static const saturn_profile_t *lookup(const char *batch, long uid, void *arg)
{
	const struct profiles *p = arg;

	if (!strcmp(batch, "good") && uid == 1001)
		return p->good;
	if (!strcmp(batch, "bad") && uid == 1002)
		return p->bad;
	return NULL;
}

static double raw_double(const uint8_t *h)
{
	double d;

	memcpy(&d, h, sizeof(d));
	return d;
}

static void setup(void)
{
	saturn_error_t err = {{0}};
	char dir[] = "/tmp/saturn-fuzz-build-XXXXXX";

	good_profile = saturn_profile_parse(good_text, strlen(good_text), &err);
	if (!good_profile || !mkdtemp(dir))
		abort();
	snprintf(progress_path, sizeof(progress_path), "%s/progress.json", dir);
}

static saturn_snap_job_t *job(saturn_snapshot_t *s, uint32_t id, int task, const char *batch,
			      long uid, saturn_snap_state_t state)
{
	saturn_snap_job_t *j = saturn_snapshot_add_job(s);

	if (!j)
		abort();
	j->job_id = id;
	j->array_job_id = task >= 0 ? id : 0;
	j->task_id = task;
	snprintf(j->batch, sizeof(j->batch), "%s", batch);
	j->uid = uid;
	j->state = state;
	j->req_gpus = 2;
	j->time_limit_s = 3600;
	j->submit_time = 900 + id;
	return j;
}

/* A profile for "bad" from raw numbers: one task covering ids 0-4 with two
 * options. NULL on ENOMEM. */
static saturn_profile_t *raw_profile(const uint8_t *h)
{
	saturn_profile_t *pr = saturn_profile_create();
	saturn_profile_task_t *t;

	if (!pr || !(pr->tasks = calloc(1, sizeof(*pr->tasks))))
		goto fail;
	pr->ntasks = 1;
	t = &pr->tasks[0];
	t->signature = strdup("raw");
	t->task_ids = calloc(5, sizeof(int));
	t->options = calloc(2, sizeof(*t->options));
	if (!t->signature || !t->task_ids || !t->options)
		goto fail;
	for (int i = 0; i < 5; i++)
		t->task_ids[i] = i;
	t->ntask_ids = 5;
	t->batches = raw_double(h + 8);
	for (int o = 0; o < 2; o++) {
		t->options[o].technique = strdup(o ? "fsdp" : "ddp");
		t->noptions++;
		if (!t->options[o].technique)
			goto fail;
		t->options[o].gpus = (int)(h[2 + o] % 70) - 2; /* -2 .. 67 */
		t->options[o].sec_per_batch = o ? raw_double(h + 16) : (double)h[4] / 7;
		t->options[o].status = SATURN_OPT_MEASURED;
	}
	return pr;
fail:
	saturn_profile_destroy(pr);
	return NULL;
}

static void check(const saturn_snapshot_t *s, const saturn_sched_build_t *b)
{
	saturn_error_t err = {{0}};
	saturn_decision_t *d = NULL;
	saturn_sched_state_t *st;
	saturn_plan_t *plan, *carried;
	char *txt;
	int good = 0;

	for (int t = 0; t < b->problem->ntasks; t++) {
		const saturn_snap_job_t *j = &s->jobs[b->job_of_task[t]];

		if (j->uid != 1002)
			good++;
		/* the bad user's feedback corrects nobody else */
		if (j->uid == 1001)
			for (int o = 0; o < b->problem->tasks[t].noptions; o++) {
				double spb = b->problem->tasks[t].options[o].sec_per_batch;

				if (spb != 0.5 && spb != 0.3)
					abort();
			}
	}
	if (good != 6) /* 4 of "good", 2 of "other" */
		abort();
	for (int k = 0; k < b->nskipped; k++)
		if (s->jobs[b->skipped[k]].uid != 1002 || !b->skip_reason[k][0])
			abort();
	plan = saturn_sched_fcfs(b->problem);
	if (!plan || saturn_plan_validate(plan, b->problem, &err) < 0)
		abort();
	/* carried into the same problem: valid, its bound not above it */
	carried = saturn_sched_carry(plan, b->problem);
	if (!carried || saturn_plan_validate(carried, b->problem, &err) < 0 ||
	    carried->lower_bound_s > carried->makespan_s * (1 + 1e-9))
		abort();
	saturn_plan_destroy(carried);
	if (saturn_sched_decide(s, b, plan, 2, &d) < 0)
		abort();
	free(d);
	txt = saturn_sched_state_to_json(s, b, plan, "p1", s->now);
	if (!txt)
		abort();
	st = saturn_sched_state_parse(txt, strlen(txt), &err);
	if (!st)
		abort();
	saturn_sched_state_destroy(st);
	free(txt);
	saturn_plan_destroy(plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const techs[] = {"ddp", "fsdp", "user", "",
					    "abcdefghijklmnopqrstuvwxyz012345"};
	saturn_error_t err = {{0}};
	saturn_profile_t *bad = NULL;
	saturn_snapshot_t *s;
	saturn_sched_build_t b;
	saturn_snap_job_t *j;
	saturn_fb_t *fb;
	struct profiles pf;
	const uint8_t *h = data, *prof, *prog, *nul;
	size_t nprof, nprog;
	FILE *f;

	if (!good_profile)
		setup();
	if (size < HDR)
		return 0;
	prof = data + HDR;
	nul = memchr(prof, '\0', size - HDR);
	nprof = nul ? (size_t)(nul - prof) : size - HDR;
	prog = nul ? nul + 1 : data + size;
	nprog = (size_t)(data + size - prog);

	if (h[0] & 1)
		bad = raw_profile(h);
	else
		bad = saturn_profile_parse((const char *)prof, nprof, &err);
	pf.good = good_profile;
	pf.bad = bad;

	if (!(s = saturn_snapshot_create()))
		abort();
	s->now = 100000;
	for (int k = 0; k < 2; k++) {
		saturn_snap_node_t *n = saturn_snapshot_add_node(s);

		if (!n)
			abort();
		snprintf(n->name, sizeof(n->name), "n%d", k + 1);
		n->gpus = 8;
	}
	for (int i = 0; i < 4; i++)
		job(s, 10, i, "good", 1001, SATURN_SNAP_HELD);
	j = job(s, 30, -1, "other", 1003, SATURN_SNAP_RUNNING);
	j->node = 0;
	j->gpu_mask = 0x3;
	j->gpus = 2;
	j->start_time = s->now - 60;
	snprintf(j->technique, sizeof(j->technique), "user");
	job(s, 31, -1, "other", 1003, SATURN_SNAP_HELD);

	for (int i = 0; i < 5; i++) {
		saturn_snap_state_t st = i < 3 ? SATURN_SNAP_HELD : i == 3 ? SATURN_SNAP_RUNNING
									   : SATURN_SNAP_RELEASED;

		j = job(s, 20, i, "bad", 1002, st);
		j->req_gpus = (int)(h[5 + i] % 70) - 2;
		j->gpus = (int)(h[10 + i] % 70) - 2;
		j->time_limit_s = h[1] & 2 ? raw_double(h + 24) : (double)h[15] * 600;
		snprintf(j->technique, sizeof(j->technique), "%s", techs[h[16 + i] % 5]);
		if (st == SATURN_SNAP_RUNNING) {
			saturn_progress_obs_t o;

			j->node = 1;
			j->gpu_mask = ((uint64_t)h[21] << 8 | h[22]) & 0xff;
			j->start_time = s->now - (double)h[23] * 3600;
			if (h[0] & 2) {
				j->batches_left = raw_double(h + 24);
				j->batches_done = raw_double(h + 8);
				j->progress_spb = raw_double(h + 16);
				j->progress_updated = s->now - h[23];
			} else if ((f = fopen(progress_path, "w"))) {
				fwrite(prog, 1, nprog, f);
				fclose(f);
				if (saturn_progress_observe(progress_path, -1, &o, &err) == 0) {
					j->batches_left = o.batches_left;
					j->batches_done = o.batches_done;
					j->progress_spb = o.sec_per_batch;
					j->progress_updated = o.updated;
				}
				unlink(progress_path);
			}
		}
	}

	if (!(fb = saturn_fb_create()) || saturn_sched_feedback(fb, s, lookup, &pf) < 0)
		abort();
	if (saturn_sched_build(s, lookup, &pf, &b, &err) < 0)
		abort(); /* never as a whole */
	check(s, &b);
	saturn_sched_build_free(&b);
	saturn_fb_destroy(fb);
	saturn_snapshot_destroy(s);
	saturn_profile_destroy(bad);
	return 0;
}
