/* render.c - plan rendering for the terminal: durations as H:MM:SS, GPU id
 * ranges, the plan table and the per-node ASCII Gantt chart (see cli.h).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char *cli_hms(double s, char *buf, size_t sz)
{
	long long t;

	if (!isfinite(s) || s < 0)
		s = 0;
	t = llround(s);
	snprintf(buf, sz, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
	return buf;
}

const char *cli_ids(const int *ids, int n, char *buf, size_t sz)
{
	size_t off = 0;

	buf[0] = '\0';
	if (!ids || n <= 0) {
		snprintf(buf, sz, "-");
		return buf;
	}
	for (int i = 0; i < n && off < sz;) {
		int j = i;

		while (j + 1 < n && ids[j + 1] == ids[j] + 1)
			j++;
		if (j > i)
			off += (size_t)snprintf(buf + off, sz - off, "%s%d-%d", i ? "," : "", ids[i], ids[j]);
		else
			off += (size_t)snprintf(buf + off, sz - off, "%s%d", i ? "," : "", ids[i]);
		i = j + 1;
	}
	return buf;
}

static int width_of(const char *s, int min)
{
	int n = s ? (int)strlen(s) : 1;

	return n > min ? n : min;
}

void cli_print_table(FILE *out, const saturn_plan_t *plan)
{
	cli_print_table_speed(out, plan, NULL);
}

const char *cli_speed(double spb_profile, double spb_observed, char *buf, size_t sz)
{
	if (!(spb_observed > 0))
		snprintf(buf, sz, "-");
	else if (!(spb_profile > 0))
		snprintf(buf, sz, "spb ? -> %.3g", spb_observed);
	else
		snprintf(buf, sz, "spb %.2f -> %.2f (x%.1f)", spb_profile, spb_observed,
			 spb_observed / spb_profile);
	return buf;
}

/* The nodes of an entry ("n1", or "n1+n3" for one spanning nodes) and
 * their GPU ids ("0-3", or "0-3/0-3") into names and ids. */
static void entry_where(const saturn_assign_t *a, char *names, size_t nl,
			char *ids, size_t il)
{
	char one[256];
	size_t un = 0, ui = 0;

	names[0] = ids[0] = '\0';
	for (int j = 0; j < saturn_assign_nnodes(a); j++) {
		const char *nm = saturn_assign_name_at(a, j);
		int w;

		w = snprintf(names + un, nl - un, "%s%s", j ? "+" : "", nm ? nm : "?");
		un = w < 0 || (size_t)w >= nl - un ? nl - 1 : un + (size_t)w;
		cli_ids(a->gpu_ids ? a->gpu_ids + (size_t)j * (size_t)a->gpus : NULL,
			a->gpus, one, sizeof(one));
		w = snprintf(ids + ui, il - ui, "%s%s", j ? "/" : "", one);
		ui = w < 0 || (size_t)w >= il - ui ? il - 1 : ui + (size_t)w;
	}
}

void cli_print_table_speed(FILE *out, const saturn_plan_t *plan, char *const *speed)
{
	int wt = 4, wq = 9, wn = 4, wi = 7;
	char ids[256], s[32], e[32], where[256];

	for (int i = 0; i < plan->nassign; i++) {
		const saturn_assign_t *a = &plan->assign[i];

		wt = width_of(a->task_id, wt);
		wq = width_of(a->technique, wq);
		entry_where(a, where, sizeof(where), ids, sizeof(ids));
		wn = width_of(where, wn);
		wi = width_of(ids, wi);
	}
	fprintf(out, "%-*s  %-*s  %4s  %-*s  %-*s  %9s  %9s%s\n", wt, "TASK", wq,
		"TECHNIQUE", "GPUS", wn, "NODE", wi, "GPU IDS", "START", "END",
		speed ? "  SPEED (PROFILED -> OBSERVED)" : "");
	for (int i = 0; i < plan->nassign; i++) {
		const saturn_assign_t *a = &plan->assign[i];

		entry_where(a, where, sizeof(where), ids, sizeof(ids));
		fprintf(out, "%-*s  %-*s  %4d  %-*s  %-*s  %9s  %9s%s%s\n", wt,
			a->task_id ? a->task_id : "?", wq,
			a->technique ? a->technique : "?", a->gpus, wn,
			where, wi, ids,
			cli_hms(a->start_s, s, sizeof(s)),
			cli_hms(a->end_s, e, sizeof(e)), speed ? "  " : "",
			speed && speed[i] ? speed[i] : (speed ? "-" : ""));
	}
}

void cli_print_batches(FILE *out, const cli_batch_row_t *rows, int n)
{
	int wb = 5, wu = 4;

	for (int i = 0; i < n; i++) {
		wb = width_of(rows[i].batch, wb);
		wu = width_of(rows[i].user, wu);
	}
	fprintf(out, "%-*s  %-*s  %5s  %7s  %8s  %7s\n", wb, "BATCH", wu, "USER", "TASKS",
		"RUNNING", "RELEASED", "PLANNED");
	for (int i = 0; i < n; i++)
		fprintf(out, "%-*s  %-*s  %5d  %7d  %8d  %7d\n", wb, rows[i].batch ? rows[i].batch : "?",
			wu, rows[i].user, rows[i].tasks, rows[i].running, rows[i].released,
			rows[i].planned);
}

static const char symbols[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
#define NSYM ((int)sizeof(symbols) - 1)

/* One node's chart. members: plan entries on this node; parts: which of
 * each entry's nodes this one is (multi-node entries). */
static void gantt_node(FILE *out, const saturn_plan_t *plan, const char *name,
		       int gpus, const saturn_node_t *node, const int *members,
		       const int *parts, int nm, double span, int width)
{
	char *grid = malloc((size_t)gpus * (size_t)width);
	double *best = calloc((size_t)gpus * (size_t)width, sizeof(double));
	double dt = span / width;
	char a0[32], a1[32];

	if (!grid || !best) {
		free(grid);
		free(best);
		return;
	}
	memset(grid, '.', (size_t)gpus * (size_t)width);
	/* each cell shows whatever covers most of its time slice */
	for (int b = 0; node && b < node->nbusy; b++)
		for (int k = 0; k < node->busy[b].ngpus; k++)
			for (int c = 0; c < width && c * dt < node->busy[b].until_s; c++) {
				int g = node->busy[b].gpu_ids[k];
				double ov = fmin(node->busy[b].until_s, (c + 1) * dt) - c * dt;

				if (g < gpus && ov > best[g * width + c]) {
					best[g * width + c] = ov;
					grid[g * width + c] = '#';
				}
			}
	for (int m = 0; m < nm; m++) {
		const saturn_assign_t *a = &plan->assign[members[m]];
		int c0 = (int)floor(a->start_s / dt), c1 = (int)ceil(a->end_s / dt);

		if (c0 < 0)
			c0 = 0;
		if (c1 > width)
			c1 = width;
		if (c1 <= c0 && c0 < width)
			c1 = c0 + 1; /* zero-length or tiny: one cell */
		for (int k = 0; a->gpu_ids && k < a->gpus; k++) {
			int g = a->gpu_ids[(size_t)parts[m] * (size_t)a->gpus + (size_t)k];

			if (g < 0 || g >= gpus)
				continue;
			for (int c = c0; c < c1; c++) {
				double ov = fmin(a->end_s, (c + 1) * dt) - fmax(a->start_s, c * dt);

				if (ov <= 0)
					ov = 1e-12;
				if (ov > best[g * width + c]) {
					best[g * width + c] = ov;
					grid[g * width + c] = symbols[m % NSYM];
				}
			}
		}
	}
	fprintf(out, "Node %s (%d GPUs)\n", name, gpus);
	fprintf(out, "%8s %-*s%s\n", "", width - (int)strlen(cli_hms(span, a1, sizeof(a1))),
		cli_hms(0, a0, sizeof(a0)), a1);
	for (int g = 0; g < gpus; g++)
		fprintf(out, "  GPU %-2d|%.*s|\n", g, width, grid + (size_t)g * width);
	if (nm > 0) {
		int col = 0;

		fprintf(out, "  ");
		for (int m = 0; m < nm; m++) {
			const char *id = plan->assign[members[m]].task_id;
			int w = (int)strlen(id ? id : "?") + 3;

			if (col + w > width + 8 && col > 0) {
				fprintf(out, "\n  ");
				col = 0;
			}
			fprintf(out, "%s%c=%s", col ? " " : "", symbols[m % NSYM], id ? id : "?");
			col += w;
		}
		fprintf(out, "\n");
		if (nm > NSYM)
			fprintf(out, "  (letters repeat after %d tasks)\n", NSYM);
	}
	if (node && node->nbusy > 0)
		fprintf(out, "  #=busy (jobs outside the plan)\n");
	fprintf(out, "\n");
	free(grid);
	free(best);
}

void cli_print_gantt(FILE *out, const saturn_plan_t *plan,
		     const saturn_problem_t *p, int width)
{
	int nnodes = p ? p->nnodes : 0;
	const char **names = NULL;
	int *members = malloc(sizeof(int) * ((size_t)plan->nassign + 1));
	int *parts = malloc(sizeof(int) * ((size_t)plan->nassign + 1));
	size_t nnames = 0;
	double span = plan->makespan_s;

	if (width < 10)
		width = 10;
	if (!members || !parts) {
		free(members);
		free(parts);
		return;
	}
	if (p) {
		for (int n = 0; n < p->nnodes; n++)
			for (int b = 0; b < p->nodes[n].nbusy; b++)
				span = fmax(span, p->nodes[n].busy[b].until_s);
	} else {
		/* nodes in order of first appearance in the plan */
		for (int i = 0; i < plan->nassign; i++)
			nnames += (size_t)saturn_assign_nnodes(&plan->assign[i]);
		names = calloc(nnames + 1, sizeof(*names));
		if (!names) {
			free(members);
			free(parts);
			return;
		}
		for (int i = 0; i < plan->nassign; i++)
			for (int j = 0; j < saturn_assign_nnodes(&plan->assign[i]); j++) {
				const char *nm = saturn_assign_name_at(&plan->assign[i], j);
				int k;

				nm = nm ? nm : "?";
				for (k = 0; k < nnodes && strcmp(names[k], nm); k++)
					;
				if (k == nnodes)
					names[nnodes++] = nm;
			}
	}
	for (int i = 0; i < plan->nassign; i++)
		span = fmax(span, plan->assign[i].end_s);
	if (!(span > 0))
		span = 1;
	for (int n = 0; n < nnodes; n++) {
		const char *name = p ? p->nodes[n].name : names[n];
		int nm = 0, gpus = p ? p->nodes[n].gpus : 1;

		for (int i = 0; i < plan->nassign; i++) {
			const saturn_assign_t *a = &plan->assign[i];
			int part = -1;

			for (int j = 0; j < saturn_assign_nnodes(a) && part < 0; j++) {
				int an = saturn_assign_node_at(a, j);
				const char *anm = saturn_assign_name_at(a, j);
				bool on = p ? (an >= 0 ? an == n : anm && !strcmp(anm, name))
					    : !strcmp(anm ? anm : "?", name);

				if (on)
					part = j;
			}
			if (part < 0)
				continue;
			parts[nm] = part;
			members[nm++] = i;
			for (int k = 0; !p && a->gpu_ids && k < a->gpus; k++) {
				int g = a->gpu_ids[(size_t)part * (size_t)a->gpus + (size_t)k];

				if (g + 1 > gpus)
					gpus = g + 1;
			}
		}
		if (gpus > SATURN_MAX_GPUS_PER_NODE)
			gpus = SATURN_MAX_GPUS_PER_NODE;
		gantt_node(out, plan, name, gpus, p ? &p->nodes[n] : NULL, members, parts,
			   nm, span, width);
	}
	free(names);
	free(members);
	free(parts);
}
