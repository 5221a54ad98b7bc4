/* test_safefile.c - lib/model/safefile.h: every kind of planted name (symlink to
 * a file, to a folder, dangling, looping; FIFO; device; another user's file
 * or folder) is refused with a message naming it, without blocking and
 * without touching what a link points at; owner and mode are set through
 * the descriptor. The cases with another owner need root (CI runs this as
 * root); as another user they are skipped, the rest still runs.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "safefile.h"

#define OTHER_UID 65534L
#define THIRD_UID 65533L

static char top[] = "/tmp/saturn-safefile-XXXXXX";
static char secret[128], secret_dir[160];
static int tfd = -1;

/* top/secret: a 0600 file and top/secretdir: a 0700 folder of ours, the
 * targets every link points at; their mode and owner must never change. */
static void setup(void)
{
	int fd;

	strcpy(top, "/tmp/saturn-safefile-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(secret, sizeof(secret), "%s/secret", top);
	snprintf(secret_dir, sizeof(secret_dir), "%s/secretdir", top);
	fd = open(secret, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "secret", 6), 6);
	close(fd);
	ck_assert_int_eq(mkdir(secret_dir, 0700), 0);
	tfd = open(top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(tfd, 0);
	/* nothing here may block: a FIFO opened without O_NONBLOCK would */
	alarm(20);
}

static void teardown(void)
{
	char cmd[128];

	alarm(0);
	close(tfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	ck_assert_int_eq(system(cmd), 0);
}

static void targets_untouched(void)
{
	struct stat st;

	ck_assert_int_eq(stat(secret, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_uint_eq(st.st_uid, geteuid());
	ck_assert_int_eq((int)st.st_size, 6);
	ck_assert_int_eq(stat(secret_dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_uint_eq(st.st_uid, geteuid());
}

static int is_root(void)
{
	return geteuid() == 0;
}

static void has(const char *text, const char *word)
{
	ck_assert_msg(strstr(text, word) != NULL, "\"%s\" does not say \"%s\"", text, word);
}

/* the planted names: name, what to make, what the message must say */
enum kind { LINK_FILE, LINK_DIR, LINK_DANGLING, LINK_LOOP, FIFO, DEVICE, FILE_OTHER, DIR_OTHER,
	    HARD_LINK };
static const struct plant {
	const char *name;
	enum kind kind;
	const char *says;
	int root_only;
} plants[] = {
	{"link-file", LINK_FILE, "symbolic link", 0},
	{"link-dir", LINK_DIR, "symbolic link", 0},
	{"link-dangling", LINK_DANGLING, "symbolic link", 0},
	{"link-loop", LINK_LOOP, "symbolic link", 0},
	{"fifo", FIFO, "FIFO", 0},
	{"device", DEVICE, "character device", 1},
	{"file-other", FILE_OTHER, "uid 65534", 1},
	{"dir-other", DIR_OTHER, "uid 65534", 1},
	{"hard-link", HARD_LINK, "hard links", 0},
};
#define NPLANTS ((int)(sizeof(plants) / sizeof(plants[0])))

static void plant(const struct plant *p)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", top, p->name);
	switch (p->kind) {
	case LINK_FILE:
		ck_assert_int_eq(symlink(secret, path), 0);
		break;
	case LINK_DIR:
		ck_assert_int_eq(symlink(secret_dir, path), 0);
		break;
	case LINK_DANGLING:
		ck_assert_int_eq(symlink("/nonexistent/saturn", path), 0);
		break;
	case LINK_LOOP:
		ck_assert_int_eq(symlink(p->name, path), 0);
		break;
	case FIFO:
		ck_assert_int_eq(mkfifo(path, 0666), 0);
		break;
	case DEVICE:
		ck_assert_int_eq(mknod(path, S_IFCHR | 0666, makedev(1, 3)), 0);
		break;
	case FILE_OTHER:
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, "{}", 2), 2);
		close(fd);
		ck_assert_int_eq(chown(path, OTHER_UID, OTHER_UID), 0);
		break;
	case DIR_OTHER:
		ck_assert_int_eq(mkdir(path, 0700), 0);
		ck_assert_int_eq(chown(path, OTHER_UID, OTHER_UID), 0);
		break;
	case HARD_LINK:
		ck_assert_int_eq(link(secret, path), 0);
		break;
	}
}

/* reading a planted name: refused, named, never blocking */
START_TEST(test_read_refuses)
{
	const struct plant *p = &plants[_i];
	saturn_error_t err = {{0}};
	long owners[1] = {(long)geteuid()};
	size_t len;

	if (p->root_only && !is_root())
		return;
	plant(p);
	ck_assert_ptr_null(saturn_file_read_at(tfd, top, p->name, owners, 1, 1 << 20, &len, NULL, &err));
	has(err.text, p->name);
	has(err.text, top);
	if (p->kind != DIR_OTHER) /* a folder is refused as "folder" */
		has(err.text, p->says);
	has(err.text, "refused");
	targets_untouched();
}
END_TEST

/* ensuring a folder at a planted name: refused, and nothing chmod'ed or
 * chown'ed through it */
START_TEST(test_ensure_refuses)
{
	const struct plant *p = &plants[_i];
	saturn_error_t err = {{0}};
	long uid = is_root() ? THIRD_UID : (long)geteuid();
	struct stat st;
	int fd;

	if (p->root_only && !is_root())
		return;
	plant(p);
	fd = saturn_dir_ensure_at(tfd, top, p->name, uid, SATURN_ANY_UID, 0755, &err);
	ck_assert_int_eq(fd, -1);
	has(err.text, p->name);
	if (p->kind != FILE_OTHER && p->kind != HARD_LINK)
		has(err.text, p->says);
	targets_untouched();
	if (p->kind == DIR_OTHER) {
		/* another user's folder keeps its owner and mode */
		char path[256];

		snprintf(path, sizeof(path), "%s/%s", top, p->name);
		ck_assert_int_eq(lstat(path, &st), 0);
		ck_assert_uint_eq(st.st_uid, OTHER_UID);
		ck_assert_uint_eq(st.st_mode & 07777, 0700);
	}
	/* nor opened as an existing folder */
	ck_assert_int_eq(saturn_dir_open_at(tfd, top, p->name, uid, &err), -1);
	has(err.text, p->name);
}
END_TEST

START_TEST(test_ensure_makes_and_hands_over)
{
	saturn_error_t err = {{0}};
	long uid = is_root() ? OTHER_UID : (long)geteuid();
	struct stat st;
	int fd, fd2;

	fd = saturn_dir_ensure_at(tfd, top, "u", uid, SATURN_ANY_UID, 0700, &err);
	ck_assert_msg(fd >= 0, "%s", err.text);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_uint_eq(st.st_uid, uid);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	/* again: the existing folder of uid is fine */
	fd2 = saturn_dir_ensure_at(tfd, top, "u", uid, SATURN_ANY_UID, 0700, &err);
	ck_assert_msg(fd2 >= 0, "%s", err.text);
	close(fd2);
	close(fd);
	/* a folder of ours with a loose mode gets the mode asked for */
	ck_assert_int_eq(mkdirat(tfd, "ours", 01777), 0);
	ck_assert_int_eq(fchmodat(tfd, "ours", 01777, 0), 0);
	fd = saturn_dir_ensure_at(tfd, top, "ours", SATURN_ANY_UID, SATURN_ANY_UID, 0755, &err);
	ck_assert_msg(fd >= 0, "%s", err.text);
	ck_assert_int_eq(fstatat(tfd, "ours", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0755);
	close(fd);
	/* names with a '/' or dots are refused */
	ck_assert_int_eq(saturn_dir_ensure_at(tfd, top, "a/b", uid, -1, 0700, &err), -1);
	ck_assert_int_eq(saturn_dir_ensure_at(tfd, top, "..", uid, -1, 0700, &err), -1);
	ck_assert_int_eq(saturn_name_ok(""), 0);
	ck_assert_int_eq(saturn_name_ok("."), 0);
	ck_assert_int_eq(saturn_name_ok("1000"), 1);
}
END_TEST

START_TEST(test_trusted)
{
	saturn_error_t err = {{0}};
	char link[256];
	int fd;

	ck_assert_int_eq(chmod(top, 0755), 0);
	fd = saturn_dir_open_trusted(top, &err);
	ck_assert_msg(fd >= 0, "%s", err.text);
	close(fd);
	ck_assert_int_eq(chmod(top, 01733), 0);
	ck_assert_int_eq(saturn_dir_open_trusted(top, &err), -1);
	has(err.text, top);
	has(err.text, "writable by group or others");
	has(err.text, "1733");
	ck_assert_int_eq(chmod(top, 0700), 0);
	if (is_root()) {
		ck_assert_int_eq(chown(secret_dir, OTHER_UID, OTHER_UID), 0);
		ck_assert_int_eq(saturn_dir_open_trusted(secret_dir, &err), -1);
		has(err.text, "owned by uid 65534");
		ck_assert_int_eq(chown(secret_dir, 0, 0), 0);
	}
	/* an admin's path may go through a link; what it names is checked */
	snprintf(link, sizeof(link), "%s/l", top);
	ck_assert_int_eq(symlink(secret_dir, link), 0);
	fd = saturn_dir_open_trusted(link, &err);
	ck_assert_msg(fd >= 0, "%s", err.text);
	close(fd);
	ck_assert_int_eq(saturn_dir_open_trusted(secret, &err), -1);
	has(err.text, secret);
}
END_TEST

START_TEST(test_read_ok)
{
	saturn_error_t err = {{0}};
	long owners[2] = {OTHER_UID, (long)geteuid()};
	struct stat st;
	size_t len;
	char *buf;

	ck_assert_int_eq(saturn_file_write_at(tfd, top, "f.json", "{\"a\":1}", 7, SATURN_ANY_UID,
					      SATURN_ANY_UID, 0644, &err), 0);
	buf = saturn_file_read_at(tfd, top, "f.json", owners, 2, 100, &len, &st, &err);
	ck_assert_msg(buf != NULL, "%s", err.text);
	ck_assert_str_eq(buf, "{\"a\":1}");
	ck_assert_uint_eq(len, 7);
	ck_assert(S_ISREG(st.st_mode));
	free(buf);
	/* any owner */
	buf = saturn_file_read_at(tfd, top, "f.json", NULL, 0, 100, &len, NULL, &err);
	ck_assert_ptr_nonnull(buf);
	free(buf);
	/* size cap */
	ck_assert_ptr_null(saturn_file_read_at(tfd, top, "f.json", NULL, 0, 6, &len, NULL, &err));
	has(err.text, "larger than 6 bytes");
	/* missing: ENOENT, named */
	ck_assert_ptr_null(saturn_file_read_at(tfd, top, "none.json", NULL, 0, 6, &len, NULL, &err));
	ck_assert_int_eq(errno, ENOENT);
	has(err.text, "none.json");
	/* another user's file is fine when that user is allowed */
	if (is_root()) {
		ck_assert_int_eq(fchownat(tfd, "f.json", OTHER_UID, OTHER_UID, 0), 0);
		buf = saturn_file_read_at(tfd, top, "f.json", owners, 1, 100, &len, NULL, &err);
		ck_assert_msg(buf != NULL, "%s", err.text);
		free(buf);
		owners[0] = THIRD_UID;
		ck_assert_ptr_null(saturn_file_read_at(tfd, top, "f.json", owners, 1, 100, &len, NULL, &err));
		has(err.text, "owned by uid 65534, expected uid 65533");
	}
}
END_TEST

static int count_entries(void)
{
	DIR *d = opendir(top);
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

START_TEST(test_write_replaces_links)
{
	saturn_error_t err = {{0}};
	long uid = is_root() ? OTHER_UID : (long)geteuid();
	struct stat st;
	char path[256];
	int n0;

	/* links and a FIFO at the name are replaced, never followed */
	plant(&plants[0]);
	plant(&plants[4]);
	n0 = count_entries();
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "fifo" : "link-file";

		ck_assert_int_eq(saturn_file_write_at(tfd, top, name, "new", 3, uid, uid, 0600, &err),
				 0);
		ck_assert_int_eq(fstatat(tfd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
		ck_assert(S_ISREG(st.st_mode));
		ck_assert_uint_eq(st.st_mode & 07777, 0600);
		ck_assert_uint_eq(st.st_uid, uid);
	}
	ck_assert_int_eq(count_entries(), n0); /* no temporary file left */
	targets_untouched();
	/* path form: mode 0644, and a FIFO is refused without blocking */
	snprintf(path, sizeof(path), "%s/p.json", top);
	ck_assert_int_eq(saturn_write_file_atomic(path, "{}", 2, &err), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	snprintf(path, sizeof(path), "%s/fifo2", top);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	{
		size_t len;

		ck_assert_ptr_null(saturn_read_file(path, 100, &len, &err));
		has(err.text, path);
		has(err.text, "FIFO");
	}
}
END_TEST

START_TEST(test_remove)
{
	saturn_error_t err = {{0}};

	plant(&plants[0]);
	ck_assert_int_eq(saturn_file_remove_at(tfd, top, "link-file", &err), 1);
	ck_assert_int_eq(saturn_file_remove_at(tfd, top, "link-file", &err), 0);
	targets_untouched(); /* the link went, not what it named */
	ck_assert_int_eq(saturn_file_remove_at(tfd, top, "secretdir", &err), -1);
	has(err.text, "secretdir");
	ck_assert_int_eq(saturn_file_remove_at(tfd, top, "../x", &err), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("safefile");
	TCase *tc = tcase_create("safefile");
	SRunner *sr;
	int failed;

	signal(SIGALRM, SIG_DFL);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_read_refuses, 0, NPLANTS);
	tcase_add_loop_test(tc, test_ensure_refuses, 0, NPLANTS);
	tcase_add_test(tc, test_ensure_makes_and_hands_over);
	tcase_add_test(tc, test_trusted);
	tcase_add_test(tc, test_read_ok);
	tcase_add_test(tc, test_write_replaces_links);
	tcase_add_test(tc, test_remove);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (!is_root())
		fprintf(stderr, "note: not root: the cases with files of another user were skipped\n");
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
