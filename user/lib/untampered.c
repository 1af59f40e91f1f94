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
#include <stdint.h>
#include <sys/xattr.h>
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
	if (w->uid == 0)
		return false; /* no capability left: what the policy grants, above */
	if (stat(dir, &st))
		return true; /* unknown: the worst */
	if (st.st_uid == w->uid)
		return true; /* its owner may chmod it writable */
	bit = in_groups(w, st.st_gid) ? S_IWGRP : S_IWOTH;
	if (st.st_mode & bit)
		return true;
	/* With an ACL the group bits are its mask: a named entry may grant w's user write. */
	return (st.st_mode & S_IWGRP) && getxattr(dir, "system.posix_acl_access", NULL, 0) > 0;
}

/*
 * The first link on the way to `path` lying in a directory w could change, into `link`:
 * 1; none: 0. A missing entry ends the walk: what is missing is made by the open, which
 * follows no link there. `..` goes up from the directory reached, as the kernel does.
 */
static int untrusted_link(const char *path, const struct path_writer *w, char *link, size_t len)
{
	char rest[2 * PATH_MAX + 2], next[2 * PATH_MAX + 2], cur[PATH_MAX], entry[PATH_MAX];
	char target[PATH_MAX], *p = rest;
	int links = 0;

	if (path[0] == '/')
		cur[0] = '\0';
	else if (!getcwd(cur, sizeof(cur)) || !strcmp(cur, "/"))
		cur[0] = '\0';
	if (snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest))
		return 0; /* the open says ENAMETOOLONG */
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
			    (int)sizeof(entry) ||
		    lstat(entry, &st))
			return 0;
		if (!S_ISLNK(st.st_mode)) {
			if (!S_ISDIR(st.st_mode))
				return 0; /* the object; anything after it fails with ENOTDIR */
			memcpy(cur, entry, strlen(entry) + 1);
			continue;
		}
		if (path_writer_may_change(w, cur[0] ? cur : "/")) {
			snprintf(link, len, "%s", entry);
			return 1;
		}
		ssize_t t = readlink(entry, target, sizeof(target) - 1);

		if (t <= 0 || ++links > 40)
			return 0; /* the open fails on it (ELOOP) */
		target[t] = '\0';
		if (snprintf(next, sizeof(next), "%s/%s", target, p) >= (int)sizeof(next))
			return 0;
		memcpy(rest, next, strlen(next) + 1);
		p = rest;
		if (target[0] == '/')
			cur[0] = '\0';
	}
	return 0;
}

int open_untampered(const char *path, int flags, mode_t mode, const struct path_writer *w,
		    char *why, size_t len)
{
	char link[PATH_MAX];
	struct stat st;
	int fd;

	if (untrusted_link(path, w, link, sizeof(link))) {
		snprintf(
			why, len,
			"%s: it is reached through the link %s, in a directory the sandboxed program "
			"may change: it could have pointed it at a file of root's; name the file "
			"by a path through no such link",
			path, link);
		errno = EPERM;
		return -1;
	}
	/* A final link is followed only when the walk judged it (/dev/stderr): O_NOFOLLOW
	 * otherwise, against one made since. */
	if (lstat(path, &st) || !S_ISLNK(st.st_mode))
		flags |= O_NOFOLLOW;
	fd = open(path, flags | O_CLOEXEC, mode);
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
