/* profile-bench.c - predicted versus exhaustive profiling on the emulator's
 * model (doc/benchmarks.md, "Profiler"). For several models x batch sizes x
 * link types, every technique's sweep (lib/job/sweep.h) is driven with noisy
 * "measurements" from lib/job/emulate.c; predictions are compared with the
 * noise-free model. Prints the fraction of trials run against an exhaustive
 * profile and the median / 90th percentile / max prediction error.
 *   usage: profile-bench [noise=0.02] [gpus=8] [runs=5]
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulate.h"
#include "sweep.h"
#include "technique.h"

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static unsigned long long rng = 12345;

static double gauss(void)
{
	double u, v;

	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	u = ((rng >> 11) + 1.0) / 9007199254740993.0;
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	v = (rng >> 11) / 9007199254740992.0;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

int main(int argc, char **argv)
{
	double noise = argc > 1 ? atof(argv[1]) : 0.02;
	int G = argc > 2 ? atoi(argv[2]) : 8,
	    runs = argc > 3 ? atoi(argv[3]) : 5;
	const char *models[] = {"gpt2",	      "gpt2-large", "gpt2-xl",
				"bert-large", "vit-h-14",   "gpt-neo-2.7b",
				"llama-7b"};
	const int bss[] = {8, 16, 32};
	saturn_techniques_t *reg = saturn_techniques_create();
	long trials = 0, exhaustive = 0;
	double *errs = NULL;
	int nerr = 0, cap = 0;

	for (int run = 0; run < runs; run++)
		for (int link = 0; link < 2; link++) {
			saturn_emu_hw_t hw;
			double ar[65] = {0}, ag[65] = {0};
			saturn_bw_table_t bw = {G, ar, ag};

			saturn_emu_hw_default(&hw, link);
			for (int g = 2; g <= G; g++) {
				ar[g] =
				    saturn_emu_busbw(&hw, g, SATURN_ALLREDUCE);
				ag[g] =
				    saturn_emu_busbw(&hw, g, SATURN_ALLGATHER);
			}
			for (size_t mi = 0;
			     mi < sizeof(models) / sizeof(models[0]); mi++)
				for (size_t bi = 0;
				     bi < sizeof(bss) / sizeof(bss[0]); bi++)
					for (int k = 0;
					     k < saturn_techniques_count(reg);
					     k++) {
						const saturn_technique_t *t =
						    saturn_techniques_get(reg,
									  k);
						const saturn_emu_model_t *m =
						    saturn_emu_model_find(
							models[mi]);
						int hi =
							saturn_technique_max_gpus(
							    t, G),
						    gl[64], n;
						saturn_sweep_t *sw =
						    saturn_sweep_create(
							saturn_scale_kind(
							    t->name),
							8, t->min_gpus, hi, &bw,
							0);

						exhaustive +=
						    hi - t->min_gpus + 1;
						while ((n = saturn_sweep_next(
							    sw, gl, 64)) > 0)
							for (int i = 0; i < n;
							     i++) {
								saturn_emu_result_t
								    r;

								saturn_emu_eval(
								    m, bss[bi],
								    t->name,
								    gl[i], NULL,
								    &hw, &r,
								    NULL);
								saturn_sweep_report(
								    sw, gl[i],
								    r.oom
									? SATURN_PT_OOM
									: SATURN_PT_MEASURED,
								    r.sec_per_batch *
									(1 +
									 noise *
									     gauss()),
								    r.mem_mb,
								    NULL);
								trials++;
							}
						for (int g = t->min_gpus;
						     g <= hi; g++) {
							const saturn_point_t *p =
							    saturn_sweep_point(
								sw, g);
							saturn_emu_result_t r;

							if (p->state !=
							    SATURN_PT_PREDICTED)
								continue;
							saturn_emu_eval(
							    m, bss[bi], t->name,
							    g, NULL, &hw, &r,
							    NULL);
							if (nerr == cap) {
								cap =
								    cap ? cap *
									      2
									: 1024;
								errs = realloc(
								    errs,
								    cap *
									sizeof(
									    double));
							}
							errs[nerr++] =
							    fabs(
								p->sec_per_batch -
								r.sec_per_batch) /
							    r.sec_per_batch;
						}
						saturn_sweep_destroy(sw);
					}
		}
	qsort(errs, nerr, sizeof(double), cmpd);
	printf("profile-bench: %d runs x 2 links x 7 models x 3 batch sizes x "
	       "%d techniques, %d GPUs, noise %.0f%%\n",
	       runs, saturn_techniques_count(reg), G, noise * 100);
	printf("trials: %ld of %ld exhaustive (%.1f%%)\n", trials, exhaustive,
	       100.0 * trials / exhaustive);
	if (nerr)
		printf("predictions: %d; relative error median %.2f%%, p90 "
		       "%.2f%%, max %.2f%%\n",
		       nerr, 100 * errs[nerr / 2],
		       100 * errs[(int)(nerr * 0.9)], 100 * errs[nerr - 1]);
	free(errs);
	saturn_techniques_destroy(reg);
	return 0;
}
