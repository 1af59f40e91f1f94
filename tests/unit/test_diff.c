// SPDX-License-Identifier: MIT
/* pysb-bpf diff (user/diff.c): normalised rules, what a candidate adds and removes. */
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

static char tmp[] = "/tmp/pysb-diff-XXXXXX";

#include "diff.h"
#include "fixture.h"
#include "policy.h"

static struct policy *parse(const char *rel)
{
	struct policy_diag diag = { 0 };
	struct policy *p = NULL;

	if (policy_parse_file(tpath(rel), (char *[]){ "HOME=/root", NULL }, tmp, NULL, 0, &p,
			      &diag))
		p = NULL;
	policy_diag_free(&diag);
	assert_non_null(p);
	return p;
}

static char *diff(const char *a, const char *b, int *n)
{
	struct policy *pa = parse(a), *pb = parse(b);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*n = policy_diff_print(f, pa, pb);
	fclose(f);
	policy_free(pa);
	policy_free(pb);
	return buf;
}

static void test_diff_names_additions_and_removals(void **state)
{
	char *out;
	int n;

	(void)state;
	assert_int_equal(mkdir(tpath("data"), 0755), 0);
	put("cur", "expose-ro=./data\nnet=ALLOW|tcp|10.0.0.0/8|443|OUT\npython-api=ALLOW:process-exec\n");
	/* the same rules, spelt otherwise: no difference */
	put("same", "# other spelling\nexpose-ro=data/\nnet=ALLOW|TCP|10.0.0.0/8|443|OUT\n"
		    "python-api=ALLOW:process-exec\n");
	put("cand", "expose-rw=./data\nnet=ALLOW|tcp|10.0.0.0/8|443|OUT\nnet=ALLOW|udp|*|53|OUT\n"
		    "env=MODE=${MODE}\n");
	out = diff("cur", "same", &n);
	assert_int_equal(n, 0);
	assert_string_equal(out, "0 rules added, 0 removed\n");
	free(out);
	out = diff("cur", "cand", &n);
	assert_int_equal(n, 5);
	assert_non_null(strstr(out, "+ expose-rw="));
	assert_non_null(strstr(out, "/data  ("));
	assert_non_null(strstr(out, "cand:1)\n"));
	assert_non_null(strstr(out, "+ net=ALLOW|UDP|*|53|OUT  ("));
	assert_non_null(strstr(out, "+ env=MODE=${MODE}  ("));
	assert_non_null(strstr(out, "- expose-ro="));
	assert_non_null(strstr(out, "- python-api=ALLOW:process-exec  ("));
	assert_non_null(strstr(out, "3 rules added, 2 removed\n"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_names_additions_and_removals),
	};

	if (!mkdtemp(tmp))
		return 1;
	return cmocka_run_group_tests_name("diff", tests, NULL, group_teardown);
}
