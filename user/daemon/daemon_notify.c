/* SPDX-License-Identifier: MIT */
/*
 * What the daemon tells systemd (sd_notify(3); dist/pysb-bpf.service is Type=notify):
 * READY=1 once the first scan has confined every binding it could, STATUS= with the
 * bindings and cgroups in force, RELOADING=1 around a reload, STOPPING=1, and the
 * watchdog's keep-alive from the loop. Outside systemd (no NOTIFY_SOCKET) each call does
 * nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon_int.h"
#include "systemd_lib.h"

/* libsystemd, under systemd only: outside it nothing is sent and nothing is opened. */
static const struct systemd_lib *sd(void)
{
	if (!getenv("NOTIFY_SOCKET"))
		return NULL;
	return systemd_lib("systemd is not told the daemon's state (READY=1, STATUS=, WATCHDOG=1)");
}

/* "3 binding(s), 5 cgroup(s) confined[, 1 rejected]" */
static void status_text(const struct daemon *d, char *buf, size_t len)
{
	size_t cgroups = 0;

	for (size_t i = 0; i < d->n_b; i++)
		cgroups += d->b[i]->n_t;
	snprintf(buf, len, "%zu binding(s), %zu cgroup(s) confined", d->n_b, cgroups);
	if (d->n_rejected)
		snprintf(buf + strlen(buf), len - strlen(buf), ", %zu binding(s) rejected",
			 d->n_rejected);
}

/* STATUS=, when it changed since the last one sent. */
void notify_status(struct daemon *d)
{
	char s[sizeof(d->notify_status)];

	status_text(d, s, sizeof(s));
	if (!strcmp(s, d->notify_status))
		return;
	snprintf(d->notify_status, sizeof(d->notify_status), "%s", s);
	if (sd())
		sd()->notifyf(0, "STATUS=%s", s);
}

void notify_ready(struct daemon *d)
{
	uint64_t usec = 0;

	status_text(d, d->notify_status, sizeof(d->notify_status));
	if (!sd())
		return;
	sd()->notifyf(0, "READY=1\nSTATUS=%s", d->notify_status);
	/* WatchdogSec=: a keep-alive at half the period, from the loop (a stuck loop is a
	 * stuck daemon: systemd restarts it, and the new one adopts the pinned state). */
	if (sd()->watchdog_enabled(0, &usec) > 0 && usec >= 2000)
		d->wd_period_ms = (int64_t)(usec / 2000);
	d->wd_next = now_ms();
}

/* Before a reload: systemd shows the unit reloading until the next READY=1. */
void notify_reloading(void)
{
	struct timespec ts;

	if (!sd())
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd()->notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
		      (unsigned long long)ts.tv_sec * 1000000ULL +
			      (unsigned long long)ts.tv_nsec / 1000);
}

void notify_reloaded(struct daemon *d)
{
	status_text(d, d->notify_status, sizeof(d->notify_status));
	if (sd())
		sd()->notifyf(0, "READY=1\nSTATUS=%s", d->notify_status);
}

void notify_stopping(void)
{
	if (sd())
		sd()->notify(0, "STOPPING=1\nSTATUS=stopping: every bound cgroup stays confined");
}

/* The keep-alive if due; the longest the loop may sleep before the next one (-1: no
 * watchdog). */
int64_t notify_watchdog(struct daemon *d, int64_t now)
{
	if (!d->wd_period_ms)
		return -1;
	if (now >= d->wd_next) {
		sd()->notify(0, "WATCHDOG=1"); /* wd_period_ms is set only when sd() is */
		d->wd_next = now + d->wd_period_ms;
	}
	return d->wd_next - now;
}
