/* test_technique.c - technique registry, templates, configuration parser,
 * plugin loader, scaling fit and sweep, emulator model, progress protocol,
 * topology probes on the project's fixtures. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulate.h"
#include "progress.h"
#include "sweep.h"
#include "technique.h"
#include "topology.h"

static const saturn_kv_t vars[] = {
    {"gpus", "4"}, {"stages", "2"}, {"batch", "b"}};

static const struct tcase {
	const char *tmpl;
	const char *expect; /* NULL = error */
	const char *errpart;
} tcases[] = {
    {"--nproc={gpus}", "--nproc=4", NULL},
    {"{gpus}{stages}", "42", NULL},
    {"{{literal}} {gpus}", "{literal} 4", NULL},
    {"no placeholders", "no placeholders", NULL},
    {"{nope}", NULL, "unknown placeholder {nope}"},
    {"{gpus", NULL, "unterminated"},
    {"a}b", NULL, "unmatched"},
    {"{bad name}", NULL, "bad placeholder"},
};

START_TEST(test_expand)
{
	const struct tcase *c = &tcases[_i];
	saturn_error_t err = {{0}};
	char *r = saturn_template_expand(c->tmpl, vars, 3, &err);

	if (c->expect) {
		ck_assert_ptr_nonnull(r);
		ck_assert_str_eq(r, c->expect);
	} else {
		ck_assert_ptr_null(r);
		ck_assert_msg(strstr(err.text, c->errpart),
			      "error '%s' lacks '%s'", err.text, c->errpart);
	}
	free(r);
}
END_TEST

START_TEST(test_argv)
{
	char *cmd[] = {"python", "train.py", "--lr", "3e-4 x"};
	char **argv = NULL;
	saturn_error_t err = {{0}};
	int n = saturn_template_argv(
	    "torchrun --nproc_per_node={gpus} 'a b' {command}", vars, 3, cmd, 4,
	    &argv, &err);

	ck_assert_int_eq(n, 7);
	ck_assert_str_eq(argv[1], "--nproc_per_node=4");
	ck_assert_str_eq(argv[2], "a b");
	ck_assert_str_eq(argv[3], "python");
	ck_assert_str_eq(argv[6], "3e-4 x");
	ck_assert_ptr_null(argv[7]);
	saturn_argv_free(argv);
	ck_assert_int_eq(
	    saturn_template_argv("x{command}", vars, 3, cmd, 4, &argv, &err),
	    -1);
	ck_assert_ptr_nonnull(strstr(err.text, "word of its own"));
	ck_assert_int_eq(
	    saturn_template_argv("run {what}", vars, 3, cmd, 4, &argv, &err),
	    -1);
	ck_assert_ptr_nonnull(strstr(err.text, "{what}"));
}
END_TEST

START_TEST(test_builtins_params)
{
	saturn_techniques_t *reg = saturn_techniques_create();
	const char *names[] = {"single", "ddp", "fsdp", "pipeline", "offload"};
	saturn_error_t err = {{0}};
	const saturn_technique_t *t;
	char *p;

	ck_assert_ptr_nonnull(reg);
	for (int i = 0; i < 5; i++)
		ck_assert_ptr_nonnull(saturn_techniques_find(reg, names[i]));
	t = saturn_techniques_find(reg, "pipeline");
	p = saturn_technique_params(t, 4, "{\"micro_batches\":16}", &err);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(saturn_technique_param(p, "stages", 0), 4);
	ck_assert_int_eq(saturn_technique_param(p, "micro_batches", 0), 16);
	free(p);
	ck_assert_ptr_null(
	    saturn_technique_params(t, 4, "{\"stages\":5}", &err));
	ck_assert_ptr_nonnull(strstr(err.text, "params.stages"));
	ck_assert_ptr_null(
	    saturn_technique_params(t, 4, "{\"bogus\":1}", &err));
	ck_assert_ptr_nonnull(strstr(err.text, "params.bogus"));
	ck_assert_ptr_null(saturn_technique_params(t, 4, "[1]", &err));
	t = saturn_techniques_find(reg, "fsdp");
	p = saturn_technique_params(t, 2, "{\"cpu_offload\":true}", &err);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(saturn_technique_param(p, "cpu_offload", 0), 1);
	free(p);
	{
		char buf[256];

		ck_assert_int_eq(saturn_technique_candidate(t, 2, 1, "s", buf,
							    sizeof(buf), &err),
				 0);
		ck_assert_int_eq(
		    saturn_technique_param(buf, "activation_checkpointing", 0),
		    1);
		ck_assert_int_eq(saturn_technique_candidate(t, 2, 3, "s", buf,
							    sizeof(buf), &err),
				 1);
	}
	saturn_techniques_destroy(reg);
}
END_TEST

static const struct ccase {
	const char *text;
	const char *errpart; /* NULL = ok */
} ccases[] = {
    {"# site techniques\n[technique zero2]\ngpus = 1-8\nlaunch = deepspeed "
     "--num_gpus={gpus} {command}\n"
     "env = DS_STAGE=2\nparam = buckets int 1 gpus 2\nparam = offload bool 0 # "
     "trailing\n",
     NULL},
    {"[technique ddp]\ngpus = 2-\nlaunch = srun {command}\n", NULL},
    {"[technique x]\nlaunch = a\n", ":1: technique x: missing gpus"},
    {"[technique x]\ngpus = 0-2\n", ":2: gpus"},
    {"[technique x]\ngpus = 4-2\n", ":2: gpus"},
    {"[technique Bad]\ngpus = 1\n", ":1: bad technique name"},
    {"[thing x]\n", ":1: unknown section"},
    {"gpus = 1\n", ":1: unknown setting"},
    {"[technique x]\ngpus = 1\ncolour = red\n", ":3: unknown key"},
    {"[technique x]\ngpus = 1\nenv = 1BAD=x\n", ":3: env"},
    {"[technique x]\ngpus = 1\nparam = p int 5 1 3\n", ":3: param: MAX"},
    {"[technique x]\ngpus = 1\nparam = p float 1\n", ":3: param"},
    {"[technique x]\ngpus = 1\nparam = p bool 0\nparam = p bool 1\n",
     ":4: param p: declared twice"},
    {"[technique x]\ngpus = 1\nno equals sign\n", ":3: want key = value"},
    {"plugin_dir = relative\n", ":1: plugin_dir must be an absolute path"},
};

/* The multi-process built-ins start their ranks through saturn-run
 * (saturn-ranks), and a launch has the variables in the documented order:
 * the fixed ones with nodes (1 when unknown), then the parameters. */
START_TEST(test_builtins_launch_vars)
{
	saturn_techniques_t *reg = saturn_techniques_create();
	const char *multi[] = {"ddp", "fsdp", "pipeline"};
	const saturn_technique_t *t;
	saturn_kv_t kv[16];
	char store[512];
	int n;

	ck_assert_ptr_nonnull(reg);
	for (int i = 0; i < 3; i++) {
		t = saturn_techniques_find(reg, multi[i]);
		ck_assert_str_eq(t->launch, "saturn-ranks {command}");
	}
	ck_assert_str_eq(saturn_techniques_find(reg, "single")->launch,
			 "{command}");
	t = saturn_techniques_find(reg, "fsdp");
	n = saturn_technique_vars(t, 2, 0, "{\"cpu_offload\":1}", "b", NULL, kv,
				  16, store, sizeof(store));
	ck_assert_int_eq(n, SATURN_TECHNIQUE_FIXED_VARS + t->nparams);
	ck_assert_str_eq(kv[4].key, "nodes");
	ck_assert_str_eq(kv[4].value, "1");
	ck_assert_str_eq(kv[SATURN_TECHNIQUE_FIXED_VARS].key,
			 t->params[0].name);
	n = saturn_technique_vars(t, 2, 3, NULL, NULL, NULL, kv, 16, store,
				  sizeof(store));
	ck_assert_str_eq(kv[4].value, "3");
	ck_assert_int_eq(saturn_technique_vars(t, 2, 3, NULL, NULL, NULL, kv, 4,
					       store, sizeof(store)),
			 -1);
	saturn_techniques_destroy(reg);
}
END_TEST

START_TEST(test_config)
{
	const struct ccase *c = &ccases[_i];
	saturn_techniques_t *reg = saturn_techniques_create();
	saturn_error_t err = {{0}};
	int rc =
	    saturn_techniques_parse_config(reg, c->text, "t.conf", -1, &err);

	if (!c->errpart) {
		ck_assert_msg(rc == 0, "unexpected error: %s", err.text);
	} else {
		ck_assert_int_eq(rc, -1);
		ck_assert_msg(strstr(err.text, c->errpart),
			      "error '%s' lacks '%s'", err.text, c->errpart);
		ck_assert_msg(strncmp(err.text, "t.conf", 6) == 0,
			      "error '%s' does not name the file", err.text);
	}
	saturn_techniques_destroy(reg);
}
END_TEST

START_TEST(test_config_effect)
{
	saturn_techniques_t *reg = saturn_techniques_create();
	saturn_error_t err = {{0}};
	const saturn_technique_t *t;

	ck_assert_int_eq(saturn_techniques_parse_config(reg, ccases[0].text,
							"t.conf", -1, &err),
			 0);
	ck_assert_int_eq(saturn_techniques_parse_config(reg, ccases[1].text,
							"u.conf", -1, &err),
			 0);
	t = saturn_techniques_find(reg, "zero2");
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->max_gpus, 8);
	ck_assert_int_eq(t->nparams, 2);
	ck_assert_int_eq(t->params[0].max_is_gpus, 1);
	ck_assert_ptr_nonnull(strstr(t->source, "t.conf:2"));
	t = saturn_techniques_find(reg, "ddp");
	ck_assert_str_eq(t->launch, "srun {command}");
	ck_assert_int_eq(t->min_gpus, 2);
	ck_assert_int_eq(t->max_gpus, 0);
	ck_assert_int_eq(saturn_techniques_count(reg), 6);
	saturn_techniques_destroy(reg);
}
END_TEST

/* plugin loader: the test plugin is built next to this program */
static char plugdir[256];

static void setup_plugdir(void)
{
	char cmd[1024];
	const char *so = getenv("TEST_PLUGIN_SO");
	char def[768];

	if (!so) {
		const char *b = getenv("top_builddir");

		snprintf(def, sizeof(def),
			 "%s/tests/runner/.libs/test_plugin.so",
			 b ? b : "../..");
		so = def;
	}

	snprintf(plugdir, sizeof(plugdir), "/tmp/saturn-plugtest.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(plugdir));
	chmod(plugdir, 0755);
	ck_assert_ptr_nonnull(so);
	snprintf(cmd, sizeof(cmd),
		 "cp '%s' '%s/zero3.so' && chmod 0755 '%s/zero3.so'", so,
		 plugdir, plugdir);
	ck_assert_int_eq(system(cmd), 0);
}

static void rm_plugdir(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", plugdir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_plugin_load)
{
	saturn_techniques_t *reg = saturn_techniques_create();
	saturn_error_t err = {{0}};
	const saturn_technique_t *t;
	char path[512], buf[128], conf[512];

	setup_plugdir();
	snprintf(path, sizeof(path), "%s/zero3.so", plugdir);
	ck_assert_msg(saturn_techniques_load_plugin(reg, plugdir, path,
						    (long)geteuid(), &err) == 0,
		      "%s", err.text);
	t = saturn_techniques_find(reg, "zero3");
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->min_gpus, 2);
	ck_assert_ptr_nonnull(strstr(t->source, "plugin"));
	ck_assert_int_eq(
	    saturn_technique_candidate(t, 4, 0, "sig", buf, sizeof(buf), &err),
	    0);
	ck_assert_int_eq(
	    saturn_technique_candidate(t, 16, 0, "sig", buf, sizeof(buf), &err),
	    1);
	saturn_techniques_destroy(reg);

	/* through a configuration file's plugin_dir */
	reg = saturn_techniques_create();
	snprintf(conf, sizeof(conf), "plugin_dir = %s\n", plugdir);
	ck_assert_int_eq(saturn_techniques_parse_config(reg, conf, "c.conf",
							(long)geteuid(), &err),
			 0);
	ck_assert_ptr_nonnull(saturn_techniques_find(reg, "zero3"));
	saturn_techniques_destroy(reg);

	/* refused: outside the directory */
	reg = saturn_techniques_create();
	ck_assert_int_eq(
	    saturn_techniques_load_plugin(reg, "/usr", path, -1, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "not in the plugin directory"));
	/* refused: group-writable */
	chmod(path, 0775);
	ck_assert_int_eq(saturn_techniques_load_plugin(reg, plugdir, path,
						       (long)geteuid(), &err),
			 -1);
	ck_assert_ptr_nonnull(strstr(err.text, "writable"));
	chmod(path, 0755);
	/* refused: directory writable by others */
	chmod(plugdir, 0777);
	ck_assert_int_eq(saturn_techniques_load_plugin(reg, plugdir, path,
						       (long)geteuid(), &err),
			 -1);
	ck_assert_ptr_nonnull(
	    strstr(err.text, "plugin directory must be owned"));
	chmod(plugdir, 0755);
	/* refused: owned by someone else (needs root to arrange) */
	if (geteuid() == 0 && chown(path, 65534, 65534) == 0) {
		ck_assert_int_eq(
		    saturn_techniques_load_plugin(reg, plugdir, path, -1, &err),
		    -1);
		ck_assert_ptr_nonnull(strstr(err.text, "owned by root"));
	}
	ck_assert_ptr_null(saturn_techniques_find(reg, "zero3"));
	saturn_techniques_destroy(reg);
	rm_plugdir();
}
END_TEST

START_TEST(test_fit_recovers)
{
	double ar[9] = {0}, ag[9] = {0}, t[3];
	int g[3] = {1, 2, 8};
	saturn_bw_table_t bw = {8, ar, ag};
	saturn_scale_fit_t fit;
	saturn_error_t err = {{0}};

	for (int k = 2; k <= 8; k++) {
		ar[k] = 100.0 - 5 * k;
		ag[k] = 120.0 - 4 * k;
	}
	for (int kind = 0; kind < 3; kind++) {
		for (int i = 0; i < 3; i++)
			t[i] = 2.0 * saturn_scale_comp(kind, g[i], 8) + 0.05 +
			       3.0 * saturn_scale_comm(kind, g[i], 8, &bw);
		ck_assert_int_eq(
		    saturn_scale_fit(kind, 8, 3, g, t, &bw, &fit, &err), 0);
		ck_assert_double_eq_tol(fit.a, 2.0, 1e-6);
		ck_assert_double_eq_tol(fit.b, 0.05, 1e-6);
		ck_assert_double_eq_tol(fit.c, 3.0, 1e-4);
		for (int q = 1; q <= 8; q++) {
			double truth = 2.0 * saturn_scale_comp(kind, q, 8) +
				       0.05 +
				       3.0 * saturn_scale_comm(kind, q, 8, &bw);

			ck_assert_double_eq_tol(
			    saturn_scale_predict(&fit, q, &bw), truth,
			    1e-6 * truth);
		}
	}
	ck_assert_int_eq(saturn_scale_fit(0, 8, 0, g, t, &bw, &fit, &err), -1);
}
END_TEST

/* Against the emulator: 2-point fits predict the rest within 10%. */
START_TEST(test_sweep_emulator)
{
	saturn_emu_hw_t hw;
	double ar[9] = {0}, ag[9] = {0};
	saturn_bw_table_t bw = {8, ar, ag};
	const char *techs[] = {"ddp", "fsdp", "pipeline"};

	for (int link = 0; link < 2; link++) {
		saturn_emu_hw_default(&hw, link);
		for (int k = 2; k <= 8; k++) {
			ar[k] = saturn_emu_busbw(&hw, k, SATURN_ALLREDUCE);
			ag[k] = saturn_emu_busbw(&hw, k, SATURN_ALLGATHER);
		}
		for (int ti = 0; ti < 3; ti++) {
			int lo = ti == 2 ? 2 : 1, gl[8], n, trials = 0;
			saturn_sweep_t *sw = saturn_sweep_create(
			    saturn_scale_kind(techs[ti]), 8, lo, 8, &bw, 0);
			const saturn_emu_model_t *m =
			    saturn_emu_model_find("gpt2-xl");

			while ((n = saturn_sweep_next(sw, gl, 8)) > 0)
				for (int i = 0; i < n; i++) {
					saturn_emu_result_t r;

					ck_assert_int_eq(
					    saturn_emu_eval(m, 16, techs[ti],
							    gl[i], NULL, &hw,
							    &r, NULL),
					    0);
					saturn_sweep_report(
					    sw, gl[i],
					    r.oom ? SATURN_PT_OOM
						  : SATURN_PT_MEASURED,
					    r.sec_per_batch, r.mem_mb, NULL);
					trials++;
				}
			/* both ends; a range from one GPU also measures two,
			 * and one middle count may be added */
			ck_assert_int_ge(trials, ti == 2 ? 2 : 3);
			ck_assert_int_le(trials, 4);
			for (int g = lo; g <= 8; g++) {
				saturn_emu_result_t r;
				const saturn_point_t *p =
				    saturn_sweep_point(sw, g);

				saturn_emu_eval(m, 16, techs[ti], g, NULL, &hw,
						&r, NULL);
				ck_assert(p->state == SATURN_PT_MEASURED ||
					  p->state == SATURN_PT_PREDICTED);
				ck_assert_msg(
				    fabs(p->sec_per_batch - r.sec_per_batch) /
					    r.sec_per_batch <
					0.10,
				    "%s g=%d link=%d: predicted %g, model %g",
				    techs[ti], g, link, p->sec_per_batch,
				    r.sec_per_batch);
			}
			saturn_sweep_destroy(sw);
		}
	}
}
END_TEST

/* Drive a sweep with t(g) from a table; returns the trials run. */
static int drive(saturn_sweep_t *sw, const double *truth)
{
	int gl[64], n, trials = 0;

	while ((n = saturn_sweep_next(sw, gl, 64)) > 0)
		for (int i = 0; i < n; i++, trials++)
			saturn_sweep_report(sw, gl[i], SATURN_PT_MEASURED,
					    truth[gl[i]], 0, NULL);
	return trials;
}

/* Largest relative error of the sweep's predictions against truth. */
static double worst(const saturn_sweep_t *sw, int lo, int hi,
		    const double *truth)
{
	double w = 0;

	for (int g = lo; g <= hi; g++) {
		const saturn_point_t *p = saturn_sweep_point(sw, g);

		ck_assert(p->state == SATURN_PT_MEASURED ||
			  p->state == SATURN_PT_PREDICTED);
		w = fmax(w, fabs(p->sec_per_batch - truth[g]) / truth[g]);
	}
	return w;
}

/* One GPU communicates nothing: when it fits, the smallest count that
 * communicates (2) is measured too, and a workload the model describes is
 * predicted exactly. (Measuring only 1 and 8, two trials, missed by 2.6 %
 * here even without noise.) */
START_TEST(test_sweep_one_gpu)
{
	double ar[9] = {0}, ag[9] = {0}, truth[9];
	saturn_bw_table_t bw = {8, ar, ag};

	for (int k = 2; k <= 8; k++)
		ar[k] = ag[k] = k <= 4 ? 14 : 9; /* PCIe: past 4 GPUs, slower */
	for (int kind = 0; kind < 2; kind++) {
		saturn_sweep_t *sw = saturn_sweep_create(kind, 8, 1, 8, &bw, 0);
		int trials;

		for (int g = 1; g <= 8; g++)
			truth[g] = 1.0 / g + 0.05 +
				   2.0 * saturn_scale_comm(kind, g, 8, &bw);
		trials = drive(sw, truth);
		ck_assert_int_eq(saturn_sweep_point(sw, 2)->state,
				 SATURN_PT_MEASURED);
		ck_assert_int_eq(trials, 3);
		ck_assert_double_lt(worst(sw, 1, 8, truth), 1e-6);
		saturn_sweep_destroy(sw);
	}
}
END_TEST

/* ddp and fsdp on one GPU run the single-GPU program: with the single
 * technique's time lent for one GPU, the sweep runs 2 and 8 only, fits
 * with the lent time and reports one GPU as predicted (so it is
 * re-measured before a plan relies on it). Not used where two GPUs ran out
 * of memory, nor by an exhaustive sweep. */
START_TEST(test_sweep_lent_one_gpu)
{
	double ar[9] = {0}, ag[9] = {0}, truth[9];
	saturn_bw_table_t bw = {8, ar, ag};
	int gl[64], n, trials = 0;
	saturn_sweep_t *sw;

	for (int k = 2; k <= 8; k++)
		ar[k] = ag[k] = k <= 4 ? 14 : 9;
	for (int kind = 0; kind < 2; kind++) {
		sw = saturn_sweep_create(kind, 8, 1, 8, &bw, 0);
		for (int g = 1; g <= 8; g++)
			truth[g] = 1.0 / g + 0.05 +
				   2.0 * saturn_scale_comm(kind, g, 8, &bw);
		saturn_sweep_lend(sw, 1, truth[1], 100, "lent by single");
		ck_assert_int_eq(drive(sw, truth), 2);
		ck_assert_int_eq(saturn_sweep_trials(sw), 2);
		ck_assert_int_eq(saturn_sweep_point(sw, 1)->state,
				 SATURN_PT_PREDICTED);
		ck_assert_str_eq(saturn_sweep_point(sw, 1)->reason,
				 "lent by single");
		ck_assert(saturn_sweep_borrowed(sw, 1));
		ck_assert(!saturn_sweep_borrowed(sw, 2));
		ck_assert_int_eq(saturn_sweep_point(sw, 2)->state,
				 SATURN_PT_MEASURED);
		ck_assert_double_lt(worst(sw, 1, 8, truth), 1e-6);
		ck_assert_int_eq(saturn_sweep_feasible_from(sw), 1);
		saturn_sweep_destroy(sw);
	}
	/* two GPUs out of memory: one is too, whatever single did */
	sw = saturn_sweep_create(SATURN_SCALE_DATA, 8, 1, 8, &bw, 0);
	saturn_sweep_lend(sw, 1, 1.0, 100, "lent by single");
	while ((n = saturn_sweep_next(sw, gl, 64)) > 0)
		for (int i = 0; i < n; i++, trials++)
			saturn_sweep_report(sw, gl[i],
					    gl[i] < 4 ? SATURN_PT_OOM
						      : SATURN_PT_MEASURED,
					    1.0 / gl[i], 0, NULL);
	ck_assert_int_eq(saturn_sweep_point(sw, 1)->state, SATURN_PT_OOM_PRED);
	ck_assert_int_eq(saturn_sweep_feasible_from(sw), 4);
	saturn_sweep_destroy(sw);
	/* exhaustive: every count measured */
	sw = saturn_sweep_create(SATURN_SCALE_DATA, 8, 1, 8, &bw, 1);
	saturn_sweep_lend(sw, 1, truth[1], 100, "lent by single");
	ck_assert_int_eq(drive(sw, truth), 8);
	ck_assert_int_eq(saturn_sweep_point(sw, 1)->state, SATURN_PT_MEASURED);
	saturn_sweep_destroy(sw);
}
END_TEST

/* Close calls: two techniques predicted within the tolerance at a count
 * are both measured there (the closest call first, lent counts no
 * contenders), and the sweeps fit again with the new points. */
START_TEST(test_sweep_close_calls)
{
	double ar[9] = {0}, ag[9] = {0}, t[3][9];
	saturn_bw_table_t bw = {8, ar, ag};
	saturn_sweep_t *sws[4] = {NULL};
	int who[SATURN_SWEEP_CLOSE_MAX], gpus[SATURN_SWEEP_CLOSE_MAX], nc,
	    gclose = 0, before[3];
	double best = 1;

	for (int k = 2; k <= 8; k++)
		ar[k] = ag[k] = k <= 4 ? 14 : 9;
	for (int g = 1; g <= 8; g++) {
		double c = saturn_scale_comm(SATURN_SCALE_DATA, g, 8, &bw);

		t[0][g] = 1.0 / g + 0.05 + 2.0 * c;
		t[1][g] = 1.0 / g + 0.045 + 2.1 * c;
		t[2][g] = 2 * t[0][g];
	}
	for (int k = 0; k < 3; k++) {
		sws[k] = saturn_sweep_create(SATURN_SCALE_DATA, 8, 1, 8, &bw, 0);
		if (k < 2)
			saturn_sweep_lend(sws[k], 1, t[k][1], 0, "single");
		/* one finished, one not: no contest */
		if (k == 1)
			ck_assert_int_eq(saturn_sweep_close_calls(sws, 2, 1, 2,
								  who, gpus),
					 0);
		before[k] = drive(sws[k], t[k]);
	}
	/* the closest call between the two predicted ones, off g = 1 */
	for (int g = 2; g <= 8; g++) {
		const saturn_point_t *p = saturn_sweep_point(sws[0], g),
				     *q = saturn_sweep_point(sws[1], g);
		double gap = fmax(p->sec_per_batch, q->sec_per_batch) /
				 fmin(p->sec_per_batch, q->sec_per_batch) -
			     1;

		if (p->state == SATURN_PT_PREDICTED &&
		    q->state == SATURN_PT_PREDICTED && gap < best) {
			best = gap;
			gclose = g;
		}
	}
	ck_assert_int_gt(gclose, 0);
	ck_assert_double_lt(best, 0.03);
	ck_assert_int_eq(saturn_sweep_close_calls(sws, 4, best / 2, 2, who,
						  gpus),
			 0);
	nc = saturn_sweep_close_calls(sws, 4, 0.03, 2, who, gpus);
	ck_assert_int_eq(nc, 2);
	ck_assert_int_eq(gpus[0], gclose);
	ck_assert_int_eq(gpus[1], gclose);
	ck_assert_int_eq(who[0] + who[1], 1);
	ck_assert_int_eq(saturn_sweep_close_calls(sws, 4, 0.03, 1, who, gpus),
			 1);
	ck_assert_int_eq(gpus[0], gclose);
	/* a lent, a measured or an unknown count is not probed */
	ck_assert_int_eq(saturn_sweep_probe(sws[0], 1), 0);
	ck_assert_int_eq(saturn_sweep_probe(sws[0], 2), 0);
	ck_assert_int_eq(saturn_sweep_probe(sws[0], 9), 0);
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(saturn_sweep_probe(sws[k], gclose), 1);
		ck_assert_int_eq(saturn_sweep_probe(sws[k], gclose), 0);
		ck_assert(!saturn_sweep_done(sws[k]));
		ck_assert_int_eq(drive(sws[k], t[k]), 1);
		ck_assert(saturn_sweep_done(sws[k]));
		ck_assert_int_eq(saturn_sweep_trials(sws[k]), before[k] + 1);
		ck_assert_int_eq(saturn_sweep_point(sws[k], gclose)->state,
				 SATURN_PT_MEASURED);
		ck_assert_double_eq_tol(
		    saturn_sweep_point(sws[k], gclose)->sec_per_batch,
		    t[k][gclose], 1e-12);
		/* the lent count stays lent, the rest predicted again */
		ck_assert_int_eq(saturn_sweep_point(sws[k], 1)->state,
				 SATURN_PT_PREDICTED);
		ck_assert(saturn_sweep_borrowed(sws[k], 1));
		ck_assert_double_lt(worst(sws[k], 1, 8, t[k]), 1e-6);
	}
	/* measured now: no longer a close call */
	nc = saturn_sweep_close_calls(sws, 3, 0.03, 2, who, gpus);
	for (int i = 0; i < nc; i++)
		ck_assert_int_ne(gpus[i], gclose);
	for (int k = 0; k < 3; k++)
		saturn_sweep_destroy(sws[k]);
	/* exhaustive: nothing predicted, nothing to probe */
	for (int k = 0; k < 2; k++) {
		sws[k] = saturn_sweep_create(SATURN_SCALE_DATA, 8, 1, 8, &bw, 1);
		drive(sws[k], t[k]);
	}
	ck_assert_int_eq(saturn_sweep_close_calls(sws, 2, 1, 2, who, gpus), 0);
	ck_assert_int_eq(saturn_sweep_probe(sws[0], 3), 0);
	for (int k = 0; k < 2; k++)
		saturn_sweep_destroy(sws[k]);
}
END_TEST

/* A pipeline fits a constant (flush, embedding exchange) and the
 * micro-batch count of each GPU count (here min(16, 4g)): the count where
 * the micro-batches stop growing is measured as a third point, and the
 * rest is predicted exactly. (A two-point fit with no constant and 8
 * micro-batches everywhere missed by 2.9 % here.) */
START_TEST(test_sweep_pipeline_constant)
{
	double ar[9] = {0}, ag[9] = {0}, truth[9];
	saturn_bw_table_t bw = {8, ar, ag};
	saturn_sweep_t *sw;
	saturn_scale_fit_t fit;
	int gs[3] = {2, 4, 8}, micro[9] = {0}, trials;
	double ts[3];

	for (int k = 2; k <= 8; k++) {
		ar[k] = ag[k] = 200;
		micro[k] = 4 * k < 16 ? 4 * k : 16;
		truth[k] = 3.0 * saturn_scale_comp(SATURN_SCALE_PIPELINE, k,
						   micro[k]) +
			   0.2 +
			   5.0 * saturn_scale_comm(SATURN_SCALE_PIPELINE, k,
						   micro[k], &bw);
	}
	/* the fit alone */
	for (int i = 0; i < 3; i++)
		ts[i] = truth[gs[i]];
	ck_assert_int_eq(saturn_scale_fit_micro(SATURN_SCALE_PIPELINE, 8, micro,
						8, 3, gs, ts, &bw, &fit, NULL),
			 0);
	ck_assert_double_eq_tol(fit.b, 0.2, 1e-6);
	ck_assert_double_eq_tol(fit.a, 3.0, 1e-6);
	/* the sweep */
	sw = saturn_sweep_create(SATURN_SCALE_PIPELINE, 8, 2, 8, &bw, 0);
	for (int k = 2; k <= 8; k++)
		saturn_sweep_set_micro(sw, k, micro[k]);
	trials = drive(sw, truth);
	ck_assert_int_eq(trials, 3);
	ck_assert_int_eq(saturn_sweep_point(sw, 4)->state, SATURN_PT_MEASURED);
	ck_assert_double_lt(worst(sw, 2, 8, truth), 1e-6);
	ck_assert_double_gt(saturn_sweep_fit(sw)->b, 0.19);
	saturn_sweep_destroy(sw);
}
END_TEST

/* A pipeline's stages pass activations point to point, one pair of GPUs at
 * a time: its communication moves at the bandwidth of two GPUs whatever
 * the count, not at that of a ring over all of them, which on PCIe falls
 * past 4 GPUs. On such a table a pipeline whose hops run at the pair's
 * bandwidth is predicted exactly between its measured counts. (With the
 * ring's bandwidth of g GPUs the fit missed by 14 % at 4 GPUs here.) */
START_TEST(test_sweep_pipeline_hops)
{
	double ar[9] = {0}, ag[9] = {0}, one[9] = {0}, truth[9];
	saturn_bw_table_t bw = {8, ar, ag}, pair = {8, one, one};
	saturn_sweep_t *sw;
	int micro[9] = {0};

	for (int k = 2; k <= 8; k++) {
		ar[k] = ag[k] = k <= 2 ? 17 : k <= 4 ? 14 : 9; /* PCIe */
		one[k] = ar[2];
		micro[k] = 8;
	}
	/* the same comm(g) as the pair's bandwidth at every count */
	for (int k = 2; k <= 8; k++)
		ck_assert_double_eq_tol(
		    saturn_scale_comm(SATURN_SCALE_PIPELINE, k, micro[k], &bw),
		    saturn_scale_comm(SATURN_SCALE_PIPELINE, k, micro[k], &pair),
		    1e-12);
	for (int k = 2; k <= 8; k++) {
		double m = micro[k];

		truth[k] = 0.5 * (m + k - 1) / (m * k) + 0.03 +
			   4.0 * (m + k - 1) / m / ar[2];
	}
	sw = saturn_sweep_create(SATURN_SCALE_PIPELINE, 8, 2, 8, &bw, 0);
	ck_assert_int_eq(drive(sw, truth), 3);
	ck_assert_double_lt(worst(sw, 2, 8, truth), 1e-6);
	saturn_sweep_destroy(sw);
}
END_TEST

/* Where the two measured ends leave the shape open (communication hidden
 * behind compute on few GPUs, exposed on many), the sweep measures a
 * middle count (the two ends alone missed by 9.1 %); where the model
 * describes the workload it does not. */
START_TEST(test_sweep_middle)
{
	double ar[9] = {0}, ag[9] = {0}, truth[9];
	saturn_bw_table_t bw = {8, ar, ag};
	saturn_sweep_t *sw;
	int trials, mid = 0;

	for (int k = 2; k <= 8; k++)
		ar[k] = ag[k] = k <= 4 ? 14 : 9;
	for (int g = 2; g <= 8; g++) {
		double comp = 1.0 / g,
		       comm = 3.0 * saturn_scale_comm(SATURN_SCALE_DATA, g, 8,
						      &bw);

		truth[g] = comp + comm * comm / (comm + comp);
	}
	sw = saturn_sweep_create(SATURN_SCALE_DATA, 8, 2, 8, &bw, 0);
	trials = drive(sw, truth);
	for (int g = 3; g <= 7; g++)
		mid += saturn_sweep_point(sw, g)->state == SATURN_PT_MEASURED;
	ck_assert_int_eq(mid, 1);
	ck_assert_int_eq(trials, 3);
	ck_assert_double_lt(worst(sw, 2, 8, truth), 0.07);
	saturn_sweep_destroy(sw);

	/* described by the model, and on a flat bandwidth table where both
	 * two-term models agree: the two ends are enough */
	for (int k = 2; k <= 8; k++)
		ar[k] = ag[k] = 10;
	for (int g = 2; g <= 8; g++)
		truth[g] = 1.0 / g +
			   0.5 * saturn_scale_comm(SATURN_SCALE_DATA, g, 8, &bw);
	sw = saturn_sweep_create(SATURN_SCALE_DATA, 8, 2, 8, &bw, 0);
	ck_assert_int_eq(drive(sw, truth), 2);
	ck_assert_double_lt(worst(sw, 2, 8, truth), 1e-6);
	saturn_sweep_destroy(sw);
}
END_TEST

START_TEST(test_sweep_oom)
{
	saturn_bw_table_t bw = {0, NULL, NULL};
	saturn_sweep_t *sw =
	    saturn_sweep_create(SATURN_SCALE_SHARDED, 8, 1, 8, &bw, 0);
	int gl[8], n, feasible = 5; /* OOM below 5 GPUs */

	while ((n = saturn_sweep_next(sw, gl, 8)) > 0)
		for (int i = 0; i < n; i++)
			saturn_sweep_report(sw, gl[i],
					    gl[i] < feasible
						? SATURN_PT_OOM
						: SATURN_PT_MEASURED,
					    1.0 / gl[i], 0, "oom");
	ck_assert_int_eq(saturn_sweep_feasible_from(sw), feasible);
	for (int g = 1; g < feasible; g++) {
		saturn_point_state_t s = saturn_sweep_point(sw, g)->state;

		ck_assert(s == SATURN_PT_OOM || s == SATURN_PT_OOM_PRED);
	}
	ck_assert_int_le(saturn_sweep_trials(sw), 5);
	saturn_sweep_destroy(sw);
}
END_TEST

START_TEST(test_emulator_model)
{
	saturn_emu_hw_t hw;
	saturn_emu_result_t r1, r8, rp;
	const saturn_emu_model_t *m = saturn_emu_model_find("gpt2-xl"),
				 *big = saturn_emu_model_find("llama-7b");
	saturn_error_t err = {{0}};

	saturn_emu_hw_default(&hw, 1);
	ck_assert_int_eq(saturn_emu_eval(m, 16, "ddp", 1, NULL, &hw, &r1, &err),
			 0);
	ck_assert_int_eq(saturn_emu_eval(m, 16, "ddp", 8, NULL, &hw, &r8, &err),
			 0);
	/* 6·P·T / (flops · efficiency) */
	ck_assert_double_eq_tol(r1.compute_s,
				6 * 1558e6 * 16 * 1024 / (312e12 * 0.4), 1e-9);
	ck_assert(r8.sec_per_batch < r1.sec_per_batch / 4);
	saturn_emu_hw_default(&hw, 0);
	ck_assert_int_eq(saturn_emu_eval(m, 16, "ddp", 8, NULL, &hw, &rp, &err),
			 0);
	ck_assert(rp.comm_s > 10 * r8.comm_s); /* PCIe hurts */
	ck_assert_int_eq(
	    saturn_emu_eval(big, 8, "single", 1, NULL, &hw, &r1, &err), 0);
	ck_assert_int_eq(r1.oom, 1);
	ck_assert_int_eq(
	    saturn_emu_eval(big, 8, "fsdp", 8, NULL, &hw, &r8, &err), 0);
	ck_assert_int_eq(r8.oom, 0);
	ck_assert_int_eq(
	    saturn_emu_eval(m, 16, "single", 2, NULL, &hw, &r1, &err), -1);
	ck_assert_int_eq(
	    saturn_emu_eval(m, 16, "pipeline", 1, NULL, &hw, &r1, &err), -1);
}
END_TEST

START_TEST(test_progress)
{
	saturn_proto_msg_t m;
	saturn_error_t err = {{0}};
	saturn_progress_t p = {42, 10, 400, 0.5, 1e9}, q;
	char path[] = "/tmp/saturn-progress-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_eq(
	    saturn_proto_parse(
		"SATURN_PROGRESS batches_done=12 sec_per_batch=0.25 extra=1",
		&m, &err),
	    SATURN_PROTO_PROGRESS);
	ck_assert_double_eq(m.batches_done, 12);
	ck_assert_double_eq(m.sec_per_batch, 0.25);
	ck_assert_int_eq(
	    saturn_proto_parse("SATURN_OOM peak_mem_mb=9 reason=needs 90 GiB",
			       &m, &err),
	    SATURN_PROTO_OOM);
	ck_assert_str_eq(m.reason, "needs 90 GiB");
	ck_assert_int_eq(
	    saturn_proto_parse("SATURN_CHECKPOINTED batch=7", &m, &err),
	    SATURN_PROTO_CHECKPOINTED);
	ck_assert_double_eq(m.batches_done, 7);
	ck_assert_int_eq(saturn_proto_parse("epoch 3 loss 0.1", &m, &err),
			 SATURN_PROTO_NONE);
	ck_assert_int_eq(saturn_proto_parse("SATURN_PROGRESSIVE x", &m, &err),
			 SATURN_PROTO_NONE);
	ck_assert_int_eq(
	    saturn_proto_parse("SATURN_PROGRESS batches_done=abc", &m, &err),
	    -1);
	ck_assert_int_eq(
	    saturn_proto_parse("SATURN_PROGRESS sec_per_batch=1", &m, &err),
	    -1);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(saturn_progress_write(path, &p, &err), 0);
	ck_assert_int_eq(saturn_progress_read(path, -1, &q, &err), 0);
	ck_assert_int_eq(q.job_id, 42);
	ck_assert_double_eq(q.batches_done, 10);
	ck_assert_int_eq(
	    saturn_progress_parse("{\"format\":\"x\"}", 14, &q, &err), -1);
	ck_assert_int_eq(
	    saturn_progress_parse(
		"{\"format\":\"saturn-progress/1\",\"batches_done\":-1}", 48,
		&q, &err),
	    -1);
	unlink(path);
}
END_TEST

static const char *fixture(const char *name, char *buf, size_t len)
{
	const char *top = getenv("top_srcdir");

	snprintf(buf, len, "%s/contrib/topologies/%s", top ? top : "../..",
		 name);
	return buf;
}

START_TEST(test_topology_fixtures)
{
	char p[1024];
	saturn_error_t err = {{0}};
	saturn_topology_t *t = saturn_topology_load_xml(
	    fixture("nvlink-8gpu.xml", p, sizeof(p)), &err);
	int ring[8] = {0, 1, 2, 3, 4, 5, 6, 7};

	ck_assert_msg(t != NULL, "%s", err.text);
	ck_assert_int_eq(t->ngpus, 8);
	ck_assert_str_eq(t->interconnect, "nvswitch");
	ck_assert_double_eq_tol(t->link_gbs[0 * 8 + 7], 300.0, 1e-9);
	ck_assert_double_eq_tol(t->gpu_mem_mb, 81920, 1e-9);
	ck_assert_double_eq_tol(saturn_topology_ring_gbs(t, ring, 8), 300.0,
				1e-9);
	saturn_topology_destroy(t);
	t = saturn_topology_load_xml(fixture("pcie-8gpu.xml", p, sizeof(p)),
				     &err);
	ck_assert_msg(t != NULL, "%s", err.text);
	ck_assert_int_eq(t->ngpus, 8);
	ck_assert_str_eq(t->interconnect, "pcie");
	ck_assert_int_eq(t->nvlink_pairs, 0);
	ck_assert_double_eq_tol(t->link_gbs[1], 31.507692, 1e-4);
	saturn_topology_destroy(t);
	ck_assert_ptr_null(saturn_topology_load_xml("/nonexistent.xml", &err));
}
END_TEST

START_TEST(test_topology_gres)
{
	saturn_error_t err = {{0}};
	const char *conf = "# two NVLink pairs\n"
			   "Name=gpu File=/dev/nvidia0 Links=-1,4,0,0\n"
			   "Name=gpu File=/dev/nvidia1 Links=4,-1,0,0\n"
			   "Name=gpu File=/dev/nvidia2 Links=0,0,-1,4\n"
			   "Name=gpu File=/dev/nvidia3 Links=0,0,4,-1\n"
			   "Name=mps Count=100\n";
	saturn_topology_t *t = saturn_topology_from_gres(conf, 25, 16, &err);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->ngpus, 4);
	ck_assert_str_eq(t->interconnect, "nvlink");
	ck_assert_int_eq(t->nvlink_pairs, 2);
	ck_assert_double_eq(t->link_gbs[0 * 4 + 1], 100);
	ck_assert_double_eq(t->link_gbs[0 * 4 + 2], 16);
	saturn_topology_destroy(t);
	ck_assert_ptr_null(
	    saturn_topology_from_gres("Name=gpu Links=x,y\n", 25, 16, &err));
	ck_assert_ptr_nonnull(strstr(err.text, "line 1"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("technique");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_expand, 0,
			    sizeof(tcases) / sizeof(tcases[0]));
	tcase_add_test(tc, test_argv);
	tcase_add_test(tc, test_builtins_params);
	tcase_add_test(tc, test_builtins_launch_vars);
	tcase_add_loop_test(tc, test_config, 0,
			    sizeof(ccases) / sizeof(ccases[0]));
	tcase_add_test(tc, test_config_effect);
	tcase_add_test(tc, test_plugin_load);
	tcase_add_test(tc, test_fit_recovers);
	tcase_add_test(tc, test_sweep_emulator);
	tcase_add_test(tc, test_sweep_oom);
	tcase_add_test(tc, test_sweep_one_gpu);
	tcase_add_test(tc, test_sweep_lent_one_gpu);
	tcase_add_test(tc, test_sweep_close_calls);
	tcase_add_test(tc, test_sweep_pipeline_constant);
	tcase_add_test(tc, test_sweep_pipeline_hops);
	tcase_add_test(tc, test_sweep_middle);
	tcase_add_test(tc, test_emulator_model);
	tcase_add_test(tc, test_progress);
	tcase_add_test(tc, test_topology_fixtures);
	tcase_add_test(tc, test_topology_gres);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
