/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the log lines (user/lib/log.c): each is written whole. run's set-up thread
 * logs while the main thread does (user/run/setup.c); a line written in pieces came out as
 * "pysb-bpf: pysb-bpf: sandbox 3: ...", and a test reading the sandbox id from its log
 * found none (CI, stop 34).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"

#include "capture.h"

#define LINES 3000

static void *log_lines(void *arg)
{
	const char *who = arg;
	int i;

	for (i = 0; i < LINES; i++)
		pr_info("%s %d: %s", who, i, "a line long enough to be written in pieces");
	return NULL;
}

static int two_threads(void *arg)
{
	pthread_t a, b;

	(void)arg;
	pthread_create(&a, NULL, log_lines, "thread-a");
	pthread_create(&b, NULL, log_lines, "thread-b");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}

static void test_lines_of_two_threads_never_mixed(void **state)
{
	size_t len = 2 * LINES * 128;
	char *out = malloc(len), *line, *save = NULL;
	int n = 0, saved = log_level;

	(void)state;
	assert_non_null(out);
	log_level = LOG_INFO;
	capture_output(two_threads, NULL, false, out, len);
	log_level = saved;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int i;
		char who[16], rest[64];

		if (sscanf(line, "pysb-bpf: %15s %d: %63[^\n]", who, &i, rest) != 3 ||
		    strcmp(rest, "a line long enough to be written in pieces") ||
		    (strcmp(who, "thread-a") && strcmp(who, "thread-b")))
			fail_msg("line %d mixed: '%s'", n, line);
		n++;
	}
	assert_int_equal(n, 2 * LINES);
	free(out);
}

/* A message quoting what a sandboxed program chose: C0 controls but a tab, DEL, C1
 * controls (U+009B, 8-bit CSI), a raw 0x9b, an overlong form and a cut sequence are
 * written \xNN; other UTF-8 (U+00A0, the euro sign) stays as it is (utf8_printable). */
static void test_printable_escapes_what_a_terminal_would_run(void **state)
{
	char *out = log_printable("a\tb\x1b[2J\x7f\xc2\x9b"
				  "1A\x9b\xc0\xaf\xc2\xa0\xe2\x82\xac\xe2\x82");

	(void)state;
	assert_non_null(out);
	assert_string_equal(out, "a\tb\\x1b[2J\\x7f\\xc2\\x9b"
				 "1A\\x9b\\xc0\\xaf\xc2\xa0\xe2\x82\xac\\xe2\\x82");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_of_two_threads_never_mixed),
		cmocka_unit_test(test_printable_escapes_what_a_terminal_would_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
