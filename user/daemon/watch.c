/* SPDX-License-Identifier: MIT */
/*
 * The daemon's side of confinement at creation (bpf/watch.bpf.c): the watch slots, per-binding template sandboxes, held cgroups, and the cgroups the kernel bound before the scan. See daemon.c.
 */
#include "daemon_int.h"

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
		t->ringbuf_fd = loader_daemon_ringbuf_create(b->c.events_buffer);
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
	d->pending_rb = loader_daemon_ringbuf_create(PYSB_EVENTS_BUFFER_MIN);
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

/* The slots the bindings want: a glob and the sandbox a new cgroup matching it gets (the
 * binding's template, or the pending sandbox for a pattern the kernel cannot match). */
static void want_slots(struct daemon *d, struct pysb_watch *want, bool *need_pending)
{
	size_t n = 0;
	bool said_full = false;

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
			*need_pending = true;
			w->flags = PYSB_WATCH_PENDING;
		} else if (!template_ensure(d, b)) {
			w->cfg.id = b->tmpl->id;
			w->cfg.flags = PYSB_SB_DAEMON | PYSB_SB_INPLACE |
				       sandbox_flags(&b->c, b->conf.audit);
			w->cfg.caps = b->c.caps;
		} else {
			/* its rules cannot be filled now: the binding's new cgroups get the
			 * fail-closed sandbox meanwhile, never none (found by a review) */
			*need_pending = true;
			w->flags = PYSB_WATCH_PENDING;
		}
		if (b->conf.confine_at == CONFINE_EXEC)
			w->cfg.flags |= PYSB_SB_HOLD; /* armed at the first execve in it */
		n++;
	}
	if (*need_pending && pending_ensure(d))
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
}

/* The slots that differ from what the kernel has, written; a slot that cannot be written
 * keeps the kernel's (its cgroups are then confined at the scan). */
static void write_slots(struct daemon *d, struct pysb_watch *want)
{
	int map = d->l.fd.cgroup_watch;

	for (uint32_t i = 0; i < PYSB_MAX_WATCH; i++) {
		if (!memcmp(&want[i], &d->watch[i], sizeof(want[i])))
			continue;
		if (bpf_map_update_elem(map, &i, &want[i], BPF_ANY)) {
			pr_err("cannot write cgroup_watch slot %u (%s): %s; its cgroups are confined "
			       "at the scan",
			       i, want[i].glob, strerror(errno));
			want[i] = d->watch[i]; /* what the kernel still has */
		}
	}
}

/* Ids no slot names any more are retired; the pending sandbox's last, when no slot needs
 * it. */
static void retire_unwatched(struct daemon *d, const struct pysb_watch *want, bool need_pending)
{
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
}

/*
 * Writes cgroup_watch: for every unit and pattern binding, the paths of the cgroups it
 * will claim and the sandbox the kernel gives them at their creation. Called at the
 * start of each scan (the scan's glob then finds every cgroup created before). Ids that
 * leave the map are retired (removed after the scan's settle): a previous daemon's, a
 * replaced policy's, a removed binding's.
 */
void watch_sync(struct daemon *d)
{
	struct pysb_watch *want = calloc(PYSB_MAX_WATCH, sizeof(*want));
	bool need_pending = false;

	if (!want)
		return;
	if (!d->watch) {
		d->watch = calloc(PYSB_MAX_WATCH, sizeof(*d->watch));
		if (!d->watch) {
			free(want);
			return;
		}
		for (uint32_t i = 0; i < PYSB_MAX_WATCH; i++)
			bpf_map_lookup_elem(d->l.fd.cgroup_watch, &i, &d->watch[i]);
	}
	want_slots(d, want, &need_pending);
	write_slots(d, want);
	retire_unwatched(d, want, need_pending);
	memcpy(d->watch, want, PYSB_MAX_WATCH * sizeof(*want));
	free(want);
}

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
	if (loader_sandbox_of(&d->l, cgid, &cfg) ||
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

/* One binding at the scan: its targets still there are kept, those gone (or no longer
 * named) released, the new cgroups it names confined. */
static void scan_binding(struct daemon *d, struct binding *b)
{
	char **paths = NULL;
	size_t n = binding_paths(b, d->cgroot, &paths);
	bool no_answer = b->query_failed, gone; /* query_failed: set by binding_paths */
	size_t failed = 0;

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
			if (paths[k] && !strcmp(paths[k], b->t[j]->path) && !stat(paths[k], &st) &&
			    st.st_ino == b->t[j]->cgid) {
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
		if (v)
			b->t = v;
		t = v ? target_add(d, b, paths[k]) : NULL;
		if (t)
			b->t[b->n_t++] = t;
		else
			failed++;
		free(paths[k]);
	}
	free(paths);
	b->m.targets = b->n_t;
	b->m.failed = failed;
	/* Said, not silent (found by a user: `daemon --once` on a cgroup not made yet said
	 * "binding worker ... enforce" and exited 0, confining nothing). */
	if (b->conf.kind == TARGET_CGROUP && !b->n_t && !failed && !b->missing)
		pr_warn("binding %s: cgroup %s does not exist: nothing is confined by it until it "
			"is made%s",
			b->conf.name, b->conf.target,
			d->o->once ? "; make it first (mkdir), or leave the daemon running"
				   : " (the next scan confines it)");
	b->missing = b->conf.kind == TARGET_CGROUP && !b->n_t && !failed;
}

/* Confines the cgroups that appeared, releases those that are gone (or re-created:
 * a restarted unit gets a new cgroup, with a new id). */
void scan(struct daemon *d)
{
	/* First: from here on the kernel confines what the globs below do not see yet. */
	watch_sync(d);
	d->n_held_next = 0;
	for (size_t i = 0; i < d->n_b; i++)
		scan_binding(d, d->b[i]);
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

/* Appends id to *v (*n of them); out of memory: not kept (it is said again next scan). */
static void push_id(uint64_t **v, size_t *n, uint64_t id)
{
	uint64_t *nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (nv) {
		*v = nv;
		(*v)[(*n)++] = id;
	}
}

/* Why an unclaimed daemon entry goes, or (*keep) why it stays: never unconfine on doubt.
 * r: its record (rec: there is one, of the daemon). */
static const char *orphan_verdict(struct daemon *d, uint64_t cgid, const struct sandbox_record *r,
				  bool rec, const char **keep)
{
	struct binding *b = rec ? binding_find(d, r->binding) : NULL;

	*keep = NULL;
	if (cgroup_gone(d, cgid, rec ? r->cgroup : NULL))
		return "the cgroup is gone";
	if (d->rejected_lost || (rec && rejected_has(d, r->binding)))
		*keep = "its binding cannot be read or compiled: its last rules stay in force";
	else if (!rec && d->n_rejected)
		*keep = "no record names its binding and a binding was rejected: its rules stay "
			"in force";
	else if (b && b->conf.kind == TARGET_UNIT)
		*keep = "its unit's binding stands: it stays until the cgroup is gone";
	else if (b && (b->conf.kind == TARGET_CGROUP
			       ? !strcmp(b->conf.target, r->cgroup)
			       : !fnmatch(b->conf.target, r->cgroup, FNM_PATHNAME)))
		*keep = "its binding names it but could not confine it now: its rules stay in "
			"force";
	else if (!rec)
		return "no binding claims it";
	else if (b)
		return "its binding does not name it any more";
	else
		return "its binding file was removed";
	return NULL;
}

/*
 * Entries flagged PYSB_SB_DAEMON that no target of this daemon claims. Released only when
 * no binding may still want them: the binding their record names was removed (while no
 * daemon ran, or while it was rejected). Kept, with the rules they have, when that
 * binding is there but cannot be read or compiled, or when no record says whose they are
 * and some binding was rejected: never unconfine on doubt.
 */
void release_orphans(struct daemon *d)
{
	uint64_t key, next, *prev = NULL, *kept = NULL, *kun = NULL;
	size_t n_kept = 0, n_kun = 0;

	while (!loader_sandbox_next(&d->l, prev, &next)) {
		struct pysb_sandbox_cfg cfg;
		struct sandbox_record r;
		bool claimed = false, rec, gone;
		const char *keep = NULL, *why;
		char prefix[64];

		claimed = held_has(d, next); /* held until its first execve (held_wait) */
		for (size_t i = 0; i < d->n_b && !claimed; i++)
			for (size_t j = 0; j < d->b[i]->n_t && !claimed; j++)
				claimed = d->b[i]->t[j]->cgid == next;
		if (claimed || loader_sandbox_of(&d->l, next, &cfg) ||
		    !(cfg.flags & PYSB_SB_DAEMON))
			goto next;
		if (cfg.flags & PYSB_SB_KERNEL) {
			/* Confined at its creation, claimed by no scan yet. Its id is shared
			 * (a template, the pending sandbox): only the entry goes. */
			gone = cgroup_gone(d, next, NULL);
			if (!gone &&
			    (!kunclaimed_had(d, next) || d->n_rejected || d->rejected_lost)) {
				push_id(&kun, &n_kun, next);
				goto next;
			}
			pr_info("releasing cgroup id %llu (sandbox %u), confined at its creation: %s",
				(unsigned long long)next, cfg.id,
				gone ? "the cgroup is gone" : "no binding claimed it at two scans");
			loader_remove_sandbox(&d->l, next);
			continue;
		}
		rec = !sandbox_record_read(next, &r) && r.owner == OWNER_DAEMON;
		if (!rec) {
			snprintf(r.binding, sizeof(r.binding), "?");
			snprintf(r.cgroup, sizeof(r.cgroup), "an unrecorded cgroup");
		}
		why = orphan_verdict(d, next, &r, rec, &keep);
		if (keep) {
			push_id(&kept, &n_kept, next);
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
