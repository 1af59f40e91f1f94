/* SPDX-License-Identifier: MIT */
/*
 * The user side of the kernel's dedup of repeated events (struct pysb_dedup_key,
 * include/pysb_abi.h): what each record of a tracked key stands for, and the counts the
 * kernel holds that no record told yet (read from `event_dedup`).
 */
#ifndef PYSB_EVENTS_DEDUP_H
#define PYSB_EVENTS_DEDUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pysb_abi.h"

struct dedup_entry;

struct events_dedup {
	struct dedup_entry *slot;
	size_t n, cap;
};

/*
 * A record received (header and path, `len` bytes as the ring gave them): sets
 * e->repeat to the occurrences it tells that no earlier record or sweep told. 0: none
 * (a record that arrived after a sweep counted it); the caller skips it. Returns -1 when
 * out of memory (the record is then told as it is).
 */
int events_dedup_record(struct events_dedup *d, struct pysb_event *e, size_t len);

/*
 * The occurrences the kernel counted after the last record of each key this process
 * received: each handed to emit() as a copy of that record with repeat (and first/last
 * time) set. With `final` (sandbox `id` has no task left and its ring was read to the
 * end), the keys of `id` no record told are added to *lost, and every key of `id` is
 * removed from the map. Returns how many keys were removed (0 but with `final`), or
 * -errno when the map could not be read or the keys removed (the caller then counts none
 * off: owner_records stays above, never below).
 */
int events_dedup_sweep(struct events_dedup *d, int map_fd, bool final, uint32_t id,
		       void (*emit)(void *ctx, struct pysb_event *e), void *ctx, uint64_t *lost);

/* Removes the keys of sandbox `id` from the map (a new run under a reused id): how many,
 * or -errno (then none counted off). */
int events_dedup_clear(int map_fd, uint32_t id);

/* The longest run of used slots: the most a lookup walks (tests keep it short). */
size_t events_dedup_longest_run(const struct events_dedup *d);

void events_dedup_free(struct events_dedup *d);

#endif /* PYSB_EVENTS_DEDUP_H */
