/* profile-bench.c - predicted versus exhaustive profiling (doc/benchmarks.md,
 * "Profiler"). For several models x batch sizes x link types, every
 * technique's sweep (lib/job/sweep.h) is driven with noisy "measurements" of
 * a ground truth, and its predictions are compared with the noise-free
 * truth. Two truths: the emulator's model (lib/job/emulate.c, whose terms
 * are the fit's basis) and an independent analytic model written from
 * published scaling behaviour (profile_truth.h). Prints per truth the
 * fraction of trials run against an exhaustive profile, the median / 90th
 * percentile / max prediction error, the regret of choosing by the profile
 * (how much slower, in truth, its fastest option per GPU count and overall
 * is than the truth's fastest), and how often re-measuring a predicted
 * option the profile would choose (what sched/saturn's measurement jobs do)
 * changes the choice.
 * PROFILE_BENCH_DEBUG=x prints every error and regret above x (x < 0: each
 * sweep's counts, measured and predicted, against the truth).
 * PROFILE_BENCH_SEED=n draws other noise (default 12345).
 *   usage: profile-bench [noise=0.02] [gpus=8] [runs=5] [truth=both|emu|pub]
 *                        [bwdev=0.07]
 * bwdev: how far (+-) the independent truth's bus bandwidth departs from
 * the probed table the fit uses.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulate.h"
#include "profile_truth.h"
#include "sweep.h"
#include "technique.h"

#define NTECH 8
#define MAXG 64

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static unsigned long long rng = 12345;
static double debug; /* PROFILE_BENCH_DEBUG: print errors above this */
/* close calls measured (saturn_sweep_close_calls): PROFILE_BENCH_CLOSE=tol,max */
static double close_tol = SATURN_SWEEP_CLOSE_TOL;
static int close_max = SATURN_SWEEP_CLOSE_PER_TASK;
/* PROFILE_BENCH_OFFLOAD=1: measure offload where single fits (as before) */
static int skip_offload = 1;

static double gauss_from(unsigned long long *st)
{
	double u, v;

	*st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
	u = ((*st >> 11) + 1.0) / 9007199254740993.0;
	*st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
	v = (*st >> 11) / 9007199254740992.0;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* noise of the exhaustive reference profile: its own stream, so the
 * sweeps see the same draws with or without it */
static unsigned long long rng_ex = 777;

/* noise of the re-measurements of the two fastest options: its own
 * stream too */
static unsigned long long rng_top2 = 4242;

/* Two options closer than this (relative) are re-measured before the
 * choice between them: SWEEP_UNSURE of lib/job/sweep.c, a little over
 * twice the 2 % noise. */
#define TOP2_TOL 0.05

static double gauss(void)
{
	double u, v;

	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	u = ((rng >> 11) + 1.0) / 9007199254740993.0;
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	v = (rng >> 11) / 9007199254740992.0;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

struct vec {
	double *v;
	int n, cap;
};

static void vec_add(struct vec *a, double x)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 1024;
		a->v = realloc(a->v, a->cap * sizeof(double));
		if (!a->v) {
			perror("profile-bench");
			exit(1);
		}
	}
	a->v[a->n++] = x;
}

static double vec_mean(const struct vec *a)
{
	double s = 0;

	for (int i = 0; i < a->n; i++)
		s += a->v[i];
	return a->n ? s / a->n : 0;
}

/* Sorts a. */
static void vec_print(const char *what, struct vec *a, int with_mean)
{
	if (!a->n)
		return;
	qsort(a->v, a->n, sizeof(double), cmpd);
	printf("%s: %d; ", what, a->n);
	if (with_mean)
		printf("mean %.2f%%, ", 100 * vec_mean(a));
	printf("median %.2f%%, p90 %.2f%%, max %.2f%%\n", 100 * a->v[a->n / 2],
	       100 * a->v[(int)(a->n * 0.9)], 100 * a->v[a->n - 1]);
}

struct acc {
	long trials, exhaustive;
	struct vec errs, lent, top2_g, top2_all, regret_g, regret_all, ex_g, ex_all;
	int remeasured, changed, improved, top2_measured, close;
};

/* The truth's time for one option; 0 = out of memory or impossible. */
static double truth_time(int truth, const saturn_emu_model_t *m, int bs, const char *tech, int g,
			 const saturn_emu_hw_t *hw)
{
	saturn_emu_result_t r;

	if (saturn_emu_eval(m, bs, tech, g, NULL, hw, &r, NULL) < 0 || r.oom)
		return 0;
	return truth ? truth_eval(m, bs, tech, g, hw) : r.sec_per_batch;
}

static int argmin(double v[NTECH][MAXG + 1], int nt, int g)
{
	int best = -1;

	for (int k = 0; k < nt; k++)
		if (v[k][g] > 0 && (best < 0 || v[k][g] < v[best][g]))
			best = k;
	return best;
}

/* One task (model, batch size, node): every technique swept, then errors,
 * regret and the effect of re-measuring. */
static void run_task(int truth, const saturn_emu_model_t *m, int bs, const saturn_emu_hw_t *hw,
		     const saturn_bw_table_t *bw, saturn_techniques_t *reg, int G, double noise,
		     struct acc *A)
{
	int nt = saturn_techniques_count(reg);
	double val[NTECH][MAXG + 1] = {{0}}, tru[NTECH][MAXG + 1] = {{0}};
	int pred[NTECH][MAXG + 1] = {{0}};
	saturn_sweep_t *sws[NTECH] = {NULL};
	int single = -1, active = 1, skip[NTECH] = {0};

	/* every technique's sweep in rounds of trials, as saturn-profile
	 * runs them: before each round ddp and fsdp are lent single's
	 * one-GPU time (on one GPU they run the same program) */
	for (int k = 0; k < nt && k < NTECH; k++) {
		const saturn_technique_t *t = saturn_techniques_get(reg, k);
		saturn_scale_kind_t kind = saturn_scale_kind(t->name);
		int hi = saturn_technique_max_gpus(t, G);

		sws[k] = saturn_sweep_create(kind, truth ? truth_micro(bs, hi) : 8, t->min_gpus, hi,
					     bw, 0);
		if (truth && kind == SATURN_SCALE_PIPELINE)
			for (int g = t->min_gpus; g <= hi; g++)
				saturn_sweep_set_micro(sws[k], g, truth_micro(bs, g));
		A->exhaustive += hi - t->min_gpus + 1;
		if (strcmp(t->name, "single") == 0)
			single = k;
	}
	while (active) {
		int gl[NTECH][64], ng[NTECH] = {0};

		active = 0;
		for (int k = 0; k < nt && k < NTECH; k++) {
			const saturn_technique_t *t = saturn_techniques_get(reg, k);
			const saturn_point_t *p1 =
			    single >= 0 ? saturn_sweep_point(sws[single], 1) : NULL;

			if (saturn_sweep_done(sws[k]) || skip[k])
				continue;
			/* offload, where single fits on one GPU: not measured
			 * (saturn-profile's skip_offload) */
			if (strcmp(t->name, "offload") == 0 && single >= 0 && skip_offload) {
				if (p1 && (p1->state == SATURN_PT_UNKNOWN ||
					   p1->state == SATURN_PT_PENDING)) {
					active = 1;
					continue;
				}
				if (p1 && p1->state == SATURN_PT_MEASURED) {
					skip[k] = 1;
					continue;
				}
			}
			if (p1 && p1->state == SATURN_PT_MEASURED &&
			    (strcmp(t->name, "ddp") == 0 || strcmp(t->name, "fsdp") == 0))
				saturn_sweep_lend(sws[k], 1, p1->sec_per_batch, 0, "single");
			ng[k] = saturn_sweep_next(sws[k], gl[k], 64);
			active |= ng[k] > 0;
		}
		for (int k = 0; k < nt && k < NTECH; k++)
			for (int i = 0; i < ng[k]; i++) {
				const char *name = saturn_techniques_get(reg, k)->name;
				double tt = truth_time(truth, m, bs, name, gl[k][i], hw);

				saturn_sweep_report(sws[k], gl[k][i],
						    tt > 0 ? SATURN_PT_MEASURED : SATURN_PT_OOM,
						    tt * (1 + noise * gauss()), 0, NULL);
				A->trials++;
			}
	}
	/* then, as saturn-profile's last round, a trial for each of the two
	 * options of a close call between predictions */
	{
		int who[SATURN_SWEEP_CLOSE_MAX], gs[SATURN_SWEEP_CLOSE_MAX], nc;

		saturn_sweep_t *live[NTECH] = {NULL};

		for (int k = 0; k < nt && k < NTECH; k++)
			live[k] = skip[k] ? NULL : sws[k];
		nc = saturn_sweep_close_calls(live, nt < NTECH ? nt : NTECH, close_tol,
					      close_max, who, gs);
		for (int i = 0; i < nc; i++) {
			int gl[1];

			if (!saturn_sweep_probe(sws[who[i]], gs[i]) ||
			    saturn_sweep_next(sws[who[i]], gl, 1) != 1)
				continue;
			double tt = truth_time(truth, m, bs,
					       saturn_techniques_get(reg, who[i])->name, gl[0], hw);

			saturn_sweep_report(sws[who[i]], gl[0],
					    tt > 0 ? SATURN_PT_MEASURED : SATURN_PT_OOM,
					    tt * (1 + noise * gauss()), 0, NULL);
			saturn_sweep_next(sws[who[i]], gl, 1);
			A->trials++;
			A->close++;
		}
	}
	for (int k = 0; k < nt && k < NTECH; k++) {
		const saturn_technique_t *t = saturn_techniques_get(reg, k);
		int hi = saturn_technique_max_gpus(t, G);
		saturn_sweep_t *sw = sws[k];

		for (int g = t->min_gpus; g <= hi; g++) {
			const saturn_point_t *p = saturn_sweep_point(sw, g);

			tru[k][g] = truth_time(truth, m, bs, t->name, g, hw);
			if (skip[k])
				continue;
			if (p->state == SATURN_PT_MEASURED || p->state == SATURN_PT_PREDICTED)
				val[k][g] = p->sec_per_batch;
			pred[k][g] = p->state == SATURN_PT_PREDICTED;
			if (pred[k][g] && tru[k][g] > 0 && saturn_sweep_borrowed(sw, g)) {
				/* single's measurement: its error is noise */
				vec_add(&A->lent, fabs(p->sec_per_batch - tru[k][g]) / tru[k][g]);
			} else if (pred[k][g] && tru[k][g] > 0) {
				double e = fabs(p->sec_per_batch - tru[k][g]) / tru[k][g];

				vec_add(&A->errs, e);
				if (debug > 0 && e > debug)
					printf("  error %.1f%%: %s bs %d %s "
					       "%s g=%d\n",
					       100 * e, m->name, bs, hw->nvlink ? "nvlink" : "pcie",
					       t->name, g);
			}
		}
		if (debug < 0) {
			printf("  trials %s bs %d %s %s: %d [", m->name, bs,
			       hw->nvlink ? "nvlink" : "pcie", t->name, saturn_sweep_trials(sw));
			for (int g = t->min_gpus; g <= hi; g++) {
				const saturn_point_t *p = saturn_sweep_point(sw, g);
				double tt = truth_time(truth, m, bs, t->name, g, hw);

				printf(" %d:%s%.3g/%.3g", g,
				       p->state == SATURN_PT_MEASURED ? "M" : "", p->sec_per_batch,
				       tt);
			}
			printf(" ]\n");
		}
		saturn_sweep_destroy(sw);
	}
	if (nt > NTECH)
		nt = NTECH;
	/* the same for an exhaustive profile: what noise alone costs */
	{
		double ex[NTECH][MAXG + 1] = {{0}};
		int bk = -1, bg = 0, tk = -1, tg = 0;

		for (int k = 0; k < nt; k++)
			for (int g = 1; g <= G; g++)
				if (tru[k][g] > 0)
					ex[k][g] = tru[k][g] * (1 + noise * gauss_from(&rng_ex));
		for (int g = 1; g <= G; g++) {
			int c = argmin(ex, nt, g), b = argmin(tru, nt, g);

			if (c < 0 || b < 0)
				continue;
			vec_add(&A->ex_g, tru[c][g] / tru[b][g] - 1);
			if (bk < 0 || ex[c][g] < ex[bk][bg])
				bk = c, bg = g;
			if (tk < 0 || tru[b][g] < tru[tk][tg])
				tk = b, tg = g;
		}
		if (bk >= 0 && tk >= 0)
			vec_add(&A->ex_all, tru[bk][bg] / tru[tk][tg] - 1);
	}
	/* the same after re-measuring the two fastest options of a count, and
	 * then of the task, when they are within TOP2_TOL of each other
	 * (each predicted one measured once) */
	{
		double v2[NTECH][MAXG + 1];
		int done[NTECH][MAXG + 1] = {{0}}, bk = -1, bg = 0, sk = -1, sg = 0, tk = -1,
				       tg = 0;

		memcpy(v2, val, sizeof(v2));
		for (int g = 1; g <= G; g++) {
			int c = argmin(v2, nt, g), b = argmin(tru, nt, g), c2 = -1;

			if (c < 0 || b < 0)
				continue;
			for (int k = 0; k < nt; k++)
				if (k != c && v2[k][g] > 0 && (c2 < 0 || v2[k][g] < v2[c2][g]))
					c2 = k;
			if (c2 >= 0 && v2[c2][g] < v2[c][g] * (1 + TOP2_TOL)) {
				int two[2] = {c, c2};

				for (int i = 0; i < 2; i++)
					if (!done[two[i]][g] && tru[two[i]][g] > 0) {
						v2[two[i]][g] =
						    (v2[two[i]][g] +
						     tru[two[i]][g] *
							 (1 + noise * gauss_from(&rng_top2))) /
						    2;
						done[two[i]][g] = 1;
						A->top2_measured++;
					}
				c = argmin(v2, nt, g);
			}
			if (!(tru[c][g] > 0))
				continue;
			vec_add(&A->top2_g, tru[c][g] / tru[b][g] - 1);
			if (tk < 0 || tru[b][g] < tru[tk][tg])
				tk = b, tg = g;
		}
		/* the task's two fastest options */
		for (int g = 1; g <= G; g++)
			for (int k = 0; k < nt; k++) {
				if (!(v2[k][g] > 0))
					continue;
				if (bk < 0 || v2[k][g] < v2[bk][bg]) {
					sk = bk, sg = bg;
					bk = k, bg = g;
				} else if (sk < 0 || v2[k][g] < v2[sk][sg]) {
					sk = k, sg = g;
				}
			}
		if (bk >= 0 && sk >= 0 && v2[sk][sg] < v2[bk][bg] * (1 + TOP2_TOL)) {
			int ks[2] = {bk, sk}, gs[2] = {bg, sg};

			for (int i = 0; i < 2; i++)
				if (!done[ks[i]][gs[i]] && tru[ks[i]][gs[i]] > 0) {
					v2[ks[i]][gs[i]] =
					    (v2[ks[i]][gs[i]] +
					     tru[ks[i]][gs[i]] *
						 (1 + noise * gauss_from(&rng_top2))) /
					    2;
					A->top2_measured++;
				}
			if (v2[sk][sg] < v2[bk][bg])
				bk = sk, bg = sg;
		}
		if (bk >= 0 && tk >= 0 && tru[bk][bg] > 0)
			vec_add(&A->top2_all, tru[bk][bg] / tru[tk][tg] - 1);
	}
	/* regret: the truth's time of the profile's choice over the truth's
	 * best, per GPU count and over all counts */
	{
		int bk = -1, bg = 0, tk = -1, tg = 0;

		for (int g = 1; g <= G; g++) {
			int c = argmin(val, nt, g), b = argmin(tru, nt, g);

			if (c < 0 || b < 0 || !(tru[c][g] > 0))
				continue;
			vec_add(&A->regret_g, tru[c][g] / tru[b][g] - 1);
			if (debug > 0 && tru[c][g] / tru[b][g] - 1 > debug)
				printf("  regret-g %.1f%%: %s bs %d %s g=%d: "
				       "chose %s (%s %.4g, truth %.4g), best "
				       "%s (%.4g, profile %.4g)\n",
				       100 * (tru[c][g] / tru[b][g] - 1), m->name, bs,
				       hw->nvlink ? "nvlink" : "pcie", g,
				       saturn_techniques_get(reg, c)->name,
				       pred[c][g] ? "predicted" : "measured", val[c][g], tru[c][g],
				       saturn_techniques_get(reg, b)->name, tru[b][g], val[b][g]);
			if (bk < 0 || val[c][g] < val[bk][bg])
				bk = c, bg = g;
			if (tk < 0 || tru[b][g] < tru[tk][tg])
				tk = b, tg = g;
			/* re-measure the chosen option when predicted */
			if (pred[c][g]) {
				double meas = tru[c][g] * (1 + noise * gauss()), keep = val[c][g];
				int c2;

				A->remeasured++;
				val[c][g] = meas;
				c2 = argmin(val, nt, g);
				val[c][g] = keep;
				if (c2 != c) {
					A->changed++;
					A->improved += tru[c2][g] < tru[c][g];
				}
			}
		}
		if (bk >= 0 && tk >= 0) {
			vec_add(&A->regret_all, tru[bk][bg] / tru[tk][tg] - 1);
			if (debug > 0 && tru[bk][bg] / tru[tk][tg] - 1 > debug)
				printf("  regret %.1f%%: %s bs %d %s: chose "
				       "%s g=%d (%s %.4g, truth %.4g), best "
				       "%s g=%d (%.4g, profile %.4g)\n",
				       100 * (tru[bk][bg] / tru[tk][tg] - 1), m->name, bs,
				       hw->nvlink ? "nvlink" : "pcie",
				       saturn_techniques_get(reg, bk)->name, bg,
				       pred[bk][bg] ? "predicted" : "measured", val[bk][bg],
				       tru[bk][bg], saturn_techniques_get(reg, tk)->name, tg,
				       tru[tk][tg], val[tk][tg]);
		}
	}
}

int main(int argc, char **argv)
{
	double noise = argc > 1 ? atof(argv[1]) : 0.02;
	int G = argc > 2 ? atoi(argv[2]) : 8, runs = argc > 3 ? atoi(argv[3]) : 5;
	const char *which = argc > 4 ? argv[4] : "both";
	const char *models[] = {"gpt2",	    "gpt2-large",   "gpt2-xl", "bert-large",
				"vit-h-14", "gpt-neo-2.7b", "llama-7b"};
	const char *names[] = {"emulator (the fit's basis)", "published scaling (independent)"};
	const int bss[] = {8, 16, 32};
	saturn_techniques_t *reg = saturn_techniques_create();

	if (argc > 5)
		truth_bwdev = atof(argv[5]);
	if (getenv("PROFILE_BENCH_OFFLOAD"))
		skip_offload = !atoi(getenv("PROFILE_BENCH_OFFLOAD"));
	if (getenv("PROFILE_BENCH_CLOSE"))
		sscanf(getenv("PROFILE_BENCH_CLOSE"), "%lf,%d", &close_tol, &close_max);
	if (getenv("PROFILE_BENCH_DEBUG"))
		debug = atof(getenv("PROFILE_BENCH_DEBUG"));
	if (G < 2 || G > MAXG) {
		fprintf(stderr, "profile-bench: gpus: 2..%d\n", MAXG);
		return 2;
	}
	for (int truth = 0; truth < 2; truth++) {
		struct acc A;

		memset(&A, 0, sizeof(A));
		if ((truth == 0 && strcmp(which, "pub") == 0) ||
		    (truth == 1 && strcmp(which, "emu") == 0))
			continue;
		rng = getenv("PROFILE_BENCH_SEED")
			  ? strtoull(getenv("PROFILE_BENCH_SEED"), NULL, 10)
			  : 12345;
		rng_ex = 777 + rng - 12345;
		rng_top2 = 4242 + rng - 12345;
		for (int run = 0; run < runs; run++)
			for (int link = 0; link < 2; link++) {
				saturn_emu_hw_t hw;
				double ar[MAXG + 1] = {0}, ag[MAXG + 1] = {0};
				saturn_bw_table_t bw = {G, ar, ag};

				/* the probed table is the emulator's in both
				 * cases: the truth's own shape differs */
				saturn_emu_hw_default(&hw, link);
				for (int g = 2; g <= G; g++) {
					ar[g] = saturn_emu_busbw(&hw, g, SATURN_ALLREDUCE);
					ag[g] = saturn_emu_busbw(&hw, g, SATURN_ALLGATHER);
				}
				for (size_t mi = 0; mi < sizeof(models) / sizeof(models[0]); mi++)
					for (size_t bi = 0; bi < sizeof(bss) / sizeof(bss[0]); bi++)
						run_task(truth, saturn_emu_model_find(models[mi]),
							 bss[bi], &hw, &bw, reg, G, noise, &A);
			}
		printf("profile-bench [truth: %s]: %d runs x 2 links x 7 "
		       "models x 3 batch sizes x %d techniques, %d GPUs, "
		       "noise %.0f%%\n",
		       names[truth], runs, saturn_techniques_count(reg), G, noise * 100);
		if (truth)
			printf("truth's bus bandwidth within +-%.0f%% of the "
			       "probed table\n",
			       truth_bwdev * 100);
		printf("trials: %ld of %ld exhaustive (%.1f%%)\n", A.trials, A.exhaustive,
		       100.0 * A.trials / A.exhaustive);
		printf("close calls: %d trials (within %.0f%%, at most %d a task)\n", A.close,
		       100 * close_tol, close_max);
		vec_print("predictions (relative error)", &A.errs, 0);
		vec_print("one-GPU times lent by single (relative error)", &A.lent, 0);
		vec_print("regret per GPU count (task x count)", &A.regret_g, 1);
		vec_print("regret overall (per task)", &A.regret_all, 1);
		vec_print("exhaustive profile's regret per GPU count (noise "
			  "alone)",
			  &A.ex_g, 1);
		vec_print("exhaustive profile's regret overall", &A.ex_all, 1);
		printf("re-measuring the chosen predicted option: %d "
		       "re-measured, choice changed %d (%d to a truly faster "
		       "option)\n",
		       A.remeasured, A.changed, A.improved);
		printf("re-measuring the two fastest options (of a count, then "
		       "of the task) when within %.0f%%: %d measurements\n",
		       100 * TOP2_TOL, A.top2_measured);
		vec_print("  then regret per GPU count", &A.top2_g, 1);
		vec_print("  then regret overall", &A.top2_all, 1);
		free(A.top2_g.v);
		free(A.top2_all.v);
		free(A.errs.v);
		free(A.lent.v);
		free(A.regret_g.v);
		free(A.regret_all.v);
		free(A.ex_g.v);
		free(A.ex_all.v);
	}
	saturn_techniques_destroy(reg);
	return 0;
}
