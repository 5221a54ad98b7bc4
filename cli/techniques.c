/* techniques.c - `saturn techniques`: the parallelism techniques this site
 * offers (built-ins, the admin configuration file, plugins), with their GPU
 * ranges, launch lines, parameters and where each came from. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "technique.h"

static void print_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

int cmd_techniques(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"conf", required_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, json = 0;
	const char *conf = NULL;
	saturn_techniques_t *reg;
	saturn_error_t err = {{0}};

	while ((c = getopt_long(argc, argv, "jc:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'c':
			conf = optarg;
			break;
		case 'h':
			printf("Usage: %s techniques [--json] [--conf FILE]\n"
			       "List the parallelism techniques: built-ins, "
			       "those of the configuration file\n"
			       "(--conf, else $SATURN_TECHNIQUES_CONF, else "
			       "%s) and its plugins.\n",
			       cli_prog, SATURN_TECHNIQUES_CONF_DEFAULT);
			return CLI_EXIT_OK;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return cli_fail(CLI_EXIT_USAGE,
				"techniques: unexpected argument '%s'",
				argv[optind]);
	if (conf) {
		reg = saturn_techniques_create();
		if (reg &&
		    saturn_techniques_load_config(reg, conf, 0, &err) < 0) {
			saturn_techniques_destroy(reg);
			return cli_fail(CLI_EXIT_INPUT, "%s", err.text);
		}
	} else {
		reg = saturn_techniques_default(&err);
	}
	if (!reg)
		return cli_fail(CLI_EXIT_INPUT, "%s",
				err.text[0] ? err.text : "out of memory");
	if (json)
		printf("[");
	for (int i = 0; i < saturn_techniques_count(reg); i++) {
		const saturn_technique_t *t = saturn_techniques_get(reg, i);

		if (json) {
			printf("%s\n {\"name\":", i ? "," : "");
			print_json_str(t->name);
			printf(",\"min_gpus\":%d,\"max_gpus\":%d,\"launch\":",
			       t->min_gpus, t->max_gpus);
			print_json_str(t->launch);
			printf(",\"source\":");
			print_json_str(t->source);
			printf(",\"env\":[");
			for (int k = 0; k < t->nenv; k++) {
				printf("%s", k ? "," : "");
				print_json_str(t->env[k]);
			}
			printf("],\"params\":[");
			for (int k = 0; k < t->nparams; k++) {
				const saturn_tparam_t *p = &t->params[k];

				printf("%s{\"name\":", k ? "," : "");
				print_json_str(p->name);
				printf(",\"type\":\"%s\",\"min\":%ld,",
				       p->type == SATURN_TPARAM_BOOL ? "bool"
								     : "int",
				       p->min);
				if (p->max_is_gpus)
					printf("\"max\":\"gpus\",");
				else
					printf("\"max\":%ld,", p->max);
				if (p->def_is_gpus)
					printf("\"default\":\"gpus\"}");
				else
					printf("\"default\":%ld}", p->def);
			}
			printf("]}");
			continue;
		}
		printf("%-10s GPUs %d-", t->name, t->min_gpus);
		if (t->max_gpus)
			printf("%-4d", t->max_gpus);
		else
			printf("%-4s", "");
		printf(" %s\n",
		       t->description && *t->description ? t->description : "");
		printf("           launch: %s\n", t->launch);
		for (int k = 0; k < t->nenv; k++)
			printf("           env:    %s\n", t->env[k]);
		for (int k = 0; k < t->nparams; k++) {
			const saturn_tparam_t *p = &t->params[k];

			if (p->type == SATURN_TPARAM_BOOL)
				printf("           param:  %s bool (default "
				       "%ld)\n",
				       p->name, p->def);
			else if (p->max_is_gpus)
				printf("           param:  %s int %ld..gpus "
				       "(default %s)\n",
				       p->name, p->min,
				       p->def_is_gpus ? "gpus" : "");
			else
				printf("           param:  %s int %ld..%ld "
				       "(default %ld)\n",
				       p->name, p->min, p->max, p->def);
		}
		printf("           from:   %s\n", t->source);
	}
	if (json)
		printf("\n]\n");
	saturn_techniques_destroy(reg);
	return CLI_EXIT_OK;
}
