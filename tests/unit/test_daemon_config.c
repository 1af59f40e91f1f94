/* SPDX-License-Identifier: MIT */
/*
 * The daemon's binding files (user/daemon/daemon_config.c): what is accepted, how paths are
 * resolved, and that every mistake is an error naming the file and the key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static char tmp[] = "/tmp/pysb-daemon-XXXXXX";

#include "daemon.h"
#include "fixture.h"

#define CGROOT "/sys/fs/cgroup"

/* Reads tmp/NAME.json holding `text`; stderr (the error) into err. */
static int read_binding(const char *name, const char *text, struct binding_conf *out, char *err,
			size_t len)
{
	char file[300];
	FILE *saved, *cap;
	int ret;

	snprintf(file, sizeof(file), "%s.json", name);
	put(file, text);
	cap = tmpfile();
	assert_non_null(cap);
	fflush(stderr);
	saved = stderr;
	stderr = cap;
	ret = binding_read(tmp, file, CGROOT, out);
	fflush(cap);
	stderr = saved;
	rewind(cap);
	err[fread(err, 1, len - 1, cap)] = '\0';
	fclose(cap);
	return ret;
}

static void test_bindings_accepted(void **state)
{
	struct binding_conf c;
	char err[1024];

	(void)state;
	assert_int_equal(read_binding("web",
				      "{\"policy\": \"web.py-sandboxes\", \"unit\": "
				      "\"web.service\"}",
				      &c, err, sizeof(err)),
			 0);
	assert_string_equal(c.name, "web");
	assert_int_equal(c.kind, TARGET_UNIT);
	assert_string_equal(c.target, "web.service");
	assert_string_equal(c.policy, tpath("web.py-sandboxes"));
	assert_false(c.audit);

	/* relative to the mount, systemd's leading-slash form, absolute: the same directory */
	assert_int_equal(read_binding("a",
				      "{\"policy\": \"/etc/p\", \"cgroup\": "
				      "\"system.slice/a.service\", \"mode\": \"audit\"}",
				      &c, err, sizeof(err)),
			 0);
	assert_string_equal(c.target, CGROOT "/system.slice/a.service");
	assert_string_equal(c.policy, "/etc/p");
	assert_true(c.audit);
	assert_int_equal(
		read_binding("b", "{\"policy\": \"p\", \"cgroup\": \"/system.slice/a.service\"}",
			     &c, err, sizeof(err)),
		0);
	assert_string_equal(c.target, CGROOT "/system.slice/a.service");
	assert_int_equal(read_binding("c", "{\"policy\": \"p\", \"cgroup\": \"" CGROOT "/x\"}", &c,
				      err, sizeof(err)),
			 0);
	assert_string_equal(c.target, CGROOT "/x");
	assert_int_equal(
		read_binding("d",
			     "{\"policy\": \"p\", \"cgroup_pattern\": \"jobs.slice/job-*\", "
			     "\"interpreter\": \"/usr/bin/python3\", \"comment\": \"x\"}",
			     &c, err, sizeof(err)),
		0);
	assert_int_equal(c.kind, TARGET_PATTERN);
	assert_string_equal(c.target, CGROOT "/jobs.slice/job-*");
	assert_string_equal(c.interpreter, "/usr/bin/python3");
}

static void test_bindings_rejected_with_file_and_key(void **state)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "{\"policy\": \"p\", \"cgroupp\": \"x\"}", "unknown key \"cgroupp\"" },
		{ "{\"policy\": \"p\"}", "no target" },
		{ "{\"policy\": \"p\", \"cgroup\": \"x\", \"unit\": \"y.service\"}",
		  "more than one target" },
		{ "{\"cgroup\": \"x\"}", "no \"policy\"" },
		{ "{\"policy\": \"\", \"cgroup\": \"x\"}", "no \"policy\"" },
		{ "{\"policy\": \"p\", \"cgroup\": \"x\", \"mode\": \"permissive\"}",
		  "expected \"enforce\" or \"audit\"" },
		{ "{\"policy\": \"p\", \"cgroup\": 3}", "\"cgroup\" must be a string" },
		{ "{\"policy\": \"p\", \"cgroup\": \"../etc\"}", "not a cgroup path" },
		{ "{\"policy\": \"p\", \"cgroup\": \"a/../../etc\"}", "not a cgroup path" },
		{ "{\"policy\": \"p\", \"unit\": \"a/b.service\"}", "not a unit name" },
		{ "{\"policy\": \"p\", \"cgroup\": \"x\", \"cgroup\": \"y\"}", "duplicate" },
		{ "[\"policy\"]", "a binding is a JSON object" },
		{ "{\"policy\": ", "bad.json:1:" },
	};
	struct binding_conf c;
	char err[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(read_binding("bad", bad[i].text, &c, err, sizeof(err)), -1);
		if (!strstr(err, bad[i].msg) || !strstr(err, "bad.json"))
			fail_msg("%s: wanted '%s' naming bad.json, got: %s", bad[i].text,
				 bad[i].msg, err);
	}
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmp) ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bindings_accepted),
		cmocka_unit_test(test_bindings_rejected_with_file_and_key),
	};

	return cmocka_run_group_tests_name("daemon_config", tests, setup, group_teardown);
}
