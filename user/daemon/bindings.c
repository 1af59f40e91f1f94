/* SPDX-License-Identifier: MIT */
/*
 * The daemon's bindings: confining one cgroup (ids, maps, socket programs, records), reading and compiling the binding files, reloads, releasing what no binding claims. See daemon.c.
 */
#include "daemon_int.h"
#include "drivers.h"
#include "untampered.h"

/* ---------------- confining one cgroup */

/* Until every hook that looked up the old entry has returned: they run inside an RCU
 * read-side section, which a global membarrier waits for; the pause covers a hook
 * preempted on a single CPU, where membarrier returns at once. */
void settle(void)
{
	syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
	usleep(20 * 1000);
}

/* Removes the ids cgroups were switched away from, once no hook can still use them:
 * one wait for a whole reload, however many cgroups it switched. */
void retire_flush(struct daemon *d)
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
		/* what it made under the old id while the switch settled */
		if (t && t->id && t->id != d->retired[i].id)
			loader_owners_move(&d->l, d->retired[i].id, t->id);
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
	if (d->test_pause_ms > 0 && d->reloading && t->id) {
		pr_info("test: %s: sandbox %u allocated and filled for %s, pausing %ld ms "
			"before the switch",
			b->conf.name, cfg.id, t->path, d->test_pause_ms);
		usleep((useconds_t)d->test_pause_ms * 1000);
	}
	cfg.flags = PYSB_SB_DAEMON | PYSB_SB_INPLACE | sandbox_flags(c, b->conf.audit);
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
		/* canonical: `status` is read from anywhere (found by a user: conf/x.py-sandboxes,
		 * relative to where the daemon started) */
		if (!realpath(b->conf.policy, r.policy))
			snprintf(r.policy, sizeof(r.policy), "%s", b->conf.policy);
		snprintf(r.mode, sizeof(r.mode), "%s", b->conf.audit ? "audit" : "enforce");
		snprintf(r.cgroup, sizeof(r.cgroup), "%s", t->path);
		sandbox_record_write(&r);
	}
	/* Tasks that cached "not sandboxed" (or an ancestor's sandbox) look again: a new
	 * cgroup is registered only with the generation bumped; a reload keeps its key. */
	err = t->id ? loader_switch_sandbox(&d->l, t->cgid, &cfg)
		    : loader_add_sandbox(&d->l, t->cgid, &cfg);
	if (err) {
		pr_err("%s: cannot switch %s to its new policy: %s", b->conf.name, t->path,
		       strerror(-err));
		loader_sandbox_free(&d->l, 0, cfg.id);
		if (!t->id) /* never registered (a reload's failure puts the old record back) */
			sandbox_record_remove(t->cgid);
		return -1;
	}
	if (t->id) {
		/* its own SysV objects and keys stay its own under the new id */
		loader_owners_move(&d->l, t->id, cfg.id);
		d->retired[d->n_retired++] = (struct retired){ .t = t, .id = t->id };
	}
	t->id = cfg.id;
	return 0;
}

static void link_prefix(const struct target *t, char *buf, size_t len)
{
	snprintf(buf, len, "cg%llu", (unsigned long long)t->cgid);
}

/* The socket programs on the cgroup (fd), pinned under prefix; kept when a previous
 * daemon pinned the whole set. 0, or -1 after saying why. */
static int attach_links(struct daemon *d, const struct binding *b, int fd, const char *path,
			const char *prefix)
{
	int err;

	if (loader_links_pinned(&d->l, prefix))
		return 0;
	loader_unpin_links(&d->l, prefix); /* a partial set: start over */
	err = loader_attach_cgroup_pinned(&d->l, fd, prefix, NULL, NULL, 0);
	if (err) {
		pr_err("%s: cannot attach the socket programs to %s: %s", b->conf.name, path,
		       strerror(-err));
		loader_unpin_links(&d->l, prefix);
		return -1;
	}
	return 0;
}

/*
 * What the cgroup's processes already held when it was confined: another's memory file, a
 * seccomp listener, a cgroup file open for writing (user/lib/drivers.h) reach outside
 * whatever the policy, the kernel having judged only their open. `attach` refuses such a
 * process; a service's cgroup stays confined (unconfining it would be worse), and each is
 * said, with the way out. Not its tracees: finding them reads every task of the machine,
 * for each process of each service the daemon confines (docs/design.md, Known gaps).
 */
static void warn_drivers(const struct binding *b, const char *path)
{
	char f[PATH_MAX + 16], what[128];
	struct driver drv;
	FILE *procs;
	int pid;

	snprintf(f, sizeof(f), "%s/cgroup.procs", path);
	procs = fopen(f, "re");
	while (procs && fscanf(procs, "%d", &pid) == 1) {
		if (process_driver(pid, false, &drv) <= 0)
			continue;
		driver_describe(&drv, what, sizeof(what));
		pr_warn("%s: process %d of %s, confined now, holds from before what the policy "
			"does not bound: %s; the kernel judged that when it began, not its use "
			"since. Restart the service to end it",
			b->conf.name, pid, path, what);
	}
	if (procs)
		fclose(procs);
}

/* Confines the cgroup at path with b's policy: adopts what a previous daemon left. */
struct target *target_add(struct daemon *d, struct binding *b, const char *path)
{
	struct target *t = calloc(1, sizeof(*t));
	struct pysb_sandbox_cfg cfg;
	char prefix[64];
	struct stat st;
	bool adopted = false, born = false, held = false;
	int fd = -1;

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
	if (!loader_sandbox_of(&d->l, t->cgid, &cfg)) {
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
		t->ringbuf_fd = loader_daemon_ringbuf_create(b->c.events_buffer);
	if (t->ringbuf_fd < 0) {
		pr_err("%s: cannot create the event ring buffer of %s: %s", b->conf.name, path,
		       strerror(-t->ringbuf_fd));
		goto fail;
	}
	link_prefix(t, prefix, sizeof(prefix));
	if (attach_links(d, b, fd, path, prefix))
		goto fail;
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
	warn_drivers(b, path);
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
	metrics_count_error(&d->m, METRICS_ERR_CONFINE);
	return NULL;
}

/* Stops confining: the binding is gone, or the cgroup was removed. */
void target_release(struct daemon *d, struct target *t, const char *why)
{
	char prefix[64];

	loader_remove_sandbox(&d->l, t->cgid);
	settle();
	loader_sandbox_free(&d->l, 0, t->id);
	sandbox_record_remove(t->cgid);
	link_prefix(t, prefix, sizeof(prefix));
	loader_unpin_links(&d->l, prefix);
	pr_info("%s: released %s (%s)", t->b->conf.name, t->path, why);
	d->rb_stale = true;
}

void target_free(struct target *t)
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
uint64_t fingerprint(const struct binding_conf *conf, const struct policy *p)
{
	uint64_t h = fnv(14695981039346656037ull, conf, sizeof(*conf));

	for (size_t i = 0; i < p->n_files; i++) {
		char buf[8192];
		size_t n;
		int fd = open_regular(p->files[i], false);
		FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;

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
	struct diag_list diag = { 0 };
	struct policy *p = NULL;
	struct compile_opts co = {
		.interpreter = conf->interpreter[0] ? conf->interpreter : NULL,
		.script = conf->script[0] ? conf->script : NULL,
		.script_named = conf->script[0] ? conf->script : NULL,
		.implicit = true, /* unless the policy says bpf.implicit=false */
		.keep_interpreter = true,
	};
	int ret;

	if (policy_parse_file(conf->policy, environ, NULL, NULL, 0, &p, &diag))
		p = NULL;
	diag_print(stderr, &diag);
	diag_free(&diag);
	if (!p)
		return -1;
	*fp = fingerprint(conf, p);
	ret = policy_compile(p, &co, out); /* bpf.mode, bpf.events-buffer into out */
	policy_free(p);
	return ret;
}

struct binding *binding_find(struct daemon *d, const char *name)
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

bool rejected_has(const struct daemon *d, const char *name)
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

/* A binding seen for the first time: its targets come at the scan. 0, or 1 (out of
 * memory; c freed). */
static int binding_add(struct daemon *d, const struct binding_conf *conf, struct compiled *c,
		       uint64_t fp)
{
	struct binding *b;
	struct binding **v = realloc(d->b, (d->n_b + 1) * sizeof(*v));

	b = calloc(1, sizeof(*b));
	if (!v || !b) {
		free(b);
		compiled_free(c);
		return 1;
	}
	d->b = v;
	d->b[d->n_b++] = b;
	b->m.owner = d;
	b->conf = *conf;
	b->c = *c;
	b->fingerprint = fp;
	b->seen = true;
	metrics_binding_added(&d->m, &b->m, conf->name);
	pr_info("binding %s: %s on %s %s, %s", conf->name, conf->policy,
		conf->kind == TARGET_UNIT      ? "unit"
		: conf->kind == TARGET_PATTERN ? "cgroups matching"
					       : "cgroup",
		conf->target, conf->audit ? "audit" : "enforce");
	return 0;
}

/* A binding whose files changed: every target switched to the new policy, or none (those
 * switched go back to the old one). 0, or 1 when the previous policy stays in force. */
static int binding_reload(struct daemon *d, struct binding *b, const struct binding_conf *conf,
			  struct compiled *c, uint64_t fp)
{
	struct binding old = *b;
	struct file_pins pins = { 0 };
	bool failed = false;

	b->conf = *conf;
	for (size_t j = 0; j < b->n_t; j++)
		failed |= target_switch(d, b->t[j], b, c, &pins) != 0;
	if (failed) {
		/* Those switched stay on the new policy; put them back on the old. */
		b->conf = old.conf;
		for (size_t j = 0; j < b->n_t; j++)
			target_switch(d, b->t[j], b, &old.c, &b->pins);
		retire_flush(d);
		file_pins_release(&pins);
		compiled_free(c);
		pr_err("binding %s: the new policy could not be put on every cgroup; "
		       "the previous one stays in force",
		       conf->name);
		metrics_count_error(&d->m, METRICS_ERR_SWITCH);
		b->m.stale = true;
		return 1;
	}
	/* The old rules' ids are retired (retire_flush, at the end of
	 * read_config): inodes only they named may go. */
	file_pins_release(&b->pins);
	compiled_free(&old.c);
	b->m.stale = false;
	b->c = *c;
	b->pins = pins;
	b->fingerprint = fp;
	pr_info("binding %s: policy %s reloaded on %zu cgroup(s), %s", conf->name, conf->policy,
		b->n_t, conf->audit ? "audit" : "enforce");
	return 0;
}

/* The bindings whose file is gone: their cgroups released, their state freed. */
static void release_removed(struct daemon *d)
{
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
}

/* Found by an adversary: a service that may write the directory of the daemon's events
 * deleted the live file and put a forged one in its place. Said for each such binding. */
static void warn_events_writable(const struct daemon *d, const struct binding_conf *conf,
				 struct compiled *c)
{
	if (d->events_dir >= 0 && d->events_dir_path[0] &&
	    compiled_lets_write(d->events_dir_path, c))
		pr_warn("binding %s: its program may write %s, where the daemon writes its "
			"events: it can remove or forge them; put --events outside every "
			"binding's writable trees",
			conf->name, d->events_dir_path);
}

/* Reads every binding file. A binding whose file or policy is broken keeps what it
 * enforced; one whose file is gone is released. Returns the number of errors. */
int read_config(struct daemon *d, bool apply, bool force)
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
			if (b) {
				b->seen = true;
				b->m.stale = true;
			}
			if (apply)
				rejected_add(d, name);
			pr_err("binding %s rejected%s", name,
			       b || apply ? ": its previous policy stays in force" : "");
			errors++;
			continue;
		}
		conf.audit |= c.audit_mode;
		warn_events_writable(d, &conf, &c);
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
			errors += binding_add(d, &conf, &c, fp);
			continue; /* its targets: the scan */
		}
		b->seen = true;
		if (!force && fp == b->fingerprint) {
			compiled_free(&c); /* nothing changed: no switch */
			b->m.stale = false;
			continue;
		}
		errors += binding_reload(d, b, &conf, &c, fp);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (!apply)
		return errors;
	d->m.rejected = (const char(*)[256])d->rejected;
	d->m.n_rejected = d->n_rejected;
	retire_flush(d);
	release_removed(d);
	return errors;
}

/*
 * Whether the cgroup of id cgid is gone: only then may the daemon release it on its own
 * (never on doubt: a query that failed, a path that names another cgroup now). Looked up
 * by id (a kernfs file handle), which answers for a cgroup renamed since; when the lookup
 * itself fails (not ESTALE: no such cgroup), path decides: gone if it is gone.
 */
bool cgroup_gone(const struct daemon *d, uint64_t cgid, const char *path)
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
size_t binding_paths(struct binding *b, const char *cgroot, char ***out)
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
