/* SPDX-License-Identifier: MIT */
/*
 * The rule paths a sandbox holds open (labelled through lsm/sb_statfs), the entries
 * written for them, and the small accessors of the instance's maps. Split from maps.c.
 */
#include "loader_int.h"

/* ---------------- rule paths held open, and map entries */

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

static void label_failed(const char *path, int err)
{
	pr_err("cannot label the inode of %s for its rule: %s", path,
	       err == -ENOSPC	 ? "every label is in use (too many rule paths on this machine)"
	       : err == -ENOTSUP ? "the kernel did not answer (lsm/sb_statfs not attached)"
	       : err == -EPROTO	 ? "the kernel answered for another descriptor (a statfs(2) "
				   "of this thread came in between): the sandbox is not set up"
				 : strerror(-err));
}

/* Reads the labels asked since the last batch. */
static int pins_collect(struct loader *l, struct file_pins *p)
{
	size_t want = p->n - p->labelled, given = 0;
	int err;

	if (!want)
		return 0;
	err = label_collect(l->fd.label_reqs, p->tid, p->fd + p->labelled, p->label + p->labelled,
			    want, &given);
	if (err)
		label_failed(p->asked[given < want ? given : want - 1], err);
	p->labelled = p->n; /* on an error, the caller gives up: said once */
	return err;
}

int loader_pin_path(struct loader *l, struct file_pins *p, const char *path, bool nofollow)
{
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
	if (!p->tid)
		p->tid = (uint32_t)syscall(SYS_gettid);
	err = p->n == p->labelled ? label_arm(l->fd.label_reqs, p->tid) : 0;
	if (!err)
		err = label_ask(fd);
	if (err) {
		label_failed(path, err);
		close(fd);
		return err;
	}
	p->asked[p->n - p->labelled] = path;
	p->fd[p->n] = fd;
	p->label[p->n++] = 0;
	return p->n - p->labelled == PYSB_LABEL_BATCH ? pins_collect(l, p) : 0;
}

int loader_pins_labelled(struct loader *l, struct file_pins *p)
{
	int err = p->tid ? pins_collect(l, p) : 0;

	if (p->tid)
		label_end(l->fd.label_reqs, p->tid);
	p->tid = 0;
	return err;
}

void file_pins_release(struct file_pins *p)
{
	for (size_t i = 0; i < p->n; i++)
		close(p->fd[i]);
	free(p->fd);
	free(p->label);
	*p = (struct file_pins){ 0 };
}

int loader_put_file_rules(struct loader *l, const struct pysb_file_key *keys,
			  const struct pysb_file_rule *rules, uint32_t n)
{
	uint32_t count = n;

	/* One system call for all (a later key of the batch replaces an earlier one); one
	 * each where the kernel has no batch for the map. */
	if (!n || !bpf_map_update_batch(l->fd.file_rules, keys, rules, &count, NULL))
		return 0;
	if (errno != EINVAL && errno != ENOTSUP && errno != EOPNOTSUPP)
		return -errno;
	for (uint32_t i = count; i < n; i++)
		if (bpf_map_update_elem(l->fd.file_rules, &keys[i], &rules[i], BPF_ANY))
			return -errno;
	return 0;
}

int loader_add_mount_access(struct loader *l, const struct pysb_mount_key *key, uint32_t access)
{
	if (bpf_map_update_elem(l->fd.mount_access, key, &access, BPF_ANY))
		return -errno;
	return 0;
}

int loader_set_ignores(struct loader *l, uint32_t id, const struct pysb_ignore_set *set)
{
	if (bpf_map_update_elem(l->fd.ignores, &id, set, BPF_ANY))
		return -errno;
	return 0;
}

int loader_exec_pending(struct loader *l, uint32_t tgid, bool add)
{
	uint32_t one = 1;
	int ret;

	if (add)
		ret = bpf_map_update_elem(l->fd.exec_pending, &tgid, &one, BPF_ANY);
	else
		ret = bpf_map_delete_elem(l->fd.exec_pending, &tgid);
	return ret ? -errno : 0;
}

void loader_print_maps(const struct loader *l)
{
	/* the maps user space writes: the programs' own are not opened here */
#define MAP_PRINT(name)                                                                        \
	{                                                                                      \
		struct bpf_map_info info = { 0 };                                              \
		uint32_t len = sizeof(info);                                                   \
                                                                                               \
		if (!bpf_obj_get_info_by_fd(l->fd.name, &info, &len))                          \
			pr_info("map %-16s %-14s max %u entries, key %u B, value %u B", #name, \
				libbpf_bpf_map_type_str(info.type), info.max_entries,          \
				info.key_size, info.value_size);                               \
	}
	LOADER_MAPS(MAP_PRINT)
#undef MAP_PRINT
}

int loader_events_fd(const struct loader *l)
{
	return l->ringbuf_fd;
}

int loader_dedup_fd(const struct loader *l)
{
	return l->fd.event_dedup;
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
		if (bpf_map_lookup_elem(l->fd.lost, &slot, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			lost[r] += vals[c];
	}
	free(vals);
	return 0;
}
