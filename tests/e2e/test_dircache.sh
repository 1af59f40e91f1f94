# The directory verdict cache (bpf/walk.bpf.c; docs/design.md, "The directory verdict
# cache"): a sandboxed task keeps, per directory, what the walk above it found. Each test
# warms the cache of one long-lived sandboxed process on a directory, changes the tree
# from outside the way the cache must notice (a rename of an ancestor, a bind mount, a
# mount replaced at the same place, a hard link), and shows that the very next open is
# judged on the tree as it is: denied with EACCES in the kernel where the policy does not
# reach, while the same file is readable unconfined, and still allowed where it does.
# $T is on the VM's tmpfs, a file system whose verdicts are cached.

# dc_prober: a Python program in the sandbox that, for each line "N PATH..." written to
# $T/svc/fifo, opens and reads each PATH and logs "N ok|EACCES|..." (one word per path)
# to $T/svc/log. Policy: $T/allowed read-only, $T/svc read-write, plus EXTRA lines.
dc_prober() {
	mkdir -p "$T/allowed/sub" "$T/denied" "$T/svc" "$T/lib"
	echo secret >"$T/allowed/sub/f"
	mkfifo "$T/svc/fifo"
	: >"$T/svc/log"
	write_file "$T/lib/prober.py" <<'PY'
import errno, sys
svc = sys.argv[1]
log = open(svc + "/log", "a", buffering=1)
for line in open(svc + "/fifo"):
    n, *paths = line.split()
    out = []
    for p in paths:
        try:
            with open(p) as f:
                f.read()
            out.append("ok")
        except OSError as e:
            out.append(errno.errorcode.get(e.errno, str(e.errno)))
    log.write(n + " " + " ".join(out) + "\n")
PY
	{
		printf 'expose-ro=%s\n' "$T/allowed" "$T/lib"
		printf 'expose-rw=%s\n' "$T/svc"
		printf '%s\n' "$@"
	} >"$T/policy"
	"$PYSB" run --policy "$T/policy" -- python3 "$T/lib/prober.py" "$T/svc" \
		>"$T/prober.out" 2>&1 &
	DC_PID=$!
	DC_N=0
	exec 7<>"$T/svc/fifo" # read-write: never blocks; the prober sees EOF once closed
}

# dc_step EXPECTED PATH...: one round; the log line must be "N EXPECTED".
dc_step() {
	local want=$1 i
	shift
	DC_N=$((DC_N + 1))
	kill -0 "$DC_PID" 2>/dev/null || fail "the prober is gone: $(cat "$T/prober.out")"
	echo "$DC_N $*" >&7
	for i in $(seq 300); do
		_has "$T/svc/log" E "^$DC_N " && break
		sleep 0.05
	done
	expect_line "$T/svc/log" "$DC_N $want"
}

# dc_warm EXPECTED PATH...: several rounds, so the answer is the cache's.
dc_warm() {
	dc_step "$@"
	dc_step "$@"
	dc_step "$@"
}

dc_done() {
	exec 7>&-
	wait "$DC_PID"
	RC=$?
	expect_rc 0
}

# Unconfined, the file is readable at PATH.
dc_readable() {
	cat "$1" >/dev/null 2>&1 || fail "$1 is not readable unconfined: the test proves nothing"
}

# An ancestor of a cached directory renamed out of the policy's reach: the next open in
# it is denied (without the rename count in fs_gen, the cached "allowed" answered).
test_dircache_ancestor_renamed_out_denied_at_once() {
	mkdir -p "$T/allowed/a/b"
	echo x >"$T/allowed/a/b/f"
	dc_prober
	dc_warm "ok ok" "$T/allowed/a/b/f" "$T/allowed/sub/f"
	mv "$T/allowed/a" "$T/denied/a"
	dc_readable "$T/denied/a/b/f"
	dc_step "EACCES ok" "$T/denied/a/b/f" "$T/allowed/sub/f"
	# and back: allowed again, at once
	mv "$T/denied/a" "$T/allowed/a"
	dc_step "ok" "$T/allowed/a/b/f"
	dc_done
}

# The directory itself renamed in (a denied tree moved under the rule): allowed at once,
# and a sibling directory of the same name moved away is not mistaken for it.
test_dircache_directory_renamed_in_and_swapped() {
	mkdir -p "$T/denied/c"
	echo x >"$T/denied/c/f"
	dc_prober
	dc_warm "EACCES" "$T/denied/c/f"
	mv "$T/denied/c" "$T/allowed/c"
	dc_step "ok" "$T/allowed/c/f"
	# RENAME_EXCHANGE of an allowed and a denied directory (the cached one moves out)
	mkdir -p "$T/denied/x"
	echo y >"$T/denied/x/f"
	dc_warm "ok" "$T/allowed/c/f"
	python3 - "$T/allowed/c" "$T/denied/x" <<'PY' || fail "renameat2(RENAME_EXCHANGE) failed"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
if libc.renameat2(AT_FDCWD, sys.argv[1].encode(), AT_FDCWD, sys.argv[2].encode(),
                  RENAME_EXCHANGE):
    sys.exit(os.strerror(ctypes.get_errno()))
PY
	dc_readable "$T/denied/x/f"
	dc_step "EACCES ok" "$T/denied/x/f" "$T/allowed/c/f"
	dc_done
}

# A bind mount of a cached directory outside the rule: the same dentries through another
# mount are outside the policy (the cache is keyed by the mount too).
test_dircache_bind_mount_of_cached_directory_denied() {
	mkdir -p "$T/denied/b"
	dc_prober
	dc_warm "ok" "$T/allowed/sub/f"
	mount --bind "$T/allowed/sub" "$T/denied/b" || fail "mount --bind failed"
	dc_readable "$T/denied/b/f"
	dc_step "EACCES ok" "$T/denied/b/f" "$T/allowed/sub/f"
	umount "$T/denied/b"
	dc_done
}

# A mount torn down and another put in its place: a mount of the rule's directory is
# replaced by one rooted below the rule. The new one may sit at the freed one's address;
# the cache compares the mount's root too.
test_dircache_mount_replaced_in_place_denied() {
	local i
	mkdir -p "$T/denied/m"
	dc_prober
	for i in 1 2 3; do
		mount --bind "$T/allowed" "$T/denied/m" || fail "mount --bind failed"
		dc_warm "ok" "$T/denied/m/sub/f"
		umount "$T/denied/m"
		sleep 0.1 # an RCU grace period: the mount's memory is free for the next one
		mount --bind "$T/allowed/sub" "$T/denied/m" || fail "mount --bind failed"
		dc_readable "$T/denied/m/f"
		dc_step "EACCES ok" "$T/denied/m/f" "$T/allowed/sub/f"
		umount "$T/denied/m"
	done
	dc_done
}

# Hard links: the file is always judged itself; a directory's cached answer is for the
# directory. A link of an allowed file in a denied directory is denied, a link of a denied
# file in an allowed directory is allowed (as without the cache).
test_dircache_hard_links_judged_by_their_directory() {
	mkdir -p "$T/denied"
	echo z >"$T/denied/g"
	dc_prober
	ln "$T/allowed/sub/f" "$T/denied/f-link"
	ln "$T/denied/g" "$T/allowed/sub/g-link"
	dc_readable "$T/denied/f-link"
	dc_warm "ok EACCES ok EACCES" "$T/allowed/sub/f" "$T/denied/f-link" \
		"$T/allowed/sub/g-link" "$T/denied/g"
	dc_done
}

# A file with a rule of its own is judged by that rule, never by its directory's cached
# answer: the policy file in the directory the policy makes read-write is read-only to
# the program (compile.c, "the policy files themselves"). One process writes another file
# there three times (its directory's answer, rw, cached), then the policy file: EACCES in
# the kernel, where unconfined it is writable; and still readable. (The hooks ask the
# cache before the walk, bpf/path.bpf.h walk_cached; without the file's own label check
# there, the cached rw answered for it.)
test_dircache_file_with_its_own_rule_not_answered_by_its_directory() {
	mkdir -p "$T/work"
	printf 'expose-rw=%s\n' "$T/work" >"$T/work/policy"
	python3 -c 'import sys; open(sys.argv[1], "a").close()' "$T/work/policy" ||
		fail "the policy file is not writable unconfined: the test proves nothing"
	write_file "$T/work/probe.py" <<'PY'
import errno, sys
d = sys.argv[1]
for _ in range(3):
    with open(d + "/other", "a") as f:
        f.write("x")
def try_open(mode):
    try:
        open(d + "/policy", mode).close()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
print("write", try_open("a"), "read", try_open("r"))
PY
	run_sb "$T/work/policy" python3 "$T/work/probe.py" "$T/work"
	expect_rc 0
	expect_line "$T/out" "write EACCES read ok"
	expect_line "$T/work/policy" "expose-rw=$T/work"
}

# A create or an unlink right in a rule's directory starts the walk at that labelled
# directory, which the hooks now judge by its own rule without the walk (bpf/path.bpf.h
# walk_cached): it must be the sandbox's own rule. Sandbox A holds a read-only rule on
# $T/top/sub (the directory labelled while A runs); sandbox B's only rule is read-write on
# $T/top. B creates and removes files in $T/top (its rule's directory: the shortcut) and in
# $T/top/sub (labelled, but by A's rule: B's walk goes on to $T/top and allows), and a
# read-only sandbox C is refused both in its rule's directory (EACCES in the kernel, where
# unconfined both work).
test_dircache_rule_directory_answers_for_its_own_sandbox_only() {
	mkdir -p "$T/top/sub" "$T/a-svc" "$T/lib"
	echo old >"$T/top/sub/gone"
	echo old >"$T/top/gone"
	write_file "$T/lib/churn.py" <<'PY'
import errno, os, sys
def attempt(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
out = []
for d in sys.argv[1:]:
    out.append(attempt(lambda: open(d + "/new", "w").close()))
    out.append(attempt(lambda: os.unlink(d + "/gone")))
print(" ".join(out))
PY
	python3 - "$T/top" <<'PY' || fail "unconfined, creating and removing in $T/top failed"
import os, sys
open(sys.argv[1] + "/probe", "w").close()
os.unlink(sys.argv[1] + "/probe")
PY
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/top/sub" "$T/a-svc" >"$T/policy-a"
	"$PYSB" run --policy "$T/policy-a" -- python3 -c '
import sys, time
open(sys.argv[1] + "/ready", "w").close()
time.sleep(60)' "$T/a-svc" >"$T/a.out" 2>&1 &
	local a=$!
	wait_file "$T/a-svc/ready" "sandbox A never started: $(cat "$T/a.out")"
	printf 'expose-rw=%s\nexpose-ro=%s\n' "$T/top" "$T/lib" >"$T/policy-b"
	run_sb "$T/policy-b" python3 "$T/lib/churn.py" "$T/top" "$T/top/sub"
	kill "$a" 2>/dev/null
	wait "$a" 2>/dev/null
	expect_rc 0
	expect_line "$T/out" "ok ok ok ok"
	echo old >"$T/top/gone"
	printf 'expose-ro=%s\nexpose-ro=%s\n' "$T/top" "$T/lib" >"$T/policy-c"
	run_sb "$T/policy-c" python3 "$T/lib/churn.py" "$T/top"
	expect_rc 0
	expect_line "$T/out" "EACCES EACCES"
	[ -e "$T/top/gone" ] || fail "the read-only sandbox removed $T/top/gone"
}

# fs_gen, the count that makes every cached answer stale (the pinned map of this build's
# instance: a little-endian u64).
dc_fs_gen() {
	bpftool map dump pinned /sys/fs/bpf/pysb-bpf/*/map-fs_gen -j | python3 -c '
import json, sys
v = json.load(sys.stdin)[0]["value"]
print(int.from_bytes(bytes(int(b, 16) for b in v), "little") if isinstance(v, list) else v)'
}

# Only a freed directory of a cacheable file system can make a cached answer stale: the
# /proc/<pid> directories freed as processes exit (every `ps`, every monitoring agent
# reading /proc on a server) no longer wipe every sandboxed task's cache, while a directory
# removed on the tmpfs still counts. (Before, the 50 processes below added 452 in all,
# about nine each: the cache was empty again after any process that looked into /proc.)
test_dircache_proc_directories_freed_keep_answers() {
	local g0 g1 g2 i
	printf 'expose-ro=%s\n' "$T" >"$T/policy"
	"$PYSB" run --policy "$T/policy" -- /bin/true || fail "the instance did not load"
	g0=$(dc_fs_gen)
	for i in $(seq 50); do ls /proc/self/ /proc/self/fd/ /proc/self/task/ >/dev/null; done
	g1=$(dc_fs_gen)
	# a few for whatever else the machine frees meanwhile (another tmpfs directory)
	[ $((g1 - g0)) -lt 10 ] ||
		fail "50 processes reading /proc moved fs_gen by $((g1 - g0)) (from $g0 to $g1)"
	for i in $(seq 20); do mkdir "$T/gone$i" && rmdir "$T/gone$i"; done
	g2=$(dc_fs_gen)
	[ $((g2 - g1)) -ge 20 ] ||
		fail "20 tmpfs directories removed moved fs_gen by $((g2 - g1)) only: a freed" \
			"cacheable directory must make cached answers stale"
}

# A create or an unlink right in a rule's directory is answered from a slot of the task's
# cache that keeps that directory's own rule (bpf/path.bpf.h, own_answer), for the
# sandbox it was found for: a daemon's live reload moves a service to a new sandbox with
# new rules, and the very next create there is judged by those. The service (a Python
# loop started before the daemon confines its cgroup) creates and removes a file in
# $T/rw at every round, so the slot holds "read-write"; the policy is reloaded with
# $T/rw read-only: from then on every create is refused with EACCES in the kernel, while
# the same create works unconfined and worked confined before the reload. (A build whose
# slot ignores the sandbox and its generation keeps creating: "C ok" after the reload.)
test_dircache_rule_directory_answer_follows_a_live_reload() {
	once_per_matrix "a daemon's reload of a rule directory's cached answer; the answer's sandbox key is kernel-independent, the cache itself is run on every kernel by the other dircache tests"
	local cg=$CGT/dcrw
	trap svc_cleanup EXIT
	mkdir -p "$T/conf" "$T/rw" "$T/svc" "$cg"
	python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY)); os.unlink(sys.argv[1])' \
		"$T/rw/probe" || fail "unconfined, creating in $T/rw failed: the test proves nothing"
	write_file "$T/dcrw.py" <<'PY'
import errno, os, sys, time
cg, rw, log = sys.argv[1], sys.argv[2], open(sys.argv[3], "a", buffering=1)
with open(cg + "/cgroup.procs", "w") as f:
    f.write(str(os.getpid()))
while True:
    try:
        os.close(os.open(rw + "/new", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        os.unlink(rw + "/new")
        log.write("C ok\n")
    except OSError as e:
        log.write("C " + errno.errorcode.get(e.errno, str(e.errno)) + "\n")
    time.sleep(0.05)
PY
	: >"$T/svc/log"
	python3 "$T/dcrw.py" "$cg" "$T/rw" "$T/svc/log" &
	SPID=$!
	printf 'expose-rw=%s\nexpose-rw=%s\n' "$T/rw" "$T/svc" >"$T/conf/p.py-sandboxes"
	binding dcrw '{"policy": "p.py-sandboxes", "cgroup": "pysb-e2e/dcrw"}'
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "dcrw: confined $cg "
	svc_mark
	svc_wait_since "C ok" 5
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/rw" "$T/svc" >"$T/conf/p.py-sandboxes"
	kill -HUP "$DPID"
	wait_for "$T/daemon.err" "binding dcrw: policy .* reloaded"
	sleep 0.2
	svc_mark
	svc_wait_since "C EACCES" 5
	! svc_since | grep -qvx "C EACCES" || fail "after the reload: $(svc_since | sort | uniq -c)"
	[ ! -e "$T/rw/new" ] || fail "a file was created in $T/rw after the reload"
	svc_cleanup
}
