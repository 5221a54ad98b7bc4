/* safefile.h - file access that stays safe in folders other users can
 * write to (doc/security.md, "Files and folders").
 *
 * Everything below works on an open folder descriptor and one plain name
 * (no '/'), never on a path a user could redirect: folders are opened with
 * O_DIRECTORY|O_NOFOLLOW, files with O_NOFOLLOW|O_NONBLOCK, and owner and
 * mode are only ever changed through the descriptor (fchown/fchmod), so a
 * symlink, FIFO, device or another user's file planted under an expected
 * name is refused with a message naming it instead of being followed,
 * blocked on or re-owned. dname (the folder's path) is only used in
 * messages. Slurm-free; errors through saturn_error_t; nothing is printed.
 */
#ifndef SATURN_SAFEFILE_H
#define SATURN_SAFEFILE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"

/* "any owner" for the owner lists and uid arguments below */
#define SATURN_ANY_UID (-1L)

/* Open path, a folder an administrator configured, with
 * O_DIRECTORY|O_CLOEXEC (symlinks in the admin's path are followed) and
 * refuse it unless it is owned by geteuid() or root and not writable by
 * group or others. Returns the descriptor (caller closes), or -1 with err
 * ("PATH: writable by group or others (mode 1733, owner uid 0): refused").
 */
int saturn_dir_open_trusted(const char *path, saturn_error_t *err);

/* Make sure dfd holds a folder name owned by uid with exactly mode, and
 * open it: mkdirat(dfd, name, 0700) (an existing one is fine), then
 * openat(O_DIRECTORY|O_NOFOLLOW), fstat. Refused (-1, err naming
 * DNAME/NAME, its type, owner and mode): a symlink, anything not a folder,
 * a folder owned by neither uid nor geteuid(). A folder owned by geteuid()
 * (made just now, or by us earlier) is handed to uid with fchown(fd, uid,
 * gid) (gid -1: unchanged); the mode is set with fchmod(fd). uid
 * SATURN_ANY_UID means geteuid(). Returns the folder's descriptor (caller
 * closes). After a failure a folder made here stays, empty, owned by us. */
int saturn_dir_ensure_at(int dfd, const char *dname, const char *name, long uid, long gid,
			 mode_t mode, saturn_error_t *err);

/* Open the existing folder name under dfd (O_DIRECTORY|O_NOFOLLOW) and
 * check that it is owned by uid (SATURN_ANY_UID: anyone). Returns the
 * descriptor or -1 with err (errno ENOENT when it does not exist). */
int saturn_dir_open_at(int dfd, const char *dname, const char *name, long uid,
		       saturn_error_t *err);

/* Read the regular file name under dfd whole: openat(O_RDONLY|O_NOFOLLOW|
 * O_NONBLOCK|O_CLOEXEC), fstat: refused unless a regular file with one
 * link (not a hard link to a file elsewhere) owned by one of the nowners
 * uids in owners (nowners 0: any owner) of at most max bytes; FIFOs,
 * sockets, devices, folders and symlinks are refused without blocking. Returns a malloc'd NUL-terminated buffer (length in *len; the
 * file's fstat in *st when st is not NULL), or NULL with err naming
 * DNAME/NAME (errno ENOENT when there is no such name). */
char *saturn_file_read_at(int dfd, const char *dname, const char *name, const long *owners,
			  int nowners, size_t max, size_t *len, struct stat *st,
			  saturn_error_t *err);

/* Write data as name under dfd atomically: a fresh temporary ".NAME.XXXXXX"
 * created with O_CREAT|O_EXCL|O_NOFOLLOW, owner set with fchown(fd, uid,
 * gid) when uid != SATURN_ANY_UID, mode with fchmod(fd, mode), fsync,
 * renameat over name (which replaces a symlink or file there instead of
 * following it), fsync of the folder. 0, or -1 with err naming DNAME/NAME;
 * after a failure name is unchanged and no temporary file is left. */
int saturn_file_write_at(int dfd, const char *dname, const char *name, const char *data,
			 size_t len, long uid, long gid, mode_t mode, saturn_error_t *err);

/* Remove name under dfd with unlinkat (a symlink is removed, never
 * followed; a folder is refused). 1 removed, 0 there was none, -1 with err.
 */
int saturn_file_remove_at(int dfd, const char *dname, const char *name, saturn_error_t *err);

/* 1 when name is usable as one name under a folder (not empty, no '/', not
 * "." or ".."), else 0. */
int saturn_name_ok(const char *name);

/* "regular file", "folder", "symbolic link", "FIFO", ... for messages. */
const char *saturn_file_type(mode_t mode);

/* --- path forms, for programs working on their invoking user's files --- */

/* Read a whole file into a malloc'd NUL-terminated buffer, refusing more
 * than max bytes and anything but a regular file (opened O_NONBLOCK, so a
 * FIFO never blocks). Symlinks in path are followed: use
 * saturn_file_read_at() for files in folders others can write. "-" reads
 * stdin (any kind). Returns the buffer (length in *len) or NULL with err
 * ("FILE: ..."). */
char *saturn_read_file(const char *path, size_t max, size_t *len, saturn_error_t *err);

/* Write data to path atomically (temporary file created O_EXCL|O_NOFOLLOW in
 * the same folder, mode 0644, fsync, rename). Returns 0 or -1 with err. */
int saturn_write_file_atomic(const char *path, const char *data, size_t len,
			     saturn_error_t *err);

#endif /* SATURN_SAFEFILE_H */
