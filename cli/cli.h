/* cli.h - shared pieces of the `saturn` program: exit status conventions,
 * subcommand prototypes, and the plan rendering (table, Gantt chart) that
 * `saturn plan` and `saturn status` both print.
 */
#ifndef SATURN_CLI_H
#define SATURN_CLI_H

#include <stdio.h>

#include "model.h"

/* Exit statuses (documented in saturn(1)). */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1  /* the work itself failed (planner, daemon, ...) */
#define CLI_EXIT_INPUT 2 /* bad input: unreadable file, invalid JSON or field */
#define CLI_EXIT_USAGE 64 /* bad command line (EX_USAGE from sysexits.h) */

#define SATURN_CMD(name, summary) int cmd_##name(int argc, char **argv);
#include "commands.h"
#undef SATURN_CMD

/* Program name for messages ("saturn"). */
extern const char *cli_prog;

/* Print "saturn: MESSAGE\n" on stderr. Returns status, so that commands can
 * write `return cli_fail(CLI_EXIT_INPUT, "...")`. */
int cli_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Seconds as H:MM:SS (rounded to the second; negative as 0). buf >= 32. */
const char *cli_hms(double s, char *buf, size_t sz);

/* GPU ids as compact ranges ("0-3,6"). buf >= 16. */
const char *cli_ids(const int *ids, int n, char *buf, size_t sz);

/* The plan as a table: task, technique, GPUs, node, GPU ids, start, end. */
void cli_print_table(FILE *out, const saturn_plan_t *plan);

/* The same with a last column SPEED: speed[i] for assignment i (NULL or
 * "-" shown as "-"); speed NULL prints cli_print_table's table. */
void cli_print_table_speed(FILE *out, const saturn_plan_t *plan, char *const *speed);

/* A running task's speed, profiled -> observed: "spb 0.50 -> 1.02 (x2.0)";
 * "-" when nothing is observed. Returns buf. */
const char *cli_speed(double spb_profile, double spb_observed, char *buf, size_t sz);

/* One batch (user, name) of `saturn status`: its task counts by state. */
typedef struct cli_batch_row {
	const char *batch;
	char user[64]; /* "alice (1001)", "uid 1001", or "?" when unknown */
	int tasks, running, released, planned;
} cli_batch_row_t;

/* The batches as a table: batch, user, tasks, running, released, planned. */
void cli_print_batches(FILE *out, const cli_batch_row_t *rows, int n);

/* An ASCII Gantt chart per node: one row per GPU, `width` columns for the
 * time axis 0..makespan, one letter per task (legend below each chart), '#'
 * for GPUs busy with jobs outside the plan, '.' for idle. p gives the
 * nodes' GPU counts and busy GPUs; when NULL, nodes and GPU counts are
 * taken from the plan itself. */
void cli_print_gantt(FILE *out, const saturn_plan_t *plan,
		     const saturn_problem_t *p, int width);

/* `saturn status --sacct`: the Saturn tasks in Slurm's accounting since
 * `since` (sacct -S; NULL: now-30days), of batch `batch` (NULL: all) and
 * user `user_arg` (NULL: all users sacct shows), from their plan records
 * (status_sacct.c). Returns an exit status. */
int cli_status_sacct(const char *batch, const char *user_arg, const char *since);

#endif /* SATURN_CLI_H */
