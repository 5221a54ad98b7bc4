/* jobenv.h - the name of every SATURN_* variable a job, saturn-run, the
 * profiler or the CLI reads or writes, in one place (doc/sched_saturn.8,
 * JOB ENVIRONMENT; doc/saturn-run.1, ENVIRONMENT). Code says
 * SATURN_GPUS_ENV, never "SATURN_GPUS": a name spelled twice can drift.
 * For "NAME=value" strings write SATURN_GPUS_ENV "=%d".
 *
 * Header only, no dependencies: the submit-side plugins, slurmctld's
 * plugin and the job-side programs all include it.
 */
#ifndef SATURN_JOBENV_H
#define SATURN_JOBENV_H

/* --- a task's SPANK (job control) environment: set at submission ---------- */
/* The batch tag: SATURN_BATCH=NAME in job_desc->spank_job_env (visible
 * inside the job as SLURM_SPANK_SATURN_BATCH); also set by sched/saturn in a
 * released task's own environment. */
#define SATURN_BATCH_ENV "SATURN_BATCH"
/* The job's --saturn-reconfigure[=yes|no] (reconfig.h): absent,
 * saturn_reconfigure decides. */
#define SATURN_RECONFIGURE_ENV "SATURN_RECONFIGURE"

/* --- a task's supplemental environment: written by sched/saturn ----------- */
/* Kept when a release changes the user's request, put back on a re-hold: the
 * user's tres_per_node as submitted ("gres:gpu:2") and --nodes. */
#define SATURN_USER_GRES_ENV "SATURN_USER_GRES"
#define SATURN_REQ_NODES_ENV "SATURN_REQ_NODES"
/* The plan's choice for a released task: technique, GPUs per node, nodes,
 * the option's parameters (technique-specific, k=v,...), the plan's id and
 * the progress file saturn-run writes (lib/sched/progress.c). */
#define SATURN_TECHNIQUE_ENV "SATURN_TECHNIQUE"
#define SATURN_GPUS_ENV "SATURN_GPUS"
#define SATURN_NODES_ENV "SATURN_NODES"
#define SATURN_TECHNIQUE_PARAMS_ENV "SATURN_TECHNIQUE_PARAMS"
#define SATURN_PLAN_ID_ENV "SATURN_PLAN_ID"
#define SATURN_PROGRESS_FILE_ENV "SATURN_PROGRESS_FILE"
/* A requeued task's earliest restart (the begin time Slurm gave it), kept
 * while the task is re-held. */
#define SATURN_NOT_BEFORE_ENV "SATURN_NOT_BEFORE"
/* Facts over claims (doc/security.md): when the task was released; how
 * often it was re-held because its node stayed busy past its planned start;
 * that its own run overran the plan (its reports no longer trusted); and why
 * Slurm will never start it (the job settings the note holds). */
#define SATURN_RELEASED_AT_ENV "SATURN_RELEASED_AT"
#define SATURN_BOUNCES_ENV "SATURN_BOUNCES"
#define SATURN_OVERRAN_ENV "SATURN_OVERRAN"
#define SATURN_NEVER_ENV "SATURN_NEVER"
/* A task that requeues itself (lib/sched/requeue.c): the restart count up
 * to which its requeues were asked for by sched/saturn (set by its
 * reconfiguration signal, plugin/sched/saturn_reconfig.c, to Slurm's
 * restart count + 1); and, set by the re-hold after a requeue the task
 * made itself (plugin/sched/saturn_apply.c), when the run it gave up was
 * released (epoch: it is charged from then) and when it was re-held
 * (epoch: its place among the held tasks). All read by the snapshot. */
#define SATURN_EXCUSED_ENV "SATURN_EXCUSED"
#define SATURN_CHARGED_FROM_ENV "SATURN_CHARGED_FROM"
#define SATURN_REQUEUED_AT_ENV "SATURN_REQUEUED_AT"
/* The batch a companion profiler job measures. */
#define SATURN_PROFILE_BATCH_ENV "SATURN_PROFILE_BATCH"

/* --- saturn-run and the program it starts ---------------------------------- */
/* How many batches to run, and the first one after a checkpoint restart. */
#define SATURN_BATCHES_ENV "SATURN_BATCHES"
#define SATURN_RESUME_BATCH_ENV "SATURN_RESUME_BATCH"
/* The GPUs the program may use (its CUDA_VISIBLE_DEVICES comes from it). */
#define SATURN_VISIBLE_DEVICES_ENV "SATURN_VISIBLE_DEVICES"
/* The rendezvous of a multi-rank launch, and srun for multi-node lines. */
#define SATURN_MASTER_ADDR_ENV "SATURN_MASTER_ADDR"
#define SATURN_MASTER_PORT_ENV "SATURN_MASTER_PORT"
#define SATURN_SRUN_ENV "SATURN_SRUN"
/* Seconds the other ranks get after the first one ends. */
#define SATURN_RANK_GRACE_ENV "SATURN_RANK_GRACE"
/* The pipe the program writes its progress lines to. */
#define SATURN_PROGRESS_PIPE_ENV "SATURN_PROGRESS_PIPE"
/* Commands saturn-run starts directly (no launcher), and a yes/no for all. */
#define SATURN_DIRECT_COMMANDS_ENV "SATURN_DIRECT_COMMANDS"
#define SATURN_RUN_DIRECT_ENV "SATURN_RUN_DIRECT"
/* The techniques configuration file (lib/job/technique.c). */
#define SATURN_TECHNIQUES_CONF_ENV "SATURN_TECHNIQUES_CONF"

/* --- the profiler's runs: signature and trial ------------------------------ */
/* "signature" or "trial": what saturn-run does for saturn-profile. */
#define SATURN_MODE_ENV "SATURN_MODE"
/* Where that run writes its report. */
#define SATURN_REPORT_FILE_ENV "SATURN_REPORT_FILE"
/* Options left out of a task's signature (comma-separated). */
#define SATURN_SIGNATURE_IGNORE_ENV "SATURN_SIGNATURE_IGNORE"
/* A trial run: set for the program, and its warm-up, measured batches and
 * time limit. */
#define SATURN_TRIAL_ENV "SATURN_TRIAL"
#define SATURN_TRIAL_WARMUP_ENV "SATURN_TRIAL_WARMUP"
#define SATURN_TRIAL_BATCHES_ENV "SATURN_TRIAL_BATCHES"
#define SATURN_TRIAL_TIMEOUT_ENV "SATURN_TRIAL_TIMEOUT"

/* --- the CPU stand-in for a GPU (saturn-emulate, lib/job/emulate.c) -------- */
#define SATURN_EMU_LINK_ENV "SATURN_EMU_LINK"
#define SATURN_EMU_LINK_GBS_ENV "SATURN_EMU_LINK_GBS"
#define SATURN_EMU_GPU_MEM_GB_ENV "SATURN_EMU_GPU_MEM_GB"
#define SATURN_EMU_TFLOPS_ENV "SATURN_EMU_TFLOPS"

/* --- the saturn command ----------------------------------------------------- */
/* sched/saturn's state folder, when not given with --state-dir. */
#define SATURN_STATE_DIR_ENV "SATURN_STATE_DIR"

#endif /* SATURN_JOBENV_H */
