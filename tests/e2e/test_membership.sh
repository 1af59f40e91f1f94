# Sandbox membership through the per-task cache of current_sandbox() (issue 17): a process
# that cached "not sandboxed" (or an ancestor's sandbox) is judged by its new sandbox at
# its very next syscall once its cgroup is bound, once it is moved into a confined cgroup,
# and by the outer sandbox once the nearer one is unbound. Uses the daemon helpers of
# test_daemon.sh (daemon_start, daemon_stop, wait_for, binding).

MBT=/sys/fs/cgroup/pysb-e2e-mb

# mb_prober NAME CGROUP: a process (bash builtins only, no exec) that joins CGROUP, then on
# each line "N" of $T/NAME.fifo reads $T/a/f and $T/b/f and logs "N A ok|denied B
# ok|denied" to $T/NAME.log. Its pid in MB_PID_<NAME>. Returns once the prober says it has
# joined and holds its fifo and log: a cgroup migration waits for an RCU grace period,
# which under TCG on a loaded host once took longer than a round's 20 s.
mb_prober() {
	local name=$1 cg=$2
	mkdir -p "$cg" "$T/a" "$T/b" "$T/svc"
	echo a >"$T/a/f"
	echo b >"$T/b/f"
	mkfifo "$T/svc/$name.fifo"
	: >"$T/svc/$name.log"
	write_file "$T/prober.sh" <<'SH'
trap 'echo "exit status $?" >&2' EXIT
echo $$ >"$1/cgroup.procs" || exit 1
exec 9<>"$2/svc/$3.fifo"
exec 8>>"$2/svc/$3.log"
echo ready >&8
while read -r n <&9; do
	if read -r x <"$2/a/f"; then a=ok; else a=denied; fi
	if read -r x <"$2/b/f"; then b=ok; else b=denied; fi
	echo "$n A $a B $b" >&8
done 2>/dev/null
SH
	bash "$T/prober.sh" "$cg" "$T" "$name" 2>"$T/svc/$name.err" &
	printf -v "MB_PID_$name" '%s' $!
	MB_N=0
	mb_ready "$name" $!
}

# mb_ready NAME PID: until the prober's log says "ready" (two minutes at most); if it does
# not, what the prober is doing (or how it ended) goes in the failure.
mb_ready() {
	local i
	for i in $(seq 1200); do
		_has "$T/svc/$1.log" xF ready && return 0
		[ "$(mb_letter "$2")" = Z ] && break
		sleep 0.1
	done
	fail "prober $1 (pid $2) never got ready: $(mb_state "$1" "$2")"
}

mb_letter() { # PID: its state letter from /proc/PID/stat (Z once it ended), in bash alone
	local s=') Z'
	[ -r "/proc/$1/stat" ] && s=$(<"/proc/$1/stat")
	s=${s##*) }
	echo "${s%% *}"
}

mb_state() { # NAME PID: where the prober sleeps in the kernel and its cgroup, or how it ended
	if [ "$(mb_letter "$2")" != Z ]; then
		printf 'state %s, wchan %s, cgroup %s, kernel stack: %s' "$(mb_letter "$2")" \
			"$(cat "/proc/$2/wchan" 2>/dev/null)" "$(cat "/proc/$2/cgroup" 2>/dev/null)" \
			"$(head -6 "/proc/$2/stack" 2>/dev/null | tr '\n' ' ')"
	else
		printf 'it ended: %s' "$(tr '\n' ' ' <"$T/svc/$1.err")"
	fi
}

# mb_step NAME EXPECTED: one round of the prober, right now; its line must be
# "N EXPECTED" (e.g. "A ok B denied").
mb_step() {
	local name=$1 i pid
	MB_N=$((MB_N + 1))
	pid=MB_PID_$name
	kill -0 "${!pid}" 2>/dev/null ||
		fail "prober $name (pid ${!pid}) is gone: $(cat "$T/svc/$name.log")"
	# never block on a fifo nobody reads
	timeout 20 bash -c 'echo "$1" >"$2"' _ "$MB_N" "$T/svc/$name.fifo" ||
		fail "prober $name does not read its fifo (round $MB_N): $(mb_state "$name" "${!pid}")"
	for i in $(seq 300); do
		_has "$T/svc/$name.log" E "^$MB_N " && break
		sleep 0.1
	done
	expect_line "$T/svc/$name.log" "$MB_N $2"
}

# mb_warm NAME EXPECTED: several rounds, so the prober's cache holds the answer.
mb_warm() {
	local i
	for i in 1 2 3; do
		mb_step "$1" "$2"
	done
}

mb_cleanup() {
	trap - EXIT
	daemon_stop
	[ -n "${MB_ATTACH:-}" ] && kill "$MB_ATTACH" 2>/dev/null
	kill -9 $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	mkdir -p "$T/empty"
	"$PYSB" daemon --config "$T/empty" --once >/dev/null 2>&1
	rmdir "$MBT"/*/*/ "$MBT"/*/ "$MBT" 2>/dev/null
	return 0
}

mb_policy() { # FILE READABLE-DIR: that directory read-only, the probers' logs read-write
	printf 'expose-ro=%s\nexpose-rw=%s\n' "$2" "$T/svc" >"$1"
}

# (1) A bind by the daemon, of the process's own cgroup and of an ancestor of another's.
test_membership_bind_denies_at_next_syscall() {
	trap mb_cleanup EXIT
	mkdir -p "$T/conf"
	mb_policy "$T/conf/p.py-sandboxes" "$T/a"
	mb_prober own "$MBT/bind"
	mb_prober child "$MBT/bind/sub"
	# unconfined, and cached as such: both files read
	mb_warm own "A ok B ok"
	mb_warm child "A ok B ok"
	binding p '{"policy": "p.py-sandboxes", "cgroup": "pysb-e2e-mb/bind"}'
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "p: confined $MBT/bind "
	# the first syscalls after the daemon says so
	mb_step own "A ok B denied"
	mb_step child "A ok B denied"
	mb_cleanup
}

# (2) Moved from an unconfined cgroup into a confined one by a write to cgroup.procs from
# outside, and back; then the same with `pysb-bpf attach`.
test_membership_move_into_sandbox_denies_at_next_syscall() {
	trap mb_cleanup EXIT
	mkdir -p "$T/conf" "$MBT/jail" "$T/a" "$T/svc"
	mb_policy "$T/conf/p.py-sandboxes" "$T/a"
	binding p '{"policy": "p.py-sandboxes", "cgroup": "pysb-e2e-mb/jail"}'
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "p: confined $MBT/jail "
	mb_prober mv "$MBT/free"
	mb_warm mv "A ok B ok"
	echo "$MB_PID_mv" >"$MBT/jail/cgroup.procs" || fail "cannot move $MB_PID_mv"
	mb_step mv "A ok B denied"
	mb_step mv "A ok B denied"
	echo "$MB_PID_mv" >"$MBT/free/cgroup.procs" || fail "cannot move $MB_PID_mv back"
	mb_step mv "A ok B ok"
	daemon_stop
	# pysb-bpf attach moves the process into a sandbox cgroup of its own
	mb_prober at "$MBT/free2"
	mb_warm at "A ok B ok"
	mb_policy "$T/at.py-sandboxes" "$T/a"
	"$PYSB" attach --pid "$MB_PID_at" --policy "$T/at.py-sandboxes" 2>"$T/attach.err" &
	MB_ATTACH=$!
	wait_for "$T/attach.err" "process $MB_PID_at is confined from now on"
	mb_step at "A ok B denied"
	kill "$MB_ATTACH"
	wait "$MB_ATTACH"
	MB_ATTACH=
	expect_grep "$T/attach.err" "process $MB_PID_at detached"
	mb_step at "A ok B ok"
	mb_cleanup
}

# (3) Nested bindings: the cached outer sandbox gives way to a nearer one bound later,
# and comes back (never "no sandbox") when the nearer one is unbound.
test_membership_nearer_bind_and_unbind_through_cache() {
	trap mb_cleanup EXIT
	mkdir -p "$T/conf"
	mb_policy "$T/conf/outer.py-sandboxes" "$T/b"
	mb_policy "$T/conf/inner.py-sandboxes" "$T/a"
	binding outer '{"policy": "outer.py-sandboxes", "cgroup": "pysb-e2e-mb/nest"}'
	mb_prober in "$MBT/nest/in"
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "outer: confined $MBT/nest "
	mb_warm in "A denied B ok"
	binding inner '{"policy": "inner.py-sandboxes", "cgroup": "pysb-e2e-mb/nest/in"}'
	wait_for "$T/daemon.err" "inner: confined $MBT/nest/in "
	mb_step in "A ok B denied"
	mb_step in "A ok B denied"
	rm "$T/conf/inner.json"
	wait_for "$T/daemon.err" "inner: released $MBT/nest/in "
	mb_step in "A denied B ok"
	mb_cleanup
}

# The shared cgroup table in front of the per-task cache (bpf/nearest.h, docs/design.md):
# its words keep only the low half of the generation of `sandboxes`, so user space zeroes
# it each time a bump makes the generation a multiple of 2^31. A cgroup's word, written by
# a process there before the generation crosses 2^31, is gone after it (nobody in that
# cgroup writes it again); and the table does hold answers ("no sandbox" here).
mb_word() { # CGROUP-DIR: the table's word for that cgroup's slot, as "ANSWER ID-HIGH GEN"
	local id  # (ANSWER: none, self or empty; the cgroup id's inode number is its id)
	id=$(stat -c %i "$1")
	bpftool map lookup pinned /sys/fs/bpf/pysb-bpf/*/map-cgroup_table \
		key $((id & 255)) $(((id >> 8) & 31)) 0 0 -j | python3 -c '
import json, sys
v = json.load(sys.stdin)["value"]
w = int.from_bytes(bytes(int(b, 16) for b in v), "little") if isinstance(v, list) else v
print("empty" if not w >> 63 else ("self" if (w >> 62) & 1 else "none"),
      (w >> 32) & 0x3FFFFFFF, w & 0xFFFFFFFF)'
}

mb_set_gen() { # VALUE: sandbox_gen[0], as a little-endian u64
	local v=$1 b=() i
	for i in 0 1 2 3 4 5 6 7; do b+=($(((v >> (8 * i)) & 255))); done
	bpftool map update pinned /sys/fs/bpf/pysb-bpf/*/map-sandbox_gen key 0 0 0 0 \
		value "${b[@]}"
}

test_membership_cgroup_table_zeroed_when_generation_wraps_half() {
	local g0=$(((1 << 31) - 2)) id w i
	trap 'rmdir "$MBT/table" "$MBT" 2>/dev/null' EXIT
	printf 'expose-ro=%s\n' "$T" >"$T/policy"
	"$PYSB" run --policy "$T/policy" -- /bin/true || fail "the instance did not load"
	mkdir -p "$MBT/table"
	id=$(stat -c %i "$MBT/table")
	mb_set_gen "$g0"
	# a process of its own in that cgroup: its first hooks miss and write its word
	bash -c 'echo $$ >"$1/cgroup.procs" && exec cat /dev/null' _ "$MBT/table"
	w=$(mb_word "$MBT/table")
	[ "$w" = "none $((id >> 13)) $g0" ] ||
		fail "no 'no sandbox' word at generation $g0 for cgroup $id: $w"
	for i in 1 2 3; do
		"$PYSB" run --policy "$T/policy" -- /bin/true || fail "run $i"
	done
	w=$(mb_word "$MBT/table")
	[ "$w" = "empty 0 0" ] || fail "the word of generation $g0 survived the crossing of 2^31: $w"
	# and the cgroup is answered again, at the new generation
	bash -c 'echo $$ >"$1/cgroup.procs" && exec cat /dev/null' _ "$MBT/table"
	w=$(mb_word "$MBT/table")
	[[ $w == "none $((id >> 13)) "* ]] && [ "${w##* }" -gt "$g0" ] ||
		fail "no new word after the crossing: $w"
	rmdir "$MBT/table" "$MBT" 2>/dev/null
	trap - EXIT
}
