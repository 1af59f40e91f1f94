/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the policy compiler (user/compile/compile.c, user/compile/implicit.c) and of `pysb-bpf
 * check` (user/cli/check.c): file entries keyed by (dev, ino) as stat(2) gives them, access
 * bits, nested rules, the union when two spellings name one inode, the implicit set on and
 * off and never narrowing an explicit tree, the exec decision from python-api lines, the
 * bpf.* validation, and the check report (JSON parsed back with jansson, text, exit codes).
 * No root: everything lives in a scratch directory.
 */
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <netdb.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "check.h"
#include "compile.h"
#include "policy.h"

static char tmp[] = "/tmp/pysb-test-compile-XXXXXX";
static char home_var[sizeof(tmp) + 16];
static char *envp[] = { home_var, "LANG=C.UTF-8", "SECRET=s3cr3t", "API_KEY=k", NULL };

#include "capture.h"
#include "fixture.h"

static int group_setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmp))
		return -1;
	snprintf(home_var, sizeof(home_var), "HOME=%s", tmp);
	mkdir(tpath("ro"), 0755);
	mkdir(tpath("ro/nested"), 0755);
	mkdir(tpath("rw"), 0755);
	mkdir(tpath("rw/sub"), 0755);
	put("ro/file", "x\n");
	put("rw/.env", "TOKEN=1\n");
	if (link(tpath("ro/file"), tpath("rw/hardlink")))
		return -1;
	return symlink(tpath("ro"), tpath("ro-link"));
}

/* ---------------- helpers */

struct result {
	struct policy *p;
	struct compiled c;
	int ret;
	char err[8192]; /* what the compiler printed on stderr */
};

struct compile_call {
	struct result *r;
	bool implicit;
	const char *interpreter;
};

static int do_compile(void *arg)
{
	struct compile_call *cc = arg;
	struct compile_opts o = { .implicit = cc->implicit, .interpreter = cc->interpreter };

	return policy_compile(cc->r->p, &o, &cc->r->c);
}

/* Parses `text` (must be valid) as t.pysb in the scratch directory, then compiles it. */
static struct result *compile_text_opts(const char *text, bool implicit, const char *interp)
{
	struct result *r = calloc(1, sizeof(*r));
	struct diag_list d = { 0 };
	struct compile_call cc = { .r = r, .implicit = implicit, .interpreter = interp };

	assert_non_null(r);
	if (policy_parse_buffer("t.pysb", text, strlen(text), envp, tmp, &r->p, &d)) {
		diag_print(stderr, &d);
		fail_msg("policy does not parse: %s", text);
	}
	diag_free(&d);
	r->ret = capture_output(do_compile, &cc, false, r->err, sizeof(r->err));
	return r;
}

static struct result *compile_ok(const char *text)
{
	struct result *r = compile_text_opts(text, false, NULL);

	if (r->ret)
		fail_msg("compile failed: %s", r->err);
	return r;
}

static void done(struct result *r)
{
	compiled_free(&r->c);
	policy_free(r->p);
	free(r);
}

static const struct compiled_file *entry_of(const struct compiled *c, const char *path)
{
	struct stat st;

	if (stat(path, &st))
		fail_msg("stat %s", path);
	for (size_t i = 0; i < c->n_files; i++)
		if (c->files[i].ino == (uint64_t)st.st_ino &&
		    c->files[i].dev == kernel_dev(st.st_dev))
			return &c->files[i];
	return NULL;
}

/* ---------------- explicit rules */

static void test_explicit_entries(void **state)
{
	struct result *r;
	const struct compiled_file *f;
	struct stat st;
	char real[PATH_MAX];

	(void)state;
	r = compile_ok("expose-ro=ro\nexpose-rw=rw\n");
	assert_int_equal(r->c.n_files, 2);
	/* the key is (dev, ino) exactly as stat(2) gives them, dev as the kernel's dev_t */
	assert_int_equal(stat(tpath("ro"), &st), 0);
	assert_int_equal(r->c.files[0].ino, st.st_ino);
	assert_int_equal(r->c.files[0].dev, (major(st.st_dev) << 20) | minor(st.st_dev));
	assert_int_equal(r->c.files[0].access, PYSB_ACC_READ | PYSB_ACC_EXEC);
	assert_false(r->c.files[0].implicit);
	assert_int_equal(r->c.files[0].src.line, 1);
	assert_int_equal(r->c.files[0].src.col, 11);
	assert_string_equal(r->c.files[0].src.file, "t.pysb");
	assert_non_null(realpath(tpath("ro"), real));
	assert_string_equal(r->c.files[0].path, real);
	f = entry_of(&r->c, tpath("rw"));
	assert_non_null(f);
	assert_int_equal(f->access, PYSB_ACC_READ | PYSB_ACC_WRITE | PYSB_ACC_EXEC);
	assert_int_equal(f->src.line, 2);
	done(r);
}

static void test_nested_rules(void **state)
{
	struct result *r;
	const struct compiled_file *f;

	(void)state;
	/* each rule is its own entry: the nearest one decides in the kernel */
	r = compile_ok("expose-rw=rw\nexpose-ro=rw/sub\nexpose-ro=ro\nexpose-rw=ro/nested\n");
	assert_int_equal(r->c.n_files, 4);
	f = entry_of(&r->c, tpath("rw/sub"));
	assert_non_null(f);
	/* in a tree the program may write, a rule's object keeps its name */
	assert_int_equal(f->access, PYSB_ACC_RO | PYSB_ACC_KEEP_NAME);
	f = entry_of(&r->c, tpath("ro/nested"));
	assert_non_null(f);
	assert_int_equal(f->access, PYSB_ACC_RW);
	assert_int_equal(entry_of(&r->c, tpath("rw"))->access, PYSB_ACC_RW);
	assert_int_equal(entry_of(&r->c, tpath("ro"))->access, PYSB_ACC_RO);
	done(r);
}

/* A policy file in a tree it lets the program write: read-only, its name and the names
 * of the directories above it (up to the tree's root) kept; outside such trees, nothing. */
static void test_policy_file_in_rw_tree_kept(void **state)
{
	const struct compiled_file *f;
	struct diag_list d = { 0 };
	struct compile_opts o = { 0 };
	struct policy *p;
	struct compiled c;
	char text[PATH_MAX + 64];

	(void)state;
	mkdir(tpath("rw/sub/deeper"), 0755);
	snprintf(text, sizeof(text), "expose-rw=%s\nexpose-ro=%s\n", tpath("rw"), tpath("ro"));
	put("rw/sub/deeper/p.pysb", text);
	put("ro/q.pysb", text);
	assert_int_equal(
		policy_parse_file(tpath("rw/sub/deeper/p.pysb"), envp, tmp, NULL, 0, &p, &d), 0);
	assert_int_equal(policy_compile(p, &o, &c), 0);
	f = entry_of(&c, tpath("rw/sub/deeper/p.pysb"));
	assert_non_null(f);
	assert_int_equal(f->access, PYSB_ACC_RO | PYSB_ACC_KEEP_NAME);
	assert_true(f->implicit);
	assert_int_equal(entry_of(&c, tpath("rw/sub/deeper"))->access,
			 PYSB_ACC_RW | PYSB_ACC_KEEP_NAME);
	assert_int_equal(entry_of(&c, tpath("rw/sub"))->access, PYSB_ACC_RW | PYSB_ACC_KEEP_NAME);
	/* the tree's root: its parent is not writable, nothing renames it */
	assert_int_equal(entry_of(&c, tpath("rw"))->access, PYSB_ACC_RW);
	compiled_free(&c);
	policy_free(p);

	assert_int_equal(policy_parse_file(tpath("ro/q.pysb"), envp, tmp, NULL, 0, &p, &d), 0);
	assert_int_equal(policy_compile(p, &o, &c), 0);
	assert_null(entry_of(&c, tpath("ro/q.pysb")));
	assert_int_equal(c.n_files, 2);
	compiled_free(&c);
	policy_free(p);
	diag_free(&d);
}

/* An explicit rule inside a tree the program may write: its object, the links it was
 * named through and the directories above it keep their names (KEEP_NAME), each with what
 * the rules grant it; a rule whose parent the program cannot write gets nothing more. */
static void test_rule_names_in_rw_tree_kept(void **state)
{
	const struct compiled_file *f;
	struct result *r;
	struct stat st;
	bool link_kept = false;

	(void)state;
	mkdir(tpath("rw/deep"), 0755);
	mkdir(tpath("rw/deep/er"), 0755);
	put("rw/deep/er/f", "x\n");
	assert_int_equal(symlink(tpath("ro/nested"), tpath("rw/to-nested")), 0);
	r = compile_ok("expose-rw=rw\nexpose-ro=rw/deep/er/f\nexpose-ro=rw/to-nested\n");
	assert_int_equal(entry_of(&r->c, tpath("rw/deep/er/f"))->access,
			 PYSB_ACC_RO | PYSB_ACC_KEEP_NAME);
	assert_int_equal(entry_of(&r->c, tpath("rw/deep/er"))->access,
			 PYSB_ACC_RW | PYSB_ACC_KEEP_NAME);
	assert_int_equal(entry_of(&r->c, tpath("rw/deep"))->access,
			 PYSB_ACC_RW | PYSB_ACC_KEEP_NAME);
	assert_int_equal(entry_of(&r->c, tpath("rw"))->access, PYSB_ACC_RW);
	/* the link's own inode keeps its name; its target is granted what the rule says */
	assert_int_equal(lstat(tpath("rw/to-nested"), &st), 0);
	for (size_t i = 0; i < r->c.n_files; i++) {
		f = &r->c.files[i];
		link_kept |= f->link && f->ino == (uint64_t)st.st_ino &&
			     f->access == (PYSB_ACC_READ | PYSB_ACC_KEEP_NAME);
	}
	assert_true(link_kept);
	assert_int_equal(entry_of(&r->c, tpath("ro/nested"))->access, PYSB_ACC_RO);
	done(r);
	unlink(tpath("rw/to-nested"));
}

/* Every entry the next run's lookup passes keeps its name where the program may write it
 * (found by a review): a link inside another link's target (data -> cache/data, cache ->
 * ../srv/cache), a directory left by `..` after a link, a second spelling of one path, an
 * include named through a link. Each could be re-pointed or replaced before. */
static bool kept(const struct compiled *c, const char *path, bool link)
{
	struct stat st;

	if ((link ? lstat(path, &st) : stat(path, &st)))
		return false;
	for (size_t i = 0; i < c->n_files; i++)
		if (c->files[i].ino == (uint64_t)st.st_ino && c->files[i].link == link &&
		    (c->files[i].access & PYSB_ACC_KEEP_NAME))
			return true;
	return false;
}

static void test_names_on_every_way_kept(void **state)
{
	struct diag_list d = { 0 };
	struct compile_opts o = { 0 };
	struct policy *p;
	struct compiled c;
	struct result *r;
	char text[4 * PATH_MAX];

	(void)state;
	mkdir(tpath("w"), 0755);
	mkdir(tpath("w/srv"), 0755);
	mkdir(tpath("w/srv/cache"), 0755);
	mkdir(tpath("w/srv/cache/data"), 0755);
	mkdir(tpath("w/proj"), 0755);
	mkdir(tpath("w/proj/sub"), 0755);
	mkdir(tpath("w/proj/sub/deeper"), 0755);
	put("w/proj/sub/x", "x\n");
	assert_int_equal(symlink("cache/data", tpath("w/srv/data")), 0);
	assert_int_equal(symlink("../srv/cache", tpath("w/srv/cache-link")), 0);
	assert_int_equal(symlink("cache-link/data", tpath("w/srv/chain")), 0);
	assert_int_equal(symlink("sub/deeper", tpath("w/proj/lnk")), 0);
	assert_int_equal(symlink("../srv/data", tpath("w/proj/data")), 0);
	/* a chain: w/srv/chain -> cache-link/data, cache-link -> ../srv/cache */
	r = compile_ok("expose-rw=w\nexpose-ro=w/srv/chain\n");
	assert_true(kept(&r->c, tpath("w/srv/chain"), true));
	assert_true(kept(&r->c, tpath("w/srv/cache-link"), true));
	assert_true(kept(&r->c, tpath("w/srv/cache/data"), false));
	assert_int_equal(entry_of(&r->c, tpath("w/srv/cache/data"))->access,
			 PYSB_ACC_RO | PYSB_ACC_KEEP_NAME);
	done(r);
	/* `..` after a link: lnk -> sub/deeper, then .. is sub: deeper is passed and kept */
	r = compile_ok("expose-rw=w\nexpose-ro=w/proj/lnk/../x\n");
	assert_true(kept(&r->c, tpath("w/proj/lnk"), true));
	assert_true(kept(&r->c, tpath("w/proj/sub/deeper"), false));
	assert_true(kept(&r->c, tpath("w/proj/sub/x"), false));
	done(r);
	/* two spellings of one path: the second one's link kept too */
	r = compile_ok("expose-rw=w\nexpose-ro=w/srv/cache/data\nexpose-ro=w/proj/data\n");
	assert_true(kept(&r->c, tpath("w/proj/data"), true));
	assert_true(kept(&r->c, tpath("w/srv/data"), true));
	done(r);
	/* an include named through a link in the writable tree */
	assert_int_equal(symlink("../srv", tpath("w/proj/conf")), 0);
	put("w/srv/extra.pysb", "");
	snprintf(text, sizeof(text), "expose-rw=%s\ninclude \"%s\"\n", tpath("w"),
		 tpath("w/proj/conf/extra.pysb"));
	put("w/proj/p.pysb", text);
	assert_int_equal(policy_parse_file(tpath("w/proj/p.pysb"), envp, tmp, NULL, 0, &p, &d), 0);
	assert_int_equal(policy_compile(p, &o, &c), 0);
	assert_true(kept(&c, tpath("w/proj/conf"), true));
	assert_int_equal(entry_of(&c, tpath("w/srv/extra.pysb"))->access,
			 PYSB_ACC_RO | PYSB_ACC_KEEP_NAME);
	compiled_free(&c);
	policy_free(p);
	/* nothing the program may write: nothing kept */
	r = compile_ok("expose-ro=w\nexpose-ro=w/srv/chain\n");
	assert_false(kept(&r->c, tpath("w/srv/chain"), true));
	done(r);
	diag_free(&d);
}

/* An include? whose file is missing where the program may write (or below a directory it
 * may rename): the program could write the next run's rules, so the policy is refused and
 * says why; missing where it may only read, the line is skipped as before. */
static void test_absent_include_where_writable_refused(void **state)
{
	struct result *r;

	(void)state;
	r = compile_text_opts("expose-rw=rw\ninclude? \"rw/local.pysb\"\n", false, NULL);
	assert_int_not_equal(r->ret, 0);
	assert_non_null(strstr(r->err, "rw/local.pysb, which does not exist, and the program may "
				       "write "));
	assert_non_null(strstr(r->err, "create the file (it may be empty"));
	done(r);
	r = compile_text_opts("expose-rw=rw\ninclude? \"rw/conf.d/x.pysb\"\n", false, NULL);
	assert_int_not_equal(r->ret, 0);
	done(r);
	r = compile_ok("expose-rw=rw\nexpose-ro=ro\ninclude? \"ro/absent.pysb\"\n");
	done(r);
	/* `..` out of the writable tree: the file would be made in ro, not refused */
	r = compile_ok("expose-rw=ro/nested\ninclude? \"ro/nested/../absent.pysb\"\n");
	done(r);
	/* behind a dangling link, whose target is in the writable tree: refused */
	assert_int_equal(symlink(tpath("rw/planted.pysb"), tpath("ro/dangling.pysb")), 0);
	r = compile_text_opts("expose-rw=rw\ninclude? \"ro/dangling.pysb\"\n", false, NULL);
	assert_int_not_equal(r->ret, 0);
	assert_non_null(strstr(r->err, "the program may write "));
	done(r);
	unlink(tpath("ro/dangling.pysb"));
}

static void f_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/*
 * The script is granted only when no link on the way to it, as the kernel resolves its
 * name, lies where the program may write. The link a run could re-point may sit in a
 * link's target (ro/to-rw -> ../rw/d, d a link in the rw tree): the spelled name's own
 * prefixes hold none (found by a review; granted before).
 */
static void test_script_through_relinkable_link_not_granted(void **state)
{
	struct result *r = compile_ok("expose-rw=rw\nexpose-ro=ro\n");
	struct diag_list d = { 0 };

	(void)state;
	mkdir(tpath("other"), 0755);
	put("other/app.py", "x\n");
	put("ro/app.py", "x\n");
	assert_int_equal(symlink("../other", tpath("rw/d")), 0);
	assert_int_equal(symlink("../rw/d", tpath("ro/to-rw")), 0);
	assert_int_equal(symlink("app.py", tpath("ro/same")), 0);
	assert_false(script_grantable(&r->c, tpath("ro/to-rw/app.py"), tpath("other/app.py"), &d));
	assert_int_equal(d.n_warnings, 1);
	assert_non_null(strstr(d.warnings[0].msg, tpath("rw/d")));
	assert_false(script_grantable(&r->c, tpath("rw/d/app.py"), tpath("other/app.py"), &d));
	/* a link where the program only reads, a plain name, a relative name: granted */
	assert_true(script_grantable(&r->c, tpath("ro/same"), tpath("ro/app.py"), &d));
	assert_true(script_grantable(&r->c, tpath("ro/app.py"), tpath("ro/app.py"), &d));
	assert_int_equal(d.n_warnings, 2);
	/* in a tree the program may write: readable by its rule, no implicit grant that a
	 * swap between two lookups could move (found by an adversary) */
	put("rw/app.py", "x\n");
	assert_false(script_grantable(&r->c, tpath("rw/app.py"), tpath("rw/app.py"), &d));
	assert_int_equal(d.n_warnings, 2);
	/* the name resolves to another file than when the command was read */
	assert_false(script_grantable(&r->c, tpath("ro/app.py"), tpath("other/app.py"), &d));
	assert_int_equal(d.n_warnings, 3);
	assert_non_null(strstr(d.warnings[2].msg, "when the command was read"));
	/* through a bind mount of the rw tree: the same inodes by another path (found by a
	 * review: judged by path, the link there was followed); as root only */
	mkdir(tpath("bind"), 0755);
	assert_int_equal(symlink("../other/app.py", tpath("rw/app2.py")), 0);
	if (!mount(tpath("rw"), tpath("bind"), NULL, MS_BIND, NULL)) {
		/* judged, then unmounted, then asserted: a failure leaves no mount behind */
		bool granted =
			script_grantable(&r->c, tpath("bind/app2.py"), tpath("other/app.py"), &d);
		bool named = d.n_warnings &&
			     strstr(d.warnings[d.n_warnings - 1].msg, tpath("bind/app2.py"));

		umount(tpath("bind"));
		assert_false(granted);
		assert_true(named);
	}
	unlink(tpath("rw/app2.py"));
	diag_free(&d);
	unlink(tpath("ro/same"));
	unlink(tpath("ro/to-rw"));
	unlink(tpath("rw/d"));
	done(r);
}

/* .gitmodules, read by root in a tree the program may write, as a FIFO or a link to a
 * device: never opened (found by an adversary: a FIFO hung the run and the daemon's
 * reload, a link to /dev/watchdog reset the machine). The alarm turns a hang into a
 * failure. */
static void test_gitmodules_fifo_or_device_never_opened(void **state)
{
	struct result *r;

	(void)state;
	mkdir(tpath("rw/gm"), 0755);
	mkdir(tpath("rw/gm/.git"), 0755);
	assert_int_equal(mkfifo(tpath("rw/gm/.gitmodules"), 0644), 0);
	alarm(20);
	r = compile_ok("expose-rw=rw\n");
	alarm(0);
	done(r);
	unlink(tpath("rw/gm/.gitmodules"));
	assert_int_equal(symlink("/dev/null", tpath("rw/gm/.gitmodules")), 0);
	r = compile_ok("expose-rw=rw\n");
	done(r);
	unlink(tpath("rw/gm/.gitmodules"));
	rmdir(tpath("rw/gm/.git"));
	rmdir(tpath("rw/gm"));
}

/* A rule naming a server's socket through a link in a directory the program may write is
 * an error (a review: the program re-points the link at tmux's socket, the next run grants
 * it); a socket in such a directory is a warning; elsewhere, nothing. Also what the user's
 * tools run (.git, another project's .py-sandboxes) is kept read-only, a .git named by a
 * rule is not. */
static void test_socket_rules_and_tool_files(void **state)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const struct compiled_file *f;
	struct result *r;
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	(void)state;
	mkdir(tpath("rw/run"), 0755);
	mkdir(tpath("ro/srv"), 0755);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", tpath("ro/srv/tmux.sock"));
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(symlink(tpath("ro/srv/tmux.sock"), tpath("rw/run/agent.sock")), 0);
	r = compile_text_opts("expose-rw=rw\nexpose-rw=rw/run/agent.sock\n", false, NULL);
	assert_int_not_equal(r->ret, 0);
	assert_non_null(strstr(r->err, "names a unix socket through the link"));
	done(r);
	r = compile_ok("expose-ro=rw\nexpose-rw=rw/run/agent.sock\n"); /* the link's dir: ro */
	assert_null(strstr(r->err, "socket"));
	done(r);
	r = compile_ok("expose-rw=ro/srv\nexpose-rw=ro/srv/tmux.sock\n");
	assert_non_null(
		strstr(r->err, "is a server's socket in a directory the program may write"));
	done(r);
	unlink(tpath("rw/run/agent.sock"));
	unlink(tpath("ro/srv/tmux.sock"));
	close(s);
	/* .git and another project's policy, in the rw directory and one below it */
	mkdir(tpath("rw/.git"), 0755);
	mkdir(tpath("rw/b"), 0755);
	fclose(fopen(tpath("rw/b/.py-sandboxes"), "w"));
	r = compile_ok("expose-rw=rw\n");
	f = entry_of(&r->c, tpath("rw/.git"));
	assert_non_null(f);
	assert_int_equal(f->access & (PYSB_ACC_WRITE | PYSB_ACC_KEEP_NAME), PYSB_ACC_KEEP_NAME);
	f = entry_of(&r->c, tpath("rw/b/.py-sandboxes"));
	assert_non_null(f);
	assert_int_equal(f->access & (PYSB_ACC_WRITE | PYSB_ACC_KEEP_NAME), PYSB_ACC_KEEP_NAME);
	assert_non_null(entry_of(&r->c, tpath("rw/b"))); /* on the way: its name kept */
	done(r);
	/* a submodule's .git file, deeper, named by .gitmodules (a review) */
	mkdir(tpath("rw/libs"), 0755);
	mkdir(tpath("rw/libs/sub"), 0755);
	f_write(tpath("rw/.gitmodules"), "[submodule \"s\"]\n\tpath = libs/sub\n");
	f_write(tpath("rw/libs/sub/.git"), "gitdir: ../../.git/modules/s\n");
	r = compile_ok("expose-rw=rw\n");
	f = entry_of(&r->c, tpath("rw/libs/sub/.git"));
	assert_non_null(f);
	assert_int_equal(f->access & (PYSB_ACC_WRITE | PYSB_ACC_KEEP_NAME), PYSB_ACC_KEEP_NAME);
	done(r);
	unlink(tpath("rw/libs/sub/.git"));
	unlink(tpath("rw/.gitmodules"));
	rmdir(tpath("rw/libs/sub"));
	rmdir(tpath("rw/libs"));
	r = compile_ok("expose-rw=rw\nexpose-rw=rw/.git\n"); /* the user's choice */
	assert_true(entry_of(&r->c, tpath("rw/.git"))->access & PYSB_ACC_WRITE);
	done(r);
	rmdir(tpath("rw/.git"));
	unlink(tpath("rw/b/.py-sandboxes"));
	rmdir(tpath("rw/b"));
	rmdir(tpath("rw/run"));
	rmdir(tpath("ro/srv"));
	/* a directory with no subdirectory (its link count says so: not read, its two names
	 * looked up): a worktree's .git file and a policy still found */
	mkdir(tpath("leaf"), 0755);
	f_write(tpath("leaf/.git"), "gitdir: /elsewhere/.git/worktrees/w\n");
	fclose(fopen(tpath("leaf/.py-sandboxes"), "w"));
	r = compile_ok("expose-rw=leaf\n");
	for (int i = 0; i < 2; i++) {
		f = entry_of(&r->c, tpath(i ? "leaf/.py-sandboxes" : "leaf/.git"));
		assert_non_null(f);
		assert_int_equal(f->access & (PYSB_ACC_WRITE | PYSB_ACC_KEEP_NAME),
				 PYSB_ACC_KEEP_NAME);
	}
	done(r);
	unlink(tpath("leaf/.git"));
	unlink(tpath("leaf/.py-sandboxes"));
	rmdir(tpath("leaf"));
}

/* A unix socket of this process bound to `name`, listening (the server outside). */
static int bound_socket(const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(s >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", name);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s, 1), 0);
	return s;
}

static uint32_t kept_bits(const struct compiled *c, const char *path)
{
	const struct compiled_file *f = entry_of(c, path);

	return f ? f->access & (PYSB_ACC_WRITE | PYSB_ACC_KEEP_NAME) : PYSB_ACC_WRITE;
}

/* The sockets of servers outside, where the program may write, keep their names, also
 * when /proc/net/unix's name is gone (an adversary: OpenSSH's ControlMaster binds a
 * temporary name, links ControlPath to it, unlinks the first) or relative (a chdir, then
 * bind). A socket file alone in a directory, with no server, is not kept. */
static void test_outside_servers_sockets_kept(void **state)
{
	char cwd[PATH_MAX];
	struct result *r;
	int s[3];

	(void)state;
	mkdir(tpath("rw/ssh"), 0755);
	mkdir(tpath("rw/rel"), 0755);
	mkdir(tpath("rw/stale"), 0755);
	s[0] = bound_socket(tpath("rw/ssh/master.Xa8d7f6e5"));
	assert_int_equal(link(tpath("rw/ssh/master.Xa8d7f6e5"), tpath("rw/ssh/master")), 0);
	assert_int_equal(unlink(tpath("rw/ssh/master.Xa8d7f6e5")), 0);
	close(bound_socket(tpath("rw/stale/gone"))); /* its file stays, its server is gone */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(tpath("rw/rel")), 0);
	s[1] = bound_socket("relative.sock");
	s[2] = bound_socket(tpath("rw/direct.sock"));
	r = compile_ok("expose-rw=rw\n");
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(kept_bits(&r->c, tpath("rw/ssh/master")), PYSB_ACC_KEEP_NAME);
	assert_int_equal(kept_bits(&r->c, tpath("rw/rel/relative.sock")), PYSB_ACC_KEEP_NAME);
	assert_int_equal(kept_bits(&r->c, tpath("rw/direct.sock")), PYSB_ACC_KEEP_NAME);
	assert_null(entry_of(&r->c, tpath("rw/stale/gone")));
	done(r);
	for (size_t i = 0; i < 3; i++)
		close(s[i]);
	unlink(tpath("rw/ssh/master"));
	unlink(tpath("rw/rel/relative.sock"));
	unlink(tpath("rw/direct.sock"));
	unlink(tpath("rw/stale/gone"));
	rmdir(tpath("rw/ssh"));
	rmdir(tpath("rw/rel"));
	rmdir(tpath("rw/stale"));
}

static void test_one_inode_two_spellings(void **state)
{
	struct result *r;
	const struct compiled_file *f;

	(void)state;
	/* a hard link: two canonical paths, one inode, one entry with the union */
	r = compile_ok("expose-ro=ro/file\nexpose-rw=rw/hardlink\n");
	assert_int_equal(r->c.n_files, 1);
	f = entry_of(&r->c, tpath("ro/file"));
	assert_non_null(f);
	assert_int_equal(f->access, PYSB_ACC_RW);
	assert_int_equal(f->src.line, 1); /* the first rule names the entry */
	done(r);
	/* the other order gives the same */
	r = compile_ok("expose-rw=rw/hardlink\nexpose-ro=ro/file\n");
	assert_int_equal(r->c.n_files, 1);
	assert_int_equal(r->c.files[0].access, PYSB_ACC_RW);
	done(r);
	/* a symlink is resolved by the parser: same path, same mode, one rule */
	r = compile_ok("expose-ro=ro\nexpose-ro=ro-link\n");
	assert_int_equal(r->c.n_files, 1);
	done(r);
}

/* Thousands of entries: each stays distinct and findable (the (dev, ino) index grows). */
static void test_many_entries(void **state)
{
	char *text = malloc(600 * 64), name[64];
	size_t off = 0;
	struct result *r;

	(void)state;
	assert_non_null(text);
	mkdir(tpath("many"), 0755);
	for (int i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "many/d%03d", i);
		mkdir(tpath(name), 0755);
		off += (size_t)sprintf(text + off, "expose-%s=%s\n", i % 2 ? "rw" : "ro", name);
	}
	r = compile_ok(text);
	assert_int_equal(r->c.n_files, 600);
	for (int i = 0; i < 600; i++) {
		const struct compiled_file *f;

		snprintf(name, sizeof(name), "many/d%03d", i);
		f = entry_of(&r->c, tpath(name));
		assert_non_null(f);
		assert_int_equal(f->access, i % 2 ? PYSB_ACC_RW : PYSB_ACC_RO);
		assert_int_equal(f->src.line, (unsigned)i + 1);
	}
	done(r);
	free(text);
}

/* ---------------- implicit paths */

static size_t count_implicit(const struct compiled *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n_files; i++)
		n += c->files[i].implicit;
	return n;
}

static void test_implicit_on_off(void **state)
{
	struct result *r;
	const struct compiled_file *f;

	(void)state;
	r = compile_text_opts("expose-ro=ro\n", true, NULL);
	assert_int_equal(r->ret, 0);
	assert_true(count_implicit(&r->c) > 0);
	f = entry_of(&r->c, "/dev/null");
	assert_non_null(f);
	assert_true(f->implicit);
	assert_string_equal(f->why, "null device");
	assert_int_equal(f->access, PYSB_ACC_RW | PYSB_ACC_DEVICES);
	f = entry_of(&r->c, "/dev/urandom");
	assert_non_null(f);
	assert_int_equal(f->access, PYSB_ACC_READ | PYSB_ACC_DEVICES);
	done(r);
	/* off: only the policy's own rules */
	r = compile_text_opts("expose-ro=ro\n", false, NULL);
	assert_int_equal(r->ret, 0);
	assert_int_equal(count_implicit(&r->c), 0);
	assert_int_equal(r->c.n_files, 1);
	done(r);
}

/* The interpreter chain and the script are implicit too. */
static void test_implicit_program(void **state)
{
	struct result *r;
	const struct compiled_file *f;

	(void)state;
	r = compile_text_opts("expose-ro=rw/sub\n", true, "/bin/sh");
	assert_int_equal(r->ret, 0);
	f = entry_of(&r->c, "/bin/sh");
	assert_non_null(f);
	assert_true(f->implicit);
	assert_true(f->access & PYSB_ACC_EXEC);
	done(r);
}

/* Debian's ensurepip reads pip's wheel from /usr/share/python-wheels: `python3 -m venv
 * DIR` failed in the sandbox without it (found by a user). Read only, for a Python. */
static void test_implicit_python_wheels(void **state)
{
	struct result *r;
	const struct compiled_file *f;
	struct stat st;

	(void)state;
	if (stat("/usr/share/python-wheels", &st) || !S_ISDIR(st.st_mode) ||
	    access("/usr/bin/python3", X_OK))
		skip();
	r = compile_text_opts("expose-ro=ro\n", true, "/usr/bin/python3");
	assert_int_equal(r->ret, 0);
	f = entry_of(&r->c, "/usr/share/python-wheels");
	assert_non_null(f);
	assert_true(f->implicit);
	assert_int_equal(f->access, PYSB_ACC_READ);
	done(r);
	r = compile_text_opts("expose-ro=ro\n", true, "/bin/sh");
	assert_int_equal(r->ret, 0);
	assert_null(entry_of(&r->c, "/usr/share/python-wheels"));
	done(r);
}

static void test_implicit_never_narrows(void **state)
{
	struct result *r;
	const struct compiled_file *f;

	(void)state;
	/* /dev/urandom is implicitly read-only; inside an explicit RW tree it stays RW */
	r = compile_text_opts("expose-rw=/dev\n", true, NULL);
	assert_int_equal(r->ret, 0);
	f = entry_of(&r->c, "/dev/urandom");
	assert_non_null(f);
	assert_true(f->implicit);
	assert_int_equal(f->access, PYSB_ACC_RW | PYSB_ACC_DEVICES);
	done(r);
	/* the same inode named by both: the union, never less than the explicit rule */
	r = compile_text_opts("expose-rw=/dev/urandom\n", true, NULL);
	assert_int_equal(r->ret, 0);
	f = entry_of(&r->c, "/dev/urandom");
	assert_non_null(f);
	assert_false(f->implicit); /* the explicit rule came first and names it */
	assert_int_equal(f->access, PYSB_ACC_RW | PYSB_ACC_DEVICES);
	done(r);
	/* an explicit read-only rule on an implicitly RW device: RW (the union) */
	r = compile_text_opts("expose-ro=/dev/null\n", true, NULL);
	assert_int_equal(r->ret, 0);
	assert_int_equal(entry_of(&r->c, "/dev/null")->access, PYSB_ACC_RW | PYSB_ACC_DEVICES);
	done(r);
	/* devices: a rule on /dev or below, or on a device node, grants them; one above
	 * /dev grants files only (bpf/file.bpf.c, char_device_outside_rules) */
	r = compile_text_opts("expose-ro=/\nexpose-ro=/dev/pts\nexpose-ro=/usr\n", false, NULL);
	assert_int_equal(r->ret, 0);
	assert_int_equal(entry_of(&r->c, "/")->access, PYSB_ACC_RO);
	assert_int_equal(entry_of(&r->c, "/usr")->access, PYSB_ACC_RO);
	assert_int_equal(entry_of(&r->c, "/dev/pts")->access, PYSB_ACC_RO | PYSB_ACC_DEVICES);
	done(r);
	/* /dev's name kept under expose-rw=/ (a rule below it): what / grants, no devices */
	r = compile_text_opts("expose-rw=/\nexpose-ro=/dev/pts\n", false, NULL);
	assert_int_equal(r->ret, 0);
	assert_int_equal(entry_of(&r->c, "/dev")->access, PYSB_ACC_RW | PYSB_ACC_KEEP_NAME);
	done(r);
}

/* ---------------- exec decision */

/* Every function of process-exec that starts a program on Linux (guard_api.SENSITIVE_API). */
#define EXEC_FUNCS                                                                           \
	"os.system,posix.system,os.popen,os.execv,posix.execv,os.execve,posix.execve,"       \
	"os.execl,os.execle,os.execlp,os.execlpe,os.execvp,os.execvpe,os.spawnv,os.spawnve," \
	"os.spawnvp,os.spawnvpe,os.spawnl,os.spawnle,os.spawnlp,os.spawnlpe,os.posix_spawn," \
	"posix.posix_spawn,os.posix_spawnp,posix.posix_spawnp,subprocess.Popen,"             \
	"subprocess.run,subprocess.call,subprocess.check_call,subprocess.check_output,"      \
	"subprocess.getoutput,subprocess.getstatusoutput,_posixsubprocess.fork_exec,"        \
	"pty.spawn,multiprocessing.Process.start"

static void test_exec_decision(void **state)
{
	static const struct {
		const char *text;
		bool allowed;
		unsigned line; /* the line that decided, 0: none (the default) */
	} cases[] = {
		{ "expose-ro=ro\n", false, 0 },
		{ "python-api=ALLOW:process-exec\n", true, 1 },
		{ "python-api=ALLOW:*\n", true, 1 },
		{ "python-api=ALLOW:threads,process-exec\n", true, 1 },
		{ "python-api=ALLOW:process-exec,threads\n", true, 1 },
		{ "python-api=ALLOW:threads\n", false, 0 },
		{ "python-api=DENY:process-exec\n", false, 1 },
		/* guard_api test_deny_wins_at_equal_specificity: DENY wins at one level */
		{ "python-api=ALLOW:process-exec\npython-api=DENY:process-exec\n", false, 2 },
		{ "python-api=DENY:process-exec\npython-api=ALLOW:process-exec\n", false, 1 },
		/* guard_api test_wildcard_allow_and_deny_together_denies */
		{ "python-api=ALLOW:*\npython-api=DENY:*\n", false, 2 },
		/* guard_api.activate_guard: a category beats `*`, whatever the order (this
		 * denied with the old "last line decides" reading) */
		{ "python-api=ALLOW:process-exec\npython-api=DENY:*\n", true, 1 },
		{ "python-api=DENY:*\npython-api=ALLOW:process-exec\n", true, 2 },
		{ "python-api=ALLOW:*\npython-api=DENY:process-exec\n", false, 2 },
		{ "python-api=DENY:process-exec\npython-api=ALLOW:*\n", false, 1 },
		{ "python-api=ALLOW:process-exec\npython-api=ALLOW:threads\n", true, 1 },
		{ "python-api=ALLOW:process-exec\npython-api=DENY:threads,native\n", true, 1 },
		/* guard_api test_specificity_decides_not_order: a function beats its category,
		 * and a function that starts a program is an execve the kernel must let through */
		{ "python-api=ALLOW:subprocess.run\n", true, 1 },
		{ "python-api=DENY:process-exec\npython-api=ALLOW:subprocess.run\n", true, 2 },
		{ "python-api=ALLOW:subprocess.run\npython-api=DENY:*\n", true, 1 },
		/* guard_api test_wildcard_allow_with_function_deny: the other functions stay */
		{ "python-api=ALLOW:*\npython-api=DENY:os.system\n", true, 1 },
		/* fork without exec, and Windows-only functions, start no program here */
		{ "python-api=ALLOW:os.fork,pty.fork\n", false, 0 },
		{ "python-api=ALLOW:nt.system\n", false, 0 },
		/* the category allowed but each function denied: nothing may exec */
		{ "python-api=ALLOW:process-exec\npython-api=DENY:" EXEC_FUNCS "\n", false, 2 },
		{ "python-api=ALLOW:subprocess.run\npython-api=DENY:subprocess.run\n", false, 2 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct result *r = compile_ok(cases[i].text);

		if (r->c.exec_allowed != cases[i].allowed || r->c.exec_src.line != cases[i].line)
			fail_msg("%s: exec %s (line %u), expected %s (line %u)", cases[i].text,
				 r->c.exec_allowed ? "allowed" : "denied", r->c.exec_src.line,
				 cases[i].allowed ? "allowed" : "denied", cases[i].line);
		assert_int_equal(policy_exec_allowed(r->p, NULL), cases[i].allowed);
		done(r);
	}
}

/* ---------------- bpf.* parameters */

static void test_bpf_params_valid(void **state)
{
	static const char *const ok[] = {
		"bpf.mode=enforce\n",	     "bpf.mode=audit\n",
		"bpf.implicit=true\n",	     "bpf.implicit=FALSE\n",
		"bpf.implicit=0\n",	     "bpf.socket-family=netlink\n",
		"bpf.unix-abstract=allow\n", "qemu.memory=1G\nfirejail.net=br0\n",
		"bpf.events-buffer=64K\n",   "bpf.events-buffer=1G\n",
		"bpf.events-buffer=16MiB\n", "bpf.events-buffer=262144\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct result *r = compile_text_opts(ok[i], false, NULL);

		if (r->ret)
			fail_msg("%s: %s", ok[i], r->err);
		assert_int_equal(policy_check_bpf_params(r->p, NULL), 0);
		done(r);
	}
	{
		struct result *r = compile_text_opts(
			"bpf.events-buffer=8M\nbpf.events-buffer=32M\n", false, NULL);

		assert_int_equal(r->ret, 0); /* the last line wins */
		assert_int_equal(r->c.events_buffer, 32u << 20);
		done(r);
	}
	assert_int_equal(policy_bpf_bool("True"), 1);
	assert_int_equal(policy_bpf_bool("1"), 1);
	assert_int_equal(policy_bpf_bool("false"), 0);
	assert_int_equal(policy_bpf_bool("yes"), -1);
	assert_int_equal(policy_bpf_bool(""), -1);
}

static void test_bpf_params_errors(void **state)
{
	static const struct {
		const char *text, *where, *msg;
	} bad[] = {
		{ "bpf.modee=enforce\n", "t.pysb:1:1:", "unknown parameter 'bpf.modee'" },
		{ "expose-ro=ro\n  bpf.x=1\n", "t.pysb:2:3:", "unknown parameter 'bpf.x'" },
		{ "bpf.mode=strict\n", "t.pysb:1:10:", "expected enforce or audit" },
		{ "bpf.mode=Enforce\n", "t.pysb:1:10:", "expected enforce or audit" },
		{ "bpf.implicit=maybe\n", "t.pysb:1:14:", "expected true or false" },
		{ "bpf.unix-abstract=yes\n", "t.pysb:1:", "expected allow or deny" },
		{ "bpf.socket-family=nope\n", "t.pysb:1:", "unknown socket family" },
		{ "bpf.events-buffer=3M\n", "t.pysb:1:19:", "expected a power of two" },
		{ "bpf.events-buffer=32K\n", "t.pysb:1:19:", "from 64K to 1G" },
		{ "bpf.events-buffer=2G\n", "t.pysb:1:19:", "from 64K to 1G" },
		{ "bpf.events-buffer=4 M\n", "t.pysb:1:19:", "expected a power of two" },
		{ "bpf.events-buffer=big\n", "t.pysb:1:19:", "expected a power of two" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct result *r = compile_text_opts(bad[i].text, false, NULL);

		assert_int_not_equal(r->ret, 0);
		if (!strstr(r->err, bad[i].where) || !strstr(r->err, bad[i].msg))
			fail_msg("%s: wanted '%s ... %s', got: %s", bad[i].text, bad[i].where,
				 bad[i].msg, r->err);
		/* the compiled form is empty after a failure: never a partial policy */
		assert_int_equal(r->c.n_files, 0);
		done(r);
	}
	/* an unknown key lists the known ones; every bad line is reported, not the first */
	{
		struct result *r = compile_text_opts("bpf.a=1\nbpf.mode=x\nbpf.b=2\n", false, NULL);

		assert_int_not_equal(r->ret, 0);
		assert_non_null(strstr(r->err, "bpf.mode, bpf.implicit, bpf.socket-family, "
					       "bpf.unix-abstract"));
		assert_non_null(strstr(r->err, "t.pysb:1:1:"));
		assert_non_null(strstr(r->err, "t.pysb:2:10:"));
		assert_non_null(strstr(r->err, "t.pysb:3:1:"));
		done(r);
	}
}

/* ---------------- pysb-bpf check */

struct check_run {
	int ret;
	char out[1 << 17];
	char err[8192];
	json_t *doc; /* --json: the document parsed back */
};

struct check_call {
	struct check_opts *o;
	struct check_run *run;
};

static int do_check(void *arg)
{
	struct check_call *cc = arg;
	FILE *f = tmpfile();
	size_t n;
	int ret;

	assert_non_null(f);
	cc->o->out = f;
	ret = check_main(cc->o);
	rewind(f);
	n = fread(cc->run->out, 1, sizeof(cc->run->out) - 1, f);
	cc->run->out[n] = '\0';
	fclose(f);
	return ret;
}

/* check_main on the scratch file `name`; *json: the document parsed back (must parse). */
static struct check_run *check(const char *name, bool json, bool verbose,
			       const struct policy_override *ov, size_t n_ov)
{
	struct check_run *run = calloc(1, sizeof(*run));
	struct check_opts o = {
		.policy = name,
		.overrides = ov,
		.n_overrides = n_ov,
		.envp = envp,
		.cwd = tmp,
		.interpreter = "/nonexistent/python3",
		.json = json,
		.verbose = verbose,
	};
	struct check_call cc = { .o = &o, .run = run };
	json_error_t jerr;

	assert_non_null(run);
	run->ret = capture_output(do_check, &cc, false, run->err, sizeof(run->err));
	if (json) {
		run->doc = json_loads(run->out, 0, &jerr);
		if (!run->doc)
			fail_msg("check --json output does not parse (%s, line %d): %.400s",
				 jerr.text, jerr.line, run->out);
	}
	return run;
}

static void check_done(struct check_run *run)
{
	json_decref(run->doc);
	free(run);
}

static const char *sget(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	if (!s)
		fail_msg("no string '%s' in %s", key, json_dumps(o, JSON_COMPACT));
	return s;
}

static json_int_t iget(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		fail_msg("no integer '%s'", key);
	return json_integer_value(v);
}

/* The element of `arr` whose `key` is `value`, or NULL. */
static const json_t *find(const json_t *arr, const char *key, const char *value)
{
	size_t i;
	const json_t *v;

	json_array_foreach(arr, i, v)
	{
		const char *s = json_string_value(json_object_get(v, key));

		if (s && !strcmp(s, value))
			return v;
	}
	return NULL;
}

static const char CHECK_POLICY[] = "# a policy using every family\n"
				   "expose-ro=ro\n"
				   "expose-rw=rw\n"
				   "ignore=.env\n"
				   "net=ALLOW|tcp|192.0.2.0/24|443|OUT\n"
				   "net=DENY|tcp|192.0.2.7|*|OUT\n"
				   "env=LANG=${LANG}\n"
				   "env=API_*=${API_*}\n"
				   "unenv=SECRET\n"
				   "python-import=os,json\n"
				   "python-api=ALLOW:process-exec,threads\n"
				   "eval-timeout=2s\n"
				   "qemu.memory=1G\n"
				   "bpf.mode=audit\n"
				   "bpf.implicit=false\n";

static void test_check_json(void **state)
{
	const json_t *k, *files, *f, *exec, *by, *net, *v, *arr;
	struct check_run *run;
	struct stat st;
	char real[PATH_MAX], dev[32];

	(void)state;
	put("check.pysb", CHECK_POLICY);
	run = check("check.pysb", true, true, NULL, 0);
	assert_int_equal(run->ret, 0);
	assert_int_equal(iget(run->doc, "format"), 1);
	assert_true(json_is_true(json_object_get(run->doc, "valid")));
	assert_int_equal(json_array_size(json_object_get(run->doc, "errors")), 0);
	assert_string_equal(sget(json_object_get(run->doc, "policy"), "path"), "check.pysb");
	k = json_object_get(run->doc, "kernel");

	/* files: path, access, dev:ino as stat gives, the rule and its line */
	files = json_object_get(k, "files");
	assert_int_equal(json_array_size(files), 2); /* bpf.implicit=false */
	assert_non_null(realpath(tpath("rw"), real));
	f = find(files, "path", real);
	assert_non_null(f);
	assert_int_equal(stat(real, &st), 0);
	snprintf(dev, sizeof(dev), "%u:%u", major(st.st_dev), minor(st.st_dev));
	assert_string_equal(sget(f, "dev"), dev);
	assert_int_equal(iget(f, "ino"), (json_int_t)st.st_ino);
	assert_int_equal(json_array_size(json_object_get(f, "access")), 3);
	assert_string_equal(json_string_value(json_array_get(json_object_get(f, "access"), 1)),
			    "write");
	assert_string_equal(sget(f, "rule"), "expose-rw=rw");
	assert_string_equal(sget(f, "file"), "check.pysb");
	assert_int_equal(iget(f, "line"), 3);
	assert_int_equal(iget(f, "col"), 11);
	assert_null(json_object_get(f, "implicit"));

	/* exec: allowed, by line 11 */
	exec = json_object_get(k, "exec");
	assert_true(json_is_true(json_object_get(exec, "allowed")));
	by = json_object_get(exec, "decided_by");
	assert_string_equal(sget(by, "rule"), "python-api=ALLOW:process-exec,threads");
	assert_int_equal(iget(by, "line"), 11);

	/* ignore=, mounts (-v), network */
	v = find(json_object_get(k, "ignores"), "rule", "ignore=.env");
	assert_non_null(v);
	assert_string_equal(sget(v, "kind"), "name");
	assert_true(json_array_size(json_object_get(k, "mounts")) > 0);
	net = json_object_get(k, "net");
	assert_int_equal(json_array_size(json_object_get(net, "rules")), 2);
	v = find(json_object_get(net, "rules"), "rule", "DENY|tcp|192.0.2.7|*|OUT");
	assert_non_null(v);
	assert_string_equal(sget(v, "action"), "DENY");
	assert_int_equal(iget(v, "line"), 6);
	v = find(json_object_get(net, "prefixes"), "prefix", "192.0.2.0/24");
	assert_non_null(v);
	arr = json_object_get(json_object_get(v, "allowed_ports"), "tcp_out");
	assert_int_equal(json_array_size(arr), 1);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(arr, 0), 0)), 443);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(arr, 0), 1)), 443);
	v = find(json_object_get(net, "prefixes"), "prefix", "192.0.2.7/32");
	assert_non_null(v);
	assert_int_equal(
		json_array_size(json_object_get(json_object_get(v, "allowed_ports"), "tcp_out")),
		0);
	assert_false(json_is_true(json_object_get(net, "unix_abstract")));
	assert_false(json_is_true(json_object_get(net, "multicast_ipv4")));
	assert_false(json_is_true(json_object_get(net, "multicast_ipv6")));

	/* environment: the rules, and the names passed (never the values) */
	arr = json_object_get(json_object_get(run->doc, "environment"), "passed");
	assert_int_equal(json_array_size(arr), 2);
	assert_non_null(find(arr, "name", "LANG"));
	assert_non_null(find(arr, "name", "API_KEY"));
	assert_null(strstr(run->out, "s3cr3t"));
	assert_non_null(find(json_object_get(json_object_get(run->doc, "environment"), "rules"),
			     "rule", "unenv=SECRET"));

	/* bpf.*: every key, set or default, with its effect */
	arr = json_object_get(run->doc, "bpf_params");
	v = find(arr, "key", "bpf.mode");
	assert_string_equal(sget(v, "value"), "audit");
	assert_false(json_is_true(json_object_get(v, "default")));
	assert_int_equal(iget(v, "line"), 14);
	v = find(arr, "key", "bpf.unix-abstract");
	assert_true(json_is_true(json_object_get(v, "default")));
	assert_string_equal(sget(v, "value"), "deny");
	assert_non_null(find(arr, "key", "bpf.socket-family"));
	assert_non_null(find(arr, "key", "bpf.implicit"));

	/* left to the Python layer: python-import, the non-exec part of python-api, eval-*,
	 * other providers' parameters; never bpf.* */
	arr = json_object_get(run->doc, "python_layer");
	assert_int_equal(json_array_size(arr), 4);
	assert_non_null(find(arr, "key", "python-import"));
	v = find(arr, "key", "python-api");
	assert_non_null(json_object_get(v, "kernel_part"));
	assert_non_null(find(arr, "key", "eval-timeout"));
	assert_non_null(find(arr, "key", "qemu.memory"));

	/* warnings: audit mode and implicit off, loudly, with their lines */
	arr = json_object_get(run->doc, "warnings");
	{
		size_t i;
		bool audit = false, implicit = false;

		json_array_foreach(arr, i, v)
		{
			audit = audit || (strstr(sget(v, "message"), "denies NOTHING") &&
					  iget(v, "line") == 14);
			implicit = implicit || (strstr(sget(v, "message"), "bpf.implicit=false") &&
						iget(v, "line") == 15);
		}
		assert_true(audit);
		assert_true(implicit);
	}
	check_done(run);
}

/* A python-api line that only grants process-exec is the kernel's alone. */
static void test_check_exec_only_api(void **state)
{
	struct check_run *run;

	(void)state;
	put("exec.pysb", "python-api=ALLOW:process-exec\nbpf.implicit=false\n");
	run = check("exec.pysb", true, false, NULL, 0);
	assert_int_equal(run->ret, 0);
	assert_int_equal(json_array_size(json_object_get(run->doc, "python_layer")), 0);
	assert_null(json_object_get(json_object_get(run->doc, "kernel"), "mounts")); /* no -v */
	assert_int_equal(
		iget(json_object_get(json_object_get(json_object_get(run->doc, "kernel"), "exec"),
				     "decided_by"),
		     "line"),
		1);
	check_done(run);
}

/* Wide capabilities are warned of, one warning each, with their line (the bpf.* table's
 * warning of bpf.capabilities); a narrow one is not. */
static void test_check_warns_of_wide_capabilities(void **state)
{
	struct check_run *run;
	const json_t *v;
	size_t i;
	int admin = 0, module = 0, chown = 0;

	(void)state;
	put("caps.pysb", "expose-ro=/usr\nbpf.capabilities=CAP_CHOWN\n"
			 "bpf.capabilities=CAP_SYS_ADMIN,sys_module\n");
	run = check("caps.pysb", true, false, NULL, 0);
	assert_int_equal(run->ret, 0);
	json_array_foreach(json_object_get(run->doc, "warnings"), i, v)
	{
		const char *m = sget(v, "message");

		admin += strstr(m, "bpf.capabilities grants CAP_SYS_ADMIN: the program reaches "
				   "namespaces") &&
			 iget(v, "line") == 3;
		module += strstr(m, "grants CAP_SYS_MODULE: the program reaches loading kernel "
				    "code") &&
			  iget(v, "line") == 3;
		chown += strstr(m, "CAP_CHOWN") != NULL;
	}
	assert_int_equal(admin, 1);
	assert_int_equal(module, 1);
	assert_int_equal(chown, 0);
	check_done(run);
}

static void test_check_invalid(void **state)
{
	struct check_run *run;
	const json_t *e;

	(void)state;
	/* a parse error: file:line:col, the text, exit 1 */
	put("bad1.pysb", "expose-ro=ro\nexpose-ro=no-such-dir\n");
	run = check("bad1.pysb", true, false, NULL, 0);
	assert_int_equal(run->ret, 1);
	assert_false(json_is_true(json_object_get(run->doc, "valid")));
	assert_null(json_object_get(run->doc, "kernel"));
	e = json_array_get(json_object_get(run->doc, "errors"), 0);
	assert_string_equal(sget(e, "file"), "bad1.pysb");
	assert_int_equal(iget(e, "line"), 2);
	assert_int_equal(iget(e, "col"), 11);
	assert_non_null(strstr(sget(e, "message"), "must exist"));
	assert_string_equal(sget(e, "text"), "expose-ro=no-such-dir");
	check_done(run);
	/* a compile error (unknown bpf key): taken from the compiler, location split out */
	put("bad2.pysb", "expose-ro=ro\nbpf.nope=1\n");
	run = check("bad2.pysb", true, false, NULL, 0);
	assert_int_equal(run->ret, 1);
	e = json_array_get(json_object_get(run->doc, "errors"), 0);
	assert_non_null(e);
	assert_string_equal(sget(e, "file"), "bad2.pysb");
	assert_int_equal(iget(e, "line"), 2);
	assert_int_equal(iget(e, "col"), 1);
	assert_non_null(strstr(sget(e, "message"), "unknown parameter 'bpf.nope'"));
	assert_string_equal(run->err, ""); /* --json: everything is in the document */
	check_done(run);
	/* text: nothing on stdout, the errors on stderr as `run` prints them */
	run = check("bad2.pysb", false, false, NULL, 0);
	assert_int_equal(run->ret, 1);
	assert_string_equal(run->out, "");
	assert_non_null(strstr(run->err, "bad2.pysb:2:1: error: unknown parameter 'bpf.nope'"));
	check_done(run);
	/* a missing policy file */
	run = check("no-such.pysb", false, false, NULL, 0);
	assert_int_equal(run->ret, 1);
	assert_non_null(strstr(run->err, "policy file not found"));
	check_done(run);
}

static int no_such_host(const char *name, const struct addrinfo *hints, struct addrinfo **res)
{
	(void)name, (void)hints, (void)res;
	return EAI_NONAME;
}

/* The parser's and the compiler's messages in the document, as their records have them
 * (user/lib/diag.h), not read back from stderr: file, line, col, message, hint, text. */
static void test_check_json_diagnostics(void **state)
{
	struct check_run *run = calloc(1, sizeof(*run));
	struct check_opts o = { .policy = "diag.pysb",
				.envp = envp,
				.cwd = tmp,
				.interpreter = "/nonexistent/python3",
				.json = true,
				.resolve = no_such_host };
	struct check_call cc = { .o = &o, .run = run };
	const json_t *w, *e;

	(void)state;
	put("diag.pysb", "expose-ro=ro,ro\n"
			 "net=ALLOW|tcp|nowhere.invalid|443|OUT\n"
			 "ignore=a/b\n");
	assert_non_null(run);
	assert_int_equal(capture_output(do_check, &cc, false, run->err, sizeof(run->err)), 1);
	assert_string_equal(run->err, "");
	run->doc = json_loads(run->out, 0, NULL);
	assert_non_null(run->doc);
	/* the compiler's error: where, what, and what to do apart */
	assert_int_equal(json_array_size(json_object_get(run->doc, "errors")), 1);
	e = json_array_get(json_object_get(run->doc, "errors"), 0);
	assert_string_equal(sget(e, "file"), "diag.pysb");
	assert_int_equal(iget(e, "line"), 3);
	assert_int_equal(iget(e, "col"), 8);
	assert_string_equal(sget(e, "message"), "ignore=a/b: a relative pattern is matched "
						"against each name and cannot hold a '/'");
	assert_string_equal(sget(e, "hint"), "write it as an absolute path");
	/* the parser's warning (with its line's text), then the compiler's (with a hint) */
	w = json_object_get(run->doc, "warnings");
	assert_int_equal(json_array_size(w), 2);
	e = json_array_get(w, 0);
	assert_string_equal(sget(e, "file"), "diag.pysb");
	assert_int_equal(iget(e, "line"), 1);
	assert_int_equal(iget(e, "col"), 11);
	assert_non_null(strstr(sget(e, "message"), "legacy two-path form 'ro,ro'"));
	assert_string_equal(sget(e, "text"), "expose-ro=ro,ro");
	assert_null(json_object_get(e, "hint"));
	e = json_array_get(w, 1);
	assert_string_equal(sget(e, "file"), "diag.pysb");
	assert_int_equal(iget(e, "line"), 2);
	assert_null(json_object_get(e, "col")); /* the net= messages name no column */
	assert_string_equal(sget(e, "message"), "net=ALLOW|tcp|nowhere.invalid|443|OUT: cannot "
						"resolve host name 'nowhere.invalid' (Name or "
						"service not known)");
	assert_string_equal(sget(e, "hint"), "rule dropped");
	json_decref(run->doc);
	/* text: the same records on stderr, the hint after "; " */
	o.json = false;
	memset(run, 0, sizeof(*run));
	assert_int_equal(capture_output(do_check, &cc, false, run->err, sizeof(run->err)), 1);
	assert_non_null(strstr(run->err, "diag.pysb:2: warning: net=ALLOW|tcp|nowhere.invalid|443|"
					 "OUT: cannot resolve host name 'nowhere.invalid' (Name "
					 "or service not known); rule dropped\n"));
	assert_non_null(strstr(run->err, "diag.pysb:3:8: error: ignore=a/b: a relative pattern is "
					 "matched against each name and cannot hold a '/'; write "
					 "it as an absolute path\n"));
	free(run);
}

/* check says whether the program may join multicast groups: a UDP IN rule on a group of
 * the family (bpf/multicast.bpf.h), in the report and in the text. */
static void test_check_multicast_joins(void **state)
{
	struct check_run *run;
	json_t *net;

	(void)state;
	put("mcast.pysb", "net=ALLOW|udp|224.0.0.0/4|*|IN\nnet=ALLOW|udp|ff02::/16|*|OUT\n");
	run = check("mcast.pysb", true, false, NULL, 0);
	assert_int_equal(run->ret, 0);
	net = json_object_get(json_object_get(run->doc, "kernel"), "net");
	assert_true(json_is_true(json_object_get(net, "multicast_ipv4")));
	assert_false(json_is_true(json_object_get(net, "multicast_ipv6"))); /* OUT only */
	check_done(run);
	run = check("mcast.pysb", false, false, NULL, 0);
	assert_non_null(
		strstr(run->out, "mcast   IPv4 multicast groups: joins allowed, any group"));
	assert_non_null(strstr(run->out, "mcast   IPv6 multicast groups: joins refused"));
	check_done(run);
}

static void test_check_text(void **state)
{
	struct check_run *run;
	char line[PATH_MAX + 64];

	(void)state;
	put("check.pysb", CHECK_POLICY);
	run = check("check.pysb", false, false, NULL, 0);
	assert_int_equal(run->ret, 0);
	assert_non_null(
		strstr(run->out, "exec    allowed         execve after the program's start"));
	assert_non_null(strstr(run->out, "(check.pysb:11: python-api=ALLOW:process-exec,threads)"));
	assert_non_null(realpath(tpath("ro"), line));
	strcat(line, "  [dev ");
	assert_non_null(strstr(run->out, line));
	assert_non_null(strstr(run->out, "(check.pysb:2: expose-ro=ro)"));
	assert_non_null(strstr(run->out, "net     DENY|tcp|192.0.2.7|*|OUT"));
	assert_non_null(strstr(run->out, "bpf     bpf.mode=audit: audit: nothing is denied"));
	assert_non_null(strstr(run->out, "python  python-import=os,json: "));
	assert_non_null(strstr(run->out, "warning: check.pysb:14:10: bpf.mode=audit"));
	assert_null(strstr(run->out, "== kernel: mounts")); /* -v only */
	check_done(run);
	run = check("check.pysb", false, true, NULL, 0);
	assert_non_null(strstr(run->out, "== kernel: mounts"));
	check_done(run);
}

/* A grant that reaches well-known secrets is a warning naming its line; check still
 * passes; a narrow grant next to them is not. */
static void test_check_secrets_warned_with_their_line(void **state)
{
	struct check_run *run;

	(void)state;
	put("sec.pysb", "expose-ro=/etc/hostname\nexpose-ro=/etc\nbpf.implicit=false\n");
	run = check("sec.pysb", false, false, NULL, 0);
	assert_int_equal(run->ret, 0);
	assert_non_null(strstr(run->out, "warning: sec.pysb:2:11: expose-ro=/etc grants well-known "
					 "secrets: /etc/shadow (password hashes)"));
	assert_null(strstr(run->out, "warning: sec.pysb:1:11: expose-ro=/etc/hostname grants"));
	check_done(run);
}

/* --KEY=VALUE overrides are read after the file and shown as <command line>. */
static void test_check_overrides(void **state)
{
	const struct policy_override ov[] = { { "expose-rw=rw/sub" }, { "bpf.mode=audit" } };
	struct check_run *run;
	const json_t *f;
	char real[PATH_MAX];

	(void)state;
	put("small.pysb", "expose-ro=ro\nbpf.implicit=false\n");
	run = check("small.pysb", true, false, ov, 2);
	assert_int_equal(run->ret, 0);
	assert_non_null(realpath(tpath("rw/sub"), real));
	f = find(json_object_get(json_object_get(run->doc, "kernel"), "files"), "path", real);
	assert_non_null(f);
	assert_string_equal(sget(f, "file"), "<command line>");
	assert_int_equal(iget(f, "line"), 1);
	assert_string_equal(sget(find(json_object_get(run->doc, "bpf_params"), "key", "bpf.mode"),
				 "value"),
			    "audit");
	check_done(run);
}

/* ignore= with an absolute pattern: the files it hides now, and a loud warning. */
static void test_check_ignore_absolute(void **state)
{
	struct check_run *run;
	const json_t *ig, *w;
	char text[PATH_MAX + 64], real[PATH_MAX];

	(void)state;
	snprintf(text, sizeof(text),
		 "expose-rw=rw\nignore=%s/rw/.e*\nignore=%s/rw/none*\n"
		 "bpf.implicit=false\n",
		 tmp, tmp);
	put("ign.pysb", text);
	run = check("ign.pysb", true, false, NULL, 0);
	assert_int_equal(run->ret, 0);
	ig = json_array_get(json_object_get(json_object_get(run->doc, "kernel"), "ignores"), 0);
	assert_string_equal(sget(ig, "kind"), "absolute");
	assert_int_equal(json_array_size(json_object_get(ig, "hidden")), 1);
	assert_non_null(realpath(tpath("rw/.env"), real));
	assert_string_equal(sget(json_array_get(json_object_get(ig, "hidden"), 0), "path"), real);
	w = json_object_get(run->doc, "warnings");
	assert_int_equal(json_array_size(w), 3); /* the third: bpf.implicit=false */
	assert_non_null(strstr(sget(json_array_get(w, 0), "message"), "NOT hidden"));
	assert_int_equal(iget(json_array_get(w, 0), "line"), 2);
	assert_non_null(strstr(sget(json_array_get(w, 1), "message"), "matches nothing"));
	check_done(run);
}

/* The sandbox's flags say what the kernel side must know: name patterns to match on each
 * walk (PYSB_SB_IGNORES), inodes hidden by path, which a btrfs snapshot would copy
 * unhidden (PYSB_SB_HIDDEN). */
static void test_ignore_flags(void **state)
{
	struct result *r;
	char text[PATH_MAX + 64];

	(void)state;
	put("rw/.env", "k\n");
	r = compile_ok("expose-rw=rw\nignore=.env\n");
	assert_int_equal(sandbox_flags(&r->c, false), PYSB_SB_IGNORES);
	done(r);
	snprintf(text, sizeof(text), "expose-rw=rw\nignore=%s/rw/.env\n", tmp);
	r = compile_ok(text);
	assert_int_equal(r->c.n_hidden, 1);
	assert_int_equal(sandbox_flags(&r->c, true), PYSB_SB_HIDDEN | PYSB_SB_AUDIT);
	done(r);
	r = compile_ok("expose-rw=rw\n");
	assert_int_equal(sandbox_flags(&r->c, false), 0);
	done(r);
}

/* Each deliberate difference from py-sandboxes is a warning naming its line
 * (docs/policy.md, "Differences from py-sandboxes"). */
static void test_check_departures(void **state)
{
	struct check_run *run;
	const json_t *w, *v;
	bool fn = false, deny = false, file = false, pair = false;
	size_t i;

	(void)state;
	put("dep.pysb", "python-api=DENY:process-exec\n"
			"python-api=ALLOW:subprocess.run\n"
			"python-api=DENY:os.system\n"
			"expose-ro=ro/file\n"
			"expose-ro=ro,ro\n"
			"bpf.implicit=false\n");
	put("ro/file", "x\n");
	run = check("dep.pysb", true, false, NULL, 0);
	assert_int_equal(run->ret, 0);
	w = json_object_get(run->doc, "warnings");
	json_array_foreach(w, i, v)
	{
		const char *m = sget(v, "message");

		fn = fn || (strstr(m, "kernel cannot tell which Python function") &&
			    iget(v, "line") == 2);
		deny = deny || (strstr(m, "only the Python layer refuses os.system") &&
				iget(v, "line") == 3);
		file = file || (strstr(m, "names a file, not a directory") && iget(v, "line") == 4);
		pair = pair || (strstr(m, "differs from py-sandboxes") &&
				strstr(m, "legacy two-path form") && iget(v, "line") == 5);
	}
	assert_true(fn);
	assert_true(deny);
	assert_true(file);
	assert_true(pair);
	check_done(run);
}

/* A path that is not UTF-8: a display form with \xNN, and the exact bytes in base64. */
static void test_check_non_utf8_path(void **state)
{
	struct check_run *run;
	const json_t *files, *f;
	char real[PATH_MAX], want[PATH_MAX];
	size_t i;

	(void)state;
	assert_int_equal(mkdir(tpath("bad\xff\x01name"), 0755), 0);
	assert_int_equal(symlink(tpath("bad\xff\x01name"), tpath("badlink")), 0);
	put("utf.pysb", "expose-ro=badlink\nbpf.implicit=false\n");
	run = check("utf.pysb", true, false, NULL, 0);
	assert_int_equal(run->ret, 0);
	files = json_object_get(json_object_get(run->doc, "kernel"), "files");
	assert_int_equal(json_array_size(files), 1);
	f = json_array_get(files, 0);
	assert_non_null(realpath(tpath("badlink"), real));
	/* display: \xFF escaped, \x01 kept (valid UTF-8; JSON escapes it itself) */
	snprintf(want, sizeof(want), "%.*s\\xFF\x01name", (int)(strstr(real, "bad\xff") - real + 3),
		 real);
	assert_string_equal(sget(f, "path"), want);
	{
		/* decode path_b64 and compare with the real bytes */
		static const char tab[] =
			"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *b = sget(f, "path_b64");
		unsigned char out[PATH_MAX];
		size_t n = 0;
		unsigned acc = 0, bits = 0;

		for (i = 0; b[i] && b[i] != '='; i++) {
			acc = acc << 6 | (unsigned)(strchr(tab, b[i]) - tab);
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				out[n++] = (unsigned char)(acc >> bits);
				acc &= (1u << bits) - 1;
			}
		}
		assert_int_equal(n, strlen(real));
		assert_memory_equal(out, real, n);
	}
	check_done(run);
	/* the text form keeps one line per entry: control bytes as \xNN */
	run = check("utf.pysb", false, false, NULL, 0);
	assert_non_null(strstr(run->out, "bad\\xFF\\x01name  [dev "));
	check_done(run);
}

/* memo_realpath answers as realpath(3) does, the second time from its memo: links to
 * files and directories (relative, through "..", dangling), names that are missing or
 * below a file, spellings it leaves to realpath(3). */
static void test_memo_realpath_agrees_with_realpath(void **state)
{
	const char *rel[] = { "m/a",	      "m/a/b/c",     "m/l/c",	  "m/a/dl/b/c",
			      "m/l",	      "m/missing/x", "m/a/b/c/x", "m/dang",
			      "m/a/./b",      "m/a/../a/b",  "m/a//b",	  "m/a/b/",
			      "m/a/dl/../b/c" };
	char want[PATH_MAX], got[PATH_MAX];

	(void)state;
	assert_int_equal(mkdir(tpath("m"), 0755), 0);
	assert_int_equal(mkdir(tpath("m/a"), 0755), 0);
	assert_int_equal(mkdir(tpath("m/a/b"), 0755), 0);
	put("m/a/b/c", "x");
	assert_int_equal(symlink("a/b", tpath("m/l")), 0);
	assert_int_equal(symlink("../a", tpath("m/a/dl")), 0);
	assert_int_equal(symlink("nowhere", tpath("m/dang")), 0);
	memo_begin();
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			const char *p = tpath(rel[i]);
			char *w, *g;
			int werr, gerr;

			errno = 0;
			w = realpath(p, want);
			werr = errno;
			errno = 0;
			g = memo_realpath(p, got);
			gerr = errno;
			if (!w) {
				assert_null(g);
				assert_int_equal(gerr, werr);
			} else {
				assert_non_null(g);
				assert_string_equal(got, want);
			}
		}
		assert_non_null(memo_realpath("/", got));
		assert_string_equal(got, "/");
	}
	memo_end();
}

/* The index answers as compiled_access does: the longest rule over the path, the later of
 * two equal ones, implicit entries left out where asked (also those added after the
 * index), "/" over everything, spellings with "//", a
 * trailing '/', relative ones. Paths from a small alphabet so that many share prefixes. */
static void test_path_rules_agree_with_the_scan(void **state)
{
	static const char *const part[] = { "a", "b", "ab", "" };
	struct compiled c = { 0 };
	struct path_rules x, all;
	char buf[64], *paths[600];
	uint32_t seed = 12345;
	size_t n = 0, nq = 0;

	(void)state;
#define NEXT() (seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff)
	/* every path of 0..4 components, absolute and relative, and a trailing '/' */
	for (int round = 0; round < 600; round++) {
		size_t len = 0, depth = NEXT() % 5;
		bool rel = NEXT() % 8 == 0;

		buf[0] = '\0';
		if (!rel)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "/");
		for (size_t d = 0; d < depth; d++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
						d || rel ? (d ? "/" : "") : "", part[NEXT() % 4]);
		if (NEXT() % 10 == 0)
			snprintf(buf + len, sizeof(buf) - len, "/");
		paths[nq++] = strdup(buf);
	}
	c.files = calloc(400, sizeof(*c.files));
	assert_non_null(c.files);
	for (; n < 300; n++) {
		c.files[n].path = paths[NEXT() % nq];
		c.files[n].access = (uint32_t)NEXT();
		c.files[n].implicit = NEXT() % 3 == 0;
	}
	c.n_files = n;
	assert_int_equal(path_rules_build(&x, &c, true), 0);
	assert_non_null(x.by_path);
	for (int added = 0; added < 2; added++) {
		/* every entry, as compile_mounts asks: indexed with what is there now */
		assert_int_equal(path_rules_build(&all, &c, false), 0);
		for (size_t q = 0; q < nq; q++) {
			assert_int_equal(path_rules_access(&x, paths[q]),
					 compiled_access(&c, paths[q], true));
			assert_int_equal(path_rules_access(&all, paths[q]),
					 compiled_access(&c, paths[q], false));
		}
		assert_int_equal(path_rules_access(&x, "/"), compiled_access(&c, "/", true));
		assert_int_equal(path_rules_access(&x, ""), compiled_access(&c, "", true));
		path_rules_free(&all);
		/* then implicit entries, as the compile adds them: no answer changes */
		for (; c.n_files < 400; c.n_files++) {
			c.files[c.n_files].path = paths[NEXT() % nq];
			c.files[c.n_files].access = (uint32_t)NEXT();
			c.files[c.n_files].implicit = true;
		}
	}
#undef NEXT
	path_rules_free(&x);
	free(c.files);
	for (size_t q = 0; q < nq; q++)
		free(paths[q]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explicit_entries),
		cmocka_unit_test(test_nested_rules),
		cmocka_unit_test(test_policy_file_in_rw_tree_kept),
		cmocka_unit_test(test_rule_names_in_rw_tree_kept),
		cmocka_unit_test(test_names_on_every_way_kept),
		cmocka_unit_test(test_absent_include_where_writable_refused),
		cmocka_unit_test(test_script_through_relinkable_link_not_granted),
		cmocka_unit_test(test_gitmodules_fifo_or_device_never_opened),
		cmocka_unit_test(test_socket_rules_and_tool_files),
		cmocka_unit_test(test_outside_servers_sockets_kept),
		cmocka_unit_test(test_one_inode_two_spellings),
		cmocka_unit_test(test_many_entries),
		cmocka_unit_test(test_implicit_on_off),
		cmocka_unit_test(test_implicit_program),
		cmocka_unit_test(test_implicit_python_wheels),
		cmocka_unit_test(test_implicit_never_narrows),
		cmocka_unit_test(test_exec_decision),
		cmocka_unit_test(test_bpf_params_valid),
		cmocka_unit_test(test_bpf_params_errors),
		cmocka_unit_test(test_check_json),
		cmocka_unit_test(test_check_exec_only_api),
		cmocka_unit_test(test_check_warns_of_wide_capabilities),
		cmocka_unit_test(test_check_invalid),
		cmocka_unit_test(test_check_json_diagnostics),
		cmocka_unit_test(test_check_text),
		cmocka_unit_test(test_check_multicast_joins),
		cmocka_unit_test(test_check_overrides),
		cmocka_unit_test(test_check_secrets_warned_with_their_line),
		cmocka_unit_test(test_check_ignore_absolute),
		cmocka_unit_test(test_ignore_flags),
		cmocka_unit_test(test_check_non_utf8_path),
		cmocka_unit_test(test_check_departures),
		cmocka_unit_test(test_memo_realpath_agrees_with_realpath),
		cmocka_unit_test(test_path_rules_agree_with_the_scan),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
