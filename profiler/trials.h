/* trials.h - saturn-profile's trial machinery: running the batch script as
 * a child (own process group, log file, deadline), reading the report it
 * writes to SATURN_REPORT_FILE, and a pool that runs a queue of trials
 * packed first-fit onto disjoint GPUs of the allocation with a progress line
 * (trial i of N, elapsed, ETA). Results are stored in each trial; what they
 * mean for a sweep or a profile is the caller's business.
 */
#ifndef SATURN_PROFILER_TRIALS_H
#define SATURN_PROFILER_TRIALS_H

#include <limits.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "probe.h"
#include "sweep.h"

#define MAX_GPUS 64

/* The run's private folder for reports and logs: $TMPDIR (else /tmp)
 * /saturn-profile.XXXXXX, made with mkdtemp into work (PATH_MAX bytes).
 * 0, or -1 with the reason printed. */
int work_dir_make(char *work);

/* Remove it (nothing followed outside it), or keep it with --keep and say
 * where it is. */
void work_dir_done(const struct opts *o, const char *work);

/* Device ids of the allocation: CUDA_VISIBLE_DEVICES, else SLURM_JOB_GPUS;
 * at most max. Returns the count (0 when neither is set). */
int visible_devices(char ids[][32], int max);

/* Seconds on the monotonic clock. */
double mono(void);

/* Run the batch script with extra environment (NULL-terminated "K=V"
 * strings) and stdout/stderr to log; returns the child's pid or -1. The
 * child gets its own process group so a timeout can stop all of it. */
pid_t spawn_script(const char *script, const char *log, char *const *env);

/* Wait for pid up to deadline (monotonic); kill its group past it. Returns
 * the wait status, with *timed_out set when it had to be killed. */
int wait_deadline(pid_t pid, double deadline, int *timed_out);

/* A report file written by saturn-run (64 KiB at most, a JSON object), or
 * NULL. Caller puts the reference. */
json_object *load_report(const char *path);

/* String / number member of a report; NULL / -1 when absent or mistyped. */
const char *report_str(json_object *o, const char *k);
double report_num(json_object *o, const char *k);

/* One trial: the batch script in SATURN_MODE=trial on `gpus` GPUs. */
struct trial {
	/* set by the caller */
	int task_id;	       /* SLURM_ARRAY_TASK_ID */
	const char *technique; /* SATURN_TECHNIQUE */
	int gpus;
	int nodes; /* nodes the trial spans (--measure of a multi-node option):
		    * > 1 runs the script with SLURM_JOB_NUM_NODES=nodes, so
		    * saturn-run launches its ranks as one srun step on that
		    * many of the job's nodes, gpus per node; 0 or 1: this
		    * node only */
	char params[512];  /* SATURN_TECHNIQUE_PARAMS (resolved JSON) */
	const char *label; /* progress line: the signature */
	int memsave;	   /* memory-saving parameter candidate */
	void *owner;	   /* the caller's, untouched */
	/* results, set when the trial ends */
	int reported; /* the script wrote a report with a status */
	saturn_point_state_t state; /* MEASURED, OOM, FAILED or TIMEOUT */
	double sec_per_batch, peak_mem_mb;
	char reason[300];
	/* the pool's */
	int gpu_idx[MAX_GPUS];
	pid_t pid;
	double start;
	char report[PATH_MAX];
	char log[PATH_MAX];
};

/* Runs queues of trials; counters carry over from one queue to the next so
 * the progress line counts all trials of the run. */
struct trial_pool {
	const struct opts *o;
	const char *work; /* private scratch folder: reports and logs */
	char (*devs)[32]; /* device ids of the allocation */
	int ndev;
	double t0;	   /* start of the run, for "elapsed" */
	int total, done;   /* trials queued / finished so far */
	double trial_time; /* sum of finished trials' durations */
};

/* Run the nq trials of q to completion: biggest first, each started as soon
 * as enough GPUs are free (first fit), killed past the timeout plus 30 s.
 * Reorders q. Returns 0, or -1 when a trial cannot be started (errno;
 * already running ones are waited for). */
int trial_pool_run(struct trial_pool *p, struct trial *q, int nq);

#endif /* SATURN_PROFILER_TRIALS_H */
