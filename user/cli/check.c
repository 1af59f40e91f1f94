/* SPDX-License-Identifier: MIT */
/*
 * `pysb-bpf check`. The report is built once, as a JSON document (jansson), and printed
 * either as JSON or as text rendered from that document, so both forms always say the same
 * thing. Strings that come from the file system or the policy may hold bytes that are not
 * UTF-8, which JSON cannot carry: such a string S is written as "S" in a display form (each
 * byte that is not UTF-8 as the four characters \xNN) plus "S_b64", the exact bytes in
 * base64. A string without "_b64" is exact.
 *
 * The compiler reports its errors and warnings through pr_err/pr_warn (stderr); check
 * collects them (stderr redirected to a memfd around the compile) so the report holds them
 * too, with their file:line:col split out.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "check.h"
#include "caps.h"
#include "compile.h"
#include "fsident.h"
#include "json_bytes.h"
#include "log.h"
#include "policy_departures.h"
#include "program.h"
#include "secrets.h"

#define CHECK_FORMAT 1 /* "format" of the JSON document; bumped on incompatible changes */

struct report {
	const struct check_opts *o;
	const struct policy *p;
	const struct compiled *c;
	const struct program *prog; /* NULL: none resolved (check_opts.interpreter given) */
	json_t *root, *warnings, *errors;
	/* Values shared by many entries (jansson counts references): a 10,000-rule report
	 * then costs about half the allocations. */
	json_t *access[8];	/* by PYSB_ACC_* bits */
	const char *file;	/* policy_src.file of `file_json` */
	json_t *file_json;
	bool oom;
};

/* ---------------- strings: UTF-8 or display form + base64 (user/lib/json_bytes.c) */

static void set_new(struct report *r, json_t *obj, const char *key, json_t *v)
{
	if (!v || json_object_set_new(obj, key, v))
		r->oom = true;
}

/* obj[key] = s, plus obj[key_b64] when s is not UTF-8 (see the file comment). */
static void set_bytes(struct report *r, json_t *obj, const char *key, const char *s)
{
	if (json_object_set_bytes(obj, key, s))
		r->oom = true;
}

static void push(struct report *r, json_t *arr, json_t *v)
{
	if (!v || json_array_append_new(arr, v))
		r->oom = true;
}

static json_t *new_array(struct report *r, json_t *parent, const char *key)
{
	json_t *a = json_array();

	set_new(r, parent, key, a);
	return a;
}

static json_t *new_object(struct report *r, json_t *parent, const char *key)
{
	json_t *o = json_object();

	set_new(r, parent, key, o);
	return o;
}

/* o.file, o.line, o.col of a policy line (nothing when there is none). */
static void set_src(struct report *r, json_t *o, const struct policy_src *s)
{
	if (!s || !s->file)
		return;
	if (s->file != r->file) {
		json_decref(r->file_json);
		r->file_json = json_object();
		if (!r->file_json) {
			r->oom = true;
			return;
		}
		set_bytes(r, r->file_json, "file", s->file);
		r->file = s->file;
	}
	set_new(r, o, "file", json_incref(json_object_get(r->file_json, "file")));
	if (json_object_get(r->file_json, "file_b64"))
		set_new(r, o, "file_b64", json_incref(json_object_get(r->file_json, "file_b64")));
	set_new(r, o, "line", json_integer(s->line));
	set_new(r, o, "col", json_integer(s->col));
}

/* ["read", "write", "exec"] of access bits (one shared array per combination). */
static json_t *access_json(struct report *r, uint32_t acc)
{
	json_t **a = &r->access[acc & 7];

	if (!*a) {
		*a = json_array();
		if (!*a)
			return NULL;
		if (acc & PYSB_ACC_READ)
			push(r, *a, json_string("read"));
		if (acc & PYSB_ACC_WRITE)
			push(r, *a, json_string("write"));
		if (acc & PYSB_ACC_EXEC)
			push(r, *a, json_string("exec"));
	}
	return json_incref(*a);
}

static json_t *dev_json(uint32_t dev)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%u:%u", dev >> 20, dev & 0xfffff);
	return json_string(buf);
}

/* A warning of check's own (or of the parser), with the line it is about. */
__attribute__((format(printf, 3, 4))) static void warn(struct report *r,
						       const struct policy_src *s,
						       const char *fmt, ...)
{
	json_t *w = json_object();
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!w || !msg) {
		r->oom = true;
		json_decref(w);
		free(msg);
		return;
	}
	set_bytes(r, w, "message", msg);
	set_src(r, w, s);
	push(r, r->warnings, w);
	free(msg);
}

/* ---------------- what the compiler printed */

/*
 * stderr goes to a memfd while the policy compiles. Without a memfd (old kernel) nothing
 * is captured: the compiler's messages then reach stderr directly, and only there.
 */
struct capture {
	int fd, saved;
};

static void capture_begin(struct capture *cap)
{
	cap->saved = -1;
	cap->fd = memfd_create("pysb-check-stderr", MFD_CLOEXEC);
	if (cap->fd < 0)
		return;
	fflush(stderr);
	cap->saved = dup(STDERR_FILENO);
	if (cap->saved < 0 || dup2(cap->fd, STDERR_FILENO) < 0) {
		if (cap->saved >= 0)
			close(cap->saved);
		close(cap->fd);
		cap->fd = cap->saved = -1;
	}
}

/* Restores stderr; returns what was written meanwhile (malloc'ed), or NULL. */
static char *capture_end(struct capture *cap)
{
	off_t len;
	char *buf = NULL;

	if (cap->saved < 0)
		return NULL;
	fflush(stderr);
	dup2(cap->saved, STDERR_FILENO);
	close(cap->saved);
	len = lseek(cap->fd, 0, SEEK_END);
	if (len >= 0 && (buf = malloc((size_t)len + 1))) {
		ssize_t n = pread(cap->fd, buf, (size_t)len, 0);

		buf[n > 0 ? n : 0] = '\0';
	}
	close(cap->fd);
	return buf;
}

/* Splits "FILE:LINE[:COL]: rest" (as the compiler words its messages) into o. */
static const char *split_location(struct report *r, json_t *o, const char *msg)
{
	for (const char *c = strchr(msg, ':'); c; c = strchr(c + 1, ':')) {
		char *end, *file;
		unsigned long line = strtoul(c + 1, &end, 10), col = 0;

		if (c == msg || end == c + 1 || *end != ':' || c[1] < '0' || c[1] > '9')
			continue;
		if (end[1] >= '0' && end[1] <= '9') {
			char *end2;

			col = strtoul(end + 1, &end2, 10);
			if (*end2 != ':')
				continue;
			end = end2;
		}
		if (end[1] != ' ')
			continue;
		file = strndup(msg, (size_t)(c - msg));
		if (!file) {
			r->oom = true;
			return msg;
		}
		set_bytes(r, o, "file", file);
		set_new(r, o, "line", json_integer((json_int_t)line));
		if (col)
			set_new(r, o, "col", json_integer((json_int_t)col));
		free(file);
		return end + 2;
	}
	return msg;
}

/* Errors and warnings into the report; anything else (-v information) back to stderr. */
static void take_messages(struct report *r, char *text)
{
	static const char err[] = "pysb-bpf: error: ", wrn[] = "pysb-bpf: warning: ";

	for (char *line = text, *next; line && *line; line = next) {
		json_t *arr = NULL, *o;
		const char *msg = line;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!strncmp(line, err, sizeof(err) - 1)) {
			arr = r->errors;
			msg += sizeof(err) - 1;
		} else if (!strncmp(line, wrn, sizeof(wrn) - 1)) {
			arr = r->warnings;
			msg += sizeof(wrn) - 1;
		}
		if (!arr) {
			fprintf(stderr, "%s\n", line);
			continue;
		}
		o = json_object();
		if (!o) {
			r->oom = true;
			continue;
		}
		msg = split_location(r, o, msg);
		set_bytes(r, o, "message", msg);
		push(r, arr, o);
	}
}

static void take_diag(struct report *r, const struct policy_diag *d)
{
	for (int e = 0; e < 2; e++) {
		const struct policy_msg *m = e ? d->errors : d->warnings;
		size_t n = e ? d->n_errors : d->n_warnings;

		for (size_t i = 0; i < n; i++) {
			json_t *o = json_object();

			if (!o) {
				r->oom = true;
				continue;
			}
			set_bytes(r, o, "message", m[i].msg ? m[i].msg : "out of memory");
			if (m[i].file)
				set_bytes(r, o, "file", m[i].file);
			if (m[i].line) {
				set_new(r, o, "line", json_integer(m[i].line));
				set_new(r, o, "col", json_integer(m[i].col));
			}
			if (m[i].text && m[i].text[0])
				set_bytes(r, o, "text", m[i].text);
			push(r, e ? r->errors : r->warnings, o);
		}
	}
}

/* ---------------- the sections */

static bool same_src(const struct policy_src *a, const struct policy_src *b)
{
	return a->file == b->file && a->line == b->line && a->col == b->col;
}

static json_t *rule_json(struct report *r, const struct policy_src *s, const char *key,
			 const char *value)
{
	json_t *o = json_object();
	char *text = NULL;

	if (!o || asprintf(&text, "%s=%s", key, value ? value : "") < 0) {
		r->oom = true;
		json_decref(o);
		return NULL;
	}
	set_bytes(r, o, "rule", text);
	set_src(r, o, s);
	free(text);
	return o;
}

/* The python-api line at src, or NULL. */
static const struct policy_kv *python_at(const struct policy *p, const struct policy_src *s)
{
	for (size_t i = 0; i < p->n_python; i++)
		if (same_src(&p->python[i].src, s))
			return &p->python[i];
	return NULL;
}

static void add_exec(struct report *r, json_t *kernel)
{
	const struct compiled *c = r->c;
	json_t *e = new_object(r, kernel, "exec");
	const struct policy_kv *kv = c->exec_src.file ? python_at(r->p, &c->exec_src) : NULL;

	if (!e)
		return;
	set_new(r, e, "allowed", json_boolean(c->exec_allowed));
	set_new(r, e, "effect",
		json_string(c->exec_allowed
				    ? "execve after the program's start is allowed for files with "
				      "exec access (below an exposed directory)"
				    : "every execve after the program's own start is denied"));
	if (kv)
		set_new(r, e, "decided_by", rule_json(r, &kv->src, kv->key, kv->value));
	else
		set_new(r, e, "decided_by", json_null());
}

static void add_files(struct report *r, json_t *kernel)
{
	const struct policy *p = r->p;
	json_t *arr = new_array(r, kernel, "files");
	size_t j = 0;

	for (size_t i = 0; arr && i < r->c->n_files; i++) {
		const struct compiled_file *f = &r->c->files[i];
		json_t *o = json_object();

		if (!o) {
			r->oom = true;
			break;
		}
		set_bytes(r, o, "path", f->path);
		set_new(r, o, "access", access_json(r, f->access));
		set_new(r, o, "dev", dev_json(f->dev));
		set_new(r, o, "ino", json_integer((json_int_t)f->ino));
		if (f->implicit) {
			set_new(r, o, "implicit", json_string(f->why ? f->why : "implicit"));
		} else {
			char *rule = NULL;

			/* explicit entries come in the order of p->paths (a subsequence of it) */
			while (j < p->n_paths && !same_src(&p->paths[j].src, &f->src))
				j++;
			if (j < p->n_paths &&
			    asprintf(&rule, "expose-%s=%s",
				     p->paths[j].access == POLICY_RW ? "rw" : "ro",
				     p->paths[j].spelled) < 0)
				r->oom = true;
			else if (rule)
				set_bytes(r, o, "rule", rule);
			free(rule);
			set_src(r, o, &f->src);
		}
		push(r, arr, o);
	}
}

/* The file systems the file rules are on, and what pysb-bpf assumes about each. */
static void add_file_systems(struct report *r, json_t *kernel)
{
	json_t *arr = new_array(r, kernel, "file_systems");
	uint32_t seen[64];
	size_t n_seen = 0;

	for (size_t i = 0; arr && i < r->c->n_files + r->c->n_hidden; i++) {
		bool hidden = i >= r->c->n_files;
		const char *path = hidden ? r->c->hidden[i - r->c->n_files].path
					  : r->c->files[i].path;
		uint32_t dev = hidden ? r->c->hidden[i - r->c->n_files].dev : r->c->files[i].dev;
		const char *name;
		struct statfs sfs;
		json_t *o;
		size_t k;

		for (k = 0; k < n_seen && seen[k] != dev; k++)
			;
		if (k < n_seen || statfs(path, &sfs))
			continue;
		if (n_seen < sizeof(seen) / sizeof(seen[0]))
			seen[n_seen++] = dev;
		o = json_object();
		if (!o) {
			r->oom = true;
			break;
		}
		name = fs_type_name((long)sfs.f_type);
		set_new(r, o, "dev", dev_json(dev));
		if (name)
			set_new(r, o, "type", json_string(name));
		else
			set_new(r, o, "type", json_sprintf("0x%lx", (unsigned long)sfs.f_type));
		set_bytes(r, o, "example", path);
		set_new(r, o, "identity", json_string(fs_identity_note((long)sfs.f_type)));
		push(r, arr, o);
	}
}

static const char *ignore_kind(const char *g, char *desc, size_t len)
{
	size_t n = strlen(g);

	if (g[0] == '/') {
		snprintf(desc, len, "existing paths matching it now are hidden");
		return "absolute";
	}
	if (!strcmp(g, "*")) {
		snprintf(desc, len, "every name below the granting rule is hidden");
		return "any";
	}
	if (!strchr(g, '*')) {
		snprintf(desc, len, "names equal to \"%s\" are hidden below the granting rule", g);
		return "name";
	}
	if (g[n - 1] == '*') {
		snprintf(desc, len, "names starting with \"%.*s\" are hidden below the granting rule",
			 (int)(n - 1), g);
		return "prefix";
	}
	snprintf(desc, len, "names ending with \"%s\" are hidden below the granting rule", g + 1);
	return "suffix";
}

static void add_ignores(struct report *r, json_t *kernel)
{
	const struct policy *p = r->p;
	json_t *arr = new_array(r, kernel, "ignores");

	for (size_t i = 0; arr && i < p->n_ignores; i++) {
		const struct policy_ignore *ig = &p->ignores[i];
		json_t *o = rule_json(r, &ig->src, "ignore", ig->glob), *hidden;
		char desc[512];
		size_t n = 0;

		if (!o)
			break;
		set_new(r, o, "kind", json_string(ignore_kind(ig->glob, desc, sizeof(desc))));
		set_bytes(r, o, "effect", desc);
		push(r, arr, o);
		if (ig->glob[0] != '/')
			continue;
		hidden = new_array(r, o, "hidden");
		for (size_t k = 0; hidden && k < r->c->n_hidden; k++) {
			const struct compiled_hidden *h = &r->c->hidden[k];
			json_t *ho;

			if (!same_src(&h->src, &ig->src))
				continue;
			n++;
			ho = json_object();
			if (!ho) {
				r->oom = true;
				break;
			}
			set_bytes(r, ho, "path", h->path);
			set_new(r, ho, "dev", dev_json(h->dev));
			set_new(r, ho, "ino", json_integer((json_int_t)h->ino));
			push(r, hidden, ho);
		}
		if (n)
			warn(r, &ig->src,
			     "ignore=%s is expanded when the policy is loaded (%zu path%s hidden now): "
			     "a file created later that matches it is NOT hidden by the kernel",
			     ig->glob, n, n == 1 ? "" : "s");
		else
			warn(r, &ig->src,
			     "ignore=%s matches nothing now, so the kernel hides nothing for it; a "
			     "file created later that matches it is NOT hidden",
			     ig->glob);
	}
}

static void add_mounts(struct report *r, json_t *kernel)
{
	json_t *arr = new_array(r, kernel, "mounts");

	for (size_t i = 0; arr && i < r->c->n_mounts; i++) {
		json_t *o = json_object();

		if (!o) {
			r->oom = true;
			break;
		}
		set_new(r, o, "dev", dev_json(r->c->mounts[i].dev));
		set_new(r, o, "access", access_json(r, r->c->mounts[i].access));
		push(r, arr, o);
	}
}

/* ---------------- network: reads the fields user/compile/compile_net.c fills (compile.h) */

static const char *const slot_keys[PYSB_NET_SLOTS] = {
	[PYSB_NET_TCP_OUT] = "tcp_out",
	[PYSB_NET_TCP_IN] = "tcp_in",
	[PYSB_NET_UDP_OUT] = "udp_out",
	[PYSB_NET_UDP_IN] = "udp_in",
};

/* The allowed port intervals of a port set, as [[lo, hi], ...] (adjacent ones merged). */
static json_t *ports_json(struct report *r, const struct pysb_net_ports *ps)
{
	json_t *arr = json_array(), *last = NULL;

	if (!arr)
		return NULL;
	for (uint32_t i = 0; i < ps->n && i < PYSB_NET_MAX_RANGES; i++) {
		uint32_t lo = ps->r[i].start;
		uint32_t hi = i + 1 < ps->n ? ps->r[i + 1].start - 1u : 65535;

		if (!(ps->r[i].verdict & PYSB_NET_ALLOW)) {
			last = NULL;
			continue;
		}
		if (last) { /* continues the previous allowed interval */
			json_array_set_new(last, 1, json_integer(hi));
			continue;
		}
		last = json_pack("[ii]", (int)lo, (int)hi);
		push(r, arr, last);
	}
	return arr;
}

static void add_net(struct report *r, json_t *kernel)
{
	const struct compiled *c = r->c;
	json_t *net = new_object(r, kernel, "net"), *rules, *prefixes, *fams;

	if (!net)
		return;
	rules = new_array(r, net, "rules");
	for (size_t i = 0; rules && i < c->n_net_rules; i++) {
		const struct compiled_net_rule *nr = &c->net_rules[i];
		json_t *o = json_object();

		if (!o) {
			r->oom = true;
			break;
		}
		set_bytes(r, o, "rule", nr->text ? nr->text : "");
		set_new(r, o, "action", json_string(nr->deny ? "DENY" : "ALLOW"));
		set_new(r, o, "prefixes", json_integer((json_int_t)nr->n_addrs));
		if (nr->host)
			set_new(r, o, "host_name", json_true());
		if (nr->dropped)
			set_new(r, o, "dropped", json_true());
		if (nr->implicit)
			set_new(r, o, "implicit", json_string(nr->why ? nr->why : "implicit"));
		else
			set_src(r, o, &nr->src);
		push(r, rules, o);
	}
	prefixes = new_array(r, net, "prefixes");
	for (size_t i = 0; prefixes && i < c->n_net_prefixes; i++) {
		const struct compiled_net_prefix *e = &c->net_prefixes[i];
		char addr[INET6_ADDRSTRLEN] = "?";
		json_t *o = json_object(), *allowed;

		if (!o) {
			r->oom = true;
			break;
		}
		inet_ntop(e->af, e->addr, addr, sizeof(addr));
		set_new(r, o, "prefix", json_sprintf("%s/%u", addr, e->plen));
		allowed = new_object(r, o, "allowed_ports");
		for (unsigned s = 0; allowed && s < PYSB_NET_SLOTS; s++) {
			unsigned id = e->value.ports[s];

			if (id < c->n_net_ports)
				set_new(r, allowed, slot_keys[s], ports_json(r, &c->net_ports[id]));
		}
		push(r, prefixes, o);
	}
	fams = new_array(r, net, "socket_families");
	for (unsigned f = 0; fams && f < 64; f++) {
		const char *name = net_family_name(f);

		if ((c->net_cfg.families >> f) & 1)
			push(r, fams, json_pack("{s:i,s:s}", "family", (int)f, "name", name ? name : "?"));
	}
	set_new(r, net, "unix_abstract", json_boolean(c->net_cfg.flags & PYSB_NET_UNIX_ABSTRACT));
	set_new(r, net, "inet_raw", json_boolean(c->net_cfg.flags & PYSB_NET_INET_RAW));
	set_new(r, net, "icmp", json_boolean(c->net_cfg.flags & PYSB_NET_ICMP));
	set_new(r, net, "sctp", json_boolean(c->net_cfg.flags & PYSB_NET_SCTP));
}

/* ---------------- what pysb-bpf does before the start: the environment */

static int add_environment(struct report *r, json_t *root)
{
	const struct policy *p = r->p;
	json_t *env = new_object(r, root, "environment"), *rules, *passed;
	char **built = NULL;

	if (!env)
		return 0;
	rules = new_array(r, env, "rules");
	for (size_t i = 0; rules && i < p->n_envs; i++) {
		const struct policy_env *e = &p->envs[i];
		char *text = NULL;

		if (e->unset ? asprintf(&text, "%s", e->name) < 0
			     : asprintf(&text, "%s=%s", e->name, e->value ? e->value : "") < 0) {
			r->oom = true;
			break;
		}
		push(r, rules, rule_json(r, &e->src, e->unset ? "unenv" : "env", text));
		free(text);
	}
	if (policy_build_env(p, r->o->envp, &built)) {
		json_t *o = json_object();

		if (o) {
			set_bytes(r, o, "message",
				  "cannot build the program's environment from the env= rules");
			push(r, r->errors, o);
		}
		return -1;
	}
	/* names only: values are often secrets (API keys) */
	passed = new_array(r, env, "passed");
	for (size_t i = 0; passed && built[i]; i++) {
		char *name = strndup(built[i], strcspn(built[i], "="));
		json_t *s = json_object();

		if (!name || !s) {
			r->oom = true;
			free(name);
			json_decref(s);
			break;
		}
		set_bytes(r, s, "name", name);
		push(r, passed, s);
		free(name);
	}
	policy_env_free(built);
	return 0;
}

/* ---------------- bpf.* parameters */

/* Capabilities that reach past what the other rules confine: said, not refused. */
static void warn_capabilities(struct report *r, const struct policy_kv *kv)
{
	static const struct {
		const char *name, *why;
	} wide[] = {
		{ "CAP_SYS_ADMIN", "namespaces, mount_setattr/fspick, fanotify, quotas, and much else" },
		{ "CAP_SYS_MODULE", "loading kernel code" },
		{ "CAP_SYS_RAWIO", "raw I/O ports and device access" },
		{ "CAP_MKNOD", "device nodes in an expose-rw directory, then raw reads of disks" },
		{ "CAP_BPF", "BPF programs (pysb-bpf still refuses bpf(2) in the sandbox)" },
		{ "CAP_PERFMON", "system-wide performance monitoring" },
		{ "CAP_SYS_PTRACE", "other processes' memory" },
		{ "CAP_NET_ADMIN", "the machine's network configuration" },
		{ "CAP_SYS_BOOT", "reboot" },
		{ "CAP_DAC_READ_SEARCH", "open_by_handle_at" },
		{ "CAP_SETUID", "any uid" },
		{ "CAP_SETGID", "any gid" },
	};
	struct policy one = { .params = (struct policy_kv *)kv, .n_params = 1 };
	uint64_t m = 0;

	if (policy_capabilities(&one, &m))
		return;
	for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++) {
		int cap = cap_from_name(wide[i].name);

		if (cap < 0 || !(m & (1ull << cap)))
			continue;
		warn(r, &kv->src, "bpf.capabilities grants %s: the program reaches %s, beyond "
		     "what the policy's other rules confine", wide[i].name, wide[i].why);
	}
}

/* Grants that reach well-known secrets (user/policy/secrets.c): said, not refused. */
static void warn_secrets(struct report *r)
{
	char home[PATH_MAX] = "", cwd[PATH_MAX] = "", found[2048];
	const char *h = NULL;

	for (size_t i = 0; r->o->envp && r->o->envp[i]; i++)
		if (!strncmp(r->o->envp[i], "HOME=", 5))
			h = r->o->envp[i] + 5;
	if (h && *h && !realpath(h, home))
		snprintf(home, sizeof(home), "%s", h);
	if (!realpath(r->o->cwd ? r->o->cwd : ".", cwd))
		cwd[0] = '\0';
	for (size_t i = 0; i < r->p->n_paths; i++) {
		const struct policy_path *pp = &r->p->paths[i];

		if (!secrets_reached(r->p, pp->path, home, cwd[0] ? cwd : NULL, found, sizeof(found)))
			continue;
		warn(r, &pp->src, "expose-%s=%s grants well-known secrets: %s; expose only what the "
		     "program reads (in /etc and ~, the files themselves, as run --learn writes "
		     "them), or hide them with ignore=", pp->access == POLICY_RW ? "rw" : "ro",
		     pp->spelled, found);
	}
}

static void add_bpf_params(struct report *r, json_t *root)
{
	const struct policy *p = r->p;
	json_t *arr = new_array(r, root, "bpf_params");

	for (size_t d = 0; arr && d < N_BPF_PARAMS; d++) {
		const struct bpf_param *bp = &BPF_PARAMS[d];
		const char *key = bp->key;
		bool seen = false, accumulates = bp->accumulates;

		for (size_t i = 0; i < p->n_params; i++) {
			const struct policy_kv *kv = &p->params[i];
			char buf[512];
			bool later = false;
			json_t *o;

			if (strcmp(kv->key, key))
				continue;
			seen = true;
			for (size_t k = i + 1; k < p->n_params && !accumulates; k++)
				later = later || !strcmp(p->params[k].key, key);
			o = rule_json(r, &kv->src, kv->key, kv->value);
			if (!o)
				return;
			set_bytes(r, o, "key", kv->key);
			set_bytes(r, o, "value", kv->value);
			set_new(r, o, "default", json_false());
			set_bytes(r, o, "effect",
				  later ? "superseded by a later line (the last one wins)"
					: bp->effect(kv, buf, sizeof(buf)));
			push(r, arr, o);
			if (!later && bp->warning && bp->warning(kv))
				warn(r, &kv->src, "%s", bp->warning(kv));
			if (!strcmp(key, "bpf.capabilities"))
				warn_capabilities(r, kv);
		}
		if (!seen) {
			json_t *o = json_pack("{s:s,s:s,s:b,s:s}", "key", key, "value", bp->def,
					      "default", 1, "effect", bp->def_effect);

			push(r, arr, o);
		}
	}
}

/* ---------------- left to the Python layer */

/* Does a python-api value name process-exec or *? *only: it names nothing else. */
static bool api_names_exec(const char *v, bool *only)
{
	const char *t = strchr(v, ':');
	bool any = false;

	*only = true;
	for (t = t ? t + 1 : v; *t;) {
		size_t n = strcspn(t, ",");
		size_t m = n;

		while (m && t[m - 1] == ' ')
			m--;
		if ((m == 12 && !strncmp(t, "process-exec", 12)) || (m == 1 && t[0] == '*'))
			any = true;
		if (!(m == 12 && !strncmp(t, "process-exec", 12)))
			*only = false;
		t += n;
		t += strspn(t, ", ");
	}
	return any;
}

static const char *python_why(const char *key)
{
	static const struct {
		const char *prefix, *why;
	} whys[] = {
		{ "python-import", "which modules Python code may import" },
		{ "python-api", "which Python functions and API categories may be called" },
		{ "eval-", "the guarded eval of py-sandboxes" },
		{ "remote-result-", "how results come back from the py-sandboxes sandbox" },
		{ "py-sandbox", "turns py-sandboxes' Python guards on or off" },
		{ "os-sandbox", "py-sandboxes' OS provider; pysb-bpf enforces in the kernel "
				"whatever it names" },
		{ "learn", "learning mode (pysb-bpf run --learn writes rules too; learn=false locks)" },
		{ "port", "the port of py-sandboxes' SSE transport" },
	};

	for (size_t i = 0; i < sizeof(whys) / sizeof(whys[0]); i++)
		if (!strncmp(key, whys[i].prefix, strlen(whys[i].prefix)))
			return whys[i].why;
	return "a Python-layer rule";
}

static void add_python_layer(struct report *r, json_t *root)
{
	const struct policy *p = r->p;
	json_t *arr = new_array(r, root, "python_layer");
	bool has_rules = false;

	for (size_t i = 0; arr && i < p->n_python; i++) {
		const struct policy_kv *kv = &p->python[i];
		bool only = false, exec = !strcmp(kv->key, "python-api") &&
					  api_names_exec(kv->value, &only);
		json_t *o;

		if (exec && only)
			continue; /* entirely the kernel's: see kernel.exec */
		o = rule_json(r, &kv->src, kv->key, kv->value);
		if (!o)
			return;
		set_bytes(r, o, "key", kv->key);
		set_bytes(r, o, "value", kv->value);
		set_new(r, o, "why", json_string(python_why(kv->key)));
		if (exec)
			set_new(r, o, "kernel_part",
				json_string("process-exec: decided in the kernel (kernel.exec)"));
		push(r, arr, o);
		has_rules = has_rules || !strncmp(kv->key, "python-", 7) ||
			    !strncmp(kv->key, "eval-", 5);
	}
	for (size_t i = 0; arr && i < p->n_params; i++) {
		const struct policy_kv *kv = &p->params[i];
		char why[160];
		json_t *o;

		if (!strncmp(kv->key, "bpf.", 4))
			continue;
		o = rule_json(r, &kv->src, kv->key, kv->value);
		if (!o)
			return;
		snprintf(why, sizeof(why), "a parameter of py-sandboxes' '%.*s' OS provider",
			 (int)strcspn(kv->key, "."), kv->key);
		set_bytes(r, o, "key", kv->key);
		set_bytes(r, o, "value", kv->value);
		set_bytes(r, o, "why", why);
		push(r, arr, o);
	}
	for (size_t i = 0; has_rules && i < p->n_python; i++) {
		const struct policy_kv *kv = &p->python[i];

		if ((!strcmp(kv->key, "py-sandbox") && !strcasecmp(kv->value, "false")) ||
		    (!strcmp(kv->key, "os-sandbox") && !strcmp(kv->value, "none")))
			warn(r, &kv->src,
			     "%s=%s turns py-sandboxes' Python guards off: its python-*/eval-* "
			     "rules are enforced by nobody (the kernel layer cannot express them)",
			     kv->key, kv->value);
	}
}

/* Each deliberate difference from py-sandboxes a line meets (docs/policy.md). */
static void add_departures(struct report *r)
{
	struct policy_departure *d;
	size_t n;

	if (policy_departures(r->p, &d, &n)) {
		r->oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		warn(r, &d[i].src, "differs from py-sandboxes: %s", d[i].msg);
	policy_departures_free(d, n);
}

/* ---------------- the document */

static json_t *policy_json(struct report *r, const struct check_opts *o,
			   const struct policy *p)
{
	json_t *pol = json_object(), *files;

	if (!pol)
		return NULL;
	set_bytes(r, pol, "path", o->policy);
	files = new_array(r, pol, "files");
	for (size_t i = 0; p && files && i < p->n_files; i++) {
		json_t *f = json_object();

		if (f)
			set_bytes(r, f, "name", p->files[i]);
		push(r, files, f);
	}
	return pol;
}

/* What `run` would execute: the program as typed, the interpreter that really starts
 * (it decides the implicit paths), the script, the chain followed to find them. */
static void add_program(struct report *r, json_t *root)
{
	const struct program *pr = r->prog;
	json_t *o = new_object(r, root, "program"), *argv;

	if (!o || !pr)
		return;
	argv = new_array(r, o, "argv");
	for (int i = 0; argv && pr->argv[i]; i++) {
		json_t *a = json_object(), *v;

		/* plain strings in the array: set_bytes needs an object, so go through one */
		set_bytes(r, a, "v", pr->argv[i]);
		v = json_object_get(a, "v");
		push(r, argv, json_incref(v));
		json_decref(a);
	}
	set_bytes(r, o, "interpreter", pr->interp);
	if (pr->has_script)
		set_bytes(r, o, "script", pr->script);
	else
		set_new(r, o, "script", json_null());
	set_bytes(r, o, "resolved", pr->how);
	if (pr->needs_exec)
		set_bytes(r, o, "exec_after_start", pr->needs_exec);
	else
		set_new(r, o, "exec_after_start", json_null());
}

static void build_report(struct report *r)
{
	json_t *kernel = new_object(r, r->root, "kernel");

	if (kernel) {
		add_exec(r, kernel);
		add_files(r, kernel);
		warn_secrets(r);
		add_ignores(r, kernel);
		add_file_systems(r, kernel);
		if (r->o->verbose)
			add_mounts(r, kernel);
		add_net(r, kernel);
	}
	add_program(r, r->root);
	add_environment(r, r->root);
	add_bpf_params(r, r->root);
	add_python_layer(r, r->root);
}

/* ---------------- text, rendered from the document */

static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* Control characters as \xNN, so one entry stays on one line. */
static void put_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fprintf(f, "\\x%02X", (unsigned char)*s);
		else
			fputc(*s, f);
	}
}

/* "file:line" of a source object. */
static void put_at(FILE *f, const json_t *src)
{
	put_text(f, jstr(src, "file"));
	fprintf(f, ":%lld", json_integer_value(json_object_get(src, "line")));
}

/* "  (file:line: key=value)" of a rule object {"rule", "file", "line", "col"}. */
static void put_rule_source(FILE *f, const json_t *rule)
{
	if (!json_object_get(rule, "file"))
		return;
	fputs("  (", f);
	put_at(f, rule);
	fputs(": ", f);
	put_text(f, jstr(rule, "rule"));
	fputc(')', f);
}

/* "  (implicit: why)", "  (file:line: rule)" or "  (file:line)" of an entry. */
static void put_source(FILE *f, const json_t *v)
{
	const char *imp = json_string_value(json_object_get(v, "implicit"));

	if (imp) {
		fputs("  (implicit: ", f);
		put_text(f, imp);
		fputc(')', f);
	} else if (json_object_get(v, "rule")) {
		put_rule_source(f, v);
	} else if (json_object_get(v, "file")) {
		fputs("  (", f);
		put_at(f, v);
		fputc(')', f);
	}
}

/* "  (file:line)" of a rule object, its text being already printed. */
static void put_rule_origin(FILE *f, const json_t *rule)
{
	if (!json_object_get(rule, "file"))
		return;
	fputs("  (", f);
	put_at(f, rule);
	fputc(')', f);
}

static void put_access(FILE *f, const json_t *acc)
{
	char buf[32] = "";
	size_t i;
	json_t *v;

	json_array_foreach(acc, i, v)
	{
		if (i)
			strcat(buf, ",");
		strncat(buf, json_string_value(v) ? json_string_value(v) : "?", 8);
	}
	fprintf(f, "%-16s", buf[0] ? buf : "none");
}

static void put_ports(FILE *f, const json_t *ranges)
{
	size_t i;
	json_t *v;

	if (!json_array_size(ranges)) {
		fputs("none", f);
		return;
	}
	json_array_foreach(ranges, i, v)
	{
		json_int_t lo = json_integer_value(json_array_get(v, 0));
		json_int_t hi = json_integer_value(json_array_get(v, 1));

		if (i)
			fputc(',', f);
		if (lo == 0 && hi == 65535)
			fputc('*', f);
		else if (lo == hi)
			fprintf(f, "%lld", lo);
		else
			fprintf(f, "%lld-%lld", lo, hi);
	}
}

static void render_kernel(FILE *f, const json_t *k, bool verbose)
{
	const json_t *exec = json_object_get(k, "exec"), *arr, *net, *v, *w;
	const json_t *by = json_object_get(exec, "decided_by");
	size_t i, j;

	fputs("== kernel: exec\n", f);
	fprintf(f, "exec    %-16s", json_is_true(json_object_get(exec, "allowed")) ? "allowed"
									: "denied");
	put_text(f, jstr(exec, "effect"));
	if (json_is_object(by))
		put_rule_source(f, by);
	else
		fputs("  (default: no python-api line allows process-exec)", f);
	fputc('\n', f);

	arr = json_object_get(k, "files");
	fprintf(f, "== kernel: files (%zu entries; the nearest entry above a file decides, "
		   "none: denied)\n", json_array_size(arr));
	json_array_foreach(arr, i, v)
	{
		fputs("file    ", f);
		put_access(f, json_object_get(v, "access"));
		put_text(f, jstr(v, "path"));
		fprintf(f, "  [dev %s ino %lld]", jstr(v, "dev"),
			json_integer_value(json_object_get(v, "ino")));
		put_source(f, v);
		fputc('\n', f);
	}

	arr = json_object_get(k, "ignores");
	if (json_array_size(arr))
		fputs("== kernel: ignore= (hidden: denied even below an exposed directory)\n", f);
	json_array_foreach(arr, i, v)
	{
		fputs("ignore  ", f);
		put_text(f, jstr(v, "rule"));
		fputs(": ", f);
		put_text(f, jstr(v, "effect"));
		put_rule_origin(f, v);
		fputc('\n', f);
		json_array_foreach(json_object_get(v, "hidden"), j, w)
		{
			fputs("hidden  ", f);
			put_text(f, jstr(w, "path"));
			fprintf(f, "  [dev %s ino %lld]\n", jstr(w, "dev"),
				json_integer_value(json_object_get(w, "ino")));
		}
	}

	arr = json_object_get(k, "file_systems");
	if (json_array_size(arr))
		fputs("== kernel: file systems (a rule names an inode object, held open while the "
		      "sandbox runs: umount of these waits, or use umount -l)\n", f);
	json_array_foreach(arr, i, v)
	{
		fprintf(f, "fs      %-8s dev %-7s (", jstr(v, "type"), jstr(v, "dev"));
		put_text(f, jstr(v, "example"));
		fputs("): ", f);
		put_text(f, jstr(v, "identity"));
		fputc('\n', f);
	}

	if (verbose) {
		arr = json_object_get(k, "mounts");
		fprintf(f, "== kernel: mounts (%zu file systems; what their mount point grants)\n",
			json_array_size(arr));
		json_array_foreach(arr, i, v)
		{
			fputs("mount   ", f);
			put_access(f, json_object_get(v, "access"));
			fprintf(f, "dev %s\n", jstr(v, "dev"));
		}
	}

	net = json_object_get(k, "net");
	fputs("== kernel: network (deny by default)\n", f);
	if (!json_array_size(json_object_get(net, "rules")))
		fputs("net     no net= rule: every TCP and UDP connect, send and bind over IPv4 "
		      "and IPv6 is denied\n", f);
	json_array_foreach(json_object_get(net, "rules"), i, v)
	{
		fputs("net     ", f);
		put_text(f, jstr(v, "rule"));
		if (json_is_true(json_object_get(v, "dropped")))
			fputs("  DROPPED: the host name did not resolve", f);
		else
			fprintf(f, "  -> %lld prefix(es)",
				json_integer_value(json_object_get(v, "prefixes")));
		if (json_object_get(v, "implicit"))
			put_source(f, v);
		else
			put_rule_origin(f, v);
		fputc('\n', f);
	}
	json_array_foreach(json_object_get(net, "prefixes"), i, v)
	{
		const json_t *ap = json_object_get(v, "allowed_ports");

		fprintf(f, "prefix  %s:", jstr(v, "prefix"));
		for (unsigned s = 0; s < PYSB_NET_SLOTS; s++) {
			fprintf(f, "  %s ", slot_keys[s]);
			put_ports(f, json_object_get(ap, slot_keys[s]));
		}
		fputc('\n', f);
	}
	json_array_foreach(json_object_get(net, "socket_families"), i, v)
		fprintf(f, "family  %s (%lld) allowed\n", jstr(v, "name"),
			json_integer_value(json_object_get(v, "family")));
	fprintf(f, "unix    abstract sockets %s\n",
		json_is_true(json_object_get(net, "unix_abstract")) ? "allowed" : "denied");
	if (json_is_true(json_object_get(net, "inet_raw")))
		fputs("family  raw IPv4/IPv6 sockets allowed\n", f);
	if (json_is_true(json_object_get(net, "icmp")))
		fputs("family  ICMP ping sockets allowed\n", f);
	if (json_is_true(json_object_get(net, "sctp")))
		fputs("family  SCTP sockets allowed\n", f);
}

static void render_text(FILE *f, const json_t *root, bool verbose)
{
	const json_t *pol = json_object_get(root, "policy"), *env, *arr, *v;
	size_t i;

	fputs("policy  ", f);
	put_text(f, jstr(pol, "path"));
	fputs("  (read:", f);
	json_array_foreach(json_object_get(pol, "files"), i, v)
	{
		fputs(i ? ", " : " ", f);
		put_text(f, jstr(v, "name"));
	}
	fputs(")\n", f);
	v = json_object_get(root, "program");
	if (json_is_string(json_object_get(v, "interpreter"))) {
		fputs("program ", f);
		put_text(f, jstr(v, "interpreter"));
		if (json_is_string(json_object_get(v, "script"))) {
			fputs(" ", f);
			put_text(f, jstr(v, "script"));
		}
		fputs("  (", f);
		put_text(f, jstr(v, "resolved"));
		fputs(")\n", f);
		if (json_is_string(json_object_get(v, "exec_after_start"))) {
			fputs("program exec after the start: ", f);
			put_text(f, jstr(v, "exec_after_start"));
			fputc('\n', f);
		}
	}
	render_kernel(f, json_object_get(root, "kernel"), verbose);

	env = json_object_get(root, "environment");
	fputs("== pysb-bpf: the program's environment (only what env= grants is passed)\n", f);
	json_array_foreach(json_object_get(env, "rules"), i, v)
	{
		fputs("env     ", f);
		put_text(f, jstr(v, "rule"));
		put_rule_origin(f, v);
		fputc('\n', f);
	}
	arr = json_object_get(env, "passed");
	fprintf(f, "env     %zu variable(s) passed (values not shown):", json_array_size(arr));
	json_array_foreach(arr, i, v)
	{
		fputs(i ? ", " : " ", f);
		put_text(f, jstr(v, "name"));
	}
	fputc('\n', f);

	fputs("== bpf.* parameters\n", f);
	json_array_foreach(json_object_get(root, "bpf_params"), i, v)
	{
		fputs("bpf     ", f);
		put_text(f, jstr(v, "key"));
		fputc('=', f);
		put_text(f, jstr(v, "value"));
		fputs(": ", f);
		put_text(f, jstr(v, "effect"));
		if (json_is_true(json_object_get(v, "default")))
			fputs("  (default)", f);
		else
			put_rule_origin(f, v);
		fputc('\n', f);
	}

	arr = json_object_get(root, "python_layer");
	fprintf(f, "== left to the Python layer (%zu rules pysb-bpf does not enforce)\n",
		json_array_size(arr));
	json_array_foreach(arr, i, v)
	{
		fputs("python  ", f);
		put_text(f, jstr(v, "rule"));
		fputs(": ", f);
		put_text(f, jstr(v, "why"));
		if (json_object_get(v, "kernel_part")) {
			fputs("; ", f);
			put_text(f, jstr(v, "kernel_part"));
		}
		put_rule_origin(f, v);
		fputc('\n', f);
	}

	arr = json_object_get(root, "warnings");
	fprintf(f, "== warnings (%zu)\n", json_array_size(arr));
	json_array_foreach(arr, i, v)
	{
		fputs("warning: ", f);
		if (json_object_get(v, "file")) {
			put_text(f, jstr(v, "file"));
			fprintf(f, ":%lld:", json_integer_value(json_object_get(v, "line")));
			if (json_object_get(v, "col"))
				fprintf(f, "%lld:", json_integer_value(json_object_get(v, "col")));
			fputc(' ', f);
		}
		put_text(f, jstr(v, "message"));
		fputc('\n', f);
	}
}

/* Errors of an invalid policy, as `run` prints them (file:line:col: error: ...). */
static void render_errors(FILE *f, const json_t *root)
{
	for (int e = 0; e < 2; e++) {
		const json_t *arr = json_object_get(root, e ? "errors" : "warnings"), *v;
		size_t i;

		json_array_foreach(arr, i, v)
		{
			if (json_object_get(v, "file")) {
				put_text(f, jstr(v, "file"));
				if (json_object_get(v, "line"))
					fprintf(f, ":%lld",
						json_integer_value(json_object_get(v, "line")));
				if (json_object_get(v, "col"))
					fprintf(f, ":%lld",
						json_integer_value(json_object_get(v, "col")));
				fputs(": ", f);
			} else {
				fputs("pysb-bpf: ", f);
			}
			fputs(e ? "error: " : "warning: ", f);
			put_text(f, jstr(v, "message"));
			fputc('\n', f);
			if (json_object_get(v, "text")) {
				fputs("    ", f);
				put_text(f, jstr(v, "text"));
				fputc('\n', f);
			}
		}
	}
}

int check_main(const struct check_opts *o)
{
	struct report r = { .o = o };
	struct policy_diag diag = { 0 };
	struct compiled c = { 0 };
	struct policy *p = NULL;
	struct capture cap;
	FILE *out = o->out ? o->out : stdout;
	struct program prog = { 0 };
	char *captured;
	bool valid = false;
	int ret = 1, rc;

	r.root = json_object();
	r.warnings = json_array();
	r.errors = json_array();
	if (!r.root || !r.warnings || !r.errors) {
		json_decref(r.warnings);
		json_decref(r.errors);
		goto out;
	}
	set_new(&r, r.root, "format", json_integer(CHECK_FORMAT));
	rc = policy_parse_file(o->policy, o->envp, o->cwd, o->overrides, o->n_overrides, &p,
			       &diag);
	take_diag(&r, &diag);
	set_new(&r, r.root, "policy", policy_json(&r, o, p));
	if (rc)
		goto report;

	if (!o->interpreter) {
		/* as `run` resolves it; python3 by default, and then only shown if found */
		rc = o->program ? program_resolve(o->program, o->n_program, NULL, &prog)
				: program_resolve((char *[]){ "python3", NULL }, 1, NULL, &prog);
		if (rc && o->program) {
			json_t *e = json_object();

			if (e)
				set_bytes(&r, e, "message", "the program cannot be resolved (see "
							    "stderr)");
			push(&r, r.errors, e);
			goto report;
		}
		r.prog = rc ? NULL : &prog;
	}
	capture_begin(&cap);
	rc = policy_compile(p,
			    &(struct compile_opts){
				    .interpreter = o->interpreter ? o->interpreter
						   : r.prog	  ? prog.interp
								  : NULL,
				    .script = r.prog && prog.has_script ? prog.script : NULL,
				    .implicit = true, /* unless bpf.implicit=false */
				    .resolve = o->resolve,
				    .resolv_conf = o->resolv_conf,
			    },
			    &c);
	captured = capture_end(&cap);
	take_messages(&r, captured);
	free(captured);
	if (rc) {
		if (!json_array_size(r.errors)) { /* not captured: it went to stderr */
			json_t *e = json_object();

			if (e)
				set_bytes(&r, e, "message", "the policy does not compile (see stderr)");
			push(&r, r.errors, e);
		}
		goto report;
	}
	r.p = p;
	r.c = &c;
	build_report(&r);
	add_departures(&r);
	valid = !json_array_size(r.errors);
report:
	set_new(&r, r.root, "valid", json_boolean(valid));
	set_new(&r, r.root, "warnings", r.warnings);
	set_new(&r, r.root, "errors", r.errors);
	if (r.oom) {
		pr_err("check: out of memory building the report");
		goto out;
	}
	if (o->json) {
		if (json_dumpf(r.root, out, JSON_INDENT(2)) || fputc('\n', out) == EOF)
			goto write_error;
	} else if (valid) {
		render_text(out, r.root, o->verbose);
	} else {
		render_errors(stderr, r.root);
	}
	if (fflush(out))
		goto write_error;
	ret = valid ? 0 : 1;
	goto out;
write_error:
	pr_err("check: cannot write the report: %s", strerror(errno));
out:
	for (size_t i = 0; i < sizeof(r.access) / sizeof(r.access[0]); i++)
		json_decref(r.access[i]);
	json_decref(r.file_json);
	json_decref(r.root);
	compiled_free(&c);
	program_free(&prog);
	policy_free(p);
	policy_diag_free(&diag);
	return ret;
}
