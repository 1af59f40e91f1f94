/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of bpf.capabilities= (user/compile/caps.c): names as capabilities(7) spells them, any
 * case, with or without CAP_; lines adding up; an empty value granting nothing; every bad
 * item reported as file:line:col and the policy refused; the compiled mask; the event line
 * and JSON record of a refused capability, and what --learn makes of it.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>

#include <cmocka.h>

#include "caps.h"
#include "compile.h"
#include "events.h"
#include "learn.h"
#include "policy.h"

#include "capture.h"

static char *envp[] = { "LANG=C.UTF-8", NULL };

struct parsed {
	struct policy *p;
	struct compiled c;
	uint64_t mask;
	int ret, compile_ret;
	char err[8192];
};

static int do_caps(void *arg)
{
	struct parsed *r = arg;
	struct compile_opts o = { .implicit = false };

	r->ret = policy_capabilities(r->p, &r->mask, NULL);
	return policy_compile(r->p, &o, &r->c);
}

static struct parsed *parse(const char *text)
{
	struct parsed *r = calloc(1, sizeof(*r));
	struct diag_list d = { 0 };

	assert_non_null(r);
	if (policy_parse_buffer("t.pysb", text, strlen(text), envp, "/", &r->p, &d)) {
		diag_print(stderr, &d);
		fail_msg("policy does not parse: %s", text);
	}
	diag_free(&d);
	r->compile_ret = capture_output(do_caps, r, false, r->err, sizeof(r->err));
	return r;
}

static void done(struct parsed *r)
{
	compiled_free(&r->c);
	policy_free(r->p);
	free(r);
}

#define BIT(c) (1ull << (c))

static void test_cap_names(void **state)
{
	(void)state;
	assert_int_equal(cap_from_name("CAP_CHOWN"), CAP_CHOWN);
	assert_int_equal(cap_from_name("chown"), CAP_CHOWN);
	assert_int_equal(cap_from_name("cap_net_bind_service"), CAP_NET_BIND_SERVICE);
	assert_int_equal(cap_from_name("Net_Bind_Service"), CAP_NET_BIND_SERVICE);
	assert_int_equal(cap_from_name("CAP_SYS_ADMIN"), CAP_SYS_ADMIN);
	assert_int_equal(cap_from_name("CAP_CHECKPOINT_RESTORE"), CAP_CHECKPOINT_RESTORE);
	assert_int_equal(cap_from_name("bpf"), CAP_BPF);
	assert_int_equal(cap_from_name("perfmon"), CAP_PERFMON);
	assert_int_equal(cap_from_name("CAP_"), -1);
	assert_int_equal(cap_from_name(""), -1);
	assert_int_equal(cap_from_name("CAP_CHOWNX"), -1);
	assert_int_equal(cap_from_name("CAP_CAP_CHOWN"), -1);
	assert_int_equal(cap_from_name("all"), -1);
	/* every number the kernel headers know has its name, and back */
	for (int c = 0; c <= CAP_LAST_CAP; c++) {
		assert_non_null(cap_name(c));
		assert_int_equal(cap_from_name(cap_name(c)), c);
	}
	assert_string_equal(cap_name(CAP_SYS_BOOT), "CAP_SYS_BOOT");
	assert_null(cap_name(63));
}

static void test_caps_str(void **state)
{
	char buf[512];

	(void)state;
	assert_string_equal(caps_str(0, buf, sizeof(buf)), "none");
	assert_string_equal(caps_str(BIT(CAP_CHOWN) | BIT(CAP_NET_BIND_SERVICE), buf, sizeof(buf)),
			    "CAP_CHOWN,CAP_NET_BIND_SERVICE");
	assert_string_equal(caps_str(BIT(63), buf, sizeof(buf)), "63");
	/* a short buffer is cut, never overrun */
	caps_str(~0ull, buf, 8);
	assert_int_equal(strlen(buf), 7);
}

static void test_policy_grants(void **state)
{
	static const struct {
		const char *text;
		uint64_t mask;
	} ok[] = {
		{ "expose-ro=/tmp\n", 0 },
		{ "bpf.capabilities=\n", 0 },
		{ "bpf.capabilities=CAP_NET_BIND_SERVICE,CAP_CHOWN\n",
		  BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_CHOWN) },
		{ "bpf.capabilities= net_bind_service , Cap_Chown\n",
		  BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_CHOWN) },
		{ "bpf.capabilities=CAP_SYS_TIME\nbpf.capabilities=mknod\n",
		  BIT(CAP_SYS_TIME) | BIT(CAP_MKNOD) },
		{ "bpf.capabilities=CAP_SYS_TIME\nbpf.capabilities=\n", BIT(CAP_SYS_TIME) },
		{ "bpf.capabilities=checkpoint_restore,CAP_CHECKPOINT_RESTORE\n",
		  BIT(CAP_CHECKPOINT_RESTORE) },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct parsed *r = parse(ok[i].text);

		if (r->ret || r->compile_ret)
			fail_msg("%s: %s", ok[i].text, r->err);
		assert_int_equal(r->mask, ok[i].mask);
		assert_int_equal(r->c.caps, ok[i].mask);
		assert_int_equal(policy_check_bpf_params(r->p, NULL), 0);
		done(r);
	}
}

static void test_policy_errors(void **state)
{
	static const struct {
		const char *text, *where, *msg;
	} bad[] = {
		{ "bpf.capabilities=CAP_FOO\n", "t.pysb:1:18:", "unknown capability 'CAP_FOO'" },
		{ "expose-ro=/tmp\nbpf.capabilities=chown,nope\n",
		  "t.pysb:2:24:", "unknown capability 'nope'" },
		{ "bpf.capabilities=CAP_CHOWN,,CAP_KILL\n",
		  "t.pysb:1:28:", "an empty capability name" },
		{ "bpf.capabilities=CAP_CHOWN,\n", "t.pysb:1:28:", "an empty capability name" },
		{ "bpf.capabilities=CAP_ALL\n", "t.pysb:1:18:", "unknown capability" },
		{ "bpf.capabilities=CAP_NET_BIND_SERVICE CAP_CHOWN\n",
		  "t.pysb:1:18:", "unknown capability 'CAP_NET_BIND_SERVICE CAP_CHOWN'" },
		{ "bpf.capability=CAP_CHOWN\n",
		  "t.pysb:1:1:", "unknown parameter 'bpf.capability'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct parsed *r = parse(bad[i].text);

		assert_int_not_equal(r->compile_ret, 0);
		if (!strstr(r->err, bad[i].where) || !strstr(r->err, bad[i].msg))
			fail_msg("%s: wanted '%s ... %s', got: %s", bad[i].text, bad[i].where,
				 bad[i].msg, r->err);
		assert_int_equal(r->c.caps, 0); /* never a partial policy */
		done(r);
	}
	/* every bad item is said, not only the first */
	{
		struct parsed *r = parse("bpf.capabilities=x,chown,y\nbpf.capabilities=z\n");

		assert_int_not_equal(r->ret, 0);
		assert_non_null(strstr(r->err, "t.pysb:1:18:"));
		assert_non_null(strstr(r->err, "t.pysb:1:26:"));
		assert_non_null(strstr(r->err, "t.pysb:2:18:"));
		done(r);
	}
}

/* The stderr line and the JSON record of a refused capability; --learn grants it. */
static void test_event_and_learn(void **state)
{
	static struct pysb_event e;
	struct events_json w = { .mode = "audit" };
	struct learn_set s = { 0 };
	char line[1024] = { 0 };
	json_t *o;
	FILE *f = fmemopen(line, sizeof(line) - 1, "w");

	(void)state;
	e.kind = PYSB_KIND_CAP;
	e.op = PYSB_OP_CAPABLE;
	e.decision = PYSB_DENY;
	e.pid = e.tid = 42;
	e.rule = CAP_SYS_BOOT;
	memcpy(e.comm, "python3", 8);
	assert_non_null(f);
	event_print_line(f, &e, NULL);
	fclose(f);
	assert_string_equal(line, "pysb-bpf: deny capability capable CAP_SYS_BOOT (not granted by "
				  "bpf.capabilities) pid=42 tid=42 comm=python3\n");
	e.decision = PYSB_AUDIT;
	o = events_json_render(&w, &e);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "capability");
	assert_string_equal(json_string_value(json_object_get(o, "operation")), "capable");
	assert_string_equal(json_string_value(json_object_get(o, "capability")), "CAP_SYS_BOOT");
	assert_int_equal(json_integer_value(json_object_get(o, "capability_number")), CAP_SYS_BOOT);
	assert_int_equal(learn_add_record(&s, o), 0);
	assert_int_equal(learn_add_record(&s, o), 0);
	assert_int_equal(s.n_socket, 1); /* once, however often it was used */
	assert_string_equal(s.socket[0], "bpf.capabilities=CAP_SYS_BOOT");
	json_decref(o);
	learn_set_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap_names),	cmocka_unit_test(test_caps_str),
		cmocka_unit_test(test_policy_grants),	cmocka_unit_test(test_policy_errors),
		cmocka_unit_test(test_event_and_learn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
