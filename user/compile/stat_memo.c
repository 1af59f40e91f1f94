/* SPDX-License-Identifier: MIT */
/*
 * stat(2), lstat(2) and statfs(2) answers kept for the length of one policy_compile: the
 * implicit paths and the links along them ask about the same directories again and again
 * (/etc, /usr, /usr/lib for each of their entries), ~170 calls for `run -- /bin/true`, half
 * of them repeats; each costs a system call and a pass through the file hooks. Outside a
 * compile (memo_begin .. memo_end) every call goes to the kernel. No threads share it.
 * realpath(3) too: it readlinks every component of every path, and the implicit paths
 * share their directories (~170 readlink(2) for `run -- python3 -c pass`).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "compile.h"

enum memo_kind { MEMO_STAT, MEMO_LSTAT, MEMO_STATFS, MEMO_REALPATH };

struct memo_entry {
	char *path;    /* NULL: empty slot */
	uint64_t hash; /* of path and kind: compared before the strings, kept for grow() */
	enum memo_kind kind;
	int err; /* errno of the call, 0 when it succeeded */
	struct stat st;
	long f_type;
	char *canon; /* MEMO_REALPATH: the answer */
};

static struct memo {
	struct memo_entry *v;
	size_t size, n; /* size: a power of two, at most half full */
} * memo;

void memo_begin(void)
{
	memo_end();
	memo = calloc(1, sizeof(*memo));
}

void memo_end(void)
{
	if (!memo)
		return;
	for (size_t i = 0; i < memo->size; i++) {
		free(memo->v[i].path);
		free(memo->v[i].canon);
	}
	free(memo->v);
	free(memo);
	memo = NULL;
}

static uint64_t hash_of(const char *path, enum memo_kind kind)
{
	uint64_t h = 0xcbf29ce484222325ull ^ kind;

	for (const char *p = path; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	return h;
}

static size_t slot_of(const struct memo_entry *v, size_t size, const char *path, uint64_t h,
		      enum memo_kind kind)
{
	for (size_t i = (size_t)h & (size - 1);; i = (i + 1) & (size - 1))
		if (!v[i].path || (v[i].hash == h && v[i].kind == kind && !strcmp(v[i].path, path)))
			return i;
}

static int grow(void)
{
	size_t size = memo->size ? memo->size * 2 : 256;
	struct memo_entry *v = calloc(size, sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; i < memo->size; i++)
		if (memo->v[i].path)
			v[slot_of(v, size, memo->v[i].path, memo->v[i].hash, memo->v[i].kind)] =
				memo->v[i];
	free(memo->v);
	memo->v = v;
	memo->size = size;
	return 0;
}

/* Asks the kernel about (kind, path), into e. */
static void ask(struct memo_entry *e, const char *path, enum memo_kind kind)
{
	struct statfs sfs;

	e->kind = kind;
	if (kind == MEMO_STATFS) {
		e->err = statfs(path, &sfs) ? errno : 0;
		e->f_type = e->err ? 0 : (long)sfs.f_type;
	} else {
		e->err = (kind == MEMO_STAT ? stat(path, &e->st) : lstat(path, &e->st)) ? errno : 0;
	}
}

/* The kept answer to (kind, path), asked now if it is not there; without a memo (or out
 * of memory), asked into `scratch` and not kept. */
static const struct memo_entry *lookup(const char *path, enum memo_kind kind,
				       struct memo_entry *scratch)
{
	struct memo_entry *e;
	uint64_t h;

	if (!memo || (2 * (memo->n + 1) > memo->size && grow()))
		goto unkept;
	h = hash_of(path, kind);
	e = &memo->v[slot_of(memo->v, memo->size, path, h, kind)];
	if (e->path)
		return e;
	e->path = strdup(path);
	if (!e->path)
		goto unkept;
	e->hash = h;
	ask(e, path, kind);
	memo->n++;
	return e;
unkept:
	ask(scratch, path, kind);
	return scratch;
}

static int answer(const struct memo_entry *e, struct stat *st)
{
	if (e->err) {
		errno = e->err;
		return -1;
	}
	if (e->kind == MEMO_STATFS)
		return 0;
	*st = e->st;
	return 0;
}

/* A path that is no link is lstat'ed, its answer kept for memo_lstat too: the compile
 * stats each rule's path, then walks it (walk_keep) with lstat. */
int memo_stat(const char *path, struct stat *st)
{
	struct memo_entry scratch;
	const struct memo_entry *e = lookup(path, MEMO_LSTAT, &scratch);

	if (!e->err && S_ISLNK(e->st.st_mode))
		e = lookup(path, MEMO_STAT, &scratch);
	return answer(e, st);
}

int memo_lstat(const char *path, struct stat *st)
{
	struct memo_entry scratch;

	return answer(lookup(path, MEMO_LSTAT, &scratch), st);
}

int memo_statfs_type(const char *path, long *f_type)
{
	struct memo_entry scratch;
	const struct memo_entry *e = lookup(path, MEMO_STATFS, &scratch);

	if (answer(e, NULL))
		return -1;
	*f_type = e->f_type;
	return 0;
}

/* An absolute path realpath(3) would only have to follow links in: no ".", "..", empty
 * component or trailing slash. */
static bool plain_abs(const char *path)
{
	if (path[0] != '/' || !path[1])
		return false;
	for (const char *p = path; *p; p++)
		if (*p == '/' && (p[1] == '/' || !p[1] || (p[1] == '.' && (!p[2] || p[2] == '/')) ||
				  (p[1] == '.' && p[2] == '.' && (!p[3] || p[3] == '/'))))
			return false;
	return true;
}

/* realpath(3) of plain absolute `path` into out: the parent's (kept), then the last name
 * when lstat(2) says it is no link; a link goes to realpath(3). 0 or an errno. */
static int resolve(const char *path, char *out)
{
	char parent[PATH_MAX], canon[PATH_MAX];
	const char *name = strrchr(path, '/') + 1;
	struct stat st;

	if (name - path >= PATH_MAX)
		return ENAMETOOLONG;
	memcpy(parent, path, (size_t)(name - path));
	parent[name - path > 1 ? name - path - 1 : 1] = '\0';
	if (strcmp(parent, "/") && !memo_realpath(parent, canon))
		return errno;
	if (memo_lstat(path, &st))
		return errno;
	if (S_ISLNK(st.st_mode))
		return realpath(path, out) ? 0 : errno;
	if (snprintf(out, PATH_MAX, "%s/%s", strcmp(parent, "/") ? canon : "", name) >= PATH_MAX)
		return ENAMETOOLONG;
	return 0;
}

/* Keeps the answer to `path`: `canon`, or errno `err` (canon NULL); out of memory, not
 * kept. */
static void keep_realpath(const char *path, const char *canon, int err)
{
	uint64_t h = hash_of(path, MEMO_REALPATH);
	struct memo_entry *e;

	if (2 * (memo->n + 1) > memo->size && grow())
		return;
	e = &memo->v[slot_of(memo->v, memo->size, path, h, MEMO_REALPATH)];
	e->path = strdup(path);
	e->hash = h;
	e->canon = canon ? strdup(canon) : NULL;
	if (!e->path || (canon && !e->canon)) {
		free(e->path);
		free(e->canon);
		*e = (struct memo_entry){ 0 };
		return;
	}
	e->kind = MEMO_REALPATH;
	e->err = err;
	memo->n++;
}

char *memo_realpath(const char *path, char *out)
{
	const struct memo_entry *e;
	int err;

	if (!memo || !plain_abs(path) || (2 * (memo->n + 1) > memo->size && grow()))
		return realpath(path, out);
	e = &memo->v[slot_of(memo->v, memo->size, path, hash_of(path, MEMO_REALPATH),
			     MEMO_REALPATH)];
	if (e->path) {
		err = e->err;
		if (!err)
			strcpy(out, e->canon);
	} else {
		err = resolve(path, out); /* may grow the memo: keep_realpath finds the slot */
		keep_realpath(path, err ? NULL : out, err);
	}
	if (err) {
		errno = err;
		return NULL;
	}
	return out;
}
