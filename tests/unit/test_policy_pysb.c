/* SPDX-License-Identifier: MIT */
/*
 * py-sandboxes' verdict on each policy line (issue 18): one case per rule, each naming the
 * py-sandboxes test or function it mirrors. The other parser tests are in test_policy.c; the
 * exec decision the kernel takes from python-api is also checked, compiled, in test_compile.c
 * (test_exec_decision).
 */
#include <limits.h>
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

#include "policy.h"
#include "policy_api.h"

static char tmp[] = "/tmp/pysb-test-pysb-XXXXXX";
static char home_var[PATH_MAX + 8];
static char *envp[] = { home_var, "A=1", "EMPTY=", NULL };

#include "fixture.h"

static int group_setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmp))
		return -1;
	snprintf(home_var, sizeof(home_var), "HOME=%s/home", tmp);
	mkdir(tpath("home"), 0755);
	mkdir(tpath("d"), 0755);
	return 0;
}

struct parsed {
	struct policy *p;
	struct policy_diag d;
	int ret;
};

static struct parsed parse(const char *text)
{
	struct parsed r = { 0 };

	r.ret = policy_parse_buffer("t.pysb", text, strlen(text), envp, tmp, &r.p, &r.d);
	assert_int_equal(r.ret == 0, r.p != NULL);
	return r;
}

static void done(struct parsed *r)
{
	policy_free(r->p);
	policy_diag_free(&r->d);
}

static bool has_msg(const struct policy_msg *m, size_t n, unsigned line, const char *msg)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].line == line && m[i].msg && strstr(m[i].msg, msg))
			return true;
	return false;
}

static void expect_ok(const char *text)
{
	struct parsed r = parse(text);

	if (r.ret) {
		fprintf(stderr, "input: %s\n", text);
		policy_diag_print(stderr, &r.d);
		fail();
	}
	done(&r);
}

/* An error on `line` whose message holds `msg`. */
static void expect_err(const char *text, unsigned line, const char *msg)
{
	struct parsed r = parse(text);

	if (!has_msg(r.d.errors, r.d.n_errors, line, msg)) {
		fprintf(stderr, "input: %s\nwanted error %u '%s', got:\n", text, line, msg);
		policy_diag_print(stderr, &r.d);
		fail();
	}
	done(&r);
}

/* Valid, with a warning on `line` holding `msg`. */
__attribute__((unused)) static void expect_warn(const char *text, unsigned line, const char *msg)
{
	struct parsed r = parse(text);

	if (r.ret || !has_msg(r.d.warnings, r.d.n_warnings, line, msg)) {
		fprintf(stderr, "input: %s\nwanted warning %u '%s', got:\n", text, line, msg);
		policy_diag_print(stderr, &r.d);
		fail();
	}
	done(&r);
}

static bool exec_of(const char *text, unsigned *line)
{
	struct parsed r = parse(text);
	struct policy_src src = { 0 };
	bool allowed;

	assert_int_equal(r.ret, 0);
	allowed = policy_api_exec(r.p, &src);
	*line = src.line;
	done(&r);
	return allowed;
}

/* ---------------- python-api: precedence (the kernel's exec decision) */

static void test_api_specificity_not_order(void **state)
{
	unsigned line;

	(void)state;
	/* guard_api.activate_guard, test_specificity_decides_not_order: function before
	 * category before `*`, whatever the order of the lines */
	assert_true(exec_of("python-api=DENY:process-exec\npython-api=ALLOW:os.system\n", &line));
	assert_int_equal(line, 2);
	assert_true(exec_of("python-api=ALLOW:os.system\npython-api=DENY:process-exec\n", &line));
	assert_int_equal(line, 1);
	assert_true(exec_of("python-api=ALLOW:process-exec\npython-api=DENY:*\n", &line));
	assert_int_equal(line, 1);
	assert_false(exec_of("python-api=DENY:process-exec\npython-api=ALLOW:*\n", &line));
	assert_int_equal(line, 1);
}

static void test_api_deny_wins_at_equal_specificity(void **state)
{
	unsigned line;

	(void)state;
	/* test_deny_wins_at_equal_specificity (functions), and the same fold for categories
	 * and for `*` (test_wildcard_allow_and_deny_together_denies) */
	assert_false(exec_of("python-api=DENY:process-exec\npython-api=ALLOW:process-exec\n",
			     &line));
	assert_int_equal(line, 1);
	assert_false(exec_of("python-api=ALLOW:*\npython-api=DENY:*\n", &line));
	assert_int_equal(line, 2);
}

/* ---------------- python-api: syntax (guard_api.parse_rules, test_rejected_syntax) */

static void test_api_syntax(void **state)
{
	(void)state;
	/* test_allow_a_category, test_allow_a_function, test_deny_and_several_targets_on_one_line,
	 * test_wildcards */
	expect_ok("python-api=ALLOW:threads\npython-api=ALLOW:os.system\n"
		  "python-api=DENY:threads, os.system\npython-api=ALLOW:*\npython-api=DENY:*\n"
		  "python-api= ALLOW : deserialization ,pickle.loads \n");
	/* test_rejected_syntax: typos and unregistered functions are errors */
	expect_err("python-api=ALLOW:threadz", 1, "unknown category 'threadz' (did you mean "
						  "'threads'?)");
	expect_err("python-api=ALLOW:os.systemm", 1, "did you mean 'os.system'?");
	expect_err("python-api=ALLOW:os.no_such_function", 1, "not a registered");
	expect_err("python-api=threads", 1, "expected ALLOW:<target>");
	expect_err("python-api=PERMIT:threads", 1, "unknown action 'PERMIT'");
	/* one action per line */
	expect_err("python-api=ALLOW:threads,DENY:os.system", 1, "one action per line");
	expect_err("python-api=ALLOW:threads,deny", 1, "one action per line");
	/* no empty targets */
	expect_err("python-api=ALLOW:", 1, "empty target");
	expect_err("python-api=ALLOW:threads,", 1, "empty target");
	expect_err("python-api=ALLOW:threads,,native", 1, "empty target");
	expect_err("python-api=", 1, "expected ALLOW:<target>");
	/* categories are case-sensitive (CATEGORIES is a frozenset of lower-case names);
	 * so is the action (_ACTIONS) */
	expect_err("python-api=ALLOW:Process-Exec", 1, "did you mean 'process-exec'?");
	expect_err("python-api=allow:threads", 1, "unknown action 'allow'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api_specificity_not_order),
		cmocka_unit_test(test_api_deny_wins_at_equal_specificity),
		cmocka_unit_test(test_api_syntax),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
