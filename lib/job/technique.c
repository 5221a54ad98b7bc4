/* technique.c - the technique registry: built-ins, lookup, and the default
 * registry (built-ins plus the admin configuration file). The configuration
 * file parser is technique_conf.c, the C plugin loader technique_plugin.c;
 * the helpers they share are declared in technique_int.h.
 */
#include "config.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobenv.h"
#include "saturn_limits.h"
#include "technique.h"
#include "technique_int.h"

/* --- built-ins --------------------------------------------------------- */

struct builtin_param {
	const char *name;
	saturn_tparam_type_t type;
	long min, max, def;
	int max_is_gpus, def_is_gpus;
};

struct builtin {
	const char *name;
	const char *description;
	int min_gpus, max_gpus;
	const char *launch;
	const char *env[4];
	struct builtin_param params[4];
};

/* The multi-process built-ins start one rank per GPU through saturn-run's
 * own rank launcher: the reserved first word "saturn-ranks" (saturn-run(1),
 * LAUNCH OF RANKS), which sets torchrun's variables (RANK, WORLD_SIZE,
 * LOCAL_RANK, MASTER_ADDR, MASTER_PORT, ...) without torchrun, whose
 * Debian 12 build (PyTorch 1.13) fails before starting any worker. An
 * admin can replace any of them in the configuration file, e.g. with
 * "torchrun --standalone --nproc_per_node={gpus} --no_python {command}"
 * where torchrun works, or a site wrapper (doc/techniques.md). */
static const struct builtin builtins[] = {
    {"single", "one GPU, no parallelism", 1, 1, "{command}", {NULL}, {{NULL}}},
    {"ddp",
     "data parallel (PyTorch DDP): a replica per GPU, gradients all-reduced",
     1,
     0,
     "saturn-ranks {command}",
     {"SATURN_DDP_BUCKET_CAP_MB={bucket_cap_mb}", NULL},
     {{"bucket_cap_mb", SATURN_TPARAM_INT, 1, 1024, 25, 0, 0}, {NULL}}},
    {"fsdp",
     "fully sharded data parallel (PyTorch FSDP / ZeRO-3)",
     1,
     0,
     "saturn-ranks {command}",
     {"SATURN_FSDP_ACTIVATION_CHECKPOINTING={activation_checkpointing}",
      "SATURN_FSDP_CPU_OFFLOAD={cpu_offload}", NULL},
     {{"activation_checkpointing", SATURN_TPARAM_BOOL, 0, 1, 0, 0, 0},
      {"cpu_offload", SATURN_TPARAM_BOOL, 0, 1, 0, 0, 0},
      {NULL}}},
    {"pipeline",
     "pipeline parallel (GPipe schedule): layers split into stages",
     2,
     0,
     "saturn-ranks {command}",
     {"SATURN_PIPELINE_STAGES={stages}",
      "SATURN_PIPELINE_MICRO_BATCHES={micro_batches}", NULL},
     {{"stages", SATURN_TPARAM_INT, 2, 0, 0, 1, 1},
      {"micro_batches", SATURN_TPARAM_INT, 1, 256, 8, 0, 0},
      {NULL}}},
    {"offload",
     "one GPU, optimizer state and gradients in host memory (ZeRO-Offload)",
     1,
     1,
     "{command}",
     {"SATURN_OFFLOAD=1", NULL},
     {{NULL}}},
};

/* --- small helpers --------------------------------------------------- */

void technique_free(saturn_technique_t *t)
{
	if (!t)
		return;
	free(t->name);
	free(t->description);
	free(t->launch);
	for (int i = 0; i < t->nenv; i++)
		free(t->env[i]);
	free(t->env);
	for (int i = 0; i < t->nparams; i++)
		free(t->params[i].name);
	free(t->params);
	free(t->source);
	free(t);
}

int valid_name(const char *s)
{
	size_t n = 0;

	if (!s)
		return 0;
	for (; s[n]; n++)
		if (!(islower((unsigned char)s[n]) ||
		      isdigit((unsigned char)s[n]) || s[n] == '_' ||
		      s[n] == '-'))
			return 0;
	return n >= 1 && n <= SATURN_TECHNIQUE_NAME_MAX;
}

int valid_env_entry(const char *s)
{
	const char *eq = strchr(s, '=');

	if (!eq || eq == s)
		return 0;
	for (const char *p = s; p < eq; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			return 0;
	return !isdigit((unsigned char)s[0]);
}

int add_env(saturn_technique_t *t, const char *e)
{
	char **n;

	if (t->nenv >= SATURN_TECHNIQUE_MAX_ENV) {
		errno = E2BIG;
		return -1;
	}
	n = realloc(t->env, (t->nenv + 1) * sizeof(*n));
	if (!n)
		return -1;
	t->env = n;
	if (!(t->env[t->nenv] = strdup(e)))
		return -1;
	t->nenv++;
	return 0;
}

int add_param(saturn_technique_t *t, const saturn_tparam_t *p)
{
	saturn_tparam_t *n;

	if (t->nparams >= SATURN_TECHNIQUE_MAX_PARAMS) {
		errno = E2BIG;
		return -1;
	}
	n = realloc(t->params, (t->nparams + 1) * sizeof(*n));
	if (!n)
		return -1;
	t->params = n;
	t->params[t->nparams] = *p;
	if (!(t->params[t->nparams].name = strdup(p->name)))
		return -1;
	t->nparams++;
	return 0;
}

int reg_put(saturn_techniques_t *reg, saturn_technique_t *t)
{
	for (int i = 0; i < reg->n; i++) {
		if (strcmp(reg->t[i]->name, t->name) == 0) {
			technique_free(reg->t[i]);
			reg->t[i] = t;
			return 0;
		}
	}
	if (reg->n == reg->cap) {
		int cap = reg->cap ? reg->cap * 2 : 8;
		saturn_technique_t **n = realloc(reg->t, cap * sizeof(*n));

		if (!n)
			return -1;
		reg->t = n;
		reg->cap = cap;
	}
	reg->t[reg->n++] = t;
	return 0;
}

/* --- registry ---------------------------------------------------------- */

saturn_techniques_t *saturn_techniques_create(void)
{
	saturn_techniques_t *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return NULL;
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		const struct builtin *b = &builtins[i];
		saturn_technique_t *t = calloc(1, sizeof(*t));

		if (!t)
			goto fail;
		t->min_gpus = b->min_gpus;
		t->max_gpus = b->max_gpus;
		if (!(t->name = strdup(b->name)) ||
		    !(t->description = strdup(b->description)) ||
		    !(t->launch = strdup(b->launch)) ||
		    !(t->source = strdup("builtin")))
			goto fail_t;
		for (int j = 0; b->env[j]; j++)
			if (add_env(t, b->env[j]) < 0)
				goto fail_t;
		for (int j = 0; b->params[j].name; j++) {
			saturn_tparam_t p = {
			    .name = (char *)b->params[j].name,
			    .type = b->params[j].type,
			    .min = b->params[j].min,
			    .max = b->params[j].max,
			    .def = b->params[j].def,
			    .max_is_gpus = b->params[j].max_is_gpus,
			    .def_is_gpus = b->params[j].def_is_gpus,
			};
			if (add_param(t, &p) < 0)
				goto fail_t;
		}
		if (reg_put(reg, t) < 0)
			goto fail_t;
		continue;
	fail_t:
		technique_free(t);
		goto fail;
	}
	return reg;
fail:
	saturn_techniques_destroy(reg);
	return NULL;
}

void saturn_techniques_destroy(saturn_techniques_t *reg)
{
	if (!reg)
		return;
	for (int i = 0; i < reg->n; i++)
		technique_free(reg->t[i]);
	free(reg->t);
	for (int i = 0; i < reg->nhandles; i++)
		dlclose(reg->handles[i]);
	free(reg->handles);
	free(reg);
}

int saturn_techniques_count(const saturn_techniques_t *reg)
{
	return reg ? reg->n : 0;
}

const saturn_technique_t *saturn_techniques_get(const saturn_techniques_t *reg,
						int i)
{
	if (!reg || i < 0 || i >= reg->n)
		return NULL;
	return reg->t[i];
}

const saturn_technique_t *saturn_techniques_find(const saturn_techniques_t *reg,
						 const char *name)
{
	if (!reg || !name)
		return NULL;
	for (int i = 0; i < reg->n; i++)
		if (strcmp(reg->t[i]->name, name) == 0)
			return reg->t[i];
	return NULL;
}

int saturn_technique_max_gpus(const saturn_technique_t *t, int node_gpus)
{
	if (t->max_gpus > 0 && t->max_gpus < node_gpus)
		return t->max_gpus;
	return node_gpus;
}


saturn_techniques_t *saturn_techniques_default(saturn_error_t *err)
{
	saturn_techniques_t *reg = saturn_techniques_create();
	const char *env = getenv(SATURN_TECHNIQUES_CONF_ENV);
	int rc;

	if (!reg) {
		saturn_error_set(err, "out of memory");
		return NULL;
	}
	if (env && *env)
		rc = saturn_techniques_load_config(reg, env, 0, err);
	else
		rc = saturn_techniques_load_config(
		    reg, SATURN_TECHNIQUES_CONF_DEFAULT, 1, err);
	if (rc < 0) {
		saturn_techniques_destroy(reg);
		return NULL;
	}
	return reg;
}
