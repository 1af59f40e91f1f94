# The boundary around the file layer (issue 16): signals through SIGIO, scheduling and
# limits of outside processes, terminal ioctls, reads that open nothing (xattrs, readlink,
# inotify/fanotify), source-routed packets, multicast membership reports, unix autobind,
# nested daemon bindings.
# Every attack is first shown to work unconfined (the same program, run plainly), then to
# fail confined (the errno, and no effect on the outside victim), next to the allowed
# neighbour that still works. Tests that take a USER run as root and as nobody.

# bnd_setup [POLICY LINES...]: $T/ro (exposed read-only), $T/rw (read-write), $T/other
# (not exposed), the probe library, all readable by nobody.
bnd_setup() {
	mkdir -p "$T/ro" "$T/rw" "$T/other" "$T/lib"
	write_probe_lib
	{
		printf 'expose-ro=%s\nexpose-ro=%s\nexpose-rw=%s\n' "$T/lib" "$T/ro" "$T/rw"
		printf '%s\n' "$@"
	} >"$T/policy"
	chmod -R a+rwX "$T"
}

# as_user USER CMD...: CMD as USER ("" or root: as is), for the unconfined runs.
as_user() {
	local u=$1
	shift
	if [ -z "$u" ] || [ "$u" = root ]; then
		"$@"
	else
		setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups -- "$@"
	fi
}

# bnd_plain USER PROGRAM [ARGS]: unconfined, as USER; output in $T/out, $T/err, $RC.
bnd_plain() {
	local u=$1
	shift
	as_user "$u" "$@" >"$T/out" 2>"$T/err"
	RC=$?
}

# bnd_sb USER SCRIPT [ARGS]: confined by $T/policy, as USER.
bnd_sb() {
	local u=$1 opt=()
	shift
	[ -z "$u" ] || [ "$u" = root ] || opt=(--user "$u")
	"$PYSB" run "${opt[@]}" --policy "$T/policy" -- "$@" >"$T/out" 2>"$T/err"
	RC=$?
}

# start_victim USER: /bin/sleep outside the sandbox, as USER; its pid in VICTIM.
start_victim() {
	local i
	if [ "$1" = root ]; then
		/bin/sleep 1000 &
	else
		setpriv --reuid="$1" --regid="$(id -g "$1")" --clear-groups -- /bin/sleep 1000 &
	fi
	VICTIM=$!
	# until it is sleep, as its user: before, it is a root shell or setpriv (a signal to
	# it fails with EPERM unconfined; found in a loaded VM)
	for i in $(seq 200); do
		[ "$(cat "/proc/$VICTIM/comm" 2>/dev/null)" = sleep ] && break
		sleep 0.02
	done
}

# proc_state PID: the state letter of PID (Z once it died unwaited), or "gone".
proc_state() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || {
		echo gone
		return
	}
	s=${s##*) }
	echo "${s%% *}"
}

# wait_dead PID: until PID is a zombie or gone (it is our child: nobody waits for it yet).
wait_dead() {
	local i
	for i in $(seq 200); do
		case $(proc_state "$1") in Z | gone) return 0 ;; esac
		sleep 0.05
	done
	fail "process $1 is still alive: $(proc_state "$1")"
}

# ---- cause 3: signals through SIGIO, signal 0, scheduling and limits of outside tasks ----

bnd_signal_app() {
	probe_py "$T/app.py" \
		"import fcntl, resource, signal, time, ctypes" \
		"V, K = int(sys.argv[1]), int(sys.argv[2])" \
		"child = os.fork()" \
		"if child == 0:" \
		"    time.sleep(60); os._exit(0)" \
		"libc = ctypes.CDLL(None, use_errno=True)" \
		"def ioprio(pid):" \
		"    if libc.syscall(251, 1, pid, (2 << 13) | 4) != 0:" \
		"        e = ctypes.get_errno(); raise OSError(e, os.strerror(e))" \
		"for who, pid in (('outside', V), ('own-child', child)):" \
		"    attempt('kill0-' + who, lambda: os.kill(pid, 0))" \
		"    attempt('nice-' + who, lambda: os.setpriority(os.PRIO_PROCESS, pid, 7))" \
		"    attempt('prlimit-' + who, lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (64, 64)))" \
		"    attempt('affinity-' + who, lambda: os.sched_setaffinity(pid, {0}))" \
		"    attempt('ioprio-' + who, lambda: ioprio(pid))" \
		"got = []" \
		"signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))" \
		"def sigio(target, sig):" \
		"    r, w = os.pipe()" \
		"    fcntl.fcntl(r, fcntl.F_SETOWN, target)" \
		"    fcntl.fcntl(r, fcntl.F_SETSIG, sig)" \
		"    fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)" \
		"    os.write(w, b'x')" \
		"sigio(os.getpid(), signal.SIGUSR1)" \
		"print('sigio-self', 'delivered' if got else 'none', flush=True)" \
		"attempt('sigio-outside', lambda: sigio(K, signal.SIGTERM))" \
		"os.kill(child, signal.SIGKILL); os.waitpid(child, 0)"
}

bnd_signal_case() {
	local u=$1 v k
	bnd_setup
	bnd_signal_app
	# V: scheduling victim, K: SIGIO victim, both outside, same user as the program
	start_victim "$u"
	v=$VICTIM
	start_victim "$u"
	k=$VICTIM
	bnd_sb "$u" "$T/app.py" "$v" "$k"
	expect_rc 0
	for op in kill0 nice prlimit affinity ioprio; do
		expect_line "$T/out" "$op-outside EPERM"
		expect_line "$T/out" "$op-own-child ok"
	done
	expect_line "$T/out" "sigio-self delivered"
	expect_line "$T/out" "sigio-outside ok" # F_SETOWN itself is allowed; the signal is not sent
	# a signal sent during write(2) would be pending or done by now
	[ "$(proc_state "$k")" = S ] || fail "the SIGIO victim is $(proc_state "$k") after the confined run"
	expect_grep "/proc/$k/status" "^ShdPnd:\s+0+$"
	expect_grep "/proc/$k/status" "^SigPnd:\s+0+$"
	read -r -a st <"/proc/$v/stat"
	[ "${st[18]}" = 0 ] || fail "outside nice changed to ${st[18]}"
	expect_no_grep "/proc/$v/limits" "^Max open files +64 +64 "
	expect_grep "$T/err" "^pysb-bpf: deny self signal target-pid=$k "
	expect_grep "$T/err" "^pysb-bpf: deny self sched target-pid=$v "
	# the same program unconfined: every one of them reaches the outside processes
	bnd_plain "$u" python3 "$T/app.py" "$v" "$k"
	expect_rc 0
	for op in kill0 nice prlimit affinity ioprio; do
		expect_line "$T/out" "$op-outside ok"
	done
	wait_dead "$k"
	read -r -a st <"/proc/$v/stat"
	[ "${st[18]}" = 7 ] || fail "unconfined setpriority did not change nice (${st[18]})"
	expect_grep "/proc/$v/limits" "^Max open files +64 +64 "
	kill "$v" "$k" 2>/dev/null
	wait 2>/dev/null
	return 0
}

test_boundary_sigio_signal0_sched_rlimit_outside_denied_root() {
	bnd_signal_case root
}

test_boundary_sigio_signal0_sched_rlimit_outside_denied_nobody() {
	bnd_signal_case nobody
}

# What a process outside is, read by pid rather than through /proc/PID (whose files the
# rules deny): its session and group, its scheduling, I/O priority and capability sets.
# The kernel answers any caller of the same user (capget: any caller at all); confined,
# only the sandbox's own processes answer.
bnd_inspect_app() {
	probe_py "$T/app.py" \
		"import ctypes, time" \
		"V = int(sys.argv[1])" \
		"child = os.fork()" \
		"if child == 0:" \
		"    time.sleep(60); os._exit(0)" \
		"libc = ctypes.CDLL(None, use_errno=True)" \
		"def call(nr, *args):" \
		"    if libc.syscall(nr, *args) < 0:" \
		"        e = ctypes.get_errno(); raise OSError(e, os.strerror(e))" \
		"def capget(pid):" \
		"    hdr = (ctypes.c_uint32 * 2)(0x20080522, pid)" \
		"    data = (ctypes.c_uint32 * 6)()" \
		"    call(125, hdr, data)" \
		"for who, pid in (('outside', V), ('own-child', child)):" \
		"    attempt('getsid-' + who, lambda: os.getsid(pid))" \
		"    attempt('getpgid-' + who, lambda: os.getpgid(pid))" \
		"    attempt('getscheduler-' + who, lambda: os.sched_getscheduler(pid))" \
		"    attempt('getaffinity-' + who, lambda: os.sched_getaffinity(pid))" \
		"    attempt('ioprio-get-' + who, lambda: call(252, 1, pid))" \
		"    attempt('capget-' + who, lambda: capget(pid))" \
		"attempt('capget-self', lambda: capget(0))" \
		"attempt('getaffinity-self', lambda: os.sched_getaffinity(0))" \
		"os.kill(child, 9); os.waitpid(child, 0)"
}

bnd_inspect_case() {
	local u=$1 op ops="getsid getpgid getscheduler getaffinity ioprio-get capget"
	bnd_setup
	bnd_inspect_app
	start_victim "$u"
	# unconfined: each read answers about the outside process
	bnd_plain "$u" python3 "$T/app.py" "$VICTIM"
	expect_rc 0
	for op in $ops; do
		expect_line "$T/out" "$op-outside ok"
	done
	bnd_sb "$u" "$T/app.py" "$VICTIM"
	expect_rc 0
	for op in $ops; do
		expect_line "$T/out" "$op-outside EPERM"
		expect_line "$T/out" "$op-own-child ok"
	done
	expect_line "$T/out" "capget-self ok"
	expect_line "$T/out" "getaffinity-self ok"
	expect_grep "$T/err" "^pysb-bpf: deny self inspect target-pid=$VICTIM "
	kill "$VICTIM" 2>/dev/null
	wait 2>/dev/null
	return 0
}

test_boundary_outside_process_inspection_denied_root() {
	bnd_inspect_case root
}

test_boundary_outside_process_inspection_denied_nobody() {
	once_per_matrix "the same programs as for root (the _root test runs on every kernel); the uid is not the kernel's"
	bnd_inspect_case nobody
}

# The table that remembers which files had their SIGIO owner set from a sandbox is finite
# (16,384 files for the machine). Full, it must fail closed: F_SETOWN from a sandbox is
# refused (ENOSPC), never an owner set that no rule then judges. Unconfined, the same
# program fills nothing and its SIGIO kills the victim.
test_boundary_sigio_owner_table_full_fails_closed() {
	once_per_matrix "a full map's answer, the same BPF code on every kernel; SIGIO owners are judged on every kernel by the other sigio tests"
	write_file "$T/fill.py" <<'PY'
import errno, fcntl, os, resource, signal, sys
victim = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
limit = min(hard, 4096)
resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
kids, total, full = [], 0, False
for k in range(24):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        n, err = 0, 0
        try:
            while n < limit - 32:
                for fd in os.pipe():
                    fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
                    n += 1
        except OSError as e:
            err = e.errno
        os.write(w, f"{n} {err}\n".encode())
        signal.pause()
    os.close(w)
    n, err = (int(x) for x in os.read(r, 100).split())
    os.close(r)
    kids.append(pid)
    total += n
    if err == errno.ENOSPC:
        full = True
        break
print("filled", "full" if full else "never-full", flush=True)
a, b = os.pipe()
try:
    fcntl.fcntl(a, fcntl.F_SETOWN, victim)
    fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)
    os.write(b, b"x")
    print("setown-outside ok", flush=True)
except OSError as e:
    print("setown-outside", errno.errorcode[e.errno], flush=True)
for pid in kids:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
PY
	sleep 300 &
	local victim=$!
	run_plain python3 "$T/fill.py" "$victim"
	expect_line "$T/out" "filled never-full"
	expect_line "$T/out" "setown-outside ok"
	sleep 0.5
	! kill -0 "$victim" 2>/dev/null || fail "unconfined, the SIGIO did not reach the victim"
	sleep 300 &
	victim=$!
	printf 'expose-ro=%s\n' "$T" >"$T/policy"
	run_sb "$T/policy" python3 "$T/fill.py" "$victim"
	expect_rc 0
	expect_line "$T/out" "filled full"
	expect_line "$T/out" "setown-outside ENOSPC"
	sleep 0.5
	kill -0 "$victim" 2>/dev/null || fail "the victim outside the sandbox was killed by SIGIO"
	kill "$victim"
	# the table empties with the files: F_SETOWN works again in the next sandbox
	probe_py "$T/again.py" \
		"import fcntl" \
		"r, w = os.pipe()" \
		"attempt('setown-own', lambda: fcntl.fcntl(r, fcntl.F_SETOWN, os.getpid()))"
	write_probe_lib
	printf 'expose-ro=%s\n' "$T/lib" >>"$T/policy"
	run_sb "$T/policy" python3 "$T/again.py"
	expect_rc 0
	expect_line "$T/out" "setown-own ok"
}

# ---- cause 2: terminal ioctls ----

# A pty made outside (the "caller's terminal"), handed to the program by path; what the
# program pushes into its input is then read on the slave side, as the caller's shell would.
bnd_tty_harness() {
	write_file "$T/harness.py" <<'PY'
import os, subprocess, sys, tty
master, slave = os.openpty()
tty.setraw(slave)
name = os.ttyname(slave)
os.chmod(name, 0o666)
subprocess.run(sys.argv[1:] + [name])
os.set_blocking(slave, False)
try:
    got = os.read(slave, 100)
except BlockingIOError:
    got = b""
print("injected", got.decode(errors="replace") or "none", flush=True)
PY
	probe_py "$T/app.py" \
		"import fcntl, struct, termios" \
		"name = sys.argv[1]" \
		"r, w = os.pipe()" \
		"pid = os.fork()" \
		"if pid == 0:" \
		"    os.close(r); os.setsid()" \
		"    fd = os.open(name, os.O_RDWR)  # the controlling terminal of this session" \
		"    def sti():" \
		"        for c in b'id\\n': fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))" \
		"    out = []" \
		"    for label, fn in (('tiocsti', sti)," \
		"                      ('tiocsetd', lambda: fcntl.ioctl(fd, 0x5423, struct.pack('i', 0)))," \
		"                      ('tioclinux', lambda: fcntl.ioctl(fd, 0x541C, b'\\x06'))," \
		"                      ('tcgetattr', lambda: termios.tcgetattr(fd))):" \
		"        try: fn(); out.append(label + ' ok')" \
		"        except OSError as e: out.append(label + ' ' + errno.errorcode.get(e.errno, str(e.errno)))" \
		"    os.write(w, ('\\n'.join(out) + '\\n').encode()); os._exit(0)" \
		"os.close(w); os.waitpid(pid, 0)" \
		"sys.stdout.write(os.read(r, 4096).decode()); sys.stdout.flush()"
}

bnd_tty_case() {
	local u=$1 opt=()
	bnd_setup "expose-rw=/dev/pts"
	bnd_tty_harness
	[ "$u" = root ] || opt=(--user "$u")
	python3 "$T/harness.py" "$PYSB" run "${opt[@]}" --policy "$T/policy" -- "$T/app.py" \
		>"$T/out" 2>"$T/err"
	expect_line "$T/out" "tiocsti EPERM"
	expect_line "$T/out" "tiocsetd EPERM"
	expect_line "$T/out" "tioclinux EPERM"
	expect_line "$T/out" "tcgetattr ok"
	expect_line "$T/out" "injected none"
	expect_grep "$T/err" "^pysb-bpf: deny self tty-ioctl /dev/pts/[0-9]+ "
	python3 "$T/harness.py" setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups -- \
		python3 "$T/app.py" >"$T/out" 2>"$T/err"
	expect_line "$T/out" "tcgetattr ok"
	expect_line "$T/out" "tiocsetd ok"
	# not a console: refused by the driver (after the LSM hook), not with EPERM
	expect_grep "$T/out" "^tioclinux (ENOTTY|EINVAL)$"
	if [ "$u" = root ] || [ ! -e /proc/sys/dev/tty/legacy_tiocsti ] ||
		[ "$(cat /proc/sys/dev/tty/legacy_tiocsti)" = 1 ]; then
		expect_line "$T/out" "tiocsti ok"
		expect_line "$T/out" "injected id"
	else
		# this kernel refuses TIOCSTI to users on its own (dev.tty.legacy_tiocsti=0)
		expect_line "$T/out" "injected none"
	fi
}

test_boundary_tty_ioctls_denied_root() {
	bnd_tty_case root
}

test_boundary_tty_ioctls_denied_nobody() {
	bnd_tty_case nobody
}

# ---- cause 4: reads that open nothing ----

bnd_read_app() {
	probe_py "$T/app.py" \
		"import ctypes, struct" \
		"libc = ctypes.CDLL(None, use_errno=True)" \
		"def check(rc):" \
		"    if rc < 0:" \
		"        e = ctypes.get_errno(); raise OSError(e, os.strerror(e))" \
		"    return rc" \
		"def inotify(d, create):" \
		"    fd = check(libc.inotify_init1(os.O_NONBLOCK))" \
		"    check(libc.inotify_add_watch(fd, d.encode(), 0x100))  # IN_CREATE" \
		"    if create: open(d + '/made-by-app-%d' % os.getpid(), 'w').close()" \
		"    data = os.read(fd, 4096)" \
		"    n = struct.unpack_from('iIII', data)[3]" \
		"    print('inotify-name', data[16:16 + n].rstrip(b'\\0').decode(), flush=True)" \
		"T = sys.argv[1]" \
		"for d in ('ro', 'other'):" \
		"    attempt('getxattr-' + d, lambda: os.getxattr(T + '/' + d + '/f', 'security.pysbtest'))" \
		"    attempt('listxattr-' + d, lambda: os.listxattr(T + '/' + d + '/f'))" \
		"    attempt('readlink-' + d, lambda: os.readlink(T + '/' + d + '/link'))" \
		"attempt('readlink-proc-self', lambda: os.readlink('/proc/self/exe'))" \
		"attempt('inotify-rw', lambda: inotify(T + '/rw', True))" \
		"attempt('inotify-other', lambda: inotify(T + '/other', True))" \
		"attempt('inotify-ro-file', lambda: check(libc.inotify_add_watch(check(libc.inotify_init1(0)), (T + '/ro/f').encode(), 0x2)))" \
		"attempt('inotify-dev-null', lambda: check(libc.inotify_add_watch(check(libc.inotify_init1(0)), b'/dev/null', 0x3)))  # IN_ACCESS, IN_MODIFY" \
		"fan = []" \
		"attempt('fanotify-init', lambda: fan.append(check(libc.fanotify_init(0, 0))))" \
		"def fanotify(path, flags):" \
		"    check(libc.fanotify_mark(fan[0], 1 | flags, ctypes.c_uint64(0x08000020), -100, path.encode()))  # FAN_OPEN, FAN_EVENT_ON_CHILD" \
		"if fan:" \
		"    attempt('fanotify-rw', lambda: fanotify(T + '/rw', 0))" \
		"    attempt('fanotify-other', lambda: fanotify(T + '/other', 0))" \
		"    attempt('fanotify-fs', lambda: fanotify(T + '/rw', 0x100))  # FAN_MARK_FILESYSTEM"
}

bnd_read_case() {
	local u=$1
	bnd_setup
	bnd_read_app
	for d in ro other; do
		echo data >"$T/$d/f"
		python3 -c "import os, sys; os.setxattr(sys.argv[1], 'security.pysbtest', b'v')" "$T/$d/f" ||
			fail "cannot set an xattr on $T/$d/f"
		ln -s "target-in-$d" "$T/$d/link"
	done
	chmod -R a+rwX "$T"
	bnd_sb "$u" "$T/app.py" "$T"
	expect_rc 0
	for op in getxattr listxattr readlink; do
		expect_line "$T/out" "$op-other EACCES"
		expect_line "$T/out" "$op-ro ok"
	done
	expect_line "$T/out" "readlink-proc-self ok"
	expect_grep "$T/out" "^inotify-name made-by-app-[0-9]+$"
	expect_line "$T/out" "inotify-rw ok"
	expect_line "$T/out" "inotify-other EACCES"
	expect_line "$T/out" "inotify-ro-file ok"
	# a device node (readable: /dev/null is implicit) tells of every reader on the machine
	# (of /dev/tty: others' keystrokes): never watched
	expect_line "$T/out" "inotify-dev-null EACCES"
	expect_grep "$T/err" "^pysb-bpf: deny file notify\(read\) /dev/null "
	# fanotify (root; without CAP_SYS_ADMIN fanotify_init itself is refused)
	if _has "$T/out" xF "fanotify-init ok"; then
		expect_line "$T/out" "fanotify-rw ok"
		expect_line "$T/out" "fanotify-other EACCES"
		expect_line "$T/out" "fanotify-fs EACCES" # a whole file system: never
	fi
	# dentry-only walks name the file from its file system's root (/tmp is one)
	expect_grep "$T/err" "^pysb-bpf: deny file readlink\(read\) [^ ]*${T##*/}/other/link "
	expect_grep "$T/err" "^pysb-bpf: deny file getxattr\(read\) [^ ]*${T##*/}/other/f "
	expect_grep "$T/err" "^pysb-bpf: deny file notify\(read\) $T/other "
	expect_no_grep "$T/err" "deny file readlink\(read\) (/usr)?/bin/"
	# unconfined: the unexposed directory's xattrs, link targets and new names are read
	bnd_plain "$u" python3 "$T/app.py" "$T"
	expect_rc 0
	for op in getxattr listxattr readlink; do
		expect_line "$T/out" "$op-other ok"
	done
	expect_line "$T/out" "inotify-other ok"
	expect_line "$T/out" "inotify-dev-null ok"
	if [ "$u" = root ]; then
		expect_line "$T/out" "fanotify-init ok"
		expect_line "$T/out" "fanotify-other ok"
		expect_line "$T/out" "fanotify-fs ok"
	fi
}

test_boundary_getxattr_readlink_inotify_read_rules_root() {
	bnd_read_case root
}

test_boundary_getxattr_readlink_inotify_read_rules_nobody() {
	bnd_read_case nobody
}

# ---- cause 7: unix autobind through SO_PASSCRED ----

bnd_autobind_app() {
	probe_py "$T/app.py" \
		"import socket" \
		"def passcred(kind):" \
		"    s = socket.socket(socket.AF_UNIX, kind)" \
		"    s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)" \
		"    return s" \
		"st = passcred(socket.SOCK_STREAM)" \
		"attempt('stream-connect', lambda: st.connect(sys.argv[1] + '/rw/absent'))" \
		"print('stream-name', repr(st.getsockname()), flush=True)" \
		"attempt('stream-listen', lambda: st.listen())" \
		"dg = passcred(socket.SOCK_DGRAM)" \
		"attempt('dgram-sendto', lambda: dg.sendto(b'x', sys.argv[1] + '/rw/absent'))" \
		"print('dgram-name', repr(dg.getsockname()), flush=True)" \
		"a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)" \
		"a.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)" \
		"attempt('pair-send', lambda: a.send(b'x'))" \
		"attempt('pair-recv', lambda: b.recv(1))"
}

bnd_autobind_case() {
	local u=$1
	bnd_setup
	bnd_autobind_app
	bnd_sb "$u" "$T/app.py" "$T"
	expect_rc 0
	expect_line "$T/out" "stream-connect EPERM"
	expect_line "$T/out" "stream-name ''"
	expect_line "$T/out" "stream-listen ERR EINVAL"
	expect_line "$T/out" "dgram-sendto EPERM"
	expect_line "$T/out" "dgram-name ''"
	expect_line "$T/out" "pair-send ok"
	expect_line "$T/out" "pair-recv ok"
	expect_grep "$T/err" "^pysb-bpf: deny unix bind \(autobind\) "
	# unconfined: an abstract name, and a listening socket others can reach
	bnd_plain "$u" python3 "$T/app.py" "$T"
	expect_line "$T/out" "stream-connect ERR ENOENT"
	expect_grep "$T/out" "^stream-name b'\\\\x00[0-9a-f]{5}'$"
	expect_line "$T/out" "stream-listen ok"
	expect_grep "$T/out" "^dgram-name b'\\\\x00[0-9a-f]{5}'$"
	# bpf.unix-abstract=allow lets the autobind happen confined too
	printf 'bpf.unix-abstract=allow\n' >>"$T/policy"
	bnd_sb "$u" "$T/app.py" "$T"
	expect_line "$T/out" "stream-connect ERR ENOENT"
	expect_line "$T/out" "stream-listen ok"
}

test_boundary_unix_autobind_passcred_denied_root() {
	bnd_autobind_case root
}

test_boundary_unix_autobind_passcred_denied_nobody() {
	bnd_autobind_case nobody
}

# ---- cause 6: nested daemon bindings, the nearest wins ----

test_boundary_nested_bindings_inner_strict_policy_wins() {
	local out
	trap svc_cleanup EXIT
	mkdir -p "$T/conf" "$T/a" "$T/b" "$CGT/outer/inner"
	echo a >"$T/a/f"
	echo b >"$T/b/f"
	# outer: broad, in audit mode; inner: strict, enforced
	printf 'expose-ro=%s\nexpose-ro=%s\n' "$T/a" "$T/b" >"$T/conf/outer.py-sandboxes"
	printf 'expose-ro=%s\n' "$T/a" >"$T/conf/inner.py-sandboxes"
	binding outer '{"policy": "outer.py-sandboxes", "cgroup": "pysb-e2e/outer", "mode": "audit"}'
	binding inner '{"policy": "inner.py-sandboxes", "cgroup": "pysb-e2e/outer/inner"}'
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "inner: confined $CGT/outer/inner "
	wait_for "$T/daemon.err" "outer: confined $CGT/outer "
	out=$(sh -c 'echo $$ >"$1/cgroup.procs" || exit 9
		read -r x <"$2" && echo "a $x"
		{ read -r y <"$3"; } 2>/dev/null && echo "b $y" || echo "b denied"' \
		_ "$CGT/outer/inner" "$T/a/f" "$T/b/f" 2>&1)
	[ "$out" = "a a
b denied" ] || fail "inner cgroup: $out"
	# a process of the outer cgroup itself keeps the outer (broad) policy
	out=$(sh -c 'echo $$ >"$1/cgroup.procs" || exit 9
		{ read -r y <"$2"; } 2>/dev/null && echo "b $y" || echo "b denied"' \
		_ "$CGT/outer" "$T/b/f" 2>&1)
	[ "$out" = "b b" ] || fail "outer cgroup: $out"
	svc_cleanup
}

# ---- cause 5: source routing to hosts no net= rule allows ----

# bnd_sniffer: records the destination of every IP packet on the namespace's wire
# ($T/wire: "ipv4 ADDR" / "ipv6 ADDR"), as the unlisted hosts would see it.
bnd_sniffer() {
	local ready=$T/sniffer.ready i
	write_file "$T/sniffer.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0003))
s.bind(("pysb-n", 0))
out = open(sys.argv[2], "a", buffering=1)
open(sys.argv[1], "w").write("ready\n")
while True:
    data, addr = s.recvfrom(65535)
    if addr[1] == 0x0800 and len(data) >= 20:
        out.write("ipv4 %s\n" % socket.inet_ntop(socket.AF_INET, data[16:20]))
    elif addr[1] == 0x86DD and len(data) >= 40:
        out.write("ipv6 %s\n" % socket.inet_ntop(socket.AF_INET6, data[24:40]))
PY
	bnd_start_sniffer "$T/sniffer.py" "$ready"
}

# bnd_start_sniffer PROGRAM READY: PROGRAM READY $T/wire run in the network namespace, in
# the background, until it has written READY.
bnd_start_sniffer() {
	: >"$T/wire"
	ip netns exec "$NET_NS" python3 "$1" "$2" "$T/wire" 2>"$T/sniffer.err" &
	NET_PIDS+=($!)
	for i in $(seq 100); do
		[ -s "$2" ] && return 0
		sleep 0.1
	done
	fail "the sniffer did not start: $(cat "$T/sniffer.err")"
}

# The allowed host is 10.199.0.2 / fd00:199::2; each attack routes through its own
# unlisted first hop, so the wire tells which one got through.
bnd_srcroute_app() {
	net_py "$T/app.py" \
		"import random, socket, struct" \
		"MARK = b'pysb-source-route'" \
		"LABEL = random.randrange(1, 1 << 19) * 2  # flow labels outlive their socket (6 s): one of its own each run" \
		"def lsrr(hop): return bytes([0x83, 7, 4]) + socket.inet_aton(hop) + b'\\0'" \
		"def rthdr(hop): return bytes([0, 2, 2, 1, 0, 0, 0, 0]) + socket.inet_pton(socket.AF_INET6, hop)" \
		"def v4_sockopt():" \
		"    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)" \
		"    s.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS, lsrr('10.199.7.1'))" \
		"    s.sendto(MARK, ('10.199.0.2', 9))" \
		"def v4_cmsg():" \
		"    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)" \
		"    s.sendmsg([MARK], [(socket.IPPROTO_IP, 7, lsrr('10.199.7.2'))], 0, ('10.199.0.2', 9))  # IP_RETOPTS" \
		"def v4_tcp():" \
		"    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)" \
		"    s.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS, lsrr('10.199.7.3'))" \
		"    s.setblocking(False)" \
		"    try: s.sendto(MARK, socket.MSG_FASTOPEN, ('10.199.0.2', 20091))" \
		"    except BlockingIOError: pass" \
		"def v6_sockopt():" \
		"    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)" \
		"    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RTHDR, rthdr('fd00:199::a'))" \
		"    s.sendto(MARK, ('fd00:199::2', 9))" \
		"def v6_cmsg(opt, hop):" \
		"    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)" \
		"    s.sendmsg([MARK], [(socket.IPPROTO_IPV6, opt, rthdr(hop))], 0, ('fd00:199::2', 9))" \
		"def v6_flowlabel(hop, label, cmsg):" \
		"    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)" \
		"    req = socket.inet_pton(socket.AF_INET6, 'fd00:199::2') + struct.pack('!I', label) + struct.pack('=BBHHHI', 0, 1, 1, 0, 0, 0)  # in6_flowlabel_req: GET, EXCL, CREATE" \
		"    s.setsockopt(socket.IPPROTO_IPV6, 32, req + struct.pack('=Qii', 40, socket.IPPROTO_IPV6, socket.IPV6_RTHDR) + rthdr(hop))  # IPV6_FLOWLABEL_MGR, options: a routing header" \
		"    if cmsg: s.sendmsg([MARK], [(socket.IPPROTO_IPV6, 11, struct.pack('!I', label))], 0, ('fd00:199::2', 9))  # IPV6_FLOWINFO" \
		"    else: s.setsockopt(socket.IPPROTO_IPV6, 33, 1); s.sendto(MARK, ('fd00:199::2', 9, label, 0))  # IPV6_FLOWINFO_SEND" \
		"def v6_tfo():" \
		"    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)" \
		"    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RTHDR, rthdr('fd00:199::c'))" \
		"    s.setblocking(False)" \
		"    try: s.sendto(MARK, socket.MSG_FASTOPEN, ('fd00:199::2', 20091))" \
		"    except BlockingIOError: pass" \
		"attempt('v4-udp-sockopt', v4_sockopt)" \
		"attempt('v4-udp-cmsg', v4_cmsg)" \
		"attempt('v4-tcp-fastopen', v4_tcp)" \
		"attempt('v6-udp-sockopt', v6_sockopt)" \
		"attempt('v6-udp-cmsg', lambda: v6_cmsg(socket.IPV6_RTHDR, 'fd00:199::b'))" \
		"attempt('v6-udp-cmsg-2292', lambda: v6_cmsg(5, 'fd00:199::d'))" \
		"attempt('v6-tcp-fastopen', v6_tfo)" \
		"attempt('v6-udp-flowlabel', lambda: v6_flowlabel('fd00:199::e', LABEL, False))" \
		"attempt('v6-udp-flowlabel-cmsg', lambda: v6_flowlabel('fd00:199::f', LABEL + 1, True))" \
		"attempt('v6-2292-sockopt', lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).setsockopt(socket.IPPROTO_IPV6, 5, 1))" \
		"attempt('v4-allowed', lambda: udp_sendto('10.199.0.2', 20092))" \
		"attempt('v6-allowed', lambda: udp_sendto('fd00:199::2', 20092))" \
		"attempt('v4-ttl-option-allowed', lambda: socket.socket().setsockopt(socket.IPPROTO_IP, socket.IP_TTL, 9))"
}

# HOPS: the first hop of each attack, by label
BND_HOPS=(v4-udp-sockopt:ipv4:10.199.7.1 v4-udp-cmsg:ipv4:10.199.7.2
	v4-tcp-fastopen:ipv4:10.199.7.3 v6-udp-sockopt:ipv6:fd00:199::a
	v6-udp-cmsg:ipv6:fd00:199::b v6-tcp-fastopen:ipv6:fd00:199::c
	v6-udp-cmsg-2292:ipv6:fd00:199::d v6-udp-flowlabel:ipv6:fd00:199::e
	v6-udp-flowlabel-cmsg:ipv6:fd00:199::f)

bnd_srcroute_case() {
	local u=$1 h label w
	net_setup "net=ALLOW|udp|10.199.0.2|*|OUT" "net=ALLOW|tcp|10.199.0.2|*|OUT" \
		"net=ALLOW|udp|fd00:199::2|*|OUT" "net=ALLOW|tcp|fd00:199::2|*|OUT"
	net_ns
	for a in 10.199.7.1/16 10.199.7.2/16 10.199.7.3/16; do
		ip -n "$NET_NS" addr add "$a" dev pysb-n
	done
	for a in a b c d e f; do
		ip -n "$NET_NS" addr add "fd00:199::$a/64" dev pysb-n nodad
	done
	net_servers --ns udp:10.199.0.2:20092 "udp:[fd00:199::2]:20092"
	bnd_sniffer
	bnd_srcroute_app
	chmod -R a+rX "$T"
	bnd_sb "$u" "$T/app.py"
	expect_rc 0
	for h in "${BND_HOPS[@]}"; do
		expect_line "$T/out" "${h%%:*} EPERM"
	done
	expect_line "$T/out" "v6-2292-sockopt EPERM"
	expect_line "$T/out" "v4-allowed ok"
	expect_line "$T/out" "v6-allowed ok"
	expect_line "$T/out" "v4-ttl-option-allowed ok"
	expect_grep "$T/err" "^pysb-bpf: deny net source-route setsockopt level=0 option=4 "
	expect_grep "$T/err" "^pysb-bpf: deny net source-route sendmsg level=41 option=57 "
	expect_grep "$T/err" "^pysb-bpf: deny net source-route setsockopt level=41 option=32 "
	expect_grep "$T/wire" "^ipv4 10\.199\.0\.2$" # the allowed one went out
	for h in "${BND_HOPS[@]}"; do
		w=${h#*:}
		expect_no_grep "$T/wire" "^${w%%:*} ${w#*:}$"
	done
	# unconfined: each option reaches its unlisted first hop
	bnd_plain "$u" python3 "$T/app.py"
	for h in "${BND_HOPS[@]}"; do
		label=${h%%:*}
		if [ "$u" != root ] && [[ $label == v4-* ]] && ! _has "$T/out" xF "$label ok"; then
			continue # not for this user: IPv4 options refused by the kernel itself
		fi
		w=${h#*:}
		w="${w%%:*} ${w#*:}"
		for _ in $(seq 100); do
			_has "$T/wire" xF "$w" && break
			sleep 0.1
		done
		expect_line "$T/wire" "$w"
	done
}

test_boundary_source_routing_refused_root() {
	bnd_srcroute_case root
}

test_boundary_source_routing_refused_nobody() {
	bnd_srcroute_case nobody
}

# ---- multicast memberships: the kernel reports the group to the link (round 21) ----

# bnd_mc_sniffer: "ipv4 GROUP" / "ipv6 GROUP" in $T/wire for each membership report (IGMP,
# ICMPv6) on the namespace's wire naming one of the test's groups (239.19[89].0.N,
# ff0e::19[89]:N, N 1-4).
bnd_mc_sniffer() {
	local i
	write_file "$T/mc_sniffer.py" <<'PY'
import socket, sys
G = [(f, a, socket.inet_pton(f, a)) for n in range(1, 5) for f, a in (
    (socket.AF_INET, "239.199.0.%d" % n), (socket.AF_INET, "239.198.0.%d" % n),
    (socket.AF_INET6, "ff0e::199:%d" % n), (socket.AF_INET6, "ff0e::198:%d" % n))]
s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0003))
s.bind(("pysb-n", 0))
out = open(sys.argv[2], "a", buffering=1)
open(sys.argv[1], "w").write("ready\n")
while True:
    d, addr = s.recvfrom(65535)
    v4 = addr[1] == 0x0800 and len(d) > 20 and d[9] == 2  # IGMP
    for f, a, b in G:
        if (v4 and f == socket.AF_INET or addr[1] == 0x86DD and f == socket.AF_INET6) and b in d[20:]:
            out.write("%s %s\n" % ("ipv4" if v4 else "ipv6", a))
PY
	bnd_start_sniffer "$T/mc_sniffer.py" "$T/mc.ready"
}

# app.py N: joins 239.199.0.N (IP_ADD_MEMBERSHIP), 239.198.0.N (MCAST_JOIN_GROUP),
# ff0e::199:N (IPV6_JOIN_GROUP), ff0e::198:N (MCAST_JOIN_GROUP) on pysb-h, keeps them 0.3 s.
bnd_mc_app() {
	net_py "$T/app.py" \
		"import struct, time" \
		"N, IF, KEEP = int(sys.argv[1]), socket.if_nametoindex('pysb-h'), []" \
		"def join(f, level, opt, val): s = socket.socket(f, socket.SOCK_DGRAM); KEEP.append(s); s.setsockopt(level, opt, val)" \
		"def group_req(f, a): return struct.pack('=I4x', IF) + (struct.pack('=HH4s', f, 0, socket.inet_pton(f, a)) if f == socket.AF_INET else struct.pack('=HHI16sI', f, 0, 0, socket.inet_pton(f, a), 0)).ljust(128, b'\\0')" \
		"attempt('v4-add-membership', lambda: join(socket.AF_INET, socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton('239.199.0.%d' % N) + struct.pack('=4si', bytes(4), IF)))" \
		"attempt('v4-mcast-join-group', lambda: join(socket.AF_INET, socket.IPPROTO_IP, 42, group_req(socket.AF_INET, '239.198.0.%d' % N)))" \
		"attempt('v6-join-group', lambda: join(socket.AF_INET6, socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, socket.inet_pton(socket.AF_INET6, 'ff0e::199:%d' % N) + struct.pack('=I', IF)))" \
		"attempt('v6-mcast-join-group', lambda: join(socket.AF_INET6, socket.IPPROTO_IPV6, 42, group_req(socket.AF_INET6, 'ff0e::198:%d' % N)))" \
		"attempt('v4-multicast-ttl-allowed', lambda: join(socket.AF_INET, socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 2))" \
		"time.sleep(0.3)"
}

BND_MC_JOINS=(v4-add-membership v4-mcast-join-group v6-join-group v6-mcast-join-group)

# bnd_mc_wire N [no]: the four groups of run N reported on the wire (no: none of them;
# asked once later runs' reports have arrived, seconds after run N).
bnd_mc_wire() {
	local n=$1 w
	for w in "ipv4 239.199.0.$n" "ipv4 239.198.0.$n" "ipv6 ff0e::199:$n" "ipv6 ff0e::198:$n"; do
		if [ -n "${2:-}" ]; then
			expect_no_grep "$T/wire" "^$w\$"
			continue
		fi
		for _ in $(seq 100); do
			_has "$T/wire" xF "$w" && break
			sleep 0.1
		done
		expect_line "$T/wire" "$w"
	done
}

bnd_multicast_case() {
	local u=$1 j
	net_setup
	net_ns
	bnd_mc_sniffer
	bnd_mc_app
	chmod -R a+rX "$T"
	# unconfined: each join is reported, naming its group
	bnd_plain "$u" python3 "$T/app.py" 1
	for j in "${BND_MC_JOINS[@]}" v4-multicast-ttl-allowed; do
		expect_line "$T/out" "$j ok"
	done
	bnd_mc_wire 1
	# confined, no net= rule: refused, reported, nothing on the wire
	bnd_sb "$u" "$T/app.py" 2
	expect_rc 0
	for j in "${BND_MC_JOINS[@]}"; do
		expect_line "$T/out" "$j EPERM"
	done
	expect_line "$T/out" "v4-multicast-ttl-allowed ok"
	expect_grep "$T/err" "^pysb-bpf: deny net multicast setsockopt level=0 option=35 "
	expect_grep "$T/err" "^pysb-bpf: deny net multicast setsockopt level=41 option=20 "
	expect_grep "$T/err" "^pysb-bpf: deny net multicast setsockopt level=41 option=42 "
	# --audit: allowed, and said
	"$PYSB" run --audit "${BND_MC_USER[@]}" --policy "$T/policy" -- "$T/app.py" 3 >"$T/out" 2>"$T/err"
	for j in "${BND_MC_JOINS[@]}"; do
		expect_line "$T/out" "$j ok"
	done
	expect_grep "$T/err" "^pysb-bpf: audit net multicast setsockopt level=0 option=42 "
	# a rule allowing UDP IN on the groups: the joins succeed, and are reported
	printf '%s\n' "net=ALLOW|udp|239.198.0.0/15|*|IN" "net=ALLOW|udp|ff0e::/16|5000|IN" >>"$T/policy"
	bnd_sb "$u" "$T/app.py" 4
	expect_rc 0
	for j in "${BND_MC_JOINS[@]}"; do
		expect_line "$T/out" "$j ok"
	done
	expect_no_grep "$T/err" "multicast"
	bnd_mc_wire 4
	bnd_mc_wire 2 no
}

test_boundary_multicast_join_refused_without_udp_in_rule_root() {
	BND_MC_USER=()
	bnd_multicast_case root
}

test_boundary_multicast_join_refused_without_udp_in_rule_nobody() {
	once_per_matrix "the same programs as root's; shown once that no capability is involved"
	BND_MC_USER=(--user nobody)
	bnd_multicast_case nobody
}

# docs/faq.md, "Debugging": a debugger inside traces the program's own processes; one
# started outside attaches to the program as usual; an outside process stays untraceable.
test_boundary_debuggers_inside_own_processes_outside_as_usual() {
	write_probe_lib
	mkdir -p "$T/run"
	write_file "$T/lib/trace.py" <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def trace(pid):
    if libc.ptrace(16, pid, None, None) < 0:  # PTRACE_ATTACH
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    os.waitpid(pid, 0)
    libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
PY
	sleep 300 &
	local outside=$! pid
	probe_py "$T/lib/app.py" \
		"import time, trace" \
		"child = os.fork()" \
		"if child == 0:" \
		"    time.sleep(60); os._exit(0)" \
		"attempt('trace-own-child', lambda: trace.trace(child))" \
		"attempt('trace-outside', lambda: trace.trace($outside))" \
		"os.kill(child, 9)" \
		"open('$T/run/pid', 'w').write(str(os.getpid()))" \
		"time.sleep(3)"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/lib" "$T/run" >"$T/policy"
	"$PYSB" run --policy "$T/policy" -- python3 "$T/lib/app.py" >"$T/out" 2>"$T/err" &
	local sb=$!
	for _ in $(seq 100); do [ -s "$T/run/pid" ] && break; sleep 0.1; done
	pid=$(<"$T/run/pid")
	python3 -c "import sys; sys.path.insert(0, '$T/lib'); import trace; trace.trace($pid); print('outside-traces-program ok')" >"$T/out2" 2>&1
	wait "$sb"
	RC=$?
	kill "$outside"
	expect_rc 0
	expect_line "$T/out" "trace-own-child ok"
	expect_line "$T/out" "trace-outside EPERM"
	expect_line "$T/out2" "outside-traces-program ok"
}

# pidfds (found by an adversary): since 6.9 a pidfd is a file of the kernel's pidfs, opened
# through file_open, and every pidfd_open failed in a sandbox (asyncio's and GLib's child
# watchers). A pidfd of the sandbox's own child works, with a signal through it; one of a
# process outside is refused (its uid, parent, cgroup and namespaces are what /proc/<pid>
# of it would tell), as its signal always was. Before 6.9 pidfds are anonymous inodes:
# the outside one opens (nothing can be done with it, the signal stays refused).
bnd_pidfd_case() {
	local u=$1 v pidfs
	bnd_setup
	start_victim "$u"
	v=$VICTIM
	probe_py "$T/app.py" \
		"import signal, subprocess, sys" \
		"child = subprocess.Popen(['/bin/sleep', '100'])" \
		"def own():" \
		"    fd = os.pidfd_open(child.pid); signal.pidfd_send_signal(fd, signal.SIGKILL)" \
		"    os.close(fd); child.wait()" \
		"attempt('pidfd-own-child', own)" \
		"attempt('pidfd-outside', lambda: os.close(os.pidfd_open(int(sys.argv[1]))))" \
		"def kill_outside():" \
		"    fd = os.pidfd_open(int(sys.argv[1])); signal.pidfd_send_signal(fd, 0)" \
		"attempt('pidfd-signal-outside', kill_outside)"
	printf 'python-api=ALLOW:process-exec\nexpose-ro=/usr/bin/sleep\n' >>"$T/policy"
	bnd_plain "$u" python3 "$T/app.py" "$v"
	for l in pidfd-own-child pidfd-outside pidfd-signal-outside; do
		expect_line "$T/out" "$l ok"
	done
	bnd_sb "$u" "$T/app.py" "$v"
	expect_rc 0
	expect_line "$T/out" "pidfd-own-child ok"
	pidfs=$(uname -r | awk -F. '{ print ($1 > 6 || ($1 == 6 && $2 >= 9)) ? 1 : 0 }')
	if [ "$pidfs" = 1 ]; then
		expect_line "$T/out" "pidfd-outside EPERM"
		expect_line "$T/out" "pidfd-signal-outside EPERM"
		expect_grep "$T/err" "^pysb-bpf: deny self pidfd target-pid=$v "
	else
		expect_line "$T/out" "pidfd-outside ok"
		expect_line "$T/out" "pidfd-signal-outside EPERM"
	fi
	[ "$(proc_state "$v")" = S ] || fail "the victim is $(proc_state "$v")"
	kill "$v" 2>/dev/null
	wait 2>/dev/null
	return 0
}

test_boundary_pidfd_own_child_allowed_outside_denied_root() {
	bnd_pidfd_case root
}

test_boundary_pidfd_own_child_allowed_outside_denied_nobody() {
	bnd_pidfd_case nobody
}

# docs/hooks.md lists every LSM hook of the kernels the suite runs on, with the program of
# pysb-bpf on it or why none is needed (scripts/check-hooks holds the programs to it). A
# kernel whose BTF has a hook the page does not list for it, or lacks one the page does,
# fails here until someone has looked at that hook and decided.
test_boundary_every_lsm_hook_of_this_kernel_is_accounted_for() {
	local k hook
	k=$(uname -r | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
	command -v bpftool >/dev/null || fail "bpftool is missing (scripts/deps.sh installs it)"
	bpftool btf dump file /sys/kernel/btf/vmlinux |
		sed -n "s/^\[[0-9]*\] FUNC 'bpf_lsm_\([a-z0-9_]*\)'.*/\1/p" | sort -u >"$T/kernel"
	[ "$(wc -l <"$T/kernel")" -gt 100 ] || fail "this kernel's BTF names $(wc -l <"$T/kernel") bpf_lsm_ functions"
	sed -n "s/^| \`\([a-z0-9_]*\)\` | \([^|]*\) |.*/\1 \2/p" "$REPO/docs/hooks.md" |
		while read -r hook kernels; do
			[[ " $kernels " == *" $k "* ]] && echo "$hook"
		done | sort -u >"$T/page"
	comm -23 "$T/kernel" "$T/page" >"$T/unlisted"
	comm -13 "$T/kernel" "$T/page" >"$T/absent"
	[ ! -s "$T/unlisted" ] ||
		fail "kernel $k has LSM hooks docs/hooks.md does not list for it: $(tr '\n' ' ' <"$T/unlisted")"
	[ ! -s "$T/absent" ] ||
		fail "docs/hooks.md lists hooks kernel $k does not have: $(tr '\n' ' ' <"$T/absent")"
}
