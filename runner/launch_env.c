/* launch_env.c - preparing saturn-run's launch (launch.h): the assignment
 * from the environment (SATURN_TECHNIQUE, SATURN_GPUS,
 * SATURN_TECHNIQUE_PARAMS) against the technique registry, the program's
 * environment (the assigned GPUs, the technique's variables, batches and
 * resume point), the launch line from the technique's template, the
 * rendezvous of ranks (MASTER_ADDR, MASTER_PORT, RANK, ...) and the srun
 * step of ranks on several nodes.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jobenv.h"
#include "launch.h"
#include "run.h"
#include "technique.h"

/* The reserved first word of a launch line that asks saturn-run to start
 * the ranks itself (saturn-run(1), LAUNCH OF RANKS). */
#define RANKS_WORD "saturn-ranks"

/* MASTER_PORT is looked for in [PORT_LO, PORT_LO + PORT_SPAN): below
 * Linux's ephemeral range (32768-60999), where outgoing connections take
 * their ports, and above the well-known services. */
#define PORT_LO 15000
#define PORT_SPAN 15000
#define PORT_TRIES 100

/* Drop the reserved word RANKS_WORD from the front of argv. Returns 1 when
 * it was there. */
int launch_strip_ranks_word(char **argv)
{
	int n = 0;

	if (!argv || !argv[0] || strcmp(argv[0], RANKS_WORD) != 0)
		return 0;
	free(argv[0]);
	while (argv[n + 1]) {
		argv[n] = argv[n + 1];
		n++;
	}
	argv[n] = NULL;
	return 1;
}

static int is_direct(const struct opts *o, const char *cmd)
{
	const char *list = getenv(SATURN_DIRECT_COMMANDS_ENV);
	const char *base = strrchr(cmd, '/');
	const char *env = getenv(SATURN_RUN_DIRECT_ENV);
	int tv;
	char buf[1024];

	if (o->direct || (env && strcmp(env, "1") == 0))
		return 1;
	base = base ? base + 1 : cmd;
	if (!list)
		list = "saturn-emulate";
	/* reuse the option-list matcher: names without '=' */
	snprintf(buf, sizeof(buf), "%s", base);
	return run_list_match(buf, list, &tv);
}

/* Keep the first n ids of a comma-separated device list. */
static int restrict_devices(const char *list, int n, char *out, size_t len)
{
	int count = 0;
	size_t o = 0;

	out[0] = '\0';
	for (const char *p = list; *p && count < n;) {
		size_t l = strcspn(p, ",");

		if (o + l + 2 > len)
			return -1;
		if (o)
			out[o++] = ',';
		memcpy(out + o, p, l);
		o += l;
		out[o] = '\0';
		count++;
		p += l;
		if (*p == ',')
			p++;
	}
	return count;
}

static int count_devices(const char *list)
{
	int n = 0;

	if (!list || !*list)
		return 0;
	for (const char *p = list; *p; p++)
		n += *p == ',';
	return n + 1;
}

static int setenv_num(const char *k, double v)
{
	char b[64];

	snprintf(b, sizeof(b), "%.0f", v);
	return setenv(k, b, 1);
}

static char **argv_copy(int argc, char **argv)
{
	char **a = calloc(argc + 1, sizeof(*a));

	if (!a)
		return NULL;
	for (int i = 0; i < argc; i++)
		a[i] = strdup(argv[i]);
	return a;
}

/* The technique, GPU count and parameters of the plan. -1 after a
 * message. */
int launch_assignment(struct launch *l)
{
	const char *tname = getenv(SATURN_TECHNIQUE_ENV);
	saturn_error_t err = {{0}};
	double gd = 0;
	int have = 0;

	const char *nn = getenv("SLURM_JOB_NUM_NODES");

	if (run_env_num(SATURN_GPUS_ENV, &gd, &have) < 0)
		return -1;
	l->gpus = have ? (int)gd : 0;
	if (!nn || !*nn)
		nn = getenv("SLURM_NNODES");
	l->nodes = nn && atoi(nn) > 0 ? atoi(nn) : 1;
	if (!tname || !*tname || strcmp(tname, "user") == 0)
		return 0;
	if (!(l->reg = saturn_techniques_default(&err))) {
		fprintf(stderr, "%s: %s\n", run_prog, err.text);
		return -1;
	}
	if (!(l->t = saturn_techniques_find(l->reg, tname))) {
		fprintf(stderr,
			"%s: SATURN_TECHNIQUE=%s: no such technique "
			"(see saturn techniques)\n",
			run_prog, tname);
		return -1;
	}
	if (l->gpus < 1) {
		const char *cvd = getenv(SATURN_VISIBLE_DEVICES_ENV);

		l->gpus =
		    count_devices(cvd ? cvd : getenv("CUDA_VISIBLE_DEVICES"));
		if (l->gpus < 1)
			l->gpus = 1;
	}
	if (l->gpus < l->t->min_gpus ||
	    (l->t->max_gpus && l->gpus > l->t->max_gpus)) {
		fprintf(stderr,
			"%s: technique %s runs on %d..%d GPUs, not %d\n",
			run_prog, l->t->name, l->t->min_gpus, l->t->max_gpus,
			l->gpus);
		return -1;
	}
	if (!(l->params = saturn_technique_params(
		  l->t, l->gpus, getenv(SATURN_TECHNIQUE_PARAMS_ENV), &err))) {
		fprintf(stderr, "%s: SATURN_TECHNIQUE_PARAMS: %s\n", run_prog,
			err.text);
		return -1;
	}
	return 0;
}

/* CUDA_VISIBLE_DEVICES: the first l->gpus of the visible GPUs. */
static int devices(struct launch *l)
{
	const char *sv = getenv(SATURN_VISIBLE_DEVICES_ENV);
	const char *cvd = sv && *sv ? sv : getenv("CUDA_VISIBLE_DEVICES");

	if (cvd && *cvd && l->gpus > 0) {
		char lim[4096];
		int have_n = restrict_devices(cvd, l->gpus, lim, sizeof(lim));

		if (have_n < 0) {
			fprintf(stderr, "%s: device list too long\n", run_prog);
			return -1;
		}
		if (have_n < l->gpus)
			fprintf(stderr,
				"%s: warning: %d GPUs assigned but "
				"only %d visible (%s)\n",
				run_prog, l->gpus, have_n, cvd);
		setenv("CUDA_VISIBLE_DEVICES", lim, 1);
	} else if (cvd && *cvd) {
		setenv("CUDA_VISIBLE_DEVICES", cvd, 1);
	}
	if (l->gpus < 1)
		l->gpus = count_devices(getenv("CUDA_VISIBLE_DEVICES"));
	return 0;
}

/* The technique's environment entries and parameters, and the launch line
 * from its template (the command itself when it is direct). */
static int technique_env(const struct opts *o, struct launch *l, int argc,
			 char **argv)
{
	const saturn_technique_t *t = l->t;
	saturn_kv_t vars[SATURN_TECHNIQUE_MAX_PARAMS + 8];
	char store[4096];
	saturn_error_t err = {{0}};
	int nv = saturn_technique_vars(
	    t, l->gpus, l->nodes, l->params, getenv(SATURN_BATCH_ENV),
	    getenv(SATURN_PLAN_ID_ENV), vars, SATURN_TECHNIQUE_MAX_PARAMS + 8,
	    store, sizeof(store));

	if (nv < 0) {
		fprintf(stderr, "%s: technique variables too long\n", run_prog);
		return -1;
	}
	for (int i = 0; i < t->nenv; i++) {
		char *e = saturn_template_expand(t->env[i], vars, nv, &err);
		char *eq;

		if (!e) {
			fprintf(stderr, "%s: technique %s: env %s: %s\n",
				run_prog, t->name, t->env[i], err.text);
			return -1;
		}
		eq = strchr(e, '=');
		*eq = '\0';
		setenv(e, eq + 1, 1);
		free(e);
	}
	for (int i = 0; i < t->nparams; i++) {
		char k[96];

		snprintf(k, sizeof(k), "SATURN_PARAM_%s", t->params[i].name);
		for (char *p = k; *p; p++)
			if (*p >= 'a' && *p <= 'z')
				*p -= 'a' - 'A';
		/* vars: the fixed ones, then the params */
		setenv(k, vars[SATURN_TECHNIQUE_FIXED_VARS + i].value, 1);
	}
	setenv(SATURN_TECHNIQUE_ENV, t->name, 1);
	setenv(SATURN_TECHNIQUE_PARAMS_ENV, l->params, 1);
	if (is_direct(o, argv[0]))
		return (l->largv = argv_copy(argc, argv)) ? 0 : -1;
	if (saturn_template_argv(t->launch, vars, nv, argv, argc, &l->largv,
				 &err) < 0) {
		fprintf(stderr, "%s: technique %s: %s\n", run_prog, t->name,
			err.text);
		return -1;
	}
	if (launch_strip_ranks_word(l->largv)) {
		if (!l->largv[0]) {
			fprintf(stderr,
				"%s: technique %s: launch line has nothing "
				"after %s\n",
				run_prog, t->name, RANKS_WORD);
			return -1;
		}
		l->nranks = l->gpus > 0 ? l->gpus : 1;
	}
	return 0;
}

/* The program's environment and launch line. -1 after a message. */
int launch_child_env(const struct opts *o, const struct run *r, struct launch *l, int argc,
		     char **argv)
{
	if (devices(l) < 0)
		return -1;
	if (l->t) {
		if (technique_env(o, l, argc, argv) < 0)
			return -1;
	} else {
		setenv(SATURN_TECHNIQUE_ENV, "user", 1);
		if (!(l->largv = argv_copy(argc, argv)))
			return -1;
	}
	if (l->gpus > 0)
		setenv_num(SATURN_GPUS_ENV, l->gpus);
	if (r->trial) {
		setenv_num(SATURN_BATCHES_ENV, r->warmup + r->measure);
		setenv(SATURN_TRIAL_ENV, "1", 1);
	} else if (o->batches > 0) {
		setenv_num(SATURN_BATCHES_ENV, o->batches);
	}
	setenv_num(SATURN_RESUME_BATCH_ENV, o->resume);
	return 0;
}

/* Whether a listener could bind TCP port now (all IPv4 addresses, which
 * also finds a dual-stack IPv6 listener). */
static int port_free(int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;

	if (fd < 0)
		return 0;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	a.sin_port = htons((unsigned short)port);
	ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

/* MASTER_ADDR and MASTER_PORT of the ranks. The address: SATURN_MASTER_ADDR,
 * else the job's first node with ranks on several nodes, else 127.0.0.1.
 * The port: SATURN_MASTER_PORT, else derived
 * from the job id and step id (the process id without a job), so that
 * jobs sharing a node start from different ports and the nodes of a later
 * multi-node launch agree on one without talking, moved up to the first
 * port nobody is bound to. Rank 0's store binds it a moment later; a
 * program that takes the port in between makes rank 0 fail, and with it
 * the launch (see supervise), rather than anything silent. -1 after a
 * message. */
int launch_master_endpoint(struct launch *l, const struct run *r)
{
	const char *a = getenv(SATURN_MASTER_ADDR_ENV);
	const char *p = getenv(SATURN_MASTER_PORT_ENV);
	const char *step = getenv("SLURM_STEP_ID");
	unsigned long h;
	double v = 0;
	int have = 0;

	if (a && *a) {
		snprintf(l->master_addr, sizeof(l->master_addr), "%s", a);
	} else if (l->nodes > 1) {
		/* the batch script, and so this process, runs on the job's
		 * first node: rank 0 and its store are here */
		const char *nl = getenv("SLURM_JOB_NODELIST");

		if (!nl || !*nl)
			nl = getenv("SLURM_NODELIST");
		if (run_first_host(nl, l->master_addr,
				   sizeof(l->master_addr)) < 0) {
			fprintf(stderr,
				"%s: ranks on %d nodes but no first node in "
				"SLURM_JOB_NODELIST (%s); set "
				"SATURN_MASTER_ADDR\n",
				run_prog, l->nodes, nl ? nl : "unset");
			return -1;
		}
	} else {
		snprintf(l->master_addr, sizeof(l->master_addr), "127.0.0.1");
	}
	if (run_env_num(SATURN_MASTER_PORT_ENV, &v, &have) < 0)
		return -1;
	if (have) {
		if (v < 1 || v > 65535 || v != floor(v)) {
			fprintf(stderr,
				"%s: SATURN_MASTER_PORT=%s: want a port "
				"1..65535\n",
				run_prog, p);
			return -1;
		}
		snprintf(l->master_port, sizeof(l->master_port), "%.0f", v);
		return 0;
	}
	h = r->job_id > 0 ? (unsigned long)r->job_id : (unsigned long)getpid();
	h = h * 2654435761ul + (step ? strtoul(step, NULL, 10) : 0) * 97;
	for (int i = 0; i < PORT_TRIES; i++) {
		int port = PORT_LO + (int)((h + i) % PORT_SPAN);

		if (port_free(port)) {
			snprintf(l->master_port, sizeof(l->master_port), "%d",
				 port);
			return 0;
		}
	}
	fprintf(stderr,
		"%s: no free port for MASTER_PORT among %d tried in %d..%d "
		"(set SATURN_MASTER_PORT)\n",
		run_prog, PORT_TRIES, PORT_LO, PORT_LO + PORT_SPAN - 1);
	return -1;
}

/* In a rank's process: torchrun's variables for rank i of l->nranks on
 * this node. CUDA_VISIBLE_DEVICES stays as it is (every rank sees all the
 * assigned GPUs and picks GPU LOCAL_RANK). */
void launch_rank_env(const struct launch *l, int i)
{
	setenv_num("RANK", i);
	setenv_num("LOCAL_RANK", i);
	setenv_num("WORLD_SIZE", l->nranks);
	setenv_num("LOCAL_WORLD_SIZE", l->nranks);
	setenv("GROUP_RANK", "0", 1);
	setenv("NODE_RANK", "0", 1);
	setenv("MASTER_ADDR", l->master_addr, 1);
	setenv("MASTER_PORT", l->master_port, 1);
}

/* The per-rank part of a multi-node launch: srun starts every rank as this
 * fixed script with the launch line as its arguments ("$@", never parsed
 * by the shell), and the script takes the rank's numbers from the step's
 * task variables. Only node 0 (this one) has the progress FIFO. */
#define RANK_SCRIPT                                                            \
	"export RANK=\"$SLURM_PROCID\" LOCAL_RANK=\"$SLURM_LOCALID\" "           \
	"GROUP_RANK=\"$SLURM_NODEID\" NODE_RANK=\"$SLURM_NODEID\"; "             \
	"[ \"$SLURM_NODEID\" = 0 ] || unset SATURN_PROGRESS_PIPE; exec \"$@\""

/* Ranks on several nodes: the launch line becomes one srun step of
 * l->nodes x l->nranks tasks, l->nranks per node (GPUs per node, as
 * SATURN_GPUS is), and saturn-run starts that one process. srun is
 * SATURN_SRUN when set. The variables every rank shares go into this
 * process's environment (srun passes it on). -1 after a message. */
int launch_multinode_line(struct launch *l)
{
	const char *srun = getenv(SATURN_SRUN_ENV);
	int nl = 0, world = l->nodes * l->nranks;
	char **a;
	char b[3][64];

	if (l->t && l->t->plugin && l->t->plugin->execute) {
		fprintf(stderr,
			"%s: technique %s: a plugin's execute hook cannot "
			"launch ranks on %d nodes\n",
			run_prog, l->t->name, l->nodes);
		return -1;
	}
	while (l->largv[nl])
		nl++;
	if (!(a = calloc((size_t)nl + 12, sizeof(*a))))
		return -1;
	snprintf(b[0], sizeof(b[0]), "--nodes=%d", l->nodes);
	snprintf(b[1], sizeof(b[1]), "--ntasks=%d", world);
	snprintf(b[2], sizeof(b[2]), "--ntasks-per-node=%d", l->nranks);
	a[0] = strdup(srun && *srun ? srun : "srun");
	a[1] = strdup(b[0]);
	a[2] = strdup(b[1]);
	a[3] = strdup(b[2]);
	/* more ranks than the job has CPUs on a node is fine: they wait on
	 * GPUs */
	a[4] = strdup("--overcommit");
	a[5] = strdup("--kill-on-bad-exit=1");
	a[6] = strdup("--export=ALL");
	a[7] = strdup("/bin/sh");
	a[8] = strdup("-c");
	a[9] = strdup(RANK_SCRIPT);
	a[10] = strdup("saturn-rank");
	for (int i = 0; i < nl; i++) {
		a[11 + i] = l->largv[i];
		l->largv[i] = NULL;
	}
	saturn_argv_free(l->largv);
	l->largv = a;
	for (int i = 0; i < 11; i++)
		if (!a[i])
			return -1;
	setenv_num("WORLD_SIZE", world);
	setenv_num("LOCAL_WORLD_SIZE", l->nranks);
	setenv("MASTER_ADDR", l->master_addr, 1);
	setenv("MASTER_PORT", l->master_port, 1);
	l->multinode = 1;
	l->nranks = 0; /* one process: the step */
	return 0;
}
