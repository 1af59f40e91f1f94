# Complete file and exec enforcement, and the escapes native code could try. Every denial
# is paired with the allowed counterpart succeeding in the same run.

escape_setup() {
	mkdir -p "$T/ro/sub" "$T/rw" "$T/other" "$T/lib"
	echo "public" >"$T/ro/data.txt"
	echo "secret" >"$T/other/secret.txt"
	printf 'expose-ro=%s\nexpose-rw=%s\nexpose-ro=%s\n' "$T/ro" "$T/rw" "$T/lib" >"$T/policy"
	write_probe_lib
}

# escape_ext4_ro_rw: escape_setup, with an ext4 file system on $T/ext holding ro/f and
# rw/f, its ro/ and rw/ exposed read-only and read-write.
escape_ext4_ro_rw() {
	escape_setup
	identity_ext4 "$T/ext"
	mkdir "$T/ext/ro" "$T/ext/rw"
	echo data >"$T/ext/ro/f"
	echo data >"$T/ext/rw/f"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/ext/ro" "$T/ext/rw" >>"$T/policy"
}

# pyapp LINES...: $T/app.py importing probe_lib.
pyapp() {
	probe_py "$T/app.py" "$@"
}

test_escape_every_write_operation_ro_denied_rw_allowed() {
	escape_setup
	touch "$T/ro/victim" "$T/rw/victim"
	mkdir "$T/ro/dir" "$T/rw/dir"
	lines=()
	for d in ro rw; do
		p="$T/$d"
		lines+=(
			"attempt('$d-create', lambda: os.close(os.open('$p/new', os.O_CREAT | os.O_WRONLY)))"
			"attempt('$d-mkdir', lambda: os.mkdir('$p/newdir'))"
			"attempt('$d-mkfifo', lambda: os.mkfifo('$p/fifo'))"
			"attempt('$d-symlink', lambda: os.symlink('/etc/passwd', '$p/sym'))"
			"attempt('$d-chmod', lambda: os.chmod('$p/victim', 0o600))"
			"attempt('$d-chown', lambda: os.chown('$p/victim', 0, 0))"
			"attempt('$d-utime', lambda: os.utime('$p/victim', (1, 1)))"
			"attempt('$d-setxattr', lambda: os.setxattr('$p/victim', 'trusted.k', b'v'))"
			"attempt('$d-truncate', lambda: os.truncate('$p/victim', 0))"
			"attempt('$d-rename', lambda: os.rename('$p/victim', '$p/renamed'))"
			"attempt('$d-rmdir', lambda: os.rmdir('$p/dir'))"
		)
	done
	lines+=("attempt('ro-unlink', lambda: os.unlink('$T/ro/data.txt'))")
	lines+=("attempt('rw-unlink', lambda: os.unlink('$T/rw/renamed'))")
	pyapp "${lines[@]}"
	# trusted.* xattrs need CAP_SYS_ADMIN, which the program no longer has by default
	# (user.* would do, but 6.1's tmpfs has none): granted, so the file rules decide.
	printf 'bpf.capabilities=CAP_SYS_ADMIN\n' >>"$T/policy"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	for op in create mkdir mkfifo symlink chmod chown utime setxattr truncate rename rmdir unlink; do
		expect_line "$T/out" "ro-$op EACCES"
		expect_line "$T/out" "rw-$op ok"
	done
	[ -e "$T/ro/data.txt" ] || fail "ro file was unlinked"
	expect_grep "$T/err" "^pysb-bpf: deny file mkdir\(write\) $T/ro/newdir "
}

test_escape_link_or_move_outside_file_into_rw_denied() {
	escape_setup
	echo "mine" >"$T/rw/own.txt"
	echo "readable" >"$T/ro/r.txt"
	pyapp \
		"attempt('link-outside', lambda: os.link('$T/other/secret.txt', '$T/rw/stolen'))" \
		"attempt('link-ro', lambda: os.link('$T/ro/r.txt', '$T/rw/r-writable'))" \
		"attempt('rename-outside', lambda: os.rename('$T/other/secret.txt', '$T/rw/stolen2'))" \
		"attempt('link-own', lambda: os.link('$T/rw/own.txt', '$T/rw/own2.txt'))" \
		"attempt('read-own2', lambda: read('$T/rw/own2.txt'))"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "link-outside EACCES"
	expect_line "$T/out" "link-ro EACCES"
	expect_line "$T/out" "rename-outside EACCES"
	expect_line "$T/out" "link-own ok"
	expect_line "$T/out" "read-own2 ok"
	[ ! -e "$T/rw/stolen" ] && [ ! -e "$T/rw/stolen2" ] || fail "an outside file got into rw"
}

test_escape_exec_denied_by_default_allowed_by_process_exec() {
	escape_setup
	printf 'expose-ro=/usr/bin\n' >>"$T/policy"
	pyapp \
		"import subprocess" \
		"attempt('exec-true', lambda: subprocess.run(['/usr/bin/true'], check=True))"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "exec-true EACCES"
	expect_grep "$T/err" "deny exec exec\(exec\) /usr/bin/true .*process-exec not allowed"
	printf 'python-api=ALLOW:process-exec\n' >>"$T/policy"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "exec-true ok"
}

# python-api is resolved as py-sandboxes resolves it (guard_api.activate_guard): by
# specificity, not by order, DENY winning at equal specificity. The old "last line decides"
# reading denied the first policy and allowed the second.
test_escape_exec_decided_by_specificity_not_order() {
	escape_setup
	printf 'expose-ro=/usr/bin\n' >>"$T/policy"
	cp "$T/policy" "$T/base"
	pyapp \
		"import subprocess" \
		"attempt('exec-true', lambda: subprocess.run(['/usr/bin/true'], check=True))"
	# a category beats *, whatever the order: allowed
	printf 'python-api=ALLOW:process-exec\npython-api=DENY:*\n' >>"$T/policy"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "exec-true ok"
	# DENY wins at equal specificity, even before the ALLOW: denied in the kernel
	cp "$T/base" "$T/policy"
	printf 'python-api=DENY:process-exec\npython-api=ALLOW:process-exec\n' >>"$T/policy"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "exec-true EACCES"
	expect_grep "$T/err" "deny exec exec\(exec\) /usr/bin/true .*process-exec not allowed"
	# a function beats its category: subprocess.run may start a program, so may execve
	cp "$T/base" "$T/policy"
	printf 'python-api=DENY:process-exec\npython-api=ALLOW:subprocess.run\n' >>"$T/policy"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "exec-true ok"
}

test_escape_exec_outside_exposed_dirs_and_anonymous_code_denied() {
	escape_setup
	printf 'expose-ro=/usr/bin\npython-api=ALLOW:process-exec\n' >>"$T/policy"
	cp /usr/bin/true "$T/other/mytrue"
	cp /usr/bin/true "$T/rw/rwtrue"
	pyapp \
		"import subprocess, ctypes" \
		"attempt('exec-outside', lambda: subprocess.run(['$T/other/mytrue'], check=True))" \
		"attempt('exec-exposed', lambda: subprocess.run(['$T/rw/rwtrue'], check=True))" \
		"def memfd_exec():" \
		"    fd = os.memfd_create('x', 0)" \
		"    os.write(fd, open('/usr/bin/true', 'rb').read())" \
		"    os.execve(fd, ['x'], {})" \
		"def forked(fn):" \
		"    pid = os.fork()" \
		"    if pid == 0:" \
		"        try: fn()" \
		"        except OSError as e: os._exit(e.errno)" \
		"        os._exit(0)" \
		"    return os.waitpid(pid, 0)[1] >> 8" \
		"print('memfd-exec', forked(memfd_exec), flush=True)" \
		"def deleted_exec():" \
		"    fd = os.open('$T/rw/rwtrue', os.O_RDONLY)" \
		"    os.unlink('$T/rw/rwtrue')" \
		"    os.execve(fd, ['x'], {})" \
		"print('deleted-exec', forked(deleted_exec), flush=True)"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "exec-outside EACCES"
	expect_line "$T/out" "exec-exposed ok"
	expect_line "$T/out" "memfd-exec 13"
	expect_line "$T/out" "deleted-exec 13"
}

test_escape_self_protection() {
	escape_setup
	sleep 300 &
	outside=$!
	pyapp \
		"import ctypes, signal, subprocess" \
		"libc = ctypes.CDLL(None, use_errno=True)" \
		"r = libc.syscall(321, 0, None, 0)  # bpf(BPF_MAP_CREATE, NULL, 0)" \
		"print('bpf', 'errno=%d' % ctypes.get_errno() if r < 0 else 'ok', flush=True)" \
		"attempt('kill-outside', lambda: os.kill($outside, signal.SIGTERM))" \
		"child = os.fork()" \
		"if child == 0:" \
		"    import time; time.sleep(30); os._exit(0)" \
		"attempt('kill-own-child', lambda: os.kill(child, signal.SIGTERM))" \
		"os.waitpid(child, 0)" \
		"r = libc.ptrace(16, $outside, None, None)  # PTRACE_ATTACH" \
		"print('ptrace-outside', 'errno=%d' % ctypes.get_errno() if r < 0 else 'ok', flush=True)" \
		"attempt('read-outside-mem', lambda: read('/proc/$outside/environ'))" \
		"attempt('cgroup-escape', lambda: write('/sys/fs/cgroup/cgroup.procs', str(os.getpid())))" \
		"attempt('own-proc', lambda: read('/proc/self/status'))" \
		"img = ctypes.create_string_buffer(128)  # not an ELF: the kernel's own answer is ENOEXEC" \
		"r = libc.syscall(175, img, 128, b'')  # init_module" \
		"print('init_module', 'errno=%d' % ctypes.get_errno() if r < 0 else 'ok', flush=True)"
	printf 'expose-rw=/sys/fs/cgroup\n' >>"$T/policy"
	# Without capabilities the kernel itself refuses most of these: granted, so what
	# refuses them is the self-protection hooks (bpf, ptrace, cgroupfs writes, modules).
	printf 'bpf.capabilities=CAP_SYS_ADMIN,CAP_BPF,CAP_SYS_PTRACE,CAP_SYS_MODULE,CAP_KILL\n' >>"$T/policy"
	run_sb "$T/policy" "$T/app.py"
	kill $outside 2>/dev/null || fail "the process outside the sandbox was killed"
	expect_rc 0
	expect_line "$T/out" "bpf errno=1"
	expect_line "$T/out" "kill-outside EPERM"
	expect_line "$T/out" "kill-own-child ok"
	expect_line "$T/out" "ptrace-outside errno=1"
	expect_grep "$T/out" "^read-outside-mem (EACCES|EPERM)$"
	expect_line "$T/out" "cgroup-escape EPERM"
	expect_line "$T/out" "own-proc ok"
	# Outside the sandbox, root gets the kernel's own answer to an empty module (not EPERM).
	expect_line "$T/out" "init_module errno=1"
	python3 -c "
import ctypes; libc = ctypes.CDLL(None, use_errno=True)
img = ctypes.create_string_buffer(128)
r = libc.syscall(175, img, 128, b''); print('outside', ctypes.get_errno())" >"$T/outside"
	! grep -qx "outside 1" "$T/outside" || fail "init_module is refused outside the sandbox too: $(cat "$T/outside")"
}

test_escape_received_fd_judged_as_open() {
	escape_setup
	# Outside the sandbox, a process hands the sandboxed program descriptors of a secret
	# file and of an exposed one over a socketpair the program inherited.
	write_file "$T/sender.py" <<EOF
import os, socket, subprocess, sys
a, b = socket.socketpair()
p = subprocess.Popen(["$PYSB", "run", "--policy", "$T/policy", "--", "$T/app.py", str(b.fileno())], pass_fds=[b.fileno()])
b.close()
for path in ("$T/other/secret.txt", "$T/ro/data.txt"):
    fd = os.open(path, os.O_RDONLY)
    socket.send_fds(a, [b"x"], [fd])
    os.close(fd)
sys.exit(p.wait())
EOF
	pyapp \
		"import socket" \
		"s = socket.socket(fileno=int(sys.argv[1]))" \
		"for label in ('secret', 'exposed'):" \
		"    msg, fds, flags, addr = socket.recv_fds(s, 1, 1)" \
		"    print(label, 'received' if fds else 'refused', flush=True)"
	run_plain python3 "$T/sender.py"
	expect_rc 0
	expect_line "$T/out" "secret refused"
	expect_line "$T/out" "exposed received"
	expect_grep "$T/err" "deny file receive-fd\(read\) $T/other/secret.txt"
}

test_escape_deep_trees_and_long_paths() {
	escape_setup
	pyapp \
		"def deep(base, n):" \
		"    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)" \
		"    for i in range(n):" \
		"        try: os.mkdir('d', dir_fd=fd)" \
		"        except FileExistsError: pass" \
		"        nfd = os.open('d', os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)" \
		"        os.close(fd); fd = nfd" \
		"    return fd" \
		"fd = deep('$T/rw', 4000)" \
		"attempt('deep-rw-write', lambda: os.close(os.open('f', os.O_CREAT | os.O_WRONLY, dir_fd=fd)))" \
		"attempt('deep-rw-read', lambda: os.close(os.open('f', os.O_RDONLY, dir_fd=fd)))" \
		"os.close(fd)" \
		"attempt('long-path', lambda: read('$T/rw/' + 'd/' * 4000 + 'f'))"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "deep-rw-write ok"
	expect_line "$T/out" "deep-rw-read ok"
	expect_line "$T/out" "long-path ERR ENAMETOOLONG"
	# The same depth outside any exposed tree: prepared outside, denied inside.
	python3 -c "
import os
fd = os.open('$T/other', os.O_RDONLY)
for i in range(4000):
    os.mkdir('d', dir_fd=fd); n = os.open('d', os.O_RDONLY, dir_fd=fd); os.close(fd); fd = n
os.close(os.open('f', os.O_CREAT | os.O_WRONLY, dir_fd=fd))"
	pyapp "attempt('deep-other', lambda: read('/proc/self/root$T/other/' + 'd/' * 1000))"
	run_sb "$T/policy" "$T/app.py"
	expect_grep "$T/out" "^deep-other (EACCES|ERR ENAMETOOLONG)$"
}

test_escape_exposed_dir_renamed_while_running() {
	escape_setup
	mkdir -p "$T/rw/box"
	echo "content" >"$T/ro/sub/f.txt"
	pyapp \
		"import time" \
		"open('$T/rw/ready', 'w').close()" \
		"while not os.path.exists('$T/rw/go'): time.sleep(0.05)" \
		"attempt('read-renamed', lambda: read('$T/ro-moved/sub/f.txt'))" \
		"attempt('write-renamed', lambda: write('$T/ro-moved/sub/new'))"
	"$PYSB" run --policy "$T/policy" -- "$T/app.py" >"$T/out" 2>"$T/err" &
	pid=$!
	for i in $(seq 100); do [ -e "$T/rw/ready" ] && break; sleep 0.1; done
	mv "$T/ro" "$T/ro-moved"
	touch "$T/rw/go"
	wait $pid
	RC=$?
	expect_rc 0
	# Rules name inodes: the renamed tree keeps its rule, read-only.
	expect_line "$T/out" "read-renamed ok"
	expect_line "$T/out" "write-renamed EACCES"
}

# The same with --user: a change of uid clears the parent-death signal (commit_creds), so
# it must be set again after the identity is taken (found reading the code: the program
# of `run --user nobody` outlived a SIGKILLed pysb-bpf). First shown bare: a process
# that sets PDEATHSIG then changes its uid loses it.
test_escape_fail_closed_when_pysb_bpf_is_killed_user_nobody() {
	escape_setup
	chmod 0777 "$T/rw"
	chmod -R a+rX "$T"
	python3 - <<'PY' >"$T/bare.out"
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
os.setresuid(65534, 65534, 65534)
sig = ctypes.c_int()
libc.prctl(2, ctypes.byref(sig))  # PR_GET_PDEATHSIG
print("pdeathsig after setresuid", sig.value)
PY
	expect_line "$T/bare.out" "pdeathsig after setresuid 0"
	probe_py "$T/app.py" \
		"import ctypes, signal, time" \
		"sig = ctypes.c_int()" \
		"ctypes.CDLL(None).prctl(2, ctypes.byref(sig))" \
		"print('pdeathsig', sig.value, flush=True)" \
		"open('$T/rw/started', 'w').close()" \
		"time.sleep(60)"
	setsid "$PYSB" run --user nobody --policy "$T/policy" -- "$T/app.py" >"$T/out" 2>"$T/err" &
	local sup=$! alive=0 i
	wait_file "$T/rw/started" "the program did not start: $(cat "$T/err")"
	kill -9 $sup
	wait $sup 2>/dev/null
	for i in $(seq 50); do pgrep -f "$T/app.py" >/dev/null || break; sleep 0.1; done
	pgrep -f "$T/app.py" >/dev/null && alive=1
	pkill -9 -f "$T/app.py"
	sleep 0.3
	rmdir /sys/fs/cgroup/pysb-bpf/run-* 2>/dev/null
	expect_line "$T/out" "pdeathsig 9"
	[ $alive = 0 ] || fail "the program of --user nobody outlived its killed supervisor"
}

test_escape_fail_closed_when_pysb_bpf_is_killed() {
	escape_setup
	pyapp \
		"import time" \
		"open('$T/rw/started', 'w').close()" \
		"for i in range(600):" \
		"    if os.path.exists('$T/rw/stop'): break" \
		"    time.sleep(0.05)" \
		"attempt('after-kill-secret', lambda: read('$T/other/secret.txt'))" \
		"attempt('after-kill-exposed', lambda: read('$T/ro/data.txt'))" \
		"open('$T/rw/done', 'w').close()"
	setsid "$PYSB" run --policy "$T/policy" -- "$T/app.py" >"$T/out" 2>"$T/err" &
	sup=$!
	for i in $(seq 100); do [ -e "$T/rw/started" ] && break; sleep 0.1; done
	[ -e "$T/rw/started" ] || fail "the program did not start"
	kill -9 $sup
	wait $sup 2>/dev/null
	touch "$T/rw/stop"
	# The direct child dies with its supervisor (PDEATHSIG): nothing ran unconfined.
	for i in $(seq 50); do pgrep -f "$T/app.py" >/dev/null || break; sleep 0.1; done
	! pgrep -f "$T/app.py" >/dev/null || fail "the program outlived its killed supervisor"
	! grep -q "after-kill-secret ok" "$T/out" || fail "ran unconfined"
	# A grandchild that outlives both stays confined by the pinned programs.
	write_file "$T/app2.py" <<EOF
import os, time, sys
sys.path.insert(0, '$T/lib')
from probe_lib import *
if os.fork() == 0:
    os.setsid()
    open('$T/rw/gc-started', 'w').close()
    while not os.path.exists('$T/rw/gc-go'): time.sleep(0.05)
    with open('$T/rw/gc-result', 'w') as out:
        for label, path in (('secret', '$T/other/secret.txt'), ('exposed', '$T/ro/data.txt')):
            try:
                open(path).read(); out.write(label + ' ok\n')
            except PermissionError:
                out.write(label + ' EACCES\n')
    os._exit(0)
time.sleep(600)
EOF
	"$PYSB" run --policy "$T/policy" -- "$T/app2.py" >/dev/null 2>&1 &
	sup=$!
	for i in $(seq 100); do [ -e "$T/rw/gc-started" ] && break; sleep 0.1; done
	kill -9 $sup
	wait $sup 2>/dev/null
	touch "$T/rw/gc-go"
	for i in $(seq 100); do [ -e "$T/rw/gc-result" ] && [ $(wc -l <"$T/rw/gc-result") = 2 ] && break; sleep 0.1; done
	expect_line "$T/rw/gc-result" "secret EACCES"
	expect_line "$T/rw/gc-result" "exposed ok"
	# Clean up the orphaned sandbox for the next tests.
	for cg in /sys/fs/cgroup/pysb-bpf/run-*; do echo 1 >"$cg/cgroup.kill"; done 2>/dev/null
	sleep 0.5
	rmdir /sys/fs/cgroup/pysb-bpf/run-* 2>/dev/null
	return 0
}

test_escape_openat2_and_io_uring_bound() {
	escape_setup
	helper="$REPO/build/e2e/native_open"
	[ -x "$helper" ] || fail "build/e2e/native_open missing (make e2e builds it)"
	printf 'expose-ro=%s\n' "$REPO/build/e2e" >>"$T/policy"
	run_sb "$T/policy" "$helper" "$T/other/secret.txt"
	expect_rc 0
	expect_line "$T/out" "openat2 errno=13"
	expect_line "$T/out" "io_uring-openat errno=13"
	run_sb "$T/policy" "$helper" "$T/ro/data.txt"
	expect_rc 0
	expect_line "$T/out" "openat2 ok"
	expect_line "$T/out" "io_uring-openat ok"
}

# An io_uring personality registered before a capset that changes nothing runs its ops
# with cred != real_cred, as overlayfs does for a task: only overlayfs's own credentials
# may skip the read hooks, so a getxattr under that personality is judged like any.
test_escape_uring_personality_getxattr_judged() {
	escape_setup
	helper="$REPO/build/e2e/uring_getxattr"
	[ -x "$helper" ] || fail "build/e2e/uring_getxattr missing (make e2e builds it)"
	printf 'expose-ro=%s\n' "$REPO/build/e2e" >>"$T/policy"
	python3 -c "import os
os.setxattr('$T/other/secret.txt', 'security.pysbtest', b'hidden')
os.setxattr('$T/ro/data.txt', 'security.pysbtest', b'shown')" || fail "setxattr failed"
	# unconfined, the three ways read it
	run_plain "$helper" "$T/other/secret.txt" security.pysbtest
	expect_line "$T/out" "syscall ok hidden"
	expect_line "$T/out" "uring-personality ok hidden"
	run_sb "$T/policy" "$helper" "$T/other/secret.txt" security.pysbtest
	expect_rc 0
	expect_line "$T/out" "syscall errno=13"
	expect_line "$T/out" "uring errno=13"
	expect_line "$T/out" "uring-personality errno=13"
	expect_grep "$T/err" "^pysb-bpf: deny file getxattr\(read\) $T/other/secret.txt "
	run_sb "$T/policy" "$helper" "$T/ro/data.txt" security.pysbtest
	expect_rc 0
	expect_line "$T/out" "syscall ok shown"
	expect_line "$T/out" "uring ok shown"
	expect_line "$T/out" "uring-personality ok shown"
}

test_escape_opath_reopen_chroot_and_namespaces() {
	escape_setup
	pyapp \
		"import ctypes" \
		"libc = ctypes.CDLL(None, use_errno=True)" \
		"p = os.open('$T/other/secret.txt', os.O_PATH)" \
		"attempt('opath-reopen', lambda: read('/proc/self/fd/%d' % p))" \
		"q = os.open('$T/ro/data.txt', os.O_PATH)" \
		"attempt('opath-reopen-exposed', lambda: read('/proc/self/fd/%d' % q))" \
		"r = libc.unshare(0x00020000)  # CLONE_NEWNS" \
		"print('unshare-mnt', 'ok' if r == 0 else 'errno=%d' % ctypes.get_errno(), flush=True)" \
		"r = libc.mount(b'tmpfs', b'$T/other', b'tmpfs', 0, None)" \
		"print('mount-over', 'ok' if r == 0 else 'errno=%d' % ctypes.get_errno(), flush=True)" \
		"os.chroot('$T/other')" \
		"attempt('chroot-secret', lambda: read('/secret.txt'))" \
		"attempt('chroot-escape', lambda: read('../../../../etc/hostname'))"
	# chroot and unshare need capabilities the program no longer has by default: granted,
	# so the mount hooks and the file rules are what stop the escape.
	printf 'bpf.capabilities=CAP_SYS_CHROOT,CAP_SYS_ADMIN\n' >>"$T/policy"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "opath-reopen EACCES"
	expect_line "$T/out" "opath-reopen-exposed ok"
	expect_line "$T/out" "mount-over errno=1"
	expect_line "$T/out" "chroot-secret EACCES"
	expect_grep "$T/out" "^chroot-escape (EACCES|ERR ENOENT)$"
}

test_escape_threads_daemons_confined_and_killed_at_end() {
	escape_setup
	pyapp \
		"import threading, time" \
		"res = []" \
		"t = threading.Thread(target=lambda: res.append(os.path.exists('$T/other/secret.txt') and attempt('thread-secret', lambda: read('$T/other/secret.txt'))))" \
		"t.start(); t.join()" \
		"attempt('thread-exposed', lambda: read('$T/ro/data.txt'))" \
		"if os.fork() == 0:" \
		"    os.setsid()" \
		"    if os.fork() == 0:" \
		"        with open('$T/rw/daemon.pid', 'w') as f: f.write(str(os.getpid()))" \
		"        try:" \
		"            read('$T/other/secret.txt'); open('$T/rw/daemon-read-secret', 'w').close()" \
		"        except PermissionError:" \
		"            open('$T/rw/daemon-denied', 'w').close()" \
		"        time.sleep(600)" \
		"    os._exit(0)" \
		"for i in range(100):" \
		"    if os.path.exists('$T/rw/daemon-denied') or os.path.exists('$T/rw/daemon-read-secret'): break" \
		"    time.sleep(0.05)"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "thread-secret EACCES"
	expect_line "$T/out" "thread-exposed ok"
	[ -e "$T/rw/daemon-denied" ] || fail "the setsid daemon was not confined"
	daemon=$(cat "$T/rw/daemon.pid")
	sleep 0.2
	! kill -0 "$daemon" 2>/dev/null || fail "the daemon outlived the sandbox"
}

test_escape_sudo_runs_as_invoking_user_with_no_new_privs() {
	escape_setup
	id nobody >/dev/null 2>&1 || fail "no user nobody in this system"
	chmod -R a+rX "$T"
	chmod a+rwx "$T/rw"
	pyapp \
		"print('uid', os.getuid(), os.geteuid(), flush=True)" \
		"print('nnp', [l.split()[1] for l in open('/proc/self/status') if l.startswith('NoNewPrivs')][0], flush=True)" \
		"attempt('write-rw', lambda: write('$T/rw/by-user'))"
	SUDO_UID=$(id -u nobody) SUDO_GID=$(id -g nobody) run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "uid $(id -u nobody) $(id -u nobody)"
	expect_line "$T/out" "nnp 1"
	expect_line "$T/out" "write-rw ok"
	[ "$(stat -c %u "$T/rw/by-user")" = "$(id -u nobody)" ] || fail "file not owned by the invoking user"
	# As root without sudo it stays root, bound by the policy all the same.
	run_sb "$T/policy" "$T/app.py"
	expect_line "$T/out" "uid 0 0"
}

test_escape_ignore_hides_files_inside_exposed_trees() {
	escape_setup
	mkdir -p "$T/ro/private" "$T/secret-root" "$T/ro/deep/.env"
	echo k >"$T/ro/.env"
	echo k >"$T/ro/key.pem"
	echo k >"$T/ro/sub/secret-notes"
	echo k >"$T/ro/private/x"
	echo k >"$T/ro/deep/.env/inner"
	echo ok >"$T/secret-root/data"
	echo k >"$T/secret-root/secret.txt"
	# names near the patterns: longer than a name's 31 bytes the kernel side compares
	# (head and tail), one byte more or less than a pattern
	local long=a-name-longer-than-the-thirty-one-bytes-compared
	echo k >"$T/ro/$long.pem"
	echo k >"$T/ro/secret-$long"
	echo ok >"$T/ro/.envrc"
	echo ok >"$T/ro/x.env"
	echo ok >"$T/ro/key.pem.txt"
	echo ok >"$T/ro/$long.pe"
	echo ok >"$T/ro/secre"
	printf 'expose-ro=%s\nignore=.env\nignore=*.pem\nignore=secret*\nignore=%s/ro/priv*\n' \
		"$T/secret-root" "$T" >>"$T/policy"
	pyapp \
		"attempt('long-pem', lambda: read('$T/ro/$long.pem'))" \
		"attempt('long-prefix', lambda: read('$T/ro/secret-$long'))" \
		"attempt('exact-longer', lambda: read('$T/ro/.envrc'))" \
		"attempt('exact-as-suffix', lambda: read('$T/ro/x.env'))" \
		"attempt('suffix-inside', lambda: read('$T/ro/key.pem.txt'))" \
		"attempt('long-suffix-shorter', lambda: read('$T/ro/$long.pe'))" \
		"attempt('prefix-shorter', lambda: read('$T/ro/secre'))" \
		"attempt('dotenv', lambda: read('$T/ro/.env'))" \
		"attempt('pem', lambda: read('$T/ro/key.pem'))" \
		"attempt('prefix', lambda: read('$T/ro/sub/secret-notes'))" \
		"attempt('absolute', lambda: read('$T/ro/private/x'))" \
		"attempt('under-ignored-dir', lambda: read('$T/ro/deep/.env/inner'))" \
		"attempt('plain', lambda: read('$T/ro/data.txt'))" \
		"attempt('root-under-pattern', lambda: read('$T/secret-root/data'))" \
		"attempt('inside-root', lambda: read('$T/secret-root/secret.txt'))"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	for l in dotenv pem prefix absolute under-ignored-dir inside-root long-pem long-prefix; do
		expect_line "$T/out" "$l EACCES"
	done
	for l in plain exact-longer exact-as-suffix suffix-inside long-suffix-shorter prefix-shorter; do
		expect_line "$T/out" "$l ok"
	done
	expect_line "$T/out" "root-under-pattern ok"
	# A pattern the kernel cannot match exactly is refused, never dropped.
	printf 'ignore=a?c\n' >>"$T/policy"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 125
	expect_grep "$T/err" "ignore=a\?c: the kernel layer matches NAME, PREFIX\*, \*SUFFIX and \* only"
}

# A block device holds every file of the file system on it (found by a review of every
# LSM hook, docs/hooks.md): under `expose-ro=/` with `ignore=` of a secret, a sandboxed
# root read the secret from the raw device, which the kernel lets root open as its owner
# without a capability. Only a rule naming the device itself grants it, never a rule on a
# directory above (bpf/file.bpf.c block_device_verdict).
test_escape_block_device_needs_a_rule_naming_it() {
	escape_setup
	identity_ext4 "$T/ext"
	echo PYSB-RAW-SECRET-4711 >"$T/ext/secret"
	echo public >"$T/ext/data"
	sync
	local dev
	dev=$(findmnt -n -o SOURCE "$T/ext")
	[ -b "$dev" ] || fail "no block device under $T/ext: '$dev'"
	printf 'expose-ro=/\nignore=%s\n' "$T/ext/secret" >"$T/policy"
	pyapp \
		"attempt('secret', lambda: read('$T/ext/secret'))" \
		"attempt('data', lambda: read('$T/ext/data'))" \
		"def raw():" \
		"    with open('$dev', 'rb') as f:" \
		"        print('raw-has-secret', b'PYSB-RAW-SECRET-4711' in f.read(32 << 20), flush=True)" \
		"attempt('raw', raw)"
	run_plain python3 "$T/app.py"
	expect_line "$T/out" "raw-has-secret True"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "secret EACCES"
	expect_line "$T/out" "data ok"
	expect_line "$T/out" "raw EACCES"
	expect_no_grep "$T/out" "raw-has-secret"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) $dev \(a block device holds every file of its file system: only a rule naming the device itself allows it"
	# named by a rule of its own: the administrator meant the disk
	printf 'expose-ro=%s\n' "$dev" >>"$T/policy"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "raw-has-secret True"
	expect_line "$T/out" "secret EACCES"
}

# Character devices stand for the machine, not for files: a rule on a directory above /dev
# (`expose-rw=/`) grants files, and a device only through a rule on /dev or below
# (PYSB_ACC_DEVICES). Before, a sandboxed root under `expose-ro=/` read the console's
# screen (/dev/vcs) and opened the mouse (/dev/input/mice, every keystroke on a machine
# with /dev/input/event*), and under `expose-rw=/` drove /dev/loop-control. The implicit
# devices (/dev/null, ...) and the program's own terminal still open; a rule naming a
# device or its directory under /dev grants it; learning writes the device's own rule.
test_escape_char_device_needs_a_rule_under_dev() {
	escape_setup
	local d
	for d in /dev/vcs /dev/input/mice /dev/loop-control; do
		[ -c "$d" ] || skip "no $d in this VM"
	done
	printf 'expose-rw=/\n' >"$T/policy"
	pyapp \
		"attempt('vcs', lambda: os.read(os.open('/dev/vcs', os.O_RDONLY), 16))" \
		"attempt('mice', lambda: os.close(os.open('/dev/input/mice', os.O_RDONLY | os.O_NONBLOCK)))" \
		"attempt('loop-control', lambda: os.close(os.open('/dev/loop-control', os.O_RDWR)))" \
		"attempt('null', lambda: os.write(os.open('/dev/null', os.O_WRONLY), b'x'))" \
		"attempt('file', lambda: read('/etc/hostname'))"
	run_plain python3 "$T/app.py"
	for d in vcs mice loop-control null file; do
		expect_line "$T/out" "$d ok"
	done
	run_sb "$T/policy" python3 "$T/app.py"
	expect_rc 0
	for d in vcs mice loop-control; do
		expect_line "$T/out" "$d EACCES"
	done
	expect_line "$T/out" "null ok"
	expect_line "$T/out" "file ok"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) /dev/vcs \(a device: only a rule on /dev or below allows it"
	# a rule under /dev: its devices, and no other
	printf 'expose-ro=/dev/input\nexpose-rw=/dev/loop-control\n' >>"$T/policy"
	run_sb "$T/policy" python3 "$T/app.py"
	expect_line "$T/out" "mice ok"
	expect_line "$T/out" "loop-control ok"
	expect_line "$T/out" "vcs EACCES"
	# learning writes the device's own rule, and the next run opens it (its lines are
	# user space's: on the matrix's first kernel only)
	[ -z "${PYSB_E2E_REPEAT_KERNEL:-}" ] || return 0
	printf 'expose-rw=/\n' >"$T/policy"
	"$PYSB" run --learn --policy "$T/policy" -- python3 "$T/app.py" >"$T/out" 2>"$T/err" ||
		fail "learning run failed: $(tail -3 "$T/err")"
	expect_grep "$T/policy" "^expose-ro=/dev/vcs$"
	expect_grep "$T/policy" "^expose-ro=/dev/input/mice$"
	expect_grep "$T/policy" "^expose-rw=/dev/loop-control$"
	run_sb "$T/policy" python3 "$T/app.py"
	for d in vcs mice loop-control; do
		expect_line "$T/out" "$d ok"
	done
	expect_no_grep "$T/err" "deny"
}

# loop_imgs: $T/a.img (1 MiB, starting ORIGINAL-CONTENT) and $T/ro/b.img (the same size,
# starting EVIL-CONTENT-XYZ); LOOP_DEV a read-only loop device backed by a.img, detached at
# the test's end. loop_first16 DEV: the device's first 16 bytes, past the page cache.
loop_imgs() {
	printf ORIGINAL-CONTENT >"$T/a.img"
	printf EVIL-CONTENT-XYZ >"$T/ro/b.img"
	truncate -s 1M "$T/a.img" "$T/ro/b.img" || fail "cannot make the images"
	LOOP_DEV=$(losetup -r -f --show "$T/a.img") || fail "no loop device"
	# shellcheck disable=SC2064 # expand now
	trap "losetup -d $LOOP_DEV 2>/dev/null" EXIT
}
loop_first16() {
	dd if="$1" bs=512 count=1 iflag=direct 2>/dev/null | head -c 16
}

# A loop device's own ioctls change what it holds with no write(2), no descriptor open for
# writing and no capability: LOOP_CHANGE_FD backs a read-only device with another file of
# the same size (every reader outside, a mount of it included, then reads the program's
# bytes), LOOP_CLR_FD detaches the machine's device, LOOP_SET_FD and LOOP_CONFIGURE bind
# a free one, and /dev/loop-control's ADD, REMOVE and GET_FREE make and remove devices
# (found by an adversary, round 25: under expose-ro= naming /dev/loopN, a root replaced
# the device's contents and detached it). Judged as writes of the device (bpf/file.bpf.c
# check_loop_ioctl): only a rule granting WRITE on it allows them.
test_escape_loop_device_ioctls_need_write() {
	once_per_matrix "the loop driver's ioctls and their check are the same on every kernel"
	escape_setup
	loop_imgs
	pyapp "import fcntl" \
		"d = os.open('$LOOP_DEV', os.O_RDONLY); n = os.open('$T/ro/b.img', os.O_RDONLY)" \
		"c = os.open('/dev/loop-control', os.O_RDONLY)" \
		"attempt('change', lambda: fcntl.ioctl(d, 0x4C06, n))" \
		"attempt('clr', lambda: fcntl.ioctl(d, 0x4C01, 0))" \
		"attempt('ctl-add', lambda: fcntl.ioctl(c, 0x4C80, 60))" \
		"attempt('ctl-remove', lambda: fcntl.ioctl(c, 0x4C81, 60))"
	run_plain python3 "$T/app.py"
	expect_line "$T/out" "change ok"
	expect_line "$T/out" "clr ok"
	expect_line "$T/out" "ctl-add ok"
	expect_line "$T/out" "ctl-remove ok"
	losetup "$LOOP_DEV" >/dev/null 2>&1 && fail "unconfined LOOP_CLR_FD left $LOOP_DEV bound"
	LOOP_DEV=$(losetup -r -f --show "$T/a.img") || fail "no loop device"
	# shellcheck disable=SC2064 # expand now
	trap "losetup -d $LOOP_DEV 2>/dev/null" EXIT
	sed -i "s|^d = os.open('[^']*'|d = os.open('$LOOP_DEV'|" "$T/app.py"
	cp "$T/policy" "$T/policy-rw"
	printf 'expose-ro=%s\nexpose-ro=/dev/loop-control\n' "$LOOP_DEV" >>"$T/policy"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "change EACCES"
	expect_line "$T/out" "clr EACCES"
	expect_line "$T/out" "ctl-add EACCES"
	expect_line "$T/out" "ctl-remove EACCES"
	[ "$(loop_first16 "$LOOP_DEV")" = ORIGINAL-CONTENT ] ||
		fail "confined, the device now starts: $(loop_first16 "$LOOP_DEV")"
	losetup "$LOOP_DEV" >/dev/null 2>&1 || fail "confined, LOOP_CLR_FD detached $LOOP_DEV"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(write\) $LOOP_DEV "
	[ -e /dev/loop60 ] && fail "confined, LOOP_CTL_ADD made /dev/loop60"
	# the device and the control file writable by their rules: the ioctls work
	printf 'expose-rw=%s\nexpose-rw=/dev/loop-control\n' "$LOOP_DEV" >>"$T/policy-rw"
	run_sb "$T/policy-rw" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "change ok"
	expect_line "$T/out" "clr ok"
	expect_line "$T/out" "ctl-add ok"
	expect_line "$T/out" "ctl-remove ok"
}

# A userfaultfd answers the page faults of the process that made it, whoever holds it: one
# passed in by a process outside before `attach` let the confined holder write that
# process's memory with UFFDIO_COPY (found by an adversary, round 25), as a held
# /proc/PID/mem would. Its ioctls are refused for an address space not the sandbox's
# (bpf/file.bpf.c check_uffd_ioctl); the program's own userfaultfd works.
test_escape_held_userfaultfd_of_outside_process_drives_nothing() {
	once_per_matrix "the userfaultfd ioctls and their check are the same on every kernel"
	escape_setup
	write_file "$T/uffd.py" <<'PY'
import ctypes, errno, os, socket, struct, sys, time, mmap
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
def chk(r, what):
    if r < 0:
        e = ctypes.get_errno(); raise OSError(e, what)
    return r
def wait(p):
    while not os.path.exists(p): time.sleep(0.05)
UFFDIO_API, UFFDIO_REGISTER, UFFDIO_COPY = 0xC018AA3F, 0xC020AA00, 0xC028AA03
role = sys.argv[1]
if role == "outside":  # outside SOCK GO
    sockp, go = sys.argv[2:4]
    uffd = chk(libc.syscall(323, os.O_CLOEXEC), "userfaultfd")
    api = ctypes.create_string_buffer(struct.pack("QQQ", 0xAA, 0, 0))
    chk(libc.ioctl(uffd, UFFDIO_API, api), "api")
    addr = libc.mmap(None, 4096, 3, 0x22, -1, 0)  # PROT_RW, MAP_PRIVATE|ANON
    reg = ctypes.create_string_buffer(struct.pack("QQQQ", addr, 4096, 1, 0))
    chk(libc.ioctl(uffd, UFFDIO_REGISTER, reg), "register")
    s = socket.socket(socket.AF_UNIX); s.bind(sockp); s.listen(1)
    c, _ = s.accept(); socket.send_fds(c, [b"x"], [uffd]); os.close(uffd)
    print("outside sent uffd", flush=True)
    wait(go)
    print("outside reads", ctypes.string_at(addr, 16), flush=True)
else:  # handler SOCK READY GO
    sockp, ready, go = sys.argv[2:5]
    s = socket.socket(socket.AF_UNIX); s.connect(sockp)
    _, fds, _, _ = socket.recv_fds(s, 1, 1); uffd = fds[0]
    open(ready, "w").close()
    wait(go)
    msg = os.read(uffd, 32)
    fault = struct.unpack_from("Q", msg, 16)[0] & ~4095
    print("handler event", msg[0], hex(fault), flush=True)
    src = ctypes.create_string_buffer(b"PWNED-BY-SANDBOX".ljust(4096, b"!"))
    cp = ctypes.create_string_buffer(struct.pack("QQQQq", fault, ctypes.addressof(src), 4096, 0, 0))
    try:
        chk(libc.ioctl(uffd, UFFDIO_COPY, cp), "copy")
        print("handler copy ok", flush=True)
    except OSError as e:
        print("handler copy", errno.errorcode[e.errno], flush=True)
        os.close(uffd)
    # its own address space: a userfaultfd of its own fills its own page
    own = chk(libc.syscall(323, os.O_CLOEXEC | 1), "userfaultfd")  # UFFD_USER_MODE_ONLY
    chk(libc.ioctl(own, UFFDIO_API, ctypes.create_string_buffer(struct.pack("QQQ", 0xAA, 0, 0))), "api")
    mine = libc.mmap(None, 4096, 3, 0x22, -1, 0)
    chk(libc.ioctl(own, UFFDIO_REGISTER, ctypes.create_string_buffer(struct.pack("QQQQ", mine, 4096, 1, 0))), "register")
    chk(libc.ioctl(own, UFFDIO_COPY, ctypes.create_string_buffer(struct.pack("QQQQq", mine, ctypes.addressof(src), 4096, 0, 0))), "own copy")
    print("handler own", ctypes.string_at(mine, 16), flush=True)
PY
	local o h
	uffd_pair() {
		rm -f "$T/sock" "$T/ready" "$T/go"
		timeout 60 python3 "$T/uffd.py" outside "$T/sock" "$T/go" >"$T/o.out" 2>&1 &
		o=$!
		wait_file "$T/sock" "the outside process is not ready: $(cat "$T/o.out" 2>/dev/null)"
		python3 "$T/uffd.py" handler "$T/sock" "$T/ready" "$T/go" >"$T/h.out" 2>&1 &
		h=$!
		wait_file "$T/ready" "the handler is not ready: $(cat "$T/h.out" 2>/dev/null)"
	}
	uffd_pair
	touch "$T/go"
	wait "$o"
	wait "$h"
	expect_line "$T/o.out" "outside reads b'PWNED-BY-SANDBOX'"
	expect_line "$T/h.out" "handler copy ok"
	uffd_pair
	attach_go "$h" "$T/policy" "$T/go" "$T/a.err"
	expect_line "$T/h.out" "handler copy EPERM"
	expect_line "$T/h.out" "handler own b'PWNED-BY-SANDBOX'"
	wait "$o"
	expect_no_grep "$T/o.out" "PWNED"
	expect_grep "$T/a.err" "deny self ptrace target-pid=[0-9]+ pid=$h "
}

# The same ioctls through a loop device held open for reading from before `attach`, under
# a policy that names no device: LOOP_CHANGE_FD gave the device the program's bytes
# (found by an adversary, round 25). Refused as a write of the device would be.
test_escape_held_loop_device_not_rebacked_after_attach() {
	once_per_matrix "the loop driver's ioctls and their check are the same on every kernel"
	escape_setup
	loop_imgs
	write_file "$T/hold.py" <<'PY'
import errno, fcntl, os, sys, time
dev, new, ready, go = sys.argv[1:5]
d = os.open(dev, os.O_RDONLY)
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.05)
n = os.open(new, os.O_RDONLY)
try:
    fcntl.ioctl(d, 0x4C06, n)
    print("change ok", flush=True)
except OSError as e:
    print("change", errno.errorcode[e.errno], flush=True)
PY
	python3 "$T/hold.py" "$LOOP_DEV" "$T/ro/b.img" "$T/ready" "$T/go" >"$T/h.out" 2>&1 &
	local holder=$!
	wait_file "$T/ready" "the holder is not ready: $(cat "$T/h.out")"
	attach_go "$holder" "$T/policy" "$T/go" "$T/a.err"
	expect_line "$T/h.out" "change EACCES"
	[ "$(loop_first16 "$LOOP_DEV")" = ORIGINAL-CONTENT ] ||
		fail "attached, the device now starts: $(loop_first16 "$LOOP_DEV")"
	# with a rule letting it write the device: done
	printf 'expose-rw=%s\n' "$LOOP_DEV" >>"$T/policy"
	rm -f "$T/ready" "$T/go"
	python3 "$T/hold.py" "$LOOP_DEV" "$T/ro/b.img" "$T/ready" "$T/go" >"$T/h.out" 2>&1 &
	holder=$!
	wait_file "$T/ready" "the holder is not ready: $(cat "$T/h.out")"
	attach_go "$holder" "$T/policy" "$T/go" "$T/a.err"
	expect_line "$T/h.out" "change ok"
	[ "$(loop_first16 "$LOOP_DEV")" = EVIL-CONTENT-XYZ ] ||
		fail "the allowed change did not happen: $(loop_first16 "$LOOP_DEV")"
}

# In a case-insensitive directory another spelling names the same file, and the dentry
# keeps the spelling of the lookup that made it: ignore=.env and ignore=*.pem were read
# and rewritten as .ENV, SERVER.PEM and .eNv in a casefolded ext4 directory, and
# ignore=*.json as the short alias CREDEN~1.JSO on vfat, and .env. (vfat drops trailing
# dots) read .env (found by adversaries). There
# names compare with ASCII case folded, and a name with a non-ASCII byte, or a `~` where
# short aliases exist, is hidden under any pattern (bpf/ignore.bpf.c).
test_escape_ignore_holds_in_case_insensitive_directories() {
	escape_setup
	vm_module vfat nls_cp437 nls_ascii
	local p
	mkdir -p "$T/cf" "$T/fat"
	truncate -s 32M "$T/cf.img" && mkfs.ext4 -q -O casefold "$T/cf.img" >/dev/null ||
		fail "mkfs.ext4 -O casefold failed"
	truncate -s 32M "$T/fat.img" && mkfs.vfat "$T/fat.img" >/dev/null || fail "mkfs.vfat failed"
	# shellcheck disable=SC2064 # expand now
	trap "umount '$T/cf' '$T/fat' 2>/dev/null" EXIT
	mount -o loop "$T/cf.img" "$T/cf" && mount -o loop "$T/fat.img" "$T/fat" ||
		fail "cannot mount the images"
	mkdir "$T/cf/proj" "$T/fat/proj" && chattr +F "$T/cf/proj" || fail "chattr +F failed"
	for p in "$T/cf/proj" "$T/fat/proj"; do
		echo SECRET-ENV >"$p/.env"
		echo PRIVATE-KEY >"$p/server.pem"
		echo TOKEN >"$p/credentials.json"
		echo hello >"$p/app.txt"
	done
	echo cafe >"$T/cf/proj/café.txt"
	# remounted: no dentry left with the files' own spelling
	ignore_ci_remount() { umount "$T/cf" "$T/fat" && mount -o loop "$T/cf.img" "$T/cf" &&
		mount -o loop "$T/fat.img" "$T/fat" || fail "cannot remount"; }
	ignore_ci_remount
	printf 'expose-rw=%s\nexpose-ro=%s\nignore=.env\nignore=*.pem\nignore=*.json\n' \
		"$T/cf/proj" "$T/fat/proj" >>"$T/policy"
	pyapp \
		"attempt('cf-upper-env', lambda: print(read('$T/cf/proj/.ENV').strip()))" \
		"attempt('cf-upper-pem', lambda: print(read('$T/cf/proj/SERVER.PEM').strip()))" \
		"attempt('cf-append-env', lambda: open('$T/cf/proj/.eNv', 'a').write('INJECTED=1\n'))" \
		"attempt('cf-env', lambda: read('$T/cf/proj/.env'))" \
		"attempt('cf-upper-app', lambda: print(read('$T/cf/proj/APP.TXT').strip()))" \
		"attempt('cf-new', lambda: open('$T/cf/proj/Data.csv', 'w').write('1\n'))" \
		"attempt('cf-non-ascii', lambda: read('$T/cf/proj/café.txt'))" \
		"attempt('fat-dot-env', lambda: print(read('$T/fat/proj/.env.').strip()))" \
		"attempt('fat-dots-pem', lambda: print(read('$T/fat/proj/server.pem..').strip()))" \
		"attempt('fat-alias-json', lambda: print(read('$T/fat/proj/CREDEN~1.JSO').strip()))" \
		"attempt('fat-upper-env', lambda: print(read('$T/fat/proj/.ENV').strip()))" \
		"attempt('fat-upper-app', lambda: print(read('$T/fat/proj/APP.TXT').strip()))"
	# Unconfined, the other spellings reach the files.
	run_plain python3 "$T/app.py"
	expect_line "$T/out" "SECRET-ENV"
	expect_line "$T/out" "PRIVATE-KEY"
	expect_line "$T/out" "TOKEN"
	expect_line "$T/out" "cf-append-env ok"
	printf 'SECRET-ENV\n' >"$T/cf/proj/.env"
	rm "$T/cf/proj/Data.csv"
	ignore_ci_remount
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	for p in cf-upper-env cf-upper-pem cf-append-env cf-env cf-non-ascii fat-alias-json \
		fat-upper-env fat-dot-env fat-dots-pem; do
		expect_line "$T/out" "$p EACCES"
	done
	expect_no_grep "$T/out" "SECRET-ENV|PRIVATE-KEY|TOKEN"
	expect_line "$T/out" "cf-upper-app ok"
	expect_line "$T/out" "cf-new ok"
	expect_line "$T/out" "fat-upper-app ok"
	[ "$(cat "$T/cf/proj/.env")" = SECRET-ENV ] || fail "the hidden .env was changed"
	expect_grep "$T/err" "deny file open\(read\) $T/cf/proj/\.ENV "
}

# A set-user-ID file planted in an rw tree runs as its owner, the sandbox's user (root
# here), for whoever executes it outside, unconfined: the owner needs no capability to set
# the bit. Refused however it is set (chmod, or a mode at creation), even where the policy
# grants WRITE, O_TMPFILE linked in through /proc/self/fd included, and no set-ID file
# gets a new name (link); a set-group-ID directory (group inheritance), an ordinary chmod
# and an ordinary O_TMPFILE work.
test_escape_setuid_file_planted_in_rw_tree_refused() {
	escape_setup
	pyapp \
		"write('$T/rw/f', '#!/bin/sh\n')" \
		"attempt('chmod-suid', lambda: os.chmod('$T/rw/f', 0o4755))" \
		"attempt('chmod-sgid-exec', lambda: os.chmod('$T/rw/f', 0o2755))" \
		"attempt('create-suid', lambda: os.close(os.open('$T/rw/g', os.O_CREAT | os.O_WRONLY, 0o4755)))" \
		"attempt('chmod-sgid-noexec', lambda: os.chmod('$T/rw/f', 0o2644))" \
		"attempt('mkdir-sgid', lambda: (os.mkdir('$T/rw/d'), os.chmod('$T/rw/d', 0o2775)))" \
		"attempt('chmod-plain', lambda: os.chmod('$T/rw/f', 0o755))" \
		"def tmpfile_link(name, mode):" \
		"    fd = os.open('$T/rw', os.O_TMPFILE | os.O_WRONLY, mode)" \
		"    root = os.open('/', os.O_PATH)" \
		"    try:  # a dir fd makes os.link call linkat(AT_SYMLINK_FOLLOW), not link(2)" \
		"        os.link(f'/proc/self/fd/{fd}', '$T/rw/' + name, src_dir_fd=root)" \
		"    finally:" \
		"        os.close(fd)" \
		"        os.close(root)" \
		"attempt('tmpfile-suid', lambda: tmpfile_link('t', 0o4755))" \
		"attempt('tmpfile-plain', lambda: tmpfile_link('u', 0o755))" \
		"attempt('link-suid', lambda: os.link('$T/rw/s', '$T/rw/s2'))" \
		"print('suid-left', [n for n in ('f', 'g', 't', 's2') if os.path.exists('$T/rw/' + n) and os.stat('$T/rw/' + n).st_mode & 0o4000])"
	# a set-user-ID file the user put in the tree: the sandbox may not give it a new name
	: >"$T/rw/s"
	chmod 4755 "$T/rw/s"
	# unconfined, the attack works: the bit is set all three ways
	run_plain python3 "$T/app.py"
	expect_line "$T/out" "chmod-suid ok"
	expect_line "$T/out" "create-suid ok"
	expect_line "$T/out" "tmpfile-suid ok"
	expect_line "$T/out" "link-suid ok"
	expect_line "$T/out" "suid-left ['g', 't', 's2']"
	rm -rf "$T/rw/f" "$T/rw/g" "$T/rw/d" "$T/rw/t" "$T/rw/u" "$T/rw/s2"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "chmod-suid EPERM"
	expect_line "$T/out" "chmod-sgid-exec EPERM"
	expect_line "$T/out" "create-suid EPERM"
	expect_line "$T/out" "chmod-sgid-noexec ok"
	expect_line "$T/out" "mkdir-sgid ok"
	expect_line "$T/out" "chmod-plain ok"
	expect_line "$T/out" "tmpfile-suid EPERM"
	expect_line "$T/out" "tmpfile-plain ok"
	expect_line "$T/out" "link-suid EPERM"
	expect_line "$T/out" "suid-left []"
	[ -f "$T/rw/u" ] || fail "the plain O_TMPFILE was not linked in"
	expect_grep "$T/err" "^pysb-bpf: deny self setid-mode\(write\) $T/rw/f "
}

# An exclusive lock or a lease on a file the sandbox may only read would lock out (or
# stall) every outside program that locks or writes it: flock(LOCK_EX) works on a
# read-only descriptor, and a lease holder makes outside writers wait. Both need WRITE on
# the file; a shared lock (how SQLite reads) stays allowed.
test_escape_exclusive_lock_or_lease_needs_write() {
	escape_setup
	echo "mine" >"$T/rw/own.txt"
	pyapp \
		"import fcntl" \
		"def lock(p, how):" \
		"    fd = os.open(p, os.O_RDONLY)" \
		"    try:" \
		"        fcntl.flock(fd, how | fcntl.LOCK_NB)" \
		"    finally:" \
		"        os.close(fd)" \
		"def lease(p):" \
		"    fd = os.open(p, os.O_RDONLY)" \
		"    try:" \
		"        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)" \
		"        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)" \
		"    finally:" \
		"        os.close(fd)" \
		"attempt('ro-lock-ex', lambda: lock('$T/ro/data.txt', fcntl.LOCK_EX))" \
		"attempt('ro-lease', lambda: lease('$T/ro/data.txt'))" \
		"attempt('ro-lock-sh', lambda: lock('$T/ro/data.txt', fcntl.LOCK_SH))" \
		"attempt('rw-lock-ex', lambda: lock('$T/rw/own.txt', fcntl.LOCK_EX))" \
		"attempt('rw-lease', lambda: lease('$T/rw/own.txt'))"
	run_plain python3 "$T/app.py"
	expect_line "$T/out" "ro-lock-ex ok"
	expect_line "$T/out" "ro-lease ok"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "ro-lock-ex EACCES"
	expect_line "$T/out" "ro-lease EACCES"
	expect_line "$T/out" "ro-lock-sh ok"
	expect_line "$T/out" "rw-lock-ex ok"
	expect_line "$T/out" "rw-lease ok"
	expect_grep "$T/err" "^pysb-bpf: deny file lock\(write\) $T/ro/data.txt "
}

# A delegation (F_SETDELEG, 6.19+) is a lease by another name, of a file or a directory:
# every outside open for writing, or create in the directory, waits for its break (45 s by
# default), and the program can take it again. Needs WRITE, as F_SETLEASE does. Skipped
# on kernels without it.
test_escape_delegation_needs_write() {
	escape_setup
	echo "mine" >"$T/rw/own.txt"
	pyapp \
		"import fcntl, struct" \
		"F_SETDELEG = 1040" \
		"def deleg(p):" \
		"    fd = os.open(p, os.O_RDONLY)" \
		"    try:" \
		"        fcntl.fcntl(fd, F_SETDELEG, struct.pack('IHH', 0, fcntl.F_RDLCK, 0))" \
		"        fcntl.fcntl(fd, F_SETDELEG, struct.pack('IHH', 0, fcntl.F_UNLCK, 0))" \
		"    finally:" \
		"        os.close(fd)" \
		"for d in ('ro', 'rw'):" \
		"    attempt(d + '-deleg-dir', lambda: deleg('$T/%s' % d))" \
		"attempt('ro-deleg', lambda: deleg('$T/ro/data.txt'))" \
		"attempt('rw-deleg', lambda: deleg('$T/rw/own.txt'))"
	run_plain python3 "$T/app.py"
	grep -qx "ro-deleg ERR EINVAL" "$T/out" && skip "no F_SETDELEG before 6.19"
	expect_line "$T/out" "ro-deleg ok"
	expect_line "$T/out" "ro-deleg-dir ok"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "ro-deleg EACCES"
	expect_line "$T/out" "ro-deleg-dir EACCES"
	expect_line "$T/out" "rw-deleg ok"
	expect_line "$T/out" "rw-deleg-dir ok"
	expect_grep "$T/err" "^pysb-bpf: deny file lock\(write\) $T/ro/data.txt "
}

# The machine's TLS keys sit beside the CA certificates every TLS client reads: the
# implicit rules grant the certificates, never /etc/ssl/private.
test_escape_tls_private_keys_not_implicit() {
	escape_setup
	mkdir -p /etc/ssl/private
	echo "KEY-$T" >/etc/ssl/private/pysb-e2e.key
	chmod 600 /etc/ssl/private/pysb-e2e.key
	pyapp \
		"attempt('key', lambda: print(read('/etc/ssl/private/pysb-e2e.key').strip()))" \
		"import glob" \
		"attempt('certs', lambda: read(sorted(glob.glob('/etc/ssl/certs/*.pem'))[0]))" \
		"attempt('openssl-cnf', lambda: read('/etc/ssl/openssl.cnf'))"
	run_plain python3 "$T/app.py"
	expect_line "$T/out" "KEY-$T"
	run_sb "$T/policy" "$T/app.py"
	rm -f /etc/ssl/private/pysb-e2e.key
	expect_rc 0
	expect_line "$T/out" "key EACCES"
	expect_line "$T/out" "certs ok"
	expect_line "$T/out" "openssl-cnf ok"
	expect_no_grep "$T/out" "KEY-"
}

# The owner may change a file's inode flags (append-only, no-atime, no-dump, ...) through a
# read-only descriptor, on ext4 as on xfs, btrfs and tmpfs: a change to a file the policy
# only lets the program read. Needs WRITE, like chmod.
test_escape_inode_flags_of_read_only_file_need_write() {
	escape_ext4_ro_rw
	pyapp \
		"import fcntl, struct" \
		"FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_NODUMP_FL = 0x80086601, 0x40086602, 0x40" \
		"def nodump(p):" \
		"    fd = os.open(p, os.O_RDONLY)" \
		"    try:" \
		"        flags = struct.unpack('l', fcntl.ioctl(fd, FS_IOC_GETFLAGS, bytes(8)))[0]" \
		"        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack('l', flags | FS_NODUMP_FL))" \
		"        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack('l', flags))" \
		"    finally:" \
		"        os.close(fd)" \
		"attempt('ro-setflags', lambda: nodump('$T/ext/ro/f'))" \
		"attempt('rw-setflags', lambda: nodump('$T/ext/rw/f'))"
	run_plain python3 "$T/app.py"
	expect_line "$T/out" "ro-setflags ok"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "ro-setflags EACCES"
	expect_line "$T/out" "rw-setflags ok"
	expect_grep "$T/err" "^pysb-bpf: deny file setattr\(write\) $T/ext/ro/f "
}

# A 32-bit program's ioctls take the kernel's compat path and, since 6.8 (and in Debian's
# 6.1), its own LSM hook, file_ioctl_compat: FS_IOC32_SETFLAGS on a read-only file must
# need WRITE there as on the 64-bit path (a 64-bit process reaches the path too, through
# int $0x80).
test_escape_inode_flags_by_32bit_ioctl_need_write() {
	helper="$REPO/build/e2e/compat_ioctl"
	[ -x "$helper" ] || fail "build/e2e/compat_ioctl missing (make e2e builds it)"
	escape_ext4_ro_rw
	printf 'expose-ro=%s\n' "$REPO/build/e2e" >>"$T/policy"
	run_plain "$helper" "$T/ext/ro/f"
	grep -qx "compat-setflags no-ia32" "$T/out" && skip "this kernel has no 32-bit system calls"
	expect_line "$T/out" "compat-setflags ok"
	run_sb "$T/policy" "$helper" "$T/ext/ro/f"
	expect_rc 0
	expect_line "$T/out" "compat-setflags errno=13"
	expect_grep "$T/err" "^pysb-bpf: deny file setattr\(write\) $T/ext/ro/f "
	run_sb "$T/policy" "$helper" "$T/ext/rw/f"
	expect_rc 0
	expect_line "$T/out" "compat-setflags ok"
}

# file_setattr(2) (6.17+) sets what FS_IOC_FSSETXATTR sets (no-dump, no-atime, project id,
# ...) by path: no open, no ioctl, only an O_PATH descriptor or none. It must need WRITE as
# the ioctl does. Skipped on kernels without the system call.
test_escape_file_setattr_syscall_needs_write() {
	escape_ext4_ro_rw
	pyapp \
		"import ctypes, struct" \
		"libc = ctypes.CDLL(None, use_errno=True)" \
		"GETATTR, SETATTR, AT_FDCWD, NODUMP = 468, 469, -100, 0x80" \
		"def call(nr, path, buf):" \
		"    if libc.syscall(nr, AT_FDCWD, path.encode(), buf, 24, 0) < 0:" \
		"        e = ctypes.get_errno()" \
		"        raise (PermissionError if e in (1, 13) else OSError)(e, os.strerror(e))" \
		"def nodump(path):" \
		"    buf = ctypes.create_string_buffer(24)" \
		"    call(GETATTR, path, buf)" \
		"    old = struct.unpack_from('Q', buf.raw)[0]" \
		"    struct.pack_into('Q', buf, 0, old | NODUMP)" \
		"    call(SETATTR, path, buf)" \
		"    struct.pack_into('Q', buf, 0, old)" \
		"    call(SETATTR, path, buf)" \
		"attempt('ro-file-setattr', lambda: nodump('$T/ext/ro/f'))" \
		"attempt('rw-file-setattr', lambda: nodump('$T/ext/rw/f'))"
	run_plain python3 "$T/app.py"
	grep -qx "ro-file-setattr ERR ENOSYS" "$T/out" && skip "no file_setattr(2) before 6.17"
	expect_line "$T/out" "ro-file-setattr ok"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "ro-file-setattr EACCES"
	expect_line "$T/out" "rw-file-setattr ok"
	expect_grep "$T/err" "^pysb-bpf: deny file setattr\(write\) $T/ext/ro/f "
}

# ext4 lets a file's owner, through a read-only descriptor, change its generation number,
# migrate it to extents, make it read-only for good with fs-verity, and set an encryption
# policy on an empty directory (nothing can be created in it without the key). Each is a
# change to what the policy only lets the program read: WRITE. The same ioctls on a
# read-write tree work.
test_escape_ext4_ioctls_of_read_only_file_need_write() {
	escape_setup
	identity_ext4 "$T/ext" -O verity,encrypt
	# Files made before the file system had extents (what EXT4_IOC_MIGRATE converts), without
	# metadata checksums (with them, ext4 refuses a new generation number).
	identity_ext4 "$T/old" -O ^extent,^64bit,^metadata_csum
	for d in plain ro rw; do
		mkdir -p "$T/ext/$d/empty" "$T/old/$d"
		echo data >"$T/ext/$d/f"
		echo data >"$T/old/$d/f"
	done
	umount "$T/old" && tune2fs -O extent "$T/old.img" >/dev/null && mount -o loop "$T/old.img" "$T/old" ||
		fail "cannot give $T/old extents"
	printf 'expose-ro=%s\nexpose-rw=%s\nexpose-ro=%s\nexpose-rw=%s\n' "$T/ext/ro" \
		"$T/ext/rw" "$T/old/ro" "$T/old/rw" >>"$T/policy"
	cat >"$T/lib/ext4_ioctls.py" <<EOF
import fcntl, os, struct, sys
sys.path.insert(0, "$T/lib")
from probe_lib import attempt
GETVERSION, SETVERSION, MIGRATE = 0x80086603, 0x40086604, 0x6609
ENABLE_VERITY, SET_ENCRYPTION_POLICY = 0x40806685, 0x800c6613
def on(path, cmd, arg):
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, cmd, arg)
    finally:
        os.close(fd)
def generation(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        old = fcntl.ioctl(fd, GETVERSION, bytes(8))
        fcntl.ioctl(fd, SETVERSION, struct.pack("l", struct.unpack("l", old)[0] + 1))
    finally:
        os.close(fd)
for d in sys.argv[1:]:
    ext, old = "$T/ext/" + d, "$T/old/" + d
    attempt(d + "-setversion", lambda: generation(old + "/f"))
    attempt(d + "-migrate", lambda: on(old + "/f", MIGRATE, 0))
    attempt(d + "-verity", lambda: on(ext + "/f", ENABLE_VERITY,
                                      struct.pack("IIII", 1, 1, 4096, 0) + bytes(112)))
    attempt(d + "-encrypt", lambda: on(ext + "/empty", SET_ENCRYPTION_POLICY,
                                       struct.pack("BBBB", 0, 1, 4, 0) + b"pysb-e2e"))
EOF
	run_plain python3 "$T/lib/ext4_ioctls.py" plain
	for op in setversion migrate verity encrypt; do
		expect_line "$T/out" "plain-$op ok"
	done
	run_sb "$T/policy" "$T/lib/ext4_ioctls.py" ro rw
	expect_rc 0
	for op in setversion migrate verity encrypt; do
		expect_line "$T/out" "ro-$op EACCES"
		expect_line "$T/out" "rw-$op ok"
	done
	expect_grep "$T/err" "^pysb-bpf: deny file setattr\(write\) $T/ext/ro/f "
	expect_grep "$T/err" "^pysb-bpf: deny file setattr\(write\) $T/ext/ro/empty "
	expect_grep "$T/err" "^pysb-bpf: deny file setattr\(write\) $T/old/ro/f "
}

# btrfs_ioctl_lib: $T/lib/btrfs_lib.py, ioctl_on(DIR, CMD, ARG) for the btrfs tests' scripts.
# btrfs_scratch [MOUNT-OPTIONS]: a fresh btrfs at $T/b, unmounted at the test's end.
btrfs_scratch() {
	vm_module btrfs
	mkdir "$T/b"
	truncate -s 128M "$T/b.img" && mkfs.btrfs -q "$T/b.img" >/dev/null || fail "mkfs.btrfs failed"
	# shellcheck disable=SC2064 # expand now
	trap "umount '$T/b' 2>/dev/null" EXIT
	mount -o "loop${1:+,$1}" "$T/b.img" "$T/b" || fail "cannot mount a btrfs image"
}

btrfs_ioctl_lib() {
	cat >"$T/lib/btrfs_lib.py" <<'EOF'
import fcntl, os
def ioctl_on(d, cmd, arg):  # 4 KiB arguments: only a mutable buffer goes through whole
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(fd, cmd, bytearray(arg))
    finally:
        os.close(fd)
EOF
}

# btrfs creates and destroys subvolumes and snapshots by ioctl on a directory, never through
# path_mkdir or path_rmdir: a subvolume made in a directory the policy only lets the
# program read is a write there. Needs WRITE on the directory, as mkdir does.
test_escape_btrfs_subvolume_in_read_only_dir_needs_write() {
	escape_setup
	btrfs_scratch
	mkdir "$T/b/plain" "$T/b/ro" "$T/b/rw"
	btrfs -q subvolume create "$T/b/src" >/dev/null || fail "btrfs subvolume create failed"
	printf 'expose-ro=%s\nexpose-ro=%s\nexpose-rw=%s\n' "$T/b/src" "$T/b/ro" "$T/b/rw" \
		>>"$T/policy"
	btrfs_ioctl_lib
	cat >"$T/lib/btrfs_ioctls.py" <<EOF
import os, struct, sys
sys.path.insert(0, "$T/lib")
from probe_lib import attempt
from btrfs_lib import ioctl_on
SNAP_CREATE_V2, SUBVOL_CREATE = 0x50009417, 0x5000940e
def vol_args(fd, name):  # struct btrfs_ioctl_vol_args: fd, name[4088]
    return struct.pack("q", fd) + name.encode().ljust(4088, b"\\0")
def snapshot(d):  # struct btrfs_ioctl_vol_args_v2: fd, transid, flags, 32 bytes, name
    src = os.open("$T/b/src", os.O_RDONLY | os.O_DIRECTORY)
    try:
        ioctl_on(d, SNAP_CREATE_V2, struct.pack("qQQ", src, 0, 0) + bytes(32) +
                 b"snap".ljust(4040, b"\\0"))
    finally:
        os.close(src)
for d in sys.argv[1:]:
    attempt(d + "-subvol", lambda: ioctl_on("$T/b/" + d, SUBVOL_CREATE, vol_args(0, "vol")))
    attempt(d + "-snapshot", lambda: snapshot("$T/b/" + d))
    for name in ("vol", "snap"):
        print(d, name, "exists" if os.path.isdir("$T/b/%s/%s" % (d, name)) else "absent")
EOF
	run_plain python3 "$T/lib/btrfs_ioctls.py" plain
	expect_rc 0
	expect_line "$T/out" "plain-subvol ok"
	expect_line "$T/out" "plain-snapshot ok"
	expect_line "$T/out" "plain vol exists"
	run_sb "$T/policy" "$T/lib/btrfs_ioctls.py" ro rw
	expect_rc 0
	expect_line "$T/out" "ro-subvol EACCES"
	expect_line "$T/out" "ro-snapshot EACCES"
	expect_line "$T/out" "ro vol absent"
	expect_line "$T/out" "ro snap absent"
	expect_line "$T/out" "rw-subvol ok"
	expect_line "$T/out" "rw-snapshot ok"
	expect_line "$T/out" "rw snap exists"
	expect_grep "$T/err" "^pysb-bpf: deny file setattr\(write\) $T/b/ro "
}

# A btrfs subvolume destroyed by ioctl is an `rm -r` no hook sees: by name, of a child
# that is a read-only rule's own directory; in V2, by id, of any subvolume of the file
# system, wherever it lies (found by an adversary, on a btrfs mounted with
# user_subvol_rm_allowed, which lets a user without CAP_SYS_ADMIN destroy the subvolumes
# it may write). Never from a sandbox; rmdir(2) of an empty subvolume works, as rmdir.
test_escape_btrfs_subvolume_destroy_refused() {
	escape_setup
	local id v
	btrfs_scratch user_subvol_rm_allowed
	mkdir "$T/b/rw"
	for v in rw/data rw/gone rw/empty rw/mine secret; do
		btrfs -q subvolume create "$T/b/$v" >/dev/null || fail "btrfs subvolume create $v failed"
	done
	echo kept >"$T/b/rw/data/important.txt"
	echo hidden >"$T/b/secret/s.txt"
	echo x >"$T/b/rw/gone/f"
	echo x >"$T/b/rw/mine/f"
	printf 'expose-rw=%s\nexpose-ro=%s\n' "$T/b/rw" "$T/b/rw/data" >>"$T/policy"
	btrfs_ioctl_lib
	cat >"$T/lib/btrfs_destroy.py" <<EOF
import os, struct, sys
sys.path.insert(0, "$T/lib")
from probe_lib import attempt
from btrfs_lib import ioctl_on
SNAP_DESTROY, SNAP_DESTROY_V2, SPEC_BY_ID = 0x5000940f, 0x5000943f, 1 << 4
def by_name(d, name):  # struct btrfs_ioctl_vol_args: fd, name[4088]
    ioctl_on(d, SNAP_DESTROY, struct.pack("q", 0) + name.encode().ljust(4088, b"\\0"))
def by_id(d, subvolid):  # struct btrfs_ioctl_vol_args_v2: fd, transid, flags, 32 bytes, id
    ioctl_on(d, SNAP_DESTROY_V2, struct.pack("qQQ", 0, 0, SPEC_BY_ID) + bytes(32) +
             struct.pack("Q", subvolid).ljust(4040, b"\\0"))
if sys.argv[1] == "plain":
    attempt("name-gone", lambda: by_name("$T/b/rw", "gone"))
    attempt("id-mine", lambda: by_id("$T/b/rw", int(sys.argv[2])))
else:
    attempt("name-data", lambda: by_name("$T/b/rw", "data"))
    attempt("id-secret", lambda: by_id("$T/b/rw", int(sys.argv[2])))
    attempt("rmdir-empty", lambda: os.rmdir("$T/b/rw/empty"))
for v in ("rw/gone", "rw/mine", "rw/data/important.txt", "secret/s.txt", "rw/empty"):
    print(v, "exists" if os.path.exists("$T/b/" + v) else "absent")
EOF
	# Unconfined, without capabilities: both destroy a subvolume and what it holds.
	id=$(btrfs inspect-internal rootid "$T/b/rw/mine") || fail "no subvolume id"
	run_plain setpriv --bounding-set=-all --inh-caps=-all python3 "$T/lib/btrfs_destroy.py" \
		plain "$id"
	expect_rc 0
	expect_line "$T/out" "name-gone ok"
	expect_line "$T/out" "id-mine ok"
	expect_line "$T/out" "rw/gone absent"
	expect_line "$T/out" "rw/mine absent"
	id=$(btrfs inspect-internal rootid "$T/b/secret") || fail "no subvolume id"
	run_sb "$T/policy" "$T/lib/btrfs_destroy.py" sandboxed "$id"
	expect_rc 0
	expect_line "$T/out" "name-data EPERM"
	expect_line "$T/out" "id-secret EPERM"
	expect_line "$T/out" "rmdir-empty ok"
	expect_line "$T/out" "rw/data/important.txt exists"
	expect_line "$T/out" "secret/s.txt exists"
	expect_line "$T/out" "rw/empty absent"
	expect_grep "$T/err" "^pysb-bpf: deny self subvol-destroy\(write\) $T/b/rw "
}

# A btrfs snapshot copies a whole subvolume as new inodes: a file an absolute ignore= path
# hides is an inode label, which the copy lacks (found by an adversary: the snapshot of a
# read-only subvolume made in an expose-rw= tree, the hidden file read there). Where the
# sandbox hides inodes, no snapshot; name patterns hold on the copy's names. The same
# snapshot under a policy hiding nothing works (the allowed neighbour, also in
# test_escape_btrfs_subvolume_in_read_only_dir_needs_write).
test_escape_btrfs_snapshot_refused_where_inodes_are_hidden() {
	escape_setup
	btrfs_scratch
	mkdir "$T/b/rw"
	btrfs -q subvolume create "$T/b/src" >/dev/null || fail "btrfs subvolume create failed"
	echo hidden >"$T/b/src/secret.txt"
	echo hidden >"$T/b/src/.env"
	echo open >"$T/b/src/data.txt"
	cp "$T/policy" "$T/policy-plain"
	printf 'expose-ro=%s\nexpose-rw=%s\nignore=.env\n' "$T/b/src" "$T/b/rw" >>"$T/policy-plain"
	cp "$T/policy-plain" "$T/policy"
	printf 'ignore=%s/b/src/secret.txt\n' "$T" >>"$T/policy"
	btrfs_ioctl_lib
	cat >"$T/lib/btrfs_snap.py" <<EOF
import os, struct, sys
sys.path.insert(0, "$T/lib")
from probe_lib import attempt, read
from btrfs_lib import ioctl_on
SNAP_CREATE, SNAP_CREATE_V2 = 0x50009401, 0x50009417
def v1(name):  # struct btrfs_ioctl_vol_args: fd, name[4088]
    src = os.open("$T/b/src", os.O_RDONLY | os.O_DIRECTORY)
    try:
        ioctl_on("$T/b/rw", SNAP_CREATE, struct.pack("q", src) + name.encode().ljust(4088, b"\\0"))
    finally:
        os.close(src)
def v2(name):  # struct btrfs_ioctl_vol_args_v2: fd, transid, flags, 32 bytes, name
    src = os.open("$T/b/src", os.O_RDONLY | os.O_DIRECTORY)
    try:
        ioctl_on("$T/b/rw", SNAP_CREATE_V2, struct.pack("qQQ", src, 0, 0) + bytes(32) +
                 name.encode().ljust(4040, b"\\0"))
    finally:
        os.close(src)
tag = sys.argv[1]
attempt("secret", lambda: read("$T/b/src/secret.txt"))
attempt("snap1", lambda: v1(tag + "1"))
attempt("snap2", lambda: v2(tag + "2"))
for n in ("1", "2"):
    attempt("copy%s-secret" % n, lambda: print("read", read("$T/b/rw/%s%s/secret.txt" % (tag, n)).strip()))
    attempt("copy%s-env" % n, lambda: read("$T/b/rw/%s%s/.env" % (tag, n)))
    attempt("copy%s-data" % n, lambda: read("$T/b/rw/%s%s/data.txt" % (tag, n)))
EOF
	# Unconfined: both snapshots copy the file, readable there.
	run_plain python3 "$T/lib/btrfs_snap.py" plain
	expect_rc 0
	expect_line "$T/out" "snap1 ok"
	expect_line "$T/out" "snap2 ok"
	expect_line "$T/out" "read hidden"
	# Confined where secret.txt is hidden by its path: no snapshot, the file unread.
	run_sb "$T/policy" "$T/lib/btrfs_snap.py" conf
	expect_rc 0
	expect_line "$T/out" "secret EACCES"
	expect_line "$T/out" "snap1 EPERM"
	expect_line "$T/out" "snap2 EPERM"
	expect_no_grep "$T/out" "read hidden"
	[ ! -e "$T/b/rw/conf1" ] && [ ! -e "$T/b/rw/conf2" ] || fail "a snapshot was made"
	expect_grep "$T/err" "^pysb-bpf: deny self snapshot\(write\) $T/b/rw "
	# Hiding by name only: the snapshots work, and the pattern holds on the copy.
	run_sb "$T/policy-plain" "$T/lib/btrfs_snap.py" named
	expect_rc 0
	expect_line "$T/out" "snap1 ok"
	expect_line "$T/out" "snap2 ok"
	expect_line "$T/out" "copy1-data ok"
	expect_line "$T/out" "copy2-env EACCES"
}

# FAT keeps a file's read-only and hidden bits as attributes, which its owner changes by
# ioctl through a read-only descriptor: the write bits of the mode change without chmod
# (no path_chmod). Needs WRITE, as chmod does.
test_escape_fat_attributes_of_read_only_file_need_write() {
	escape_setup
	vm_module vfat nls_cp437 nls_ascii
	mkdir "$T/fat"
	truncate -s 32M "$T/fat.img" && mkfs.vfat "$T/fat.img" >/dev/null || fail "mkfs.vfat failed"
	# shellcheck disable=SC2064 # expand now
	trap "umount '$T/fat' 2>/dev/null" EXIT
	mount -o loop "$T/fat.img" "$T/fat" || fail "cannot mount a vfat image"
	mkdir "$T/fat/ro" "$T/fat/rw"
	echo data >"$T/fat/ro/f"
	echo data >"$T/fat/rw/f"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/fat/ro" "$T/fat/rw" >>"$T/policy"
	pyapp \
		"import fcntl, struct" \
		"GET_ATTRIBUTES, SET_ATTRIBUTES, ATTR_RO = 0x80047210, 0x40047211, 0x01" \
		"def read_only(p):" \
		"    fd = os.open(p, os.O_RDONLY)" \
		"    try:" \
		"        old = struct.unpack('I', fcntl.ioctl(fd, GET_ATTRIBUTES, bytes(4)))[0]" \
		"        fcntl.ioctl(fd, SET_ATTRIBUTES, struct.pack('I', old | ATTR_RO))" \
		"    finally:" \
		"        os.close(fd)" \
		"for d in ('ro', 'rw'):" \
		"    p = '$T/fat/%s/f' % d" \
		"    attempt(d + '-fatattr', lambda: read_only(p))" \
		"    print(d + '-mode', oct(os.stat(p).st_mode & 0o777), flush=True)"
	run_plain python3 "$T/app.py"
	expect_line "$T/out" "ro-fatattr ok"
	expect_line "$T/out" "ro-mode 0o555"
	umount "$T/fat" && mount -o loop "$T/fat.img" "$T/fat" || fail "cannot remount"
	python3 -c "import fcntl, os, struct
for d in ('ro', 'rw'):
    fd = os.open('$T/fat/%s/f' % d, os.O_RDONLY)
    fcntl.ioctl(fd, 0x40047211, struct.pack('I', 0x20))
    os.close(fd)" || fail "cannot reset the attributes"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "ro-fatattr EACCES"
	expect_line "$T/out" "ro-mode 0o755"
	expect_line "$T/out" "rw-fatattr ok"
	expect_line "$T/out" "rw-mode 0o555"
	expect_grep "$T/err" "^pysb-bpf: deny file setattr\(write\) $T/fat/ro/f "
}

# A rule lets the program use its object and what lies below, not decide who else may:
# the mode, owner and ACL of the rule's own object belong to the directory above. With
# expose-rw= on a shared sticky directory (/tmp), `chmod 0777` took the sticky bit away
# from every user of the machine; /dev/null, which every policy may write, could be made
# 0600 for everyone. Both need WRITE on the directory above, as do inode flags set by ioctl
# and a chmod through another name (a hard link made in an rw tree); the files below the
# rule, a rule whose directory above is writable, a chmod to the mode the object already
# has (shutil.copytree onto the rule's directory) and a chown to its owner (GNU tar as
# root on ./) stay the program's.
test_escape_rule_root_metadata_needs_parent_write() {
	escape_setup
	mkdir -m 1777 "$T/shared"
	mkdir -p "$T/outer/inner"
	echo mine >"$T/shared/f"
	echo "setting=1" >"$T/app.conf"
	printf 'expose-rw=%s\nexpose-rw=%s\nexpose-rw=%s\nexpose-rw=%s\n' "$T/shared" "$T/outer" \
		"$T/outer/inner" "$T/app.conf" >>"$T/policy"
	pyapp \
		"import fcntl, struct" \
		"def nodump(p):  # FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_NODUMP_FL" \
		"    fd = os.open(p, os.O_RDONLY)" \
		"    try:" \
		"        flags = struct.unpack('l', fcntl.ioctl(fd, 0x80086601, bytes(8)))[0]" \
		"        fcntl.ioctl(fd, 0x40086602, struct.pack('l', flags | 0x40))" \
		"        fcntl.ioctl(fd, 0x40086602, struct.pack('l', flags))" \
		"    finally:" \
		"        os.close(fd)" \
		"def link_chmod():  # another name in an rw tree says nothing of the rule's directory" \
		"    os.link('$T/app.conf', '$T/rw/alias')" \
		"    try:" \
		"        os.chmod('$T/rw/alias', 0o666)" \
		"    finally:" \
		"        os.unlink('$T/rw/alias')" \
		"ACL = struct.pack('<I', 2) + b''.join(struct.pack('<HHI', tag, perm, 0xffffffff)" \
		"    for tag, perm in ((1, 7), (4, 7), (0x20, 7)))  # user::rwx group::rwx other::rwx" \
		"S = '$T/shared'" \
		"attempt('devnull-chmod', lambda: os.chmod('/dev/null', 0o660))" \
		"print('devnull-mode', oct(os.stat('/dev/null').st_mode & 0o777), flush=True)" \
		"attempt('devnull-back', lambda: os.chmod('/dev/null', 0o666))" \
		"attempt('devnull-chown', lambda: os.chown('/dev/null', -1, 65534))" \
		"attempt('devnull-chown-back', lambda: os.chown('/dev/null', -1, 0))" \
		"attempt('shared-chmod', lambda: os.chmod(S, 0o777))" \
		"print('shared-mode', oct(os.stat(S).st_mode & 0o7777), flush=True)" \
		"attempt('shared-chown', lambda: os.chown(S, -1, 65534))" \
		"attempt('shared-acl', lambda: os.setxattr(S, 'system.posix_acl_access', ACL))" \
		"attempt('shared-setflags', lambda: nodump(S))" \
		"attempt('link-chmod', link_chmod)" \
		"attempt('shared-same-owner', lambda: os.chown(S, os.stat(S).st_uid, os.stat(S).st_gid))" \
		"attempt('shared-chown-nothing', lambda: os.chown(S, -1, -1))" \
		"attempt('shared-same-mode', lambda: os.chmod(S, os.stat(S).st_mode & 0o7777))" \
		"attempt('below-chmod', lambda: os.chmod(S + '/f', 0o600))" \
		"attempt('inner-chmod', lambda: os.chmod('$T/outer/inner', 0o700))"
	trap 'chmod 666 /dev/null; chgrp 0 /dev/null' EXIT
	run_plain python3 "$T/app.py"
	for op in devnull-chmod devnull-chown shared-chmod shared-chown shared-acl shared-setflags \
		link-chmod; do
		expect_line "$T/out" "$op ok"
	done
	expect_line "$T/out" "devnull-mode 0o660"
	expect_line "$T/out" "shared-mode 0o777"
	chmod 666 /dev/null
	chgrp 0 /dev/null "$T/shared"
	chmod 1777 "$T/shared"
	chmod 644 "$T/app.conf"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	for op in devnull-chmod devnull-chown shared-chmod shared-chown shared-acl shared-setflags \
		link-chmod; do
		expect_line "$T/out" "$op EACCES"
	done
	expect_line "$T/out" "shared-same-owner ok"
	expect_line "$T/out" "shared-chown-nothing ok"
	expect_line "$T/out" "devnull-mode 0o666"
	expect_line "$T/out" "shared-mode 0o1777"
	expect_line "$T/out" "shared-same-mode ok"
	expect_line "$T/out" "below-chmod ok"
	expect_line "$T/out" "inner-chmod ok"
	expect_grep "$T/err" "^pysb-bpf: deny file chmod\(write\) $T/shared "
	expect_grep "$T/err" "^pysb-bpf: deny file chmod\(write\) /dev/null "
}

# The directory above a rule's object that is the root of a bind mount of a subdirectory
# (a container volume, systemd's PrivateTmp) is its mountpoint's, not the hidden parent
# of the subdirectory on the mounted file system: with that parent writable (another
# rule), the mode of the mounted directory is still not the program's to change.
test_escape_rule_root_metadata_bind_mount_root() {
	escape_setup
	mkdir -p "$T/src/sub" "$T/bm"
	mount --bind "$T/src/sub" "$T/bm" || fail "cannot bind-mount"
	# shellcheck disable=SC2064 # expand now
	trap "umount '$T/bm' 2>/dev/null" EXIT
	printf 'expose-rw=%s\nexpose-rw=%s\n' "$T/src" "$T/bm" >>"$T/policy"
	pyapp \
		"attempt('bm-chmod', lambda: os.chmod('$T/bm', 0o700))" \
		"attempt('src-sub-chmod', lambda: os.chmod('$T/src/sub', 0o750))"
	run_plain python3 "$T/app.py"
	expect_line "$T/out" "bm-chmod ok"
	chmod 755 "$T/src/sub"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "bm-chmod EACCES"
	expect_line "$T/out" "src-sub-chmod ok"
	expect_grep "$T/err" "^pysb-bpf: deny file chmod\(write\) $T/bm "
}

# A POSIX ACL is a chmod by another name (other::rw on a file the task owns). From 6.2 on,
# setxattr and removexattr of system.posix_acl_* go to vfs_set_acl and vfs_remove_acl and
# their own LSM hooks, never to inode_setxattr: they must need WRITE there, as chmod does.
test_escape_posix_acl_of_read_only_file_needs_write() {
	escape_ext4_ro_rw
	chmod 600 "$T/ext/ro/f" "$T/ext/rw/f"
	pyapp \
		"import struct" \
		"ACL = struct.pack('<I', 2) + b''.join(struct.pack('<HHI', tag, perm, 0xffffffff)" \
		"    for tag, perm in ((1, 6), (4, 4), (0x20, 6)))  # user::rw- group::r-- other::rw-" \
		"for d in ('ro', 'rw'):" \
		"    p = '$T/ext/%s/f' % d" \
		"    attempt(d + '-setacl', lambda: os.setxattr(p, 'system.posix_acl_access', ACL))" \
		"    print(d + '-mode', oct(os.stat(p).st_mode & 0o777), flush=True)" \
		"    attempt(d + '-rmacl', lambda: os.removexattr(p, 'system.posix_acl_access'))"
	run_plain python3 "$T/app.py"
	expect_line "$T/out" "ro-setacl ok"
	expect_line "$T/out" "ro-mode 0o646"
	expect_line "$T/out" "ro-rmacl ok"
	chmod 600 "$T/ext/ro/f" "$T/ext/rw/f"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "ro-setacl EACCES"
	expect_line "$T/out" "ro-mode 0o600"
	expect_line "$T/out" "ro-rmacl EACCES"
	expect_line "$T/out" "rw-setacl ok"
	expect_line "$T/out" "rw-mode 0o646"
	expect_grep "$T/err" "^pysb-bpf: deny file setxattr\(write\) $T/ext/ro/f "
	[ "$(stat -c %a "$T/ext/ro/f")" = 600 ] || fail "the read-only file's mode changed"
}

# A run may write its project, and so its venv's links. It re-points .venv/bin/python
# through a link named bin (A/bin -> a home's bin) to the same python3: the next run of
# `.venv/bin/python` must not grant that home as the "venv" the link seems to live in.
test_escape_relinked_venv_bin_grants_nothing_outside() {
	escape_setup
	mkdir -p "$T/home/bin"
	echo "ssh key" >"$T/home/secret.txt"
	ln -s /usr/bin/python3 "$T/home/bin/python3"
	python3 -m venv --without-pip "$T/rw/.venv" || fail "python3 -m venv failed"
	printf 'expose-rw=%s\n' "$T/rw" >"$T/policy.rw"
	cat "$T/policy" >>"$T/policy.rw"
	# unconfined, the home's secret is readable: what the rewiring is after
	run_plain cat "$T/home/secret.txt"
	expect_rc 0
	# run one, confined, rewires its own venv (it may: the tree is rw)
	cd "$T/rw" || fail "no $T/rw"
	run_sb "$T/policy.rw" python3 -c "import os
os.mkdir('A'); os.symlink('$T/home/bin', 'A/bin')
os.unlink('.venv/bin/python'); os.symlink('../../A/bin/python3', '.venv/bin/python')
print('rewired', os.readlink('.venv/bin/python'))"
	expect_rc 0
	expect_line "$T/out" "rewired ../../A/bin/python3"
	# run two, as the user types it: the venv works, the home stays out of reach
	run_sb "$T/policy.rw" .venv/bin/python -c "import sys
sys.path.insert(0, '$T/lib'); from probe_lib import *
print('prefix', sys.prefix)
attempt('venv', lambda: read('$T/rw/.venv/pyvenv.cfg'))
attempt('home', lambda: read('$T/home/secret.txt'))"
	expect_rc 0
	expect_line "$T/out" "prefix $T/rw/.venv"
	expect_line "$T/out" "venv ok"
	expect_line "$T/out" "home EACCES"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) $T/home/secret.txt "
}

# The policy file in a tree the policy lets the program write (a project with
# expose-rw=. and its .py-sandboxes): the next run would obey what the program wrote. The
# program may read it, not write, remove, rename it away or over it, nor rename a
# directory above it; everything else in the tree stays writable.
test_escape_policy_file_in_rw_tree_kept() {
	escape_setup
	mkdir -p "$T/proj/sub" "$T/proj/x"
	printf 'expose-rw=%s\nexpose-ro=%s\n' "$T/proj" "$T/lib" >"$T/proj/sub/.py-sandboxes"
	cp "$T/proj/sub/.py-sandboxes" "$T/policy.orig"
	pol=$T/proj/sub/.py-sandboxes
	probe_py "$T/proj/app.py" \
		"attempt('read', lambda: read('$pol'))" \
		"attempt('write', lambda: write('$pol', 'expose-rw=/\n'))" \
		"attempt('unlink', lambda: os.unlink('$pol'))" \
		"attempt('rename-away', lambda: os.rename('$pol', '$pol.old'))" \
		"write('$T/proj/sub/new', 'expose-rw=/\n')" \
		"attempt('rename-over', lambda: os.rename('$T/proj/sub/new', '$pol'))" \
		"attempt('other-write', lambda: write('$T/proj/sub/other', 'x'))" \
		"attempt('other-unlink', lambda: os.unlink('$T/proj/sub/other'))" \
		"attempt('other-rename-dir', lambda: os.rename('$T/proj/x', '$T/proj/y'))" \
		"write('$T/proj/m', 'x')" \
		"attempt('move-into-kept-dir', lambda: os.rename('$T/proj/m', '$T/proj/sub/m'))" \
		"attempt('rename-dir', lambda: os.rename('$T/proj/sub', '$T/proj/sub2'))"
	# unconfined, on a copy: every change works
	cp -a "$T/proj" "$T/copy"
	sed "s|$T/proj|$T/copy|g" "$T/proj/app.py" >"$T/copy/app.py"
	run_plain python3 "$T/copy/app.py"
	for l in write unlink other-write other-unlink other-rename-dir move-into-kept-dir rename-dir; do
		expect_line "$T/out" "$l ok"
	done
	run_sb "$pol" "$T/proj/app.py"
	expect_rc 0
	expect_line "$T/out" "read ok"
	for l in write unlink rename-away rename-over rename-dir; do
		expect_line "$T/out" "$l EACCES"
	done
	for l in other-write other-unlink other-rename-dir move-into-kept-dir; do
		expect_line "$T/out" "$l ok"
	done
	cmp -s "$pol" "$T/policy.orig" || fail "the policy file changed"
	expect_grep "$T/err" "^pysb-bpf: deny file unlink\(write\) $pol "
	# the run after it obeys the same policy
	run_sb "$pol" /usr/bin/python3 -c "print(open('$T/other/secret.txt').read())"
	expect_rc 1
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) $T/other/secret.txt "
	# named through a link in the tree: the link keeps its name and its target
	ln -s sub/.py-sandboxes "$T/proj/policy-link"
	echo 'expose-rw=/' >"$T/proj/evil"
	probe_py "$T/proj/app2.py" \
		"attempt('link-unlink', lambda: os.unlink('$T/proj/policy-link'))" \
		"os.symlink('evil', '$T/proj/evil-link')" \
		"attempt('link-over', lambda: os.rename('$T/proj/evil-link', '$T/proj/policy-link'))" \
		"attempt('evil-write', lambda: write('$T/proj/evil', 'expose-rw=/\n'))"
	run_sb "$T/proj/policy-link" "$T/proj/app2.py"
	expect_rc 0
	expect_line "$T/out" "link-unlink EACCES"
	expect_line "$T/out" "link-over EACCES"
	expect_line "$T/out" "evil-write ok"
	[ "$(readlink "$T/proj/policy-link")" = sub/.py-sandboxes ] || fail "the link was re-pointed"
}

# An explicit rule inside a tree the program may write (found by an adversary): a file
# made read-only by a deeper expose-ro= was unlinked and written anew within the run, and
# that file, or a link a rule was named through, replaced by a link made the next run's
# rule grant what the link named (a secret, /etc). The rule's object and the links and
# directories on its way keep their names; the rest of the tree stays writable.
test_escape_rule_names_in_rw_tree_kept() {
	escape_setup
	echo "TOPSECRET-5521" >"$T/other/secret.txt"
	mkdir -p "$T/proj/d" "$T/dataset"
	echo safe >"$T/proj/settings.toml"
	echo data >"$T/dataset/x"
	ln -s "$T/dataset" "$T/proj/data"
	printf 'expose-rw=%s\nexpose-ro=%s/settings.toml\nexpose-ro=%s/data\nexpose-ro=%s\n' \
		"$T/proj" "$T/proj" "$T/proj" "$T/lib" >"$T/proj/.py-sandboxes"
	pol=$T/proj/.py-sandboxes
	probe_py "$T/proj/app.py" \
		"attempt('read-settings', lambda: read('$T/proj/settings.toml'))" \
		"attempt('read-data', lambda: read('$T/proj/data/x'))" \
		"attempt('write-settings', lambda: write('$T/proj/settings.toml', 'pwned'))" \
		"attempt('unlink-settings', lambda: os.unlink('$T/proj/settings.toml'))" \
		"write('$T/proj/new', 'pwned')" \
		"attempt('rename-over-settings', lambda: os.rename('$T/proj/new', '$T/proj/settings.toml'))" \
		"attempt('unlink-data', lambda: os.unlink('$T/proj/data'))" \
		"os.symlink('$T/other', '$T/proj/evil')" \
		"attempt('rename-over-data', lambda: os.rename('$T/proj/evil', '$T/proj/data'))" \
		"attempt('other-unlink', lambda: os.unlink('$T/proj/new'))" \
		"attempt('other-rename-dir', lambda: os.rename('$T/proj/d', '$T/proj/d2'))"
	# unconfined, on a copy: every change works
	cp -a "$T/proj" "$T/copy"
	sed "s|$T/proj|$T/copy|g" "$T/proj/app.py" >"$T/copy/app.py"
	run_plain python3 "$T/copy/app.py"
	for l in write-settings unlink-settings unlink-data other-rename-dir; do
		expect_line "$T/out" "$l ok"
	done
	run_sb "$pol" "$T/proj/app.py"
	expect_rc 0
	for l in write-settings unlink-settings rename-over-settings unlink-data rename-over-data; do
		expect_line "$T/out" "$l EACCES"
	done
	for l in read-settings read-data other-unlink other-rename-dir; do
		expect_line "$T/out" "$l ok"
	done
	[ "$(cat "$T/proj/settings.toml")" = safe ] || fail "settings.toml was replaced"
	[ "$(readlink "$T/proj/data")" = "$T/dataset" ] || fail "the link data was re-pointed"
	expect_grep "$T/err" "^pysb-bpf: deny file unlink\(write\) $T/proj/settings.toml "
	# the run after it grants what the rules named, nothing else
	run_sb "$pol" /usr/bin/python3 -c "print(open('$T/proj/data/x').read()); print(open('$T/other/secret.txt').read())"
	expect_rc 1
	expect_line "$T/out" "data"
	expect_no_grep "$T/out" "TOPSECRET"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) $T/other/secret.txt "
}

# An include? whose file is missing, in a tree the program may write (found by an
# adversary): run one wrote it, run two obeyed the program's rules and read a secret. Such
# a policy is refused, saying why, until the file exists (then it is kept as the policy
# file is); a missing include? where the program cannot write stays silently skipped.
test_escape_absent_include_in_rw_tree_refused() {
	escape_setup
	echo "TOPSECRET-6613" >"$T/other/secret.txt"
	mkdir -p "$T/proj"
	pol=$T/proj/.py-sandboxes
	printf 'expose-rw=%s\nexpose-ro=%s\ninclude? "local.py-sandboxes"\n' "$T/proj" "$T/lib" >"$pol"
	probe_py "$T/proj/app.py" \
		"attempt('secret', lambda: read('$T/other/secret.txt'))" \
		"attempt('plant', lambda: write('$T/proj/local.py-sandboxes', 'expose-ro=$T/other\n'))"
	# unconfined, on a copy: both work
	cp -a "$T/proj" "$T/copy"
	sed "s|$T/proj|$T/copy|g" "$T/proj/app.py" >"$T/copy/app.py"
	run_plain python3 "$T/copy/app.py"
	expect_line "$T/out" "secret ok"
	expect_line "$T/out" "plant ok"
	run_sb "$pol" "$T/proj/app.py"
	expect_rc 125
	expect_grep "$T/err" "include\? names $T/proj/local.py-sandboxes, which does not exist, and the program may write $T/proj: "
	[ ! -e "$T/proj/local.py-sandboxes" ] || fail "the program ran and wrote the include"
	# missing where the program cannot write: skipped, the run goes on
	printf 'expose-rw=%s\nexpose-ro=%s\ninclude? "%s/absent.py-sandboxes"\n' "$T/proj" "$T/lib" "$T/ro" >"$pol"
	run_sb "$pol" /usr/bin/true
	expect_rc 0
	# the file made (empty): the run goes on, the file is kept
	printf 'expose-rw=%s\nexpose-ro=%s\ninclude? "local.py-sandboxes"\n' "$T/proj" "$T/lib" >"$pol"
	: >"$T/proj/local.py-sandboxes"
	run_sb "$pol" "$T/proj/app.py"
	expect_rc 0
	expect_line "$T/out" "secret EACCES"
	expect_line "$T/out" "plant EACCES"
	[ ! -s "$T/proj/local.py-sandboxes" ] || fail "the include was written"
}

# The program's script is granted READ as it was named. A run that may write its tree
# replaces app.py with a link to a file outside (/etc/shadow, or /): the next run of
# app.py must not grant what the link names.
test_escape_relinked_script_grants_nothing_outside() {
	escape_setup
	echo "TOPSECRET-7731" >"$T/other/secret.txt"
	probe_py "$T/rw/app.py" \
		"attempt('allowed', lambda: read('$T/ro/data.txt'))" \
		"os.unlink(__file__); os.symlink('$T/other/secret.txt', __file__)" \
		"print('relinked', flush=True)"
	# unconfined, the target is readable: what the link is after
	run_plain cat "$T/other/secret.txt"
	expect_line "$T/out" "TOPSECRET-7731"
	run_sb "$T/policy" "$T/rw/app.py"
	expect_rc 0
	expect_line "$T/out" "allowed ok"
	expect_line "$T/out" "relinked"
	[ -L "$T/rw/app.py" ] || fail "run one did not relink its script"
	run_sb "$T/policy" "$T/rw/app.py"
	[ "$RC" -ne 0 ] || fail "run two ran the link's target as its script"
	expect_no_grep "$T/err" "TOPSECRET"
	expect_grep "$T/err" "app.py is reached through the link $T/rw/app.py, in a directory the program may write"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) $T/other/secret.txt "
}

# A pyenv/asdf shim was resolved by running its `TOOL which NAME` before the sandbox
# existed, outside it (found by an adversary): under expose-rw= on its project, a program
# rewrote its own app.py into a four-line "shim" naming a script it wrote, and the user's
# next `pysb-bpf run app.py` (or `check app.py`) ran that script as root, in no cgroup.
# Shims are now read as pyenv and asdf read their version files, and nothing runs before
# the sandbox: `run app.py` is refused and says so. The planted script does its harm when
# run unconfined.
test_escape_planted_shim_never_runs_outside() {
	escape_setup
	local py
	py=$(command -v python3)
	probe_py "$T/rw/app.py" \
		"attempt('outside', lambda: write('$T/other/by-sandbox', 'x'))" \
		"attempt('own', lambda: write('$T/rw/evil.sh', '#!/bin/sh\\nid >$T/other/PWNED\\necho $py\\n'))" \
		"os.chmod('$T/rw/evil.sh', 0o755)" \
		"write(__file__, '#!/usr/bin/env bash\\nexec \"$T/rw/evil.sh\" exec \"\$program\" \"\$@\"\\n')" \
		"os.chmod(__file__, 0o755)" \
		"print('planted', flush=True)"
	cd "$T/rw" || fail "cd"
	run_sb "$T/policy" app.py
	expect_rc 0
	expect_line "$T/out" "outside EACCES"
	expect_line "$T/out" "own ok"
	expect_line "$T/out" "planted"
	[ ! -e "$T/other/PWNED" ] || fail "PWNED before the second run"
	run_sb "$T/policy" app.py
	[ ! -e "$T/other/PWNED" ] || fail "pysb-bpf ran the planted tool outside the sandbox: $(cat "$T/other/PWNED")"
	expect_rc 126
	expect_grep "$T/err" "app.py is a shim of $T/rw/evil.sh, whose versions pysb-bpf does not read"
	"$PYSB" check --policy "$T/policy" app.py >"$T/out" 2>"$T/err"
	[ ! -e "$T/other/PWNED" ] || fail "check ran the planted tool"
	# what the planted tool does when run unconfined: what the sandbox kept it from
	run_plain "$T/rw/evil.sh"
	[ -e "$T/other/PWNED" ] || fail "unconfined, the planted tool did not write outside"
}

# A venv's pyvenv.cfg in the project, read as root by the next compile (run, check, the
# daemon's reload) for a --copies venv's home (found by an adversary, round 29): the
# program made it a FIFO and the next `check` hung in the open; a link to /dev/zero was
# read until memory ran out. Only a regular file, through no link at its end, is read.
test_escape_planted_pyvenv_cfg_never_hangs_root() {
	escape_setup
	python3 -m venv --without-pip --copies "$T/rw/.venv" || fail "python3 -m venv failed"
	probe_py "$T/rw/app.py" \
		"cfg = '$T/rw/.venv/pyvenv.cfg'" \
		"attempt('fifo', lambda: (os.unlink(cfg), os.mkfifo(cfg)))" \
		"print('planted', flush=True)"
	cd "$T/rw" || fail "cd"
	timeout 60 "$PYSB" check --policy "$T/policy" -- .venv/bin/python app.py >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_grep "$T/out" "\.venv"
	run_sb "$T/policy" .venv/bin/python app.py
	expect_line "$T/out" "fifo ok"
	expect_line "$T/out" "planted"
	[ -p "$T/rw/.venv/pyvenv.cfg" ] || fail "no FIFO planted"
	timeout 60 "$PYSB" check --policy "$T/policy" -- .venv/bin/python app.py >"$T/out" 2>"$T/err"
	RC=$?
	[ "$RC" -ne 124 ] || fail "check, as root, hung on the planted FIFO"
	expect_rc 0
	rm "$T/rw/.venv/pyvenv.cfg"
	ln -s /dev/zero "$T/rw/.venv/pyvenv.cfg"
	timeout 60 "$PYSB" check --policy "$T/policy" -- .venv/bin/python app.py >"$T/out" 2>"$T/err"
	RC=$?
	[ "$RC" -ne 124 ] || fail "check, as root, read /dev/zero through the planted link"
	expect_rc 0
}

# pysb-bpf's own messages quote text a program may have written (found by an adversary,
# round 29): under expose-rw=. a program rewrote its app.py into a "shim" whose tool's
# name held an escape sequence, U+009B (8-bit CSI), a carriage return and a fake line;
# the next `run app.py` printed them, as root, on the user's terminal (the journal, for
# the daemon: a newline there starts a line of its own priority). Every message has its
# control characters, C1 ones and bytes that are not UTF-8 written \xNN.
test_escape_messages_never_carry_terminal_controls() {
	escape_setup
	probe_py "$T/rw/app.py" \
		"write(__file__, '#!/usr/bin/env bash\\nexec \"/x/\\x1b]0;owned\\x07\\u009b2K\\rpysb-bpf: all clear\" exec \"\$program\" \"\$@\"\\n')" \
		"os.chmod(__file__, 0o755)" \
		"print('planted', flush=True)"
	cd "$T/rw" || fail "cd"
	run_sb "$T/policy" python3 app.py
	expect_rc 0
	expect_line "$T/out" "planted"
	run_sb "$T/policy" app.py
	expect_rc 126
	! has_bytes "$T/err" '\x1b' || fail "an escape reached the terminal: $(cat -v "$T/err")"
	! has_bytes "$T/err" '\xc2\x9b' || fail "a C1 control reached the terminal: $(cat -v "$T/err")"
	! has_bytes "$T/err" '\r' || fail "a carriage return reached the terminal: $(cat -v "$T/err")"
	expect_grep "$T/err" 'app.py is a shim of /x/\\x1b\]0;owned\\x07\\xc2\\x9b2K\\x0dpysb-bpf: all clear, whose'
}

# The compile's warnings name files a program may have named (found by an adversary,
# round 29): under expose-rw=. a program made its app.py a link to a file it named with
# an escape sequence and U+009B, and the next run's warning ("its target (...) is not
# granted as the program's script") printed the name raw. Diagnostics are written as
# every message is: control characters, C1 ones too, \xNN.
test_escape_warnings_never_carry_terminal_controls() {
	escape_setup
	probe_py "$T/rw/app.py" \
		"target = '$T/rw/x\\x1b[2J\\u009b1Ay.py'" \
		"write(target, 'print(\"target\")\\n')" \
		"os.unlink(__file__); os.symlink(target, __file__)" \
		"print('relinked', flush=True)"
	cd "$T/rw" || fail "cd"
	run_sb "$T/policy" python3 app.py
	expect_rc 0
	expect_line "$T/out" "relinked"
	[ -L "$T/rw/app.py" ] || fail "run one did not relink its script"
	run_sb "$T/policy" python3 app.py
	! has_bytes "$T/err" '\x1b' || fail "an escape reached the terminal: $(cat -v "$T/err")"
	! has_bytes "$T/err" '\xc2\x9b' || fail "a C1 control reached the terminal: $(cat -v "$T/err")"
	expect_grep "$T/err" 'its target \(.*/x\\x1b\[2J\\xc2\\x9b1Ay\.py\) is not granted'
}

# `check` lists the links on the interpreter's way by name (found by an adversary, round
# 29): under expose-rw=. a program re-pointed its venv's python through a link it named
# with U+009B (8-bit CSI) and "2J", and the next `check` printed the name raw: a terminal
# cleared the listing. Control characters, C1 ones too, are written \xNN there.
test_escape_check_listing_never_carries_terminal_controls() {
	escape_setup
	mkdir -p "$T/rw/.venv/bin"
	ln -s "$(command -v python3)" "$T/rw/.venv/bin/python"
	probe_py "$T/rw/app.py" \
		"link = '$T/rw/.venv/x\\u009b2J'" \
		"os.symlink(os.readlink('$T/rw/.venv/bin/python'), link)" \
		"os.unlink('$T/rw/.venv/bin/python')" \
		"os.symlink(link, '$T/rw/.venv/bin/python')" \
		"print('relinked', flush=True)"
	cd "$T/rw" || fail "cd"
	run_sb "$T/policy" .venv/bin/python app.py
	expect_rc 0
	expect_line "$T/out" "relinked"
	"$PYSB" check --policy "$T/policy" -- .venv/bin/python app.py >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	! has_bytes "$T/out" '\xc2\x9b' || fail "a C1 control reached the terminal: $(cat -v "$T/out")"
	expect_grep "$T/out" '\.venv/x\\xC2\\x9B2J'
}

# What the user's own tools run from a tree the program may write (found by an adversary):
# with expose-rw= on a git project, the program appended core.fsmonitor to .git/config and
# the user's next `git status`, outside, ran it; with expose-rw= on a workspace, it
# rewrote another project's .py-sandboxes to expose-rw=/ and that project's next run read
# /etc/shadow. An existing .git and .py-sandboxes, in an rw directory or right below it,
# are kept read-only with their names; the rest of the tree stays writable, a new
# repository made by the program is its own, and a rule naming .git gives it the program.
test_escape_git_config_and_other_policy_kept_read_only() {
	escape_setup
	command -v git >/dev/null || skip "git not installed"
	mkdir -p "$T/ws/proj" "$T/ws/projb"
	git init -q "$T/ws/proj" || fail "git init"
	printf 'expose-ro=.\n' >"$T/ws/projb/.py-sandboxes"
	printf 'expose-rw=%s\nexpose-ro=%s\n' "$T/ws" "$T/lib" >"$T/policy"
	local plant="[core]
	fsmonitor = \"touch $T/PLANTED; false\""
	probe_py "$T/app.py" \
		"import sys; ws = sys.argv[1]" \
		"def append(p, s):" \
		"    with open(p, 'a') as f: f.write(s)" \
		"attempt('plant-config', lambda: append(ws + '/proj/.git/config', '''$plant\n'''))" \
		"attempt('plant-hook', lambda: write(ws + '/proj/.git/hooks/pre-commit', 'touch x'))" \
		"attempt('rewrite-policy-b', lambda: write(ws + '/projb/.py-sandboxes', 'expose-rw=/'))" \
		"attempt('write-work', lambda: write(ws + '/proj/out.txt', 'result'))" \
		"def new_repo():" \
		"    os.makedirs(ws + '/proj/clone/.git'); write(ws + '/proj/clone/.git/config', '')" \
		"attempt('new-repo', new_repo)" \
		"attempt('move-git', lambda: os.rename(ws + '/proj/.git', ws + '/proj/git-old'))" \
		"attempt('move-proj', lambda: os.rename(ws + '/proj', ws + '/proj-old'))"
	# unconfined, on a copy: every change works, and git runs what was planted
	cp -a "$T/ws" "$T/copy"
	run_plain python3 "$T/app.py" "$T/copy"
	for l in plant-config plant-hook rewrite-policy-b write-work new-repo; do
		expect_line "$T/out" "$l ok"
	done
	expect_line "$T/out" "move-proj ok"
	git --git-dir="$T/copy/proj-old/git-old" --work-tree="$T/copy/proj-old" status >/dev/null 2>&1
	[ -e "$T/PLANTED" ] || fail "unconfined, git did not run the planted fsmonitor"
	rm -f "$T/PLANTED"
	run_sb "$T/policy" "$T/app.py" "$T/ws"
	expect_rc 0
	for l in plant-config plant-hook move-git rewrite-policy-b move-proj; do
		expect_line "$T/out" "$l EACCES"
	done
	expect_line "$T/out" "write-work ok"
	expect_line "$T/out" "new-repo ok"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(write\) $T/ws/proj/\.git/config "
	git -C "$T/ws/proj" status >/dev/null 2>&1
	[ ! -e "$T/PLANTED" ] || fail "git ran a command the sandbox planted"
	[ "$(cat "$T/ws/projb/.py-sandboxes")" = "expose-ro=." ] || fail "project b's policy changed"
	# the user gives the program its repository: a rule naming .git itself
	printf 'expose-rw=%s/proj/.git\n' "$T/ws" >>"$T/policy"
	run_sb "$T/policy" "$T/app.py" "$T/ws"
	expect_line "$T/out" "plant-config ok"
	expect_line "$T/out" "rewrite-policy-b EACCES"
}

# Files pysb-bpf itself opens as root at paths the program may change (found by an
# adversary): `--events ev.jsonl` in a project the program may write (the docs' example,
# `expose-rw=.`), which it made a link to a file of root's (a login script, ~/.bashrc):
# the next run truncated it and filled it with event lines, whose paths the program
# chose ($(...) that a login shell ran). A link the program could have made is never
# followed: the next run refuses to start, saying which link; the file stays as it was.
test_escape_events_file_planted_link_not_followed() {
	once_per_matrix "pysb-bpf's own open of the events file, in user space"
	id nobody >/dev/null 2>&1 || fail "no user nobody in this system"
	mkdir -p "$T/proj" "$T/root-only" "$T/rw"
	echo "root's" >"$T/root-only/login.sh"
	printf 'expose-rw=.\n' >"$T/proj/.py-sandboxes"
	write_file "$T/proj/plant.py" <<'PY'
import os, sys
try:
    open("/etc/x$(id>PWNED)").close()
except OSError:
    pass
os.unlink(sys.argv[2])
os.symlink(sys.argv[1], sys.argv[2])
print("planted", flush=True)
PY
	chown -R nobody "$T/proj"
	# unconfined: root's write through the link the user's process planted lands in root's file
	touch "$T/proj/plain.jsonl" && chown nobody "$T/proj/plain.jsonl"
	(cd "$T/proj" && runuser -u nobody -- python3 plant.py "$T/root-only/other" plain.jsonl) >/dev/null
	echo x >"$T/proj/plain.jsonl"
	[ "$(cat "$T/root-only/other")" = x ] || fail "unconfined, the write did not follow the link"
	# run 1 plants (its policy lets it), run 2, the same command, must not follow it
	cd "$T/proj" || fail "cd"
	"$PYSB" run --user nobody --events ev.jsonl -- python3 plant.py "$T/root-only/login.sh" ev.jsonl >"$T/out" 2>"$T/err"
	expect_line "$T/out" "planted"
	[ -L "$T/proj/ev.jsonl" ] || fail "run 1 did not plant the link"
	"$PYSB" run --user nobody --events ev.jsonl -- python3 -c 'print("ran")' >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 125
	expect_grep "$T/err" "^pysb-bpf: error: cannot open the event stream ev.jsonl: it is reached through the link $T/proj/ev.jsonl, in a directory the sandboxed program may change"
	expect_no_grep "$T/out" "ran"
	[ "$(cat "$T/root-only/login.sh")" = "root's" ] || fail "root's file changed: $(head -c 300 "$T/root-only/login.sh")"
	# a sandboxed root: the link in the directory its policy lets it write (the file made
	# by that run: an existing one is read-only to the program, below)
	printf 'expose-ro=%s\nexpose-rw=%s/rw\n' "$T/proj/plant.py" "$T" >"$T/policy"
	"$PYSB" run --policy "$T/policy" --events "$T/rw/ev.jsonl" -- python3 "$T/proj/plant.py" "$T/root-only/login.sh" "$T/rw/ev.jsonl" >"$T/out" 2>"$T/err"
	expect_line "$T/out" "planted"
	"$PYSB" run --policy "$T/policy" --events "$T/rw/ev.jsonl" -- python3 -c 'print("ran")' >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 125
	expect_grep "$T/err" "is reached through the link $T/rw/ev.jsonl"
	[ "$(cat "$T/root-only/login.sh")" = "root's" ] || fail "root's file changed by the root run"
	# the user's own ways still work: a plain file, /dev/stderr
	rm -f "$T/rw/ev.jsonl"
	"$PYSB" run --policy "$T/policy" --events "$T/rw/ev.jsonl" -- python3 -c 'open("/etc/hostname2")' >"$T/out" 2>"$T/err"
	expect_grep "$T/rw/ev.jsonl" '"record":"summary"'
	expect_grep "$T/err" "warning: the event stream $T/rw/ev.jsonl lies where the program may write, and did not exist"
	# existing: read-only to the program, its name kept, no warning (no forged records)
	"$PYSB" run --policy "$T/policy" --events "$T/rw/ev.jsonl" -- python3 -c "import os
for what, f in (('append', lambda: open('$T/rw/ev.jsonl', 'a').write('{}')),
                ('unlink', lambda: os.unlink('$T/rw/ev.jsonl')),
                ('other', lambda: open('$T/rw/other', 'w').write('x'))):
    try:
        f(); print(what, 'ok')
    except OSError as e:
        print(what, e.errno)" >"$T/out" 2>"$T/err"
	expect_line "$T/out" "append 13"
	expect_line "$T/out" "unlink 13"
	expect_line "$T/out" "other ok"
	expect_no_grep "$T/err" "lies where the program may write"
	expect_grep "$T/rw/ev.jsonl" '"record":"summary"'
	"$PYSB" run --policy "$T/policy" --events /dev/stderr -- python3 -c 'pass' 2>&1 >/dev/null |
		cat >"$T/err"
	expect_grep "$T/err" '"record":"summary"'
}

# The same plant under a wider policy, then the policy narrowed (found by an adversary):
# run 1 under `expose-rw=.` makes ev.jsonl a link to a file of root's (or a FIFO); the
# administrator narrows the policy to `expose-ro=.`, which says nothing of what the
# earlier run could write, and runs the same command. The link was followed and root's
# file filled with event lines (its login script ran them); the FIFO hung pysb-bpf before
# the program started. A link at the end of the path is never followed now, and nothing
# but a regular file (or one of the caller's descriptors) is opened.
test_escape_events_file_link_from_a_wider_policy_not_followed() {
	mkdir -p "$T/proj" "$T/root-only"
	echo "root's" >"$T/root-only/login.sh"
	write_file "$T/proj/plant.py" <<'PY'
import os, sys
os.unlink("ev.jsonl")
if sys.argv[1] == "fifo":
    os.mkfifo("ev.jsonl")
else:
    os.symlink(sys.argv[1], "ev.jsonl")
print("planted", flush=True)
PY
	cd "$T/proj" || fail "cd"
	# unconfined: root's write to the name lands in the link's target
	ln -s "$T/root-only/other" plain.jsonl && echo x >plain.jsonl
	[ "$(cat "$T/root-only/other")" = x ] || fail "unconfined, the write did not follow the link"
	printf 'expose-rw=.\n' >.py-sandboxes
	"$PYSB" run --events ev.jsonl -- python3 plant.py "$T/root-only/login.sh" >"$T/out" 2>"$T/err"
	expect_line "$T/out" "planted"
	[ -L ev.jsonl ] || fail "run 1 did not plant the link"
	printf 'expose-ro=.\n' >.py-sandboxes
	"$PYSB" run --events ev.jsonl -- python3 -c 'print("ran")' >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 125
	expect_grep "$T/err" "^pysb-bpf: error: cannot open the event stream ev.jsonl: it is a symbolic link \\(to $T/root-only/login.sh\\): pysb-bpf opens it as root and follows no link"
	expect_no_grep "$T/out" "ran"
	[ "$(cat "$T/root-only/login.sh")" = "root's" ] || fail "root's file changed: $(head -c 300 "$T/root-only/login.sh")"
	# the FIFO: refused at once, never opened (the open would wait for a reader)
	rm -f ev.jsonl && : >ev.jsonl
	printf 'expose-rw=.\n' >.py-sandboxes
	"$PYSB" run --events ev2.jsonl -- python3 plant.py fifo >"$T/out" 2>"$T/err"
	expect_line "$T/out" "planted"
	[ -p ev.jsonl ] || fail "run 1 did not plant the FIFO"
	printf 'expose-ro=.\n' >.py-sandboxes
	timeout 60 "$PYSB" run --events ev.jsonl -- python3 -c 'print("ran")' >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 125
	expect_grep "$T/err" "ev.jsonl: it is no regular file"
	# the user's own descriptors still work: bash's >(...) is /dev/fd/N
	rm -f ev.jsonl
	"$PYSB" run --events >(cat >"$T/proc-sub.jsonl") -- python3 -c 'pass' >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	sleep 1
	expect_grep "$T/proc-sub.jsonl" '"record":"summary"'
}

# The same check through a bind mount of the program's rw tree (the twin of a reviewer's
# finding for the script's grant): under expose-rw=$T/data, mounted again at $T/proj, the
# program replaces the directory `logs` with a link to a directory of root's. Judged by
# path prefix, $T/proj/logs lay outside every rule and the link was followed: root made
# its event file in the directory the program chose. Judged by inode, as the kernel
# does, the link is in a directory the program may write: refused, nothing made there.
test_escape_events_dir_link_through_a_bind_mount_of_the_rw_tree() {
	mkdir -p "$T/data/logs" "$T/proj" "$T/root-only"
	mount --bind "$T/data" "$T/proj" || fail "bind mount"
	trap 'umount "$T/proj" 2>/dev/null' EXIT
	printf 'expose-rw=%s\n' "$T/data" >"$T/policy"
	# unconfined: a file made through the link lands in its target
	ln -s "$T/root-only" "$T/data/plain" && : >"$T/proj/plain/x"
	[ -e "$T/root-only/x" ] || fail "unconfined, the create did not follow the link"
	rm -f "$T/root-only/x" "$T/data/plain"
	"$PYSB" run --policy "$T/policy" -- python3 -c "import os
os.rmdir('$T/data/logs'); os.symlink('$T/root-only', '$T/data/logs'); print('planted')" >"$T/out" 2>"$T/err"
	expect_line "$T/out" "planted"
	"$PYSB" run --policy "$T/policy" --events "$T/proj/logs/ev.jsonl" -- python3 -c 'print("ran")' \
		>"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 125
	expect_grep "$T/err" "it is reached through the link $T/proj/logs, in a directory the sandboxed program may change"
	expect_no_grep "$T/out" "ran"
	[ ! -e "$T/root-only/ev.jsonl" ] || fail "root made its event file where the program pointed"
	umount "$T/proj"
}

# Learning merged the rules into the policy file as it found it after the run: a link the
# program (nothing is denied while learning) put in its place was read as root, and the
# target's text (/etc/shadow) written back into the project, with the backup, readable
# there (found by an adversary, with a default ACL the program set). The file is read
# through no link the program could have made, and one it changed is not merged into: the
# rules are saved in $TMPDIR, the secret nowhere.
test_escape_learn_policy_file_replaced_not_read() {
	id nobody >/dev/null 2>&1 || fail "no user nobody in this system"
	mkdir -p "$T/proj" "$T/root-only" "$T/tmpd" "$T/data"
	chmod 700 "$T/root-only"
	echo "root:SECRETHASH:1::::::" >"$T/root-only/shadow"
	echo d >"$T/data/f"
	chmod -R a+rX "$T/data"
	printf 'expose-ro=.\n' >"$T/proj/.py-sandboxes"
	write_file "$T/proj/leak.py" <<PY
import os
open("$T/data/f").read()
os.unlink(".py-sandboxes")
os.symlink("$T/root-only/shadow", ".py-sandboxes")
print("replaced", flush=True)
PY
	chown -R nobody "$T/proj"
	cd "$T/proj" || fail "cd"
	TMPDIR=$T/tmpd "$PYSB" run --user nobody --learn -- python3 leak.py >"$T/out" 2>"$T/err"
	RC=$?
	expect_line "$T/out" "replaced"
	expect_grep "$T/err" "is reached through the link $T/proj/.py-sandboxes"
	expect_no_grep "$T/err" "SECRETHASH"
	[ -L "$T/proj/.py-sandboxes" ] || fail "the link was replaced by a file"
	[ ! -e "$T/proj/.py-sandboxes.old" ] || fail "a backup was written: $(cat "$T/proj/.py-sandboxes.old")"
	if grep -rq SECRETHASH "$T/proj" "$T/tmpd"; then fail "the secret was copied: $(grep -rl SECRETHASH "$T/proj" "$T/tmpd")"; fi
	expect_grep "$T/tmpd/.py-sandboxes.learned" "expose-ro=$T/data"
	# a program that rewrites its policy during the run: not merged into
	rm -f "$T/proj/.py-sandboxes"
	printf 'expose-ro=.\n' >"$T/proj/.py-sandboxes"
	chown nobody "$T/proj/.py-sandboxes"
	write_file "$T/proj/widen.py" <<PY
open("$T/data/f").read()
open(".py-sandboxes", "a").write("expose-rw=/\n")
PY
	rm -f "$T/tmpd/"*
	TMPDIR=$T/tmpd "$PYSB" run --user nobody --learn -- python3 widen.py >"$T/out" 2>"$T/err"
	expect_grep "$T/err" "changed while the program ran"
	expect_no_grep "$T/tmpd/.py-sandboxes.learned" "expose-rw=/\$"
	expect_grep "$T/tmpd/.py-sandboxes.learned" "expose-ro=$T/data"
}

# mptcp_joins: the MPTCP joins this network namespace's clients made (the SYN/ACKs of
# their MP_JOIN subflows received).
mptcp_joins() {
	local names values i
	{
		read -r -a names
		read -r -a values
	} < <(grep '^MPTcpExt:' /proc/net/netstat)
	for i in "${!names[@]}"; do
		[ "${names[$i]}" = MPJoinSynAckRx ] && echo "${values[$i]}" && return
	done
	echo 0
}

mptcp_restore() {
	ip mptcp endpoint flush 2>/dev/null
	# shellcheck disable=SC2086 # the words ip printed
	ip mptcp limits set $MPTCP_LIMITS 2>/dev/null
	[ -z "${MPTCP_SERVER:-}" ] || kill "$MPTCP_SERVER" 2>/dev/null
}

# mptcp_server PORT: an MPTCP server outside any sandbox on PORT of every address (it
# reads and drops what it is sent), its pid in MPTCP_SERVER, once it listens.
mptcp_server() {
	mkdir -p "$T/mp"
	write_file "$T/mp/server.py" <<'PY'
import socket, sys, threading
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)  # IPPROTO_MPTCP
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(8)
print("listening", flush=True)
def serve(c):
    while c.recv(100):
        pass
    c.close()
while True:
    threading.Thread(target=serve, args=(s.accept()[0],), daemon=True).start()
PY
	python3 "$T/mp/server.py" "$1" >"$T/server.out" 2>&1 &
	MPTCP_SERVER=$!
	wait_line "$T/server.out" "^listening" 600 0.05 || fail "no server: $(cat "$T/server.out")"
}

# mptcp_client TAG HOST...: the client to each HOST in turn (outside any sandbox for TAG
# plain), held until the server's announced address is joined (2 s at most); the joins it
# made in $T/joins-TAG.
mptcp_client() {
	local tag=$1 before i
	shift
	before=$(mptcp_joins)
	rm -f "$T/mp/go"
	if [ "$tag" = plain ]; then
		python3 "$T/mp/client.py" "$@" >"$T/$tag.out" 2>"$T/$tag.err" &
	else
		"$PYSB" run --policy "$T/policy" -- python3 "$T/mp/client.py" "$@" >"$T/$tag.out" \
			2>"$T/$tag.err" &
	fi
	wait_line "$T/$tag.out" "^connect 127\.0\.0\.1 " 600 0.05 || fail "no client: $(cat "$T/$tag.err")"
	for ((i = 0; i < 20; i++)); do
		if ! _has "$T/$tag.out" E "127\.0\.0\.1 ok$" || [ "$(mptcp_joins)" -gt "$before" ]; then
			break
		fi
		sleep 0.1
	done
	touch "$T/mp/go"
	wait $!
	echo $(($(mptcp_joins) - before)) >"$T/joins-$tag"
}

# MPTCP sockets are TCP to net=: the connect of the first subflow is judged. The others
# are made by the kernel's path manager, in a kworker, to the addresses (and ports) the
# peer announces (ADD_ADDR): the cgroup programs ran for the sandbox's socket but looked
# the sandbox up by the task's cgroup, the kworker's root, and let the join go to a host
# no rule allows, carrying the program's data (found by an adversary, round 27). Now a
# kernel thread binding or connecting a sandbox's socket is refused; the first path stays.
test_escape_mptcp_subflow_to_an_announced_address_refused() {
	local port=20271
	if ! command -v ip >/dev/null || ! ip mptcp limits show >/dev/null 2>&1 ||
		! grep -q '^MPTcpExt:' /proc/net/netstat; then
		skip "no MPTCP, or no ip mptcp, here"
	fi
	MPTCP_LIMITS=$(ip mptcp limits show)
	trap mptcp_restore EXIT
	ip mptcp endpoint flush
	ip mptcp limits set subflows 2 add_addr_accepted 2 || fail "ip mptcp limits"
	ip mptcp endpoint add 127.0.0.2 signal || fail "ip mptcp endpoint"
	mkdir -p "$T/mp"
	write_file "$T/mp/client.py" <<PY
import os, socket, sys, time
for host in sys.argv[1:]:
    try:
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
        c.settimeout(10)
        c.connect((host, $port))
        c.send(b"data for the peer")
        print("connect %s ok" % host, flush=True)
    except OSError as e:
        print("connect %s errno=%d" % (host, e.errno), flush=True)
while not os.path.exists("$T/mp/go"):
    time.sleep(0.05)
c.send(b"more data")
c.close()
PY
	printf 'expose-ro=%s\nnet=ALLOW|tcp|127.0.0.1/32|%s|OUT\n' "$T/mp" "$port" >"$T/policy"
	mptcp_server "$port"
	# unconfined: the client joins the announced 127.0.0.2
	mptcp_client plain 127.0.0.1
	expect_line "$T/plain.out" "connect 127.0.0.1 ok"
	[ "$(cat "$T/joins-plain")" -ge 1 ] || fail "unconfined, no subflow joined 127.0.0.2"
	# confined: 127.0.0.2 itself refused; the allowed connection works, with no join
	mptcp_client confined 127.0.0.2 127.0.0.1
	expect_line "$T/confined.out" "connect 127.0.0.2 errno=1"
	expect_grep "$T/confined.err" "deny net connect tcp 127\.0\.0\.2:$port \(OUT\)"
	expect_line "$T/confined.out" "connect 127.0.0.1 ok"
	[ "$(cat "$T/joins-confined")" -eq 0 ] ||
		fail "confined, a subflow joined 127.0.0.2 ($(cat "$T/joins-confined"))"
}

# MPTCP's user-space path manager (net.mptcp.pm_type=1): a daemon outside the sandbox
# (mptcpd, or any root process speaking the mptcp_pm generic netlink family) creates a
# subflow of the program's connection with MPTCP_PM_CMD_SUBFLOW_CREATE. The cgroup
# programs ran for the sandbox's socket but in the daemon's context, looked the sandbox
# up by the daemon's cgroup, found none, and let the subflow go to a host no rule allows,
# carrying the program's data (found by an adversary, round 30). Now the sandbox is also
# looked up by the socket's cgroup: its rules judge whoever binds or connects its socket.
test_escape_mptcp_userspace_pm_subflow_refused() {
	local port=20301 pm
	if ! command -v ip >/dev/null || ! ip mptcp limits show >/dev/null 2>&1 ||
		[ ! -f /proc/sys/net/mptcp/pm_type ]; then
		skip "no MPTCP user-space path manager here"
	fi
	pm=$(cat /proc/sys/net/mptcp/pm_type)
	# shellcheck disable=SC2064 # the value read now
	trap "echo $pm >/proc/sys/net/mptcp/pm_type; [ -z \"\${MPTCP_SERVER:-}\" ] || kill \"\$MPTCP_SERVER\"" EXIT
	echo 1 >/proc/sys/net/mptcp/pm_type || fail "cannot set net.mptcp.pm_type"
	mkdir -p "$T/mp"
	write_file "$T/mp/client.py" <<PY
import os, socket, struct, time
c = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
c.connect(("127.0.0.1", $port))
c.send(b"data for the peer")
info = c.getsockopt(284, 1, 64)  # SOL_MPTCP, MPTCP_INFO: struct mptcp_info
print("token %d" % struct.unpack_from("I", info, 12)[0], flush=True)
while not os.path.exists("$T/mp/go"):
    time.sleep(0.05)
c.send(b"more data")
c.close()
PY
	# pm.py TOKEN HOST: what mptcpd does, a subflow from 127.0.0.1 to HOST:port
	write_file "$T/mp/pm.py" <<PY
import socket, struct, sys
token, host = int(sys.argv[1]), sys.argv[2]
def attr(t, data):
    a = struct.pack("HH", 4 + len(data), t) + data
    return a + b"\0" * (-len(a) % 4)
def request(s, family, cmd, attrs, flags=5):  # REQUEST|ACK
    body = struct.pack("BBH", cmd, 1, 0) + attrs
    s.send(struct.pack("IHHII", 16 + len(body), family, flags, 1, 0) + body)
    reply = s.recv(65536)
    length, kind = struct.unpack_from("IH", reply)
    if kind == 2:  # NLMSG_ERROR
        return struct.unpack_from("i", reply, 16)[0], reply
    return 0, reply
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)  # NETLINK_GENERIC
err, reply = request(s, 0x10, 3, attr(2, b"mptcp_pm\0"), 1)  # CTRL_CMD_GETFAMILY
off, family = 20, None
while off + 4 <= len(reply):
    alen, atype = struct.unpack_from("HH", reply, off)
    if atype == 1:  # CTRL_ATTR_FAMILY_ID
        family = struct.unpack_from("H", reply, off + 4)[0]
    off += (alen + 3) & ~3
def addr(ip, port=None):
    a = attr(1, struct.pack("H", socket.AF_INET)) + attr(3, socket.inet_aton(ip))
    return a + (attr(5, struct.pack("H", port)) if port else b"")
err, _ = request(s, family, 10, attr(4, struct.pack("I", token)) +  # SUBFLOW_CREATE
                 attr(1 | 0x8000, addr("127.0.0.1")) + attr(6 | 0x8000, addr(host, $port)))
print("subflow %s %s" % (host, "ok" if err == 0 else "errno=%d" % -err), flush=True)
PY
	printf 'expose-ro=%s\nnet=ALLOW|tcp|127.0.0.1/32|%s|OUT\nnet=ALLOW|tcp|127.0.0.1/32|0|IN\n' \
		"$T/mp" "$port" >"$T/policy"
	mptcp_server "$port"
	local tag token
	for tag in plain confined; do
		rm -f "$T/mp/go"
		if [ "$tag" = plain ]; then
			python3 "$T/mp/client.py" >"$T/$tag.out" 2>"$T/$tag.err" &
		else
			"$PYSB" run --policy "$T/policy" -- python3 "$T/mp/client.py" >"$T/$tag.out" \
				2>"$T/$tag.err" &
		fi
		wait_line "$T/$tag.out" "^token " 600 0.05 || fail "no client: $(cat "$T/$tag.err")"
		token=$(sed -n 's/^token //p' "$T/$tag.out")
		# the daemon, outside any sandbox: a subflow to the peer the rules allow, then one
		# to 127.0.0.2 (the peer's other address, which no rule allows)
		python3 "$T/mp/pm.py" "$token" 127.0.0.1 >"$T/pm-$tag.out" 2>&1
		python3 "$T/mp/pm.py" "$token" 127.0.0.2 >>"$T/pm-$tag.out" 2>&1
		touch "$T/mp/go"
		wait $! || fail "$tag client failed: $(cat "$T/$tag.err")"
	done
	expect_line "$T/pm-plain.out" "subflow 127.0.0.1 ok"
	expect_line "$T/pm-plain.out" "subflow 127.0.0.2 ok"
	expect_line "$T/pm-confined.out" "subflow 127.0.0.1 ok"
	expect_line "$T/pm-confined.out" "subflow 127.0.0.2 errno=1"
	expect_grep "$T/confined.err" "deny net connect tcp 127\.0\.0\.2:$port \(OUT\)"
}

# An I2C bus written through a descriptor open for reading (found by an adversary, round
# 28): i2c-dev's I2C_SMBUS and I2C_RDWR ioctls put bytes on the bus whatever the
# descriptor's mode, where write(2) needs one open for writing. Under a rule that only
# lets the program read /dev/i2c-N, a sandboxed root set a chip's register (i2c_stub's
# fake chip here; on a machine: an EEPROM, a power or fan controller). Judged as an open
# for writing; a rule granting WRITE on the device lets it through.
test_escape_i2c_transfer_through_read_only_descriptor_refused() {
	once_per_matrix "the ioctls and the device's number are told apart the same way on every kernel; i2c-dev's transfers have not changed"
	local dir=/run/pysb-vm-modules dev n
	vm_module i2c_dev
	[ -f "$dir/i2c_stub.ko.xz" ] || fail "i2c_stub is not among scripts/vm-kernel's DEMAND_MODULES"
	[ -d /sys/module/i2c_stub ] || insmod "$dir/i2c_stub.ko.xz" chip_addr=0x50 ||
		fail "cannot load i2c_stub"
	trap 'rmmod i2c_stub 2>/dev/null' EXIT
	for n in /sys/class/i2c-dev/*; do
		grep -q "SMBus stub" "$n/name" 2>/dev/null && dev=/dev/${n##*/}
	done
	[ -c "${dev:-}" ] || fail "no /dev/i2c-N for i2c_stub"
	write_probe_lib
	write_file "$T/i2c.py" <<PY
import ctypes, fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
dev, what = sys.argv[1:3]
fd = os.open(dev, os.O_RDONLY)
def smbus(rw, reg, val=0):  # struct i2c_smbus_ioctl_data, I2C_SMBUS_BYTE_DATA
    data = ctypes.create_string_buffer(bytes([val]), 34)
    fcntl.ioctl(fd, 0x0720, struct.pack("BBiP", rw, reg, 2, ctypes.addressof(data)))
    return data.raw[0]
fcntl.ioctl(fd, 0x0703, 0x50)  # I2C_SLAVE: the chip's address, no transfer
if what == "poke":
    attempt("smbus-write", lambda: smbus(0, 0x10, 0x42))
else:
    smbus(0, 0x10, 0) if what == "reset" else print("reg %#x" % smbus(1, 0x10))
PY
	reg() { python3 "$T/i2c.py" "$dev" get; }
	# Unconfined, through a descriptor open for reading: the register is set.
	python3 "$T/i2c.py" "$dev" reset
	run_plain python3 "$T/i2c.py" "$dev" poke
	expect_line "$T/out" "smbus-write ok"
	[ "$(reg)" = "reg 0x42" ] || fail "unconfined: $(reg)"
	# Confined, the device readable only: refused as an open for writing, nothing set.
	python3 "$T/i2c.py" "$dev" reset
	printf 'expose-ro=%s\nexpose-ro=%s\n' "$T" "$dev" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/i2c.py" "$dev" poke
	expect_line "$T/out" "smbus-write EACCES"
	[ "$(reg)" = "reg 0x0" ] || fail "confined: $(reg)"
	expect_grep "$T/err" "deny file open\(write\) $dev "
	# The neighbour: a rule granting WRITE on the device.
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T" "$dev" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/i2c.py" "$dev" poke
	expect_line "$T/out" "smbus-write ok"
	[ "$(reg)" = "reg 0x42" ] || fail "allowed: $(reg)"
}

# A HID device sent reports through a descriptor open for reading (found by an adversary,
# round 28): hidraw's HIDIOCSFEATURE, HIDIOCSINPUT and HIDIOCSOUTPUT reach the device
# whatever the descriptor's mode, where write(2) needs one open for writing. Under a rule
# that only lets the program read /dev/hidrawN, a program sent an output report (a
# device made with uhid here, which prints what it gets; on a machine: a keyboard's or a
# security key's settings, a firmware update mode). Judged as an open for writing; a rule
# granting WRITE on the device lets it through.
test_escape_hid_report_through_read_only_descriptor_refused() {
	once_per_matrix "the ioctls and hidraw's files are told apart the same way on every kernel; hidraw's reports have not changed"
	local dev n dp
	vm_module uhid hid_generic
	write_probe_lib
	write_file "$T/uhid.py" <<'PY'
import os, struct, sys
fd = os.open("/dev/uhid", os.O_RDWR)
# vendor page, one 8-byte input and one 8-byte output report, no report ids
rd = bytes.fromhex("0600ff0901a101150026ff00750895080901810209029102c0")
ev = struct.pack("<I128s64s64sHHIIII", 11, b"pysb-e2e-hid", b"", b"", len(rd), 3, 0x1234,
                 0x5678, 1, 0) + rd  # UHID_CREATE2, BUS_USB
os.write(fd, ev + bytes(4376 - len(ev)))
open(sys.argv[1], "w").close()
while True:
    e = os.read(fd, 4380)
    if struct.unpack_from("<I", e)[0] == 6:  # UHID_OUTPUT: data[4096], size
        print("got", e[4:4 + struct.unpack_from("<H", e, 4100)[0]].hex(), flush=True)
PY
	write_file "$T/hid.py" <<PY
import fcntl, os, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
fd = os.open(sys.argv[1], os.O_RDONLY)
report = bytearray(b"\x00" + sys.argv[2].encode())
def ioc(nr): return (3 << 30) | (len(report) << 16) | (ord("H") << 8) | nr
attempt("set-output", lambda: fcntl.ioctl(fd, ioc(0x0B), report))  # HIDIOCSOUTPUT
PY
	python3 "$T/uhid.py" "$T/uready" >"$T/uhid.out" 2>&1 &
	dp=$!
	# shellcheck disable=SC2064 # expand now
	trap "kill $dp 2>/dev/null" EXIT
	wait_file "$T/uready" "no uhid device: $(cat "$T/uhid.out")"
	for ((n = 0; n < 100; n++)); do
		dev=$(grep -l pysb-e2e-hid /sys/class/hidraw/*/device/uevent 2>/dev/null | head -1)
		[ -n "$dev" ] && break
		sleep 0.1
	done
	[ -n "$dev" ] || fail "no hidraw device for the uhid one"
	dev=/dev/$(basename "$(dirname "$(dirname "$dev")")")
	[ -c "$dev" ] || fail "$dev is not a device"
	# Unconfined, through a descriptor open for reading: the device gets the report.
	run_plain python3 "$T/hid.py" "$dev" plain
	expect_line "$T/out" "set-output ok"
	# Confined, the device readable only: refused as an open for writing, nothing sent.
	printf 'expose-ro=%s\nexpose-ro=%s\n' "$T" "$dev" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/hid.py" "$dev" ro
	expect_line "$T/out" "set-output EACCES"
	expect_grep "$T/err" "deny file open\(write\) $dev "
	# The neighbour: a rule granting WRITE on the device.
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T" "$dev" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/hid.py" "$dev" rw
	expect_line "$T/out" "set-output ok"
	sleep 0.5
	expect_line "$T/uhid.out" "got $(printf 'plain' | od -An -tx1 | tr -d ' \n' | sed 's/^/00/')"
	expect_line "$T/uhid.out" "got 007277"
	! grep -q "^got 00726f$" "$T/uhid.out" || fail "the device got the confined program's report"
}

# A keyboard remapped and grabbed through a descriptor open for reading (found by an
# adversary, round 29): evdev's EVIOCSKEYCODE maps a key to another for every program that
# reads the device, EVIOCGRAB takes its every event (the user's session gets none), and
# neither driver call looks at the descriptor's mode (write(2), which injects events,
# needs one open for writing). Under a rule that only lets the program read
# /dev/input/eventN (a keyboard made with uhid here), a sandboxed root did both. Judged as
# an open for writing; reading the map stays free; a rule granting WRITE lets them through.
test_escape_input_device_settings_through_read_only_descriptor_refused() {
	once_per_matrix "the ioctls and the input devices' major are told apart the same way on every kernel; evdev's settings have not changed"
	local dev n dp
	vm_module uhid hid_generic evdev
	write_probe_lib
	write_file "$T/ukbd.py" <<'PY'
import os, struct, sys
fd = os.open("/dev/uhid", os.O_RDWR)
# a boot keyboard: modifiers, a reserved byte, six keys of the keyboard page
rd = bytes.fromhex("05010906a101050719e029e71500250175019508810295017508810195067508"
                   "150025650507190029658100c0")
ev = struct.pack("<I128s64s64sHHIIII", 11, b"pysb-e2e-kbd", b"", b"", len(rd), 3, 0x1234,
                 0x5679, 1, 0) + rd  # UHID_CREATE2, BUS_USB
os.write(fd, ev + bytes(4376 - len(ev)))
open(sys.argv[1], "w").close()
while os.read(fd, 4380):
    pass
PY
	write_file "$T/kbd.py" <<PY
import array, fcntl, os, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
dev, what = sys.argv[1:3]
fd = os.open(dev, os.O_RDONLY)
KEY1 = 0x7001E  # the keyboard page's usage of the key 1
def get():
    a = array.array("I", [KEY1, 0])
    fcntl.ioctl(fd, 0x80084504, a)  # EVIOCGKEYCODE
    return a[1]
def set_key(code):
    fcntl.ioctl(fd, 0x40084504, array.array("I", [KEY1, code]))  # EVIOCSKEYCODE
if what == "get":
    print("key", get())
elif what == "reset":
    set_key(2)  # KEY_1
else:
    attempt("get-keycode", get)
    attempt("set-keycode", lambda: set_key(30))  # KEY_A
    attempt("grab", lambda: fcntl.ioctl(fd, 0x40044590, 1))  # EVIOCGRAB
    other = os.open(dev, os.O_RDONLY)  # another reader, as the user's session
    attempt("other-grab", lambda: fcntl.ioctl(other, 0x40044590, 1))
PY
	python3 "$T/ukbd.py" "$T/uready" >"$T/ukbd.out" 2>&1 &
	dp=$!
	# shellcheck disable=SC2064 # expand now
	trap "kill $dp 2>/dev/null" EXIT
	wait_file "$T/uready" "no uhid device: $(cat "$T/ukbd.out")"
	for ((n = 0; n < 100; n++)); do
		dev=$(grep -l '^pysb-e2e-kbd$' /sys/class/input/event*/device/name 2>/dev/null | head -1)
		[ -n "$dev" ] && break
		sleep 0.1
	done
	[ -n "$dev" ] || fail "no event device for the uhid keyboard"
	dev=/dev/input/$(basename "$(dirname "$(dirname "$dev")")")
	[ -c "$dev" ] || fail "$dev is not a device"
	key() { python3 "$T/kbd.py" "$dev" get; }
	# Unconfined, through descriptors open for reading: the key remapped, the device
	# grabbed (another reader's grab then finds it taken).
	run_plain python3 "$T/kbd.py" "$dev" poke
	expect_line "$T/out" "set-keycode ok"
	expect_line "$T/out" "grab ok"
	expect_line "$T/out" "other-grab ERR EBUSY"
	[ "$(key)" = "key 30" ] || fail "unconfined: $(key)"
	# Confined, the devices readable only: refused as an open for writing, nothing changed;
	# the map still read.
	python3 "$T/kbd.py" "$dev" reset
	printf 'expose-ro=%s\nexpose-ro=/dev/input\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/kbd.py" "$dev" poke
	expect_line "$T/out" "get-keycode ok"
	expect_line "$T/out" "set-keycode EACCES"
	expect_line "$T/out" "grab EACCES"
	expect_line "$T/out" "other-grab EACCES"
	[ "$(key)" = "key 2" ] || fail "confined: $(key)"
	expect_grep "$T/err" "deny file open\(write\) $dev "
	# The neighbour: a rule granting WRITE on the device.
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T" "$dev" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/kbd.py" "$dev" poke
	expect_line "$T/out" "set-keycode ok"
	expect_line "$T/out" "grab ok"
	expect_line "$T/out" "other-grab ERR EBUSY"
	[ "$(key)" = "key 30" ] || fail "allowed: $(key)"
	python3 "$T/kbd.py" "$dev" reset
}

# A real-time clock's wake alarm set through a descriptor open for reading (found by an
# adversary, round 29): RTC_WKALM_SET and RTC_ALM_SET set the alarm that wakes a suspended
# machine (or starts one powered off), RTC_AIE_OFF cancels one set by rtcwake; the RTC
# core asks neither a capability nor a descriptor open for writing. Under a rule that only
# lets the program read /dev/rtc0 (QEMU's CMOS clock here), a sandboxed root set the
# alarm. Judged as an open for writing; reading the time and the alarm stays free; a rule
# granting WRITE lets it through.
test_escape_rtc_alarm_through_read_only_descriptor_refused() {
	local dev=/dev/rtc0
	[ -c $dev ] || skip "no $dev here"
	write_probe_lib
	write_file "$T/rtc.py" <<PY
import calendar, fcntl, os, struct, sys, time
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
dev, what = sys.argv[1:3]
fd = os.open(dev, os.O_RDONLY)
def rtc_now():
    b = bytearray(36)
    fcntl.ioctl(fd, 0x80247009, b)  # RTC_RD_TIME
    t = struct.unpack("9i", b)
    return calendar.timegm((t[5] + 1900, t[4] + 1, t[3], t[2], t[1], t[0]))
def wake_alarm(enabled, when):  # RTC_WKALM_SET, struct rtc_wkalrm
    g = time.gmtime(when)
    fcntl.ioctl(fd, 0x4028700F, struct.pack("BBxx9i", enabled, 0, g.tm_sec, g.tm_min,
                g.tm_hour, g.tm_mday, g.tm_mon - 1, g.tm_year - 1900, -1, -1, -1))
if what == "get":
    b = bytearray(40)
    fcntl.ioctl(fd, 0x80287010, b)  # RTC_WKALM_RD
    print("alarm", "on" if b[0] else "off")
elif what == "reset":
    wake_alarm(0, rtc_now() + 7200)
else:
    attempt("read-time", rtc_now)
    attempt("wake-alarm", lambda: wake_alarm(1, rtc_now() + 3600))
PY
	alarm() { python3 "$T/rtc.py" $dev get; }
	# Unconfined, through a descriptor open for reading: the alarm is set.
	python3 "$T/rtc.py" $dev reset
	[ "$(alarm)" = "alarm off" ] || fail "not reset: $(alarm)"
	run_plain python3 "$T/rtc.py" $dev poke
	expect_line "$T/out" "wake-alarm ok"
	[ "$(alarm)" = "alarm on" ] || fail "unconfined: $(alarm)"
	# Confined, the clock readable only: refused as an open for writing, no alarm; the
	# time still read.
	python3 "$T/rtc.py" $dev reset
	printf 'expose-ro=%s\nexpose-ro=%s\n' "$T" $dev >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/rtc.py" $dev poke
	expect_line "$T/out" "read-time ok"
	expect_line "$T/out" "wake-alarm EACCES"
	[ "$(alarm)" = "alarm off" ] || fail "confined: $(alarm)"
	expect_grep "$T/err" "deny file open\(write\) $dev "
	# The neighbour: a rule granting WRITE on the clock.
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T" $dev >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/rtc.py" $dev poke
	expect_line "$T/out" "wake-alarm ok"
	[ "$(alarm)" = "alarm on" ] || fail "allowed: $(alarm)"
	python3 "$T/rtc.py" $dev reset
}

# A sound card's mixer set through a descriptor open for reading (found by an adversary,
# round 29): ALSA's SNDRV_CTL_IOCTL_ELEM_WRITE sets a control (a volume, a mute or capture
# switch) whatever the descriptor's mode. Under a rule that only lets the program read
# /dev/snd (snd-dummy's card here), a sandboxed root set the card's volume. Judged as an
# open for writing; reading the controls stays free; a rule granting WRITE lets it through.
test_escape_sound_mixer_through_read_only_descriptor_refused() {
	once_per_matrix "the ioctls and ALSA's major are told apart the same way on every kernel; ALSA's controls have not changed"
	local c dev=
	vm_module snd_dummy
	for c in /sys/class/sound/controlC*; do
		[ "$(cat "$c/device/id" 2>/dev/null)" = Dummy ] && dev=/dev/snd/${c##*/}
	done
	[ -c "${dev:-}" ] || fail "no control device for snd-dummy's card"
	write_probe_lib
	write_file "$T/mixer.py" <<PY
import fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
dev, what = sys.argv[1:3]
fd = os.open(dev, os.O_RDONLY)
def elem(vol=None):  # struct snd_ctl_elem_value: id (mixer, by name), values at 72
    b = bytearray(1224)
    struct.pack_into("IiII44sI", b, 0, 0, 2, 0, 0, b"Master Volume", 0)
    if vol is None:
        fcntl.ioctl(fd, 0xC4C85512, b)  # SNDRV_CTL_IOCTL_ELEM_READ
        return struct.unpack_from("q", b, 72)[0]
    struct.pack_into("qq", b, 72, vol, vol)
    fcntl.ioctl(fd, 0xC4C85513, b)  # SNDRV_CTL_IOCTL_ELEM_WRITE
if what == "get":
    print("volume", elem())
elif what == "reset":
    elem(0)
else:
    attempt("read", elem)
    attempt("set-volume", lambda: elem(42))
PY
	volume() { python3 "$T/mixer.py" "$dev" get; }
	# Unconfined, through a descriptor open for reading: the volume is set.
	python3 "$T/mixer.py" "$dev" reset
	[ "$(volume)" = "volume 0" ] || fail "not reset: $(volume)"
	run_plain python3 "$T/mixer.py" "$dev" poke
	expect_line "$T/out" "set-volume ok"
	[ "$(volume)" = "volume 42" ] || fail "unconfined: $(volume)"
	# Confined, the card readable only: refused as an open for writing, the volume as it
	# was; the control still read.
	python3 "$T/mixer.py" "$dev" reset
	printf 'expose-ro=%s\nexpose-ro=/dev/snd\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/mixer.py" "$dev" poke
	expect_line "$T/out" "read ok"
	expect_line "$T/out" "set-volume EACCES"
	[ "$(volume)" = "volume 0" ] || fail "confined: $(volume)"
	expect_grep "$T/err" "deny file open\(write\) $dev "
	# The neighbour: a rule granting WRITE on the device.
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T" "$dev" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/mixer.py" "$dev" poke
	expect_line "$T/out" "set-volume ok"
	[ "$(volume)" = "volume 42" ] || fail "allowed: $(volume)"
	python3 "$T/mixer.py" "$dev" reset
}

# A sound card's speakers fed through a playback device open for reading (found by an
# adversary, round 29): ALSA's SNDRV_PCM_IOCTL_WRITEI_FRAMES writes a playback stream's
# frames whatever the descriptor's mode (write(2) wants one open for writing). Under a rule
# that only lets the program read /dev/snd (snd-dummy's card here), a sandboxed root played
# frames. Judged as an open for writing; setting the stream up stays free; a rule granting
# WRITE lets them through.
test_escape_sound_played_through_read_only_descriptor_refused() {
	once_per_matrix "the ioctls and ALSA's major are told apart the same way on every kernel; ALSA's streams have not changed"
	local c dev=
	vm_module snd_dummy
	for c in /sys/class/sound/pcmC*D0p; do
		[ "$(cat "$c/device/id" 2>/dev/null)" = Dummy ] && dev=/dev/snd/${c##*/}
	done
	[ -c "${dev:-}" ] || fail "no playback device for snd-dummy's card"
	write_probe_lib
	write_file "$T/play.py" <<PY
import ctypes, fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
fd = os.open(sys.argv[1], os.O_RDONLY)
p = bytearray(608)  # struct snd_pcm_hw_params: every mask and interval open
p[4:100] = b"\xff" * 96
for k in range(12):
    struct.pack_into("III", p, 260 + 12 * k, 0, 0xFFFFFFFF, 0)
struct.pack_into("I", p, 512, 0xFFFFFFFF)  # rmask
def setup():
    fcntl.ioctl(fd, 0xC2604111, p)  # SNDRV_PCM_IOCTL_HW_PARAMS: the kernel chooses
    fcntl.ioctl(fd, 0x4140)  # SNDRV_PCM_IOCTL_PREPARE
frames = (ctypes.c_char * 65536)()
x = bytearray(struct.pack("qQQ", 0, ctypes.addressof(frames), 64))  # struct snd_xferi
def play():
    fcntl.ioctl(fd, 0x40184150, x)  # SNDRV_PCM_IOCTL_WRITEI_FRAMES
    print("frames played", struct.unpack_from("q", x)[0], flush=True)
attempt("setup", setup)
attempt("play", play)
PY
	# Unconfined, through a descriptor open for reading: the card takes the frames.
	run_plain python3 "$T/play.py" "$dev"
	expect_line "$T/out" "setup ok"
	expect_line "$T/out" "frames played 64"
	expect_line "$T/out" "play ok"
	# Confined, the card readable only: refused as an open for writing; the setup passes.
	printf 'expose-ro=%s\nexpose-ro=/dev/snd\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/play.py" "$dev"
	expect_line "$T/out" "setup ok"
	expect_line "$T/out" "play EACCES"
	! grep -q "^frames played" "$T/out" || fail "the confined program played: $(cat "$T/out")"
	expect_grep "$T/err" "deny file open\(write\) $dev "
	# The neighbour: a rule granting WRITE on the device.
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T" "$dev" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/play.py" "$dev"
	expect_line "$T/out" "frames played 64"
	expect_line "$T/out" "play ok"
}

# A persistent tun interface removed through a descriptor of /dev/net/tun open for reading
# (found by an adversary, round 29): attached to a persistent interface its uid owns (or,
# on 6.1 and 7.2, one with no owner set: no capability needed), TUNSETPERSIST 0 makes the
# interface go when the descriptor closes, and tun's settings (TUNSETOWNER, TUNSETCARRIER,
# ...) never look at the descriptor's mode. Under `expose-ro=/dev/net/tun`, a sandboxed
# root removed the machine's interface. Judged as an open for writing; attaching (reading
# its packets) stays free; a rule granting WRITE lets it through.
test_escape_tun_interface_settings_through_read_only_descriptor_refused() {
	once_per_matrix "the ioctls and the device's number are told apart the same way on every kernel; tun's settings have not changed"
	local ifc=pysbtun29
	vm_module tun
	write_probe_lib
	write_file "$T/tun.py" <<PY
import fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
name, what = sys.argv[1:3]
ifr = struct.pack("16sH22x", name.encode(), 0x1001)  # IFF_TUN | IFF_NO_PI
fd = os.open("/dev/net/tun", os.O_RDWR if what != "poke" else os.O_RDONLY)
if what == "make":
    fcntl.ioctl(fd, 0x400454CA, ifr)  # TUNSETIFF
    fcntl.ioctl(fd, 0x400454CB, 1)  # TUNSETPERSIST
    fcntl.ioctl(fd, 0x400454CC, 0)  # TUNSETOWNER: root's (6.12 wants an owner, or the capability)
else:
    attempt("attach", lambda: fcntl.ioctl(fd, 0x400454CA, ifr))
    attempt("unpersist", lambda: fcntl.ioctl(fd, 0x400454CB, 0))
PY
	# shellcheck disable=SC2064 # expand now
	trap "python3 '$T/tun.py' $ifc remove >/dev/null 2>&1" EXIT
	# Unconfined, through a descriptor open for reading: the interface goes.
	python3 "$T/tun.py" $ifc make
	[ -e /sys/class/net/$ifc ] || fail "no persistent $ifc"
	run_plain python3 "$T/tun.py" $ifc poke
	expect_line "$T/out" "attach ok"
	expect_line "$T/out" "unpersist ok"
	[ ! -e /sys/class/net/$ifc ] || fail "unconfined: $ifc still there"
	# Confined, the device readable only: attached, refused as an open for writing, the
	# interface stays.
	python3 "$T/tun.py" $ifc make
	printf 'expose-ro=%s\nexpose-ro=/dev/net/tun\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/tun.py" $ifc poke
	expect_line "$T/out" "attach ok"
	expect_line "$T/out" "unpersist EACCES"
	[ -e /sys/class/net/$ifc ] || fail "confined: $ifc removed"
	expect_grep "$T/err" "deny file open\(write\) /dev/net/tun "
	# The neighbour: a rule granting WRITE on the device.
	printf 'expose-ro=%s\nexpose-rw=/dev/net/tun\n' "$T" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/tun.py" $ifc poke
	expect_line "$T/out" "unpersist ok"
	[ ! -e /sys/class/net/$ifc ] || fail "allowed: $ifc still there"
}

# A watchdog started by an open for reading (found by an adversary, round 29): the open of
# /dev/watchdog starts it whatever the mode, and unless a write of the magic 'V' (which
# needs a descriptor open for writing) or WDIOC_SETOPTIONS stops it, the machine reboots
# when its timeout runs out, after the program's exit. Under `expose-ro=/dev/watchdog`
# (softdog here, told not to reboot), a sandboxed root left it running. Judged as an open
# for writing, /dev/watchdog and /dev/watchdogN alike; a rule granting WRITE lets it open.
test_escape_watchdog_not_started_by_an_open_for_reading() {
	once_per_matrix "the open and the devices are told apart the same way on every kernel; the watchdog core's open has not changed"
	local wd dev
	softdog_load
	wd=$SOFTDOG
	write_probe_lib
	write_file "$T/wd.py" <<PY
import fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
dev, what = sys.argv[1:3]
if what == "stop":  # WDIOC_SETOPTIONS, WDIOS_DISABLECARD: works on any descriptor
    fd = os.open(dev, os.O_RDONLY)
    fcntl.ioctl(fd, 0x80045704, struct.pack("i", 1))
else:
    attempt("open", lambda: os.open(dev, os.O_RDONLY))  # closed at exit, no magic close
PY
	state() { cat "/sys/class/watchdog/$wd/state"; }
	for dev in "/dev/$wd" /dev/watchdog; do
		[ -c "$dev" ] || continue
		# Unconfined, an open for reading: the watchdog runs on after the program's exit.
		python3 "$T/wd.py" "$dev" stop
		[ "$(state)" = inactive ] || fail "not stopped: $(state)"
		run_plain python3 "$T/wd.py" "$dev" open
		expect_line "$T/out" "open ok"
		[ "$(state)" = active ] || fail "unconfined $dev: $(state)"
		python3 "$T/wd.py" "$dev" stop
		# Confined, the device readable only: refused as an open for writing.
		printf 'expose-ro=%s\nexpose-ro=%s\n' "$T" "$dev" >"$T/policy-ro"
		run_sb "$T/policy-ro" python3 "$T/wd.py" "$dev" open
		expect_line "$T/out" "open EACCES"
		[ "$(state)" = inactive ] || fail "confined $dev: $(state)"
		expect_grep "$T/err" "deny file open\([a-z,]*write\) $dev "
		# The neighbour: a rule granting WRITE on the device.
		printf 'expose-ro=%s\nexpose-rw=%s\n' "$T" "$dev" >"$T/policy-rw"
		run_sb "$T/policy-rw" python3 "$T/wd.py" "$dev" open
		expect_line "$T/out" "open ok"
		[ "$(state)" = active ] || fail "allowed $dev: $(state)"
		python3 "$T/wd.py" "$dev" stop
	done
}

# A virtual console taken by a program that only reads it (found by an adversary, round
# 31): a process of the program calls setsid() and opens /dev/tty6, which no session
# uses: the console becomes its controlling terminal, and the kernel lets a console's own
# session set it with no capability. Under a rule that lets the program read /dev/tty6, a
# sandboxed root switched the machine's screen to it (VT_ACTIVATE), held its switching
# (VT_SETMODE) and set its keyboard and display modes. A console's setters need
# bpf.capabilities=CAP_SYS_TTY_CONFIG; its reads stay free, and so does the terminal
# setting of the session it leads; the grant lets the setters through.
test_escape_virtual_console_taken_as_own_terminal_refused() {
	[ -c /dev/tty6 ] || skip "no virtual console /dev/tty6 here"
	write_probe_lib
	write_file "$T/vt.py" <<PY
import fcntl, os, struct, sys, termios
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
pid = os.fork()
if pid == 0:
    os.setsid()
    fd = os.open("/dev/tty6", os.O_RDONLY)  # no session uses it: it becomes ours
    mode = struct.unpack("i", fcntl.ioctl(fd, 0x4B44, b"\0" * 4))[0]  # KDGKBMODE
    vt = struct.unpack("HHH", fcntl.ioctl(fd, 0x5603, b"\0" * 6))[0]  # VT_GETSTATE
    attempt("getstate", lambda: fcntl.ioctl(fd, 0x5603, b"\0" * 6))
    attempt("tcsetattr", lambda: termios.tcsetattr(fd, termios.TCSANOW, termios.tcgetattr(fd)))
    attempt("setmode", lambda: fcntl.ioctl(fd, 0x4B3A, 0))  # KDSETMODE, KD_TEXT
    attempt("skbmode", lambda: fcntl.ioctl(fd, 0x4B45, mode))  # KDSKBMODE
    attempt("vtsetmode", lambda: fcntl.ioctl(fd, 0x5602, struct.pack("bbhhh", 0, 0, 0, 0, 0)))
    attempt("activate", lambda: fcntl.ioctl(fd, 0x5606, 6))  # VT_ACTIVATE
    attempt("activate-back", lambda: fcntl.ioctl(fd, 0x5606, vt))
    os._exit(0)
os.waitpid(pid, 0)
PY
	run_plain python3 "$T/vt.py"
	for op in getstate tcsetattr setmode skbmode vtsetmode activate activate-back; do
		expect_line "$T/out" "$op ok"
	done
	printf 'expose-ro=%s\nexpose-ro=/dev/tty6\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/vt.py"
	for op in getstate tcsetattr; do
		expect_line "$T/out" "$op ok"
	done
	for op in setmode skbmode vtsetmode activate; do
		expect_line "$T/out" "$op EPERM"
	done
	expect_grep "$T/err" "deny self tty-ioctl /dev/tty6 "
	# The neighbour: the grant of the capability the kernel asks of everyone else.
	printf 'expose-ro=%s\nexpose-ro=/dev/tty6\nbpf.capabilities=CAP_SYS_TTY_CONFIG\n' "$T" \
		>"$T/policy-cap"
	run_sb "$T/policy-cap" python3 "$T/vt.py"
	for op in setmode skbmode vtsetmode activate activate-back; do
		expect_line "$T/out" "$op ok"
	done
}

# The machine's hibernation held by an open for reading (found by an adversary, round 31):
# an open of /dev/snapshot for reading starts a hibernation's preparation (the kernel's
# PM_HIBERNATION_PREPARE notifiers run) and takes the machine's one hibernation until the
# descriptor closes: `systemctl hibernate` (a write to /sys/power/state) and uswsusp fail
# with EBUSY meanwhile; the driver asks no capability at the open, only at its ioctls.
# Under `expose-ro=/dev/snapshot`, a sandboxed root, who owns the device, held it. Judged
# as an open for writing, as a watchdog's; a rule granting WRITE lets it open.
test_escape_hibernation_not_held_by_an_open_for_reading() {
	local dev=/dev/snapshot
	[ -c $dev ] || skip "no $dev here (no hibernation in this kernel)"
	write_probe_lib
	mkdir -p "$T/rw"
	write_file "$T/snap.py" <<PY
import os, sys, time
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
ready, go = sys.argv[1:3]
attempt("open", lambda: os.open("$dev", os.O_RDONLY))  # held until the exit
open(ready, "w").write("x")
while not os.path.exists(go):
    time.sleep(0.05)
PY
	outside() {
		python3 -c 'import errno, os, sys
try:
    os.close(os.open(sys.argv[1], os.O_RDONLY)); print("outside ok")
except OSError as e:
    print("outside", errno.errorcode[e.errno])' $dev
	}
	# Unconfined, an open for reading: the machine's hibernation is taken.
	python3 "$T/snap.py" "$T/rw/r0" "$T/g0" >"$T/out" 2>&1 &
	local pid=$!
	wait_file "$T/rw/r0"
	[ "$(outside)" = "outside EBUSY" ] || fail "unconfined: $(outside)"
	touch "$T/g0"
	wait $pid
	expect_line "$T/out" "open ok"
	[ "$(outside)" = "outside ok" ] || fail "not released: $(outside)"
	# Confined, the device readable only: refused as an open for writing.
	printf 'expose-ro=%s\nexpose-rw=%s\nexpose-ro=%s\n' "$T" "$T/rw" $dev >"$T/policy-ro"
	"$PYSB" run --policy "$T/policy-ro" -- python3 "$T/snap.py" "$T/rw/r1" "$T/g1" \
		>"$T/out" 2>"$T/err" &
	pid=$!
	wait_file "$T/rw/r1"
	[ "$(outside)" = "outside ok" ] || fail "confined: $(outside)"
	touch "$T/g1"
	wait $pid
	expect_line "$T/out" "open EACCES"
	expect_grep "$T/err" "deny file open\([a-z,]*write\) $dev "
	# The neighbour: a rule granting WRITE on the device.
	printf 'expose-ro=%s\nexpose-rw=%s\nexpose-rw=%s\n' "$T" "$T/rw" $dev >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/snap.py" "$T/rw/r2" "$T/rw/r2"
	expect_line "$T/out" "open ok"
}

# A vhost device driven through a descriptor open for reading (found by an adversary,
# round 31): vhost's ioctls look at no descriptor mode. VHOST_SET_OWNER and the rings'
# set-up make the program the device's driver (vhost-net sends its frames through a tun
# interface into the machine's network stack; vhost-vsock speaks AF_VSOCK to the
# machine's listeners as a guest, past every net= rule), and VHOST_VSOCK_SET_GUEST_CID,
# which wants no owner, takes a virtual machine's CID: the next to ask for it gets
# EADDRINUSE. Under `expose-ro=/dev`, a sandboxed root did all three. Judged as an open
# for writing; the reads (VHOST_GET_FEATURES) stay free; a rule granting WRITE lets them
# through.
test_escape_vhost_driven_through_read_only_descriptor_refused() {
	vm_module vhost_net vhost_vsock
	[ -c /dev/vhost-net ] && [ -c /dev/vhost-vsock ] || skip "no vhost devices here"
	write_probe_lib
	write_file "$T/vhost.py" <<PY
import fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
net = os.open("/dev/vhost-net", os.O_RDONLY)
attempt("features", lambda: fcntl.ioctl(net, 0x8008AF00, b"\0" * 8))  # VHOST_GET_FEATURES
attempt("net-owner", lambda: fcntl.ioctl(net, 0xAF01))  # VHOST_SET_OWNER
vsock = os.open("/dev/vhost-vsock", os.O_RDONLY)
cid = lambda fd: fcntl.ioctl(fd, 0x4008AF60, struct.pack("Q", 77))  # SET_GUEST_CID
attempt("vsock-cid", lambda: cid(vsock))
if sys.argv[1:] == ["check"]:  # a virtual machine that wants the same CID next
    attempt("vm-cid", lambda: cid(os.open("/dev/vhost-vsock", os.O_RDWR)))
PY
	run_plain python3 "$T/vhost.py" check
	for op in features net-owner vsock-cid; do
		expect_line "$T/out" "$op ok"
	done
	expect_line "$T/out" "vm-cid ERR EADDRINUSE"
	printf 'expose-ro=%s\nexpose-ro=/dev\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/vhost.py"
	expect_line "$T/out" "features ok"
	expect_line "$T/out" "net-owner EACCES"
	expect_line "$T/out" "vsock-cid EACCES"
	expect_grep "$T/err" "deny file open\(write\) /dev/vhost-net "
	expect_grep "$T/err" "deny file open\(write\) /dev/vhost-vsock "
	# The neighbour: rules granting WRITE on the devices.
	printf 'expose-ro=%s\nexpose-ro=/dev\nexpose-rw=/dev/vhost-net\nexpose-rw=/dev/vhost-vsock\n' \
		"$T" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/vhost.py"
	for op in net-owner vsock-cid; do
		expect_line "$T/out" "$op ok"
	done
}

# An input device added to the machine through /dev/uinput open for reading (found by an
# adversary, round 31): uinput's ioctls look at no descriptor mode, UI_DEV_SETUP and
# UI_DEV_CREATE made a keyboard of the program's name and ids, which the user's session
# opens and udev runs its rules for (write(2), which injects its events, needs a
# descriptor open for writing). Under `expose-ro=/dev`, a sandboxed root made one. Judged
# as an open for writing; UI_GET_VERSION stays free; a rule granting WRITE lets it through.
test_escape_uinput_device_not_made_through_read_only_descriptor() {
	vm_module uinput
	[ -c /dev/uinput ] || skip "no /dev/uinput here"
	write_probe_lib
	write_file "$T/uinput.py" <<PY
import fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
fd = os.open("/dev/uinput", os.O_RDONLY)
attempt("version", lambda: fcntl.ioctl(fd, 0x8004552D, b"\0" * 4))  # UI_GET_VERSION
attempt("set-evbit", lambda: fcntl.ioctl(fd, 0x40045564, 1))  # UI_SET_EVBIT, EV_KEY
setup = struct.pack("HHHH80sI", 3, 0x1234, 0x5678, 1, b"pysb-r31-kbd", 0)
attempt("setup", lambda: fcntl.ioctl(fd, 0x405C5503, setup))  # UI_DEV_SETUP
attempt("create", lambda: fcntl.ioctl(fd, 0x5501))  # UI_DEV_CREATE
if sys.argv[1:] == ["check"]:
    print("device", "made" if "pysb-r31-kbd" in open("/proc/bus/input/devices").read() else "none")
PY
	run_plain python3 "$T/uinput.py" check
	for op in version set-evbit setup create; do
		expect_line "$T/out" "$op ok"
	done
	expect_line "$T/out" "device made"
	printf 'expose-ro=%s\nexpose-ro=/dev\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/uinput.py"
	expect_line "$T/out" "version ok"
	for op in set-evbit setup create; do
		expect_line "$T/out" "$op EACCES"
	done
	expect_grep "$T/err" "deny file open\(write\) /dev/uinput "
	printf 'expose-ro=%s\nexpose-ro=/dev\nexpose-rw=/dev/uinput\n' "$T" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/uinput.py"
	expect_line "$T/out" "create ok"
}

# A Bluetooth controller added to the machine by an open of /dev/vhci for reading (found
# by an adversary, round 31): a second after the open, if nothing was written, hci_vhci
# registers hciN, which bluetoothd then drives, its commands read by the program. Under
# `expose-ro=/dev`, a sandboxed root, who owns the device, made one. Judged as an open
# for writing, as a watchdog's; a rule granting WRITE lets it open.
test_escape_bluetooth_controller_not_made_by_an_open_for_reading() {
	vm_module hci_vhci
	[ -c /dev/vhci ] || skip "no /dev/vhci here"
	write_probe_lib
	write_file "$T/vhci.py" <<PY
import os, sys, time
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
attempt("open", lambda: os.open("/dev/vhci", os.O_RDONLY))
time.sleep(1.5)
if sys.argv[1:] == ["check"]:
    print("controllers", " ".join(sorted(os.listdir("/sys/class/bluetooth"))) or "none")
PY
	[ -z "$(ls /sys/class/bluetooth 2>/dev/null)" ] || skip "a Bluetooth controller here already"
	run_plain python3 "$T/vhci.py" check
	expect_line "$T/out" "open ok"
	expect_grep "$T/out" "^controllers hci[0-9]"
	printf 'expose-ro=%s\nexpose-ro=/dev\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/vhci.py"
	expect_line "$T/out" "open EACCES"
	expect_grep "$T/err" "deny file open\([a-z,]*write\) /dev/vhci "
	printf 'expose-ro=%s\nexpose-ro=/dev\nexpose-rw=/dev/vhci\n' "$T" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/vhci.py"
	expect_line "$T/out" "open ok"
}

# The machine's radio keys turned off through /dev/rfkill open for reading (found by an
# adversary, round 31): RFKILL_IOCTL_NOINPUT turns the kernel's handling of the
# airplane-mode and wireless keys off until the descriptor closes, whatever its mode
# (write(2), which blocks a radio, needs one open for writing). Under `expose-ro=/dev`, a
# sandboxed root turned it off. Judged as an open for writing; a rule granting WRITE lets
# it through.
test_escape_rfkill_keys_not_turned_off_through_read_only_descriptor() {
	vm_module rfkill
	[ -c /dev/rfkill ] || skip "no /dev/rfkill here"
	write_probe_lib
	write_file "$T/rfkill.py" <<PY
import fcntl, os, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
fd = os.open("/dev/rfkill", os.O_RDONLY | os.O_NONBLOCK)
attempt("noinput", lambda: fcntl.ioctl(fd, 0x5201))  # RFKILL_IOCTL_NOINPUT
PY
	offs() { dmesg | grep -c "rfkill: input handler disabled"; }
	local n0
	n0=$(offs)
	run_plain python3 "$T/rfkill.py"
	expect_line "$T/out" "noinput ok"
	(($(offs) == n0 + 1)) || fail "unconfined: the key handler not turned off ($(offs), $n0)"
	printf 'expose-ro=%s\nexpose-ro=/dev\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/rfkill.py"
	expect_line "$T/out" "noinput EACCES"
	(($(offs) == n0 + 1)) || fail "confined: the key handler turned off"
	expect_grep "$T/err" "deny file open\(write\) /dev/rfkill "
	printf 'expose-ro=%s\nexpose-ro=/dev\nexpose-rw=/dev/rfkill\n' "$T" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/rfkill.py"
	expect_line "$T/out" "noinput ok"
}

# A serial line's signals driven through a descriptor open for reading (found by an
# adversary, round 31): the tty core looks at no descriptor mode for the modem lines
# (TIOCMBIC, TIOCMBIS, TIOCMSET: DTR and RTS reset a board, tell a UPS to cut the power,
# hang a modem up), the breaks (tcsendbreak) and the line's serial settings. Under
# `expose-ro=/dev/ttyS0` (QEMU's 8250 here), a sandboxed root dropped the line's DTR.
# Judged as an open for writing; reading the lines (TIOCMGET) and tcdrain stay free; a rule
# granting WRITE lets it through.
test_escape_serial_line_not_driven_through_read_only_descriptor() {
	local dev=/dev/ttyS0
	[ -c $dev ] || skip "no $dev here"
	write_probe_lib
	write_file "$T/serial.py" <<PY
import fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
fd = os.open("$dev", os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
dtr = struct.pack("i", 0x002)  # TIOCM_DTR
lines = lambda: struct.unpack("i", fcntl.ioctl(fd, 0x5415, b"\0" * 4))[0]  # TIOCMGET
if sys.argv[1] == "raise":
    fcntl.ioctl(fd, 0x5416, dtr)  # TIOCMBIS
else:
    attempt("lines", lines)
    attempt("drain", lambda: fcntl.ioctl(fd, 0x5409, 1))  # TCSBRK 1: tcdrain, no break
    attempt("dtr-off", lambda: fcntl.ioctl(fd, 0x5417, dtr))  # TIOCMBIC
    print("dtr", "on" if lines() & 0x002 else "off")
PY
	python3 "$T/serial.py" raise
	run_plain python3 "$T/serial.py" probe
	expect_line "$T/out" "dtr-off ok"
	expect_line "$T/out" "dtr off"
	python3 "$T/serial.py" raise
	printf 'expose-ro=%s\nexpose-ro=%s\n' "$T" $dev >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/serial.py" probe
	for op in lines drain; do
		expect_line "$T/out" "$op ok"
	done
	expect_line "$T/out" "dtr-off EACCES"
	expect_line "$T/out" "dtr on"
	expect_grep "$T/err" "deny file open\(write\) $dev "
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T" $dev >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/serial.py" probe
	expect_line "$T/out" "dtr-off ok"
	expect_line "$T/out" "dtr off"
	python3 "$T/serial.py" raise
}

# A serial line's settings changed through a descriptor open for reading (found by an
# adversary, round 32): the tty core looks at no descriptor mode for its termios setters
# (TCSETS*, TCSETA*, TCSETS2*: what `stty -F`, which opens for reading, does), and a
# speed of B0 hangs the line up: the serial core drops DTR and RTS, the very lines round
# 31 kept a descriptor open for reading from dropping by TIOCMBIC; the speed and framing
# set stay for the line's next opener. Nor for TIOCSSOFTCAR (CLOCAL), TCXONC (the line's
# output stopped), TIOCEXCL and TIOCNXCL (its later opens refused, or let in). Under
# `expose-ro=/dev/ttyS0`, a sandboxed root hung the line up. Judged as an open for
# writing, as round 31's; reading the settings and tcdrain stay free.
test_escape_serial_line_not_set_through_read_only_descriptor() {
	local dev=/dev/ttyS0
	[ -c $dev ] || skip "no $dev here"
	write_probe_lib
	write_file "$T/serial_set.py" <<PY
import fcntl, os, struct, sys, termios
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
fd = os.open("$dev", os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
dtr = struct.pack("i", 0x002)  # TIOCM_DTR
lines = lambda: struct.unpack("i", fcntl.ioctl(fd, 0x5415, b"\0" * 4))[0]  # TIOCMGET
def speed(s):
    t = termios.tcgetattr(fd)
    t[4] = t[5] = s
    try:
        termios.tcsetattr(fd, termios.TCSANOW, t)  # TCSETS
    except termios.error as e:  # not an OSError
        raise OSError(*e.args)
if sys.argv[1] == "reset":
    speed(termios.B115200)
    fcntl.ioctl(fd, 0x5416, dtr)  # TIOCMBIS
else:
    attempt("get", lambda: termios.tcgetattr(fd))
    attempt("drain", lambda: termios.tcdrain(fd))
    attempt("speed", lambda: speed(termios.B1200))
    attempt("hangup", lambda: speed(termios.B0))
    attempt("softcar", lambda: fcntl.ioctl(fd, 0x541A, struct.pack("i", 1)))  # TIOCSSOFTCAR
    attempt("exclusive", lambda: fcntl.ioctl(fd, 0x540C))  # TIOCEXCL
    attempt("shared", lambda: fcntl.ioctl(fd, 0x540D))  # TIOCNXCL
    print("dtr", "on" if lines() & 0x002 else "off")
    print("speed", termios.tcgetattr(fd)[4])
PY
	python3 "$T/serial_set.py" reset
	run_plain python3 "$T/serial_set.py" probe
	for op in speed hangup softcar exclusive shared; do
		expect_line "$T/out" "$op ok"
	done
	expect_line "$T/out" "dtr off"
	python3 "$T/serial_set.py" reset
	printf 'expose-ro=%s\nexpose-ro=%s\n' "$T" $dev >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/serial_set.py" probe
	for op in get drain; do
		expect_line "$T/out" "$op ok"
	done
	for op in speed hangup softcar exclusive shared; do
		expect_line "$T/out" "$op EACCES"
	done
	expect_line "$T/out" "dtr on"
	expect_line "$T/out" "speed $(python3 -c 'import termios; print(termios.B115200)')"
	expect_grep "$T/err" "deny file open\(write\) $dev "
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T" $dev >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/serial_set.py" probe
	for op in speed hangup softcar exclusive shared; do
		expect_line "$T/out" "$op ok"
	done
	expect_line "$T/out" "dtr off"
	python3 "$T/serial_set.py" reset
}

# A USB HID device's report set and sent through its hiddev open for reading (found by an
# adversary, round 31): hiddev has no write(2), and its HIDIOCSUSAGE, HIDIOCSUSAGES and
# HIDIOCSREPORT look at no descriptor mode (a UPS's shutdown delay is set this way by
# apcupsd and NUT). Under `expose-ro=/dev/usb`, a sandboxed root set QEMU's USB keyboard's
# LED report (usbhid's HIDDEV_FORCE quirk gives the keyboard a hiddev). Judged as an open
# for writing; reading the report stays free; a rule granting WRITE lets it through.
test_escape_hiddev_report_through_read_only_descriptor_refused() {
	local dir=/run/pysb-vm-modules dev i
	[ -f $dir/usbhid.order ] || skip "no on-demand kernel modules here (the test VM ships them)"
	if ! compgen -G "/dev/usb/hiddev*" >/dev/null; then
		[ ! -d /sys/module/usbhid ] || skip "usbhid loaded before, without the keyboard's hiddev"
		vm_module xhci_pci hid_generic
		# QEMU's usb-kbd, HID_QUIRK_HIDDEV_FORCE
		vm_module_params usbhid quirks=0x0627:0x0001:0x10
		for ((i = 0; i < 100; i++)); do
			compgen -G "/dev/usb/hiddev*" >/dev/null && break
			sleep 0.1
		done
	fi
	dev=$(compgen -G "/dev/usb/hiddev*" | head -n 1)
	[ -n "$dev" ] || skip "no hiddev here (QEMU's usb-kbd on xHCI)"
	write_probe_lib
	write_file "$T/hiddev.py" <<PY
import fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
dev, what = sys.argv[1:3]
fd = os.open(dev, os.O_RDONLY)
info = bytearray(struct.pack("III", 2, 0x100, 0))  # the first output report
fcntl.ioctl(fd, 0xC00C4809, info)  # HIDIOCGREPORTINFO
rtype, rid, nfields = struct.unpack("III", info)
def get():
    u = bytearray(struct.pack("IIIIIi", rtype, rid, 0, 0, 0, 0))
    fcntl.ioctl(fd, 0xC018480B, u)  # HIDIOCGUSAGE
    return struct.unpack("IIIIIi", u)[5]
def set_usage(v):  # HIDIOCSUSAGE
    fcntl.ioctl(fd, 0x4018480C, struct.pack("IIIIIi", rtype, rid, 0, 0, 0, v))
send = lambda: fcntl.ioctl(fd, 0x400C4808, struct.pack("III", rtype, rid, nfields))  # HIDIOCSREPORT
if what == "reset":
    set_usage(0)
    send()
else:
    attempt("get", get)
    attempt("set-usage", lambda: set_usage(1))
    attempt("send", send)
    print("led", get())
PY
	python3 "$T/hiddev.py" "$dev" reset
	run_plain python3 "$T/hiddev.py" "$dev" probe
	for op in get set-usage send; do
		expect_line "$T/out" "$op ok"
	done
	expect_line "$T/out" "led 1"
	python3 "$T/hiddev.py" "$dev" reset
	printf 'expose-ro=%s\nexpose-ro=/dev/usb\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/hiddev.py" "$dev" probe
	expect_line "$T/out" "get ok"
	expect_line "$T/out" "set-usage EACCES"
	expect_line "$T/out" "send EACCES"
	expect_line "$T/out" "led 0"
	expect_grep "$T/err" "deny file open\(write\) $dev "
	printf 'expose-ro=%s\nexpose-rw=/dev/usb\n' "$T" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/hiddev.py" "$dev" probe
	expect_line "$T/out" "send ok"
	expect_line "$T/out" "led 1"
	python3 "$T/hiddev.py" "$dev" reset
}

# vm_display: the test VM's virtio GPU driven (virtio_gpu, loaded on demand), with its DRM
# device and the DRM core's framebuffer; skips where there is none.
vm_display() {
	vm_device_nodes virtio_gpu "no display here (the test VM's virtio-gpu-pci)" \
		-c /dev/fb0 -c /dev/dri/card0
}

# A framebuffer's display changed through a descriptor open for reading (found by an
# adversary, round 32): fbdev's FBIOBLANK, FBIOPUT_VSCREENINFO, FBIOPAN_DISPLAY,
# FBIOPUTCMAP look at no descriptor mode. Under `expose-ro=/dev`, a sandboxed root blanked
# the screen of /dev/fb0 (the DRM core's framebuffer of QEMU's virtio GPU). Judged as an
# open for writing; reading its settings stays free; a rule granting WRITE lets it through.
test_escape_framebuffer_not_set_through_read_only_descriptor() {
	vm_display
	write_probe_lib
	write_file "$T/fb.py" <<PY
import fcntl, os, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
fd = os.open("/dev/fb0", os.O_RDONLY)
var = fcntl.ioctl(fd, 0x4600, b"\0" * 160)  # FBIOGET_VSCREENINFO
if sys.argv[1] == "reset":
    fcntl.ioctl(fd, 0x4611, 0)  # FBIOBLANK, FB_BLANK_UNBLANK
else:
    attempt("get", lambda: fcntl.ioctl(fd, 0x4600, b"\0" * 160))
    attempt("set", lambda: fcntl.ioctl(fd, 0x4601, var))  # FBIOPUT_VSCREENINFO
    attempt("pan", lambda: fcntl.ioctl(fd, 0x4606, var))  # FBIOPAN_DISPLAY
    attempt("blank", lambda: fcntl.ioctl(fd, 0x4611, 4))  # FBIOBLANK, FB_BLANK_POWERDOWN
PY
	run_plain python3 "$T/fb.py" probe
	for op in get set pan blank; do
		expect_line "$T/out" "$op ok"
	done
	python3 "$T/fb.py" reset
	printf 'expose-ro=%s\nexpose-ro=/dev\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/fb.py" probe
	expect_line "$T/out" "get ok"
	for op in set pan blank; do
		expect_line "$T/out" "$op EACCES"
	done
	expect_grep "$T/err" "deny file open\(write\) /dev/fb0 "
	printf 'expose-ro=%s\nexpose-rw=/dev/fb0\n' "$T" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/fb.py" probe
	expect_line "$T/out" "blank ok"
	python3 "$T/fb.py" reset
}

# A display taken by an open for reading of its DRM device (found by an adversary, round
# 32): the first opener of a primary node (/dev/dri/cardN) no compositor holds becomes its
# master, whatever the mode, and a master's descriptor sets the machine's screens (the DRM
# core looks at no descriptor mode) and keeps the user's compositor out (SET_MASTER:
# EBUSY). Under `expose-ro=/dev`, a sandboxed root opened card0 for reading and turned its
# screen off (DRM_IOCTL_MODE_SETCRTC, a master's command). Its open judged as an open for
# writing; the render node (no master) still opens for reading.
test_escape_display_not_taken_by_an_open_for_reading() {
	vm_display
	write_probe_lib
	write_file "$T/drm.py" <<PY
import ctypes, fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
def version(fd):  # DRM_IOCTL_VERSION, no strings asked
    return fcntl.ioctl(fd, 0xC0406400, b"\0" * 64)
def crtc_off(fd):
    res = bytearray(64)
    fcntl.ioctl(fd, 0xC04064A0, res)  # DRM_IOCTL_MODE_GETRESOURCES: the counts
    n = struct.unpack_from("I", res, 36)[0]
    ids = (ctypes.c_uint32 * max(n, 1))()
    res = bytearray(struct.pack("QQQQIIII", 0, ctypes.addressof(ids), 0, 0, 0, n, 0, 0)) + bytes(16)
    fcntl.ioctl(fd, 0xC04064A0, res)
    crtc = struct.pack("QIIIIIII", 0, 0, ids[0], 0, 0, 0, 0, 0) + bytes(68)  # fb 0: off
    fcntl.ioctl(fd, 0xC06864A2, crtc)  # DRM_IOCTL_MODE_SETCRTC, DRM_MASTER only
def card():
    fd = os.open("/dev/dri/card0", os.O_RDONLY)
    attempt("master-off", lambda: crtc_off(fd))
render = [n for n in os.listdir("/dev/dri") if n.startswith("renderD")]
attempt("render", lambda: version(os.open("/dev/dri/" + render[0], os.O_RDONLY)))
attempt("card", card)
PY
	run_plain python3 "$T/drm.py"
	for op in render card master-off; do
		expect_line "$T/out" "$op ok"
	done
	printf 'expose-ro=%s\nexpose-ro=/dev\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/drm.py"
	expect_line "$T/out" "render ok"
	expect_line "$T/out" "card EACCES"
	expect_grep "$T/err" "deny file open\([a-z,]*write\) /dev/dri/card0 "
	printf 'expose-ro=%s\nexpose-rw=/dev/dri\n' "$T" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/drm.py"
	expect_line "$T/out" "master-off ok"
}

# vm_cdrom: the test VM's SCSI CD drive with no disc (virtio_scsi and sr_mod, loaded on
# demand), /dev/sr0; skips where there is none.
vm_cdrom() {
	vm_device_nodes "sr_mod virtio_scsi" "no /dev/sr0 here (the test VM's scsi-cd)" -b /dev/sr0
}

# A CD drive's tray driven through a descriptor open for reading (found by an adversary,
# round 32): the CD-ROM layer looks at no descriptor mode for CDROMEJECT, CDROMCLOSETRAY,
# CDROM_LOCKDOOR, the options and the audio commands (the `eject` tool opens the drive for
# reading). Under `expose-ro=/dev/sr0`, a sandboxed root opened the tray of QEMU's
# SCSI CD drive (virtio_scsi, sr_mod: loaded on demand). Judged as an open for writing of
# the drive; its status stays free; a rule granting WRITE lets it through.
test_escape_cdrom_tray_not_driven_through_read_only_descriptor() {
	vm_cdrom
	write_probe_lib
	write_file "$T/cdrom.py" <<PY
import fcntl, os, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
fd = os.open("/dev/sr0", os.O_RDONLY | os.O_NONBLOCK)
status = lambda: fcntl.ioctl(fd, 0x5326, 0)  # CDROM_DRIVE_STATUS: 1 no disc, 2 tray open
if sys.argv[1] == "reset":
    fcntl.ioctl(fd, 0x5329, 0)  # CDROM_LOCKDOOR 0
    fcntl.ioctl(fd, 0x5319)  # CDROMCLOSETRAY
else:
    attempt("status", status)
    attempt("lock", lambda: fcntl.ioctl(fd, 0x5329, 1))  # CDROM_LOCKDOOR
    attempt("unlock", lambda: fcntl.ioctl(fd, 0x5329, 0))
    attempt("eject", lambda: fcntl.ioctl(fd, 0x5309))  # CDROMEJECT
    print("tray", "open" if status() == 2 else "shut")
PY
	python3 "$T/cdrom.py" reset
	run_plain python3 "$T/cdrom.py" probe
	for op in status lock unlock eject; do
		expect_line "$T/out" "$op ok"
	done
	expect_line "$T/out" "tray open"
	python3 "$T/cdrom.py" reset
	printf 'expose-ro=%s\nexpose-ro=/dev/sr0\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/cdrom.py" probe
	expect_line "$T/out" "status ok"
	for op in lock unlock eject; do
		expect_line "$T/out" "$op EACCES"
	done
	expect_line "$T/out" "tray shut"
	expect_grep "$T/err" "deny file open\(write\) /dev/sr0 "
	printf 'expose-ro=%s\nexpose-rw=/dev/sr0\n' "$T" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/cdrom.py" probe
	expect_line "$T/out" "eject ok"
	expect_line "$T/out" "tray open"
	python3 "$T/cdrom.py" reset
}

# A SCSI command sent through a descriptor open for reading (found by an adversary, round
# 32): SG_IO lets any opener send the commands the SCSI layer calls safe to read with
# (scsi_cmd_allowed), and START STOP UNIT is one: with LoEj it ejects a CD drive's tray
# (and without, stops a disk), past the CD-ROM ioctls above. Under `expose-ro=/dev/sr0`,
# a sandboxed root, with no capability, ejected the tray with SG_IO. Which command the
# packet carries is in the program's memory, which another thread can change between the
# hook and the driver's copy: SG_IO (and SCSI_IOCTL_SEND_COMMAND, CDROM_SEND_PACKET) judged
# as an open for writing, whatever it carries; the drive's status stays free.
test_escape_scsi_command_not_sent_through_read_only_descriptor() {
	vm_cdrom
	write_probe_lib
	write_file "$T/sg.py" <<PY
import ctypes, fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
fd = os.open("/dev/sr0", os.O_RDONLY | os.O_NONBLOCK)
status = lambda: fcntl.ioctl(fd, 0x5326, 0)  # CDROM_DRIVE_STATUS: 1 no disc, 2 tray open
HDR = "@iiBBHIPPPIIiPBBBBHHiII"  # struct sg_io_hdr
def sg_io(cdb):
    c, sense = ctypes.create_string_buffer(bytes(cdb), len(cdb)), ctypes.create_string_buffer(32)
    fcntl.ioctl(fd, 0x2285, bytearray(struct.pack(HDR, ord("S"), -1, len(cdb), 32, 0, 0, 0,
        ctypes.addressof(c), ctypes.addressof(sense), 5000, *([0] * 12))))  # SG_IO, no data
if sys.argv[1] == "reset":
    fcntl.ioctl(fd, 0x5319)  # CDROMCLOSETRAY
else:
    attempt("status", status)
    attempt("eject", lambda: sg_io([0x1B, 0, 0, 0, 0x02, 0]))  # START STOP UNIT, LoEj
    print("tray", "open" if status() == 2 else "shut")
PY
	python3 "$T/sg.py" reset
	run_plain python3 "$T/sg.py" probe
	expect_line "$T/out" "eject ok"
	expect_line "$T/out" "tray open"
	python3 "$T/sg.py" reset
	printf 'expose-ro=%s\nexpose-ro=/dev/sr0\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/sg.py" probe
	expect_line "$T/out" "status ok"
	expect_line "$T/out" "eject EACCES"
	expect_line "$T/out" "tray shut"
	expect_grep "$T/err" "deny file open\(write\) /dev/sr0 "
	printf 'expose-ro=%s\nexpose-rw=/dev/sr0\n' "$T" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/sg.py" probe
	expect_line "$T/out" "eject ok"
	expect_line "$T/out" "tray open"
	python3 "$T/sg.py" reset
}

# A sound card's mixer set through its OSS emulation open for reading (found by an
# adversary, round 32): snd_mixer_oss's SOUND_MIXER_WRITE_* (on /dev/mixerN, and on
# /dev/dspN, which passes the mixer's commands on) set the card's controls whatever the
# descriptor's mode, past round 29's check of ALSA's own control device. Under
# `expose-ro=/dev`, a sandboxed root set snd-dummy's master volume through /dev/mixer.
# Judged as an open for writing; reading the volume stays free; a rule granting WRITE lets
# it through.
test_escape_sound_mixer_through_oss_read_only_descriptor_refused() {
	local c card= dev
	vm_module snd_dummy snd_mixer_oss
	for c in /sys/class/sound/controlC*; do
		[ "$(cat "$c/device/id" 2>/dev/null)" = Dummy ] && card=${c##*/controlC}
	done
	[ -n "$card" ] || fail "no control device for snd-dummy's card"
	dev=/dev/mixer
	[ "$card" = 0 ] || dev=/dev/mixer$card
	[ -c $dev ] || skip "no OSS mixer $dev here"
	write_probe_lib
	write_file "$T/oss.py" <<PY
import fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
fd = os.open("$dev", os.O_RDONLY)
def volume(v=None):
    if v is None:  # SOUND_MIXER_READ_VOLUME
        return struct.unpack("i", fcntl.ioctl(fd, 0x80044D00, b"\0" * 4))[0] & 0xff
    fcntl.ioctl(fd, 0xC0044D00, struct.pack("i", v | v << 8))  # SOUND_MIXER_WRITE_VOLUME
if sys.argv[1] == "reset":
    volume(0)
else:
    attempt("read", volume)
    attempt("set-volume", lambda: volume(100))
    print("volume", volume())
PY
	python3 "$T/oss.py" reset
	run_plain python3 "$T/oss.py" probe
	expect_line "$T/out" "set-volume ok"
	expect_line "$T/out" "volume 100"
	python3 "$T/oss.py" reset
	printf 'expose-ro=%s\nexpose-ro=/dev\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/oss.py" probe
	expect_line "$T/out" "read ok"
	expect_line "$T/out" "set-volume EACCES"
	expect_line "$T/out" "volume 0"
	expect_grep "$T/err" "deny file open\(write\) $dev "
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T" $dev >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/oss.py" probe
	expect_line "$T/out" "set-volume ok"
	expect_line "$T/out" "volume 100"
	python3 "$T/oss.py" reset
}

# A ublk device added to the machine through /dev/ublk-control open for reading (found by
# an adversary, round 32): its commands come by io_uring (IORING_OP_URING_CMD), which
# passes no ioctl hook, and UBLK_U_CMD_ADD_DEV with UBLK_F_UNPRIVILEGED_DEV needs no
# capability and looks at no descriptor mode: a device /dev/ublkcN, then the block device
# its server answers for. Under `expose-ro=/dev`, a sandboxed root with no capability
# added one. A misc device's io_uring commands judged as an open for writing; a rule
# granting WRITE lets the command through. ublk_drv: 6.12 and 7.2 (not built for 6.1).
test_escape_ublk_device_not_added_through_read_only_descriptor() {
	[ -c /dev/ublk-control ] || vm_module ublk_drv
	[ -c /dev/ublk-control ] || skip "no /dev/ublk-control here (ublk_drv)"
	write_probe_lib
	write_file "$T/ublk.py" <<PY
import ctypes, mmap, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
params = ctypes.create_string_buffer(120)
struct.pack_into("I", params, 8, 1 << 10)  # IORING_SETUP_SQE128
ring = libc.syscall(425, 4, params)  # io_uring_setup
assert ring >= 0, ctypes.get_errno()
sq_n, cq_n = struct.unpack_from("II", params, 0)
sq_off, cq_off = struct.unpack_from("10I", params, 40), struct.unpack_from("10I", params, 80)
rw = mmap.PROT_READ | mmap.PROT_WRITE
sq = mmap.mmap(ring, max(sq_off[6] + sq_n * 4, cq_off[5] + cq_n * 16), mmap.MAP_SHARED, rw)
sqes = mmap.mmap(ring, sq_n * 128, mmap.MAP_SHARED, rw, offset=0x10000000)
def uring_cmd(fd, op, payload):  # one IORING_OP_URING_CMD, its result
    sqe = bytearray(128)
    struct.pack_into("BBHiI", sqe, 0, 46, 0, 0, fd, op)
    sqe[48:48 + len(payload)] = payload
    sqes[0:128] = bytes(sqe)
    tail, mask = struct.unpack_from("II", sq, sq_off[1])
    struct.pack_into("I", sq, sq_off[6] + (tail & mask) * 4, 0)
    struct.pack_into("I", sq, sq_off[1], tail + 1)
    assert libc.syscall(426, ring, 1, 1, 1, None, 0) == 1, ctypes.get_errno()
    head, cmask = struct.unpack_from("I", sq, cq_off[0])[0], struct.unpack_from("I", sq, cq_off[2])[0]
    res = struct.unpack_from("i", sq, cq_off[5] + (head & cmask) * 16 + 8)[0]
    struct.pack_into("I", sq, cq_off[0], head + 1)
    if res < 0:
        raise OSError(-res, os.strerror(-res))
ctl = os.open("/dev/ublk-control", os.O_RDONLY)
def ctrl(nr, dev, buf, n, path_len=0):  # struct ublksrv_ctrl_cmd, _IOWR('u', nr, 32 bytes)
    uring_cmd(ctl, 0xC0207500 | nr, struct.pack("IHHQQHHI", dev, 0xFFFF, n,
              ctypes.addressof(buf), 0, path_len, 0, 0))
info = ctypes.create_string_buffer(64)  # struct ublksrv_ctrl_dev_info: 1 queue, depth 1
struct.pack_into("HHHHIIiIQ", info, 0, 1, 1, 0, 0, 65536, 0xFFFFFFFF, 0, 0, 1 << 5)
def add():  # UBLK_U_CMD_ADD_DEV, UBLK_F_UNPRIVILEGED_DEV
    ctrl(0x04, 0xFFFFFFFF, info, 64)
    print("added", struct.unpack_from("I", info, 12)[0], flush=True)
def delete(dev):  # UBLK_U_CMD_DEL_DEV: an unprivileged device's commands name its node
    path = ctypes.create_string_buffer(b"/dev/ublkc%d" % dev)
    ctrl(0x05, dev, path, len(path.value), len(path.value))
if sys.argv[1] == "del":
    delete(int(sys.argv[2]))
else:
    attempt("add", add)
PY
	ublk_del() {
		local n
		for n in $(sed -n 's/^added //p' "$T/out"); do
			python3 "$T/ublk.py" del "$n" || fail "ublk device $n not deleted"
		done
	}
	run_plain python3 "$T/ublk.py" add
	expect_line "$T/out" "add ok"
	expect_grep "$T/out" "^added [0-9]"
	ublk_del
	printf 'expose-ro=%s\nexpose-ro=/dev\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/ublk.py" add
	expect_line "$T/out" "add EACCES"
	ublk_del
	expect_grep "$T/err" "deny file open\(write\) /dev/ublk-control "
	printf 'expose-ro=%s\nexpose-ro=/dev\nexpose-rw=/dev/ublk-control\n' "$T" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/ublk.py" add
	expect_line "$T/out" "add ok"
	ublk_del
}

# A parallel port's lines driven through /dev/parportN open for reading (found by an
# adversary, round 32): ppdev's ioctls look at no descriptor mode: PPCLAIM takes the port
# from the printer's driver, PPWDATA and PPWCONTROL set its data and control lines (what a
# device on it, a relay board, a programmer, a printer, acts on), PPSETMODE, PPNEGOT,
# PPSETFLAGS the rest. Under `expose-ro=/dev`, a sandboxed root claimed QEMU's parallel
# port (parport_pc, ppdev: loaded on demand) and set its data lines. Judged as an open for
# writing: every command but the reads; a rule granting WRITE lets them through.
test_escape_parallel_port_not_driven_through_read_only_descriptor() {
	vm_device_nodes "parport_pc ppdev" "no /dev/parport0 here (the test VM's isa-parallel)" \
		-c /dev/parport0
	write_probe_lib
	write_file "$T/pp.py" <<PY
import fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
fd = os.open("/dev/parport0", os.O_RDONLY)
def data(v):
    fcntl.ioctl(fd, 0x708B)  # PPCLAIM
    fcntl.ioctl(fd, 0x40017086, struct.pack("B", v))  # PPWDATA
    print("data", hex(struct.unpack("B", fcntl.ioctl(fd, 0x80017085, b"\0"))[0]), flush=True)
attempt("modes", lambda: fcntl.ioctl(fd, 0x80047097, b"\0" * 4))  # PPGETMODES
attempt("set-data", lambda: data(0x5A))
PY
	run_plain python3 "$T/pp.py"
	expect_line "$T/out" "modes ok"
	expect_line "$T/out" "set-data ok"
	expect_line "$T/out" "data 0x5a"
	printf 'expose-ro=%s\nexpose-ro=/dev\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/pp.py"
	expect_line "$T/out" "modes ok"
	expect_line "$T/out" "set-data EACCES"
	expect_grep "$T/err" "deny file open\(write\) /dev/parport0 "
	printf 'expose-ro=%s\nexpose-rw=/dev/parport0\n' "$T" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/pp.py"
	expect_line "$T/out" "set-data ok"
}

# A printer port's driver set through /dev/lpN open for reading (found by an adversary,
# round 32): lp's ioctls look at no descriptor mode: LPRESET resets the printer (a job
# cut short), LPCAREFUL, LPABORT, LPABORTOPEN, LPCHAR, LPTIME, LPWAIT, LPSETTIMEOUT set the
# driver for the port's next user, the print spooler. Under `expose-ro=/dev`, a sandboxed
# root set the careful flag of QEMU's parallel port's lp0 (parport_pc, lp: loaded on
# demand). Judged as an open for writing; its reads (LPGETFLAGS) stay free.
test_escape_printer_port_not_set_through_read_only_descriptor() {
	vm_device_nodes "parport_pc lp" "no /dev/lp0 here (the test VM's isa-parallel)" -c /dev/lp0
	write_probe_lib
	write_file "$T/lp.py" <<PY
import array, fcntl, os, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
fd = os.open("/dev/lp0", os.O_RDONLY | os.O_NONBLOCK)
def flags():  # LPGETFLAGS: LP_CAREFUL is 0x80
    a = array.array("i", [0])
    fcntl.ioctl(fd, 0x060E, a)
    return a[0]
if sys.argv[1] == "reset":
    fcntl.ioctl(fd, 0x0609, 0)  # LPCAREFUL 0
else:
    attempt("flags", flags)
    attempt("careful", lambda: fcntl.ioctl(fd, 0x0609, 1))  # LPCAREFUL
    attempt("reset-printer", lambda: fcntl.ioctl(fd, 0x060C))  # LPRESET
    print("careful", "on" if flags() & 0x80 else "off")
PY
	python3 "$T/lp.py" reset
	run_plain python3 "$T/lp.py" probe
	for op in flags careful reset-printer; do
		expect_line "$T/out" "$op ok"
	done
	expect_line "$T/out" "careful on"
	python3 "$T/lp.py" reset
	printf 'expose-ro=%s\nexpose-ro=/dev\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/lp.py" probe
	expect_line "$T/out" "flags ok"
	expect_line "$T/out" "careful EACCES"
	expect_line "$T/out" "reset-printer EACCES"
	expect_line "$T/out" "careful off"
	expect_grep "$T/err" "deny file open\(write\) /dev/lp0 "
	printf 'expose-ro=%s\nexpose-rw=/dev/lp0\n' "$T" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/lp.py" probe
	expect_line "$T/out" "careful ok"
	expect_line "$T/out" "careful on"
	python3 "$T/lp.py" reset
}

# A GPIO chip's line set through /dev/gpiochipN open for reading (found by an adversary,
# round 32): GPIO_V2_GET_LINE_IOCTL requests lines as outputs whatever the descriptor's
# mode, and the request's own descriptor sets them (a relay, a reset line). Under
# `expose-ro=/dev`, a sandboxed root set a line of a gpio-sim chip (made through configfs;
# gpio_sim, 7.2 only). Every line request judged as an open for writing (its direction is
# in the program's memory); the chip's information stays free.
test_escape_gpio_line_not_set_through_read_only_descriptor() {
	local cfg=/sys/kernel/config/gpio-sim/pysb chip= i
	vm_module gpio_sim
	[ -d /sys/kernel/config/gpio-sim ] || mount -t configfs none /sys/kernel/config 2>/dev/null
	[ -d /sys/kernel/config/gpio-sim ] || skip "no gpio-sim here (gpio_sim)"
	if [ ! -d $cfg ]; then
		mkdir -p $cfg/bank0 && echo 4 >$cfg/bank0/num_lines && echo 1 >$cfg/live ||
			fail "gpio-sim chip not made"
	fi
	for ((i = 0; i < 50; i++)); do
		chip=$(cat $cfg/bank0/chip_name 2>/dev/null) && [ -c "/dev/$chip" ] && break
		sleep 0.1
	done
	[ -c "/dev/$chip" ] || fail "no /dev/$chip"
	write_probe_lib
	write_file "$T/gpio.py" <<PY
import fcntl, os, struct, sys
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
fd = os.open("/dev/$chip", os.O_RDONLY)
def set_line():
    req = bytearray(592)  # struct gpio_v2_line_request: line 0, an output
    struct.pack_into("I", req, 0, 0)
    req[256:256 + 4] = b"pysb"
    struct.pack_into("Q", req, 288, 1 << 3)  # config.flags: GPIO_V2_LINE_FLAG_OUTPUT
    struct.pack_into("I", req, 560, 1)  # num_lines
    fcntl.ioctl(fd, 0xC250B407, req)  # GPIO_V2_GET_LINE_IOCTL
    line = struct.unpack_from("i", req, 588)[0]
    fcntl.ioctl(line, 0xC010B40F, struct.pack("QQ", 1, 1))  # GPIO_V2_LINE_SET_VALUES_IOCTL
    os.close(line)
attempt("info", lambda: fcntl.ioctl(fd, 0x8044B401, b"\0" * 68))  # GPIO_GET_CHIPINFO_IOCTL
attempt("set-line", set_line)
PY
	run_plain python3 "$T/gpio.py"
	expect_line "$T/out" "info ok"
	expect_line "$T/out" "set-line ok"
	printf 'expose-ro=%s\nexpose-ro=/dev\n' "$T" >"$T/policy-ro"
	run_sb "$T/policy-ro" python3 "$T/gpio.py"
	expect_line "$T/out" "info ok"
	expect_line "$T/out" "set-line EACCES"
	expect_grep "$T/err" "deny file open\(write\) /dev/$chip "
	printf 'expose-ro=%s\nexpose-rw=/dev/%s\n' "$T" "$chip" >"$T/policy-rw"
	run_sb "$T/policy-rw" python3 "$T/gpio.py"
	expect_line "$T/out" "set-line ok"
}
