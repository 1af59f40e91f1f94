# The daemon under systemd (issue 19, "production habits"): the sd_notify protocol of a
# Type=notify unit (READY=1 only once the bindings are confined, STATUS=, RELOADING=1,
# the watchdog's keep-alive, STOPPING=1), events as journal entries with fields,
# messages with their syslog priority, per-binding health in the metrics, and the unit's
# capability bounding set and no_new_privs. No systemd runs in the VM: the test plays
# its part (the notification socket, the journal's socket, JOURNAL_STREAM). Uses
# daemon_start, svc_start, svc_cleanup, wait_for, binding and metrics from test_daemon.sh.

# fake_systemd_start: a private D-Bus broker ($T/sysbus.sock, exported as
# DBUS_SYSTEM_BUS_ADDRESS, which sd-bus reads) and tests/e2e/fake-systemd.py on it, its
# state in $T/systemd (UNIT.ControlGroup, UNIT.Slice, down; its log). Also a `systemctl`
# first on PATH that only logs to $T/systemctl.log: the daemon must ask over the bus.
fake_systemd_start() {
	mkdir -p "$T/systemd" "$T/bin"
	write_file "$T/bus.conf" <<XML
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$T/sysbus.sock</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
XML
	dbus-daemon --config-file="$T/bus.conf" --nofork >"$T/dbus.log" 2>&1 &
	FBUS=$!
	for _ in $(seq 300); do
		[ -S "$T/sysbus.sock" ] && break
		sleep 0.1
	done
	[ -S "$T/sysbus.sock" ] || fail "the test's D-Bus broker did not start: $(cat "$T/dbus.log")"
	export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/sysbus.sock
	printf '#!/bin/sh\necho "$*" >>%s/systemctl.log\nexit 1\n' "$T" >"$T/bin/systemctl"
	chmod +x "$T/bin/systemctl"
	export PATH="$T/bin:$PATH"
	fake_systemd_up
}

# fake_systemd_up: (again) the stand-in's process, FSD; fake_systemd_stop: both gone.
fake_systemd_up() {
	local n
	n=$(count_lines "$T/systemd/log" '^ready$')
	"$REPO/tests/e2e/fake-systemd.py" "$T/systemd" 2>>"$T/systemd/err" &
	FSD=$!
	wait_for "$T/systemd/log" '^ready$' $((n + 1))
}

fake_systemd_stop() {
	kill ${FSD:-} ${FBUS:-} 2>/dev/null
	wait ${FSD:-} ${FBUS:-} 2>/dev/null
	return 0
}

# notify_listen SOCKET LOG CGROUP PATH: a stand-in for systemd's notification socket.
# Each datagram becomes one line of LOG, its assignments joined by "|". On READY=1 it
# first runs a probe in CGROUP that reads PATH and appends "probe: denied" or
# "probe: read" to LOG: what a unit ordered After= the daemon would meet at that moment.
notify_listen() {
	python3 - "$@" <<'PY' &
import os, socket, subprocess, sys
sock, log, cg, path = sys.argv[1:5]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock)
with open(log, "a", buffering=1) as out:
    while True:
        msg = s.recv(4096).decode()
        if "READY=1" in msg.split("\n"):
            r = subprocess.run(["sh", "-c", 'echo $$ >"$1/cgroup.procs" && exec cat "$2"',
                                "probe", cg, path], capture_output=True)
            out.write("probe: " + ("read" if r.returncode == 0 else "denied") + "\n")
        out.write("|".join(msg.strip().split("\n")) + "\n")
PY
	NPID=$!
	for _ in $(seq 300); do # Python's start under TCG on a busy host: seconds
		[ -S "$1" ] && return 0
		sleep 0.1
	done
	fail "the notification socket $1 did not appear"
}

test_daemon_systemd_ready_after_confining_status_reload_watchdog_stopping() {
	local cg=$CGT/notify1
	DPID= # svc_cleanup stops the daemon, if it started
	trap 'kill ${NPID:-} 2>/dev/null; svc_cleanup' EXIT
	mkdir -p "$T/conf"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/a" "$T/svc" >"$T/conf/svc.py-sandboxes"
	binding svc '{"policy": "svc.py-sandboxes", "cgroup": "pysb-e2e/notify1"}'
	svc_start "$cg"
	wait_for "$T/svc/log" '^B ok$' # unconfined so far: the attack target is readable
	notify_listen "$T/notify.sock" "$T/notify.log" "$cg" "$T/b/f"
	# the watchdog: a keep-alive at half of 0.4 s
	NOTIFY_SOCKET=$T/notify.sock WATCHDOG_USEC=400000 daemon_start "$T/conf"
	wait_for "$T/notify.log" '^READY=1\|STATUS=1 binding\(s\), 1 cgroup\(s\) confined$'
	# READY=1 came after the binding was confined: a process joining the cgroup then is
	# denied (the same read outside is allowed: cat above, the service before)
	expect_line "$T/notify.log" "probe: denied"
	cat "$T/b/f" >/dev/null || fail "the probe's file is not readable outside"
	wait_for "$T/notify.log" '^WATCHDOG=1$' 4 10
	# a reload: RELOADING=1 (with the monotonic time systemd asks for), then READY=1
	kill -HUP "$DPID"
	wait_for "$T/notify.log" '^RELOADING=1\|MONOTONIC_USEC=[0-9]+$'
	wait_for "$T/notify.log" '^READY=1\|' 2
	# STATUS follows the bindings: a second one on a second cgroup
	mkdir -p "$CGT/notify2"
	binding two '{"policy": "svc.py-sandboxes", "cgroup": "pysb-e2e/notify2"}'
	wait_for "$T/notify.log" '(^|\|)STATUS=2 binding\(s\), 2 cgroup\(s\) confined$'
	daemon_stop
	expect_grep "$T/notify.log" '^STOPPING=1\|STATUS=stopping'
	# outside systemd (no NOTIFY_SOCKET), nothing of this is needed: the other tests
	kill "$NPID" 2>/dev/null
	svc_cleanup
}

# journal_listen SOCKET OUT: a stand-in for journald's native socket; each entry one JSON
# object per line of OUT (fields as sd_journal_send sends them, both encodings).
journal_listen() {
	python3 - "$@" <<'PY' &
import json, os, socket, struct, sys
sock, out = sys.argv[1:3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock)
with open(out, "a", buffering=1) as f:
    while True:
        data, anc, _, _ = s.recvmsg(1 << 20, socket.CMSG_SPACE(4))
        if not data:  # a large entry comes as a memfd
            fd = struct.unpack("i", anc[0][2][:4])[0]
            data = os.pread(fd, 1 << 24, 0)
            os.close(fd)
        e, i = {}, 0
        while i < len(data):
            j = data.index(b"\n", i)
            line = data[i:j]
            if b"=" in line:
                k, v = line.split(b"=", 1)
                i = j + 1
            else:  # KEY\n, little-endian 64-bit length, value, \n
                k = line
                n = struct.unpack("<Q", data[j + 1:j + 9])[0]
                v = data[j + 9:j + 9 + n]
                i = j + 9 + n + 1
            e[k.decode()] = v.decode()
        f.write(json.dumps(e) + "\n")
PY
	JPID=$!
	for _ in $(seq 300); do # Python's start under TCG on a busy host: seconds
		[ -S "$1" ] && return 0
		sleep 0.1
	done
	fail "the journal socket $1 did not appear"
}

test_daemon_systemd_events_in_journal_fields_messages_with_priority_binding_health() {
	once_per_matrix "the journal's fields: the daemon's own formatting"
	local cg=$CGT/journal1 js=/run/systemd/journal/socket stream
	DPID=
	trap 'kill ${JPID:-} 2>/dev/null; rm -f /run/systemd/journal/socket; svc_cleanup' EXIT
	[ ! -e "$js" ] || skip "a journald runs here ($js)"
	mkdir -p "$T/conf" /run/systemd/journal
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/a" "$T/svc" >"$T/conf/svc.py-sandboxes"
	binding svc '{"policy": "svc.py-sandboxes", "cgroup": "pysb-e2e/journal1"}'
	# and a binding whose policy does not compile: rejected, never in force
	printf 'expose-ro=\n' >"$T/conf/broken.py-sandboxes"
	binding broken '{"policy": "broken.py-sandboxes", "cgroup": "pysb-e2e/journal1"}'
	svc_start "$cg"
	journal_listen "$js" "$T/journal.jsonl"
	# stderr is "the journal's stream": systemd names it in JOURNAL_STREAM
	: >"$T/daemon.err"
	stream=$(stat -c '%d:%i' "$T/daemon.err")
	JOURNAL_STREAM=$stream "$PYSB" daemon --config "$T/conf" --rescan-ms 200 --events journal \
		--metrics 127.0.0.1:19471 >"$T/daemon.out" 2>>"$T/daemon.err" &
	DPID=$!
	wait_for "$T/daemon.err" "svc: confined $cg "
	wait_for "$T/svc/log" '^B denied$'
	wait_for "$T/journal.jsonl" '"PYSB_BINDING": "svc"'
	python3 - "$T/journal.jsonl" "$T/b/f" "$cg" <<'PY' || fail "journal entries: $(head -c 1500 "$T/journal.jsonl")"
import json, sys
entries = [json.loads(l) for l in open(sys.argv[1])]
ev = [e for e in entries if e.get("PYSB_RECORD") == "event"]
assert ev, "no event entry"
e = ev[0]
want = {"PYSB_BINDING": "svc", "PYSB_CGROUP": sys.argv[3], "PYSB_DECISION": "deny",
        "PYSB_KIND": "file", "PYSB_OP": "open", "PYSB_PATH": sys.argv[2], "PRIORITY": "4",
        "SYSLOG_IDENTIFIER": "pysb-bpf"}
for k, v in want.items():
    assert e.get(k) == v, (k, e.get(k), v)
assert e["MESSAGE"].startswith("deny file open(read) " + sys.argv[2]), e["MESSAGE"]
assert int(e["PYSB_REPEAT"]) >= 1 and int(e["PYSB_PID"]) > 0, e
j = json.loads(e["PYSB_JSON"])  # docs/events.md's record, whole
assert j["record"] == "event" and j["path"] == sys.argv[2] and j["binding"] == "svc", j
PY
	# nothing of the events on stdout: the journal has them
	[ ! -s "$T/daemon.out" ] || fail "events on stdout too: $(head -3 "$T/daemon.out")"
	# messages carry their priority: the rejection is an error, the confinement info
	expect_grep "$T/daemon.err" '^<3>pysb-bpf: error: binding broken rejected'
	expect_grep "$T/daemon.err" "^<6>pysb-bpf: svc: confined $cg "
	# the health of each binding
	metrics 19471 >"$T/metrics" || fail "no metrics"
	expect_line "$T/metrics" 'pysb_binding_confined{binding="svc"} 1'
	expect_line "$T/metrics" 'pysb_binding_confined{binding="broken"} 0'
	expect_line "$T/metrics" 'pysb_errors_total{reason="confine"} 0'
	# the broken one fixed: in force, healthy
	printf 'expose-ro=%s\n' "$T/a" >"$T/conf/broken.py-sandboxes"
	for _ in $(seq 100); do
		metrics 19471 >"$T/metrics"
		grep -qxF 'pysb_binding_confined{binding="broken"} 1' "$T/metrics" && break
		sleep 0.1
	done
	expect_line "$T/metrics" 'pysb_binding_confined{binding="broken"} 1'
	# without JOURNAL_STREAM (a terminal, a pipe): no prefix
	daemon_stop
	kill "$JPID" 2>/dev/null
	rm -f "$js"
	"$PYSB" daemon --config "$T/conf" --check 2>"$T/check.err"
	! grep -q '^<[0-9]>' "$T/check.err" || fail "a prefix outside the journal: $(head -2 "$T/check.err")"
	svc_cleanup
}

# The unit's CapabilityBoundingSet= and NoNewPrivileges=, applied by hand (setpriv) as
# systemd applies them: the daemon still loads, confines, reloads and serves.
test_daemon_systemd_runs_with_the_units_bounding_set_and_no_new_privs() {
	local cg=$CGT/caps1 caps bnd unit=$REPO/dist/pysb-bpf.service
	DPID=
	trap svc_cleanup EXIT
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit")
	[ -n "$caps" ] || fail "no CapabilityBoundingSet= in $unit"
	grep -qx 'NoNewPrivileges=yes' "$unit" || fail "the unit has no NoNewPrivileges=yes"
	mkdir -p "$T/conf"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/a" "$T/svc" >"$T/conf/svc.py-sandboxes"
	binding svc '{"policy": "svc.py-sandboxes", "cgroup": "pysb-e2e/caps1"}'
	svc_start "$cg"
	wait_for "$T/svc/log" '^B ok$'
	# (run alone in a fresh VM, nothing is pinned yet and the daemon loads every
	# program under this set; in the suite it adopts the instance pinned before)
	# as systemd does: every capability outside the set dropped from the bounding set,
	# then no_new_privs, then exec (setpriv of Debian 12 knows no CAP_BPF by name)
	python3 - "$caps" "$PYSB" daemon --config "$T/conf" --rescan-ms 200 \
		--events "$T/events.jsonl" >>"$T/daemon.out" 2>>"$T/daemon.err" <<'PY' &
import ctypes, os, re, sys
libc = ctypes.CDLL(None, use_errno=True)
num = {m[0]: int(m[1]) for m in re.findall(r"#define (CAP_[A-Z_]+)\s+(\d+)\s*$",
                                           open("/usr/include/linux/capability.h").read(), re.M)}
keep = {num[c] for c in sys.argv[1].split()}  # KeyError: a name the kernel headers lack
last = int(open("/proc/sys/kernel/cap_last_cap").read())
for c in range(last + 1):
    if c not in keep and libc.prctl(24, c, 0, 0, 0):  # PR_CAPBSET_DROP
        sys.exit(f"cannot drop capability {c}: {os.strerror(ctypes.get_errno())}")
if libc.prctl(38, 1, 0, 0, 0):  # PR_SET_NO_NEW_PRIVS
    sys.exit("cannot set no_new_privs")
os.execv(sys.argv[2], sys.argv[2:])
PY
	DPID=$!
	wait_for "$T/daemon.err" "svc: confined $cg "
	[ "$(sed -n 's/^NoNewPrivs:\t//p' "/proc/$DPID/status")" = 1 ] ||
		fail "the daemon does not run with no_new_privs"
	# CAP_SYS_MODULE (16), CAP_SETUID (7): out of the set, out of the daemon's reach
	bnd=$((16#$(sed -n 's/^CapBnd:\t//p' "/proc/$DPID/status")))
	((bnd & (1 << 16) || bnd & (1 << 7))) &&
		fail "the daemon's bounding set is wider than the unit's: $(grep CapBnd "/proc/$DPID/status")"
	svc_mark
	svc_expect_confined
	wait_for "$T/events.jsonl" "\"path\":\"$T/b/f\""
	daemon_stop
	svc_cleanup
}

# Issue 19: a unit's cgroup query that fails (systemd re-executing, its bus gone, a
# time-out) keeps the cgroup confined, in a running daemon and in one started meanwhile;
# a cgroup really removed is released. The daemon asks systemd over its bus (sd-bus),
# never by running systemctl.
test_daemon_systemd_unit_query_failure_keeps_cgroup_confined() {
	once_per_matrix "the daemon's answer to a silent systemd bus: its own logic"
	local cg=$CGT/unit1
	trap 'fake_systemd_stop; svc_cleanup' EXIT
	DPID=
	mkdir -p "$T/conf"
	fake_systemd_start
	echo /pysb-e2e/unit1 >"$T/systemd/web.service.ControlGroup"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/a" "$T/svc" >"$T/conf/p.py-sandboxes"
	binding web '{"policy": "p.py-sandboxes", "unit": "web.service"}'
	svc_start "$cg"
	MARK=0
	svc_wait_since 'B ok' 1 # unconfined, B is read
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "web: confined $cg "
	expect_grep "$T/systemd/log" '^get web.service org.freedesktop.systemd1.Service ControlGroup$'
	# systemd does not answer for three scans: the cgroup stays confined
	: >"$T/systemd/down"
	wait_for "$T/systemd/log" '^down$' 3
	wait_for "$T/daemon.err" "web: systemd did not answer for unit web.service"
	svc_mark
	svc_expect_confined
	# nor for a daemon started meanwhile
	kill -9 "$DPID"
	wait "$DPID" 2>/dev/null
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "watching $T/conf" 2
	wait_for "$T/systemd/log" '^down$' 6
	svc_mark
	svc_expect_confined
	# systemd's bus name gone altogether (it restarts): still confined
	rm "$T/systemd/down"
	kill "$FSD"
	wait "$FSD" 2>/dev/null
	sleep 1
	svc_mark
	svc_expect_confined
	! grep -E "released \(|releasing " "$T/daemon.err" || fail "a cgroup was released while systemd did not answer"
	# systemd answers again: the cgroup is adopted; then a really removed cgroup is
	# released even while systemd does not answer
	fake_systemd_up
	wait_for "$T/daemon.err" "web: adopted $cg "
	: >"$T/systemd/down"
	kill -9 "$SPID"
	wait "$SPID" 2>/dev/null
	rmdir "$cg"
	wait_for "$T/daemon.err" "web: released $cg \(the cgroup is gone\)"
	[ ! -s "$T/systemctl.log" ] || fail "the daemon ran systemctl: $(head -3 "$T/systemctl.log")"
	fake_systemd_stop
	svc_cleanup
}
