/* SPDX-License-Identifier: MIT */
/* Denial events from the BPF ring buffer, rendered for people (stderr) . */
#ifndef PYSB_EVENTS_H
#define PYSB_EVENTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pysb_abi.h"

/* "read", "write", "read,exec", ... into buf. */
const char *access_str(unsigned access, char *buf, size_t len);
const char *kind_str(unsigned kind);
const char *op_str(unsigned op);
/* Operations of kind NET and UNIX events (enum pysb_net_op). */
const char *net_op_str(unsigned op);

/* The event's path (NUL-terminated), or NULL when it has none. */
const char *event_path(const struct pysb_event *e);

/*
 * A path that goes from its file system's root (PYSB_EV_PATH_FSROOT: a hook without the
 * mount) is given the mount point in front, from this process's mount table, so that
 * it names the file as the program did and learning can write a rule for it; the flag
 * is cleared. Left as it is when no mount of that file system has a root above it.
 */
void events_resolve_path(struct pysb_event *e);

/* One readable line: decision, kind, operation, access, path, pid, tid, comm. */
void event_print_line(FILE *f, const struct pysb_event *e);

/* The compiled policy being enforced, so network denials can name their net= rule. */
struct compiled;
void events_set_compiled(const struct compiled *c);

/* ---- the JSON event stream, --events (user/events/events_json.c, docs/events.md) ---- */

struct events_json {
	FILE *out;	  /* NULL: render only (learning without --events) */
	const char *name; /* of out, for errors */
	const char *mode; /* "enforce", "audit", "learn" */
	const struct compiled *compiled;
	int64_t real_minus_mono_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC, measured at init */
	json_t *pending;	    /* the last event, held while identical ones follow */
	struct pysb_event *pending_ev;
	uint64_t pending_count, pending_last_ns;
	unsigned long events, records; /* received; JSON lines written */
	unsigned long synced;	       /* records known to have reached out (last sync) */
	uint64_t lost_said[PYSB_LOST_MAX]; /* lost events already in "lost" records */
	bool failed;
	int err;
};

int events_json_init(struct events_json *w, FILE *out, const char *name, const char *mode,
		     const struct compiled *c);
/* The event as a JSON object (new reference), "record": "event". */
json_t *events_json_render(const struct events_json *w, const struct pysb_event *e);
/* Writes o, rendered from e, or counts it into the held identical event. */
void events_json_write(struct events_json *w, const struct pysb_event *e, json_t *o);
/* Is an aggregated event waiting for identical ones (written by events_json_flush)? */
bool events_json_has_pending(const struct events_json *w);
/* A "notice" record: something the user must know about this run (os-sandbox=none). */
void events_json_notice(struct events_json *w, const char *msg);
/* Writes one record as it is (the daemon's "lost" records). */
void events_json_put(struct events_json *w, json_t *o);
/* Writes the held event, if any (at the end of the aggregation window). */
void events_json_flush(struct events_json *w);
/* Pushes the written records out (after each batch read from the ring buffer: one
 * write per batch, not per record, so the reader keeps up with a flood). */
void events_json_sync(struct events_json *w);
/* One "lost" record per reason whose counter grew since the last ones: the counts of
 * every "lost" record of a stream add up to the summary's. */
void events_json_lost(struct events_json *w, const uint64_t *lost);
/* The last records: one "lost" record per reason that lost events (lost may be NULL:
 * unknown), then the "summary". Returns -1 when writing failed (said on stderr). */
int events_json_finish(struct events_json *w, const uint64_t *lost);
/* RFC 3339 UTC with nanoseconds of a CLOCK_MONOTONIC time. */
void events_json_time(const struct events_json *w, uint64_t mono_ns, char *buf, size_t len);
/* "ringbuf-full", "no-reader", "preempted" */
const char *events_lost_name(unsigned reason);

#endif /* PYSB_EVENTS_H */
