/* saturn_jobrec.c - sched/saturn's small hands on one slurmctld job
 * record, shared by the release (saturn_apply.c), the re-hold
 * (saturn_rehold.c), the profiler (saturn_profiles.c) and the
 * reconfiguration (saturn_reconfig.c): find a task's pending record, check
 * it is still held by us, set its reason and supplemental environment, and
 * carry out an update through the update RPC's own code as the controller.
 * The caller holds the job write lock (the read lock for the lookups).
 */
#include "config.h" /* Slurm's */

#include <fcntl.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "slurm_compat.h" /* plugin/common: one place for what differs between releases */

#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#if SATURN_UPDATE_NEEDS_NULL_CONN
#include "src/interfaces/conn.h"
#endif
#include "src/slurmctld/slurmctld.h"

#include "envarray.h"

#include "saturn_jobrec.h"

void saturn_job_env_set(job_record_t *job_ptr, const char *name, const char *value)
{
	job_details_t *d = job_ptr->details;
	long i = saturn_env_index(d->env_sup, d->env_cnt, name);

	if (i >= 0) {
		xfree(d->env_sup[i]);
		d->env_sup[i] = xstrdup_printf("%s=%s", name, value);
		return;
	}
	xrecalloc(d->env_sup, d->env_cnt + 2, sizeof(char *));
	d->env_sup[d->env_cnt++] = xstrdup_printf("%s=%s", name, value);
}

/* The pending record of snapshot job j (the task's own, or its array's
 * meta record while the task is not split off), or NULL. */
job_record_t *saturn_pending_record(const saturn_snap_job_t *j)
{
	job_record_t *job_ptr = find_job_record(j->job_id);

	if (!job_ptr || !IS_JOB_PENDING(job_ptr) || !job_ptr->details)
		return NULL;
	if (job_ptr->array_recs && job_ptr->array_recs->task_id_bitmap) {
		bitstr_t *b = job_ptr->array_recs->task_id_bitmap;

		if (j->task_id < 0 || j->task_id >= bit_size(b) || !bit_test(b, j->task_id))
			return NULL;
		return job_ptr;
	}
	if ((j->task_id < 0 && job_ptr->array_task_id != NO_VAL) ||
	    (j->task_id >= 0 && job_ptr->array_task_id != (uint32_t)j->task_id))
		return NULL;
	return job_ptr;
}

/* Still the held task the snapshot saw? */
job_record_t *saturn_revalidate(const saturn_snap_job_t *j)
{
	job_record_t *job_ptr = saturn_pending_record(j);

	if (!job_ptr || job_ptr->priority != 0 || job_ptr->state_reason != WAIT_HELD)
		return NULL;
	return job_ptr;
}

#if SATURN_UPDATE_NEEDS_NULL_CONN
/* A connection to /dev/null for update_job_str()'s reply (Slurm 25.11 on
 * always sends one; without a connection the send polls no descriptor
 * until MessageTimeout, under the write locks). NULL when it cannot be
 * made (logged once): the update still works, only slowly. With
 * TLSType=tls/s2n the reply is refused by the TLS layer at once (logged by
 * Slurm), which is also quick. */
static void *null_conn(void)
{
	static int warned;
	conn_args_t args = {.mode = CONN_SERVER, .defer_negotiation = true};
	void *c;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		if (!warned++)
			error("sched/saturn: cannot open /dev/null for update replies: %m; each release waits MessageTimeout");
		return NULL;
	}
	args.input_fd = args.output_fd = fd;
	if (!(c = conn_g_create(&args))) {
		close(fd);
		if (!warned++)
			error("sched/saturn: no connection for update replies; each release waits MessageTimeout");
	}
	return c;
}
#endif

/* Carry out desc through the update RPC's own code (validation, array
 * task split, TRES counts, hold rules) as the controller (uid 0), with no
 * reply sent anywhere (slurm_compat.h). Caller holds the job write lock.
 * SLURM_SUCCESS or an error. */
int saturn_update_as_controller(job_desc_msg_t *desc)
{
	slurm_msg_t msg;
	int rc;

	slurm_msg_t_init(&msg);
#if SATURN_UPDATE_NEEDS_NULL_CONN
	msg.conn = null_conn();
#else
	msg.conn_fd = -1;
#endif
	msg.data = desc;
	msg.msg_type = REQUEST_UPDATE_JOB;
	rc = update_job_str(&msg, 0);
#if SATURN_UPDATE_NEEDS_NULL_CONN
	if (msg.conn)
		conn_g_destroy(msg.conn, true);
#endif
	return rc;
}

int saturn_update_gres_detached(job_record_t *job_ptr, job_desc_msg_t *desc)
{
	struct xlist *saved = job_ptr->gres_list_req;
	int rc;

	/* Slurm refuses a GRES request of another form (gres:gpu:N) beside
	 * the typed entries (gres:gpu:TYPE:N) of the list it checks it
	 * against ("invalid GRES", ESLURM_INVALID_GRES_TYPE): no list for
	 * the update. Slurm sets a new one only when it applies the update;
	 * else the old one is put back. */
	job_ptr->gres_list_req = NULL;
	rc = saturn_update_as_controller(desc);
	if (job_ptr->gres_list_req)
		FREE_NULL_LIST(saved);
	else
		job_ptr->gres_list_req = saved;
	return rc;
}

void saturn_set_reason(job_record_t *job_ptr, const char *reason, time_t now)
{
	if (!xstrcmp(job_ptr->state_desc, reason))
		return;
	xfree(job_ptr->state_desc);
	job_ptr->state_desc = xstrdup(reason);
	last_job_update = now;
}
