/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "caps.h"
#include "compile.h"
#include "events.h"
#include "events_int.h"
#include "utf8.h"

const char *event_path(const struct pysb_event *e)
{
	if (e->path_len <= 0 || e->path_off >= PYSB_PATH_LEN)
		return NULL;
	return e->path + e->path_off;
}

/* Is `path` at or below directory `root` (both absolute)? */
static bool under(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (!strcmp(root, "/"))
		return true;
	return !strncmp(path, root, n) && (!path[n] || path[n] == '/');
}

/*
 * Where file system `dev` (kernel encoding) is mounted, and from which of its
 * directories: the first mount in /proc/self/mountinfo whose root holds `path`. Writes
 * the mount point and the root. The last answer is kept for a second: a flood of
 * denials on one file system reads the table once.
 */
static bool mount_of(uint32_t dev, const char *path, char *point, char *root)
{
	static struct {
		uint32_t dev;
		time_t at;
		char root[PATH_MAX], point[PATH_MAX];
	} last = { .at = -1 };
	struct timespec now;
	char *line = NULL;
	unsigned maj, min;
	bool found = false;
	size_t cap = 0;
	FILE *f;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (last.at == now.tv_sec && last.dev == dev && under(path, last.root)) {
		strcpy(point, last.point);
		strcpy(root, last.root);
		return true;
	}
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		/* id parent MAJ:MIN ROOT MOUNTPOINT ... (a mount with an octal escape in
		 * its root or mount point only fails to match) */
		found = sscanf(line, "%*s %*s %u:%u %4095s %4095s", &maj, &min, root, point) == 4 &&
			((maj << 20) | min) == dev && under(path, root);
	}
	free(line);
	fclose(f);
	if (found) {
		last.dev = dev;
		last.at = now.tv_sec;
		strcpy(last.root, root);
		strcpy(last.point, point);
	}
	return found;
}

void events_resolve_path(struct pysb_event *e)
{
	const char *path = event_path(e);
	char point[PATH_MAX], root[PATH_MAX], full[PYSB_PATH_LEN];
	const char *rest;
	size_t n;

	if (!(e->flags & PYSB_EV_PATH_FSROOT) || !path || !mount_of(e->dev, path, point, root))
		return;
	rest = strcmp(root, "/") ? path + strlen(root) : path;
	if (!strcmp(rest, "/"))
		rest = ""; /* the root itself: the mount point */
	if (!strcmp(point, "/") || !*rest)
		n = (size_t)snprintf(full, sizeof(full), "%s", *rest ? rest : point);
	else
		n = (size_t)snprintf(full, sizeof(full), "%s%s", point, rest);
	if (n >= sizeof(full))
		return; /* longer than an event holds: left from its file system's root */
	memcpy(e->path + PYSB_PATH_LEN - n - 1, full, n + 1);
	e->path_off = PYSB_PATH_LEN - n - 1;
	e->path_len = (int32_t)n + 1;
	e->flags &= ~PYSB_EV_PATH_FSROOT;
}

/* Paths may hold any byte. Control characters would forge lines on a terminal, and C1
 * controls (8-bit CSI, OSC: U+0080 to U+009F in UTF-8, or raw bytes) run its commands
 * (found by an adversary): those, and bytes that are not UTF-8, are written \xNN. */
static void print_escaped(FILE *f, const char *s)
{
	const char *end = s + strlen(s);

	while (*s) {
		size_t n = *s == '\\' ? 0 : utf8_printable(s, (size_t)(end - s));

		if (!n) {
			fprintf(f, "\\x%02x", (unsigned char)*s);
			s++;
			continue;
		}
		fwrite(s, 1, n, f);
		s += n;
	}
}

/* ---- network and unix events (bpf/net.bpf.c, bpf/unix.bpf.c) ---- */

/* "10.0.0.1:443", "[::1]:443" */
static void print_sockaddr(FILE *f, const struct pysb_net_event *n)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(n->family == AF_INET6 ? AF_INET6 : AF_INET, n->addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	fprintf(f, n->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, n->port);
}

/* A bind to port 0 of ::1 or 127.0.0.0/8: what urllib3's _has_ipv6 (requests, pip) does
 * at import; denied, it only takes IPv6 for absent, and the line says what to write
 * (found by a user: a deny line at every run of a program using requests). */
static bool loopback_probe(const struct pysb_event *e)
{
	static const uint8_t ip6_loopback[16] = { [15] = 1 };
	const struct pysb_net_event *n = &e->net;

	if (e->op != PYSB_OP_BIND || n->dir != PYSB_NET_IN || n->port)
		return false;
	if (n->family == AF_INET6)
		return !memcmp(n->addr, ip6_loopback, sizeof(ip6_loopback));
	return n->family == AF_INET && n->addr[0] == 127;
}

/* The address as the program gave it is the wildcard, 0.0.0.0 or ::. */
static bool any_address(const struct pysb_net_event *n)
{
	static const uint8_t zero[16];

	return (n->family == AF_INET6 && !memcmp(n->addr, zero, 16)) ||
	       (n->family == AF_INET && !memcmp(n->addr, zero, 4));
}

/* What a server started with no host does (`python3 -m http.server 8000`, socketserver,
 * most frameworks' 0.0.0.0): glibc's getaddrinfo sorts the wildcard addresses by a UDP
 * connect to each, then the server binds every address of the machine. Both lines named
 * no cause, and a rule on localhost for the port looked as if it should do (found by a
 * user, round 31). Said on the line, with the rule for each intent. */
static void print_server_hint(FILE *f, const struct pysb_event *e)
{
	const struct pysb_net_event *n = &e->net;

	if (!any_address(n))
		return;
	if (e->op == PYSB_OP_CONNECT && n->protocol == IPPROTO_UDP && n->dir == PYSB_NET_OUT)
		fputs(" (a UDP connect that sends nothing: glibc's getaddrinfo makes one to each "
		      "address of a server started with no host, to sort them; denied, it sorts "
		      "without it)",
		      f);
	else if (e->op == PYSB_OP_BIND && n->dir == PYSB_NET_IN && n->port)
		fprintf(f,
			" (a bind to every address of the machine, as a server started with no "
			"host makes: net=ALLOW|%s|*|%u|IN allows it; net=ALLOW|%s|localhost|%u|IN "
			"allows a bind to 127.0.0.1 alone)",
			n->protocol == IPPROTO_UDP ? "UDP" : "TCP", n->port,
			n->protocol == IPPROTO_UDP ? "UDP" : "TCP", n->port);
}

static void print_net_detail(FILE *f, const struct pysb_event *e, const struct compiled *policy)
{
	const struct pysb_net_event *n = &e->net;
	const struct compiled_net_rule *r;
	const char *fam;

	switch (e->op) {
	case PYSB_OP_SOCKET:
		fam = net_family_name(n->family);
		fprintf(f, "%s(%u) type=%s(%u) protocol=%u (not allowed: see bpf.socket-family)",
			fam ? fam : "family", n->family, sock_type_name(n->type) ?: "?", n->type,
			n->protocol);
		return;
	case PYSB_OP_NETLINK_SEND:
		fprintf(f,
			"protocol=%u message-type=%u (only RTM_GET requests are allowed; "
			"bpf.socket-family=netlink allows all)",
			n->protocol, n->port);
		return;
	case PYSB_OP_SOURCE_ROUTE:
		fprintf(f,
			"%s level=%u option=%u (IP options and IPv6 routing headers are "
			"refused: the first hop would not be judged by net=)",
			n->dir ? "sendmsg" : "setsockopt", n->protocol, n->port);
		return;
	case PYSB_OP_MULTICAST:
		fprintf(f,
			"setsockopt level=%u option=%u (multicast memberships need a net= rule "
			"allowing udp IN on a multicast address, %s)",
			n->protocol, n->port,
			n->protocol == IPPROTO_IPV6 ? "ff00::/8" : "224.0.0.0/4");
		return;
	}
	fprintf(f, "%s ", n->protocol == IPPROTO_UDP ? "udp" : "tcp");
	print_sockaddr(f, n);
	fprintf(f, " (%s)", n->dir == PYSB_NET_IN ? "IN" : "OUT");
	r = net_rule_at(policy, e->rule);
	if (r && !r->implicit)
		fprintf(f, " denied by net=%s at %s:%u", r->text, r->src.file, r->src.line);
	else
		fputs(" no net= rule allows it", f);
	if (!r && loopback_probe(e))
		fprintf(f,
			" (a bind to a free port of the loopback: urllib3, in requests and pip, "
			"makes one at import to learn whether IPv6 works; "
			"net=ALLOW|%s|%s|0|IN allows it)",
			n->protocol == IPPROTO_UDP ? "UDP" : "TCP",
			n->family == AF_INET6 ? "ip6-localhost" : "localhost");
	if (!r)
		print_server_hint(f, e);
	if (!r)
		events_print_proxy_hint(f, e);
}

/* Unix names may hold any byte; an abstract one starts with NUL, shown as '@'. */
static void print_unix_name(FILE *f, const struct pysb_event *e)
{
	int len = e->path_len - 1;

	if (len <= 0 || len > PYSB_PATH_LEN - 1) {
		fputs(e->op == PYSB_OP_BIND ? "(autobind)" : "(unnamed)", f);
		return;
	}
	if (e->path[0] != '\0') {
		print_escaped(f, e->path);
		return;
	}
	fputc('@', f);
	for (int i = 1; i < len; i++) {
		unsigned char c = (unsigned char)e->path[i];

		if (c < 0x20 || c >= 0x7f || c == '\\')
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

static void net_event_print_line(FILE *f, const struct pysb_event *e, const char *comm,
				 const struct compiled *policy)
{
	fprintf(f, "pysb-bpf: %s %s %s ", e->decision == PYSB_AUDIT ? "audit" : "deny",
		kind_str(e->kind), net_op_str(e->op));
	if (e->kind == PYSB_KIND_UNIX) {
		print_unix_name(f, e);
		if (e->flags & PYSB_EV_PEER_OUTSIDE)
			fputs(" (a server outside the sandbox: only a rule naming this socket itself "
			      "allows it, not one on a directory above it)",
			      f);
	} else
		print_net_detail(f, e, policy);
	fprintf(f, " pid=%u tid=%u comm=", e->pid, e->tid);
	print_escaped(f, comm);
	fputc('\n', f);
}

/* ---- end of network ---- */

static void event_format_line(FILE *f, const struct pysb_event *e, const struct compiled *policy);

/* One write(2) per line: stderr is unbuffered and shared with the program, whose own
 * output would otherwise land in the middle of the line. A record standing for several
 * occurrences says how many: " (N times)", or " (N more of the same)" for the count of a
 * key whose line was printed already (`again`: a sweep's), which read as one more event. */
void event_print_line_again(FILE *f, const struct pysb_event *e, const struct compiled *policy,
			    bool again)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m) {
		event_format_line(f, e, policy);
		return;
	}
	event_format_line(m, e, policy);
	if (!fclose(m)) {
		if (len && buf[len - 1] == '\n' && (again || e->repeat > 1))
			fprintf(f, again ? "%.*s (%u more of the same)\n" : "%.*s (%u times)\n",
				(int)len - 1, buf, e->repeat);
		else
			fwrite(buf, 1, len, f);
	}
	free(buf);
}

void event_print_line(FILE *f, const struct pysb_event *e, const struct compiled *policy)
{
	event_print_line_again(f, e, policy, false);
}

/* The user's own site-packages, where `pip install --user` puts packages
 * (~/.local/lib/pythonX.Y/site-packages), which Python lists at every start once it exists:
 * the length of that directory in `path` (the directory itself, or what below it was
 * denied), or 0. */
static size_t user_site_len(const char *path)
{
	const char *l = strstr(path, "/.local/lib/python"), *v, *s;

	if (!l)
		return 0;
	v = l + strlen("/.local/lib/python");
	s = strchr(v, '/');
	if (!s || s == v || strncmp(s, "/site-packages", 14) || (s[14] && s[14] != '/'))
		return 0;
	return (size_t)(s + 14 - path);
}

/* Says what a denied user site-packages is and the two ways out (found by a user: after a
 * `pip install --user`, two deny lines at every start of every Python program, and the
 * packages installed there not found, ModuleNotFoundError naming no cause). */
static void print_user_site_hint(FILE *f, const char *path)
{
	char dir[PYSB_PATH_LEN];
	size_t n = user_site_len(path);

	if (!n || n >= sizeof(dir))
		return;
	memcpy(dir, path, n);
	dir[n] = '\0';
	fputs(" (the user's own site-packages, where pip install --user puts packages: "
	      "expose-ro=",
	      f);
	print_escaped(f, dir);
	fputs(" lets the program import them; env=PYTHONNOUSERSITE=1 keeps Python from "
	      "looking there)",
	      f);
}

/* A file or directory made right in /tmp or /var/tmp: a temporary file, as tempfile
 * makes them (found by a user: three deny lines, /tmp, /var/tmp and the working
 * directory, then "No usable temporary directory", and nothing said what to write). */
static bool temp_entry(const char *path)
{
	const char *name = !strncmp(path, "/tmp/", 5)	    ? path + 5
			   : !strncmp(path, "/var/tmp/", 9) ? path + 9
							    : NULL;

	return name && *name && !strchr(name, '/');
}

/* pytest's cache, .pytest_cache where it runs (found by a user, round 32: two deny lines
 * and two PytestCacheWarning at every `python3 -m pytest` under expose-ro=.). */
static bool pytest_cache(const char *path)
{
	const char *c = strstr(path, "/.pytest_cache");

	return c && (!c[14] || c[14] == '/');
}

/* Configuration files of the tools Python programs run, read and denied: git stops
 * ("fatal: unknown error occurred while reading the configuration files") on one it
 * cannot read, pip goes on without its settings (an index, a proxy, a CA bundle), and
 * neither's message names a rule (found by a user, round 31: `run -- git log` failed at
 * once, a `pip install` left its /etc/pip.conf unread). The line says which file it is
 * and the two ways out: read it, or have the tool skip it. */
static void print_config_hint(FILE *f, const char *path)
{
	static const struct {
		const char *name; /* the path, or its end when it starts with "/." */
		const char *what, *skip;
	} tools[] = {
		{ "/etc/gitconfig", "git's system configuration: git stops when it cannot read it",
		  "env=GIT_CONFIG_NOSYSTEM=1 makes git skip it" },
		{ "/.gitconfig", "git's global configuration: git stops when it cannot read it",
		  "env=GIT_CONFIG_GLOBAL=/dev/null makes git skip it" },
		{ "/.config/git/config",
		  "git's global configuration: git stops when it cannot read it",
		  "env=GIT_CONFIG_GLOBAL=/dev/null makes git skip it" },
		{ "/etc/pip.conf",
		  "pip's configuration: pip goes on without its settings (index, "
		  "proxy, certificates)",
		  "env=PIP_CONFIG_FILE=/dev/null makes pip skip its configuration files" },
		{ "/etc/xdg/pip/pip.conf",
		  "pip's configuration: pip goes on without its settings "
		  "(index, proxy, certificates)",
		  "env=PIP_CONFIG_FILE=/dev/null makes pip skip its configuration files" },
		{ "/.config/pip/pip.conf",
		  "pip's configuration: pip goes on without its settings "
		  "(index, proxy, certificates)",
		  "env=PIP_CONFIG_FILE=/dev/null makes pip skip its configuration files" },
		{ "/.pip/pip.conf",
		  "pip's configuration: pip goes on without its settings (index, "
		  "proxy, certificates)",
		  "env=PIP_CONFIG_FILE=/dev/null makes pip skip its configuration files" },
		{ "/.netrc",
		  "your logins for hosts, passwords included: requests and pip read it for a "
		  "host's login, and go on without it",
		  "env=NETRC=/dev/null makes requests and pip skip it" },
	};
	size_t n = strlen(path);

	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		size_t l = strlen(tools[i].name);
		bool end = !strncmp(tools[i].name, "/.", 2);

		if (end ? n <= l || strcmp(path + n - l, tools[i].name)
			: strcmp(path, tools[i].name))
			continue;
		fprintf(f, " (%s; expose-ro=", tools[i].what);
		print_escaped(f, path);
		fprintf(f, " lets it read it, %s)", tools[i].skip);
		return;
	}
}

/* Programs Python libraries run for a fact they can do without, each refused under a
 * policy with no exec: pip's `install` printed two deny lines at every run, lsb_release and
 * uname, and nothing said whether anything was lost (found by a user, round 32). The line
 * says who runs it and what goes on without it. */
static void print_exec_loss_hint(FILE *f, const char *path)
{
	static const struct {
		const char *name, *loss;
	} tools[] = {
		{ "lsb_release",
		  "lsb_release names the Linux distribution: the distro module (pip's, for its "
		  "User-Agent) runs it and goes on with /etc/os-release; nothing else is lost" },
		{ "uname", "uname names the kernel and processor: the distro module (pip's) and "
			   "platform.processor() run it and go on without it (os.uname() gives the "
			   "same); nothing else is lost" },
		{ "ldconfig",
		  "ldconfig lists the shared libraries: ctypes.util.find_library() runs "
		  "it (then gcc, ld) and returns None without it; ctypes.CDLL() of the "
		  "library's file name (libNAME.so.N) needs no program" },
	};
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	/* python, python3, python3.11: a Python started by the program (round 32: `python3
	 * -m venv .venv` left a venv without pip, "Permission denied" naming its python) */
	if (!strncmp(b, "python", 6) && strspn(b + 6, "0123456789.") == strlen(b + 6)) {
		fputs(" (a Python started by the program, as python -m venv does to install pip "
		      "(--without-pip makes the venv without), multiprocessing's spawn and "
		      "forkserver for their workers, pip to build a package)",
		      f);
		return;
	}
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (!strcmp(b, tools[i].name)) {
			fprintf(f, " (%s)", tools[i].loss);
			return;
		}
}

/* An open for reading and writing denied where a policy line lets the file be read: the
 * program may well go on reading it, as sqlite3 does (it retries read-only), so the line
 * says what was refused and what still works (found by a user, round 31: a deny line at
 * every start for a database the program then read, naming no rule). Not for a device:
 * the kernel side judges an open for reading of some (a DRM card, /dev/vhci, a watchdog)
 * and their setting ioctls as an open for writing, so reading it alone may be what was
 * refused (round 32). */
static void print_read_only_hint(FILE *f, const struct pysb_event *e, const struct compiled *policy)
{
	const char *path = event_path(e);
	const struct compiled_file *r;

	if (!policy || e->decision != PYSB_DENY || e->op != PYSB_OP_OPEN ||
	    (e->access & (PYSB_ACC_READ | PYSB_ACC_WRITE)) != (PYSB_ACC_READ | PYSB_ACC_WRITE) ||
	    !e->rule || e->rule > policy->n_files)
		return;
	r = &policy->files[e->rule - 1];
	if (r->implicit || !r->src.file || !(r->access & PYSB_ACC_READ) ||
	    (r->access & PYSB_ACC_WRITE))
		return;
	fputs(" (read-only: ", f);
	print_escaped(f, r->src.file);
	fprintf(f, ":%u lets ", r->src.line);
	print_escaped(f, r->path);
	if (path && !strncmp(path, "/dev/", 5)) {
		fputs(" be read, not written; a device whose open for reading acts on it (a DRM "
		      "card, a watchdog) is judged as written; expose-rw= lets it)",
		      f);
		return;
	}
	fputs(" be read, not written; a program that then opens it for reading alone, as "
	      "sqlite3 does, reads it; expose-rw= lets it write)",
	      f);
}

/* What a file's deny line says of the file: what it is, what goes on without it, and the
 * way out. */
static void print_file_hints(FILE *f, const struct pysb_event *e, const char *path,
			     const struct compiled *policy)
{
	if (!strncmp(path, "/dev/shm/", 9))
		fputs(" (POSIX shared memory and semaphores: multiprocessing's locks, queues and "
		      "pools need expose-rw=/dev/shm)",
		      f);
	if ((e->access & PYSB_ACC_WRITE) && pytest_cache(path))
		fputs(" (pytest's cache: pytest goes on without it, warning PytestCacheWarning; --lf, "
		      "--ff and --sw start afresh. env=PYTEST_ADDOPTS=-p no:cacheprovider turns it "
		      "off; do not make the project writable for it)",
		      f);
	if ((e->op == PYSB_OP_CREATE || e->op == PYSB_OP_MKDIR) && temp_entry(path))
		fputs(" (the temporary directory: Python's tempfile, and most programs, write in "
		      "$TMPDIR, else /tmp; expose-rw=${TMPDIR:-/tmp} with "
		      "env=TMPDIR=${TMPDIR:-/tmp} allows it)",
		      f);
	/* reads only: a write there (its __pycache__) is denied under expose-ro= too */
	if (!(e->flags & PYSB_EV_PATH_TRUNC) && !(e->access & PYSB_ACC_WRITE))
		print_user_site_hint(f, path);
	print_read_only_hint(f, e, policy);
	if (e->op == PYSB_OP_OPEN && e->access == PYSB_ACC_READ && !(e->flags & PYSB_EV_PATH_TRUNC))
		print_config_hint(f, path);
}

static void event_format_line(FILE *f, const struct pysb_event *e, const struct compiled *policy)
{
	char acc[32];
	char comm[PYSB_COMM_LEN + 1];

	memcpy(comm, e->comm, PYSB_COMM_LEN);
	comm[PYSB_COMM_LEN] = '\0';
	if (e->kind == PYSB_KIND_NET || e->kind == PYSB_KIND_UNIX) {
		net_event_print_line(f, e, comm, policy);
		return;
	}
	const char *path = event_path(e);

	fprintf(f, "pysb-bpf: %s %s %s", e->decision == PYSB_AUDIT ? "audit" : "deny",
		kind_str(e->kind), op_str(e->op));
	if (e->access)
		fprintf(f, "(%s)", access_str(e->access, acc, sizeof(acc)));
	fputc(' ', f);
	if (path)
		fprintf(f, "%s", (e->flags & PYSB_EV_PATH_TRUNC) ? "..." : "");
	if (path)
		print_escaped(f, path);
	else if (e->flags & PYSB_EV_TARGET_IPC)
		fprintf(f, "ipc-id=%u", e->target_pid);
	else if (e->flags & PYSB_EV_TARGET_KEY)
		fprintf(f, "key-serial=%u", e->target_pid);
	else if (e->kind == PYSB_KIND_CAP && cap_name(e->rule))
		fprintf(f, "%s (not granted by bpf.capabilities)", cap_name(e->rule));
	else if (e->kind == PYSB_KIND_CAP)
		fprintf(f, "capability=%u (not granted by bpf.capabilities)", e->rule);
	else if (e->target_pid)
		fprintf(f, "target-pid=%u", e->target_pid);
	else
		fputs("-", f);
	if ((e->flags & PYSB_EV_EXEC_POLICY) && e->kind == PYSB_KIND_FILE)
		fputs(" (the kernel's open of a program to run: the policy allows no exec after "
		      "the program's start; python-api=ALLOW:process-exec and an expose-ro= of "
		      "its directory allow it)",
		      f);
	else if (e->flags & PYSB_EV_EXEC_POLICY)
		fputs(" (process-exec not allowed by the policy; python-api=ALLOW:process-exec allows "
		      "it)",
		      f);
	if ((e->flags & PYSB_EV_EXEC_POLICY) && path && !(e->flags & PYSB_EV_PATH_TRUNC))
		print_exec_loss_hint(f, path);
	if (e->kind == PYSB_KIND_FILE && path)
		print_file_hints(f, e, path, policy);
	if (e->flags & PYSB_EV_EXEC_ANONYMOUS)
		fputs(" (anonymous or deleted file)", f);
	if (e->flags & PYSB_EV_BLOCK_DEVICE)
		fputs(" (a block device holds every file of its file system: only a rule naming "
		      "the device itself allows it, not one on a directory above it)",
		      f);
	if (e->flags & PYSB_EV_CHAR_DEVICE)
		fputs(" (a device: only a rule on /dev or below allows it, naming the device or "
		      "its directory there, not one on a directory above /dev)",
		      f);
	fprintf(f, " pid=%u tid=%u comm=", e->pid, e->tid);
	print_escaped(f, comm);
	fputc('\n', f);
}

/* ---- the terminal: a token bucket of lines ---- */

bool events_tty_allow(struct events_tty *t, uint64_t now_ns, uint64_t repeat)
{
	if (!t->started) {
		t->started = true;
		t->tokens = EVENTS_TTY_BURST;
		t->last_ns = now_ns;
	}
	if (now_ns > t->last_ns) {
		t->tokens += (double)(now_ns - t->last_ns) * EVENTS_TTY_RATE / 1e9;
		if (t->tokens > EVENTS_TTY_BURST)
			t->tokens = EVENTS_TTY_BURST;
		t->last_ns = now_ns;
	}
	if (t->tokens >= 1) {
		t->tokens -= 1;
		return true; /* its line says how many it stands for */
	}
	t->hidden += repeat ? repeat : 1;
	t->hidden_total += repeat ? repeat : 1;
	return false;
}

/* 12345 -> "12,345" */
static const char *thousands(unsigned long n, char *buf, size_t len)
{
	char digits[32];
	size_t nd = (size_t)snprintf(digits, sizeof(digits), "%lu", n), w = 0;

	for (size_t i = 0; i < nd && w + 2 < len; i++) {
		if (i && (nd - i) % 3 == 0)
			buf[w++] = ',';
		buf[w++] = digits[i];
	}
	buf[w] = '\0';
	return buf;
}

bool events_tty_summary(struct events_tty *t, FILE *f, const char *events_file)
{
	char n[48];

	if (!t->hidden)
		return false;
	if (events_file)
		fprintf(f, "pysb-bpf: ... %s more denials not shown; all in --events %s\n",
			thousands(t->hidden, n, sizeof(n)), events_file);
	else
		fprintf(f,
			"pysb-bpf: ... %s more denials not shown; --events FILE records "
			"them all\n",
			thousands(t->hidden, n, sizeof(n)));
	t->hidden = 0;
	return true;
}
