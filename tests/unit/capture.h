/* SPDX-License-Identifier: MIT */
/* What a call prints, for the unit tests to check: its stderr (and stdout) into a buffer. */
#ifndef PYSB_TEST_CAPTURE_H
#define PYSB_TEST_CAPTURE_H

#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

/* Runs fn(arg) with stderr, and stdout too if `with_stdout`, going to `out`
 * (NUL-terminated); returns what fn returned. */
static inline int capture_output(int (*fn)(void *), void *arg, bool with_stdout, char *out,
				 size_t len)
{
	FILE *f = tmpfile();
	int saved_out = -1, saved_err, ret;
	size_t n;

	assert_non_null(f);
	fflush(stdout);
	fflush(stderr);
	saved_err = dup(2);
	assert_true(saved_err >= 0);
	dup2(fileno(f), 2);
	if (with_stdout) {
		saved_out = dup(1);
		assert_true(saved_out >= 0);
		dup2(fileno(f), 1);
	}
	ret = fn(arg);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_err, 2);
	close(saved_err);
	if (with_stdout) {
		dup2(saved_out, 1);
		close(saved_out);
	}
	rewind(f);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	fclose(f);
	return ret;
}

#endif /* PYSB_TEST_CAPTURE_H */
