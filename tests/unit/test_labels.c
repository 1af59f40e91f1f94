/* SPDX-License-Identifier: MIT */
/*
 * The loader's side of the label requests (user/kernel/loader.c, struct pysb_label_req):
 * a batch is read in the order it was asked, each label checked against the descriptor
 * it was asked through. The kernel's answers are written by hand into a real hash map of
 * the request's layout (creating a map needs no LSM: root, or CAP_BPF; skipped without).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <cmocka.h>

#include "loader.h"
#include "loader_int.h"

#define TID 4242

static int reqs = -1;

static int setup(void **state)
{
	(void)state;
	reqs = bpf_map_create(BPF_MAP_TYPE_HASH, "label_reqs", sizeof(uint32_t),
			      sizeof(struct pysb_label_req), 4, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (reqs >= 0)
		close(reqs);
	return 0;
}

/* The kernel's answer: n labels 100 + i for descriptors 10 + i, in state `state`. */
static void answer(uint32_t n, uint32_t state)
{
	struct pysb_label_req r = { .state = state, .n = n };
	uint32_t tid = TID;

	for (uint32_t i = 0; i < n; i++) {
		r.label[i] = 100 + i;
		r.fd[i] = 10 + (int)i;
	}
	assert_int_equal(bpf_map_update_elem(reqs, &tid, &r, BPF_ANY), 0);
}

static void test_labels_read_in_order_each_checked_against_its_descriptor(void **state)
{
	int fds[4] = { 10, 11, 12, 13 };
	uint64_t labels[4] = { 0 };
	size_t given = 99;

	(void)state;
	if (reqs < 0)
		skip(); /* no BPF map here (not root) */
	/* every one answered, in order */
	answer(4, PYSB_LABEL_PENDING);
	assert_int_equal(label_collect(reqs, TID, fds, labels, 4, &given), 0);
	assert_int_equal(given, 4);
	assert_int_equal(labels[0], 100);
	assert_int_equal(labels[3], 103);
	/* the third answered for another descriptor (a statfs of the thread between) */
	fds[2] = 20;
	memset(labels, 0, sizeof(labels));
	assert_int_equal(label_collect(reqs, TID, fds, labels, 4, &given), -EPROTO);
	assert_int_equal(given, 2);
	assert_int_equal(labels[1], 101);
	assert_int_equal(labels[2], 0);
	fds[2] = 12;
	/* two answered, then every label in use */
	answer(2, PYSB_LABEL_FULL);
	assert_int_equal(label_collect(reqs, TID, fds, labels, 4, &given), -ENOSPC);
	assert_int_equal(given, 2);
	/* two answered, the rest never (no program on sb_statfs) */
	answer(2, PYSB_LABEL_PENDING);
	assert_int_equal(label_collect(reqs, TID, fds, labels, 4, &given), -ENOTSUP);
	assert_int_equal(given, 2);
	/* no request at all */
	label_end(reqs, TID);
	assert_int_equal(label_collect(reqs, TID, fds, labels, 1, &given), -ENOTSUP);
	assert_int_equal(given, 0);
}

/* label_arm leaves an empty pending request: nothing answered yet. */
static void test_label_arm_starts_an_empty_batch(void **state)
{
	struct pysb_label_req r;
	uint32_t tid = TID;

	(void)state;
	if (reqs < 0)
		skip();
	answer(3, PYSB_LABEL_FULL);
	assert_int_equal(label_arm(reqs, TID), 0);
	assert_int_equal(bpf_map_lookup_elem(reqs, &tid, &r), 0);
	assert_int_equal(r.state, PYSB_LABEL_PENDING);
	assert_int_equal(r.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels_read_in_order_each_checked_against_its_descriptor),
		cmocka_unit_test(test_label_arm_starts_an_empty_batch),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
