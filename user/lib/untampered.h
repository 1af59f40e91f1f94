/* SPDX-License-Identifier: MIT */
/*
 * Files pysb-bpf opens as root for the user (the --events stream, the policy file
 * learning rewrites) at paths a sandboxed program may have changed in an earlier run: a
 * link it planted on the way would make root truncate, write, or read and copy back a
 * file of its choosing (found by an adversary: root's ~/.bashrc truncated and filled with
 * event lines a login shell ran, /etc/shadow copied into the project by learning). A
 * link on the way is followed only where the program could not have made it.
 */
#ifndef PYSB_UNTAMPERED_H
#define PYSB_UNTAMPERED_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Who ran in the sandbox, for what it could have changed. */
struct path_writer {
	uid_t uid; /* the program's user; 0: root, whose reach the policy alone bounds */
	gid_t gid;
	const gid_t *groups; /* its supplementary groups */
	size_t n_groups;
	/* Does the policy let the program write canonical directory `dir`? NULL: nowhere. */
	bool (*may_write)(const char *dir, void *arg);
	void *arg;
	/* Only may_write says what it may change (the compile's checks: any run of the policy,
	 * under whatever user, is bounded by its rules; the mode bits are not asked). */
	bool rules_only;
};

/*
 * Could w have made or replaced an entry of canonical directory `dir`: its mode bits
 * (an ACL's mask where the directory has one) let w's user write it, or the policy does?
 */
bool path_writer_may_change(const struct path_writer *w, const char *dir);

/*
 * The walk of `path` as the kernel resolves it, each link judged by the directory it
 * lies in. UNTAMPERED_LINK: the first link w could have made or re-pointed, in `bad`.
 * UNTAMPERED_SPECIAL: the final object is no regular file or directory (a FIFO, a device,
 * a socket) and w could have put it there, in `bad`. UNTAMPERED_UNCHECKED: the path cannot
 * be walked (too long, no working directory). `canon` (may be NULL): the path with every
 * link resolved, a missing rest as named. A missing entry ends the walk (UNTAMPERED_OK).
 */
enum untampered_walk { UNTAMPERED_OK, UNTAMPERED_LINK, UNTAMPERED_SPECIAL, UNTAMPERED_UNCHECKED };

enum untampered_walk walk_untampered(const char *path, const struct path_writer *w, char *bad,
				     size_t len, char *canon, size_t clen);

/*
 * open(2) of `path` with `flags` (O_CREAT: `mode`): a link to a directory on the way is
 * followed only where w could not have made it; the final name is never a link and must
 * be a regular file of a real file system (with one name: a hard link is refused). The
 * caller's own descriptors (own_descriptor_name: /dev/stderr, /dev/fd/N) are opened as
 * named. The fd, or -1 with errno and `why` (a sentence naming the link or the file, and
 * what to do).
 */
int open_untampered(const char *path, int flags, mode_t mode, const struct path_writer *w,
		    char *why, size_t len);

/* open(2) of canonical `canon` (O_CLOEXEC added) following no link at all, on the way or
 * (unless O_NOFOLLOW) at its end; kernels before 5.6: O_NOFOLLOW on the last name. */
int open_no_links(const char *canon, int flags, mode_t mode);

/*
 * `name` below directory `dirfd` (AT_FDCWD: `name` is a canonical path) opened with
 * `flags` (O_CREAT: `mode`) through no link at all, if it is a regular file of a real file
 * system, or made now; looked at through O_PATH, then opened through that descriptor.
 * With O_NONBLOCK in `flags`, a FIFO too, only if a reader has it open (else ENXIO: the
 * open never waits), and blocking once open. -2: it is something else (nothing opened);
 * -1 with errno (ELOOP: a link, ENXIO: a FIFO nothing reads).
 */
int open_regular_at(int dirfd, const char *name, int flags, mode_t mode);

/* Does `path` name one of the caller's own descriptors (/dev/stdout, /dev/stderr,
 * /dev/stdin, /dev/fd/N, /proc/self/fd/N)? */
bool own_descriptor_name(const char *path);

/*
 * `path` opened for reading if it is a regular file of a real file system; -2 if it is
 * anything else, with nothing opened: a FIFO would hang the open, a device act on it
 * (/dev/watchdog arms the machine's reset), a file of procfs, sysfs, tracefs or debugfs
 * block or hand out the kernel's state (trace_pipe, /proc/kmsg); -1 with errno. With
 * `nofollow` a final link is not followed (-2). Looked at through O_PATH, then opened
 * through that descriptor. For every file pysb-bpf (root) reads where a sandboxed program
 * could have put something (found by adversaries: a program file, .gitmodules and
 * .python-version made a FIFO or a link to /dev/watchdog).
 */
int open_regular(const char *path, bool nofollow);

#endif /* PYSB_UNTAMPERED_H */
