/* SPDX-License-Identifier: MIT */
/* Private to the files of user/events/ (events.c, events_json.c, events_line.c,
 * events_proxy.c): what they share. */
#ifndef PYSB_EVENTS_INT_H
#define PYSB_EVENTS_INT_H

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "caps.h"
#include "compile.h"
#include "events.h"
#include "json_bytes.h"
#include "utf8.h"
#include "log.h"

#define EVENTS_AGGREGATE_NS 1000000000ull /* the aggregation window: 1 s */

/* events_json.c */
const char *exe_of(struct exe_cache *c, const struct pysb_event *e);
void events_json_time(const struct events_json *w, uint64_t mono_ns, char *buf, size_t len);

/* events_line.c */
void line_put(struct events_json *w, const char *s, size_t n);
void line_puts(struct events_json *w, const char *s);
int events_json_format(struct events_json *w, const struct pysb_event *e, uint64_t count,
		       uint64_t first_ns, uint64_t last_ns);

/* events_proxy.c */
void events_print_proxy_hint(FILE *f, const struct pysb_event *e);

#endif
