/* SPDX-License-Identifier: MIT */
/* pysb-bpf diff (user/policy/diff.c): normalised rules, what a candidate adds and removes. */
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
#include <jansson.h>

static char tmp[] = "/tmp/pysb-diff-XXXXXX";

#include "diff.h"
#include "fixture.h"
#include "policy.h"

static struct policy *parse(const char *rel)
{
	struct diag_list diag = { 0 };
	struct policy *p = NULL;

	if (policy_parse_file(tpath(rel), (char *[]){ "HOME=/root", NULL }, tmp, NULL, 0, &p,
			      &diag))
		p = NULL;
	diag_free(&diag);
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
	put("cur",
	    "expose-ro=./data\nnet=ALLOW|tcp|10.0.0.0/8|443|OUT\npython-api=ALLOW:process-exec\n");
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

/* diff --json: the same facts as the text, each rule with its file and line. */
static void test_diff_json_same_facts_as_text(void **state)
{
	struct policy *pa, *pb;
	char *buf = NULL, *text;
	size_t len = 0;
	json_t *j, *added, *removed;
	FILE *f;
	int n, nt;

	(void)state;
	mkdir(tpath("d2"), 0755);
	put("j-cur", "expose-ro=./d2\nnet=ALLOW|tcp|10.0.0.0/8|443|OUT\n");
	put("j-cand", "# comment\nexpose-rw=./d2\nnet=ALLOW|tcp|10.0.0.0/8|443|OUT\n"
		      "net=ALLOW|udp|*|53|OUT\n");
	pa = parse("j-cur");
	pb = parse("j-cand");
	f = open_memstream(&buf, &len);
	n = policy_diff_json(f, pa, pb);
	fclose(f);
	policy_free(pa);
	policy_free(pb);
	text = diff("j-cur", "j-cand", &nt);
	assert_int_equal(n, 3);
	assert_int_equal(n, nt);
	j = json_loads(buf, 0, NULL);
	assert_non_null(j);
	added = json_object_get(j, "added");
	removed = json_object_get(j, "removed");
	assert_int_equal(json_array_size(added), 2);
	assert_int_equal(json_array_size(removed), 1);
	/* every rule of the text, with its file:line, is in the JSON */
	for (size_t i = 0; i < 3; i++) {
		json_t *r = i < 2 ? json_array_get(added, i) : json_array_get(removed, 0);
		char line[8192];

		snprintf(line, sizeof(line), "%c %s  (%s:%d)\n", i < 2 ? '+' : '-',
			 json_string_value(json_object_get(r, "rule")),
			 json_string_value(json_object_get(r, "file")),
			 (int)json_integer_value(json_object_get(r, "line")));
		assert_non_null(strstr(text, line));
	}
	assert_string_equal(json_string_value(json_object_get(json_array_get(added, 1), "rule")),
			    "net=ALLOW|UDP|*|53|OUT");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(added, 0), "line")), 2);
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(j, "summary"), "added")), 2);
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(j, "summary"), "removed")), 1);
	json_decref(j);
	free(buf);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_names_additions_and_removals),
		cmocka_unit_test(test_diff_json_same_facts_as_text),
	};

	if (!mkdtemp(tmp))
		return 1;
	return cmocka_run_group_tests_name("diff", tests, NULL, group_teardown);
}
