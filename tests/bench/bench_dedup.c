/* SPDX-License-Identifier: MIT */
/*
 * Benchmark (not a test): the user side of the event dedup (user/events/events_dedup.c)
 * recording distinct denials, as a flood of new files gives them. Each record carries the
 * kernel's path hash (FNV-1a a word at a time, bpf/common.bpf.h dedup_hash, computed the
 * same way here), so the table sees the hashes it sees in a run. Prints records per
 * second and the longest run of used slots (what one lookup may walk) for path shapes
 * whose varying digits fall in different bytes of the hashed words.
 *
 * Usage: bench_dedup [N]   (records per shape; 100,000 by default)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events_dedup.h"

static uint64_t fnv_words(const char *p, unsigned len)
{
	uint64_t h = 0xcbf29ce484222325ull, w;
	unsigned i, rem = len & 7;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
	}
	if (rem) {
		w = 0;
		memcpy(&w, p + len - rem, rem);
		h = (h ^ w) * 0x100000001b3ull;
	}
	return h;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const char *const shapes[] = { "/tmp/abc/fil%06d.txt", "/srv/app/log%06d",
					      "/tmp/e2e.000123456/flood/file-%06d" };
	static struct pysb_event e;
	int n = argc > 1 ? atoi(argv[1]) : 100000;

	printf("dedup: %d distinct records per path shape\n", n);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct events_dedup d = { 0 };
		char path[128];
		double t0 = now(), t;

		for (int i = 0; i < n; i++) {
			int len = snprintf(path, sizeof(path), shapes[s], i);

			memset(&e, 0, sizeof(e));
			e.sandbox = 3;
			e.pid = 100;
			e.kind = PYSB_KIND_FILE;
			e.op = PYSB_OP_OPEN;
			e.access = PYSB_ACC_READ;
			e.key_hash = fnv_words(path, (unsigned)len + 1);
			e.seq = 1;
			if (events_dedup_record(&d, &e, sizeof(e)))
				return 1;
		}
		t = now() - t0;
		printf("  %-36s %10.0f records/s  longest run %zu\n", shapes[s], n / t,
		       events_dedup_longest_run(&d));
		events_dedup_free(&d);
	}
	return 0;
}
