/* SPDX-License-Identifier: MIT */
/*
 * The lookup order of current_sandbox(): bpf/nearest.h compiled natively, with a fake
 * cgroup path and a fake `sandboxes` map. The nearest (deepest) registered cgroup wins,
 * whatever its ancestors hold (issue 16, cause 6). And its per-task cache (issue 17): never
 * a stale answer once the task moved or `sandboxes` changed and its generation was bumped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pysb_abi.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#ifndef __noinline
#define __noinline __attribute__((noinline))
#endif

/* The current task's cgroup path: path[level - 1] is the id at `level`; 0 ends it. */
static __u64 path[PYSB_MAX_CGROUP_LEVEL + 1];
/* The registered cgroups and their sandboxes. */
static struct {
	__u64 cgid;
	struct pysb_sandbox_cfg cfg;
} registered[8];
static int n_registered, lookups;

/* A snapshot of a cgroup path (what PYSB_CURRENT_CGROUP() reads at once). */
struct fake_cg {
	__u64 ids[PYSB_MAX_CGROUP_LEVEL + 1];
};
static struct fake_cg snapshot;

/* The task's cache entry (NULL when task storage is unavailable), the generation of
 * `sandboxes`, and how often the generation was read with a barrier. */
static struct pysb_sandbox_cache cache_entry;
static bool cache_available;
static __u64 gen, ordered_reads;
/* The shared cgroup table (NULL slots when unavailable). */
static __u64 table[PYSB_CGROUP_TABLE_SLOTS];
static bool table_available;
/* Called at each lookup: lets a test change the world in the middle of a walk. */
static void (*on_lookup)(int n);

static __u64 fake_ancestor(const struct fake_cg *cg, int level)
{
	const __u64 *ids = cg ? cg->ids : path;

	return level >= 1 && level <= PYSB_MAX_CGROUP_LEVEL ? ids[level - 1] : 0;
}

static __u64 own_id(const __u64 *ids)
{
	__u64 id = 1; /* the root */

	for (int i = 0; i < PYSB_MAX_CGROUP_LEVEL && ids[i]; i++)
		id = ids[i];
	return id;
}

static const struct fake_cg *fake_current_cgroup(void)
{
	memcpy(snapshot.ids, path, sizeof(path));
	return &snapshot;
}

static struct pysb_sandbox_cfg *fake_lookup(const __u64 *id)
{
	lookups++;
	if (on_lookup)
		on_lookup(lookups);
	for (int i = 0; i < n_registered; i++)
		if (registered[i].cgid == *id)
			return &registered[i].cfg;
	return NULL;
}

static __u64 fake_gen_ordered(__u64 *p)
{
	ordered_reads++;
	return *p;
}

#define PYSB_CGROUP		    const struct fake_cg *
#define PYSB_ANCESTOR_ID(cg, level) fake_ancestor(cg, level)
#define PYSB_SANDBOX_LOOKUP(idp)    fake_lookup(idp)
#define PYSB_CURRENT_CGROUP()	    fake_current_cgroup()
#define PYSB_CGROUP_ID(cg)	    own_id((cg)->ids)
#define PYSB_CURRENT_CGROUP_ID()    own_id(path)
#define PYSB_CACHE_CGROUP_ID()	    own_id(path)
#define PYSB_TABLE_SLOT(id)	    (table_available ? &table[(id) % PYSB_CGROUP_TABLE_SLOTS] : NULL)
#define PYSB_CACHE_GET()	    (cache_available ? &cache_entry : NULL)
#define PYSB_GEN_GET()		    (&gen)
#define PYSB_GEN_READ_ORDERED(p)    fake_gen_ordered(p)
#define PYSB_LOOP(n, fn, ctx)                   \
	do {                                    \
		for (__u32 i = 0; i < (n); i++) \
			if ((fn)(i, ctx))       \
				break;          \
	} while (0)
#include "../../bpf/nearest.h"

/* set_path(ids..., 0): the task's cgroup, from the top level down. */
static void set_path(const __u64 *ids)
{
	int i = 0;

	for (; ids[i] && i < PYSB_MAX_CGROUP_LEVEL; i++)
		path[i] = ids[i];
	for (; i <= PYSB_MAX_CGROUP_LEVEL; i++)
		path[i] = 0;
}

static void reg(__u64 cgid, __u32 sandbox, __u32 flags)
{
	registered[n_registered].cgid = cgid;
	registered[n_registered].cfg.id = sandbox;
	registered[n_registered].cfg.flags = flags;
	n_registered++;
}

/* What user space does after every write of `sandboxes` (loader_bump_sandbox_gen). */
static void bump(void)
{
	gen++;
}

static void unreg(__u64 cgid)
{
	for (int i = 0; i < n_registered; i++)
		if (registered[i].cgid == cgid) {
			registered[i] = registered[--n_registered];
			return;
		}
}

static int setup(void **state)
{
	(void)state;
	n_registered = 0;
	lookups = 0;
	memset(&cache_entry, 0, sizeof(cache_entry));
	cache_available = true;
	memset(table, 0, sizeof(table));
	table_available = true;
	gen = 7;
	ordered_reads = 0;
	on_lookup = NULL;
	return 0;
}

static void test_unregistered_task_has_no_sandbox(void **state)
{
	static const __u64 ids[] = { 10, 11, 12, 0 };
	__u64 cgid = 777;

	(void)state;
	set_path(ids);
	reg(99, 1, 0);
	assert_null(pysb_nearest_sandbox(&cgid));
	assert_int_equal(cgid, 777);  /* untouched */
	assert_int_equal(lookups, 4); /* its own cgroup, then one per level */
}

static void test_single_registered_ancestor(void **state)
{
	static const __u64 ids[] = { 10, 11, 12, 0 };
	__u64 cgid = 0;

	(void)state;
	set_path(ids);
	reg(11, 4, 0);
	assert_int_equal(pysb_nearest_sandbox(&cgid)->id, 4);
	assert_int_equal(cgid, 11);
}

/* The case: an audit-mode policy on a parent, a strict one on the service. */
static void test_nested_inner_strict_wins_over_outer_audit(void **state)
{
	static const __u64 ids[] = { 10, 20, 30, 40, 0 };
	__u64 cgid = 0;
	struct pysb_sandbox_cfg *cfg;

	(void)state;
	set_path(ids);
	reg(20, 1, PYSB_SB_AUDIT | PYSB_SB_DAEMON); /* outer, broad */
	reg(30, 2, PYSB_SB_DAEMON);		    /* inner, strict */
	cfg = pysb_nearest_sandbox(&cgid);
	assert_non_null(cfg);
	assert_int_equal(cfg->id, 2);
	assert_int_equal(cfg->flags & PYSB_SB_AUDIT, 0);
	assert_int_equal(cgid, 30);
}

static void test_task_in_registered_cgroup_itself_is_nearest(void **state)
{
	static const __u64 ids[] = { 10, 20, 30, 0 };
	__u64 cgid = 0;

	(void)state;
	set_path(ids);
	reg(10, 1, 0);
	reg(20, 2, 0);
	reg(30, 3, 0);
	assert_int_equal(pysb_nearest_sandbox(&cgid)->id, 3);
	assert_int_equal(cgid, 30);
}

/* Registration order in the map does not matter, only depth. */
static void test_order_of_registration_does_not_matter(void **state)
{
	static const __u64 ids[] = { 10, 20, 30, 0 };
	__u64 cgid = 0;

	(void)state;
	set_path(ids);
	reg(30, 3, 0);
	reg(10, 1, 0);
	assert_int_equal(pysb_nearest_sandbox(&cgid)->id, 3);
	assert_int_equal(cgid, 30);
}

/* A sibling's registration never applies. */
static void test_sibling_registration_ignored(void **state)
{
	static const __u64 ids[] = { 10, 20, 0 };
	__u64 cgid = 0;

	(void)state;
	set_path(ids);
	reg(10, 1, 0);
	reg(21, 2, 0); /* sibling of 20 */
	assert_int_equal(pysb_nearest_sandbox(&cgid)->id, 1);
	assert_int_equal(cgid, 10);
}

/* The deepest level searched is PYSB_MAX_CGROUP_LEVEL: a registration there is found. */
static void test_deepest_searched_level(void **state)
{
	__u64 ids[PYSB_MAX_CGROUP_LEVEL + 1], cgid = 0;

	(void)state;
	for (int i = 0; i < PYSB_MAX_CGROUP_LEVEL; i++)
		ids[i] = 100 + i;
	ids[PYSB_MAX_CGROUP_LEVEL] = 0;
	set_path(ids);
	reg(100, 1, 0);
	reg(100 + PYSB_MAX_CGROUP_LEVEL - 2, 2, 0);
	assert_int_equal(pysb_nearest_sandbox(&cgid)->id, 2);
	assert_int_equal(cgid, 100 + PYSB_MAX_CGROUP_LEVEL - 2);
	assert_int_equal(lookups, 1 + PYSB_MAX_CGROUP_LEVEL); /* its own, then every level */
	/* its own cgroup registered: the nearest there is, found by the first lookup */
	reg(100 + PYSB_MAX_CGROUP_LEVEL - 1, 3, 0);
	lookups = 0;
	assert_int_equal(pysb_nearest_sandbox(&cgid)->id, 3);
	assert_int_equal(cgid, 100 + PYSB_MAX_CGROUP_LEVEL - 1);
	assert_int_equal(lookups, 1);
}

/* ---- the per-task cache (pysb_cached_sandbox) ---- */

/* Asks as a hook does; returns the sandbox id (0: none) and counts the lookups. */
static __u32 ask(__u64 *cgid)
{
	struct pysb_sandbox_cfg *cfg;

	lookups = 0;
	*cgid = 0;
	cfg = pysb_cached_sandbox(cgid);
	return cfg ? cfg->id : 0;
}

/* An unsandboxed task walks once, then answers from its cache without any lookup. */
static void test_cache_unsandboxed_walks_once(void **state)
{
	static const __u64 ids[] = { 10, 11, 12, 0 };
	__u64 cgid;

	(void)state;
	set_path(ids);
	reg(99, 1, 0);
	assert_int_equal(ask(&cgid), 0);
	assert_int_equal(lookups, 4);
	assert_int_equal(ordered_reads, 1);
	assert_int_equal(cache_entry.cgid, 12);
	assert_int_equal(cache_entry.gen, 7);
	assert_int_equal(cache_entry.sandbox, 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(ask(&cgid), 0);
		assert_int_equal(lookups, 0);
	}
	assert_int_equal(ordered_reads, 1);
}

/* A sandboxed task: one lookup (its sandbox's entry) per hook, the nearest one. */
static void test_cache_sandboxed_one_lookup_nearest(void **state)
{
	static const __u64 ids[] = { 10, 20, 30, 40, 0 };
	__u64 cgid;

	(void)state;
	set_path(ids);
	reg(20, 1, PYSB_SB_AUDIT);
	reg(30, 2, 0);
	assert_int_equal(ask(&cgid), 2);
	assert_int_equal(cgid, 30);
	assert_int_equal(ask(&cgid), 2);
	assert_int_equal(cgid, 30);
	assert_int_equal(lookups, 1);
}

/* The escape: cached "none", then the cgroup (or an ancestor) is bound. The bump
 * is what makes the next hook look again; without it the stale "none" would stay. */
static void test_cache_bind_seen_after_bump(void **state)
{
	static const __u64 ids[] = { 10, 11, 12, 0 };
	__u64 cgid;

	(void)state;
	set_path(ids);
	assert_int_equal(ask(&cgid), 0);
	reg(11, 5, 0);
	assert_int_equal(ask(&cgid), 0); /* before the bump: why user space must bump */
	bump();
	assert_int_equal(ask(&cgid), 5);
	assert_int_equal(cgid, 11);
}

/* Nearest wins through the cache: the ancestor's sandbox was cached, then the task's own
 * cgroup is bound with a stricter policy. */
static void test_cache_nearer_bind_replaces_cached_ancestor(void **state)
{
	static const __u64 ids[] = { 10, 20, 30, 0 };
	__u64 cgid;

	(void)state;
	set_path(ids);
	reg(10, 1, PYSB_SB_AUDIT);
	assert_int_equal(ask(&cgid), 1);
	reg(30, 2, 0);
	bump();
	assert_int_equal(ask(&cgid), 2);
	assert_int_equal(cgid, 30);
}

/* A task moved into another cgroup misses at once, with no bump at all. */
static void test_cache_move_misses_without_bump(void **state)
{
	static const __u64 plain[] = { 10, 11, 0 }, confined[] = { 10, 21, 0 };
	__u64 cgid;

	(void)state;
	reg(21, 3, 0);
	set_path(plain);
	assert_int_equal(ask(&cgid), 0);
	set_path(confined);
	assert_int_equal(ask(&cgid), 3);
	assert_int_equal(cgid, 21);
	set_path(plain); /* moved back out, from outside */
	assert_int_equal(ask(&cgid), 0);
}

/* The nearest binding removed: its ancestor's applies at once, even before the bump (the
 * cached cgroup's entry is looked up at every use), never "none". */
static void test_cache_unbind_falls_back_to_ancestor(void **state)
{
	static const __u64 ids[] = { 10, 20, 30, 0 };
	__u64 cgid;

	(void)state;
	set_path(ids);
	reg(10, 1, 0);
	reg(30, 2, 0);
	assert_int_equal(ask(&cgid), 2);
	unreg(30);
	assert_int_equal(ask(&cgid), 1);
	assert_int_equal(cgid, 10);
	bump();
	assert_int_equal(ask(&cgid), 1);
}

/* A reload switches the cgroup to a new sandbox id in place: seen at the next hook. */
static void test_cache_reload_seen_at_once(void **state)
{
	static const __u64 ids[] = { 10, 20, 0 };
	__u64 cgid;

	(void)state;
	set_path(ids);
	reg(20, 4, PYSB_SB_AUDIT);
	assert_int_equal(ask(&cgid), 4);
	registered[0].cfg.id = 9;
	registered[0].cfg.flags = 0;
	assert_int_equal(ask(&cgid), 9);
}

/* The race of docs/design.md: a bind and its bump land while a hook walks (after the
 * walk passed that level). The hook stores "none" under the generation it read before
 * the walk, which the bump made old: the next hook looks again. */
static void bind_during_walk(int n)
{
	if (n == 3) { /* (1: its own cgroup, 2: level 10, 3: level 11) */
		reg(10, 6, 0);
		bump();
	}
}

static void test_cache_bind_racing_a_walk_not_kept(void **state)
{
	static const __u64 ids[] = { 10, 11, 12, 0 };
	__u64 cgid;

	(void)state;
	set_path(ids);
	on_lookup = bind_during_walk;
	assert_int_equal(ask(&cgid), 0); /* this hook began before the bind: allowed */
	on_lookup = NULL;
	assert_int_equal(cache_entry.gen, 7);
	assert_int_equal(ask(&cgid), 6);
	assert_int_equal(cgid, 10);
}

/* A task moved while its hook walks: the answer stored is the one for the cgroup id
 * stored (one snapshot), so moving it back cannot reuse an answer for the other one. */
static const __u64 move_a[] = { 10, 11, 0 }, move_b[] = { 10, 21, 0 };

static void move_during_walk(int n)
{
	if (n == 1)
		set_path(move_b);
}

static void test_cache_move_during_walk_consistent(void **state)
{
	__u64 cgid;

	(void)state;
	reg(11, 8, 0); /* a is confined, b is not */
	set_path(move_a);
	on_lookup = move_during_walk;
	assert_int_equal(ask(&cgid), 8);
	on_lookup = NULL;
	assert_int_equal(cache_entry.cgid, 11);
	assert_int_equal(cache_entry.sandbox, 11);
	assert_int_equal(ask(&cgid), 0); /* now in b */
	set_path(move_a);
	assert_int_equal(ask(&cgid), 8);
}

/* An entry being written (by the hook an interrupt preempted), a fresh one, or no task
 * storage: the walk decides, and an entry being written is left to its writer. */
static void test_cache_unusable_entry_walks(void **state)
{
	static const __u64 ids[] = { 10, 11, 0 };
	__u64 cgid;

	(void)state;
	table_available = false; /* the per-task cache alone */
	set_path(ids);
	reg(11, 2, 0);
	cache_entry = (struct pysb_sandbox_cache){ .cgid = PYSB_CACHE_WRITING, .gen = 7 };
	assert_int_equal(ask(&cgid), 2);
	assert_int_equal(lookups, 1); /* its own cgroup is the sandbox */
	assert_true(cache_entry.cgid == PYSB_CACHE_WRITING);
	assert_int_equal(cache_entry.sandbox, 0);
	cache_entry = (struct pysb_sandbox_cache){ .cgid = 0, .gen = 7, .sandbox = 0 };
	assert_int_equal(ask(&cgid), 2);
	assert_int_equal(cache_entry.cgid, 11);
	cache_available = false;
	for (int i = 0; i < 2; i++) {
		assert_int_equal(ask(&cgid), 2);
		assert_int_equal(lookups, 1);
	}
}

/* ---- the shared cgroup table in front of it ---- */

static __u64 slot_of(__u64 id)
{
	return table[id % PYSB_CGROUP_TABLE_SLOTS];
}

/* A task in no sandbox: after one walk, every task of its cgroup answers from the table,
 * without task storage and without a lookup. */
static void test_table_unsandboxed_answers_without_task_storage(void **state)
{
	static const __u64 ids[] = { 10, 11, 12, 0 };
	__u64 cgid;

	(void)state;
	set_path(ids);
	reg(99, 1, 0);
	assert_int_equal(ask(&cgid), 0);
	assert_int_equal(lookups, 4);
	assert_true(slot_of(12) == pysb_table_word(12, 7, false));
	cache_available = false; /* another task of the cgroup, or none at all */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(ask(&cgid), 0);
		assert_int_equal(lookups, 0);
	}
}

/* A task in the cgroup that is its sandbox (a run's tasks, a service's main process):
 * one lookup, its sandbox's entry. */
static void test_table_own_sandbox_one_lookup(void **state)
{
	static const __u64 ids[] = { 10, 20, 0 };
	__u64 cgid;

	(void)state;
	set_path(ids);
	reg(10, 1, PYSB_SB_AUDIT);
	reg(20, 2, 0);
	assert_int_equal(ask(&cgid), 2);
	assert_true(slot_of(20) == pysb_table_word(20, 7, true));
	cache_available = false;
	assert_int_equal(ask(&cgid), 2);
	assert_int_equal(cgid, 20);
	assert_int_equal(lookups, 1);
}

/* The word alone, read by the socket hooks before any lookup (pysb_table_says): "its own
 * sandbox" for the cgroup's id at the current generation only, "none" likewise, else not
 * known (another id of the slot, an older generation, a cgroup below its sandbox). */
static void test_table_says_own_none_or_unknown(void **state)
{
	static const __u64 ids[] = { 10, 20, 0 }, below[] = { 10, 20, 30, 0 };
	__u64 cgid;

	(void)state;
	set_path(ids);
	assert_int_equal(pysb_table_says(20), PYSB_TABLE_UNKNOWN); /* nothing kept yet */
	reg(20, 4, PYSB_SB_DAEMON);
	assert_int_equal(ask(&cgid), 4);
	assert_int_equal(pysb_table_says(20), PYSB_TABLE_OWN);
	/* the slot's other ids */
	assert_int_equal(pysb_table_says(20 + PYSB_CGROUP_TABLE_SLOTS), PYSB_TABLE_UNKNOWN);
	unreg(20);
	bump();
	assert_int_equal(pysb_table_says(20), PYSB_TABLE_UNKNOWN); /* an older generation's */
	assert_int_equal(ask(&cgid), 0);
	assert_int_equal(pysb_table_says(20), PYSB_TABLE_NONE);
	reg(20, 5, 0);
	bump();
	set_path(below);
	cache_available = false;
	assert_int_equal(ask(&cgid), 5);
	assert_int_equal(pysb_table_says(30), PYSB_TABLE_UNKNOWN); /* below its sandbox */
}

/* A cgroup below its sandbox: the word has no room for the sandbox's id; nothing kept in
 * the table (the per-task cache answers), and never "none". */
static void test_table_cgroup_below_its_sandbox_not_kept(void **state)
{
	static const __u64 ids[] = { 10, 20, 30, 0 };
	__u64 cgid;

	(void)state;
	set_path(ids);
	reg(20, 3, 0);
	assert_int_equal(ask(&cgid), 3);
	assert_int_equal(cgid, 20);
	assert_true(slot_of(30) == 0);
	cache_available = false;
	assert_int_equal(ask(&cgid), 3); /* the walk again */
	assert_int_equal(cgid, 20);
}

/* Cached "none" in the table, then the cgroup is bound: seen once the generation is
 * bumped, as with the per-task cache (why user space bumps before it says "confined"). */
static void test_table_bind_seen_after_bump(void **state)
{
	static const __u64 ids[] = { 10, 11, 0 };
	__u64 cgid;

	(void)state;
	set_path(ids);
	cache_available = false;
	assert_int_equal(ask(&cgid), 0);
	reg(11, 5, 0);
	assert_int_equal(ask(&cgid), 0); /* before the bump */
	bump();
	assert_int_equal(ask(&cgid), 5);
	assert_int_equal(cgid, 11);
	assert_true(slot_of(11) == pysb_table_word(11, 8, true));
}

/* "Its own sandbox" kept, then that binding removed with an ancestor still bound: the
 * ancestor's policy at once (the entry is looked up at each use), never "none". */
static void test_table_unbind_falls_back_to_ancestor(void **state)
{
	static const __u64 ids[] = { 10, 11, 0 };
	__u64 cgid;

	(void)state;
	set_path(ids);
	cache_available = false;
	reg(10, 1, 0);
	reg(11, 2, 0);
	assert_int_equal(ask(&cgid), 2);
	unreg(11);
	assert_int_equal(ask(&cgid), 1);
	assert_int_equal(cgid, 10);
}

/* Two cgroups sharing a slot: each answer is checked against the whole id; the slot
 * holds the last one written, the other walks. */
static void test_table_slot_shared_by_two_cgroups(void **state)
{
	static const __u64 a[] = { 10, 12, 0 }, b[] = { 10, 12 + PYSB_CGROUP_TABLE_SLOTS, 0 };
	__u64 cgid;

	(void)state;
	cache_available = false;
	reg(12 + PYSB_CGROUP_TABLE_SLOTS, 4, 0);
	for (int i = 0; i < 2; i++) {
		set_path(a);
		assert_int_equal(ask(&cgid), 0);
		set_path(b);
		assert_int_equal(ask(&cgid), 4);
		assert_int_equal(cgid, 12 + PYSB_CGROUP_TABLE_SLOTS);
	}
}

/* A word names one generation: neither the one before nor the one after. Its low half
 * comes round after 2^32 bumps, which is why user space zeroes the table every 2^31. */
static void test_table_word_names_one_generation(void **state)
{
	(void)state;
	assert_true(pysb_table_word(12, 7, false) != pysb_table_word(12, 8, false));
	assert_true(pysb_table_word(12, 7, false) != pysb_table_word(12, 6, false));
	assert_true(pysb_table_word(12, 7, false) != pysb_table_word(12, 7, true));
	assert_true(pysb_table_word(12, 7, false) !=
		    pysb_table_word(12 + PYSB_CGROUP_TABLE_SLOTS, 7, false));
	assert_true(pysb_table_word(12, 7, false) == pysb_table_word(12, 7 + (1ULL << 32), false));
	assert_true(PYSB_CGROUP_TABLE_CLEAR_EVERY <= (1ULL << 31));
	assert_true(pysb_table_word(0, 0, false) != 0); /* a zeroed slot matches nothing */
}

/* An id too large for the word's 30 bits is never kept (it could alias another). */
static void test_table_large_id_not_kept(void **state)
{
	const __u64 big = 1ULL << 50;
	__u64 ids[] = { 10, big, 0 }, cgid;

	(void)state;
	set_path(ids);
	assert_int_equal(ask(&cgid), 0);
	for (unsigned i = 0; i < PYSB_CGROUP_TABLE_SLOTS; i++)
		assert_true(table[i] == 0);
	reg(big, 3, 0);
	bump();
	assert_int_equal(ask(&cgid), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_unregistered_task_has_no_sandbox, setup),
		cmocka_unit_test_setup(test_single_registered_ancestor, setup),
		cmocka_unit_test_setup(test_nested_inner_strict_wins_over_outer_audit, setup),
		cmocka_unit_test_setup(test_task_in_registered_cgroup_itself_is_nearest, setup),
		cmocka_unit_test_setup(test_order_of_registration_does_not_matter, setup),
		cmocka_unit_test_setup(test_sibling_registration_ignored, setup),
		cmocka_unit_test_setup(test_deepest_searched_level, setup),
		cmocka_unit_test_setup(test_cache_unsandboxed_walks_once, setup),
		cmocka_unit_test_setup(test_cache_sandboxed_one_lookup_nearest, setup),
		cmocka_unit_test_setup(test_cache_bind_seen_after_bump, setup),
		cmocka_unit_test_setup(test_cache_nearer_bind_replaces_cached_ancestor, setup),
		cmocka_unit_test_setup(test_cache_move_misses_without_bump, setup),
		cmocka_unit_test_setup(test_cache_unbind_falls_back_to_ancestor, setup),
		cmocka_unit_test_setup(test_cache_reload_seen_at_once, setup),
		cmocka_unit_test_setup(test_cache_bind_racing_a_walk_not_kept, setup),
		cmocka_unit_test_setup(test_cache_move_during_walk_consistent, setup),
		cmocka_unit_test_setup(test_cache_unusable_entry_walks, setup),
		cmocka_unit_test_setup(test_table_unsandboxed_answers_without_task_storage, setup),
		cmocka_unit_test_setup(test_table_own_sandbox_one_lookup, setup),
		cmocka_unit_test_setup(test_table_says_own_none_or_unknown, setup),
		cmocka_unit_test_setup(test_table_cgroup_below_its_sandbox_not_kept, setup),
		cmocka_unit_test_setup(test_table_bind_seen_after_bump, setup),
		cmocka_unit_test_setup(test_table_unbind_falls_back_to_ancestor, setup),
		cmocka_unit_test_setup(test_table_slot_shared_by_two_cgroups, setup),
		cmocka_unit_test_setup(test_table_word_names_one_generation, setup),
		cmocka_unit_test_setup(test_table_large_id_not_kept, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
