/* SPDX-License-Identifier: MIT */
/* A hash index over strings held in the caller's array (strindex.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strindex.h"

size_t str_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

size_t *str_index_slot(const struct str_index *x, const char *key, str_key_fn key_of,
		       const void *arr)
{
	size_t mask = x->size - 1, i = str_hash(key) & mask;

	while (x->slots[i] && strcmp(key_of(arr, x->slots[i] - 1), key))
		i = (i + 1) & mask;
	return &x->slots[i];
}

int str_index_reserve(struct str_index *x, size_t n, str_key_fn key_of, const void *arr)
{
	size_t size = x->size ? x->size : 64;
	struct str_index grown;

	if (2 * (n + 1) <= x->size)
		return 0;
	while (2 * (n + 1) > size)
		size *= 2;
	grown.slots = calloc(size, sizeof(*grown.slots));
	if (!grown.slots)
		return -1;
	grown.size = size;
	for (size_t i = 0; i < n; i++)
		*str_index_slot(&grown, key_of(arr, i), key_of, arr) = i + 1;
	free(x->slots);
	*x = grown;
	return 0;
}

void str_index_free(struct str_index *x)
{
	free(x->slots);
	x->slots = NULL;
	x->size = 0;
}
