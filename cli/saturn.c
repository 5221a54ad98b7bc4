/* saturn.c - the `saturn` program: a table of subcommands (commands.h), each
 * a thin main over libsaturn in its own file (plan.c, ...). This file only
 * dispatches and prints the top-level help and version.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char *cli_prog = "saturn";

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
#define SATURN_CMD(name, summary) {#name, cmd_##name, summary},
#include "commands.h"
#undef SATURN_CMD
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

int cli_fail(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s COMMAND [OPTION]... [ARG]...\n"
		"Saturn for Slurm: plan batches of GPU training jobs (technique, GPU count,\n"
		"start time) to finish them as early as possible.\n\n"
		"Commands:\n",
		cli_prog);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\n`%s COMMAND --help` describes a command; see also saturn(1).\n"
		"Options:\n"
		"  -h, --help     show this help\n"
		"  -V, --version  show the version\n"
		"Exit status: 0 success, 1 the work failed, 2 bad input, 64 usage error.\n",
		cli_prog);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr), CLI_EXIT_USAGE;
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("saturn (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	cli_fail(0, "unknown command '%s' (try '%s --help')", argv[1], cli_prog);
	return CLI_EXIT_USAGE;
}
