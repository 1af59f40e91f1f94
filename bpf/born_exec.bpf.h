/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exec part of bpf/watch.bpf.c's concern (confinement from a cgroup's creation): a
 * binding's default ("confine_at": "exec") holds the cgroup's sandbox (PYSB_SB_HOLD)
 * until a task of the cgroup commits the execve of a file, not of the program it already
 * runs (born_reexec, noted by bprm_creds_for_exec) nor of a memfd or deleted copy.
 * Called by the one program of lsm/bprm_committed_creds (bpf/exec.bpf.c).
 */
#ifndef PYSB_BORN_EXEC_BPF_H
#define PYSB_BORN_EXEC_BPF_H

#include "path.bpf.h"

/* Tells the daemon a cgroup was confined at its creation: it confines it for good (own
 * id, socket programs) now rather than at its next scan. */
static __always_inline void tell_daemon(__u64 cgid)
{
	bpf_ringbuf_output(&cgroup_born, &cgid, sizeof(cgid), 0);
}

/* An execve committed (bprm_committed_creds): the first of a file by a task of a held
 * cgroup arms its sandbox. */
static __always_inline void born_exec_commit(struct linux_binprm *bprm, __u32 tid)
{
	struct pysb_sandbox_cfg *cfg;
	struct inode *inode;
	struct file *file;
	__u64 cgid;

	if (bpf_map_lookup_elem(&born_reexec, &tid)) {
		bpf_map_delete_elem(&born_reexec, &tid);
		return;
	}
	cfg = pysb_cached_sandbox(&cgid); /* held ones too */
	if (!cfg || !(cfg->flags & PYSB_SB_HOLD))
		return;
	file = BPF_CORE_READ(bprm, file);
	inode = BPF_CORE_READ(file, f_path.dentry, d_inode);
	/* A memfd (internal mount) or a deleted file: the runtime's own copy of itself. */
	if (on_internal_mount(&file->f_path) || !inode || BPF_CORE_READ(inode, __i_nlink) == 0)
		return;
	/* In place: every hook after this one, of every task of the cgroup, enforces. */
	__sync_fetch_and_and(&cfg->flags, ~PYSB_SB_HOLD);
	tell_daemon(cgid);
}

#endif /* PYSB_BORN_EXEC_BPF_H */
