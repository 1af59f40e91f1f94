/* SPDX-License-Identifier: MIT */
#include "loader_int.h"

/* ---------------- opening and adapting the object */

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && log_level < LOG_DEBUG)
		return 0;
	if (level == LIBBPF_INFO && log_level < LOG_INFO)
		return 0;
	/* libbpf warnings (verifier logs) are only useful with -v. */
	if (level == LIBBPF_WARN && log_level < LOG_INFO)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int hooks_of(const bool prog_on[LOADER_MAX_PROGS], char *buf, size_t len)
{
	size_t off = 0;
	int n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < loader_n_progs; i++) {
		if (!prog_on[i])
			continue; /* not for this kernel (adapt_to_kernel) */
		off += snprintf(buf + off, off < len ? len - off : 0, "%s%s", n ? " " : "",
				loader_progs[i].sec);
		n++;
	}
	return n;
}

/* Hooks some kernels lack: another hook covers the operation there, or the program
 * copes without (each says which). */
static const char *const optional_hooks[] = {
	"file_truncate",     /* 6.2+; ftruncate goes through path_truncate before */
	"key_free",	     /* gone in later kernels: bpf/keys.bpf.c copes without it */
	"file_ioctl_compat", /* 6.8+ (and Debian's 6.1); 32-bit ioctls go through file_ioctl before */
	"inode_set_acl",     /* 6.2+; POSIX ACLs go through inode_setxattr before */
	"inode_remove_acl",   /* 6.2+; and through inode_removexattr */
	"inode_file_setattr", /* 6.17+; file_setattr(2) is new there, the ioctls stay checked */
};

/* Is `name` one of the n names of `list`? */
static bool listed(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

bool is_optional(const char *hook)
{
	return listed(hook, optional_hooks, sizeof(optional_hooks) / sizeof(optional_hooks[0]));
}

/* Number of parameters of the kernel's bpf_lsm_<hook>, or -1. */
static int hook_arity(const struct btf *vmlinux, const char *hook)
{
	char name[128];
	const struct btf_type *t;
	int id;

	snprintf(name, sizeof(name), "bpf_lsm_%s", hook);
	id = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC);
	if (id < 0)
		return -1;
	t = btf__type_by_id(vmlinux, btf__type_by_id(vmlinux, id)->type);
	return t ? btf_vlen(t) : -1;
}

/*
 * The same binary on every kernel: hooks this kernel lacks are left out when another hook
 * covers the operation (and refused otherwise); hook signatures that changed are told to
 * the programs through read-only data.
 */
static int adapt_to_kernel(struct pysb_bpf *skel)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct bpf_program *prog;
	int ret = 0;

	if (!vmlinux) {
		pr_err("cannot read the kernel's BTF (/sys/kernel/btf/vmlinux): %s",
		       strerror(errno));
		return -1;
	}
	bpf_object__for_each_program(prog, skel->obj)
	{
		const char *sec = bpf_program__section_name(prog);

		if (strncmp(sec, "lsm/", 4) || hook_arity(vmlinux, sec + 4) >= 0)
			continue;
		if (is_optional(sec + 4)) {
			pr_debug("hook %s absent from this kernel; covered by another hook",
				 sec + 4);
			bpf_program__set_autoload(prog, false);
			continue;
		}
		pr_err("this kernel has no LSM hook %s, which pysb-bpf needs; see docs/kernels.md",
		       sec + 4);
		ret = -1;
	}
	/* 6.1: inode_setattr(dentry, attr); later: inode_setattr(idmap, dentry, attr) */
	if (hook_arity(vmlinux, "inode_setattr") == 3)
		bpf_program__set_autoload(skel->progs.pysb_inode_setattr, false);
	else
		bpf_program__set_autoload(skel->progs.pysb_inode_setattr_idmap, false);
	btf__free(vmlinux);
	return ret;
}

/*
 * Programs that only processes confined in place can need, on a hook every process of the
 * machine passes (file_permission: every read and write): not attached when the instance
 * is loaded, but by the first `attach` or daemon (loader_inplace_hooks), and then until
 * the instance goes. A machine that only runs programs under `run` never pays for them:
 * a run's program starts with nothing its caller did not pass. Each returns at once for
 * a sandbox without PYSB_SB_INPLACE, so whether they are attached changes no verdict.
 */
static const char *const inplace_progs[] = {
	"pysb_file_permission",
};

bool loader_prog_inplace(const char *name)
{
	return listed(name, inplace_progs, sizeof(inplace_progs) / sizeof(inplace_progs[0]));
}

bool loader_prog_unattached(const char *sec, const char *name)
{
	return !strncmp(sec, "cgroup/", 7) || loader_prog_inplace(name);
}

/* A program kept unattached (cgroup/, in place): the loading process's own descriptor, or
 * a new one from its pin (the caller closes that one: !l->loaded); -1 and errno. */
static int prog_fd_of(const struct loader *l, const char *name)
{
	char p[PATH_MAX];

	if (l->loaded)
		return bpf_program__fd(bpf_object__find_program_by_name(l->skel->obj, name));
	pin_path(p, sizeof(p), l->pin_dir, "prog", name);
	return bpf_obj_get(p);
}

int loader_inplace_hooks(struct loader *l)
{
	char p[PATH_MAX];

	for (size_t i = 0; i < loader_n_progs; i++) {
		const struct pysb_prog_info *pi = &loader_progs[i];
		int prog_fd, link_fd, err = 0;

		if (!l->prog_on[i] || !loader_prog_inplace(pi->name))
			continue;
		pin_path(p, sizeof(p), l->pin_dir, "link", pi->name);
		if (!access(p, F_OK))
			continue; /* attached by an earlier attach or daemon */
		prog_fd = prog_fd_of(l, pi->name);
		if (prog_fd < 0)
			return -errno;
		link_fd = bpf_link_create(prog_fd, 0, BPF_LSM_MAC, NULL);
		if (link_fd < 0)
			err = -errno;
		if (!l->loaded)
			close(prog_fd);
		if (err)
			return err;
		/* Another attach pinned its link meanwhile: that one stays, ours goes. */
		pin_path(p, sizeof(p), l->pin_dir, "link", pi->name);
		if (bpf_obj_pin(link_fd, p) && errno != EEXIST)
			err = -errno;
		close(link_fd);
		if (err)
			return err;
	}
	return 0;
}

int loader_hooks(const struct loader *l, char *buf, size_t len)
{
	return hooks_of(l->prog_on, buf, len);
}

/* Opens the object and fits it to this kernel; nothing is loaded yet. */
static struct pysb_bpf *open_adapted(const char **what, int *err)
{
	/* PYSB_BPF_VERIFIER_STATS=1 (with -vv): each program's verification time, stack
	 * depths and instructions processed, per global function too (docs/kernels.md) */
	LIBBPF_OPTS(bpf_object_open_opts, opts,
		    .kernel_log_level = getenv("PYSB_BPF_VERIFIER_STATS") ? 4 : 0);
	struct bpf_program *prog;
	struct pysb_bpf *skel;

	libbpf_set_print(libbpf_log);
	*what = "open";
	skel = pysb_bpf__open_opts(&opts);
	if (!skel) {
		*err = errno;
		return NULL;
	}
	if (adapt_to_kernel(skel)) {
		*what = "kernel check";
		*err = ENOTSUP;
		pysb_bpf__destroy(skel);
		return NULL;
	}
	/* cgroup/ programs (socket hooks) attach to cgroups, not globally: once to the
	 * parent of the runs' cgroups (loader_attach_runs), and by the daemon to each cgroup
	 * it confines (loader_attach_cgroup_pinned). The in-place programs: on demand. */
	bpf_object__for_each_program(
		prog, skel->obj) if (loader_prog_unattached(bpf_program__section_name(prog),
							    bpf_program__name(prog)))
		bpf_program__set_autoattach(prog, false);
	return skel;
}

static int load_and_attach(struct pysb_bpf *skel, const char **what, int *err)
{
	int ret;

	*what = "load";
	ret = pysb_bpf__load(skel);
	if (!ret) {
		*what = "attach";
		ret = pysb_bpf__attach(skel);
	}
	if (ret)
		*err = -ret;
	return ret;
}

/*
 * Labels by batch (struct pysb_label_req): label_arm puts an empty request of thread
 * `tid` (the caller's) in `label_reqs`; then each label_ask, an fstatfs(2) of a
 * descriptor, has lsm/sb_statfs append the label of its inode; label_collect reads the
 * `n` asked since, in order. At most PYSB_LABEL_BATCH between an arm and a collect;
 * label_end removes the request.
 */
int label_arm(int reqs, uint32_t tid)
{
	struct pysb_label_req r = { .state = PYSB_LABEL_PENDING };

	return bpf_map_update_elem(reqs, &tid, &r, BPF_ANY) ? -errno : 0;
}

int label_ask(int fd)
{
	struct statfs sfs;

	return fstatfs(fd, &sfs) ? -errno : 0;
}

/* The labels of the `n` descriptors fds[] asked in that order: 0, or the first of them
 * that has no label in *given: -ENOSPC (every label in use), -ENOTSUP (not answered:
 * lsm/sb_statfs not attached), -EPROTO (answered for another descriptor). The labels
 * before it are in labels[]. */
int label_collect(int reqs, uint32_t tid, const int *fds, uint64_t *labels, size_t n, size_t *given)
{
	struct pysb_label_req r;

	*given = 0;
	if (bpf_map_lookup_elem(reqs, &tid, &r))
		return -ENOTSUP;
	for (; *given < n && *given < r.n && *given < PYSB_LABEL_BATCH; (*given)++) {
		if (r.fd[*given] != fds[*given])
			return -EPROTO;
		if (!r.label[*given])
			return -ENOTSUP;
		labels[*given] = r.label[*given];
	}
	if (*given == n)
		return 0;
	return r.state == PYSB_LABEL_FULL ? -ENOSPC : -ENOTSUP;
}

void label_end(int reqs, uint32_t tid)
{
	bpf_map_delete_elem(reqs, &tid);
}

/* Labels two descriptors of "/" and one of another inode: one label per inode object. */
static int probe_labels(int reqs)
{
	int fd[3] = { open("/", O_PATH | O_CLOEXEC), open("/", O_PATH | O_CLOEXEC),
		      open("/proc/self", O_PATH | O_CLOEXEC | O_NOFOLLOW) };
	uint64_t label[3] = { 0 };
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	size_t given;
	int err = label_arm(reqs, tid);

	for (int i = 0; i < 3 && !err; i++)
		err = fd[i] < 0 ? -errno : label_ask(fd[i]);
	if (!err)
		err = label_collect(reqs, tid, fd, label, 3, &given);
	label_end(reqs, tid);
	for (int i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	if (!err && (label[0] != label[1] || label[0] == label[2]))
		err = -EPROTO;
	return err;
}

/*
 * The overlays mounted before the programs were loaded: statfs(2) of each lets
 * lsm/sb_statfs note its creator cred (bpf/file.bpf.c), so overlayfs' own capability
 * checks in a sandboxed task's first lookup there are known as the overlay's
 * (bpf/caps.bpf.c). Later mounts are noted by lsm/sb_kern_mount. Mounts of other mount
 * namespaces are noted the first time a sandboxed task's file hook meets them. Overlays
 * this table does not list because they lie outside our root (a chroot or a pivoted
 * mount namespace over an overlay-rooted host) are noted as the layers of the overlay
 * that is our root (bpf/overlay.bpf.c).
 */
static void note_overlays(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char mnt[PATH_MAX], type[64], *sep = strstr(line, " - ");
		struct statfs st;

		/* id parent major:minor root MOUNTPOINT options ... - TYPE source ... */
		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s", type) != 1 || strcmp(type, "overlay"))
			continue;
		if (statfs(mnt, &st))
			pr_debug("statfs %s (an overlay to note): %s", mnt, strerror(errno));
	}
	free(line);
	fclose(f);
}

/* ---------------- start, probe, gc */

/*
 * Can this kernel run the programs? This build's pinned instance, when there is one, was
 * loaded and attached by this kernel: its programs answer, and the labelling round trip
 * is tried on it (a label on "/" and /proc/self costs nothing to anyone). Otherwise, or
 * with `fresh`, a private load + attach + detach (the verifier checks every program).
 */
int loader_probe(bool fresh, bool *pinned, const char **what, int *err, char *hooks, size_t len)
{
	struct pysb_bpf *skel = NULL;
	struct loader_maps maps;
	bool prog_on[LOADER_MAX_PROGS];
	char dir[PATH_MAX];
	int ret;

	*pinned = false;
	loader_maps_init(&maps);
	pin_dir_of(dir, sizeof(dir));
	if (!fresh && !access(dir, F_OK))
		*pinned = !open_pinned(dir, &maps, prog_on, what, err);
	if (!*pinned) {
		skel = open_adapted(what, err);
		if (!skel)
			return -1;
		ret = load_and_attach(skel, what, err);
		if (ret)
			goto out;
		progs_of_skel(skel, prog_on);
	}
	hooks_of(prog_on, hooks, len);
	ret = probe_labels(*pinned ? maps.label_reqs : bpf_map__fd(skel->maps.label_reqs));
	if (ret) {
		*what = "labelling a rule inode (lsm/sb_statfs)";
		*err = -ret;
	}
out:
	loader_maps_close(&maps);
	pysb_bpf__destroy(skel);
	return ret ? -1 : 0;
}

bool loader_pinned(void)
{
	char dir[PATH_MAX];

	pin_dir_of(dir, sizeof(dir));
	return !access(dir, F_OK);
}

int loader_start(struct loader *l, const char **what, int *err)
{
	char tmp[128];
	int lock = -1, ret = -1;

	memset(l, 0, sizeof(*l));
	l->ringbuf_fd = -1;
	loader_maps_init(&l->fd);
	*what = "bpffs";
	*err = EIO;
	if (ensure_bpffs())
		return -1;
	mkdir(PIN_ROOT, 0700);
	pin_dir_of(l->pin_dir, sizeof(l->pin_dir));
	/* One loader at a time decides whether the shared instance exists. */
	lock = open(LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock < 0 || flock(lock, LOCK_EX)) {
		pr_err("cannot lock %s: %s%s", LOCK_FILE, strerror(errno),
		       errno == EACCES && geteuid() ? NOT_ROOT_HINT : "");
		*what = NULL; /* said: no second line about programs that were never tried */
		goto out;
	}
	remove_stale_tmp();
	remove_idle_instances(l->pin_dir);
	stopwatch("loader: lock + stale");
	if (!access(l->pin_dir, F_OK)) {
		ret = open_pinned(l->pin_dir, &l->fd, l->prog_on, what, err);
		stopwatch("loader: open pinned");
		if (!ret)
			pr_info("using the pysb-bpf programs pinned in %s", l->pin_dir);
		goto out;
	}
	l->skel = open_adapted(what, err);
	if (!l->skel)
		goto out;
	ret = load_and_attach(l->skel, what, err);
	progs_of_skel(l->skel, l->prog_on);
	if (!ret) {
		*what = "maps";
		ret = loader_maps_of(&l->fd, l->skel);
		*err = -ret;
	}
	if (ret)
		goto out;
	l->loaded = true;
	/* Pinned under a temporary name, renamed when complete: a reader never sees half. */
	snprintf(tmp, sizeof(tmp), "%s_tmp_%d", l->pin_dir, getpid());
	*what = "pin";
	ret = pin_all(l->skel, tmp);
	if (!ret && rename(tmp, l->pin_dir))
		ret = -errno;
	if (ret) {
		*err = -ret;
		unpin_dir(tmp);
		goto out;
	}
	pr_info("loaded, attached and pinned the pysb-bpf programs in %s", l->pin_dir);
	note_overlays();
out:
	if (lock >= 0)
		close(lock);
	if (ret) {
		loader_maps_close(&l->fd);
		pysb_bpf__destroy(l->skel);
		l->skel = NULL;
	}
	l->started = !ret;
	return ret ? -1 : 0;
}

void loader_gc(struct loader *l, const uint64_t *alive, size_t n_alive)
{
	int map = l->fd.sandboxes;
	uint64_t key, next, *prev = NULL;

	while (!bpf_map_get_next_key(map, prev, &next)) {
		struct pysb_sandbox_cfg cfg;
		bool found = false;

		for (size_t i = 0; i < n_alive && !found; i++)
			found = alive[i] == next;
		/* the daemon's are its own to keep; a cgroup made and registered by another run
		 * since `alive` was read is there when asked again (else its program would run
		 * with no sandbox) */
		if (!found && !bpf_map_lookup_elem(map, &next, &cfg) &&
		    !(cfg.flags & PYSB_SB_DAEMON) && !sandbox_cgroup_id_listed(next)) {
			pr_info("removing sandbox %u: its cgroup (id %llu) is gone", cfg.id,
				(unsigned long long)next);
			loader_sandbox_free(l, next, cfg.id);
			sandbox_record_remove(next);
			continue;
		}
		key = next;
		prev = &key;
	}
}

/* ---------------- cgroups: socket programs */

int loader_attach_cgroup_pinned(struct loader *l, int cgroup_fd, const char *pin_prefix,
				int *link_fds, int *n_links, int max_links)
{
	char p[PATH_MAX];

	for (size_t i = 0; i < loader_n_progs; i++) {
		const struct pysb_prog_info *pi = &loader_progs[i];
		int prog_fd, link_fd;

		if (strncmp(pi->sec, "cgroup/", 7) || !l->prog_on[i])
			continue;
		if (link_fds && *n_links == max_links)
			return -E2BIG;
		prog_fd = prog_fd_of(l, pi->name);
		if (prog_fd < 0)
			return -errno;
		link_fd = bpf_link_create(prog_fd, cgroup_fd, pi->attach_type, NULL);
		if (!l->loaded)
			close(prog_fd);
		if (link_fd < 0)
			return -errno;
		/* Pinned too: a SIGKILLed supervisor leaves its sandbox's sockets confined. */
		snprintf(p, sizeof(p), "%s/%s-%s", l->pin_dir, pin_prefix, pi->name);
		if (bpf_obj_pin(link_fd, p)) {
			int err = -errno;

			close(link_fd);
			return err;
		}
		if (link_fds)
			link_fds[(*n_links)++] = link_fd;
		else
			close(link_fd); /* the pin holds it */
	}
	return 0;
}

int loader_links_pinned(const struct loader *l, const char *pin_prefix)
{
	char p[PATH_MAX];
	int n = 0;

	for (size_t i = 0; i < loader_n_progs; i++) {
		if (strncmp(loader_progs[i].sec, "cgroup/", 7) || !l->prog_on[i])
			continue;
		snprintf(p, sizeof(p), "%s/%s-%s", l->pin_dir, pin_prefix, loader_progs[i].name);
		if (access(p, F_OK))
			return 0;
		n++;
	}
	return n;
}

void loader_unpin_links(const struct loader *l, const char *pin_prefix)
{
	char p[PATH_MAX];

	for (size_t i = 0; i < loader_n_progs; i++) {
		if (strncmp(loader_progs[i].sec, "cgroup/", 7))
			continue; /* only the socket programs are attached per cgroup */
		snprintf(p, sizeof(p), "%s/%s-%s", l->pin_dir, pin_prefix, loader_progs[i].name);
		unlink(p);
	}
}

int loader_attach_runs(struct loader *l, const char *run_cgroup)
{
	char parent[PATH_MAX], *slash;
	int lock, fd, err;

	if (loader_links_pinned(l, RUNS_PREFIX))
		return 0;
	snprintf(parent, sizeof(parent), "%s", run_cgroup);
	slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return -EINVAL;
	*slash = '\0';
	/* Once per instance: whoever holds the lock first attaches, the others see the pins. */
	lock = open(LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock < 0 || flock(lock, LOCK_EX)) {
		err = -errno;
		if (lock >= 0)
			close(lock);
		return err;
	}
	err = 0;
	if (!loader_links_pinned(l, RUNS_PREFIX)) {
		loader_unpin_links(l, RUNS_PREFIX); /* a partial set: start over */
		fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = fd < 0 ? -errno
			     : loader_attach_cgroup_pinned(l, fd, RUNS_PREFIX, NULL, NULL, 0);
		if (fd >= 0)
			close(fd);
		if (err)
			loader_unpin_links(l, RUNS_PREFIX);
		else
			pr_info("socket programs attached to %s, for every run below it", parent);
	}
	close(lock);
	return err;
}

void loader_stop(struct loader *l)
{
	/* (a run attaches no link of its own: the socket programs are attached once above
	 * the runs' cgroups, loader_attach_runs) */
	if (l->ringbuf_fd >= 0)
		close(l->ringbuf_fd);
	l->ringbuf_fd = -1;
	stopwatch("stop: ring fd closed");
	loader_pool_release(l);
	stopwatch("stop: pool released");
	/* Destroying the skeleton drops this process's references only: the pins keep the
	 * shared instance attached. */
	loader_unmap_sandbox_gen(l);
	if (l->started)
		loader_maps_close(&l->fd);
	l->started = false;
	pysb_bpf__destroy(l->skel);
	l->skel = NULL;
}
