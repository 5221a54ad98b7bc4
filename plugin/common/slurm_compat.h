/* slurm_compat.h - every difference between the Slurm releases the plugins
 * are built for (22.05, 24.11 and 26.05) that the code has to spell
 * differently, in one place. doc/slurm-versions.md has the table: what
 * changed, in which release, and which line here (or which `#if` elsewhere)
 * handles it. A spelling that works on every release is used directly in
 * the code instead (`struct xlist *`, `struct listIterator *`,
 * `struct hostlist *`), so this file stays small.
 *
 * Needs only Slurm's public slurm/slurm.h (SLURM_VERSION_NUMBER), so the
 * Slurm-free parts of the plugins and their unit tests can include it too.
 * The release is the one of the headers compiled against: a plugin loads
 * only into a slurmctld of exactly that version (plugin_version), which
 * configure checks against the installed daemon.
 */
#ifndef SATURN_SLURM_COMPAT_H
#define SATURN_SLURM_COMPAT_H

#include "slurm/slurm.h"

/* Major.minor of the headers, e.g. SATURN_SLURM_AT_LEAST(24, 11). */
#define SATURN_SLURM_AT_LEAST(ma, mi) (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(ma, mi, 0))
#define SATURN_SLURM_SERIES(ma, mi)                                  \
	(SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER) == (ma) &&        \
	 SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER) == (mi))

/* The releases this tree is tested on, end to end. Another one (25.05's
 * connection API differs again; 23.x is untested) is refused here as
 * configure refuses it, rather than built by guesswork. */
#if !SATURN_SLURM_SERIES(22, 5) && !SATURN_SLURM_SERIES(24, 11) && !SATURN_SLURM_SERIES(26, 5)
#error "Saturn's Slurm plugins support Slurm 22.05, 24.11 and 26.05 only (see doc/slurm-versions.md)"
#endif

/* --- headers that moved (23.02: src/common -> src/interfaces) ------------- */
#if SATURN_SLURM_AT_LEAST(23, 2)
#define SATURN_GRES_H "src/interfaces/gres.h"
#define SATURN_PRIORITY_H "src/interfaces/priority.h"
#else
#define SATURN_GRES_H "src/common/gres.h"
#define SATURN_PRIORITY_H "src/common/slurm_priority.h"
#endif

/* --- types ------------------------------------------------------------------
 * A job's details are `struct job_details` up to 22.05 and the anonymous
 * struct `job_details_t` from 23.02 on: the code writes job_details_t. */
#if !SATURN_SLURM_AT_LEAST(23, 2)
typedef struct job_details job_details_t;
#endif

/* --- TRES strings inside slurmctld ------------------------------------------
 * A GRES request written into a job record or an in-process update
 * (tres_per_node, ...) is "gres:gpu:4" up to 23.02 and "gres/gpu:4" from
 * 23.11 on; 24.11 refuses the old form with "Invalid Trackable RESource
 * (TRES) specification" after its update code has already changed part of
 * the job. Readers accept both (lib/model/jobreq.c). */
#if SATURN_SLURM_AT_LEAST(23, 11)
#define SATURN_TRES_GRES_PREFIX "gres/"
#else
#define SATURN_TRES_GRES_PREFIX "gres:"
#endif

/* --- job_desc_msg_t: what slurm_init_job_desc_msg() leaves unset ----------
 * user_id and group_id are NO_VAL up to 22.05 and SLURM_AUTH_NOBODY (99,
 * src/common/slurm_protocol_defs.h, not a public header) from 23.02 on;
 * the plugin checks the two agree (saturn_compat_check in
 * job_submit_saturn.c). */
#if SATURN_SLURM_AT_LEAST(23, 2)
#define SATURN_JOB_DESC_UID_UNSET 99u
#else
#define SATURN_JOB_DESC_UID_UNSET NO_VAL
#endif

/* 25.11 replaced job_desc_msg_t.job_id by step_id (a slurm_step_id_t,
 * unset: SLURM_STEP_ID_INITIALIZER) and submit_response_msg_t.job_id by
 * step_id.job_id. */
#if SATURN_SLURM_AT_LEAST(25, 11)
#define SATURN_JOB_DESC_HAS_STEP_ID 1
#define SATURN_SUBMIT_RESP_JOB_ID(r) ((r)->step_id.job_id)
#else
#define SATURN_JOB_DESC_HAS_STEP_ID 0
#define SATURN_SUBMIT_RESP_JOB_ID(r) ((r)->job_id)
#endif

/* --- job_submit plugin API --------------------------------------------------
 * job_modify() gained `char **err_msg` (shown to the user) in 23.02. */
#if SATURN_SLURM_AT_LEAST(23, 2)
#define SATURN_JOB_MODIFY_HAS_ERR_MSG 1
#else
#define SATURN_JOB_MODIFY_HAS_ERR_MSG 0
#endif

/* --- updating a job from inside slurmctld -----------------------------------
 * update_job_str() replies to the message's connection. Up to 24.11 a
 * message with conn_fd -1 gets no reply; 25.05 dropped conn_fd (its own
 * connection API, not supported here), and from 25.11 on a reply is always
 * attempted through the message's `conn`, which waits MessageTimeout when
 * there is none: the plugin gives it a connection to /dev/null
 * (saturn_apply.c, saturn_update_as_controller). */
#if SATURN_SLURM_AT_LEAST(25, 11)
#define SATURN_UPDATE_NEEDS_NULL_CONN 1
#else
#define SATURN_UPDATE_NEEDS_NULL_CONN 0
#endif

/* --- priority/multifactor ---------------------------------------------------
 * priority_g_calc_fs_factor() is gone in 25.11: the classic fair-share
 * factor is kept in assoc->usage->fs_factor, as Fair Tree's always was. */
#if SATURN_SLURM_AT_LEAST(25, 11)
#define SATURN_HAS_CALC_FS_FACTOR 0
#else
#define SATURN_HAS_CALC_FS_FACTOR 1
#endif

/* --- libslurm (the public API, for the `saturn` command) -------------------
 * slurm_free_ctl_conf() was renamed slurm_free_conf() in 26.05. */
#if SATURN_SLURM_AT_LEAST(26, 5)
#define saturn_slurm_free_conf(c) slurm_free_conf(c)
#else
#define saturn_slurm_free_conf(c) slurm_free_ctl_conf(c)
#endif

#endif /* SATURN_SLURM_COMPAT_H */
