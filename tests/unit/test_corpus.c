/* SPDX-License-Identifier: MIT */
/*
 * Every file of tests/corpus/pysandboxes (real py-sandboxes policy files) is parsed and
 * must get the verdict recorded in corpus_verdicts.h: what py-sandboxes' newest parser says
 * of it per FORMAT-NOTES.md. A corpus file without a recorded verdict fails the test.
 *
 * The verdicts must not depend on the machine, so each file is parsed in a scratch tree
 * that plays a fresh checkout of the pysandboxes repository on a fresh account:
 *   T/repo/<repo path>   the file, where MANIFEST.tsv says it lives, with the corpus files
 *                        of the same directory beside it (newest versions only), so that
 *                        bare-name includes find what the corpus holds and nothing else;
 *                        files the corpus lacks (.local.py-sandboxes, the user and global
 *                        profiles) are missing, as in a fresh checkout;
 *   cwd                  the directory of the file, holding the directories that sample
 *                        policies expose relative to it (scripts, tmp, resources);
 *   T/home = HOME        holding the directories the corpus exposes under ~ (created
 *                        empty: a non-existent expose path would be an error, and which
 *                        ones exist on a developer's machine is not the format's concern);
 *   envp                 HOME, PWD, TMPDIR (T/tmp) and PYTHON_BASE_PREFIX (T/prefix, with
 *                        lib/) only: OS_SANDBOX, MY_IP, QEMU_* ... are unset, so defaults
 *                        apply. Absolute paths of the corpus (/etc, /proc,
 *                        /proc/sys/kernel/random) exist on every Linux system.
 * The one absolute include (/etc/py-sandboxes/global-py-sandboxes.profile) only appears in
 * files that are already invalid for a machine-independent reason, or behind include?.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <libgen.h>
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

#include "corpus_verdicts.h"
#include "policy.h"

#define DEFAULT_CORPUS "tests/corpus/pysandboxes"

static const char *const HOME_DIRS[] = {
	".config/crewai",	 ".local/share/crewai-demo", ".local/share/crewai/credentials",
	"workspace/pysandboxes", ".cache/JetBrains",	     ".local/share/JetBrains",
	".local/share/uv",
};
static const char *const CWD_DIRS[] = { "scripts", "tmp", "resources" };

struct entry {
	char *saved;	 /* name in the corpus directory */
	char *repo_path; /* where it lives in the pysandboxes repository */
};

static const char *corpus;
static struct entry *manifest;
static size_t n_manifest;

/* ---------------- files */

static void mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", buf, strerror(errno));
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[8192];
	size_t n;

	if (!in || !out)
		fail_msg("copy %s -> %s: %s", from, to, strerror(errno));
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* ---------------- MANIFEST.tsv */

static void load_manifest(void)
{
	char path[PATH_MAX], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/MANIFEST.tsv", corpus);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "corpus: cannot open %s: %s\n", path, strerror(errno));
		exit(1);
	}
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *tab2 = tab ? strchr(tab + 1, '\t') : NULL;

		if (!tab2 || strncmp(line, "saved_name\t", 11) == 0)
			continue;
		*tab = *tab2 = '\0';
		manifest = reallocarray(manifest, n_manifest + 1, sizeof(*manifest));
		manifest[n_manifest++] =
			(struct entry){ .saved = strdup(line), .repo_path = strdup(tab + 1) };
	}
	fclose(f);
}

static const struct entry *find_entry(const char *saved)
{
	for (size_t i = 0; i < n_manifest; i++)
		if (strcmp(manifest[i].saved, saved) == 0)
			return &manifest[i];
	return NULL;
}

/* Repository path of a corpus file; wiki snippets are named after their saved name. */
static void placed_path(const struct entry *e, char *out, size_t size)
{
	size_t l = strlen(e->repo_path);

	if (l > 3 && strcmp(e->repo_path + l - 3, ".md") == 0) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s", e->repo_path);
		snprintf(out, size, "%s/%s", dirname(dir), e->saved);
	} else {
		snprintf(out, size, "%s", e->repo_path);
	}
}

static const struct corpus_verdict *find_verdict(const char *saved)
{
	for (size_t i = 0; i < sizeof(CORPUS_VERDICTS) / sizeof(CORPUS_VERDICTS[0]); i++)
		if (strcmp(CORPUS_VERDICTS[i].file, saved) == 0)
			return &CORPUS_VERDICTS[i];
	return NULL;
}

/* ---------------- the scratch checkout */

struct tree {
	char root[PATH_MAX];
	char cwd[PATH_MAX];
	char name[PATH_MAX]; /* the policy, relative to cwd */
	char env[4][PATH_MAX + 32];
	char *envp[6];
};

static void place(const struct tree *t, const struct entry *e)
{
	char rel[PATH_MAX], dst[PATH_MAX * 3], src[PATH_MAX * 3], dir[PATH_MAX * 3];

	placed_path(e, rel, sizeof(rel));
	snprintf(dst, sizeof(dst), "%s/repo/%s", t->root, rel);
	snprintf(dir, sizeof(dir), "%s", dst);
	mkdir_p(dirname(dir));
	snprintf(src, sizeof(src), "%s/%s", corpus, e->saved);
	copy_file(src, dst);
}

/* The file at its repository path, its newest siblings beside it. */
static void build_tree(struct tree *t, const struct entry *self)
{
	char rel[PATH_MAX], mine[PATH_MAX], dir[PATH_MAX * 3];

	snprintf(t->root, sizeof(t->root), "/tmp/pysb-corpus-XXXXXX");
	assert_non_null(mkdtemp(t->root));
	placed_path(self, mine, sizeof(mine));
	for (size_t i = 0; i < n_manifest; i++) {
		const struct entry *e = &manifest[i];
		char a[PATH_MAX], b[PATH_MAX];

		placed_path(e, rel, sizeof(rel));
		snprintf(a, sizeof(a), "%s", rel);
		snprintf(b, sizeof(b), "%s", mine);
		if (e != self && !strchr(e->saved, '@') && strcmp(rel, mine) != 0 &&
		    strcmp(dirname(a), dirname(b)) == 0)
			place(t, e);
	}
	place(t, self);
	snprintf(dir, sizeof(dir), "%s/repo/%s", t->root, mine);
	snprintf(t->name, sizeof(t->name), "%s", basename(dir));
	snprintf(t->cwd, sizeof(t->cwd), "%s", dirname(dir));
	for (size_t i = 0; i < sizeof(CWD_DIRS) / sizeof(CWD_DIRS[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/%s", t->cwd, CWD_DIRS[i]);
		mkdir_p(dir);
	}
	for (size_t i = 0; i < sizeof(HOME_DIRS) / sizeof(HOME_DIRS[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/home/%s", t->root, HOME_DIRS[i]);
		mkdir_p(dir);
	}
	snprintf(dir, sizeof(dir), "%s/tmp", t->root);
	mkdir_p(dir);
	snprintf(dir, sizeof(dir), "%s/prefix/lib", t->root);
	mkdir_p(dir);
	snprintf(t->env[0], sizeof(t->env[0]), "HOME=%s/home", t->root);
	snprintf(t->env[1], sizeof(t->env[1]), "PWD=%s", t->cwd);
	snprintf(t->env[2], sizeof(t->env[2]), "TMPDIR=%s/tmp", t->root);
	snprintf(t->env[3], sizeof(t->env[3]), "PYTHON_BASE_PREFIX=%s/prefix", t->root);
	for (int i = 0; i < 4; i++)
		t->envp[i] = t->env[i];
	t->envp[4] = NULL;
}

/* ---------------- the test */

static bool matches(const struct diag *m, const struct corpus_verdict *v, const char *self)
{
	const char *base = m->file ? strrchr(m->file, '/') : NULL;
	const char *want = v->err_file ? v->err_file : self;

	base = base ? base + 1 : m->file;
	return base && strcmp(base, want) == 0 && m->line == v->line && m->msg &&
	       strstr(m->msg, v->msg);
}

/* Prints what went wrong and returns false when the parse does not match the verdict. */
static bool check_verdict(const struct corpus_verdict *v, const char *self, int ret,
			  const struct diag_list *d)
{
	bool ok = v->valid ? ret == 0 : false;

	for (size_t i = 0; !v->valid && ret != 0 && !ok && i < d->n_errors; i++)
		ok = matches(&d->errors[i], v, self);
	if (!ok) {
		fprintf(stderr, "%s: expected %s", v->file, v->valid ? "valid" : "invalid");
		if (!v->valid)
			fprintf(stderr, " with %s:%u '%s'", v->err_file ? v->err_file : self,
				v->line, v->msg);
		fprintf(stderr, ", got:\n");
		diag_print(stderr, d);
	}
	return ok;
}

static void test_corpus_file(void **state)
{
	const char *saved = *state;
	const struct corpus_verdict *v = find_verdict(saved);
	const struct entry *e = find_entry(saved);
	struct diag_list d = { 0 };
	struct policy *p = NULL;
	struct tree t;
	bool ok;
	int ret;

	if (!v)
		fail_msg("%s has no recorded verdict: add one to tests/unit/corpus_verdicts.h",
			 saved);
	if (v->not_policy) {
		fprintf(stderr, "%s: %s, not a policy file: skipped\n", saved, v->why);
		skip();
	}
	if (!e)
		fail_msg("%s is not in MANIFEST.tsv", saved);
	build_tree(&t, e);
	ret = policy_parse_file(t.name, t.envp, t.cwd, NULL, 0, &p, &d);
	if (ret == 0) {
		char **env;

		assert_int_equal(policy_build_env(p, t.envp, &env), 0);
		policy_env_free(env);
	}
	nftw(t.root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	ok = check_verdict(v, t.name, ret, &d);
	policy_free(p);
	diag_free(&d);
	assert_true(ok);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One cmocka test per corpus file, named after it. */
int main(void)
{
	struct CMUnitTest *tests = NULL;
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *dir;
	int ret;

	corpus = getenv("PYSB_CORPUS_DIR") ? getenv("PYSB_CORPUS_DIR") : DEFAULT_CORPUS;
	dir = opendir(corpus);
	if (!dir) {
		fprintf(stderr,
			"corpus: cannot open %s (run from the repository root or set "
			"PYSB_CORPUS_DIR): %s\n",
			corpus, strerror(errno));
		return 1;
	}
	load_manifest();
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || strcmp(de->d_name, "..") == 0))
			continue;
		names = reallocarray(names, n + 1, sizeof(*names));
		names[n++] = strdup(de->d_name);
	}
	closedir(dir);
	qsort(names, n, sizeof(*names), by_name);
	tests = calloc(n, sizeof(*tests));
	for (size_t i = 0; i < n; i++)
		tests[i] = (struct CMUnitTest){ .name = names[i],
						.test_func = test_corpus_file,
						.initial_state = names[i] };
	ret = _cmocka_run_group_tests("corpus", tests, n, NULL, NULL);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	for (size_t i = 0; i < n_manifest; i++) {
		free(manifest[i].saved);
		free(manifest[i].repo_path);
	}
	free(manifest);
	free(names);
	free(tests);
	return ret;
}
