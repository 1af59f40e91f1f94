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

/* The top `bits` bits of x times the golden ratio: a multiplicative hash, for the bit
 * filters' keys (inode addresses are slab objects a fixed size apart, cgroup ids follow
 * each other). */
#define pysb_fib_hash(x, bits) (((__u64)(x)*0x9E3779B97F4A7C15ULL) >> (64 - (bits)))

/* The low 32 bits of a pointer the verifier knows as one (a hook's BTF argument, a field
 * loaded from it), as a number: by a 32-bit move, which it allows a loader with
 * CAP_PERFMON (a pointer leak), where a cast's shifts would be pointer arithmetic. */
static __always_inline __u32 pysb_low_half(const void *p)
{
	__u32 in = (__u32)(__u64)p, lo;

	asm volatile("%[lo] = %[in]" : [lo] "=w"(lo) : [in] "w"(in));
	return lo;
}

/* The bit of label_filter for the inode at `inode`, 0 to 2^PYSB_LABEL_FILTER_BITS - 1: of
 * the address's low 32 bits (slab objects a few hundred bytes apart: as spread as the
 * whole address), which a hook takes from the inode's BTF pointer without a probe read
 * (pysb_low_half; keep_name). */
static __always_inline __u64 label_filter_bit(__u64 inode)
{
	return pysb_fib_hash((__u32)inode, PYSB_LABEL_FILTER_BITS);
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
	__u64 h = pysb_fib_hash(id, PYSB_BORN_FILTER_BITS);
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

/*
 * The events' out-of-line parts (bpf/event.bpf.c): global functions, each verified once
 * on its own. Their loops are bpf_loop callbacks, which 6.7 and later verify as loops, at
 * each call site of the code that contains them: inlined (or in a static function), one
 * path-naming loop made 7.2's verifier check file_ioctl's 880,000 instructions, 38,000
 * without it. A global function takes no kernel pointer: the objects are passed as numbers
 * and read with probe reads, as the loops did anyway.
 */
/* This CPU's first free pair of event buffers (maps.bpf.h, event_buf), taken: its index
 * n (the buffers [2n] and [2n + 1]); -1 when every pair is held by a preempted hook. */
extern int pysb_event_buf_take(void);
/* Sends the event of buffer b (see event_send) and frees the pair. */
extern int pysb_event_send(struct pysb_event_buf *b);

/* The buffer of the event `e` that event_start() returned (the globals take the buffer). */
static __always_inline struct pysb_event_buf *event_buf_of(struct pysb_event *e)
{
	return (void *)e - __builtin_offsetof(struct pysb_event_buf, e);
}

static __always_inline struct pysb_event_buf *event_buf_take(void)
{
	int n = pysb_event_buf_take();
	struct pysb_event_buf *b;
	__u32 key;

	if (n < 0 || n >= PYSB_EVENT_NEST)
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

/*
 * Copies the event into its sandbox's ring buffer at its real size and frees this CPU's
 * buffer; a repeat of an event sent less than PYSB_DEDUP_INTERVAL_NS ago is only counted
 * (bpf/event.bpf.c, pysb_event_send). `e` is the one event_start() returned.
 */
static __always_inline void event_send(struct pysb_event *e)
{
	pysb_event_send(event_buf_of(e));
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
