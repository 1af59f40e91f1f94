/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "log.h"
#include "stopwatch.h"
#include "pysb.skel.h"
#include "status.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
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

static int hooks_of(struct pysb_bpf *skel, char *buf, size_t len)
{
	struct bpf_program *prog;
	size_t off = 0;
	int n = 0;

	buf[0] = '\0';
	bpf_object__for_each_program(prog, skel->obj)
	{
		if (!bpf_program__autoload(prog))
			continue; /* not for this kernel (adapt_to_kernel) */
		off += snprintf(buf + off, off < len ? len - off : 0, "%s%s", n ? " " : "",
				bpf_program__section_name(prog));
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
};

static bool is_optional(const char *hook)
{
	for (size_t i = 0; i < sizeof(optional_hooks) / sizeof(optional_hooks[0]); i++)
		if (!strcmp(hook, optional_hooks[i]))
			return true;
	return false;
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

int loader_hooks(const struct loader *l, char *buf, size_t len)
{
	return hooks_of(l->skel, buf, len);
}

/* Opens the object and fits it to this kernel; nothing is loaded yet. */
static struct pysb_bpf *open_adapted(const char **what, int *err)
{
	struct bpf_program *prog;
	struct pysb_bpf *skel;

	libbpf_set_print(libbpf_print);
	*what = "open";
	skel = pysb_bpf__open();
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
	/* cgroup/ programs (socket hooks) attach to each sandbox's cgroup, not globally:
	 * loader_attach_cgroup() does that once the cgroup exists. */
	bpf_object__for_each_program(prog, skel->obj) if (!strncmp(bpf_program__section_name(prog),
								   "cgroup/", 7))
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

/* The label of the inode `fd` holds, given by lsm/sb_statfs at this thread's request. */
static int label_fd(struct bpf_map *reqs, int fd, uint64_t *label)
{
	struct pysb_label_req r = { .state = PYSB_LABEL_PENDING };
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	struct statfs sfs;
	int err = 0;

	if (bpf_map__update_elem(reqs, &tid, sizeof(tid), &r, sizeof(r), BPF_ANY))
		return -errno;
	if (fstatfs(fd, &sfs))
		err = -errno;
	if (bpf_map__lookup_elem(reqs, &tid, sizeof(tid), &r, sizeof(r), 0))
		r.state = 0;
	bpf_map__delete_elem(reqs, &tid, sizeof(tid), 0);
	if (err)
		return err;
	if (r.state == PYSB_LABEL_FULL)
		return -ENOSPC;
	if (r.state != PYSB_LABEL_DONE || !r.label)
		return -ENOTSUP; /* the request was not seen: lsm/sb_statfs not attached */
	*label = r.label;
	return 0;
}

/* Labels two descriptors of "/" and one of another inode: one label per inode object. */
static int probe_labels(struct pysb_bpf *skel)
{
	int fd[3] = { open("/", O_PATH | O_CLOEXEC), open("/", O_PATH | O_CLOEXEC),
		      open("/proc/self", O_PATH | O_CLOEXEC | O_NOFOLLOW) };
	uint64_t label[3] = { 0 };
	int err = 0;

	for (int i = 0; i < 3 && !err; i++)
		err = fd[i] < 0 ? -errno : label_fd(skel->maps.label_reqs, fd[i], &label[i]);
	for (int i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	if (!err && (label[0] != label[1] || label[0] == label[2]))
		err = -EPROTO;
	return err;
}

/*
 * The shared instance. The programs are global and act on registered cgroups only, so
 * one instance serves every sandbox on the machine: the first `run` loads, attaches and
 * pins it under /sys/fs/bpf/pysb-bpf/<object hash>; later runs open the pinned maps and
 * only add their rules. Pinned links stay attached when pysb-bpf dies, so a sandbox whose
 * supervisor was SIGKILLed stays confined (docs/design.md, "Fail closed").
 */
#define PIN_ROOT     PYSB_PIN_ROOT
#define LOCK_FILE    "/run/pysb-bpf.lock"
/* The pins of the socket programs' links on the parent of every run cgroup. */
#define RUNS_PREFIX  "runs"
#define BPF_FS_MAGIC 0xcafe4a11

/*
 * The overlays mounted before the programs were loaded: statfs(2) of each lets
 * lsm/sb_statfs note its creator cred (bpf/file.bpf.c), so overlayfs' own capability
 * checks in a sandboxed task's first lookup there are known as the overlay's
 * (bpf/caps.bpf.c). Later mounts are noted by lsm/sb_kern_mount. Mounts of other mount
 * namespaces are noted the first time a sandboxed task's file hook meets them.
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

uint64_t loader_object_hash(void)
{
	size_t sz;
	const unsigned char *p = pysb_bpf__elf_bytes(&sz);
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < sz; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* Where this build's instance is pinned: named by the object's hash. */
static void pin_dir_of(char *buf, size_t len)
{
	snprintf(buf, len, "%s/%016llx", PIN_ROOT, (unsigned long long)loader_object_hash());
}

static int ensure_bpffs(void)
{
	struct statfs sfs;

	if (!statfs("/sys/fs/bpf", &sfs) && sfs.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		pr_err("no BPF file system at /sys/fs/bpf and mounting one failed: %s; "
		       "mount -t bpf bpf /sys/fs/bpf",
		       strerror(errno));
		return -1;
	}
	return 0;
}

static void pin_path(char *buf, size_t len, const char *dir, const char *kind, const char *name)
{
	snprintf(buf, len, "%s/%s-%s", dir, kind, name);
}

/* Removes a pin directory (its entries first): what is pinned there is released. */
static void unpin_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[PATH_MAX];

	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' &&
		    snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) < (int)sizeof(p))
			unlink(p);
	closedir(d);
	rmdir(dir);
}

static int pin_failed(const char *path)
{
	int err = errno;

	pr_err("cannot pin %s: %s", path, strerror(err));
	return -err;
}

static int pin_all(struct pysb_bpf *skel, const char *dir)
{
	struct bpf_object_skeleton *s = skel->skeleton;
	struct bpf_map *map;
	char p[PATH_MAX];

	if (mkdir(dir, 0700) && errno != EEXIST)
		return pin_failed(dir);
	bpf_object__for_each_map(map, skel->obj)
	{
		if (bpf_map__is_internal(map))
			continue;
		pin_path(p, sizeof(p), dir, "map", bpf_map__name(map));
		if (bpf_map__pin(map, p))
			return pin_failed(p);
	}
	for (int i = 0; i < s->prog_cnt; i++) {
		struct bpf_program *prog = *s->progs[i].prog;
		struct bpf_link *link = *s->progs[i].link;

		if (!bpf_program__autoload(prog))
			continue;
		if (link) {
			pin_path(p, sizeof(p), dir, "link", bpf_program__name(prog));
			if (bpf_link__pin(link, p))
				return pin_failed(p);
		} else {
			/* cgroup/ programs: kept as programs, attached per sandbox */
			pin_path(p, sizeof(p), dir, "prog", bpf_program__name(prog));
			if (bpf_program__pin(prog, p))
				return pin_failed(p);
		}
	}
	return 0;
}

/* Opens the pinned maps of a complete instance into the (opened) skeleton. */
static int reuse_pinned(struct pysb_bpf *skel, const char *dir)
{
	struct bpf_map *map;
	char p[PATH_MAX];

	bpf_object__for_each_map(map, skel->obj)
	{
		int fd, err;

		if (bpf_map__is_internal(map))
			continue;
		pin_path(p, sizeof(p), dir, "map", bpf_map__name(map));
		fd = bpf_obj_get(p);
		if (fd < 0)
			return -errno;
		err = bpf_map__reuse_fd(map, fd);
		close(fd);
		if (err)
			return err;
	}
	return 0;
}

/* Leftovers of a first run that died while loading: <dir>_tmp_<pid> (bpffs refuses dots). */
static void remove_stale_tmp(void)
{
	DIR *d = opendir(PIN_ROOT);
	struct dirent *de;
	char p[PATH_MAX];

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *tmp = strstr(de->d_name, "_tmp_");

		if (!tmp || !kill(atoi(tmp + 5), 0))
			continue;
		snprintf(p, sizeof(p), "%s/%s", PIN_ROOT, de->d_name);
		unpin_dir(p);
	}
	closedir(d);
}

/* Instances of other pysb-bpf builds with no sandbox left: detach them (unpin). */
static void remove_idle_instances(const char *keep)
{
	DIR *d = opendir(PIN_ROOT);
	struct dirent *de;
	char dir[PATH_MAX], p[PATH_MAX + 32];

	if (!d)
		return;
	while ((de = readdir(d))) {
		uint64_t key;
		int fd;

		if (de->d_name[0] == '.' || strstr(de->d_name, "_tmp_"))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", PIN_ROOT, de->d_name);
		if (!strcmp(dir, keep))
			continue;
		snprintf(p, sizeof(p), "%s/map-sandboxes", dir);
		fd = bpf_obj_get(p);
		if (fd < 0)
			continue;
		if (bpf_map_get_next_key(fd, NULL, &key) && errno == ENOENT) {
			pr_info("detaching the idle pysb-bpf instance %s (another build)", dir);
			unpin_dir(dir);
			loader_pool_remove(de->d_name);
		}
		close(fd);
	}
	closedir(d);
}

/*
 * The object of a pinned instance, without reading the kernel's BTF again (the costliest
 * part of a start): what the instance loaded for this kernel is what is pinned.
 */
/* The names in pin directory `dir`, one getdents for all (not one access(2) per program):
 * NUL-separated in a buffer the caller frees; NULL if it cannot be read. */
static char *pin_names(const char *dir, size_t *len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *buf = NULL, *nb;
	size_t cap = 0, n = 0;

	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name) + 1;

		if (n + l > cap) {
			cap = cap ? 2 * cap + l : 8192;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				closedir(d);
				return NULL;
			}
			buf = nb;
		}
		memcpy(buf + n, de->d_name, l);
		n += l;
	}
	closedir(d);
	*len = n;
	return buf ? buf : calloc(1, 1);
}

static bool has_name(const char *names, size_t len, const char *name)
{
	for (size_t off = 0; off < len; off += strlen(names + off) + 1)
		if (!strcmp(names + off, name))
			return true;
	return false;
}

static struct pysb_bpf *open_pinned(const char *dir, const char **what, int *err)
{
	struct bpf_program *prog;
	struct pysb_bpf *skel;
	char p[PATH_MAX], *names;
	size_t n_names = 0;

	libbpf_set_print(libbpf_print);
	*what = "open";
	skel = pysb_bpf__open();
	stopwatch("loader: skeleton opened");
	if (!skel) {
		*err = errno;
		return NULL;
	}
	names = pin_names(dir, &n_names);
	if (!names) {
		*err = errno ? errno : ENOMEM;
		pysb_bpf__destroy(skel);
		return NULL;
	}
	bpf_object__for_each_program(prog, skel->obj)
	{
		const char *sec = bpf_program__section_name(prog);
		bool cg = !strncmp(sec, "cgroup/", 7), pinned;

		pin_path(p, sizeof(p), dir, cg ? "prog" : "link", bpf_program__name(prog));
		pinned = has_name(names, n_names, p + strlen(dir) + 1);
		bpf_program__set_autoload(prog, pinned);
		/* Only a hook this kernel lacks, or the other inode_setattr signature, may be
		 * missing: anything else would be a hole in the sandbox. */
		if (!pinned && (cg || !is_optional(sec + 4)) &&
		    prog != skel->progs.pysb_inode_setattr &&
		    prog != skel->progs.pysb_inode_setattr_idmap) {
			pr_err("the pinned pysb-bpf instance %s lacks %s; remove it (rm -r %s) "
			       "once no sandbox runs, and run again",
			       dir, p, dir);
			*err = ENOENT;
			free(names);
			pysb_bpf__destroy(skel);
			return NULL;
		}
	}
	free(names);
	stopwatch("loader: programs checked");
	*what = "reuse pinned";
	*err = -reuse_pinned(skel, dir);
	if (*err) {
		pysb_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/*
 * Can this kernel run the programs? This build's pinned instance, when there is one, was
 * loaded and attached by this kernel: its programs answer, and the labelling round trip
 * is tried on it (a label on "/" and /proc/self costs nothing to anyone). Otherwise, or
 * with `fresh`, a private load + attach + detach (the verifier checks every program).
 */
int loader_probe(bool fresh, bool *pinned, const char **what, int *err, char *hooks, size_t len)
{
	struct pysb_bpf *skel = NULL;
	char dir[PATH_MAX];
	int ret;

	*pinned = false;
	pin_dir_of(dir, sizeof(dir));
	if (!fresh && !access(dir, F_OK)) {
		skel = open_pinned(dir, what, err);
		*pinned = skel != NULL;
	}
	if (!skel) {
		skel = open_adapted(what, err);
		if (!skel)
			return -1;
		ret = load_and_attach(skel, what, err);
		if (ret)
			goto out;
	}
	hooks_of(skel, hooks, len);
	ret = probe_labels(skel);
	if (ret) {
		*what = "labelling a rule inode (lsm/sb_statfs)";
		*err = -ret;
	}
out:
	pysb_bpf__destroy(skel);
	return ret ? -1 : 0;
}

int loader_start(struct loader *l, const char **what, int *err)
{
	char tmp[128];
	int lock = -1, ret = -1;

	memset(l, 0, sizeof(*l));
	l->ringbuf_fd = -1;
	*what = "bpffs";
	*err = EIO;
	if (ensure_bpffs())
		return -1;
	mkdir(PIN_ROOT, 0700);
	pin_dir_of(l->pin_dir, sizeof(l->pin_dir));
	/* One loader at a time decides whether the shared instance exists. */
	lock = open(LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock < 0 || flock(lock, LOCK_EX)) {
		pr_err("cannot lock %s: %s", LOCK_FILE, strerror(errno));
		goto out;
	}
	remove_stale_tmp();
	remove_idle_instances(l->pin_dir);
	stopwatch("loader: lock + stale");
	if (!access(l->pin_dir, F_OK)) {
		l->skel = open_pinned(l->pin_dir, what, err);
		stopwatch("loader: open pinned");
		if (l->skel) {
			ret = 0;
			pr_info("using the pysb-bpf programs pinned in %s", l->pin_dir);
		}
		goto out;
	}
	l->skel = open_adapted(what, err);
	if (!l->skel)
		goto out;
	ret = load_and_attach(l->skel, what, err);
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
		pysb_bpf__destroy(l->skel);
		l->skel = NULL;
	}
	return ret ? -1 : 0;
}

void loader_gc(struct loader *l, const uint64_t *alive, size_t n_alive)
{
	struct bpf_map *map = l->skel->maps.sandboxes;
	uint64_t key, next, *prev = NULL;

	while (!bpf_map__get_next_key(map, prev, &next, sizeof(next))) {
		struct pysb_sandbox_cfg cfg;
		bool found = false;

		for (size_t i = 0; i < n_alive && !found; i++)
			found = alive[i] == next;
		if (!found &&
		    !bpf_map__lookup_elem(map, &next, sizeof(next), &cfg, sizeof(cfg), 0) &&
		    !(cfg.flags & PYSB_SB_DAEMON)) { /* the daemon's are its own to keep */
			char prefix[32];

			pr_info("removing sandbox %u: its cgroup (id %llu) is gone", cfg.id,
				(unsigned long long)next);
			loader_sandbox_free(l, next, cfg.id);
			sandbox_record_remove(next);
			/* its supervisor died before unpinning the socket links */
			snprintf(prefix, sizeof(prefix), "sb%u", cfg.id);
			loader_unpin_links(l, prefix);
			continue;
		}
		key = next;
		prev = &key;
	}
}

int loader_events_table(const struct loader *l, uint32_t map_ids[PYSB_MAX_SANDBOXES])
{
	static uint32_t keys[PYSB_MAX_SANDBOXES], vals[PYSB_MAX_SANDBOXES];
	int outer = bpf_map__fd(l->skel->maps.events);
	uint32_t batch, count = PYSB_MAX_SANDBOXES;
	int err;

	memset(map_ids, 0, PYSB_MAX_SANDBOXES * sizeof(*map_ids));
	/* One batch: a single lookup of a map of maps waits an RCU grace period on 6.1
	 * (maybe_wait_bpf_programs), a batch does not. It ends with ENOENT when complete. */
	err = bpf_map_lookup_batch(outer, NULL, &batch, keys, vals, &count, NULL);
	if (err && errno != ENOENT)
		return -errno;
	for (uint32_t i = 0; i < count; i++)
		if (keys[i] < PYSB_MAX_SANDBOXES)
			map_ids[keys[i]] = vals[i];
	return 0;
}

int loader_id_alloc(struct loader *l, int ringbuf_fd, uint32_t *id)
{
	static uint32_t table[PYSB_MAX_SANDBOXES];
	int outer = bpf_map__fd(l->skel->maps.events);
	uint32_t start = l->last_id ? l->last_id : (uint32_t)getpid() % (PYSB_MAX_SANDBOXES - 1);
	bool known = !loader_events_table(l, table);

	/* Ids 1..MAX-1; the insertion with BPF_NOEXIST is the atomic allocation. An insertion
	 * that fails costs the kernel as much as one that succeeds (the inner map is taken and
	 * released), so ids seen in use are passed over (from one batch read, else a lookup
	 * each, which costs as much as an insertion on 6.1). */
	for (uint32_t n = 0; n < PYSB_MAX_SANDBOXES - 1; n++) {
		uint32_t cand = 1 + (start + n) % (PYSB_MAX_SANDBOXES - 1), inner;

		if (known ? table[cand] != 0 : !bpf_map_lookup_elem(outer, &cand, &inner))
			continue;
		if (!bpf_map_update_elem(outer, &cand, &ringbuf_fd, BPF_NOEXIST)) {
			*id = cand;
			l->last_id = cand;
			loader_reset_lost_id(l, cand);
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -ENOSPC;
}

int loader_ringbuf_create(uint32_t ringbuf_bytes)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "pysb_events", 0, 0,
				ringbuf_bytes ? ringbuf_bytes : PYSB_RINGBUF_BYTES, NULL);

	return fd < 0 ? -errno : fd;
}

int loader_ringbuf_of(const struct loader *l, uint32_t id)
{
	uint32_t map_id;
	int fd;

	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.events), &id, &map_id))
		return -errno;
	fd = bpf_map_get_fd_by_id(map_id);
	return fd < 0 ? -errno : fd;
}

int loader_sandbox_alloc(struct loader *l, uint32_t *id, uint32_t ringbuf_bytes)
{
	int err;

	if (!ringbuf_bytes || ringbuf_bytes == PYSB_RINGBUF_BYTES) {
		err = loader_pool_claim(l, id);
		if (!err)
			return 0;
		pr_debug("ring pool unavailable (%s): a ring of this run's own", strerror(-err));
	}
	l->ringbuf_fd = loader_ringbuf_create(ringbuf_bytes);
	stopwatch("loader: ring created");
	if (l->ringbuf_fd < 0)
		return l->ringbuf_fd;
	err = loader_id_alloc(l, l->ringbuf_fd, id);
	if (!err)
		l->sandbox_id = *id;
	return err;
}

void loader_reset_lost(struct loader *l)
{
	loader_reset_lost_id(l, l->sandbox_id);
}

void loader_reset_lost_id(struct loader *l, uint32_t id)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t slots[PYSB_LOST_MAX], count = PYSB_LOST_MAX;
	uint64_t *zero;

	if (ncpu <= 0 || !(zero = calloc((size_t)ncpu * PYSB_LOST_MAX, sizeof(*zero))))
		return;
	for (uint32_t r = 0; r < PYSB_LOST_MAX; r++)
		slots[r] = id * PYSB_LOST_MAX + r;
	/* One batch (a start-up cost: one syscall, not one per reason). */
	if (bpf_map_update_batch(bpf_map__fd(l->skel->maps.lost), slots, zero, &count, NULL))
		for (uint32_t r = 0; r < PYSB_LOST_MAX; r++)
			bpf_map__update_elem(l->skel->maps.lost, &slots[r], sizeof(slots[r]), zero,
					     sizeof(*zero) * ncpu, 0);
	bpf_map__update_elem(l->skel->maps.event_count, &id, sizeof(id), zero, sizeof(*zero) * ncpu,
			     0);
	free(zero);
}

/*
 * Deletes every entry of `map` whose sandbox id (a u32 at `off` of the key, or of the
 * value when `vlen` is not 0) is in `set`. Keys are collected first: deleting while
 * walking would restart the walk.
 */
static void forget_entries(struct bpf_map *map, size_t klen, size_t vlen, size_t off,
			   const struct sandbox_set *set)
{
	size_t n = 0, cap = 0;
	unsigned char *keys = NULL, *nk;
	unsigned char key[64], next[64], val[64];
	int err;

	if (klen > sizeof(key) || vlen > sizeof(val))
		return;
	for (err = bpf_map__get_next_key(map, NULL, next, klen); !err;
	     err = bpf_map__get_next_key(map, key, next, klen)) {
		uint32_t id;

		memcpy(key, next, klen);
		if (vlen && bpf_map__lookup_elem(map, key, klen, val, vlen, 0))
			continue;
		memcpy(&id, (vlen ? val : key) + off, sizeof(id));
		if (!sandbox_set_has(set, id))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			nk = realloc(keys, cap * klen);
			if (!nk) {
				pr_err("out of memory removing sandbox entries from %s",
				       bpf_map__name(map));
				break;
			}
			keys = nk;
		}
		memcpy(keys + n++ * klen, key, klen);
	}
	for (size_t i = 0; i < n; i++)
		bpf_map__delete_elem(map, keys + i * klen, klen, 0);
	free(keys);
}

void loader_forget_keys(struct bpf_map *map, size_t klen, size_t off, const struct sandbox_set *set)
{
	forget_entries(map, klen, 0, off, set);
}

/* SysV IPC objects and keys of retired sandboxes may stay (in the host's IPC namespace,
 * for a daemon binding); their record goes, so no later sandbox that reuses the id
 * reaches them. `map` holds address -> sandbox id. */
static void forget_owners(struct bpf_map *map, const struct sandbox_set *set)
{
	forget_entries(map, sizeof(uint64_t), sizeof(uint32_t), 0, set);
}

void loader_sandboxes_free_rules(struct loader *l, const struct sandbox_set *set)
{
	loader_forget_keys(l->skel->maps.file_rules, sizeof(struct pysb_file_key),
			   offsetof(struct pysb_file_key, sandbox), set);
	loader_forget_keys(l->skel->maps.mount_access, sizeof(struct pysb_mount_key),
			   offsetof(struct pysb_mount_key, sandbox), set);
	loader_net_forget(l, set);
	forget_owners(l->skel->maps.ipc_owner, set);
	forget_owners(l->skel->maps.key_owner, set);
	/* counts of repeated events (a run's own end removes its keys; this is for the
	 * killed ones, and for a pooled id a later run reclaims) */
	loader_forget_keys(l->skel->maps.event_dedup, sizeof(struct pysb_dedup_key),
			   offsetof(struct pysb_dedup_key, sandbox), set);
	for (uint32_t id = 0; id < PYSB_MAX_SANDBOXES; id++)
		if (sandbox_set_has(set, id))
			bpf_map__delete_elem(l->skel->maps.ignores, &id, sizeof(id), 0);
}

void loader_sandboxes_free(struct loader *l, const struct sandbox_set *set)
{
	loader_sandboxes_free_rules(l, set);
	for (uint32_t id = 0; id < PYSB_MAX_SANDBOXES; id++) {
		if (!sandbox_set_has(set, id))
			continue;
		/* A pooled id keeps its ring: the next run takes it without this update,
		 * which waits an RCU grace period (map of maps). */
		if (!(l->pooled && id == l->sandbox_id) && !loader_pool_has(id))
			bpf_map__delete_elem(l->skel->maps.events, &id, sizeof(id), 0);
	}
}

void loader_sandbox_free(struct loader *l, uint64_t cgid, uint32_t id)
{
	struct sandbox_set one = { 0 };

	/* The switch first: from here on the cgroup is not a sandbox any more. */
	if (cgid) {
		bpf_map__delete_elem(l->skel->maps.sandboxes, &cgid, sizeof(cgid), 0);
		loader_bump_sandbox_gen(l);
	}
	sandbox_set_add(&one, id);
	loader_sandboxes_free(l, &one);
	if (l->pooled && id == l->sandbox_id)
		l->pool_freed = true;
}

int loader_attach_cgroup_pinned(struct loader *l, int cgroup_fd, const char *pin_prefix,
				int *link_fds, int *n_links, int max_links)
{
	struct bpf_program *prog;
	char p[PATH_MAX];

	bpf_object__for_each_program(prog, l->skel->obj)
	{
		int prog_fd, link_fd;

		if (strncmp(bpf_program__section_name(prog), "cgroup/", 7) ||
		    !bpf_program__autoload(prog))
			continue;
		if (link_fds && *n_links == max_links)
			return -E2BIG;
		pin_path(p, sizeof(p), l->pin_dir, "prog", bpf_program__name(prog));
		prog_fd = l->loaded ? bpf_program__fd(prog) : bpf_obj_get(p);
		if (prog_fd < 0)
			return -errno;
		link_fd = bpf_link_create(prog_fd, cgroup_fd,
					  bpf_program__expected_attach_type(prog), NULL);
		if (!l->loaded)
			close(prog_fd);
		if (link_fd < 0)
			return -errno;
		/* Pinned too: a SIGKILLed supervisor leaves its sandbox's sockets confined. */
		snprintf(p, sizeof(p), "%s/%s-%s", l->pin_dir, pin_prefix, bpf_program__name(prog));
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
	struct bpf_program *prog;
	char p[PATH_MAX];
	int n = 0;

	bpf_object__for_each_program(prog, l->skel->obj)
	{
		if (strncmp(bpf_program__section_name(prog), "cgroup/", 7) ||
		    !bpf_program__autoload(prog))
			continue;
		snprintf(p, sizeof(p), "%s/%s-%s", l->pin_dir, pin_prefix, bpf_program__name(prog));
		if (access(p, F_OK))
			return 0;
		n++;
	}
	return n;
}

void loader_unpin_links(const struct loader *l, const char *pin_prefix)
{
	struct bpf_program *prog;
	char p[PATH_MAX];

	bpf_object__for_each_program(prog, l->skel->obj)
	{
		if (strncmp(bpf_program__section_name(prog), "cgroup/", 7))
			continue; /* only the socket programs are attached per cgroup */
		snprintf(p, sizeof(p), "%s/%s-%s", l->pin_dir, pin_prefix, bpf_program__name(prog));
		unlink(p);
	}
}

int loader_attach_cgroup(struct loader *l, int cgroup_fd)
{
	char prefix[32];

	/* The id is ours alone (allocated with BPF_NOEXIST): pins under its name are left
	 * by a run that died with that id, and would make the pinning fail. */
	snprintf(prefix, sizeof(prefix), "sb%u", l->sandbox_id);
	loader_unpin_links(l, prefix);
	return loader_attach_cgroup_pinned(l, cgroup_fd, prefix, l->cg_link_fds, &l->n_cg_links,
					   sizeof(l->cg_link_fds) / sizeof(l->cg_link_fds[0]));
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
	if (l->skel && l->sandbox_id) {
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "sb%u", l->sandbox_id);
		loader_unpin_links(l, prefix);
	}
	for (int i = 0; i < l->n_cg_links; i++)
		close(l->cg_link_fds[i]);
	l->n_cg_links = 0;
	if (l->ringbuf_fd >= 0)
		close(l->ringbuf_fd);
	l->ringbuf_fd = -1;
	loader_pool_release(l);
	/* Destroying the skeleton drops this process's references only: the pins keep the
	 * shared instance attached. */
	pysb_bpf__destroy(l->skel);
	l->skel = NULL;
}

/*
 * More descriptors for a large policy: RLIMIT_NOFILE's soft limit up to the hard one,
 * then (root may) both doubled, up to fs.nr_open. The program gets its own limits back
 * (user/run/runner.c). 0, or -1 when the limit cannot grow.
 */
static int more_descriptors(void)
{
	struct rlimit rl;
	unsigned long nr_open = 1048576;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		if (fscanf(f, "%lu", &nr_open) != 1)
			nr_open = 1048576;
		fclose(f);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
	} else {
		if (rl.rlim_max >= nr_open)
			return -1;
		rl.rlim_max = rl.rlim_max * 2 < nr_open ? rl.rlim_max * 2 : nr_open;
		rl.rlim_cur = rl.rlim_max;
	}
	return setrlimit(RLIMIT_NOFILE, &rl);
}

/* O_PATH (the descriptor only holds the inode: no file is opened for I/O). */
static int open_pin(const char *path, bool nofollow)
{
	int flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
	int fd = open(path, flags);

	while (fd < 0 && errno == EMFILE) {
		if (more_descriptors()) {
			errno = EMFILE;
			break;
		}
		fd = open(path, flags);
	}
	return fd;
}

int loader_pin_path(struct loader *l, struct file_pins *p, const char *path, bool nofollow)
{
	uint64_t label = 0;
	int fd, err;

	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		int *fds = realloc(p->fd, cap * sizeof(*fds));
		uint64_t *labels = fds ? realloc(p->label, cap * sizeof(*labels)) : NULL;

		if (fds)
			p->fd = fds;
		if (!labels) {
			pr_err("out of memory holding the rule paths open");
			return -ENOMEM;
		}
		p->label = labels;
		p->cap = cap;
	}
	fd = open_pin(path, nofollow);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot hold the rule path %s open: %s%s", path, strerror(errno),
		       errno == EMFILE ? " (one descriptor per rule path, and RLIMIT_NOFILE "
					 "cannot grow: raise fs.nr_open or the hard limit, or use "
					 "fewer, broader rules)"
				       : "");
		return err;
	}
	err = label_fd(l->skel->maps.label_reqs, fd, &label);
	if (err) {
		pr_err("cannot label the inode of %s for its rule: %s", path,
		       err == -ENOSPC	 ? "every label is in use (too many rule paths on this "
					   "machine)"
		       : err == -ENOTSUP ? "the kernel did not answer "
					   "(lsm/sb_statfs not attached)"
					 : strerror(-err));
		close(fd);
		return err;
	}
	p->fd[p->n] = fd;
	p->label[p->n++] = label;
	return 0;
}

void file_pins_release(struct file_pins *p)
{
	for (size_t i = 0; i < p->n; i++)
		close(p->fd[i]);
	free(p->fd);
	free(p->label);
	*p = (struct file_pins){ 0 };
}

int loader_add_file_rule(struct loader *l, const struct pysb_file_key *key,
			 const struct pysb_file_rule *rule, bool union_)
{
	struct pysb_file_rule r = *rule, have;

	if (union_ && !bpf_map__lookup_elem(l->skel->maps.file_rules, key, sizeof(*key), &have,
					    sizeof(have), 0)) {
		r.access |= have.access;
		r.rule = have.rule; /* the first path named it */
	}
	if (bpf_map__update_elem(l->skel->maps.file_rules, key, sizeof(*key), &r, sizeof(r),
				 BPF_ANY))
		return -errno;
	return 0;
}

int loader_bump_sandbox_gen(struct loader *l)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t *gen;

	/* Through a shared mapping, one atomic add: an update through the bpf() syscall is
	 * a copy that a hook could read torn, and two bumpers could both write the same
	 * value. Seq-cst: the change of `sandboxes` before it is visible to whoever reads
	 * the new value. */
	gen = mmap(NULL, page > 0 ? page : 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
		   bpf_map__fd(l->skel->maps.sandbox_gen), 0);
	if (gen == MAP_FAILED) {
		int err = -errno;

		pr_err("cannot map the sandbox generation counter (map sandbox_gen): %s; "
		       "processes could keep a cached \"not sandboxed\"",
		       strerror(-err));
		return err;
	}
	__atomic_add_fetch(gen, 1, __ATOMIC_SEQ_CST);
	munmap(gen, page > 0 ? page : 4096);
	return 0;
}

int loader_add_sandbox(struct loader *l, uint64_t cgid, const struct pysb_sandbox_cfg *cfg)
{
	int err;

	if (bpf_map__update_elem(l->skel->maps.sandboxes, &cgid, sizeof(cgid), cfg, sizeof(*cfg),
				 BPF_ANY))
		return -errno;
	/* Before anyone is told the cgroup is confined: tasks that cached "not sandboxed"
	 * look again. Without it, the entry goes (the caller reports the failure). */
	err = loader_bump_sandbox_gen(l);
	if (err)
		bpf_map__delete_elem(l->skel->maps.sandboxes, &cgid, sizeof(cgid), 0);
	return err;
}

int loader_add_mount_access(struct loader *l, const struct pysb_mount_key *key, uint32_t access)
{
	if (bpf_map__update_elem(l->skel->maps.mount_access, key, sizeof(*key), &access,
				 sizeof(access), BPF_ANY))
		return -errno;
	return 0;
}

int loader_set_ignores(struct loader *l, uint32_t id, const struct pysb_ignore_set *set)
{
	if (bpf_map__update_elem(l->skel->maps.ignores, &id, sizeof(id), set, sizeof(*set),
				 BPF_ANY))
		return -errno;
	return 0;
}

int loader_exec_pending(struct loader *l, uint32_t tgid, bool add)
{
	uint32_t one = 1;
	int ret;

	if (add)
		ret = bpf_map__update_elem(l->skel->maps.exec_pending, &tgid, sizeof(tgid), &one,
					   sizeof(one), BPF_ANY);
	else
		ret = bpf_map__delete_elem(l->skel->maps.exec_pending, &tgid, sizeof(tgid), 0);
	return ret ? -errno : 0;
}

void loader_print_maps(const struct loader *l)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, l->skel->obj)
	{
		const char *name = bpf_map__name(map);

		if (strchr(name, '.'))
			continue; /* .bss, .rodata: the programs' own variables */
		pr_info("map %-16s %-14s max %u entries, key %u B, value %u B", name,
			libbpf_bpf_map_type_str(bpf_map__type(map)), bpf_map__max_entries(map),
			bpf_map__key_size(map), bpf_map__value_size(map));
	}
}

int loader_events_fd(const struct loader *l)
{
	return l->ringbuf_fd;
}

int loader_dedup_fd(const struct loader *l)
{
	return bpf_map__fd(l->skel->maps.event_dedup);
}

int loader_lost(const struct loader *l, uint64_t lost[PYSB_LOST_MAX])
{
	return loader_lost_id(l, l->sandbox_id, lost);
}

int loader_lost_id(const struct loader *l, uint32_t id, uint64_t lost[PYSB_LOST_MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;

	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (uint32_t r = 0; r < PYSB_LOST_MAX; r++) {
		uint32_t slot = id * PYSB_LOST_MAX + r;

		lost[r] = 0;
		if (bpf_map__lookup_elem(l->skel->maps.lost, &slot, sizeof(slot), vals,
					 sizeof(*vals) * ncpu, 0))
			continue;
		for (int c = 0; c < ncpu; c++)
			lost[r] += vals[c];
	}
	free(vals);
	return 0;
}
