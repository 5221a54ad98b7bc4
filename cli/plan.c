/* plan.c - `saturn plan`: read a saturn-problem/1 or /2 file, solve it with the
 * planner, and print the plan for people (table, Gantt chart, makespan,
 * lower bound, gap, solver) or as saturn-plan/1 (--json). --compare also
 * plans the batch the way it runs today (every task on a fixed 1, 2, 4 or 8
 * GPUs, first come first served) and prints the time the plan saves.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fairness.h"
#include "formats.h"
#include "multiuser.h"
#include "numparse.h"
#include "planner.h"
#include "profile.h"
#include "safefile.h"

#define GANTT_WIDTH 64

static void plan_usage(FILE *out)
{
	fprintf(out,
		"Usage: %s plan [OPTION]... FILE|-\n"
		"Plan a batch described by FILE (saturn-problem/1 or /2; - reads stdin) and print\n"
		"the plan: a table, a Gantt chart per node, makespan, lower bound and gap.\n\n"
		"  -j, --json            print only the plan as saturn-plan/1 (/2 with tasks\n"
		"                        on several nodes) JSON\n"
		"  -t, --time-limit=S    planner time budget in seconds (default 5)\n"
		"  -c, --compare         also plan current practice (fixed 1, 2, 4, 8 GPUs,\n"
		"                        first come first served) and print the time saved\n"
		"  -s, --seed=N          random seed of the planner's search (default 0)\n"
		"  -o, --objective=NAME  several batches (the problem's \"batches\"): makespan\n"
		"                        (default), share, weighted or bounded; prints each\n"
		"                        batch's completion and fair-share deadline\n"
		"  -b, --bound=NAME      the deadlines of bounded: share (the fair-share\n"
		"                        split, default) or stock (first come first served\n"
		"                        with the batches' request_gpus)\n"
		"  -p, --profile=NxG     FILE is a profile (saturn-profile/1): plan each\n"
		"                        task id on N nodes of G GPUs with every usable\n"
		"                        option, the predicted multi-node ones included\n"
		"  -h, --help            show this help\n\n"
		"Exit status: 0 planned, 1 planning failed, 2 bad input, 64 usage error.\n",
		cli_prog);
}

/* Run the baselines for 1, 2, 4, 8 GPUs and print the comparison. */
static void compare(const saturn_problem_t *p, const saturn_plan_t *plan)
{
	static const int counts[] = {1, 2, 4, 8};
	int maxg = 0, best_g = 0;
	double best = INFINITY;
	char a[32], b[32];

	for (int n = 0; n < p->nnodes; n++)
		if (p->nodes[n].gpus > maxg)
			maxg = p->nodes[n].gpus;
	printf("Current practice (every task on a fixed GPU count with its fastest\n"
	       "technique there, first come first served):\n");
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		saturn_error_t err = {{0}};
		saturn_plan_t *base;

		if (counts[i] > maxg)
			continue;
		base = saturn_planner_baseline(p, counts[i], &err);
		if (!base) {
			printf("  %d GPU%s: not available (%s)\n", counts[i],
			       counts[i] > 1 ? "s" : " ", err.text);
			continue;
		}
		printf("  %d GPU%s: makespan %10s", counts[i], counts[i] > 1 ? "s" : " ",
		       cli_hms(base->makespan_s, a, sizeof(a)));
		if (base->makespan_s > 0)
			printf("  (the plan is %.1f%% shorter)",
			       100.0 * (base->makespan_s - plan->makespan_s) / base->makespan_s);
		printf("\n");
		if (base->makespan_s < best) {
			best = base->makespan_s;
			best_g = counts[i];
		}
		saturn_plan_destroy(base);
	}
	if (best_g == 0) {
		printf("No baseline could be computed.\n");
		return;
	}
	printf("Best baseline: %d GPU%s per task, makespan %s\n", best_g,
	       best_g > 1 ? "s" : "", cli_hms(best, a, sizeof(a)));
	if (best > 0)
		printf("Plan vs best baseline: time saved: %.1f%% (%s%s)\n",
		       100.0 * (best - plan->makespan_s) / best,
		       best < plan->makespan_s ? "-" : "",
		       cli_hms(fabs(best - plan->makespan_s), b, sizeof(b)));
}

static void print_human(const char *file, const saturn_problem_t *p,
			const saturn_plan_t *plan)
{
	int gpus = 0;
	char a[32], b[32];

	for (int n = 0; n < p->nnodes; n++)
		gpus += p->nodes[n].gpus;
	printf("Plan for %s: %d task%s on %d node%s (%d GPUs)\n\n",
	       strcmp(file, "-") ? file : "stdin", p->ntasks, p->ntasks == 1 ? "" : "s",
	       p->nnodes, p->nnodes == 1 ? "" : "s", gpus);
	if (plan->nassign > 0) {
		cli_print_table(stdout, plan);
		printf("\n");
		cli_print_gantt(stdout, plan, p, GANTT_WIDTH);
	} else {
		printf("(no tasks to plan)\n\n");
	}
	printf("Makespan:    %10s (%.1f s)\n", cli_hms(plan->makespan_s, a, sizeof(a)),
	       plan->makespan_s);
	if (plan->lower_bound_s > 0)
		printf("Lower bound: %10s (%.1f s), gap %.1f%%\n",
		       cli_hms(plan->lower_bound_s, b, sizeof(b)), plan->lower_bound_s,
		       100.0 * (plan->makespan_s - plan->lower_bound_s) / plan->lower_bound_s);
	else
		printf("Lower bound: %10s (gap n/a)\n", cli_hms(0, b, sizeof(b)));
	printf("Solver:      %s, %s, %.2f s\n", plan->method[0] ? plan->method : "?",
	       plan->status[0] ? plan->status : "?", plan->solve_s);
}

static int parse_objective(const char *v)
{
	static const char *names[] = {"makespan", "share", "weighted", "bounded"};
	static const int objs[] = {SATURN_FAIR_NONE, SATURN_FAIR_SHARE, SATURN_FAIR_WEIGHTED,
				   SATURN_FAIR_BOUNDED};

	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
		if (!strcmp(v, names[i]))
			return objs[i];
	return -1;
}

/* --objective: plan the batches of the problem (doc/formats.md "batches")
 * and print each batch's completion against its fair-share deadline. */
static saturn_plan_t *plan_batches(const char *file, int objective, int stock,
				   saturn_problem_t **pp, const saturn_planner_opts_t *opts,
				   saturn_mu_t *m, int *rc)
{
	saturn_error_t err = {{0}};
	const char *name = strcmp(file, "-") ? file : "stdin";
	size_t len;
	char *buf = saturn_read_file(file, 1UL << 30, &len, &err);
	saturn_plan_t *plan = NULL;

	*rc = CLI_EXIT_INPUT;
	if (!buf) {
		cli_fail(CLI_EXIT_INPUT, "%s: %s", name, err.text);
		return NULL;
	}
	if (!(*pp = saturn_problem_parse(buf, len, &err)) || saturn_mu_parse(buf, len, *pp, m, &err) < 0) {
		free(buf);
		cli_fail(CLI_EXIT_INPUT, "%s: %s", name, err.text);
		return NULL;
	}
	free(buf);
	*rc = CLI_EXIT_FAIL;
	if (stock && (!(m->deadline = calloc((size_t)m->nbatches + 1, sizeof(double))) ||
		      saturn_mu_stock_deadlines(m, *pp, m->deadline) < 0)) {
		cli_fail(CLI_EXIT_FAIL, "out of memory");
		return NULL;
	}
	if (objective == SATURN_FAIR_SHARE && m->nusers > 1) {
		/* each user's tag: the deadline of their last batch */
		double *dl = calloc((size_t)m->nbatches + 1, sizeof(double));
		double *ut = calloc((size_t)m->nusers + 1, sizeof(double));
		double *tag = calloc((size_t)(*pp)->ntasks + 1, sizeof(double));

		if (dl && ut && tag && saturn_mu_deadlines(m, *pp, dl) == 0) {
			for (int u = 0; u < m->nusers; u++)
				ut[u] = -INFINITY;
			for (int b = 0; b < m->nbatches; b++)
				if (dl[b] > ut[m->user_of_batch[b]])
					ut[m->user_of_batch[b]] = dl[b];
			for (int t = 0; t < (*pp)->ntasks; t++)
				tag[t] = ut[m->user_of_batch[m->batch_of_task[t]]];
			plan = saturn_fair_plan(*pp, tag, opts, &err);
			if (plan && saturn_mu_compact(m, *pp, plan, &err) < 0) {
				saturn_plan_destroy(plan);
				plan = NULL;
			}
		} else {
			saturn_error_set(&err, "out of memory");
		}
		free(dl);
		free(ut);
		free(tag);
	} else {
		plan = saturn_mu_plan(objective == SATURN_FAIR_SHARE ? SATURN_FAIR_NONE : objective, m,
				      *pp, opts, &err);
	}
	if (!plan)
		cli_fail(CLI_EXIT_FAIL, "%s: planning failed: %s", name, err.text);
	return plan;
}

static void print_batches(const saturn_problem_t *p, const saturn_plan_t *plan, const saturn_mu_t *m,
			  int objective)
{
	double *dl = calloc((size_t)m->nbatches + 1, sizeof(double));
	double *c = calloc((size_t)m->nbatches + 1, sizeof(double));

	if (!dl || !c || saturn_mu_deadlines(m, p, dl) < 0) {
		free(dl);
		free(c);
		return;
	}
	saturn_mu_completions(m, plan, c);
	printf("\nObjective %s: %d batch(es) of %d user(s); completion from now, the\n"
	       "%s, stretch =\n"
	       "(completion - submission) / (deadline - submission):\n",
	       saturn_objective_name(objective), m->nbatches, m->nusers,
	       m->deadline ? "stock deadline (first come first served, request_gpus)" :
			     "fair-share deadline (GPUs split by the users' weights)");
	for (int b = 0; b < m->nbatches; b++)
		printf("  batch %d (user %d, weight %g, submitted %+.0fs): done at %.0fs, deadline %.0fs, stretch %.2f%s\n",
		       b, m->user_of_batch[b], m->weight[b], m->submit[b], c[b], dl[b],
		       dl[b] - m->submit[b] > 0 ? (c[b] - m->submit[b]) / (dl[b] - m->submit[b]) : 0,
		       c[b] <= dl[b] * (1 + 1e-9) + 1e-6 ? "" : " (late)");
	printf("  weighted flow time %.0f (lower bound %.0f), largest stretch %.2f, makespan %.0fs\n",
	       saturn_mu_value(SATURN_FAIR_WEIGHTED, m, plan, dl), saturn_mu_weighted_bound(m, p),
	       saturn_mu_value(SATURN_FAIR_BOUNDED, m, plan, dl), plan->makespan_s);
	free(dl);
	free(c);
}

/* After a --profile plan: how many tasks it puts on predicted multi-node
 * options, which sched/saturn leaves out until they are measured. */
static void print_predicted(const saturn_problem_t *p, const saturn_plan_t *plan, int npred)
{
	int used = 0;

	for (int i = 0; i < plan->nassign; i++) {
		const saturn_assign_t *a = &plan->assign[i];

		used += a->task >= 0 && a->option >= 0 &&
			saturn_option_nodes(&p->tasks[a->task].options[a->option]) > 1;
	}
	if (npred)
		printf("\nThe profile has %d predicted multi-node option(s); %d task(s) run on several nodes\n"
		       "in this plan. sched/saturn leaves predicted multi-node options out of its\n"
		       "plans until they are measured.\n",
		       npred, used);
}

/* --profile=NxG: the problem of a profile's tasks (one per task id, the
 * profile's usable options, class ignored) on N nodes of G GPUs. *npred:
 * predicted multi-node options offered. NULL with err. */
static saturn_problem_t *profile_problem(const char *file, int nn, int ng,
					 int *npred, saturn_error_t *err)
{
	saturn_profile_t *pr = saturn_profile_load(file, -1, err);
	saturn_problem_t *p = pr ? saturn_problem_create() : NULL;

	*npred = 0;
	if (!p)
		goto fail;
	for (int i = 0; i < nn; i++) {
		saturn_node_t n = {0};
		char name[32];

		snprintf(name, sizeof(name), "node%d", i);
		n.gpus = ng;
		if (!(n.name = strdup(name)) || saturn_problem_add_node(p, &n) < 0) {
			free(n.name);
			saturn_error_set(err, "out of memory");
			goto fail;
		}
	}
	for (int ti = 0; ti < pr->ntasks; ti++) {
		const saturn_profile_task_t *pt = &pr->tasks[ti];

		for (int q = 0; q < pt->noptions; q++)
			*npred += pt->options[q].status == SATURN_OPT_PREDICTED &&
				  saturn_profile_option_nodes(&pt->options[q]) > 1;
		for (int k = 0; k < pt->ntask_ids; k++) {
			saturn_task_t t = {0};
			char id[320];
			int n = saturn_profile_options(pt, &t.options);

			if (n < 0) {
				saturn_error_set(err, "out of memory");
				goto fail;
			}
			t.noptions = n;
			for (int q = 0; q < n; q++) {
				free(t.options[q].klass);
				t.options[q].klass = NULL;
			}
			snprintf(id, sizeof(id), "%d", pt->task_ids[k]);
			t.batches = pt->batches;
			if (n == 0 || !(t.id = strdup(id)) || saturn_problem_add_task(p, &t) < 0) {
				if (n == 0)
					saturn_error_set(err, "%s: task %d (%s) has no usable option", file,
							 pt->task_ids[k], pt->signature);
				else
					saturn_error_set(err, "out of memory");
				for (int q = 0; q < n; q++)
					free(t.options[q].technique);
				free(t.options);
				free(t.id);
				goto fail;
			}
		}
	}
	saturn_profile_destroy(pr);
	if (saturn_problem_check(p, err) < 0) {
		saturn_error_prefix(err, "%s", file);
		saturn_problem_destroy(p);
		return NULL;
	}
	return p;
fail:
	saturn_profile_destroy(pr);
	saturn_problem_destroy(p);
	return NULL;
}

int cmd_plan(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"time-limit", required_argument, NULL, 't'},
		{"compare", no_argument, NULL, 'c'},
		{"seed", required_argument, NULL, 's'},
		{"objective", required_argument, NULL, 'o'},
		{"bound", required_argument, NULL, 'b'},
		{"profile", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	saturn_planner_opts_t opts;
	saturn_error_t err = {{0}};
	saturn_problem_t *p;
	saturn_plan_t *plan;
	bool json = false, cmp = false;
	const char *file;
	int c, objective = -1, stock = 0, pnodes = 0, pgpus = 0, npred = 0;
	saturn_mu_t mu = {0};

	saturn_planner_opts_init(&opts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jt:cs:o:b:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'c':
			cmp = true;
			break;
		case 't': /* seconds */
			if (saturn_parse_double("--time-limit", optarg, 0, 86400,
						SATURN_NUM_LO_OPEN, &opts.time_limit_s, &err) < 0)
				return cli_fail(CLI_EXIT_USAGE, "plan: %s", err.text);
			break;
		case 's': {
			long v;

			if (saturn_parse_long("--seed", optarg, 0, 4294967295L, &v, &err) < 0)
				return cli_fail(CLI_EXIT_USAGE, "plan: %s", err.text);
			opts.seed = (unsigned)v;
			break;
		}
		case 'o':
			if ((objective = parse_objective(optarg)) < 0)
				return cli_fail(CLI_EXIT_USAGE, "plan: --objective=%s: must be makespan, share, weighted or bounded", optarg);
			break;
		case 'b':
			if (strcmp(optarg, "share") && strcmp(optarg, "stock"))
				return cli_fail(CLI_EXIT_USAGE, "plan: --bound=%s: must be share or stock", optarg);
			stock = !strcmp(optarg, "stock");
			break;
		case 'p': {
			char x, extra;

			if (sscanf(optarg, "%d%c%d%c", &pnodes, &x, &pgpus, &extra) != 3 || x != 'x' ||
			    pnodes < 1 || pnodes > SATURN_MAX_NODES || pgpus < 1 ||
			    pgpus > SATURN_MAX_GPUS_PER_NODE)
				return cli_fail(CLI_EXIT_USAGE, "plan: --profile=%s: must be NODESxGPUS (1-%d nodes of 1-%d GPUs, e.g. 4x8)",
						optarg, SATURN_MAX_NODES, SATURN_MAX_GPUS_PER_NODE);
			break;
		}
		case 'h':
			plan_usage(stdout);
			return CLI_EXIT_OK;
		case ':':
			return cli_fail(CLI_EXIT_USAGE, "plan: option '%s' needs a value (try '%s plan --help')", argv[optind - 1], cli_prog);
		default:
			return cli_fail(CLI_EXIT_USAGE, "plan: unknown option '%s' (try '%s plan --help')", argv[optind - 1], cli_prog);
		}
	}
	if (optind != argc - 1) {
		plan_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	file = argv[optind];
	if (pnodes && objective >= 0)
		return cli_fail(CLI_EXIT_USAGE, "plan: --profile and --objective do not go together");
	if (pnodes) {
		if (!(p = profile_problem(file, pnodes, pgpus, &npred, &err)))
			return cli_fail(CLI_EXIT_INPUT, "%s", err.text);
		plan = saturn_planner_solve(p, &opts, &err);
	} else if (objective >= 0) {
		int rc;

		p = NULL;
		plan = plan_batches(file, objective, stock, &p, &opts, &mu, &rc);
		if (!plan) {
			saturn_mu_free(&mu);
			saturn_problem_destroy(p);
			return rc;
		}
	} else {
		p = saturn_problem_load(file, &err);
		if (!p)
			return cli_fail(CLI_EXIT_INPUT, "%s", err.text);
		plan = saturn_planner_solve(p, &opts, &err);
	}
	if (!plan) {
		saturn_problem_destroy(p);
		return cli_fail(CLI_EXIT_FAIL, "%s: planning failed: %s",
				strcmp(file, "-") ? file : "stdin", err.text);
	}
	/* the planner validates; a second look costs milliseconds */
	if (saturn_plan_validate(plan, p, &err) < 0) {
		saturn_plan_destroy(plan);
		saturn_problem_destroy(p);
		return cli_fail(CLI_EXIT_FAIL, "internal error: the planner returned an invalid plan: %s", err.text);
	}
	if (json) {
		char *s = saturn_plan_to_json(plan, 1);

		if (!s) {
			saturn_plan_destroy(plan);
			saturn_problem_destroy(p);
			return cli_fail(CLI_EXIT_FAIL, "out of memory");
		}
		printf("%s\n", s);
		free(s);
	} else {
		print_human(file, p, plan);
		if (pnodes)
			print_predicted(p, plan, npred);
		if (objective >= 0)
			print_batches(p, plan, &mu, objective);
		if (cmp) {
			printf("\n");
			compare(p, plan);
		}
	}
	saturn_mu_free(&mu);
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
	if (fflush(stdout) != 0 || ferror(stdout))
		return cli_fail(CLI_EXIT_FAIL, "error writing the output");
	return CLI_EXIT_OK;
}
