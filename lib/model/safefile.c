/* safefile.c - descriptor-based file access (safefile.h).
 *
 * The rule behind every function: a name in a folder someone else can write
 * is looked at once, through openat(O_NOFOLLOW), and from then on only the
 * descriptor is used (fstat, fchown, fchmod, read). Paths are never
 * re-resolved after a check, so there is no window between check and use.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jsonutil.h"
#include "safefile.h"

const char *saturn_file_type(mode_t mode)
{
	if (S_ISREG(mode))
		return "regular file";
	if (S_ISDIR(mode))
		return "folder";
	if (S_ISLNK(mode))
		return "symbolic link";
	if (S_ISFIFO(mode))
		return "FIFO";
	if (S_ISSOCK(mode))
		return "socket";
	if (S_ISCHR(mode))
		return "character device";
	if (S_ISBLK(mode))
		return "block device";
	return "unknown file type";
}

int saturn_name_ok(const char *name)
{
	return name && name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

/* "DNAME/NAME: a FIFO (owner uid 5, mode 0644)": what lstat finds at a name
 * an openat refused, for the message. */
static int refuse_at(int dfd, const char *dname, const char *name, int e, const char *what,
		     saturn_error_t *err)
{
	struct stat st;

	if (e == ENOENT) {
		saturn_error_set(err, "%s/%s: %s", dname, name, strerror(e));
	} else if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		   (e == ELOOP || e == ENOTDIR || e == ENXIO || e == EWOULDBLOCK)) {
		saturn_error_set(err, "%s/%s: a %s (owner uid %ld, mode %04o), not %s: refused", dname,
				 name, saturn_file_type(st.st_mode), (long)st.st_uid,
				 (unsigned)(st.st_mode & 07777), what);
	} else {
		saturn_error_set(err, "%s/%s: %s", dname, name, strerror(e));
	}
	errno = e;
	return -1;
}

int saturn_dir_open_trusted(const char *path, saturn_error_t *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return saturn_error_set(err, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		saturn_error_set(err, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		saturn_error_set(err, "%s: owned by uid %ld, not by us (uid %ld) or root: refused",
				 path, (long)st.st_uid, (long)geteuid());
		errno = EPERM;
		goto fail;
	}
	if (st.st_mode & 022) {
		saturn_error_set(err, "%s: writable by group or others (mode %04o, owner uid %ld): refused",
				 path, (unsigned)(st.st_mode & 07777), (long)st.st_uid);
		errno = EPERM;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

int saturn_dir_open_at(int dfd, const char *dname, const char *name, long uid,
		       saturn_error_t *err)
{
	struct stat st;
	int fd;

	if (!saturn_name_ok(name)) {
		errno = EINVAL;
		return saturn_error_set(err, "%s/%s: not a plain name: refused", dname, name);
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return refuse_at(dfd, dname, name, errno, "a folder", err);
	if (fstat(fd, &st) < 0) {
		saturn_error_set(err, "%s/%s: %s", dname, name, strerror(errno));
		close(fd);
		return -1;
	}
	if (uid != SATURN_ANY_UID && (long)st.st_uid != uid) {
		saturn_error_set(err, "%s/%s: a folder owned by uid %ld (mode %04o), expected uid %ld: refused",
				 dname, name, (long)st.st_uid, (unsigned)(st.st_mode & 07777), uid);
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

int saturn_dir_ensure_at(int dfd, const char *dname, const char *name, long uid, long gid,
			 mode_t mode, saturn_error_t *err)
{
	long me = (long)geteuid();
	struct stat st;
	int fd;

	if (uid == SATURN_ANY_UID)
		uid = me;
	if (!saturn_name_ok(name)) {
		errno = EINVAL;
		return saturn_error_set(err, "%s/%s: not a plain name: refused", dname, name);
	}
	/* 0700 until the descriptor says it is ours and hands it over */
	if (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
		return saturn_error_set(err, "%s/%s: cannot create the folder: %s", dname, name,
					strerror(errno));
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return refuse_at(dfd, dname, name, errno, "a folder", err);
	if (fstat(fd, &st) < 0) {
		saturn_error_set(err, "%s/%s: %s", dname, name, strerror(errno));
		goto fail;
	}
	if ((long)st.st_uid != uid && (long)st.st_uid != me) {
		saturn_error_set(err, "%s/%s: a folder owned by uid %ld (mode %04o), expected uid %ld: refused",
				 dname, name, (long)st.st_uid, (unsigned)(st.st_mode & 07777), uid);
		errno = EPERM;
		goto fail;
	}
	if (((long)st.st_uid != uid || (gid != SATURN_ANY_UID && (long)st.st_gid != gid)) &&
	    fchown(fd, (uid_t)uid, gid == SATURN_ANY_UID ? (gid_t)-1 : (gid_t)gid) < 0) {
		saturn_error_set(err, "%s/%s: cannot hand the folder to uid %ld: %s", dname, name,
				 uid, strerror(errno));
		goto fail;
	}
	if ((st.st_mode & 07777) != mode && fchmod(fd, mode) < 0) {
		saturn_error_set(err, "%s/%s: cannot set mode %04o: %s", dname, name, (unsigned)mode,
				 strerror(errno));
		goto fail;
	}
	return fd;
fail:
	{
		int e = errno;

		close(fd);
		errno = e;
	}
	return -1;
}

char *saturn_file_read_at(int dfd, const char *dname, const char *name, const long *owners,
			  int nowners, size_t max, size_t *len, struct stat *stp,
			  saturn_error_t *err)
{
	struct stat st;
	char *buf = NULL;
	int fd, ok = nowners <= 0;

	if (!saturn_name_ok(name)) {
		errno = EINVAL;
		saturn_error_set(err, "%s/%s: not a plain name: refused", dname, name);
		return NULL;
	}
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		refuse_at(dfd, dname, name, errno, "a regular file", err);
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		saturn_error_set(err, "%s/%s: %s", dname, name, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		saturn_error_set(err, "%s/%s: a %s (owner uid %ld, mode %04o), not a regular file: refused",
				 dname, name, saturn_file_type(st.st_mode), (long)st.st_uid,
				 (unsigned)(st.st_mode & 07777));
		errno = EINVAL;
		goto out;
	}
	/* a second name for a file elsewhere (a hard link made in a folder
	 * the user can write) is not the file the user wrote */
	if (st.st_nlink != 1) {
		saturn_error_set(err, "%s/%s: a regular file with %lu hard links (owner uid %ld): refused",
				 dname, name, (unsigned long)st.st_nlink, (long)st.st_uid);
		errno = EPERM;
		goto out;
	}
	for (int i = 0; i < nowners && !ok; i++)
		ok = owners[i] == SATURN_ANY_UID || owners[i] == (long)st.st_uid;
	if (!ok) {
		char want[64] = "";

		for (int i = 0; i < nowners && i < 4; i++)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%ld",
				 i ? " or " : "", owners[i]);
		saturn_error_set(err, "%s/%s: a regular file owned by uid %ld, expected uid %s: refused",
				 dname, name, (long)st.st_uid, want);
		errno = EPERM;
		goto out;
	}
	if ((unsigned long long)st.st_size > max) {
		saturn_error_set(err, "%s/%s: larger than %zu bytes: refused", dname, name, max);
		errno = EFBIG;
		goto out;
	}
	buf = sj_read_fd(fd, max, len, err);
	if (!buf) {
		saturn_error_prefix(err, "%s/%s", dname, name);
		goto out;
	}
	if (stp)
		*stp = st;
out:
	{
		int e = errno;

		close(fd);
		errno = e;
	}
	return buf;
}

/* ".NAME.XXXXXX" with 6 random characters: created O_EXCL, so a name
 * someone planted is skipped, never opened. */
static int create_temp(int dfd, const char *name, char *tmp, size_t tmplen)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned counter;

	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned char r[6];
		char suf[7];
		int fd;

		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
			uint64_t x = (uint64_t)time(NULL) * 6364136223846793005ull +
				     (uint64_t)getpid() * 1442695040888963407ull + ++counter;

			for (int i = 0; i < 6; i++, x >>= 8)
				r[i] = (unsigned char)x;
		}
		for (int i = 0; i < 6; i++)
			suf[i] = abc[r[i] % (sizeof(abc) - 1)];
		suf[6] = '\0';
		if ((size_t)snprintf(tmp, tmplen, ".%s.%s", name, suf) >= tmplen) {
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

int saturn_file_write_at(int dfd, const char *dname, const char *name, const char *data,
			 size_t len, long uid, long gid, mode_t mode, saturn_error_t *err)
{
	char tmp[NAME_MAX + 1];
	size_t off = 0;
	int fd, made = 0;

	if (!saturn_name_ok(name)) {
		errno = EINVAL;
		return saturn_error_set(err, "%s/%s: not a plain name: refused", dname, name);
	}
	fd = create_temp(dfd, name, tmp, sizeof(tmp));
	if (fd < 0)
		return saturn_error_set(err, "%s/%s: cannot create a temporary file: %s", dname, name,
					strerror(errno));
	made = 1;
	if (uid != SATURN_ANY_UID &&
	    fchown(fd, (uid_t)uid, gid == SATURN_ANY_UID ? (gid_t)-1 : (gid_t)gid) < 0)
		goto syserr;
	if (fchmod(fd, mode) < 0)
		goto syserr;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			goto syserr;
		off += (size_t)w;
	}
	if (fsync(fd) < 0)
		goto syserr;
	if (close(fd) < 0) {
		fd = -1;
		goto syserr;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, name) < 0)
		goto syserr;
	(void)fsync(dfd); /* best effort: the rename is done */
	return 0;
syserr:
	saturn_error_set(err, "%s/%s: %s", dname, name, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (made)
		(void)unlinkat(dfd, tmp, 0);
	return -1;
}

int saturn_file_remove_at(int dfd, const char *dname, const char *name, saturn_error_t *err)
{
	if (!saturn_name_ok(name)) {
		errno = EINVAL;
		return saturn_error_set(err, "%s/%s: not a plain name: refused", dname, name);
	}
	if (unlinkat(dfd, name, 0) == 0)
		return 1;
	if (errno == ENOENT)
		return 0;
	return saturn_error_set(err, "%s/%s: cannot remove: %s", dname, name, strerror(errno));
}

/* --- path forms ------------------------------------------------------------ */

char *saturn_read_file(const char *path, size_t max, size_t *len, saturn_error_t *err)
{
	bool is_stdin = strcmp(path, "-") == 0;
	const char *name = is_stdin ? "stdin" : path;
	struct stat st;
	char *buf;
	int fd;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		saturn_error_set(err, "%s: %s", name, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		saturn_error_set(err, "%s: %s", name, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		saturn_error_set(err, "%s: is a directory", name);
		goto fail;
	}
	if (!is_stdin && !S_ISREG(st.st_mode)) {
		saturn_error_set(err, "%s: a %s, not a regular file: refused", name,
				 saturn_file_type(st.st_mode));
		goto fail;
	}
	if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max) {
		saturn_error_set(err, "%s: larger than %zu bytes", name, max);
		goto fail;
	}
	buf = sj_read_fd(fd, max, len, err);
	if (!buf) {
		saturn_error_prefix(err, "%s", name);
		goto fail;
	}
	if (!is_stdin)
		close(fd);
	return buf;
fail:
	if (!is_stdin)
		close(fd);
	return NULL;
}

int saturn_write_file_atomic(const char *path, const char *data, size_t len,
			     saturn_error_t *err)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int dfd, rc;

	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return saturn_error_set(err, "%s: out of memory", path);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		saturn_error_set(err, "%s: cannot open its folder: %s", path, strerror(errno));
		free(dir);
		return -1;
	}
	/* readable by the daemons that consume it; the data is not secret */
	rc = saturn_file_write_at(dfd, dir, slash ? slash + 1 : path, data, len, SATURN_ANY_UID,
				  SATURN_ANY_UID, 0644, err);
	close(dfd);
	free(dir);
	return rc;
}
