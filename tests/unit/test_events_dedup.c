/* SPDX-License-Identifier: MIT */
/*
 * The user side of the kernel's event dedup (user/events/events_dedup.c): what each
 * record tells, and a table that stays spread for the keys the kernel's path hash gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "events_dedup.h"

static void event_of(struct pysb_event *e, uint64_t hash, uint64_t seq)
{
	memset(e, 0, sizeof(*e));
	e->sandbox = 7;
	e->pid = 1234;
	e->kind = PYSB_KIND_FILE;
	e->op = PYSB_OP_OPEN;
	e->access = PYSB_ACC_READ;
	e->key_hash = hash;
	e->seq = seq;
}

/* Records of one key tell only what is new: out of order, a repeat told once. */
static void test_repeats_told_once(void **state)
{
	struct events_dedup d = { 0 };
	struct pysb_event e;

	(void)state;
	event_of(&e, 42, 1);
	assert_int_equal(events_dedup_record(&d, &e, sizeof(e)), 0);
	assert_int_equal(e.repeat, 1);
	event_of(&e, 42, 5);
	assert_int_equal(events_dedup_record(&d, &e, sizeof(e)), 0);
	assert_int_equal(e.repeat, 4);
	event_of(&e, 42, 3); /* from another CPU, after: already told */
	assert_int_equal(events_dedup_record(&d, &e, sizeof(e)), 0);
	assert_int_equal(e.repeat, 0);
	event_of(&e, 43, 1);
	assert_int_equal(events_dedup_record(&d, &e, sizeof(e)), 0);
	assert_int_equal(e.repeat, 1);
	events_dedup_free(&d);
}

/*
 * 20,000 paths that differ in their last bytes only: the kernel's FNV-1a hashes then
 * differ in their high bits only. The table must still spread them (a lookup walks a
 * short run), not stack them in one slot (each record walking all the others).
 */
static void test_keys_differing_in_high_hash_bits_spread(void **state)
{
	struct events_dedup d = { 0 };
	struct pysb_event e;

	(void)state;
	for (uint64_t i = 1; i <= 20000; i++) {
		event_of(&e, 0x0123456789abcdefull ^ (i << 40), 1);
		assert_int_equal(events_dedup_record(&d, &e, sizeof(e)), 0);
		assert_int_equal(e.repeat, 1);
	}
	assert_true(events_dedup_longest_run(&d) < 100);
	events_dedup_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeats_told_once),
		cmocka_unit_test(test_keys_differing_in_high_hash_bits_spread),
	};

	return cmocka_run_group_tests_name("events_dedup", tests, NULL, NULL);
}
