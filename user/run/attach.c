/* SPDX-License-Identifier: MIT */
/*
 * pysb-bpf attach: a running process (all its threads) put under a policy from now on, in a cgroup of its own, until it exits or pysb-bpf is interrupted. See runner.c.
 */
#include <dirent.h>

#include "runner_int.h"
#include "drivers.h"

/* ---------------- attach: a running process put under a policy */

/* The cgroup directory `pid` is in now (cgroup2: the "0::" line), absolute. */
static int cgroup_of(pid_t pid, char *out, size_t len)
{
	char root[PATH_MAX], f[64], line[PATH_MAX];
	FILE *fp;
	int ret = -1;

	if (cgroup2_mount(root, sizeof(root)))
		return -1;
	snprintf(f, sizeof(f), "/proc/%d/cgroup", pid);
	fp = fopen(f, "re");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			ret = (size_t)snprintf(out, len, "%s%s", root, line + 3) < len ? 0 : -1;
		}
	fclose(fp);
	return ret;
}

/* Moves the whole process (every thread) into the cgroup directory dir. */
static int move_pid(const char *dir, pid_t pid)
{
	char f[PATH_MAX + 32], v[32];
	int fd, n, ret = 0;

	snprintf(f, sizeof(f), "%s/cgroup.procs", dir);
	fd = open(f, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(v, sizeof(v), "%d", pid);
	if (write(fd, v, (size_t)n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

/* May this signal detach? Only the administrator's: a signal sent by a process outside
 * the sandbox cgroup, or by pysb-bpf's terminal. A sandboxed process cannot kill() pysb-bpf
 * (lsm/task_kill) but can have a file's owner signalled (F_SETOWN + F_SETSIG, with a POLL_*
 * code and no sender) or be the sender itself; those are refused, with the reason in why. */
/* The controlling terminal (tty_nr of /proc/PID/stat) of `pid`, 0 for none or unknown. */
static int tty_of(const char *pid)
{
	char f[64], buf[1024], *p;
	int tty = 0;
	FILE *fp;

	snprintf(f, sizeof(f), "/proc/%s/stat", pid);
	fp = fopen(f, "re");
	if (!fp)
		return 0;
	if (fgets(buf, sizeof(buf), fp) && (p = strrchr(buf, ')')) &&
	    sscanf(p + 1, " %*c %*d %*d %*d %d", &tty) != 1)
		tty = 0;
	fclose(fp);
	return tty;
}

/*
 * A process of the sandbox on pysb-bpf's own terminal, into *pid: that terminal's signals
 * are then not the administrator's alone. Any process holding the terminal chooses its
 * interrupt character (termios), and can make the terminal type it (an answerback to a
 * query it writes): found by an adversary, a confined background job detached itself
 * through the terminal `attach` ran on in the foreground.
 */
static bool shares_my_terminal(const char *sandbox, long *pid)
{
	char f[PATH_MAX + 16], line[32];
	int mine = tty_of("self");
	bool shared = false;
	FILE *fp;

	if (!mine)
		return false;
	snprintf(f, sizeof(f), "%s/cgroup.procs", sandbox);
	fp = fopen(f, "re");
	if (!fp)
		return true; /* cannot tell: not the administrator's for sure */
	while (!shared && fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = '\0';
		shared = tty_of(line) == mine;
		*pid = strtol(line, NULL, 10);
	}
	fclose(fp);
	return shared;
}

static bool sent_from_outside(const struct signalfd_siginfo *si, const char *sandbox, char *why,
			      size_t len)
{
	char where[PATH_MAX];
	size_t n = strlen(sandbox);
	long pid = 0;

	if (si->ssi_code == SI_KERNEL) {
		/* the terminal's ^C, ^\ or hangup, unless a sandboxed process shares it */
		if (!shares_my_terminal(sandbox, &pid))
			return true;
		snprintf(why, len,
			 "it came from this terminal, which process %ld of the sandbox shares (it "
			 "sets the terminal's interrupt character, and can make the terminal type "
			 "it); send it with kill from another shell",
			 pid);
		return false;
	}
	if (!sent_by_a_process(si)) {
		snprintf(why, len,
			 "not sent by kill() (code %d: a file's SIGIO owner, or a "
			 "signal queue that overflowed)",
			 si->ssi_code);
		return false;
	}
	/* The sender is seen while it lives (or is a zombie): one that exited and was
	 * reaped at once cannot be placed, so it does not count either. */
	if (!si->ssi_pid || cgroup_of((pid_t)si->ssi_pid, where, sizeof(where))) {
		snprintf(why, len,
			 "its sender (pid %u) is gone; send it again from a process "
			 "that stays, such as the shell's kill builtin",
			 si->ssi_pid);
		return false;
	}
	if (!strncmp(where, sandbox, n) && (where[n] == '\0' || where[n] == '/')) {
		snprintf(why, len, "sent by pid %u, inside the sandbox", si->ssi_pid);
		return false;
	}
	return true;
}

/* A signal to pysb-bpf: from outside the sandbox, it detaches the process (back to its
 * cgroup `home`); from inside, it is ignored (the sandboxed process may not end its own
 * confinement). True when the attach is over; *release false when the move back failed
 * (the process then stays confined, pinned). */
static bool signal_detaches(int sigfd, const char *cgpath, const char *home, pid_t target,
			    bool *release)
{
	struct signalfd_siginfo si;
	char why[192];
	int err;

	if (read(sigfd, &si, sizeof(si)) != sizeof(si))
		return false;
	if (!sent_from_outside(&si, cgpath, why, sizeof(why))) {
		pr_warn("%s ignored: %s; process %d stays confined", strsignal((int)si.ssi_signo),
			why, target);
		return false;
	}
	/* Detach: back where it was. Only this process can do it: the sandboxed one may
	 * neither signal it nor leave its cgroup. */
	err = move_pid(home, target);
	if (err) {
		pr_err("cannot move process %d back to %s: %s; it stays confined", target, home,
		       strerror(-err));
		*release = false;
	} else {
		pr_warn("process %d detached (back in %s)", target, home);
	}
	return true;
}

/* Events until the process exits or a signal from outside detaches it. 0, or
 * EXIT_PYSB_ERROR when poll failed. */
static int attach_loop(struct event_sink *sink, struct loader *l, struct ring_buffer *rb, int pidfd,
		       int sigfd, pid_t target, const char *cgpath, const char *home, bool *release)
{
	const struct run_opts *o = sink->o;
	for (;;) {
		struct pollfd fds[3] = {
			{ .fd = ring_buffer__epoll_fd(rb), .events = POLLIN },
			{ .fd = pidfd, .events = POLLIN },
			{ .fd = sigfd, .events = POLLIN },
		};
		int n = poll(fds, 3, 1000);

		if (n < 0 && errno != EINTR)
			return EXIT_PYSB_ERROR;
		if (n > 0 && fds[0].revents)
			ring_buffer__consume(rb);
		if (n == 0 && o->events)
			events_json_flush(o->events);
		batch_done(sink, l, true);
		if (n > 0 && fds[1].revents)
			return 0; /* it exited: its children go with the cgroup, as under run */
		if (n > 0 && (fds[2].revents & POLLIN) &&
		    signal_detaches(sigfd, cgpath, home, target, release))
			return 0;
	}
}

/* True (said) when the process, confined a moment, drives another from outside the
 * sandbox (holds its memory file or a seccomp listener, or traces it), and is moved back. */
static bool refuse_a_driver(pid_t target, const char *home)
{
	struct driver d;
	char what[128];
	int err = process_driver(target, true, &d);

	if (err < 0) {
		pr_err("cannot attach to process %d: cannot read /proc to see whom it drives: %s",
		       target, strerror(-err));
	} else if (err > 0) {
		driver_describe(&d, what, sizeof(what));
		pr_err("cannot attach to process %d: %s, %s", target, what,
		       d.kind == DRIVER_TRACE
			       ? "which it could go on driving outside the sandbox; end that trace "
				 "first (a debugger's detach, or the traced process's exit)"
		       : d.kind == DRIVER_MEM_FILE
			       ? "the memory of a process it could go on reading and writing outside "
				 "the sandbox; close it first"
		       : d.kind == DRIVER_CGROUP_FILE
			       ? "through which it could move itself out of the sandbox; close it "
				 "first"
		       : d.kind == DRIVER_FANOTIFY
			       ? "with which it could go on refusing, or holding up, the file "
				 "accesses of processes outside the sandbox; close it first"
			       : "with which it could go on answering the system calls of processes "
				 "outside the sandbox; close it first (or attach the processes under "
				 "its filter instead)");
	} else {
		return false;
	}
	err = move_pid(home, target);
	if (err)
		pr_err("cannot move process %d back to %s: %s; it stays confined", target, home,
		       strerror(-err));
	return true;
}

int sandbox_attach(const struct run_opts *o, pid_t target)
{
	static char errbuf[1 << 16];
	struct sandbox_cgroup cg = { .fd = -1 };
	struct pysb_sandbox_cfg cfg = { 0 };
	struct loader l = { 0 };
	struct ring_buffer *rb = NULL;
	struct event_sink sink = { .o = o };
	char home[PATH_MAX];
	sigset_t mask, old;
	int ret = EXIT_PYSB_ERROR, pidfd, sigfd = -1, err;
	bool moved = false, release = true;

	pidfd = (int)syscall(SYS_pidfd_open, target, 0);
	if (pidfd < 0 || cgroup_of(target, home, sizeof(home))) {
		pr_err("no process %d to attach to: %s", target, strerror(errno));
		if (pidfd >= 0)
			close(pidfd);
		return ret;
	}
	if (sandbox_setup(o, &cg, &l, &cfg, OWNER_ATTACH, target)) {
		close(pidfd);
		return ret;
	}
	sink_init(o);
	sandbox_dedup_clear(&l, cfg.id);
	rb = ring_buffer__new(loader_events_fd(&l), on_event, &sink, NULL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, &old);
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (!rb || sigfd < 0) {
		pr_err("cannot read the events: %s", strerror(errno));
		goto out;
	}
	err = move_pid(cg.path, target);
	if (err) {
		pr_err("cannot move process %d into %s: %s", target, cg.path, strerror(-err));
		goto out;
	}
	moved = true;
	if (refuse_a_driver(target, home))
		goto out;
	sandbox_gc(&l);
	pr_warn("process %d is confined from now on (cgroup %s); what it opened before stays "
		"open. %s",
		target, cg.path,
		shares_my_terminal(cg.path, &(long){ 0 })
			? "It shares this terminal, whose signals it could send: to detach it, "
			  "send pysb-bpf SIGTERM from another shell (kill)"
			: "Interrupt pysb-bpf (Ctrl-C, SIGTERM) to detach it");
	fflush(stderr);
	setvbuf(stderr, errbuf, _IOFBF, sizeof(errbuf));
	ret = attach_loop(&sink, &l, rb, pidfd, sigfd, target, cg.path, home, &release);
	ring_buffer__consume(rb);
	fflush(stderr);
	setvbuf(stderr, NULL, _IONBF, 0);
	report_lost(o, &l, &sink);
out:
	close(pidfd);
	if (sigfd >= 0)
		close(sigfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* Never unconfine by tearing down: a process that could not be moved back keeps
	 * its sandbox (pinned), as a run whose pysb-bpf is killed does. */
	if (release || !moved) {
		if (sandbox_cgroup_destroy(&cg) == 0 && cfg.id) {
			loader_sandbox_free(&l, cg.id, cfg.id);
			sandbox_record_remove(cg.id);
		}
	} else {
		l.sandbox_id = 0; /* keep its pinned socket links */
	}
	ring_buffer__free(rb);
	loader_stop(&l);
	return ret;
}
