/* SPDX-License-Identifier: MIT */
/*
 * Opening a file the user named, as root, at a path a sandboxed program may have changed:
 * see untampered.h. The path is walked entry by entry as the kernel resolves it; each link
 * met is judged by the directory it lies in.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <linux/openat2.h>
#include <unistd.h>

#include "untampered.h"

static bool in_groups(const struct path_writer *w, gid_t g)
{
	if (g == w->gid)
		return true;
	for (size_t i = 0; i < w->n_groups; i++)
		if (w->groups[i] == g)
			return true;
	return false;
}

bool path_writer_may_change(const struct path_writer *w, const char *dir)
{
	struct stat st;
	mode_t bit;

	if (w->may_write && w->may_write(dir, w->arg))
		return true;
	if (w->rules_only)
		return false;
	if (stat(dir, &st))
		return true; /* unknown: the worst */
	if (w->uid == 0)
		/* no capability left: what the policy grants, above, and what every user may
		 * change (a link an earlier root run under a wider policy left in /tmp) */
		return st.st_mode & S_IWOTH;
	if (st.st_uid == w->uid)
		return true; /* its owner may chmod it writable */
	bit = in_groups(w, st.st_gid) ? S_IWGRP : S_IWOTH;
	if (st.st_mode & bit)
		return true;
	/* With an ACL the group bits are its mask: a named entry may grant w's user write. */
	return (st.st_mode & S_IWGRP) && getxattr(dir, "system.posix_acl_access", NULL, 0) > 0;
}

/* untampered.h; `canon` may be NULL with `clen` 0. A FIFO would hang the open, a device
 * would be written: UNTAMPERED_SPECIAL. */
enum untampered_walk walk_untampered(const char *path, const struct path_writer *w, char *bad,
				     size_t len, char *canon, size_t clen)
{
	char rest[2 * PATH_MAX + 2], next[2 * PATH_MAX + 2], cur[PATH_MAX], entry[PATH_MAX];
	char target[PATH_MAX], *p = rest;
	int links = 0;

	snprintf(bad, len, "%s", path);
	cur[0] = '\0';
	if ((path[0] != '/' && (!getcwd(cur, sizeof(cur)) || cur[0] != '/')) ||
	    snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest))
		return UNTAMPERED_UNCHECKED;
	if (!strcmp(cur, "/"))
		cur[0] = '\0';
	while (*p) {
		struct stat st;
		char *name;
		size_t n;

		while (*p == '/')
			p++;
		name = p;
		p += strcspn(p, "/");
		n = (size_t)(p - name);
		if (!n || (n == 1 && name[0] == '.'))
			continue;
		if (n == 2 && name[0] == '.' && name[1] == '.') {
			char *slash = strrchr(cur, '/');

			if (slash)
				*slash = '\0';
			continue;
		}
		if (snprintf(entry, sizeof(entry), "%s/%.*s", cur, (int)n, name) >=
		    (int)sizeof(entry))
			return UNTAMPERED_UNCHECKED;
		if (lstat(entry, &st)) {
			snprintf(canon, clen, "%s%s", entry, p); /* made by the open, or ENOENT */
			return UNTAMPERED_OK;
		}
		if (!S_ISLNK(st.st_mode)) {
			bool final = !p[strspn(p, "/")];

			if (S_ISDIR(st.st_mode)) {
				memcpy(cur, entry, strlen(entry) + 1);
				continue;
			}
			/* the rest kept: a name after a file fails the open with ENOTDIR (found by
			 * a review: `logs/run.jsonl` with logs a link to a file opened the file) */
			snprintf(canon, clen, "%s%s", entry, p); /* "/" alone: ENOTDIR too */
			if (final && !S_ISREG(st.st_mode) &&
			    path_writer_may_change(w, cur[0] ? cur : "/")) {
				snprintf(bad, len, "%s", entry);
				return UNTAMPERED_SPECIAL;
			}
			return UNTAMPERED_OK; /* the object; anything after it fails with ENOTDIR */
		}
		if (path_writer_may_change(w, cur[0] ? cur : "/")) {
			snprintf(bad, len, "%s", entry);
			return UNTAMPERED_LINK;
		}
		ssize_t t = readlink(entry, target, sizeof(target) - 1);

		if (t <= 0 || ++links > 40)
			break; /* the open fails on it (ELOOP) */
		target[t] = '\0';
		if (snprintf(next, sizeof(next), "%s%s", target, p) >= (int)sizeof(next))
			return UNTAMPERED_UNCHECKED;
		memcpy(rest, next, strlen(next) + 1);
		p = rest;
		if (target[0] == '/')
			cur[0] = '\0';
	}
	snprintf(canon, clen, "%s", cur[0] ? cur : "/");
	return UNTAMPERED_OK;
}

/* openat2(2) of `name` below `dirfd` (AT_FDCWD: a canonical path) through no link; before
 * 5.6, O_NOFOLLOW on the last name only. */
static int open_no_links_at(int dirfd, const char *name, int flags, mode_t mode)
{
	struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC),
				.resolve = RESOLVE_NO_SYMLINKS |
					   (dirfd == AT_FDCWD ? 0 : RESOLVE_BENEATH) };
	long fd;

	if (flags & O_CREAT)
		how.mode = mode;
	fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		return openat(dirfd, name, flags | O_CLOEXEC | O_NOFOLLOW, mode);
	return (int)fd;
}

/* untampered.h. A directory swapped for a link since a walk fails with ELOOP. */
int open_no_links(const char *canon, int flags, mode_t mode)
{
	return open_no_links_at(AT_FDCWD, canon, flags, mode);
}

/* untampered.h: a name of the caller's own descriptors (bash's --events >(CMD) is
 * /dev/fd/63): what it reaches, whoever started pysb-bpf opened; nothing found at a path. */
bool own_descriptor_name(const char *path)
{
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/" };

	if (!strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/stderr") ||
	    !strcmp(path, "/dev/stdin"))
		return true;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t n = strlen(dirs[i]);

		if (!strncmp(path, dirs[i], n) && path[n] &&
		    !path[n + strspn(path + n, "0123456789")])
			return true;
	}
	return false;
}

/* File systems whose "regular" files are the kernel's own state (statfs(2) f_type). */
static bool pseudo_fs(long type)
{
	static const long types[] = {
		0x9fa0,	    /* proc */
		0x62656572, /* sysfs */
		0x74726163, /* tracefs */
		0x64626720, /* debugfs */
		0x73636673, /* securityfs */
		0x63677270, /* cgroup2 */
		0x27e0eb,   /* cgroup */
		0xcafe4a11, /* bpf */
		0x62656570, /* configfs */
		0x6165676c, /* pstore */
		0xde5e81e4, /* efivarfs */
		0xf97cff8c, /* selinuxfs */
		0x42494e4d, /* binfmt_misc */
		0x65735543, /* fusectl */
		0x6e667364, /* nfsd */
		0x67596969, /* rpc_pipefs */
		0x5a3c69f0, /* apparmorfs */
		0x1cd1,	    /* devpts */
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (type == types[i])
			return true;
	return false;
}

/* O_PATH descriptor `pfd` (closed here) opened with `flags` if it is a regular file of a
 * real file system (with O_NONBLOCK, a FIFO too: see open_regular_at): through the
 * descriptor, the very inode looked at; -2 if it is anything else (nothing opened); -1
 * with errno. */
static int reopen_regular(int pfd, int flags)
{
	char self[64];
	struct statfs sf;
	struct stat st;
	int fd;

	if (fstat(pfd, &st)) {
		close(pfd);
		return -2;
	}
	if (S_ISLNK(st.st_mode)) { /* O_PATH | O_NOFOLLOW on a link */
		close(pfd);
		errno = ELOOP;
		return -1;
	}
	if (!(S_ISREG(st.st_mode) || (S_ISFIFO(st.st_mode) && (flags & O_NONBLOCK))) ||
	    fstatfs(pfd, &sf) || pseudo_fs((long)sf.f_type)) {
		close(pfd);
		return -2;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, (flags & ~(O_CREAT | O_EXCL)) | O_CLOEXEC | O_NOCTTY);
	close(pfd);
	if (fd >= 0 && (flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); /* open: writes wait */
	return fd;
}

/* untampered.h */
int open_regular_at(int dirfd, const char *name, int flags, mode_t mode)
{
	int pfd = open_no_links_at(dirfd, name, O_PATH | O_NOFOLLOW, 0), fd;

	if (pfd >= 0)
		return reopen_regular(pfd, flags);
	if (errno != ENOENT || !(flags & O_CREAT))
		return -1;
	fd = open_no_links_at(dirfd, name, flags | O_EXCL | O_NOFOLLOW, mode);
	if (fd < 0 && errno == EEXIST) /* made meanwhile: judged as it is */
		return open_regular_at(dirfd, name, flags & ~O_CREAT, mode);
	return fd;
}

/*
 * untampered.h. A link at the end of the path is never followed, whatever the directory
 * it lies in (found by an adversary: a link the program planted under a wider policy,
 * `expose-rw=.`, was followed once the policy was narrowed to `expose-ro=.`, and root's
 * ~/.bashrc filled with event lines; this run's policy cannot say what an earlier one
 * let the program do). Nor is anything but a regular file opened (a FIFO hung the open,
 * a link to /dev/kmsg had root write the stream into the kernel log). The caller's own
 * descriptors are the exception: /dev/stderr, /dev/fd/N.
 */
int open_untampered(const char *path, int flags, mode_t mode, const struct path_writer *w,
		    char *why, size_t len)
{
	char bad[PATH_MAX], canon[PATH_MAX], target[PATH_MAX];
	bool own = own_descriptor_name(path);
	struct stat st;
	ssize_t t;
	int fd;

	/* the caller's own descriptor: not a path the program could have changed (a FIFO in
	 * /tmp given as /dev/fd/3 was refused, found by a review) */
	switch (own ? UNTAMPERED_OK
		    : walk_untampered(path, w, bad, sizeof(bad), canon, sizeof(canon))) {
	case UNTAMPERED_LINK:
		snprintf(why, len,
			 "%s: it is reached through the link %s, in a directory the sandboxed "
			 "program may change: it could have pointed it at a file of root's; name "
			 "the file by a path through no such link",
			 path, bad);
		errno = EPERM;
		return -1;
	case UNTAMPERED_SPECIAL:
		snprintf(why, len,
			 "%s is no regular file (a FIFO or a device), in a directory the sandboxed "
			 "program may change: it could have put it there; remove it, or name "
			 "another file",
			 bad);
		errno = EPERM;
		return -1;
	case UNTAMPERED_UNCHECKED:
		snprintf(why, len,
			 "%s: its path cannot be checked (too long, or no working "
			 "directory); name it by a shorter absolute path",
			 path);
		errno = EPERM;
		return -1;
	case UNTAMPERED_OK:
		break;
	}
	if (!own && !lstat(path, &st) && S_ISLNK(st.st_mode)) {
		t = readlink(path, target, sizeof(target) - 1);
		target[t > 0 ? t : 0] = '\0';
		snprintf(
			why, len,
			"%s: it is a symbolic link (to %s): pysb-bpf opens it as root and follows no "
			"link at the end of a path, which a sandboxed program could have made in "
			"an earlier run, under this policy or a wider one; name the file itself",
			path, target);
		errno = EPERM;
		return -1;
	}
	fd = own ? open(path, flags | O_CLOEXEC, mode)
		 : open_regular_at(AT_FDCWD, canon, flags, mode);
	if (fd == -2) {
		snprintf(why, len,
			 "%s: it is no regular file (a FIFO, a device, a socket or a file of the "
			 "kernel's): pysb-bpf would open it as root; name a regular file, or a "
			 "descriptor of yours (/dev/fd/N; bash: >(COMMAND))",
			 path);
		errno = EPERM;
		return -1;
	}
	if (fd < 0) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_nlink > 1) {
		close(fd);
		snprintf(
			why, len,
			"%s: it has %ju other names (hard links): one could be a file the sandboxed "
			"program chose; name a file of its own",
			path, (uintmax_t)st.st_nlink - 1);
		errno = EMLINK;
		return -1;
	}
	return fd;
}

int open_regular(const char *path, bool nofollow)
{
	int pfd = open(path, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));

	return pfd < 0 ? -1 : reopen_regular(pfd, O_RDONLY);
}
