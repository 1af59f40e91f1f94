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
