# A rule names one file object, never a number another file can carry (issue 17).
# Two ways a (device, inode number) key lets an unrelated file in:
# - an overlay whose layers sit on different file systems, without xino (the VM's own
#   root: tmpfs over 9p), hands out the same inode number to different files;
# - a disk file system (ext4) reuses a deleted inode's number for the next file created.
# Each test shows the newcomers denied (the syscall fails: EACCES) and, in the same run or
# with the policy that exposes them, the same reads succeeding.

# The probe: reads $T/lib/list ("file PATH INO" / "dir PATH INO" lines, written outside
# the sandbox), opens and reads each file, lists each directory, and prints how many it
# could read, then the first few it read with their inode numbers.
identity_probe_lib() {
	write_probe_lib
	write_file "$T/lib/probe_list.py" <<'PY'
import os, sys

def readable(kind, path):
    try:
        if kind == "file":
            with open(path) as f:
                f.read()
        else:
            os.listdir(path)
        return True
    except OSError:
        return False

def probe(listfile):
    total = {"file": 0, "dir": 0}
    got = {"file": [], "dir": []}
    with open(listfile) as f:
        for line in f:
            kind, path, ino = line.split()
            total[kind] += 1
            if readable(kind, path):
                got[kind].append((path, ino))
    for kind in ("file", "dir"):
        print("readable-%ss %d of %d" % (kind, len(got[kind]), total[kind]), flush=True)
        for path, ino in got[kind][:5]:
            print("  readable %s %s ino %s" % (kind, path, ino), flush=True)

if __name__ == "__main__":
    probe(sys.argv[1])
PY
}

# identity_make_tree DIR N: N files then N directories in DIR, created outside any sandbox,
# listed in $T/lib/list with their inode numbers.
identity_make_tree() {
	python3 - "$1" "$2" "$T/lib/list" <<'PY' || fail "cannot create the files in $1"
import os, sys
top, n, listfile = sys.argv[1], int(sys.argv[2]), sys.argv[3]
os.makedirs(top, exist_ok=True)
rows = []
for i in range(n):
    p = "%s/f%d" % (top, i)
    with open(p, "w") as f:
        f.write("not yours\n")
    rows.append(("file", p))
for i in range(n):
    p = "%s/d%d" % (top, i)
    os.mkdir(p)
    rows.append(("dir", p))
with open(listfile, "w") as f:
    for kind, p in rows:
        f.write("%s %s %d\n" % (kind, p, os.stat(p).st_ino))
PY
}

# Our own overlay without xino: lower and upper on two fresh tmpfs, whose inode numbers
# both count from 1. The policy exposes 50 lower files; 3,000 files and 3,000 directories
# created in the overlay (on the upper layer) take the same numbers as some of them, so a
# (device, number) key cannot tell them apart. None may be readable.
test_identity_overlay_no_xino_new_files_not_readable() {
	identity_probe_lib
	mkdir -p "$T/low" "$T/up" "$T/ov"
	trap 'umount "$T/ov" "$T/up" "$T/low" 2>/dev/null' EXIT
	mount -t tmpfs -o mode=755 pysb-low "$T/low" || fail "cannot mount a tmpfs on $T/low"
	mount -t tmpfs -o mode=755 pysb-up "$T/up" || fail "cannot mount a tmpfs on $T/up"
	mkdir -p "$T/low/l/etc" "$T/up/u" "$T/up/w"
	for i in $(seq 0 49); do
		echo "exposed $i" >"$T/low/l/etc/f$i"
	done
	echo "not exposed" >"$T/low/l/etc/hidden"
	mount -t overlay overlay \
		-o "lowerdir=$T/low/l,upperdir=$T/up/u,workdir=$T/up/w,xino=off" "$T/ov" ||
		fail "cannot mount the test overlay"
	identity_make_tree "$T/ov/new" 3000
	printf 'expose-ro=%s\n' "$T/lib" >"$T/policy"
	for i in $(seq 0 49); do
		printf 'expose-ro=%s\n' "$T/ov/etc/f$i" >>"$T/policy"
	done
	# How many newcomers share a number with an exposed file (for the failure message).
	shared=$(python3 -c "
import os, sys
rules = {os.stat('$T/ov/etc/f%d' % i).st_ino for i in range(50)}
print(sum(1 for l in open('$T/lib/list') if int(l.split()[2]) in rules))")
	probe_py "$T/app.py" \
		"sys.path.insert(0, '$T/lib'); from probe_list import probe" \
		"attempt('read-exposed-lower', lambda: [read('$T/ov/etc/f%d' % i) for i in range(50)])" \
		"attempt('read-hidden-lower', lambda: read('$T/ov/etc/hidden'))" \
		"probe('$T/lib/list')"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "read-exposed-lower ok"
	expect_line "$T/out" "read-hidden-lower EACCES"
	if ! _has "$T/out" xF "readable-files 0 of 3000" || ! _has "$T/out" xF "readable-dirs 0 of 3000"; then
		fail "newcomers without a rule were readable ($shared of 6000 share an inode number with an exposed file): $(cat "$T/out")"
	fi
	# The allowed counterpart: the policy exposes their directory, the same probe reads them all.
	printf 'expose-ro=%s\n' "$T/ov/new" >>"$T/policy"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "readable-files 3000 of 3000"
	expect_line "$T/out" "readable-dirs 3000 of 3000"
}

# The VM's own root (an overlay of tmpfs over the host's 9p root, no xino) with an empty
# policy: only the implicit entries (/etc/hosts, /etc/gai.conf, the Python directories...),
# whose numbers new files and directories on the overlay take too. None may be readable.
test_identity_overlay_root_empty_policy_new_files_not_readable() {
	identity_probe_lib
	# Outside /tmp and /run (tmpfs in the VM): on the root overlay itself.
	S=/var/tmp/pysb-e2e-identity.$$
	trap 'rm -rf "$S"' EXIT
	rm -rf "$S"
	mkdir -p "$S"
	[ "$(stat -f -c %T "$S")" = overlayfs ] || skip "$S is on $(stat -f -c %T "$S"), not the root overlay"
	identity_make_tree "$S" 3000
	printf 'expose-ro=%s\n' "$T/lib" >"$T/policy"
	# Which of them share a number with an entry of the policy (for the failure message).
	"$PYSB" check --policy "$T/policy" "$T/lib/probe_list.py" >"$T/check" 2>&1
	shared=$(python3 -c "
import re
rules = {int(m.group(1)) for m in re.finditer(r'ino (\d+)\]', open('$T/check').read())}
print(sum(1 for l in open('$T/lib/list') if int(l.split()[2]) in rules))")
	run_sb "$T/policy" "$T/lib/probe_list.py" "$T/lib/list"
	expect_rc 0
	if ! _has "$T/out" xF "readable-files 0 of 3000" || ! _has "$T/out" xF "readable-dirs 0 of 3000"; then
		fail "newcomers without a rule were readable under an empty policy ($shared of 6000 share an inode number with an entry of the policy): $(cat "$T/out")"
	fi
	printf 'expose-ro=%s\n' "$S" >>"$T/policy"
	run_sb "$T/policy" "$T/lib/probe_list.py" "$T/lib/list"
	expect_rc 0
	expect_line "$T/out" "readable-files 3000 of 3000"
	expect_line "$T/out" "readable-dirs 3000 of 3000"
}

# identity_ext4 DIR [MKFS_OPTION...]: a fresh ext4 file system (one block group: a freed
# inode number is the lowest free one, handed out to the next file created) mounted on
# DIR, its image beside it, unmounted when the test ends (with the others it mounted).
identity_ext4() {
	local dir=$1
	shift
	mkdir -p "$dir"
	truncate -s 32M "$dir.img" || fail "cannot make the image"
	mkfs.ext4 -q -b 4096 "$@" "$dir.img" || fail "mkfs.ext4 $* failed"
	IDENTITY_MOUNTS+=("$dir")
	trap 'for m in "${IDENTITY_MOUNTS[@]}"; do umount "$m" 2>/dev/null; done' EXIT
	mount -o loop "$dir.img" "$dir" ||
		fail "cannot mount an ext4 image (the VM loads loop and ext4: scripts/vm-kernel)"
}

# identity_start_waiting POLICY: starts $T/app.py under POLICY in the background (pid in
# $SB); the program prints "ready" once confined, then opens the fifo $T/lib/go and waits
# for the test to close it. Returns once "ready" is printed.
identity_start_waiting() {
	mkfifo "$T/lib/go"
	"$PYSB" run --policy "$1" -- "$T/app.py" >"$T/out" 2>"$T/err" &
	SB=$!
	for _ in $(seq 1200); do
		_has "$T/out" xF ready && return 0
		kill -0 "$SB" 2>/dev/null || break
		sleep 0.1
	done
	kill "$SB" 2>/dev/null
	fail "the sandboxed program never got ready: $(cat "$T/out" "$T/err")"
}

# identity_release: lets the waiting program go on, waits for it; status in $RC.
identity_release() {
	: >"$T/lib/go"
	wait "$SB"
	# shellcheck disable=SC2034 # read by expect_rc (lib.sh)
	RC=$?
}

# identity_reuse INO KIND PREFIX [TRIES]: creates PREFIX0, PREFIX1... (KIND file or dir)
# until one gets inode number INO (of a deleted rule directory), and puts its path in
# $NEWCOMER; empty when none did in TRIES (10,000) tries.
identity_reuse() {
	NEWCOMER=$(python3 - "$@" <<'PY'
import os, sys
n, kind, prefix = int(sys.argv[1]), sys.argv[2], sys.argv[3]
tries = int(sys.argv[4]) if len(sys.argv) > 4 else 10000
for i in range(tries):
    p = "%s%d" % (prefix, i)
    if kind == "dir":
        os.mkdir(p)
    else:
        with open(p, "w") as f:
            f.write("not yours\n")
    if os.stat(p).st_ino == n:
        print(p)
        break
PY
	)
}

# ext4: the policy exposes two directories that are then deleted while the sandbox runs.
# While pysb-bpf holds their inodes open, ext4 cannot hand their numbers to anyone. Then
# the holder is killed (SIGKILL of the supervisor: the pinned programs keep a grandchild
# of the program confined, docs/design.md "Fail closed"), the inodes are freed, and a new
# file and a new directory (with a file in it) get their numbers. The rules named the
# deleted directories, not the newcomers: they stay unreadable, while a file under a rule
# directory that still exists was read.
test_identity_ext4_reused_inode_number_not_inherited() {
	identity_probe_lib
	M=$T/mnt
	identity_ext4 "$M"
	mkdir "$M/keep" "$M/gone-f" "$M/gone-d" "$M/other" "$T/rw"
	echo "kept" >"$M/keep/ok.txt"
	echo "not yours" >"$M/other/plain.txt"
	printf 'expose-ro=%s\n' "$T/lib" "$M/keep" "$M/gone-f" "$M/gone-d" >"$T/policy"
	printf 'expose-rw=%s\n' "$T/rw" >>"$T/policy"
	write_file "$T/app.py" <<EOF
import os, sys, time
sys.path.insert(0, '$T/lib')
from probe_lib import *
if os.fork() == 0:
    os.setsid()
    out = open('$T/rw/result', 'w', buffering=1)
    def note(label, fn):
        try:
            fn(); out.write(label + ' ok\n')
        except PermissionError:
            out.write(label + ' EACCES\n')
    note('list-gone-before', lambda: os.listdir('$M/gone-f'))
    note('read-keep', lambda: read('$M/keep/ok.txt'))
    note('read-other', lambda: read('$M/other/plain.txt'))
    open('$T/rw/ready', 'w').close()
    while not os.path.exists('$T/rw/go'): time.sleep(0.05)
    newfile, newdir = read('$T/rw/newcomers').split()
    note('read-newfile', lambda: read(newfile))
    note('list-newdir', lambda: os.listdir(newdir))
    note('read-newdir-file', lambda: read(newdir + '/secret.txt'))
    out.write('done\n')
    os._exit(0)
time.sleep(600)
EOF
	setsid "$PYSB" run --policy "$T/policy" -- "$T/app.py" >"$T/out" 2>"$T/err" &
	sup=$!
	for _ in $(seq 300); do [ -e "$T/rw/ready" ] && break; sleep 0.1; done
	[ -e "$T/rw/ready" ] || fail "the program did not start: $(cat "$T/err")"
	nf=$(stat -c %i "$M/gone-f")
	nd=$(stat -c %i "$M/gone-d")
	rmdir "$M/gone-f" "$M/gone-d"
	# Held by the sandbox's keeper, the deleted inodes keep their numbers.
	identity_reuse "$nf" file "$M/other/held-" 300
	[ -z "$NEWCOMER" ] || fail "$NEWCOMER took the number of a rule inode pysb-bpf holds"
	labels=$(identity_labels)
	kill -9 "$sup"
	wait "$sup" 2>/dev/null
	# Freed, the two deleted rule inodes took their labels with them (lsm/inode_free_security).
	for _ in $(seq 50); do [ "$(identity_labels)" -le $((labels - 2)) ] && break; sleep 0.1; done
	if [ "$(identity_labels)" -gt $((labels - 2)) ]; then
		identity_kill_orphans
		fail "labelled inodes: $labels before, $(identity_labels) after two rule inodes were freed"
	fi
	identity_reuse "$nf" file "$M/other/new-file"
	newfile=$NEWCOMER
	identity_reuse "$nd" dir "$M/other/new-dir"
	newdir=$NEWCOMER
	if [ -z "$newfile" ] || [ -z "$newdir" ]; then
		identity_kill_orphans
		skip "ext4 gave no newcomer the number of a deleted rule directory in 10,000 tries"
	fi
	echo "not yours" >"$newdir/secret.txt"
	echo "$newfile $newdir" >"$T/rw/newcomers"
	touch "$T/rw/go"
	for _ in $(seq 100); do grep -qx done "$T/rw/result" && break; sleep 0.1; done
	identity_kill_orphans
	expect_line "$T/rw/result" "list-gone-before ok"
	expect_line "$T/rw/result" "read-keep ok"
	expect_line "$T/rw/result" "read-other EACCES"
	expect_line "$T/rw/result" "read-newfile EACCES"
	expect_line "$T/rw/result" "list-newdir EACCES"
	expect_line "$T/rw/result" "read-newdir-file EACCES"
	# Outside the sandbox the newcomers are plainly readable: the denial is the sandbox's.
	cat "$newfile" "$newdir/secret.txt" >/dev/null || fail "the newcomers are unreadable outside"
}

# How many inodes carry a label (the pinned inode_labels map).
identity_labels() {
	bpftool map dump pinned /sys/fs/bpf/pysb-bpf/*/map-inode_labels -j |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
}

# The sandboxes a killed supervisor left (their programs stay confined): ended for the
# next tests.
identity_kill_orphans() {
	for cg in /sys/fs/cgroup/pysb-bpf/run-*; do echo 1 >"$cg/cgroup.kill"; done 2>/dev/null
	sleep 0.5
	rmdir /sys/fs/cgroup/pysb-bpf/run-* 2>/dev/null
	return 0
}

# A deploy while the sandbox runs, in BASE (ext4 or the root overlay):
# - site/ is exposed; its release site/current is replaced by a new one (built aside, then
#   moved in): the new release is read, the exposure of site/ covers it;
# - only the release app/current itself is exposed; it is replaced by a new one (removed,
#   then the new one written at the same path, as rm -rf + cp -r does; on ext4 the new
#   directory takes the old one's inode number): the rule named the old directory, the new
#   one is not exposed until the policy is loaded again.
identity_deploy() {
	B=$1
	mkdir -p "$B/site/current" "$B/app/current"
	echo "site v1" >"$B/site/current/index.txt"
	echo "app v1" >"$B/app/current/index.txt"
	printf 'expose-ro=%s\n' "$T/lib" "$B/site" "$B/app/current" >"$T/policy"
	probe_py "$T/app.py" \
		"attempt('site-before', lambda: print(read('$B/site/current/index.txt').strip()))" \
		"attempt('app-before', lambda: print(read('$B/app/current/index.txt').strip()))" \
		"print('ready', flush=True)" \
		"read('$T/lib/go')" \
		"attempt('site-after', lambda: print(read('$B/site/current/index.txt').strip()))" \
		"attempt('app-after', lambda: print(read('$B/app/current/index.txt').strip()))" \
		"attempt('app-list-after', lambda: os.listdir('$B/app/current'))"
	identity_start_waiting "$T/policy"
	old=$(stat -c %i "$B/app/current")
	rm -rf "$B/app/current"
	mkdir "$B/app/current"
	echo "app v2" >"$B/app/current/index.txt"
	new=$(stat -c %i "$B/app/current")
	mkdir "$B/site/next"
	echo "site v2" >"$B/site/next/index.txt"
	rm -rf "$B/site/current"
	mv -T "$B/site/next" "$B/site/current"
	identity_release
	expect_rc 0
	expect_line "$T/out" "site v1"
	expect_line "$T/out" "app v1"
	expect_line "$T/out" "site-before ok"
	expect_line "$T/out" "app-before ok"
	expect_line "$T/out" "site v2"
	expect_line "$T/out" "site-after ok"
	if ! _has "$T/out" xF "app-after EACCES" || ! _has "$T/out" xF "app-list-after EACCES"; then
		fail "the new app/current (inode $new; the old one was $old) was readable through the old one's rule: $(cat "$T/out")"
	fi
	REUSED=no
	if [ "$old" = "$new" ]; then
		REUSED=yes
	fi
}

test_identity_deploy_replaced_release_ext4() {
	identity_probe_lib
	identity_ext4 "$T/mnt"
	identity_deploy "$T/mnt"
	# With (dev, ino) keys the new release took the old one's number and its rule (ext4
	# hands out the lowest free number); held open by pysb-bpf, the old inode keeps its
	# number now, and the new release is denied either way.
	[ "$REUSED" = no ] || fail "the new release took the number of the rule inode pysb-bpf holds"
}

test_identity_deploy_replaced_release_overlay() {
	identity_probe_lib
	S=/var/tmp/pysb-e2e-deploy.$$
	trap 'rm -rf "$S"' EXIT
	rm -rf "$S"
	mkdir -p "$S"
	identity_deploy "$S"
}

# The daemon (test_daemon.sh's helpers): a binding whose policy exposes a directory on
# ext4 lives on while that directory is deleted and its inode number goes to a new file.
# A process that joins the bound cgroup afterwards reads the rule directory that is still
# there, never the newcomer.
test_identity_daemon_binding_reused_inode_ext4() {
	local cg=$CGT/ident
	M=$T/mnt
	identity_ext4 "$M"
	# shellcheck disable=SC2064 # expand now
	trap "svc_cleanup; umount '$M' 2>/dev/null" EXIT
	mkdir "$M/keep" "$M/gone" "$M/other"
	echo "kept" >"$M/keep/ok.txt"
	echo "before" >"$M/gone/x.txt"
	echo "not yours" >"$M/other/x.txt"
	mkdir -p "$T/conf" "$cg"
	printf 'expose-ro=%s\n' "$M/keep" "$M/gone" >"$T/conf/id.py-sandboxes"
	binding id '{"policy": "id.py-sandboxes", "cgroup": "pysb-e2e/ident"}'
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "id: confined $cg "
	write_file "$T/reader.sh" <<'SH'
echo $$ >"$1/cgroup.procs" || exit 9
shift
for f; do
	if read -r x <"$f"; then echo "read $f: $x"; else echo "denied $f"; fi
done
SH
	bash "$T/reader.sh" "$cg" "$M/gone/x.txt" "$M/other/x.txt" >"$T/out" 2>&1
	expect_line "$T/out" "read $M/gone/x.txt: before"
	expect_line "$T/out" "denied $M/other/x.txt"
	rm "$M/gone/x.txt"
	n=$(stat -c %i "$M/gone")
	rmdir "$M/gone"
	# The daemon holds the rule inodes of the binding: their numbers stay taken.
	identity_reuse "$n" file "$M/other/held-" 300
	[ -z "$NEWCOMER" ] || fail "$NEWCOMER took the number of a rule inode the daemon holds"
	# A daemon killed leaves the binding in force (pinned); the deleted inode is freed.
	kill -9 "$DPID"
	wait "$DPID" 2>/dev/null
	identity_reuse "$n" file "$M/other/new"
	[ -n "$NEWCOMER" ] || skip "ext4 gave no newcomer the number of the deleted rule directory"
	bash "$T/reader.sh" "$cg" "$M/keep/ok.txt" "$NEWCOMER" >"$T/out" 2>&1
	expect_line "$T/out" "read $M/keep/ok.txt: kept"
	expect_line "$T/out" "denied $NEWCOMER"
	expect_grep "$T/out" "$NEWCOMER: Permission denied"
}

# check and probe say what they assume about each file system: a rule names an inode
# object (held open), and what that means on the file systems in play.
test_identity_check_and_probe_say_what_they_assume() {
	mkdir -p /var/tmp/pysb-e2e-fs.$$ "$T/d"
	trap 'rm -rf /var/tmp/pysb-e2e-fs.$$' EXIT
	printf 'expose-ro=%s\n' /var/tmp/pysb-e2e-fs.$$ "$T/d" >"$T/policy"
	"$PYSB" check --policy "$T/policy" -- /usr/bin/true >"$T/out" 2>&1
	expect_grep "$T/out" "^== kernel: file systems \(a rule names an inode object, held open"
	expect_grep "$T/out" "^fs +overlay +dev [0-9]+:[0-9]+ +\(/var/tmp/pysb-e2e-fs\.$$\): rules name the overlay's own inodes"
	expect_grep "$T/out" "^fs +tmpfs +dev [0-9]+:[0-9]+ +\($T/d\): an inode number is reused after deletion"
	"$PYSB" check --json --policy "$T/policy" -- /usr/bin/true >"$T/json" 2>&1
	python3 - "$T/json" <<'PY' || fail "check --json: no kernel.file_systems entry for the overlay"
import json, sys
fs = json.load(open(sys.argv[1]))["kernel"]["file_systems"]
sys.exit(0 if any(f["type"] == "overlay" and "identity" in f for f in fs) else 1)
PY
	"$PYSB" probe >"$T/probe" 2>&1
	expect_grep "$T/probe" "^ok +file identity +a file rule names an inode object"
	expect_grep "$T/probe" "^info +file system overlay +rules name the overlay's own inodes"
}

# One descriptor per rule path: a policy with more rule paths than RLIMIT_NOFILE's limits
# (the VM's are 1024 and 4096) still loads whole (pysb-bpf raises its own limit, root may),
# and the program gets the caller's limits back.
test_identity_more_rule_paths_than_descriptors() {
	mkdir -p "$T/many"
	python3 - "$T/many" "$T/policy" <<'PY'
import os, sys
base, policy = sys.argv[1:3]
with open(policy, "w") as p:
    for i in range(5000):
        d = "%s/d%04d" % (base, i)
        os.mkdir(d)
        with open(d + "/f", "w") as f:
            f.write("file %d\n" % i)
        p.write("expose-ro=%s\n" % d)
os.mkdir(base + "/other")
with open(base + "/other/f", "w") as f:
    f.write("not yours\n")
PY
	write_file "$T/app.py" <<EOF
import resource
print("limits %d %d" % resource.getrlimit(resource.RLIMIT_NOFILE))
for n in ("d0000", "d4999"):
    print(open("$T/many/%s/f" % n).read().strip())
try:
    open("$T/many/other/f").read()
except PermissionError as e:
    print("other denied", e)
EOF
	printf 'expose-ro=%s\n' "$T/app.py" >>"$T/policy"
	(ulimit -Sn 1024; ulimit -Hn 4096; "$PYSB" run --policy "$T/policy" -- python3 "$T/app.py") \
		>"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_line "$T/out" "limits 1024 4096"
	expect_line "$T/out" "file 0"
	expect_line "$T/out" "file 4999"
	expect_grep "$T/out" "^other denied .*Permission denied"
	expect_grep "$T/err" "deny file open\\(read\\) $T/many/other/f"
}
