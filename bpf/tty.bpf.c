/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The session test of bpf/tty.bpf.h and the pty master's ioctls, as global functions:
 * verified once, not again on every path of each program that asks them (lsm/file_ioctl,
 * file_open, file_receive, file_permission).
 */
#include "tty.bpf.h"

/* See bpf/tty.bpf.h. `tty_ptr` is a struct tty_struct *, read only with BPF_CORE_READ. */
__noinline int pysb_tty_led_outside(__u64 tty_ptr, __u64 cgid)
{
	struct tty_struct *tty = (struct tty_struct *)tty_ptr;

	for (int i = 0; i < 2 && tty; i++) {
		struct pid *session = BPF_CORE_READ(tty, ctrl.session);
		struct task_struct *leader;

		if (session) {
			leader = pid_task_of(session);
			if (!leader || !task_under(leader, cgid))
				return 1;
		}
		tty = BPF_CORE_READ(tty, link);
	}
	return 0;
}

/* See bpf/tty.bpf.h. The file is read only with BPF_CORE_READ. */
__noinline int pysb_master_ioctl(struct tty_arg *a)
{
	__u64 file_ptr = a ? a->file : 0;
	struct file *file = (struct file *)file_ptr;
	struct tty_file_private *priv;
	struct pysb_sandbox_cfg *cfg;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg || !file || (BPF_CORE_READ(file, f_inode, i_mode) & S_IFMT) != S_IFCHR)
		return 0;
	priv = BPF_CORE_READ(file, private_data);
	if (!priv || (__u64)BPF_CORE_READ(priv, file) != file_ptr ||
	    !pysb_tty_led_outside((__u64)BPF_CORE_READ(priv, tty), cgid))
		return 0;
	return deny_self_path(cfg, cgid, PYSB_OP_TTY_IOCTL, 0, BPF_CORE_READ(file, f_path.dentry),
			      BPF_CORE_READ(file, f_path.mnt), EPERM);
}
