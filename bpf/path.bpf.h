/* SPDX-License-Identifier: MIT */
/*
 * What access the policy grants a file: the nearest rule on the file's ancestry.
 *
 * The ancestry is the one the kernel resolved: dentry parents, crossing mount points the
 * way d_path does (at a mount's root, continue from its mount point in the parent mount).
 * A rule names one inode OBJECT, never a number another file can carry: the loader labels
 * the inode of each rule path (bpf/file.bpf.c, label requests) and keeps it open, so the
 * label lives exactly as long as that inode; the first inode on the way with a label that
 * has an entry in `file_rules` for the sandbox decides. The walk itself is one global
 * function (bpf/walk.bpf.c): verified once, not again inside every hook.
 *
 * Some hooks only get a dentry (inode_setattr, xattrs). Their walk stays in the dentry's
 * file system; at its root, `mount_access` (filled by the loader from the mount table:
 * what the policy grants the mount point of each file system, the least of all its mounts)
 * stands for the part of the path above the mount.
 */
#ifndef PYSB_PATH_BPF_H
#define PYSB_PATH_BPF_H

#include "common.bpf.h"

#define MNT_NS_INTERNAL ((void *)-22L)

/* A walk: where it starts, and what it found (the verdict, and the rule an event names).
 * Kernel addresses are plain numbers: the walk reads them with probe reads. */
struct walk_ctx {
	__u64 dentry;
	__u64 vfsmnt; /* struct vfsmount *; 0: a dentry-only walk */
	__u32 sandbox;
	__u32 granted; /* access of the nearest rule */
	__u32 rule;    /* its index (pysb_file_rule.rule), for events */
	__u8 found;
	__u8 ignored;	  /* a name below the rule matched an ignore= pattern */
	__u8 has_ignores; /* the sandbox has ignore= patterns (PYSB_SB_IGNORES) */
	__u8 _pad;
};

/*
 * Does the name (`len` bytes at kernel address `name_ptr`) match one of the sandbox's
 * ignore= patterns? Both are plain numbers read from the dentry, as a global function
 * takes them.
 * A global function (bpf/ignore.bpf.c): verified once on its own, not again inside every
 * walk of every program (nested byte loops made path_rename too complex for 7.x).
 */
extern int pysb_name_ignored(__u64 name_ptr, __u32 len, __u32 sandbox, __u64 dir);

/* The walk (bpf/walk.bpf.c): from c->dentry, c->vfsmnt for c->sandbox; fills the rest. */
extern int pysb_walk(struct walk_ctx *c);

static __always_inline struct mount *real_mount(struct vfsmount *vfsmnt)
{
	return (struct mount *)((void *)vfsmnt - bpf_core_field_offset(struct mount, mnt));
}

#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#define S_IFMT		      00170000
#define S_IFDIR		      0040000

/* Only the fields we read; CO-RE finds them in vmlinux or in the overlay module's BTF.
 * layers[] (6.1..7.x): layers[0] is the upper layer (mnt NULL when there is none), the
 * lower layers follow; numlayer counts them all. */
struct ovl_layer___pysb {
	struct vfsmount *mnt;
} __attribute__((preserve_access_index));

struct ovl_fs___pysb {
	unsigned int numlayer;
	struct ovl_layer___pysb *layers;
	const struct cred *creator_cred;
} __attribute__((preserve_access_index));

/*
 * Notes the creator cred of the overlay whose super block's address is *sb in ovl_creds (the
 * super block as its value: lsm/sb_free_security forgets it by that), then those of the
 * overlays among its layers (bpf/overlay.bpf.c). 0 when all were noted (or noted already),
 * -1 when one was not (no cred, or the map is full): checked again next time. A global
 * function: its loops and map keys are verified once, and cost no stack in the frames of
 * the many hooks that note overlays (inlined, they took file_open's call chain past 512
 * bytes on 6.1).
 */
extern int pysb_note_overlay(__u64 *sb);

/*
 * Notes the creator credentials of the overlay `sb` belongs to (see ovl_creds), and those
 * of the overlays that are its layers (a container root over an overlay-rooted host: the
 * host's root overlay does its own work on its own layers, under its own creator cred,
 * inside the container overlay's). The hooks that judge what a task named always run
 * before overlayfs' own work on its layers in the same call, so every overlay a sandboxed
 * task acts on is noted in time. A nested overlay must be noted through the overlay above
 * it: no walk of a task starts in it (every path the task names is the outer overlay's),
 * and inside a chroot or a pivoted mount namespace the loader's mount table does not list
 * it (it lies outside the root). A kernel without overlay BTF at load time notes nothing:
 * its overlays are judged like any file system (over-blocking, never a way in).
 */
static __always_inline void note_overlay(struct super_block *sb)
{
	__u64 sbp = (__u64)sb, *gen;
	struct pysb_sb_seen *seen;
	__u32 zero = 0;

	if (!bpf_core_type_exists(struct ovl_fs___pysb) || !sb)
		return;
	/* The file system this CPU checked last, unless a super block was freed since. Its
	 * nested overlays were noted with it: the layers of an overlay never change. */
	seen = bpf_map_lookup_elem(&sb_seen, &zero);
	gen = bpf_map_lookup_elem(&sb_gen, &zero);
	if (!seen || !gen)
		return;
	if (seen->sb == sbp && seen->gen == *gen)
		return;
	if (BPF_CORE_READ(sb, s_magic) == OVERLAYFS_SUPER_MAGIC && pysb_note_overlay(&sbp))
		return;
	seen->gen = *gen;
	seen->sb = sbp;
}

/*
 * Is the current task inside overlayfs, acting on the overlay's own layers (copy-up,
 * the upper file of a utimes or setxattr, the work directory, the impure/opaque xattrs)?
 * overlayfs does that work under the mounter's credentials (ovl_override_creds:
 * current->cred = ofs->creator_cred, real_cred unchanged). That cred is private to
 * the overlay: never any task's own (real) cred, so no other path (io_uring
 * personalities, access(2)) can run with it, and while the overlay lives it cannot be
 * freed and reused. What the task itself named (the overlay file) was judged by the
 * outer hook before overlayfs got there; judging the layer's internal dentries again
 * would deny every write to a lower-layer file and every utimes on overlay.
 */
static __always_inline bool overlay_internal(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 cred = (__u64)task->cred;

	if (cred == (__u64)task->real_cred)
		return false;
	return bpf_map_lookup_elem(&ovl_creds, &cred) != NULL;
}

/* The access a rule naming `d`'s own inode grants (0: none names it): for objects that
 * stand for more than a file, which a rule on a directory above them does not reach (a
 * unix socket made outside the sandbox, a block device). */
static __always_inline __u32 exact_rule_access(struct dentry *d, __u32 sandbox, __u32 *rule)
{
	__u64 inode = (__u64)BPF_CORE_READ(d, d_inode);
	struct pysb_file_key key = { .sandbox = sandbox };
	struct pysb_file_rule *r;
	__u64 *label;

	label = inode ? bpf_map_lookup_elem(&inode_labels, &inode) : NULL;
	if (!label)
		return 0;
	key.label = *label;
	r = bpf_map_lookup_elem(&file_rules, &key);
	if (!r)
		return 0;
	*rule = r->rule;
	return r->access;
}

/* The rule of sandbox `sandbox` on the inode at `inode` itself (the object a rule names),
 * or NULL: one lookup in inode_labels, a miss for almost every file. `low`: the address's
 * low 32 bits, for label_filter. */
static __always_inline struct pysb_file_rule *own_rule_of(__u64 inode, __u32 low, __u32 sandbox)
{
	struct pysb_file_key key = { .sandbox = sandbox };
	__u64 *label;

	if (!inode || !maybe_labelled(low))
		return NULL;
	label = bpf_map_lookup_elem(&inode_labels, &inode);
	if (!label)
		return NULL;
	key.label = *label;
	return bpf_map_lookup_elem(&file_rules, &key);
}

#define TMPFS_MAGIC	  0x01021994
#define RAMFS_MAGIC	  0x858458f6
#define EXT4_SUPER_MAGIC  0xEF53 /* ext2 and ext3 too */
#define XFS_SUPER_MAGIC	  0x58465342
#define BTRFS_SUPER_MAGIC 0x9123683E
#define F2FS_SUPER_MAGIC  0xF2F52010

/*
 * The file systems whose directory verdicts the walk caches (bpf/walk.bpf.c, dir_cache):
 * those that move a dentry only in vfs_rename, which fs_gen counts: local file systems
 * without d_revalidate. Network file systems, FUSE, overlayfs, /proc and sysfs can move
 * or replace a directory's dentry during a lookup (d_splice_alias after a change the
 * kernel learnt from elsewhere), with no hook: their files are walked every time. Only a
 * directory inode of these freed makes cached answers stale (lsm/inode_free_security).
 */
static __always_inline bool cacheable_magic(__u64 magic)
{
	switch (magic) {
	case TMPFS_MAGIC:
	case RAMFS_MAGIC:
	case EXT4_SUPER_MAGIC:
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case F2FS_SUPER_MAGIC:
		return true;
	}
	return false;
}

/*
 * The first of the two slots of a task's directory cache that may hold the answer for
 * directory `dir` (its set; the other is the next). Two ways: the directory of a new file
 * (file_open's) and the one above it (path_mknod's and path_unlink's walks start at the
 * directory the entry goes in) evicted each other at every call of a create loop in a
 * one-way slot whenever their addresses shared it. A multiplicative hash: dentries are
 * slab objects a fixed size apart.
 */
static __always_inline struct pysb_dir_slot *dir_set_of(struct pysb_dir_cache *dc, __u64 dir)
{
	__u32 set = pysb_fib_hash(dir, PYSB_DIR_SETS_SHIFT);

	return &dc->slot[(2 * set) & (PYSB_DIR_SLOTS - 2)];
}

/* Does slot `s` hold the answer for directory `dir` (its inode `inode`) on mount `vfsmnt`
 * (root `mnt_root`) for `sandbox`, at fs_gen `gen` and sandbox_gen `sgen`? */
static __always_inline bool dir_slot_is(const struct pysb_dir_slot *s, __u64 dir, __u64 inode,
					__u64 vfsmnt, __u64 mnt_root, __u32 sandbox, __u64 gen,
					__u64 sgen)
{
	return s->dir == dir && s->vfsmnt == vfsmnt && s->mnt_root == mnt_root &&
	       s->sandbox == sandbox && s->fs_gen == gen && s->sb_gen == sgen && s->inode == inode;
}

/*
 * The answer for a labelled file `d` (inode `inode`) itself: its own rule of the sandbox,
 * what the walk's first level finds (a rule for an inode alone included), or false
 * (another sandbox's label: the walk goes on above). A directory of a cacheable file
 * system keeps that answer in a slot of the task's directory cache: the rule directory a
 * create or an unlink at depth 1 starts from, at every call of the loop. Such a slot is
 * marked by no mount (vfsmnt 0: a directory's answer for the files in it always has
 * one, walk_cached's and pysb_walk's lookups never take it) in the set of the address
 * after the dentry's (the answer for the files in the directory keeps its own set). The
 * answer depends on the inode and the rules alone, not on the path: valid while the
 * dentry holds the same inode (a directory inode of such a file system freed bumps
 * fs_gen, so its address coming back with another inode is seen) and `sandboxes` is at
 * the same generation (its rules and labels: user space bumps after every change). The
 * generations are read before the lookups, the file system's with a full barrier, as
 * pysb_walk's dir_keep reads them: a bump after the read makes the slot stale.
 */
static __always_inline bool own_answer(struct walk_ctx *c, struct dentry *d, struct inode *inode,
				       const struct pysb_sandbox_cfg *cfg,
				       struct pysb_dir_cache *dc)
{
	struct pysb_file_rule *r;
	struct pysb_dir_slot *s = NULL;
	__u64 *sgp, *gp, gen = 0, sgen = 0;
	__u32 zero = 0;

	if ((inode->i_mode & S_IFMT) == S_IFDIR && cacheable_magic(d->d_sb->s_magic)) {
		sgp = pysb_gen_ptr();
		gp = bpf_map_lookup_elem(&fs_gen, &zero);
		if (!dc)
			dc = bpf_task_storage_get(&dir_cache, bpf_get_current_task_btf(), 0, 0);
		if (sgp && gp && dc) {
			volatile __u64 *addr = dc->addr;

			sgen = *(volatile __u64 *)sgp;
			gen = *(volatile __u64 *)gp;
			addr[0] = (__u64)d;
			s = dir_set_of(dc, addr[0] + 1);
			if (dir_slot_is(s, (__u64)d, (__u64)inode, 0, 0, cfg->id, gen, sgen)) {
				s->mru = 0;
			} else if (dir_slot_is(s + 1, (__u64)d, (__u64)inode, 0, 0, cfg->id, gen,
					       sgen)) {
				s->mru = 1;
				s++;
			} else {
				/* a miss: the generations again, ordered before the lookups */
				sgen = *(volatile __u64 *)sgp;
				gen = PYSB_GEN_READ_ORDERED(gp);
				goto miss;
			}
			c->granted = s->granted;
			c->rule = s->rule;
			c->found = 1;
			return true;
		}
	}
miss:
	r = own_rule_of((__u64)inode, pysb_low_half(inode), cfg->id);
	if (!r)
		return false;
	c->granted = r->access;
	c->rule = r->rule;
	c->found = 1;
	if (s && !(gen >> PYSB_FS_BUSY_SHIFT)) {
		__u8 way = s->mru ? 0 : 1;

		s->mru = way;
		s += way;
		s->dir = 0; /* invalid while written */
		s->inode = (__u64)inode;
		s->vfsmnt = 0;
		s->mnt_root = 0;
		s->fs_gen = gen;
		s->sb_gen = sgen;
		s->sandbox = cfg->id;
		s->granted = c->granted;
		s->rule = c->rule;
		s->ignored = 0;
		s->dir = (__u64)d;
	}
	return true;
}

/*
 * The walk's answer without the walk, when the task's directory cache holds it: what
 * pysb_walk (bpf/walk.bpf.c) finds there after the file's own level, read here in the
 * hook with direct loads of the kernel's objects (its arguments are BTF pointers) where
 * the global function needs a probe read (a helper call) for each, and without the call.
 * The file's own level must be one the walk passes without a verdict: no label bit of its
 * inode in label_filter (no rule names it), no ignore= pattern in the sandbox (no name
 * matters), not the root of its mount or file system (the walk would cross there, and
 * caches nothing). The directory above it is then the one pysb_walk looks up, under the
 * same conditions (dir_slot_is, its dir_hit): the same answer. fs_gen is read plainly: the
 * walk needs its barrier to order the dentry reads after it; a hit reads only the
 * directory's inode, which a rename does not change, and a bump that happened before this
 * hook (in any order the program can observe) is seen by a plain read of the same word.
 * A static function, not inlined: its state in a frame of its own, beside the walk's
 * (inlined, it took file_open's deepest chain of calls past the 512 bytes of stack), and
 * verified with its caller's pointers, which a global function could not take.
 */
static __noinline __attribute__((unused)) bool walk_cached(struct walk_ctx *c, struct dentry *d,
							   struct vfsmount *mnt,
							   const struct pysb_sandbox_cfg *cfg,
							   struct pysb_dir_cache *dc)
{
	struct dentry *dir = d->d_parent;
	struct inode *inode = d->d_inode;
	volatile __u64 *addr;
	struct pysb_dir_slot *s;
	__u64 *sgp, *gp, gen, sgen, dir_inode, mnt_root;
	__u32 zero = 0;

	/* A file with a label (a rule's own object: the rule directory a create or an unlink
	 * at depth 1 starts from): the walk's first level decides, before any name or mount
	 * (pysb_walk, walk_level_of with the filter), by the same two lookups, or by the
	 * slot that keeps their answer (own_answer); no answer for the files in a directory
	 * is asked. Only where the walk would note nothing first (note_overlay: an
	 * overlay's creator cred), and only when that rule is the sandbox's (a label of
	 * another sandbox's rule: the walk goes on above). */
	if (inode && maybe_labelled(pysb_low_half(inode)) &&
	    d->d_sb->s_magic != OVERLAYFS_SUPER_MAGIC)
		return own_answer(c, d, inode, cfg, dc);
	if (!mnt || !dir || dir == d || (cfg->flags & PYSB_SB_IGNORES))
		return false;
	mnt_root = (__u64)mnt->mnt_root;
	if ((__u64)d == mnt_root)
		return false;
	sgp = pysb_gen_ptr();
	gp = bpf_map_lookup_elem(&fs_gen, &zero);
	if (!sgp || !gp)
		return false;
	gen = *(volatile __u64 *)gp;
	if (gen >> PYSB_FS_BUSY_SHIFT)
		return false;
	sgen = *(volatile __u64 *)sgp;
	if (!dc)
		dc = bpf_task_storage_get(&dir_cache, bpf_get_current_task_btf(), 0, 0);
	if (!dc)
		return false;
	/* The two addresses the hashes multiply, as numbers: the verifier allows no product
	 * of a pointer, and a pointer a privileged program keeps in a map value reads back as
	 * a number (the task's own storage: nothing else reads it). */
	addr = dc->addr;
	addr[0] = (__u64)dir;
	addr[1] = (__u64)inode;
	if (addr[1] && maybe_labelled(addr[1]))
		return false;
	s = dir_set_of(dc, addr[0]);
	dir_inode = (__u64)dir->d_inode;
	if (dir_slot_is(s, (__u64)dir, dir_inode, (__u64)mnt, mnt_root, cfg->id, gen, sgen)) {
		s->mru = 0;
	} else if (dir_slot_is(s + 1, (__u64)dir, dir_inode, (__u64)mnt, mnt_root, cfg->id, gen,
			       sgen)) {
		s->mru = 1;
		s++;
	} else {
		return false;
	}
	c->granted = s->granted;
	c->rule = s->rule;
	c->ignored = s->ignored;
	c->found = 1;
	return true;
}

/*
 * Runs the walk from (d, mnt) (mnt NULL: dentry-only) for sandbox `cfg`; returns the
 * access granted, 0 when no rule or when an ignore= pattern hides the file. `c` keeps the
 * rule found, for events.
 */
static __always_inline __u32 walk_from(struct walk_ctx *c, struct dentry *d, struct vfsmount *mnt,
				       const struct pysb_sandbox_cfg *cfg)
{
	__builtin_memset(c, 0, sizeof(*c));
	c->dentry = (__u64)d;
	c->vfsmnt = (__u64)mnt;
	c->sandbox = cfg->id;
	c->has_ignores = !!(cfg->flags & PYSB_SB_IGNORES);
	note_overlay(BPF_CORE_READ(d, d_sb));
	pysb_walk(c);
	return c->found && !c->ignored ? c->granted : 0;
}

/* walk_from for a d and mnt that are BTF pointers (a hook's arguments, what they point
 * to): the task's directory cache is asked first, in the hook (walk_cached). The hot
 * paths: open, create, unlink. A hit needs no note_overlay: the cache holds answers for
 * cacheable file systems only (cacheable_magic), never an overlay, and the walk that
 * stored the answer noted the file system. */
static __always_inline __u32 walk_from_btf(struct walk_ctx *c, struct dentry *d,
					   struct vfsmount *mnt, const struct pysb_sandbox_cfg *cfg,
					   struct pysb_dir_cache *dc)
{
	__builtin_memset(c, 0, sizeof(*c));
	if (walk_cached(c, d, mnt, cfg, dc))
		return !c->ignored ? c->granted : 0;
	return walk_from(c, d, mnt, cfg);
}

/*
 * current_sandbox() for the file hooks, which read the task's directory cache anyway
 * (walk_cached): the task's storage also keeps a copy of its sandbox's entry, so a task
 * whose own cgroup is its sandbox (a run's tasks, a bound service's main process: the
 * shared table says so) needs no lookup in `sandboxes` for it. *dcp: the task's
 * directory cache, for walk_from_btf (NULL: ask it there).
 * The copy is the entry as it was at generation sb_gen of `sandboxes`: it is taken after
 * an ordered read of the generation, and every change of an entry is followed by a bump
 * (user space: loader_bump_sandbox_gen after each update). The kernel's own change of an
 * entry in place, PYSB_SB_HOLD cleared at a held cgroup's first execve
 * (bpf/born_exec.bpf.h), needs none: a held entry is never copied (current_sandbox
 * answers "none" for it, as here), and a hold is only ever set again by user space.
 * Tasks in no sandbox keep the table's fast answer; every other case asks
 * current_sandbox().
 */
static __always_inline struct pysb_sandbox_cfg *file_sandbox(__u64 *cgid,
							     struct pysb_dir_cache **dcp)
{
	/* one helper call for the task, for its cgroup and its storage */
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 own = task->cgroups->dfl_cgrp->kn->id, *genp, gen;
	struct pysb_sandbox_cfg *cfg;
	struct pysb_dir_cache *dc;

	*dcp = NULL;
	switch (pysb_table_says(own)) {
	case PYSB_TABLE_NONE:
		return NULL;
	case PYSB_TABLE_OWN:
		break;
	default:
		return current_sandbox(cgid);
	}
	/* (after the table: a task in no sandbox reads the generation once, there) */
	genp = pysb_gen_ptr();
	dc = bpf_task_storage_get(&dir_cache, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!dc || !genp)
		return current_sandbox(cgid);
	*dcp = dc;
	if (dc->sb_own == own && dc->sb_gen == *(volatile __u64 *)genp) {
		*cgid = own;
		return &dc->sb_cfg;
	}
	gen = PYSB_GEN_READ_ORDERED(genp);
	cfg = bpf_map_lookup_elem(&sandboxes, &own);
	if (!cfg)
		return current_sandbox(cgid); /* unbound since: the walk decides */
	if (cfg->flags & PYSB_SB_HOLD)
		return NULL;
	/* Only this task's file hooks write it, and they do not nest: marked all the same,
	 * in this order (the compiler barriers keep the first store and the last one last). */
	dc->sb_own = 0;
	barrier();
	dc->sb_cfg = *cfg;
	dc->sb_gen = gen;
	barrier();
	dc->sb_own = own;
	*cgid = own;
	return cfg;
}

/*
 * Opens the kernel makes on a sandboxed task's behalf below a file the task already
 * opened: overlayfs opens a directory's (or copies up a file's) real layer through a
 * private mount (mnt_ns == MNT_NS_INTERNAL) with the mounter's credentials. The overlay
 * file itself was checked; judging the layer's own path would deny every overlay
 * directory. Only that shape is exempt: an internal mount AND an overlay's creator
 * credentials (overlay_internal; any overridden cred would let an io_uring personality
 * reopen a layer file through /proc/self/map_files).
 */
static __always_inline bool on_internal_mount(const struct path *path)
{
	struct mount *m = real_mount(BPF_CORE_READ(path, mnt));

	return BPF_CORE_READ(m, mnt_ns) == MNT_NS_INTERNAL;
}

static __always_inline bool kernel_internal_open(const struct path *path)
{
	return on_internal_mount(path) && overlay_internal();
}

/* The path of (d, mnt) (mnt NULL: from its file system's root, e->dev set) in the event
 * of buffer b, right-aligned in e->path (path_off, path_len); bpf/event.bpf.c. */
extern int pysb_event_path(struct pysb_event_buf *b);

static __always_inline void event_set_dentry_path(struct pysb_event *e, struct dentry *d,
						  struct vfsmount *mnt)
{
	struct pysb_event_buf *b = event_buf_of(e);

	b->name_d = (__u64)d;
	b->name_mnt = (__u64)mnt;
	pysb_event_path(b);
}

/* A self-protection denial on (d, mnt): an event of kind SELF naming it, and `err` (or 0
 * in audit mode). */
static __always_inline int deny_self_path(struct pysb_sandbox_cfg *cfg, __u64 cgid, __u16 op,
					  __u32 want, struct dentry *d, struct vfsmount *mnt,
					  int err)
{
	struct pysb_event *e = event_start(cfg, cgid, PYSB_KIND_SELF, op, want, decision_of(cfg));

	if (e) {
		event_set_dentry_path(e, d, mnt);
		event_send(e);
	}
	return deny_ret(cfg, err);
}

#endif /* PYSB_PATH_BPF_H */
