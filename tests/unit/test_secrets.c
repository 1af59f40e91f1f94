/* SPDX-License-Identifier: MIT */
/*
 * Well-known secrets a file rule reaches (user/policy/secrets.c), for check's warnings: one case
 * per secret, rules that reach none, a home given as ~, other homes, ignore= lines that
 * hide a secret, .env files next to the rule and in the working directory below it.
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

#include "secrets.h"

static char S[64]; /* scratch: S/home (HOME), S/proj (cwd, with a .env), S/lib (with a .env) */

static int setup(void **state)
{
	char cmd[512];

	(void)state;
	snprintf(S, sizeof(S), "/tmp/pysb-secrets-XXXXXX");
	if (!mkdtemp(S))
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/home/.config/app %s/proj/sub %s/lib && "
		 "touch %s/proj/.env %s/lib/.env",
		 S, S, S, S, S);
	return system(cmd);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", S);
	return system(cmd);
}

struct secret_case {
	const char *rule;   /* "@" = the scratch tree */
	const char *ignore; /* an ignore= glob, or NULL */
	const char *want;   /* what the list holds (strstr), "" = nothing */
	const char * not ;  /* what it must not hold, or NULL */
};

static const struct secret_case cases[] = {
	{ "/etc", NULL, "/etc/shadow (", NULL },
	{ "/etc", NULL, "/etc/gshadow (", NULL },
	{ "/etc", NULL, "/etc/ssh/*key* (", NULL },
	{ "/etc/ssh", NULL, "/etc/ssh/*key* (", "shadow" },
	{ "/etc/ssh/ssh_host_ed25519_key", NULL, "/etc/ssh/*key* (", NULL },
	{ "/etc/shadow", NULL, "/etc/shadow (", NULL },
	{ "/etc/hostname", NULL, "", NULL },
	{ "/etc/ssl", NULL, "/etc/ssl/private (", NULL },
	{ "/etc/ssl/certs", NULL, "", NULL },
	{ "/usr/lib", NULL, "", NULL },
	{ "@/home", NULL, "~/.ssh (", NULL },
	{ "@/home", NULL, "~/.aws (", NULL },
	{ "@/home", NULL, "~/.config/gcloud (", NULL },
	{ "@/home", NULL, "~/.kube (", NULL },
	{ "@/home", NULL, "~/.docker/config.json (", NULL },
	{ "@/home", NULL, "~/.netrc (", NULL },
	{ "@/home", NULL, "~/.pgpass (", "/root" },
	{ "@/home/.config", NULL, "~/.config/gcloud (", ".ssh" },
	{ "@/home/.config/app", NULL, "", NULL },
	{ "@/home/.ssh/id_ed25519", NULL, "~/.ssh (", NULL },
	{ "/root", NULL, "/root/.ssh (", NULL },
	{ "/home", NULL, "/home/*/.ssh (", NULL },
	{ "/", NULL, "the same in ~ and /root and /home/*", NULL },
	{ "@/home", ".ssh", "~/.aws", ".ssh" },
	{ "/etc", "/etc/shadow", "/etc/gshadow", "/etc/shadow" },
	{ "@/lib", NULL, "@/lib/.env (", NULL },
	{ "@/lib", ".env", "", NULL },
	{ "@", NULL, "@/proj/.env (", NULL }, /* the working directory's, below the rule */
	{ "@/proj/sub", NULL, "", NULL },
	{ "@/proj/.env", NULL, "@/proj/.env (", NULL },
};

static void expand(const char *s, char *out, size_t len)
{
	const char *at = strchr(s, '@');

	if (at)
		snprintf(out, len, "%.*s%s%s", (int)(at - s), s, S, at + 1);
	else
		snprintf(out, len, "%s", s);
}

static void test_secrets_reached(void **state)
{
	char home[256], cwd[256];

	(void)state;
	snprintf(home, sizeof(home), "%s/home", S);
	snprintf(cwd, sizeof(cwd), "%s/proj", S);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct secret_case *c = &cases[i];
		struct policy_ignore ig = { .glob = (char *)c->ignore };
		struct policy p = { .ignores = &ig, .n_ignores = c->ignore ? 1 : 0 };
		char rule[256], want[256], out[4096];
		size_t n;

		expand(c->rule, rule, sizeof(rule));
		expand(c->want, want, sizeof(want));
		n = secrets_reached(&p, rule, home, cwd, out, sizeof(out));
		if (!*want ? n || *out : !n || !strstr(out, want))
			fail_msg("rule %s (ignore=%s): got %zu '%s', expected '%s'", rule,
				 c->ignore ? c->ignore : "-", n, out, want);
		if (c->not &&strstr(out, c->not ))
			fail_msg("rule %s: '%s' should not be in '%s'", rule, c->not, out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secrets_reached),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
