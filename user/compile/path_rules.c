/* SPDX-License-Identifier: MIT */
/*
 * The compiled rules by path: compiled_access(c, path, explicit_only) for many paths, the
 * policy's own rules for each implicit path while only implicit entries are added
 * (user/compile/compile.c), every rule for each mount point (compile_mounts.c). The scan
 * asked every entry for every path (a 10,000-rule policy: 49 M instructions, a fifth of
 * its compile); here each directory on the path's way is one binary search.
 */
#include <stdlib.h>
#include <string.h>

#include "compile.h"

/* Below this many entries the scan is as cheap as sorting them. */
#define RULE_INDEX_MIN 32

static int by_path_then_index(const void *a, const void *b, void *arg)
{
	const struct compiled *c = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int d = strcmp(c->files[i].path, c->files[j].path);

	return d ? d : (i > j) - (i < j);
}

int path_rules_build(struct path_rules *x, const struct compiled *c, bool explicit_only)
{
	*x = (struct path_rules){ .c = c, .explicit_only = explicit_only };
	if (c->n_files < RULE_INDEX_MIN)
		return 0;
	x->by_path = malloc(c->n_files * sizeof(*x->by_path));
	if (!x->by_path)
		return -1;
	for (size_t i = 0; i < c->n_files; i++)
		if (!explicit_only || !c->files[i].implicit)
			x->by_path[x->n++] = i;
	qsort_r(x->by_path, x->n, sizeof(*x->by_path), by_path_then_index, (void *)c);
	return 0;
}

/* An entry's path against the first `len` bytes of `dir`. */
static int cmp_dir(const char *path, const char *dir, size_t len)
{
	int d = strncmp(path, dir, len);

	return d ? d : path[len] != '\0';
}

/* The last entry (the highest index: compiled_access's answer among equals) whose path is
 * dir[0..len), or -1; unless `self` (dir is the path asked), not one for an inode alone
 * (PYSB_ACC_ALONE: it grants nothing below it). */
static long last_named(const struct path_rules *x, const char *dir, size_t len, bool self)
{
	size_t lo = 0, hi = x->n;

	while (lo < hi) { /* the first entry past the ones named so */
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_dir(x->c->files[x->by_path[mid]].path, dir, len) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo && !cmp_dir(x->c->files[x->by_path[lo - 1]].path, dir, len); lo--)
		if (self || !(x->c->files[x->by_path[lo - 1]].access & PYSB_ACC_ALONE))
			return (long)x->by_path[lo - 1];
	return -1;
}

uint32_t path_rules_access(const struct path_rules *x, const char *path)
{
	size_t len = strlen(path);
	long i;

	if (!x->by_path)
		return compiled_access(x->c, path, x->explicit_only);
	/* policy_path_under's prefixes, longest first: the path itself, then each prefix
	 * that a '/' follows; "/" covers every path, "" every absolute one. */
	for (size_t k = len; k >= 2; k--)
		if ((path[k] == '\0' || path[k] == '/') &&
		    (i = last_named(x, path, k, k == len)) >= 0)
			return x->c->files[i].access;
	/* length 1: "/", and the path's first byte when a '/' follows it (a relative path):
	 * the later of the two, as the scan would */
	i = last_named(x, "/", 1, !strcmp(path, "/"));
	if (len >= 1 && (path[1] == '/' || path[1] == '\0')) {
		long j = last_named(x, path, 1, len == 1);

		i = j > i ? j : i;
	}
	if (i >= 0)
		return x->c->files[i].access;
	if ((path[0] == '\0' || path[0] == '/') && (i = last_named(x, "", 0, len == 0)) >= 0)
		return x->c->files[i].access;
	return 0;
}

void path_rules_free(struct path_rules *x)
{
	free(x->by_path);
	*x = (struct path_rules){ 0 };
}
