/* SPDX-License-Identifier: MIT */
/*
 * The event stream of `run --events FILE|-`: one JSON object per line, schema in
 * docs/events.md. Identical consecutive events (same everything but the time) within
 * EVENTS_AGGREGATE_NS of the first are written once with a count. The same rendering
 * feeds learning (user/learn/learn.c), so `--learn` and `learn --from` read the same records.
 */
#include "events_int.h"

static int64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---------------- the executable of an event's process */

#define EXE_SLOTS 256 /* direct-mapped by pid */

struct exe_cache {
	struct {
		uint32_t pid, exec_id;
		uint64_t start_ns;
		bool used;
		char *exe; /* NULL: the process was gone */
	} slot[EXE_SLOTS];
};

/*
 * /proc/PID/exe of the event's process, read once per (pid, start time, exec
 * generation): a flood from one process reads it once, not once per record. NULL when
 * the process is gone (or was when first asked).
 */
const char *exe_of(struct exe_cache *c, const struct pysb_event *e)
{
	char proc[32], exe[PATH_MAX];
	unsigned i = (e->pid ^ (e->pid >> 8)) % EXE_SLOTS;
	ssize_t n;

	if (!c)
		return NULL;
	if (c->slot[i].used && c->slot[i].pid == e->pid && c->slot[i].exec_id == e->exec_id &&
	    c->slot[i].start_ns == e->start_ns)
		return c->slot[i].exe;
	snprintf(proc, sizeof(proc), "/proc/%u/exe", e->pid);
	n = readlink(proc, exe, sizeof(exe) - 1);
	free(c->slot[i].exe);
	c->slot[i].exe = NULL;
	if (n > 0) {
		exe[n] = '\0';
		c->slot[i].exe = strdup(exe);
	}
	c->slot[i].used = true;
	c->slot[i].pid = e->pid;
	c->slot[i].exec_id = e->exec_id;
	c->slot[i].start_ns = e->start_ns;
	return c->slot[i].exe;
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
	w->exe = calloc(1, sizeof(*w->exe));
	if (!w->pending_ev || !w->exe) {
		events_json_free(w);
		return -1;
	}
	return 0;
}

void events_json_free(struct events_json *w)
{
	if (w->exe)
		for (unsigned i = 0; i < EXE_SLOTS; i++)
			free(w->exe->slot[i].exe);
	free(w->exe);
	free(w->pending_ev);
	free(w->line);
	w->exe = NULL;
	w->pending_ev = NULL;
	w->line = NULL;
	w->line_cap = w->line_len = 0;
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
	if (e->op == PYSB_OP_SOURCE_ROUTE || e->op == PYSB_OP_MULTICAST) {
		set(o, "via",
		    json_string(n->dir && e->op == PYSB_OP_SOURCE_ROUTE ? "sendmsg"
									: "setsockopt"));
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
		if (e->flags & PYSB_EV_PEER_OUTSIDE)
			set(o, "peer_outside", json_true());
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
	char t[64], comm[PYSB_COMM_LEN + 1];
	const char *path = event_path(e), *exe;
	json_t *o = json_object();

	if (!o)
		return NULL;
	events_json_time(w, e->ts_ns, t, sizeof(t));
	set(o, "record", json_string("event"));
	set(o, "time", json_string(t));
	set(o, "mode", json_string(w->mode));
	set(o, "decision", json_string(e->decision == PYSB_AUDIT ? "audit" : "deny"));
	set(o, "kind", json_string(kind_str(e->kind)));
	set(o, "operation",
	    json_string(e->kind == PYSB_KIND_NET || e->kind == PYSB_KIND_UNIX ? net_op_str(e->op)
									      : op_str(e->op)));
	set(o, "pid", json_integer(e->pid));
	set(o, "tid", json_integer(e->tid));
	memcpy(comm, e->comm, PYSB_COMM_LEN);
	comm[PYSB_COMM_LEN] = '\0';
	json_object_set_bytes(o, "comm", comm);
	/* At reception: null when the process is gone. */
	exe = exe_of(w->exe, e);
	if (exe)
		json_object_set_bytes(o, "executable", exe);
	else
		set(o, "executable", json_null());
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
		if (e->flags & PYSB_EV_BLOCK_DEVICE)
			set(o, "block_device", json_true());
		if (e->flags & PYSB_EV_CHAR_DEVICE)
			set(o, "char_device", json_true());
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
		set(o, "capability",
		    cap_name(e->rule) ? json_string(cap_name(e->rule)) : json_integer(e->rule));
		set(o, "capability_number", json_integer(e->rule));
	}
	if (e->flags & PYSB_EV_EXEC_POLICY)
		set(o, "reason", json_string("process-exec not allowed by the policy"));
	if (e->flags & PYSB_EV_EXEC_ANONYMOUS)
		set(o, "reason", json_string("anonymous or deleted file"));
	return o;
}

/* ---------------- the stream: whole lines out, the pending aggregate, the summary */

/* One line, newline included, out: buffered until the next sync, or with one write(2)
 * now (direct), so that a kill never leaves part of a line. */
static void line_out(struct events_json *w)
{
	const char *p = w->line;
	size_t n;

	line_put(w, "\n", 1);
	if (!w->out || w->failed)
		return;
	if (w->line_sink) {
		if (w->line_sink(w->sink_ctx, w->line, w->line_len - 1)) {
			w->failed = true;
			w->err = errno;
			return;
		}
		w->records++;
		w->synced = w->records;
		return;
	}
	if (!w->direct) {
		if (fwrite(w->line, 1, w->line_len, w->out) != w->line_len) {
			w->failed = true;
			w->err = errno;
			w->records = w->synced;
			return;
		}
		w->records++;
		return;
	}
	if (fflush(w->out)) { /* what went through the FILE before, if anything */
		w->failed = true;
		w->err = errno;
		return;
	}
	for (n = w->line_len; n;) {
		ssize_t k = write(fileno(w->out), p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			w->failed = true;
			w->err = k < 0 ? errno : EIO;
			w->records = w->synced;
			return;
		}
		p += k;
		n -= (size_t)k;
	}
	w->records++;
	w->synced = w->records;
}

/* A jansson object as one line. */
static void line_json(struct events_json *w, const json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT);

	w->line_len = 0;
	if (!s) {
		w->failed = true;
		w->err = ENOMEM;
		return;
	}
	line_puts(w, s);
	free(s);
	line_out(w);
}

void events_json_put(struct events_json *w, json_t *o)
{
	if (!w->out || w->failed)
		return;
	line_json(w, o);
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
			      events_lost_name(i), "count",
			      (json_int_t)(lost[i] - w->lost_said[i]));
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
	return w->has_pending;
}

/* The held event as a jansson object, with its count (learning, and the fallback for
 * bytes that are not UTF-8). */
static json_t *pending_json(struct events_json *w)
{
	struct pysb_event *e = w->pending_ev;
	char t[64];
	json_t *o;

	e->ts_ns = w->pending_first_ns; /* the record's time is its first occurrence's */
	o = events_json_render(w, e);
	if (!o)
		return NULL;
	if (w->pending_mode)
		set(o, "mode", json_string(w->pending_mode));
	if (w->pending_binding)
		json_object_set_bytes(o, "binding", w->pending_binding);
	if (w->pending_target)
		json_object_set_bytes(o, "target", w->pending_target);
	if (w->pending_count > 1) {
		events_json_time(w, w->pending_last_ns, t, sizeof(t));
		set(o, "count", json_integer((json_int_t)w->pending_count));
		set(o, "last_time", json_string(t));
	}
	return o;
}

void events_json_flush(struct events_json *w)
{
	json_t *o = NULL;

	if (!w->has_pending)
		return;
	w->has_pending = false;
	if (w->on_record) {
		o = pending_json(w);
		if (o)
			w->on_record(w->record_ctx, o);
	}
	if (!w->out || w->failed) {
		json_decref(o);
		return;
	}
	/* The line by the direct writer, learning's object or not (jansson's dump is the
	 * slower by far: test_events_json checks they agree); jansson's when the bytes are
	 * not UTF-8. */
	if (!events_json_format(w, w->pending_ev, w->pending_count, w->pending_first_ns,
				w->pending_last_ns)) {
		json_decref(o);
		line_out(w);
		return;
	}
	if (!o)
		o = pending_json(w);
	if (o)
		line_json(w, o);
	json_decref(o);
}

void events_json_event(struct events_json *w, const struct pysb_event *e)
{
	struct pysb_event *p = w->pending_ev;
	uint64_t n = e->repeat ? e->repeat : 1;

	w->events += n;
	if (w->has_pending && !w->direct && same_event(p, e) &&
	    e->first_ns - w->pending_first_ns < EVENTS_AGGREGATE_NS &&
	    w->pending_mode == w->ev_mode && w->pending_binding == w->ev_binding &&
	    w->pending_target == w->ev_target) {
		w->pending_count += n;
		w->pending_last_ns = e->ts_ns;
		return;
	}
	events_json_flush(w);
	if (!p)
		return;
	/* the header and the path: only its bytes when it is at the front, as the kernel
	 * sends it (a flood of distinct events copies a few hundred bytes, not 4 KiB) */
	if (e->kind == PYSB_KIND_NET)
		memcpy(p, e, PYSB_EVENT_HEAD_LEN + sizeof(e->net));
	else if (e->path_off == 0 && e->path_len > 0 && e->path_len <= PYSB_PATH_LEN)
		memcpy(p, e, PYSB_EVENT_HEAD_LEN + (size_t)e->path_len);
	else
		memcpy(p, e, sizeof(*p));
	w->has_pending = true;
	w->pending_count = n;
	w->pending_first_ns = e->first_ns ? e->first_ns : e->ts_ns;
	w->pending_last_ns = e->ts_ns;
	w->pending_mode = w->ev_mode;
	w->pending_binding = w->ev_binding;
	w->pending_target = w->ev_target;
	if (w->direct)
		events_json_flush(w);
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
		set(l, events_lost_name(i), json_integer(lost ? (json_int_t)lost[i] : -1));
	o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:o}", "record", "summary", "time", t, "mode",
		      w->mode, "events", (json_int_t)w->events, "records",
		      (json_int_t)w->records + 1, "lost", l);
	events_json_put(w, o);
	json_decref(o);
	events_json_sync(w);
	if (w->failed) {
		pr_err("cannot write the event stream to %s: %s; events after record %lu are "
		       "missing from it",
		       w->name, strerror(w->err), w->records);
		ret = -1;
	}
	events_json_free(w);
	return ret;
}
