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

/* A name against the sandbox's patterns, one a bpf_loop step (name_matches). */
struct match_ctx {
	union {
		struct {
			char head[PYSB_IGNORE_LEN]; /* the name's first 31 bytes, NUL-ended */
			char tail[PYSB_IGNORE_LEN]; /* its last min(len, 31) bytes, NUL-ended */
		};
		char bytes[2 * PYSB_IGNORE_LEN]; /* both, for fold_step */
	};
	union {
		struct pysb_ignore_set *set;
		__u32 key; /* before the lookup: the sandbox (no stack slot of its own) */
	};
	__u32 len;
	__u8 fold; /* FOLD_*: patterns compare with ASCII case folded unless FOLD_NONE */
	__u8 hit;
};

/* Pattern i: one step. In a bpf_loop, not a bounded loop of its own: the verifier checks
 * its body once, where the loop over eight patterns of 32 compared bytes cost two thirds
 * of the whole object's verification (every program that walks a path checks this
 * function again: 6.8 of 10 million instructions on 6.1, 18 of its 38 s under TCG). */
static long name_matches(__u32 i, void *data)
{
	struct match_ctx *c = data;
	struct pysb_ignore *p;
	__u32 plen, kept, start;

	if (i >= PYSB_MAX_IGNORES || i >= c->set->count)
		return 1;
	p = &c->set->p[i];
	plen = p->len;
	if (plen > PYSB_IGNORE_LEN)
		return 0;
	switch (p->kind) {
	case PYSB_IGN_ANY:
		c->hit = 1;
		break;
	case PYSB_IGN_EXACT:
		c->hit = c->len == plen && bytes_equal(c->head, 0, p->text, plen, c->fold);
		break;
	case PYSB_IGN_PREFIX:
		c->hit = c->len >= plen && bytes_equal(c->head, 0, p->text, plen, c->fold);
		break;
	case PYSB_IGN_SUFFIX:
		/* tail holds the last min(len, 31) bytes of the name */
		if (c->len < plen)
			break;
		kept = c->len < PYSB_IGNORE_LEN - 1 ? c->len : PYSB_IGNORE_LEN - 1;
		start = kept - plen;
		c->hit = start < PYSB_IGNORE_LEN &&
			 bytes_equal(c->tail, start, p->text, plen, c->fold);
		break;
	}
	return c->hit ? 1 : 0;
}

/* Byte i of head and tail: folded to ASCII lower case; c->hit when it may fold into
 * another name there: non-ASCII, or a short alias's `~`. A bpf_loop step too. */
static long fold_step(__u32 i, void *data)
{
	struct match_ctx *c = data;
	char ch = c->bytes[i & (2 * PYSB_IGNORE_LEN - 1)];

	if (ch >= 'A' && ch <= 'Z')
		c->bytes[i & (2 * PYSB_IGNORE_LEN - 1)] = ch + ('a' - 'A');
	if ((ch & 0x80) || (ch == '~' && c->fold == FOLD_ALIASES))
		c->hit = 1;
	return 0;
}

/* Whether the name of one entry of the directory `dir` (a dentry) is hidden. */
__noinline int pysb_name_ignored(__u64 name_ptr, __u32 len, __u32 sandbox, __u64 dir)
{
	const unsigned char *name = (const unsigned char *)name_ptr;
	struct match_ctx c = { .key = sandbox, .len = len };
	__u32 off;
	int fold;

	/* This frame and the step's sit on top of the walk's and the hook's, whose combined
	 * stack the verifier bounds at 512 bytes: the sandbox key and fold_of's reads use
	 * the context's room (the tail before it is read). */
	c.set = bpf_map_lookup_elem(&ignores, &c.key);
	if (!c.set)
		return 0;
	fold = dir ? fold_of(dir, (__u64 *)c.tail) : FOLD_NONE;
	*(__u64 *)c.tail = 0; /* fold_step reads past the name's NUL */
	/* Dentry names are NUL-terminated: the _str reads stop there, never past the name. */
	bpf_probe_read_kernel_str(c.head, PYSB_IGNORE_LEN, name);
	off = len > PYSB_IGNORE_LEN - 1 ? len - (PYSB_IGNORE_LEN - 1) : 0;
	bpf_probe_read_kernel_str(c.tail, PYSB_IGNORE_LEN, name + off);
	/* Both halves folded (every byte, no early stop): the patterns below compare with
	 * either. A name longer than both hides its middle, but one that could fold into a
	 * pattern (31 bytes at most) holds foldable bytes in its head or its tail as well. */
	c.fold = fold;
	if (fold != FOLD_NONE && c.set->count) {
		bpf_loop(2 * PYSB_IGNORE_LEN, fold_step, &c, 0);
		if (c.hit)
			return 1;
	}
	/* FAT and exFAT drop a name's trailing dots (`.env.` opens `.env`; found by an
	 * adversary), Windows servers its trailing dots and spaces: hidden there too. The
	 * tail's last byte is the name's. */
	off = (len < PYSB_IGNORE_LEN - 1 ? len : PYSB_IGNORE_LEN - 1) - 1;
	if (fold != FOLD_NONE && c.set->count && len &&
	    (c.tail[off & (PYSB_IGNORE_LEN - 1)] == '.' ||
	     c.tail[off & (PYSB_IGNORE_LEN - 1)] == ' '))
		return 1;
	bpf_loop(PYSB_MAX_IGNORES, name_matches, &c, 0);
	return c.hit;
}
