/* saturn-emulate - a CPU stand-in for a GPU training job.
 *
 * It honours the same contract as real training code under saturn-run: the
 * technique and GPU count from SATURN_TECHNIQUE / SATURN_GPUS (or flags),
 * total work from SATURN_BATCHES, resume from SATURN_RESUME_BATCH, progress
 * lines on SATURN_PROGRESS_PIPE, checkpoint on SIGUSR1. Each batch sleeps for
 * the time the analytic model of lib/job/emulate.c gives (doc/emulator.md),
 * multiplied by --time-scale; a configuration that does not fit in GPU
 * memory fails like a real one, with exit status 3 and a SATURN_OOM line.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jobenv.h"
#include "emulate.h"
#include "numparse.h"

#define EXIT_OOM 3
#define EXIT_USAGE 2

static const char *prog = "saturn-emulate";
static volatile sig_atomic_t want_ckpt, want_stop;

static void on_usr1(int sig)
{
	want_ckpt = 1;
}

static void on_term(int sig)
{
	want_stop = sig;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_until(double t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	while (!want_ckpt && !want_stop &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
		   EINTR)
		;
}

/* An option's value as a number >= lo; exits 2 with a message naming the
 * option otherwise ("" and "abc" are not 0). */
static double num_arg(const char *opt, const char *s, double lo)
{
	saturn_error_t err = {{0}};
	double v;

	if (saturn_parse_double(opt, s, lo, INFINITY, 0, &v, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.text);
		exit(EXIT_USAGE);
	}
	return v;
}

/* The same for a whole number >= lo. */
static int int_arg(const char *opt, const char *s, int lo)
{
	saturn_error_t err = {{0}};
	int v;

	if (saturn_parse_int(opt, s, lo, INT_MAX, &v, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.text);
		exit(EXIT_USAGE);
	}
	return v;
}

/* An environment variable as a number >= 0; unset or empty: def. */
static double env_double(const char *name, double def)
{
	saturn_error_t err = {{0}};
	double v = def;

	if (saturn_env_double(name, 0, INFINITY, 0, &v, NULL, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.text);
		exit(EXIT_USAGE);
	}
	return v;
}

/* xorshift64* and Box-Muller: reproducible noise without libc state */
static unsigned long long rng = 88172645463325252ULL;

static double uniform(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return ((rng * 2685821657736338717ULL) >> 11) *
	       (1.0 / 9007199254740992.0);
}

static double gauss(void)
{
	double u = uniform(), v = uniform();

	if (u < 1e-12)
		u = 1e-12;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static FILE *progress_out(void)
{
	const char *p = getenv(SATURN_PROGRESS_PIPE_ENV);
	FILE *f;

	if (!p || !*p)
		return stdout;
	f = fopen(p, "we");
	if (!f) {
		fprintf(stderr, "%s: %s: %s (progress goes to stdout)\n", prog,
			p, strerror(errno));
		return stdout;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	return f;
}

int main(int argc, char **argv)
{
	enum {
		O_PARAMS = 256,
		O_LAYERS,
		O_HIDDEN,
		O_SEQ,
		O_LINK,
		O_LINKGBS,
		O_MEM,
		O_TFLOPS,
		O_PJSON,
		O_PRINT,
		O_NOISE,
		O_SEED,
		O_IGNORE
	};
	static const struct option longopts[] = {
	    {"model", required_argument, NULL, 'm'},
	    {"batch-size", required_argument, NULL, 'b'},
	    {"technique", required_argument, NULL, 't'},
	    {"gpus", required_argument, NULL, 'g'},
	    {"batches", required_argument, NULL, 'n'},
	    {"time-scale", required_argument, NULL, 's'},
	    {"num-params", required_argument, NULL, O_PARAMS},
	    {"layers", required_argument, NULL, O_LAYERS},
	    {"hidden", required_argument, NULL, O_HIDDEN},
	    {"seq-len", required_argument, NULL, O_SEQ},
	    {"link", required_argument, NULL, O_LINK},
	    {"link-gbs", required_argument, NULL, O_LINKGBS},
	    {"gpu-mem-gb", required_argument, NULL, O_MEM},
	    {"tflops", required_argument, NULL, O_TFLOPS},
	    {"technique-params", required_argument, NULL, O_PJSON},
	    {"print-model", no_argument, NULL, O_PRINT},
	    {"noise", required_argument, NULL, O_NOISE},
	    {"seed", required_argument, NULL, O_SEED},
	    {"lr", required_argument, NULL, O_IGNORE},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	saturn_emu_model_t custom = {"custom", 0, 0, 0, 1024};
	const saturn_emu_model_t *m = NULL;
	saturn_emu_hw_t hw;
	saturn_emu_result_t res;
	saturn_error_t err = {{0}};
	const char *technique = getenv(SATURN_TECHNIQUE_ENV);
	const char *params = getenv(SATURN_TECHNIQUE_PARAMS_ENV);
	double scale = 1, batches = -1, noise = 0, start_batch, done;
	int c, bs = 0, gpus = 0, print = 0;
	double link_gbs = 0, mem_gb = 0, tflops = 0;
	const char *link = NULL;
	int trial = getenv(SATURN_TRIAL_ENV) != NULL;
	FILE *out;
	double t0, next, last_line = 0;

	while ((c = getopt_long(argc, argv, "m:b:t:g:n:s:h", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'm':
			if (!(m = saturn_emu_model_find(optarg))) {
				fprintf(stderr,
					"%s: unknown model %s; known:", prog,
					optarg);
				for (int i = 0; i < saturn_emu_model_count();
				     i++)
					fprintf(stderr, " %s",
						saturn_emu_model_get(i)->name);
				fprintf(stderr, " (or "
						"--num-params/--layers/"
						"--hidden/--seq-len)\n");
				return EXIT_USAGE;
			}
			break;
		case 'b':
			bs = int_arg("--batch-size", optarg, 1);
			break;
		case 't':
			technique = optarg;
			break;
		case 'g':
			gpus = int_arg("--gpus", optarg, 1);
			break;
		case 'n':
			batches = num_arg("--batches", optarg, 0);
			break;
		case 's':
			scale = num_arg("--time-scale", optarg, 0);
			break;
		case O_PARAMS:
			custom.params = num_arg("--num-params", optarg, 1);
			break;
		case O_LAYERS:
			custom.layers = int_arg("--layers", optarg, 1);
			break;
		case O_HIDDEN:
			custom.hidden = int_arg("--hidden", optarg, 1);
			break;
		case O_SEQ:
			custom.seq_len = int_arg("--seq-len", optarg, 1);
			break;
		case O_LINK:
			link = optarg;
			break;
		case O_LINKGBS:
			link_gbs = num_arg("--link-gbs", optarg, 0.001);
			break;
		case O_MEM:
			mem_gb = num_arg("--gpu-mem-gb", optarg, 0.001);
			break;
		case O_TFLOPS:
			tflops = num_arg("--tflops", optarg, 0.001);
			break;
		case O_PJSON:
			params = optarg;
			break;
		case O_PRINT:
			print = 1;
			break;
		case O_NOISE:
			noise = num_arg("--noise", optarg, 0);
			break;
		case O_SEED:
			rng ^= (unsigned long long)int_arg("--seed", optarg,
							    0) *
			       0x9E3779B97F4A7C15ULL;
			if (!rng)
				rng = 1;
			break;
		case O_IGNORE:
			break;
		case 'h':
			printf("usage: %s --model NAME --batch-size N "
			       "[--technique T] [--gpus G]\n"
			       "  [--batches N] [--time-scale F] [--link "
			       "nvlink|pcie] [--link-gbs X]\n"
			       "  [--gpu-mem-gb X] [--tflops X] [--noise F] "
			       "[--seed N] [--print-model]\n"
			       "see doc/emulator.md\n",
			       prog);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (!m) {
		if (custom.params > 0 && custom.layers > 0 &&
		    custom.hidden > 0) {
			m = &custom;
		} else {
			fprintf(stderr,
				"%s: --model NAME (or --num-params, --layers "
				"and --hidden) is required\n",
				prog);
			return EXIT_USAGE;
		}
	}
	if (bs < 1) {
		fprintf(stderr, "%s: --batch-size is required\n", prog);
		return EXIT_USAGE;
	}
	if (link)
		setenv(SATURN_EMU_LINK_ENV, link, 1);
	if (saturn_emu_hw_from_env(&hw, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.text);
		return EXIT_USAGE;
	}
	if (link_gbs > 0)
		hw.link_gbs = link_gbs;
	if (mem_gb > 0)
		hw.gpu_mem_gb = mem_gb;
	if (tflops > 0)
		hw.tflops = tflops;
	if (gpus < 1)
		gpus = (int)env_double(SATURN_GPUS_ENV, 0);
	if (gpus < 1) {
		const char *cvd = getenv("CUDA_VISIBLE_DEVICES");

		gpus = 1;
		for (const char *p = cvd; p && *p; p++)
			gpus += *p == ',';
	}
	if (!technique || !*technique || strcmp(technique, "user") == 0)
		technique = gpus > 1 ? "ddp" : "single";
	if (saturn_emu_eval(m, bs, technique, gpus, params, &hw, &res, &err) <
	    0) {
		fprintf(stderr, "%s: %s\n", prog, err.text);
		return EXIT_USAGE;
	}
	if (print) {
		printf("model=%s batch_size=%d technique=%s gpus=%d "
		       "sec_per_batch=%.6f compute_s=%.6f "
		       "comm_s=%.6f other_s=%.6f mem_mb=%.0f gpu_mem_mb=%.0f "
		       "oom=%d\n",
		       m->name, bs, technique, gpus, res.sec_per_batch,
		       res.compute_s, res.comm_s, res.other_s, res.mem_mb,
		       hw.gpu_mem_gb * 1024, res.oom);
		return 0;
	}
	if (batches < 0)
		batches = env_double(SATURN_BATCHES_ENV, 100);
	start_batch = env_double(SATURN_RESUME_BATCH_ENV, 0);

	signal(SIGUSR1, on_usr1);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	out = progress_out();
	t0 = mono();
	/* start-up: loading the model and building the process group */
	next = t0 + (2.0 + gpus * 0.5) * scale;
	sleep_until(next);
	if (res.oom) {
		fprintf(stderr,
			"%s: out of memory: %s on %d GPUs needs %.0f MiB per "
			"GPU, GPUs have %.0f MiB\n",
			prog, technique, gpus, res.mem_mb,
			hw.gpu_mem_gb * 1024);
		fprintf(out,
			"SATURN_OOM peak_mem_mb=%.0f reason=needs %.0f MiB per "
			"GPU, %.0f MiB available\n",
			res.mem_mb, res.mem_mb, hw.gpu_mem_gb * 1024);
		fflush(out);
		return EXIT_OOM;
	}
	for (done = start_batch; done < batches && !want_stop;) {
		double dt = res.sec_per_batch * scale, tb = mono();

		if (noise > 0)
			dt *= fmax(0.2, 1 + noise * gauss());
		next += dt;
		sleep_until(next);
		if (want_stop)
			break;
		done++;
		if (trial || done >= batches || tb - last_line >= 0.2 ||
		    want_ckpt) {
			fprintf(out,
				"SATURN_PROGRESS batches_done=%.0f "
				"batches_total=%.0f sec_per_batch=%.9g "
				"peak_mem_mb=%.0f\n",
				done, batches, dt, res.mem_mb);
			fflush(out);
			last_line = tb;
		}
		if (want_ckpt) {
			/* a checkpoint costs about one batch */
			next += res.sec_per_batch * scale;
			sleep_until(next);
			fprintf(out, "SATURN_CHECKPOINTED batch=%.0f\n", done);
			fflush(out);
			return 0;
		}
	}
	if (want_stop)
		return 128 + want_stop;
	return 0;
}
