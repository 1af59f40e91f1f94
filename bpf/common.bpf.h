/* SPDX-License-Identifier: MIT */
/* Helpers shared by the pysb-bpf programs: which sandbox a task is in, event records. */
#ifndef PYSB_COMMON_BPF_H
#define PYSB_COMMON_BPF_H

#include "maps.bpf.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#define EACCES 13
#define EPERM  1

#define FMODE_READ  0x1u
#define FMODE_WRITE 0x2u
#define FMODE_EXEC  0x20u
#define O_TRUNC	    01000u
#define __O_TMPFILE 020000000u

/*
 * The sandbox of the current task: its cgroup or the nearest (deepest) ancestor that is a
 * key of `sandboxes` (bpf/nearest.h, unit-tested in tests/unit/test_nearest.c). Most tasks
 * on the machine are not sandboxed, and every hooked syscall of theirs asks: the answer
 * is cached per task (`sandbox_cache`), valid while the task stays in its cgroup and
 * `sandboxes` stays at the generation user space bumps after each change (`sandbox_gen`,
 * loader_bump_sandbox_gen). docs/design.md, "The sandbox lookup and its cache".
 */
#define PYSB_CGROUP struct cgroup *
/* The helper reads the task's cgroup at each call; `cg`, one read, is a snapshot. */
#define PYSB_ANCESTOR_ID(cg, level) \
	((cg) ? pysb_ancestor_id(cg, level) : bpf_get_current_ancestor_cgroup_id(level))
#define PYSB_SANDBOX_LOOKUP(idp) ((struct pysb_sandbox_cfg *)bpf_map_lookup_elem(&sandboxes, idp))
#define PYSB_LOOP(n, fn, ctx)	 bpf_loop(n, fn, ctx, 0)
#define PYSB_CURRENT_CGROUP()	 BPF_CORE_READ(bpf_get_current_task_btf(), cgroups, dfl_cgrp)
#define PYSB_CGROUP_ID(cg)	 BPF_CORE_READ(cg, kn, id)
#define PYSB_CURRENT_CGROUP_ID() bpf_get_current_cgroup_id()
/* The same, by plain (BTF) loads: no helper call, on every hook of every task (lsm/
 * programs only: the cgroup/ ones may not call bpf_get_current_task_btf). */
#define PYSB_CACHE_CGROUP_ID()	 (bpf_get_current_task_btf()->cgroups->dfl_cgrp->kn->id)
#define PYSB_TABLE_SLOT(id)	 pysb_table_slot(id)
#define PYSB_CACHE_GET()                                                    \
	bpf_task_storage_get(&sandbox_cache, bpf_get_current_task_btf(), 0, \
			     BPF_LOCAL_STORAGE_GET_F_CREATE)
#define PYSB_GEN_GET()		 pysb_gen_ptr()
/* A fetch-and-add is fully ordered on every JIT: no read after it is done before it. */
#define PYSB_GEN_READ_ORDERED(p) __sync_fetch_and_add(p, 0)

/* What bpf_get_current_ancestor_cgroup_id(level) returns, for cgroup `cg`. */
static __always_inline __u64 pysb_ancestor_id(struct cgroup *cg, int level)
{
	struct cgroup *anc;

	if (level > BPF_CORE_READ(cg, level))
		return 0;
	anc = BPF_CORE_READ(cg, ancestors[level]);
	return anc ? BPF_CORE_READ(anc, kn, id) : 0;
}

static __always_inline __u64 *pysb_gen_ptr(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&sandbox_gen, &zero);
}

/* The bit of label_filter for the inode at `inode`, 0 to 2^PYSB_LABEL_FILTER_BITS - 1 (a
 * multiplicative hash: inode addresses are slab objects a fixed size apart). */
static __always_inline __u64 label_filter_bit(__u64 inode)
{
	return (inode * 0x9E3779B97F4A7C15ULL) >> (64 - PYSB_LABEL_FILTER_BITS);
}

static __always_inline __u64 *label_filter_word(__u64 h)
{
	__u32 key = (__u32)(h >> 6);

	return bpf_map_lookup_elem(&label_filter, &key);
}

/* May the inode at `inode` carry a label? false: it has none, no lookup needed. (No
 * stack beyond the key: the walk's frames are at the verifier's limit.) */
static __always_inline bool maybe_labelled(__u64 inode)
{
	__u64 h = label_filter_bit(inode), *w = label_filter_word(h);

	return !w || ((*(volatile __u64 *)w >> (h & 63)) & 1);
}

/* born_filter (maps.bpf.h): the word of cgroup `id`'s bit, and the bit in it. */
static __always_inline __u64 *born_filter_word(__u64 id, __u64 *bit)
{
	__u64 h = (id * 0x9E3779B97F4A7C15ULL) >> (64 - PYSB_BORN_FILTER_BITS);
	__u32 key = (__u32)(h >> 6);

	*bit = 1ULL << (h & 63);
	return bpf_map_lookup_elem(&born_filter, &key);
}

/* May cgroup `id` have been confined at its creation by the kernel? (false: never) */
static __always_inline bool maybe_born(__u64 id)
{
	__u64 bit, *w = born_filter_word(id, &bit);

	return !w || (*(volatile __u64 *)w & bit);
}

static __always_inline __u64 *pysb_table_slot(__u64 id)
{
	__u32 key = (__u32)id & (PYSB_CGROUP_TABLE_SLOTS - 1);

	return bpf_map_lookup_elem(&cgroup_table, &key);
}

#include "nearest.h"

/* For lsm/ programs. A cgroup held until its first execve (PYSB_SB_HOLD, bpf/watch.bpf.c)
 * is not enforced yet. */
static __always_inline struct pysb_sandbox_cfg *current_sandbox(__u64 *cgid)
{
	struct pysb_sandbox_cfg *cfg = pysb_cached_sandbox(cgid);

	if (cfg && (cfg->flags & PYSB_SB_HOLD))
		return NULL;
	return cfg;
}

/* For cgroup/ programs, which may not use task storage: the walk. They are attached to
 * sandbox cgroups only, where the task is sandboxed anyway. */
static __always_inline struct pysb_sandbox_cfg *current_sandbox_walk(__u64 *cgid)
{
	return pysb_nearest_sandbox(cgid);
}

static __always_inline void count_lost(__u32 sandbox, __u32 reason)
{
	__u32 slot = sandbox * PYSB_LOST_MAX + reason;
	__u64 *n = bpf_map_lookup_elem(&lost, &slot);

	if (n)
		(*n)++;
}

static long event_buf_try(__u32 n, void *data)
{
	__u32 key = 2 * n, *taken = data;
	struct pysb_event_buf *b = bpf_map_lookup_elem(&event_buf, &key);

	if (!b)
		return 1;
	if (__sync_lock_test_and_set(&b->busy, 1))
		return 0;
	*taken = n;
	return 1;
}

/* This CPU's first free pair of event buffers (maps.bpf.h, event_buf), taken; NULL when
 * every pair is held by a preempted hook. The search in a bpf_loop and out of line: the
 * verifier checks one try, and the hooks go on from one state, not one per pair. */
static __noinline __attribute__((unused)) struct pysb_event_buf *event_buf_take(void)
{
	__u32 n = PYSB_EVENT_NEST, key;
	struct pysb_event_buf *b;

	bpf_loop(PYSB_EVENT_NEST, event_buf_try, &n, 0);
	if (n >= PYSB_EVENT_NEST)
		return NULL;
	key = 2 * n;
	b = bpf_map_lookup_elem(&event_buf, &key);
	if (b)
		b->pair = n;
	return b;
}

/* Starts an event with the fields every kind shares filled in (counted in event_count);
 * NULL (counted as lost) if the sandbox has no reader or this CPU's buffers are all
 * taken. Every non-NULL result must be passed to event_send(). */
static __always_inline struct pysb_event *event_start(const struct pysb_sandbox_cfg *cfg,
						      __u64 cgid, __u16 kind, __u16 op,
						      __u32 access, __u32 decision)
{
	struct pysb_event_buf *b;
	struct task_struct *task;
	struct pysb_event *e;
	__u64 pid_tgid;
	__u64 *count = bpf_map_lookup_elem(&event_count, &cfg->id);

	if (count) /* every event, whether it is delivered or lost */
		(*count)++;
	if (!bpf_map_lookup_elem(&events, &cfg->id)) {
		count_lost(cfg->id, PYSB_LOST_NO_READER);
		return NULL;
	}
	b = event_buf_take();
	if (!b) {
		count_lost(cfg->id, PYSB_LOST_PREEMPTED);
		return NULL;
	}
	e = &b->e;
	pid_tgid = bpf_get_current_pid_tgid();
	e->ts_ns = bpf_ktime_get_ns();
	e->cgroup_id = cgid;
	e->sandbox = cfg->id;
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->kind = kind;
	e->op = op;
	e->access = access;
	e->decision = decision;
	e->flags = 0;
	e->path_len = 0;
	e->path_off = 0;
	e->rule = 0;
	e->target_pid = 0;
	e->dev = 0;
	e->repeat = 1;
	e->first_ns = e->ts_ns;
	task = bpf_get_current_task_btf();
	e->exec_id = (__u32)BPF_CORE_READ(task, self_exec_id);
	e->start_ns = BPF_CORE_READ(task, group_leader, start_time);
	e->path[0] = '\0';
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

#define PYSB_EVENT_HEAD __builtin_offsetof(struct pysb_event, path)

struct dedup_hash_ctx {
	const char *p;
	__u64 h;
};

static long dedup_hash_word(__u32 i, void *data)
{
	struct dedup_hash_ctx *c = data;

	c->h = (c->h ^ *(const __u64 *)(c->p + ((i * 8) & (PYSB_PATH_LEN - 8)))) * 0x100000001b3ull;
	return 0;
}

/* FNV-1a over the first `len` bytes of p, a word at a time, then the last bytes (those
 * of their word beyond len masked: the buffer holds an older event's bytes there). The
 * words in a bpf_loop: the verifier checks its body once, where a loop of 512 words was
 * walked word by word at each event_send call of each program (a third of the
 * instructions it checked for most hooks). */
static __always_inline __u64 dedup_hash(const char *p, __u32 len)
{
	struct dedup_hash_ctx c = { .p = p, .h = 0xcbf29ce484222325ull };
	__u32 rem = len & 7, off;
	__u64 w;

	if (len > PYSB_PATH_LEN)
		len = PYSB_PATH_LEN;
	bpf_loop(len / 8, dedup_hash_word, &c, 0);
	if (rem) {
		off = (len - rem) & (PYSB_PATH_LEN - 8);
		w = *(const __u64 *)(p + off) & ((1ull << (rem * 8)) - 1);
		c.h = (c.h ^ w) * 0x100000001b3ull;
	}
	return c.h;
}

/*
 * Copies the event into its sandbox's ring buffer at its real size (the path moved to
 * the front: path_off is 0 in what user space reads) and frees this CPU's buffer. A
 * repeat of an event sent less than PYSB_DEDUP_INTERVAL_NS ago is only counted in
 * `event_dedup` (include/pysb_abi.h, struct pysb_dedup_key): the next record of its
 * key, or user space reading the map, tells it.
 */
static __noinline __attribute__((unused)) void event_send(struct pysb_event *e)
{
	struct pysb_event_buf *b = (void *)e - __builtin_offsetof(struct pysb_event_buf, e), *out;
	struct pysb_dedup_key *k;
	struct pysb_dedup_val *v;
	__u32 pair = 2 * (b->pair & (PYSB_EVENT_NEST - 1)) + 1,
	      hlen = sizeof(struct pysb_net_event);
	__u64 size = PYSB_EVENT_HEAD + sizeof(struct pysb_net_event), idx, last, now;
	void *rb = bpf_map_lookup_elem(&events, &e->sandbox);

	out = bpf_map_lookup_elem(&event_buf, &pair);
	if (!rb || !out) {
		count_lost(e->sandbox, PYSB_LOST_NO_READER);
		goto done;
	}
	__builtin_memcpy(&out->e, e, PYSB_EVENT_HEAD);
	if (e->kind == PYSB_KIND_NET) {
		__builtin_memcpy(&out->e.net, &e->net, sizeof(e->net));
	} else {
		__u32 len = e->path_len > 0 ? e->path_len : 0;
		__u32 off = e->path_off;

		if (len > PYSB_PATH_LEN)
			len = PYSB_PATH_LEN;
		off &= PYSB_PATH_LEN - 1;
		out->e.path_off = 0;
		out->e.path[0] = '\0';
		if (len)
			bpf_probe_read_kernel(out->e.path, len, e->path + off);
		size = PYSB_EVENT_HEAD + (len ? len : 1);
		hlen = len;
	}
	k = &out->dkey;
	k->sandbox = e->sandbox;
	k->pid = e->pid;
	k->kind = e->kind;
	k->op = e->op;
	k->access = e->access;
	k->decision = e->decision;
	k->flags = e->flags;
	k->rule = e->rule;
	k->target_pid = e->target_pid;
	k->hash = dedup_hash(out->e.path, hlen);
	out->e.key_hash = k->hash;
	out->e.seq = 0;
	v = bpf_map_lookup_elem(&event_dedup, k);
	if (!v) {
		__builtin_memset(&out->dval, 0, sizeof(out->dval));
		/* full (or created meanwhile by another CPU): looked up again */
		bpf_map_update_elem(&event_dedup, k, &out->dval, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&event_dedup, k);
	}
	if (!v) { /* the map is full: the event is sent itself */
		if (bpf_ringbuf_output(rb, &out->e, size, 0))
			count_lost(e->sandbox, PYSB_LOST_RINGBUF_FULL);
		goto done;
	}
	idx = __sync_fetch_and_add(&v->total, 1) + 1;
	now = e->ts_ns;
	if (!v->first_ns)
		v->first_ns = now;
	v->last_ns = now;
	last = v->last_emit_ns;
	if (last && now - last < PYSB_DEDUP_INTERVAL_NS)
		goto done; /* counted */
	if (__sync_val_compare_and_swap(&v->last_emit_ns, last, now) != last)
		goto done; /* another CPU sends this key's record */
	out->e.seq = idx;
	out->e.first_ns = v->first_ns ? v->first_ns : now;
	out->e.repeat = (__u32)(idx - v->emitted);
	if (bpf_ringbuf_output(rb, &out->e, size, 0)) {
		/* not lost: counted, told by the next record of the key or read by user
		 * space from the map */
		v->last_emit_ns = last;
	} else {
		v->emitted = idx;
		v->first_ns = 0;
	}
done:
	/* same CPU: a plain store after the copy is enough */
	*(volatile __u32 *)&b->busy = 0;
}

/* The verdict for a denied request: -errno in enforce mode, 0 (allow) in audit mode. */
static __always_inline int deny_ret(const struct pysb_sandbox_cfg *cfg, int err)
{
	return (cfg->flags & PYSB_SB_AUDIT) ? 0 : -err;
}

static __always_inline __u32 decision_of(const struct pysb_sandbox_cfg *cfg)
{
	return (cfg->flags & PYSB_SB_AUDIT) ? PYSB_AUDIT : PYSB_DENY;
}

#define ENOSPC 28
#define ENOMEM 12

/*
 * Before a sandboxed task sets the owner of `file` (fcntl F_SETOWN/F_SETOWN_EX, ioctl
 * FIOSETOWN/SIOCSPGRP), its record in `sigio_owners` must fit: the call fails with
 * -ENOSPC when the map is full, never an owner whose SIGIO no rule judges. file_set_fowner
 * then finds the record in place (it cannot refuse).
 */
static __always_inline int sigio_owner_reserve(struct file *file)
{
	__u64 key = (__u64)file, cgid;

	if (!current_sandbox(&cgid))
		return 0;
	return bpf_map_update_elem(&sigio_owners, &key, &cgid, BPF_ANY) ? -ENOSPC : 0;
}

#endif /* PYSB_COMMON_BPF_H */
