/* SPDX-License-Identifier: MIT */
/*
 * The event stream of `run --events FILE|-`: one JSON object per line (jansson), schema in
 * docs/events.md. Identical consecutive events (same everything but the time) within
 * EVENTS_AGGREGATE_NS of the first are written once with a count. The same rendering
 * feeds learning (user/learn/learn.c), so `--learn` and `learn --from` read the same records.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "caps.h"
#include "compile.h"
#include "events.h"
#include "json_bytes.h"
#include "log.h"

#define EVENTS_AGGREGATE_NS 1000000000ull /* the aggregation window: 1 s */

static const char *const lost_names[PYSB_LOST_MAX] = {
	[PYSB_LOST_RINGBUF_FULL] = "ringbuf-full",
	[PYSB_LOST_NO_READER] = "no-reader",
	[PYSB_LOST_PREEMPTED] = "preempted",
};

static int64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int events_json_init(struct events_json *w, FILE *out, const char *name, const char *mode,
		     const struct compiled *c)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->name = name;
	w->mode = mode;
	w->compiled = c;
	w->real_minus_mono_ns = now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC);
	w->pending_ev = malloc(sizeof(*w->pending_ev));
	return w->pending_ev ? 0 : -1;
}

/* RFC 3339, UTC, nanoseconds: 2026-12-02T11:09:56.123456789Z */
void events_json_time(const struct events_json *w, uint64_t mono_ns, char *buf, size_t len)
{
	int64_t real = (int64_t)mono_ns + w->real_minus_mono_ns;
	time_t sec = (time_t)(real / 1000000000);
	struct tm tm;
	size_t n;

	gmtime_r(&sec, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%09lldZ", (long long)(real % 1000000000));
}

static void set(json_t *o, const char *key, json_t *v)
{
	if (v)
		json_object_set_new(o, key, v);
}

static json_t *access_json(uint32_t acc)
{
	json_t *a = json_array();

	if (acc & PYSB_ACC_READ)
		json_array_append_new(a, json_string("read"));
	if (acc & PYSB_ACC_WRITE)
		json_array_append_new(a, json_string("write"));
	if (acc & PYSB_ACC_EXEC)
		json_array_append_new(a, json_string("exec"));
	return a;
}

static void add_file_rule(const struct events_json *w, json_t *o, uint32_t rule)
{
	const struct compiled_file *f;
	char src[PATH_MAX + 16];

	if (!w->compiled || !rule || rule > w->compiled->n_files)
		return;
	f = &w->compiled->files[rule - 1];
	json_object_set_bytes(o, "rule_path", f->path);
	if (f->implicit) {
		set(o, "rule_implicit", json_string(f->why));
		return;
	}
	snprintf(src, sizeof(src), "%s:%u", f->src.file, f->src.line);
	json_object_set_bytes(o, "rule", src);
}

static const char *sock_type_name(unsigned type)
{
	switch (type) {
	case SOCK_STREAM: return "stream";
	case SOCK_DGRAM: return "dgram";
	case SOCK_RAW: return "raw";
	case SOCK_SEQPACKET: return "seqpacket";
	}
	return NULL;
}

static void add_net(const struct events_json *w, json_t *o, const struct pysb_event *e)
{
	const struct pysb_net_event *n = &e->net;
	const struct compiled_net_rule *r;
	const char *fam = net_family_name(n->family);
	char a[INET6_ADDRSTRLEN], src[PATH_MAX + 16];

	set(o, "family", fam ? json_string(fam) : json_integer(n->family));
	if (e->op == PYSB_OP_SOCKET) {
		const char *t = sock_type_name(n->type);

		set(o, "type", t ? json_string(t) : json_integer(n->type));
		set(o, "protocol", json_integer(n->protocol));
		return;
	}
	if (e->op == PYSB_OP_NETLINK_SEND) {
		set(o, "protocol", json_integer(n->protocol));
		set(o, "message_type", json_integer(n->port));
		return;
	}
	if (e->op == PYSB_OP_SOURCE_ROUTE) {
		set(o, "via", json_string(n->dir ? "sendmsg" : "setsockopt"));
		set(o, "level", json_integer(n->protocol));
		set(o, "option", json_integer(n->port));
		return;
	}
	set(o, "protocol", json_string(n->protocol == IPPROTO_UDP ? "udp" : "tcp"));
	if (inet_ntop(n->family == AF_INET6 ? AF_INET6 : AF_INET, n->addr, a, sizeof(a)))
		set(o, "address", json_string(a));
	set(o, "port", json_integer(n->port));
	set(o, "direction", json_string(n->dir == PYSB_NET_IN ? "in" : "out"));
	r = net_rule_at(w->compiled, e->rule);
	if (r && !r->implicit) {
		snprintf(src, sizeof(src), "%s:%u", r->src.file, r->src.line);
		json_object_set_bytes(o, "rule", src);
		json_object_set_bytes(o, "rule_text", r->text);
	}
}

/* Unix socket names: a path, or an abstract name (leading NUL) written "@name". */
static void add_unix(json_t *o, const struct pysb_event *e)
{
	int len = e->path_len - 1;
	char name[PYSB_PATH_LEN + 1];

	if (len <= 0 || len > PYSB_PATH_LEN - 1)
		return;
	if (e->path[0] != '\0') {
		json_object_set_bytes(o, "path", e->path);
		return;
	}
	name[0] = '@';
	memcpy(name + 1, e->path + 1, (size_t)len - 1);
	name[len] = '\0';
	json_object_set_bytes(o, "path", name);
	set(o, "abstract", json_true());
}

json_t *events_json_render(const struct events_json *w, const struct pysb_event *e)
{
	char t[64], comm[PYSB_COMM_LEN + 1], proc[32], exe[PATH_MAX];
	const char *path = event_path(e);
	json_t *o = json_object();
	ssize_t n;

	if (!o)
		return NULL;
	events_json_time(w, e->ts_ns, t, sizeof(t));
	set(o, "record", json_string("event"));
	set(o, "time", json_string(t));
	set(o, "mode", json_string(w->mode));
	set(o, "decision", json_string(e->decision == PYSB_AUDIT ? "audit" : "deny"));
	set(o, "kind", json_string(kind_str(e->kind)));
	set(o, "operation", json_string(e->kind == PYSB_KIND_NET || e->kind == PYSB_KIND_UNIX
						? net_op_str(e->op)
						: op_str(e->op)));
	set(o, "pid", json_integer(e->pid));
	set(o, "tid", json_integer(e->tid));
	memcpy(comm, e->comm, PYSB_COMM_LEN);
	comm[PYSB_COMM_LEN] = '\0';
	json_object_set_bytes(o, "comm", comm);
	/* At reception: the process may have exec'd since, or be gone (null). */
	snprintf(proc, sizeof(proc), "/proc/%u/exe", e->pid);
	n = readlink(proc, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		json_object_set_bytes(o, "executable", exe);
	} else {
		set(o, "executable", json_null());
	}
	set(o, "sandbox", json_integer(e->sandbox));
	set(o, "cgroup", json_integer((json_int_t)e->cgroup_id));
	switch (e->kind) {
	case PYSB_KIND_NET:
		add_net(w, o, e);
		return o;
	case PYSB_KIND_UNIX:
		add_unix(o, e);
		set(o, "access", access_json(e->access));
		return o;
	}
	if (path) {
		json_object_set_bytes(o, "path", path);
		if (e->flags & PYSB_EV_PATH_TRUNC)
			set(o, "path_truncated", json_true());
	}
	if (e->flags & PYSB_EV_TARGET_IPC)
		set(o, "ipc_id", json_integer(e->target_pid));
	else if (e->flags & PYSB_EV_TARGET_KEY)
		set(o, "key_serial", json_integer(e->target_pid));
	else if (e->target_pid)
		set(o, "target_pid", json_integer(e->target_pid));
	set(o, "access", access_json(e->access));
	if (e->kind == PYSB_KIND_FILE)
		add_file_rule(w, o, e->rule);
	if (e->kind == PYSB_KIND_CAP) {
		set(o, "capability", cap_name(e->rule) ? json_string(cap_name(e->rule))
						       : json_integer(e->rule));
		set(o, "capability_number", json_integer(e->rule));
	}
	if (e->flags & PYSB_EV_EXEC_POLICY)
		set(o, "reason", json_string("process-exec not allowed by the policy"));
	if (e->flags & PYSB_EV_EXEC_ANONYMOUS)
		set(o, "reason", json_string("anonymous or deleted file"));
	return o;
}

void events_json_put(struct events_json *w, json_t *o)
{
	if (!w->out || w->failed)
		return;
	if (json_dumpf(o, w->out, JSON_COMPACT) || fputc('\n', w->out) == EOF) {
		w->failed = true;
		w->err = errno;
		w->records = w->synced;
		return;
	}
	w->records++;
}

void events_json_notice(struct events_json *w, const char *msg)
{
	char t[64];
	json_t *o;

	events_json_time(w, (uint64_t)now_ns(CLOCK_MONOTONIC), t, sizeof(t));
	o = json_pack("{s:s, s:s, s:s, s:s}", "record", "notice", "time", t, "mode", w->mode,
		      "message", msg);
	events_json_put(w, o);
	json_decref(o);
}

void events_json_sync(struct events_json *w)
{
	if (!w->out || w->failed)
		return;
	if (fflush(w->out)) {
		w->failed = true;
		w->err = errno;
		w->records = w->synced;
		return;
	}
	w->synced = w->records;
}

void events_json_lost(struct events_json *w, const uint64_t *lost)
{
	char t[64];
	json_t *o;

	events_json_time(w, (uint64_t)now_ns(CLOCK_MONOTONIC), t, sizeof(t));
	for (int i = 0; i < PYSB_LOST_MAX; i++) {
		if (lost[i] <= w->lost_said[i])
			continue;
		o = json_pack("{s:s, s:s, s:s, s:I}", "record", "lost", "time", t, "reason",
			      lost_names[i], "count", (json_int_t)(lost[i] - w->lost_said[i]));
		events_json_put(w, o);
		json_decref(o);
		w->lost_said[i] = lost[i];
	}
}

/* Everything but the time (and the fields derived at reception). */
static bool same_event(const struct pysb_event *a, const struct pysb_event *b)
{
	const char *pa, *pb;

	if (a->sandbox != b->sandbox || a->pid != b->pid || a->tid != b->tid ||
	    a->kind != b->kind || a->op != b->op || a->access != b->access ||
	    a->decision != b->decision || a->flags != b->flags || a->rule != b->rule ||
	    a->target_pid != b->target_pid || memcmp(a->comm, b->comm, PYSB_COMM_LEN))
		return false;
	if (a->kind == PYSB_KIND_NET)
		return !memcmp(&a->net, &b->net, sizeof(a->net));
	if (a->path_len != b->path_len)
		return false;
	if (a->kind == PYSB_KIND_UNIX)
		return a->path_len <= 0 || a->path_len > PYSB_PATH_LEN ||
		       !memcmp(a->path, b->path, (size_t)a->path_len);
	pa = event_path(a);
	pb = event_path(b);
	return (!pa && !pb) || (pa && pb && !strcmp(pa, pb));
}

bool events_json_has_pending(const struct events_json *w)
{
	return w->pending != NULL;
}

void events_json_flush(struct events_json *w)
{
	char t[64];

	if (!w->pending)
		return;
	if (w->pending_count > 1) {
		events_json_time(w, w->pending_last_ns, t, sizeof(t));
		set(w->pending, "count", json_integer((json_int_t)w->pending_count));
		set(w->pending, "last_time", json_string(t));
	}
	events_json_put(w, w->pending);
	json_decref(w->pending);
	w->pending = NULL;
}

void events_json_write(struct events_json *w, const struct pysb_event *e, json_t *o)
{
	w->events++;
	if (w->pending && same_event(w->pending_ev, e) &&
	    e->ts_ns - w->pending_ev->ts_ns < EVENTS_AGGREGATE_NS) {
		w->pending_count++;
		w->pending_last_ns = e->ts_ns;
		return;
	}
	events_json_flush(w);
	if (!o)
		return;
	json_incref(o);
	w->pending = o;
	w->pending_count = 1;
	w->pending_last_ns = e->ts_ns;
	memcpy(w->pending_ev, e, sizeof(*e));
}

int events_json_finish(struct events_json *w, const uint64_t *lost)
{
	char t[64];
	json_t *o, *l;
	int ret = 0;

	events_json_flush(w);
	if (lost)
		events_json_lost(w, lost);
	events_json_time(w, (uint64_t)now_ns(CLOCK_MONOTONIC), t, sizeof(t));
	l = json_object();
	for (int i = 0; i < PYSB_LOST_MAX; i++)
		set(l, lost_names[i], json_integer(lost ? (json_int_t)lost[i] : -1));
	o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:o}", "record", "summary", "time", t, "mode",
		      w->mode, "events", (json_int_t)w->events, "records",
		      (json_int_t)w->records + 1, "lost", l);
	events_json_put(w, o);
	json_decref(o);
	events_json_sync(w);
	if (w->failed) {
		pr_err("cannot write the event stream to %s: %s; events after record %lu are "
		       "missing from it", w->name, strerror(w->err), w->records);
		ret = -1;
	}
	free(w->pending_ev);
	w->pending_ev = NULL;
	return ret;
}

const char *events_lost_name(unsigned reason)
{
	return reason < PYSB_LOST_MAX ? lost_names[reason] : "unknown";
}
