/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exec rules.
 *
 * Hooks (global `lsm/` programs, sandboxed tasks only):
 *   lsm/bprm_check_security   every execve/execveat, and each interpreter of a #! chain
 *   lsm/bprm_committed_creds  the first exec of the sandboxed program has succeeded (the
 *                             hook's one program: it also arms a held cgroup's sandbox,
 *                             bpf/born_exec.bpf.h)
 *
 * Default: the program pysb-bpf starts may exec once (its own start, marked in
 * `exec_pending` by the loader before the child is released); every later exec is denied
 * (-EACCES, kind exec) unless the sandbox has PYSB_SB_EXEC (python-api allows
 * process-exec), and then only of files the rules grant EXEC (checked by file_open on the
 * kernel's exec open). Anonymous code is denied whatever the policy: memfd files, files
 * deleted or unlinked before exec.
 */
#include "born_exec.bpf.h"

static __always_inline bool anonymous_file(struct file *file)
{
	struct dentry *d = BPF_CORE_READ(file, f_path.dentry);
	struct inode *inode = BPF_CORE_READ(d, d_inode);

	/* memfd and other pseudo files are on internal mounts; a deleted file has no link. */
	return on_internal_mount(&file->f_path) || !inode || BPF_CORE_READ(inode, __i_nlink) == 0;
}

SEC("lsm/bprm_check_security")
int BPF_PROG(pysb_bprm_check_security, struct linux_binprm *bprm)
{
	struct pysb_sandbox_cfg *cfg;
	struct file *file = BPF_CORE_READ(bprm, file);
	struct pysb_event *e;
	__u32 tgid, why = 0;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (anonymous_file(file))
		why = PYSB_EV_EXEC_ANONYMOUS;
	else if (!(cfg->flags & PYSB_SB_EXEC) && !bpf_map_lookup_elem(&exec_pending, &tgid))
		why = PYSB_EV_EXEC_POLICY;
	if (!why)
		return 0;
	e = event_start(cfg, cgid, PYSB_KIND_EXEC, PYSB_OP_EXEC, PYSB_ACC_EXEC, decision_of(cfg));
	if (e) {
		e->flags |= why;
		event_set_dentry_path(e, BPF_CORE_READ(file, f_path.dentry),
				      BPF_CORE_READ(file, f_path.mnt));
		event_send(e);
	}
	return deny_ret(cfg, EACCES);
}

SEC("lsm/bprm_committed_creds")
int BPF_PROG(pysb_bprm_committed_creds, struct linux_binprm *bprm)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	/* The start is done (all #! interpreters included): later execs follow the policy. */
	bpf_map_delete_elem(&exec_pending, &tgid);
	born_exec_commit(bprm, (__u32)id);
	return 0;
}
