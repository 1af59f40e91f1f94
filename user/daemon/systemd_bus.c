/* SPDX-License-Identifier: MIT */
/*
 * The daemon's questions to systemd (a unit's cgroup, its slice), over systemd's bus with
 * sd-bus: no `systemctl` process once a second per unit binding. As root, systemd's own
 * socket (/run/systemd/private, what systemctl uses as root): it answers while the D-Bus
 * broker restarts. Else the system bus (DBUS_SYSTEM_BUS_ADDRESS or its default socket).
 *
 * A failed question (systemd re-executing, no bus, a time-out) is "no answer", never
 * "no cgroup": the caller concludes nothing from it (docs/fleet.md, never unconfine on
 * doubt). The connection is dropped after a failure and opened again at the next
 * question.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "systemd_lib.h"

#define SYSTEMD_PRIVATE "/run/systemd/private"
#define CALL_TIMEOUT_US (2 * 1000 * 1000) /* within a scan period's order of magnitude */

/* The daemon asks from its loop only (one thread): one connection, kept between scans. */
static sd_bus *systemd_conn;

static sd_bus *systemd_bus(void)
{
	const struct systemd_lib *sd = systemd_lib("units cannot be asked their cgroup");
	sd_bus *b = NULL;
	int r;

	if (systemd_conn || !sd)
		return systemd_conn;
	if (geteuid() == 0 && !access(SYSTEMD_PRIVATE, F_OK)) {
		r = sd->bus_new(&b);
		if (r >= 0)
			r = sd->bus_set_address(b, "unix:path=" SYSTEMD_PRIVATE);
		if (r >= 0)
			r = sd->bus_start(b);
	} else {
		r = sd->bus_open_system(&b);
	}
	if (r < 0) {
		sd->bus_unref(b);
		return NULL;
	}
	sd->bus_set_method_call_timeout(b, CALL_TIMEOUT_US);
	systemd_conn = b;
	return b;
}

static void systemd_drop(void)
{
	systemd_conn = systemd_lib("")->bus_flush_close_unref(systemd_conn); /* opened */
}

/* The D-Bus interface that carries a unit type's cgroup properties; NULL: a type that
 * runs no processes (target, timer, path, device, automount). */
static const char *cgroup_interface(const char *unit)
{
	static const struct {
		const char *suffix, *iface;
	} types[] = {
		{ ".service", "org.freedesktop.systemd1.Service" },
		{ ".scope", "org.freedesktop.systemd1.Scope" },
		{ ".slice", "org.freedesktop.systemd1.Slice" },
		{ ".socket", "org.freedesktop.systemd1.Socket" },
		{ ".mount", "org.freedesktop.systemd1.Mount" },
		{ ".swap", "org.freedesktop.systemd1.Swap" },
	};
	const char *dot = strrchr(unit, '.');

	for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(dot, types[i].suffix))
			return types[i].iface;
	return NULL;
}

int systemd_unit_property(const char *unit, const char *prop, char *out, size_t len)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *iface = cgroup_interface(unit), *path;
	const struct systemd_lib *sd;
	char *v = NULL;
	sd_bus *b;
	int r;

	out[0] = '\0';
	if (!iface)
		return 0; /* no cgroup, ever */
	b = systemd_bus();
	if (!b)
		return -1;
	sd = systemd_lib(""); /* opened: systemd_bus() has a connection */
	/* LoadUnit, as `systemctl show` does: a unit not loaded yet is loaded (an inactive
	 * one answers an empty ControlGroup) */
	r = sd->bus_call_method(b, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
				"org.freedesktop.systemd1.Manager", "LoadUnit", &err, &reply, "s",
				unit);
	if (r >= 0)
		r = sd->bus_message_read(reply, "o", &path);
	if (r >= 0)
		r = sd->bus_get_property_string(b, "org.freedesktop.systemd1", path, iface, prop,
						&err, &v);
	sd->bus_message_unref(reply);
	sd->bus_error_free(&err);
	if (r < 0) {
		systemd_drop();
		return -1;
	}
	snprintf(out, len, "%s", v);
	r = strlen(v) < len ? 0 : -1;
	free(v);
	return r;
}
