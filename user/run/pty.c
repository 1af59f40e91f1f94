/* SPDX-License-Identifier: MIT */
/*
 * The program's terminal (see pty.h). Without a pty the program would hold the caller's
 * terminal: TIOCSTI pushes commands into the shell that ran pysb-bpf (they run unconfined
 * once the program exits), TIOCSETD/TIOCLINUX reach the console, and the caller's job
 * control is the program's. With one, all of those act on a terminal only the program
 * uses; pysb-bpf copies bytes both ways and nothing else.
 *
 * The caller's terminal goes to raw mode only while pysb-bpf reads it (stdin is a
 * terminal and pysb-bpf is its foreground job), so ^C, ^Z, ^\ are bytes the pty turns into
 * the program's signals, and the program's output reaches it byte for byte, as script(1)
 * and ssh do it (its CR LF stays CR LF, a program's raw-mode LF stays a LF). pysb-bpf's
 * own lines going to that terminal then end in CR LF (crlf_write). What the terminal
 * held before raw mode is taken as it was typed: whole lines, and an end of input (^D,
 * or script(1) whose own input ended) that raw mode would turn into a NUL byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "pty.h"

/* What a fatal signal's handler restores: one terminal per process. */
static volatile sig_atomic_t restore_fd = -1;
static struct termios restore_mode;

static void restore_now(void)
{
	if (restore_fd >= 0)
		tcsetattr(restore_fd, TCSANOW, &restore_mode);
}

static void restore_on_signal(int sig)
{
	/* SA_RESETHAND: the default action follows, on a terminal in its old mode. */
	restore_now();
	raise(sig);
}

static void restore_at_exit(void)
{
	restore_now();
}

static void restore_handlers(void)
{
	static const int fatal[] = { SIGSEGV, SIGBUS,	 SIGFPE,  SIGILL,  SIGABRT,
				     SIGPIPE, SIGALRM,	 SIGUSR1, SIGUSR2, SIGXCPU,
				     SIGXFSZ, SIGVTALRM, SIGPROF, SIGSYS };
	static bool done;
	struct sigaction sa = { .sa_handler = restore_on_signal, .sa_flags = SA_RESETHAND };

	if (done)
		return;
	done = true;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		struct sigaction old;

		/* A signal the caller ignores stays ignored (SIGPIPE under some shells). */
		if (!sigaction(fatal[i], NULL, &old) && old.sa_handler == SIG_DFL)
			sigaction(fatal[i], &sa, NULL);
	}
	atexit(restore_at_exit);
}

/* ---------------- pysb-bpf's own lines on a terminal in raw mode */

/* While the relay runs, stderr is this stream when it is the caller's terminal: each LF
 * not after a CR goes out as CR LF while that terminal is raw (`crlf`). */
static FILE *crlf_saved_stderr;
static bool crlf, crlf_after_cr;

static int write_all(int fd, const char *buf, size_t len);

static ssize_t crlf_write(void *cookie, const char *buf, size_t len)
{
	char out[8192];
	size_t i, n = 0;

	(void)cookie;
	for (i = 0; i < len; i++) {
		if (n > sizeof(out) - 2) {
			if (write_all(2, out, n))
				return -1;
			n = 0;
		}
		if (buf[i] == '\n' && crlf && !crlf_after_cr)
			out[n++] = '\r';
		out[n++] = buf[i];
		crlf_after_cr = buf[i] == '\r';
	}
	return n && write_all(2, out, n) ? -1 : (ssize_t)len;
}

/* From pty_start to pty_close: stderr through crlf_write, when it is the terminal the
 * relay puts in raw mode (the same device as stdin). */
static void crlf_stderr_begin(const struct pty_relay *p)
{
	static const cookie_io_functions_t io = { .write = crlf_write };
	struct stat in, err;
	FILE *f;

	if (p->in < 0 || !p->on_tty[2] || fstat(p->in, &in) || fstat(2, &err) ||
	    in.st_rdev != err.st_rdev)
		return;
	f = fopencookie(NULL, "w", io);
	if (!f)
		return;
	setvbuf(f, NULL, _IONBF, 0); /* as stderr: the caller sets a buffer if it wants one */
	fflush(stderr);
	crlf_saved_stderr = stderr;
	stderr = f;
}

static void crlf_stderr_end(void)
{
	if (!crlf_saved_stderr)
		return;
	fclose(stderr);
	stderr = crlf_saved_stderr;
	crlf_saved_stderr = NULL;
	crlf = false;
}

int pty_open(struct pty_relay *p, uid_t uid, gid_t gid)
{
	struct termios mode;
	struct winsize ws;
	char name[64];
	bool any = false;

	*p = (struct pty_relay){ .master = -1, .slave = -1, .tty = -1, .in = -1, .out = -1 };
	for (int fd = 0; fd < 3; fd++) {
		p->on_tty[fd] = isatty(fd);
		if (p->on_tty[fd] && p->tty < 0)
			p->tty = fd;
		any |= p->on_tty[fd];
	}
	if (!any)
		return 0; /* pipes and files: the program gets them as they are */
	p->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (p->master < 0 || grantpt(p->master) || unlockpt(p->master) ||
	    ptsname_r(p->master, name, sizeof(name))) {
		pr_err("cannot open a pseudo-terminal for the program: %s; is devpts mounted on "
		       "/dev/pts? (or run pysb-bpf with stdin, stdout and stderr not terminals)",
		       strerror(errno));
		goto fail;
	}
	p->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (p->slave < 0) {
		pr_err("cannot open the pseudo-terminal %s: %s", name, strerror(errno));
		goto fail;
	}
	/* The program's user owns its terminal, as login and sudo do it. */
	if (uid != (uid_t)-1 && fchown(p->slave, uid, gid))
		pr_warn("cannot give %s to uid %u: %s", name, (unsigned)uid, strerror(errno));
	/* It starts as the caller's terminal was: same line settings, same size. */
	if (!tcgetattr(p->tty, &mode)) {
		p->saved = mode;
		tcsetattr(p->slave, TCSANOW, &mode);
	}
	if (!ioctl(p->tty, TIOCGWINSZ, &ws))
		ioctl(p->slave, TIOCSWINSZ, &ws);
	if (fcntl(p->master, F_SETFL, O_NONBLOCK)) {
		pr_err("cannot make the pseudo-terminal non-blocking: %s", strerror(errno));
		goto fail;
	}
	p->in = p->on_tty[0] ? 0 : -1;
	p->out = p->on_tty[1] ? 1 : p->on_tty[2] ? 2 : 0;
	pr_debug("pty %s for the program (terminal on fds%s%s%s)", name, p->on_tty[0] ? " 0" : "",
		 p->on_tty[1] ? " 1" : "", p->on_tty[2] ? " 2" : "");
	return 0;
fail:
	if (p->master >= 0)
		close(p->master);
	if (p->slave >= 0)
		close(p->slave);
	p->master = p->slave = -1;
	return -1;
}

int pty_child(const struct pty_relay *p)
{
	/* No controlling terminal is inherited: even with pipes for stdio, the caller's
	 * terminal (its /dev/tty) is not the program's. */
	if (setsid() < 0)
		return errno;
	if (p->master < 0)
		return 0;
	if (ioctl(p->slave, TIOCSCTTY, 0))
		return errno;
	for (int fd = 0; fd < 3; fd++)
		if (p->on_tty[fd] && dup2(p->slave, fd) < 0)
			return errno;
	return 0;
}

/* The program's end of input: its terminal's EOF character, when it reads lines. */
static void pass_eof(const struct pty_relay *p)
{
	struct termios t;
	char eof;

	if (tcgetattr(p->master, &t) || !(t.c_lflag & ICANON))
		return;
	eof = (char)t.c_cc[VEOF];
	write_all(p->master, &eof, 1);
}

/* Before raw mode: what a terminal reading lines already holds, as the program would
 * have read it. An end of input is a mark in the line buffer that raw mode turns into a
 * NUL byte: it goes to the program as its EOF character instead, and so does the end of
 * a line cut short by one. */
static void take_pending_lines(const struct pty_relay *p)
{
	struct termios now;
	size_t taken = 0;

	if (tcgetattr(p->in, &now) || !(now.c_lflag & ICANON))
		return;
	/* At most half of what the program's terminal holds (4 KiB): a program that reads no
	 * input must not make pysb-bpf wait here, before it relays anything (a review). */
	while (taken < 2048) {
		struct pollfd pf = { .fd = p->in, .events = POLLIN };
		char buf[256];
		ssize_t n;

		if (poll(&pf, 1, 0) != 1 || !(pf.revents & POLLIN))
			return;
		n = read(p->in, buf, sizeof(buf));
		if (n < 0 || (n == 0 && (pf.revents & POLLHUP)))
			return;
		if (n > 0 && write_all(p->master, buf, (size_t)n))
			return;
		taken += n > 0 ? (size_t)n : 1;
		/* a line's end short of the buffer and of a newline: cut by an end of input */
		if (n == 0 ||
		    ((size_t)n < sizeof(buf) && buf[n - 1] != '\n' &&
		     (char)now.c_cc[VEOL] != buf[n - 1] && (char)now.c_cc[VEOL2] != buf[n - 1]))
			pass_eof(p);
	}
}

static void set_raw(struct pty_relay *p)
{
	struct termios raw = p->saved;

	/* Only the foreground job may change the terminal (else SIGTTOU stops pysb-bpf);
	 * in the background the program's input waits for `fg` as any job's does. */
	if (p->in < 0 || tcgetpgrp(p->in) != getpgrp())
		return;
	take_pending_lines(p);
	cfmakeraw(&raw);
	restore_mode = p->saved;
	restore_fd = p->in;
	if (tcsetattr(p->in, TCSADRAIN, &raw)) {
		restore_fd = -1;
		pr_warn("cannot put the terminal in raw mode: %s; ^C reaches pysb-bpf, which "
			"passes it on",
			strerror(errno));
		return;
	}
	p->raw = true;
	crlf = true;
}

static void restore(struct pty_relay *p)
{
	if (!p->raw)
		return;
	fflush(stderr);
	crlf = false;
	tcsetattr(p->in, TCSADRAIN, &p->saved);
	restore_fd = -1;
	p->raw = false;
}

void pty_start(struct pty_relay *p, pid_t child)
{
	p->child = child;
	if (p->master < 0)
		return;
	close(p->slave);
	p->slave = -1;
	restore_handlers();
	crlf_stderr_begin(p);
	set_raw(p);
}

void pty_poll_fds(const struct pty_relay *p, int fds[2])
{
	fds[0] = p->master >= 0 ? p->in : -1;
	fds[1] = p->master_done ? -1 : p->master;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			struct pollfd pf = { .fd = fd, .events = POLLOUT };

			/* The program does not read its input yet: wait for room (its
			 * terminal holds 4 KiB; pysb-bpf's events wait with it). */
			if (poll(&pf, 1, -1) < 0 && errno != EINTR)
				return -1;
			continue;
		}
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One read from the pty to the caller's terminal: 1 copied, 0 nothing there now, -1 at
 * its end (EIO: every slave closed) or when the caller's terminal is gone. */
static int copy_out(struct pty_relay *p)
{
	char buf[4096];
	ssize_t n = read(p->master, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0 || write_all(p->out, buf, (size_t)n))
		return -1;
	return 1;
}

/* What the program wrote before pysb-bpf's next own lines (its denials come after what
 * it wrote before them; found by CI: a deny line landed between a program's "line one"
 * and its CR LF, which the pty pushes to the master in two steps, because the loop read
 * the ring before the pty). A read that finds nothing waits for the pushes under way;
 * at most 1 MiB, for a program that writes on. */
void pty_drain_out(struct pty_relay *p)
{
	for (int i = 0; p->master >= 0 && !p->master_done && i < 256; i++) {
		int n = copy_out(p);

		if (n < 0)
			p->master_done = true;
		if (n <= 0)
			return;
	}
}

enum tstp_disposition proc_sigtstp(pid_t pid)
{
	char path[64], line[256];
	enum tstp_disposition d = TSTP_DEFAULT;
	unsigned long long mask;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return TSTP_DEFAULT; /* gone, or unreadable: a SIGSTOP does no harm */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "SigIgn: %llx", &mask) == 1 && (mask & (1ULL << (SIGTSTP - 1))))
			d = TSTP_IGNORED;
		if (sscanf(line, "SigCgt: %llx", &mask) == 1 && (mask & (1ULL << (SIGTSTP - 1))))
			d = TSTP_CAUGHT;
	}
	fclose(f);
	return d;
}

/*
 * ^Z typed for the program: the pty turns it into SIGTSTP for its foreground group, which
 * the kernel discards when that group is the program's own (orphaned: the program leads
 * a session its parent is not in; found by a user: ^Z did nothing, the shell never got
 * the prompt back). That group is stopped with SIGSTOP instead; pty_stopped then stops
 * pysb-bpf, so the shell shows the job stopped. A job of a shell running in the sandbox
 * (another group) is left to the pty: that shell's job control works as it does.
 */
static void suspend_typed(const struct pty_relay *p, const char *buf, size_t n)
{
	struct termios t;

	if (!p->raw || p->child <= 0 || tcgetattr(p->master, &t) || !(t.c_lflag & ISIG) ||
	    t.c_cc[VSUSP] == _POSIX_VDISABLE || !memchr(buf, t.c_cc[VSUSP], n) ||
	    tcgetpgrp(p->master) != p->child || proc_sigtstp(p->child) != TSTP_DEFAULT)
		return;
	kill(-p->child, SIGSTOP);
}

void pty_relay(struct pty_relay *p, short in_revents, short master_revents)
{
	char buf[4096];

	if (p->master < 0)
		return;
	/* Every slave closed: what they wrote was read, stop polling (POLLHUP stays). */
	if ((master_revents & (POLLIN | POLLHUP | POLLERR)) && copy_out(p) < 0)
		p->master_done = true;
	if (p->in >= 0 && (in_revents & (POLLIN | POLLHUP | POLLERR))) {
		ssize_t n = read(p->in, buf, sizeof(buf));

		if (n > 0) {
			if (write_all(p->master, buf, (size_t)n))
				pr_warn("cannot pass input to the program's terminal: %s",
					strerror(errno));
			suspend_typed(p, buf, (size_t)n);
		} else if (n == 0 || errno != EINTR) {
			/* The caller's terminal hung up: the program's input ends too. */
			restore(p);
			p->in = -1;
		}
	}
}

void pty_winch(struct pty_relay *p)
{
	struct winsize ws;

	if (p->master >= 0 && !ioctl(p->tty, TIOCGWINSZ, &ws))
		ioctl(p->master, TIOCSWINSZ, &ws); /* the kernel sends the SIGWINCH */
}

bool pty_stopped(struct pty_relay *p)
{
	if (!p->raw)
		return false; /* not the terminal's foreground job: nothing to give back */
	restore(p);
	/* Stopped like the program, so the shell shows the job stopped; `fg` continues
	 * pysb-bpf here. SIGSTOP, as SIGTSTP is discarded in an orphaned process group. */
	kill(getpid(), SIGSTOP);
	set_raw(p);
	pty_winch(p);
	kill(-p->child, SIGCONT);
	return true;
}

void pty_close(struct pty_relay *p)
{
	if (p->master >= 0) {
		/* The program exited: what it wrote last may still be on its way to the master
		 * (the pty's buffer is pushed by a work queue), so a read can say "nothing now"
		 * before the end (found by a test: the program's last line lost, once in ten
		 * runs on 6.1). Read until the end of the pty (EIO: every slave closed), waiting
		 * for what is on its way; a child that kept the slave open is killed with the
		 * cgroup, so two quiet waits end it, and 256 KiB more (a child still writing). */
		for (int quiet = 0, i = 0; !p->master_done && quiet < 2 && i < 64; i++) {
			struct pollfd pf = { .fd = p->master, .events = POLLIN };
			int n = copy_out(p);

			if (n < 0)
				p->master_done = true;
			else if (n == 0 && poll(&pf, 1, 50) <= 0)
				quiet++;
		}
		close(p->master);
	}
	if (p->slave >= 0)
		close(p->slave);
	restore(p);
	crlf_stderr_end();
	p->master = p->slave = -1;
}
