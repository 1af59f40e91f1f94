/* SPDX-License-Identifier: MIT */
#ifndef PYSB_SYSTEMD_LIB_H
#define PYSB_SYSTEMD_LIB_H

#define SD_JOURNAL_SUPPRESS_LOCATION /* CODE_FILE= and friends say nothing to an operator */
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

/* The part of libsystemd the daemon calls (readiness, the journal, systemd's bus). */
struct systemd_lib {
	__typeof__(&sd_notify) notify;
	__typeof__(&sd_notifyf) notifyf;
	__typeof__(&sd_watchdog_enabled) watchdog_enabled;
	__typeof__(&sd_journal_send) journal_send;
	__typeof__(&sd_bus_new) bus_new;
	__typeof__(&sd_bus_set_address) bus_set_address;
	__typeof__(&sd_bus_start) bus_start;
	__typeof__(&sd_bus_open_system) bus_open_system;
	__typeof__(&sd_bus_unref) bus_unref;
	__typeof__(&sd_bus_flush_close_unref) bus_flush_close_unref;
	__typeof__(&sd_bus_set_method_call_timeout) bus_set_method_call_timeout;
	__typeof__(&sd_bus_call_method) bus_call_method;
	__typeof__(&sd_bus_message_read) bus_message_read;
	__typeof__(&sd_bus_message_unref) bus_message_unref;
	__typeof__(&sd_bus_get_property_string) bus_get_property_string;
	__typeof__(&sd_bus_error_free) bus_error_free;
};

/* libsystemd, opened at the daemon's first need of it; NULL if it cannot be (said once on
 * stderr, with `why`: what the daemon goes without). */
const struct systemd_lib *systemd_lib(const char *why);

#endif /* PYSB_SYSTEMD_LIB_H */
