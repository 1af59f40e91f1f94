/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The walk up a file's ancestry (bpf/path.bpf.h says what it decides), shared by every
 * program that judges a path. No hook of its own.
 *
 * It is the file hooks' hot path: one level costs one probe read of the dentry's head
 * (parent, name and inode lie within 32 bytes), one hash lookup of the inode's address in
 * `inode_labels` (a miss on almost every level; for the file itself, its bit of
 * `label_filter` first, which spares it), and a second lookup only on a labelled inode. A mount's root dentry is read once per mount, not per level, and the ignore=
 * patterns are only matched when the sandbox has some. The first PYSB_WALK_UNROLLED
 * levels are straight-line code; deeper paths go on in a bpf_loop.
 *
 * A global function: the verifier checks it once, on its own, whatever number of hooks
 * and walks per hook use it.
 *
 * In front of the walk above the file, a per-task cache of the answer for the file's
 * directory (`dir_cache`, `fs_gen`; docs/design.md, "The directory verdict cache"): a
 * sandboxed task that opens many files in one directory, or one file many times, walks
 * once. Only answers that found a rule without leaving the directory's mount, on file
 * systems whose dentries move only through vfs_rename, are kept.
 */
#include "path.bpf.h"

#define PYSB_WALK_UNROLLED 12

/* The walk's own state, in its frame (its callers keep only the result). */
struct walk_state {
	__u64 dentry;
	__u64 vfsmnt;	/* struct vfsmount *; 0: a dentry-only walk */
	__u64 mnt_root; /* vfsmnt's root dentry */
	__u64 head[4];	/* one dentry's head (read_head) */
	__u32 sandbox;
	__u8 has_ignores;
	__u8 crossed; /* the walk left its first mount */
	__u8 ign0;    /* the file's own name matched an ignore= pattern */
	__u8 _pad;
	struct {
		__u32 granted, rule;
		__u8 found, ignored;
	} r;
	__u32 filter_key; /* label_filter's key: in what was padding (the frame is full) */
	/* The directory verdict cache: the slot, and what an answer there is valid for. In
	 * the state, not in registers: the combined stack of a hook's calls stays small. */
	struct pysb_dir_slot *slot;
	__u64 dir, gen, sgen;
};

/*
 * What one level reads of dentry d, into c->head: [0] d_parent, [1] the name's length
 * (low half), [2] the name, [3] d_inode.
 */
#define H_PARENT 0
#define H_LEN	 1
#define H_NAME	 2
#define H_INODE	 3

static __always_inline void read_head(struct walk_state *c, __u64 d)
{
	__u32 op = bpf_core_field_offset(struct dentry, d_parent);
	__u32 on = bpf_core_field_offset(struct dentry, d_name);
	__u32 oi = bpf_core_field_offset(struct dentry, d_inode);
	__u32 ol = bpf_core_field_offset(struct qstr, len);
	__u32 om = bpf_core_field_offset(struct qstr, name);

	/* Relocated constants: the verifier keeps one of the two branches. */
	if (on == op + 8 && oi == op + 24 && ol == 4 && om == 8) {
		/* d_parent, d_name {hash, len, name}, d_inode: one read of 32 bytes */
		bpf_probe_read_kernel(c->head, sizeof(c->head), (void *)(d + op));
		c->head[H_LEN] >>= 32; /* little-endian: len is the high half of hash_len */
		return;
	}
	c->head[H_LEN] = 0;
	bpf_probe_read_kernel(&c->head[H_PARENT], 8, (void *)(d + op));
	bpf_probe_read_kernel(&c->head[H_LEN], 4, (void *)(d + on + ol));
	bpf_probe_read_kernel(&c->head[H_NAME], 8, (void *)(d + on + om));
	bpf_probe_read_kernel(&c->head[H_INODE], 8, (void *)(d + oi));
}

static __always_inline bool found(struct walk_state *c, __u32 access, __u32 rule)
{
	c->r.granted = access;
	c->r.rule = rule;
	c->r.found = 1;
	return true;
}

/* The rule of the sandbox on the inode at `inode`, if that inode carries a label; with
 * `filter`, its bit of label_filter first. */
static __always_inline struct pysb_file_rule *rule_of(struct walk_state *c, __u64 inode,
						      __u32 sandbox, bool filter)
{
	struct pysb_file_key key = { .sandbox = sandbox };
	__u64 *label;

	if (filter) {
		__u64 *w;

		c->filter_key = (__u32)(label_filter_bit(inode) >> 6);
		w = bpf_map_lookup_elem(&label_filter, &c->filter_key);
		if (w && !((*(volatile __u64 *)w >> (label_filter_bit(inode) & 63)) & 1))
			return NULL;
	}
	label = bpf_map_lookup_elem(&inode_labels, &inode);
	if (!label)
		return NULL;
	key.label = *label;
	return bpf_map_lookup_elem(&file_rules, &key);
}

static __always_inline __u64 mount_root_of(__u64 vfsmnt)
{
	__u64 root = 0;

	bpf_probe_read_kernel(&root, sizeof(root),
			      (void *)(vfsmnt + bpf_core_field_offset(struct vfsmount, mnt_root)));
	return root;
}

/* One level; true when the walk is over (a rule found, or the top reached). */
static __always_inline bool walk_level_of(struct walk_state *c, bool filter)
{
	struct pysb_file_rule *rule;
	__u64 d = c->dentry, inode, parent;

	read_head(c, d);
	inode = c->head[H_INODE];
	if (inode) {
		rule = rule_of(c, inode, c->sandbox, filter);
		/* filter: the file itself; above it, a rule for an inode alone is passed by */
		if (rule && (filter || !(rule->access & PYSB_ACC_ALONE)))
			return found(c, rule->access, rule->rule);
	}
	/* Below the rule (not found yet): the names ignore= may hide. */
	if (c->has_ignores && !c->r.ignored &&
	    pysb_name_ignored(c->head[H_NAME], (__u32)c->head[H_LEN], c->sandbox,
			      c->head[H_PARENT] != d ? c->head[H_PARENT] : 0))
		c->r.ignored = 1;
	parent = c->head[H_PARENT];

	if (c->vfsmnt && d == c->mnt_root) {
		struct mount *m = real_mount((struct vfsmount *)c->vfsmnt);
		struct mount *up = BPF_CORE_READ(m, mnt_parent);

		if (up == m)
			return true; /* root of the mount tree: no rule on the way */
		c->crossed = 1;
		c->dentry = (__u64)BPF_CORE_READ(m, mnt_mountpoint);
		c->vfsmnt = (__u64)up + bpf_core_field_offset(struct mount, mnt);
		c->mnt_root = mount_root_of(c->vfsmnt);
		return false;
	}
	if (parent == d || !parent) {
		/* Top of the file system. Dentry-only walks continue through mount_access. */
		if (!c->vfsmnt && inode) {
			struct pysb_mount_key mk = { .sandbox = c->sandbox };
			__u32 *acc;

			mk.dev = BPF_CORE_READ((struct inode *)inode, i_sb, s_dev);
			acc = bpf_map_lookup_elem(&mount_access, &mk);
			if (acc)
				found(c, *acc, 0);
		}
		return true;
	}
	c->dentry = parent;
	return false;
}

static __always_inline bool walk_level(struct walk_state *c)
{
	return walk_level_of(c, false);
}

static long walk_step(__u32 index, void *data)
{
	return walk_level(data) ? 1 : 0;
}

/* fs_gen, read with a full barrier: what the walk reads after it is at least as new. */
static __always_inline __u64 fs_gen_now(void)
{
	__u32 zero = 0;
	__u64 *g = bpf_map_lookup_elem(&fs_gen, &zero);

	return g ? __sync_fetch_and_add(g, 0) : PYSB_FS_BUSY_ONE; /* no map: as if busy */
}

static __always_inline __u64 inode_of(__u64 dentry)
{
	__u64 inode = 0;

	bpf_probe_read_kernel(&inode, sizeof(inode),
			      (void *)(dentry + bpf_core_field_offset(struct dentry, d_inode)));
	return inode;
}

/*
 * May answers for the mount `vfsmnt` be cached? Its file system must move a dentry only
 * in vfs_rename, which fs_gen counts (path.bpf.h, cacheable_magic).
 */
static __always_inline bool cacheable_fs(__u64 vfsmnt)
{
	__u64 sb = 0, magic = 0;

	bpf_probe_read_kernel(&sb, sizeof(sb),
			      (void *)(vfsmnt + bpf_core_field_offset(struct vfsmount, mnt_sb)));
	if (!sb)
		return false;
	bpf_probe_read_kernel(&magic, sizeof(magic),
			      (void *)(sb + bpf_core_field_offset(struct super_block, s_magic)));
	return cacheable_magic(magic);
}

/*
 * The set of the task's cache for directory `dir` (two slots), or NULL when nothing may
 * be cached.
 * An answer found there is the walk's own, by this argument (docs/design.md): it read
 * only dentries of `dir`'s mount between `dir` and the rule, and that mount's root. The
 * same directory object at the same address (its inode unchanged: a directory inode of
 * a cacheable file system freed bumps fs_gen) on a mount with the same root, with no
 * directory renamed since (fs_gen), reads the same dentries; the rules are those of the same generation of
 * `sandboxes`, which user space bumps after every change of a sandbox's maps.
 */
static __always_inline struct pysb_dir_slot *dir_slot(struct walk_state *c)
{
	struct pysb_dir_cache *dc;
	__u64 *sgp = pysb_gen_ptr();

	dc = bpf_task_storage_get(&dir_cache, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!dc || !sgp)
		return NULL;
	c->sgen = *(volatile __u64 *)sgp;
	c->gen = fs_gen_now();
	return dir_set_of(dc, c->dir);
}

static __always_inline bool dir_hit(struct walk_state *c, struct pysb_dir_slot *s, __u64 vfsmnt)
{
	if ((c->gen >> PYSB_FS_BUSY_SHIFT) || s->dir != c->dir ||
	    !dir_slot_is(s, c->dir, inode_of(c->dir), vfsmnt, c->mnt_root, c->sandbox, c->gen,
			 c->sgen))
		return false;
	c->r.granted = s->granted;
	c->r.rule = s->rule;
	c->r.found = 1;
	c->r.ignored |= s->ignored;
	return true;
}

/* The slot of set `s` a new answer replaces: the way not used last (two directories of
 * one loop keep both, whatever an earlier loop left in the set; a first version kept the
 * first way while it held any current answer, and an answer left by earlier opens made
 * a create's two directories evict each other in the second). It is the one used last
 * from now on. */
static __always_inline struct pysb_dir_slot *dir_victim(struct pysb_dir_slot *s)
{
	__u8 way = s->mru ? 0 : 1;

	s->mru = way;
	return s + way;
}

static __always_inline void dir_keep(struct walk_state *c, struct pysb_dir_slot *s, __u64 vfsmnt)
{
	/* A rename that began during the walk, or was running: nothing kept. */
	if ((c->gen >> PYSB_FS_BUSY_SHIFT) || fs_gen_now() != c->gen)
		return;
	s->dir = 0; /* invalid while written */
	s->inode = inode_of(c->dir);
	s->vfsmnt = vfsmnt;
	s->mnt_root = c->mnt_root;
	s->fs_gen = c->gen;
	s->sb_gen = c->sgen;
	s->sandbox = c->sandbox;
	s->granted = c->r.granted;
	s->rule = c->r.rule;
	s->ignored = c->r.ignored;
	if (s->inode)
		s->dir = c->dir;
}

__noinline int pysb_walk(struct walk_ctx *out)
{
	struct walk_state c = { 0 };

	if (!out)
		return 0;
	c.dentry = out->dentry;
	c.vfsmnt = out->vfsmnt;
	c.sandbox = out->sandbox;
	c.has_ignores = out->has_ignores;
	if (c.vfsmnt)
		c.mnt_root = mount_root_of(c.vfsmnt);
	/* The file itself: its own rule (label_filter first: almost no file has a label),
	 * its name. The levels above skip the filter: its key and bit would push this frame
	 * past the verifier's combined stack, and the directory cache spares most of them. */
	if (walk_level_of(&c, true))
		goto out;
	if (out->vfsmnt && !c.crossed) {
		c.dir = c.dentry;
		c.slot = dir_slot(&c);
		if (c.slot && dir_hit(&c, c.slot, out->vfsmnt)) {
			c.slot->mru = 0;
			goto out;
		}
		if (c.slot && dir_hit(&c, c.slot + 1, out->vfsmnt)) {
			c.slot->mru = 1;
			goto out;
		}
		if (c.slot)
			c.slot = dir_victim(c.slot);
	}
	/* From the directory up: what it finds there is what the cache keeps. */
	c.ign0 = c.r.ignored;
	c.r.ignored = 0;
#pragma unroll
	for (int i = 1; i < PYSB_WALK_UNROLLED; i++)
		if (walk_level(&c))
			goto walked;
	bpf_loop(PYSB_MAX_DEPTH - PYSB_WALK_UNROLLED, walk_step, &c, 0);
walked:
	if (c.slot && c.r.found && !c.crossed && cacheable_fs(out->vfsmnt))
		dir_keep(&c, c.slot, out->vfsmnt);
	c.r.ignored |= c.ign0;
out:
	out->granted = c.r.granted;
	out->rule = c.r.rule;
	out->found = c.r.found;
	out->ignored = c.r.ignored;
	return 0;
}
