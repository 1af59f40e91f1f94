/* SPDX-License-Identifier: MIT */
/*
 * The pool of event ring buffers kept across runs. Every update and delete of the
 * `events` map of maps from user space waits an RCU grace period (6.1: tens of ms under
 * emulation), and creating a 4 MiB ring costs as much again: a run takes a sandbox id
 * whose ring is already in `events` instead, and leaves it there when it ends.
 *
 * The pool of an instance is PYSB_RUN_DIR/pool-<object hash>/<id>, one file per pooled
 * id, holding "<state> <map id of its ring>": `d` (in use, or its run died) or `c`
 * (released, rules removed). A run holds its file flock()ed for as long as it lives, so a
 * run killed with SIGKILL frees its file with its last descriptor; the next run that
 * takes a `d` file removes the dead run's rules first, and skips it while a sandbox with
 * that id is still registered (its tasks outlived their supervisor and still report to
 * that ring). Whatever is taken is drained: one run never reads another's events.
 * Only rings of the default size are pooled, and at most PYSB_POOL_KEEP of them outlive
 * their run (more only while more runs are at the same time).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "loader.h"
#include "log.h"
#include "stopwatch.h"

/* Rings kept when no run uses them: 4 MiB of kernel memory each. */
#define PYSB_POOL_KEEP 4

static void pool_dir_of(char *buf, size_t len)
{
	snprintf(buf, len, "%s/pool-%016llx", PYSB_RUN_DIR,
		 (unsigned long long)loader_object_hash());
}

bool loader_pool_has(uint32_t id)
{
	char p[PATH_MAX];

	pool_dir_of(p, sizeof(p));
	snprintf(p + strlen(p), sizeof(p) - strlen(p), "/%u", id);
	return !access(p, F_OK);
}

void loader_pool_remove(const char *hash)
{
	char dir[PATH_MAX], p[PATH_MAX + 32];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/pool-%s", PYSB_RUN_DIR, hash);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' &&
		    snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) < (int)sizeof(p))
			unlink(p);
	closedir(d);
	rmdir(dir);
}

/* Drops what a ring holds unread: its consumer position moved up to its producer's. */
static int ring_drain(int fd, uint64_t *dropped)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t *cons, *prod, pos;

	if (page <= 0)
		page = 4096;
	cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	prod = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, page);
	if (prod == MAP_FAILED) {
		int err = -errno;

		munmap(cons, page);
		return err;
	}
	pos = __atomic_load_n(prod, __ATOMIC_ACQUIRE);
	*dropped = pos - __atomic_load_n(cons, __ATOMIC_ACQUIRE);
	__atomic_store_n(cons, pos, __ATOMIC_RELEASE);
	munmap(prod, page);
	munmap(cons, page);
	return 0;
}

/* Is a sandbox with this id registered (a run that died, whose tasks live on)? */
static bool id_registered(struct loader *l, uint32_t id)
{
	int map = l->fd.sandboxes;
	uint64_t key, next, *prev = NULL;

	while (!bpf_map_get_next_key(map, prev, &next)) {
		struct pysb_sandbox_cfg cfg;

		if (!bpf_map_lookup_elem(map, &next, &cfg) && cfg.id == id)
			return true;
		key = next;
		prev = &key;
	}
	return false;
}

static int write_state(int fd, char state, uint32_t map_id)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%c %u\n", state, map_id);

	if (ftruncate(fd, 0) || pwrite(fd, buf, (size_t)n, 0) != n)
		return -errno;
	return 0;
}

/* Takes pooled id `id` (file `name` of `dirfd`) if it is free: 0, or 1 to try another. */
static int take(struct loader *l, int dirfd, const char *name, uint32_t id, const uint32_t *table,
		bool dead_only)
{
	char buf[32], state;
	uint32_t map_id, have;
	uint64_t dropped = 0;
	int fd, ring, err;
	ssize_t n;

	fd = openat(dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 1;
	if (flock(fd, LOCK_EX | LOCK_NB))
		goto skip; /* a live run holds it */
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	/* The ring must still be the one `events` holds for the id: a gc that removed it
	 * leaves the id to anyone (the daemon), and the file is stale. */
	have = table[id];
	if (sscanf(buf, "%c %u", &state, &map_id) != 2 || !have || have != map_id) {
		pr_debug("ring pool: %s is stale, removed", name);
		unlinkat(dirfd, name, 0);
		goto skip;
	}
	if (state == 'x' || (dead_only && state == 'c'))
		goto skip; /* retired (loader_pool_release), or clean on the first pass */
	if (state != 'c') {
		struct sandbox_set one = { 0 };

		if (id_registered(l, id))
			goto skip; /* its tasks outlived their pysb-bpf: still confined */
		sandbox_set_add(&one, id);
		loader_sandboxes_free_rules(l, &one);
		pr_info("sandbox %u: reclaimed from a pysb-bpf that died (its rules removed)", id);
	}
	ring = bpf_map_get_fd_by_id(map_id);
	if (ring < 0)
		goto skip;
	err = ring_drain(ring, &dropped);
	if (!err)
		err = write_state(fd, 'd', map_id);
	if (err) {
		pr_warn("ring pool: cannot take sandbox %u: %s", id, strerror(-err));
		close(ring);
		goto skip;
	}
	if (dropped)
		pr_info("sandbox %u: %llu bytes of events of an earlier run dropped", id,
			(unsigned long long)dropped);
	loader_reset_lost_id(l, id);
	l->ringbuf_fd = ring;
	l->pooled = true;
	l->pool_fd = fd;
	l->pool_map_id = map_id;
	l->sandbox_id = id;
	return 0;
skip:
	close(fd);
	return 1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* A new ring in `events` (the one costly update), and its file, flock()ed. */
static int grow(struct loader *l, int dirfd, uint32_t *id)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	char tmp[64], name[16];
	int ring, fd, err;

	ring = loader_ringbuf_create(PYSB_RINGBUF_BYTES);
	if (ring < 0)
		return ring;
	if (bpf_obj_get_info_by_fd(ring, &info, &len)) {
		err = -errno;
		close(ring);
		return err;
	}
	err = loader_id_alloc(l, ring, id);
	if (err) {
		close(ring);
		return err;
	}
	l->ringbuf_fd = ring;
	l->sandbox_id = *id;
	/* Complete before it is seen under its name: written, locked, then renamed. */
	snprintf(tmp, sizeof(tmp), ".new-%d", getpid());
	snprintf(name, sizeof(name), "%u", *id);
	fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) || write_state(fd, 'd', info.id) ||
	    renameat(dirfd, tmp, dirfd, name)) {
		/* Not pooled: the run goes on with it, and frees it as before. */
		pr_debug("ring pool: cannot add sandbox %u: %s", *id, strerror(errno));
		if (fd >= 0) {
			unlinkat(dirfd, tmp, 0);
			close(fd);
		}
		return 0;
	}
	l->pooled = true;
	l->pool_fd = fd;
	l->pool_map_id = info.id;
	pr_info("sandbox %u: its ring buffer joins the pool", *id);
	return 0;
}

int loader_pool_claim(struct loader *l, uint32_t *id)
{
	static uint32_t ids[PYSB_MAX_SANDBOXES], table[PYSB_MAX_SANDBOXES];
	char dir[PATH_MAX];
	struct dirent *de;
	size_t n = 0;
	int dfd, ret = 1;
	DIR *d;

	pool_dir_of(dir, sizeof(dir));
	if ((mkdir(PYSB_RUN_DIR, 0700) && errno != EEXIST) || (mkdir(dir, 0700) && errno != EEXIST))
		return -errno;
	d = opendir(dir);
	if (!d)
		return -errno;
	dfd = dirfd(d);
	while ((de = readdir(d)) && n < PYSB_MAX_SANDBOXES) {
		char *end;
		unsigned long v = strtoul(de->d_name, &end, 10);

		if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && !*end && v &&
		    v < PYSB_MAX_SANDBOXES)
			ids[n++] = (uint32_t)v;
	}
	ret = loader_events_table(l, table);
	if (ret) {
		closedir(d);
		return ret;
	}
	ret = 1;
	/* A dead run's id first: its state is reclaimed as soon as one run passes by (and
	 * the pool grows only for runs at the same time). Then the lowest. */
	qsort(ids, n, sizeof(ids[0]), cmp_u32);
	for (int dead_only = 1; dead_only >= 0 && ret > 0; dead_only--) {
		for (size_t i = 0; i < n && ret > 0; i++) {
			char name[16];

			snprintf(name, sizeof(name), "%u", ids[i]);
			ret = take(l, dfd, name, ids[i], table, dead_only);
		}
	}
	if (ret > 0)
		ret = grow(l, dfd, id);
	else
		*id = l->sandbox_id;
	closedir(d);
	return ret;
}

/* How many files the pool directory holds. */
static size_t pool_size(void)
{
	char dir[PATH_MAX];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	pool_dir_of(dir, sizeof(dir));
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] >= '1' && de->d_name[0] <= '9';
	closedir(d);
	return n;
}

void loader_pool_release(struct loader *l)
{
	char p[PATH_MAX];

	if (!l->pooled)
		return;
	/* Clean only once its rules are gone; else the next taker removes them. */
	if (l->pool_freed && pool_size() > PYSB_POOL_KEEP) {
		/* More rings than runs usually need at once (a burst of runs): this one
		 * goes. Retired first, under the lock: a run that opened the file before it
		 * was removed skips it once it gets the lock. */
		pool_dir_of(p, sizeof(p));
		snprintf(p + strlen(p), sizeof(p) - strlen(p), "/%u", l->sandbox_id);
		write_state(l->pool_fd, 'x', l->pool_map_id);
		unlink(p);
		bpf_map_delete_elem(l->fd.events, &l->sandbox_id);
	} else if (l->pool_freed) {
		write_state(l->pool_fd, 'c', l->pool_map_id);
	}
	stopwatch("pool: state written");
	close(l->pool_fd);
	l->pooled = false;
}
