/* SPDX-License-Identifier: MIT */
/*
 * The file_rules entries of one sandbox (user/kernel/sandbox_maps.c), as they are written
 * in one batch: one entry per inode label, the union of its paths' access, named by the
 * first of them; hidden files last, with an empty grant.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "compile.h"
#include "loader.h"

#define SB 9

/* Where the entry of `label` is (the last one: a later key replaces an earlier one). */
static size_t entry_of(const struct pysb_file_key *keys, size_t m, uint64_t label)
{
	size_t at = m;

	for (size_t i = 0; i < m; i++)
		if (keys[i].label == label)
			at = i;
	assert_true(at < m);
	return at;
}

/* Two spellings of one inode (label 7) and a hard link of another (label 3): one entry
 * each, the union of the access, the rule of the first path that named it. */
static void test_one_entry_per_inode_union_first_rule(void **state)
{
	struct compiled_file files[] = {
		{ .path = "/a", .access = PYSB_ACC_READ },
		{ .path = "/b", .access = PYSB_ACC_READ },
		{ .path = "/a2", .access = PYSB_ACC_WRITE },
		{ .path = "/b-link", .access = PYSB_ACC_EXEC },
	};
	struct compiled c = { .files = files, .n_files = 4 };
	uint64_t labels[] = { 7, 3, 7, 3 };
	struct pysb_file_key keys[4];
	struct pysb_file_rule rules[4];
	size_t m, a, b;

	(void)state;
	m = file_rules_entries(&c, labels, SB, keys, rules);
	assert_int_equal(m, 2);
	a = entry_of(keys, m, 7);
	b = entry_of(keys, m, 3);
	assert_int_equal(rules[a].access, PYSB_ACC_READ | PYSB_ACC_WRITE);
	assert_int_equal(rules[a].rule, 1); /* "/a", index 0 */
	assert_int_equal(rules[b].access, PYSB_ACC_READ | PYSB_ACC_EXEC);
	assert_int_equal(rules[b].rule, 2); /* "/b", index 1 */
	assert_int_equal(keys[a].sandbox, SB);
	assert_int_equal(keys[b].sandbox, SB);
}

/* A hidden file (ignore=) comes after every file entry: in the batch its empty grant
 * replaces the grant of a tree rule on the same inode. */
static void test_hidden_last_with_nothing(void **state)
{
	struct compiled_file files[] = {
		{ .path = "/t", .access = PYSB_ACC_RW },
		{ .path = "/t/secret", .access = PYSB_ACC_READ },
	};
	struct compiled_hidden hidden[] = { { .path = "/t/secret" } };
	struct compiled c = { .files = files, .n_files = 2, .hidden = hidden, .n_hidden = 1 };
	uint64_t labels[] = { 5, 6, 6 };
	struct pysb_file_key keys[3];
	struct pysb_file_rule rules[3];
	size_t m;

	(void)state;
	m = file_rules_entries(&c, labels, SB, keys, rules);
	assert_int_equal(m, 3);
	assert_int_equal(keys[2].label, 6);
	assert_int_equal(rules[2].access, 0);
	assert_int_equal(rules[entry_of(keys, m, 5)].access, PYSB_ACC_RW);
	assert_int_equal(entry_of(keys, m, 6), 2); /* the last word on label 6 */
}

/* Many rules, few inodes: as many entries as labels, whatever the order of the paths. */
static void test_many_paths_few_labels(void **state)
{
	enum { N = 1000 };
	static struct compiled_file files[N];
	static uint64_t labels[N];
	static struct pysb_file_key keys[N];
	static struct pysb_file_rule rules[N];
	struct compiled c = { .files = files, .n_files = N };
	size_t m;

	(void)state;
	for (size_t i = 0; i < N; i++) {
		files[i] = (struct compiled_file){ .path = "/x", .access = PYSB_ACC_READ };
		labels[i] = (i * 7919) % 10 + 1; /* labels 1..10, interleaved */
	}
	m = file_rules_entries(&c, labels, SB, keys, rules);
	assert_int_equal(m, 10);
	for (uint64_t l = 1; l <= 10; l++) {
		size_t at = entry_of(keys, m, l), first = N;

		for (size_t i = 0; i < N && first == N; i++)
			if (labels[i] == l)
				first = i;
		assert_int_equal(rules[at].rule, first + 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_entry_per_inode_union_first_rule),
		cmocka_unit_test(test_hidden_last_with_nothing),
		cmocka_unit_test(test_many_paths_few_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
