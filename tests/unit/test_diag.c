/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the diagnostics channel (user/lib/diag.c): records with their file, line,
 * column, message and hint; the two text forms exactly as the tool always printed them
 * (the parser's "FILE:LINE:COL: error: MSG", the compiler's "pysb-bpf: error: FILE:LINE:COL:
 * MSG"); warnings before errors; a NULL list printing at once, as pr_err/pr_warn did; and
 * the parser and the compiler reporting into one caller-owned list, nothing on stderr.
 */
#include <netdb.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compile.h"
#include "diag.h"
#include "log.h"
#include "policy.h"

#include "capture.h"

static char *envp[] = { "LANG=C.UTF-8", NULL };

/* What diag_print writes for l. */
static char *printed(const struct diag_list *l)
{
	static char buf[4096];
	FILE *f = tmpfile();
	size_t n;

	assert_non_null(f);
	diag_print(f, l);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_records_keep_their_parts(void **state)
{
	struct diag_list l = { 0 };

	(void)state;
	assert_int_equal(diag_add(&l, DIAG_ERROR, (struct diag_at){ "p", 3, 7 }, "do this",
				  "bad %s", "thing"),
			 -1);
	assert_int_equal(diag_add(&l, DIAG_WARNING, (struct diag_at){ "q", 4, 0 }, NULL, "odd"), 0);
	assert_int_equal(l.n_errors, 1);
	assert_int_equal(l.n_warnings, 1);
	assert_string_equal(l.errors[0].file, "p");
	assert_int_equal(l.errors[0].line, 3);
	assert_int_equal(l.errors[0].col, 7);
	assert_string_equal(l.errors[0].msg, "bad thing");
	assert_string_equal(l.errors[0].hint, "do this");
	assert_null(l.errors[0].text);
	assert_true(l.errors[0].tool_form);
	assert_string_equal(l.warnings[0].file, "q");
	assert_null(l.warnings[0].hint);
	/* many records: the list grows, each kept */
	for (int i = 0; i < 100; i++)
		diag_add(&l, DIAG_ERROR, (struct diag_at){ 0 }, NULL, "e%d", i);
	assert_int_equal(l.n_errors, 101);
	assert_string_equal(l.errors[100].msg, "e99");
	diag_free(&l);
	assert_int_equal(l.n_errors, 0);
	assert_null(l.errors);
}

static void test_text_forms(void **state)
{
	struct diag_list l = { 0 };
	struct diag *d;

	(void)state;
	/* the compiler's form: the tool's prefix, then as much location as is known */
	diag_add(&l, DIAG_ERROR, (struct diag_at){ "f", 1, 2 }, "fix it", "m1");
	diag_add(&l, DIAG_ERROR, (struct diag_at){ "f", 1, 0 }, NULL, "m2");
	diag_add(&l, DIAG_ERROR, (struct diag_at){ .file = "f" }, NULL, "m3");
	diag_add(&l, DIAG_ERROR, (struct diag_at){ 0 }, NULL, "m4");
	/* the parser's form: location first, the offending text under it */
	d = diag_push(&l, DIAG_WARNING);
	*d = (struct diag){ .file = strdup("g"),
			    .line = 5,
			    .col = 9,
			    .msg = strdup("w1"),
			    .text = strdup("net=x") };
	d = diag_push(&l, DIAG_ERROR);
	*d = (struct diag){ .file = strdup("g"), .msg = strdup("m5") };
	d = diag_push(&l, DIAG_ERROR); /* memory ran out making it */
	assert_string_equal(printed(&l), "g:5:9: warning: w1\n"
					 "    net=x\n"
					 "pysb-bpf: error: f:1:2: m1; fix it\n"
					 "pysb-bpf: error: f:1: m2\n"
					 "pysb-bpf: error: f: m3\n"
					 "pysb-bpf: error: m4\n"
					 "g: error: m5\n"
					 "pysb-bpf: error: out of memory\n");
	diag_free(&l);
}

static int add_without_list(void *arg)
{
	(void)arg;
	diag_add(NULL, DIAG_WARNING, (struct diag_at){ "f", 2, 3 }, "h", "w");
	return diag_add(NULL, DIAG_ERROR, (struct diag_at){ 0 }, NULL, "e");
}

static void test_no_list_prints_at_once(void **state)
{
	char out[512];
	int saved = log_level;

	(void)state;
	assert_int_equal(capture_output(add_without_list, NULL, false, out, sizeof(out)), -1);
	assert_string_equal(out, "pysb-bpf: warning: f:2:3: w; h\npysb-bpf: error: e\n");
	/* quiet: the errors only, as pr_warn / pr_err */
	log_level = LOG_QUIET;
	capture_output(add_without_list, NULL, false, out, sizeof(out));
	log_level = saved;
	assert_string_equal(out, "pysb-bpf: error: e\n");
}

static int no_such_host(const char *name, const struct addrinfo *hints, struct addrinfo **res)
{
	(void)name, (void)hints, (void)res;
	return EAI_NONAME;
}

struct compile_run {
	const char *text;
	struct diag_list *diag;
	int ret;
};

static int parse_compile(void *arg)
{
	struct compile_run *cr = arg;
	struct policy *p = NULL;
	struct compiled c;

	if (policy_parse_buffer("t.pysb", cr->text, strlen(cr->text), envp, "/", &p, cr->diag))
		return -2;
	cr->ret = policy_compile(
		p, &(struct compile_opts){ .resolve = no_such_host, .diag = cr->diag }, &c);
	if (!cr->ret)
		compiled_free(&c);
	policy_free(p);
	return cr->ret;
}

static const char TWO_BAD[] = "expose-ro=/,/\n"
			      "net=ALLOW|tcp|nowhere.invalid|443|OUT\n"
			      "ignore=a/b\n";

static void test_parser_and_compiler_into_one_list(void **state)
{
	struct diag_list l = { 0 };
	struct compile_run cr = { .text = TWO_BAD, .diag = &l };
	char err[4096];
	const struct diag *w, *e;

	(void)state;
	/* into the list: nothing on stderr */
	assert_int_equal(capture_output(parse_compile, &cr, false, err, sizeof(err)), -1);
	assert_string_equal(err, "");
	assert_int_equal(l.n_errors, 1);
	e = &l.errors[0];
	assert_string_equal(e->file, "t.pysb");
	assert_int_equal(e->line, 3);
	assert_int_equal(e->col, 8);
	assert_string_equal(e->msg, "ignore=a/b: a relative pattern is matched against each name "
				    "and cannot hold a '/'");
	assert_string_equal(e->hint, "write it as an absolute path");
	/* the parser's warning, then the compiler's (parse order) */
	assert_int_equal(l.n_warnings, 2);
	w = &l.warnings[0];
	assert_false(w->tool_form);
	assert_int_equal(w->line, 1);
	assert_string_equal(w->text, "expose-ro=/,/");
	assert_int_equal(w->col, 11);
	w = &l.warnings[1];
	assert_true(w->tool_form);
	assert_int_equal(w->line, 2);
	assert_string_equal(w->hint, "rule dropped");
	/* rendered, the same bytes as the compiler's pr_err/pr_warn printed them */
	assert_non_null(strstr(
		printed(&l), "pysb-bpf: warning: t.pysb:2: net=ALLOW|tcp|nowhere.invalid|443|OUT: "
			     "cannot resolve host name 'nowhere.invalid' (Name or service not "
			     "known); rule dropped\n"));
	assert_non_null(strstr(printed(&l),
			       "pysb-bpf: error: t.pysb:3:8: ignore=a/b: a relative pattern is "
			       "matched against each name and cannot hold a '/'; write it as an "
			       "absolute path\n"));
	diag_free(&l);
}

static int compile_no_list(void *arg)
{
	struct compiled c;
	int ret = policy_compile(arg, &(struct compile_opts){ .diag = NULL }, &c);

	if (!ret)
		compiled_free(&c);
	return ret;
}

static void test_compiler_without_list_prints(void **state)
{
	static const char text[] = "bpf.mode=strict\nbpf.capabilities=,\n";
	struct diag_list parse = { 0 };
	struct policy *p = NULL;
	char err[4096];

	(void)state;
	assert_int_equal(policy_parse_buffer("t.pysb", text, strlen(text), envp, "/", &p, &parse),
			 0);
	/* no list (run, the daemon): on stderr as it goes, as pr_err printed it */
	assert_int_equal(capture_output(compile_no_list, p, false, err, sizeof(err)), -1);
	assert_string_equal(err, "pysb-bpf: error: t.pysb:1:10: bpf.mode=strict: expected enforce "
				 "or audit\n"
				 "pysb-bpf: error: t.pysb:2:18: bpf.capabilities=,: an empty "
				 "capability name; expected a comma list such as "
				 "CAP_NET_BIND_SERVICE,CAP_CHOWN\n"
				 "pysb-bpf: error: t.pysb:2:19: bpf.capabilities=,: an empty "
				 "capability name; expected a comma list such as "
				 "CAP_NET_BIND_SERVICE,CAP_CHOWN\n");
	policy_free(p);
	diag_free(&parse);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records_keep_their_parts),
		cmocka_unit_test(test_text_forms),
		cmocka_unit_test(test_no_list_prints_at_once),
		cmocka_unit_test(test_parser_and_compiler_into_one_list),
		cmocka_unit_test(test_compiler_without_list_prints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
