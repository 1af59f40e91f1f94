/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Noting an overlay and the overlays it is made of (bpf/path.bpf.h, note_overlay). No
 * hook of its own.
 *
 * An overlay whose lower layer is itself an overlay (a container root with lowerdir=/ on
 * a host whose root is an overlay: Docker-in-Docker, kind, a live system) does its work
 * on that layer under its creator cred, and the inner overlay in turn does its own work
 * on its layers under its own creator cred. Both creds must be noted, and the inner one
 * can only be found from the outer overlay: no path a task names inside the container
 * starts on the inner overlay, and a loader started in the container does not see it in
 * its mount table.
 *
 * Two levels are read (the overlay's layers, and theirs), PYSB_OVL_LAYERS layers each:
 * enough for the nested roots met in practice, where every lower layer of an image lies
 * on the same host file system. A deeper or further overlay is not noted: its internal
 * work is judged as the task's (deny more, never less).
 */
#include "path.bpf.h"

#define PYSB_OVL_LAYERS 8

/* Notes the creator cred of the overlay at `sb` (its ovl_fs: `ofs`): 0 when noted or
 * noted already, -1 when not (no cred, or the map is full). */
static __always_inline int note_creator(struct ovl_fs___pysb *ofs, __u64 sb)
{
	__u64 cred = (__u64)BPF_CORE_READ(ofs, creator_cred);

	if (!cred)
		return -1;
	if (!bpf_map_lookup_elem(&ovl_creds, &cred) &&
	    bpf_map_update_elem(&ovl_creds, &cred, &sb, BPF_NOEXIST))
		return -1;
	return 0;
}

/*
 * The ovl_fs of layer `i` of the overlay `ofs` if that layer is an overlay, else 0. A
 * layer on the super block `last` (that of the layer before: an image's lower layers
 * share one host file system) is skipped: it was noted already.
 */
static __always_inline __u64 overlay_layer(__u64 ofs, __u32 i, __u64 *last)
{
	struct ovl_layer___pysb *layer;
	struct vfsmount *mnt;
	struct super_block *sb;

	layer = (void *)BPF_CORE_READ((struct ovl_fs___pysb *)ofs, layers) +
		i * bpf_core_type_size(struct ovl_layer___pysb);
	mnt = BPF_CORE_READ(layer, mnt);
	if (!mnt)
		return 0; /* layers[0] of an overlay without an upper layer */
	sb = BPF_CORE_READ(mnt, mnt_sb);
	if (!sb || (__u64)sb == *last || BPF_CORE_READ(sb, s_magic) != OVERLAYFS_SUPER_MAGIC)
		return 0;
	*last = (__u64)sb;
	return (__u64)BPF_CORE_READ(sb, s_fs_info);
}

/* Notes the overlays among the first layers of `ofs`: 0 when all were noted, else -1. */
static __always_inline int note_inner_layers(__u64 ofs)
{
	__u32 n = BPF_CORE_READ((struct ovl_fs___pysb *)ofs, numlayer);
	__u64 last = 0, inner;
	int err = 0;

	for (__u32 i = 0; i < PYSB_OVL_LAYERS; i++) {
		if (i >= n)
			break;
		inner = overlay_layer(ofs, i, &last);
		if (inner && note_creator((struct ovl_fs___pysb *)inner, last))
			err = -1;
	}
	return err;
}

/* The address comes through memory: a global function takes no pointer to a kernel
 * object as a plain number (sb_kern_mount's super block is one). */
__noinline int pysb_note_overlay(__u64 *sbp)
{
	__u64 sb, ofs, last = 0, inner;
	int err = 0;
	__u32 n;

	if (!sbp)
		return -1;
	sb = *sbp;
	ofs = (__u64)BPF_CORE_READ((struct super_block *)sb, s_fs_info);
	if (note_creator((struct ovl_fs___pysb *)ofs, sb))
		return -1;
	/* A kernel whose ovl_fs has no layer array (before 5.7) notes only the overlay. */
	if (!bpf_core_field_exists(struct ovl_fs___pysb, layers) ||
	    !bpf_core_field_exists(struct ovl_fs___pysb, numlayer) ||
	    !bpf_core_type_exists(struct ovl_layer___pysb))
		return 0;
	/* Its layers, and the layers of those that are overlays (a second loop, not a call:
	 * BPF has no recursion). */
	n = BPF_CORE_READ((struct ovl_fs___pysb *)ofs, numlayer);
	for (__u32 i = 0; i < PYSB_OVL_LAYERS; i++) {
		if (i >= n)
			break;
		inner = overlay_layer(ofs, i, &last);
		if (inner &&
		    (note_creator((struct ovl_fs___pysb *)inner, last) || note_inner_layers(inner)))
			err = -1;
	}
	return err;
}
