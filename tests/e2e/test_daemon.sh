# The fleet daemon (issue 7): policies kept on service cgroups, kill -9 and adoption,
# live reload under load, broken policies rejected, live mode switch, cgroup patterns,
# 50 cgroups without cross-talk, Prometheus counters.

CGT=/sys/fs/cgroup/pysb-e2e

# daemon_start CONFIG-DIR [ARGS...]: the daemon in the background (DPID); its stderr in
# $T/daemon.err, its JSON events in $T/events.jsonl.
daemon_start() {
	local dir=$1
	shift
	"$PYSB" daemon --config "$dir" --rescan-ms 200 --events "$T/events.jsonl" "$@" \
		>>"$T/daemon.out" 2>>"$T/daemon.err" &
	DPID=$!
}

daemon_stop() { # (a test that fails before daemon_start calls it too, from its trap)
	[ -n "${DPID:-}" ] || return 0
	kill "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	return 0
}

# wait_for FILE PATTERN [COUNT [SECONDS]]: until FILE has COUNT lines matching PATTERN.
wait_for() {
	local n=${3:-1} i
	for i in $(seq $((${4:-60} * 10))); do
		[ "$(count_lines "$1" "$2")" -ge "$n" ] && return 0
		sleep 0.1
	done
	fail "timed out waiting for $n x /$2/ in $(basename "$1"): $(tail -5 "$1")"
}

# A service: bash builtins only (no exec), in cgroup $1, forever: each round reads
# $T/a/f (allowed) and $T/b/f (denied), and appends "A ok|A denied", "B ok|B denied" to
# $T/svc/log. Its pid in SPID. Its descriptors (a pipe to sleep on, the log) are opened
# before it joins the cgroup: a daemon may confine the cgroup at any moment after that, and
# reopening a pipe's read end for writing (<> on /dev/fd/N) is no file the policy grants.
svc_start() {
	local cg=$1
	mkdir -p "$cg" "$T/a" "$T/b" "$T/svc"
	echo a >"$T/a/f"
	echo b >"$T/b/f"
	write_file "$T/svc.sh" <<'SH'
exec 9<> <(:)
exec 8>>"$2/svc/log"
echo $$ >"$1/cgroup.procs" || exit 1
while :; do
	if read -r x <"$2/a/f"; then echo "A ok" >&8; else echo "A denied" >&8; fi
	if read -r x <"$2/b/f"; then echo "B ok" >&8; else echo "B denied" >&8; fi
	read -t 0.05 -u 9 x
done 2>/dev/null
SH
	bash "$T/svc.sh" "$cg" "$T" &
	SPID=$!
}

# svc_mark: remember how far the service's log is; svc_since: its lines since the mark.
svc_mark() {
	MARK=$(wc -l <"$T/svc/log")
}
svc_since() {
	tail -n +$((MARK + 1)) "$T/svc/log" 2>/dev/null
}

# svc_wait_since LINE COUNT: until the service has logged LINE COUNT times since the mark.
svc_wait_since() {
	local i
	for i in $(seq 300); do
		[ "$(svc_since | grep -cxF -- "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "timed out waiting for $2 x '$1' in the service's log since line $MARK: $(svc_since | tail -5)"
}

# svc_expect_confined: from the mark on, A always read, B never (and both tried again).
svc_expect_confined() {
	local i
	for i in $(seq 300); do
		[ "$(svc_since | grep -c '^B denied$')" -ge 3 ] && break
		sleep 0.1
	done
	svc_since | grep -q '^A ok$' || fail "the service's allowed read never happened"
	svc_since | grep -q '^B denied$' || fail "the service's denied read was never denied"
	! svc_since | grep -qE '^(A denied|B ok)$' ||
		fail "wrong outcomes: $(svc_since | grep -cE '^A denied$') A denied, $(svc_since | grep -cE '^B ok$') B ok"
}

# The service's cgroup and the daemon's state go: the next daemon run releases entries no
# binding claims, which --once does here.
svc_cleanup() {
	trap - EXIT
	daemon_stop
	[ -n "${SPID:-}" ] && kill -9 "$SPID" 2>/dev/null
	wait 2>/dev/null
	mkdir -p "$T/empty"
	"$PYSB" daemon --config "$T/empty" --once >/dev/null 2>&1
	# one rmdir for all (a process costs a tenth of a second under TCG)
	rmdir "$CGT"/*/ 2>/dev/null
	rmdir "$CGT" 2>/dev/null
	return 0
}

binding() {
	printf '%s\n' "$2" >"$T/conf/$1.json"
}

links_of() {
	bpftool cgroup show "$1" 2>/dev/null | grep -c '^[0-9]'
}

metrics() {
	python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$1/metrics', timeout=10).read().decode())"
}

test_daemon_service_confined_survives_kill9_and_is_adopted() {
	once_per_matrix "the daemon's own recovery and reloads; its bindings are enforced on every kernel by test_daemon_fifty_cgroups_no_cross_talk_and_patterns"
	local cg=$CGT/svc1 before after
	trap svc_cleanup EXIT
	mkdir -p "$T/conf"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/a" "$T/svc" >"$T/conf/svc.py-sandboxes"
	binding svc '{"policy": "svc.py-sandboxes", "cgroup": "pysb-e2e/svc1"}'
	svc_start "$cg"
	sleep 0.5
	svc_mark
	# unconfined so far: B is read
	wait_for "$T/svc/log" '^B ok$'
	daemon_start "$T/conf" --metrics 127.0.0.1:19464
	wait_for "$T/daemon.err" "svc: confined $cg "
	svc_mark
	svc_expect_confined
	wait_for "$T/events.jsonl" '"binding":"svc"'
	expect_grep "$T/events.jsonl" "\"decision\":\"deny\",\"kind\":\"file\",\"operation\":\"open\".*\"path\":\"$T/b/f\""
	metrics 19464 >"$T/metrics" || fail "no metrics"
	expect_grep "$T/metrics" '^pysb_events_total\{binding="svc",decision="deny",kind="file"\} [1-9]'
	expect_grep "$T/metrics" '^pysb_bound_cgroups\{binding="svc"\} 1$'
	before=$(links_of "$cg")
	[ "$before" -gt 0 ] || fail "no socket program attached to $cg"
	# kill -9: the service stays confined
	kill -9 "$DPID"
	wait "$DPID" 2>/dev/null
	svc_mark
	svc_expect_confined
	# a new daemon adopts: same links, no second attachment
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "svc: adopted $cg "
	after=$(links_of "$cg")
	[ "$after" -eq "$before" ] || fail "$after programs attached after the restart, $before before"
	svc_mark
	svc_expect_confined
	svc_cleanup
}

test_daemon_reload_under_load_atomic_broken_rejected_mode_switch() {
	once_per_matrix "the daemon's own recovery and reloads; its bindings are enforced on every kernel by test_daemon_fifty_cgroups_no_cross_talk_and_patterns"
	local cg=$CGT/svc2 i
	trap svc_cleanup EXIT
	mkdir -p "$T/conf" "$T/c"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/a" "$T/svc" >"$T/conf/p.py-sandboxes"
	binding svc '{"policy": "p.py-sandboxes", "cgroup": "pysb-e2e/svc2"}'
	svc_start "$cg"
	daemon_start "$T/conf" --metrics 127.0.0.1:19465
	wait_for "$T/daemon.err" "svc: confined $cg "
	svc_mark
	# 12 reloads while the service reads: a new policy each time (SIGHUP and file changes)
	for i in $(seq 12); do
		printf 'expose-ro=%s\nexpose-rw=%s\nexpose-ro=%s/c%d\n' "$T/a" "$T/svc" "$T" "$i" \
			>"$T/conf/p.py-sandboxes.new"
		mkdir -p "$T/c$i"
		mv "$T/conf/p.py-sandboxes.new" "$T/conf/p.py-sandboxes"
		[ $((i % 2)) -eq 0 ] && kill -HUP "$DPID"
		sleep 0.3
	done
	wait_for "$T/daemon.err" "binding svc: policy .* reloaded" 6
	svc_expect_confined
	# a broken policy: rejected, logged, the old one stays
	printf 'expose-ro=%s\nexpose-rox=%s\n' "$T/a" "$T/b" >"$T/conf/p.py-sandboxes"
	kill -HUP "$DPID"
	wait_for "$T/daemon.err" "binding svc rejected: its previous policy stays in force"
	expect_grep "$T/daemon.err" "p.py-sandboxes:2"
	svc_mark
	svc_expect_confined
	metrics 19465 >"$T/metrics"
	expect_grep "$T/metrics" '^pysb_reloads_total\{result="error"\} [1-9]'
	expect_line "$T/metrics" 'pysb_config_last_reload_successful 0'
	expect_grep "$T/metrics" '^pysb_config_last_reload_success_timestamp_seconds [1-9][0-9]+$'
	expect_grep "$T/metrics" "^pysb_build_info\\{version=\"$("$PYSB" version | sed -n '1s/^pysb-bpf \([^ ]*\).*/\1/p')\"\\} 1$"
	# HEAD: the headers of the same answer, no body
	python3 -c "import urllib.request as u; r = u.urlopen(u.Request('http://127.0.0.1:19465/metrics', method='HEAD'), timeout=10); print(r.status, len(r.read()))" >"$T/head" ||
		fail "HEAD /metrics refused"
	expect_line "$T/head" "200 0"
	# audit mode, live: B is read, and reported as audit
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/a" "$T/svc" >"$T/conf/p.py-sandboxes"
	binding svc '{"policy": "p.py-sandboxes", "cgroup": "pysb-e2e/svc2", "mode": "audit"}'
	wait_for "$T/daemon.err" "binding svc: policy .* reloaded on 1 cgroup\(s\), audit"
	metrics 19465 >"$T/metrics"
	expect_line "$T/metrics" 'pysb_config_last_reload_successful 1'
	svc_mark
	svc_wait_since 'B ok' 3
	wait_for "$T/events.jsonl" '"decision":"audit".*"binding":"svc"'
	# and back to enforce
	binding svc '{"policy": "p.py-sandboxes", "cgroup": "pysb-e2e/svc2", "mode": "enforce"}'
	wait_for "$T/daemon.err" "binding svc: policy .* reloaded on 1 cgroup\(s\), enforce"
	sleep 0.2
	svc_mark
	svc_expect_confined
	svc_cleanup
}

test_daemon_fifty_cgroups_no_cross_talk_and_patterns() {
	local i j out n=50
	# after the matrix's first kernel, 12 bindings: the same lookups, a quarter of the
	# processes (each costs a tenth of a second under TCG)
	[ -z "${PYSB_E2E_REPEAT_KERNEL:-}" ] || n=12
	trap svc_cleanup EXIT
	mkdir -p "$T/conf" "$CGT"
	# one mkdir for all
	mkdir -p $(for i in $(seq "$n"); do echo "$T/d$i $CGT/m$i"; done)
	for i in $(seq "$n"); do
		echo "$i" >"$T/d$i/f"
		printf 'expose-ro=%s\n' "$T/d$i" >"$T/conf/m$i.py-sandboxes"
		binding "m$i" "{\"policy\": \"m$i.py-sandboxes\", \"cgroup\": \"pysb-e2e/m$i\"}"
	done
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" ": confined $CGT/m[0-9]+ " "$n" 120
	for i in $(seq "$n"); do
		j=$((i % n + 1))
		out=$(sh -c 'echo $$ >"$1/cgroup.procs" || exit 9
			read -r x <"$2" && echo "own $x"
			{ read -r y <"$3"; } 2>/dev/null && echo "other $y" || echo "other denied"' \
			_ "$CGT/m$i" "$T/d$i/f" "$T/d$j/f" 2>&1)
		[ "$out" = "own $i
other denied" ] || fail "cgroup m$i: $out"
	done
	# a pattern: cgroups created later are confined too
	printf 'expose-ro=%s\n' "$T/d1" >"$T/conf/pat.py-sandboxes"
	binding pat '{"policy": "pat.py-sandboxes", "cgroup_pattern": "pysb-e2e/pat-*"}'
	wait_for "$T/daemon.err" "binding pat"
	mkdir "$CGT/pat-late"
	wait_for "$T/daemon.err" "pat: confined $CGT/pat-late "
	out=$(bash -c 'echo $$ >"$1/cgroup.procs"; read -r x <"$2" && echo "d1 $x"; { read -r y <"$3"; } 2>/dev/null || echo "d2 denied"' \
		_ "$CGT/pat-late" "$T/d1/f" "$T/d2/f" 2>&1)
	[ "$out" = "d1 1
d2 denied" ] || fail "pattern cgroup: $out"
	# removing the cgroup releases it; removing a binding releases its cgroup
	rmdir "$CGT/pat-late"
	wait_for "$T/daemon.err" "pat: released $CGT/pat-late \(the cgroup is gone\)"
	rm "$T/conf/m7.json"
	wait_for "$T/daemon.err" "m7: released $CGT/m7 \(its binding file was removed\)"
	out=$(bash -c 'echo $$ >"$1/cgroup.procs"; read -r y <"$2" && echo "read $y"' _ "$CGT/m7" "$T/d8/f" 2>&1)
	[ "$out" = "read 8" ] || fail "m7 still confined after its binding went: $out"
	svc_cleanup
}

test_daemon_check_rejects_bad_bindings() {
	mkdir -p "$T/conf"
	printf 'expose-ro=/usr\n' >"$T/conf/ok.py-sandboxes"
	binding ok '{"policy": "ok.py-sandboxes", "unit": "web.service"}'
	"$PYSB" daemon --config "$T/conf" --check >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	binding typo '{"policy": "ok.py-sandboxes", "cgroupp": "x"}'
	binding two '{"policy": "ok.py-sandboxes", "cgroup": "x", "unit": "y.service"}'
	binding mode '{"policy": "ok.py-sandboxes", "cgroup": "x", "mode": "permissive"}'
	printf '{"policy": ' >"$T/conf/cut.json"
	"$PYSB" daemon --config "$T/conf" --check >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 1
	expect_grep "$T/err" "typo.json: unknown key \"cgroupp\""
	expect_grep "$T/err" "two.json: more than one target"
	expect_grep "$T/err" "mode.json: \"mode\": \"permissive\": expected \"enforce\" or \"audit\""
	expect_grep "$T/err" "cut.json:1:"
}

# `daemon --once` on a "cgroup" binding whose cgroup is not made yet (found by a user): it
# said "binding worker ... enforce" and exited 0, confining nothing, and a provisioning
# script believed the service confined. It says so and exits 1; once the cgroup exists,
# the same command confines it (its socket programs attached) and exits 0.
test_daemon_once_on_a_missing_cgroup_says_nothing_confined() {
	mkdir -p "$T/conf"
	DPID=""
	trap svc_cleanup EXIT
	printf 'expose-ro=/usr\n' >"$T/conf/w.py-sandboxes"
	binding w '{"policy": "w.py-sandboxes", "cgroup": "pysb-e2e/later"}'
	rmdir "$CGT/later" 2>/dev/null
	"$PYSB" daemon --config "$T/conf" --once >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 1
	expect_grep "$T/err" "binding w: cgroup $CGT/later does not exist: nothing is confined by it"
	expect_grep "$T/err" "1 binding\\(s\\) confine nothing"
	mkdir -p "$CGT/later"
	"$PYSB" daemon --config "$T/conf" --once >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_no_grep "$T/err" "does not exist"
	[ "$(links_of "$CGT/later")" -gt 0 ] || fail "the cgroup made since was not confined"
}

# The directory as the kubelet mounts a ConfigMap: the files are links into ..data, a link
# to a timestamped directory, and an update swaps ..data with a rename. The daemon reads
# those bindings (never ..data itself) and reloads on the swap. Events rotate by size.
test_daemon_configmap_update_and_event_rotation() {
	once_per_matrix "the daemon's own recovery and reloads; its bindings are enforced on every kernel by test_daemon_fifty_cgroups_no_cross_talk_and_patterns"
	local cg=$CGT/cm
	trap svc_cleanup EXIT
	mkdir -p "$T/conf/..v1"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/a" "$T/svc" >"$T/conf/..v1/svc.py-sandboxes"
	echo '{"policy": "svc.py-sandboxes", "cgroup": "pysb-e2e/cm"}' >"$T/conf/..v1/svc.json"
	ln -s ..v1 "$T/conf/..data"
	ln -s ..data/svc.json "$T/conf/svc.json"
	ln -s ..data/svc.py-sandboxes "$T/conf/svc.py-sandboxes"
	svc_start "$cg"
	# 1 KiB: the service's denials are one key, counted in the kernel and sent at most once
	# a second (issue 21), a few records before the update below
	daemon_start "$T/conf" --events-max-size 1K --events-keep 3
	wait_for "$T/daemon.err" "svc: confined $cg "
	expect_grep "$T/daemon.err" "watching $T/conf: 1 binding\(s\)"
	svc_mark
	svc_expect_confined
	# the update: v2 exposes b too
	mkdir -p "$T/conf/..v2"
	printf 'expose-ro=%s\nexpose-ro=%s\nexpose-rw=%s\n' "$T/a" "$T/b" "$T/svc" >"$T/conf/..v2/svc.py-sandboxes"
	cp "$T/conf/..v1/svc.json" "$T/conf/..v2/svc.json"
	ln -s ..v2 "$T/conf/..data_tmp"
	mv -T "$T/conf/..data_tmp" "$T/conf/..data"
	rm -rf "$T/conf/..v1"
	wait_for "$T/daemon.err" "binding svc: policy .* reloaded on 1 cgroup"
	sleep 0.3
	svc_mark
	svc_wait_since 'B ok' 3
	# the denials of before went to a file rotated at 1 KiB: every line of every file is
	# a whole JSON record, none beyond .3
	[ -s "$T/events.jsonl.1" ] || fail "no rotation: $(ls -la "$T"/events.jsonl*)"
	[ ! -e "$T/events.jsonl.4" ] || fail "more rotated files than --events-keep 3"
	cat "$T"/events.jsonl* | python3 -c "import json, sys; [json.loads(l) for l in sys.stdin]" ||
		fail "a rotated event file holds a torn record"
	svc_cleanup
}

# Issue 19: a binding whose policy (or file) is broken keeps the rules its cgroups have,
# across daemon restarts, until a valid policy replaces them or the binding file goes.
test_daemon_broken_policy_keeps_rules_across_restart() {
	once_per_matrix "the daemon's own recovery and reloads; its bindings are enforced on every kernel by test_daemon_fifty_cgroups_no_cross_talk_and_patterns"
	local cg=$CGT/keep
	trap svc_cleanup EXIT
	mkdir -p "$T/conf"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/a" "$T/svc" >"$T/conf/k.py-sandboxes"
	binding keep '{"policy": "k.py-sandboxes", "cgroup": "pysb-e2e/keep"}'
	svc_start "$cg"
	MARK=0
	svc_wait_since 'B ok' 1 # unconfined, B is read
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "keep: confined $cg "
	wait_for "$T/daemon.err" "watching $T/conf" # its start is over
	# the policy breaks while no daemon runs; the next daemon keeps the rules in force
	kill -9 "$DPID"
	wait "$DPID" 2>/dev/null
	printf 'expose-ro=%s\nexpose-rox=%s\n' "$T/a" "$T/b" >"$T/conf/k.py-sandboxes"
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "watching $T/conf" 2
	expect_grep "$T/daemon.err" "binding keep rejected"
	svc_mark
	svc_expect_confined
	expect_grep "$T/daemon.err" "keep: kept $cg .*its last rules stay in force"
	# a valid policy replaces them: the running daemon adopts the cgroup
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/a" "$T/svc" >"$T/conf/k.py-sandboxes"
	wait_for "$T/daemon.err" "keep: adopted $cg "
	# the binding file itself breaks, and the daemon restarts: still kept
	kill -9 "$DPID"
	wait "$DPID" 2>/dev/null
	printf '{"policy": ' >"$T/conf/keep.json"
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "watching $T/conf" 3
	svc_mark
	svc_expect_confined
	# removing the binding file releases the cgroup
	rm "$T/conf/keep.json"
	wait_for "$T/daemon.err" "releasing .*$cg.*its binding file was removed"
	svc_mark
	svc_wait_since 'B ok' 1
	svc_cleanup
}

# A live reload keeps a service's own SysV objects and kernel keys its own (found by an
# adversary: after a reload, its shared memory, message queue and key were refused, since
# the records of its old sandbox id were removed, not given to the new one). The service
# makes them once confined, then uses them before and after a reload.
test_daemon_reload_keeps_the_services_own_sysv_objects_and_keys() {
	local cg=$CGT/svc3
	trap svc_cleanup EXIT
	mkdir -p "$T/conf" "$T/svc" "$cg"
	write_file "$T/svc.py" <<PY
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
open("$cg/cgroup.procs", "w").write(str(os.getpid()))
out = open("$T/svc/log", "a", buffering=1)
def confined():
    try:
        open("$T/svc/../svc.py").close(); return False
    except OSError:
        return True
while not confined():
    time.sleep(0.1)
shm = libc.shmget(0, 4096, 0o1000 | 0o600)
msq = libc.msgget(0, 0o1000 | 0o600)
key = libc.syscall(248, b"user", b"svc-key", b"v", 1, ctypes.c_int(-2))  # add_key
out.write("made %d %d %d\n" % (shm, msq, key))
def use():
    p = libc.shmat(shm, None, 0)
    ok = p not in (None, ctypes.c_void_p(-1).value)
    if ok:
        libc.shmdt(ctypes.c_void_p(p))
    buf = ctypes.create_string_buffer(512)
    q = libc.msgctl(msq, 2, buf) == 0  # IPC_STAT
    k = libc.syscall(250, 11, key, buf, 64) >= 0  # KEYCTL_READ
    return "shm %s msq %s key %s" % tuple("ok" if x else "denied" for x in (ok, q, k))
while not os.path.exists("$T/svc/stop"):
    out.write(use() + "\n")
    time.sleep(0.2)
PY
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/lib" "$T/svc" >"$T/conf/p.py-sandboxes"
	mkdir -p "$T/lib"
	binding svc '{"policy": "p.py-sandboxes", "cgroup": "pysb-e2e/svc3", "interpreter": "/usr/bin/python3"}'
	python3 "$T/svc.py" &
	SPID=$!
	daemon_start "$T/conf"
	wait_for "$T/svc/log" "^shm ok msq ok key ok$"
	printf '# reloaded\nexpose-ro=%s\nexpose-rw=%s\n' "$T/lib" "$T/svc" >"$T/conf/p.py-sandboxes"
	kill -HUP "$DPID"
	wait_for "$T/daemon.err" "binding svc: policy .* reloaded"
	svc_mark
	sleep 1
	touch "$T/svc/stop"
	wait "$SPID"
	tail -n +"$((MARK + 1))" "$T/svc/log" >"$T/after"
	expect_grep "$T/after" "^shm ok msq ok key ok$"
	expect_no_grep "$T/after" "denied"
	expect_grep "$T/svc/log" "^made [0-9]+ [0-9]+ [0-9]+$"
}

# A binding's interpreter in the service's own tree (its venv): each reload resolves it
# again for the implicit rules. Found by an adversary: the service re-pointed
# .venv/bin/python3 at / and the administrator's next reload granted it the whole tree
# read-only. The names on the way to it keep their names; what it ends in is granted only
# when it is a program.
test_daemon_service_cannot_repoint_its_interpreter_for_the_next_reload() {
	local cg=$CGT/svc4
	trap svc_cleanup EXIT
	mkdir -p "$T/conf" "$T/svc/.venv/bin" "$T/secret" "$cg" "$T/copy/.venv/bin"
	echo s >"$T/secret/s"
	ln -s /usr/bin/python3 "$T/svc/.venv/bin/python3"
	ln -s /usr/bin/python3 "$T/copy/.venv/bin/python3"
	write_file "$T/svc.py" <<PY
import os, sys, time
open("$cg/cgroup.procs", "w").write(str(os.getpid()))
out = open("$T/svc/log", "a", buffering=1)
def secret():
    try:
        open("$T/secret/s").read(); return "READ"
    except OSError:
        return "DENIED"
while secret() == "READ":
    time.sleep(0.1)
link = sys.argv[1] + "/.venv/bin/python3"
try:
    os.unlink(link); os.symlink("/", link); out.write("repoint ok\n")
except OSError as e:
    out.write("repoint %s\n" % type(e).__name__)
while not os.path.exists("$T/svc/stop"):
    out.write("secret %s\n" % secret())
    time.sleep(0.2)
PY
	# unconfined, on a copy: the link is re-pointed
	python3 - "$T/copy" <<'PY'
import os, sys
link = sys.argv[1] + "/.venv/bin/python3"
os.unlink(link); os.symlink("/", link)
PY
	[ "$(readlink "$T/copy/.venv/bin/python3")" = / ] || fail "unconfined, the link was not re-pointed"
	printf 'expose-rw=%s\n' "$T/svc" >"$T/conf/p.py-sandboxes"
	binding svc "{\"policy\": \"p.py-sandboxes\", \"cgroup\": \"pysb-e2e/svc4\", \"interpreter\": \"$T/svc/.venv/bin/python3\"}"
	"$T/svc/.venv/bin/python3" "$T/svc.py" "$T/svc" &
	SPID=$!
	daemon_start "$T/conf"
	wait_for "$T/svc/log" "^repoint "
	expect_grep "$T/svc/log" "^repoint PermissionError$"
	[ "$(readlink "$T/svc/.venv/bin/python3")" = /usr/bin/python3 ] || fail "the link was re-pointed"
	printf '# reloaded\nexpose-rw=%s\n' "$T/svc" >"$T/conf/p.py-sandboxes"
	kill -HUP "$DPID"
	wait_for "$T/daemon.err" "binding svc: policy .* reloaded"
	svc_mark
	sleep 1
	touch "$T/svc/stop"
	wait "$SPID"
	tail -n +"$((MARK + 1))" "$T/svc/log" >"$T/after"
	expect_grep "$T/after" "^secret DENIED$"
	expect_no_grep "$T/after" "READ"
}

# A service confined while it holds an outside process's /proc/PID/mem open (found by an
# adversary for attach, which refuses it): its reads and writes of that memory are not
# judged. The daemon keeps the cgroup confined and says so, naming the process, what it
# holds and the way out. Unconfined, the holder reads the victim's memory.
test_daemon_service_driving_an_outside_process_is_said() {
	local cg=$CGT/driver
	# (the trap runs once the function has returned: a global, not a local)
	trap 'kill "${DRIVER_VICTIM:-}" 2>/dev/null; svc_cleanup' EXIT
	mkdir -p "$T/conf" "$cg"
	write_mem_holder "$T/mem.py"
	sleep 1000 &
	DRIVER_VICTIM=$!
	printf 'expose-ro=%s\n' "$T" >"$T/conf/driver.py-sandboxes"
	binding driver '{"policy": "driver.py-sandboxes", "cgroup": "pysb-e2e/driver"}'
	(echo $BASHPID >"$cg/cgroup.procs" && exec python3 "$T/mem.py" "$DRIVER_VICTIM" "$T/ready") \
		>"$T/mem.out" 2>&1 &
	SPID=$!
	wait_for "$T/mem.out" '^read ELF$'
	[ -e "$T/ready" ] || fail "the holder is not ready"
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "driver: confined $cg "
	expect_grep "$T/daemon.err" "driver: process $SPID of $cg, confined now, holds from before what the policy does not bound: it holds /proc/$DRIVER_VICTIM/mem open; .* Restart the service"
	grep -q "^0::/pysb-e2e/driver$" "/proc/$SPID/cgroup" || fail "the service left its cgroup"
}
