/* SPDX-License-Identifier: MIT */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "events_dedup.h"

struct dedup_entry {
	bool used;
	struct pysb_dedup_key key;
	uint64_t seen; /* occurrences told: the highest seq received or swept */
	char *rec;     /* the last record received of the key, as the ring gave it */
	size_t len;
};

static void key_of(const struct pysb_event *e, struct pysb_dedup_key *k)
{
	memset(k, 0, sizeof(*k));
	pysb_dedup_key_fields(k, e);
	k->hash = e->key_hash;
}

/*
 * The key's slot. The kernel's path hash is FNV-1a a word at a time: paths that differ
 * in their last bytes (file-0001, file-0002) differ in its high bits only, which one
 * multiply never carries down to the bits a slot index takes: every such key fell in
 * one slot, and each record walked the whole run. A full avalanche (the finalizer of
 * MurmurHash3) spreads every input bit over all of them.
 */
static size_t slot_of(const struct events_dedup *d, const struct pysb_dedup_key *k)
{
	uint64_t h = k->hash ^ ((uint64_t)k->sandbox << 32 | k->pid) ^
		     ((uint64_t)k->kind << 48 | (uint64_t)k->op << 32 | k->access);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (size_t)h & (d->cap - 1);
}

size_t events_dedup_longest_run(const struct events_dedup *d)
{
	size_t longest = 0, run = 0;

	/* twice around: a run may wrap past the last slot */
	for (size_t j = 0; j < 2 * d->cap; j++) {
		run = d->slot[j & (d->cap - 1)].used ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	return longest > d->cap ? d->cap : longest;
}

static struct dedup_entry *find(struct events_dedup *d, const struct pysb_dedup_key *k, bool add)
{
	size_t i;

	if (add && (d->n + 1) * 2 > d->cap) {
		struct events_dedup bigger = { .cap = d->cap ? d->cap * 2 : 1024 };

		bigger.slot = calloc(bigger.cap, sizeof(*bigger.slot));
		if (!bigger.slot)
			return NULL;
		for (size_t j = 0; j < d->cap; j++) {
			if (!d->slot[j].used)
				continue;
			i = slot_of(&bigger, &d->slot[j].key);
			while (bigger.slot[i].used)
				i = (i + 1) & (bigger.cap - 1);
			bigger.slot[i] = d->slot[j];
		}
		bigger.n = d->n;
		free(d->slot);
		*d = bigger;
	}
	if (!d->cap)
		return NULL;
	for (i = slot_of(d, k); d->slot[i].used; i = (i + 1) & (d->cap - 1))
		if (!memcmp(&d->slot[i].key, k, sizeof(*k)))
			return &d->slot[i];
	if (!add)
		return NULL;
	d->slot[i].used = true;
	d->slot[i].key = *k;
	d->n++;
	return &d->slot[i];
}

int events_dedup_record(struct events_dedup *d, struct pysb_event *e, size_t len)
{
	struct pysb_dedup_key k;
	struct dedup_entry *x;
	char *rec;

	if (!e->seq) { /* not tracked: the record is what it says */
		if (!e->repeat)
			e->repeat = 1;
		return 0;
	}
	key_of(e, &k);
	x = find(d, &k, true);
	if (!x) {
		e->repeat = 1; /* out of memory: at least this one */
		return -1;
	}
	/* Records of a key may arrive out of order (from several CPUs) or after a sweep
	 * told their counts: only what is beyond the highest seq told counts. */
	e->repeat = e->seq > x->seen ? (uint32_t)(e->seq - x->seen) : 0;
	if (e->seq > x->seen)
		x->seen = e->seq;
	if (len > sizeof(*e))
		len = sizeof(*e);
	if (x->len != len || !x->rec) {
		rec = realloc(x->rec, len);
		if (!rec)
			return -1;
		x->rec = rec;
		x->len = len;
	}
	memcpy(x->rec, e, len);
	return 0;
}

/* Every key and value of the map (one batch read, not a syscall per key). */
static int read_map(int fd, struct pysb_dedup_key **keys, struct pysb_dedup_val **vals, size_t *n)
{
	size_t cap = PYSB_DEDUP_ENTRIES;
	__u32 in = 0, out = 0;
	bool first = true;

	*n = 0;
	*keys = calloc(cap, sizeof(**keys));
	*vals = calloc(cap, sizeof(**vals));
	if (!*keys || !*vals)
		return -ENOMEM;
	while (*n < cap) {
		__u32 count = (__u32)(cap - *n);
		int err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, *keys + *n, *vals + *n,
					       &count, NULL);

		if (err < 0 && errno != ENOENT)
			return -errno;
		*n += count;
		if (err < 0)
			break; /* ENOENT: the end */
		in = out;
		first = false;
	}
	return 0;
}

int events_dedup_sweep(struct events_dedup *d, int map_fd, bool final, uint32_t id,
		       void (*emit)(void *ctx, struct pysb_event *e), void *ctx, uint64_t *lost)
{
	struct pysb_dedup_key *keys = NULL;
	struct pysb_dedup_val *vals = NULL;
	static struct pysb_event e;
	size_t n = 0, n_del = 0;
	int err = read_map(map_fd, &keys, &vals, &n);

	for (size_t i = 0; !err && i < n; i++) {
		struct dedup_entry *x = find(d, &keys[i], false);
		bool ours = final && keys[i].sandbox == id;

		if (ours)
			keys[n_del++] = keys[i]; /* i >= n_del: not read again */
		if (!x || !x->rec) {
			if (ours && lost)
				*lost += vals[i].total; /* no record of the key arrived */
			continue;
		}
		if (vals[i].total <= x->seen)
			continue;
		memcpy(&e, x->rec, x->len);
		memset((char *)&e + x->len, 0, sizeof(e) - x->len);
		e.repeat = (uint32_t)(vals[i].total - x->seen);
		e.seq = vals[i].total;
		e.first_ns = vals[i].first_ns ? vals[i].first_ns : vals[i].last_ns;
		e.ts_ns = vals[i].last_ns;
		x->seen = vals[i].total;
		emit(ctx, &e);
	}
	if (!err && n_del) {
		__u32 count = (__u32)n_del;

		if (bpf_map_delete_batch(map_fd, keys, &count, NULL) < 0)
			err = -errno;
	}
	free(keys);
	free(vals);
	return err ? err : (int)n_del;
}

int events_dedup_clear(int map_fd, uint32_t id)
{
	struct pysb_dedup_key *keys = NULL;
	struct pysb_dedup_val *vals = NULL;
	size_t n = 0, n_del = 0;
	int err = read_map(map_fd, &keys, &vals, &n);

	for (size_t i = 0; !err && i < n; i++)
		if (keys[i].sandbox == id)
			keys[n_del++] = keys[i];
	if (!err && n_del) {
		__u32 count = (__u32)n_del;

		if (bpf_map_delete_batch(map_fd, keys, &count, NULL) < 0)
			err = -errno;
	}
	free(keys);
	free(vals);
	return err ? err : (int)n_del;
}

void events_dedup_free(struct events_dedup *d)
{
	for (size_t i = 0; i < d->cap; i++)
		free(d->slot[i].rec);
	free(d->slot);
	memset(d, 0, sizeof(*d));
}
