/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "utf8.h"

int log_level = LOG_NORMAL;

void log_init_from_env(void)
{
	const char *v = getenv("PYSB_BPF_LOG");

	if (!v || !*v)
		return;
	if (!strcmp(v, "quiet"))
		log_level = LOG_QUIET;
	else if (!strcmp(v, "info") || !strcmp(v, "1"))
		log_level = LOG_INFO;
	else if (!strcmp(v, "debug") || !strcmp(v, "2"))
		log_level = LOG_DEBUG;
	else if (!strcmp(v, "0") || !strcmp(v, "normal"))
		log_level = LOG_NORMAL;
	else
		fprintf(stderr,
			"pysb-bpf: warning: PYSB_BPF_LOG=%s not understood "
			"(use quiet, normal, info or debug); keeping the default\n",
			v);
}

/*
 * Is stderr the journal? systemd says so in JOURNAL_STREAM ("DEVICE:INODE" of the stream
 * it gave the service); a descriptor inherited further (a pipe to another program) does
 * not match it. journald then reads a "<N>" at the start of a line as the line's syslog
 * priority (SyslogLevelPrefix=, on by default): `journalctl -p err` finds our errors.
 */
int log_to_journal(void)
{
	static int cached = -1;
	unsigned long long dev, ino;
	const char *v;
	struct stat st;

	if (cached >= 0)
		return cached;
	v = getenv("JOURNAL_STREAM");
	cached = v && sscanf(v, "%llu:%llu", &dev, &ino) == 2 && !fstat(2, &st) &&
		 (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
	return cached;
}

/*
 * log.h. msg with each control character but a tab (C1 ones too), and each byte that is
 * not UTF-8, written \xNN (malloc'd; NULL: out of memory). Messages quote names and text a
 * sandboxed program could choose (a shim's tool in a script it rewrote, file names,
 * cgroups'): an escape sequence there ran the user's terminal, and a newline forged a
 * line, in the journal one with its own priority (found by an adversary, round 29).
 */
char *log_printable(const char *msg)
{
	size_t len = strlen(msg);
	char *out = malloc(4 * len + 1), *o = out;

	if (!out)
		return NULL;
	for (const char *s = msg, *end = msg + len; *s;) {
		size_t n = *s == '\t' ? 1 : utf8_printable(s, (size_t)(end - s));

		if (!n) {
			o += sprintf(o, "\\x%02x", (unsigned char)*s);
			s++;
			continue;
		}
		memcpy(o, s, n);
		o += n;
		s += n;
	}
	*o = '\0';
	return out;
}

/*
 * A line is written whole, by one fprintf on the unbuffered stderr (glibc then makes it
 * one write): run's set-up thread logs while the main thread does, and the program shares
 * the descriptor; a line split between writes came out as "pysb-bpf: pysb-bpf: ...".
 */
static void vlog(int prio, const char *tag, const char *fmt, va_list ap)
{
	char jprio[8] = "";
	char *msg;

	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	if (msg) {
		char *safe = log_printable(msg);

		free(msg);
		msg = safe;
	}
	if (log_to_journal())
		snprintf(jprio, sizeof(jprio), "<%d>", prio);
	fprintf(stderr, "%spysb-bpf: %s%s\n", jprio, tag, msg ? msg : fmt);
	free(msg);
}

/* prio: syslog's (3 err, 4 warning, 6 info, 7 debug) */
#define DEFINE_LOG(name, min, prio, tag)  \
	void name(const char *fmt, ...)   \
	{                                 \
		va_list ap;               \
		if (log_level < (min))    \
			return;           \
		va_start(ap, fmt);        \
		vlog(prio, tag, fmt, ap); \
		va_end(ap);               \
	}

DEFINE_LOG(pr_err, LOG_QUIET, 3, "error: ")
DEFINE_LOG(pr_warn, LOG_NORMAL, 4, "warning: ")
DEFINE_LOG(pr_info, LOG_INFO, 6, "")
DEFINE_LOG(pr_debug, LOG_DEBUG, 7, "debug: ")
