# Capabilities (issue 16, cause 1): the program starts with none, root or not, and
# lsm/capable refuses every capability the policy does not grant. Each privileged operation
# is first shown to work unconfined (the same helper, run plainly as root), then to fail
# confined, then to work again when bpf.capabilities= grants exactly its capability.

# Every operation of build/e2e/cap_escape, and what the kernel answers a confined one.
CAP_OPS="sethostname acct syslog ioperm delete_module reboot-cad-off perf-system-wide
fanotify-content fspick mount_setattr immutable mtu trusted-xattr mknod-chr mknod-blk bind-80
userns-netns"

# caps_setup: a tmpfs of our own at $T/mnt (flags, xattrs, remounts stay on it) with an
# exposed read-only directory and an expose-rw one; the helper copied to $T/bin (readable
# by nobody); $T/policy exposing them and allowing a bind on 127.0.0.1:80.
caps_setup() {
	mkdir -p "$T/mnt" "$T/bin"
	mount -t tmpfs -o mode=755 pysb-caps "$T/mnt" || fail "cannot mount a tmpfs on $T/mnt"
	trap 'caps_restore' EXIT
	mkdir -p "$T/mnt/ro" "$T/mnt/rw"
	chmod a+rwx "$T/mnt/rw"
	echo data >"$T/mnt/ro/victim"
	echo data >"$T/mnt/rw/victim"
	cp "$REPO/build/e2e/cap_escape" "$T/bin/" || fail "build/e2e/cap_escape missing (make e2e builds it)"
	chmod -R a+rX "$T/bin"
	# syslog(2) reads are open to all when dmesg_restrict is 0: make them privileged.
	# Debian's perf_event_paranoid=3 wants CAP_SYS_ADMIN for any perf event; at 2 (the
	# kernel's own default) a system-wide event wants CAP_PERFMON, as upstream documents.
	DMESG=$(sysctl -n kernel.dmesg_restrict)
	PARANOID=$(sysctl -n kernel.perf_event_paranoid)
	sysctl -qw kernel.dmesg_restrict=1 kernel.perf_event_paranoid=2
	printf 'expose-ro=%s\nexpose-ro=%s\nexpose-rw=%s\nnet=ALLOW|TCP|127.0.0.1|80|IN\n' \
		"$T/bin" "$T/mnt/ro" "$T/mnt/rw" >"$T/policy"
	# The immutable flag on the rw victim: inode flags need WRITE on the file whatever the
	# capabilities (test_escape_inode_flags_of_read_only_file_need_write), so the
	# capability alone decides there.
	HELPER=("$T/bin/cap_escape" --dir "$T/mnt/rw" --mnt "$T/mnt" --file "$T/mnt/rw/victim")
}

caps_restore() {
	umount -l "$T/mnt" 2>/dev/null
	sysctl -qw kernel.dmesg_restrict="$DMESG" kernel.perf_event_paranoid="$PARANOID" 2>/dev/null
	return 0
}

# The kernel's answer when the capability is missing.
cap_denied_errno() {
	case $1 in
	perf-system-wide | bind-80) echo 13 ;; # EACCES: perf_allow_cpu, inet_bind
	*) echo 1 ;;
	esac
}

# expect_ops FILE OK-OPS: each op of CAP_OPS in OK-OPS worked, each other one was refused
# with its errno (delete_module of no module: ENOENT when allowed). OP? in OK-OPS: either
# (the kernel's own rule differs between versions).
expect_ops() {
	local op ok=" ${2//$'\n'/ } "
	for op in $CAP_OPS; do
		if [[ $ok == *" $op? "* ]]; then
			expect_grep "$1" "^$op (ok|errno=$(cap_denied_errno "$op"))$"
		elif [[ $ok == *" $op "* ]]; then
			if [ "$op" = delete_module ]; then
				expect_line "$1" "delete_module errno=2"
			else
				expect_line "$1" "$op ok"
			fi
		else
			expect_line "$1" "$op errno=$(cap_denied_errno "$op")"
		fi
	done
}

test_caps_root_escapes_work_unconfined_fail_confined() {
	caps_setup
	# The attack, plainly, as root: every operation works.
	run_plain "${HELPER[@]}" $CAP_OPS
	expect_rc 0
	expect_ops "$T/out" "$CAP_OPS"
	# The same program confined, as root: every one refused; no capability left anywhere.
	run_sb "$T/policy" "${HELPER[@]}" caps securebits-locked $CAP_OPS
	expect_rc 0
	expect_line "$T/out" "caps prm=0 eff=0 inh=0 bnd=0 amb=0"
	expect_line "$T/out" "securebits-locked yes"
	expect_ops "$T/out" ""
	# In a user namespace of its own the kernel's check passes: lsm/capable refuses, and says so.
	expect_grep "$T/err" "^pysb-bpf: deny capability capable CAP_SYS_ADMIN \(not granted by bpf.capabilities\) pid=[0-9]+ tid=[0-9]+ comm=cap_escape$"
	[ ! -e "$T/mnt/rw/chr" ] && [ ! -e "$T/mnt/rw/blk" ] || fail "a device node was made"
}

# bpf.capabilities=X: the operations that need X work again, every other one stays refused.
test_caps_granted_capability_makes_exactly_its_operations_work() {
	caps_setup
	local grant ok
	while read -r grant ok; do
		[ "$grant" = "#" ] && continue
		cp "$T/policy" "$T/policy-$grant"
		printf 'bpf.capabilities=%s\n' "$grant" >>"$T/policy-$grant"
		run_sb "$T/policy-$grant" "${HELPER[@]}" $CAP_OPS
		expect_rc 0
		expect_ops "$T/out" "${ok//,/ }"
	done <<'EOF'
# syslog? : 6.1 still lets CAP_SYS_ADMIN read the kernel log (with a warning), 6.12 not
CAP_SYS_PACCT acct
cap_syslog syslog
SYS_RAWIO ioperm
CAP_SYS_MODULE delete_module
CAP_SYS_BOOT reboot-cad-off
CAP_PERFMON perf-system-wide
CAP_LINUX_IMMUTABLE immutable
CAP_NET_ADMIN mtu
CAP_MKNOD mknod-chr,mknod-blk
CAP_NET_BIND_SERVICE bind-80
CAP_SYS_ADMIN sethostname,syslog?,perf-system-wide,fanotify-content,fspick,mount_setattr,trusted-xattr,userns-netns
EOF
	# and in the ambient set, so a program it executes keeps it (root's execve adds nothing)
	printf 'bpf.capabilities=CAP_NET_BIND_SERVICE\npython-api=ALLOW:process-exec\n' >>"$T/policy"
	run_sb "$T/policy" "${HELPER[@]}" caps reexec-caps
	expect_rc 0
	[ "$(count_lines "$T/out" "^caps prm=400 eff=400 inh=400 bnd=400 amb=400$")" = 2 ] ||
		fail "the granted capability is not kept, alone, across the execve: $(cat "$T/out")"
}

test_caps_root_execve_regains_nothing() {
	caps_setup
	printf 'python-api=ALLOW:process-exec\n' >>"$T/policy"
	run_sb "$T/policy" "${HELPER[@]}" reexec-caps securebits-locked
	expect_rc 0
	expect_line "$T/out" "caps prm=0 eff=0 inh=0 bnd=0 amb=0"
	expect_line "$T/out" "securebits-locked yes"
}

# Through sudo the program runs as the invoking user: no capability either, and a granted
# one is kept by that user too (ambient). A user namespace gives it none that works.
test_caps_non_root_user() {
	caps_setup
	id nobody >/dev/null 2>&1 || fail "no user nobody in this system"
	# unconfined, nobody creates a user namespace and a network namespace in it
	run_plain setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups "${HELPER[@]}" userns-netns bind-80 sethostname
	expect_line "$T/out" "userns-netns ok"
	expect_line "$T/out" "bind-80 errno=13"
	expect_line "$T/out" "sethostname errno=1"
	SUDO_UID=$(id -u nobody) SUDO_GID=$(id -g nobody) run_sb "$T/policy" "${HELPER[@]}" caps $CAP_OPS
	expect_rc 0
	expect_line "$T/out" "caps prm=0 eff=0 inh=0 bnd=0 amb=0"
	expect_ops "$T/out" ""
	expect_grep "$T/err" "^pysb-bpf: deny capability capable CAP_SYS_ADMIN "
	printf 'bpf.capabilities=CAP_NET_BIND_SERVICE\n' >>"$T/policy"
	SUDO_UID=$(id -u nobody) SUDO_GID=$(id -g nobody) run_sb "$T/policy" "${HELPER[@]}" caps bind-80 sethostname
	expect_rc 0
	expect_line "$T/out" "caps prm=400 eff=400 inh=400 bnd=400 amb=400"
	expect_line "$T/out" "bind-80 ok"
	expect_line "$T/out" "sethostname errno=1"
}

# kernel.dmesg_restrict=0 opens the kernel log to every user, kernel.perf_event_paranoid=-1
# (a profiling host's setting) every CPU and the kernel to every user's perf events: the
# kernel then asks for no capability, so lsm/capable never runs. A sandbox still gets
# neither unless its policy grants the capability the strict setting asks for (lsm/syslog,
# lsm/perf_event_open); the log's size and the program's own counters stay open.
caps_open_run() { # USER OP...: run_sb as USER (root, or nobody through SUDO_UID)
	local u=$1
	shift
	if [ "$u" = root ]; then
		run_sb "$T/policy" "${HELPER[@]}" "$@"
	else
		SUDO_UID=$(id -u "$u") SUDO_GID=$(id -g "$u") run_sb "$T/policy" "${HELPER[@]}" "$@"
	fi
	expect_rc 0
}

test_caps_open_sysctls_open_nothing_to_a_sandbox() {
	local ops="syslog syslog-size perf-system-wide perf-self" op u
	caps_setup
	sysctl -qw kernel.dmesg_restrict=0 kernel.perf_event_paranoid=-1
	# unconfined, nobody reads the kernel log and counts on every CPU
	run_plain setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups "${HELPER[@]}" $ops
	expect_rc 0
	for op in $ops; do
		expect_line "$T/out" "$op ok"
	done
	for u in root nobody; do
		caps_open_run $u $ops
		expect_line "$T/out" "syslog errno=1"
		expect_line "$T/out" "perf-system-wide errno=1"
		expect_line "$T/out" "syslog-size ok"
		expect_line "$T/out" "perf-self ok"
		expect_grep "$T/err" "^pysb-bpf: deny capability syslog CAP_SYSLOG \(not granted by bpf.capabilities\) pid=[0-9]+ "
		expect_grep "$T/err" "^pysb-bpf: deny capability perf CAP_PERFMON \(not granted by bpf.capabilities\) pid=[0-9]+ "
	done
	# granted: both work again, for nobody too (kept in its ambient set)
	printf 'bpf.capabilities=CAP_SYSLOG,CAP_PERFMON\n' >>"$T/policy"
	for u in root nobody; do
		caps_open_run $u syslog perf-system-wide
		expect_line "$T/out" "syslog ok"
		expect_line "$T/out" "perf-system-wide ok"
	done
}

# A service the daemon confines in place keeps its capability sets: lsm/capable refuses
# each one its policy does not grant, and a reload that grants it lets it through.
test_caps_daemon_confined_service_refused_by_lsm_capable() {
	local cg=$CGT/capsvc
	caps_setup
	trap 'svc_cleanup; caps_restore' EXIT
	mkdir -p "$T/conf" "$cg"
	printf 'expose-ro=%s\n' "$T/bin" >"$T/conf/capsvc.py-sandboxes"
	binding capsvc '{"policy": "capsvc.py-sandboxes", "cgroup": "pysb-e2e/capsvc"}'
	(echo $BASHPID >"$cg/cgroup.procs" && exec "$T/bin/cap_escape" serve "$T/svc.log" sethostname) &
	SPID=$!
	wait_for "$T/svc.log" '^ready$'
	kill -USR1 $SPID
	wait_for "$T/svc.log" '^sethostname ok$'
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "capsvc: confined $cg "
	grep -q '^CapEff:.*[1-9a-f]' /proc/$SPID/status || fail "the service lost its capabilities"
	kill -USR1 $SPID
	wait_for "$T/svc.log" '^sethostname errno=1$'
	wait_for "$T/events.jsonl" '"kind":"capability"'
	expect_grep "$T/events.jsonl" '"decision":"deny","kind":"capability","operation":"capable".*"capability":"CAP_SYS_ADMIN"'
	# granted on reload: the same process, the same capability, now allowed
	printf 'bpf.capabilities=CAP_SYS_ADMIN\n' >>"$T/conf/capsvc.py-sandboxes"
	kill -HUP "$DPID"
	wait_for "$T/daemon.err" "capsvc: policy .* reloaded"
	kill -USR1 $SPID
	wait_for "$T/svc.log" '^sethostname ok$' 2
}

# --audit: nothing is denied, so the program keeps what it had; each capability the
# policy does not grant is reported, and --learn grants it.
test_caps_audit_reports_and_learn_grants() {
	caps_setup
	"$PYSB" run --policy "$T/policy" --learn="$T/learned" -- "${HELPER[@]}" reboot-cad-off >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_line "$T/out" "reboot-cad-off ok"
	expect_grep "$T/err" "^pysb-bpf: audit capability capable CAP_SYS_BOOT "
	expect_line "$T/learned" "bpf.capabilities=CAP_SYS_BOOT"
	cat "$T/policy" "$T/learned" >"$T/policy2"
	run_sb "$T/policy2" "${HELPER[@]}" reboot-cad-off sethostname
	expect_rc 0
	expect_line "$T/out" "reboot-cad-off ok"
	expect_line "$T/out" "sethostname errno=1"
}

test_caps_unknown_name_is_a_policy_error() {
	printf 'expose-ro=/usr\nbpf.capabilities=CAP_NET_BIND_SERVICE, sys_nope\n' >"$T/policy"
	run_sb "$T/policy" /usr/bin/true
	expect_rc 125
	expect_grep "$T/err" "policy:2:40: .*unknown capability 'sys_nope'"
	"$PYSB" check --policy "$T/policy" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 1
	printf 'expose-ro=/usr\nbpf.capabilities=net_bind_service\n' >"$T/policy"
	"$PYSB" check --policy "$T/policy" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_grep "$T/out" "^bpf     bpf.capabilities=net_bind_service: the program keeps CAP_NET_BIND_SERVICE "
}

# attach: the process keeps its capability sets (they cannot be dropped from outside);
# lsm/capable refuses them while it is confined, and the detach gives them back.
test_caps_attached_process_refused_by_lsm_capable() {
	local apid
	caps_setup
	"$T/bin/cap_escape" serve "$T/svc.log" sethostname &
	SPID=$!
	trap 'kill -9 $SPID $apid 2>/dev/null; caps_restore' EXIT
	wait_for "$T/svc.log" '^ready$'
	kill -USR1 $SPID
	wait_for "$T/svc.log" '^sethostname ok$'
	"$PYSB" attach --pid "$SPID" --policy "$T/policy" >"$T/out" 2>"$T/err" &
	apid=$!
	wait_for "$T/err" "process $SPID is confined from now on"
	kill -USR1 $SPID
	wait_for "$T/svc.log" '^sethostname errno=1$'
	wait_for "$T/err" "^pysb-bpf: deny capability capable CAP_SYS_ADMIN "
	kill -INT "$apid"
	wait "$apid"
	wait_for "$T/err" "process $SPID detached"
	kill -USR1 $SPID
	wait_for "$T/svc.log" '^sethostname ok$' 2
}

# overlayfs looks files up under its mounter's credentials (the trusted.* metacopy xattr
# needs CAP_SYS_ADMIN): that check is the mounter's, not the program's. It must neither
# show as a denial nor be learned as bpf.capabilities= (the test VM's root is an overlay,
# as a container's is; a second overlay is made here too).
test_caps_overlay_lookups_are_not_the_programs() {
	mkdir -p "$T/lower/pkg" "$T/upper" "$T/work" "$T/merged"
	for i in $(seq 20); do echo "x = $i" >"$T/lower/pkg/m$i.py"; done
	mount -t overlay overlay -o "lowerdir=$T/lower,upperdir=$T/upper,workdir=$T/work" "$T/merged" ||
		fail "cannot mount the test overlay"
	write_file "$T/app.py" <<PY
import ctypes, sys
sys.path.insert(0, "$T/merged/pkg")
open("/proc/self/status").read()
for i in range(1, 21):
    __import__(f"m{i}")
print("imported", flush=True)
os_ = __import__("os")
os_.mkdir("$T/merged/pkg/newdir")
open("$T/merged/pkg/newdir/f", "w").write("y")
os_.rename("$T/merged/pkg/m1.py", "$T/merged/pkg/renamed.py")
print("written", flush=True)
PY
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T" "$T/merged" >"$T/policy"
	run_sb "$T/policy" python3 "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "imported"
	expect_line "$T/out" "written"
	expect_no_grep "$T/err" "capability"
	umount "$T/merged"
	rm -rf "$T/upper" "$T/work" && mkdir -p "$T/upper" "$T/work"
	mount -t overlay overlay -o "lowerdir=$T/lower,upperdir=$T/upper,workdir=$T/work" "$T/merged" ||
		fail "cannot mount the test overlay again"
	cp "$T/policy" "$T/learned"
	"$PYSB" run --learn="$T/learned" --policy "$T/policy" -- python3 "$T/app.py" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_no_grep "$T/learned" "bpf.capabilities"
	umount "$T/merged"
}

# perf events beyond the program's own processes (found by an adversary, round 24): with
# kernel.perf_event_paranoid at 0 or -1 a CPU-wide event needs no capability, and a
# sandbox sampled every process that ran on the CPU (an outside process's pid, its
# instruction pointer, registers and stack). A sandbox is judged as with paranoid=2:
# CAP_PERFMON, by bpf.capabilities=; an event on the program itself stays free.
test_caps_cpu_wide_perf_event_needs_cap_perfmon() {
	once_per_matrix "the harm shown (an outside process sampled); the hook's verdict on every kernel: test_caps_open_sysctls_open_nothing_to_a_sandbox"
	local old victim
	old=$(cat /proc/sys/kernel/perf_event_paranoid)
	id nobody >/dev/null 2>&1 || fail "no user nobody in this system"
	write_file "$T/perf.py" <<'PY'
import ctypes, mmap, os, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
victim = int(sys.argv[1])
os.sched_setaffinity(0, {0})
def event(pid, cpu, sample):
    attr = bytearray(112)
    # PERF_TYPE_SOFTWARE, CPU_CLOCK, every 100 us, PERF_SAMPLE_TID; exclude_kernel, exclude_hv
    struct.pack_into("IIQQQQQ", attr, 0, 1, 112, 0, 100000, 2 if sample else 0, 0, 0x60)
    return libc.syscall(298, (ctypes.c_char * 112).from_buffer(attr), pid, cpu, -1, 0)
fd = event(0, -1, False)
print("own", "ok" if fd >= 0 else "errno=%d" % ctypes.get_errno(), flush=True)
fd = event(-1, 0, True)
if fd < 0:
    print("cpu-wide errno=%d" % ctypes.get_errno(), flush=True)
    sys.exit(0)
print("cpu-wide ok", flush=True)
m = mmap.mmap(fd, 17 * 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
end = time.time() + 5
while time.time() < end:
    data = m[4096:]
    for j in range(0, len(data) - 16, 8):
        typ, misc, size, pid = struct.unpack_from("IHHI", data, j)
        if typ == 9 and size == 16 and pid == victim:  # PERF_RECORD_SAMPLE
            print("victim sampled", flush=True)
            sys.exit(0)
    struct.pack_into("Q", m, 1032, struct.unpack_from("Q", m, 1024)[0])
    time.sleep(0.05)
print("victim not sampled", flush=True)
PY
	printf 'expose-ro=%s\n' "$T" >"$T/policy"
	taskset -c 0 bash -c 'while :; do :; done' &
	victim=$!
	# shellcheck disable=SC2064 # expand now
	trap "kill $victim; echo $old >/proc/sys/kernel/perf_event_paranoid" EXIT
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	run_plain setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups python3 "$T/perf.py" "$victim"
	expect_line "$T/out" "own ok"
	expect_line "$T/out" "cpu-wide ok"
	expect_line "$T/out" "victim sampled"
	SUDO_UID=$(id -u nobody) SUDO_GID=$(id -g nobody) run_sb "$T/policy" python3 "$T/perf.py" "$victim"
	expect_line "$T/out" "own ok"
	expect_line "$T/out" "cpu-wide errno=1"
	expect_grep "$T/err" "^pysb-bpf: deny capability perf CAP_PERFMON "
	run_sb "$T/policy" python3 "$T/perf.py" "$victim"
	expect_line "$T/out" "own ok"
	expect_line "$T/out" "cpu-wide errno=1"
	expect_grep "$T/err" "^pysb-bpf: deny capability perf CAP_PERFMON "
	printf 'bpf.capabilities=CAP_PERFMON\n' >>"$T/policy"
	run_sb "$T/policy" python3 "$T/perf.py" "$victim"
	expect_rc 0
	expect_line "$T/out" "cpu-wide ok"
	expect_line "$T/out" "victim sampled"
}
