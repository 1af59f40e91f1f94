/* SPDX-License-Identifier: MIT */
/* The daemon's counters, served in the Prometheus text format (docs/fleet.md). */
#ifndef PYSB_DAEMON_METRICS_H
#define PYSB_DAEMON_METRICS_H

#include <pthread.h>
#include <time.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pysb_abi.h"

#define METRICS_KINDS 7 /* PYSB_KIND_* up to CAP */

/* pysb_errors_total's reasons */
enum metrics_error {
	METRICS_ERR_CONFINE, /* a cgroup could not be confined */
	METRICS_ERR_SWITCH,  /* a reload could not be put on every cgroup (the old one stays) */
	METRICS_ERRORS,
};

struct binding_metrics {
	void *owner; /* the daemon, for the event callback */
	char name[256];
	uint64_t events[2][METRICS_KINDS]; /* [0 deny, 1 audit][kind] */
	uint64_t lost[PYSB_LOST_MAX];
	size_t targets;
	size_t failed; /* cgroups it names that the last scan could not confine */
	bool stale;    /* its file's latest version was rejected: the previous one rules */
	struct binding_metrics *next;
};

struct daemon_metrics {
	pthread_mutex_t mu; /* held by the daemon's loop while it works, by a scrape */
	struct MHD_Daemon *mhd;
	uint64_t reloads_ok, reloads_failed;
	uint64_t errors[METRICS_ERRORS]; /* by enum metrics_error */
	time_t started;			 /* metrics_init: the configuration's first load */
	time_t last_reload_ok;		 /* 0: none since start */
	int last_reload_failed;		 /* the last reload rejected a binding */
	struct binding_metrics *head;
	/* The bindings rejected at the last read (the daemon's list, names of 256 bytes):
	 * those never in force show as not confined. */
	const char (*rejected)[256];
	size_t n_rejected;
};

/* Starts serving GET /metrics on addr ("127.0.0.1:9464", "[::1]:9464"), or nothing when
 * addr is NULL. Returns 0, or -1 after saying why. */
int metrics_init(struct daemon_metrics *m, const char *addr);
void metrics_stop(struct daemon_metrics *m);
void metrics_lock(struct daemon_metrics *m);
void metrics_unlock(struct daemon_metrics *m);

/* With the lock held: */
void metrics_binding_added(struct daemon_metrics *m, struct binding_metrics *b, const char *name);
void metrics_binding_removed(struct daemon_metrics *m, struct binding_metrics *b);
/* n denials of one record (its repeat count) */
void metrics_count_event(struct binding_metrics *b, int audit, unsigned kind, uint64_t n);
void metrics_count_lost(struct binding_metrics *b, int reason, uint64_t n);
void metrics_count_reload(struct daemon_metrics *m, int ok);
void metrics_count_error(struct daemon_metrics *m, enum metrics_error why);
/* The text exposition (malloc'd). */
char *metrics_render(struct daemon_metrics *m);

#endif /* PYSB_DAEMON_METRICS_H */
