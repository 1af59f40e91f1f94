/* SPDX-License-Identifier: MIT */
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
#include "daemon_int.h"
#include "systemd_lib.h"
#include "untampered.h"

/* cgroup_born: the kernel confined a cgroup at its creation; the loop scans at once. */
static int on_born(void *ctx, void *data, size_t len)
{
	(void)data;
	(void)len;
	((struct daemon *)ctx)->born_seen = true;
	return 0;
}

/* ---------------- events */

int64_t now_ms(void)
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
	d->jrec = (struct journal_record){
		.e = e, .binding = t->b->conf.name, .target = t->path, .policy = &t->b->c
	};
	events_json_event(&d->ev, e);
	d->jrec.e = NULL;
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
	if (err < 0)
		pr_warn("cannot read the kernel's counts of repeated events: %s", strerror(-err));
}

/* The ring buffers of every target, read by one poller; rebuilt when the set changes
 * (what was not read yet stays in each ring: its read position is the ring's own). */
void rb_rebuild(struct daemon *d)
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

/*
 * The --events file, appended to as root, where a binding's program may write (found by
 * adversaries: for `run --events`, a link at the file's name had root fill its ~/.bashrc
 * with event lines and a FIFO hung the open; for the daemon, a bound service replaced
 * the file's directory with a link to /etc/bash_completion.d, and the next rotation, or
 * restart, had root write there lines a root shell ran). Its directory is opened once,
 * through no link at all; the file, its rotations and its reopenings are made below that
 * descriptor, through no link: a regular file, or a FIFO its reader holds open (a log
 * shipper's; the open never waits). A directory swapped afterwards moves nothing. NULL
 * when refused or failed, said.
 */
static FILE *open_event_file(struct daemon *d, const char *what)
{
	const char *wait_ms = getenv("PYSB_TEST_FIFO_WAIT_MS"); /* tests: not 10 s each */
	int fd = -1, tries = wait_ms ? atoi(wait_ms) / 100 : 100;
	struct stat st;
	FILE *f;

	/* a FIFO read by a log shipper: written once its reader has it open, waited for 10 s
	 * at most (a FIFO a service put there must not hang the daemon) */
	if (tries < 1)
		tries = 1;
	for (int i = 0; i < tries; i++) {
		fd = open_regular_at(d->events_dir, d->events_name,
				     O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK, 0644);
		if (fd != -1 || errno != ENXIO)
			break;
		usleep(100 * 1000);
	}

	if (fd == -2 || (fd < 0 && errno == ELOOP)) {
		pr_err("cannot open the %s %s: it is %s; the daemon writes it as root where a "
		       "bound service may have made it: name a regular file",
		       what, d->o->events,
		       fd == -2 ? "no regular file or FIFO (a device, a socket)"
				: "a symbolic link");
		return NULL;
	}
	if (fd >= 0 && !fstat(fd, &st) && st.st_nlink > 1) {
		pr_err("cannot open the %s %s: it has other names (hard links), one of which a "
		       "bound service could have chosen: name a file of its own",
		       what, d->o->events);
		close(fd);
		return NULL;
	}
	f = fd < 0 ? NULL : fdopen(fd, "a");
	if (!f && errno == ENXIO)
		pr_err("cannot open the %s %s: it is a FIFO that nothing read for %.1f s: start "
		       "its reader first",
		       what, d->o->events, tries / 10.0);
	else if (!f) {
		pr_err("cannot open the %s %s: %s", what, d->o->events, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return f;
}

/* The directory of --events FILE, once (open_event_file). 0, or -1 after saying why. */
static int open_event_dir(struct daemon *d, const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	d->events_name = slash ? slash + 1 : path;
	if (!*d->events_name) {
		pr_err("--events %s names a directory: name a file", path);
		return -1;
	}
	if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		snprintf(dir, sizeof(dir), ".");
	d->events_dir = open_no_links(dir, O_PATH | O_DIRECTORY, 0);
	if (d->events_dir < 0) {
		pr_err("cannot open the event file's directory %s: %s", dir,
		       errno == ELOOP ? "it is reached through a symbolic link, which a bound "
					"service could have made: name it by its real path"
				      : strerror(errno));
		return -1;
	}
	if (!realpath(dir, d->events_dir_path))
		d->events_dir_path[0] = '\0';
	return 0;
}

/* Beyond the size limit the file becomes FILE.1 (FILE.1 FILE.2, ...) and a new one starts. */
static void rotate_events(struct daemon *d)
{
	const struct daemon_opts *o = d->o;
	char from[NAME_MAX + 16], to[NAME_MAX + 16];
	struct stat st;
	FILE *f;

	/* the size of the file, not the FILE's idea of it: lines are written with write(2) */
	if (!o->events_max_size || d->out == stdout || d->events_dir < 0 ||
	    fstat(fileno(d->out), &st) || (uint64_t)st.st_size < o->events_max_size)
		return;
	for (unsigned k = o->events_keep; k >= 1; k--) {
		snprintf(from, sizeof(from), k == 1 ? "%s" : "%s.%u", d->events_name, k - 1);
		snprintf(to, sizeof(to), "%s.%u", d->events_name, k);
		if (renameat(d->events_dir, from, d->events_dir, to) && errno != ENOENT)
			pr_warn("cannot rotate %s to %s: %s", from, to, strerror(errno));
	}
	f = open_event_file(d, "new event file");
	if (!f) {
		pr_err("events go on into %s.1", o->events);
		return;
	}
	fclose(d->out);
	d->out = f;
	d->ev.out = f;
}

/* `--once`: 0 when every binding confines what it names; 1, said, when a `cgroup` binding
 * names a cgroup that does not exist or a cgroup could not be confined (a provisioning
 * script must not believe it confined). */
static int once_result(const struct daemon *d)
{
	size_t missing = 0, failed = 0;

	for (size_t i = 0; i < d->n_b; i++) {
		missing += d->b[i]->missing;
		failed += d->b[i]->m.failed > 0;
	}
	if (missing)
		pr_err("%zu binding(s) confine nothing: their cgroup does not exist (above)",
		       missing);
	if (failed) /* found by a review: exit 0 after a failure to confine */
		pr_err("%zu binding(s) could not confine every cgroup they name (above)", failed);
	return missing || failed ? 1 : 0;
}

/* ---------------- the loop */

/* force: every binding is switched, changed or not (SIGHUP: the operator asks; exposed
 * directories may have been re-created, host names may resolve elsewhere). */
void reload(struct daemon *d, const char *why, bool force)
{
	int errors;

	pr_info("reloading (%s)", why);
	notify_reloading();
	d->reloading = true;
	errors = read_config(d, true, force);
	scan(d);
	d->reloading = false;
	notify_reloaded(d);
	metrics_count_reload(&d->m, errors == 0);
	if (errors)
		pr_err("reload: %d binding(s) rejected (above); every other binding is in force",
		       errors);
}

static int open_output(struct daemon *d)
{
	const struct daemon_opts *o = d->o;

	bool journal = o->events && !strcmp(o->events, "journal");
	bool own = o->events && own_descriptor_name(o->events);

	if (journal && !systemd_lib("--events journal cannot write to the journal"))
		return -1;
	if (!o->events || !strcmp(o->events, "-") || journal)
		d->out = stdout;
	else if (own)
		d->out = fopen(o->events, "ae"); /* the caller's own: no rotation */
	else
		d->out = open_event_dir(d, o->events) ? NULL : open_event_file(d, "event file");
	if (!d->out) {
		if (own) /* the other two said why */
			pr_err("cannot open the event file %s: %s", o->events, strerror(errno));
		return -1;
	}
	if (events_json_init(&d->ev, d->out,
			     journal		? "the journal"
			     : d->out == stdout ? "stdout"
						: o->events,
			     "daemon", NULL))
		return -1;
	d->ev.direct = true; /* on_event: written before the record is acknowledged */
	if (journal) {
		d->ev.line_sink = journal_sink;
		d->ev.sink_ctx = d;
	}
	return 0;
}

/* Each binding holds its rule paths open and each cgroup its ring buffer: fifty bindings
 * pass the usual soft limit of 1024 (the pins raise it on EMFILE, a ring buffer created
 * next does not). */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The loop: events as they come, signals (SIGHUP reloads, SIGTERM/SIGINT stop), changes of
 * the configuration directory (settled 200 ms, then one reload), cgroups the kernel
 * confined at their creation, and the scan every rescan_ms. Until told to stop. */
static void run_loop(struct daemon *d, int sigfd, int ino)
{
	int64_t next_scan, reload_at = -1;
	bool stop = false;

	next_scan = now_ms() + d->o->rescan_ms;
	while (!stop) {
		struct pollfd fds[4] = {
			{ .fd = d->rb ? ring_buffer__epoll_fd(d->rb) : -1, .events = POLLIN },
			{ .fd = sigfd, .events = POLLIN },
			{ .fd = ino, .events = POLLIN },
			{ .fd = d->born ? ring_buffer__epoll_fd(d->born) : -1, .events = POLLIN },
		};
		int64_t now = now_ms(), wait = next_scan - now, wd = notify_watchdog(d, now);
		int n;

		if (reload_at >= 0 && reload_at - now < wait)
			wait = reload_at - now;
		if (wd >= 0 && wd < wait)
			wait = wd;
		n = poll(fds, 4, wait < 0 ? 0 : (int)wait);
		if (n < 0 && errno != EINTR) {
			pr_err("poll: %s", strerror(errno));
			break;
		}
		metrics_lock(&d->m);
		if (n > 0 && fds[0].revents && d->rb)
			ring_buffer__consume(d->rb);
		if (n > 0 && (fds[1].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP)
					reload(d, "SIGHUP", true);
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
			reload(d, "the configuration directory changed", false);
		}
		if (n > 0 && fds[3].revents && d->born)
			ring_buffer__consume(d->born);
		if (d->born_seen && now < next_scan) {
			d->born_seen = false;
			scan(d);
		}
		if (now >= next_scan) {
			d->born_seen = false;
			scan(d);
			sweep_repeats(d);
			lost_records(d);
			next_scan = now + d->o->rescan_ms;
			notify_status(d);
		}
		if (d->rb)
			ring_buffer__consume(d->rb);
		events_json_flush(&d->ev);
		events_json_sync(&d->ev);
		rotate_events(d);
		metrics_unlock(&d->m);
	}
}

/* Everything of the bindings, once the loop is over (their cgroups stay confined). */
static void bindings_free(struct daemon *d)
{
	for (size_t i = 0; i < d->n_b; i++) {
		for (size_t j = 0; j < d->b[i]->n_t; j++)
			target_free(d->b[i]->t[j]);
		if (d->b[i]->tmpl)
			target_free(d->b[i]->tmpl);
		free(d->b[i]->t);
		compiled_free(&d->b[i]->c);
		free(d->b[i]);
	}
	free(d->b);
	free(d->retired);
	free(d->rejected);
	free(d->kept);
	free(d->kunclaimed);
	free(d->held);
	free(d->held_next);
	free(d->watch);
	if (d->pending_id)
		close(d->pending_rb);
}

/*
 * One daemon at a time (PYSB_DAEMON_LOCK, held until it exits; the kernel drops it when
 * it dies, SIGKILL included). One that is stopping is waited for (a restart); one that
 * stays holds it: refused. The lock's fd, or -1 after saying why.
 */
static int daemon_lock(void)
{
	char pid[32] = "?";
	int fd, n;

	if (mkdir("/run/pysb-bpf", 0755) && errno != EEXIST) {
		pr_err("cannot create /run/pysb-bpf for the daemon's lock: %s", strerror(errno));
		return -1;
	}
	fd = open(PYSB_DAEMON_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		pr_err("cannot open the daemon's lock %s: %s", PYSB_DAEMON_LOCK, strerror(errno));
		return -1;
	}
	for (int i = 0; flock(fd, LOCK_EX | LOCK_NB); i++) {
		if (errno != EWOULDBLOCK) {
			pr_err("cannot lock %s: %s", PYSB_DAEMON_LOCK, strerror(errno));
			close(fd);
			return -1;
		}
		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		if (i == 0)
			pr_warn("another pysb-bpf daemon (pid %s) holds %s: waiting up to 5 s for it "
				"to stop",
				pid[0] ? pid : "?", PYSB_DAEMON_LOCK);
		if (i == 50) {
			pr_err("another pysb-bpf daemon (pid %s) is running: it holds %s; one daemon "
			       "per machine: stop it first (systemctl stop pysb-bpf)",
			       pid[0] ? pid : "?", PYSB_DAEMON_LOCK);
			close(fd);
			return -1;
		}
		usleep(100 * 1000);
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, n, 0) != n)
		pr_warn("cannot write this daemon's pid into %s: %s", PYSB_DAEMON_LOCK,
			strerror(errno));
	return fd;
}

/*
 * Frees every sandbox id a previous daemon allocated (its ring is a daemon's) that
 * neither a cgroup's entry in `sandboxes` nor a cgroup_watch slot names: those a SIGKILL
 * left between their allocation and their switch (a reload's new policy; a retired one
 * not yet removed). An id a cgroup still depends on, confined by a dead daemon or by the
 * kernel at its creation, is kept whatever its record says: it stays confined until the
 * scan adopts or releases it. Under the lock, before the first scan: no daemon can be
 * allocating meanwhile; a `pysb-bpf run` allocates ids with rings of its own.
 */
static void ids_gc(struct daemon *d)
{
	struct sandbox_set mine, used = { 0 }, gone = { 0 };
	uint64_t key, next, *prev = NULL;
	char list[256] = "";
	size_t n = 0, o = 0;
	int err = loader_daemon_ids(&d->l, &mine);

	if (err) {
		pr_warn("cannot list the sandbox ids of previous daemons: %s; ids a daemon killed "
			"during a reload had allocated stay allocated",
			strerror(-err));
		return;
	}
	while (!loader_sandbox_next(&d->l, prev, &next)) {
		struct pysb_sandbox_cfg cfg;

		if (!loader_sandbox_of(&d->l, next, &cfg))
			sandbox_set_add(&used, cfg.id);
		key = next;
		prev = &key;
	}
	for (uint32_t i = 0; i < PYSB_MAX_WATCH; i++) {
		struct pysb_watch w;

		if (!bpf_map_lookup_elem(d->l.fd.cgroup_watch, &i, &w))
			sandbox_set_add(&used, w.cfg.id);
	}
	for (uint32_t id = 1; id < PYSB_MAX_SANDBOXES; id++) {
		if (!sandbox_set_has(&mine, id) || sandbox_set_has(&used, id))
			continue;
		sandbox_set_add(&gone, id);
		n++;
		if (o < sizeof(list))
			o += snprintf(list + o, sizeof(list) - o, "%s%u", o ? " " : "", id);
	}
	if (!n)
		return;
	pr_info("freeing %zu sandbox id(s) a previous daemon left allocated that no cgroup uses "
		"(killed during a reload): %s%s",
		n, list, o >= sizeof(list) ? "..." : "");
	loader_sandboxes_free(&d->l, &gone);
}

/* The signals (a signalfd of the blocked mask) and the configuration directory (inotify:
 * every way a tool writes a file into it). 0, or -1 after saying why. */
static int watch_config(const char *dir, const sigset_t *mask, int *sigfd, int *ino)
{
	*sigfd = signalfd(-1, mask, SFD_CLOEXEC);
	*ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (*sigfd < 0 || *ino < 0 ||
	    inotify_add_watch(*ino, dir,
			      IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE |
				      IN_ATTRIB) < 0) {
		pr_err("cannot watch %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* The kernel side ready, the lock taken, what a killed daemon left allocated freed: the
 * lock's fd, or -1 with the exit status in *ret (after saying why). */
static int daemon_start(struct daemon *d, int *ret)
{
	const char *what, *pause = getenv("PYSB_TEST_RELOAD_PAUSE_MS");
	int err, lock;

	*ret = 125;
	if (probe_run(0))
		return -1;
	raise_nofile();
	lock = daemon_lock();
	if (lock < 0) {
		*ret = 1;
		return -1;
	}
	if (loader_start(&d->l, &what, &err)) {
		probe_report_load_failure(what, err, false);
		close(lock);
		return -1;
	}
	/* every binding confines in place: before the first is registered */
	err = loader_inplace_hooks(&d->l);
	if (err) {
		pr_err("cannot attach the programs of sandboxes confined in place: %s",
		       strerror(-err));
		loader_stop(&d->l);
		close(lock);
		return -1;
	}
	ids_gc(d);
	if (pause)
		d->test_pause_ms = atol(pause);
	return lock;
}

int daemon_main(const struct daemon_opts *o)
{
	struct daemon d = { .o = o, .events_dir = -1 };
	sigset_t mask;
	int ret = 1, sigfd = -1, ino = -1, lock;

	if (cgroup2_mount(d.cgroot, sizeof(d.cgroot))) {
		pr_err("no cgroup2 file system mounted: the daemon binds cgroup2 directories");
		return 1;
	}
	if (o->check) {
		d.o = o;
		return read_config(&d, false, false) ? 1 : 0;
	}
	lock = daemon_start(&d, &ret);
	if (lock < 0)
		return ret;
	/* Blocked before any thread starts (the metrics server's): a thread that had them
	 * unblocked would take SIGHUP's default action, death, instead of a reload. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (open_output(&d) || metrics_init(&d.m, o->metrics))
		goto out;
	if (watch_config(o->config_dir, &mask, &sigfd, &ino))
		goto out;
	metrics_lock(&d.m);
	read_config(&d, true, true);
	scan(&d);
	metrics_unlock(&d.m);
	if (o->once) {
		ret = once_result(&d);
		goto out;
	}
	/* Told at once of a cgroup confined at its creation: scanned then, not a second
	 * later (its socket programs and its own id; bpf/watch.bpf.c). Without, the scan
	 * finds it. */
	d.born = ring_buffer__new(d.l.fd.cgroup_born, on_born, &d, NULL);
	if (!d.born)
		pr_warn("cannot read cgroup_born: %s; cgroups confined at their creation are "
			"completed at the next scan",
			strerror(errno));
	pr_info("watching %s: %zu binding(s)%s%s", o->config_dir, d.n_b,
		o->metrics ? ", metrics on " : "", o->metrics ? o->metrics : "");
	notify_ready(&d);
	run_loop(&d, sigfd, ino);
	notify_stopping();
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
	bindings_free(&d);
	if (d.out && d.out != stdout)
		fclose(d.out);
	if (d.events_dir >= 0)
		close(d.events_dir);
	if (sigfd >= 0)
		close(sigfd);
	if (ino >= 0)
		close(ino);
	d.l.sandbox_id = 0; /* nothing of ours to unpin: the targets stay confined */
	loader_stop(&d.l);
	close(lock); /* last: the next daemon finds nothing half done */
	return ret;
}
