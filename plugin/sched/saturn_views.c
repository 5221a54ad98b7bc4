/* saturn_views.c - what each user may read of the plan state
 * (doc/security.md, "PrivateData").
 *
 *   STATE_DIR/state.json        0600 SlurmUser: every user's tasks
 *   STATE_DIR/users/            0711 ours: nobody else can list or write it
 *   STATE_DIR/users/UID.json    0400 UID: the tasks and corrections of UID
 *   STATE_DIR/users/all.json    0644 ours: everything, only when Slurm's
 *                               PrivateData hides none of jobs, users,
 *                               accounts (removed as soon as it does)
 *
 * A view is rewritten only when its text changed; views of users with no
 * task or correction left are removed, so the folder holds at most one file
 * per user present plus all.json. Every write and removal goes through the
 * folder's descriptor (saturn_file_write_at: O_EXCL|O_NOFOLLOW temporary,
 * fchown, renameat; saturn_file_remove_at: unlinkat), and only we can write
 * the folder. Per-user views need a root controller (fchown to the user).
 * The state writer's thread only (saturn_statewr.c), no locks.
 */
#include "config.h" /* Slurm's */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/slurm_protocol_api.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "safefile.h"
#include "state_view.h"

#include "saturn_views.h"

#define USERS_DIR_NAME "users"
#define PUBLIC_NAME "all.json"

/* the views written last (uid, hash of their text), in uid order */
static struct known {
	long uid;
	unsigned long long hash;
} *known;
static int nknown;
static unsigned long long public_hash; /* 0: none written */
static int listed;                     /* the folder was swept since (re)open */

void saturn_views_reset(void)
{
	xfree(known);
	nknown = 0;
	public_hash = 0;
	listed = 0;
}

static char *users_dir(const saturn_views_dest_t *dest)
{
	return xstrdup_printf("%s/" USERS_DIR_NAME, dest->state_dir);
}

/* 1 when Slurm hides jobs, users or accounts from other users */
static int private_data(void)
{
	return (slurm_conf.private_data &
		(PRIVATE_DATA_JOBS | PRIVATE_DATA_USERS | PRIVATE_DATA_ACCOUNTS)) != 0;
}

static unsigned long long known_hash(long uid)
{
	for (int i = 0; i < nknown; i++)
		if (known[i].uid == uid)
			return known[i].hash;
	return 0;
}

/* "UID.json" -> UID; -1 for any other name */
static long view_uid(const char *name)
{
	char *end;
	long v;

	if (name[0] < '0' || name[0] > '9')
		return -1;
	errno = 0;
	v = strtol(name, &end, 10);
	if (errno || strcmp(end, ".json"))
		return -1;
	return v;
}

/* remove UID.json of every uid not among views[] (one pass over the
 * folder, which holds only what we wrote) */
static void sweep(const saturn_views_dest_t *dest, const char *dname, const saturn_state_view_t *views,
		  int nviews)
{
	int fd = dup(dest->users_fd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	saturn_error_t err = {{0}};

	if (!d) {
		if (fd >= 0)
			close(fd);
		error("sched/saturn: %s: cannot list: %m", dname);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		long uid = view_uid(de->d_name);
		int keep = 0;

		if (uid < 0)
			continue;
		for (int i = 0; i < nviews && !keep; i++)
			keep = views[i].uid == uid;
		if (!keep && saturn_file_remove_at(dest->users_fd, dname, de->d_name, &err) < 0)
			error("sched/saturn: stale view: %s", err.text);
	}
	closedir(d);
}

void saturn_views_write(const saturn_views_dest_t *dest, const char *txt)
{
	saturn_state_view_t *views = NULL;
	saturn_error_t err = {{0}};
	struct known *now = NULL;
	size_t len = strlen(txt);
	char *dname;
	int nviews = 0, changed_set = 0;
	static int warned;

	if (dest->users_fd < 0)
		return;
	dname = users_dir(dest);
	if (!private_data()) {
		unsigned long long h = saturn_state_view_hash(txt, len);

		if (h != public_hash) {
			if (saturn_file_write_at(dest->users_fd, dname, PUBLIC_NAME, txt, len,
						 SATURN_ANY_UID, SATURN_ANY_UID, 0644, &err) < 0) {
				error("sched/saturn: public view: %s", err.text);
				h = 0;
			}
			public_hash = h;
		}
	} else if (public_hash || !listed) {
		/* PrivateData now hides jobs: the view of everything goes */
		if (saturn_file_remove_at(dest->users_fd, dname, PUBLIC_NAME, &err) < 0)
			error("sched/saturn: public view: %s", err.text);
		public_hash = 0;
	}
	if (!dest->user_dirs) {
		/* without root the views cannot be handed to their users */
		if (!warned++)
			info("sched/saturn: not root: no per-user views of the state (%s/UID.json); users read %s only when PrivateData hides no jobs",
			     dname, PUBLIC_NAME);
		xfree(dname);
		return;
	}
	if (saturn_state_views(txt, len, &views, &nviews, &err) < 0) {
		error("sched/saturn: per-user views: %s", err.text);
		xfree(dname);
		return;
	}
	now = xcalloc(nviews ? nviews : 1, sizeof(*now));
	changed_set = nviews != nknown || !listed;
	for (int i = 0; i < nviews; i++) {
		unsigned long long h = saturn_state_view_hash(views[i].text, strlen(views[i].text));
		char name[40];

		now[i].uid = views[i].uid;
		if (!changed_set && known[i].uid != views[i].uid)
			changed_set = 1;
		if (h == known_hash(views[i].uid)) {
			now[i].hash = h;
			continue;
		}
		snprintf(name, sizeof(name), "%ld.json", views[i].uid);
		if (saturn_file_write_at(dest->users_fd, dname, name, views[i].text,
					 strlen(views[i].text), views[i].uid, SATURN_ANY_UID, 0400,
					 &err) < 0)
			error("sched/saturn: view of uid %ld: %s", views[i].uid, err.text);
		else
			now[i].hash = h;
	}
	if (changed_set) {
		sweep(dest, dname, views, nviews);
		listed = 1;
	}
	xfree(known);
	known = now;
	nknown = nviews;
	saturn_state_views_free(views, nviews);
	xfree(dname);
}
