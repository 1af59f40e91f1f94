/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Terminal ioctls that act on what is outside the sandbox, whatever the file.
 *
 * Checked by the one program of lsm/file_ioctl and of lsm/file_ioctl_compat (6.8+ and
 * Debian's 6.1, optional), bpf/file.bpf.c (the command is compared first, so the
 * machine's other ioctls cost one comparison):
 *     TIOCSTI   pushes input into the terminal: commands for the shell that ran the program
 *     TIOCLINUX console selection and paste (the same, on a virtual console)
 *     TIOCSETD  changes the line discipline: kernel code most programs never reach
 *     -> -EPERM, with an event naming the terminal
 *     FIOSETOWN, SIOCSPGRP (any file): the SIGIO owner's record must fit (signal.bpf.c)
 * The terminal itself is the program's own pty (user/ side); this is the second wall.
 */
#ifndef PYSB_TTY_BPF_H
#define PYSB_TTY_BPF_H

#include "path.bpf.h"

#define TIOCSTI	  0x5412
#define TIOCLINUX 0x541C
#define TIOCSETD  0x5423
#define FIOSETOWN 0x8901
#define SIOCSPGRP 0x8902

static __always_inline int check_tty_ioctl(struct file *file, unsigned int cmd)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 cgid;

	if (cmd == FIOSETOWN || cmd == SIOCSPGRP)
		return sigio_owner_reserve(file);
	if (cmd != TIOCSTI && cmd != TIOCLINUX && cmd != TIOCSETD)
		return 0;
	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	return deny_self_path(cfg, cgid, PYSB_OP_TTY_IOCTL, 0, BPF_CORE_READ(file, f_path.dentry),
			      BPF_CORE_READ(file, f_path.mnt), EPERM);
}

#endif /* PYSB_TTY_BPF_H */
