/* SPDX-License-Identifier: MIT */
/*
 * The event stream's writer (user/events_json.c) and the terminal's bound (user/events.c):
 * the direct writer writes the bytes jansson wrote (docs/events.md's schema), identical
 * events and repeat counts add up exactly, the daemon's direct mode holds nothing back,
 * and the terminal gets a bounded number of lines plus a count of the rest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <cmocka.h>

#include "compile.h"
#include "events.h"
#include "learn.h"

static struct pysb_event e;

/* The deny line event_print_line writes for `e` under `policy` (NULL: none), in line. */
static void print_line(char *line, size_t len, const struct compiled *policy)
{
	FILE *f;

	memset(line, 0, len);
	f = fmemopen(line, len - 1, "w");
	assert_non_null(f);
	event_print_line(f, &e, policy);
	fclose(f);
}

static void file_event(const char *path)
{
	size_t n = strlen(path);

	memset(&e, 0, sizeof(e));
	e.ts_ns = e.first_ns = 5000000000ull;
	e.sandbox = 7;
	e.pid = 999999; /* no such process: "executable" is null */
	e.tid = 999999;
	e.cgroup_id = 1234;
	e.kind = PYSB_KIND_FILE;
	e.op = PYSB_OP_OPEN;
	e.access = PYSB_ACC_READ | PYSB_ACC_WRITE;
	e.decision = PYSB_AUDIT;
	e.repeat = 1;
	memcpy(e.comm, "python3", 8);
	memcpy(e.path, path, n + 1);
	e.path_len = (int32_t)n + 1;
}

/* The direct writer and jansson agree, byte for byte (count > 1: with its fields). */
static void assert_same_as_jansson(struct events_json *w, uint64_t count)
{
	json_t *o = events_json_render(w, &e);
	char *want, t[64];

	assert_non_null(o);
	if (count > 1) {
		events_json_time(w, e.ts_ns + 10, t, sizeof(t));
		json_object_set_new(o, "count", json_integer((json_int_t)count));
		json_object_set_new(o, "last_time", json_string(t));
	}
	want = json_dumps(o, JSON_COMPACT);
	assert_int_equal(events_json_format(w, &e, count, e.ts_ns, e.ts_ns + 10), 0);
	w->line[w->line_len] = '\0';
	assert_string_equal(w->line, want);
	free(want);
	json_decref(o);
}

static void test_direct_writer_matches_jansson(void **state)
{
	struct compiled_file files[2] = {
		{ .path = "/home/me", .src = { .file = "./.py-sandboxes", .line = 3 } },
		{ .path = "/usr/lib", .implicit = true, .why = "shared libraries" },
	};
	struct compiled_net_rule net = { .text = "DENY|tcp|10.0.0.0/8|443|OUT",
					 .src = { .file = "./.py-sandboxes", .line = 9 } };
	struct compiled c = { .files = files, .n_files = 2, .net_rules = &net, .n_net_rules = 1 };
	struct events_json w;

	(void)state;
	assert_int_equal(events_json_init(&w, NULL, "x", "audit", &c), 0);
	file_event("/home/me/data.txt");
	e.rule = 1;
	assert_same_as_jansson(&w, 1);
	assert_same_as_jansson(&w, 12345);
	e.rule = 2;
	assert_same_as_jansson(&w, 1);
	/* characters JSON escapes, and UTF-8 it does not */
	file_event("/tmp/a\"b\\c\nd\te\x01f/caf\xc3\xa9");
	e.flags = PYSB_EV_PATH_TRUNC;
	assert_same_as_jansson(&w, 1);
	/* exec, capability, ipc, signal */
	file_event("/bin/sh");
	e.kind = PYSB_KIND_EXEC;
	e.op = PYSB_OP_EXEC;
	e.access = PYSB_ACC_EXEC;
	e.flags = PYSB_EV_EXEC_POLICY;
	assert_same_as_jansson(&w, 1);
	file_event("");
	e.path_len = 0;
	e.kind = PYSB_KIND_CAP;
	e.op = PYSB_OP_CAPABLE;
	e.rule = 21;
	assert_same_as_jansson(&w, 1);
	e.rule = 63; /* no name */
	assert_same_as_jansson(&w, 1);
	e.kind = PYSB_KIND_SELF;
	e.op = PYSB_OP_IPC;
	e.flags = PYSB_EV_TARGET_IPC;
	e.target_pid = 77;
	assert_same_as_jansson(&w, 1);
	e.op = PYSB_OP_SIGNAL;
	e.flags = 0;
	assert_same_as_jansson(&w, 1);
	/* network: connect with its rule, socket, netlink */
	memset(&e.net, 0, sizeof(e.net));
	e.kind = PYSB_KIND_NET;
	e.op = PYSB_OP_CONNECT;
	e.net.family = AF_INET;
	e.net.protocol = IPPROTO_TCP;
	e.net.port = 443;
	inet_pton(AF_INET, "10.1.2.3", e.net.addr);
	e.rule = 1;
	assert_same_as_jansson(&w, 1);
	e.net.family = AF_INET6;
	inet_pton(AF_INET6, "2001:db8::1", e.net.addr);
	e.net.dir = PYSB_NET_IN;
	e.rule = 0;
	assert_same_as_jansson(&w, 1);
	e.op = PYSB_OP_SOCKET;
	e.net.family = 17;
	e.net.type = SOCK_RAW;
	assert_same_as_jansson(&w, 1);
	e.op = PYSB_OP_NETLINK_SEND;
	assert_same_as_jansson(&w, 1);
	/* source route by sendmsg; multicast (by setsockopt, dir IN) */
	e.op = PYSB_OP_SOURCE_ROUTE;
	e.net.family = AF_INET6;
	e.net.protocol = 41;
	e.net.port = 57;
	e.net.dir = PYSB_NET_OUT;
	assert_same_as_jansson(&w, 1);
	e.op = PYSB_OP_MULTICAST;
	e.net.port = 20;
	e.net.dir = PYSB_NET_IN;
	assert_same_as_jansson(&w, 1);
	{
		json_t *o = events_json_render(&w, &e);

		assert_string_equal(json_string_value(json_object_get(o, "operation")),
				    "multicast");
		assert_string_equal(json_string_value(json_object_get(o, "via")), "setsockopt");
		assert_int_equal(json_integer_value(json_object_get(o, "option")), 20);
		json_decref(o);
	}
	/* unix: a path, an abstract name */
	file_event("/run/x.sock");
	e.kind = PYSB_KIND_UNIX;
	e.op = PYSB_OP_CONNECT;
	assert_same_as_jansson(&w, 1);
	/* a server outside the sandbox, which only a rule on the socket itself reaches */
	e.flags = PYSB_EV_PEER_OUTSIDE;
	assert_same_as_jansson(&w, 1);
	{
		json_t *o = events_json_render(&w, &e);

		assert_true(json_is_true(json_object_get(o, "peer_outside")));
		json_decref(o);
	}
	/* a block device, which only a rule naming it reaches */
	file_event("/dev/vda");
	e.flags = PYSB_EV_BLOCK_DEVICE;
	assert_same_as_jansson(&w, 1);
	{
		json_t *o = events_json_render(&w, &e);

		assert_true(json_is_true(json_object_get(o, "block_device")));
		json_decref(o);
	}
	file_event("/run/x.sock");
	e.kind = PYSB_KIND_UNIX;
	e.op = PYSB_OP_CONNECT;
	e.flags = 0;
	memcpy(e.path, "\0abs", 5);
	e.path_len = 5;
	assert_same_as_jansson(&w, 1);
	/* bytes that are not UTF-8: the direct writer declines (jansson writes _b64) */
	file_event("/srv/caf\xe9.txt");
	assert_int_equal(events_json_format(&w, &e, 1, 0, 0), -1);
	events_json_free(&w);
}

/* Lines of buf (NUL-terminated) that hold needle. */
static int lines_with(const char *buf, const char *needle)
{
	int n = 0;

	for (const char *l = buf; l && *l;) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);

		if (memmem(l, len, needle, strlen(needle)))
			n++;
		l = end ? end + 1 : NULL;
	}
	return n;
}

static void test_identical_events_and_repeats_add_up(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct events_json w;

	(void)state;
	assert_int_equal(events_json_init(&w, f, "mem", "audit", NULL), 0);
	file_event("/x/same");
	for (int i = 0; i < 100000; i++) {
		e.ts_ns = e.first_ns = 5000000000ull + (uint64_t)i; /* within the 1 s window */
		events_json_event(&w, &e);
	}
	/* a record the kernel counted 5 repeats for */
	file_event("/x/other");
	e.repeat = 5;
	e.first_ns = 1;
	events_json_event(&w, &e);
	assert_int_equal(events_json_finish(&w, NULL), 0);
	fclose(f);
	assert_int_equal(lines_with(buf, "\"path\":\"/x/same\""), 1);
	assert_int_equal(lines_with(buf, "\"count\":100000,"), 1);
	assert_int_equal(lines_with(buf, "\"path\":\"/x/other\""), 1);
	assert_int_equal(lines_with(buf, "\"count\":5,"), 1);
	assert_int_equal(lines_with(buf, "\"events\":100005,"), 1);
	free(buf);
}

/* The daemon: each event is a line in the file when events_json_event returns. */
static void test_direct_mode_holds_nothing(void **state)
{
	char path[] = "/tmp/pysb-events-XXXXXX", got[8192];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "a");
	struct events_json w;
	ssize_t n;

	(void)state;
	assert_non_null(f);
	assert_int_equal(events_json_init(&w, f, path, "daemon", NULL), 0);
	w.direct = true;
	w.ev_mode = "audit";
	w.ev_binding = "web";
	w.ev_target = "/sys/fs/cgroup/web";
	file_event("/x/same");
	events_json_event(&w, &e);
	events_json_event(&w, &e);
	assert_false(events_json_has_pending(&w));
	n = pread(fd, got, sizeof(got) - 1, 0);
	assert_true(n > 0);
	got[n] = '\0';
	assert_int_equal(lines_with(got, "\"mode\":\"audit\""), 2);
	assert_int_equal(lines_with(got, "\"binding\":\"web\",\"target\":\"/sys/fs/cgroup/web\"}"),
			 2);
	assert_int_equal(w.records, 2);
	events_json_free(&w);
	fclose(f);
	unlink(path);
}

/* A path's bytes on the terminal (found by an adversary): C0 and C1 controls, as UTF-8 or
 * raw bytes, and bytes that are not UTF-8 are escaped; other UTF-8 characters are not. */
static void test_line_escapes_terminal_controls(void **state)
{
	char line[1024];

	(void)state;
	file_event("/etc/\xc2\x9b"
		   "2J\x9b"
		   "31m\x1b]0;t\x07/caf\xc3\xa9/\xc4\x81/\xe2\x82\xac/\xff");
	e.decision = PYSB_DENY;
	e.kind = PYSB_KIND_FILE;
	e.op = PYSB_OP_OPEN;
	print_line(line, sizeof(line), NULL);
	assert_non_null(strstr(line, " /etc/\\xc2\\x9b"
				     "2J\\x9b"
				     "31m\\x1b]0;t\\x07/caf\xc3\xa9/"
				     "\xc4\x81/\xe2\x82\xac/\\xff pid="));
}

/* A denial in /dev/shm names what needs it and the rule (found by a user: a
 * multiprocessing Lock, Queue or Pool, and concurrent.futures' process pool, died of a
 * bare "PermissionError: [Errno 13] Permission denied" naming no file). */
static void test_line_dev_shm_says_what_needs_it(void **state)
{
	static const char hint[] = "(POSIX shared memory and semaphores: multiprocessing's "
				   "locks, queues and pools need expose-rw=/dev/shm)";
	char line[1024];

	(void)state;
	for (int i = 0; i < 3; i++) {
		file_event(i == 0   ? "/dev/shm/sem.gbz8Uu"
			   : i == 1 ? "/dev/shm/psm_1f2e"
				    : "/dev/shmx");
		e.decision = i == 1 ? PYSB_AUDIT : PYSB_DENY;
		e.kind = PYSB_KIND_FILE;
		e.op = PYSB_OP_CREATE;
		print_line(line, sizeof(line), NULL);
		if (i < 2)
			assert_non_null(strstr(line, hint));
		else
			assert_null(strstr(line, "expose-rw=/dev/shm"));
		assert_non_null(strstr(line, " pid="));
	}
}

/* A denial in the user's own site-packages (pip install --user) says what it is and the
 * two ways out, naming that directory (found by a user: two bare deny lines at every
 * Python start, and ModuleNotFoundError for what was installed there). */
static void test_line_user_site_packages_says_what_it_is(void **state)
{
	static const struct {
		const char *path, *dir; /* dir NULL: no hint */
	} cases[] = {
		{ "/root/.local/lib/python3.11/site-packages",
		  "/root/.local/lib/python3.11/site-packages" },
		{ "/home/u/.local/lib/python3.12/site-packages/mod.pth",
		  "/home/u/.local/lib/python3.12/site-packages" },
		{ "/home/u/.local/lib/python3.11/site-packagesX", NULL },
		{ "/home/u/.local/lib/python3.11/other/site-packages", NULL },
		{ "/home/u/.local/lib/python/site-packages", NULL },
		{ "/usr/lib/python3/dist-packages", NULL },
		/* a write (its __pycache__): denied under expose-ro= of it too, no hint */
		{ "/root/.local/lib/python3.11/site-packages/__pycache__", NULL },
	};
	char line[1024], want[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		file_event(cases[i].path);
		e.decision = PYSB_DENY;
		e.kind = PYSB_KIND_FILE;
		e.op = cases[i].path[strlen(cases[i].path) - 1] == '_' ? PYSB_OP_MKDIR
								       : PYSB_OP_OPEN;
		e.access = e.op == PYSB_OP_MKDIR ? PYSB_ACC_WRITE : PYSB_ACC_READ;
		print_line(line, sizeof(line), NULL);
		if (cases[i].dir) {
			snprintf(want, sizeof(want),
				 " (the user's own site-packages, where pip install --user puts "
				 "packages: expose-ro=%s lets the program import them; "
				 "env=PYTHONNOUSERSITE=1 keeps Python from looking there) pid=",
				 cases[i].dir);
			assert_non_null(strstr(line, want));
		} else {
			assert_null(strstr(line, "pip install --user"));
		}
	}
}

/* An open for reading and writing denied under a rule that lets the file be read says
 * so, with the rule: sqlite3 then reads the database (found by a user, round 31). Not for
 * a write alone, an audit, a rule granting writes, nor an implicit one. */
static void test_line_read_write_under_a_read_rule_says_it_reads(void **state)
{
	struct compiled_file files[2] = {
		{ .path = "/srv/data",
		  .access = PYSB_ACC_RO,
		  .src = { .file = "app/.py-sandboxes", .line = 3 } },
		{ .path = "/usr/lib", .access = PYSB_ACC_RO, .implicit = true, .why = "libs" },
	};
	struct compiled c = { .files = files, .n_files = 2 };
	static const char want[] =
		" (read-only: app/.py-sandboxes:3 lets /srv/data be read, not written; a program "
		"that then opens it for reading alone, as sqlite3 does, reads it; expose-rw= lets "
		"it write) pid=";
	char line[1024];

	(void)state;
	for (int i = 0; i < 6; i++) {
		file_event("/srv/data/app.db");
		e.decision = i == 2 ? PYSB_AUDIT : PYSB_DENY;
		e.rule = i == 4 ? 2 : 1;
		if (i == 1)
			e.access = PYSB_ACC_WRITE;
		files[0].access = i == 3 ? PYSB_ACC_RW : PYSB_ACC_RO;
		print_line(line, sizeof(line), i == 5 ? NULL : &c);
		if (i == 0)
			assert_non_null(
				strstr(line, "open(read,write) /srv/data/app.db (read-only"));
		if (i == 0)
			assert_non_null(strstr(line, want));
		else
			assert_null(strstr(line, "read-only"));
	}
}

/* Under /dev the same line says what a device's refusal means (round 32): the open for
 * reading of a DRM card, /dev/vhci, a watchdog, and a device's setting ioctls are judged
 * as writes, so the program's open for reading alone may be what was refused. */
static void test_line_read_write_of_a_device_under_a_read_rule(void **state)
{
	struct compiled_file files[1] = {
		{ .path = "/dev", .access = PYSB_ACC_RO, .src = { .file = "p", .line = 2 } },
	};
	struct compiled c = { .files = files, .n_files = 1 };
	static const char want[] =
		" (read-only: p:2 lets /dev be read, not written; a device whose open for reading "
		"acts on it (a DRM card, a watchdog) is judged as written; expose-rw= lets it) pid=";
	char line[1024];

	(void)state;
	file_event("/dev/dri/card0");
	e.decision = PYSB_DENY;
	e.rule = 1;
	print_line(line, sizeof(line), &c);
	assert_non_null(strstr(line, "open(read,write) /dev/dri/card0 (read-only"));
	assert_non_null(strstr(line, want));
	assert_null(strstr(line, "sqlite3"));
}

/* git's and pip's configuration files, read and denied, say what they are and the two
 * ways out (found by a user, round 31: `run -- git log` stopped at once, pip went on
 * without /etc/pip.conf's settings); other files do not. */
static void test_line_git_and_pip_config_say_their_ways_out(void **state)
{
	static const struct {
		const char *path, *want; /* want NULL: no hint */
	} cases[] = {
		{ "/etc/gitconfig", " (git's system configuration: git stops when it cannot read "
				    "it; expose-ro=/etc/gitconfig lets it read it, "
				    "env=GIT_CONFIG_NOSYSTEM=1 makes git skip it) pid=" },
		{ "/home/u/.gitconfig", " (git's global configuration: git stops when it cannot "
					"read it; expose-ro=/home/u/.gitconfig lets it read it, "
					"env=GIT_CONFIG_GLOBAL=/dev/null makes git skip it) pid=" },
		{ "/home/u/.config/git/config",
		  " (git's global configuration: git stops when it "
		  "cannot read it; expose-ro=/home/u/.config/git/"
		  "config lets it read it, env=GIT_CONFIG_GLOBAL=/dev/"
		  "null makes git skip it) pid=" },
		{ "/etc/pip.conf", " (pip's configuration: pip goes on without its settings "
				   "(index, proxy, certificates); expose-ro=/etc/pip.conf lets it "
				   "read it, env=PIP_CONFIG_FILE=/dev/null makes pip skip its "
				   "configuration files) pid=" },
		{ "/home/u/.config/pip/pip.conf", "expose-ro=/home/u/.config/pip/pip.conf lets it "
						  "read it, env=PIP_CONFIG_FILE=/dev/null" },
		{ "/home/u/.pip/pip.conf", "expose-ro=/home/u/.pip/pip.conf lets it read it, "
					   "env=PIP_CONFIG_FILE=/dev/null" },
		{ "/home/u/.netrc", " (your logins for hosts, passwords included: requests and "
				    "pip read it for a host's login, and go on without it; "
				    "expose-ro=/home/u/.netrc lets it read it, env=NETRC=/dev/null "
				    "makes requests and pip skip it) pid=" },
		{ "/home/u/x.netrc", NULL },
		{ "/srv/pip.conf", NULL },
		{ "/etc/gitconfig.d", NULL },
		{ "/home/u/x.gitconfig", NULL },
		{ "/srv/repo/.git/config", NULL },
	};
	char line[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		file_event(cases[i].path);
		e.decision = PYSB_DENY;
		e.access = PYSB_ACC_READ;
		print_line(line, sizeof(line), NULL);
		if (cases[i].want)
			assert_non_null(strstr(line, cases[i].want));
		else
			assert_null(strstr(line, "configuration") ?: strstr(line, "logins"));
	}
}

/* The exec of lsb_release, uname (pip's distro module) and ldconfig (ctypes.util's
 * find_library), refused by a policy with no exec, says what goes on without it (found by
 * a user, round 32: two lines at every pip install, nothing said whether they mattered);
 * another program, or one allowed past the exec rule, does not. */
static void test_line_exec_of_a_fact_says_what_is_lost(void **state)
{
	static const struct {
		const char *path;
		uint32_t flags;
		const char *want; /* NULL: no hint */
	} cases[] = {
		{ "/usr/bin/lsb_release", PYSB_EV_EXEC_POLICY,
		  "allow it) (lsb_release names the Linux distribution: the distro module (pip's, "
		  "for its User-Agent) runs it and goes on with /etc/os-release; nothing else is "
		  "lost) pid=" },
		{ "/usr/bin/uname", PYSB_EV_EXEC_POLICY,
		  "(uname names the kernel and processor: the distro module (pip's) and "
		  "platform.processor() run it and go on without it (os.uname() gives the same); "
		  "nothing else is lost) pid=" },
		{ "/sbin/ldconfig", PYSB_EV_EXEC_POLICY,
		  "(ldconfig lists the shared libraries: ctypes.util.find_library() runs it (then "
		  "gcc, ld) and returns None without it; ctypes.CDLL() of the library's file name "
		  "(libNAME.so.N) needs no program) pid=" },
		{ "/usr/bin/python3.11", PYSB_EV_EXEC_POLICY,
		  "(a Python started by the program, as python -m venv does to install pip "
		  "(--without-pip makes the venv without), multiprocessing's spawn and forkserver "
		  "for their workers, pip to build a package) pid=" },
		{ "/usr/bin/python-config", PYSB_EV_EXEC_POLICY, NULL },
		{ "/srv/p/.pytest_cache", 0,
		  "/srv/p/.pytest_cache (pytest's cache: pytest goes "
		  "on without it, warning PytestCacheWarning; --lf, "
		  "--ff and --sw start afresh. "
		  "env=PYTEST_ADDOPTS=-p no:cacheprovider turns it off; "
		  "do not make the project writable for it) pid=" },
		{ "/srv/p/.pytest_cache/v/x", 0, "(pytest's cache: " },
		{ "/srv/p/.pytest_cachex", 0, NULL },
		{ "/usr/bin/lsb_release", 0, NULL },
		{ "/usr/bin/unamex", PYSB_EV_EXEC_POLICY, NULL },
		{ "/usr/bin/git", PYSB_EV_EXEC_POLICY, NULL },
	};
	char line[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		file_event(cases[i].path);
		e.decision = PYSB_DENY;
		e.access = strstr(cases[i].path, "pytest") ? PYSB_ACC_WRITE : PYSB_ACC_READ;
		e.op = strstr(cases[i].path, "pytest") ? PYSB_OP_MKDIR : PYSB_OP_OPEN;
		e.flags = cases[i].flags;
		print_line(line, sizeof(line), NULL);
		if (cases[i].want)
			assert_non_null(strstr(line, cases[i].want));
		else
			assert_null(strstr(line, "names the") ?: strstr(line, "a Python")
							    ?: strstr(line, "pytest's"));
	}
}

/* A connect to the proxy the policy passes (env=HTTPS_PROXY=...), no net= rule allowing
 * it: the line names the variable and the rule, and says the proxy then decides (found by
 * a user, round 32); never the URL's password. Another port, address or protocol, or no
 * proxy, gets no such words. */
static void test_line_connect_to_the_proxy_says_so(void **state)
{
	static char *const env[] = { "PATH=/usr/bin", "HTTPS_PROXY=http://u:secret@127.0.0.1:3128/",
				     "http_proxy=[::1]:8080", NULL };
	static const struct {
		int family, protocol, port;
		const char *addr, *want; /* want NULL: no hint */
	} cases[] = {
		{ AF_INET, IPPROTO_TCP, 3128, "127.0.0.1",
		  "tcp 127.0.0.1:3128 (OUT) no net= rule allows it (the proxy of HTTPS_PROXY, which "
		  "the policy passes: a program that uses it connects there, not to the hosts it "
		  "asks for, which net= rules on them do not allow; net=ALLOW|TCP|127.0.0.1|3128|OUT "
		  "allows it, and the proxy then decides which hosts the program reaches; without "
		  "that env= line the program connects to them itself, as net= judges) pid=" },
		{ AF_INET6, IPPROTO_TCP, 3128, "::ffff:127.0.0.1", "(the proxy of HTTPS_PROXY" },
		{ AF_INET6, IPPROTO_TCP, 8080, "::1",
		  "(the proxy of http_proxy, which the policy "
		  "passes: a program that uses it connects "
		  "there, not to the hosts it asks for, which "
		  "net= rules on them do not allow; "
		  "net=ALLOW|TCP|::1|8080|OUT" },
		{ AF_INET, IPPROTO_TCP, 3129, "127.0.0.1", NULL },
		{ AF_INET, IPPROTO_UDP, 3128, "127.0.0.1", NULL },
		{ AF_INET, IPPROTO_TCP, 3128, "127.0.0.2", NULL },
	};
	char line[1024];

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		events_set_proxies(pass ? NULL : env);
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			file_event("");
			e.path_len = 0;
			e.decision = PYSB_DENY;
			e.kind = PYSB_KIND_NET;
			e.op = PYSB_OP_CONNECT;
			e.net.family = (uint16_t)cases[i].family;
			e.net.protocol = (uint16_t)cases[i].protocol;
			e.net.dir = PYSB_NET_OUT;
			e.net.port = (uint16_t)cases[i].port;
			memset(e.net.addr, 0, sizeof(e.net.addr));
			inet_pton(cases[i].family, cases[i].addr, e.net.addr);
			print_line(line, sizeof(line), NULL);
			if (cases[i].want && !pass)
				assert_non_null(strstr(line, cases[i].want));
			else
				assert_null(strstr(line, "proxy"));
			assert_null(strstr(line, "secret"));
		}
	}
}

/* A server started with no host: glibc's UDP connect to the wildcard (sorting it) and the
 * bind to every address say what they are, the bind with the rule for each intent (found
 * by a user, round 31); a bind to a named address, or to port 0, does not. */
static void test_line_server_with_no_host_says_what_it_did(void **state)
{
	static const struct {
		int family, protocol, op, dir, port;
		const char *addr, *want; /* want NULL: no hint */
	} cases[] = {
		{ AF_INET6, IPPROTO_UDP, PYSB_OP_CONNECT, PYSB_NET_OUT, 8765, "::",
		  "udp [::]:8765 (OUT) no net= rule allows it (a UDP connect that sends nothing: "
		  "glibc's getaddrinfo makes one to each address of a server started with no host, "
		  "to sort them; denied, it sorts without it) pid=" },
		{ AF_INET, IPPROTO_UDP, PYSB_OP_CONNECT, PYSB_NET_OUT, 8765, "0.0.0.0",
		  "(a UDP connect that sends nothing" },
		{ AF_INET6, IPPROTO_TCP, PYSB_OP_BIND, PYSB_NET_IN, 8765, "::",
		  "tcp [::]:8765 (IN) no net= rule allows it (a bind to every address of the "
		  "machine, as a server started with no host makes: net=ALLOW|TCP|*|8765|IN allows "
		  "it; net=ALLOW|TCP|localhost|8765|IN allows a bind to 127.0.0.1 alone) pid=" },
		{ AF_INET, IPPROTO_UDP, PYSB_OP_BIND, PYSB_NET_IN, 5353, "0.0.0.0",
		  "net=ALLOW|UDP|*|5353|IN allows it" },
		{ AF_INET, IPPROTO_TCP, PYSB_OP_BIND, PYSB_NET_IN, 8765, "127.0.0.1", NULL },
		{ AF_INET, IPPROTO_TCP, PYSB_OP_BIND, PYSB_NET_IN, 0, "0.0.0.0", NULL },
		{ AF_INET, IPPROTO_UDP, PYSB_OP_CONNECT, PYSB_NET_OUT, 53, "10.0.0.1", NULL },
		{ AF_INET, IPPROTO_TCP, PYSB_OP_CONNECT, PYSB_NET_OUT, 8765, "0.0.0.0", NULL },
	};
	char line[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		file_event("");
		e.path_len = 0;
		e.decision = PYSB_DENY;
		e.kind = PYSB_KIND_NET;
		e.op = (uint16_t)cases[i].op;
		e.net.family = (uint16_t)cases[i].family;
		e.net.protocol = (uint16_t)cases[i].protocol;
		e.net.dir = (uint16_t)cases[i].dir;
		e.net.port = (uint16_t)cases[i].port;
		memset(e.net.addr, 0, sizeof(e.net.addr));
		inet_pton(cases[i].family, cases[i].addr, e.net.addr);
		print_line(line, sizeof(line), NULL);
		if (cases[i].want)
			assert_non_null(strstr(line, cases[i].want));
		else
			assert_null(strstr(line, "no host"));
	}
}

/* The line of a record standing for several denials says so (found by a user: the
 * sweep's count of a repeated denial printed as an identical second line). */
static void test_line_says_its_repeats(void **state)
{
	struct pysb_event e = { 0 };
	char line[512];
	FILE *f;

	(void)state;
	e.kind = PYSB_KIND_CAP;
	e.op = PYSB_OP_CAPABLE;
	e.decision = PYSB_DENY;
	e.pid = e.tid = 42;
	e.rule = 21; /* CAP_SYS_ADMIN */
	memcpy(e.comm, "python3", 8);
	for (int i = 0; i < 3; i++) {
		static const char *const want[] = { "comm=python3\n", "comm=python3 (3 times)\n",
						    "comm=python3 (2 more of the same)\n" };

		memset(line, 0, sizeof(line));
		f = fmemopen(line, sizeof(line) - 1, "w");
		assert_non_null(f);
		e.repeat = i == 0 ? 1 : i == 1 ? 3 : 2;
		event_print_line_again(f, &e, NULL, i == 2);
		fclose(f);
		assert_non_null(strstr(line, want[i]));
		assert_string_equal(strstr(line, "comm="), want[i]);
	}
}

static void test_tty_bounded(void **state)
{
	struct events_tty t = { 0 };
	uint64_t now = 1000000000ull;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int shown = 0;

	(void)state;
	for (int i = 0; i < 100000; i++)
		shown += events_tty_allow(&t, now, 1);
	assert_int_equal(shown, EVENTS_TTY_BURST);
	assert_int_equal(t.hidden, 100000 - EVENTS_TTY_BURST);
	/* one second later: RATE more */
	now += 1000000000ull;
	shown = 0;
	for (int i = 0; i < 1000; i++)
		shown += events_tty_allow(&t, now, 1);
	assert_int_equal(shown, EVENTS_TTY_RATE);
	/* a record standing for 7 denials shows one line, which says 7: none hidden */
	now += 1000000000ull;
	t.hidden = 0;
	assert_true(events_tty_allow(&t, now, 7));
	assert_int_equal(t.hidden, 0);
	f = open_memstream(&buf, &len);
	t.hidden = 12345;
	assert_true(events_tty_summary(&t, f, "ev.jsonl"));
	assert_false(events_tty_summary(&t, f, "ev.jsonl"));
	fclose(f);
	assert_string_equal(buf, "pysb-bpf: ... 12,345 more denials not shown; all in --events "
				 "ev.jsonl\n");
	free(buf);
}

/* learn counts denials, a record's count included. */
static void test_learn_counts_repeats(void **state)
{
	struct learn_set s = { 0 };
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:[s], s:I}", "record", "event", "kind", "file",
			      "operation", "open", "path", "/x/y", "access", "read", "count",
			      (json_int_t)5);

	(void)state;
	assert_int_equal(learn_add_record(&s, o), 0);
	assert_int_equal(s.records, 5);
	json_decref(o);
	learn_set_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_direct_writer_matches_jansson),
		cmocka_unit_test(test_identical_events_and_repeats_add_up),
		cmocka_unit_test(test_direct_mode_holds_nothing),
		cmocka_unit_test(test_tty_bounded),
		cmocka_unit_test(test_line_read_write_under_a_read_rule_says_it_reads),
		cmocka_unit_test(test_line_read_write_of_a_device_under_a_read_rule),
		cmocka_unit_test(test_line_git_and_pip_config_say_their_ways_out),
		cmocka_unit_test(test_line_exec_of_a_fact_says_what_is_lost),
		cmocka_unit_test(test_line_connect_to_the_proxy_says_so),
		cmocka_unit_test(test_line_server_with_no_host_says_what_it_did),
		cmocka_unit_test(test_line_says_its_repeats),
		cmocka_unit_test(test_line_dev_shm_says_what_needs_it),
		cmocka_unit_test(test_line_user_site_packages_says_what_it_is),
		cmocka_unit_test(test_line_escapes_terminal_controls),
		cmocka_unit_test(test_learn_counts_repeats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
