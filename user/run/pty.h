/* SPDX-License-Identifier: MIT */
/*
 * The program's own session and, when pysb-bpf's stdin or stdout is a terminal, its own
 * pty that pysb-bpf relays (as sudo's use_pty, script(1), bwrap --new-session): the
 * caller's terminal is never handed to the sandbox, so TIOCSTI, TIOCLINUX, line
 * discipline and job-control tricks on it are out of reach.
 */
#ifndef PYSB_PTY_H
#define PYSB_PTY_H

#include <stdbool.h>
#include <sys/types.h>
#include <termios.h>

struct pty_relay {
	int master;	  /* -1: no pty (no terminal on stdin/stdout), stdio untouched */
	int slave;	  /* the child's terminal; closed in the parent once it runs */
	int tty;	  /* the caller's terminal, for its mode and window size */
	int in;		  /* stdin when it is a terminal (relayed to the pty), else -1 */
	int out;	  /* where the pty's output goes: the caller's terminal */
	bool on_tty[3];	  /* which of fds 0, 1, 2 are terminals: those get the slave */
	bool master_done; /* every slave closed: nothing more to read */
	bool raw;	  /* the caller's terminal is in raw mode (restore it) */
	struct termios saved;
	pid_t child; /* the program's process group, for job control */
};

/* Before the spawn: opens a pty when stdin or stdout is a terminal (copying its mode and
 * size), and owns it to uid/gid ((uid_t)-1: unchanged). Returns 0, or -1 after saying
 * what failed. */
int pty_open(struct pty_relay *p, uid_t uid, gid_t gid);

/* In the child (async-signal-safe): its own session; with a pty, the pty as its
 * controlling terminal on the fds that were terminals. Returns 0 or an errno. */
int pty_child(const struct pty_relay *p);

/* In the parent once the child runs: closes the slave, puts the caller's terminal in raw
 * mode (only when pysb-bpf is its foreground job), restores it on every exit. */
void pty_start(struct pty_relay *p, pid_t child);

/* Moves what is ready between the terminal and the pty. fds[0] stdin, fds[1] the master
 * (pty_poll_fds fills them, -1 when not relayed). Returns false once the pty is closed. */
void pty_poll_fds(const struct pty_relay *p, int fds[2]);
void pty_relay(struct pty_relay *p, short in_revents, short master_revents);

/* Copies to the caller's terminal all the program wrote so far (before pysb-bpf writes
 * lines about what the program did after it). */
void pty_drain_out(struct pty_relay *p);

/* The caller's window size changed (SIGWINCH): the pty takes it, the program is told. */
void pty_winch(struct pty_relay *p);

/* The program stopped on the pty (^Z): give the terminal back, stop pysb-bpf like it,
 * and on `fg` take the terminal again and continue the program. False when there is no
 * terminal to give back (nothing done). */
bool pty_stopped(struct pty_relay *p);

/* What process `pid` does with SIGTSTP: a program that ignores or catches it (an
 * interactive shell, an editor) acts on it itself, its process group orphaned or not. */
enum tstp_disposition { TSTP_DEFAULT, TSTP_CAUGHT, TSTP_IGNORED };
enum tstp_disposition proc_sigtstp(pid_t pid);
/* The program exited: copy what it still wrote, restore the terminal, close the pty. */
void pty_close(struct pty_relay *p);

#endif /* PYSB_PTY_H */
