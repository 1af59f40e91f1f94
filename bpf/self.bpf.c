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
#include "task.bpf.h"

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
		event_send(e);
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

/*
 *   lsm/bpf                  any bpf(2) command: programs and maps of the sandbox, or of
 *                            anyone, are out of reach                       -> -EPERM
 *   lsm/ptrace_access_check  ptrace, /proc/<pid>/mem and friends of a task outside the
 *                            sandbox                                        -> -EPERM
 *   lsm/ptrace_traceme       PTRACE_TRACEME under a tracer outside          -> -EPERM
 *   lsm/task_kill            a signal to a task outside the sandbox, signal 0 (the
 *                            existence probe) too                           -> -EPERM
 *   lsm/task_alloc           clone3(CLONE_INTO_CGROUP): leaving the cgroup  -> -EPERM
 *   lsm/kernel_load_data, lsm/kernel_read_file, lsm/kernel_module_request
 *                            modules, firmware, kexec images, module autoload -> -EPERM
 */
#define CLONE_INTO_CGROUP 0x200000000ULL

SEC("lsm/bpf")
int BPF_PROG(pysb_bpf, int cmd, union bpf_attr *attr, unsigned int size)
{
	return deny_self(PYSB_OP_BPF);
}

SEC("lsm/ptrace_access_check")
int BPF_PROG(pysb_ptrace_access_check, struct task_struct *child, unsigned int mode)
{
	return deny_outside(PYSB_OP_PTRACE, child);
}

SEC("lsm/ptrace_traceme")
int BPF_PROG(pysb_ptrace_traceme, struct task_struct *parent)
{
	return deny_outside(PYSB_OP_PTRACE, parent);
}

SEC("lsm/task_kill")
int BPF_PROG(pysb_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred)
{
	/* Signal 0 included: it tells which outside pids exist (issue 16). Signals the kernel
	 * sends on its own (SIGCHLD to the parent) do not come through here. */
	return deny_outside(PYSB_OP_SIGNAL, p);
}

SEC("lsm/task_alloc")
int BPF_PROG(pysb_task_alloc, struct task_struct *task, unsigned long clone_flags)
{
	if (!(clone_flags & CLONE_INTO_CGROUP))
		return 0;
	return deny_self(PYSB_OP_CGROUP_ESCAPE);
}

SEC("lsm/kernel_load_data")
int BPF_PROG(pysb_kernel_load_data, int id, bool contents)
{
	return deny_self(PYSB_OP_KERNEL_LOAD);
}

SEC("lsm/kernel_read_file")
int BPF_PROG(pysb_kernel_read_file, struct file *file, int id, bool contents)
{
	return deny_self(PYSB_OP_KERNEL_LOAD);
}

/* The exec of a file of no known format makes the kernel ask for `binfmt-XXXX` (6.1 and
 * 6.12 do; 7.2 does not): refused like any module, not reported. The exec's own
 * error says what happened; a deny line naming the half-started program's comm (still
 * pysb-bpf's) read as if pysb-bpf itself had been refused (found by a user). */
SEC("lsm/kernel_module_request")
int BPF_PROG(pysb_kernel_module_request, char *kmod_name)
{
	struct pysb_sandbox_cfg *cfg;
	char name[8] = {};
	__u64 cgid;

	bpf_probe_read_kernel_str(name, sizeof(name), kmod_name);
	if (name[0] != 'b' || name[1] != 'i' || name[2] != 'n' || name[3] != 'f' ||
	    name[4] != 'm' || name[5] != 't' || name[6] != '-')
		return deny_self(PYSB_OP_KERNEL_LOAD);
	cfg = current_sandbox(&cgid);
	return cfg ? deny_ret(cfg, EPERM) : 0;
}
