/* SPDX-License-Identifier: MIT */
/*
 * Files pysb-bpf opens as root at paths a sandboxed program may have changed
 * (user/lib/untampered.c): a link in a directory the program's user or its policy may
 * write is never followed (the final name, or one on the way, relative or absolute); a
 * link where it could not have made it is (/dev/stderr); a regular file with other names
 * is refused. Run as root (the scratch tree's owners are set with chown).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "untampered.h"

#define NOBODY 65534

static char S[64]; /* the scratch tree: S/user is the program's user's, S/root root's */
static char why[8192];

static const char *at(const char *rel)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", S, rel);
	return buf[i];
}

static int setup(void **state)
{
	(void)state;
	snprintf(S, sizeof(S), "/tmp/pysb-untampered-XXXXXX");
	if (!mkdtemp(S) || chmod(S, 0755) || mkdir(at("user"), 0755) ||
	    chown(at("user"), NOBODY, NOBODY) || mkdir(at("root"), 0755))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", S);
	return system(cmd);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char policy_dir[256]; /* the one directory the "policy" lets root's program write */
static bool may_write(const char *dir, void *arg)
{
	(void)arg;
	return !strcmp(dir, policy_dir);
}

static int try_open(const char *path, const struct path_writer *w)
{
	int fd = open_untampered(path, O_WRONLY | O_CREAT, 0644, w, why, sizeof(why));

	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 0 : errno;
}

static void test_links_where_the_program_could_make_them_refused(void **state)
{
	struct path_writer nobody = { .uid = NOBODY, .gid = NOBODY };
	char cwd[256];

	(void)state;
	put(at("root/secret"), "s\n");
	/* the final name, planted in the user's directory */
	assert_int_equal(symlink(at("root/secret"), at("user/ev")), 0);
	assert_int_equal(try_open(at("user/ev"), &nobody), EPERM);
	assert_non_null(strstr(why, at("user/ev")));
	/* a directory on the way replaced by a link */
	assert_int_equal(symlink(at("root"), at("user/logs")), 0);
	assert_int_equal(try_open(at("user/logs/new.jsonl"), &nobody), EPERM);
	assert_int_equal(access(at("root/new.jsonl"), F_OK), -1);
	/* the same, named relative to the working directory, and after a `..` */
	assert_true(getcwd(cwd, sizeof(cwd)) != NULL);
	assert_int_equal(chdir(at("user")), 0);
	assert_int_equal(try_open("ev", &nobody), EPERM);
	assert_int_equal(try_open("../user/logs/x", &nobody), EPERM);
	assert_int_equal(chdir(cwd), 0);
	/* a FIFO (or a device) the program could have put in place of the file: the open
	 * would hang (or write the device) */
	assert_int_equal(mkfifo(at("user/fifo"), 0644), 0);
	assert_int_equal(try_open(at("user/fifo"), &nobody), EPERM);
	assert_non_null(strstr(why, "no regular file"));
	/* the secret untouched */
	assert_int_equal(access(at("root/x"), F_OK), -1);
	{
		struct stat st;

		assert_int_equal(stat(at("root/secret"), &st), 0);
		assert_int_equal(st.st_size, 2);
	}
}

static void test_links_out_of_reach_followed_files_opened(void **state)
{
	struct path_writer nobody = { .uid = NOBODY, .gid = NOBODY };

	(void)state;
	/* a link at the end of the path is never followed, even in root's directory: this
	 * run's policy does not say what an earlier one let the program write there */
	put(at("root/target"), "");
	assert_int_equal(symlink(at("root/target"), at("root/l")), 0);
	assert_int_equal(try_open(at("root/l"), &nobody), EPERM);
	assert_non_null(strstr(why, "symbolic link"));
	/* the caller's own descriptors are, whatever they reach (a FIFO in a directory
	 * everyone may write: not a path the program named) */
	{
		char name[64];
		int fds[2];

		assert_int_equal(mkfifo(at("pubfifo"), 0666), 0);
		assert_int_equal(pipe(fds), 0);
		snprintf(name, sizeof(name), "/dev/fd/%d", fds[1]);
		assert_int_equal(try_open(name, &nobody), 0);
		snprintf(name, sizeof(name), "/proc/self/fd/%d", fds[1]);
		assert_int_equal(try_open(name, &nobody), 0);
		close(fds[0]);
		close(fds[1]);
	}
	/* more path after a link to a file: never that file (found by a review: logs/x
	 * with logs a link to root's file opened the file) */
	assert_int_equal(symlink(at("root/target"), at("root/flink")), 0);
	assert_int_not_equal(try_open(at("root/flink/run.jsonl"), &nobody), 0);
	assert_int_not_equal(try_open(at("root/flink/"), &nobody), 0);
	assert_int_not_equal(try_open(at("root/flink/."), &nobody), 0);
	put(at("root/plainfile"), "p\n");
	assert_int_not_equal(try_open(at("root/plainfile/x/y"), &nobody), 0);
	/* a directory link out of the program's reach is followed */
	assert_int_equal(symlink(at("user"), at("root/userdir")), 0);
	assert_int_equal(try_open(at("root/userdir/plain.jsonl"), &nobody), 0); /* created */
	assert_int_equal(access(at("user/plain.jsonl"), F_OK), 0);
	/* group-writable by a group the user is not in, no ACL: out of its reach */
	assert_int_equal(mkdir(at("grp"), 0775), 0);
	assert_int_equal(chown(at("grp"), 0, 4242), 0);
	assert_int_equal(chmod(at("grp"), 0775), 0);
	assert_int_equal(symlink(at("root"), at("grp/d")), 0);
	assert_int_equal(try_open(at("grp/d/gx"), &nobody), 0);
	assert_int_equal(access(at("root/gx"), F_OK), 0);
	/* ... in it: refused */
	nobody.groups = (gid_t[]){ 4242 };
	nobody.n_groups = 1;
	assert_int_equal(try_open(at("grp/d/gy"), &nobody), EPERM);
	assert_int_equal(access(at("root/gy"), F_OK), -1);
}

static void test_root_judged_by_its_policy_and_hard_links_refused(void **state)
{
	struct path_writer root = { .uid = 0, .may_write = may_write };

	(void)state;
	/* A link left by a run under a wider policy (expose-rw= of this directory) in a
	 * directory the narrowed policy no longer lets the program write (found by an
	 * adversary: root's ~/.bashrc filled with event lines): refused all the same. */
	put(at("root/t2"), "t2\n");
	assert_int_equal(symlink(at("root/t2"), at("root/l2")), 0);
	assert_int_equal(try_open(at("root/l2"), &root), EPERM);
	assert_non_null(strstr(why, "symbolic link"));
	/* a directory link where the policy lets the program write: refused by the policy */
	assert_int_equal(symlink(at("user"), at("root/dl")), 0);
	assert_int_equal(try_open(at("root/dl/by-policy"), &root), 0); /* no rule there */
	snprintf(policy_dir, sizeof(policy_dir), "%s", at("root"));
	assert_int_equal(try_open(at("root/dl/by-policy2"), &root), EPERM);
	assert_non_null(strstr(why, "reached through the link"));
	assert_int_equal(access(at("user/by-policy2"), F_OK), -1);
	policy_dir[0] = '\0';
	/* a world-writable directory: an earlier run under a wider policy could have made it */
	assert_int_equal(mkdir(at("pub"), 0777), 0);
	assert_int_equal(chmod(at("pub"), 01777), 0);
	assert_int_equal(symlink(at("root"), at("pub/d")), 0);
	assert_int_equal(try_open(at("pub/d/new"), &root), EPERM);
	/* a FIFO where the program may not write now: no hang, refused */
	assert_int_equal(mkfifo(at("root/ff"), 0644), 0);
	assert_int_equal(try_open(at("root/ff"), &root), EPERM);
	assert_non_null(strstr(why, "no regular file"));
	/* a regular file with another name */
	put(at("root/h1"), "");
	assert_int_equal(link(at("root/h1"), at("root/h2")), 0);
	assert_int_equal(try_open(at("root/h2"), &root), EMLINK);
	assert_non_null(strstr(why, "hard links"));
	/* the files reached through none of these untouched */
	{
		struct stat st;

		assert_int_equal(stat(at("root/t2"), &st), 0);
		assert_int_equal(st.st_size, 3);
		assert_int_equal(access(at("root/new"), F_OK), -1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_links_where_the_program_could_make_them_refused),
		cmocka_unit_test(test_links_out_of_reach_followed_files_opened),
		cmocka_unit_test(test_root_judged_by_its_policy_and_hard_links_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
