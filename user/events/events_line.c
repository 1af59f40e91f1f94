/* SPDX-License-Identifier: MIT */
/*
 * The --events stream's direct writer: one event record as the bytes jansson's compact dump would write, without building the tree. See events_json.c.
 */
#include "events_int.h"

/* ---------------- the direct writer: the bytes jansson's compact dump writes, without the tree */

void line_put(struct events_json *w, const char *s, size_t n)
{
	if (w->line_len + n + 1 > w->line_cap) {
		size_t cap = w->line_cap ? w->line_cap : 1024;
		char *p;

		while (cap < w->line_len + n + 1)
			cap *= 2;
		p = realloc(w->line, cap);
		if (!p) {
			w->failed = true;
			w->err = ENOMEM;
			return;
		}
		w->line = p;
		w->line_cap = cap;
	}
	memcpy(w->line + w->line_len, s, n);
	w->line_len += n;
}

void line_puts(struct events_json *w, const char *s)
{
	line_put(w, s, strlen(s));
}

/* A JSON string of valid UTF-8, escaped as jansson escapes it. */
static void line_str(struct events_json *w, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t from = 0;

	line_put(w, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];
		size_t k = 2;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		line_put(w, s + from, i - from);
		from = i + 1;
		esc[0] = '\\';
		switch (c) {
		case '"':
			esc[1] = '"';
			break;
		case '\\':
			esc[1] = '\\';
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			k = 6;
		}
		line_put(w, esc, k);
	}
	line_put(w, s + from, n - from);
	line_put(w, "\"", 1);
}

static void line_key(struct events_json *w, const char *key)
{
	line_puts(w, ",\"");
	line_puts(w, key);
	line_puts(w, "\":");
}

static void line_kstr(struct events_json *w, const char *key, const char *v)
{
	line_key(w, key);
	line_str(w, v, strlen(v));
}

/* Bytes that must be UTF-8 here: false (the caller falls back to jansson) if not. */
static bool line_kbytes(struct events_json *w, const char *key, const char *v)
{
	size_t n = strlen(v);

	if (utf8_invalid_at(v, n) != n)
		return false;
	line_key(w, key);
	line_str(w, v, n);
	return true;
}

static void line_kint(struct events_json *w, const char *key, long long v)
{
	char num[24];

	line_key(w, key);
	line_put(w, num, (size_t)snprintf(num, sizeof(num), "%lld", v));
}

static void line_access(struct events_json *w, uint32_t acc)
{
	const char *sep = "";

	line_key(w, "access");
	line_put(w, "[", 1);
	if (acc & PYSB_ACC_READ) {
		line_puts(w, "\"read\"");
		sep = ",";
	}
	if (acc & PYSB_ACC_WRITE) {
		line_puts(w, sep);
		line_puts(w, "\"write\"");
		sep = ",";
	}
	if (acc & PYSB_ACC_EXEC) {
		line_puts(w, sep);
		line_puts(w, "\"exec\"");
	}
	line_put(w, "]", 1);
}

static bool line_net(struct events_json *w, const struct pysb_event *e)
{
	const struct pysb_net_event *n = &e->net;
	const struct compiled_net_rule *r;
	const char *fam = net_family_name(n->family), *t;
	char a[INET6_ADDRSTRLEN], src[PATH_MAX + 16];

	if (fam)
		line_kstr(w, "family", fam);
	else
		line_kint(w, "family", n->family);
	switch (e->op) {
	case PYSB_OP_SOCKET:
		t = sock_type_name(n->type);
		if (t)
			line_kstr(w, "type", t);
		else
			line_kint(w, "type", n->type);
		line_kint(w, "protocol", n->protocol);
		return true;
	case PYSB_OP_NETLINK_SEND:
		line_kint(w, "protocol", n->protocol);
		line_kint(w, "message_type", n->port);
		return true;
	case PYSB_OP_SOURCE_ROUTE:
	case PYSB_OP_MULTICAST: /* (its dir is IN: only source routing has a sendmsg) */
		line_kstr(w, "via",
			  n->dir && e->op == PYSB_OP_SOURCE_ROUTE ? "sendmsg" : "setsockopt");
		line_kint(w, "level", n->protocol);
		line_kint(w, "option", n->port);
		return true;
	}
	line_kstr(w, "protocol", n->protocol == IPPROTO_UDP ? "udp" : "tcp");
	if (inet_ntop(n->family == AF_INET6 ? AF_INET6 : AF_INET, n->addr, a, sizeof(a)))
		line_kstr(w, "address", a);
	line_kint(w, "port", n->port);
	line_kstr(w, "direction", n->dir == PYSB_NET_IN ? "in" : "out");
	r = net_rule_at(w->compiled, e->rule);
	if (r && !r->implicit) {
		snprintf(src, sizeof(src), "%s:%u", r->src.file, r->src.line);
		return line_kbytes(w, "rule", src) && line_kbytes(w, "rule_text", r->text);
	}
	return true;
}

static bool line_file_rule(struct events_json *w, uint32_t rule)
{
	const struct compiled_file *f;
	char src[PATH_MAX + 16];

	if (!w->compiled || !rule || rule > w->compiled->n_files)
		return true;
	f = &w->compiled->files[rule - 1];
	if (!line_kbytes(w, "rule_path", f->path))
		return false;
	if (f->implicit) {
		line_kstr(w, "rule_implicit", f->why);
		return true;
	}
	snprintf(src, sizeof(src), "%s:%u", f->src.file, f->src.line);
	return line_kbytes(w, "rule", src);
}

/* A file's path, and what the event's flags say of it. */
static bool line_file_path(struct events_json *w, const char *path, uint32_t flags)
{
	static const struct {
		uint32_t flag;
		const char *field;
	} marks[] = { { PYSB_EV_PATH_TRUNC, ",\"path_truncated\":true" },
		      { PYSB_EV_BLOCK_DEVICE, ",\"block_device\":true" },
		      { PYSB_EV_CHAR_DEVICE, ",\"char_device\":true" } };

	if (!line_kbytes(w, "path", path))
		return false;
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (flags & marks[i].flag)
			line_puts(w, marks[i].field);
	return true;
}

static bool line_body(struct events_json *w, const struct pysb_event *e, uint64_t first_ns)
{
	const char *path = event_path(e), *exe;
	char t[64], comm[PYSB_COMM_LEN + 1];

	events_json_time(w, first_ns, t, sizeof(t));
	line_puts(w, "{\"record\":\"event\"");
	line_kstr(w, "time", t);
	line_kstr(w, "mode", w->pending_mode ? w->pending_mode : w->mode);
	line_kstr(w, "decision", e->decision == PYSB_AUDIT ? "audit" : "deny");
	line_kstr(w, "kind", kind_str(e->kind));
	line_kstr(w, "operation",
		  e->kind == PYSB_KIND_NET || e->kind == PYSB_KIND_UNIX ? net_op_str(e->op)
									: op_str(e->op));
	line_kint(w, "pid", e->pid);
	line_kint(w, "tid", e->tid);
	memcpy(comm, e->comm, PYSB_COMM_LEN);
	comm[PYSB_COMM_LEN] = '\0';
	if (!line_kbytes(w, "comm", comm))
		return false;
	exe = exe_of(w->exe, e);
	if (exe && !line_kbytes(w, "executable", exe))
		return false;
	if (!exe)
		line_puts(w, ",\"executable\":null");
	line_kint(w, "sandbox", e->sandbox);
	line_kint(w, "cgroup", (long long)e->cgroup_id);
	switch (e->kind) {
	case PYSB_KIND_NET:
		return line_net(w, e);
	case PYSB_KIND_UNIX: {
		int len = e->path_len - 1;
		char name[PYSB_PATH_LEN + 1];

		if (len > 0 && len <= PYSB_PATH_LEN - 1 && e->path[0] != '\0') {
			if (!line_kbytes(w, "path", e->path))
				return false;
			if (e->flags & PYSB_EV_PEER_OUTSIDE)
				line_puts(w, ",\"peer_outside\":true");
		} else if (len > 0 && len <= PYSB_PATH_LEN - 1) {
			name[0] = '@';
			memcpy(name + 1, e->path + 1, (size_t)len - 1);
			name[len] = '\0';
			if (!line_kbytes(w, "path", name))
				return false;
			line_puts(w, ",\"abstract\":true");
		}
		line_access(w, e->access);
		return true;
	}
	}
	if (path && !line_file_path(w, path, e->flags))
		return false;
	if (e->flags & PYSB_EV_TARGET_IPC)
		line_kint(w, "ipc_id", e->target_pid);
	else if (e->flags & PYSB_EV_TARGET_KEY)
		line_kint(w, "key_serial", e->target_pid);
	else if (e->target_pid)
		line_kint(w, "target_pid", e->target_pid);
	line_access(w, e->access);
	if (e->kind == PYSB_KIND_FILE && !line_file_rule(w, e->rule))
		return false;
	if (e->kind == PYSB_KIND_CAP) {
		if (cap_name(e->rule))
			line_kstr(w, "capability", cap_name(e->rule));
		else
			line_kint(w, "capability", e->rule);
		line_kint(w, "capability_number", e->rule);
	}
	if (e->flags & PYSB_EV_EXEC_ANONYMOUS)
		line_kstr(w, "reason", "anonymous or deleted file");
	else if (e->flags & PYSB_EV_EXEC_POLICY)
		line_kstr(w, "reason", "process-exec not allowed by the policy");
	return true;
}

/* The fields every event record ends with: the daemon's binding and target, the
 * aggregation's count and times. */
static bool line_tail(struct events_json *w, uint64_t count, uint64_t last_ns)
{
	char t[64];

	if (w->pending_binding && !line_kbytes(w, "binding", w->pending_binding))
		return false;
	if (w->pending_target && !line_kbytes(w, "target", w->pending_target))
		return false;
	if (count > 1) {
		events_json_time(w, last_ns, t, sizeof(t));
		line_kint(w, "count", (long long)count);
		line_kstr(w, "last_time", t);
	}
	line_put(w, "}", 1);
	return true;
}

int events_json_format(struct events_json *w, const struct pysb_event *e, uint64_t count,
		       uint64_t first_ns, uint64_t last_ns)
{
	w->line_len = 0;
	return line_body(w, e, first_ns ? first_ns : e->ts_ns) && line_tail(w, count, last_ns) ? 0
											       : -1;
}
