/* SPDX-License-Identifier: MIT */
/*
 * libsystemd is opened by the daemon when it first needs it, not linked: linked, it brings
 * libgcrypt, liblzma, libzstd, liblz4, libcap and libgpg-error into the start of every
 * `pysb-bpf run` (about 30 ms of each start in the test VM; make bench's start-up section),
 * for calls only the daemon makes. systemd itself opens its optional libraries this way.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>

#include "log.h"
#include "systemd_lib.h"

#define SYSTEMD_SONAME "libsystemd.so.0"

const struct systemd_lib *systemd_lib(const char *why)
{
	static struct systemd_lib lib;
	static bool tried, ok;
	void *h;

	if (tried)
		return ok ? &lib : NULL;
	tried = true;
	h = dlopen(SYSTEMD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		pr_err("cannot open libsystemd: %s; %s (install it: apt-get install libsystemd0)",
		       dlerror(), why);
		return NULL;
	}
#define SD_SYM(field, name)                                             \
	if (!(*(void **)&lib.field = dlsym(h, #name))) {                \
		pr_err("%s has no " #name "; %s", SYSTEMD_SONAME, why); \
		return NULL;                                            \
	}
	SD_SYM(notify, sd_notify)
	SD_SYM(notifyf, sd_notifyf)
	SD_SYM(watchdog_enabled, sd_watchdog_enabled)
	SD_SYM(journal_send, sd_journal_send)
	SD_SYM(bus_new, sd_bus_new)
	SD_SYM(bus_set_address, sd_bus_set_address)
	SD_SYM(bus_start, sd_bus_start)
	SD_SYM(bus_open_system, sd_bus_open_system)
	SD_SYM(bus_unref, sd_bus_unref)
	SD_SYM(bus_flush_close_unref, sd_bus_flush_close_unref)
	SD_SYM(bus_set_method_call_timeout, sd_bus_set_method_call_timeout)
	SD_SYM(bus_call_method, sd_bus_call_method)
	SD_SYM(bus_message_read, sd_bus_message_read)
	SD_SYM(bus_message_unref, sd_bus_message_unref)
	SD_SYM(bus_get_property_string, sd_bus_get_property_string)
	SD_SYM(bus_error_free, sd_bus_error_free)
#undef SD_SYM
	ok = true;
	return &lib;
}
