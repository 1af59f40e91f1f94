# Programs named as users type them (issue 15): `python3 -c`, `python`, `ls`, a console
# script on PATH, ./script.py, app.py, /abs/path, a venv's .venv/bin/python, pyenv-style
# shims and #!/usr/bin/env scripts. Each run shows an allowed read succeeding and a denied
# one failing in the kernel (EACCES and pysb-bpf's deny line), in the same program.

users_setup() {
	mkdir -p "$T/ro" "$T/other" "$T/tools/bin"
	echo "public" >"$T/ro/data.txt"
	echo "secret" >"$T/other/secret.txt"
	printf 'expose-ro=%s\nexpose-ro=%s\n' "$T/ro" "$T/lib" >"$T/policy"
	write_probe_lib
	# The probe every Python program below runs: one allowed read, one denied.
	USERS_PROBE="import sys; sys.path.insert(0, '$T/lib'); from probe_lib import *
attempt('allowed', lambda: read('$T/ro/data.txt'))
attempt('denied', lambda: read('$T/other/secret.txt'))"
}

# users_script FILE SHEBANG: an executable Python script running the probe.
users_script() {
	printf '%s\n%s\n' "$2" "$USERS_PROBE" >"$1"
	chmod 755 "$1"
}

# users_proj_beside: $T/proj with what a listing alone must not open: a file beside the
# program (notes.txt), one below (sub/deep.txt), a module beside it (helper.py).
users_proj_beside() {
	mkdir -p "$T/proj/sub"
	echo "sibling" >"$T/proj/notes.txt"
	echo "below" >"$T/proj/sub/deep.txt"
	printf 'X = 1\n' >"$T/proj/helper.py"
}

# users_expect_listed_alone: $T/proj was listed, and nothing else of it read or written
# (its files, below it, a module beside the program, a new file): EACCES and deny lines.
users_expect_listed_alone() {
	local l
	for l in "listing ok" "sibling EACCES" "below EACCES" "import-helper EACCES" \
		"write-beside EACCES"; do
		expect_line "$T/out" "$l"
	done
	expect_no_grep "$T/err" "deny file open\(read\) $T/proj "
	expect_grep "$T/err" "deny file open\(read\) $T/proj/notes.txt "
}

users_expect_pair() {
	expect_rc 0
	expect_line "$T/out" "allowed ok"
	expect_line "$T/out" "denied EACCES"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) $T/other/secret.txt "
}

test_users_python3_dash_c_from_path() {
	users_setup
	run_sb "$T/policy" python3 -c "$USERS_PROBE"
	users_expect_pair
}

# `python3 ...` with a policy that passes no PATH (the README's first example): CPython
# finds itself by argv[0] and PATH, so with argv[0] the bare word its sys.executable was ''
# and a spawn pool died of BrokenPipeError with no deny line (found by a user). Its argv[0]
# is the path found; with env=PATH it stays the word typed. The pool's exec is allowed by
# python-api, the second exec (of sys.executable) really runs in the sandbox.
test_users_python3_finds_itself_without_path() {
	once_per_matrix "how the program is named and found: pysb-bpf's own resolution"
	users_setup
	printf 'python-api=ALLOW:process-exec\nexpose-rw=/dev/shm\n' >>"$T/policy"
	local probe="import sys, multiprocessing as mp
print('exe', sys.executable, 'argv0', sys.argv and sys.orig_argv[0])
if __name__ == '__main__':
    mp.set_start_method('spawn')
    with mp.Pool(2) as p:
        print('pool', p.map(abs, [-1, -2]))"
	run_plain env -i /usr/bin/python3 -c "import os; os.execv('/usr/bin/python3', ['python3', '-c', 'import sys; print(repr(sys.executable))'])"
	expect_line "$T/out" "''"
	run_sb "$T/policy" python3 -c "$probe"
	expect_rc 0
	p3=$(command -v python3)
	expect_line "$T/out" "exe $p3 argv0 $p3"
	expect_line "$T/out" "pool [1, 2]"
	echo 'env=PATH=${PATH}' >>"$T/policy"
	run_sb "$T/policy" python3 -c "$probe"
	expect_rc 0
	expect_line "$T/out" "exe $(python3 -c 'import sys; print(sys.executable)') argv0 python3"
}

# `sudo pysb-bpf run` (the README's flow): the program runs as the invoking user, with
# that user's HOME, USER and LOGNAME, and the policy's ~ is theirs (found by a user: sudo
# leaves root's HOME, so the user's ~/.config/app was denied, and learning missed it).
# sudo is simulated by the environment Debian's sudo sets.
test_users_sudo_program_gets_the_users_home() {
	users_setup
	local u=pysb-alice
	id "$u" >/dev/null 2>&1 || useradd -M -d "$T/alice" "$u" || fail "useradd $u"
	mkdir -p "$T/alice/.config/app"
	echo conf-of-alice >"$T/alice/.config/app/conf"
	chown -R "$u" "$T/alice"
	chmod 755 "$T"
	printf 'expose-ro=~/.config/app\nenv=HOME=${HOME}\nenv=USER=${USER}\n' >"$T/policy"
	SUDO_UID=$(id -u "$u") SUDO_GID=$(id -g "$u") SUDO_USER=$u HOME=/root USER=root LOGNAME=root \
		run_sb "$T/policy" /usr/bin/python3 -c "import os
print('as', os.environ.get('HOME'), os.environ.get('USER'), os.getuid())
print(open(os.path.expanduser('~/.config/app/conf')).read().strip())"
	expect_rc 0
	expect_line "$T/out" "as $T/alice $u $(id -u "$u")"
	expect_line "$T/out" "conf-of-alice"
}

# `--user 4242` where 4242 has no passwd entry (a container's arbitrary uid; sudo's
# -u '#4242'): the program runs as that uid, in group nogroup, HOME=/nonexistent (not a
# group that happens to have its number: found by an adversary) (found by a user:
# "no such user", while the help says USER|UID). Its file access is that uid's: a file
# only 4242 may read is read, a file only root may read is denied by the kernel.
test_users_bare_uid_without_passwd_entry() {
	users_setup
	! getent passwd 4242 >/dev/null || skip "uid 4242 has a passwd entry here"
	chmod 755 "$T"
	echo "of-4242" >"$T/ro/mine.txt"
	chown 4242 "$T/ro/mine.txt"
	chmod 600 "$T/ro/mine.txt" "$T/ro/data.txt"
	echo 'env=HOME=${HOME}' >>"$T/policy"
	"$PYSB" run --user 4242 --policy "$T/policy" -- /usr/bin/python3 -c "import os
print('as', os.getuid(), os.getgid(), os.getgroups(), os.environ.get('HOME'))
print(open('$T/ro/mine.txt').read().strip())
try:
    open('$T/ro/data.txt')
except PermissionError:
    print('root-only EACCES')" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_line "$T/out" "as 4242 65534 [65534] /nonexistent"
	expect_line "$T/out" "of-4242"
	expect_line "$T/out" "root-only EACCES"
	# a mistyped script name is said as a missing file where the user is
	cd "$T" || fail "cd"
	run_sb "$T/policy" nosuch.py
	expect_rc 127
	expect_grep "$T/err" "nosuch.py: no such file in $T "
}

# `sudo pysb-bpf run -- python3 app.py` with a venv activated: sudo's PATH finds the
# system's python3, and the venv's packages are missing, silently (found by a user). run
# says so when a venv lies in the working directory; naming it is quiet; a command sudo's
# PATH lacks says whose PATH it was. sudo simulated by the environment Debian's sudo sets.
test_users_sudo_path_misses_the_venv_and_says_so() {
	once_per_matrix "how the program is named and found: pysb-bpf's own resolution"
	users_setup
	mkdir -p "$T/proj"
	/usr/bin/python3 -m venv --without-pip "$T/proj/.venv" || fail "venv"
	cd "$T/proj" || fail "cd"
	printf 'expose-ro=%s\n' "$T/proj" >>"$T/policy"
	SUDO_UID=0 SUDO_USER=root run_sb "$T/policy" python3 -c "import sys; print(sys.prefix)"
	expect_rc 0
	expect_no_grep "$T/out" "$T/proj/.venv"
	expect_grep "$T/err" "started through sudo, /.*python3 was found on sudo's PATH, not yours: the venv in $T/proj/.venv is not used"
	# from a subdirectory of the project too (found by a user: nothing was said)
	mkdir -p "$T/proj/sub" && cd "$T/proj/sub" || fail "cd sub"
	SUDO_UID=0 SUDO_USER=root run_sb "$T/policy" python3 -c "import sys; print(sys.prefix)"
	expect_rc 0
	expect_grep "$T/err" "the venv in $T/proj/.venv is not used; name its interpreter \\(pysb-bpf run -- $T/proj/.venv/bin/python"
	cd "$T/proj" || fail "cd"
	SUDO_UID=0 SUDO_USER=root run_sb "$T/policy" .venv/bin/python -c "import sys; print(sys.prefix)"
	expect_rc 0
	expect_line "$T/out" "$T/proj/.venv"
	expect_no_grep "$T/err" "sudo"
	SUDO_UID=0 SUDO_USER=root run_sb "$T/policy" no-such-tool-15
	expect_rc 127
	expect_grep "$T/err" "started through sudo, this is sudo's PATH, not yours"
}

test_users_python_on_path() {
	users_setup
	# `python` where the guest has one, else a link on PATH as python-is-python3 makes
	p=$(command -v python) || {
		ln -s /usr/bin/python3 "$T/tools/bin/python"
		p=$T/tools/bin/python
	}
	PATH="$T/tools/bin:$PATH" run_sb "$T/policy" python -c "$USERS_PROBE"
	users_expect_pair
	[ "$p" = "$T/tools/bin/python" ] || return 0
	expect_no_grep "$T/err" "command not found"
}

test_users_binary_without_slash_ls() {
	users_setup
	run_sb "$T/policy" ls "$T/ro"
	expect_rc 0
	expect_line "$T/out" "data.txt"
	run_sb "$T/policy" ls "$T/other"
	expect_rc 2
	program_err "$T/err" >"$T/perr"
	expect_grep "$T/perr" "^ls: cannot open directory .*$T/other.*: Permission denied"
	# after ls's unfinished line perhaps (docs/events.md): not anchored
	expect_grep "$T/err" "pysb-bpf: deny file open\(read\) $T/other pid="
	# the same command outside the sandbox lists it
	run_plain ls "$T/other"
	expect_rc 0
	expect_line "$T/out" "secret.txt"
}

# pip's console scripts: "#!/usr/bin/python3" (or a venv's python) on PATH.
test_users_console_script_on_path() {
	users_setup
	users_script "$T/tools/bin/mytool" "#!/usr/bin/python3"
	PATH="$T/tools/bin:$PATH" run_sb "$T/policy" mytool
	users_expect_pair
}

test_users_dot_slash_script_with_env_shebang() {
	users_setup
	users_script "$T/script.py" "#!/usr/bin/env python3"
	run_sb "$T/policy" ./script.py
	users_expect_pair
}

# "#!/usr/bin/env python3" and "-S python3 -B" scripts named without .py, on PATH: env
# would be a second exec; the interpreter runs directly.
test_users_env_shebang_script_on_path() {
	users_setup
	users_script "$T/tools/bin/envtool" "#!/usr/bin/env python3"
	users_script "$T/tools/bin/envtool-s" "#!/usr/bin/env -S python3 -B"
	printf '%s\n' "print('dont_write_bytecode', sys.dont_write_bytecode)" >>"$T/tools/bin/envtool-s"
	PATH="$T/tools/bin:$PATH" run_sb "$T/policy" envtool
	users_expect_pair
	PATH="$T/tools/bin:$PATH" run_sb "$T/policy" envtool-s
	users_expect_pair
	expect_line "$T/out" "dont_write_bytecode True"
	expect_no_grep "$T/err" "/usr/bin/env"
}

test_users_app_py() {
	users_setup
	printf '%s\n' "$USERS_PROBE" >"$T/app.py"
	run_sb "$T/policy" app.py
	users_expect_pair
}

# `pysb-bpf run app.pyz`, a zipapp (python3 -m zipapp) typed as README types `app.py`: it
# ran nothing, "app.pyz: command not found (PATH=...)", though the file was right there and
# python3 runs it (found by a user). With a #! line and no execute bit, as zipapp writes it
# without -p, python3 runs it too; the zipapp reads what it may and no more.
test_users_zipapp_pyz() {
	once_per_matrix "how the program is named and found: pysb-bpf's own resolution"
	users_setup
	mkdir -p "$T/proj/src"
	printf '%s\n' "$USERS_PROBE" >"$T/proj/src/__main__.py"
	python3 -m zipapp "$T/proj/src" -o "$T/proj/app.pyz" || fail "zipapp"
	python3 -m zipapp "$T/proj/src" -o "$T/proj/env.pyz" -p "/usr/bin/env python3" || fail "zipapp -p"
	chmod 644 "$T/proj/env.pyz"
	cd "$T/proj" || fail "cd"
	run_sb "$T/policy" app.pyz
	users_expect_pair
	run_sb "$T/policy" env.pyz
	users_expect_pair
	run_sb "$T/policy" nothere.pyz
	expect_rc 127
	expect_grep "$T/err" "nothere.pyz: no such file in $T/proj "
}

# `pysb-bpf run app.py` where no rule reaches the script's directory (a script in ~, a
# console script in /usr/local/bin): Python lists that directory (sys.path[0]) at its first
# import, and every run printed "deny file open(read) DIR"; learning then wrote
# `expose-ro=.` (every file there) for it, or, in a directory it never widens (~), wrote
# nothing and the next run denied it again (found by a user). The listing is implicit, the
# directory's files are not: a sibling module and a file below stay denied, as does a
# file the rules do not grant. The learn -> run round trip converges, with no rule for it.
test_users_script_directory_listed_alone() {
	users_setup
	users_proj_beside
	printf '%s\n' "$USERS_PROBE" "import json, csv
attempt('listing', lambda: print(sorted(os.listdir(os.path.dirname(os.path.abspath(__file__))))))
attempt('sibling', lambda: read('$T/proj/notes.txt'))
attempt('below', lambda: read('$T/proj/sub/deep.txt'))
attempt('import-helper', lambda: __import__('helper'))
attempt('write-beside', lambda: write('$T/proj/new.txt'))" >"$T/proj/app.py"
	cp "$T/policy" "$T/proj/.py-sandboxes"
	cd "$T/proj" || fail "cd"
	run_sb "$T/policy" app.py
	users_expect_pair
	expect_line "$T/out" "['.py-sandboxes', 'app.py', 'helper.py', 'notes.txt', 'sub']"
	users_expect_listed_alone
	# learning: no rule for the listing; the enforcing run after it denies nothing
	printf '%s\n' "$USERS_PROBE" "import json, csv
print('imports ok')" >"$T/proj/app.py"
	cp "$T/policy" "$T/proj/.py-sandboxes"
	echo "expose-ro=$T/other" >>"$T/proj/.py-sandboxes"
	"$PYSB" run --learn app.py >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_no_grep "$T/proj/.py-sandboxes" "^expose-r[ow]=\.$"
	expect_no_grep "$T/proj/.py-sandboxes" "^expose-r[ow]=$T/proj"
	"$PYSB" run app.py >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_line "$T/out" "imports ok"
	expect_line "$T/out" "denied ok"
	expect_no_grep "$T/err" "deny"
}

# `pysb-bpf run -- python3 -c CODE`, `-- python3 -m MODULE` and `-- python3 -` (the program
# on stdin) in a working directory no rule reaches: Python lists that directory (sys.path[0]
# is the working directory there) at its first import, and every run printed "deny file
# open(read) CWD" (found by a user). As for a script's directory: the listing alone,
# implicit; a file in it, one below it, a module beside it stay denied, and the learn ->
# run round trip writes no rule for it; `check` shows it as read,alone (-I, -P keep the directory off sys.path, and get
# nothing: tests/unit/test_program.c).
test_users_cwd_listed_alone_without_a_script() {
	once_per_matrix "how the program is named and found: pysb-bpf's own resolution"
	users_setup
	users_proj_beside
	printf '%s\n' "$USERS_PROBE" "import json, csv
attempt('listing', lambda: print(sorted(os.listdir('.'))))
attempt('sibling', lambda: read('notes.txt'))
attempt('below', lambda: read('sub/deep.txt'))
attempt('import-helper', lambda: __import__('helper'))
attempt('write-beside', lambda: write('new.txt'))" >"$T/lib/cwdprobe.py"
	cd "$T/proj" || fail "cd"
	run_sb "$T/policy" python3 -c "$(<"$T/lib/cwdprobe.py")"
	users_expect_pair
	expect_line "$T/out" "['helper.py', 'notes.txt', 'sub']"
	users_expect_listed_alone
	# check says so, as docs/policy.md does (it showed "read", as a tree's rule)
	"$PYSB" check --policy "$T/policy" -- python3 -m cwdprobe >"$T/out" 2>"$T/err"
	expect_grep "$T/out" "^file +read,alone +$T/proj  .*the working directory, alone"
	# the program on stdin
	"$PYSB" run --policy "$T/policy" -- python3 - <"$T/lib/cwdprobe.py" >"$T/out" 2>"$T/err"
	RC=$?
	users_expect_pair
	expect_line "$T/out" "listing ok"
	expect_line "$T/out" "sibling EACCES"
	expect_no_grep "$T/err" "deny file open\(read\) $T/proj "
	# learning writes no rule for the listing; the enforcing run after it (-m, the module
	# found through the policy's PYTHONPATH) is denied nothing in the working directory
	printf 'env=PYTHONPATH=%s\n' "$T/lib" >>"$T/policy"
	cp "$T/policy" .py-sandboxes
	"$PYSB" run --learn -- python3 -c "import json, csv; print('imports ok')" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_no_grep "$T/proj/.py-sandboxes" "^expose-r[ow]=(\.|$T/proj)"
	"$PYSB" run -- python3 -m cwdprobe >"$T/out" 2>"$T/err"
	RC=$?
	users_expect_pair
	expect_line "$T/out" "listing ok"
	expect_line "$T/out" "import-helper EACCES"
	expect_no_grep "$T/err" "deny file open\(read\) $T/proj "
}

# `pysb-bpf run --learn app.py` where app.py imports a module beside it: Python writes its
# bytecode cache there (__pycache__), and learning made the project writable (expose-rw=.,
# found by a user), what docs/faq.md says never to do for it: a program that may write its
# sources may change what it runs next. No rule for the cache, env=PYTHONDONTWRITEBYTECODE=1
# instead: the next run is quiet, and a write beside the sources is EACCES.
test_users_learn_leaves_sources_read_only_for_the_bytecode_cache() {
	once_per_matrix "learning's rules: user space"
	users_setup
	mkdir -p "$T/proj"
	printf 'X = 1\n' >"$T/proj/helper.py"
	printf '%s\n' "$USERS_PROBE" "attempt('write-beside', lambda: write('new.txt'))" \
		>"$T/lib/learnprobe.py"
	printf '%s\n' "import sys, helper" "print('helper', helper.X)" "if sys.argv[1:]:" \
		"    sys.path.insert(0, '$T/lib'); import learnprobe" >"$T/proj/app.py"
	cp "$T/policy" "$T/proj/.py-sandboxes"
	cd "$T/proj" || fail "cd"
	"$PYSB" run --learn app.py >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_line "$T/out" "helper 1"
	expect_grep "$T/err" "write\(s\) of Python's bytecode cache \(e.g. $T/proj/__pycache__\)"
	expect_no_grep "$T/proj/.py-sandboxes" "^expose-rw="
	expect_grep "$T/proj/.py-sandboxes" "^expose-ro=\.$"
	expect_grep "$T/proj/.py-sandboxes" "^env=PYTHONDONTWRITEBYTECODE=1$"
	rm -rf "$T/proj/__pycache__"
	"$PYSB" run app.py probe >"$T/out" 2>"$T/err"
	RC=$?
	users_expect_pair
	expect_line "$T/out" "helper 1"
	expect_line "$T/out" "write-beside EACCES"
	expect_grep "$T/err" "deny file create\(write\) $T/proj/new.txt "
	expect_no_grep "$T/err" "__pycache__"
}

# The README's three spellings of one program: `app.py`, `-- python3 app.py` (with
# options), `-- .venv/bin/python app.py`; the script lies where no rule reaches, and each
# reads it (found by a user: only `run app.py` could, the others failed with "can't open
# file ... Permission denied"). -c reads no script: nothing granted for a word after it.
test_users_python3_app_py_reads_its_script() {
	once_per_matrix "how the program is named and found: pysb-bpf's own resolution"
	users_setup
	mkdir -p "$T/proj/.venv/bin"
	ln -s "$(command -v python3)" "$T/proj/.venv/bin/python"
	printf '%s\n' "$USERS_PROBE" >"$T/proj/app.py"
	cd "$T/proj" || fail "cd"
	run_sb "$T/policy" app.py
	users_expect_pair
	run_sb "$T/policy" python3 app.py
	users_expect_pair
	run_sb "$T/policy" python3 -u -X dev app.py
	users_expect_pair
	run_sb "$T/policy" .venv/bin/python app.py
	users_expect_pair
	run_sb "$T/policy" python3 -c "open('app.py').read()" app.py
	expect_rc 1
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) $T/proj/app.py "
}

test_users_absolute_paths() {
	users_setup
	printf '%s\n' "$USERS_PROBE" >"$T/app.py"
	run_sb "$T/policy" "$T/app.py"
	users_expect_pair
	run_sb "$T/policy" /usr/bin/python3 -c "$USERS_PROBE
print('argv0', sys.orig_argv[0])"
	users_expect_pair
	expect_line "$T/out" "argv0 /usr/bin/python3"
}

test_users_venv_python() {
	users_setup
	python3 -m venv --without-pip "$T/.venv" || fail "python3 -m venv failed"
	run_sb "$T/policy" .venv/bin/python -c "$USERS_PROBE
import site
print('prefix', sys.prefix)
attempt('site-packages', lambda: os.listdir(site.getsitepackages()[0]))
attempt('pyvenv.cfg', lambda: read('$T/.venv/pyvenv.cfg'))"
	users_expect_pair
	expect_line "$T/out" "prefix $T/.venv"
	expect_line "$T/out" "site-packages ok"
	expect_line "$T/out" "pyvenv.cfg ok"
}

# `python3 -m venv --copies .venv` (Docker images, file systems without links): the venv's
# python is a copy, and Python finds its base installation from pyvenv.cfg's `home`,
# realpath()ing the python there (/usr/bin/python3 -> python3.11): a readlink(2) of that
# link, denied on every start with a deny line (found by a user). The link itself is
# readable, nothing more: the probe's denied read still fails.
test_users_venv_copies_python() {
	once_per_matrix "how the program is named and found: pysb-bpf's own resolution"
	users_setup
	python3 -m venv --without-pip --copies "$T/.venvc" || fail "python3 -m venv --copies failed"
	[ -L "$T/.venvc/bin/python" ] && fail ".venvc/bin/python is a link: --copies ignored"
	cd "$T" || fail "cd"
	run_sb "$T/policy" .venvc/bin/python -c "$USERS_PROBE
print('prefix', sys.prefix, 'base', sys.base_prefix)"
	users_expect_pair
	expect_line "$T/out" "prefix $T/.venvc base /usr"
	expect_no_grep "$T/err" "readlink"
	expect_no_grep "$T/err" "deny file .*/usr/bin/python"
}

# A pyenv shim exactly as pyenv writes them (a bash script: env, bash, pyenv exec), with a
# fake pyenv whose `which` names a Python under the PYENV_ROOT the shim exports.
test_users_pyenv_style_shim() {
	users_setup
	mkdir -p "$T/shims" "$T/fakepyenv/libexec" "$T/root/versions/3.x/bin"
	ln -s /usr/bin/python3 "$T/root/versions/3.x/bin/python3"
	write_file "$T/fakepyenv/libexec/pyenv" <<'EOF'
#!/usr/bin/env bash
case "$1" in
which) echo "$PYENV_ROOT/versions/3.x/bin/$2" ;;
exec) shift; p=$1; shift; exec "$PYENV_ROOT/versions/3.x/bin/$p" "$@" ;;
*) exit 1 ;;
esac
EOF
	write_file "$T/shims/python3" <<EOF
#!/usr/bin/env bash
set -e
[ -n "\$PYENV_DEBUG" ] && set -x

program="\${0##*/}"

export PYENV_ROOT="$T/root"
exec "$T/fakepyenv/libexec/pyenv" exec "\$program" "\$@"
EOF
	chmod 755 "$T/fakepyenv/libexec/pyenv" "$T/shims/python3"
	echo 3.x >"$T/root/version" # `pyenv global 3.x`: what pysb-bpf reads, as pyenv does
	# the shim works unconfined, through three execs (env, bash, pyenv's exec)
	PATH="$T/shims:$PATH" run_plain python3 -c "import sys; print('exe', sys.executable)"
	expect_rc 0
	expect_line "$T/out" "exe $T/root/versions/3.x/bin/python3"
	PATH="$T/shims:$PATH" run_sb "$T/policy" python3 -c "$USERS_PROBE
print('exe', sys.executable)"
	users_expect_pair
	expect_line "$T/out" "exe $T/root/versions/3.x/bin/python3"
	expect_no_grep "$T/err" "/usr/bin/env"
	# ... and behind a #!/usr/bin/env python3 script
	users_script "$T/tools/bin/viashim" "#!/usr/bin/env python3"
	PATH="$T/shims:$T/tools/bin:$PATH" run_sb "$T/policy" viashim
	users_expect_pair
}

# The machine's own pyenv (/root/.pyenv on the development hosts, shared with the VM).
test_users_real_pyenv_shim_when_present() {
	once_per_matrix "how the program is named and found: pysb-bpf's own resolution"
	[ -x /root/.pyenv/shims/python3 ] || {
		echo "no /root/.pyenv/shims/python3 here: nothing to test"
		return 0
	}
	users_setup
	real=$(PATH="/root/.pyenv/shims:$PATH" /root/.pyenv/libexec/pyenv which python3) ||
		fail "pyenv which python3 failed"
	PATH="/root/.pyenv/shims:$PATH" run_sb "$T/policy" python3 -c "$USERS_PROBE
print('exe', sys.executable)"
	users_expect_pair
	expect_line "$T/out" "exe $real"
}

# A shell-script program needs a second exec for each command: said before the start,
# and it works once the policy allows exec.
# A program that runs another (`timeout 3 python3 ...`, `nice`, `env`): the kernel opens
# the second one before any exec check, and that open is what the policy denies first.
# Its deny line says it was an exec and what allows it (found by a user: it said
# `open(read) /usr/bin/python3.11` alone); a read of the same file is not an exec's.
test_users_exec_after_start_deny_line_names_process_exec() {
	users_setup
	run_sb "$T/policy" timeout 30 python3 -c pass
	expect_rc 126
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) /usr/bin/python3[.0-9]* \(the kernel's open of a program to run: the policy allows no exec after the program's start; python-api=ALLOW:process-exec and an expose-ro= of its directory allow it\) \(a Python started by the program, as python -m venv does"
	run_sb "$T/policy" python3 -c "open('/usr/bin/timeout', 'rb')"
	expect_rc 1
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) /usr/bin/timeout pid="
	expect_no_grep "$T/err" "program to run"
}

test_users_shell_script_says_what_to_write() {
	users_setup
	printf '#!/bin/sh\nls %s\n' "$T/ro" >"$T/list.sh"
	chmod 755 "$T/list.sh"
	run_sb "$T/policy" ./list.sh
	[ "$RC" -ne 0 ] || fail "ls ran without exec allowed"
	expect_grep "$T/err" "list.sh: it is a shell script: each command it runs is an exec .*python-api=ALLOW:process-exec"
	expect_grep "$T/err" "^pysb-bpf: deny (file open\(read\)|exec exec\(exec\)) [^ ]*/ls "
	expect_grep "$T/err" "ls: Permission denied"
	# `sh -c` is a shell, not a script (found by a user: "it is a shell script"); its
	# status is the program's
	run_sb "$T/policy" sh -c 'exit 42'
	expect_rc 42
	expect_grep "$T/err" "sh: it is a shell: each command it runs is an exec"
	expect_no_grep "$T/err" "shell script"
	printf 'python-api=ALLOW:process-exec\nexpose-ro=/usr/bin\n' >>"$T/policy"
	run_sb "$T/policy" ./list.sh
	expect_rc 0
	expect_line "$T/out" "data.txt"
	expect_no_grep "$T/err" "shell script"
	# a file without an execute bit: said plainly, not left to work out (found by a user)
	printf '#!/bin/sh\n' >"$T/noexec"
	chmod 644 "$T/noexec"
	run_sb "$T/policy" "$T/noexec"
	expect_rc 126
	expect_line "$T/err" "pysb-bpf: error: cannot execute $T/noexec: it has no execute bit, and the kernel runs a #! script only when it may execute it; chmod +x $T/noexec, or name its interpreter: pysb-bpf run -- /bin/sh $T/noexec"
}

# A program under no directory the policy grants (bpf.implicit=false: not even its own
# file): refused before the start with the line to write; with that line it runs, and
# the policy still denies what it does not grant. busybox is static: no loader, no libc.
test_users_program_under_no_exposed_directory() {
	users_setup
	[ -x /bin/busybox ] || fail "no /bin/busybox (busybox-static, scripts/deps.sh)"
	mkdir -p "$T/opt"
	cp /bin/busybox "$T/opt/busybox"
	printf 'bpf.implicit=false\n' >>"$T/policy"
	run_sb "$T/policy" "$T/opt/busybox" cat "$T/ro/data.txt"
	expect_rc 125
	expect_grep "$T/err" "opt/busybox is under no directory the policy grants exec: .*Write expose-ro=$T/opt "
	printf 'expose-ro=%s\n' "$T/opt" >>"$T/policy"
	run_sb "$T/policy" "$T/opt/busybox" cat "$T/ro/data.txt"
	expect_rc 0
	expect_line "$T/out" "public"
	run_sb "$T/policy" "$T/opt/busybox" cat "$T/other/secret.txt"
	expect_rc 1
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) $T/other/secret.txt "
}

# `script -qec CMD /dev/null </dev/null`, the common way to give a program a terminal in
# CI (found by a user): the typescript holds what the program wrote byte for byte, as it
# does natively: its CR LF not made CR CR LF by the caller's terminal, a LF it writes in
# raw mode not made CR LF; it reads the end of script's input as its end of input (it hung
# until killed, with a NUL byte echoed as "^@"); pysb-bpf's own deny line ends in CR LF.
test_users_script_typescript_byte_for_byte_and_eof() {
	users_setup
	command -v script >/dev/null || skip "script(1) not installed (util-linux)"
	write_file "$T/ro/typescript_app.py" <<EOF2
import os, sys, termios, tty
print('line one')
print('input', repr(sys.stdin.read()))
try:
    open('$T/other/secret.txt').read(); print('read')
except PermissionError:
    print('denied')
old = termios.tcgetattr(1)
tty.setraw(1)
os.write(1, b'raw a\\nraw b\\r\\n')
termios.tcsetattr(1, termios.TCSADRAIN, old)
print('end')
EOF2
	timeout 60 script -qec "python3 $T/ro/typescript_app.py" /dev/null </dev/null >"$T/native" 2>&1
	RC=$?
	[ $RC = 0 ] || fail "natively, script exited with $RC: $(head -c 2000 "$T/native")"
	has_bytes "$T/native" "input ''\r\n" "raw a\nraw b\r\nend\r\n" ||
		fail "native typescript not as expected: $(od -c "$T/native" | head -20)"
	timeout 60 script -qec "$PYSB run --policy $T/policy -- python3 $T/ro/typescript_app.py" /dev/null \
		</dev/null >"$T/out" 2>&1
	RC=$?
	expect_rc 0
	# the program's lines, its end of input, its raw LF, and the deny line's end (the
	# deny line comes between two of the program's writes, where is not fixed)
	has_bytes "$T/out" "line one\r\n" "input ''\r\n" "denied\r\n" "raw a\nraw b\r\n" \
		"end\r\n" "other/secret.txt pid=" ||
		fail "typescript not as native: $(od -c "$T/out" | head -30)"
	python3 -c 'import re, sys
d = open(sys.argv[1], "rb").read()
deny = re.findall(rb"pysb-bpf: deny file open\(read\) [^\r\n]*secret.txt[^\r\n]*(\r*)\n", d)
sys.exit(not (deny and all(cr == b"\r" for cr in deny)) or b"\r\r" in d or b"^@" in d)' "$T/out" ||
		fail "deny line not ending in one CR LF, or CR CR, or ^@: $(od -c "$T/out" | head -30)"
}

# A deny line on the terminal comes after what the program wrote before its denial,
# never inside one of its lines (found by CI: "line one", the deny line, then line one's
# CR LF, which the pty passes on in a second push; the loop read the ring first). Made
# certain here: pysb-bpf is stopped while the program writes 6 KiB, is denied and
# exits, so it finds the pty, the ring and the exit ready at once (the program's
# "denied", written after its denial, may then come before the deny line or after it).
test_users_deny_line_after_what_the_program_wrote() {
	users_setup
	command -v script >/dev/null || skip "script(1) not installed (util-linux)"
	local spid ppid cpid i
	mkdir -p "$T/rw"
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$T/ro" "$T/rw" >"$T/policy"
	write_file "$T/ro/order_app.py" <<EOF2
import os, time
open('$T/rw/ready', 'w').close()
while not os.path.exists('$T/rw/go'):
    time.sleep(0.02)
b = ''.join('before %03d %s\\n' % (i, 'x' * 150) for i in range(40)).encode()
while b:
    b = b[os.write(1, b):]
try:
    open('$T/other/secret.txt').read(); print('read')
except PermissionError:
    print('denied')
EOF2
	timeout 60 script -qec "$PYSB run --policy $T/policy -- python3 $T/ro/order_app.py" /dev/null \
		</dev/null >"$T/out" 2>&1 &
	spid=$!
	for ((i = 0; i < 600; i++)); do
		[ -e "$T/rw/ready" ] && break
		sleep 0.05
	done
	ppid=$(pgrep -f -x "$PYSB run --policy $T/policy -- python3 $T/ro/order_app.py")
	cpid=$(pgrep -P "$ppid")
	[ -n "$ppid" ] && [ -n "$cpid" ] || fail "program not started: $(cat "$T/out")"
	kill -STOP "$ppid"
	touch "$T/rw/go"
	for ((i = 0; i < 600; i++)); do
		[[ $(ps -o stat= -p "$cpid") == Z* ]] && break
		sleep 0.05
	done
	kill -CONT "$ppid"
	wait "$spid"
	RC=$?
	expect_rc 0
	python3 -c 'import re, sys
d = open(sys.argv[1], "rb").read()
lines = d.split(b"\r\n")
deny = [i for i, l in enumerate(lines) if l.startswith(b"pysb-bpf: deny file open(read) ")]
before = [i for i, l in enumerate(lines) if re.fullmatch(rb"before \d{3} x{150}", l)]
sys.exit(not (len(deny) == 1 and len(before) == 40 and before[-1] < deny[0] and
              b"denied" in lines))' "$T/out" ||
		fail "deny line not after the program's 40 whole lines: $(grep -a -n -B1 -A1 deny "$T/out" | od -c | head -20)"
}

# `pysb-bpf run app.py 2>&1 | cat`, the program writing a progress text with no newline
# when it is denied: through a pipe, pysb-bpf cannot know where the program's line ends
# (its bytes go to the pipe, not through pysb-bpf, as they do on a terminal), so the deny
# line may start after "progress ... " on the same line. What holds (tested here): the deny
# line is one write, whole, ending in its own newline, and removing it gives back the
# program's bytes exactly, stdout's and stderr's in the order written.
test_users_deny_line_through_a_pipe_leaves_the_programs_bytes_whole() {
	once_per_matrix "the supervisor's writes to a shared pipe: no hook of its own"
	users_setup
	write_file "$T/ro/progress_app.py" <<EOF2
import sys
sys.stderr.write('progress 10%...'); sys.stderr.flush()
try:
    open('$T/other/secret.txt')
except PermissionError:
    pass
sys.stderr.write('done\\n'); sys.stderr.flush()
sys.stdout.write('result='); sys.stdout.flush()
try:
    open('$T/other/secret.txt', 'rb')
except PermissionError:
    pass
print('42')
EOF2
	"$PYSB" run --policy "$T/policy" -- python3 "$T/ro/progress_app.py" 2>&1 | cat >"$T/out"
	RC=${PIPESTATUS[0]}
	expect_rc 0
	[ "$(grep -c 'pysb-bpf: deny file open(read) '"$T"'/other/secret.txt pid=[0-9]* tid=[0-9]* comm=python3$' "$T/out")" = 1 ] ||
		fail "not one whole deny line ending the output's line: $(od -c "$T/out" | head -20)"
	program_err "$T/out" >"$T/prog"
	printf 'progress 10%%...done\nresult=42\n' >"$T/want"
	cmp -s "$T/prog" "$T/want" || fail "the program's bytes not whole: $(od -c "$T/prog" | head)"
}

# `sudo pysb-bpf attach --pid PID`: the policy's ~ is the confined process's user's, not
# root's (found by a user: attach read ~ from its own environment, so expose-ro=~/data
# named /root/data); and `sudo pysb-bpf learn --from` spells ~ as the program's user's, as
# run does.
test_users_attach_and_learn_from_read_the_programs_home() {
	users_setup
	local u=pysb-bob kpid apid
	id "$u" >/dev/null 2>&1 || useradd -M -d "$T/bob" "$u" || fail "useradd $u"
	usermod -d "$T/bob" "$u" 2>/dev/null
	mkdir -p "$T/bob/data" "$T/run"
	echo data-of-bob >"$T/bob/data/f"
	chown -R "$u" "$T/bob" "$T/run"
	chmod 755 "$T"
	printf 'expose-ro=~/data\nexpose-rw=%s\n' "$T/run" >"$T/policy"
	write_file "$T/run/k.py" <<PY
import os, time
open("$T/run/started", "w").close()  # Python runs, as bob: attach sees both
while not os.path.exists("$T/run/go"):
    time.sleep(0.05)
for p in ("$T/bob/data/f", "$T/ro/data.txt"):
    try:
        open(p).read(); r = "read"
    except PermissionError:
        r = "denied"
    open("$T/run/log", "a").write(p + " " + r + "\\n")
PY
	setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups -- python3 "$T/run/k.py" &
	kpid=$!
	for _ in $(seq 200); do [ -e "$T/run/started" ] && break; sleep 0.05; done
	HOME=/root USER=root LOGNAME=root "$PYSB" attach --pid "$kpid" --policy "$T/policy" \
		>"$T/out" 2>"$T/err" &
	apid=$!
	for _ in $(seq 100); do grep -q "is confined from now on" "$T/err" 2>/dev/null && break; sleep 0.1; done
	expect_grep "$T/err" "process $kpid is confined from now on"
	touch "$T/run/go"
	wait "$kpid"
	kill -INT "$apid"
	wait "$apid"
	expect_line "$T/run/log" "$T/bob/data/f read"
	expect_line "$T/run/log" "$T/ro/data.txt denied"
	# learn --from through sudo: a read in bob's home is spelt ~
	printf '{"record":"event","kind":"file","operation":"open","path":"%s","access":["read"],"mode":"learn","decision":"audit"}\n' \
		"$T/bob/data/f" >"$T/ev.jsonl"
	SUDO_UID=$(id -u "$u") SUDO_GID=$(id -g "$u") SUDO_USER=$u HOME=/root USER=root LOGNAME=root \
		"$PYSB" learn --from "$T/ev.jsonl" --policy "$T/learned" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_grep "$T/learned" "^expose-ro=~/data$"
}

# After `pip install --user`, Python lists the user's own site-packages at every start
# (~/.local/lib/pythonX.Y/site-packages of the user it runs as: root here, whose home
# pwd gives with the empty environment a run starts with). No rule grants it: the listing
# is denied, and the deny line names the directory and the two ways out (found by a user:
# two bare deny lines at every start, and ModuleNotFoundError for the package). Each way
# out then works: expose-ro= of it imports the package, env=PYTHONNOUSERSITE=1 makes
# Python not look. The directory is made for the test and removed after it: every other
# Python start in this VM would list it too.
test_users_pip_user_site_says_its_way_out() {
	once_per_matrix "the deny line's text and the program's own start: no hook of its own"
	local ver site
	ver=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])') || fail "python3"
	site=$(python3 -c 'import os, pwd; print(pwd.getpwuid(os.getuid()).pw_dir)')/.local/lib/python$ver/site-packages
	[ -e "$site" ] && skip "$site exists already: not the test's to make and remove"
	trap 'rm -rf "$site"; rmdir -p "$(dirname "$site")" 2>/dev/null' EXIT
	mkdir -p "$site" || fail "cannot make $site"
	echo 'VALUE = 42' >"$site/usermod.py"
	run_plain env -i python3 -c 'import usermod; print("usermod", usermod.VALUE)'
	expect_rc 0
	expect_line "$T/out" "usermod 42"
	: >"$T/policy"
	run_sb "$T/policy" python3 -c 'import usermod'
	expect_rc 1
	expect_grep "$T/err" "ModuleNotFoundError: No module named 'usermod'"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) $site \(the user's own site-packages, where pip install --user puts packages: expose-ro=$site lets the program import them; env=PYTHONNOUSERSITE=1 keeps Python from looking there\) pid="
	printf 'expose-ro=~/.local/lib/python%s/site-packages\n' "$ver" >"$T/policy"
	run_sb "$T/policy" python3 -c 'import usermod; print("usermod", usermod.VALUE)'
	expect_rc 0
	expect_line "$T/out" "usermod 42"
	expect_no_grep "$T/err" "deny file open\(read\) $site"
	printf 'env=PYTHONNOUSERSITE=1\n' >"$T/policy"
	run_sb "$T/policy" python3 -c 'import sys; print("no user site", sys.flags.no_user_site)'
	expect_rc 0
	expect_line "$T/out" "no user site 1"
	expect_no_grep "$T/err" "\.local"
	rm -rf "$site"
	rmdir -p "$(dirname "$site")" 2>/dev/null
	trap - EXIT
}

# `import requests` (and pip, and anything on urllib3) binds a TCP socket to port 0 of ::1
# at import, urllib3's test of whether IPv6 works (util/connection.py, _has_ipv6). Denied
# by default, as every bind; the deny line at every run named no rule and no cause
# (found by a user of requests). It now says what made it and the rule py-sandboxes'
# learning writes for it; that rule then lets the bind through, for ::1 and 127.0.0.1,
# and a bind to another port of ::1 stays denied. The probe is urllib3's own code,
# copied: python3-urllib3 is not among the test packages.
test_users_urllib3_ipv6_probe_deny_line_says_what_to_write() {
	once_per_matrix "the deny line's text: the bind's denial itself is net_rules' test"
	users_setup
	probe_py "$T/app.py" \
		"attempt('probe6', lambda: socket.socket(socket.AF_INET6).bind(('::1', 0)))" \
		"attempt('probe4', lambda: socket.socket().bind(('127.0.0.1', 0)))" \
		"attempt('port6', lambda: socket.socket(socket.AF_INET6).bind(('::1', 20031)))"
	run_sb "$T/policy" python3 "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "probe6 EPERM"
	expect_line "$T/out" "probe4 EPERM"
	expect_grep "$T/err" "^pysb-bpf: deny net bind tcp \[::1\]:0 \(IN\) no net= rule allows it \(a bind to a free port of the loopback: urllib3, in requests and pip, makes one at import to learn whether IPv6 works; net=ALLOW\|TCP\|ip6-localhost\|0\|IN allows it\) pid="
	expect_grep "$T/err" "^pysb-bpf: deny net bind tcp 127\.0\.0\.1:0 \(IN\) no net= rule allows it \(a bind .*net=ALLOW\|TCP\|localhost\|0\|IN allows it\) pid="
	# a port of its own is no probe: the line says no more than before
	expect_grep "$T/err" "^pysb-bpf: deny net bind tcp \[::1\]:20031 \(IN\) no net= rule allows it pid="
	printf 'net=ALLOW|TCP|ip6-localhost|0|IN\nnet=ALLOW|TCP|localhost|0|IN\n' >>"$T/policy"
	run_sb "$T/policy" python3 "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "probe6 ok"
	expect_line "$T/out" "probe4 ok"
	expect_line "$T/out" "port6 EPERM"
	expect_no_grep "$T/err" "deny net bind tcp .*:0 "
}

# `cd sub; pysb-bpf run ../app.py`, or a run from the project's tests/: the default policy
# is ./.py-sandboxes of the working directory, as for python-sb, and is not there. The
# error named "./.py-sandboxes" alone (found by a user, who had one beside the program).
# It now names the working directory, and the policy beside the program (else the
# nearest above), with both ways to use it; each then runs the program.
test_users_missing_policy_names_the_one_beside_the_program() {
	once_per_matrix "pysb-bpf's own message, before any sandbox exists"
	mkdir -p "$T/proj/sub" "$T/proj/tests"
	printf 'expose-ro=.\n' >"$T/proj/.py-sandboxes"
	printf 'print("app ran")\n' >"$T/proj/app.py"
	(cd "$T/proj/sub" && "$PYSB" run ../app.py >"$T/out" 2>"$T/err")
	RC=$?
	expect_rc 125
	expect_grep "$T/err" "^\./\.py-sandboxes: error: policy file not found"
	expect_line "$T/err" "pysb-bpf: error: no .py-sandboxes in the working directory $T/proj/sub, but there is $T/proj/.py-sandboxes: run from $T/proj (cd $T/proj: its relative paths, such as expose-ro=., are read from the working directory, as python-sb reads them), or name it with --policy $T/proj/.py-sandboxes"
	[ ! -s "$T/out" ] || fail "the program ran: $(cat "$T/out")"
	# no program path: the nearest directory above
	(cd "$T/proj/tests" && "$PYSB" run python3 -c 'print(1)' >"$T/out" 2>"$T/err")
	RC=$?
	expect_rc 125
	expect_grep "$T/err" "^pysb-bpf: error: no \.py-sandboxes in the working directory $T/proj/tests, but there is $T/proj/\.py-sandboxes: "
	# both ways out
	(cd "$T/proj" && "$PYSB" run app.py >"$T/out" 2>"$T/err")
	RC=$?
	expect_rc 0
	expect_line "$T/out" "app ran"
	(cd "$T/proj/sub" && "$PYSB" run --policy "$T/proj/.py-sandboxes" -- python3 ../app.py >"$T/out" 2>"$T/err")
	RC=$?
	expect_rc 0
	expect_line "$T/out" "app ran"
}

# `expose-rw=${TMPDIR}` with TMPDIR set: the program starts with only what env= passes,
# so it has no TMPDIR, and Python's tempfile tried /tmp, /var/tmp and the working
# directory, each denied, then "No usable temporary directory found in ['/tmp', ...]",
# naming no variable (found by a user). run now warns before the start that the rule is
# the user's TMPDIR and no env= line passes it; with env=TMPDIR=${TMPDIR} the program's
# temporary files go there.
test_users_tmpdir_exposed_but_not_passed_says_so() {
	once_per_matrix "a warning of the supervisor's, before the start; the denials are the walk's"
	local prog='import tempfile; d = tempfile.mkdtemp(); print("tmp", d)'
	mkdir -p "$T/mytmp"
	printf 'expose-rw=${TMPDIR}\n' >"$T/policy"
	TMPDIR=$T/mytmp run_sb "$T/policy" python3 -c "$prog"
	expect_rc 1
	expect_grep "$T/err" "No usable temporary directory"
	expect_grep "$T/err" "^pysb-bpf: deny file create\(write\) /tmp/[^/ ]+ "
	expect_line "$T/err" "pysb-bpf: warning: $T/policy:1: expose-rw=$T/mytmp is your TMPDIR, but no env= line passes TMPDIR to the program: Python's tempfile, and most programs, then write in /tmp; add env=TMPDIR=\${TMPDIR}"
	printf 'env=TMPDIR=${TMPDIR}\n' >>"$T/policy"
	TMPDIR=$T/mytmp run_sb "$T/policy" python3 -c "$prog"
	expect_rc 0
	expect_grep "$T/out" "^tmp $T/mytmp/tmp[^/]+$"
	expect_no_grep "$T/err" "warning|deny"
	# without TMPDIR set, nothing to say
	printf 'expose-rw=%s\n' "$T/mytmp" >"$T/policy"
	env -u TMPDIR "$PYSB" run --policy "$T/policy" -- python3 -c 'print("ran")' >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_no_grep "$T/err" "warning"
}

# tempfile under a policy with no temporary directory: three deny lines (/tmp, /var/tmp,
# the working directory), then "No usable temporary directory", and nothing said what to
# write (found by a user). A deny line of a file or directory made right in /tmp or
# /var/tmp now names the rules; with them the program's temporary directory works. A
# file deeper (the test's own $T) gets no such words.
test_users_tempfile_deny_line_names_the_temporary_directory_rules() {
	once_per_matrix "the deny line's text: the denials themselves are the walk's"
	local prog='import tempfile, os; d = tempfile.mkdtemp(); print("tmp", os.path.dirname(d)); os.rmdir(d)'
	mkdir -p "$T/other" "$T/lib"
	printf 'expose-ro=%s\n' "$T/lib" >"$T/policy"
	env -u TMPDIR "$PYSB" run --policy "$T/policy" -- python3 -c "
try: open('$T/other/x', 'w')
except PermissionError: print('deeper EACCES')
$prog" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 1
	expect_line "$T/out" "deeper EACCES"
	expect_grep "$T/err" "No usable temporary directory"
	local hint=" \(the temporary directory: Python's tempfile, and most programs, write in \\\$TMPDIR, else /tmp; expose-rw=\\\$\{TMPDIR:-/tmp\} with env=TMPDIR=\\\$\{TMPDIR:-/tmp\} allows it\) pid="
	expect_grep "$T/err" "^pysb-bpf: deny file create\(write\) /tmp/[^/ ]+$hint"
	expect_grep "$T/err" "^pysb-bpf: deny file create\(write\) /var/tmp/[^/ ]+$hint"
	expect_grep "$T/err" "^pysb-bpf: deny file create\(write\) $T/other/x pid="
	printf 'expose-rw=${TMPDIR:-/tmp}\nenv=TMPDIR=${TMPDIR:-/tmp}\n' >>"$T/policy"
	env -u TMPDIR "$PYSB" run --policy "$T/policy" -- python3 -c "$prog" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_line "$T/out" "tmp /tmp"
	expect_no_grep "$T/err" "deny"
}

# `pysb-bpf check` from a subdirectory, and with expose-rw=${TMPDIR} (the README's step 2,
# before the first run): run named the policy beside the program and warned that TMPDIR
# was not passed, check said "policy file not found" alone and "warnings (0)" (found by a
# user: check is where a policy is read before it is used). check now gives run's words,
# from the same code, in its text and in --json; what they say to do then checks clean
# and runs the program.
test_users_check_gives_the_hints_run_gives() {
	once_per_matrix "check's report: no sandbox"
	local hint
	mkdir -p "$T/proj/sub" "$T/mytmp"
	printf 'expose-ro=.\n' >"$T/proj/.py-sandboxes"
	printf 'print("app ran")\n' >"$T/proj/app.py"
	hint="pysb-bpf: error: no .py-sandboxes in the working directory $T/proj/sub, but there is $T/proj/.py-sandboxes: run from $T/proj (cd $T/proj: its relative paths, such as expose-ro=., are read from the working directory, as python-sb reads them), or name it with --policy $T/proj/.py-sandboxes"
	(cd "$T/proj/sub" && "$PYSB" check ../app.py >"$T/out" 2>"$T/err")
	RC=$?
	expect_rc 1
	expect_grep "$T/err" "^\./\.py-sandboxes: error: policy file not found"
	expect_line "$T/err" "$hint"
	(cd "$T/proj/sub" && "$PYSB" run ../app.py >"$T/out" 2>"$T/err")
	RC=$?
	expect_rc 125
	expect_line "$T/err" "$hint"
	(cd "$T/proj/sub" && "$PYSB" check --json ../app.py >"$T/out" 2>"$T/err")
	RC=$?
	expect_rc 1
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not any(e["message"].startswith("no .py-sandboxes in the working directory " + sys.argv[2] + ", but there is ") for e in d["errors"]))' "$T/out" "$T/proj/sub" ||
		fail "no hint among check --json's errors: $(cat "$T/out")"
	(cd "$T/proj/sub" && "$PYSB" check --policy "$T/proj/.py-sandboxes" ../app.py >"$T/out" 2>"$T/err")
	RC=$?
	expect_rc 0
	# the TMPDIR warning, where run gives it
	printf 'expose-ro=.\nexpose-rw=${TMPDIR}\n' >"$T/proj/.py-sandboxes"
	(cd "$T/proj" && TMPDIR=$T/mytmp "$PYSB" check app.py >"$T/out" 2>"$T/err")
	RC=$?
	expect_rc 0
	expect_line "$T/out" "== warnings (1)"
	expect_line "$T/out" "warning: ./.py-sandboxes:2:11: expose-rw=$T/mytmp is your TMPDIR, but no env= line passes TMPDIR to the program: Python's tempfile, and most programs, then write in /tmp; add env=TMPDIR=\${TMPDIR}"
	(cd "$T/proj" && TMPDIR=$T/mytmp "$PYSB" check --json app.py >"$T/out" 2>"$T/err")
	RC=$?
	expect_rc 0
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not [w for w in d["warnings"] if w["message"].startswith("expose-rw=" + sys.argv[2] + " is your TMPDIR") and w["line"] == 2])' "$T/out" "$T/mytmp" ||
		fail "no TMPDIR warning in check --json: $(cat "$T/out")"
	printf 'env=TMPDIR=${TMPDIR}\n' >>"$T/proj/.py-sandboxes"
	(cd "$T/proj" && TMPDIR=$T/mytmp "$PYSB" check app.py >"$T/out" 2>"$T/err")
	RC=$?
	expect_rc 0
	expect_line "$T/out" "== warnings (0)"
	(cd "$T/proj" && TMPDIR=$T/mytmp "$PYSB" run app.py >"$T/out" 2>"$T/err")
	RC=$?
	expect_rc 0
	expect_line "$T/out" "app ran"
	expect_no_grep "$T/err" "warning"
}

# sqlite3 on a database under expose-ro=: Python's sqlite3 opens it for reading and
# writing, is refused (EACCES), and goes on read-only: the program read its rows, and the
# one deny line at every start named no rule, as if the access had failed (found by a
# user). The line now says the file may be read and that sqlite3 does; the write is still
# refused in the kernel, and expose-rw= lets it through.
test_users_sqlite_read_only_database_says_it_reads() {
	once_per_matrix "the deny line's text: the open's denial itself is the file rules' test"
	local db="$T/data/app.db"
	mkdir -p "$T/data" "$T/lib"
	write_probe_lib
	python3 -c "import sqlite3; c = sqlite3.connect('$db'); c.execute('create table t(x)'); c.execute('insert into t values (1)'); c.commit()" ||
		fail "sqlite3 natively"
	probe_py "$T/lib/q.py" "import sqlite3" \
		"attempt('rdwr', lambda: os.close(os.open('$db', os.O_RDWR)))" \
		"c = sqlite3.connect('$db')" \
		"print('rows', c.execute('select x from t').fetchall(), flush=True)" \
		"try:" \
		"    c.execute('insert into t values (2)'); c.commit(); print('insert ok')" \
		"except sqlite3.OperationalError as e:" \
		"    print('insert', e)"
	printf 'expose-ro=%s\nexpose-ro=%s\n' "$T/data" "$T/lib" >"$T/policy"
	run_sb "$T/policy" python3 "$T/lib/q.py"
	expect_rc 0
	expect_line "$T/out" "rdwr EACCES"
	expect_line "$T/out" "rows [(1,)]"
	expect_line "$T/out" "insert attempt to write a readonly database"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read,write\) $db \(read-only: $T/policy:1 lets $T/data be read, not written; a program that then opens it for reading alone, as sqlite3 does, reads it; expose-rw= lets it write\) pid="
	printf 'expose-rw=%s\nexpose-ro=%s\n' "$T/data" "$T/lib" >"$T/policy"
	run_sb "$T/policy" python3 "$T/lib/q.py"
	expect_rc 0
	expect_line "$T/out" "rdwr ok"
	expect_line "$T/out" "insert ok"
	expect_no_grep "$T/err" "deny file [^ ]+ $T/data"
	[ "$(python3 -c "import sqlite3; print(sqlite3.connect('$db').execute('select count(*) from t').fetchone()[0])")" = 2 ] ||
		fail "the insert is not in the database"
}

# `pysb-bpf run -- git log` in a repository under expose-ro=, HOME passed: git reads its
# configuration files (/etc/gitconfig, ~/.gitconfig), is refused, warns "unable to access"
# and stops with "fatal: unknown error occurred while reading the configuration files";
# the deny lines named no way out (found by a user). They now say which configuration it
# is and the two ways: expose-ro= of the file (git then reads it: its user.name is shown),
# or env= lines that make git skip it (git log then runs).
test_users_git_config_deny_lines_say_the_ways_out() {
	once_per_matrix "the deny line's text: the open's denial itself is the file rules' test"
	command -v git >/dev/null || skip "git not installed"
	local sys=""
	mkdir -p "$T/repo" "$T/home"
	printf '[user]\n\tname = Round Thirtyone\n' >"$T/home/.gitconfig"
	(cd "$T/repo" && git init -q . && echo hi >f && git add f &&
		HOME=$T/home git -c user.email=u@example.org commit -qm first) || fail "git natively"
	[ -e /etc/gitconfig ] && sys=1
	cd "$T/repo" || fail "cd"
	printf 'expose-ro=%s\nenv=HOME=%s\n' "$T/repo" "$T/home" >"$T/policy"
	run_sb "$T/policy" git log --format=%s
	expect_rc 128
	program_err "$T/err" >"$T/perr"
	expect_grep "$T/perr" "unable to access '$T/home/.gitconfig': Permission denied"
	expect_line "$T/perr" "fatal: unknown error occurred while reading the configuration files"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) $T/home/.gitconfig \(git's global configuration: git stops when it cannot read it; expose-ro=$T/home/.gitconfig lets it read it, env=GIT_CONFIG_GLOBAL=/dev/null makes git skip it\) pid="
	if [ -n "$sys" ]; then
		expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) /etc/gitconfig \(git's system configuration: git stops when it cannot read it; expose-ro=/etc/gitconfig lets it read it, env=GIT_CONFIG_NOSYSTEM=1 makes git skip it\) pid="
	fi
	# skipped: git log runs
	printf 'env=GIT_CONFIG_GLOBAL=/dev/null\nenv=GIT_CONFIG_NOSYSTEM=1\n' >>"$T/policy"
	run_sb "$T/policy" git log --format=%s
	expect_rc 0
	expect_line "$T/out" "first"
	expect_no_grep "$T/err" "gitconfig"
	# read: git sees the user's configuration
	printf 'expose-ro=%s\nenv=HOME=%s\nexpose-ro=%s/.gitconfig\n' "$T/repo" "$T/home" "$T/home" >"$T/policy"
	[ -z "$sys" ] || echo 'expose-ro=/etc/gitconfig' >>"$T/policy"
	run_sb "$T/policy" git config user.name
	expect_rc 0
	expect_line "$T/out" "Round Thirtyone"
	expect_no_grep "$T/err" "deny"
	# a repository another user owns: safe.directory from the policy (the FAQ's lines)
	chown -R nobody "$T/repo"
	printf 'expose-ro=%s\nenv=GIT_CONFIG_GLOBAL=/dev/null\nenv=GIT_CONFIG_NOSYSTEM=1\n' "$T/repo" >"$T/policy"
	run_sb "$T/policy" git log --format=%s
	expect_rc 128
	expect_grep "$T/err" "^fatal: detected dubious ownership in repository at '$T/repo'"
	printf 'env=GIT_CONFIG_COUNT=1\nenv=GIT_CONFIG_KEY_0=safe.directory\nenv=GIT_CONFIG_VALUE_0=%s\n' "$T/repo" >>"$T/policy"
	run_sb "$T/policy" git log --format=%s
	expect_rc 0
	expect_line "$T/out" "first"
}

# `pip install` into a venv under expose-rw=, offline from Debian's wheels: it installs.
# pip's configuration file, with HOME passed, is read and denied: pip went on without its
# settings (an index, a proxy, a CA bundle), and the deny line named no way out (found by
# a user: a corporate CA in pip.conf unused). The line now says what the file is and the
# two ways out; expose-ro= of it applies its settings (`pip config list` shows them),
# env=PIP_CONFIG_FILE=/dev/null makes pip skip it (no line).
test_users_pip_in_a_venv_config_deny_line_says_the_ways_out() {
	once_per_matrix "pip's own start and the deny line's text: no hook of its own"
	local whl conf="$T/home/.config/pip/pip.conf"
	whl=$(ls /usr/share/python-wheels/setuptools-*.whl 2>/dev/null | head -1)
	[ -n "$whl" ] || skip "no setuptools wheel in /usr/share/python-wheels"
	mkdir -p "$T/proj" "$(dirname "$conf")"
	printf '[global]\ntimeout = 31\n' >"$conf"
	python3 -m venv "$T/proj/.venv" >"$T/venv.log" 2>&1 || fail "venv natively: $(cat "$T/venv.log")"
	cd "$T/proj" || fail "cd"
	printf 'expose-rw=%s\nexpose-ro=/usr/share/python-wheels\nenv=HOME=%s\n' "$T/proj" "$T/home" >"$T/policy"
	run_sb "$T/policy" .venv/bin/python -m pip config list
	expect_rc 0
	expect_no_grep "$T/out" "timeout"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) $conf \(pip's configuration: pip goes on without its settings \(index, proxy, certificates\); expose-ro=$conf lets it read it, env=PIP_CONFIG_FILE=/dev/null makes pip skip its configuration files\) pid="
	run_sb "$T/policy" .venv/bin/python -m pip install --no-index --find-links /usr/share/python-wheels \
		--force-reinstall --no-deps setuptools
	expect_rc 0
	expect_grep "$T/out" "^Successfully installed setuptools-"
	ls "$T"/proj/.venv/lib/python3*/site-packages/setuptools/__init__.py >/dev/null 2>&1 ||
		fail "setuptools not in the venv"
	echo "expose-ro=$conf" >>"$T/policy"
	run_sb "$T/policy" .venv/bin/python -m pip config list
	expect_rc 0
	expect_grep "$T/out" "^global\.timeout='31'$"
	expect_no_grep "$T/err" "deny file open\(read\) $conf"
	printf 'expose-rw=%s\nenv=HOME=%s\nenv=PIP_CONFIG_FILE=/dev/null\n' "$T/proj" "$T/home" >"$T/policy"
	run_sb "$T/policy" .venv/bin/python -m pip config list
	expect_rc 0
	expect_no_grep "$T/out" "timeout"
	expect_no_grep "$T/err" "pip\.conf"
}

# `python3 -m http.server 18031` (no --bind: every address) with the rule a user writes
# first, net=ALLOW|TCP|localhost|18031|IN: the bind to [::] is refused (PermissionError,
# the server does not start), after two UDP connects to [::] and 0.0.0.0 from glibc's
# address sorting; the three lines named no cause and no rule (found by a user). They now
# say what each is; the bind's names the rule for every address, which then serves a file.
test_users_http_server_with_no_host_deny_lines_say_the_rule() {
	once_per_matrix "the deny line's text: the bind's denial itself is net_rules' test"
	users_setup
	local pid i
	printf 'expose-ro=%s\nnet=ALLOW|TCP|localhost|18031|IN\n' "$T/ro" >"$T/policy"
	run_sb "$T/policy" python3 -m http.server 18031 --directory "$T/ro"
	expect_rc 1
	expect_grep "$T/err" "^PermissionError: \[Errno 1\] Operation not permitted"
	expect_grep "$T/err" "^pysb-bpf: deny net bind tcp \[::\]:18031 \(IN\) no net= rule allows it \(a bind to every address of the machine, as a server started with no host makes: net=ALLOW\|TCP\|\*\|18031\|IN allows it; net=ALLOW\|TCP\|localhost\|18031\|IN allows a bind to 127\.0\.0\.1 alone\) pid="
	expect_grep "$T/err" "^pysb-bpf: deny net connect udp (\[::\]|0\.0\.0\.0):18031 \(OUT\) no net= rule allows it \(a UDP connect that sends nothing: glibc's getaddrinfo makes one to each address of a server started with no host, to sort them; denied, it sorts without it\) pid="
	printf 'expose-ro=%s\nnet=ALLOW|TCP|*|18031|IN\n' "$T/ro" >"$T/policy"
	"$PYSB" run --policy "$T/policy" -- python3 -m http.server 18031 --directory "$T/ro" \
		>"$T/out" 2>"$T/err" &
	pid=$!
	python3 -c 'import sys, time, urllib.request
for i in range(150):
    try:
        print(urllib.request.urlopen("http://127.0.0.1:18031/data.txt", timeout=2).read().decode().strip()); break
    except OSError:
        time.sleep(0.2)' >"$T/got"
	kill -TERM "$pid"
	wait "$pid"
	expect_line "$T/got" "public"
	expect_no_grep "$T/err" "deny net bind"
}

# `pysb-bpf --policy FILE run app.py`, typed as git -C or docker --config are: the error
# said "unknown option '--policy' before the command" though run knows it (found by a
# user). It now names the command it belongs after and the order to type; that order runs.
test_users_option_before_the_command_says_where_it_goes() {
	once_per_matrix "command-line parsing, before any sandbox exists"
	users_setup
	printf 'print("ran")\n' >"$T/app.py"
	run_plain "$PYSB" --policy "$T/policy" run "$T/app.py"
	expect_rc 125
	expect_line "$T/err" "pysb-bpf: error: option '--policy' before the command run: options go after it (pysb-bpf run --policy ...); see 'pysb-bpf run --help'"
	[ ! -s "$T/out" ] || fail "the program ran: $(cat "$T/out")"
	run_plain "$PYSB" run --policy "$T/policy" "$T/app.py"
	expect_rc 0
	expect_line "$T/out" "ran"
}

# `pysb-bpf run --learn app.py` where app.py reads a SQLite database: sqlite3 opens it for
# reading and writing, and learning wrote expose-rw= of its directory though the program
# only read it (found by a user, round 32). It now learns expose-ro=, with a comment that
# says why; the program reads under it. A program that inserts learns expose-rw= (its
# journal, its lock), superseding that line, and writes.
test_users_learn_sqlite_database_it_only_reads_learns_read_only() {
	once_per_matrix "learning's rules: user space"
	local db="$T/data/app.db"
	mkdir -p "$T/data" "$T/proj"
	python3 -c "import sqlite3; c = sqlite3.connect('$db'); c.execute('create table t(x)'); c.execute('insert into t values (1)'); c.commit()" ||
		fail "sqlite3 natively"
	write_file "$T/proj/app.py" <<EOF2
import sqlite3, sys
c = sqlite3.connect("$db")
if sys.argv[1:]:
    c.execute("insert into t values (2)")
    c.commit()
print("rows", c.execute("select x from t").fetchall())
EOF2
	cd "$T/proj" || fail "cd"
	"$PYSB" run --learn app.py >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_line "$T/out" "rows [(1,)]"
	expect_grep "$T/proj/.py-sandboxes" "^expose-ro=[^ ]*/data  # sqlite3 opened app\.db for reading and writing, and only read it; expose-rw= if it must write$"
	expect_no_grep "$T/proj/.py-sandboxes" "^expose-rw="
	"$PYSB" run app.py >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_line "$T/out" "rows [(1,)]"
	expect_grep "$T/err" "deny file open\(read,write\) $db \(read-only: "
	"$PYSB" run --learn app.py insert >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_grep "$T/proj/.py-sandboxes" "^expose-rw=[^ ]*/data$"
	expect_grep "$T/proj/.py-sandboxes" "^# expose-ro=[^ ]*/data  # sqlite3 .*# superseded by learning"
	"$PYSB" run app.py insert >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_line "$T/out" "rows [(1,), (2,), (2,)]"
	expect_no_grep "$T/err" "deny file [^ ]+ $T/data"
}

# A #! script without its execute bit, and one saved with Windows line ends (CRLF), as
# users type them: `pysb-bpf run ./tool`. The kernel refuses both; pysb-bpf said "run it
# with its interpreter" and "dos2unix", naming no command (found by a user, round 32). Each
# now names the command from the script's #! line (env NAME: NAME), and that command runs
# the script confined; a shell script with CRLF is offered dos2unix alone.
test_users_script_not_executable_or_crlf_names_the_command() {
	once_per_matrix "program resolution, before any sandbox exists; the command it names then runs"
	users_setup
	printf '#!/usr/bin/python3\n%s\n' "$USERS_PROBE" >"$T/ro/tool"
	printf '#!/usr/bin/env python3\n%s\n' "$USERS_PROBE" >"$T/ro/tool2"
	printf '#!/usr/bin/python3\n%s\n' "$USERS_PROBE" | sed 's/$/\r/' >"$T/ro/crlf"
	printf '#!/bin/sh\r\necho hi\r\n' >"$T/ro/crlf.sh"
	chmod 644 "$T/ro/tool" "$T/ro/tool2"
	chmod 755 "$T/ro/crlf" "$T/ro/crlf.sh"
	run_sb "$T/policy" "$T/ro/tool"
	expect_rc 126
	expect_line "$T/err" "pysb-bpf: error: cannot execute $T/ro/tool: it has no execute bit, and the kernel runs a #! script only when it may execute it; chmod +x $T/ro/tool, or name its interpreter: pysb-bpf run -- /usr/bin/python3 $T/ro/tool"
	run_sb "$T/policy" "$T/ro/tool2"
	expect_rc 126
	expect_grep "$T/err" "or name its interpreter: pysb-bpf run -- python3 $T/ro/tool2$"
	run_sb "$T/policy" python3 "$T/ro/tool2"
	users_expect_pair
	run_sb "$T/policy" "$T/ro/crlf"
	expect_rc 127
	expect_line "$T/err" "pysb-bpf: error: $T/ro/crlf: its #! line ends with a carriage return (\\r: the file has Windows line ends, CRLF), so the kernel looks for an interpreter whose name ends with it; convert the file (dos2unix $T/ro/crlf), or name its interpreter, which reads Windows line ends: pysb-bpf run -- /usr/bin/python3 $T/ro/crlf"
	run_sb "$T/policy" /usr/bin/python3 "$T/ro/crlf"
	users_expect_pair
	run_sb "$T/policy" "$T/ro/crlf.sh"
	expect_rc 127
	expect_grep "$T/err" "convert the file \(dos2unix $T/ro/crlf\.sh\)$"
}

# What pip's `install` runs for its User-Agent under a policy with no exec: lsb_release
# and uname (its vendored distro module), two deny lines at every run that said only how
# to allow an exec, not whether anything was lost (found by a user, round 32). Each now
# says what goes on without it; the program gets its answer all the same (the
# distribution from /etc/os-release). ldconfig, run by ctypes.util.find_library(), says
# find_library() returns None, and that a library's file name loads it: both hold.
test_users_exec_of_a_fact_says_what_goes_on_without_it() {
	once_per_matrix "the deny line's text: the exec's denial itself is the exec tests'"
	python3 -c "from pip._vendor import distro" 2>/dev/null || skip "no pip for python3"
	[ -x /usr/bin/lsb_release ] || skip "no lsb_release"
	users_setup
	local name
	name=$(python3 -c "from pip._vendor import distro; print(distro.name())")
	probe_py "$T/lib/facts.py" "from pip._vendor import distro" "import ctypes, ctypes.util, platform" \
		"print('distro', distro.name(), distro.version(), flush=True)" \
		"print('processor', repr(platform.processor()), flush=True)" \
		"print('find_library', ctypes.util.find_library('c'), flush=True)" \
		"print('cdll', ctypes.CDLL('libc.so.6').getpid() == os.getpid(), flush=True)"
	# find_library() makes a temporary file before it runs gcc
	mkdir -p "$T/tmp"
	printf 'expose-rw=%s\nenv=TMPDIR=%s\n' "$T/tmp" "$T/tmp" >>"$T/policy"
	run_sb "$T/policy" python3 "$T/lib/facts.py"
	expect_rc 0
	expect_grep "$T/out" "^distro $name "
	expect_line "$T/out" "find_library None"
	expect_line "$T/out" "cdll True"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) /usr/bin/lsb_release \(the kernel's open of a program to run: .*\) \(lsb_release names the Linux distribution: the distro module \(pip's, for its User-Agent\) runs it and goes on with /etc/os-release; nothing else is lost\) pid="
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) /usr/bin/uname \(the kernel's open of a program to run: .*\) \(uname names the kernel and processor: the distro module \(pip's\) and platform\.processor\(\) run it and go on without it \(os\.uname\(\) gives the same\); nothing else is lost\) pid="
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) [^ ]*/ldconfig \(the kernel's open of a program to run: .*\) \(ldconfig lists the shared libraries: ctypes\.util\.find_library\(\) runs it \(then gcc, ld\) and returns None without it; ctypes\.CDLL\(\) of the library's file name \(libNAME\.so\.N\) needs no program\) pid="
}

# A program given a proxy by the policy (env=HTTP_PROXY=...), with a net= rule for the host
# it asks for: urllib connects to the proxy instead, and the deny line named the proxy's
# address with no rule (found by a user, round 32). It now says it is the proxy of
# HTTP_PROXY, the rule, and that the proxy then decides; with that rule the request goes
# through the proxy (a stand-in that answers with the URL it was asked for).
test_users_connect_to_the_policys_proxy_says_so() {
	once_per_matrix "the deny line's text: the connect's denial itself is net_rules' test"
	users_setup
	local pid
	write_file "$T/proxy.py" <<'PY'
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("via-proxy " + self.path).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
http.server.HTTPServer(("127.0.0.1", 18032), H).serve_forever()
PY
	python3 "$T/proxy.py" 2>/dev/null &
	pid=$!
	write_file "$T/lib/get.py" <<'PY'
import urllib.error, urllib.request
try:
    print(urllib.request.urlopen("http://10.9.8.7/x", timeout=10).read().decode())
except urllib.error.URLError as e:
    print("get", e.reason)
PY
	printf 'expose-ro=%s\nenv=HTTP_PROXY=http://me:pw@127.0.0.1:18032\nnet=ALLOW|TCP|10.9.8.7|80|OUT\n' "$T/lib" >"$T/policy"
	run_sb "$T/policy" python3 "$T/lib/get.py"
	expect_rc 0
	expect_line "$T/out" "get [Errno 1] Operation not permitted"
	expect_grep "$T/err" "^pysb-bpf: deny net connect tcp 127\.0\.0\.1:18032 \(OUT\) no net= rule allows it \(the proxy of HTTP_PROXY, which the policy passes: a program that uses it connects there, not to the hosts it asks for, which net= rules on them do not allow; net=ALLOW\|TCP\|127\.0\.0\.1\|18032\|OUT allows it, and the proxy then decides which hosts the program reaches; without that env= line the program connects to them itself, as net= judges\) pid="
	expect_no_grep "$T/err" "pw@"
	echo 'net=ALLOW|TCP|127.0.0.1|18032|OUT' >>"$T/policy"
	run_sb "$T/policy" python3 "$T/lib/get.py"
	kill "$pid"
	wait "$pid" 2>/dev/null
	expect_rc 0
	expect_line "$T/out" "via-proxy http://10.9.8.7/x"
	expect_no_grep "$T/err" "deny net"
}

# A Python started by the program, under a policy with no exec: `python3 -m venv .venv`
# failed with "Permission denied: '.venv/bin/python3'" (ensurepip's run of the venv's
# python), a venv left without pip, and multiprocessing's spawn (forkserver, the default
# from Python 3.14) failed the same way; the deny line said only how to allow every exec
# (found by a user, round 32). It now says who starts a Python and the way without one
# (--without-pip); python-api=ALLOW:process-exec lets the pool start.
test_users_python_started_by_the_program_says_who_starts_one() {
	once_per_matrix "the deny line's text: the exec's denial itself is the exec tests'"
	local hint="\(a Python started by the program, as python -m venv does to install pip \(--without-pip makes the venv without\), multiprocessing's spawn and forkserver for their workers, pip to build a package\) pid="
	local pool='import multiprocessing as m
if __name__ == "__main__":
    print("pool", m.get_context("spawn").Pool(1).apply(abs, (-3,)))'
	mkdir -p "$T/w"
	printf '%s\n' "$pool" >"$T/w/pool.py"
	printf 'expose-rw=%s\nexpose-rw=/dev/shm\n' "$T/w" >"$T/policy"
	cd "$T/w" || fail "cd"
	run_sb "$T/policy" python3 -m venv .venv
	expect_rc 1
	expect_grep "$T/err" "Permission denied: '$T/w/\.venv/bin/python3'"
	expect_grep "$T/err" "^pysb-bpf: deny exec exec\(exec\) [^ ]*/python3[.0-9]* \(process-exec not allowed by the policy; python-api=ALLOW:process-exec allows it\) $hint"
	rm -rf .venv
	run_sb "$T/policy" python3 -m venv --without-pip .venv
	expect_rc 0
	[ -x .venv/bin/python ] || fail "no venv made with --without-pip: $(cat "$T/err")"
	expect_no_grep "$T/err" "deny exec"
	run_sb "$T/policy" python3 pool.py
	[ "$RC" -ne 0 ] || fail "the pool started with no exec allowed: $(cat "$T/out")"
	expect_grep "$T/err" "^pysb-bpf: deny exec exec\(exec\) [^ ]*/python3[.0-9]* \(process-exec .*\) $hint"
	echo 'python-api=ALLOW:process-exec' >>"$T/policy"
	run_sb "$T/policy" python3 pool.py
	expect_rc 0
	expect_line "$T/out" "pool 3"
}

# `python3 -m pytest` in a project under expose-ro=.: pytest's cache (.pytest_cache) is
# refused, two deny lines and two PytestCacheWarning naming no way out, and `run --learn`
# made the whole project writable, expose-rw=. (found by a user, round 32), what the
# bytecode cache's rule never does. The line now says what the cache is and the way out;
# learning writes no rule for it, env=PYTEST_ADDOPTS=-p no:cacheprovider instead, and the
# next run is quiet with the project still read-only.
test_users_pytest_cache_leaves_the_project_read_only() {
	once_per_matrix "learning's rules and the deny line's text: user space"
	python3 -c "import pytest" 2>/dev/null || skip "no pytest for python3"
	mkdir -p "$T/proj/tests" "$T/tmp"
	printf 'def test_a():\n    assert 1\n' >"$T/proj/tests/test_a.py"
	printf 'expose-ro=.\nexpose-rw=%s\nenv=TMPDIR=%s\nenv=PYTHONDONTWRITEBYTECODE=1\n' \
		"$T/tmp" "$T/tmp" >"$T/proj/.py-sandboxes"
	cd "$T/proj" || fail "cd"
	"$PYSB" run -- python3 -m pytest -q >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_grep "$T/out" "PytestCacheWarning"
	expect_grep "$T/err" "^pysb-bpf: deny file mkdir\(write\) $T/proj/\.pytest_cache \(pytest's cache: pytest goes on without it, warning PytestCacheWarning; --lf, --ff and --sw start afresh\. env=PYTEST_ADDOPTS=-p no:cacheprovider turns it off; do not make the project writable for it\) pid="
	"$PYSB" run --learn -- python3 -m pytest -q >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_grep "$T/err" "write\(s\) of pytest's cache \(e\.g\. $T/proj/\.pytest_cache\) made no rule"
	expect_no_grep "$T/proj/.py-sandboxes" "^expose-rw=\."
	expect_line "$T/proj/.py-sandboxes" "env=PYTEST_ADDOPTS=-p no:cacheprovider"
	rm -rf "$T/proj/.pytest_cache"
	"$PYSB" run -- python3 -m pytest -q >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_grep "$T/out" "^1 passed"
	expect_no_grep "$T/out" "PytestCacheWarning"
	expect_no_grep "$T/err" "pytest_cache"
	[ ! -e "$T/proj/.pytest_cache" ] || fail "pytest wrote its cache"
}

# requests (pip's, the same library) with HOME passed: each request reads ~/.netrc for the
# host's login, is refused, and goes on without it; the deny line named no way out (found
# by a user, round 32). It now says what the file holds (passwords) and the two ways:
# expose-ro= of it (the login is then sent: a stand-in server echoes it), or
# env=NETRC=/dev/null (no line, no login).
test_users_netrc_deny_line_says_the_ways_out() {
	once_per_matrix "the deny line's text: the open's denial itself is the file rules' test"
	python3 -c "from pip._vendor import requests" 2>/dev/null || skip "no pip for python3"
	users_setup
	local pid
	mkdir -p "$T/home"
	printf 'machine 127.0.0.1 login round password thirtytwo\n' >"$T/home/.netrc"
	chmod 600 "$T/home/.netrc"
	write_file "$T/echo.py" <<'PY'
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("auth " + str(self.headers.get("Authorization"))).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
http.server.HTTPServer(("127.0.0.1", 18033), H).serve_forever()
PY
	python3 "$T/echo.py" 2>/dev/null &
	pid=$!
	write_file "$T/lib/req.py" <<'PY'
import time
from pip._vendor import requests
for i in range(100):
    try:
        print(requests.get("http://127.0.0.1:18033/", timeout=5).text)
        break
    except requests.ConnectionError:
        time.sleep(0.1)
PY
	printf 'expose-ro=%s\nenv=HOME=%s\nnet=ALLOW|TCP|127.0.0.1|18033|OUT\n' "$T/lib" "$T/home" >"$T/policy"
	run_sb "$T/policy" python3 "$T/lib/req.py"
	expect_rc 0
	expect_line "$T/out" "auth None"
	expect_grep "$T/err" "^pysb-bpf: deny file open\(read\) $T/home/\.netrc \(your logins for hosts, passwords included: requests and pip read it for a host's login, and go on without it; expose-ro=$T/home/\.netrc lets it read it, env=NETRC=/dev/null makes requests and pip skip it\) pid="
	echo "expose-ro=$T/home/.netrc" >>"$T/policy"
	run_sb "$T/policy" python3 "$T/lib/req.py"
	expect_rc 0
	expect_line "$T/out" "auth Basic $(printf round:thirtytwo | base64)"
	expect_no_grep "$T/err" "netrc"
	printf 'expose-ro=%s\nenv=HOME=%s\nenv=NETRC=/dev/null\nnet=ALLOW|TCP|127.0.0.1|18033|OUT\n' "$T/lib" "$T/home" >"$T/policy"
	run_sb "$T/policy" python3 "$T/lib/req.py"
	kill "$pid"
	wait "$pid" 2>/dev/null
	expect_rc 0
	expect_line "$T/out" "auth None"
	expect_no_grep "$T/err" "netrc"
}

# A proxy in the user's environment (HTTPS_PROXY, as a corporate network sets it) and a
# policy whose net= rule names the host the program reaches: the program starts with only
# what env= passes, connects directly, and on such a network hangs or is refused, with no
# deny line and nothing said (found by a user, round 32). run and check now warn that the
# proxy is not passed and name the line; with it, the program gets the proxy (and its
# connect to it, the rule: test_users_connect_to_the_policys_proxy_says_so).
test_users_proxy_not_passed_says_so() {
	once_per_matrix "a warning of the supervisor's, before the start"
	users_setup
	local prog='import os; print("proxy", os.environ.get("HTTPS_PROXY"))'
	local warn="pysb-bpf: warning: $T/policy:2: your environment's HTTPS_PROXY names a proxy, but no env= line passes it: the program connects to the hosts of net= rules directly, which a network that needs the proxy refuses; env=HTTPS_PROXY=\${HTTPS_PROXY} passes it (net= must then allow the proxy itself: its deny line names the rule)"
	printf 'expose-ro=%s\nnet=ALLOW|TCP|10.9.8.7|443|OUT\n' "$T/ro" >"$T/policy"
	HTTPS_PROXY=http://10.0.0.5:3128 run_sb "$T/policy" python3 -c "$prog"
	expect_rc 0
	expect_line "$T/out" "proxy None"
	expect_line "$T/err" "$warn"
	HTTPS_PROXY=http://10.0.0.5:3128 "$PYSB" check --policy "$T/policy" >"$T/out" 2>"$T/err"
	RC=$?
	expect_rc 0
	expect_grep "$T/out" "your environment's HTTPS_PROXY names a proxy, but no env= line passes it"
	echo 'env=HTTPS_PROXY=${HTTPS_PROXY}' >>"$T/policy"
	HTTPS_PROXY=http://10.0.0.5:3128 run_sb "$T/policy" python3 -c "$prog"
	expect_rc 0
	expect_line "$T/out" "proxy http://10.0.0.5:3128"
	expect_no_grep "$T/err" "warning"
	# no net= rule out: nothing to say
	printf 'expose-ro=%s\n' "$T/ro" >"$T/policy"
	HTTPS_PROXY=http://10.0.0.5:3128 run_sb "$T/policy" python3 -c "$prog"
	expect_rc 0
	expect_no_grep "$T/err" "warning"
}
