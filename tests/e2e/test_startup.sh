# Start-up (issue 21): what runs keep for the next one must not leak between them. The
# pool of event rings (user/loader_pool.c): a run SIGKILLed with events left in its ring
# has its sandbox id reclaimed by a later run, its rules removed and its events dropped;
# the socket programs attached once above every run cgroup spare unsandboxed tasks.

startup_setup() {
	mkdir -p "$T/rw" "$T/other"
	echo "secret" >"$T/other/marker-a"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/lib" "$T/rw" >"$T/policy"
	write_probe_lib
}

test_run_pool_kill9_reclaimed_and_isolated() {
	once_per_matrix "the pool's reclaim is pysb-bpf's own, in user space"
	local sup id cg i
	startup_setup
	# A: a grandchild that outlives its killed supervisor keeps being denied: events
	# pile up in a ring nobody reads.
	write_file "$T/a.py" <<EOF
import os, time
if os.fork() == 0:
    os.setsid()
    open('$T/rw/started', 'w').close()
    while True:
        try: open('$T/other/marker-a').read()
        except PermissionError: pass
        time.sleep(0.01)
time.sleep(600)
EOF
	PYSB_BPF_LOG=info setsid "$PYSB" run --policy "$T/policy" -- "$T/a.py" >/dev/null 2>"$T/err-a" &
	sup=$!
	for i in $(seq 100); do [ -e "$T/rw/started" ] && break; sleep 0.1; done
	[ -e "$T/rw/started" ] || fail "run A did not start: $(head -c 2000 "$T/err-a")"
	sleep 0.5
	kill -9 $sup
	wait $sup 2>/dev/null
	sleep 0.5
	id=$(sed -n 's/^pysb-bpf: sandbox \([0-9]*\): its event ring buffer holds.*/\1/p' "$T/err-a")
	cg=$(sed -n 's/^pysb-bpf: cgroup \(.*\) (id [0-9]*)$/\1/p' "$T/err-a")
	[ -n "$id" ] && [ -d "$cg" ] || fail "no sandbox id or cgroup in run A's log: $(grep -E 'sandbox|cgroup' "$T/err-a" | cut -c1-200)"
	# Its tasks gone, its sandbox is dead: a later run takes the id back.
	echo 1 >"$cg/cgroup.kill"
	for i in $(seq 50); do grep -q "populated 0" "$cg/cgroup.events" && break; sleep 0.1; done
	probe_py "$T/b.py" "attempt('read-marker', lambda: read('$T/other/marker-a'))"
	# The first run forgets the dead sandbox (gc), the second one reclaims its id.
	for run in b c; do
		PYSB_BPF_LOG=info "$PYSB" run --policy "$T/policy" -- "$T/b.py" >"$T/out-$run" 2>"$T/err-$run"
		RC=$?
		expect_rc 0
		expect_line "$T/out-$run" "read-marker EACCES"
		# A denial or two of its own, none of A's (hundreds).
		[ "$(count_lines "$T/err-$run" "marker-a")" -le 5 ] ||
			fail "run $run saw run A's events: $(grep -c marker-a "$T/err-$run")"
	done
	cat "$T/err-b" "$T/err-c" >"$T/err"
	expect_grep "$T/err" "^pysb-bpf: sandbox $id: reclaimed from a pysb-bpf that died"
	expect_grep "$T/err" "^pysb-bpf: sandbox $id: [0-9]+ bytes of events of an earlier run dropped"
}

test_run_socket_programs_spare_unsandboxed() {
	local plain=/sys/fs/cgroup/pysb-bpf/e2e-unsandboxed
	startup_setup
	probe_py "$T/net.py" \
		"s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)" \
		"attempt('sendto', lambda: s.sendto(b'x', ('127.0.0.1', 47999)))"
	# Confined: no net= line, the datagram is denied (and the programs are attached).
	run_sb "$T/policy" "$T/net.py"
	expect_rc 0
	expect_line "$T/out" "sendto EPERM"
	# The same program in a cgroup beside the runs, under the same parent: untouched.
	mkdir -p "$plain"
	(echo $BASHPID >"$plain/cgroup.procs" && exec python3 "$T/net.py") >"$T/out" 2>"$T/err"
	RC=$?
	rmdir "$plain" 2>/dev/null
	expect_rc 0
	expect_line "$T/out" "sendto ok"
}

# The implicit paths of an interpreter are kept between runs (user/implicit.c), and
# computed again when a path they came from changed: here a venv's python re-pointed to
# another installation, whose prefix is then granted instead of the first one's.
test_run_implicit_cache_follows_a_repointed_venv() {
	startup_setup
	mkdir -p "$T/py-a/bin" "$T/py-b/bin" "$T/venv/bin"
	ln -s /usr/bin/python3 "$T/py-a/bin/python3"
	ln -s /usr/bin/python3 "$T/py-b/bin/python3"
	# two venvs: a pyvenv.cfg is what makes a prefix granted (user/compile/implicit.c)
	printf 'home = /usr/bin\n' >"$T/py-a/pyvenv.cfg"
	printf 'home = /usr/bin\n' >"$T/py-b/pyvenv.cfg"
	ln -s "$T/py-a/bin/python3" "$T/venv/bin/python"
	probe_py "$T/lib/app.py" "print('ran')"
	for run in 1 2; do
		PYSB_BPF_LOG=info "$PYSB" run --policy "$T/policy" -- "$T/venv/bin/python" "$T/lib/app.py" \
			>"$T/out-$run" 2>"$T/err-$run"
		RC=$?
		expect_rc 0
		expect_line "$T/out-$run" "ran"
		expect_grep "$T/out-$run" "$T/py-a .*interpreter prefix"
	done
	# The second run took them from the cache.
	expect_grep "$T/err-2" "implicit paths of $T/venv/bin/python: from the cache"
	rm -f "$T/venv/bin/python"
	ln -s "$T/py-b/bin/python3" "$T/venv/bin/python"
	PYSB_BPF_LOG=info "$PYSB" run --policy "$T/policy" -- "$T/venv/bin/python" "$T/lib/app.py" \
		>"$T/out-3" 2>"$T/err-3"
	RC=$?
	expect_rc 0
	# the link, or its directory (relinking changed both): the first dependency that moved
	expect_grep "$T/err-3" "implicit paths: $T/venv/bin(/python)? changed, computed again"
	expect_grep "$T/out-3" "$T/py-b .*interpreter prefix"
	expect_no_grep "$T/out-3" "$T/py-a "
}
