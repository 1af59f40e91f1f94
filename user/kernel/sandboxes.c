/* SPDX-License-Identifier: MIT */
/*
 * The `sandboxes` map (cgroup id -> a sandbox's configuration) and the generation every
 * change of it bumps, which makes the kernel's cached answers stale: the per-task cache
 * and the shared cgroup table, which this file zeroes when the generation's low half
 * could come round again (bpf/nearest.h; docs/design.md, "The sandbox lookup and its
 * cache"). See loader.c.
 */
#include "loader_int.h"

/*
 * Zeroes the shared cgroup table (map cgroup_table, bpf/nearest.h): its words hold the low
 * half of the generation they were found at, which comes round again after 2^32 bumps.
 * Word by word, atomically: a hook never reads a word half old, half zero. Once every
 * PYSB_CGROUP_TABLE_CLEAR_EVERY bumps; its map is opened only then.
 */
static int clear_cgroup_table(struct loader *l)
{
	size_t len = PYSB_CGROUP_TABLE_SLOTS * sizeof(uint64_t);
	char p[PATH_MAX];
	uint64_t *w;
	int fd, err = 0;

	if (l->skel)
		fd = dup(bpf_map__fd(l->skel->maps.cgroup_table));
	else {
		pin_path(p, sizeof(p), l->pin_dir, "map", "cgroup_table");
		fd = bpf_obj_get(p);
	}
	w = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (w == MAP_FAILED) {
		err = -errno;
		pr_err("cannot clear the shared cgroup table (map cgroup_table): %s; the sandbox "
		       "generation wrapped: unsandboxed processes may keep old answers",
		       strerror(-err));
	} else {
		for (uint32_t i = 0; i < PYSB_CGROUP_TABLE_SLOTS; i++)
			__atomic_store_n(&w[i], 0, __ATOMIC_RELAXED);
		munmap(w, len);
	}
	if (fd >= 0)
		close(fd);
	return err;
}

static size_t gen_map_len(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : 4096;
}

int loader_bump_sandbox_gen(struct loader *l)
{
	uint64_t now;
	int err = 0;

	/* Through a shared mapping, one atomic add: an update through the bpf() syscall is
	 * a copy that a hook could read torn, and two bumpers could both write the same
	 * value. Seq-cst: the change of `sandboxes` before it is visible to whoever reads
	 * the new value. Mapped once: no later bump can fail (a reload's change of an entry
	 * in place must be followed by one). */
	if (!l->gen_map) {
		void *gen = mmap(NULL, gen_map_len(), PROT_READ | PROT_WRITE, MAP_SHARED,
				 l->fd.sandbox_gen, 0);

		if (gen == MAP_FAILED) {
			err = -errno;
			pr_err("cannot map the sandbox generation counter (map sandbox_gen): %s; "
			       "processes could keep a cached \"not sandboxed\"",
			       strerror(-err));
			return err;
		}
		l->gen_map = gen;
	}
	now = __atomic_add_fetch(l->gen_map, 1, __ATOMIC_SEQ_CST);
	if (!(now % PYSB_CGROUP_TABLE_CLEAR_EVERY))
		err = clear_cgroup_table(l);
	return err;
}

int loader_switch_sandbox(struct loader *l, uint64_t cgid, const struct pysb_sandbox_cfg *cfg)
{
	if (bpf_map_update_elem(l->fd.sandboxes, &cgid, cfg, BPF_ANY))
		return -errno;
	/* the key stays, but the file hooks keep copies of entries (file_sandbox) */
	return loader_bump_sandbox_gen(l);
}

void loader_unmap_sandbox_gen(struct loader *l)
{
	if (l->gen_map)
		munmap(l->gen_map, gen_map_len());
	l->gen_map = NULL;
}

int loader_remove_sandbox(struct loader *l, uint64_t cgid)
{
	int err = bpf_map_delete_elem(l->fd.sandboxes, &cgid) ? -errno : 0;

	loader_bump_sandbox_gen(l);
	return err;
}

int loader_sandbox_of(const struct loader *l, uint64_t cgid, struct pysb_sandbox_cfg *cfg)
{
	return bpf_map_lookup_elem(l->fd.sandboxes, &cgid, cfg) ? -errno : 0;
}

int loader_sandbox_next(const struct loader *l, const uint64_t *prev, uint64_t *next)
{
	return bpf_map_get_next_key(l->fd.sandboxes, prev, next) ? -errno : 0;
}

int loader_add_sandbox(struct loader *l, uint64_t cgid, const struct pysb_sandbox_cfg *cfg)
{
	int err;

	if (bpf_map_update_elem(l->fd.sandboxes, &cgid, cfg, BPF_ANY))
		return -errno;
	/* Before anyone is told the cgroup is confined: tasks that cached "not sandboxed"
	 * look again. Without it, the entry goes (the caller reports the failure). */
	err = loader_bump_sandbox_gen(l);
	if (err)
		bpf_map_delete_elem(l->fd.sandboxes, &cgid);
	return err;
}
