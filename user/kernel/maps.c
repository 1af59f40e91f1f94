/* SPDX-License-Identifier: MIT */
/*
 * The maps of one sandbox id: ids, event rings, forgetting a retired id (the rule paths
 * held open and the entries written for them, and the lost counters: pins.c). See
 * loader.c.
 */
#include "loader_int.h"

/* ---------------- ids, rings and the maps of one sandbox id */

int loader_events_table(const struct loader *l, uint32_t map_ids[PYSB_MAX_SANDBOXES])
{
	static uint32_t keys[PYSB_MAX_SANDBOXES], vals[PYSB_MAX_SANDBOXES];
	int outer = l->fd.events;
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
	int outer = l->fd.events;
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

static int ringbuf_create(const char *name, uint32_t ringbuf_bytes)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, name, 0, 0,
				ringbuf_bytes ? ringbuf_bytes : PYSB_RINGBUF_BYTES, NULL);

	return fd < 0 ? -errno : fd;
}

int loader_ringbuf_create(uint32_t ringbuf_bytes)
{
	return ringbuf_create("pysb_events", ringbuf_bytes);
}

int loader_daemon_ringbuf_create(uint32_t ringbuf_bytes)
{
	return ringbuf_create(PYSB_DAEMON_RING_NAME, ringbuf_bytes);
}

int loader_daemon_ids(const struct loader *l, struct sandbox_set *set)
{
	static uint32_t table[PYSB_MAX_SANDBOXES];
	int err = loader_events_table(l, table);

	memset(set, 0, sizeof(*set));
	if (err)
		return err;
	for (uint32_t id = 1; id < PYSB_MAX_SANDBOXES; id++) {
		struct bpf_map_info info = { 0 };
		uint32_t len = sizeof(info);
		int fd;

		if (!table[id])
			continue;
		fd = bpf_map_get_fd_by_id(table[id]);
		if (fd < 0)
			continue; /* gone meanwhile: its id with it */
		/* The name is the ring's own, given at its creation: a run's ring never
		 * carries the daemon's. */
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    !strncmp(info.name, PYSB_DAEMON_RING_NAME, sizeof(info.name)))
			sandbox_set_add(set, id);
		close(fd);
	}
	return 0;
}

int loader_ringbuf_of(const struct loader *l, uint32_t id)
{
	uint32_t map_id;
	int fd;

	if (bpf_map_lookup_elem(l->fd.events, &id, &map_id))
		return -errno;
	fd = bpf_map_get_fd_by_id(map_id);
	return fd < 0 ? -errno : fd;
}

int loader_sandbox_alloc(struct loader *l, uint32_t *id, uint32_t ringbuf_bytes)
{
	int err;

	if (!ringbuf_bytes || ringbuf_bytes == PYSB_RINGBUF_BYTES) {
		err = loader_pool_claim(l, id);
		l->id_clean = !err;
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
	l->id_clean = !err;
	return err;
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
	if (bpf_map_update_batch(l->fd.lost, slots, zero, &count, NULL))
		for (uint32_t r = 0; r < PYSB_LOST_MAX; r++)
			bpf_map_update_elem(l->fd.lost, &slots[r], zero, 0);
	bpf_map_update_elem(l->fd.event_count, &id, zero, 0);
	free(zero);
}

/* Keys collected for deletion (deleting while walking would restart the walk). */
struct key_list {
	unsigned char *keys;
	size_t n, cap, klen;
};

static int keep_key(struct key_list *kl, const void *key)
{
	if (kl->n == kl->cap) {
		size_t cap = kl->cap ? kl->cap * 2 : 64;
		unsigned char *nk = realloc(kl->keys, cap * kl->klen);

		if (!nk)
			return -ENOMEM;
		kl->keys = nk;
		kl->cap = cap;
	}
	memcpy(kl->keys + kl->n++ * kl->klen, key, kl->klen);
	return 0;
}

#define BATCH 256 /* entries a batch lookup reads */

/* The keys of `map` whose sandbox id (a u32 at `off` of the key, or of the value when
 * `in_value`) is in `set`, read BATCH entries a system call. -errno where the map has no
 * batch lookup (an LPM trie) or one of its buckets holds more (ENOSPC). */
static int collect_batch(int map, size_t off, bool in_value, const struct sandbox_set *set,
			 struct key_list *kl)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	unsigned char *kb = NULL, *vb = NULL;
	/* the batch token: a bucket number for a hash, a whole key for the generic batch (an
	 * LPM trie's on later kernels) */
	unsigned char in[64] = { 0 }, out[64] = { 0 };
	bool first = true;
	int ret = 0;

	if (bpf_obj_get_info_by_fd(map, &info, &len))
		return -errno;
	if (info.key_size != kl->klen || info.key_size > sizeof(in) ||
	    off + sizeof(uint32_t) > (in_value ? info.value_size : info.key_size))
		return -EINVAL;
	kb = malloc((size_t)BATCH * info.key_size);
	vb = malloc((size_t)BATCH * info.value_size);
	while (kb && vb) {
		uint32_t count = BATCH;
		int err = bpf_map_lookup_batch(map, first ? NULL : in, out, kb, vb, &count, NULL);

		if (err && errno != ENOENT) {
			ret = -errno;
			break;
		}
		for (uint32_t i = 0; i < count && !ret; i++) {
			const unsigned char *at = in_value ? vb + (size_t)i * info.value_size
							   : kb + (size_t)i * info.key_size;
			uint32_t id;

			memcpy(&id, at + off, sizeof(id));
			if (sandbox_set_has(set, id))
				ret = keep_key(kl, kb + (size_t)i * info.key_size);
		}
		if (err || ret)
			break; /* ENOENT: that was the last batch */
		memcpy(in, out, sizeof(in));
		first = false;
	}
	if (!kb || !vb)
		ret = -ENOMEM;
	free(kb);
	free(vb);
	return ret;
}

/* The same, one get_next_key (and lookup) a key. */
static int collect_walk(int map, size_t klen, size_t vlen, size_t off,
			const struct sandbox_set *set, struct key_list *kl)
{
	unsigned char key[64], next[64], val[64];
	int err, ret = 0;

	if (klen > sizeof(key) || vlen > sizeof(val))
		return -EINVAL;
	for (err = bpf_map_get_next_key(map, NULL, next); !err && !ret;
	     err = bpf_map_get_next_key(map, key, next)) {
		uint32_t id;

		memcpy(key, next, klen);
		if (vlen && bpf_map_lookup_elem(map, key, val))
			continue;
		memcpy(&id, (vlen ? val : key) + off, sizeof(id));
		if (sandbox_set_has(set, id))
			ret = keep_key(kl, key);
	}
	return ret;
}

/*
 * Deletes every entry of `map` whose sandbox id (a u32 at `off` of the key, or of the
 * value when `vlen` is not 0) is in `set`: the keys read in batches (a map of 10,000 rules
 * costs ~40 system calls, not 10,000), then deleted in one.
 */
/* The keys to remove, into kl: in batches, else (no batch lookup) walked; a failure said. */
static void collect_keys(int map, const char *name, size_t vlen, size_t off,
			 const struct sandbox_set *set, struct key_list *kl)
{
	int err = collect_batch(map, off, vlen != 0, set, kl);

	if (err && err != -ENOMEM) {
		kl->n = 0;
		err = collect_walk(map, kl->klen, vlen, off, set, kl);
	}
	if (err)
		pr_err("cannot list the entries of the BPF map %s to remove: %s", name,
		       strerror(-err));
}

static void forget_entries(int map, const char *name, size_t klen, size_t vlen, size_t off,
			   const struct sandbox_set *set)
{
	struct key_list kl = { .klen = klen };

	collect_keys(map, name, vlen, off, set, &kl);
	/* (a key gone meanwhile, or no batch for this map: the rest one by one) */
	loader_delete_keys(map, kl.keys, klen, (uint32_t)kl.n);
	free(kl.keys);
}

void loader_forget_keys(int map, const char *name, size_t klen, size_t off,
			const struct sandbox_set *set)
{
	forget_entries(map, name, klen, 0, off, set);
}

/* The whole of owner_records, as mapped to count records off (an atomic subtraction, as
 * the kernel side's). */
#define OWNER_COUNTS_LEN (PYSB_OWNER_TABLES * PYSB_MAX_SANDBOXES * sizeof(uint64_t))

/* SysV IPC objects and keys of retired sandboxes may stay (in the host's IPC namespace,
 * for a daemon binding); their record goes, so no later sandbox that reuses the id
 * reaches them. `map` holds address -> sandbox id; each record deleted here is counted
 * off its sandbox in `owner_records` (bpf/maps.bpf.h), through its mapping: an atomic
 * subtraction, as the kernel side's. */
static void forget_owners(struct loader *l, int map, const char *name, uint32_t table,
			  const struct sandbox_set *set)
{
	struct key_list kl = { .klen = sizeof(uint64_t) };
	size_t len = OWNER_COUNTS_LEN;
	uint64_t *count;

	collect_keys(map, name, sizeof(uint32_t), 0, set, &kl);
	count = kl.n ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, l->fd.owner_records, 0)
		     : MAP_FAILED;
	for (size_t i = 0; i < kl.n; i++) {
		const void *key = kl.keys + i * kl.klen;
		uint32_t id;

		/* one by one: only a record deleted here is counted off here */
		if (bpf_map_lookup_elem(map, key, &id) || bpf_map_delete_elem(map, key))
			continue;
		if (count != MAP_FAILED && id < PYSB_MAX_SANDBOXES)
			__atomic_sub_fetch(&count[table + id], 1, __ATOMIC_SEQ_CST);
	}
	if (count != MAP_FAILED)
		munmap(count, len);
	free(kl.keys);
}

/* The records of sandbox `from` in owner map `map` given to sandbox `to`, with their
 * counts in owner_records: a daemon's reload switches a service to a new id, and its own
 * SysV objects and keys stay its own (found by an adversary: a reload took them away). */
static void move_owners(struct loader *l, int map, const char *name, uint32_t table, uint32_t from,
			uint32_t to)
{
	struct key_list kl = { .klen = sizeof(uint64_t) };
	size_t len = OWNER_COUNTS_LEN;
	struct sandbox_set set = { 0 };
	uint64_t *count;

	if (from >= PYSB_MAX_SANDBOXES || to >= PYSB_MAX_SANDBOXES)
		return;
	sandbox_set_add(&set, from);
	collect_keys(map, name, sizeof(uint32_t), 0, &set, &kl);
	count = kl.n ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, l->fd.owner_records, 0)
		     : MAP_FAILED;
	for (size_t i = 0; i < kl.n && count != MAP_FAILED; i++) {
		const void *key = kl.keys + i * kl.klen;
		uint32_t id;

		if (bpf_map_lookup_elem(map, key, &id) || id != from ||
		    bpf_map_update_elem(map, key, &to, BPF_EXIST))
			continue;
		__atomic_add_fetch(&count[table + to], 1, __ATOMIC_SEQ_CST);
		__atomic_sub_fetch(&count[table + from], 1, __ATOMIC_SEQ_CST);
	}
	if (count != MAP_FAILED)
		munmap(count, len);
	free(kl.keys);
}

void loader_owners_move(struct loader *l, uint32_t from, uint32_t to)
{
	move_owners(l, l->fd.ipc_owner, "ipc_owner", PYSB_OWNER_IPC, from, to);
	move_owners(l, l->fd.key_owner, "key_owner", PYSB_OWNER_KEY, from, to);
}

/* Are records of `id` counted in table PYSB_OWNER_IPC, _KEY or _DEDUP (or is it unreadable)? */
static bool owns_records(const struct loader *l, uint32_t table, uint32_t id)
{
	uint32_t slot = table + id;
	uint64_t n = 1;

	bpf_map_lookup_elem(l->fd.owner_records, &slot, &n);
	return n != 0;
}

bool loader_dedup_held(const struct loader *l, uint32_t id)
{
	return id < PYSB_MAX_SANDBOXES && owns_records(l, PYSB_OWNER_DEDUP, id);
}

/* `n` from count [table + id], through a mapping of owner_records made here. */
static void owner_records_sub(const struct loader *l, uint32_t table, uint32_t id, uint32_t n)
{
	uint64_t *count;

	if (!n || id >= PYSB_MAX_SANDBOXES)
		return;
	count = mmap(NULL, OWNER_COUNTS_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		     l->fd.owner_records, 0);
	if (count == MAP_FAILED)
		return; /* left above: its keys looked for once more, never missed */
	__atomic_sub_fetch(&count[table + id], n, __ATOMIC_SEQ_CST);
	munmap(count, OWNER_COUNTS_LEN);
}

void loader_dedup_deleted(const struct loader *l, uint32_t id, uint32_t n)
{
	owner_records_sub(l, PYSB_OWNER_DEDUP, id, n);
}

/* The keys of repeated events of the sandboxes of `set` in event_dedup, each counted off
 * its sandbox: looked for only if owner_records counts any for one of them (a run that
 * ended normally removed its own: the map's 16,384 buckets are not read again). As
 * forget_owners does, through one mapping of the counts. */
static void forget_dedup(struct loader *l, const struct sandbox_set *set)
{
	struct key_list kl = { .klen = sizeof(struct pysb_dedup_key) };
	uint64_t *count;
	bool any = false;

	for (uint32_t id = 0; id < PYSB_MAX_SANDBOXES && !any; id++)
		any = sandbox_set_has(set, id) && loader_dedup_held(l, id);
	if (!any)
		return;
	collect_keys(l->fd.event_dedup, "event_dedup", 0, offsetof(struct pysb_dedup_key, sandbox),
		     set, &kl);
	count = kl.n ? mmap(NULL, OWNER_COUNTS_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
			    l->fd.owner_records, 0)
		     : MAP_FAILED;
	/* one by one: only a key deleted here is counted off here */
	for (size_t i = 0; i < kl.n; i++) {
		const struct pysb_dedup_key *k =
			(const void *)(kl.keys + i * sizeof(struct pysb_dedup_key));

		if (!bpf_map_delete_elem(l->fd.event_dedup, k) && count != MAP_FAILED &&
		    k->sandbox < PYSB_MAX_SANDBOXES)
			__atomic_sub_fetch(&count[PYSB_OWNER_DEDUP + k->sandbox], 1,
					   __ATOMIC_SEQ_CST);
	}
	if (count != MAP_FAILED)
		munmap(count, OWNER_COUNTS_LEN);
	free(kl.keys);
}

/* What the kernel side wrote for the sandboxes of `set`: the owner records (unless the
 * caller knows there are none) and the counts of repeated events (a run's own end
 * removes its keys; this is for the killed ones, a pooled id a later run reclaims, and
 * tasks that outlived the last read). */
static void forget_kernel_entries(struct loader *l, const struct sandbox_set *set, bool ipc,
				  bool keys)
{
	if (ipc)
		forget_owners(l, l->fd.ipc_owner, "ipc_owner", PYSB_OWNER_IPC, set);
	if (keys)
		forget_owners(l, l->fd.key_owner, "key_owner", PYSB_OWNER_KEY, set);
	stopwatch("free: ipc, key owners");
	forget_dedup(l, set);
	stopwatch("free: dedup");
}

void loader_sandboxes_free_rules(struct loader *l, const struct sandbox_set *set)
{
	loader_forget_keys(l->fd.file_rules, "file_rules", sizeof(struct pysb_file_key),
			   offsetof(struct pysb_file_key, sandbox), set);
	stopwatch("free: file_rules");
	loader_forget_keys(l->fd.mount_access, "mount_access", sizeof(struct pysb_mount_key),
			   offsetof(struct pysb_mount_key, sandbox), set);
	stopwatch("free: mount_access");
	loader_net_forget(l, set);
	stopwatch("free: net");
	forget_kernel_entries(l, set, true, true);
	for (uint32_t id = 0; id < PYSB_MAX_SANDBOXES; id++)
		if (sandbox_set_has(set, id))
			bpf_map_delete_elem(l->fd.ignores, &id);
}

/* The `events` entries of the sandboxes of `set`, but a pooled id's. */
static void forget_rings(struct loader *l, const struct sandbox_set *set)
{
	for (uint32_t id = 0; id < PYSB_MAX_SANDBOXES; id++) {
		if (!sandbox_set_has(set, id))
			continue;
		/* A pooled id keeps its ring: the next run takes it without this update,
		 * which waits an RCU grace period (map of maps). */
		if (!(l->pooled && id == l->sandbox_id) && !loader_pool_has(id))
			bpf_map_delete_elem(l->fd.events, &id);
	}
}

void loader_sandboxes_free(struct loader *l, const struct sandbox_set *set)
{
	loader_sandboxes_free_rules(l, set);
	forget_rings(l, set);
}

void loader_sandbox_free(struct loader *l, uint64_t cgid, uint32_t id)
{
	struct sandbox_set one = { 0 };

	/* The switch first: from here on the cgroup is not a sandbox any more. */
	if (cgid) {
		bpf_map_delete_elem(l->fd.sandboxes, &cgid);
		loader_bump_sandbox_gen(l);
	}
	sandbox_set_add(&one, id);
	loader_sandboxes_free(l, &one);
	if (l->pooled && id == l->sandbox_id)
		l->pool_freed = true;
}

void loader_sandbox_free_gone(struct loader *l, uint32_t id)
{
	struct sandbox_set one = { 0 };

	sandbox_set_add(&one, id);
	/* No task left to make a record after this read: 0 stays 0. */
	forget_kernel_entries(l, &one, owns_records(l, PYSB_OWNER_IPC, id),
			      owns_records(l, PYSB_OWNER_KEY, id));
	bpf_map_delete_elem(l->fd.ignores, &id);
	bpf_map_delete_elem(l->fd.net_cfg, &id);
	forget_rings(l, &one);
	if (l->pooled && id == l->sandbox_id)
		l->pool_freed = true;
}

int loader_delete_keys(int map, const void *keys, size_t klen, uint32_t n)
{
	uint32_t count = n;

	/* A batch stops at the first key it cannot delete (absent: ENOENT); the rest, from
	 * there, one by one; all of them where the map has no batch (count not written). */
	if (!n || !bpf_map_delete_batch(map, keys, &count, NULL))
		return 0;
	if (errno != ENOENT)
		count = 0;
	for (uint32_t i = count; i < n; i++)
		if (bpf_map_delete_elem(map, (const char *)keys + (size_t)i * klen) &&
		    errno != ENOENT)
			return -errno;
	return 0;
}
