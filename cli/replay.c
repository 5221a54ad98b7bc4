/* replay.c - `saturn replay`: run recorded scheduling cycles
 * (saturn-cycle/1, lib/sched/cycle_record.h) again and say, per cycle,
 * whether the same inputs still give the same outputs. The work is
 * saturn_cycle_replay_one(); this file finds the files and prints. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cycle_record.h"

typedef struct paths {
	int n, cap;
	char **v;
} paths_t;

static int paths_add(paths_t *p, char *path)
{
	if (!path)
		return -1;
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 64;
		char **nv = realloc(p->v, (size_t)cap * sizeof(*nv));

		if (!nv) {
			free(path);
			return -1;
		}
		p->v = nv;
		p->cap = cap;
	}
	p->v[p->n++] = path;
	return 0;
}

static void paths_free(paths_t *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A cycle record's file name: cycle-*.json. */
static int is_record(const char *name)
{
	size_t n = strlen(name);

	return n > strlen("cycle-.json") && !strncmp(name, "cycle-", 6) &&
	       !strcmp(name + n - 5, ".json");
}

/* The records of dir, in name order, appended to p. An exit status. */
static int add_dir(paths_t *p, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int first = p->n, rc = CLI_EXIT_OK;

	if (!d)
		return cli_fail(CLI_EXIT_INPUT, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		char *path;

		if (!is_record(e->d_name))
			continue;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			path = NULL;
		if (paths_add(p, path) < 0) {
			rc = cli_fail(CLI_EXIT_FAIL, "out of memory");
			break;
		}
	}
	closedir(d);
	if (rc == CLI_EXIT_OK && p->n == first)
		return cli_fail(CLI_EXIT_INPUT, "%s: no cycle-*.json file", dir);
	qsort(p->v + first, (size_t)(p->n - first), sizeof(*p->v), cmp_str);
	return rc;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s replay [--all] DIR|FILE...\n"
		"Run recorded scheduling cycles (saturn-cycle/1) again: each FILE, and each\n"
		"cycle-*.json of each DIR in name order. Prints \"cycle N: same\" or the first\n"
		"difference of each, and stops at the first cycle that differs.\n"
		"  -a, --all   go on past differences and bad records\n"
		"Exit status: 0 every cycle the same, 1 one differs, 2 a record cannot be\n"
		"read or is not a valid saturn-cycle/1 document, 64 usage error.\n",
		cli_prog);
}

/* Replay one file: an exit status (printed). */
static int replay_file(const char *path)
{
	saturn_cycle_record_t rec;
	saturn_error_t err = {{0}};
	char diff[512];
	int rc;

	if (saturn_cycle_record_load(path, &rec, &err) < 0) {
		fflush(stdout);
		return cli_fail(CLI_EXIT_INPUT, "%s", err.text);
	}
	rc = saturn_cycle_replay_one(&rec, diff, sizeof(diff), &err);
	if (rc < 0) {
		fflush(stdout);
		cli_fail(0, "%s: cycle %d: %s", path, rec.cycle, err.text);
		rc = CLI_EXIT_INPUT;
	} else if (rc == 0) {
		printf("cycle %d: same\n", rec.cycle);
	} else {
		printf("cycle %d: %s\n", rec.cycle, diff);
		rc = CLI_EXIT_FAIL;
	}
	fflush(stdout);
	saturn_cycle_record_free(&rec);
	return rc;
}

int cmd_replay(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"all", no_argument, NULL, 'a'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	paths_t p = {0};
	int c, all = 0, worst = CLI_EXIT_OK;

	while ((c = getopt_long(argc, argv, "ah", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			all = 1;
			break;
		case 'h':
			usage(stdout);
			return CLI_EXIT_OK;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	if (optind == argc) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	for (int i = optind; i < argc; i++) {
		struct stat sb;
		int rc;

		if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode))
			rc = add_dir(&p, argv[i]);
		else if (paths_add(&p, strdup(argv[i])) < 0)
			rc = cli_fail(CLI_EXIT_FAIL, "out of memory");
		else
			rc = CLI_EXIT_OK;
		if (rc != CLI_EXIT_OK) {
			paths_free(&p);
			return rc;
		}
	}
	for (int i = 0; i < p.n; i++) {
		int rc = replay_file(p.v[i]);

		/* a bad record (2) outweighs a difference (1) */
		if (rc > worst)
			worst = rc;
		if (rc != CLI_EXIT_OK && !all)
			break;
	}
	paths_free(&p);
	return worst;
}
