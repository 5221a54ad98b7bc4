/* modify_fields.c - the parts of a job update request that are set (see
 * modify_fields.h). One row per member of job_desc_msg_t, in the header's
 * order, for each Slurm release the plugins build for (22.05.8, 24.11.5,
 * 26.05.x: members a release added or dropped are between `#if`s of
 * slurm_compat.h), with the unset value slurm_init_job_desc_msg() gives it
 * (src/api/init_msg.c); members slurmctld never unpacks from an update
 * (array_bitmap, het_job_offset, id, script_buf, selinux_context,
 * tres_req_cnt) are listed as well, so a plugin or client that sets them
 * is seen. The option names are scontrol's (src/scontrol/update_job.c).
 * The unit test checks that the rows cover every byte of the struct of the
 * release it is built against: a member a new release adds fails it.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm.h"

#include "modify_fields.h"
#include "slurm_compat.h"

enum kind {
	K_STR,   /* char *: set when not NULL (even "", which clears) */
	K_PTR,   /* any other pointer: set when not NULL */
	K_INT,   /* an unsigned integer or time_t: set when not `unset` */
	K_BYTES, /* a plain struct: set when any byte is not 0 */
	K_STEP,  /* a slurm_step_id_t: set when not SLURM_STEP_ID_INITIALIZER */
};

struct row {
	const char *field;
	const char *option;
	size_t off, size;
	enum kind kind;
	uint64_t unset;
	uint64_t ignore; /* K_INT: bits that are bookkeeping, not a change */
};

#define F(m, opt, k, u)                                                   \
	{                                                                 \
		#m, opt, offsetof(job_desc_msg_t, m),                     \
		sizeof(((job_desc_msg_t *)0)->m), K_##k, (uint64_t)(u), 0 \
	}

/* The client's packing of every request (_pack_job_desc_msg) sets these in
 * bitflags when account, partition, QOS or WCKey are not given. */
#define PACK_BITS (USE_DEFAULT_ACCT | USE_DEFAULT_PART | USE_DEFAULT_QOS | \
		   USE_DEFAULT_WCKEY)

static const struct row rows[] = {
	F(account, "Account", STR, 0),
	F(acctg_freq, NULL, STR, 0),
	F(admin_comment, "AdminComment", STR, 0),
	F(alloc_node, NULL, STR, 0),
	F(alloc_resp_port, NULL, INT, 0),
#if SATURN_SLURM_AT_LEAST(25, 5)
	F(alloc_tls_cert, NULL, STR, 0),
#endif
	F(alloc_sid, "hold/uhold", INT, NO_VAL),
	F(argc, NULL, INT, 0),
	F(argv, NULL, PTR, 0),
	F(array_inx, "ArrayTaskThrottle", STR, 0),
	F(array_bitmap, NULL, PTR, 0),
	F(batch_features, NULL, STR, 0),
	F(begin_time, "StartTime", INT, 0),
	{"bitflags", "ResetAccrueTime", offsetof(job_desc_msg_t, bitflags),
	 sizeof(((job_desc_msg_t *)0)->bitflags), K_INT, 0, PACK_BITS},
	F(burst_buffer, "BurstBuffer", STR, 0),
	F(clusters, "Clusters", STR, 0),
	F(cluster_features, "ClusterFeatures", STR, 0),
	F(comment, "Comment", STR, 0),
	F(contiguous, "Contiguous", INT, NO_VAL16),
	F(container, NULL, STR, 0),
#if SATURN_SLURM_AT_LEAST(23, 2)
	F(container_id, NULL, STR, 0),
#endif
#if SATURN_SLURM_AT_LEAST(26, 5)
	F(container_type, NULL, STR, 0),
#endif
	F(core_spec, "CoreSpec", INT, NO_VAL16),
	F(cpu_bind, NULL, STR, 0),
	F(cpu_bind_type, NULL, INT, NO_VAL16),
	F(cpu_freq_min, NULL, INT, NO_VAL),
	F(cpu_freq_max, NULL, INT, NO_VAL),
	F(cpu_freq_gov, NULL, INT, NO_VAL),
	F(cpus_per_tres, "CpusPerTres", STR, 0),
	F(crontab_entry, NULL, PTR, 0),
	F(deadline, "Deadline", INT, 0),
	F(delay_boot, "DelayBoot", INT, NO_VAL),
	F(dependency, "Dependency", STR, 0),
	F(end_time, "EndTime", INT, 0),
	F(environment, NULL, PTR, 0),
	F(env_hash, NULL, BYTES, 0),
	F(env_size, NULL, INT, 0),
	F(extra, NULL, STR, 0),
	F(exc_nodes, "ExcNodeList", STR, 0),
	F(features, "Features", STR, 0),
	F(fed_siblings_active, NULL, INT, 0),
	F(fed_siblings_viable, NULL, INT, 0),
	F(group_id, NULL, INT, SATURN_JOB_DESC_UID_UNSET),
	F(het_job_offset, NULL, INT, 0),
#if SATURN_SLURM_AT_LEAST(23, 11)
	F(id, NULL, PTR, 0),
#endif
	F(immediate, NULL, INT, 0),
#if !SATURN_JOB_DESC_HAS_STEP_ID
	F(job_id, "JobId", INT, NO_VAL),
#endif
	F(job_id_str, "JobId", STR, 0),
#if SATURN_SLURM_AT_LEAST(23, 2)
	F(job_size_str, NULL, STR, 0),
#endif
	F(kill_on_node_fail, NULL, INT, NO_VAL16),
	F(licenses, "Licenses", STR, 0),
#if SATURN_SLURM_AT_LEAST(23, 2)
	F(licenses_tot, NULL, STR, 0),
#endif
	F(mail_type, "MailType", INT, NO_VAL16),
	F(mail_user, "MailUser", STR, 0),
	F(mcs_label, NULL, STR, 0),
	F(mem_bind, NULL, STR, 0),
	F(mem_bind_type, NULL, INT, NO_VAL16),
	F(mem_per_tres, "MemPerTres", STR, 0),
#if SATURN_SLURM_AT_LEAST(26, 5)
	F(mem_update_delay, NULL, INT, 0),
	F(mem_update_margin, NULL, INT, 0),
#endif
	F(name, "JobName", STR, 0),
	F(network, NULL, STR, 0),
	F(nice, "Nice", INT, NO_VAL),
	F(num_tasks, "NumTasks", INT, NO_VAL),
#if SATURN_SLURM_AT_LEAST(24, 11)
	F(oom_kill_step, NULL, INT, 0),
#endif
	F(open_mode, NULL, INT, 0),
	F(origin_cluster, NULL, STR, 0),
	F(other_port, NULL, INT, 0),
	F(overcommit, NULL, INT, NO_VAL8),
	F(partition, "Partition", STR, 0),
	F(plane_size, NULL, INT, NO_VAL16),
#if !SATURN_SLURM_AT_LEAST(24, 5)
	F(power_flags, NULL, INT, 0),
#endif
	F(prefer, "Prefer", STR, 0),
	F(priority, "Priority", INT, NO_VAL),
	F(profile, NULL, INT, 0),
	F(qos, "QOS", STR, 0),
	F(reboot, "Reboot", INT, NO_VAL16),
	F(resp_host, NULL, STR, 0),
	F(restart_cnt, NULL, INT, 0),
	F(req_nodes, "ReqNodeList", STR, 0),
	F(requeue, "Requeue", INT, NO_VAL16),
	F(reservation, "ReservationName", STR, 0),
#if SATURN_SLURM_AT_LEAST(24, 5)
	F(resv_port_cnt, NULL, INT, 0),
#endif
	F(script, NULL, STR, 0),
	F(script_buf, NULL, PTR, 0),
	F(script_hash, NULL, BYTES, 0),
#if SATURN_SLURM_AT_LEAST(24, 5)
	F(segment_size, NULL, INT, 0),
#endif
	F(shared, "OverSubscribe", INT, NO_VAL16),
	F(site_factor, "SiteFactor", INT, NO_VAL),
	F(spank_job_env, NULL, PTR, 0),
	F(spank_job_env_size, NULL, INT, 0),
#if SATURN_JOB_DESC_HAS_STEP_ID
	F(step_id, "JobId", STEP, 0),
#endif
	F(submit_line, NULL, STR, 0),
	F(task_dist, NULL, INT, NO_VAL),
	F(time_limit, "TimeLimit", INT, NO_VAL),
	F(time_min, "TimeMin", INT, NO_VAL),
	F(tres_bind, "TresBind", STR, 0),
	F(tres_freq, "TresFreq", STR, 0),
	F(tres_per_job, "TresPerJob", STR, 0),
	F(tres_per_node, "TresPerNode", STR, 0),
	F(tres_per_socket, "TresPerSocket", STR, 0),
	F(tres_per_task, "TresPerTask", STR, 0),
	F(user_id, "UserID", INT, SATURN_JOB_DESC_UID_UNSET),
	F(wait_all_nodes, NULL, INT, NO_VAL16),
	F(warn_flags, NULL, INT, 0),
	F(warn_signal, NULL, INT, 0),
	F(warn_time, NULL, INT, 0),
	F(work_dir, "WorkDir", STR, 0),
	F(cpus_per_task, "CPUsPerTask", INT, NO_VAL16),
	F(min_cpus, "NumCPUs", INT, NO_VAL),
	F(max_cpus, "NumCPUs", INT, NO_VAL),
	F(min_nodes, "NumNodes", INT, NO_VAL),
	F(max_nodes, "NumNodes", INT, NO_VAL),
	F(boards_per_node, NULL, INT, 0),
	F(sockets_per_board, NULL, INT, 0),
	F(sockets_per_node, "ReqSockets", INT, NO_VAL16),
	F(cores_per_socket, "ReqCores", INT, NO_VAL16),
	F(threads_per_core, "ReqThreads", INT, NO_VAL16),
	F(ntasks_per_node, "TasksPerNode", INT, NO_VAL16),
	F(ntasks_per_socket, NULL, INT, NO_VAL16),
	F(ntasks_per_core, NULL, INT, NO_VAL16),
	F(ntasks_per_board, NULL, INT, 0),
	F(ntasks_per_tres, NULL, INT, NO_VAL16),
	F(pn_min_cpus, "MinCPUsNode", INT, NO_VAL16),
	F(pn_min_memory, "MinMemoryNode", INT, NO_VAL64),
	F(pn_min_tmp_disk, "MinTmpDiskNode", INT, NO_VAL),
	F(req_context, NULL, STR, 0),
	F(req_switch, "Switches", INT, NO_VAL),
#if !SATURN_SLURM_AT_LEAST(23, 2)
	F(select_jobinfo, NULL, PTR, 0),
#endif
	F(selinux_context, NULL, STR, 0),
	F(std_err, NULL, STR, 0),
	F(std_in, NULL, STR, 0),
	F(std_out, "StdOut", STR, 0),
	F(tres_req_cnt, NULL, PTR, 0),
	F(wait4switch, "wait-for-switch", INT, NO_VAL),
	F(wckey, "WCKey", STR, 0),
	F(x11, NULL, INT, 0),
	F(x11_magic_cookie, NULL, STR, 0),
	F(x11_target, NULL, STR, 0),
	F(x11_target_port, NULL, INT, 0),
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static uint64_t get_int(const void *p, size_t size)
{
	switch (size) {
	case 1:
		return *(const uint8_t *)p;
	case 2:
		return *(const uint16_t *)p;
	case 4:
		return *(const uint32_t *)p;
	default:
		return *(const uint64_t *)p;
	}
}

static void set_int(void *p, size_t size, uint64_t v)
{
	switch (size) {
	case 1:
		*(uint8_t *)p = (uint8_t)v;
		break;
	case 2:
		*(uint16_t *)p = (uint16_t)v;
		break;
	case 4:
		*(uint32_t *)p = (uint32_t)v;
		break;
	default:
		*(uint64_t *)p = v;
		break;
	}
}

/* Is row r of the request at base set? */
static int row_set(const struct row *r, const unsigned char *base)
{
	const unsigned char *p = base + r->off;

	switch (r->kind) {
	case K_STR:
	case K_PTR:
		return *(void *const *)p != NULL;
	case K_INT:
		return (get_int(p, r->size) & ~r->ignore) != (r->unset & ~r->ignore);
#if SATURN_JOB_DESC_HAS_STEP_ID
	case K_STEP: {
		const slurm_step_id_t *id = (const void *)p, unset = SLURM_STEP_ID_INITIALIZER;

		return id->sluid != unset.sluid || id->job_id != unset.job_id ||
		       id->step_het_comp != unset.step_het_comp || id->step_id != unset.step_id;
	}
#endif
	default:
		for (size_t i = 0; i < r->size; i++)
			if (p[i])
				return 1;
		return 0;
	}
}

/* Give row r of the request at base its unset value. */
static void row_unset(const struct row *r, unsigned char *base)
{
	if (r->kind == K_INT) {
		set_int(base + r->off, r->size, r->unset);
		return;
	}
	/* padding too: a K_STEP member is set field by field below */
	memset(base + r->off, 0, r->size);
#if SATURN_JOB_DESC_HAS_STEP_ID
	if (r->kind == K_STEP) {
		slurm_step_id_t *id = (void *)(base + r->off), unset = SLURM_STEP_ID_INITIALIZER;

		id->sluid = unset.sluid;
		id->job_id = unset.job_id;
		id->step_het_comp = unset.step_het_comp;
		id->step_id = unset.step_id;
	}
#endif
}

void saturn_job_desc_init(struct job_descriptor *d)
{
	memset(d, 0, sizeof(*d));
	for (size_t i = 0; i < NROWS; i++)
		row_unset(&rows[i], (unsigned char *)d);
}

size_t saturn_job_desc_fields(const struct job_descriptor *d,
			      saturn_modify_field_t *out, size_t max)
{
	job_desc_msg_t rest, unset;
	size_t n = 0;

	/* what is left once every known member is unset must equal a fresh
	 * request, byte for byte (padding included: slurmctld's unpacking
	 * starts from zeroed memory, so padding that is not 0 is refused
	 * rather than explained) */
	memcpy(&rest, d, sizeof(rest));
	saturn_job_desc_init(&unset);
	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];

		row_unset(r, (unsigned char *)&rest); /* covered: not unknown */
		if (!row_set(r, (const unsigned char *)d))
			continue;
		if (n < max) {
			saturn_modify_field_t *f = &out[n];

			memset(f, 0, sizeof(*f));
			f->field = r->field;
			f->option = r->option;
			if (r->kind == K_INT)
				f->value = get_int((const unsigned char *)d + r->off,
						   r->size) & ~r->ignore;
		}
		n++;
	}
	if (memcmp(&rest, &unset, sizeof(rest))) {
		if (n < max) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].option = "an unknown part of the request";
		}
		n++;
	}
	return n;
}

int saturn_job_desc_row(size_t i, size_t *n, const char **field,
			size_t *offset, size_t *size)
{
	if (n)
		*n = NROWS;
	if (i >= NROWS)
		return -1;
	if (field)
		*field = rows[i].field;
	if (offset)
		*offset = rows[i].off;
	if (size)
		*size = rows[i].size;
	return 0;
}

int saturn_job_desc_poke(struct job_descriptor *d, size_t i)
{
	static char byte = 'x';
	unsigned char *p;

	if (i >= NROWS)
		return -1;
	p = (unsigned char *)d + rows[i].off;
	switch (rows[i].kind) {
	case K_STR:
	case K_PTR:
		*(void **)p = &byte;
		break;
	case K_INT:
		set_int(p, rows[i].size, rows[i].unset == 1 ? 2 : 1);
		break;
#if SATURN_JOB_DESC_HAS_STEP_ID
	case K_STEP:
		((slurm_step_id_t *)(void *)p)->job_id = 7;
		break;
#endif
	default:
		memset(p, 0x5a, rows[i].size);
		break;
	}
	return 0;
}
