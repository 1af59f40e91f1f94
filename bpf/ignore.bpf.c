/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ignore= name matching, shared by every program that walks a path (bpf/path.bpf.h).
 * No hook of its own.
 */
#include "common.bpf.h"

/*
 * Case-insensitive directories. There a dentry's name is the spelling of the lookup that
 * made it, not the name on disk: `.ENV` or `.eNv` reaches `.env`, and later lookups of
 * `.env`, the host's included, find that same dentry (found by an adversary: ignore=.env
 * and ignore=*.pem read and rewritten through other spellings, in a casefolded ext4
 * directory and on vfat). Other spellings are not only ASCII case: the kernel's Unicode
 * folding turns some non-ASCII characters into ASCII ones (KELVIN SIGN into k, LONG S
 * into s; on some kernels it drops ignorable code points), and FAT, NTFS and SMB answer
 * to each file's short alias (CREDEN~1.JSO for credentials.json), and FAT and exFAT to
 * a name with trailing dots. So there, names are compared with ASCII case folded, and a
 * name with a non-ASCII byte, ending in a dot or a space, or with a `~` where short
 * aliases exist, is hidden under any pattern: it may name a hidden file. A file
 * hidden by its absolute path (ignore=/...) is hidden as an inode, whatever spelling
 * reaches it (user space labels it).
 */
#define S_CASEFOLD	    (1 << 15) /* include/linux/fs.h, unchanged since 5.4 */
#define MSDOS_SUPER_MAGIC   0x4d44    /* vfat and msdos */
#define EXFAT_SUPER_MAGIC   0x2011BAB0
#define NTFS3_SUPER_MAGIC   0x7366746e
#define CIFS_SUPER_MAGIC    0xFF534D42
#define SMB2_SUPER_MAGIC    0xFE534D42
#define HFSPLUS_SUPER_MAGIC 0x482b

enum { FOLD_NONE, FOLD_CASE, FOLD_ALIASES };

/* How names in the directory `dir` (a dentry) compare. `w`: a word of the caller's
 * frame, each read's destination in turn (the combined stack of a hook's calls is at its
 * limit). */
static __always_inline int fold_of(__u64 dir, __u64 *w)
{
	__u64 magic;

	bpf_probe_read_kernel(w, 8, (void *)(dir + bpf_core_field_offset(struct dentry, d_sb)));
	bpf_probe_read_kernel(w, 8,
			      (void *)(*w + bpf_core_field_offset(struct super_block, s_magic)));
	magic = *w;
	if (magic == MSDOS_SUPER_MAGIC || magic == NTFS3_SUPER_MAGIC || magic == CIFS_SUPER_MAGIC ||
	    magic == SMB2_SUPER_MAGIC)
		return FOLD_ALIASES;
	if (magic == EXFAT_SUPER_MAGIC || magic == HFSPLUS_SUPER_MAGIC)
		return FOLD_CASE;
	bpf_probe_read_kernel(w, 8, (void *)(dir + bpf_core_field_offset(struct dentry, d_inode)));
	if (!*w)
		return FOLD_NONE;
	/* i_flags, an unsigned int: the word's low half (little-endian) */
	bpf_probe_read_kernel(w, 4, (void *)(*w + bpf_core_field_offset(struct inode, i_flags)));
	return (__u32)*w & S_CASEFOLD ? FOLD_CASE : FOLD_NONE;
}

/* Folds `s` (n bytes) to ASCII lower case; true when it holds a byte that may fold into
 * another name there: non-ASCII, or a short alias's `~`. */
static __always_inline int fold_bytes(char *s, __u32 n, int fold)
{
	int other = 0;

	for (__u32 i = 0; i < PYSB_IGNORE_LEN; i++) {
		char c;

		if (i >= n)
			break;
		c = s[i];
		if (c >= 'A' && c <= 'Z')
			s[i] = c + ('a' - 'A');
		if ((c & 0x80) || (c == '~' && fold == FOLD_ALIASES))
			other = 1;
	}
	return other;
}

/* a[start..start+n) (indexes taken modulo 32, within a's 32 bytes) equals b[0..n), with
 * b's ASCII case folded when `fold`. */
static __always_inline bool bytes_equal(const char *a, __u32 start, const char *b, __u32 n,
					bool fold)
{
	for (__u32 i = 0; i < PYSB_IGNORE_LEN; i++) {
		char c;

		if (i >= n)
			return true;
		c = b[i];
		if (fold && c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		if (a[(start + i) & (PYSB_IGNORE_LEN - 1)] != c)
			return false;
	}
	return true;
}

/* Whether the name of one entry of the directory `dir` (a dentry) is hidden. */
__noinline int pysb_name_ignored(__u64 name_ptr, __u32 len, __u32 sandbox, __u64 dir)
{
	const unsigned char *name = (const unsigned char *)name_ptr;
	struct pysb_ignore_set *set = bpf_map_lookup_elem(&ignores, &sandbox);
	char head[PYSB_IGNORE_LEN] = {}, tail[PYSB_IGNORE_LEN] = {};
	__u64 w = 0; /* fold_of's reads */
	__u32 off;
	int fold;

	if (!set)
		return 0;
	/* Dentry names are NUL-terminated: the _str reads stop there, never past the name. */
	bpf_probe_read_kernel_str(head, PYSB_IGNORE_LEN, name);
	off = len > PYSB_IGNORE_LEN - 1 ? len - (PYSB_IGNORE_LEN - 1) : 0;
	bpf_probe_read_kernel_str(tail, PYSB_IGNORE_LEN, name + off);
	fold = dir ? fold_of(dir, &w) : FOLD_NONE;
	/* Both halves folded (a sum, not ||): the patterns below compare with either. A name
	 * longer than both hides its middle, but one that could fold into a pattern (31
	 * bytes at most) holds foldable bytes in its head or its tail as well. */
	if (fold != FOLD_NONE && set->count &&
	    fold_bytes(head, PYSB_IGNORE_LEN, fold) + fold_bytes(tail, PYSB_IGNORE_LEN, fold))
		return 1;
	/* FAT and exFAT drop a name's trailing dots (`.env.` opens `.env`; found by an
	 * adversary), Windows servers its trailing dots and spaces: hidden there too. The
	 * tail's last byte is the name's. */
	off = (len < PYSB_IGNORE_LEN - 1 ? len : PYSB_IGNORE_LEN - 1) - 1;
	if (fold != FOLD_NONE && set->count && len &&
	    (tail[off & (PYSB_IGNORE_LEN - 1)] == '.' || tail[off & (PYSB_IGNORE_LEN - 1)] == ' '))
		return 1;
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
			if (len == plen && bytes_equal(head, 0, p->text, plen, fold))
				return 1;
			break;
		case PYSB_IGN_PREFIX:
			if (len >= plen && bytes_equal(head, 0, p->text, plen, fold))
				return 1;
			break;
		case PYSB_IGN_SUFFIX:
			/* tail holds the last min(len, 31) bytes of the name */
			if (len >= plen) {
				__u32 kept = len < PYSB_IGNORE_LEN - 1 ? len : PYSB_IGNORE_LEN - 1;
				__u32 start = kept - plen;

				if (start < PYSB_IGNORE_LEN &&
				    bytes_equal(tail, start, p->text, plen, fold))
					return 1;
			}
			break;
		}
	}
	return 0;
}
