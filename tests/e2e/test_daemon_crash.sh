# Issue 19, "never unconfine on doubt ... lose nothing": a daemon killed (SIGKILL) in the
# middle of a reload, after it allocated the new policy's sandbox id and before the
# switch, leaves that id allocated; the next daemon frees it (ids_gc, user/daemon/daemon.c)
# and keeps every id a cgroup still uses, so the service stays confined throughout.
# Uses test_daemon.sh's daemon_start, wait_for, binding, svc_start, svc_mark,
# svc_expect_confined and svc_cleanup.

# crash_ids: the sandbox ids the kernel holds allocated, into $T/ids (build/e2e/sandbox_ids:
# "<id> <ring name>" per line); their number in IDS, the daemons' (ring pysb_daemon) in DIDS.
crash_ids() {
	"$REPO/build/e2e/sandbox_ids" >"$T/ids" || fail "cannot list the allocated sandbox ids"
	IDS=$(count_lines "$T/ids" '^[0-9]+ ')
	DIDS=$(count_lines "$T/ids" '^[0-9]+ pysb_daemon$')
}

test_daemon_crash_kill9_during_reload_leaks_no_id() {
	once_per_matrix "the daemon's own recovery and reloads; its bindings are enforced on every kernel by test_daemon_fifty_cgroups_no_cross_talk_and_patterns"
	local cg=$CGT/crash i base mark0
	[ -x "$REPO/build/e2e/sandbox_ids" ] || fail "build/e2e/sandbox_ids missing (make e2e builds it)"
	trap svc_cleanup EXIT
	mkdir -p "$T/conf"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/a" "$T/svc" >"$T/conf/c.py-sandboxes"
	binding crash '{"policy": "c.py-sandboxes", "cgroup": "pysb-e2e/crash"}'
	svc_start "$cg"
	# Each reload pauses (test hook) between its allocation and its switch: the kill
	# lands there every time, not by chance.
	PYSB_TEST_RELOAD_PAUSE_MS=60000 daemon_start "$T/conf"
	wait_for "$T/daemon.err" "watching $T/conf"
	expect_grep "$T/daemon.err" "crash: confined $cg "
	svc_mark
	mark0=$MARK
	svc_expect_confined
	crash_ids
	base=$IDS # what one daemon with one binding holds (with what other tests left)
	for i in 1 2 3; do
		kill -HUP "$DPID"
		wait_for "$T/daemon.err" "test: crash: sandbox [0-9]+ allocated and filled for $cg, pausing" "$i"
		kill -9 "$DPID"
		wait "$DPID" 2>/dev/null
		# no daemon: the cgroup stays confined by what the dead one left pinned
		svc_mark
		svc_expect_confined
		PYSB_TEST_RELOAD_PAUSE_MS=60000 daemon_start "$T/conf"
		wait_for "$T/daemon.err" "watching $T/conf" $((i + 1))
		wait_for "$T/daemon.err" "crash: adopted $cg " "$i"
	done
	crash_ids
	[ "$IDS" -eq "$base" ] ||
		fail "$IDS sandbox ids allocated after 3 kills during a reload and a restart, $base before: $(tr '\n' ';' <"$T/ids")"
	[ "$DIDS" -eq 1 ] || fail "$DIDS ids of daemons allocated, 1 expected: $(tr '\n' ';' <"$T/ids")"
	expect_grep "$T/daemon.err" "freeing 1 sandbox id\(s\) a previous daemon left allocated that no cgroup uses"
	# confined from the first daemon on, through every kill and restart: A always read,
	# B never (in the kernel: the service reads with bash builtins)
	MARK=$mark0
	svc_expect_confined
	svc_mark
	svc_expect_confined
	svc_cleanup
}

# A second daemon refuses to start while one runs (the lock ids_gc needs).
test_daemon_crash_second_daemon_refused() {
	once_per_matrix "the daemon's own recovery and reloads; its bindings are enforced on every kernel by test_daemon_fifty_cgroups_no_cross_talk_and_patterns"
	trap svc_cleanup EXIT
	mkdir -p "$T/conf" "$T/conf2"
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "watching $T/conf"
	"$PYSB" daemon --config "$T/conf2" --once >"$T/out2" 2>"$T/err2"
	RC=$?
	expect_rc 1
	expect_grep "$T/err2" "another pysb-bpf daemon \(pid $DPID\) is running: it holds /run/pysb-bpf/daemon.lock"
	svc_cleanup
}
