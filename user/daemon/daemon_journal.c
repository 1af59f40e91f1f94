/* SPDX-License-Identifier: MIT */
/*
 * `daemon --events journal`: each record is a journal entry of its own, with fields a
 * query can select (journalctl -u pysb-bpf PYSB_BINDING=web PYSB_DECISION=deny), never
 * mixed with the daemon's messages on one stream to parse. The JSON line of
 * docs/events.md rides along whole in PYSB_JSON; MESSAGE is the line `run` prints.
 */
#include <stdio.h>
#include <errno.h>
#include <string.h>

#include "abi_names.h"
#include "daemon_int.h"
/* After log.h: syslog.h, which sd-journal.h includes, defines LOG_INFO as a macro. */
#include "systemd_lib.h"

/* The human line of event e (without "pysb-bpf: " and the newline), into buf. */
static const char *message_of(const struct pysb_event *e, const struct compiled *policy, char *buf,
			      size_t len)
{
	FILE *f = fmemopen(buf, len, "w");
	size_t n;

	if (!f)
		return "event";
	event_print_line(f, e, policy);
	fclose(f);
	buf[len - 1] = '\0';
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return strncmp(buf, "pysb-bpf: ", 10) ? buf : buf + 10;
}

/* events_json's line sink: 0, or -1 (errno set) when the journal took nothing. */
int journal_sink(void *ctx, const char *line, size_t len)
{
	const struct daemon *d = ctx;
	const struct journal_record *r = &d->jrec;
	const struct pysb_event *e = r->e;
	const struct systemd_lib *sd = systemd_lib("--events journal writes nothing");
	char msg[PYSB_PATH_LEN + 512];
	int err;

	if (!sd) {
		errno = ENOSYS;
		return -1;
	}
	if (!e) /* a notice, a "lost" record: what it says is its JSON */
		err = sd->journal_send("MESSAGE=%.*s", (int)len, line, "PRIORITY=5",
				       "SYSLOG_IDENTIFIER=pysb-bpf", "PYSB_RECORD=notice",
				       "PYSB_JSON=%.*s", (int)len, line, NULL);
	else
		err = sd->journal_send("MESSAGE=%s", message_of(e, r->policy, msg, sizeof(msg)),
				       /* a denial is a warning; an audit record, a notice */
				       "PRIORITY=%d", e->decision == PYSB_AUDIT ? 5 : 4,
				       "SYSLOG_IDENTIFIER=pysb-bpf", "PYSB_RECORD=event",
				       "PYSB_BINDING=%s", r->binding, "PYSB_CGROUP=%s", r->target,
				       "PYSB_DECISION=%s",
				       e->decision == PYSB_AUDIT ? "audit" : "deny", "PYSB_KIND=%s",
				       kind_str(e->kind), "PYSB_OP=%s",
				       e->kind == PYSB_KIND_NET ? net_op_str(e->op) : op_str(e->op),
				       "PYSB_PATH=%s",
				       e->kind == PYSB_KIND_NET ? "" : event_path(e), "PYSB_PID=%u",
				       e->pid, "PYSB_REPEAT=%llu",
				       (unsigned long long)(e->repeat ? e->repeat : 1),
				       "PYSB_JSON=%.*s", (int)len, line, NULL);
	if (err < 0) {
		errno = -err;
		return -1;
	}
	return 0;
}
