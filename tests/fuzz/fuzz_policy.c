/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the policy parser: any byte string must give either a complete
 * policy and no error, or no policy and at least one error -- never a crash, a leak or a
 * sanitizer report. The parse runs in a scratch directory holding a few files, so that
 * include, include? and expose-* rules found by the fuzzer can succeed as well as fail.
 *
 * Run: make fuzz FUZZ_SECONDS=600 (crashes are written to build/fuzz/).
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"

static char dir[] = "/tmp/pysb-fuzz-XXXXXX";
static FILE *sink;

/* HOME and PWD point into the scratch directory, so ~/x and ${PWD}/x includes resolve. */
static char home[64], pwd[64];
static char *envp[] = {
	home, pwd, "A=1", "EMPTY=", "NESTED=${A}", "LONG_API_KEY=k", "B_API_KEY=", "TMPDIR=/tmp/none",
	NULL,
};

static void put_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char sub[256];

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	mkdir(sub, 0755);
	snprintf(home, sizeof(home), "HOME=%s", dir);
	snprintf(pwd, sizeof(pwd), "PWD=%s", dir);
	/* names the seeds use (FORMAT-NOTES examples, sample profiles), so includes succeed */
	put_file("inc", "expose-ro=sub\nnet=ALLOW|tcp|*|443|OUT\ninclude \"loop\"\n");
	put_file("loop", "include \"inc\"\nenv=X=${A}\n");
	put_file("bad", "bind=/,/\n");
	put_file("p", "include? \"path\"\nexpose-rw=.\n");
	put_file("path", "include \"p\"\nignore=*.log\n");
	put_file(".py-sandboxes", "include \".local.py-sandboxes\"\nos-sandbox=${OS:-none}\n");
	put_file(".local.py-sandboxes", "include \"./.py-sandboxes\"\neval-timeout=2s\n");
	put_file(".py-sandboxes.pycharm", "ro-bind=~/x,~/x\n");
	sink = fopen("/dev/null", "w");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag_list diag = { 0 };
	struct policy *p = NULL;
	char **env = NULL;
	int ret;

	ret = policy_parse_buffer("fuzz.py-sandboxes", (const char *)data, size, envp, dir, &p,
				  &diag);
	/* The contract of policy.h: never a partial policy, never a silent failure. */
	if ((ret == 0) != (p != NULL) || (ret == 0) != (diag.n_errors == 0))
		abort();
	if (p) {
		if (policy_build_env(p, envp, &env) == 0)
			policy_env_free(env);
		(void)policy_get(p, "os-sandbox");
		policy_free(p);
	}
	diag_print(sink, &diag);
	diag_free(&diag);
	return 0;
}
