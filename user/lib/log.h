/* SPDX-License-Identifier: MIT */
/* One error style for the whole tool: "pysb-bpf: error: what failed: why; what to do". */
#ifndef PYSB_LOG_H
#define PYSB_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_QUIET = -1,
	LOG_NORMAL = 0, /* errors, warnings, denials */
	LOG_INFO = 1,	/* -v: summary of what was set up */
	LOG_DEBUG = 2,	/* -vv: every implicit path, map entry, hook, event */
};

extern int log_level;

/* Reads PYSB_BPF_LOG (quiet|info|debug or 0..2) so programs that start pysb-bpf can set it. */
void log_init_from_env(void);

/* 1 when stderr is the stream systemd gave this service to the journal (JOURNAL_STREAM):
 * each message then starts with its syslog priority, "<3>" for an error. */
int log_to_journal(void);

/* s with control characters but a tab, C1 controls and bytes that are not UTF-8 written
 * \xNN: text a program could choose, for the user's terminal (malloc'd; NULL: out of
 * memory). Every pr_* message goes through it. */
char *log_printable(const char *s);

void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* PYSB_LOG_H */
