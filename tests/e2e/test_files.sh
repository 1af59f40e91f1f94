# File rules of the foundation: expose-ro / expose-rw enforced on open, deny by default.
# Each denial is paired with the allowed action succeeding, and the same access from
# outside the sandbox succeeding.

files_setup() {
	mkdir -p "$T/ro/sub" "$T/rw" "$T/other"
	echo "public" >"$T/ro/data.txt"
	echo "deep" >"$T/ro/sub/deep.txt"
	echo "secret" >"$T/other/secret.txt"
	printf 'expose-ro=%s\nexpose-rw=%s\nexpose-ro=%s\n' "$T/ro" "$T/rw" "$T/lib" >"$T/policy"
	write_probe_lib
}

test_file_read_exposed_ro_allowed_hostname_denied() {
	files_setup
	probe_py "$T/app.py" \
		"attempt('read-ro', lambda: read('$T/ro/data.txt'))" \
		"attempt('read-ro-deep', lambda: read('$T/ro/sub/deep.txt'))" \
		"attempt('list-ro', lambda: os.listdir('$T/ro'))" \
		"attempt('read-hostname', lambda: read('/etc/hostname'))" \
		"attempt('read-other', lambda: read('$T/other/secret.txt'))"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "read-ro ok"
	expect_line "$T/out" "read-ro-deep ok"
	expect_line "$T/out" "list-ro ok"
	expect_line "$T/out" "read-hostname EACCES"
	expect_line "$T/out" "read-other EACCES"
	# The same reads outside the sandbox succeed: the denial is the sandbox's doing.
	run_plain python3 "$T/app.py"
	expect_line "$T/out" "read-hostname ok"
	expect_line "$T/out" "read-other ok"
}

test_file_write_ro_denied_rw_allowed() {
	files_setup
	probe_py "$T/app.py" \
		"attempt('write-ro-new', lambda: write('$T/ro/new.txt'))" \
		"attempt('write-ro-existing', lambda: write('$T/ro/data.txt'))" \
		"attempt('append-ro', lambda: open('$T/ro/data.txt', 'a').close())" \
		"attempt('trunc-ro', lambda: os.close(os.open('$T/ro/data.txt', os.O_RDONLY | os.O_TRUNC)))" \
		"attempt('write-rw', lambda: write('$T/rw/new.txt', 'hello'))" \
		"attempt('read-back-rw', lambda: read('$T/rw/new.txt'))"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "write-ro-new EACCES"
	expect_line "$T/out" "write-ro-existing EACCES"
	expect_line "$T/out" "append-ro EACCES"
	expect_line "$T/out" "trunc-ro EACCES"
	expect_line "$T/out" "write-rw ok"
	expect_line "$T/out" "read-back-rw ok"
	[ "$(cat "$T/rw/new.txt")" = hello ] || fail "rw file content not written"
	[ "$(cat "$T/ro/data.txt")" = public ] || fail "ro file was modified"
}

test_file_denial_line_on_stderr() {
	files_setup
	echo 'open("/etc/hostname")' >"$T/app.py"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 1
	expect_grep "$T/err" "PermissionError"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) /etc/hostname pid=[0-9]+ tid=[0-9]+ comm=python3$"
}

test_file_exit_status_propagated() {
	files_setup
	echo 'import sys; sys.exit(42)' >"$T/app.py"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 42
	echo 'import os, signal; os.kill(os.getpid(), signal.SIGTERM)' >"$T/app.py"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 143
}

test_file_program_not_found_127_not_executable_126() {
	files_setup
	run_sb "$T/policy" /nonexistent/prog
	expect_rc 127
	run_sb "$T/policy" no-such-command-pysb
	expect_rc 127
	echo '#!/bin/sh' >"$T/ro/notexec"
	chmod 644 "$T/ro/notexec"
	run_sb "$T/policy" "$T/ro/notexec"
	expect_rc 126
}

test_file_spellings_cannot_escape() {
	files_setup
	ln -s /etc/hostname "$T/ro/link-out"
	ln -s "$T/ro/data.txt" "$T/other/link-in"
	probe_py "$T/app.py" \
		"attempt('dotdot', lambda: read('$T/ro/../other/secret.txt'))" \
		"attempt('dotdot-in', lambda: read('$T/other/../ro/data.txt'))" \
		"attempt('symlink-out', lambda: read('$T/ro/link-out'))" \
		"attempt('symlink-in', lambda: read('$T/other/link-in'))" \
		"attempt('proc-root', lambda: read('/proc/self/root/etc/hostname'))" \
		"attempt('proc-root-in', lambda: read('/proc/self/root$T/ro/data.txt'))"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "dotdot EACCES"
	expect_line "$T/out" "dotdot-in ok"
	expect_line "$T/out" "symlink-out EACCES"
	expect_line "$T/out" "symlink-in ok"
	expect_line "$T/out" "proc-root EACCES"
	expect_line "$T/out" "proc-root-in ok"
}

test_file_bind_mount_cannot_expose_outside() {
	files_setup
	# An exposed tree that gains a bind mount of an unexposed one from the inside would
	# be an escape: the sandbox may not mount at all (from inside), and rules name inodes.
	probe_py "$T/app.py" \
		"import ctypes" \
		"libc = ctypes.CDLL(None, use_errno=True)" \
		"r = libc.mount(b'$T/other', b'$T/rw', None, 4096, None)" \
		"print('mount', 'ok' if r == 0 else 'errno=%d' % ctypes.get_errno(), flush=True)" \
		"attempt('read-via-mount', lambda: read('$T/rw/secret.txt'))"
	# With CAP_SYS_ADMIN granted, so that lsm/sb_mount is what refuses, not the missing capability.
	printf 'bpf.capabilities=CAP_SYS_ADMIN\n' >>"$T/policy"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "mount errno=1"
	expect_line "$T/out" "read-via-mount ERR ENOENT"
}

test_file_native_code_bound_too() {
	files_setup
	{
		echo "import ctypes"
		echo "libc = ctypes.CDLL(None, use_errno=True)"
		echo "for label, path in (('native-read-ro', b'$T/ro/data.txt'), ('native-read-secret', b'$T/other/secret.txt')):"
		echo "    fd = libc.open(path, 0)"
		echo "    print(label, 'ok' if fd >= 0 else 'errno=%d' % ctypes.get_errno(), flush=True)"
	} >"$T/app.py"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "native-read-ro ok"
	expect_line "$T/out" "native-read-secret errno=13"
}

test_file_children_confined_and_other_cgroups_untouched() {
	files_setup
	{
		echo "import subprocess"
		echo "r = subprocess.run(['/bin/cat', '$T/other/secret.txt'], capture_output=True)"
		echo "print('child-cat', r.returncode, flush=True)"
		echo "r = subprocess.run(['/bin/cat', '$T/ro/data.txt'], capture_output=True)"
		echo "print('child-cat-ro', r.returncode, r.stdout.decode().strip(), flush=True)"
	} >"$T/app.py"
	printf 'expose-ro=/usr/bin\npython-api=ALLOW:process-exec\n' >>"$T/policy"
	# A process outside the sandbox reads the secret while the sandbox runs.
	(for i in 1 2 3 4 5; do cat "$T/other/secret.txt" >/dev/null || echo outside-failed; sleep 0.2; done) >"$T/outside" &
	run_sb "$T/policy" "$T/app.py"
	wait
	expect_rc 0
	expect_line "$T/out" "child-cat 1"
	expect_line "$T/out" "child-cat-ro 0 public"
	[ ! -s "$T/outside" ] || fail "a process outside the sandbox was denied: $(cat "$T/outside")"
}
