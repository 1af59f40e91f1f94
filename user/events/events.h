/* SPDX-License-Identifier: MIT */
/* Denial events from the BPF ring buffer, rendered for people (stderr) . */
#ifndef PYSB_EVENTS_H
#define PYSB_EVENTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pysb_abi.h"

#include "abi_names.h" /* access_str, kind_str, op_str, net_op_str, events_lost_name */

/* The event's path (NUL-terminated), or NULL when it has none. */
const char *event_path(const struct pysb_event *e);

/*
 * A path that goes from its file system's root (PYSB_EV_PATH_FSROOT: a hook without the
 * mount) is given the mount point in front, from this process's mount table, so that
 * it names the file as the program did and learning can write a rule for it; the flag
 * is cleared. Left as it is when no mount of that file system has a root above it.
 */
void events_resolve_path(struct pysb_event *e);

/* One readable line: decision, kind, operation, access, path, pid, tid, comm. `policy`:
 * the compiled policy of the event's sandbox, so a network denial names its net= rule
 * (NULL: it does not). */
struct compiled;
void event_print_line(FILE *f, const struct pysb_event *e, const struct compiled *policy);
/* The same; a record standing for more than one occurrence ends " (N times)", and with
 * `again` (the count of a key whose line was printed already) " (N more of the same)". */
void event_print_line_again(FILE *f, const struct pysb_event *e, const struct compiled *policy,
			    bool again);

/* The proxies the program's environment names (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, either
 * case), resolved now: a connect to one that no net= rule allows says so on its line
 * (user/events/events_proxy.c). Before the program starts; again replaces them. */
void events_set_proxies(char *const *envp);

/* ---- the JSON event stream, --events (user/events/events_json.c, docs/events.md) ---- */

/* The executable of (pid, start time, exec generation), read once from /proc/PID/exe. */
struct exe_cache;

struct events_json {
	FILE *out;	  /* NULL: render only (learning without --events) */
	const char *name; /* of out, for errors */
	const char *mode; /* "enforce", "audit", "learn" */
	const struct compiled *compiled;
	int64_t real_minus_mono_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC, measured at init */
	/* Set by the caller before each events_json_event (the daemon): the record's mode
	 * (NULL: mode), and "binding"/"target" fields (NULL: none). */
	const char *ev_mode, *ev_binding, *ev_target;
	/* Every record is written (one write(2) of whole lines) before events_json_event
	 * returns, and nothing is held for aggregation: the daemon, which acknowledges a
	 * ring-buffer record when its callback returns. */
	bool direct;
	/* When set, every line (without its newline) goes to it instead of `out`: 0, or -1
	 * with errno (the daemon's journal, daemon_journal.c). */
	int (*line_sink)(void *ctx, const char *line, size_t len);
	void *sink_ctx;
	/* Called with each event record before it is written (learning); may be NULL. */
	int (*on_record)(void *ctx, const json_t *rec);
	void *record_ctx;
	struct pysb_event *pending_ev; /* the last event, held while identical ones follow */
	bool has_pending;
	const char *pending_mode, *pending_binding, *pending_target;
	uint64_t pending_count, pending_first_ns, pending_last_ns;
	struct exe_cache *exe;
	char *line; /* the record being formatted */
	size_t line_len, line_cap;
	unsigned long events, records;	   /* received (repeats counted); JSON lines written */
	unsigned long synced;		   /* records known to have reached out (last sync) */
	uint64_t lost_said[PYSB_LOST_MAX]; /* lost events already in "lost" records */
	bool failed;
	int err;
};

int events_json_init(struct events_json *w, FILE *out, const char *name, const char *mode,
		     const struct compiled *c);
/* The event as a JSON object (new reference), "record": "event". */
json_t *events_json_render(const struct events_json *w, const struct pysb_event *e);
/*
 * The event's JSON line (no newline) into w->line, written without jansson: the same
 * bytes as events_json_render and a compact dump (count and last_time when count > 1).
 * Returns -1 when a field is not UTF-8 (the caller renders it with jansson instead).
 */
int events_json_format(struct events_json *w, const struct pysb_event *e, uint64_t count,
		       uint64_t first_ns, uint64_t last_ns);
/* An event received: counted into the held identical event, or the held one is written
 * and this one held (written at once when w->direct). */
void events_json_event(struct events_json *w, const struct pysb_event *e);
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
/* Frees what init allocated (events_json_finish does it too). */
void events_json_free(struct events_json *w);
/* RFC 3339 UTC with nanoseconds of a CLOCK_MONOTONIC time. */
void events_json_time(const struct events_json *w, uint64_t mono_ns, char *buf, size_t len);

/* ---- the terminal: a bounded number of event lines per second (user/events.c) ---- */

#define EVENTS_TTY_BURST 100 /* lines printed at once before the rate applies */
#define EVENTS_TTY_RATE	 10  /* lines per second after that */

struct events_tty {
	double tokens;		    /* lines that may be printed now */
	uint64_t last_ns;	    /* of the last refill */
	unsigned long hidden;	    /* events not shown since the last summary line */
	unsigned long hidden_total; /* in the whole run */
	bool started;
};

/* May the line of an event received at `now_ns` be printed? Counts it as hidden if not. */
bool events_tty_allow(struct events_tty *t, uint64_t now_ns, uint64_t repeat);
/* "N more denials not shown; ..." on f when some were hidden since the last call
 * (events_file: where they all are, NULL: none). Returns whether it printed. */
bool events_tty_summary(struct events_tty *t, FILE *f, const char *events_file);

#endif /* PYSB_EVENTS_H */
