// SPDX-License-Identifier: MIT
/*
 * pysb-bpf daemon --config DIR: keeps each binding's policy on its service cgroups
 * (docs/fleet.md).
 *
 * A target cgroup is confined the way `run` confines its own: the cgroup's id in the
 * `sandboxes` map names a sandbox id, under which the rules sit in the shared maps, and
 * the socket programs are attached to the cgroup. Everything is pinned, so a daemon that
 * dies leaves every service confined; a new one adopts what it finds (the entry is
 * flagged PYSB_SB_DAEMON) instead of attaching twice.
 *
 * A reload never edits the rules in place: the new policy is written under a fresh
 * sandbox id, then one map update switches the cgroup to it, then the old id's entries
 * are removed. A hook sees the old policy or the new one, never a mix, and never none.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <linux/membarrier.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "compile.h"
#include "daemon.h"
#include "daemon_metrics.h"
#include "events.h"
#include "events_dedup.h"
#include "loader.h"
#include "log.h"
#include "policy.h"
#include "probe.h"
#include "pysb.skel.h"
#include "status.h"

struct target {
	char path[PATH_MAX]; /* the cgroup directory */
	uint64_t cgid;
	uint32_t id; /* the sandbox id its entry names now */
	int ringbuf_fd;
	uint64_t lost_base[PYSB_LOST_MAX]; /* lost under ids since replaced */
	uint64_t lost_said[PYSB_LOST_MAX];
	bool seen; /* found by the last scan */
	struct binding *b;
};

struct binding {
	struct binding_conf conf;
	uint64_t fingerprint; /* of conf and every policy file read: unchanged = no switch */
	struct compiled c;
	struct file_pins pins; /* c's rule inodes, held open while c is in force */
	struct target **t;
	size_t n_t;
	bool seen;	   /* its file was in the last read of the directory */
	bool no_answer;	   /* unit: systemd did not answer the last scan's query */
	bool query_failed; /* unit: the query binding_paths just made got no answer */
	/* Confinement at creation (bpf/watch.bpf.c): the policy written under an id of its
	 * own, which a new cgroup matching the binding gets until the scan confines it; its
	 * events are read as those of `tmpl` (path: the pattern, or the unit's cgroup). */
	struct target *tmpl;
	uint64_t tmpl_fp;	  /* the fingerprint its rules were written from */
	char unit_path[PATH_MAX]; /* unit: where it runs or will run ("" unknown) */
	struct binding_metrics m;
};

struct retired {
	struct target *t;
	uint32_t id;
};

struct daemon {
	const struct daemon_opts *o;
	struct retired *retired; /* ids switched away from, removed after one settle() */
	size_t n_retired, cap_retired;
	char cgroot[PATH_MAX];
	struct loader l;
	struct binding **b;
	size_t n_b;
	struct ring_buffer *rb;
	bool rb_stale;
	struct events_json ev;
	struct events_dedup dedup; /* what each record of a repeated event tells */
	FILE *out;
	struct daemon_metrics m;
	/* Bindings whose file is there but was rejected at the last read: the cgroups their
	 * records name keep their last rules (release_orphans). */
	char (*rejected)[256];
	size_t n_rejected;
	bool rejected_lost; /* one could not be remembered (no memory): every one is kept */
	/* Unclaimed cgroups release_orphans kept at its last pass (each said once). */
	uint64_t *kept;
	size_t n_kept;
	/* What cgroup_watch holds (bpf/watch.bpf.c); read from the map at the first sync,
	 * so that the ids a previous daemon left there are retired. */
	struct pysb_watch *watch;
	uint32_t pending_id; /* the fail-closed pending sandbox (no rules); 0: none */
	int pending_rb;
	/* Entries put by the kernel that no target claimed at the last pass: released at
	 * the next one if still unclaimed (a cgroup created during a scan is claimed by the
	 * next scan, never released). */
	uint64_t *kunclaimed;
	size_t n_kunclaimed;
	/* Cgroups held by the kernel until their first execve (PYSB_SB_HOLD), and since when
	 * the scan sees them so: one still held a scan period later is armed by the scan
	 * (a workload that never executes anything is confined as before). */
	struct held {
		uint64_t cgid;
		int64_t since;
	} * held;
	size_t n_held;
	struct held *held_next;
	size_t n_held_next;
	struct ring_buffer *born; /* cgroup_born: cgroups the kernel just confined */
	bool born_seen;
};

static int on_born(void *ctx, void *data, size_t len)
{
	(void)data;
	(void)len;
	((struct daemon *)ctx)->born_seen = true;
	return 0;
}

/* ---------------- events */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * A record is acknowledged (the ring's read position moves past it) when this returns:
 * its line is written by then, with one write(2), and nothing is held in memory. A kill
 * may write a record twice (after a restart), never lose one or cut a line.
 */
/* One record (repeats counted): metrics and its line. */
static void deliver(struct daemon *d, struct target *t, struct pysb_event *e)
{
	events_resolve_path(e);
	metrics_count_event(&t->b->m, e->decision == PYSB_AUDIT, e->kind, e->repeat);
	d->ev.compiled = &t->b->c; /* net denials name their rule */
	d->ev.ev_mode = t->b->conf.audit ? "audit" : "enforce";
	d->ev.ev_binding = t->b->conf.name;
	d->ev.ev_target = t->path;
	events_json_event(&d->ev, e);
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct target *t = ctx;
	struct daemon *d = t->b ? (struct daemon *)t->b->m.owner : NULL;
	static struct pysb_event e;

	if (!d || len < PYSB_EVENT_HEAD_LEN)
		return 0;
	memcpy(&e, data, len < sizeof(e) ? len : sizeof(e));
	if (len < sizeof(e))
		memset((char *)&e + len, 0, sizeof(e) - len);
	events_dedup_record(&d->dedup, &e, len);
	if (e.repeat) /* 0: a sweep told its occurrences already */
		deliver(d, t, &e);
	return 0;
}

/* A count the kernel held (its dedup map), told by the sweep: to its sandbox's target. */
static void deliver_swept(void *ctx, struct pysb_event *e)
{
	struct daemon *d = ctx;

	for (size_t i = 0; i < d->n_b; i++)
		for (size_t j = 0; j < d->b[i]->n_t; j++)
			if (d->b[i]->t[j]->id == e->sandbox) {
				deliver(d, d->b[i]->t[j], e);
				return;
			}
}

/* Each second: the occurrences of repeated events no record told yet (the ring is read
 * first, so that the records in it are not told twice). */
static void sweep_repeats(struct daemon *d)
{
	int err;

	if (d->rb)
		ring_buffer__consume(d->rb);
	err = events_dedup_sweep(&d->dedup, loader_dedup_fd(&d->l), false, 0, deliver_swept, d,
				 NULL);
	if (err)
		pr_warn("cannot read the kernel's counts of repeated events: %s", strerror(-err));
}

/* The ring buffers of every target, read by one poller; rebuilt when the set changes
 * (what was not read yet stays in each ring: its read position is the ring's own). */
static void rb_rebuild(struct daemon *d)
{
	if (d->rb) {
		ring_buffer__consume(d->rb);
		ring_buffer__free(d->rb);
		d->rb = NULL;
	}
	for (size_t i = 0; i < d->n_b; i++) {
		for (size_t j = 0; j < d->b[i]->n_t; j++) {
			struct target *t = d->b[i]->t[j];

			if (!d->rb)
				d->rb = ring_buffer__new(t->ringbuf_fd, on_event, t, NULL);
			else if (ring_buffer__add(d->rb, t->ringbuf_fd, on_event, t))
				pr_err("cannot read the events of %s: %s", t->path,
				       strerror(errno));
		}
		if (d->b[i]->tmpl) { /* cgroups confined at creation, not scanned yet */
			struct target *t = d->b[i]->tmpl;

			if (!d->rb)
				d->rb = ring_buffer__new(t->ringbuf_fd, on_event, t, NULL);
			else if (ring_buffer__add(d->rb, t->ringbuf_fd, on_event, t))
				pr_err("cannot read the events of %s: %s", t->path,
				       strerror(errno));
		}
	}
	d->rb_stale = false;
}

static void lost_records(struct daemon *d)
{
	char tm[64];

	for (size_t i = 0; i < d->n_b; i++) {
		for (size_t j = 0; j < d->b[i]->n_t; j++) {
			struct target *t = d->b[i]->t[j];
			uint64_t lost[PYSB_LOST_MAX];

			if (loader_lost_id(&d->l, t->id, lost))
				continue;
			for (int r = 0; r < PYSB_LOST_MAX; r++) {
				uint64_t total = t->lost_base[r] + lost[r];
				json_t *o;

				if (total <= t->lost_said[r])
					continue;
				metrics_count_lost(&d->b[i]->m, r, total - t->lost_said[r]);
				events_json_time(&d->ev, (uint64_t)now_ms() * 1000000ull, tm,
						 sizeof(tm));
				o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "record", "lost",
					      "time", tm, "binding", t->b->conf.name, "target",
					      t->path, "reason", events_lost_name(r), "count",
					      (json_int_t)(total - t->lost_said[r]));
				events_json_put(&d->ev, o);
				json_decref(o);
				t->lost_said[r] = total;
			}
		}
	}
}

/* Beyond the size limit the file becomes FILE.1 (FILE.1 FILE.2, ...) and a new one starts. */
static void rotate_events(struct daemon *d)
{
	const struct daemon_opts *o = d->o;
	char from[PATH_MAX + 16], to[PATH_MAX + 16];
	struct stat st;
	FILE *f;

	/* the size of the file, not the FILE's idea of it: lines are written with write(2) */
	if (!o->events_max_size || d->out == stdout || fstat(fileno(d->out), &st) ||
	    (uint64_t)st.st_size < o->events_max_size)
		return;
	for (unsigned k = o->events_keep; k >= 1; k--) {
		snprintf(from, sizeof(from), k == 1 ? "%s" : "%s.%u", o->events, k - 1);
		snprintf(to, sizeof(to), "%s.%u", o->events, k);
		if (rename(from, to) && errno != ENOENT)
			pr_warn("cannot rotate %s to %s: %s", from, to, strerror(errno));
	}
	f = fopen(o->events, "ae");
	if (!f) {
		pr_err("cannot open the new event file %s: %s; events go on into %s.1", o->events,
		       strerror(errno), o->events);
		return;
	}
	fclose(d->out);
	d->out = f;
	d->ev.out = f;
}

/* ---------------- confining one cgroup */

/* Until every hook that looked up the old entry has returned: they run inside an RCU
 * read-side section, which a global membarrier waits for; the pause covers a hook
 * preempted on a single CPU, where membarrier returns at once. */
static void settle(void)
{
	syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
	usleep(20 * 1000);
}

/* Removes the ids cgroups were switched away from, once no hook can still use them:
 * one wait for a whole reload, however many cgroups it switched. */
static void retire_flush(struct daemon *d)
{
	struct sandbox_set set = { 0 };

	if (!d->n_retired)
		return;
	settle();
	for (size_t i = 0; i < d->n_retired; i++) {
		struct target *t = d->retired[i].t;
		uint64_t lost[PYSB_LOST_MAX];

		if (t && !loader_lost_id(&d->l, d->retired[i].id, lost))
			for (int r = 0; r < PYSB_LOST_MAX; r++)
				t->lost_base[r] += lost[r];
		sandbox_set_add(&set, d->retired[i].id);
	}
	loader_sandboxes_free(&d->l, &set);
	d->n_retired = 0;
}

/* Puts `c` on the target under a fresh id and switches the cgroup to it in one update;
 * the previous id is retired (retire_flush). On failure the previous policy stays. */
static int target_switch(struct daemon *d, struct target *t, struct binding *b,
			 const struct compiled *c, struct file_pins *pins)
{
	struct pysb_sandbox_cfg cfg = { 0 };
	int err;

	if (d->n_retired == d->cap_retired) {
		size_t cap = d->cap_retired ? 2 * d->cap_retired : 64;
		struct retired *v = realloc(d->retired, cap * sizeof(*v));

		if (!v)
			return -1;
		d->retired = v;
		d->cap_retired = cap;
	}
	err = loader_id_alloc(&d->l, t->ringbuf_fd, &cfg.id);
	if (err) {
		pr_err("%s: no free sandbox id for %s: %s", b->conf.name, t->path, strerror(-err));
		return -1;
	}
	if (sandbox_fill_maps(&d->l, c, pins, cfg.id)) {
		loader_sandbox_free(&d->l, 0, cfg.id);
		return -1;
	}
	events_set_compiled(c); /* so net denials can name their rule */
	cfg.flags = PYSB_SB_DAEMON | sandbox_flags(c, b->conf.audit);
	/* A service confined in place keeps its capability sets: lsm/capable refuses every
	 * one its policy does not grant (bpf/caps.bpf.c). */
	cfg.caps = c->caps;
	{
		/* For `pysb-bpf status`: who keeps the cgroup, under which policy (the
		 * record of an adopted cgroup names this daemon from now on). */
		struct sandbox_record r = { .cgid = t->cgid,
					    .sandbox = cfg.id,
					    .owner = OWNER_DAEMON };

		sandbox_record_self(&r);
		snprintf(r.binding, sizeof(r.binding), "%s", b->conf.name);
		snprintf(r.policy, sizeof(r.policy), "%s", b->conf.policy);
		snprintf(r.mode, sizeof(r.mode), "%s", b->conf.audit ? "audit" : "enforce");
		snprintf(r.cgroup, sizeof(r.cgroup), "%s", t->path);
		sandbox_record_write(&r);
	}
	err = bpf_map__update_elem(d->l.skel->maps.sandboxes, &t->cgid, sizeof(t->cgid), &cfg,
				   sizeof(cfg), BPF_ANY)
		      ? -errno
		      : 0;
	/* Tasks that cached "not sandboxed" (or an ancestor's sandbox) look again. A
	 * reload keeps the keys, so only a new cgroup must not stay without it. */
	if (!err && loader_bump_sandbox_gen(&d->l) && !t->id) {
		bpf_map__delete_elem(d->l.skel->maps.sandboxes, &t->cgid, sizeof(t->cgid), 0);
		err = -EIO;
	}
	if (err) {
		pr_err("%s: cannot switch %s to its new policy: %s", b->conf.name, t->path,
		       strerror(-err));
		loader_sandbox_free(&d->l, 0, cfg.id);
		if (!t->id) /* never registered (a reload's failure puts the old record back) */
			sandbox_record_remove(t->cgid);
		return -1;
	}
	if (t->id)
		d->retired[d->n_retired++] = (struct retired){ .t = t, .id = t->id };
	t->id = cfg.id;
	return 0;
}

static void link_prefix(const struct target *t, char *buf, size_t len)
{
	snprintf(buf, len, "cg%llu", (unsigned long long)t->cgid);
}

/* Confines the cgroup at path with b's policy: adopts what a previous daemon left. */
static struct target *target_add(struct daemon *d, struct binding *b, const char *path)
{
	struct target *t = calloc(1, sizeof(*t));
	struct pysb_sandbox_cfg cfg;
	char prefix[64];
	struct stat st;
	bool adopted = false, born = false, held = false;
	int fd = -1, err;

	if (!t)
		return NULL;
	t->ringbuf_fd = -1;
	t->b = b;
	snprintf(t->path, sizeof(t->path), "%s", path);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		pr_err("%s: cannot open cgroup %s: %s", b->conf.name, path, strerror(errno));
		goto fail;
	}
	t->cgid = st.st_ino;
	if (!bpf_map__lookup_elem(d->l.skel->maps.sandboxes, &t->cgid, sizeof(t->cgid), &cfg,
				  sizeof(cfg), 0)) {
		if (!(cfg.flags & PYSB_SB_DAEMON)) {
			pr_err("%s: cgroup %s is a sandbox of a running 'pysb-bpf run': not bound",
			       b->conf.name, path);
			goto fail;
		}
		/* Put by the kernel at its creation (bpf/watch.bpf.c): its id is the
		 * binding's template or the pending sandbox, shared, never this cgroup's own
		 * (nor retired with it). Confined like a new one. */
		born = cfg.flags & PYSB_SB_KERNEL;
		held = born && (cfg.flags & PYSB_SB_HOLD);
		t->ringbuf_fd = born ? -1 : loader_ringbuf_of(&d->l, cfg.id);
		if (t->ringbuf_fd >= 0) {
			t->id = cfg.id;
			adopted = true;
		}
	}
	if (t->ringbuf_fd < 0)
		t->ringbuf_fd = loader_ringbuf_create(b->c.events_buffer);
	if (t->ringbuf_fd < 0) {
		pr_err("%s: cannot create the event ring buffer of %s: %s", b->conf.name, path,
		       strerror(-t->ringbuf_fd));
		goto fail;
	}
	link_prefix(t, prefix, sizeof(prefix));
	if (!loader_links_pinned(&d->l, prefix)) {
		loader_unpin_links(&d->l, prefix); /* a partial set: start over */
		err = loader_attach_cgroup_pinned(&d->l, fd, prefix, NULL, NULL, 0);
		if (err) {
			pr_err("%s: cannot attach the socket programs to %s: %s", b->conf.name,
			       path, strerror(-err));
			loader_unpin_links(&d->l, prefix);
			goto fail;
		}
	}
	close(fd);
	fd = -1;
	/* Adopted or new, the policy put on is the one read now (it may have changed while
	 * no daemon ran): the same switch as a reload. The id an adopted cgroup had is
	 * retired at the end of the scan, with the others. */
	if (target_switch(d, t, b, &b->c, &b->pins))
		goto fail_attached;
	pr_info("%s: %s %s (cgroup id %llu, sandbox %u, %s%s)", b->conf.name,
		adopted ? "adopted" : "confined", path, (unsigned long long)t->cgid, t->id,
		b->conf.audit ? "audit" : "enforce",
		!born  ? ""
		: held ? "; held by the kernel since its creation, no execve in it: "
			 "enforced from now"
		       : "; held by the kernel since its creation");
	d->rb_stale = true;
	return t;
fail_attached:
	if (!adopted)
		loader_unpin_links(&d->l, prefix);
fail:
	if (fd >= 0)
		close(fd);
	if (t->ringbuf_fd >= 0)
		close(t->ringbuf_fd);
	free(t);
	metrics_count_error(&d->m);
	return NULL;
}

/* Stops confining: the binding is gone, or the cgroup was removed. */
static void target_release(struct daemon *d, struct target *t, const char *why)
{
	char prefix[64];

	bpf_map__delete_elem(d->l.skel->maps.sandboxes, &t->cgid, sizeof(t->cgid), 0);
	loader_bump_sandbox_gen(&d->l);
	settle();
	loader_sandbox_free(&d->l, 0, t->id);
	sandbox_record_remove(t->cgid);
	link_prefix(t, prefix, sizeof(prefix));
	loader_unpin_links(&d->l, prefix);
	pr_info("%s: released %s (%s)", t->b->conf.name, t->path, why);
	d->rb_stale = true;
}

static void target_free(struct target *t)
{
	if (t->ringbuf_fd >= 0)
		close(t->ringbuf_fd);
	free(t);
}

/* ---------------- bindings */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* The binding and the text of every file its policy read (includes too). */
static uint64_t fingerprint(const struct binding_conf *conf, const struct policy *p)
{
	uint64_t h = fnv(14695981039346656037ull, conf, sizeof(*conf));

	for (size_t i = 0; i < p->n_files; i++) {
		char buf[8192];
		size_t n;
		FILE *f = fopen(p->files[i], "re");

		h = fnv(h, p->files[i], strlen(p->files[i]) + 1);
		if (!f)
			continue;
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			h = fnv(h, buf, n);
		fclose(f);
	}
	return h;
}

static int binding_compile(const struct binding_conf *conf, struct compiled *out, uint64_t *fp)
{
	struct policy_diag diag = { 0 };
	struct policy *p = NULL;
	struct compile_opts co = {
		.interpreter = conf->interpreter[0] ? conf->interpreter : NULL,
		.script = conf->script[0] ? conf->script : NULL,
		.implicit = true, /* unless the policy says bpf.implicit=false */
	};
	int ret;

	if (policy_parse_file(conf->policy, environ, NULL, NULL, 0, &p, &diag))
		p = NULL;
	policy_diag_print(stderr, &diag);
	policy_diag_free(&diag);
	if (!p)
		return -1;
	*fp = fingerprint(conf, p);
	ret = policy_compile(p, &co, out); /* bpf.mode, bpf.events-buffer into out */
	policy_free(p);
	return ret;
}

static struct binding *binding_find(struct daemon *d, const char *name)
{
	for (size_t i = 0; i < d->n_b; i++)
		if (!strcmp(d->b[i]->conf.name, name))
			return d->b[i];
	return NULL;
}

/* A binding that cannot be read or compiled keeps what it enforced, here or left by a
 * previous daemon: its name is remembered so that release_orphans keeps its cgroups. */
static void rejected_add(struct daemon *d, const char *name)
{
	char(*v)[256] = realloc(d->rejected, (d->n_rejected + 1) * sizeof(*v));

	if (!v) {
		d->rejected_lost = true; /* release_orphans keeps every unclaimed cgroup */
		return;
	}
	d->rejected = v;
	snprintf(d->rejected[d->n_rejected++], sizeof(*v), "%s", name);
}

static bool rejected_has(const struct daemon *d, const char *name)
{
	for (size_t i = 0; i < d->n_rejected; i++)
		if (!strcmp(d->rejected[i], name))
			return true;
	return false;
}

static bool is_binding_file(const char *n)
{
	size_t l = strlen(n);

	/* ConfigMap mounts hold ..data and ..<timestamp> entries: never bindings. */
	return n[0] != '.' && l > 5 && !strcmp(n + l - 5, ".json");
}

/* Reads every binding file. A binding whose file or policy is broken keeps what it
 * enforced; one whose file is gone is released. Returns the number of errors. */
static int read_config(struct daemon *d, bool apply, bool force)
{
	struct dirent **names = NULL;
	int n, errors = 0;

	n = scandir(d->o->config_dir, &names, NULL, alphasort);
	if (n < 0) {
		pr_err("cannot read the configuration directory %s: %s; nothing changed",
		       d->o->config_dir, strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < d->n_b; i++)
		d->b[i]->seen = false;
	if (apply) {
		d->n_rejected = 0;
		d->rejected_lost = false;
	}
	for (int i = 0; i < n; i++) {
		struct binding_conf conf;
		struct compiled c = { 0 };
		struct binding *b;
		uint64_t fp = 0;

		if (!is_binding_file(names[i]->d_name))
			continue;
		if (binding_read(d->o->config_dir, names[i]->d_name, d->cgroot, &conf) ||
		    binding_compile(&conf, &c, &fp)) {
			const char *name = conf.name[0] ? conf.name : names[i]->d_name;

			b = binding_find(d, conf.name);
			if (b)
				b->seen = true;
			if (apply)
				rejected_add(d, name);
			pr_err("binding %s rejected%s", name,
			       b || apply ? ": its previous policy stays in force" : "");
			errors++;
			continue;
		}
		conf.audit |= c.audit_mode;
		if (!apply) {
			pr_info("binding %s: %s on %s %s (%zu file rules)", conf.name, conf.policy,
				conf.kind == TARGET_UNIT      ? "unit"
				: conf.kind == TARGET_PATTERN ? "cgroups matching"
							      : "cgroup",
				conf.target, c.n_files);
			compiled_free(&c);
			continue;
		}
		b = binding_find(d, conf.name);
		if (!b) {
			struct binding **v = realloc(d->b, (d->n_b + 1) * sizeof(*v));

			b = calloc(1, sizeof(*b));
			if (!v || !b) {
				free(b);
				compiled_free(&c);
				errors++;
				continue;
			}
			d->b = v;
			d->b[d->n_b++] = b;
			b->m.owner = d;
			b->conf = conf;
			b->c = c;
			b->fingerprint = fp;
			b->seen = true;
			metrics_binding_added(&d->m, &b->m, conf.name);
			pr_info("binding %s: %s on %s %s, %s", conf.name, conf.policy,
				conf.kind == TARGET_UNIT      ? "unit"
				: conf.kind == TARGET_PATTERN ? "cgroups matching"
							      : "cgroup",
				conf.target, conf.audit ? "audit" : "enforce");
			continue; /* its targets: the scan */
		}
		b->seen = true;
		if (!force && fp == b->fingerprint) {
			compiled_free(&c); /* nothing changed: no switch */
			continue;
		}
		{
			struct binding old = *b;
			struct file_pins pins = { 0 };
			bool failed = false;

			b->conf = conf;
			for (size_t j = 0; j < b->n_t; j++)
				failed |= target_switch(d, b->t[j], b, &c, &pins) != 0;
			if (failed) {
				/* Those switched stay on the new policy; put them back on the old. */
				b->conf = old.conf;
				for (size_t j = 0; j < b->n_t; j++)
					target_switch(d, b->t[j], b, &old.c, &b->pins);
				retire_flush(d);
				file_pins_release(&pins);
				compiled_free(&c);
				pr_err("binding %s: the new policy could not be put on every cgroup; "
				       "the previous one stays in force",
				       conf.name);
				errors++;
				continue;
			}
			/* The old rules' ids are retired (retire_flush, at the end of
			 * read_config): inodes only they named may go. */
			file_pins_release(&b->pins);
			compiled_free(&old.c);
			b->c = c;
			b->pins = pins;
			b->fingerprint = fp;
			pr_info("binding %s: policy %s reloaded on %zu cgroup(s), %s", conf.name,
				conf.policy, b->n_t, conf.audit ? "audit" : "enforce");
		}
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (!apply)
		return errors;
	retire_flush(d);
	for (size_t i = 0; i < d->n_b;) {
		struct binding *b = d->b[i];

		if (b->seen) {
			i++;
			continue;
		}
		struct target *tmpl = b->tmpl; /* its id leaves cgroup_watch at the scan */

		for (size_t j = 0; j < b->n_t; j++) {
			target_release(d, b->t[j], "its binding file was removed");
		}
		b->tmpl = NULL;
		if (tmpl)
			d->rb_stale = true;
		if (d->rb_stale)
			rb_rebuild(d);
		if (tmpl)
			target_free(tmpl);
		for (size_t j = 0; j < b->n_t; j++)
			target_free(b->t[j]);
		free(b->t);
		file_pins_release(&b->pins);
		compiled_free(&b->c);
		metrics_binding_removed(&d->m, &b->m);
		free(b);
		d->b[i] = d->b[--d->n_b];
	}
	return errors;
}

/*
 * Whether the cgroup of id cgid is gone: only then may the daemon release it on its own
 * (never on doubt: a query that failed, a path that names another cgroup now). Looked up
 * by id (a kernfs file handle), which answers for a cgroup renamed since; when the lookup
 * itself fails (not ESTALE: no such cgroup), path decides: gone if it is gone.
 */
static bool cgroup_gone(const struct daemon *d, uint64_t cgid, const char *path)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh = { .handle_bytes = sizeof(uint64_t),
			.handle_type = 0xfe /* FILEID_KERNFS: the cgroup id */ } };
	struct stat st;
	int mnt, fd, err;

	memcpy(h.fh.f_handle, &cgid, sizeof(cgid));
	mnt = open(d->cgroot, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mnt < 0)
		return false;
	fd = open_by_handle_at(mnt, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = errno;
	close(mnt);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	if (err == ESTALE || err == ENOENT)
		return true;
	return path && path[0] == '/' && stat(path, &st) && errno == ENOENT;
}

/* The cgroup directories a binding names now. */
static size_t binding_paths(struct binding *b, const char *cgroot, char ***out)
{
	char **v = NULL, one[PATH_MAX];
	glob_t g;
	size_t n = 0;
	struct stat st;

	switch (b->conf.kind) {
	case TARGET_CGROUP:
		snprintf(one, sizeof(one), "%s", b->conf.target);
		break;
	case TARGET_UNIT:
		b->query_failed = false;
		switch (unit_cgroup(b->conf.target, cgroot, one, sizeof(one))) {
		case 0:
			/* a restart recreates it there: watched (watch_sync) */
			snprintf(b->unit_path, sizeof(b->unit_path), "%s", one);
			break;
		case 1: /* stopped */
			one[0] = '\0';
			break;
		default:
			b->query_failed = true;
			one[0] = '\0';
			break;
		}
		break;
	case TARGET_PATTERN:
		if (glob(b->conf.target, GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g))
			return 0;
		v = calloc(g.gl_pathc + 1, sizeof(*v));
		for (size_t i = 0; v && i < g.gl_pathc; i++) {
			char f[PATH_MAX + 32];

			/* only cgroup directories: they hold cgroup.procs */
			snprintf(f, sizeof(f), "%s/cgroup.procs", g.gl_pathv[i]);
			if (!stat(f, &st) && (v[n] = strdup(g.gl_pathv[i])))
				n++;
		}
		globfree(&g);
		*out = v;
		return n;
	}
	if (one[0] && !stat(one, &st) && S_ISDIR(st.st_mode)) {
		v = calloc(2, sizeof(*v));
		if (v && (v[0] = strdup(one)))
			n = 1;
	}
	*out = v;
	return n;
}

/* ---------------- confinement at creation (bpf/watch.bpf.c) */

static int retire_add(struct daemon *d, struct target *t, uint32_t id)
{
	if (d->n_retired == d->cap_retired) {
		size_t cap = d->cap_retired ? 2 * d->cap_retired : 64;
		struct retired *v = realloc(d->retired, cap * sizeof(*v));

		if (!v)
			return -1;
		d->retired = v;
		d->cap_retired = cap;
	}
	d->retired[d->n_retired++] = (struct retired){ .t = t, .id = id };
	return 0;
}

/* The binding's policy under an id of its own, for cgroups confined at their creation:
 * written again when the policy changed. 0, or -1 (then no template: the scan binds). */
static int template_ensure(struct daemon *d, struct binding *b)
{
	struct target *t = b->tmpl;
	uint32_t id;
	int err;

	if (t && t->id && b->tmpl_fp == b->fingerprint)
		return 0;
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return -1;
		t->b = b;
		snprintf(t->path, sizeof(t->path), "%s",
			 b->conf.kind == TARGET_UNIT ? b->unit_path : b->conf.target);
		t->ringbuf_fd = loader_ringbuf_create(b->c.events_buffer);
		if (t->ringbuf_fd < 0) {
			pr_err("%s: cannot create the event ring buffer for its new cgroups: %s; "
			       "they are confined at the next scan",
			       b->conf.name, strerror(-t->ringbuf_fd));
			free(t);
			return -1;
		}
		b->tmpl = t;
		d->rb_stale = true;
	}
	err = loader_id_alloc(&d->l, t->ringbuf_fd, &id);
	if (err) {
		pr_err("%s: no free sandbox id for its new cgroups: %s; they are confined at the "
		       "next scan",
		       b->conf.name, strerror(-err));
		return -1;
	}
	if (sandbox_fill_maps(&d->l, &b->c, &b->pins, id)) {
		loader_sandbox_free(&d->l, 0, id);
		return -1;
	}
	/* the id it replaces leaves cgroup_watch in watch_sync and is retired there */
	t->id = id;
	b->tmpl_fp = b->fingerprint;
	return 0;
}

/* The kernel's pattern for the binding's cgroups, relative to the hierarchy's root as
 * the tracepoint gives paths ("/jobs.slice/job-*.scope"): 0, with *wider set when the
 * pattern had to be widened (a bracket expression or an escaped character becomes '?':
 * the kernel's matcher knows '*' and '?' only); -1 if there is none. */
static int watch_glob(struct daemon *d, struct binding *b, char *out, size_t len, bool *wider)
{
	size_t rl = strlen(d->cgroot), o = 0;
	const char *p;

	*wider = false;
	if (b->conf.kind == TARGET_UNIT && !b->unit_path[0] &&
	    unit_future_cgroup(b->conf.target, d->cgroot, b->unit_path, sizeof(b->unit_path)))
		return -1;
	p = b->conf.kind == TARGET_UNIT ? b->unit_path : b->conf.target;
	if (strncmp(p, d->cgroot, rl) || p[rl] != '/')
		return -1;
	for (p += rl; *p; p++) {
		char c = *p;

		if (b->conf.kind == TARGET_UNIT) {
			if (c == '*' || c == '?')
				*wider = true; /* literal here; a wildcard to the kernel */
		} else if (c == '\\' && p[1]) {
			p++;
			c = *p;
			if (c == '*' || c == '?') {
				c = '?';
				*wider = true;
			}
		} else if (c == '[') {
			const char *q = p + 1;

			if (*q == '!' || *q == '^')
				q++;
			if (*q == ']')
				q++;
			while (*q && *q != ']' && *q != '/')
				q++;
			if (*q == ']') { /* one character of a set */
				p = q;
				c = '?';
				*wider = true;
			}
		}
		if (o + 1 >= len)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return o ? 0 : -1;
}

/* The fail-closed sandbox for cgroups a widened pattern matches: an id with no rules. */
static int pending_ensure(struct daemon *d)
{
	int err;

	if (d->pending_id)
		return 0;
	d->pending_rb = loader_ringbuf_create(PYSB_EVENTS_BUFFER_MIN);
	if (d->pending_rb < 0)
		return -1;
	err = loader_id_alloc(&d->l, d->pending_rb, &d->pending_id);
	if (err) {
		close(d->pending_rb);
		d->pending_rb = -1;
		d->pending_id = 0;
		return -1;
	}
	return 0;
}

/*
 * Writes cgroup_watch: for every unit and pattern binding, the paths of the cgroups it
 * will claim and the sandbox the kernel gives them at their creation. Called at the
 * start of each scan (the scan's glob then finds every cgroup created before). Ids that
 * leave the map are retired (removed after the scan's settle): a previous daemon's, a
 * replaced policy's, a removed binding's.
 */
static void watch_sync(struct daemon *d)
{
	struct bpf_map *map = d->l.skel->maps.cgroup_watch;
	struct pysb_watch *want = calloc(PYSB_MAX_WATCH, sizeof(*want));
	size_t n = 0;
	bool said_full = false, need_pending = false;

	if (!want)
		return;
	if (!d->watch) {
		d->watch = calloc(PYSB_MAX_WATCH, sizeof(*d->watch));
		if (!d->watch) {
			free(want);
			return;
		}
		for (uint32_t i = 0; i < PYSB_MAX_WATCH; i++)
			bpf_map__lookup_elem(map, &i, sizeof(i), &d->watch[i], sizeof(d->watch[i]),
					     0);
	}
	for (size_t i = 0; i < d->n_b; i++) {
		struct binding *b = d->b[i];
		struct pysb_watch *w;
		bool wider;

		if (b->conf.kind == TARGET_CGROUP || b->conf.confine_at == CONFINE_SCAN)
			continue;
		if (n == PYSB_MAX_WATCH) {
			if (!said_full)
				pr_warn("more than %d unit and pattern bindings: %s and those after it "
					"are confined at the scan, not at their creation",
					PYSB_MAX_WATCH, b->conf.name);
			said_full = true;
			continue;
		}
		w = &want[n];
		if (watch_glob(d, b, w->glob, sizeof(w->glob), &wider))
			continue;
		if (wider) {
			need_pending = true;
			w->flags = PYSB_WATCH_PENDING;
		} else if (!template_ensure(d, b)) {
			w->cfg.id = b->tmpl->id;
			w->cfg.flags = PYSB_SB_DAEMON | sandbox_flags(&b->c, b->conf.audit);
			w->cfg.caps = b->c.caps;
		} else {
			continue;
		}
		if (b->conf.confine_at == CONFINE_EXEC)
			w->cfg.flags |= PYSB_SB_HOLD; /* armed at the first execve in it */
		n++;
	}
	if (need_pending && pending_ensure(d))
		pr_err("cannot create the pending sandbox: cgroups of widened patterns are "
		       "confined at the scan, not at their creation");
	for (size_t i = 0; i < n; i++)
		if (want[i].flags & PYSB_WATCH_PENDING) {
			if (d->pending_id)
				want[i].cfg = (struct pysb_sandbox_cfg){
					.id = d->pending_id,
					.flags = PYSB_SB_DAEMON | (want[i].cfg.flags & PYSB_SB_HOLD)
				};
			else
				want[i].glob[0] = '\0';
		}
	for (uint32_t i = 0; i < PYSB_MAX_WATCH; i++) {
		if (!memcmp(&want[i], &d->watch[i], sizeof(want[i])))
			continue;
		if (bpf_map__update_elem(map, &i, sizeof(i), &want[i], sizeof(want[i]), BPF_ANY)) {
			pr_err("cannot write cgroup_watch slot %u (%s): %s; its cgroups are confined "
			       "at the scan",
			       i, want[i].glob, strerror(errno));
			want[i] = d->watch[i]; /* what the kernel still has */
		}
	}
	/* Ids no slot names any more; the pending sandbox's last. */
	for (uint32_t i = 0; i < PYSB_MAX_WATCH; i++) {
		uint32_t id = d->watch[i].cfg.id;
		bool still = !d->watch[i].glob[0] || !id || id == d->pending_id;

		for (uint32_t j = 0; j < PYSB_MAX_WATCH && !still; j++)
			still = want[j].glob[0] && want[j].cfg.id == id;
		for (uint32_t j = 0; j < i && !still; j++)
			still = d->watch[j].glob[0] && d->watch[j].cfg.id == id; /* said once */
		if (!still)
			retire_add(d, NULL, id);
	}
	if (d->pending_id && !need_pending) {
		bool used = false;

		for (uint32_t i = 0; i < PYSB_MAX_WATCH && !used; i++)
			used = want[i].glob[0] && want[i].cfg.id == d->pending_id;
		if (!used) {
			retire_add(d, NULL, d->pending_id);
			close(d->pending_rb);
			d->pending_id = 0;
			d->pending_rb = -1;
		}
	}
	memcpy(d->watch, want, PYSB_MAX_WATCH * sizeof(*want));
	free(want);
}

static void release_orphans(struct daemon *d);

static bool held_has(const struct daemon *d, uint64_t cgid)
{
	for (size_t i = 0; i < d->n_held; i++)
		if (d->held[i].cgid == cgid)
			return true;
	return false;
}

/* Whether the cgroup at path is held by the kernel until its first execve and should be
 * left so for now: the runtime that created it may still be setting it up. Armed by
 * this scan (false) once held for a scan period. */
static bool held_wait(struct daemon *d, const char *path)
{
	struct pysb_sandbox_cfg cfg;
	struct stat st;
	uint64_t cgid;
	int64_t since = now_ms();
	struct held *v;

	if (stat(path, &st))
		return false;
	cgid = st.st_ino;
	if (bpf_map__lookup_elem(d->l.skel->maps.sandboxes, &cgid, sizeof(cgid), &cfg, sizeof(cfg),
				 0) ||
	    (cfg.flags & (PYSB_SB_KERNEL | PYSB_SB_HOLD)) != (PYSB_SB_KERNEL | PYSB_SB_HOLD))
		return false;
	for (size_t i = 0; i < d->n_held; i++)
		if (d->held[i].cgid == cgid)
			since = d->held[i].since;
	/* --hold-ms: time for a runtime's set-up before it executes the workload. */
	if (now_ms() - since >= (int64_t)d->o->hold_ms)
		return false;
	v = realloc(d->held_next, (d->n_held_next + 1) * sizeof(*v));
	if (!v)
		return false; /* confined now rather than forgotten */
	d->held_next = v;
	d->held_next[d->n_held_next++] = (struct held){ .cgid = cgid, .since = since };
	return true;
}

/* Confines the cgroups that appeared, releases those that are gone (or re-created:
 * a restarted unit gets a new cgroup, with a new id). */
static void scan(struct daemon *d)
{
	/* First: from here on the kernel confines what the globs below do not see yet. */
	watch_sync(d);
	d->n_held_next = 0;
	for (size_t i = 0; i < d->n_b; i++) {
		struct binding *b = d->b[i];
		char **paths = NULL;
		size_t n = binding_paths(b, d->cgroot, &paths);
		bool no_answer = b->query_failed, gone; /* query_failed: set by binding_paths */

		if (b->conf.kind == TARGET_UNIT) {
			if (no_answer && !b->no_answer)
				pr_warn("%s: systemd did not answer for unit %s: its cgroups stay "
					"confined until they are gone",
					b->conf.name, b->conf.target);
			else if (!no_answer && b->no_answer)
				pr_info("%s: systemd answers again for unit %s", b->conf.name,
					b->conf.target);
			b->no_answer = no_answer;
		}
		for (size_t j = 0; j < b->n_t; j++) {
			struct stat st;

			b->t[j]->seen = false;
			for (size_t k = 0; k < n; k++)
				if (paths[k] && !strcmp(paths[k], b->t[j]->path) &&
				    !stat(paths[k], &st) && st.st_ino == b->t[j]->cgid) {
					b->t[j]->seen = true;
					free(paths[k]);
					paths[k] = NULL;
				}
		}
		for (size_t j = 0; j < b->n_t;) {
			/* A unit's cgroup is released only when it is gone: systemd removes it
			 * when the unit stops or restarts; whatever else systemd says (or fails
			 * to say) is no proof. */
			if (b->t[j]->seen || (b->conf.kind == TARGET_UNIT &&
					      !cgroup_gone(d, b->t[j]->cgid, b->t[j]->path))) {
				j++;
				continue;
			}
			gone = b->conf.kind == TARGET_UNIT || cgroup_gone(d, b->t[j]->cgid, NULL);
			target_release(d, b->t[j],
				       gone ? "the cgroup is gone"
					    : "its binding does not name it any more");
			rb_rebuild(d);
			target_free(b->t[j]);
			b->t[j] = b->t[--b->n_t];
		}
		for (size_t k = 0; k < n; k++) {
			struct target *t, **v;

			if (!paths[k])
				continue;
			if (held_wait(d, paths[k])) {
				free(paths[k]);
				continue;
			}
			v = realloc(b->t, (b->n_t + 1) * sizeof(*v));
			if (v) {
				b->t = v;
				t = target_add(d, b, paths[k]);
				if (t)
					b->t[b->n_t++] = t;
			}
			free(paths[k]);
		}
		free(paths);
		b->m.targets = b->n_t;
	}
	{
		struct held *h = d->held;

		d->held = d->held_next;
		d->n_held = d->n_held_next;
		d->held_next = h;
		d->n_held_next = 0;
	}
	retire_flush(d); /* the ids of the cgroups adopted: one settle, one pass over the maps */
	if (d->rb_stale)
		rb_rebuild(d);
	/* at every scan: the cgroups of a rejected binding whose file was removed since, and
	 * those kept that are gone */
	release_orphans(d);
}

static bool kunclaimed_had(const struct daemon *d, uint64_t cgid)
{
	for (size_t i = 0; i < d->n_kunclaimed; i++)
		if (d->kunclaimed[i] == cgid)
			return true;
	return false;
}

static bool kept_had(const struct daemon *d, uint64_t cgid)
{
	for (size_t i = 0; i < d->n_kept; i++)
		if (d->kept[i] == cgid)
			return true;
	return false;
}

/*
 * Entries flagged PYSB_SB_DAEMON that no target of this daemon claims. Released only when
 * no binding may still want them: the binding their record names was removed (while no
 * daemon ran, or while it was rejected). Kept, with the rules they have, when that
 * binding is there but cannot be read or compiled, or when no record says whose they are
 * and some binding was rejected: never unconfine on doubt.
 */
static void release_orphans(struct daemon *d)
{
	struct bpf_map *map = d->l.skel->maps.sandboxes;
	uint64_t key, next, *prev = NULL, *kept = NULL, *kun = NULL;
	size_t n_kept = 0, n_kun = 0;

	while (!bpf_map__get_next_key(map, prev, &next, sizeof(next))) {
		struct pysb_sandbox_cfg cfg;
		struct sandbox_record r;
		bool claimed = false, rec, gone;
		const char *keep = NULL, *why = NULL;
		struct binding *b;
		char prefix[64];

		claimed = held_has(d, next); /* held until its first execve (held_wait) */
		for (size_t i = 0; i < d->n_b && !claimed; i++)
			for (size_t j = 0; j < d->b[i]->n_t && !claimed; j++)
				claimed = d->b[i]->t[j]->cgid == next;
		if (claimed ||
		    bpf_map__lookup_elem(map, &next, sizeof(next), &cfg, sizeof(cfg), 0) ||
		    !(cfg.flags & PYSB_SB_DAEMON))
			goto next;
		if (cfg.flags & PYSB_SB_KERNEL) {
			/* Confined at its creation, claimed by no scan yet. Its id is shared
			 * (a template, the pending sandbox): only the entry goes. */
			gone = cgroup_gone(d, next, NULL);
			if (!gone &&
			    (!kunclaimed_had(d, next) || d->n_rejected || d->rejected_lost)) {
				uint64_t *v = realloc(kun, (n_kun + 1) * sizeof(*v));

				if (v) {
					kun = v;
					kun[n_kun++] = next;
				}
				goto next;
			}
			pr_info("releasing cgroup id %llu (sandbox %u), confined at its creation: %s",
				(unsigned long long)next, cfg.id,
				gone ? "the cgroup is gone" : "no binding claimed it at two scans");
			bpf_map__delete_elem(map, &next, sizeof(next), 0);
			loader_bump_sandbox_gen(&d->l);
			continue;
		}
		rec = !sandbox_record_read(next, &r) && r.owner == OWNER_DAEMON;
		if (!rec) {
			snprintf(r.binding, sizeof(r.binding), "?");
			snprintf(r.cgroup, sizeof(r.cgroup), "an unrecorded cgroup");
		}
		b = rec ? binding_find(d, r.binding) : NULL;
		gone = cgroup_gone(d, next, rec ? r.cgroup : NULL);
		if (gone)
			why = "the cgroup is gone";
		else if (d->rejected_lost || (rec && rejected_has(d, r.binding)))
			keep = "its binding cannot be read or compiled: its last rules stay in force";
		else if (!rec && d->n_rejected)
			keep = "no record names its binding and a binding was rejected: its rules "
			       "stay in force";
		else if (b && b->conf.kind == TARGET_UNIT)
			keep = "its unit's binding stands: it stays until the cgroup is gone";
		else if (b && (b->conf.kind == TARGET_CGROUP
				       ? !strcmp(b->conf.target, r.cgroup)
				       : !fnmatch(b->conf.target, r.cgroup, FNM_PATHNAME)))
			keep = "its binding names it but could not confine it now: its rules stay "
			       "in force";
		else if (!rec)
			why = "no binding claims it";
		else if (b)
			why = "its binding does not name it any more";
		else
			why = "its binding file was removed";
		if (keep) {
			uint64_t *v = realloc(kept, (n_kept + 1) * sizeof(*v));

			if (v) {
				kept = v;
				kept[n_kept++] = next;
			}
			if (!kept_had(d, next))
				pr_warn("%s: kept %s (cgroup id %llu, sandbox %u): %s", r.binding,
					r.cgroup, (unsigned long long)next, cfg.id, keep);
			goto next;
		}
		pr_info("%s: releasing %s (cgroup id %llu, sandbox %u): %s", r.binding, r.cgroup,
			(unsigned long long)next, cfg.id, why);
		snprintf(prefix, sizeof(prefix), "cg%llu", (unsigned long long)next);
		loader_sandbox_free(&d->l, next, cfg.id);
		sandbox_record_remove(next);
		loader_unpin_links(&d->l, prefix);
		continue; /* the walk goes on from the entry before: this one is gone */
	next:
		key = next;
		prev = &key;
	}
	free(d->kept);
	d->kept = kept;
	d->n_kept = n_kept;
	free(d->kunclaimed);
	d->kunclaimed = kun;
	d->n_kunclaimed = n_kun;
}

/* ---------------- the loop */

/* force: every binding is switched, changed or not (SIGHUP: the operator asks; exposed
 * directories may have been re-created, host names may resolve elsewhere). */
static void reload(struct daemon *d, const char *why, bool force)
{
	int errors;

	pr_info("reloading (%s)", why);
	errors = read_config(d, true, force);
	scan(d);
	metrics_count_reload(&d->m, errors == 0);
	if (errors)
		pr_err("reload: %d binding(s) rejected (above); every other binding is in force",
		       errors);
}

static int open_output(struct daemon *d)
{
	const struct daemon_opts *o = d->o;

	d->out = !o->events || !strcmp(o->events, "-") ? stdout : fopen(o->events, "ae");
	if (!d->out) {
		pr_err("cannot open the event file %s: %s", o->events, strerror(errno));
		return -1;
	}
	if (events_json_init(&d->ev, d->out, d->out == stdout ? "stdout" : o->events, "daemon",
			     NULL))
		return -1;
	d->ev.direct = true; /* on_event: written before the record is acknowledged */
	return 0;
}

int daemon_main(const struct daemon_opts *o)
{
	struct daemon d = { .o = o };
	const char *what;
	sigset_t mask;
	int err, ret = 1, sigfd = -1, ino = -1;
	int64_t next_scan = 0, reload_at = -1;
	bool stop = false;

	if (cgroup2_mount(d.cgroot, sizeof(d.cgroot))) {
		pr_err("no cgroup2 file system mounted: the daemon binds cgroup2 directories");
		return 1;
	}
	if (o->check) {
		d.o = o;
		return read_config(&d, false, false) ? 1 : 0;
	}
	if (probe_run(0))
		return 125;
	{
		/* Each binding holds its rule paths open and each cgroup its ring buffer:
		 * fifty bindings pass the usual soft limit of 1024 (the pins raise it on
		 * EMFILE, a ring buffer created next does not). */
		struct rlimit rl;

		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	if (loader_start(&d.l, &what, &err)) {
		probe_report_load_failure(what, err, false);
		return 125;
	}
	/* Blocked before any thread starts (the metrics server's): a thread that had them
	 * unblocked would take SIGHUP's default action, death, instead of a reload. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (open_output(&d) || metrics_init(&d.m, o->metrics))
		goto out;
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
	ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (sigfd < 0 || ino < 0 ||
	    inotify_add_watch(ino, o->config_dir,
			      IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE |
				      IN_ATTRIB) < 0) {
		pr_err("cannot watch %s: %s", o->config_dir, strerror(errno));
		goto out;
	}
	metrics_lock(&d.m);
	read_config(&d, true, true);
	scan(&d);
	metrics_unlock(&d.m);
	if (o->once) {
		ret = 0;
		goto out;
	}
	/* Told at once of a cgroup confined at its creation: scanned then, not a second
	 * later (its socket programs and its own id; bpf/watch.bpf.c). Without, the scan
	 * finds it. */
	d.born = ring_buffer__new(bpf_map__fd(d.l.skel->maps.cgroup_born), on_born, &d, NULL);
	if (!d.born)
		pr_warn("cannot read cgroup_born: %s; cgroups confined at their creation are "
			"completed at the next scan",
			strerror(errno));
	pr_info("watching %s: %zu binding(s)%s%s", o->config_dir, d.n_b,
		o->metrics ? ", metrics on " : "", o->metrics ? o->metrics : "");
	next_scan = now_ms() + o->rescan_ms;
	while (!stop) {
		struct pollfd fds[4] = {
			{ .fd = d.rb ? ring_buffer__epoll_fd(d.rb) : -1, .events = POLLIN },
			{ .fd = sigfd, .events = POLLIN },
			{ .fd = ino, .events = POLLIN },
			{ .fd = d.born ? ring_buffer__epoll_fd(d.born) : -1, .events = POLLIN },
		};
		int64_t now = now_ms(), wait = next_scan - now;
		int n;

		if (reload_at >= 0 && reload_at - now < wait)
			wait = reload_at - now;
		n = poll(fds, 4, wait < 0 ? 0 : (int)wait);
		if (n < 0 && errno != EINTR) {
			pr_err("poll: %s", strerror(errno));
			break;
		}
		metrics_lock(&d.m);
		if (n > 0 && fds[0].revents && d.rb)
			ring_buffer__consume(d.rb);
		if (n > 0 && (fds[1].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP)
					reload(&d, "SIGHUP", true);
				else
					stop = true;
			}
		}
		if (n > 0 && (fds[2].revents & POLLIN)) {
			char buf[4096];

			while (read(ino, buf, sizeof(buf)) > 0)
				;
			/* A tool writes several files: settle first, then read them all. */
			reload_at = now_ms() + 200;
		}
		now = now_ms();
		if (reload_at >= 0 && now >= reload_at) {
			reload_at = -1;
			reload(&d, "the configuration directory changed", false);
		}
		if (n > 0 && fds[3].revents && d.born)
			ring_buffer__consume(d.born);
		if (d.born_seen && now < next_scan) {
			d.born_seen = false;
			scan(&d);
		}
		if (now >= next_scan) {
			d.born_seen = false;
			scan(&d);
			sweep_repeats(&d);
			lost_records(&d);
			next_scan = now + o->rescan_ms;
		}
		if (d.rb)
			ring_buffer__consume(d.rb);
		events_json_flush(&d.ev);
		events_json_sync(&d.ev);
		rotate_events(&d);
		metrics_unlock(&d.m);
	}
	sweep_repeats(&d); /* what the kernel counted since the last second */
	pr_info("stopping: every bound cgroup stays confined (the programs and maps are pinned)");
	ret = 0;
out:
	metrics_stop(&d.m);
	if (d.born)
		ring_buffer__free(d.born);
	if (d.rb) {
		ring_buffer__consume(d.rb);
		ring_buffer__free(d.rb);
	}
	if (d.out)
		events_json_sync(&d.ev);
	for (size_t i = 0; i < d.n_b; i++) {
		for (size_t j = 0; j < d.b[i]->n_t; j++)
			target_free(d.b[i]->t[j]);
		if (d.b[i]->tmpl)
			target_free(d.b[i]->tmpl);
		free(d.b[i]->t);
		compiled_free(&d.b[i]->c);
		free(d.b[i]);
	}
	free(d.b);
	free(d.retired);
	free(d.rejected);
	free(d.kept);
	free(d.kunclaimed);
	free(d.held);
	free(d.held_next);
	free(d.watch);
	if (d.pending_id)
		close(d.pending_rb);
	if (d.out && d.out != stdout)
		fclose(d.out);
	if (sigfd >= 0)
		close(sigfd);
	if (ino >= 0)
		close(ino);
	d.l.sandbox_id = 0; /* nothing of ours to unpin: the targets stay confined */
	loader_stop(&d.l);
	return ret;
}
