/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ignore= name matching, shared by every program that walks a path (bpf/path.bpf.h).
 * No hook of its own.
 */
#include "common.bpf.h"

static __always_inline bool bytes_equal(const char *a, const char *b, __u32 n)
{
	for (__u32 i = 0; i < PYSB_IGNORE_LEN; i++) {
		if (i >= n)
			return true;
		if (a[i] != b[i])
			return false;
	}
	return true;
}

__noinline int pysb_name_ignored(__u64 name_ptr, __u32 len, __u32 sandbox)
{
	const unsigned char *name = (const unsigned char *)name_ptr;
	struct pysb_ignore_set *set = bpf_map_lookup_elem(&ignores, &sandbox);
	/* tail is twice as long: a suffix compared from any offset below 32 stays inside */
	char head[PYSB_IGNORE_LEN] = {}, tail[2 * PYSB_IGNORE_LEN] = {};
	__u32 off;

	if (!set)
		return 0;
	/* Dentry names are NUL-terminated: the _str reads stop there, never past the name. */
	bpf_probe_read_kernel_str(head, PYSB_IGNORE_LEN, name);
	off = len > PYSB_IGNORE_LEN - 1 ? len - (PYSB_IGNORE_LEN - 1) : 0;
	bpf_probe_read_kernel_str(tail, PYSB_IGNORE_LEN, name + off);
	for (__u32 i = 0; i < PYSB_MAX_IGNORES; i++) {
		struct pysb_ignore *p = &set->p[i];
		__u32 plen = p->len;

		if (i >= set->count)
			break;
		if (plen > PYSB_IGNORE_LEN)
			continue;
		switch (p->kind) {
		case PYSB_IGN_ANY:
			return 1;
		case PYSB_IGN_EXACT:
			if (len == plen && bytes_equal(head, p->text, plen))
				return 1;
			break;
		case PYSB_IGN_PREFIX:
			if (len >= plen && bytes_equal(head, p->text, plen))
				return 1;
			break;
		case PYSB_IGN_SUFFIX:
			/* tail holds the last min(len, 31) bytes of the name */
			if (len >= plen) {
				__u32 kept = len < PYSB_IGNORE_LEN - 1 ? len : PYSB_IGNORE_LEN - 1;
				__u32 start = kept - plen;

				if (start < PYSB_IGNORE_LEN &&
				    bytes_equal(tail + (start & (PYSB_IGNORE_LEN - 1)), p->text,
						plen))
					return 1;
			}
			break;
		}
	}
	return 0;
}
