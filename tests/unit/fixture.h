/* SPDX-License-Identifier: MIT */
/*
 * Scratch-tree helpers shared by the unit tests. The including file defines the
 * mkdtemp(3) template `tmp` (a char array) before including this header.
 */
#ifndef PYSB_TEST_FIXTURE_H
#define PYSB_TEST_FIXTURE_H

#include <ftw.h>
#include <limits.h>
#include <stdio.h>

/* tmp/rel, in one of four rotating buffers (several may be used in one call). */
static inline char *tpath(const char *rel)
{
	static char buf[4][PATH_MAX];
	static unsigned i;
	char *b = buf[i++ % 4];

	snprintf(b, PATH_MAX, "%s/%s", tmp, rel);
	return b;
}

/* Writes `text` to tmp/rel. */
static inline void put(const char *rel, const char *text)
{
	FILE *f = fopen(tpath(rel), "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static inline int fixture_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* cmocka group teardown: removes the scratch tree. */
static inline int group_teardown(void **state)
{
	(void)state;
	return nftw(tmp, fixture_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif /* PYSB_TEST_FIXTURE_H */
