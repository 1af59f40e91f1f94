/* SPDX-License-Identifier: MIT */
/*
 * Order matters, and is what makes the sandbox race-free and never half-attached:
 *   1. create the cgroup;  2. load and attach the programs;  3. fill the rules;
 *   4. register the cgroup in `sandboxes` (the switch);  5. clone3(CLONE_INTO_CGROUP):
 *   the child is in the cgroup before its first instruction;  6. stream events;
 *   7. at the end kill what is left in the cgroup, remove it, and only then detach.
 * Any failure before 5 undoes what was done and runs nothing.
 */
#include "program.h"
#include "runner_int.h"

/* ---------------- events: stderr line, JSON stream (--events), learning (--learn) */
/* The terminal gets a bounded number of lines (one run per process: one bucket). */
static struct events_tty tty;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int learn_record(void *ctx, const json_t *rec)
{
	struct learn_set *ls = ctx;

	if (learn_add_record(ls, rec))
		ls->unlearned++; /* out of memory: said at the end */
	return 0;
}

/* Where the JSON records go: the stream, learning, or both. */
void sink_init(const struct run_opts *o)
{
	if (o->events && o->learn) {
		o->events->on_record = learn_record;
		o->events->record_ctx = o->learn;
	}
}

/* One record (repeats counted) to the terminal, the stream and learning. `again`: the
 * kernel's count of a key a record of which was delivered already (a sweep's). */
static void deliver(struct event_sink *sink, struct pysb_event *e, bool again)
{
	const struct run_opts *o = sink->o;

	events_resolve_path(e);
	sink->delivered += e->repeat;
	if (events_tty_allow(&tty, mono_ns(), e->repeat))
		event_print_line_again(stderr, e, o->compiled, again);
	if (o->events)
		events_json_event(o->events, e);
}

static void deliver_swept(void *ctx, struct pysb_event *e)
{
	deliver(ctx, e, true);
}

/*
 * make bench's measure of the consumer (scripts/bench, events section): with
 * PYSB_BENCH_EVENTS=hold the ring is left unread while the program runs, and drained,
 * timed, once it has exited; =bare drains it the same way with a consumer that only counts
 * the records. The consumer against a bare drain of the same records: one stderr line,
 * "pysb-bpf: bench: drained N records in T ms".
 */
enum bench_events { BENCH_OFF, BENCH_HOLD, BENCH_BARE };
static unsigned long bench_records;

static enum bench_events bench_events(void)
{
	static int mode = -1;
	const char *v;

	if (mode < 0) {
		v = getenv("PYSB_BENCH_EVENTS");
		mode = !v ? BENCH_OFF : !strcmp(v, "bare") ? BENCH_BARE : BENCH_HOLD;
	}
	return (enum bench_events)mode;
}

static int count_record(void *ctx, void *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	bench_records++;
	return 0;
}

ring_buffer_sample_fn event_consumer(void)
{
	return bench_events() == BENCH_BARE ? count_record : on_event;
}

/*
 * The event ring, mapped at its first record. A run of a policy that fits its program has
 * none, and mapping the ring (its data pages twice, for records that wrap around), the
 * fork copying those page table entries to the program, and unmapping it cost ~12 ms of
 * each run under emulation. Until then the loop polls the ring's own descriptor, readable
 * once a record is there.
 */
struct event_ring {
	int fd; /* -1: not polled (it could not be mapped) */
	struct ring_buffer *rb;
	struct event_sink *sink;
};

static bool ring_mapped(struct event_ring *r)
{
	if (r->rb)
		return true;
	if (r->fd < 0)
		return false;
	r->rb = ring_buffer__new(r->fd, event_consumer(), r->sink, NULL);
	if (!r->rb) {
		/* Still enforced; the kernel counts what the full ring loses (report_lost). */
		pr_err("cannot map the event ring buffer: %s; this run's events are not read",
		       strerror(errno));
		r->fd = -1;
	}
	return r->rb;
}

static void ring_consume(struct event_ring *r)
{
	if (ring_mapped(r))
		ring_buffer__consume(r->rb);
}

/* At the end: what is left, if anything ever came. */
static void ring_drain(struct event_ring *r)
{
	struct pollfd p = { .fd = r->fd, .events = POLLIN };

	if (r->rb || (r->fd >= 0 && poll(&p, 1, 0) > 0))
		ring_consume(r);
}

/* The held ring drained, timed (the events written to the stream included). */
static void bench_drain(struct event_sink *sink, struct event_ring *ring)
{
	struct timespec t0, t1;
	int n;

	if (!ring_mapped(ring))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		n = ring_buffer__consume(ring->rb);
	while (n > 0);
	if (sink->o->events)
		events_json_flush(sink->o->events);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "pysb-bpf: bench: drained %lu records in %.3f ms\n", bench_records,
		(t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
}

int on_event(void *ctx, void *data, size_t len)
{
	struct event_sink *sink = ctx;
	static struct pysb_event e; /* records come at their real size: the rest zeroed */

	bench_records++;
	if (len < PYSB_EVENT_HEAD_LEN) {
		pr_warn("an event record of %zu bytes, less than its header: ignored", len);
		return 0;
	}
	/* The record's bytes; of the rest, what a reader may look at is zeroed: the net
	 * fields, and a path's end (the kernel sends path_len bytes, its NUL included). */
	memcpy(&e, data, len < sizeof(e) ? len : sizeof(e));
	if (len < PYSB_EVENT_HEAD_LEN + sizeof(e.net))
		memset((char *)&e + len, 0, PYSB_EVENT_HEAD_LEN + sizeof(e.net) - len);
	e.path[PYSB_PATH_LEN - 1] = '\0';
	if (e.path_len > 0 && (size_t)e.path_len > len - PYSB_EVENT_HEAD_LEN)
		e.path_len = (int32_t)(len - PYSB_EVENT_HEAD_LEN); /* never beyond the record */
	events_dedup_record(&sink->dedup, &e, len);
	if (e.repeat) /* 0: a sweep told its occurrences already */
		deliver(sink, &e, false);
	return 0;
}

/*
 * The occurrences the kernel counted but sent no record for yet (its dedup map): told
 * once a second and at the end. At the end (`final`), the keys of this sandbox go, and
 * those no record of which ever arrived (the ring was full) are counted as lost.
 */
static void sweep(struct event_sink *sink, const struct loader *l, bool final)
{
	int n;

	/* no key of this sandbox counted: none to tell, none to remove (the map unread) */
	if (!sink || !l->sandbox_id || !loader_dedup_held(l, l->sandbox_id))
		return;
	n = events_dedup_sweep(&sink->dedup, loader_dedup_fd(l), final, l->sandbox_id,
			       deliver_swept, sink, &sink->unseen);
	if (n > 0)
		loader_dedup_deleted(l, l->sandbox_id, (uint32_t)n);
	if (n < 0)
		pr_warn("cannot read the kernel's counts of repeated events: %s; the stream "
			"may miss repeats",
			strerror(-n));
}

/* "N more denials not shown" for what the terminal did not get since the last one. */
static void tty_summary(const struct run_opts *o)
{
	events_tty_summary(&tty, stderr, o->events && o->events->out ? o->events->name : NULL);
}
/* ---------------- the run */

/* One sandbox per run or attach process: its rule inodes, held open (struct file_pins), and
 * the RLIMIT_NOFILE the program gets (holding them may raise this process's own). */
struct file_pins rule_pins;
struct rlimit program_nofile = { RLIM_INFINITY, RLIM_INFINITY };

/* What the child could not do, for the parent's message. */
enum child_step { STEP_EXEC, STEP_IDENTITY, STEP_SESSION, STEP_KEYRING, STEP_NO_NEW_PRIVS };

/* Did the caller ignore SIGPIPE (its disposition, for the program)? */
static bool caller_ignores_sigpipe;

void run_ignore_sigpipe(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;

	if (!sigaction(SIGPIPE, &ign, &old))
		caller_ignores_sigpipe = old.sa_handler == SIG_IGN;
}

/* Child side of clone3: only async-signal-safe calls until execve. */
static void child_exec(const struct run_opts *o, const struct pty_relay *pty, const sigset_t *mask,
		       int gopipe, int errpipe, pid_t parent)
{
	enum child_step step;
	char go;
	int err, msg[2];

	/* Fail closed if pysb-bpf dies: the direct child goes with it (the rest of the
	 * cgroup stays confined by the pinned programs, see docs/design.md). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(EXIT_PYSB_ERROR);
	/* The limit pysb-bpf was started with (holding the rule paths open may have raised
	 * pysb-bpf's own); the descriptors themselves are O_CLOEXEC. */
	if (program_nofile.rlim_cur != RLIM_INFINITY || program_nofile.rlim_max != RLIM_INFINITY)
		setrlimit(RLIMIT_NOFILE, &program_nofile);
	/* Wait until the parent has marked this process's first exec as its own start. */
	if (read(gopipe, &go, 1) != 1)
		_exit(EXIT_PYSB_ERROR);
	/* Its own session (and pty): the caller's terminal is not its terminal. */
	step = STEP_SESSION;
	err = pty_child(pty);
	if (err)
		goto fail;
	step = STEP_IDENTITY;
	if (o->audit) {
		/* Audit denies nothing: the program keeps what it had, and lsm/capable
		 * reports each capability the policy does not grant (--learn adds it). */
		if (o->uid != (uid_t)-1 &&
		    (setgroups(o->n_groups, o->groups) || setresgid(o->gid, o->gid, o->gid) ||
		     setresuid(o->uid, o->uid, o->uid))) {
			err = errno;
			goto fail;
		}
	} else {
		/* No capability but the granted ones, for root as for a sudo user; root's
		 * execve cannot refill the sets (user/compile/caps.c). */
		err = caps_drop_in_child(o->compiled->caps, o->uid, o->gid, o->n_groups, o->groups);
		if (err)
			goto fail;
	}
	/* A change of uid cleared the parent-death signal (commit_creds): set again, and the
	 * parent asked again, since it may have died meanwhile. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(EXIT_PYSB_ERROR);
	/* A new anonymous session keyring, owned by the program's user: the keys of the
	 * caller's session keyring (ssh-agent, kerberos, fscrypt, ...) are not possessed.
	 * No keyring support in the kernel: no keys to reach. */
	step = STEP_KEYRING;
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS) {
		err = errno;
		goto fail;
	}
	/* setuid binaries cannot raise the privileges the sandbox started with. */
	step = STEP_NO_NEW_PRIVS;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		err = errno;
		goto fail;
	}
	if (!caller_ignores_sigpipe)
		sigaction(SIGPIPE, &(struct sigaction){ .sa_handler = SIG_DFL }, NULL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	step = STEP_EXEC;
	execve(o->path ? o->path : o->argv[0], o->argv, o->envp);
	err = errno;
fail:
	msg[0] = (int)step;
	msg[1] = err;
	if (write(errpipe, msg, sizeof(msg)) < 0)
		_exit(EXIT_PYSB_ERROR);
	if (step != STEP_EXEC)
		_exit(EXIT_PYSB_ERROR);
	_exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
}

static pid_t spawn(const struct run_opts *o, struct loader *l, int cgroup_fd,
		   const struct pty_relay *pty, const sigset_t *mask, int *pidfd)
{
	/* Its own IPC namespace (SysV shm, message queues, semaphores, POSIX mqueues of
	 * other processes are unreachable) and UTS namespace (its hostname is its own).
	 * pysb-bpf has CAP_SYS_ADMIN (it loads BPF LSM programs), which both need. */
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP | CLONE_PIDFD | CLONE_NEWIPC | CLONE_NEWUTS,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)cgroup_fd,
	};
	pid_t parent = getpid(), pid;
	int errpipe[2], gopipe[2], msg[2] = { 0, 0 };
	ssize_t n;

	if (pipe2(errpipe, O_CLOEXEC)) {
		pr_err("pipe: %s", strerror(errno));
		return -1;
	}
	if (pipe2(gopipe, O_CLOEXEC)) {
		pr_err("pipe: %s", strerror(errno));
		close(errpipe[0]);
		close(errpipe[1]);
		return -1;
	}
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0) {
		close(errpipe[0]);
		close(gopipe[1]);
		child_exec(o, pty, mask, gopipe[0], errpipe[1], parent);
	}
	close(errpipe[1]);
	close(gopipe[0]);
	stopwatch("spawn: cloned");
	if (pid < 0) {
		pr_err("clone3 into the sandbox cgroup with new IPC and UTS namespaces failed: %s "
		       "(kernel 5.7 or later, and CAP_SYS_ADMIN, needed)",
		       strerror(errno));
		goto out;
	}
	msg[1] = loader_exec_pending(l, pid, true);
	if (msg[1]) {
		pr_err("cannot mark the program's start in the BPF map: %s", strerror(-msg[1]));
		kill(pid, SIGKILL);
	} else if (write(gopipe[1], "g", 1) != 1) {
		pr_err("cannot release the program: %s", strerror(errno));
		kill(pid, SIGKILL);
	}
	stopwatch("spawn: released");
	n = read(errpipe[0], msg, sizeof(msg));
	if (n == sizeof(msg) && msg[0] == STEP_EXEC && msg[1] == EACCES &&
	    program_lacks_execute_bit(o->path ? o->path : o->argv[0]))
		pr_err("cannot execute %s: it has no execute bit; chmod +x it, or run it with its "
		       "interpreter (pysb-bpf run -- python3 %s)",
		       o->path ? o->path : o->argv[0], o->path ? o->path : o->argv[0]);
	else if (n == sizeof(msg) && msg[0] == STEP_EXEC)
		pr_err("cannot execute %s: %s%s", o->path ? o->path : o->argv[0], strerror(msg[1]),
		       msg[1] == EACCES	   ? "; a 'deny' line naming it or its interpreter: the "
					     "policy must grant it (expose-ro= its directory, or keep "
					     "bpf.implicit=true); none: it is not executable for the "
					     "user it runs as"
		       : msg[1] == ENOEXEC ? "; not a binary, and no #! line"
					   : "");
	else if (n == sizeof(msg))
		pr_err("cannot start %s: %s failed: %s", o->path ? o->path : o->argv[0],
		       msg[0] == STEP_IDENTITY	? "setting its identity and capabilities"
		       : msg[0] == STEP_SESSION ? "a new session on its own terminal"
		       : msg[0] == STEP_KEYRING ? "a new session keyring (keyctl)"
						: "PR_SET_NO_NEW_PRIVS",
		       strerror(msg[1]));
	/* Exec done or failed: the mark must not outlive it. */
	loader_exec_pending(l, pid, false);
out:
	close(gopipe[1]);
	close(errpipe[0]);
	return pid;
}

bool sent_by_a_process(const struct signalfd_siginfo *si)
{
	return si->ssi_code == SI_USER || si->ssi_code == SI_QUEUE || si->ssi_code == SI_TKILL;
}

static void forward_signal(pid_t pid, int pidfd, const struct signalfd_siginfo *si)
{
	/* A sent signal goes to the program. The program is in its own session, so one
	 * from pysb-bpf's terminal (^C, ^\, hangup) no longer reaches it: it goes to the
	 * program's process group, as the terminal would have sent it (the pid is our
	 * unreaped child: no other group can have it). */
	if (sent_by_a_process(si))
		syscall(SYS_pidfd_send_signal, pidfd, si->ssi_signo, NULL, 0);
	else
		kill(-pid, (int)si->ssi_signo);
}

/* The end of a batch read from the ring buffer: one write of the lines and records it
 * made (stderr is fully buffered while the program runs), and, at most once a second,
 * "lost" records for events the kernel could not deliver since the last ones. */
void batch_done(struct event_sink *sink, const struct loader *l, bool tick)
{
	const struct run_opts *o = sink->o;
	uint64_t lost[PYSB_LOST_MAX];

	if (tick) {
		sweep(sink, l, false);
		tty_summary(o);
	}
	fflush(stderr);
	if (!o->events || !o->events->out)
		return;
	if (tick && !loader_lost(l, lost))
		events_json_lost(o->events, lost);
	events_json_sync(o->events);
}

/*
 * Is pysb-bpf's own process group orphaned (no member with a parent in another group of
 * its session: no job-control shell left to continue it)? The kernel discards a SIGTSTP
 * there; so does pysb-bpf (found by a review: a stray TSTP to a detached run stopped it
 * and its program for good). The members looked at: pysb-bpf, and its parent when that
 * is in the same group (sudo).
 */
static bool own_group_orphaned(void)
{
	pid_t pgrp = getpgrp(), sid = getsid(0), p = getppid();

	for (int i = 0; i < 2 && p > 1; i++) {
		char path[64];
		FILE *f;
		int pp = 0;

		if (getpgid(p) != pgrp)
			return getsid(p) != sid;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)p);
		f = fopen(path, "re");
		if (!f || fscanf(f, "%*d %*s %*c %d", &pp) != 1)
			pp = 0;
		if (f)
			fclose(f);
		p = pp;
	}
	return true;
}

/*
 * SIGTSTP to pysb-bpf (`kill -TSTP`, ^Z in a shell when no terminal is relayed): the
 * program is suspended with it, as sudo and script(1) do (found by a user: pysb-bpf
 * stopped, its program ran on). A program that catches SIGTSTP gets it; one that ignores
 * it is left alone (as it would be bare); another is stopped with SIGSTOP (its group is
 * orphaned: the kernel discards a SIGTSTP there). The deadline until which a stop of the
 * program is the answer (0: none): pysb-bpf then stops too.
 */
static time_t suspend_program(pid_t pid, int pidfd)
{
	struct timespec now;
	enum tstp_disposition d = proc_sigtstp(pid);

	if (own_group_orphaned() || d == TSTP_IGNORED)
		return 0;
	if (d == TSTP_CAUGHT)
		syscall(SYS_pidfd_send_signal, pidfd, SIGTSTP, NULL, 0);
	else if (kill(-pid, SIGSTOP))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec + 2; /* a handler that stops later is not answering this one */
}

/* The program stopped: ^Z on its pty (pty_stopped), or a stop asked of pysb-bpf before
 * *until (cleared: one stop answers one ask), which then stops itself and, continued
 * (`fg`, `kill -CONT`), continues the program. */
static void stopped(pid_t pid, struct pty_relay *pty, time_t *until)
{
	struct timespec now;
	time_t asked = *until;

	*until = 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (pty_stopped(pty) || !asked || now.tv_sec > asked)
		return;
	kill(getpid(), SIGSTOP);
	kill(-pid, SIGCONT);
}

static int wait_child(struct event_sink *sink, const struct loader *l, pid_t pid, int pidfd,
		      int sigfd, struct event_ring *ring, struct pty_relay *pty)
{
	const struct run_opts *o = sink->o;
	struct pollfd fds[5] = {
		{ .fd = bench_events() ? -1 : ring->fd, .events = POLLIN },
		{ .fd = pidfd, .events = POLLIN },
		{ .fd = sigfd, .events = POLLIN },
		{ .events = POLLIN }, /* the caller's terminal, relayed to the pty */
		{ .events = POLLIN }, /* the pty, relayed to the caller's terminal */
	};
	struct timespec last = { 0 }, now;
	time_t stop_until = 0;
	int status;

	for (;;) {
		/* Wakes at least once a second: an aggregated JSON event waits at most one
		 * window for identical ones, and lost events are said while they happen. */
		int relay[2], n;
		bool tick;

		pty_poll_fds(pty, relay);
		fds[3].fd = relay[0];
		fds[4].fd = relay[1];
		n = poll(fds, 5, 1000);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			pr_err("poll: %s", strerror(errno));
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		tick = now.tv_sec != last.tv_sec;
		if (tick)
			last = now;
		if (n == 0 && o->events)
			events_json_flush(o->events);
		if (n > 0 && fds[0].revents) {
			pty_drain_out(pty);
			ring_consume(ring);
			fds[0].fd = ring->fd;
		}
		batch_done(sink, l, tick);
		if (n > 0 && (fds[3].revents || fds[4].revents))
			pty_relay(pty, fds[3].revents, fds[4].revents);
		if (n > 0 && (fds[2].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGWINCH)
				pty_winch(pty);
			else if (si.ssi_signo == SIGTSTP)
				stop_until = suspend_program(pid, pidfd);
			else if (si.ssi_signo == SIGCHLD && si.ssi_code == CLD_STOPPED &&
				 (pid_t)si.ssi_pid == pid)
				stopped(pid, pty, &stop_until);
			else if (si.ssi_signo != SIGCHLD)
				forward_signal(pid, pidfd, &si);
		}
		if (n > 0 && fds[1].revents)
			break;
	}
	stopwatch("exit seen");
	if (waitpid(pid, &status, 0) < 0) {
		pr_err("waitpid: %s", strerror(errno));
		return EXIT_PYSB_ERROR;
	}
	if (bench_events())
		bench_drain(sink, ring);
	pty_drain_out(pty);
	ring_drain(ring);
	fflush(stderr);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_PYSB_ERROR;
}

/* Lost events are said on stderr (every reason) and in the JSON stream, never dropped. */
void report_lost(const struct run_opts *o, const struct loader *l, struct event_sink *sink)
{
	uint64_t lost[PYSB_LOST_MAX];
	unsigned long delivered;
	bool known;

	sweep(sink, l, true);
	delivered = sink->delivered;
	known = !loader_lost(l, lost);
	if (known)
		lost[PYSB_LOST_RINGBUF_FULL] += sink->unseen;
	events_dedup_free(&sink->dedup);
	if (o->events)
		events_json_flush(o->events); /* the held event: to learning too */
	tty_summary(o);
	if (!known)
		pr_warn("cannot read the lost-event counters: events may be missing");
	for (int i = 0; known && i < PYSB_LOST_MAX; i++)
		if (lost[i])
			pr_warn("%llu events lost (%s; %lu delivered); %s",
				(unsigned long long)lost[i], events_lost_name(i), delivered,
				o->audit ? "what they reported was allowed (audit)"
					 : "denials still applied");
	if (o->events && o->events->out)
		events_json_finish(o->events, known ? lost : NULL);
	for (int i = 0; o->learn && known && i < PYSB_LOST_MAX; i++)
		o->learn->lost += lost[i];
	pr_info("%lu denial events", delivered);
}

int sandbox_run(const struct run_opts *o)
{
	static char errbuf[1 << 16];
	struct sandbox_cgroup cg = { .fd = -1 };
	struct pysb_sandbox_cfg cfg = { 0 };
	struct loader l = { 0 };
	struct event_sink sink = { .o = o };
	struct event_ring ring = { .fd = -1, .sink = &sink };
	struct pty_relay pty;
	struct after_start after;
	sigset_t mask, old;
	int ret = EXIT_PYSB_ERROR, pidfd = -1, sigfd = -1;
	pid_t pid;

	if (sandbox_prep_finish(o->prep, o, &cg, &l, &cfg))
		return ret;
	sink_init(o);
	sandbox_dedup_clear(&l, cfg.id);
	ring.fd = loader_events_fd(&l);

	/* Signals become events of the loop; the child gets the old mask back. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGWINCH);
	sigaddset(&mask, SIGTSTP);
	sigprocmask(SIG_BLOCK, &mask, &old);
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sigfd < 0) {
		pr_err("signalfd: %s", strerror(errno));
		goto out_signals;
	}
	if (pty_open(&pty, o->uid, o->gid))
		goto out_signals;
	stopwatch("ring + signals + pty");
	pid = spawn(o, &l, cg.fd, &pty, &old, &pidfd);
	if (pid < 0) {
		pty_close(&pty);
		goto out_signals;
	}
	stopwatch("spawned (exec done)");
	pty_start(&pty, pid);
	after = (struct after_start){ .o = o, .cg = &cg, .cfg = &cfg, .l = &l };
	sandbox_after_start(&after);
	/* One write per batch of denial lines, not one per piece of a line. */
	fflush(stderr);
	setvbuf(stderr, errbuf, _IOFBF, sizeof(errbuf));
	ret = wait_child(&sink, &l, pid, pidfd, sigfd, &ring, &pty);
	sandbox_after_start_join(&after);
	pty_close(&pty);
	fflush(stderr);
	setvbuf(stderr, NULL, _IONBF, 0);
	stopwatch("program ended");
	report_lost(o, &l, &sink);
out_signals:
	if (pidfd >= 0)
		close(pidfd);
	if (sigfd >= 0)
		close(sigfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* Kill and remove the cgroup while it is still a sandbox: nothing left in it ever
	 * runs unconfined. Only then are its rules removed from the shared maps. */
	if (sandbox_cgroup_destroy(&cg) == 0 && cfg.id) {
		stopwatch("cgroup destroyed");
		sandbox_free_maps(&l, o->compiled, &rule_pins, cg.id, cfg.id);
		sandbox_record_remove(cg.id);
	}
	stopwatch("sandbox freed");
	ring_buffer__free(ring.rb);
	stopwatch("ring closed");
	loader_stop(&l);
	stopwatch("teardown");
	return ret;
}
