# Helpers for the end-to-end tests. Sourced by tests/e2e/run; every test runs in a
# subshell, in a fresh directory $T under /tmp, with `set -e` off so it can check statuses.

PYSB="${PYSB:-$REPO/build/pysb-bpf}"

# Under TCG every process costs about a tenth of a second, and the suite starts thousands:
# bash's loadable builtins (Debian's bash-builtins, installed by scripts/deps.sh) stand in
# for the simplest commands the tests run between sandboxed programs. Without them the
# commands of the same name run, as before.
for _b in mkdir rm rmdir seq sleep ln; do
	[ -f "/usr/lib/bash/$_b" ] && enable -f "/usr/lib/bash/$_b" "$_b" 2>/dev/null
done
unset _b

# write_file FILE <<'EOF' ...: the here-document into FILE (bash alone: cat would be a
# process).
write_file() {
	local s
	IFS= read -r -d '' s
	printf '%s' "$s" >"$1"
}

fail() {
	echo "    assertion failed: $*" >&2
	exit 1
}

# skip REASON: the test cannot make its case here (e.g. the file system never handed out
# the inode number it waits for): tests/e2e/run reports SKIP, neither a pass nor a failure.
skip() {
	echo "    skipped: $*" >&2
	exit 77
}

# once_per_matrix REASON: the test costs tens of seconds under TCG and what it checks does
# not depend on the kernel (REASON says why): scripts/e2e-matrix runs it on its first
# kernel only, and it skips on the kernels that repeat the suite (PYSB_E2E_REPEAT_KERNEL).
# The suite run on one kernel (make e2e, scripts/vm-run -- tests/e2e/run) runs it.
once_per_matrix() {
	[ -z "${PYSB_E2E_REPEAT_KERNEL:-}" ] || skip "run on the matrix's first kernel only: $*"
}

# attach_start HOLDER POLICY ERR: attaches the running process HOLDER (a child of the
# test's shell) with POLICY, pysb-bpf's stderr in ERR, and returns once HOLDER is in the
# sandbox; attach's pid in ATTACH_PID. attach_end HOLDER: waits for HOLDER, then for
# attach, which ends with it. attach_go HOLDER POLICY GO ERR: both, touching GO between.
attach_start() {
	local holder=$1 policy=$2 err=$3 i
	"$PYSB" attach --pid "$holder" --policy "$policy" >/dev/null 2>"$err" &
	ATTACH_PID=$!
	for ((i = 0; i < 300; i++)); do
		grep -q pysb-bpf "/proc/$holder/cgroup" && break
		sleep 0.1
	done
	grep -q pysb-bpf "/proc/$holder/cgroup" || fail "not attached: $(cat "$err")"
}

attach_end() {
	local i
	wait "$1"
	for ((i = 0; i < 300; i++)); do
		kill -0 "$ATTACH_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill "$ATTACH_PID" 2>/dev/null
	wait "$ATTACH_PID"
}

attach_go() {
	attach_start "$1" "$2" "$4"
	touch "$3"
	attach_end "$1"
}

# wait_file FILE [WHAT]: until FILE exists (30 s at most), else the test fails saying WHAT.
wait_file() {
	local i
	for ((i = 0; i < 600; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	fail "${2:-$1 never appeared}"
}

# write_mem_holder FILE: a Python program, FILE VICTIM READY, that opens VICTIM's
# /proc/PID/mem for reading and writing, prints "read ELF" read from its first mapping,
# creates READY and sleeps, holding it.
write_mem_holder() {
	write_file "$1" <<'PY'
import os, sys, time
victim, ready = int(sys.argv[1]), sys.argv[2]
fd = os.open("/proc/%d/mem" % victim, os.O_RDWR)
start = int(open("/proc/%d/maps" % victim).readline().split("-")[0], 16)
print("read", os.pread(fd, 4, start)[1:].decode(), flush=True)
open(ready, "w").close()
time.sleep(1000)
PY
}

# vm_module NAME...: loads the guest kernel's module NAME, with its dependencies, from
# the modules the VM ships for tests to load on demand (scripts/vm-kernel
# DEMAND_MODULES); skips the test outside the VM.
vm_module() {
	local n
	for n in "$@"; do
		vm_module_params "$n"
	done
}

# vm_device_nodes "MODULE..." SKIP-MESSAGE TEST NODE [TEST NODE...]: the device nodes the
# test VM's on-demand MODULEs make, each of its type (TEST: -b, -c), waited for up to 10 s
# after loading them when one is missing; skips with SKIP-MESSAGE where one still is.
vm_device_nodes() {
	local modules=$1 why=$2 i
	shift 2
	_nodes_there() {
		local t
		for ((t = 1; t < $#; t += 2)); do
			test "${!t}" "${@:t+1:1}" || return 1
		done
	}
	if ! _nodes_there "$@"; then
		vm_module $modules
		for ((i = 0; i < 100; i++)); do
			_nodes_there "$@" && break
			sleep 0.1
		done
	fi
	_nodes_there "$@" || skip "$why"
}

# vm_module_params MODULE [PARAM...]: vm_module for one module, MODULE itself loaded with
# the PARAMs (its dependencies without); a module loaded before keeps its own.
vm_module_params() {
	local dir=/run/pysb-vm-modules n=$1 m
	shift
	[ -d "$dir" ] || skip "no on-demand kernel modules here (the test VM ships them)"
	[ -f "$dir/$n.order" ] || fail "module $n is not among scripts/vm-kernel's DEMAND_MODULES"
	while read -r m; do
		[ -d "/sys/module/$m" ] && continue
		if [ "$m" = "$n" ]; then
			insmod "$dir/$m.ko.xz" "$@" || fail "cannot load module $m"
		else
			insmod "$dir/$m.ko.xz" || fail "cannot load module $m"
		fi
	done <"$dir/$n.order"
}

# softdog_load: the software watchdog, loaded here with soft_noboot=1 (a watchdog left
# running never reboots the VM) and removed at the test's end; its device's name
# (watchdogN) in SOFTDOG. Skips outside the VM, and where softdog was loaded before (its
# soft_noboot is not in sysfs: only one loaded here is known not to reboot).
softdog_load() {
	local dir=/run/pysb-vm-modules n
	[ -f "$dir/softdog.order" ] || skip "no on-demand kernel modules here (the test VM ships them)"
	[ ! -d /sys/module/softdog ] || skip "softdog loaded before, perhaps without soft_noboot=1"
	vm_module_params softdog soft_noboot=1
	trap 'rmmod softdog 2>/dev/null' EXIT
	SOFTDOG=
	for n in /sys/class/watchdog/watchdog*; do
		grep -q "Software Watchdog" "$n/identity" 2>/dev/null && SOFTDOG=${n##*/}
	done
	[ -n "$SOFTDOG" ] || fail "no watchdog of softdog's"
	[ -c "/dev/$SOFTDOG" ] || fail "no /dev/$SOFTDOG for softdog"
}

# run_sb POLICY_FILE PROGRAM [ARGS...]: runs under pysb-bpf, output in $T/out and $T/err,
# status in $RC.
run_sb() {
	local policy=$1
	shift
	"$PYSB" run --policy "$policy" -- "$@" >"$T/out" 2>"$T/err"
	RC=$?
	return 0
}

# run_plain PROGRAM [ARGS...]: the same program outside any sandbox, same capture.
run_plain() {
	"$@" >"$T/out" 2>"$T/err"
	RC=$?
	return 0
}

expect_rc() {
	[ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1 (stderr: $(head -c 2000 "$T/err"))"
}

# The assertions read small files with bash alone: a grep costs about 0.2 s under TCG and
# the suite makes hundreds of them. Files of more than 2,000 lines go to grep.
# _small FILE: FILE's lines into _L; status 1 if FILE is unreadable or too long for that.
_small() {
	local more
	_L=()
	[ -r "$1" ] && [ -f "$1" ] || return 1
	{
		mapfile -t -n 2000 _L
		IFS= read -r more || [ -n "$more" ]
	} <"$1" 2>/dev/null && return 1
	return 0
}

# _has FILE MODE PATTERN: does a line of FILE equal PATTERN (MODE xF) or match it as an
# ERE (MODE E)? The modes are grep's flags, for the files grep reads. Bytes compare as
# bytes (LC_ALL=C).
_has() {
	local LC_ALL=C l
	if ! _small "$1"; then
		grep -q"$2" -- "$3" "$1"
		return
	fi
	for l in "${_L[@]}"; do
		if [ "$2" = xF ]; then
			[[ $l == "$3" ]] && return 0
		else
			[[ $l =~ $3 ]] && return 0
		fi
	done
	return 1
}

# wait_line FILE ERE TRIES SECONDS: waits until a line of FILE matches ERE, looking TRIES
# times SECONDS apart (a program running in the background); status 1 if none came. The
# caller's assertions say what was missing.
wait_line() {
	local i
	for ((i = 0; i < $3; i++)); do
		_has "$1" E "$2" && return 0
		sleep "$4"
	done
	return 1
}

# has_bytes FILE SEQ...: FILE holds each byte sequence SEQ (Python escapes: \r, \n, \x1b),
# across lines: for what a terminal shows, where CR and LF are the point.
has_bytes() {
	python3 -c 'import sys
d = open(sys.argv[1], "rb").read()
sys.exit(not all(s.encode().decode("unicode_escape").encode("latin-1") in d for s in sys.argv[2:]))' "$@"
}

# count_lines FILE ERE: how many lines of FILE match ERE (0 if FILE is missing).
count_lines() {
	local LC_ALL=C l c=0
	if ! _small "$1"; then
		c=$(grep -cE -- "$2" "$1" 2>/dev/null)
		echo "${c:-0}"
		return
	fi
	for l in "${_L[@]}"; do
		[[ $l =~ $2 ]] && c=$((c + 1))
	done
	echo "$c"
}

# expect_line FILE LINE: FILE has exactly this line.
expect_line() {
	_has "$1" xF "$2" || fail "no line '$2' in $(basename "$1"): $(head -c 2000 "$1")"
}

expect_grep() {
	_has "$1" E "$2" || fail "no match for /$2/ in $(basename "$1"): $(head -c 2000 "$1")"
}

# program_err FILE: FILE's text without the supervisor's "pysb-bpf: " lines. The
# program and the supervisor share one stderr; a C program's message is several
# writes (ls: "ls: ", the text, ": Permission denied"), so a denial line can land
# inside it. Each supervisor line is one write ending in a newline: removing it
# gives back the program's own lines.
program_err() {
	perl -0pe 's/pysb-bpf: [^\n]*\n//g' "$1"
}

expect_no_grep() {
	! _has "$1" E "$2" || fail "unexpected match for /$2/ in $(basename "$1"): $(grep -E -- "$2" "$1" | head -5)"
}

# probe_py FILE LINES...: writes a Python program that imports probe_lib (write_probe_lib).
probe_py() {
	local f=$1
	shift
	{
		echo "import sys; sys.path.insert(0, '$T/lib')"
		echo "from probe_lib import *"
		printf '%s\n' "$@"
	} >"$f"
}

# The Python helper every test program imports (from $T/lib, which policies expose): attempt(label, fn) prints
# "label ok" / "label EACCES" / "label EPERM" / "label ERR <errno>".
write_probe_lib() {
	mkdir -p "$T/lib"
	write_file "$T/lib/probe_lib.py" <<'PY'
import errno, os, socket, sys

def attempt(label, fn):
    try:
        fn()
        print(label, "ok", flush=True)
    except PermissionError as e:
        print(label, errno.errorcode.get(e.errno, str(e.errno)), flush=True)
    except socket.gaierror:
        print(label, "GAIERROR", flush=True)
    except OSError as e:
        print(label, "ERR", errno.errorcode.get(e.errno, str(e.errno)), flush=True)

def read(path):
    with open(path) as f:
        return f.read()

def write(path, data="x"):
    with open(path, "w") as f:
        f.write(data)
PY
}

# owner_count ipc|key|dedup ID: the count owner_records (bpf/maps.bpf.h) keeps of sandbox
# ID's records in ipc_owner, key_owner or event_dedup (include/pysb_abi.h,
# PYSB_OWNER_IPC/_KEY/_DEDUP: tables of PYSB_MAX_SANDBOXES, 1024, counts).
owner_count() {
	local base
	case $1 in ipc) base=0 ;; key) base=1024 ;; dedup) base=2048 ;; *) fail "owner_count $1" ;; esac
	bpftool map lookup pinned /sys/fs/bpf/pysb-bpf/*/map-owner_records \
		key $(python3 -c 'import sys; print(" ".join(str(b) for b in int(sys.argv[1]).to_bytes(4, "little")))' $((base + $2))) -j |
		python3 -c 'import json, sys; v = json.load(sys.stdin)["value"]
print(int.from_bytes(bytes(int(b, 16) for b in v), "little") if isinstance(v, list) else v)'
}
