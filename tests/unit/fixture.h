/* SPDX-License-Identifier: MIT */
/*
 * Scratch-tree helpers shared by the unit tests. The including file defines the
 * mkdtemp(3) template `tmp` (a char array) before including this header.
 */
#ifndef PYSB_TEST_FIXTURE_H
#define PYSB_TEST_FIXTURE_H

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

#endif /* PYSB_TEST_FIXTURE_H */
