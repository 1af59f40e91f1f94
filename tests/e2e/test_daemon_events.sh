# Issue 19: the daemon acknowledges a ring-buffer record only once its line is written
# (one write(2) per line): a kill -9 in the middle of a burst may write a record twice
# after the restart, but loses none and leaves no torn line.

CGE=/sys/fs/cgroup/pysb-e2e-ev

evd_start() {
	"$PYSB" daemon --config "$T/conf" --rescan-ms 200 --events "${EVD_EVENTS:-$T/events.jsonl}" \
		>>"$T/daemon.out" 2>>"$T/daemon.err" &
	DPID=$!
}

# evd_wait FILE PATTERN [COUNT]: until FILE has COUNT lines matching PATTERN (60 s).
evd_wait() {
	local i
	for i in $(seq 600); do
		[ "$(count_lines "$1" "$2")" -ge "${3:-1}" ] && return 0
		sleep 0.1
	done
	fail "timed out waiting for ${3:-1} x /$2/ in $(basename "$1"): $(tail -5 "$1")"
}

evd_cleanup() {
	trap - EXIT
	kill "$DPID" 2>/dev/null
	wait 2>/dev/null
	mkdir -p "$T/empty"
	"$PYSB" daemon --config "$T/empty" --once >/dev/null 2>&1
	rmdir "$CGE"/*/ "$CGE" 2>/dev/null
	return 0
}

# The event file is a FIFO read by a reader that stops once the burst's first line came:
# the daemon blocks in write(2) in the middle of the backlog, and is killed there. The
# reader then reads on, into $T/events.jsonl, and a new daemon adopts the cgroup.
evd_reader() {
	python3 - "$T/ev.fifo" "$T/events.jsonl" "$T/other/d/f" "$T" <<'PY' &
import os, sys, time
fifo, out, prefix, t = sys.argv[1:]
fd = os.open(fifo, os.O_RDWR)  # never an end of file between the two daemons
with open(out, "ab", buffering=0) as o:
    paused = False
    while True:
        if paused and not os.path.exists(t + "/resume"):
            time.sleep(0.05)
            continue
        b = os.read(fd, 4096)
        o.write(b)
        if not paused and not os.path.exists(t + "/paused") and \
                ('"path":"%s' % prefix).encode() in b:
            open(t + "/paused", "w").close()
            paused = True
PY
	RPID=$!
}

test_daemon_events_kill9_mid_burst_loses_none() {
	local cg=$CGE/burst i
	trap 'kill $RPID 2>/dev/null; evd_cleanup' EXIT
	mkdir -p "$T/conf" "$T/tool/bin" "$T/other/d" "$cg"
	cp "$REPO/build/e2e/deny_flood" "$T/tool/bin/" ||
		fail "build/e2e/deny_flood missing (make e2e builds it)"
	"$T/tool/bin/deny_flood" create 1000 "$T/other/d" >"$T/out" || fail "cannot create the files"
	printf 'expose-ro=%s\n' "$T/tool" >"$T/conf/burst.py-sandboxes"
	printf '{"policy": "burst.py-sandboxes", "cgroup": "pysb-e2e-ev/burst"}\n' >"$T/conf/burst.json"
	mkfifo "$T/ev.fifo"
	: >"$T/events.jsonl"
	evd_reader
	EVD_EVENTS=$T/ev.fifo evd_start
	evd_wait "$T/daemon.err" "burst: confined $cg "
	# 1,000 distinct denied opens (in enforce mode: each fails)
	"$T/tool/bin/deny_flood" distinct 1000 "$T/other/d" "$cg/cgroup.procs" >"$T/out"
	expect_line "$T/out" "calls 1000 denied 1000 ok 0 other 0"
	# the daemon blocks writing the backlog (the pipe is full): kill -9 it there
	for i in $(seq 600); do
		[ -e "$T/paused" ] && [ "$(cut -d' ' -f1 /proc/$DPID/syscall 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	[ "$(cut -d' ' -f1 /proc/$DPID/syscall 2>/dev/null)" = 1 ] ||
		fail "the daemon never blocked writing the burst: $(cat /proc/$DPID/syscall)"
	kill -9 "$DPID"
	wait "$DPID" 2>/dev/null
	touch "$T/resume"
	# the new daemon adopts the cgroup and writes what the ring still holds
	EVD_EVENTS=$T/ev.fifo evd_start
	evd_wait "$T/daemon.err" "burst: adopted $cg "
	python3 - "$T/events.jsonl" "$T/other/d/f" <<'PY' || fail "records lost or torn"
import json, sys, time
for attempt in range(600):
    lines = open(sys.argv[1]).read().split("\n")
    seen = set()
    for l in lines[:-1]:
        r = json.loads(l)  # a torn line fails here
        p = r.get("path") or ""
        if r["record"] == "event" and p.startswith(sys.argv[2]):
            seen.add(int(p[len(sys.argv[2]):]))
    if len(seen) == 1000 and lines[-1] == "":
        print("all 1000 denials in the stream (%d lines)" % (len(lines) - 1))
        sys.exit(0)
    time.sleep(0.1)
sys.exit("%d of 1000 denials in the stream; missing e.g. %s" %
         (len(seen), sorted(set(range(1000)) - seen)[:10]))
PY
	kill "$RPID" 2>/dev/null
	evd_cleanup
}

# The daemon's --events file is appended to as root and opened again at every rotation:
# a link at its name (a binding's program may write the directory it lies in) is not
# followed, a FIFO is not opened (found for `run --events` by an adversary: root's
# ~/.bashrc filled with event lines, a FIFO hung the open). The daemon refuses to start,
# saying why; the link's target is unchanged.
test_daemon_events_file_link_or_fifo_refused() {
	mkdir -p "$T/conf" "$T/root-only" "$T/logs"
	echo "root's" >"$T/root-only/login.sh"
	# unconfined: an append to the name lands in the target
	ln -s "$T/root-only/other" "$T/logs/plain.jsonl" && echo x >>"$T/logs/plain.jsonl"
	[ "$(cat "$T/root-only/other")" = x ] || fail "unconfined, the append did not follow the link"
	ln -s "$T/root-only/login.sh" "$T/logs/ev.jsonl"
	timeout 60 "$PYSB" daemon --config "$T/conf" --once --events "$T/logs/ev.jsonl" \
		>"$T/out" 2>"$T/err"
	RC=$?
	[ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] || fail "daemon with a linked event file: exit $RC"
	expect_grep "$T/err" "cannot open the event file $T/logs/ev.jsonl: it is a symbolic link"
	[ "$(cat "$T/root-only/login.sh")" = "root's" ] || fail "root's file changed"
	# a FIFO nothing reads: refused at once, never waited on (with its reader, a log
	# shipper's, it is written: test_daemon_events_kill9_mid_burst_loses_none)
	rm "$T/logs/ev.jsonl" && mkfifo "$T/logs/ev.jsonl"
	PYSB_TEST_FIFO_WAIT_MS=500 timeout 60 "$PYSB" daemon --config "$T/conf" --once --events "$T/logs/ev.jsonl" \
		>"$T/out" 2>"$T/err"
	RC=$?
	[ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] || fail "daemon with a FIFO as event file: exit $RC"
	expect_grep "$T/err" "ev.jsonl: it is a FIFO that nothing read for 0.5 s: start its reader"
	# a directory on the way replaced by a link (found by an adversary: a bound service
	# with expose-rw= of the log directory made it a link to /etc/bash_completion.d, and
	# the daemon's next start or rotation wrote there lines a root shell ran)
	rm "$T/logs/ev.jsonl" && mkdir -p "$T/logs/real" && ln -s "$T/root-only" "$T/logs/pysb"
	timeout 60 "$PYSB" daemon --config "$T/conf" --once --events "$T/logs/pysb/ev.jsonl" \
		>"$T/out" 2>"$T/err"
	RC=$?
	[ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] || fail "daemon through a linked directory: exit $RC"
	expect_grep "$T/err" "cannot open the event file's directory $T/logs/pysb: it is reached through a symbolic link"
	[ ! -e "$T/root-only/ev.jsonl" ] || fail "the daemon wrote where the link pointed"
	# a plain file is what it writes to
	rm -f "$T/logs/ev.jsonl"
	timeout 60 "$PYSB" daemon --config "$T/conf" --once --events "$T/logs/ev.jsonl" \
		>"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	[ -f "$T/logs/ev.jsonl" ] && [ ! -L "$T/logs/ev.jsonl" ] || fail "no event file made"
}
