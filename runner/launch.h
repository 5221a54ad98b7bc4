/* launch.h - inside saturn-run: what a launch is made of and how it is
 * prepared (launch_env.c: the assignment, the program's environment, the
 * rendezvous and the launch line), for launch.c, which runs and supervises
 * it. Not installed.
 */
#ifndef SATURN_RUNNER_LAUNCH_H
#define SATURN_RUNNER_LAUNCH_H

#include "run.h"
#include "technique.h"

/* What the launch is made of; freed by launch_free(). */
struct launch {
	saturn_techniques_t *reg;
	const saturn_technique_t *t; /* NULL: no plan ("user") */
	char *params;		     /* resolved parameters (JSON text) */
	char **largv;		     /* the launch line */
	int gpus;
	int nodes;     /* SLURM_JOB_NUM_NODES, else 1 */
	int nranks;    /* processes saturn-run starts itself; 0: one, no ranks */
	int multinode; /* the ranks are one srun step across l->nodes nodes */
	char master_addr[256];
	char master_port[16];
};

/* Drop the reserved word RANKS_WORD from the front of argv. Returns 1 when
 * it was there. */
int launch_strip_ranks_word(char **argv);

/* The technique, GPU count and parameters of the plan. -1 after a
 * message. */
int launch_assignment(struct launch *l);

/* The program's environment and launch line. -1 after a message. */
int launch_child_env(const struct opts *o, const struct run *r, struct launch *l, int argc,
		     char **argv);

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
int launch_master_endpoint(struct launch *l, const struct run *r);

/* Ranks on several nodes: the launch line becomes one srun step of
 * l->nodes x l->nranks tasks, l->nranks per node (GPUs per node, as
 * SATURN_GPUS is), and saturn-run starts that one process. srun is
 * SATURN_SRUN when set. The variables every rank shares go into this
 * process's environment (srun passes it on). -1 after a message. */
int launch_multinode_line(struct launch *l);

/* In a rank's process: torchrun's variables for rank i of l->nranks on
 * this node. CUDA_VISIBLE_DEVICES stays as it is (every rank sees all the
 * assigned GPUs and picks GPU LOCAL_RANK). */
void launch_rank_env(const struct launch *l, int i);

#endif /* SATURN_RUNNER_LAUNCH_H */
