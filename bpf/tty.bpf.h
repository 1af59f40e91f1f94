/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Terminal ioctls that act on what is outside the sandbox.
 *
 * Checked by the one program of lsm/file_ioctl and of lsm/file_ioctl_compat (6.8+ and
 * Debian's 6.1, optional), bpf/file.bpf.c (the command's type byte is compared first, so
 * the machine's other ioctls cost one comparison):
 *     TIOCSTI   pushes input into the terminal: commands for the shell that ran the program
 *     TIOCLINUX console selection and paste (the same, on a virtual console)
 *     TIOCSETD  changes the line discipline: kernel code most programs never reach
 *     -> -EPERM on any file, with an event naming the terminal
 *     On a terminal whose session is led outside the sandbox (the caller's, kept by a
 *     process confined in place: `attach`, a daemon binding; found by an adversary: a
 *     background job of the user's shell, once attached, made itself the foreground and
 *     read what the user typed next for the shell, a password):
 *     TIOCSPGRP its foreground process group (tcsetpgrp)
 *     TCSETS*, TCSETA*, TCSETS2* its modes (echo, the interrupt and suspend characters)
 *     TIOCSWINSZ its size (SIGWINCH to the foreground group)
 *     TCXONC, TCFLSH, TIOCEXCL its output flow, what the user typed and not yet read, its
 *               opens by others
 *     -> -EPERM, the same event. Allowed: a terminal whose session the sandbox leads
 *     (`run`'s pty, a pty it made and gave a session), one that no session uses
 *     (the kernel's own job control then), and reading any of it.
 *     FIOSETOWN, SIOCSPGRP (any file): the SIGIO owner's record must fit (signal.bpf.c)
 * The terminal of `run` is the program's own pty (user/ side); this is the second wall.
 */
#ifndef PYSB_TTY_BPF_H
#define PYSB_TTY_BPF_H

#include "path.bpf.h"
#include "task.bpf.h"

#define TIOC_TYPE  0x54 /* 'T': the type byte of every command below */
#define TCSETS	   0x5402
#define TCSETSW	   0x5403
#define TCSETSF	   0x5404
#define TCSETA	   0x5406
#define TCSETAW	   0x5407
#define TCSETAF	   0x5408
#define TCXONC	   0x540A
#define TCFLSH	   0x540B
#define TIOCEXCL   0x540C
#define TIOCSPGRP  0x5410
#define TIOCSTI	   0x5412
#define TIOCSWINSZ 0x5414
#define TIOCLINUX  0x541C
#define TIOCSETD   0x5423
#define TCSETS2	   0x402C542B /* _IOW('T', 0x2B, struct termios2): 44 bytes, 32-bit too */
#define TCSETSW2   0x402C542C
#define TCSETSF2   0x402C542D
#define FIOSETOWN  0x8901
#define SIOCSPGRP  0x8902
#define S_IFMT	   00170000
#define S_IFCHR	   0020000

/* Commands that change the terminal's state for the session that uses it. */
static __always_inline bool sets_terminal(unsigned int cmd)
{
	switch (cmd) {
	case TCSETS:
	case TCSETSW:
	case TCSETSF:
	case TCSETA:
	case TCSETAW:
	case TCSETAF:
	case TCSETS2:
	case TCSETSW2:
	case TCSETSF2:
	case TCXONC:
	case TCFLSH:
	case TIOCEXCL:
	case TIOCSPGRP:
	case TIOCSWINSZ:
		return true;
	}
	return false;
}

/* The terminal of `file`, or NULL: a character device whose private data is the tty
 * core's record of this very file (struct tty_file_private points back to it). */
static __always_inline struct tty_struct *tty_of(struct file *file)
{
	struct tty_file_private *priv;

	if ((file->f_inode->i_mode & S_IFMT) != S_IFCHR)
		return NULL;
	priv = file->private_data;
	if (!priv || BPF_CORE_READ(priv, file) != file)
		return NULL;
	return BPF_CORE_READ(priv, tty);
}

/* Is the terminal of `file`, or the other end of its pty (a master's commands act on the
 * slave), the terminal of a session led outside the sandbox `cgid`? A session whose
 * leader is gone counts as outside, as for /dev/tty (bpf/file.bpf.c). */
static __always_inline bool tty_led_outside(struct file *file, __u64 cgid)
{
	struct tty_struct *tty = tty_of(file);

	for (int i = 0; i < 2 && tty; i++) {
		struct pid *session = BPF_CORE_READ(tty, ctrl.session);
		struct task_struct *leader;

		if (session) {
			leader = pid_task_of(session);
			if (!leader || !task_under(leader, cgid))
				return true;
		}
		tty = BPF_CORE_READ(tty, link);
	}
	return false;
}

static __always_inline int check_tty_ioctl(struct file *file, unsigned int cmd)
{
	struct pysb_sandbox_cfg *cfg;
	bool any_file;
	__u64 cgid;

	if (cmd == FIOSETOWN || cmd == SIOCSPGRP)
		return sigio_owner_reserve(file);
	if (((cmd >> 8) & 0xff) != TIOC_TYPE)
		return 0;
	any_file = cmd == TIOCSTI || cmd == TIOCLINUX || cmd == TIOCSETD;
	if (!any_file && !sets_terminal(cmd))
		return 0;
	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	if (!any_file && !tty_led_outside(file, cgid))
		return 0;
	return deny_self_path(cfg, cgid, PYSB_OP_TTY_IOCTL, 0, BPF_CORE_READ(file, f_path.dentry),
			      BPF_CORE_READ(file, f_path.mnt), EPERM);
}

#endif /* PYSB_TTY_BPF_H */
