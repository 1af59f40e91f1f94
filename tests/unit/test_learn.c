/* SPDX-License-Identifier: MIT */
/*
 * Learning (user/learn/learn.c), without root or BPF: records -> lines (generalisation, write
 * over read, covered ancestors, /proc, implicit paths, substitutions, net and exec), the
 * merge into a file (markers present or absent, idempotence, superseded expose-ro), backup
 * names and the atomic write. Tables of cases, in a scratch tree under /tmp:
 *   S/proj (cwd, "."), S/home (HOME, "~"), S/venv (VIRTUAL_ENV), S/tmp (TMPDIR), S/else.
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

#include "json_bytes.h"
#include "learn.h"
#include "policy.h"
#include "pysb_abi.h"
#include "secret_paths.h"

static char S[64]; /* the scratch tree */
static char *envp[8];
static char env_buf[8][256];

static void mk(const char *rel, bool dir)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", S, rel);
	if (dir) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
		assert_int_equal(system(cmd), 0);
	} else {
		FILE *f = fopen(p, "w");

		assert_non_null(f);
		fclose(f);
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(S, sizeof(S), "/tmp/pysb-learn-XXXXXX");
	if (!mkdtemp(S))
		return -1;
	mk("proj/cfg", true);
	mk("proj/cfg/app.conf", false);
	mk("proj/out", true);
	mk("proj/data/sub", true);
	mk("proj/data/sub/x", false);
	mk("proj/data/y", false);
	mk("home/.config/app", true);
	mk("home/.config/app/c.ini", false);
	mk("home/.bashrc", false);
	mk("home/.ssh", true);
	mk("home/.ssh/known_hosts", false);
	mk("home/.ssh/id_ed25519", false);
	mk("venv/lib/site", true);
	mk("venv/lib/site/m.py", false);
	mk("tmp/w", true);
	mk("tmp/w/agent.sock", false); /* a file standing for a socket: learning stats it */
	mk("else/d", true);
	mk("else/d/f", false);
	mk("implicit/lib", true);
	mk("implicit/lib/libc.so", false);
	snprintf(env_buf[0], 256, "HOME=%s/home", S);
	snprintf(env_buf[1], 256, "VIRTUAL_ENV=%s/venv", S);
	snprintf(env_buf[2], 256, "TMPDIR=%s/tmp", S);
	snprintf(env_buf[3], 256, "APP_PORT=8765");
	snprintf(env_buf[4], 256, "OTHER=8765");
	for (int i = 0; i < 5; i++)
		envp[i] = env_buf[i];
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", S);
	return system(cmd);
}

/* A record of the event stream; "@" in path stands for the scratch tree. */
static json_t *rec(const char *kind, const char *op, const char *path, const char *acc)
{
	char p[512];
	json_t *r = json_pack("{s:s, s:s, s:s, s:[s]}", "record", "event", "kind", kind,
			      "operation", op, "access", acc);

	if (path) {
		snprintf(p, sizeof(p), "%s%s", path[0] == '@' ? S : "", path + (path[0] == '@'));
		json_object_set_new(r, "path", json_string(p));
	}
	return r;
}

struct rec_spec {
	const char *kind, *op, *path, *acc;
};

/* The records of `in` added to `s`. */
static void add_specs(struct learn_set *s, const struct rec_spec *in, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_t *j = rec(in[i].kind, in[i].op, in[i].path, in[i].acc);

		assert_int_equal(learn_add_record(s, j), 0);
		json_decref(j);
	}
}

/* How many of the env= lines learnt are `line`. */
static int env_lines(const struct learn_rules *r, const char *line)
{
	int n = 0;

	for (size_t i = 0; i < r->n_envs; i++)
		n += !strcmp(r->envs[i], line);
	return n;
}

struct gen_case {
	const char *name;
	struct rec_spec in[8];
	const char *files[8]; /* expected expose lines, sorted; "@" = the scratch tree */
};

static void expand(const char *s, char *out, size_t len)
{
	const char *at = strchr(s, '@');

	if (at)
		snprintf(out, len, "%.*s%s%s", (int)(at - s), s, S, at + 1);
	else
		snprintf(out, len, "%s", s);
}

static void learn_env_of(struct learn_env *env, char *cwd, const struct learn_covered *cov,
			 size_t n)
{
	snprintf(cwd, 256, "%s/proj", S);
	*env = (struct learn_env){ .envp = envp, .cwd = cwd, .covered = cov, .n_covered = n };
}

static const struct gen_case gen_cases[] = {
	{ "a file gives its directory, spelt ./ under the working directory",
	  { { "file", "open", "@/proj/cfg/app.conf", "read" } },
	  { "expose-ro=./cfg" } },
	{ "write wins over read for the same directory",
	  { { "file", "open", "@/proj/out/r.txt", "read" },
	    { "file", "open", "@/proj/out/w.txt", "write" } },
	  { "expose-rw=./out" } },
	{ "created entries need write on their parent, even a directory now there",
	  { { "file", "mkdir", "@/proj/data/sub", "write" } },
	  { "expose-rw=./data" } },
	{ "a directory covered by an emitted ancestor is dropped",
	  { { "file", "mkdir", "@/proj/data/new", "write" },
	    { "file", "open", "@/proj/data/sub/x", "read" } },
	  { "expose-rw=./data" } },
	{ "read ancestor does not cover a write below",
	  { { "file", "open", "@/proj/data/y", "read" },
	    { "file", "open", "@/proj/data/sub/x", "write" } },
	  { "expose-ro=./data", "expose-rw=./data/sub" } },
	{ "a file directly in the home directory is itself; ~/.config/app is widened",
	  { { "file", "open", "@/home/.bashrc", "read" },
	    { "file", "open", "@/home/.config/app/c.ini", "read" } },
	  { "expose-ro=~/.bashrc", "expose-ro=~/.config/app" } },
	{ "a file in ~/.ssh is itself, never ~/.ssh (the keys are next to it)",
	  { { "file", "open", "@/home/.ssh/known_hosts", "read" } },
	  { "expose-ro=~/.ssh/known_hosts" } },
	{ "a name with a newline is never learned: it would be two policy lines",
	  { { "file", "open", "@/proj/z\nexpose-rw=..", "read" },
	    { "file", "mkdir", "@/proj/z\nbpf.capabilities=CAP_SYS_ADMIN/d", "write" },
	    { "file", "open", "@/proj/cfg/app.conf", "read" } },
	  { "expose-ro=./cfg" } },
	{ "a file in /etc is itself, never /etc (/etc/shadow is next to it)",
	  { { "file", "open", "/etc/hostname", "read" } },
	  { "expose-ro=/etc/hostname" } },
	{ "a file created in the home directory: that file, read-write, never ~",
	  { { "file", "create", "@/home/.bashrc", "write" } },
	  { "expose-rw=~/.bashrc" } },
	{ "a file created in the home directory and gone since: nothing, never ~",
	  { { "file", "create", "@/home/gone.tmp", "write" },
	    { "file", "unlink", "@/home/gone.tmp", "write" } },
	  { NULL } },
	{ "a write to a file in the home directory: that file, read-write",
	  { { "file", "open", "@/home/.bashrc", "write" } },
	  { "expose-rw=~/.bashrc" } },
	{ "VIRTUAL_ENV is written ${VIRTUAL_ENV}",
	  { { "file", "open", "@/venv/lib/site/m.py", "read" } },
	  { "expose-ro=${VIRTUAL_ENV}/lib/site" } },
	{ "the temp directory is written ${TMPDIR:-/tmp}",
	  { { "file", "create", "@/tmp/w/f", "write" } },
	  { "expose-rw=${TMPDIR:-/tmp}/w" } },
	{ "the sandbox's own unix socket: its directory, as a file's",
	  { { "unix", "connect", "@/tmp/w/agent.sock", "write" } },
	  { "expose-rw=${TMPDIR:-/tmp}/w" } },
	{ "an opened directory is itself; absolute elsewhere",
	  { { "file", "open", "@/else/d", "read" } },
	  { "expose-ro=@/else/d" } },
	{ "nothing under /proc/<pid>, /proc/self: a sandbox's own, another's pid unknowable",
	  { { "file", "open", "/proc/1/status", "read" },
	    { "file", "open", "/proc/self", "read" } },
	  { NULL } },
	{ "other /proc entries (a child's /proc/meminfo, /proc/sys/...): each itself, never /proc",
	  { { "file", "open", "/proc/meminfo", "read" },
	    { "file", "open", "/proc/sys/kernel/ngroups_max", "read" } },
	  { "expose-ro=/proc/meminfo", "expose-ro=/proc/sys/kernel/ngroups_max" } },
	{ "implicit and already-granted paths are never written",
	  { { "file", "open", "@/implicit/lib/libc.so", "read" } },
	  { NULL } },
	{ "a directory gone since is skipped",
	  { { "file", "open", "@/gone/file", "read" } },
	  { NULL } },
	{ "the working directory itself is .",
	  { { "file", "create", "@/proj/new.txt", "write" } },
	  { "expose-rw=." } },
	{ "self-protection events teach nothing", { { "self", "ptrace", NULL, "read" } }, { NULL } },
	{ "exec: the binary's directory, read-only",
	  { { "exec", "exec", "/usr/bin/true", "exec" } },
	  { "expose-ro=/usr/bin" } },
};

static void test_generate_files(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(gen_cases) / sizeof(gen_cases[0]); c++) {
		const struct gen_case *g = &gen_cases[c];
		char implicit[256], cwd[256], want[512];
		struct learn_covered cov = { implicit, PYSB_ACC_RO, NULL, 0 };
		struct learn_set s = { .envp = envp };
		struct learn_rules r;
		struct learn_env env;
		size_t n = 0;

		snprintf(implicit, sizeof(implicit), "%s/implicit/lib", S);
		learn_env_of(&env, cwd, &cov, 1);
		for (size_t i = 0; i < 8 && g->in[i].kind; i++) {
			json_t *j = rec(g->in[i].kind, g->in[i].op, g->in[i].path, g->in[i].acc);

			assert_int_equal(learn_add_record(&s, j), 0);
			json_decref(j);
		}
		assert_int_equal(learn_generate(&s, &env, &r), 0);
		while (n < 8 && g->files[n])
			n++;
		if (r.n_files != n)
			fail_msg("case '%s': %zu lines, expected %zu (first: %s)", g->name,
				 r.n_files, n, r.n_files ? r.files[0] : "-");
		for (size_t i = 0; i < n; i++) {
			expand(g->files[i], want, sizeof(want));
			if (strcmp(r.files[i], want))
				fail_msg("case '%s': line %zu is '%s', expected '%s'", g->name, i,
					 r.files[i], want);
		}
		learn_rules_free(&r);
		learn_set_free(&s);
	}
}

/* Names the program chose, which the policy grammar reads as something wider: never
 * written (the adversary's finding: "${PYSB_CACHE:-..}" read back as ~/.., that is /,
 * "#cache" as ~, ".bashrc" and a no-break space as ~/.bashrc; a '#' anywhere starts a
 * comment), each listed for the warning; a name with an inner space reads back as itself
 * and still is. */
static void test_generate_names_that_read_back_wider_refused(void **state)
{
	static const char *const wider[] = { "home/${PYSB_CACHE:-..}", "home/#cache",
					     "home/.bashrc\xc2\xa0" };
	static const char *const wider_dirs[] = { "else/trail ", "else/${HOME}", "else/a#b" };
	static const char *const fine[] = { "else/my dir" };
	char cwd[256], p[512];
	struct learn_set s = { .envp = envp };
	struct learn_rules r;
	struct learn_env env;

	(void)state;
	learn_env_of(&env, cwd, NULL, 0);
	for (size_t i = 0; i < 3; i++) {
		json_t *j;

		mk(wider[i], true);
		snprintf(p, sizeof(p), "@/%s", wider[i]);
		j = rec("file", "mkdir", p, "write");
		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
	}
	for (size_t i = 0; i < 4; i++) {
		const char *d = i < 3 ? wider_dirs[i] : fine[i - 3];
		json_t *j;

		snprintf(p, sizeof(p), "%s/f", d);
		mk(d, true);
		mk(p, false);
		snprintf(p, sizeof(p), "@/%s/f", d);
		j = rec("file", "open", p, "read");
		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
	}
	assert_int_equal(learn_generate(&s, &env, &r), 0);
	for (size_t i = 0; i < r.n_files; i++)
		print_message("learned: '%s'\n", r.files[i]);
	for (size_t i = 0; i < r.n_unwritable; i++)
		print_message("refused: '%s'\n", r.unwritable[i]);
	assert_int_equal(r.n_files, 1);
	expand("expose-ro=@/else/my dir", p, sizeof(p));
	assert_string_equal(r.files[0], p);
	assert_int_equal(r.n_unwritable, 6);
	learn_rules_free(&r);
	learn_set_free(&s);
}

/* Names a terminal runs when the review prints them (found by an adversary, round 29):
 * C1 controls in UTF-8 (U+009B, 8-bit CSI), a raw 0x9b (CSI to an 8-bit terminal), an
 * escape; never learned, counted as unlearned. A name of other non-ASCII letters (an
 * accent, a no-break space inside) still is. */
static void test_terminal_controls_in_names_never_learned(void **state)
{
	static const char *const bad[] = { "c1/d\xc2\x9b"
					   "2J",
					   "raw/d\x9b"
					   "2J",
					   "esc/d\x1b[2J", "over/d\xc0\x9b" };
	char cwd[256], p[512];
	struct learn_set s = { .envp = envp };
	struct learn_rules r;
	struct learn_env env;
	json_t *j;

	(void)state;
	learn_env_of(&env, cwd, NULL, 0);
	for (size_t i = 0; i < 4; i++) {
		j = rec("file", "open", NULL, "read");
		snprintf(p, sizeof(p), "%s/%s", S, bad[i]);
		assert_int_equal(json_object_set_bytes(j, "path", p), 0); /* as --events has it */
		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
	}
	assert_int_equal(s.n_paths, 0);
	assert_int_equal(s.unlearned, 4);
	mk("fine/caf\xc3\xa9", true);
	mk("fine/caf\xc3\xa9/f", false);
	j = rec("file", "open", "@/fine/caf\xc3\xa9/f", "read");
	assert_int_equal(learn_add_record(&s, j), 0);
	json_decref(j);
	assert_int_equal(learn_generate(&s, &env, &r), 0);
	assert_int_equal(r.n_files, 1);
	expand("expose-ro=@/fine/caf\xc3\xa9", p, sizeof(p));
	assert_string_equal(r.files[0], p);
	learn_rules_free(&r);
	learn_set_free(&s);
}

/* A capability's name, a net record's address, a socket family's name, from a record a
 * program may have written (`learn --from`): only as pysb-bpf writes them;
 * "CAP_SYS_ADMIN\nexpose-rw=/etc" is two lines otherwise (found by an adversary, round
 * 29). */
static void test_forged_record_fields_learned_only_as_the_kernel_writes_them(void **state)
{
	static const char *const bad[] = { "CAP_SYS_ADMIN\nexpose-rw=/etc", "CAP_", "cap_chown",
					   "CAP_NET_RAW|x", "CAP_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" };
	struct learn_set s = { .envp = envp };

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		json_t *j = json_pack("{s:s,s:s,s:s,s:s}", "record", "event", "kind", "capability",
				      "operation", "capable", "capability", bad[i]);

		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
	}
	assert_int_equal(s.n_socket, 0);
	assert_int_equal(s.unlearned, 5);
	{
		json_t *j = json_pack("{s:s,s:s,s:s,s:s}", "record", "event", "kind", "capability",
				      "operation", "capable", "capability", "CAP_NET_RAW");

		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
	}
	assert_int_equal(s.n_socket, 1);
	assert_string_equal(s.socket[0], "bpf.capabilities=CAP_NET_RAW");
	/* the same for a net record's address and a socket family's name */
	{
		json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "record", "event", "kind", "net",
				      "operation", "connect", "protocol", "tcp", "address",
				      "10.0.0.1|*|OUT\nexpose-rw=/etc", "port", 443);

		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
		j = json_pack("{s:s,s:s,s:s,s:s,s:s}", "record", "event", "kind", "net",
			      "operation", "socket", "family", "inet\nexpose-rw=/etc", "type",
			      "stream");
		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
		j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "record", "event", "kind", "net",
			      "operation", "connect", "protocol", "tcp", "address", "2001:db8::1",
			      "port", 443);
		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
	}
	assert_int_equal(s.unlearned, 7);
	assert_int_equal(s.n_socket, 2);
	assert_string_equal(s.socket[1], "net=ALLOW|TCP|2001:db8::1|443|OUT");
	learn_set_free(&s);
}

/* The one list of directories a file is never widened to (learn.c), with what is not. */
static void test_never_widened(void **state)
{
	static const struct {
		const char *dir;
		bool never;
	} cases[] = {
		{ "/", true },
		{ "/etc", true },
		{ "/root", true },
		{ "/home", true },
		{ "/home/alice", true },
		{ "/var/lib", true },
		{ "/var/log", true },
		{ "/run", true },
		{ "/proc", true },
		{ "/sys", true },
		{ "/dev", true },
		{ "/srv/home", true }, /* $HOME */
		{ "/etc/ssl", true },  /* private/: TLS keys */
		{ "/etc/ssh", true },  /* the host keys */
		{ "/srv/home/.ssh", true },
		{ "/home/alice/.aws", true },
		{ "/root/.kube/cache", true },
		{ "/srv/home/.config", true }, /* gcloud */
		{ "/srv/home/.cache/pip", false },
		{ "/etc/ssl/certs", false },
		{ "/home/alice/proj", false },
		{ "/var/lib/app", false },
		{ "/var", false },
		{ "/usr/lib", false },
		{ "/homes", false },
		{ "/srv/home/.config/app", false },
		{ "/dev/shm", false },
		{ "/proc/sys/kernel", true },
		{ "/procfs", false },
		{ "/run/user", true },
		{ "/run/user/1000", true }, /* the session bus, agents (an adversary's finding) */
		{ "/run/user/1000/app", false },
		{ "/run/users", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (learn_never_widened(cases[i].dir, "/srv/home") != cases[i].never)
			fail_msg("%s: never widened should be %d", cases[i].dir, cases[i].never);
	/* the last answer kept is for its directory and home together */
	assert_true(learn_never_widened("/srv/home", "/srv/home"));
	assert_false(learn_never_widened("/srv/home", NULL));
	assert_true(learn_never_widened("/srv/home", "/srv/home"));
	assert_false(learn_never_widened("/srv/home/.ssh", NULL));
	assert_true(learn_never_widened("/srv/home/.ssh", "/srv/home"));
	/* a name longer than the buffer it is copied into: cut, as before */
	{
		const char *p = "/abcdefgh/x";
		char name[4];

		assert_true(path_next_name(&p, name, sizeof(name)));
		assert_string_equal(name, "abc");
		assert_string_equal(p, "/x");
	}
}

static void test_generate_net_and_exec(void **state)
{
	struct learn_set s = { .envp = envp };
	struct learn_rules r;
	struct learn_env env;
	char cwd[256];
	json_t *j;

	(void)state;
	learn_env_of(&env, cwd, NULL, 0);
	j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i,s:s}", "record", "event", "kind", "net",
		      "operation", "connect", "protocol", "tcp", "address", "127.0.0.1", "port",
		      8765, "direction", "out");
	assert_int_equal(learn_add_record(&s, j), 0);
	assert_int_equal(learn_add_record(&s, j), 0); /* twice: one line */
	json_decref(j);
	for (int port = 443; port >= 80; port -= 363) { /* 443, then 80 */
		j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i,s:s}", "record", "event", "kind", "net",
			      "operation", "connect", "protocol", "tcp", "address", "127.0.0.1",
			      "port", port, "direction", "out");
		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
	}
	j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "record", "event", "kind", "net", "operation",
		      "bind", "protocol", "udp", "address", "::ffff:10.0.0.1", "port", 0);
	assert_int_equal(learn_add_record(&s, j), 0);
	json_decref(j);
	/* OUT to the wildcard: judged as loopback, learned so (found by a user: the
	 * 0.0.0.0 and :: lines never matched, and learning again added nothing) */
	for (int i = 0; i < 2; i++) {
		j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "record", "event", "kind", "net",
			      "operation", "connect", "protocol", "udp", "address",
			      i ? "::" : "0.0.0.0", "port", 8182);
		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
	}
	j = json_pack("{s:s,s:s,s:s,s:s,s:s}", "record", "event", "kind", "net", "operation",
		      "socket", "family", "packet", "type", "raw");
	assert_int_equal(learn_add_record(&s, j), 0);
	json_decref(j);
	/* a multicast membership: the group is not in the event, the family's range is */
	for (int level = 0; level <= 41; level += 41) {
		j = json_pack("{s:s,s:s,s:s,s:s,s:i,s:i}", "record", "event", "kind", "net",
			      "operation", "multicast", "via", "setsockopt", "level", level,
			      "option", level ? 20 : 35);
		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
	}
	j = json_pack("{s:s,s:s,s:s,s:s,s:[s],s:s}", "record", "event", "kind", "exec", "operation",
		      "exec", "path", "/usr/bin/true", "access", "exec", "reason",
		      "process-exec not allowed by the policy");
	assert_int_equal(learn_add_record(&s, j), 0);
	json_decref(j);
	j = json_pack("{s:s,s:s,s:s,s:s,s:[s],s:s}", "record", "event", "kind", "exec", "operation",
		      "exec", "path", "/memfd:x (deleted)", "access", "exec", "reason",
		      "anonymous or deleted file");
	assert_int_equal(learn_add_record(&s, j), 0);
	json_decref(j);
	j = json_pack("{s:s,s:i}", "record", "summary", "events", 3); /* not an event */
	assert_int_equal(learn_add_record(&s, j), 0);
	json_decref(j);
	assert_int_equal(learn_generate(&s, &env, &r), 0);
	assert_int_equal(r.n_socket, 7);
	assert_string_equal(r.socket[0], "bpf.socket-family=packet");
	/* one line per protocol, address and direction, the ports listed (py-sandboxes'
	 * grouping); the port is APP_PORT's: *PORT* variables only, the first by name */
	assert_string_equal(r.socket[1], "net=ALLOW|TCP|127.0.0.1|80,443,${APP_PORT}|OUT");
	assert_string_equal(r.socket[2], "net=ALLOW|UDP|10.0.0.1|0|IN");
	assert_string_equal(r.socket[3], "net=ALLOW|UDP|127.0.0.1|8182|OUT");
	assert_string_equal(r.socket[4], "net=ALLOW|UDP|224.0.0.0/4|*|IN");
	assert_string_equal(r.socket[5], "net=ALLOW|UDP|::1|8182|OUT");
	assert_string_equal(r.socket[6], "net=ALLOW|UDP|ff00::/8|*|IN");
	/* py-sandboxes' comment line before the category */
	assert_int_equal(r.n_api, 2);
	assert_string_equal(r.api[0], "# \u26a0 process-exec: runs code outside the patched "
				      "interpreter");
	assert_string_equal(r.api[1], "python-api=ALLOW:process-exec");
	assert_int_equal(s.unlearned, 1); /* the memfd exec */
	assert_int_equal(s.records, 12);
	learn_rules_free(&r);
	learn_set_free(&s);
}

/* Does text hold this exact line? */
static bool text_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

struct merge_case {
	const char *name, *text, *files, *socket, *want;
	size_t added;
};

#define HDR "# Add rules (2026/12/02 at 10:00)\n"
static const struct merge_case merge_cases[] = {
	{ "inside the marker pairs, comments and order kept",
	  "# top\nexpose-ro=/etc\n# <learning_guard_files>\n# </learning_guard_files>\n"
	  "# <learning_guard_socket>\n# </learning_guard_socket>\n# end\n",
	  "expose-ro=./cfg", "net=ALLOW|TCP|1.2.3.4|80|OUT",
	  "# top\nexpose-ro=/etc\n# <learning_guard_files>\n" HDR "expose-ro=./cfg\n\n"
	  "# </learning_guard_files>\n# <learning_guard_socket>\n" HDR
	  "net=ALLOW|TCP|1.2.3.4|80|OUT\n\n# </learning_guard_socket>\n# end\n",
	  2 },
	{ "no markers: one header at the end, a blank line after each family", "expose-ro=/etc",
	  "expose-ro=./cfg", "net=ALLOW|TCP|1.2.3.4|80|OUT",
	  "expose-ro=/etc\n" HDR "expose-ro=./cfg\n\nnet=ALLOW|TCP|1.2.3.4|80|OUT\n", 2 },
	{ "no markers, the text ending with a line break: a blank line before the header",
	  "expose-ro=/etc\n", "expose-ro=./cfg", "net=ALLOW|TCP|1.2.3.4|80|OUT",
	  "expose-ro=/etc\n\n" HDR "expose-ro=./cfg\n\nnet=ALLOW|TCP|1.2.3.4|80|OUT\n", 2 },
	{ "markers only at the start of a line, nothing after them",
	  "  # </learning_guard_files>\n# </learning_guard_socket> -->\n", "expose-ro=./cfg",
	  "net=ALLOW|TCP|1.2.3.4|80|OUT",
	  "  # </learning_guard_files>\n# </learning_guard_socket> -->\n\n" HDR
	  "expose-ro=./cfg\n\nnet=ALLOW|TCP|1.2.3.4|80|OUT\n",
	  2 },
	{ "one family with its marker, the other appended",
	  "# <learning_guard_files>\n# </learning_guard_files>\n", "expose-ro=./cfg",
	  "net=ALLOW|TCP|1.2.3.4|80|OUT",
	  "# <learning_guard_files>\n" HDR "expose-ro=./cfg\n\n# </learning_guard_files>\n\n" HDR
	  "net=ALLOW|TCP|1.2.3.4|80|OUT\n",
	  2 },
	{ "lines already present (stripped) are dropped: nothing to add",
	  "  expose-ro=./cfg  \nnet=ALLOW|TCP|1.2.3.4|80|OUT\r\n", "expose-ro=./cfg",
	  "net=ALLOW|TCP|1.2.3.4|80|OUT", "  expose-ro=./cfg  \nnet=ALLOW|TCP|1.2.3.4|80|OUT\r\n",
	  0 },
	{ "an expose-ro superseded by the learned expose-rw is commented out", "expose-ro=./out\n",
	  "expose-rw=./out", NULL,
	  "# expose-ro=./out  # superseded by learning (2026/12/02 at 10:00): write needed\n\n" HDR
	  "expose-rw=./out\n",
	  1 },
	{ "empty file", "", "expose-ro=./cfg", NULL, "\n" HDR "expose-ro=./cfg\n", 1 },
};

static void test_merge(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(merge_cases) / sizeof(merge_cases[0]); c++) {
		const struct merge_case *m = &merge_cases[c];
		char *files[1] = { (char *)m->files }, *socket[1] = { (char *)m->socket };
		struct learn_rules r = { .files = files,
					 .n_files = m->files ? 1 : 0,
					 .socket = socket,
					 .n_socket = m->socket ? 1 : 0 };
		char *out, *again;
		size_t added;

		assert_int_equal(learn_merge(m->text, &r, "2026/12/02 at 10:00", &out, &added), 0);
		if (strcmp(out, m->want) || added != m->added)
			fail_msg("case '%s': added %zu, got:\n%s\nexpected:\n%s", m->name, added,
				 out, m->want);
		/* idempotence: merging the same rules again adds nothing */
		assert_int_equal(learn_merge(out, &r, "2026/12/03 at 10:00", &again, &added), 0);
		if (added || strcmp(again, out))
			fail_msg("case '%s': a second merge changed the text:\n%s", m->name, again);
		free(out);
		free(again);
	}
}

struct conflict_case {
	const char *name, *text; /* "@" = the scratch tree */
	const char *learned;	 /* the learned line */
	const char *want;	 /* a line the result holds; "@" = the scratch tree */
	bool included;		 /* the path is read-only in another file (an include) */
};

static const struct conflict_case conflict_cases[] = {
	{ "the same directory written absolute", "expose-ro=@/proj/out\n", "expose-rw=./out",
	  "# expose-ro=@/proj/out  # superseded by learning (2026/12/02 at 10:00): write needed",
	  false },
	{ "with a trailing comment", "expose-ro=./out  # results\n", "expose-rw=./out",
	  "# expose-ro=./out  # results  # superseded by learning (2026/12/02 at 10:00): write "
	  "needed",
	  false },
	{ "relative, with a trailing slash", "expose-ro=out/\n", "expose-rw=./out",
	  "# expose-ro=out/  # superseded by learning (2026/12/02 at 10:00): write needed", false },
	{ "through a variable", "expose-ro=${VIRTUAL_ENV}/lib/site\n", "expose-rw=@/venv/lib/site",
	  "# expose-ro=${VIRTUAL_ENV}/lib/site  # superseded by learning (2026/12/02 at 10:00): "
	  "write needed",
	  false },
	{ "in an included file: the learned line commented, naming that line",
	  "include \"@/inc.pysb\"\n", "expose-rw=./out",
	  "# expose-rw=./out  # learned, not active: @/inc.pysb:1 exposes it read-only; make that "
	  "line expose-rw",
	  true },
};

/* A learned expose-rw= never sits beside an expose-ro= of the same path: the file loads,
 * and merging again adds nothing. */
static void test_merge_conflicts_load(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(conflict_cases) / sizeof(conflict_cases[0]); c++) {
		const struct conflict_case *k = &conflict_cases[c];
		char text[1024], learned[512], want[1024], cwd[256], file[256], inc[256],
			out_real[512];
		struct learn_covered cov = { out_real, PYSB_ACC_RO, inc, 1 };
		char *files[1] = { learned };
		struct learn_rules r = { .files = files, .n_files = 1 };
		struct learn_env env;
		struct diag_list diag = { 0 };
		struct policy *p = NULL;
		char *out, *again;
		size_t added;
		FILE *f;

		expand(k->text, text, sizeof(text));
		expand(k->learned, learned, sizeof(learned));
		expand(k->want, want, sizeof(want));
		snprintf(file, sizeof(file), "%s/policy.pysb", S);
		snprintf(inc, sizeof(inc), "%s/inc.pysb", S);
		snprintf(out_real, sizeof(out_real), "%s/proj/out", S);
		learn_env_of(&env, cwd, &cov, k->included ? 1 : 0);
		f = fopen(inc, "w");
		assert_non_null(f);
		fprintf(f, "expose-ro=%s/proj/out\n", S);
		fclose(f);
		assert_int_equal(learn_merge_in(text, &r, "2026/12/02 at 10:00", &env, file, &out,
						&added),
				 0);
		if (added != 1 || !text_line(out, want))
			fail_msg("case '%s': added %zu, got:\n%s\nexpected the line:\n%s", k->name,
				 added, out, want);
		assert_int_equal(learn_merge_in(out, &r, "2026/12/03 at 10:00", &env, file, &again,
						&added),
				 0);
		if (added || strcmp(again, out))
			fail_msg("case '%s': a second merge changed the text:\n%s", k->name, again);
		/* it loads */
		f = fopen(file, "w");
		assert_non_null(f);
		fputs(out, f);
		fclose(f);
		if (policy_parse_file(file, envp, cwd, NULL, 0, &p, &diag) || diag.n_errors) {
			diag_print(stderr, &diag);
			fail_msg("case '%s': the merged file does not load:\n%s", k->name, out);
		}
		policy_free(p);
		diag_free(&diag);
		free(out);
		free(again);
	}
}

static void test_template_has_markers_and_is_idempotent_target(void **state)
{
	char *t = learn_template("2026/12/02 at 10:00");
	const char *markers[] = { "# <learning_guard_files>",  "# </learning_guard_files>",
				  "# <learning_guard_socket>", "# </learning_guard_socket>",
				  "# <learning_guard_api>",    "# </learning_guard_api>",
				  "# <learning_guard_envs>",   "# </learning_guard_envs>" };

	(void)state;
	assert_non_null(t);
	for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]); i++)
		assert_non_null(strstr(t, markers[i]));
	free(t);
}

static void test_backup_names_first_free(void **state)
{
	char p[128], b[300], cmd[600];

	(void)state;
	snprintf(p, sizeof(p), "%s/pol", S);
	assert_int_equal(learn_backup_name(p, b, sizeof(b)), 0);
	snprintf(cmd, sizeof(cmd), "%s.old", p);
	assert_string_equal(b, cmd);
	snprintf(cmd, sizeof(cmd), "touch '%s.old' '%s.old_1' '%s.old_3'", p, p, p);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(learn_backup_name(p, b, sizeof(b)), 0);
	snprintf(cmd, sizeof(cmd), "%s.old_2", p);
	assert_string_equal(b, cmd);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_atomic_write_keeps_mode_and_backup(void **state)
{
	char p[256], b[300], tmp[300];
	struct stat st;

	(void)state;
	snprintf(p, sizeof(p), "%s/atomic", S);
	assert_int_equal(learn_write_atomic(p, "first\n"), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(chmod(p, 0600), 0);
	assert_int_equal(learn_backup(p, b, sizeof(b)), 0);
	assert_string_equal(slurp(b), "first\n");
	assert_int_equal(stat(b, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(learn_write_atomic(p, "second\n"), 0);
	assert_string_equal(slurp(p), "second\n");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600); /* the replaced file's mode */
	/* no temp file left behind */
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", p, getpid());
	assert_int_not_equal(access(tmp, F_OK), 0);
	/* a failed write (directory missing) leaves nothing and says so */
	snprintf(tmp, sizeof(tmp), "%s/no/such/dir/file", S);
	assert_int_equal(learn_write_atomic(tmp, "x"), -1);
}

static void test_learn_file_end_to_end_and_second_run_adds_nothing(void **state)
{
	char p[256], cwd[256], old[300];
	struct learn_set s = { .envp = envp };
	struct learn_env env;
	json_t *j = rec("file", "open", "@/proj/cfg/app.conf", "read");
	struct stat st;

	(void)state;
	learn_env_of(&env, cwd, NULL, 0);
	snprintf(p, sizeof(p), "%s/policy", S);
	assert_int_equal(learn_write_atomic(p, "# mine\nexpose-ro=/etc\n"), 0);
	assert_int_equal(learn_add_record(&s, j), 0);
	json_decref(j);
	assert_int_equal(learn_file(p, &s, &env, true, 0, NULL), 0);
	assert_non_null(strstr(slurp(p), "# mine\nexpose-ro=/etc\n\n# Add rules ("));
	assert_non_null(strstr(slurp(p), ")\nexpose-ro=./cfg\n"));
	snprintf(old, sizeof(old), "%s.old", p);
	assert_string_equal(slurp(old), "# mine\nexpose-ro=/etc\n");
	/* again: nothing added, no second backup */
	assert_int_equal(learn_file(p, &s, &env, true, 0, NULL), 0);
	snprintf(old, sizeof(old), "%s.old_1", p);
	assert_int_not_equal(stat(old, &st), 0);
	learn_set_free(&s);
}

static void test_spelling_longest_prefix_wins(void **state)
{
	char cwd[256], path[512], *s;
	struct learn_env env;

	(void)state;
	learn_env_of(&env, cwd, NULL, 0);
	/* the working directory under HOME? no: S/proj is not under S/home; check both */
	snprintf(path, sizeof(path), "%s/home/.config", S);
	s = learn_spell_path(path, &env);
	assert_string_equal(s, "~/.config");
	free(s);
	snprintf(path, sizeof(path), "%s/home", S);
	s = learn_spell_path(path, &env);
	assert_string_equal(s, "~");
	free(s);
	snprintf(path, sizeof(path), "%s/homework", S); /* a prefix of the name only */
	s = learn_spell_path(path, &env);
	assert_string_equal(s, path);
	free(s);
	/* cwd inside HOME: the longer (cwd) wins */
	snprintf(cwd, 256, "%s/home/.config", S);
	snprintf(path, sizeof(path), "%s/home/.config/app", S);
	s = learn_spell_path(path, &env);
	assert_string_equal(s, "./app");
	free(s);
}

/* Issue 10 item 5: the learning run's variables become env= rules, secrets commented out,
 * names the policy already decides about left alone; `learn --from` writes none. */
static void test_envs_learned_secrets_commented_covered_skipped(void **state)
{
	char *envp[] = { "HOME=/h",
			 "MYAPP_MODE=fast",
			 "GITHUB_TOKEN=x",
			 "AWS_SECRET_ACCESS_KEY=y",
			 "_=/usr/bin/pysb-bpf",
			 "SHLVL=1",
			 "EMPTY=",
			 "PYSB_BPF_LOG=info",
			 "KEPT=1",
			 NULL };
	struct learn_env env = { .envp = envp, .cwd = "/nowhere", .envs = true };
	struct learn_set set = { 0 };
	struct learn_rules r;
	char *out, *again;
	size_t added;
	const char *text = "env=HOME=${HOME}\nunenv=KEPT\n# <learning_guard_envs>\n"
			   "# </learning_guard_envs>\n";

	(void)state;
	assert_int_equal(learn_generate(&set, &env, &r), 0);
	assert_int_equal(r.n_envs, 5); /* HOME, MYAPP_MODE, the two secrets, KEPT */
	assert_string_equal(r.envs[0], "# env=AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}  "
				       "# looks like a secret: not passed; uncomment to pass it");
	assert_int_equal(learn_merge(text, &r, "2026/12/02 at 10:00", &out, &added), 0);
	assert_int_equal(added, 3); /* HOME is given, KEPT is removed on purpose */
	assert_non_null(
		strstr(out, "# Add rules (2026/12/02 at 10:00)\n"
			    "# env=AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}  # looks like a "
			    "secret: not passed; uncomment to pass it\n"
			    "# env=GITHUB_TOKEN=${GITHUB_TOKEN}  # looks like a secret: not "
			    "passed; uncomment to pass it\n"
			    "env=MYAPP_MODE=${MYAPP_MODE}\n\n# </learning_guard_envs>"));
	assert_null(strstr(out, "KEPT=${KEPT}"));
	assert_int_equal(learn_merge(out, &r, "2026/12/03 at 10:00", &again, &added), 0);
	assert_int_equal(added, 0);
	free(out);
	free(again);
	learn_rules_free(&r);
	/* env=*=${*} (py-sandboxes' "pass everything") covers every name */
	env.envs = true;
	assert_int_equal(learn_generate(&set, &env, &r), 0);
	assert_int_equal(learn_merge("env=*=${*}\n", &r, "s", &out, &added), 0);
	assert_int_equal(added, 0);
	free(out);
	learn_rules_free(&r);
	/* learn --from: the environment of the reader is not the program's */
	env.envs = false;
	assert_int_equal(learn_generate(&set, &env, &r), 0);
	assert_int_equal(r.n_envs, 0);
	learn_rules_free(&r);
	assert_true(learn_env_secret("db_password"));
	assert_true(learn_env_secret("OPENAI_API_KEY"));
	assert_false(learn_env_secret("KEYBOARD_LAYOUT"));
	assert_false(learn_env_secret("PATH"));
}

/* A rule spelt ${TMPDIR:-/tmp} brings env=TMPDIR=${TMPDIR:-/tmp}: the program uses the
 * directory the rule grants, whatever the next run's environment (found by a user: no
 * env=TMPDIR was learned, and once TMPDIR was set the program, given none, used /tmp).
 * It replaces the learned env=TMPDIR=${TMPDIR}, and comes with `learn --from` too. */
static void test_tmp_rule_brings_its_env_line(void **state)
{
	char cwd[256];
	struct learn_env env;
	struct learn_rules r;

	(void)state;
	learn_env_of(&env, cwd, NULL, 0);
	for (int from = 0; from < 3; from++) {
		struct learn_set s = { .envp = envp };
		json_t *j = rec("file", "create", from == 2 ? "@/proj/new" : "@/tmp/w/f", "write");
		bool plain = false, form = false;

		env.envs = from == 0;
		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
		assert_int_equal(learn_generate(&s, &env, &r), 0);
		for (size_t i = 0; i < r.n_envs; i++) {
			plain |= !strcmp(r.envs[i], "env=TMPDIR=${TMPDIR}");
			form |= !strcmp(r.envs[i], "env=TMPDIR=${TMPDIR:-/tmp}");
		}
		assert_false(plain);
		assert_int_equal(form, from < 2);
		if (from == 1)
			assert_int_equal(r.n_envs, 1);
		learn_rules_free(&r);
		learn_set_free(&s);
	}
}

/* Python's bytecode cache (a __pycache__ made beside a module, a .pyc written in one, by
 * way of NAME.pyc.ID): no rule, env=PYTHONDONTWRITEBYTECODE=1 instead (found by a user:
 * `run --learn app.py` importing a module beside it learned expose-rw=., the sources
 * writable). A read of the module still makes its rule read-only; a write elsewhere, or
 * a file merely named *.pyc outside a __pycache__, keeps its rule. */
static void test_bytecode_cache_writes_learn_no_rule_but_its_env(void **state)
{
	struct rec_spec in[] = {
		{ "file", "open", "@/proj/data/y", "read" },
		{ "file", "mkdir", "@/proj/data/__pycache__", "write" },
		{ "file", "create", "@/proj/data/__pycache__/y.cpython-311.pyc.1402", "write" },
		{ "file", "rename", "@/proj/data/__pycache__/y.cpython-311.pyc", "write" },
		{ "file", "open", "@/proj/data/__pycache__/z.cpython-311.pyc", "write" },
		{ "file", "create", "@/proj/out/report.pyc", "write" },
	};
	char cwd[256];
	struct learn_env env;
	struct learn_rules r;
	struct learn_set s = { .envp = envp };

	(void)state;
	learn_env_of(&env, cwd, NULL, 0);
	add_specs(&s, in, sizeof(in) / sizeof(in[0]));
	assert_int_equal(s.pycache, 4);
	assert_int_equal(learn_generate(&s, &env, &r), 0);
	assert_int_equal(r.n_files, 2);
	assert_string_equal(r.files[0], "expose-ro=./data");
	assert_string_equal(r.files[1], "expose-rw=./out");
	assert_int_equal(env_lines(&r, "env=PYTHONDONTWRITEBYTECODE=1"), 1);
	assert_int_equal(r.pycache, 4);
	learn_rules_free(&r);
	learn_set_free(&s);
	/* none: no env line */
	{
		struct learn_set t = { .envp = envp };
		json_t *j = rec("file", "open", "@/proj/data/y", "read");

		assert_int_equal(learn_add_record(&t, j), 0);
		json_decref(j);
		assert_int_equal(learn_generate(&t, &env, &r), 0);
		assert_int_equal(r.n_envs, 0);
		learn_rules_free(&r);
		learn_set_free(&t);
	}
}

/* pytest's cache (.pytest_cache made in the project, files written in it): no rule,
 * env=PYTEST_ADDOPTS=-p no:cacheprovider instead (found by a user, round 32: `run --learn
 * python3 -m pytest` learned expose-rw=.); a read of the project keeps its rule; a name
 * that merely starts so keeps its rule. */
static void test_pytest_cache_writes_learn_no_rule_but_its_env(void **state)
{
	struct rec_spec in[] = {
		{ "file", "open", "@/proj/data/y", "read" },
		{ "file", "mkdir", "@/proj/data/.pytest_cache", "write" },
		{ "file", "create", "@/proj/data/.pytest_cache/v/cache/nodeids", "write" },
		{ "file", "create", "@/proj/out/.pytest_cachex", "write" },
	};
	char cwd[256];
	struct learn_env env;
	struct learn_rules r;
	struct learn_set s = { .envp = envp };

	(void)state;
	learn_env_of(&env, cwd, NULL, 0);
	add_specs(&s, in, sizeof(in) / sizeof(in[0]));
	assert_int_equal(s.pytest_cache, 2);
	assert_int_equal(learn_generate(&s, &env, &r), 0);
	assert_int_equal(r.n_files, 2);
	assert_string_equal(r.files[0], "expose-ro=./data");
	assert_string_equal(r.files[1], "expose-rw=./out");
	assert_int_equal(env_lines(&r, "env=PYTEST_ADDOPTS=-p no:cacheprovider"), 1);
	assert_int_equal(r.pytest_cache, 2);
	learn_rules_free(&r);
	learn_set_free(&s);
}

/* rec() for an open for reading and writing. */
static json_t *rec_rdwr(const char *path)
{
	json_t *j = rec("file", "open", path, "read");

	json_array_append_new(json_object_get(j, "access"), json_string("write"));
	return j;
}

/* sqlite3 opens a database for reading and writing to read it: learning made its
 * directory writable (found by a user). An open for reading and writing alone of a SQLite
 * database learns expose-ro=, with why; a lock for writing on it, a journal made beside
 * it, or a file that is no database, expose-rw= as before. */
static void test_sqlite_database_only_read_learns_read_only(void **state)
{
	static const char *const more[] = { NULL, "lock", "create" };
	char cwd[256], db[512], other[512];
	struct learn_env env;
	struct learn_rules r;
	FILE *f;

	(void)state;
	mk("proj/db", true);
	snprintf(db, sizeof(db), "%s/proj/db/app.db", S);
	f = fopen(db, "w");
	assert_non_null(f);
	fwrite("SQLite format 3\0\x10\0", 1, 19, f);
	fclose(f);
	mk("proj/bin", true);
	mk("proj/bin/app.db", false);
	learn_env_of(&env, cwd, NULL, 0);
	for (size_t k = 0; k < sizeof(more) / sizeof(more[0]); k++) {
		struct learn_set s = { .envp = envp };
		json_t *j = rec_rdwr("@/proj/db/app.db");

		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
		if (more[k]) {
			j = rec("file", more[k],
				!strcmp(more[k], "lock") ? "@/proj/db/app.db"
							 : "@/proj/db/app.db-journal",
				"write");
			assert_int_equal(learn_add_record(&s, j), 0);
			json_decref(j);
		}
		assert_int_equal(learn_generate(&s, &env, &r), 0);
		assert_int_equal(r.n_files, 1);
		assert_string_equal(
			r.files[0],
			more[k] ? "expose-rw=./db"
				: "expose-ro=./db  # sqlite3 opened app.db for reading and "
				  "writing, and only read it; expose-rw= if it must write");
		learn_rules_free(&r);
		learn_set_free(&s);
	}
	{
		struct learn_set s = { .envp = envp };
		json_t *j = rec_rdwr("@/proj/bin/app.db");

		assert_int_equal(learn_add_record(&s, j), 0);
		json_decref(j);
		assert_int_equal(learn_generate(&s, &env, &r), 0);
		assert_int_equal(r.n_files, 1);
		assert_string_equal(r.files[0], "expose-rw=./bin");
		learn_rules_free(&r);
		learn_set_free(&s);
	}
	snprintf(other, sizeof(other), "rm -rf '%s/proj/db' '%s/proj/bin'", S, S);
	assert_int_equal(system(other), 0);
}

/* A server outside the sandbox (peer_outside): a rule on its socket itself, never its
 * directory, even under a learned rw directory, and written commented out: it acts as the
 * user outside the sandbox (found by an adversary and a review: tmux, ssh-agent, the
 * session bus). */
static void test_outside_server_socket_written_commented_out(void **state)
{
	char cwd[256], want[512];
	struct learn_set s = { .envp = envp };
	struct learn_env env;
	struct learn_rules r;
	json_t *j = rec("unix", "connect", "@/tmp/w/agent.sock", "write");

	(void)state;
	learn_env_of(&env, cwd, NULL, 0);
	json_object_set_new(j, "peer_outside", json_true());
	assert_int_equal(learn_add_record(&s, j), 0);
	json_decref(j);
	j = rec("file", "create", "@/tmp/w/f", "write");
	assert_int_equal(learn_add_record(&s, j), 0);
	json_decref(j);
	assert_int_equal(learn_generate(&s, &env, &r), 0);
	assert_int_equal(r.n_files, 2);
	assert_int_equal(r.n_servers, 1);
	assert_string_equal(r.files[1], "expose-rw=${TMPDIR:-/tmp}/w");
	snprintf(want, sizeof(want), "%s",
		 "# expose-rw=${TMPDIR:-/tmp}/w/agent.sock  # a server outside the sandbox, acting "
		 "as you: uncomment to allow it");
	assert_string_equal(r.files[0], want);
	learn_rules_free(&r);
	learn_set_free(&s);
}

/* A block device (block_device): a rule on the device itself, never /dev, written
 * commented out: its contents are every file of its file system (found by a review). */
static void test_block_device_written_commented_out(void **state)
{
	char cwd[256];
	struct learn_set s = { .envp = envp };
	struct learn_env env;
	struct learn_rules r;
	json_t *j = rec("file", "open", "/dev/null", "read");

	(void)state;
	learn_env_of(&env, cwd, NULL, 0);
	json_object_set_new(j, "block_device", json_true());
	assert_int_equal(learn_add_record(&s, j), 0);
	json_decref(j);
	assert_int_equal(learn_generate(&s, &env, &r), 0);
	assert_int_equal(r.n_files, 1);
	assert_int_equal(r.n_block_devices, 1);
	assert_int_equal(r.n_servers, 0);
	assert_string_equal(
		r.files[0],
		"# expose-ro=/dev/null  # a block device: every file of its file system, "
		"those the other rules hide included: uncomment to allow it");
	learn_rules_free(&r);
	learn_set_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_envs_learned_secrets_commented_covered_skipped),
		cmocka_unit_test(test_tmp_rule_brings_its_env_line),
		cmocka_unit_test(test_bytecode_cache_writes_learn_no_rule_but_its_env),
		cmocka_unit_test(test_sqlite_database_only_read_learns_read_only),
		cmocka_unit_test(test_pytest_cache_writes_learn_no_rule_but_its_env),
		cmocka_unit_test(test_outside_server_socket_written_commented_out),
		cmocka_unit_test(test_block_device_written_commented_out),
		cmocka_unit_test(test_generate_files),
		cmocka_unit_test(test_generate_names_that_read_back_wider_refused),
		cmocka_unit_test(test_terminal_controls_in_names_never_learned),
		cmocka_unit_test(test_forged_record_fields_learned_only_as_the_kernel_writes_them),
		cmocka_unit_test(test_never_widened),
		cmocka_unit_test(test_generate_net_and_exec),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_conflicts_load),
		cmocka_unit_test(test_template_has_markers_and_is_idempotent_target),
		cmocka_unit_test(test_backup_names_first_free),
		cmocka_unit_test(test_atomic_write_keeps_mode_and_backup),
		cmocka_unit_test(test_learn_file_end_to_end_and_second_run_adds_nothing),
		cmocka_unit_test(test_spelling_longest_prefix_wins),
	};

	return cmocka_run_group_tests_name("learn", tests, setup, teardown);
}
