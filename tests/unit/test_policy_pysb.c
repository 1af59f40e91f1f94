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
#include "policy_departures.h"

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
	struct diag_list d;
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
	diag_free(&r->d);
}

static bool has_msg(const struct diag *m, size_t n, unsigned line, const char *msg)
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
		diag_print(stderr, &r.d);
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
		diag_print(stderr, &r.d);
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
		diag_print(stderr, &r.d);
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
	assert_false(
		exec_of("python-api=DENY:process-exec\npython-api=ALLOW:process-exec\n", &line));
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
	expect_err("python-api=ALLOW:threadz", 1,
		   "unknown category 'threadz' (did you mean "
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

/* ---------------- includes (py_sandbox._parse_include) */

static void test_include_before_substitution(void **state)
{
	(void)state;
	/* parse_config() runs _parse_include() before substitute_config_env_vars(): the
	 * path is literal, ${...} included */
	mkdir(tpath("${A}"), 0755);
	put("${A}/lit.pysb", "py-sandbox=false\n");
	expect_ok("include \"./${A}/lit.pysb\"\n");
	expect_err("include \"${HOME}/nothing.pysb\"\n", 1, "is literal");
}

static void test_include_forms(void **state)
{
	(void)state;
	/* the pattern ^include\s+"(.+)"\s*$: double quotes only, a blank required */
	put("inc.pysb", "port=1\n");
	expect_ok("include \"inc.pysb\"\n");
	expect_ok("include\t \"inc.pysb\"  \n");
	expect_err("include 'inc.pysb'\n", 1, "double quotes");
	expect_err("include\"inc.pysb\"\n", 1, "a blank after the keyword");
	expect_err("include?\"inc.pysb\"\n", 1, "a blank after the keyword");
}

/* ---------------- provider keys (guard_provider.parse_rules) */

static void test_provider_key_twice(void **state)
{
	(void)state;
	/* "Multiple <key> parameters", test_the_same_value_twice_is_not_a_conflict only
	 * covers one line read twice (an include repeated: read once here too) */
	expect_err("os-sandbox=bwrap\nos-sandbox=bwrap\n", 2, "already set at t.pysb:1");
	expect_err("py-sandbox=true\npy-sandbox=false\n", 2, "already set");
	expect_err("port=1\nport=2\n", 2, "already set");
	expect_err("remote-result-guard=on\nremote-result-guard=off\n", 2, "already set");
	expect_err("remote-result-mode=objects\nremote-result-mode=objects\n", 2, "already set");
	expect_err("learn=a.learn\nlearn=b.learn\n", 2, "already set");
	/* learn=false is the lock, not a value: twice is fine */
	expect_ok("learn=false\nlearn=FALSE\n");
	/* a command-line rule (path "." there) replaces the file's one line */
	{
		struct policy_override ov[] = { { "os-sandbox=qemu" }, { "os-sandbox=none" } };
		struct diag_list d = { 0 };
		struct policy *p = NULL;

		put("prov.pysb", "os-sandbox=bwrap\n");
		assert_int_equal(policy_parse_file(tpath("prov.pysb"), envp, tmp, ov, 1, &p, &d),
				 0);
		assert_string_equal(policy_get(p, "os-sandbox"), "qemu");
		policy_free(p);
		diag_free(&d);
		/* but not two of them over a file line: three lines, "Multiple" */
		assert_int_equal(policy_parse_file(tpath("prov.pysb"), envp, tmp, ov, 2, &p, &d),
				 -1);
		assert_true(has_msg(d.errors, d.n_errors, 2, "already set"));
		diag_free(&d);
	}
}

static void test_provider_os_sandbox(void **state)
{
	struct parsed r;

	(void)state;
	/* test_os_sandbox_is_case_and_space_insensitive */
	r = parse("os-sandbox=  FireJail  \n");
	assert_int_equal(r.ret, 0);
	assert_string_equal(policy_get(r.p, "os-sandbox"), "firejail");
	done(&r);
	expect_ok("os-sandbox=BWRAP\n");
	/* test_errors_carry_their_provenance */
	expect_err("os-sandbox=nope\n", 1, "unknown os-sandbox");
}

static void test_provider_py_sandbox(void **state)
{
	static const char *const truthy[] = { "", "true", "TRUE", "1" }, *const falsy[] = {
		"FALSE", "none", "0", " false"
	};

	(void)state;
	/* test_py_sandbox_accepted_truthy_values, test_py_sandbox_accepted_falsy_values */
	for (size_t i = 0; i < 4; i++) {
		char text[64];
		struct parsed r;

		snprintf(text, sizeof(text), "py-sandbox=%s\n", truthy[i]);
		r = parse(text);
		assert_int_equal(r.ret, 0);
		assert_string_equal(policy_get(r.p, "py-sandbox"), "true");
		done(&r);
		snprintf(text, sizeof(text), "py-sandbox=%s\n", falsy[i]);
		r = parse(text);
		assert_int_equal(r.ret, 0);
		assert_string_equal(policy_get(r.p, "py-sandbox"), "false");
		done(&r);
	}
	expect_err("py-sandbox=yes\n", 1, "true or false");
	/* remote-result-guard also takes on/off (guard_provider.parse_rules) */
	expect_ok("remote-result-guard=ON\n");
	expect_err("py-sandbox=off\n", 1, "true or false");
}

static void test_provider_learn(void **state)
{
	struct parsed r;

	(void)state;
	/* test_learn_refuses_a_boolean (but false, the lock: guard_provider.learn_lock) */
	expect_err("learn=true\n", 1, "use the filename instead");
	expect_err("learn=1\n", 1, "use the filename instead");
	expect_err("learn=0\n", 1, "use the filename instead");
	expect_ok("learn=false\n");
	/* test_learn_without_value_falls_back_to_the_default_config_name */
	r = parse("learn=\n");
	assert_int_equal(r.ret, 0);
	assert_string_equal(policy_get(r.p, "learn"), ".py-sandboxes");
	done(&r);
	/* test_learn_keeps_an_explicit_directory; a bare name is next to the policy */
	r = parse("learn=d/out.rules\n");
	assert_int_equal(r.ret, 0);
	assert_string_equal(policy_get(r.p, "learn"), "d/out.rules");
	done(&r);
	r = parse("learn=out.rules\n");
	assert_int_equal(r.ret, 0);
	assert_string_equal(policy_get(r.p, "learn"), tpath("out.rules"));
	done(&r);
	/* test_learn_requires_an_existing_parent_directory */
	expect_err("learn=missing/out.rules\n", 1, "parent directory");
	/* learn_lock(): "learning mode is forbidden, but requested by" */
	expect_err("learn=false\nlearn=out.rules\n", 1, "forbids learning, but t.pysb:2");
	/* test_disabling_the_py_sandbox_also_disables_an_explicit_learn_rule */
	expect_ok("py-sandbox=false\nlearn=false\nlearn=out.rules\n");
}

static void test_provider_port_and_result(void **state)
{
	(void)state;
	/* port: int(value.strip()) >= 0, test_an_empty_port_is_rejected */
	expect_ok("port=8_000\n");
	expect_ok("port=+80\n");
	expect_ok("port= 70000\n");
	expect_err("port=\n", 1, "port number");
	expect_err("port=0x50\n", 1, "port number");
	expect_err("port=-1\n", 1, "positive value");
	/* test_remote_result_mode_accepts_data_only; objects/default, data-only/data_only */
	expect_ok("remote-result-mode=DATA-ONLY\n");
	expect_ok("remote-result-mode=data_only\n");
	expect_ok("remote-result-mode=default\n");
	expect_err("remote-result-mode=pickle\n", 1, "data-only or objects");
}

/* ---------------- eval-* (eval_rules.parse_rules, _parse_list_value) */

static void test_eval_keys_and_tokens(void **state)
{
	(void)state;
	expect_ok("eval-syntax=arith, compare, Call, Attribute\neval-syntax=DENY:loop\n"
		  "eval-call=len\neval-call=DENY:open\neval-attribute=get*\neval-import=json\n"
		  "eval-magic=__name__\neval-max-leaked-threads=2\n");
	/* unknown key: "unknown key ..., closest known token is ..." */
	expect_err("eval-max-iteration=5\n", 1, "did you mean 'eval-max-iterations'");
	expect_err("eval-max-something-new=7\n", 1, "the guarded eval knows eval-syntax");
	/* unknown syntax token, with the closest */
	expect_err("eval-syntax=arith, BinOpp\n", 1, "closest known token: 'BinOp'");
	expect_err("eval-syntax=Arith\n", 1, "closest known token: 'arith'");
	/* _DEPRECATED_NODES and helpers of the ast module are not node classes */
	expect_err("eval-syntax=Num\n", 1, "unknown syntax token 'Num'");
	expect_err("eval-syntax=NodeVisitor\n", 1, "unknown syntax token");
	/* empty target, DENY: inside a list, no pattern on eval-syntax */
	expect_err("eval-call=\n", 1, "empty target");
	expect_err("eval-call=len,,abs\n", 1, "empty target");
	expect_err("eval-call=len, DENY:open\n", 1, "applies to a whole line");
	expect_err("eval-syntax=Bin*\n", 1, "no pattern");
}

/* ---------------- values: stripped, empty where py-sandboxes takes them */

static void test_values_stripped_and_empty(void **state)
{
	struct parsed r;

	(void)state;
	/* every parse_rules() of py-sandboxes strip()s the value */
	r = parse("os-sandbox=\t bwrap\npython-api=  ALLOW:threads\nport= 80\n");
	assert_int_equal(r.ret, 0);
	assert_string_equal(policy_get(r.p, "os-sandbox"), "bwrap");
	assert_string_equal(policy_get(r.p, "python-api"), "ALLOW:threads");
	assert_string_equal(policy_get(r.p, "port"), "80");
	done(&r);
	/* ... except ignore=, whose pattern guard_files.parse_rules() keeps as written */
	r = parse("ignore= x\n");
	assert_int_equal(r.ret, 0);
	assert_string_equal(r.p->ignores[0].glob, " x");
	done(&r);
	/* guard_import.parse_rules() takes an empty list; guard_provider an empty
	 * py-sandbox= / remote-result-guard= (true) and learn= (the default file) */
	expect_ok("python-import=\npython-import= , \n");
	expect_ok("py-sandbox=\nremote-result-guard=\nlearn=\n");
	/* ... but not an empty port= (test_an_empty_port_is_rejected) nor os-sandbox= */
	expect_err("os-sandbox=\n", 1, "unknown os-sandbox");
}

/* ---------------- deliberate departures, each reported with its line */

static bool departure(const char *text, unsigned line, const char *msg)
{
	struct parsed r = parse(text);
	struct policy_departure *d;
	size_t n;
	bool found = false;

	assert_int_equal(r.ret, 0);
	assert_int_equal(policy_departures(r.p, &d, &n), 0);
	for (size_t i = 0; i < n; i++)
		found = found || (d[i].src.line == line && strstr(d[i].msg, msg));
	if (!found)
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "departure %u: %s\n", d[i].src.line, d[i].msg);
	policy_departures_free(d, n);
	done(&r);
	return found;
}

static void test_departures_named_by_line(void **state)
{
	(void)state;
	/* guard_api.activate_guard decides per function; the kernel per execve */
	assert_true(departure("python-api=ALLOW:subprocess.run\n", 1, "cannot tell which"));
	assert_true(departure("python-api=ALLOW:process-exec\npython-api=DENY:os.system\n", 2,
			      "only the Python layer refuses os.system"));
	/* nothing to say when the category decides alone */
	assert_false(departure("python-api=ALLOW:process-exec\n", 1, "execve"));
	/* eval_rules._is_node asks the running interpreter */
	assert_true(departure("eval-syntax=arith, TryStar\n", 1, "Python 3.11 and later"));
	assert_true(departure("python-api=ALLOW:_ctypes.dlopen\n", 1, "_ctypes.dlopen"));
	put("d/file", "x\n");
	assert_true(departure("expose-ro=d/file\n", 1, "names a file, not a directory"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api_specificity_not_order),
		cmocka_unit_test(test_api_deny_wins_at_equal_specificity),
		cmocka_unit_test(test_api_syntax),
		cmocka_unit_test(test_include_before_substitution),
		cmocka_unit_test(test_include_forms),
		cmocka_unit_test(test_provider_key_twice),
		cmocka_unit_test(test_provider_os_sandbox),
		cmocka_unit_test(test_provider_py_sandbox),
		cmocka_unit_test(test_provider_learn),
		cmocka_unit_test(test_provider_port_and_result),
		cmocka_unit_test(test_eval_keys_and_tokens),
		cmocka_unit_test(test_values_stripped_and_empty),
		cmocka_unit_test(test_departures_named_by_line),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
