// SPDX-License-Identifier: MIT
/*
 * The lookup order of current_sandbox(): bpf/nearest.h compiled natively, with a fake
 * cgroup path and a fake `sandboxes` map. The nearest (deepest) registered cgroup wins,
 * whatever its ancestors hold (issue 16, cause 6).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pysb_abi.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* The current task's cgroup path: path[level - 1] is the id at `level`; 0 ends it. */
static __u64 path[PYSB_MAX_CGROUP_LEVEL + 1];
/* The registered cgroups and their sandboxes. */
static struct {
	__u64 cgid;
	struct pysb_sandbox_cfg cfg;
} registered[8];
static int n_registered, lookups;

static __u64 fake_ancestor(int level)
{
	return level >= 1 && level <= PYSB_MAX_CGROUP_LEVEL ? path[level - 1] : 0;
}

static struct pysb_sandbox_cfg *fake_lookup(const __u64 *id)
{
	lookups++;
	for (int i = 0; i < n_registered; i++)
		if (registered[i].cgid == *id)
			return &registered[i].cfg;
	return NULL;
}

#define PYSB_ANCESTOR_ID(level)	 fake_ancestor(level)
#define PYSB_SANDBOX_LOOKUP(idp) fake_lookup(idp)
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

static int setup(void **state)
{
	(void)state;
	n_registered = 0;
	lookups = 0;
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
	assert_int_equal(cgid, 777); /* untouched */
	assert_int_equal(lookups, 3); /* one per level, as before the fix */
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
	reg(100 + PYSB_MAX_CGROUP_LEVEL - 1, 2, 0);
	assert_int_equal(pysb_nearest_sandbox(&cgid)->id, 2);
	assert_int_equal(cgid, 100 + PYSB_MAX_CGROUP_LEVEL - 1);
	assert_int_equal(lookups, PYSB_MAX_CGROUP_LEVEL);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
