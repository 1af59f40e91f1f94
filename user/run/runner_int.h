/* SPDX-License-Identifier: MIT */
/* Private to the files of `runner` (runner.c, attach.c): what they share. */
#ifndef PYSB_RUNNER_INT_H
#define PYSB_RUNNER_INT_H

#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "caps.h"
#include "cgroup.h"
#include "events.h"
#include "events_dedup.h"
#include "learn.h"
#include "loader.h"
#include "log.h"
#include "stopwatch.h"
#include "probe.h"
#include "pty.h"
#include "runner.h"
#include "status.h"

struct event_sink {
	const struct run_opts *o;
	unsigned long delivered; /* denials, repeats counted */
	struct events_dedup dedup;
	uint64_t unseen; /* counted by the kernel, no record of them arrived: lost */
};

/* runner.c */
void sink_init(const struct run_opts *o);
int on_event(void *ctx, void *data, size_t len);
/* on_event, or make bench's counting consumer (PYSB_BENCH_EVENTS=bare). */
ring_buffer_sample_fn event_consumer(void);
bool sent_by_a_process(const struct signalfd_siginfo *si);
void batch_done(struct event_sink *sink, const struct loader *l, bool tick);
void report_lost(const struct run_opts *o, const struct loader *l, struct event_sink *sink);
extern struct file_pins rule_pins;   /* the rule paths a run holds open */
extern struct rlimit program_nofile; /* the program's RLIMIT_NOFILE (pysb-bpf may raise its own) */

/* setup.c */
void sandbox_gc(struct loader *l);
/* The keys of event_dedup a run before under id `id` left (runner.c). */
void sandbox_dedup_clear(struct loader *l, uint32_t id);
void write_record(const struct run_opts *o, const struct sandbox_cgroup *cg,
		  const struct pysb_sandbox_cfg *cfg, enum sandbox_owner owner, pid_t target);
int sandbox_setup(const struct run_opts *o, struct sandbox_cgroup *cg, struct loader *l,
		  struct pysb_sandbox_cfg *cfg, enum sandbox_owner owner, pid_t target);
/* sandbox_setup, from what `sp` (sandbox_prep_start, or NULL) did: sp is freed. */
int sandbox_prep_finish(struct sandbox_prep *sp, const struct run_opts *o,
			struct sandbox_cgroup *cg, struct loader *l, struct pysb_sandbox_cfg *cfg);
/* A run's status record and the gc, beside its program once it has started. */
struct after_start {
	pthread_t thread;
	bool started;
	bool ended; /* the program is over: its status record is not worth writing */
	const struct run_opts *o;
	const struct sandbox_cgroup *cg;
	const struct pysb_sandbox_cfg *cfg;
	struct loader *l;
};
void sandbox_after_start(struct after_start *a);
void sandbox_after_start_join(struct after_start *a);

/* attach.c */
int sandbox_attach(const struct run_opts *o, pid_t target);

#endif
