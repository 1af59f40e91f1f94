/* SPDX-License-Identifier: MIT */
/*
 * The shared instance pinned in bpffs (/sys/fs/bpf/pysb-bpf/<object hash>): pinning, reuse by later runs, removal of stale and idle instances. See loader.c.
 */
#include "loader_int.h"

/* ---------------- the pinned instance */

/* Where this build's instance is pinned: named by the object's hash. */
void pin_dir_of(char *buf, size_t len)
{
	snprintf(buf, len, "%s/%016llx", PIN_ROOT, (unsigned long long)loader_object_hash());
}

int ensure_bpffs(void)
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

void pin_path(char *buf, size_t len, const char *dir, const char *kind, const char *name)
{
	snprintf(buf, len, "%s/%s-%s", dir, kind, name);
}

/* Removes a pin directory (its entries first): what is pinned there is released. */
void unpin_dir(const char *dir)
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

int pin_all(struct pysb_bpf *skel, const char *dir)
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
			/* cgroup/ programs: kept as programs, attached per sandbox; the
			 * in-place ones, attached by the first attach or daemon */
			pin_path(p, sizeof(p), dir, "prog", bpf_program__name(prog));
			if (bpf_program__pin(prog, p))
				return pin_failed(p);
		}
	}
	return 0;
}

void loader_maps_init(struct loader_maps *m)
{
#define MAP_INIT(name) m->name = -1;
	LOADER_MAPS(MAP_INIT)
#undef MAP_INIT
}

void loader_maps_close(struct loader_maps *m)
{
#define MAP_CLOSE(name)         \
	if (m->name >= 0)       \
		close(m->name); \
	m->name = -1;
	LOADER_MAPS(MAP_CLOSE)
#undef MAP_CLOSE
}

/* The maps user space uses, from the pins of a complete instance in `dir`; -errno, said. */
static int open_pinned_maps(struct loader_maps *m, const char *dir)
{
	char p[PATH_MAX];

	loader_maps_init(m);
#define MAP_GET(name)                                                           \
	pin_path(p, sizeof(p), dir, "map", #name);                              \
	m->name = bpf_obj_get(p);                                               \
	if (m->name < 0) {                                                      \
		int err = -errno;                                               \
                                                                                \
		pr_err("cannot open the pinned map %s: %s", p, strerror(-err)); \
		loader_maps_close(m);                                           \
		return err;                                                     \
	}
	LOADER_MAPS(MAP_GET)
#undef MAP_GET
	return 0;
}

int loader_maps_of(struct loader_maps *m, const struct pysb_bpf *skel)
{
	loader_maps_init(m);
#define MAP_DUP(name)                                                        \
	m->name = fcntl(bpf_map__fd(skel->maps.name), F_DUPFD_CLOEXEC, 3);   \
	if (m->name < 0) {                                                   \
		int err = -errno;                                            \
                                                                             \
		pr_err("cannot hold the map " #name ": %s", strerror(-err)); \
		loader_maps_close(m);                                        \
		return err;                                                  \
	}
	LOADER_MAPS(MAP_DUP)
#undef MAP_DUP
	return 0;
}

/* Leftovers of a first run that died while loading: <dir>_tmp_<pid> (bpffs refuses dots). */
void remove_stale_tmp(void)
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
void remove_idle_instances(const char *keep)
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

#include "pysb_progs.h"

const struct pysb_prog_info *const loader_progs = pysb_progs;
const size_t loader_n_progs = sizeof(pysb_progs) / sizeof(pysb_progs[0]);
_Static_assert(sizeof(pysb_progs) / sizeof(pysb_progs[0]) <= LOADER_MAX_PROGS,
	       "more BPF programs than LOADER_MAX_PROGS");

/* FNV-1a of the embedded object, computed when it was built (scripts/prog_table.c). */
uint64_t loader_object_hash(void)
{
	return PYSB_OBJECT_HASH;
}

void progs_of_skel(const struct pysb_bpf *skel, bool prog_on[LOADER_MAX_PROGS])
{
	for (size_t i = 0; i < loader_n_progs; i++) {
		struct bpf_program *prog =
			bpf_object__find_program_by_name(skel->obj, loader_progs[i].name);

		prog_on[i] = prog && bpf_program__autoload(prog);
	}
}

/* A pinned instance without its object: the programs from the table built with this
 * binary (the same object the instance was loaded from: the pin directory is named by its
 * hash), the maps from their pins. */
int open_pinned(const char *dir, struct loader_maps *maps, bool prog_on[LOADER_MAX_PROGS],
		const char **what, int *err)
{
	char p[PATH_MAX], *names;
	size_t n_names = 0;

	*what = "open";
	names = pin_names(dir, &n_names);
	if (!names) {
		*err = errno ? errno : ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < loader_n_progs; i++) {
		const char *sec = loader_progs[i].sec, *name = loader_progs[i].name;
		bool cg = !strncmp(sec, "cgroup/", 7);

		pin_path(p, sizeof(p), dir, loader_prog_unattached(sec, name) ? "prog" : "link",
			 name);
		prog_on[i] = has_name(names, n_names, p + strlen(dir) + 1);
		/* Only a hook this kernel lacks, or the other inode_setattr signature, may be
		 * missing: anything else would be a hole in the sandbox. */
		if (!prog_on[i] && (cg || !is_optional(sec + 4)) &&
		    strcmp(name, "pysb_inode_setattr") &&
		    strcmp(name, "pysb_inode_setattr_idmap")) {
			pr_err("the pinned pysb-bpf instance %s lacks %s; remove it (rm -r %s) "
			       "once no sandbox runs, and run again",
			       dir, p, dir);
			*err = ENOENT;
			free(names);
			return -1;
		}
	}
	free(names);
	stopwatch("loader: programs checked");
	*what = "reuse pinned";
	*err = -open_pinned_maps(maps, dir);
	return *err ? -1 : 0;
}
