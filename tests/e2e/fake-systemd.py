#!/usr/bin/python3
# A stand-in for systemd on its bus, for the daemon's unit bindings (no systemd runs in
# the test VM): tests/e2e/fake-systemd.py STATE-DIR, on the bus DBUS_SYSTEM_BUS_ADDRESS
# names (a private dbus-daemon, test_daemon.sh's fake_systemd_start).
#
# Answers the two questions the daemon asks (user/daemon/systemd_bus.c): Manager.LoadUnit
# and the ControlGroup and Slice properties of a unit. STATE-DIR/UNIT.Slice holds a
# unit's slice; STATE-DIR/UNIT.ControlGroup its cgroup, answered (as systemd does) only
# while that cgroup exists, else "". While STATE-DIR/down exists every question fails,
# as when systemd re-executes. Each question is a line of STATE-DIR/log.
import os
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

STATE = sys.argv[1]
CGROOT = "/sys/fs/cgroup"
BUS = "org.freedesktop.systemd1"


def log(line):
    with open(f"{STATE}/log", "a") as f:
        f.write(line + "\n")


def refuse_when_down():
    if os.path.exists(f"{STATE}/down"):
        log("down")
        raise dbus.exceptions.DBusException("systemd is re-executing",
                                            name="org.freedesktop.DBus.Error.NoReply")


def unit_path(unit):
    # systemd's escaping of a unit name in an object path
    return "/org/freedesktop/systemd1/unit/" + "".join(
        c if c.isalnum() else "_%02x" % ord(c) for c in unit)


class Unit(dbus.service.Object):
    def __init__(self, conn, unit):
        super().__init__(conn, unit_path(unit))
        self.unit = unit

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss",
                         out_signature="v")
    def Get(self, iface, prop):
        refuse_when_down()
        log(f"get {self.unit} {iface} {prop}")
        f = f"{STATE}/{self.unit}.{prop}"
        v = open(f).read().strip() if os.path.exists(f) else ""
        if prop == "ControlGroup" and v and not os.path.isdir(CGROOT + v):
            v = ""  # inactive: no cgroup
        return dbus.String(v)


class Manager(dbus.service.Object):
    def __init__(self, conn):
        super().__init__(conn, "/org/freedesktop/systemd1")
        self.conn = conn
        self.units = {}

    @dbus.service.method("org.freedesktop.systemd1.Manager", in_signature="s",
                         out_signature="o")
    def LoadUnit(self, unit):
        refuse_when_down()
        log(f"load {unit}")
        if unit not in self.units:
            self.units[unit] = Unit(self.conn, unit)
        return dbus.ObjectPath(unit_path(unit))


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
conn = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
name = dbus.service.BusName(BUS, conn)
manager = Manager(conn)
log("ready")
GLib.MainLoop().run()
