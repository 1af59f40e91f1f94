/* SPDX-License-Identifier: MIT */
/* The command line (user/cli/cli.c): one parser for every subcommand, --opt=value and
 * --opt value alike, policy lines, typo suggestions, one usage exit code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "capture.h"
#include "cli.h"

struct parse_call {
	const char *cmd;
	char **argv;
	int argc;
	struct cli c;
};

static int do_parse(void *arg)
{
	struct parse_call *p = arg;

	return cli_parse(cli_find(p->cmd), p->argc, p->argv, &p->c);
}

/* Parses `args` (NULL-terminated, args[0] the command) with stderr and stdout in out. */
static int parse(struct parse_call *p, char **args, char *out, size_t len)
{
	memset(p, 0, sizeof(*p));
	p->cmd = args[0];
	p->argv = args;
	while (args[p->argc])
		p->argc++;
	return capture_output(do_parse, p, true, out, len);
}

#define ARGS(...) ((char *[]){ __VA_ARGS__, NULL })

static void test_run_both_value_forms_and_program(void **state)
{
	struct parse_call p;
	char out[2048];

	(void)state;
	assert_int_equal(parse(&p,
			       ARGS("run", "--policy=a", "--events", "-", "-vv", "--learn", "--",
				    "python3", "-c", "print(1)"),
			       out, sizeof(out)),
			 0);
	assert_string_equal(p.c.policy, "a");
	assert_true(p.c.policy_given);
	assert_string_equal(p.c.events, "-");
	assert_int_equal(p.c.verbose, 2);
	assert_true(p.c.learn);
	assert_null(p.c.learn_file);
	assert_int_equal(p.c.n_rest, 3);
	assert_string_equal(p.c.rest[0], "python3");
	assert_string_equal(p.c.rest[1], "-c");
	cli_free(&p.c);

	/* The program's own options stay its own, without "--" too. */
	assert_int_equal(parse(&p,
			       ARGS("run", "-p", "b", "--learn=out.policy", "--user", "1000",
				    "pytest", "-v", "--policy=x"),
			       out, sizeof(out)),
			 0);
	assert_string_equal(p.c.policy, "b");
	assert_string_equal(p.c.learn_file, "out.policy");
	assert_string_equal(p.c.user, "1000");
	assert_int_equal(p.c.verbose, 0);
	assert_int_equal(p.c.n_rest, 3);
	assert_string_equal(p.c.rest[2], "--policy=x");
	cli_free(&p.c);
}

/* check, diff and learn read ~ as run --user does (found by a user: a policy learned for
 * `run --user alice` could not be checked by root, ~ being root's) */
static void test_user_for_check_diff_learn(void **state)
{
	static const char *const cmds[][5] = {
		{ "check", "--user", "alice", "--", "python3" },
		{ "diff", "--user", "alice", "a", "b" },
		{ "learn", "--user", "alice", "--from", "ev" },
	};
	struct parse_call p;
	char out[2048];

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		char *argv[6] = { 0 };

		memcpy(argv, cmds[i], sizeof(cmds[i]));
		assert_int_equal(parse(&p, argv, out, sizeof(out)), 0);
		assert_string_equal(p.c.user, "alice");
		cli_free(&p.c);
	}
}

static void test_run_policy_lines(void **state)
{
	struct parse_call p;
	char out[2048];

	(void)state;
	assert_int_equal(parse(&p,
			       ARGS("run", "--expose-ro=/data", "--net=ALLOW|tcp|*|443|OUT",
				    "--bpf.mode=audit", "app.py"),
			       out, sizeof(out)),
			 0);
	assert_int_equal(p.c.n_overrides, 3);
	assert_string_equal(p.c.overrides[0].line, "expose-ro=/data");
	assert_string_equal(p.c.overrides[2].line, "bpf.mode=audit");
	assert_string_equal(p.c.policy, DEFAULT_POLICY);
	assert_false(p.c.policy_given);
	cli_free(&p.c);
}

static void test_typo_is_answered_not_taken_as_a_policy_line(void **state)
{
	struct parse_call p;
	char out[2048];

	(void)state;
	assert_int_equal(parse(&p, ARGS("run", "--polcy=x", "app.py"), out, sizeof(out)),
			 EXIT_USAGE);
	assert_non_null(strstr(out, "unknown option '--polcy'; did you mean '--policy'?"));
	assert_non_null(strstr(out, "pysb-bpf run --help"));
	assert_int_equal(p.c.n_overrides, 0);
	cli_free(&p.c);

	/* a swap of two letters is one edit */
	assert_int_equal(parse(&p, ARGS("run", "--aduit", "app.py"), out, sizeof(out)), EXIT_USAGE);
	assert_non_null(strstr(out, "did you mean '--audit'?"));
	cli_free(&p.c);

	/* a typo of a policy key names the key */
	assert_int_equal(parse(&p, ARGS("check", "--expose-r=/x"), out, sizeof(out)), EXIT_USAGE);
	assert_non_null(strstr(out, "did you mean the policy line '--expose-ro=VALUE'?"));
	cli_free(&p.c);

	/* far from everything */
	assert_int_equal(parse(&p, ARGS("run", "--zzzzzz", "app.py"), out, sizeof(out)),
			 EXIT_USAGE);
	assert_non_null(strstr(out, "unknown option '--zzzzzz'"));
	assert_null(strstr(out, "did you mean"));
	cli_free(&p.c);
}

static void test_daemon_equals_and_space_forms(void **state)
{
	struct parse_call p;
	char out[2048];

	(void)state;
	assert_int_equal(parse(&p,
			       ARGS("daemon", "--config=/etc/pysb-bpf", "--rescan-ms", "200",
				    "--events-keep=3", "--events-max-size", "10M", "--once"),
			       out, sizeof(out)),
			 0);
	assert_string_equal(p.c.config_dir, "/etc/pysb-bpf");
	assert_int_equal(p.c.rescan_ms, 200);
	assert_int_equal(p.c.events_keep, 3);
	assert_int_equal(p.c.events_max_size, 10 * 1024 * 1024);
	assert_true(p.c.once);
	assert_false(p.c.check);
	cli_free(&p.c);

	assert_int_equal(parse(&p, ARGS("daemon", "--config", "d", "--rescan-ms=10"), out,
			       sizeof(out)),
			 EXIT_USAGE);
	assert_non_null(strstr(out, "--rescan-ms '10': expected a whole number from 50"));
	cli_free(&p.c);

	/* daemon takes no policy lines: a key=value is an unknown option there */
	assert_int_equal(parse(&p, ARGS("daemon", "--expose-ro=/x"), out, sizeof(out)), EXIT_USAGE);
	cli_free(&p.c);
}

static void test_usage_errors_share_one_code(void **state)
{
	char **cases[] = {
		ARGS("run"),			 /* no program */
		ARGS("run", "-p"),		 /* no value */
		ARGS("run", "--audit=yes", "x"), /* a value it does not take */
		ARGS("probe", "extra"),		 /* unexpected argument */
		ARGS("check", "-x"),		 /* unknown short option */
		ARGS("diff", "one"),		 /* two needed */
		ARGS("attach", "--pid", "12x"),	 /* not a number */
		ARGS("learn", "--from"),	 /* no value */
		ARGS("probe", "--jsno"),	 /* typo */
		ARGS("status", "now"),		 /* unexpected */
		ARGS("help", "run", "check"),	 /* one at most */
		ARGS("version", "--verbose"),	 /* version takes only --help */
	};
	struct parse_call p;
	char out[2048];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = parse(&p, cases[i], out, sizeof(out));

		if (rc != EXIT_USAGE)
			fail_msg("case %zu (%s %s): %d, not %d: %s", i, cases[i][0],
				 cases[i][1] ? cases[i][1] : "", rc, EXIT_USAGE, out);
		assert_non_null(strstr(out, "--help"));
		cli_free(&p.c);
	}
}

static void test_every_command_answers_help(void **state)
{
	static const char *const names[] = { "run",  "check",  "probe",	 "learn",   "attach",
					     "diff", "status", "daemon", "version", "help" };
	struct parse_call p;
	char out[4096], head[64];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(parse(&p, ARGS((char *)names[i], "--help"), out, sizeof(out)), 1);
		snprintf(head, sizeof(head), "Usage: pysb-bpf %s ", names[i]);
		assert_non_null(strstr(out, head));
		cli_free(&p.c);
		assert_int_equal(parse(&p, ARGS((char *)names[i], "-h"), out, sizeof(out)), 1);
		cli_free(&p.c);
	}
}

static void test_closest(void **state)
{
	static const char *const words[] = { "policy", "audit", "events", "user", NULL };

	(void)state;
	assert_string_equal(cli_closest("polcy", words), "policy");
	assert_string_equal(cli_closest("POLICY", words), "policy");
	assert_string_equal(cli_closest("evnets", words), "events");
	assert_null(cli_closest("run", words));
	assert_null(cli_closest("x", words));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_both_value_forms_and_program),
		cmocka_unit_test(test_run_policy_lines),
		cmocka_unit_test(test_user_for_check_diff_learn),
		cmocka_unit_test(test_typo_is_answered_not_taken_as_a_policy_line),
		cmocka_unit_test(test_daemon_equals_and_space_forms),
		cmocka_unit_test(test_usage_errors_share_one_code),
		cmocka_unit_test(test_every_command_answers_help),
		cmocka_unit_test(test_closest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
