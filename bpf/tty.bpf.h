/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Terminal ioctls that act on what is outside the sandbox.
 *
 * Checked by the one program of lsm/file_ioctl and of lsm/file_ioctl_compat (6.8+ and
 * Debian's 6.1, optional), bpf/file.bpf.c (the command's type byte is compared first, so
 * the machine's other ioctls cost a few comparisons):
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
 *     TIOCSIG   (a pty master) SIGINT, SIGQUIT, SIGTSTP to the slave's foreground group,
 *               sent as the kernel's own, with no task_kill (found by an adversary, round
 *               26: an attached process holding the master of an outside shell's pty)
 *     TIOCSPTLCK (a pty master) locks the slave: every later open of it refused
 *               (these two first, by a global function, bpf/tty.bpf.c
 *               pysb_master_ioctl: inlined among the others, they made 7.2's verifier
 *               pass its million instructions on file_ioctl)
 *     KD*, PIO_*, VT_* (a virtual console: sets_console) its keyboard and display modes,
 *               fonts, maps, LEDs, sound, switching (found by an adversary, round 30)
 *     -> -EPERM, the same event. Allowed: a terminal whose session the sandbox leads
 *     (`run`'s pty, a pty it made and gave a session), one that no session uses
 *     (the kernel's own job control then), and reading any of it.
 *     KD*, PIO_*, VT_* on a virtual console whatever its session (virtual_console: one the
 *     sandbox made its own controlling terminal, round 31), unless the policy grants
 *     CAP_SYS_TTY_CONFIG -> -EPERM, the same event.
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
#define TIOCSPTLCK 0x40045431 /* _IOW('T', 0x31, int) */
#define TIOCSIG	   0x40045436 /* _IOW('T', 0x36, int) */
#define TCSETS2	   0x402C542B /* _IOW('T', 0x2B, struct termios2): 44 bytes, 32-bit too */
#define TCSETSW2   0x402C542C
#define TCSETSF2   0x402C542D
#define FIOSETOWN  0x8901
#define SIOCSPGRP  0x8902
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

/*
 * A virtual console's commands (drivers/tty/vt/vt_ioctl.c: type 'K' and 'V', plain
 * numbers) that change it for whoever sits at it: its keyboard mode (KDSKBMODE: raw or
 * off, the console's keyboard dead), its display mode (KDSETMODE: graphics, the text gone),
 * its LEDs, sound and bell (KDSETLED, KIOCSOUND, KDMKTONE), its fonts and colour and
 * screen maps (PIO_*, KDFONTOP: shared by every console), its switching (VT_SETMODE with
 * VT_PROCESS: the user cannot switch away; VT_ACTIVATE: the screen and the keyboard to
 * another console), and the rest of the setters. The kernel lets a task whose
 * controlling terminal the console is use them without a capability (found by an
 * adversary, round 30: an attached process in the session of a console's login shell).
 * Reads and waits stay free: every KD get and GIO_* map, VT_OPENQRY, VT_GETMODE,
 * VT_GETSTATE, VT_GETHIFONTMASK, VT_WAITACTIVE, VT_WAITEVENT.
 */
#define KD_TYPE 0x4B
#define VT_TYPE 0x56

static __always_inline bool sets_console(unsigned int cmd)
{
	__u32 type = (cmd >> 8) & 0xff, nr = cmd & 0xff;

	if (cmd >> 16)
		return false;
	if (type == VT_TYPE)
		return nr != 0x00 && nr != 0x01 && nr != 0x03 && nr != 0x07 && nr != 0x0D &&
		       nr != 0x0E;
	if (type != KD_TYPE)
		return false;
	switch (nr) {
	case 0x31: /* KDGETLED */
	case 0x33: /* KDGKBTYPE */
	case 0x3B: /* KDGETMODE */
	case 0x40: /* GIO_SCRNMAP */
	case 0x44: /* KDGKBMODE */
	case 0x46: /* KDGKBENT */
	case 0x48: /* KDGKBSENT */
	case 0x4A: /* KDGKBDIACR */
	case 0x4C: /* KDGETKEYCODE */
	case 0x60: /* GIO_FONT */
	case 0x62: /* KDGKBMETA */
	case 0x64: /* KDGKBLED */
	case 0x66: /* GIO_UNIMAP */
	case 0x69: /* GIO_UNISCRNMAP */
	case 0x6B: /* GIO_FONTX */
	case 0x70: /* GIO_CMAP */
	case 0xFA: /* KDGKBDIACRUC */
		return false;
	}
	return true;
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

/*
 * Is the terminal at `tty` (a struct tty_struct *, 0: none), or the other end of its pty
 * (a master's commands act on the slave), the terminal of a session led outside the
 * sandbox `cgid`? A session whose leader is gone counts as outside, as for /dev/tty
 * (bpf/file.bpf.c). A global function (bpf/tty.bpf.c), verified once on its own, so that
 * the programs that ask do not verify its loop again on each of their paths.
 */
extern int pysb_tty_led_outside(__u64 tty, __u64 cgid);

#define DEVPTS_SUPER_MAGIC 0x1cd1
#define PTMX_DEV	   ((5u << 20) | 2) /* the kernel's MKDEV(5, 2): /dev/ptmx, /dev/pts/ptmx */

/*
 * Another session's terminal, reached by a file a sandboxed task opens or receives: a
 * pty slave whose session is led outside the sandbox (its `/dev/pts/N`), or a pty master
 * handed in whose slave's is. Read, it takes what the user types there before that
 * session's shell does (a sudo password); written, it shows the user what the program
 * chooses; a master types into that shell. Found by an adversary, round 26: a policy
 * that lets a program make ptys (`expose-rw=/dev/pts`, pexpect, `pty.openpty()`) let it
 * read, as the user or as root, the type-ahead of the user's other terminals. At the
 * open the driver has not set the file's private data yet: the slave is the one devpts
 * keeps with the name's dentry (the kernel's devpts_get_priv()). A pty the sandbox made
 * (no session yet, or one it leads) and `run`'s own pty stay the program's.
 */
static __noinline __attribute__((unused)) bool foreign_terminal(struct file *file,
								struct inode *inode, __u64 cgid)
{
	struct dentry *d = file->f_path.dentry;
	struct tty_struct *tty;

	if ((inode->i_mode & S_IFMT) != S_IFCHR)
		return false;
	tty = tty_of(file);
	if (!tty && BPF_CORE_READ(d, d_sb, s_magic) == DEVPTS_SUPER_MAGIC)
		tty = (struct tty_struct *)BPF_CORE_READ(d, d_fsdata);
	return tty && pysb_tty_led_outside((__u64)tty, cgid);
}

/* TIOCSIG and TIOCSPTLCK (see the top) on a terminal whose session is led outside: the
 * verdict (0, or -EPERM with an event; 0 in audit mode). The file is passed in memory, as
 * a number: a global function takes no kernel pointer. */
struct tty_arg {
	__u64 file; /* struct file * */
};

extern int pysb_master_ioctl(struct tty_arg *a);

/*
 * A virtual console (the vt driver's terminals: major 4 from minor 1; /dev/tty0 and a
 * /dev/console opened on one reach the same). Its setters (sets_console) act on the
 * machine's screen and keyboard, whoever leads its session: the kernel lets a session
 * leader make a console no session uses its controlling terminal (an open, or TIOCSCTTY
 * on a descriptor it holds) and then set it with no capability. Found by an adversary,
 * round 31: an attached process holding /dev/tty6, which no session used, called
 * setsid() and TIOCSCTTY, led the console's session inside the sandbox, and switched the
 * screen to it, held its switching and set its keyboard mode. A sandbox sets a console
 * only with bpf.capabilities=CAP_SYS_TTY_CONFIG, the capability the kernel asks of
 * everyone else.
 */
#define TTY_MAJOR	   4
#define CAP_SYS_TTY_CONFIG 26

static __always_inline bool virtual_console(struct tty_struct *tty)
{
	return tty && BPF_CORE_READ(tty, driver, major) == TTY_MAJOR &&
	       BPF_CORE_READ(tty, driver, minor_start) == 1;
}

static __always_inline int check_tty_ioctl(struct file *file, unsigned int cmd)
{
	struct pysb_sandbox_cfg *cfg;
	struct tty_struct *tty;
	bool any_file, console = false;
	__u64 cgid;

	if (cmd == FIOSETOWN || cmd == SIOCSPGRP)
		return sigio_owner_reserve(file);
	if (((cmd >> 8) & 0xff) == TIOC_TYPE) {
		any_file = cmd == TIOCSTI || cmd == TIOCLINUX || cmd == TIOCSETD;
		if (!any_file && !sets_terminal(cmd))
			return 0;
	} else if (sets_console(cmd)) {
		any_file = false;
		console = true;
	} else {
		return 0;
	}
	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	if (!any_file) {
		tty = tty_of(file);
		console = console && !(cfg->caps & (1ull << CAP_SYS_TTY_CONFIG)) &&
			  virtual_console(tty);
		if (!console && !pysb_tty_led_outside((__u64)tty, cgid))
			return 0;
	}
	return deny_self_path(cfg, cgid, PYSB_OP_TTY_IOCTL, 0, BPF_CORE_READ(file, f_path.dentry),
			      BPF_CORE_READ(file, f_path.mnt), EPERM);
}

#endif /* PYSB_TTY_BPF_H */
