/* SPDX-License-Identifier: MIT */
/* Private to the files of `daemon` (daemon.c, bindings.c, watch.c): what they share. */
#ifndef PYSB_DAEMON_INT_H
#define PYSB_DAEMON_INT_H

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <linux/membarrier.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "compile.h"
#include "daemon.h"
#include "daemon_metrics.h"
#include "events.h"
#include "events_dedup.h"
#include "loader.h"
#include "log.h"
#include "policy.h"
#include "probe.h"
#include "pysb.skel.h"
#include "status.h"

/* One daemon per machine (flock, held while it runs): ids_gc frees what no cgroup uses,
 * which only holds while no other daemon is between an allocation and its switch. */
#define PYSB_DAEMON_LOCK "/run/pysb-bpf/daemon.lock"

struct target {
	char path[PATH_MAX]; /* the cgroup directory */
	uint64_t cgid;
	uint32_t id; /* the sandbox id its entry names now */
	int ringbuf_fd;
	uint64_t lost_base[PYSB_LOST_MAX]; /* lost under ids since replaced */
	uint64_t lost_said[PYSB_LOST_MAX];
	bool seen; /* found by the last scan */
	struct binding *b;
};

struct binding {
	struct binding_conf conf;
	uint64_t fingerprint; /* of conf and every policy file read: unchanged = no switch */
	struct compiled c;
	struct file_pins pins; /* c's rule inodes, held open while c is in force */
	struct target **t;
	size_t n_t;
	bool seen;	   /* its file was in the last read of the directory */
	bool no_answer;	   /* unit: systemd did not answer the last scan's query */
	bool query_failed; /* unit: the query binding_paths just made got no answer */
	bool missing;	   /* cgroup: it did not exist at the last scan (said once) */
	/* Confinement at creation (bpf/watch.bpf.c): the policy written under an id of its
	 * own, which a new cgroup matching the binding gets until the scan confines it; its
	 * events are read as those of `tmpl` (path: the pattern, or the unit's cgroup). */
	struct target *tmpl;
	uint64_t tmpl_fp;	  /* the fingerprint its rules were written from */
	char unit_path[PATH_MAX]; /* unit: where it runs or will run ("" unknown) */
	struct binding_metrics m;
};

struct retired {
	struct target *t;
	uint32_t id;
};

struct daemon {
	const struct daemon_opts *o;
	struct retired *retired; /* ids switched away from, removed after one settle() */
	size_t n_retired, cap_retired;
	char cgroot[PATH_MAX];
	struct loader l;
	struct binding **b;
	size_t n_b;
	struct ring_buffer *rb;
	bool rb_stale;
	struct events_json ev;
	struct events_dedup dedup; /* what each record of a repeated event tells */
	FILE *out;
	/* --events FILE: its directory, opened once through no link (-1: none, or one of
	 * the caller's descriptors), and FILE's name in it; every open and rename of the
	 * file and its rotations is made below that descriptor */
	int events_dir;
	const char *events_name;
	char events_dir_path[PATH_MAX]; /* canonical, for the bindings' check */
	struct daemon_metrics m;
	/* Bindings whose file is there but was rejected at the last read: the cgroups their
	 * records name keep their last rules (release_orphans). */
	char (*rejected)[256];
	size_t n_rejected;
	bool rejected_lost; /* one could not be remembered (no memory): every one is kept */
	/* Unclaimed cgroups release_orphans kept at its last pass (each said once). */
	uint64_t *kept;
	size_t n_kept;
	/* What cgroup_watch holds (bpf/watch.bpf.c); read from the map at the first sync,
	 * so that the ids a previous daemon left there are retired. */
	struct pysb_watch *watch;
	uint32_t pending_id; /* the fail-closed pending sandbox (no rules); 0: none */
	int pending_rb;
	/* Entries put by the kernel that no target claimed at the last pass: released at
	 * the next one if still unclaimed (a cgroup created during a scan is claimed by the
	 * next scan, never released). */
	uint64_t *kunclaimed;
	size_t n_kunclaimed;
	/* Cgroups held by the kernel until their first execve (PYSB_SB_HOLD), and since when
	 * the scan sees them so: one still held a scan period later is armed by the scan
	 * (a workload that never executes anything is confined as before). */
	struct held {
		uint64_t cgid;
		int64_t since;
	} * held;
	size_t n_held;
	struct held *held_next;
	size_t n_held_next;
	struct ring_buffer *born; /* cgroup_born: cgroups the kernel just confined */
	bool born_seen;
	/* --events journal (daemon_journal.c): the record being written */
	struct journal_record {
		const struct pysb_event *e; /* NULL: a notice, a "lost" record */
		const char *binding, *target;
		const struct compiled *policy; /* the binding's, for the net= rule */
	} jrec;
	/* systemd (daemon_notify.c): the last STATUS= sent, the watchdog's keep-alive */
	char notify_status[128];
	int64_t wd_period_ms, wd_next; /* 0: no watchdog */
	/* Tests only: PYSB_TEST_RELOAD_PAUSE_MS, a pause in each reload's switch after the new
	 * id is allocated and filled (a SIGKILL there leaves it allocated: ids_gc). */
	bool reloading;
	long test_pause_ms;
};

/* daemon.c */
int64_t now_ms(void);
void rb_rebuild(struct daemon *d);
void reload(struct daemon *d, const char *why, bool force);

/* daemon_journal.c */
int journal_sink(void *ctx, const char *line, size_t len);

/* daemon_notify.c */
void notify_ready(struct daemon *d);
void notify_status(struct daemon *d);
void notify_reloading(void);
void notify_reloaded(struct daemon *d);
void notify_stopping(void);
int64_t notify_watchdog(struct daemon *d, int64_t now);

/* bindings.c */
void settle(void);
void retire_flush(struct daemon *d);
struct target *target_add(struct daemon *d, struct binding *b, const char *path);
void target_release(struct daemon *d, struct target *t, const char *why);
void target_free(struct target *t);
uint64_t fingerprint(const struct binding_conf *conf, const struct policy *p);
struct binding *binding_find(struct daemon *d, const char *name);
bool rejected_has(const struct daemon *d, const char *name);
int read_config(struct daemon *d, bool apply, bool force);
bool cgroup_gone(const struct daemon *d, uint64_t cgid, const char *path);
size_t binding_paths(struct binding *b, const char *cgroot, char ***out);

/* watch.c */
void watch_sync(struct daemon *d);
void scan(struct daemon *d);
void release_orphans(struct daemon *d);

#endif
