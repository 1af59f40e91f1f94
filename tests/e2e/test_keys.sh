# Kernel keys (bpf/keys.bpf.c): a sandboxed task reaches only the keys and keyrings made
# in its own sandbox; the caller's user keyring (@u, shared by every process of the uid)
# and the keys in it stay out of reach. Each attempt shown to work unconfined first.

# keys.py MODE SERIAL: read the outside key by serial, search @u for it by name, then make,
# read and search a key of its own. Prints "LABEL ok[ DATA]" or "LABEL <errno name>".
write_keys_probe() {
	write_file "$T/keys.py" <<'PY'
import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
SYS_add_key, SYS_keyctl = 248, 250
USER, PROCESS = -4, -2
READ, SEARCH = 11, 10

def say(label, ok, data=""):
    e = ctypes.get_errno()
    print(label, ("ok " + data).strip() if ok else errno.errorcode.get(e, str(e)), flush=True)

def read(serial):
    buf = ctypes.create_string_buffer(64)
    n = libc.syscall(SYS_keyctl, READ, serial, buf, 64)
    return n, buf.raw[:max(n, 0)].decode(errors="replace")

serial = int(sys.argv[1])
n, data = read(serial)
say("read-outside", n >= 0, data)
found = libc.syscall(SYS_keyctl, SEARCH, USER, b"user", b"pysb-test-secret", 0)
say("search-user-keyring", found >= 0, str(found) if found >= 0 else "")
mine = libc.syscall(SYS_add_key, b"user", b"pysb-mine", b"own-data", 8, PROCESS)
n, data = read(mine) if mine >= 0 else (-1, "")
say("own-key", mine >= 0 and n >= 0, data)
again = libc.syscall(SYS_keyctl, SEARCH, PROCESS, b"user", b"pysb-mine", 0)
say("own-search", again == mine)
PY
}

# add_key in the user keyring of the calling user: the serial on stdout.
add_user_key() {
	python3 -c '
import ctypes
libc = ctypes.CDLL(None)
print(libc.syscall(248, b"user", b"pysb-test-secret", b"hunter2", 7, -4))'
}

revoke_key() {
	python3 -c "import ctypes; ctypes.CDLL(None).syscall(250, 3, $1)"
}

keys_case() {
	local user=$1 serial
	write_keys_probe
	printf 'expose-ro=%s\n' "$T" >"$T/policy"
	if [ "$user" = root ]; then
		serial=$(add_user_key)
		run_plain python3 "$T/keys.py" "$serial"
	else
		serial=$(setpriv --reuid "$user" --regid nogroup --clear-groups bash -c "$(declare -f add_user_key); add_user_key")
		run_plain setpriv --reuid "$user" --regid nogroup --clear-groups python3 "$T/keys.py" "$serial"
	fi
	[ "${serial:-0}" -gt 0 ] || fail "add_key failed: '$serial'"
	# unconfined: the user's key reads and is found
	expect_line "$T/out" "read-outside ok hunter2"
	expect_line "$T/out" "search-user-keyring ok $serial"
	if [ "$user" = root ]; then
		run_sb "$T/policy" /usr/bin/python3 "$T/keys.py" "$serial"
	else
		"$PYSB" run --user "$user" --policy "$T/policy" -- /usr/bin/python3 "$T/keys.py" "$serial" >"$T/out" 2>"$T/err"
		RC=$?
	fi
	expect_rc 0
	# refused by the key_permission hook; the kernel answers EACCES or, when the hook also
	# hid the keyrings it searched for a possessed copy, ENOKEY
	expect_grep "$T/out" "^read-outside E(ACCES|NOKEY)$"
	expect_grep "$T/out" "^search-user-keyring E(ACCES|NOKEY)$"
	expect_line "$T/out" "own-key ok own-data"
	expect_line "$T/out" "own-search ok"
	expect_grep "$T/err" "^pysb-bpf: deny self key key-serial=$serial "
	if [ "$user" = root ]; then
		revoke_key "$serial"
	else
		setpriv --reuid "$user" --regid nogroup --clear-groups python3 -c "import ctypes; ctypes.CDLL(None).syscall(250, 3, $serial)"
	fi
}

test_keys_user_keyring_out_of_reach_as_root() {
	keys_case root
}

test_keys_user_keyring_out_of_reach_as_nobody() {
	keys_case nobody
}

# keyprobe.py FILE: the ctypes preamble of the key probes below, then FILE's lines.
write_key_lib() {
	write_file "$T/keylib.py" <<'PY'
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
SYS_add_key, SYS_keyctl = 248, 250
JOIN_SESSION, SEARCH, SESSION_TO_PARENT, INVALIDATE, GET_PERSISTENT = 1, 10, 18, 21, 22
SESSION, PROCESS = -3, -2

def keyctl(*args):
    return libc.syscall(SYS_keyctl, *args)

def add_key(desc, data, ring):
    return libc.syscall(SYS_add_key, b"user", desc, data, len(data), ring)

def say(label, ok, data=""):
    e = ctypes.get_errno()
    print(label, ("ok " + data).strip() if ok else errno.errorcode.get(e, str(e)), flush=True)
PY
}

# The uid's persistent keyring (KEYCTL_GET_PERSISTENT) is the uid's, not the sandbox's,
# even when the sandbox is the first to ask for it: a key planted there would be found by
# every process of the uid that asks for it later.
test_keys_persistent_keyring_not_the_sandboxes() {
	write_key_lib
	printf 'expose-ro=%s\n' "$T" >"$T/policy"
	write_file "$T/plant.py" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from keylib import *
p = keyctl(GET_PERSISTENT, -1, PROCESS)
say("persistent", p >= 0)
say("plant", p >= 0 and add_key(b"pysb-planted", b"evil", p) >= 0)
PY
	# outside: is the planted key in the uid's persistent keyring? Then invalidated, so
	# the next GET_PERSISTENT makes a new one (the sandbox's ask is the first)
	write_file "$T/find.py" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from keylib import *
p = keyctl(GET_PERSISTENT, -1, PROCESS)
if p < 0:
    say("persistent", False)
    sys.exit(0)
say("found", keyctl(SEARCH, p, b"user", b"pysb-planted", 0) >= 0)
keyctl(INVALIDATE, p)
PY
	run_plain python3 "$T/find.py" "$T"
	grep -q "^persistent EOPNOTSUPP" "$T/out" && skip "this kernel has no persistent keyrings"
	# unconfined, the plant works and the outside finds it
	run_plain python3 "$T/plant.py" "$T"
	expect_line "$T/out" "plant ok"
	run_plain python3 "$T/find.py" "$T"
	expect_line "$T/out" "found ok"
	run_sb "$T/policy" /usr/bin/python3 "$T/plant.py" "$T"
	expect_rc 0
	expect_grep "$T/out" "^plant E(ACCES|NOKEY)$"
	expect_grep "$T/err" "^pysb-bpf: deny self key key-serial="
	run_plain python3 "$T/find.py" "$T"
	expect_line "$T/out" "found ENOKEY"
}

# KEYCTL_SESSION_TO_PARENT gives the caller's session keyring to its parent. To a parent
# in the same sandbox it works; to one outside (the supervisor) it is refused,
# or that parent would search keys the sandbox planted. Unconfined, a shell's next child
# finds the key.
test_keys_session_to_parent_only_inside() {
	write_key_lib
	printf 'expose-ro=%s\npython-api=ALLOW:process-exec\n' "$T" >"$T/policy"
	write_file "$T/to_parent.py" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from keylib import *
say("join", keyctl(JOIN_SESSION, None) >= 0)
say("plant", add_key(b"pysb-planted", b"evil", SESSION) >= 0)
say("to-parent", keyctl(SESSION_TO_PARENT) == 0)
PY
	write_file "$T/show.py" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from keylib import *
say("found", keyctl(SEARCH, SESSION, b"user", b"pysb-planted", 0) >= 0)
PY
	run_plain bash -c "python3 $T/to_parent.py $T; python3 $T/show.py $T"
	expect_line "$T/out" "to-parent ok"
	expect_line "$T/out" "found ok"
	# the parent is a Python running both as a shell would, in the sandbox: allowed, and
	# it has the keyring
	run_sb "$T/policy" /usr/bin/python3 -c "import subprocess, sys
subprocess.run([sys.executable, '$T/to_parent.py', '$T'])
subprocess.run([sys.executable, '$T/show.py', '$T'])"
	expect_rc 0
	expect_line "$T/out" "to-parent ok"
	expect_line "$T/out" "found ok"
	# the parent is pysb-bpf's supervisor, outside: refused in the kernel
	run_sb "$T/policy" /usr/bin/python3 "$T/to_parent.py" "$T"
	expect_rc 0
	expect_line "$T/out" "plant ok"
	expect_line "$T/out" "to-parent ENOMEM"
	expect_grep "$T/err" "^pysb-bpf: deny self key-to-parent "
}

# A file system's encryption keys (fscrypt, v2 policies) are claimed per user in the file
# system's own keyring: the last claim given up, the directories the key unlocks lock for
# every process of the machine. A sandbox may give up no claim, whatever file of the file
# system it issues the ioctl on (here one it may read).
test_keys_fscrypt_key_claim_not_given_up() {
	vm_module sha512_generic
	identity_ext4 "$T/ext" -O encrypt
	mkdir "$T/ext/ro"
	printf 'expose-ro=%s\n' "$T" >"$T/policy"
	write_file "$T/fskey.py" <<'PY'
import errno, fcntl, os, struct, sys
ADD, REMOVE = 0xc0506617, 0xc0406618  # FS_IOC_ADD_ENCRYPTION_KEY, FS_IOC_REMOVE_ENCRYPTION_KEY
fd = os.open(sys.argv[1], os.O_RDONLY)
if sys.argv[2] == "add":  # a v2 key (by identifier), 64 raw bytes
    arg = bytearray(struct.pack("II32sII32x", 2, 0, b"", 64, 0) + bytes(range(64)))
    fcntl.ioctl(fd, ADD, arg)
    print(arg[8:24].hex())
else:
    arg = bytearray(struct.pack("II16s16sI20x", 2, 0, bytes.fromhex(sys.argv[3]), b"", 0))
    try:
        fcntl.ioctl(fd, REMOVE, arg)
        print("remove ok", flush=True)
    except OSError as e:
        print("remove", errno.errorcode.get(e.errno, e.errno), flush=True)
PY
	id=$(python3 "$T/fskey.py" "$T/ext" add) || fail "cannot add an fscrypt key"
	run_plain python3 "$T/fskey.py" "$T/ext/ro" remove "$id"
	expect_line "$T/out" "remove ok"
	[ "$(python3 "$T/fskey.py" "$T/ext" add)" = "$id" ] || fail "cannot add the key again"
	run_sb "$T/policy" /usr/bin/python3 "$T/fskey.py" "$T/ext/ro" remove "$id"
	expect_rc 0
	expect_line "$T/out" "remove EACCES"
	expect_grep "$T/err" "^pysb-bpf: deny self key .*$T/ext/ro"
	# the claim is still there: removed outside now
	run_plain python3 "$T/fskey.py" "$T/ext" remove "$id"
	expect_line "$T/out" "remove ok"
}
