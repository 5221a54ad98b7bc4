/* technique.h - parallelism techniques: registry, templates, plugins.
 *
 * A technique is a way to run one training task on G GPUs of one node
 * (single, ddp, fsdp, pipeline, offload, or one an admin adds). Each has a
 * GPU-count range, a launch command template, environment entries (also
 * templates) and the parameters its search may tune, each with a range and
 * a default. The registry starts with the built-ins and grows from an admin
 * configuration file (saturn-techniques.conf(5), doc/techniques.md) and from
 * C plugins loaded from an admin-configured directory.
 *
 * Templates: `{name}` is replaced by the value of variable `name`; `{{` and
 * `}}` stand for literal braces. Variables: gpus, batch, plan_id, technique,
 * every technique parameter by name, and `command` (the user's argv). A
 * launch template is split into words first (whitespace; '...' and "..."
 * quote), each word is expanded, and the word `{command}` becomes the user's
 * argv, unchanged, one word per argument. No shell is involved. An unknown
 * placeholder is an error naming it.
 *
 * Slurm-free; never prints or exits.
 */
#ifndef SATURN_TECHNIQUE_H
#define SATURN_TECHNIQUE_H

#include <stddef.h>

#include "error.h"

#define SATURN_TECHNIQUES_CONF_DEFAULT "/etc/slurm/saturn-techniques.conf"
#define SATURN_TECHNIQUE_MAX_PARAMS 16
#define SATURN_TECHNIQUE_MAX_ENV 32

/* --- plugins -------------------------------------------------------- */

#define SATURN_TECHNIQUE_PLUGIN_ABI 1
#define SATURN_TECHNIQUE_PLUGIN_SYMBOL "saturn_technique_plugin_v1"

/* What a plugin hook is told about the task. All strings are owned by the
 * caller and valid only during the call. */
typedef struct saturn_technique_ctx_v1 {
	const char *signature; /* task signature, e.g. "gpt2-xl/bs16" */
	int gpus;	       /* GPU count the technique runs on */
	const char *params;    /* parameters as a JSON object text ("{}") */
	double batches;	       /* total batches (0 = unknown) */
	double resume_batch;   /* first batch to run (0 = from the start) */
} saturn_technique_ctx_v1_t;

/* Exported by a technique plugin as a const object named
 * SATURN_TECHNIQUE_PLUGIN_SYMBOL. Fields after `launch` may be NULL. */
typedef struct saturn_technique_plugin_v1 {
	unsigned int abi; /* SATURN_TECHNIQUE_PLUGIN_ABI */
	size_t size;	  /* sizeof(saturn_technique_plugin_v1_t) */
	const char *name; /* [a-z0-9_-]+, 1..32 characters */
	const char *description;
	int min_gpus;	    /* >= 1 */
	int max_gpus;	    /* >= min_gpus, or 0 = as many as the node has */
	const char *launch; /* launch template ("{command}" if NULL) */
	const char *const *env; /* NULL-terminated "KEY=template" entries */
	/* Tune the parameters for ctx->gpus GPUs: write a JSON object text
	 * into params (len bytes, NUL-terminated). Return 0, 1 when the
	 * technique cannot run on that many GPUs for this task, -1 on error
	 * (message in errbuf). */
	int (*search)(const saturn_technique_ctx_v1_t *ctx, char *params,
		      size_t len, char *errbuf, size_t errlen);
	/* Called by saturn-run in the child just before exec, after the
	 * environment is set (it may setenv more). It may return a
	 * replacement launch template in *launch (malloc'd; NULL keeps the
	 * declared one). Return 0, or -1 to refuse the launch (errbuf). */
	int (*execute)(const saturn_technique_ctx_v1_t *ctx, char **launch,
		       char *errbuf, size_t errlen);
} saturn_technique_plugin_v1_t;

/* --- techniques ----------------------------------------------------- */

typedef enum saturn_tparam_type {
	SATURN_TPARAM_INT = 0,
	SATURN_TPARAM_BOOL,
} saturn_tparam_type_t;

/* A tunable parameter. max_is_gpus: the upper bound is the GPU count the
 * technique runs on (e.g. pipeline stages); def_is_gpus likewise. */
typedef struct saturn_tparam {
	char *name;
	saturn_tparam_type_t type;
	long min, max, def;
	int max_is_gpus;
	int def_is_gpus;
} saturn_tparam_t;

typedef struct saturn_technique {
	char *name;
	char *description;
	int min_gpus;
	int max_gpus; /* 0 = no limit but the node's */
	char *launch; /* launch template */
	int nenv;
	char **env; /* "KEY=template" */
	int nparams;
	saturn_tparam_t *params;
	char *source; /* "builtin", "config FILE:LINE", "plugin FILE" */
	const saturn_technique_plugin_v1_t *plugin; /* NULL unless a plugin */
} saturn_technique_t;

typedef struct saturn_techniques saturn_techniques_t;

/* A registry holding the built-in techniques. NULL on ENOMEM. */
saturn_techniques_t *saturn_techniques_create(void);

/* Free the registry (and unload its plugins); NULL is allowed. */
void saturn_techniques_destroy(saturn_techniques_t *reg);

/* Read an admin configuration file (format in doc/techniques.md). A
 * technique of the same name as an existing one replaces it. A `plugin_dir`
 * setting loads every *.so in that directory with
 * saturn_techniques_load_plugin(), trusting root and the owner of the
 * configuration file. When missing_ok is set, a file that does not exist is
 * not an error. Returns 0, or -1 with err ("FILE:LINE: ..."); on error the
 * registry may hold the techniques read before the bad line. */
int saturn_techniques_load_config(saturn_techniques_t *reg, const char *path,
				  int missing_ok, saturn_error_t *err);

/* Parse configuration text (name is used in messages). Plugin directories
 * are trusted for root and trusted_uid (pass -1 for root only). */
int saturn_techniques_parse_config(saturn_techniques_t *reg, const char *text,
				   const char *name, long trusted_uid,
				   saturn_error_t *err);

/* Load one plugin. The file must be a regular file directly inside dir (after
 * resolving symlinks), dir and file must be owned by root or trusted_uid
 * (-1 = root only) and neither writable by group or others. Returns 0 or -1
 * with err; nothing is loaded on failure. */
int saturn_techniques_load_plugin(saturn_techniques_t *reg, const char *dir,
				  const char *file, long trusted_uid,
				  saturn_error_t *err);

/* Load every "*.so" of dir (sorted by name) as above. -1 on the first
 * refusal (with err). */
int saturn_techniques_load_plugin_dir(saturn_techniques_t *reg, const char *dir,
				      long trusted_uid, saturn_error_t *err);

/* Registry built the way programs do: built-ins, then the configuration file
 * $SATURN_TECHNIQUES_CONF (must exist when set) or the default path (may be
 * absent). NULL with err. Privileged programs must not use this: an
 * environment variable picks the file. */
saturn_techniques_t *saturn_techniques_default(saturn_error_t *err);

int saturn_techniques_count(const saturn_techniques_t *reg);
/* The i-th technique (0 <= i < count), or NULL. */
const saturn_technique_t *saturn_techniques_get(const saturn_techniques_t *reg,
						int i);
/* The technique called name, or NULL. */
const saturn_technique_t *saturn_techniques_find(const saturn_techniques_t *reg,
						 const char *name);

/* Upper GPU bound of t on a node of node_gpus GPUs. */
int saturn_technique_max_gpus(const saturn_technique_t *t, int node_gpus);

/* --- parameters and templates ---------------------------------------- */

/* A template variable. */
typedef struct saturn_kv {
	const char *key;
	const char *value;
} saturn_kv_t;

/* Resolve the parameters of t on gpus GPUs from a JSON object text (NULL or
 * "" = {}): unknown names, wrong types and values out of range are errors;
 * missing ones take their default. Returns a malloc'd JSON object with every
 * parameter (caller frees) or NULL with err ("params.stages: ..."). */
char *saturn_technique_params(const saturn_technique_t *t, int gpus,
			      const char *json, saturn_error_t *err);

/* Value of parameter name in a resolved params text, or def. */
long saturn_technique_param(const char *json, const char *name, long def);

/* Candidate parameter settings a search tries, in order of preference
 * (default first; then settings that trade speed for memory). Writes the
 * i-th as JSON text into buf and returns 0, or returns 1 when there is no
 * i-th candidate. For plugins with a search hook, candidate 0 is what the
 * hook returns. -1 with err on a hook error. */
int saturn_technique_candidate(const saturn_technique_t *t, int gpus, int i,
			       const char *signature, char *buf, size_t len,
			       saturn_error_t *err);

/* Expand placeholders in tmpl. Returns a malloc'd string or NULL with err
 * ("unknown placeholder {foo} at offset 12"). `{command}` is not special
 * here: it is an ordinary variable when present in vars. */
char *saturn_template_expand(const char *tmpl, const saturn_kv_t *vars,
			     int nvars, saturn_error_t *err);

/* Build the argv of a launch template (see the header comment): the word
 * "{command}" becomes cmd[0..ncmd-1]; "{command}" inside a longer word is
 * an error. Returns the argument count and a malloc'd NULL-terminated
 * array of malloc'd strings in *argv (free with saturn_argv_free), or -1
 * with err. */
int saturn_template_argv(const char *tmpl, const saturn_kv_t *vars, int nvars,
			 char *const *cmd, int ncmd, char ***argv,
			 saturn_error_t *err);

void saturn_argv_free(char **argv);

/* Variables of t for a launch: gpus, technique, batch, plan_id, nodes (1
 * when nodes < 1), then every parameter from the resolved params text, in
 * that order (SATURN_TECHNIQUE_FIXED_VARS before the first parameter).
 * Fills up to max entries of vars whose strings live in store (size
 * storelen); returns the count or -1 when they do not fit. */
#define SATURN_TECHNIQUE_FIXED_VARS 5
int saturn_technique_vars(const saturn_technique_t *t, int gpus, int nodes,
			  const char *params, const char *batch,
			  const char *plan_id, saturn_kv_t *vars, int max,
			  char *store, size_t storelen);

#endif /* SATURN_TECHNIQUE_H */
