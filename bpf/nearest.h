/* SPDX-License-Identifier: MIT */
/*
 * The order in which current_sandbox() (bpf/common.bpf.h) looks for a task's sandbox:
 * the NEAREST registered cgroup, i.e. the deepest of the task's cgroup and its ancestors
 * that is a key of `sandboxes`. A strict policy bound to a service's cgroup must not be
 * replaced by a broad or audit-mode one bound to any of its ancestors.
 *
 * And the per-task cache in front of that walk (pysb_cached_sandbox): every hooked
 * syscall of every process on the machine asks, most of them in no sandbox. The argument
 * that the cache never answers "not sandboxed" for a confined task is in docs/design.md
 * ("The sandbox lookup and its cache").
 *
 * Shared with tests/unit/test_nearest.c, which gives the operations its own meaning:
 *   PYSB_ANCESTOR_ID(cg, level)  id of the ancestor at `level` (1 = just below the root)
 *                                of cgroup `cg`, the current task's when cg is NULL; 0
 *                                past that cgroup's own level
 *   PYSB_SANDBOX_LOOKUP(idp)     the sandbox registered for cgroup *idp, or NULL
 *   PYSB_CGROUP                  the type of `cg` (a pointer)
 *   PYSB_LOOP(n, fn, ctx)        calls fn(i, ctx) for i from 0 until n or until it
 *                                returns non-zero (bpf_loop: the verifier checks fn once,
 *                                not once a level and a copy of the walk)
 *   PYSB_CGROUP_ID(cg)           the id of cgroup `cg`
 *   PYSB_CURRENT_CGROUP_ID()     the current task's cgroup id, read now
 * and, for the caches only (without PYSB_CACHE_GET, no cache is compiled):
 *   PYSB_CURRENT_CGROUP()        the current task's cgroup, read once (NULL: unknown)
 *   PYSB_CACHE_GET()             the current task's struct pysb_sandbox_cache (created
 *                                zeroed on first use), or NULL
 *   PYSB_GEN_GET()               pointer to the generation of `sandboxes`, or NULL
 *   PYSB_GEN_READ_ORDERED(p)     *p read with a full memory barrier: nothing after it is
 *                                read before it
 *   PYSB_CACHE_CGROUP_ID()       PYSB_CURRENT_CGROUP_ID(), as the caches read it
 *   PYSB_TABLE_SLOT(id)          pointer to the word of the shared cgroup table for cgroup
 *                                `id` (slot id mod PYSB_CGROUP_TABLE_SLOTS), or NULL
 *
 * Cost: one lookup when the task's own cgroup is registered; else the walk, one lookup
 * per level of the task's cgroup (it goes down from the root and remembers the last
 * hit). In front of the walk, two caches. The shared cgroup table: one word per slot,
 * "cgroup C at generation G has no sandbox" or "is its own sandbox", which every task of
 * C reads (no helper call: an array element; a task in no sandbox pays a few loads and
 * a compare). Behind it, the per-task cache for the rest (a task in a cgroup below its
 * sandbox's, a slot two cgroups share): a task pays the walk once per cgroup it runs in
 * and per change of `sandboxes`. A sandboxed task then pays one lookup, its sandbox's
 * entry.
 */
#ifndef PYSB_NEAREST_H
#define PYSB_NEAREST_H

#if !defined(PYSB_ANCESTOR_ID) || !defined(PYSB_SANDBOX_LOOKUP) || !defined(PYSB_CGROUP) || \
	!defined(PYSB_LOOP) || !defined(PYSB_CGROUP_ID) || !defined(PYSB_CURRENT_CGROUP_ID)
#error "define PYSB_ANCESTOR_ID, PYSB_SANDBOX_LOOKUP, PYSB_CGROUP, PYSB_LOOP, PYSB_CGROUP_ID and PYSB_CURRENT_CGROUP_ID before including nearest.h"
#endif

struct pysb_nearest_walk {
	PYSB_CGROUP cg;
	struct pysb_sandbox_cfg *found;
	__u64 found_id;
};

/* One level of the walk: level i + 1 (1 = just below the root); 1 ends it. */
static long pysb_nearest_level(__u32 i, void *data)
{
	struct pysb_nearest_walk *w = data;
	__u64 id = PYSB_ANCESTOR_ID(w->cg, (int)i + 1);
	struct pysb_sandbox_cfg *cfg;

	if (!id)
		return 1;
	cfg = PYSB_SANDBOX_LOOKUP(&id);
	if (cfg) {
		w->found_id = id;
		w->found = cfg; /* a deeper level may still hold a nearer one */
	}
	return 0;
}

/* The walk over cgroup `cg` (NULL: the current task's, read level by level). The cgroup
 * itself first: registered, it is the nearest (no cgroup is deeper), one lookup where the
 * walk makes one a level; a run's tasks, and a bound service's main process, are there. */
static __always_inline struct pysb_sandbox_cfg *pysb_nearest_of(PYSB_CGROUP cg, __u64 *cgid)
{
	struct pysb_nearest_walk w = { .cg = cg };
	__u64 own = cg ? PYSB_CGROUP_ID(cg) : PYSB_CURRENT_CGROUP_ID();
	struct pysb_sandbox_cfg *cfg = own ? PYSB_SANDBOX_LOOKUP(&own) : NULL;

	if (cfg) {
		*cgid = own;
		return cfg;
	}
	PYSB_LOOP(PYSB_MAX_CGROUP_LEVEL, pysb_nearest_level, &w);
	if (w.found)
		*cgid = w.found_id;
	return w.found;
}

/* The walk alone, for programs that cannot use the cache (cgroup/ socket programs). */
static __always_inline struct pysb_sandbox_cfg *pysb_nearest_sandbox(__u64 *cgid)
{
	return pysb_nearest_of(0, cgid);
}

#ifdef PYSB_CACHE_GET
/* cgid of an entry being written: no cgroup has it (ids are kernfs ids, never ~0). */
#define PYSB_CACHE_WRITING (~0ULL)

/*
 * The shared cgroup table (map `cgroup_table`; docs/design.md, "The sandbox lookup and
 * its cache"). A slot holds one 64-bit word, written and read whole (never torn):
 *   bit 63       set: the word holds an answer (a zeroed slot matches nothing)
 *   bit 62       set: the cgroup is its own sandbox; clear: it has none
 *   bits 61..32  the cgroup id without its low PYSB_CGROUP_TABLE_BITS, which the slot's
 *                index holds (ids too large to fit are never kept)
 *   bits 31..0   the generation of `sandboxes` the answer was found at (its low half)
 * The generation's low half repeats after 2^32 bumps: user space zeroes the table each
 * time the generation crosses a multiple of 2^31 (loader_bump_sandbox_gen), so no word
 * survives long enough to match a later generation with the same low half.
 */
#define PYSB_TABLE_VALID (1ULL << 63)
#define PYSB_TABLE_SELF	 (1ULL << 62)

static __always_inline bool pysb_table_fits(__u64 id)
{
	return id && !(id >> (PYSB_CGROUP_TABLE_BITS + 30));
}

static __always_inline __u64 pysb_table_word(__u64 id, __u64 gen, bool self)
{
	return PYSB_TABLE_VALID | (self ? PYSB_TABLE_SELF : 0) |
	       ((id >> PYSB_CGROUP_TABLE_BITS) << 32) | (__u32)gen;
}

/* Keeps the walk's answer for cgroup `own` at generation `gen` (`sb`: the sandbox found,
 * 0: none). Only "none" and "its own sandbox" fit a word; a cgroup below its sandbox is
 * left to the per-task cache. A slot two cgroups share holds the last answer written. */
static __always_inline void pysb_table_keep(__u64 own, __u64 gen, __u64 sb)
{
	volatile __u64 *slot;

	if (!pysb_table_fits(own) || (sb && sb != own))
		return;
	slot = PYSB_TABLE_SLOT(own);
	if (slot)
		*slot = pysb_table_word(own, gen, sb != 0);
}

/* The cache missed (or is unusable): the walk, and its answer stored. Out of line: the
 * hit below stays a few instructions in every hook, and the walk's state sits in a frame
 * of its own, not in the stack of every hook that calls deeper functions. */
static __noinline __attribute__((unused)) struct pysb_sandbox_cfg *pysb_sandbox_miss(
	volatile struct pysb_sandbox_cache *c, __u64 *genp, __u64 *cgid)
{
	struct pysb_sandbox_cfg *cfg;
	PYSB_CGROUP cg;
	__u64 own, gen, sb = 0;

	if (!genp)
		return pysb_nearest_sandbox(cgid);
	/* The generation first, with a barrier: every change of `sandboxes` made before
	 * the bump read here is seen by the walk below. */
	gen = PYSB_GEN_READ_ORDERED(genp);
	/* One read of the task's cgroup: the answer stored is the one for the id stored,
	 * even if the task is moved meanwhile (it then misses next time). */
	cg = PYSB_CURRENT_CGROUP();
	if (!cg)
		return pysb_nearest_sandbox(cgid);
	own = PYSB_CGROUP_ID(cg);
	cfg = pysb_nearest_of(cg, &sb);
	/* Only this task writes its entry, but a hook run by an interrupt on its CPU may
	 * read or write it while it does: marked as being written, the entry matches no
	 * cgroup, and a nested writer leaves it alone (it runs to its end before this one
	 * resumes, so a check without an atomic is enough). */
	if (c && c->cgid != PYSB_CACHE_WRITING) {
		c->cgid = PYSB_CACHE_WRITING;
		c->gen = gen;
		c->sandbox = cfg ? sb : 0;
		c->cgid = own;
	}
	pysb_table_keep(own, gen, cfg ? sb : 0);
	if (cfg)
		*cgid = sb;
	return cfg;
}

/* The shared table's answer for cgroup `own`, the current task's, at the current
 * generation of `sandboxes`, read alone (no lookup): */
enum pysb_table_answer {
	PYSB_TABLE_UNKNOWN, /* no word for it: ask pysb_cached_sandbox */
	PYSB_TABLE_NONE,    /* in no sandbox */
	PYSB_TABLE_OWN,	    /* its own sandbox */
};

static __always_inline enum pysb_table_answer pysb_table_says(__u64 own)
{
	volatile __u64 *slot = pysb_table_fits(own) ? PYSB_TABLE_SLOT(own) : 0;
	__u64 *genp = PYSB_GEN_GET();
	__u64 w, gen;

	if (!slot || !genp)
		return PYSB_TABLE_UNKNOWN;
	w = *slot;
	gen = *(volatile __u64 *)genp;
	if (w == pysb_table_word(own, gen, false))
		return PYSB_TABLE_NONE;
	return w == pysb_table_word(own, gen, true) ? PYSB_TABLE_OWN : PYSB_TABLE_UNKNOWN;
}

/* struct pysb_sandbox_cache (pysb_abi.h): the walk's answer while the task stays in cgroup
 * `cgid` and `sandboxes` at generation `gen`. */
static __always_inline struct pysb_sandbox_cfg *pysb_cached_sandbox(__u64 *cgid)
{
	volatile struct pysb_sandbox_cache *c;
	__u64 *genp = PYSB_GEN_GET();
	struct pysb_sandbox_cfg *cfg;
	__u64 sb, own = PYSB_CACHE_CGROUP_ID();
	volatile __u64 *slot = pysb_table_fits(own) ? PYSB_TABLE_SLOT(own) : 0;

	/* The shared table first: the answer for the cgroup the task is in now. */
	if (slot && genp) {
		__u64 w = *slot, gen = *(volatile __u64 *)genp;

		if (w == pysb_table_word(own, gen, false))
			return NULL;
		if (w == pysb_table_word(own, gen, true)) {
			cfg = PYSB_SANDBOX_LOOKUP(&own);
			if (cfg) {
				*cgid = own;
				return cfg;
			}
			/* Unbound since, not bumped yet: the walk decides, as below. */
		}
	}
	c = PYSB_CACHE_GET();
	if (c && genp && c->cgid == own && c->gen == *(volatile __u64 *)genp) {
		sb = c->sandbox;
		if (!sb)
			return NULL;
		cfg = PYSB_SANDBOX_LOOKUP(&sb);
		if (cfg) {
			*cgid = sb;
			return cfg;
		}
		/* Unbound since, its generation not bumped yet: an ancestor may still be
		 * bound. The walk decides. */
	}
	return pysb_sandbox_miss(c, genp, cgid);
}
#endif /* PYSB_CACHE_GET */

#endif /* PYSB_NEAREST_H */
