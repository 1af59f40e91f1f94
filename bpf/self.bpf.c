/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Self-protection: what a sandboxed task may never do, whatever the policy says, because
 * it would change the view the file rules judge.
 *
 * Hooks (global `lsm/` programs, sandboxed tasks only):
 *   lsm/sb_mount      mount(2), including bind mounts and remounts  -> -EPERM
 *   lsm/move_mount    move_mount(2) of a detached tree (fsmount API) -> -EPERM
 *   lsm/sb_umount     umount(2): could uncover what a mount hides     -> -EPERM
 *   lsm/sb_pivotroot  pivot_root(2)                                   -> -EPERM
 */
#include "common.bpf.h"

static __always_inline int deny_self(__u16 op)
{
	struct pysb_sandbox_cfg *cfg;
	struct pysb_event *e;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	e = event_start(cfg, cgid, PYSB_KIND_SELF, op, 0, decision_of(cfg));
	if (e)
		bpf_ringbuf_submit(e, 0);
	return deny_ret(cfg, EPERM);
}

SEC("lsm/sb_mount")
int BPF_PROG(pysb_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data)
{
	return deny_self(PYSB_OP_MOUNT);
}

SEC("lsm/move_mount")
int BPF_PROG(pysb_move_mount, const struct path *from_path, const struct path *to_path)
{
	return deny_self(PYSB_OP_MOUNT);
}

SEC("lsm/sb_umount")
int BPF_PROG(pysb_sb_umount, struct vfsmount *mnt, int flags)
{
	return deny_self(PYSB_OP_UMOUNT);
}

SEC("lsm/sb_pivotroot")
int BPF_PROG(pysb_sb_pivotroot, const struct path *old_path, const struct path *new_path)
{
	return deny_self(PYSB_OP_PIVOT_ROOT);
}
