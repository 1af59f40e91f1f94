/* SPDX-License-Identifier: MIT */
/*
 * Learning never loses a run (user/learn/learn.c): the check of the target before the program
 * starts (missing parent, a directory or a fifo where the file goes, a parent that is a
 * file), the check of `learn --from`'s source, the fallback file when the write fails
 * after the run (never over an existing file), and the review of the lines added, in
 * diff -u's format. Root or not; read-only mounts are in tests/e2e/test_learn.sh.
 */
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

#include "capture.h"
#include "learn.h"

static char S[64]; /* the scratch tree */
static char err[8192];

static int setup(void **state)
{
	(void)state;
	snprintf(S, sizeof(S), "/tmp/pysb-learnw-XXXXXX");
	return mkdtemp(S) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "chmod -R u+w '%s'; rm -rf '%s'", S, S);
	return system(cmd);
}

static void path_of(char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/%s", S, rel);
}

static void put(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	path_of(p, sizeof(p), rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* ---- the target, before the run */

static const char *check_file;
static int call_check_target(void *arg)
{
	(void)arg;
	return learn_check_target(check_file, true);
}

/* learn_check_target(S/rel), its stderr in err. */
static int check_target(const char *rel)
{
	static char p[256];

	path_of(p, sizeof(p), rel);
	check_file = p;
	return capture_output(call_check_target, NULL, false, err, sizeof(err));
}

static void expect_err(const char *needle)
{
	if (!strstr(err, needle))
		fail_msg("no '%s' in: %s", needle, err);
}

static void test_check_target_accepts_new_and_existing_files(void **state)
{
	char p[256], probe[300];

	(void)state;
	assert_int_equal(mkdir(strcat(strcpy(p, S), "/ok"), 0755), 0);
	assert_int_equal(check_target("ok/new-policy"), 0);
	assert_string_equal(err, "");
	put("ok/policy", "expose-ro=/etc\n");
	assert_int_equal(check_target("ok/policy"), 0);
	/* the probe is removed, the file untouched */
	path_of(p, sizeof(p), "ok/policy");
	snprintf(probe, sizeof(probe), "%s.%d.check", p, getpid());
	assert_int_not_equal(access(probe, F_OK), 0);
	assert_string_equal(slurp(p), "expose-ro=/etc\n");
	path_of(p, sizeof(p), "ok/new-policy");
	assert_int_not_equal(access(p, F_OK), 0);
}

static void test_check_target_refuses_missing_parent_and_wrong_types(void **state)
{
	char p[256];

	(void)state;
	assert_int_equal(check_target("no/such/dir/policy"), -1);
	expect_err("/no/such/dir: No such file or directory (the program was not started); "
		   "create the directory (mkdir -p)");
	path_of(p, sizeof(p), "adir");
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(check_target("adir"), -1);
	expect_err("it is a directory, not a policy file (the program was not started); give the "
		   "path of a file");
	path_of(p, sizeof(p), "fifo");
	assert_int_equal(mkfifo(p, 0644), 0);
	assert_int_equal(check_target("fifo"), -1);
	expect_err("it is not a regular file, not a policy file");
	put("plain", "x\n");
	assert_int_equal(check_target("plain/policy"), -1);
	expect_err("is not a directory");
	assert_int_equal(check_target(""), -1); /* S/ itself: a directory */
}

/* Without root, permissions refuse too (root passes them: see the e2e read-only tests). */
static void test_check_target_refuses_unwritable_when_not_root(void **state)
{
	char p[256];

	(void)state;
	if (!geteuid())
		skip();
	path_of(p, sizeof(p), "ro");
	assert_int_equal(mkdir(p, 0755), 0);
	put("ro/policy", "x\n");
	assert_int_equal(chmod(p, 0555), 0);
	assert_int_equal(check_target("ro/policy"), -1);
	expect_err("cannot create files in");
	expect_err("no permission to create files in it");
	assert_int_equal(chmod(p, 0755), 0);
	path_of(p, sizeof(p), "ro/policy");
	assert_int_equal(chmod(p, 0444), 0);
	assert_int_equal(check_target("ro/policy"), -1);
	expect_err("Permission denied");
}

/* ---- learn --from's source */

static const char *source;
static int call_check_source(void *arg)
{
	(void)arg;
	return learn_check_source(source);
}

static void test_check_source_refuses_directories_fifos_and_missing(void **state)
{
	char p[256];

	(void)state;
	source = "-";
	assert_int_equal(capture_output(call_check_source, NULL, false, err, sizeof(err)), 0);
	put("events.jsonl", "{}\n");
	path_of(p, sizeof(p), "events.jsonl");
	source = p;
	assert_int_equal(capture_output(call_check_source, NULL, false, err, sizeof(err)), 0);
	path_of(p, sizeof(p), "evdir");
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(capture_output(call_check_source, NULL, false, err, sizeof(err)), -1);
	expect_err("is a directory; --from takes the events file that run --events FILE wrote");
	path_of(p, sizeof(p), "evfifo");
	assert_int_equal(mkfifo(p, 0644), 0);
	assert_int_equal(capture_output(call_check_source, NULL, false, err, sizeof(err)), -1);
	expect_err("is not a regular file (a fifo)");
	expect_err("give --from - and pipe it in");
	path_of(p, sizeof(p), "missing.jsonl");
	assert_int_equal(capture_output(call_check_source, NULL, false, err, sizeof(err)), -1);
	expect_err("missing.jsonl: No such file or directory");
	source = "/dev/null";
	assert_int_equal(capture_output(call_check_source, NULL, false, err, sizeof(err)), -1);
	expect_err("(a character device)");
}

/* ---- the fallback */

static void test_fallback_next_to_then_tmpdir_never_over_a_file(void **state)
{
	char p[256], saved[512], want[512], tmp[256];

	(void)state;
	path_of(p, sizeof(p), "fb");
	assert_int_equal(mkdir(p, 0755), 0);
	put("fb/policy", "old\n");
	put("fb/policy.learned", "someone's\n");
	path_of(p, sizeof(p), "fb/policy");
	assert_int_equal(learn_save_fallback(p, "merged\n", saved, sizeof(saved)), 0);
	snprintf(want, sizeof(want), "%s.learned_1", p);
	assert_string_equal(saved, want);
	assert_string_equal(slurp(saved), "merged\n");
	snprintf(want, sizeof(want), "%s.learned", p);
	assert_string_equal(slurp(want), "someone's\n");
	assert_string_equal(slurp(p), "old\n");
	/* its directory gone: $TMPDIR */
	path_of(tmp, sizeof(tmp), "tmpdir");
	assert_int_equal(mkdir(tmp, 0755), 0);
	setenv("TMPDIR", tmp, 1);
	path_of(p, sizeof(p), "gone/policy");
	assert_int_equal(learn_save_fallback(p, "m2\n", saved, sizeof(saved)), 0);
	snprintf(want, sizeof(want), "%s/policy.learned", tmp);
	assert_string_equal(saved, want);
	assert_string_equal(slurp(saved), "m2\n");
	/* not through a link left there */
	snprintf(want, sizeof(want), "%s/policy.learned_1", tmp);
	assert_int_equal(symlink("/nonexistent-target", want), 0);
	assert_int_equal(learn_save_fallback(p, "m3\n", saved, sizeof(saved)), 0);
	snprintf(want, sizeof(want), "%s/policy.learned_2", tmp);
	assert_string_equal(saved, want);
	assert_int_not_equal(access("/nonexistent-target", F_OK), 0);
	unsetenv("TMPDIR");
}

/* learn_file whose write fails (its directory removed during the run): the rules are in
 * the fallback, named on stderr, the lines added shown; status 1, not -1. */
static const char *lf_file, *lf_before;
static const struct path_writer *lf_writer;
static FILE *lf_review;
static int call_learn_file(void *arg)
{
	struct learn_set *s = arg;
	char cwd[256];
	struct learn_env env;

	path_of(cwd, sizeof(cwd), "");
	env = (struct learn_env){ .cwd = cwd, .writer = lf_writer, .before = lf_before };
	return learn_file(lf_file, s, &env, true, 0, lf_review);
}

static void test_learn_file_write_fails_rules_saved_and_shown(void **state)
{
	struct learn_set s = { 0 };
	char p[256], tmp[256], want[512], *review = NULL;
	size_t review_len = 0;
	json_t *j;

	(void)state;
	path_of(p, sizeof(p), "data");
	assert_int_equal(mkdir(p, 0755), 0);
	put("data/f", "x");
	path_of(p, sizeof(p), "data/f");
	j = json_pack("{s:s, s:s, s:s, s:s, s:[s]}", "record", "event", "kind", "file", "operation",
		      "open", "path", p, "access", "read");
	assert_int_equal(learn_add_record(&s, j), 0);
	json_decref(j);
	path_of(tmp, sizeof(tmp), "tmp2");
	assert_int_equal(mkdir(tmp, 0755), 0);
	setenv("TMPDIR", tmp, 1);
	path_of(p, sizeof(p), "removed/policy");
	lf_file = p;
	lf_review = open_memstream(&review, &review_len);
	assert_int_equal(capture_output(call_learn_file, &s, false, err, sizeof(err)), 1);
	fclose(lf_review);
	snprintf(want, sizeof(want), "%s/policy.learned", tmp);
	expect_err("learning: cannot write ");
	expect_err(want);
	assert_non_null(slurp(want));
	assert_non_null(strstr(slurp(want), "\nexpose-ro=./data\n"));
	/* the review: the template was the base; the rule is a + line */
	assert_non_null(strstr(review, "+++ b/"));
	assert_non_null(strstr(review, "\n+expose-ro=./data\n"));
	free(review);
	unsetenv("TMPDIR");
	learn_set_free(&s);
}

/* A policy file the program made a link to a secret of root's (nothing is denied while
 * learning), or rewrote: not read through the link, not merged into; the rules saved in
 * $TMPDIR, away from the directory (found by an adversary: /etc/shadow copied back into
 * the project by learning's write, readable there through an ACL the program set). */
static void test_learn_file_tampered_target_not_merged(void **state)
{
	struct path_writer nobody = { .uid = 65534, .gid = 65534 };
	struct learn_set s = { 0 };
	char p[256], tmp[256], proj[256], secret[256], want[512];
	json_t *j;

	(void)state;
	path_of(proj, sizeof(proj), "proj");
	assert_int_equal(mkdir(proj, 0755), 0);
	assert_int_equal(chown(proj, 65534, 65534), 0);
	path_of(secret, sizeof(secret), "shadow");
	put("shadow", "root:SECRETHASH:1::::::\n");
	path_of(p, sizeof(p), "proj/f");
	put("proj/f", "x");
	j = json_pack("{s:s, s:s, s:s, s:s, s:[s]}", "record", "event", "kind", "file", "operation",
		      "open", "path", p, "access", "read");
	assert_int_equal(learn_add_record(&s, j), 0);
	json_decref(j);
	path_of(tmp, sizeof(tmp), "tmp3");
	assert_int_equal(mkdir(tmp, 0755), 0);
	setenv("TMPDIR", tmp, 1);
	path_of(p, sizeof(p), "proj/.py-sandboxes");
	assert_int_equal(symlink(secret, p), 0);
	lf_file = p;
	lf_writer = &nobody;
	lf_review = NULL;
	assert_int_equal(capture_output(call_learn_file, &s, false, err, sizeof(err)), 1);
	expect_err("is reached through the link");
	snprintf(want, sizeof(want), "%s/.py-sandboxes.learned", tmp);
	expect_err(want);
	assert_null(strstr(slurp(want), "SECRETHASH"));
	assert_null(strstr(err, "SECRETHASH"));
	assert_int_equal(unlink(want), 0);
	path_of(want, sizeof(want), "proj/.py-sandboxes.old");
	assert_int_equal(access(want, F_OK), -1); /* nothing written beside it */
	/* a file the program rewrote during the run: merged into the text it began with */
	assert_int_equal(unlink(p), 0);
	put("proj/.py-sandboxes", "expose-rw=/\n");
	lf_before = "# the user's policy\n";
	assert_int_equal(capture_output(call_learn_file, &s, false, err, sizeof(err)), 1);
	expect_err("changed while the program ran");
	snprintf(want, sizeof(want), "%s/.py-sandboxes.learned", tmp);
	assert_non_null(strstr(slurp(want), "# the user's policy\n"));
	assert_null(strstr(slurp(want), "expose-rw=/\n"));
	assert_string_equal(slurp(p), "expose-rw=/\n"); /* left as it is, for the user to see */
	lf_writer = NULL;
	lf_before = NULL;
	unsetenv("TMPDIR");
	learn_set_free(&s);
}

/* ---- the review */

struct diff_case {
	const char *name, *old, *new, *want;
};

static const struct diff_case diff_cases[] = {
	{ "identical: nothing", "a\nb\n", "a\nb\n", "" },
	{ "both empty: nothing", "", "", "" },
	{ "into an empty file", "", "x\ny\n", "--- a/p\n+++ b/p\n@@ -0,0 +1,2 @@\n+x\n+y\n" },
	{ "one line at the end: the range of one is written without its count", "1\n2\n3\n4\n5\n",
	  "1\n2\n3\n4\n5\nnew\n", "--- a/p\n+++ b/p\n@@ -3,3 +3,4 @@\n 3\n 4\n 5\n+new\n" },
	{ "in the middle, three lines of context each side", "1\n2\n3\n4\n5\n6\n7\n8\n",
	  "1\n2\n3\n4\nA\nB\n5\n6\n7\n8\n",
	  "--- a/p\n+++ b/p\n@@ -2,6 +2,8 @@\n 2\n 3\n 4\n+A\n+B\n 5\n 6\n 7\n" },
	{ "at the start", "1\n2\n3\n4\n5\n", "0\n1\n2\n3\n4\n5\n",
	  "--- a/p\n+++ b/p\n@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n" },
	{ "far apart: two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
	  "1\nA\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nB\n12\n",
	  "--- a/p\n+++ b/p\n@@ -1,4 +1,5 @@\n 1\n+A\n 2\n 3\n 4\n"
	  "@@ -9,4 +10,5 @@\n 9\n 10\n 11\n+B\n 12\n" },
	{ "six equal lines apart: one hunk", "1\n2\n3\n4\n5\n6\n7\n8\n",
	  "1\nA\n2\n3\n4\n5\n6\n7\nB\n8\n",
	  "--- a/p\n+++ b/p\n@@ -1,8 +1,10 @@\n 1\n+A\n 2\n 3\n 4\n 5\n 6\n 7\n+B\n 8\n" },
	{ "a superseded line commented out: - and +", "a\nexpose-ro=/x\nb\n",
	  "a\n# expose-ro=/x\nb\nexpose-rw=/x\n",
	  "--- a/p\n+++ b/p\n@@ -1,3 +1,4 @@\n a\n-expose-ro=/x\n+# expose-ro=/x\n b\n+expose-rw=/x\n" },
	{ "./ is left out of the labels, like /", "", "x\n",
	  "--- a/p\n+++ b/p\n@@ -0,0 +1 @@\n+x\n" },
	{ "no newline at the end of the old file", "a\nb", "a\nb\nc\n",
	  "--- a/p\n+++ b/p\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n" },
};

static void test_diff_unified_format(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(diff_cases) / sizeof(diff_cases[0]); i++) {
		const struct diff_case *c = &diff_cases[i];
		char *out = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&out, &len);
		int r = learn_diff(f, i % 2 ? "p" : "./p", c->old, c->new);

		fclose(f);
		if (r != (*c->want ? 1 : 0) || strcmp(out, c->want))
			fail_msg("%s: got %d\n%s\nwant\n%s", c->name, r, out, c->want);
		free(out);
	}
}

/* The same text as GNU diff -u gives (labels aside), on a learned policy. */
static void test_diff_same_as_diff_u(void **state)
{
	static const char old[] = "# mine\nenv=PATH=${PATH}\n# <learning_guard_files>\n"
				  "expose-ro=/etc\n# </learning_guard_files>\n\n"
				  "# <learning_guard_api>\n# </learning_guard_api>\n";
	static const char new[] = "# mine\nenv=PATH=${PATH}\n# <learning_guard_files>\n"
				  "# expose-ro=/etc\n# Add rules (2026/12/03 at 09:00)\n"
				  "expose-rw=/etc\nexpose-ro=./cfg\n# </learning_guard_files>\n\n"
				  "# <learning_guard_api>\n# Add rules (2026/12/03 at 09:00)\n"
				  "python-api=ALLOW:process-exec\n# </learning_guard_api>\n";
	char a[256], b[256], cmd[700], *out = NULL, *want;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	assert_int_equal(learn_diff(f, "/etc/app.py-sandboxes", old, new), 1);
	fclose(f);
	put("old", old);
	put("new", new);
	path_of(a, sizeof(a), "old");
	path_of(b, sizeof(b), "new");
	snprintf(cmd, sizeof(cmd),
		 "diff -u --label a/etc/app.py-sandboxes --label b/etc/app.py-sandboxes '%s' '%s' "
		 ">'%s.diff'",
		 a, b, S);
	assert_int_equal(system(cmd), 1 << 8); /* diff: 1, they differ */
	snprintf(cmd, sizeof(cmd), "%s.diff", S);
	want = slurp(cmd);
	assert_non_null(want);
	assert_string_equal(out, want);
	unlink(cmd);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_target_accepts_new_and_existing_files),
		cmocka_unit_test(test_check_target_refuses_missing_parent_and_wrong_types),
		cmocka_unit_test(test_check_target_refuses_unwritable_when_not_root),
		cmocka_unit_test(test_check_source_refuses_directories_fifos_and_missing),
		cmocka_unit_test(test_fallback_next_to_then_tmpdir_never_over_a_file),
		cmocka_unit_test(test_learn_file_write_fails_rules_saved_and_shown),
		cmocka_unit_test(test_learn_file_tampered_target_not_merged),
		cmocka_unit_test(test_diff_unified_format),
		cmocka_unit_test(test_diff_same_as_diff_u),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
