# SysV IPC (bpf/sysv.bpf.c): a sandboxed task reaches only the segments, queues and
# semaphore sets created in its own sandbox. Shown on a process confined in place (attach:
# it keeps the caller's IPC namespace, as the daemon's services do), where nothing but the
# kernel hooks stands between it and the host's objects, and on a run.

# The probe's ctypes calls: each prints "LABEL ok" or "LABEL <errno name>".
write_sysv_lib() {
	mkdir -p "$T/lib"
	write_file "$T/lib/sysv.py" <<'PY'
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
IPC_PRIVATE, IPC_CREAT, IPC_RMID, IPC_STAT, SHM_RDONLY, GETVAL = 0, 0o1000, 0, 2, 0o10000, 12

def say(out, label, ok):
    e = ctypes.get_errno()
    out.write(f"{label} {'ok' if ok else errno.errorcode.get(e, str(e))}\n")

def probe(out, cell, shm, q, sem, destroy=False):
    buf = ctypes.create_string_buffer(512)
    addr = libc.shmat(shm, None, SHM_RDONLY)
    ok = addr not in (None, ctypes.c_void_p(-1).value)
    say(out, f"{cell} shmat", ok)
    if ok:
        out.write(f"{cell} shm-data {ctypes.string_at(addr, 6).decode(errors='replace')}\n")
        libc.shmdt(ctypes.c_void_p(addr))
    say(out, f"{cell} shm-stat", libc.shmctl(shm, IPC_STAT, buf) == 0)
    say(out, f"{cell} msg-stat", libc.msgctl(q, IPC_STAT, buf) == 0)
    say(out, f"{cell} sem-getval", libc.semctl(sem, 0, GETVAL) >= 0)
    if destroy:
        say(out, f"{cell} shm-rmid", libc.shmctl(shm, IPC_RMID, None) == 0)
        say(out, f"{cell} msg-rmid", libc.msgctl(q, IPC_RMID, None) == 0)
    # its own objects: created, used, removed
    own = libc.shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
    a = libc.shmat(own, None, 0) if own >= 0 else None
    ok = own >= 0 and a not in (None, ctypes.c_void_p(-1).value)
    if ok:
        ctypes.memmove(a, b"mine", 4)
        ok = ctypes.string_at(a, 4) == b"mine"
        libc.shmdt(ctypes.c_void_p(a))
    say(out, f"{cell} own-shm", ok and libc.shmctl(own, IPC_RMID, None) == 0)
    mq = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
    msg = ctypes.create_string_buffer(b"\x01\0\0\0\0\0\0\0hello", 16)
    ok = mq >= 0 and libc.msgsnd(mq, msg, 5, 0) == 0
    back = ctypes.create_string_buffer(16)
    ok = ok and libc.msgrcv(mq, back, 8, 0, 0) == 5 and back.raw[8:13] == b"hello"
    say(out, f"{cell} own-msg", ok and libc.msgctl(mq, IPC_RMID, None) == 0)
PY
}

# Victims made outside any sandbox (by user $1, default root), readable and writable by
# every user (mode 0666), the segment holding "secret": their ids in SHM, Q and SEM.
make_sysv_victims() {
	local as=(setpriv --reuid "${1:-root}" --regid "${1:-root}" --clear-groups)
	[ "${1:-root}" = nobody ] && as=(setpriv --reuid nobody --regid nogroup --clear-groups)
	SHM=$("${as[@]}" ipcmk -M 4096 -p 0666 | awk '{print $NF}')
	Q=$("${as[@]}" ipcmk -Q -p 0666 | awk '{print $NF}')
	SEM=$("${as[@]}" ipcmk -S 1 -p 0666 | awk '{print $NF}')
	[ -n "$SHM" ] && [ -n "$Q" ] && [ -n "$SEM" ] || fail "ipcmk failed"
	python3 - "$SHM" <<'PY' || fail "cannot write the victim segment"
import ctypes, sys
libc = ctypes.CDLL(None)
libc.shmat.restype = ctypes.c_void_p
a = libc.shmat(int(sys.argv[1]), None, 0)
ctypes.memmove(a, b"secret", 6)
PY
}

remove_sysv_victims() {
	ipcrm -m "$SHM" -q "$Q" -s "$SEM" 2>/dev/null
}

# A long-lived process (a notebook kernel, a service) as `nobody`, confined in place by
# attach, and objects of the same user outside it: before, everything is reachable;
# under it, only its own objects, and the user's others cannot be removed; after the
# detach, reachable again.
test_ipc_attached_process_reaches_only_its_own_sysv_objects() {
	write_sysv_lib
	make_sysv_victims nobody
	mkdir -p "$T/run" && chmod 777 "$T/run"
	mkfifo -m 666 "$T/cmd"
	write_file "$T/svc.py" <<PY
import sys
sys.path.insert(0, "$T/lib")
import sysv
out = open("$T/run/log", "a", buffering=1)
for line in open("$T/cmd"):
    cell = line.strip()
    if cell == "quit":
        break
    sysv.probe(out, cell, $SHM, $Q, $SEM, destroy=(cell == "c2"))
    out.write(f"{cell} done\n")
PY
	setpriv --reuid nobody --regid nogroup --clear-groups python3 "$T/svc.py" &
	local kpid=$! apid
	exec 7>"$T/cmd"
	echo c1 >&7
	for _ in $(seq 100); do grep -q "^c1 done" "$T/run/log" 2>/dev/null && break; sleep 0.1; done
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/lib" "$T/run" >"$T/policy"
	"$PYSB" attach --pid "$kpid" --policy "$T/policy" --events "$T/ev.jsonl" >"$T/out" 2>"$T/err" &
	apid=$!
	for _ in $(seq 100); do grep -q "is confined from now on" "$T/err" 2>/dev/null && break; sleep 0.1; done
	expect_grep "$T/err" "process $kpid is confined from now on"
	echo c2 >&7
	for _ in $(seq 100); do grep -q "^c2 done" "$T/run/log" 2>/dev/null && break; sleep 0.1; done
	kill -INT "$apid"
	wait "$apid"
	echo c3 >&7
	echo quit >&7
	exec 7>&-
	wait "$kpid"
	# unconfined, as nobody: the host's objects are read (and could be removed)
	expect_line "$T/run/log" "c1 shmat ok"
	expect_line "$T/run/log" "c1 shm-data secret"
	expect_line "$T/run/log" "c1 msg-stat ok"
	expect_line "$T/run/log" "c1 sem-getval ok"
	# confined: each refused by the kernel, the program's own objects still work
	for op in shmat shm-stat msg-stat sem-getval shm-rmid msg-rmid; do
		expect_line "$T/run/log" "c2 $op EACCES"
	done
	expect_no_grep "$T/run/log" "^c2 shm-data"
	expect_line "$T/run/log" "c2 own-shm ok"
	expect_line "$T/run/log" "c2 own-msg ok"
	# the host's objects survived the attempt, and read again after the detach
	ipcs -m -i "$SHM" >/dev/null 2>&1 || fail "the host's segment was removed"
	ipcs -q -i "$Q" >/dev/null 2>&1 || fail "the host's queue was removed"
	expect_line "$T/run/log" "c3 shmat ok"
	expect_line "$T/run/log" "c3 msg-stat ok"
	expect_grep "$T/ev.jsonl" "\"operation\":\"ipc\".*\"ipc_id\":$SHM"
	expect_grep "$T/err" "deny self ipc ipc-id=$SHM "
	remove_sysv_victims
}

# The same attempts from a program pysb-bpf starts (as root): the host's objects are out of
# reach, its own work.
test_ipc_run_reaches_only_its_own_sysv_objects() {
	write_sysv_lib
	make_sysv_victims
	write_file "$T/app.py" <<PY
import sys
sys.path.insert(0, "$T/lib")
import sysv
sysv.probe(sys.stdout, "x", $SHM, $Q, $SEM, destroy=True)
PY
	printf 'expose-ro=%s\n' "$T/lib" >"$T/policy"
	run_plain python3 "$T/app.py"
	expect_line "$T/out" "x shm-data secret"
	expect_line "$T/out" "x shm-rmid ok"
	remove_sysv_victims
	make_sysv_victims
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	for op in shmat shm-stat msg-stat sem-getval shm-rmid msg-rmid; do
		expect_grep "$T/out" "^x $op E[A-Z]+$"
	done
	expect_no_grep "$T/out" "^x shm-data"
	expect_line "$T/out" "x own-shm ok"
	expect_line "$T/out" "x own-msg ok"
	ipcs -m -i "$SHM" >/dev/null 2>&1 || fail "the host's segment was removed"
	remove_sysv_victims
}

# The records of a run's objects in ipc_owner (their address -> sandbox id): objects that
# outlive the run (its IPC namespace held open from outside) keep theirs only until its
# end, which reads them back only when `owner_records` counts any (user/kernel/maps.c):
# with a count too low, the records would stay for the next sandbox to take the id.
test_ipc_run_end_removes_the_records_of_objects_that_outlive_it() {
	write_file "$T/app.py" <<PY
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
made = [libc.shmget(0, 4096, 0o1000 | 0o600) for _ in range(3)]
made += [libc.msgget(0, 0o1000 | 0o600)]
print("made", *made, os.getpid(), flush=True)
while not os.path.exists("$T/stop"):
    time.sleep(0.05)
PY
	printf 'expose-ro=%s\n' "$T" >"$T/policy"
	# records of sandbox $1 in ipc_owner (each value a little-endian u32)
	records_of() {
		bpftool map dump pinned /sys/fs/bpf/pysb-bpf/*/map-ipc_owner -j | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin)
          if int.from_bytes(bytes(int(b, 16) for b in e["value"][:4]), "little") == int(sys.argv[1])))' "$1"
	}
	PYSB_BPF_LOG=info "$PYSB" run --policy "$T/policy" -- "$T/app.py" >"$T/out" 2>"$T/err" &
	local sup=$! id pid
	wait_for "$T/out" '^made' 1 60
	id=$(sed -n 's/^pysb-bpf: sandbox \([0-9]*\): its event ring buffer holds.*/\1/p' "$T/err")
	pid=$(awk '/^made/ {print $NF}' "$T/out")
	[ -n "$id" ] && [ -n "$pid" ] || fail "no sandbox id or pid: $(head -c 2000 "$T/err")"
	expect_no_grep "$T/out" "^made.* -1 "
	exec 9<"/proc/$pid/ns/ipc"
	# the objects and their records exist: what a later sandbox with this id would reach
	[ "$(records_of "$id")" -ge 4 ] || fail "ipc_owner holds $(records_of "$id") records of sandbox $id, not 4"
	touch "$T/stop"
	wait "$sup"
	RC=$?
	expect_rc 0
	# (counted while the namespace is held: closing it frees the objects, and their
	# records with them)
	local left records
	left=$(nsenter --ipc=/proc/self/fd/9 ipcs -m -q | grep -c '^0x')
	records=$(records_of "$id")
	exec 9<&-
	[ "$left" -ge 4 ] || fail "the run's objects did not outlive it ($left): nothing shown"
	[ "$records" = 0 ] || fail "$records records of sandbox $id left in ipc_owner after its end"
	# and counted off its own count (a -1 of user space on another sandbox's count let
	# that one's end skip records it still had)
	[ "$(owner_count ipc "$id")" = 0 ] ||
		fail "owner_records still counts $(owner_count ipc "$id") records of sandbox $id"
}

# POSIX message queues (bpf/file.bpf.c, check_mqueue): mq_unlink(3) and mq_open(O_CREAT)
# reach the kernel's unlink and create past the path hooks; judged as any name is, WRITE
# on the directory of the queues (/dev/mqueue). mq.py OP NAME [OP NAME...]: each
# operation through libc prints "OP NAME ok" or "OP NAME <errno name>": creat (O_CREAT |
# O_EXCL, 0600), open, use (a message sent and received), unlink.
write_mq_lib() {
	mkdir -p "$T/lib"
	write_file "$T/lib/mq.py" <<'PY'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)

def mq(op, name):
    n = name.encode()
    if op == "creat":
        r = libc.mq_open(n, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600, None)
    elif op == "open":
        r = libc.mq_open(n, os.O_RDWR)
    elif op == "use":
        r = fd = libc.mq_open(n, os.O_RDWR)
        buf = ctypes.create_string_buffer(8192)
        if fd >= 0 and libc.mq_send(fd, b"mine", 4, 0) == 0:
            r = libc.mq_receive(fd, buf, 8192, None)
            r = r if buf.value == b"mine" else -1
    else:
        r = libc.mq_unlink(n)
    e = ctypes.get_errno()
    return f"{op} {name} {'ok' if r >= 0 else errno.errorcode.get(e, str(e))}"

if __name__ == "__main__":
    args = sys.argv[1:]
    for i in range(0, len(args), 2):
        print(mq(args[i], args[i + 1]), flush=True)
PY
}

# mq_outside OP NAME: the operation as nobody, outside any sandbox; its line on stdout.
mq_outside() {
	setpriv --reuid nobody --regid nogroup --clear-groups python3 "$T/lib/mq.py" "$@"
}

# mq_cell CELL OP NAME...: the attached service runs the operations (its lines "CELL ...
# in $T/run/log), then says "CELL done".
mq_cell() {
	echo "$*" >&7
	wait_line "$T/run/log" "^$1 done" 300 0.1 || fail "cell $1 did not end: $(cat "$T/run/log")"
}

# A service as `nobody`, confined in place by attach, keeps the host's IPC namespace:
# unconfined it removes a queue of the same user and creates one; attached, both are
# refused in the kernel (found by an adversary: mq_unlink removed the host's queue and
# mq_open(O_CREAT) created one, only the open after it being refused), the queue is still
# there and nothing was created; detached, it acts again. With a rule granting
# /dev/mqueue, the same service creates, uses and removes a queue of its own.
test_ipc_attached_process_cannot_remove_or_create_host_posix_queues() {
	write_mq_lib
	mkdir -p /dev/mqueue "$T/run" && chmod 777 "$T/run"
	if ! mountpoint -q /dev/mqueue; then
		mount -t mqueue none /dev/mqueue || fail "cannot mount mqueue"
		trap 'umount /dev/mqueue' EXIT
	fi
	local v=/pysb-e2e-v$$ s=/pysb-e2e-s$$ own=/pysb-e2e-own$$ kpid apid
	mkfifo -m 666 "$T/cmd"
	write_file "$T/svc.py" <<PY
import sys
sys.path.insert(0, "$T/lib")
from mq import mq
out = open("$T/run/log", "a", buffering=1)
for line in open("$T/cmd"):
    cell, *ops = line.split()
    if cell == "quit":
        break
    for i in range(0, len(ops), 2):
        out.write(f"{cell} {mq(ops[i], ops[i + 1])}\n")
    out.write(f"{cell} done\n")
PY
	mq_outside creat "$v" >"$T/out"
	expect_line "$T/out" "creat $v ok"
	setpriv --reuid nobody --regid nogroup --clear-groups python3 "$T/svc.py" &
	kpid=$!
	exec 7>"$T/cmd"
	# unconfined: the same user's queue removed, another created
	mq_cell c1 unlink "$v" creat "$s"
	expect_line "$T/run/log" "c1 unlink $v ok"
	expect_line "$T/run/log" "c1 creat $s ok"
	mq_outside unlink "$s" creat "$v" >"$T/out"
	expect_line "$T/out" "unlink $s ok"
	expect_line "$T/out" "creat $v ok"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/lib" "$T/run" >"$T/policy"
	"$PYSB" attach --pid "$kpid" --policy "$T/policy" --events "$T/ev.jsonl" >"$T/att.out" 2>"$T/err" &
	apid=$!
	wait_line "$T/err" "is confined from now on" 600 0.1
	expect_grep "$T/err" "process $kpid is confined from now on"
	mq_cell c2 unlink "$v" creat "$s"
	kill -INT "$apid"
	wait "$apid"
	expect_line "$T/run/log" "c2 unlink $v EACCES"
	expect_line "$T/run/log" "c2 creat $s EACCES"
	expect_grep "$T/err" "deny file unlink\(write\) (/dev/mqueue)?$v "
	expect_grep "$T/err" "deny file create\(write\) (/dev/mqueue)?$s "
	expect_grep "$T/ev.jsonl" '"operation":"unlink"'
	# the queue is still there, nothing was created; detached, the service acts again
	mq_outside open "$v" open "$s" >"$T/out"
	expect_line "$T/out" "open $v ok"
	expect_line "$T/out" "open $s ENOENT"
	mq_cell c3 unlink "$v"
	expect_line "$T/run/log" "c3 unlink $v ok"
	# the rules decide: with /dev/mqueue writable, a queue of its own
	# (another file: the background job's redirection truncates it only once it runs)
	"$PYSB" attach --pid "$kpid" --policy "$T/policy" --expose-rw=/dev/mqueue >"$T/att.out" 2>"$T/err2" &
	apid=$!
	wait_line "$T/err2" "is confined from now on" 600 0.1
	expect_grep "$T/err2" "process $kpid is confined from now on"
	mq_cell c4 creat "$own" use "$own" unlink "$own"
	kill -INT "$apid"
	wait "$apid"
	echo quit >&7
	exec 7>&-
	wait "$kpid"
	expect_line "$T/run/log" "c4 creat $own ok"
	expect_line "$T/run/log" "c4 use $own ok"
	expect_line "$T/run/log" "c4 unlink $own ok"
	expect_no_grep "$T/err2" "deny "
}

# Under run the program has an IPC namespace of its own, whose queues no rule names: the
# creation of one is refused in the kernel (before, the creation went through and only
# its open was refused: the queue was left behind, and mq_unlink removed it). In audit
# mode both are reported and done: the program creates, uses and removes its queue.
test_ipc_run_posix_queue_creation_judged_audit_reports() {
	write_mq_lib
	local q=/pysb-e2e-q$$
	printf 'expose-ro=%s\n' "$T/lib" >"$T/policy"
	run_plain python3 "$T/lib/mq.py" creat "$q" use "$q" unlink "$q"
	expect_line "$T/out" "creat $q ok"
	expect_line "$T/out" "use $q ok"
	expect_line "$T/out" "unlink $q ok"
	run_sb "$T/policy" python3 "$T/lib/mq.py" creat "$q" unlink "$q"
	expect_rc 0
	expect_line "$T/out" "creat $q EACCES"
	expect_line "$T/out" "unlink $q ENOENT"
	expect_grep "$T/err" "^pysb-bpf: deny file create\(write\) $q "
	"$PYSB" run --audit --policy "$T/policy" -- python3 "$T/lib/mq.py" creat "$q" use "$q" \
		unlink "$q" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_line "$T/out" "creat $q ok"
	expect_line "$T/out" "use $q ok"
	expect_line "$T/out" "unlink $q ok"
	expect_grep "$T/err" "^pysb-bpf: audit file create\(write\) $q "
	expect_grep "$T/err" "^pysb-bpf: audit file unlink\(write\) $q "
	# its own namespace: nothing of it on the host's
	python3 "$T/lib/mq.py" open "$q" >"$T/out"
	expect_line "$T/out" "open $q ENOENT"
}
