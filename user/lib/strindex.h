/* SPDX-License-Identifier: MIT */
/* A hash index over strings held in the caller's own array (open addressing, kept at
 * most half full): a slot holds a position + 1, 0 is empty. */
#ifndef PYSB_STRINDEX_H
#define PYSB_STRINDEX_H

#include <stddef.h>

struct str_index {
	size_t *slots;
	size_t size; /* a power of two, 0 until the first reserve */
};

/* The key of the element at pos of arr. */
typedef const char *(*str_key_fn)(const void *arr, size_t pos);

size_t str_hash(const char *s); /* FNV-1a */
/* The slot holding key, or the empty slot where it belongs (reserve first). */
size_t *str_index_slot(const struct str_index *x, const char *key, str_key_fn key_of,
		       const void *arr);
/* Room for one more than the n elements of arr; -1 when out of memory (index unchanged). */
int str_index_reserve(struct str_index *x, size_t n, str_key_fn key_of, const void *arr);
void str_index_free(struct str_index *x);

#endif /* PYSB_STRINDEX_H */
