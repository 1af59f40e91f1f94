# Sockets a process confined in place held from before (round 22 of the adversary): the
# cgroup programs judge a socket by the cgroup it was made in, and the earlier fix
# (test_net_sockets_made_before_attach_judged_by_its_rules) judged the new destinations
# of such TCP and UDP sockets only. Their bind (an IN port no rule allows: a server on
# any port) and every use of the kinds the policy may not make (a ping or raw IP socket
# reaching any host) went unjudged. (held_attach: test_net.sh.)

test_net_held_sockets_bind_and_other_kinds_judged() {
	net_setup "net=ALLOW|tcp|127.0.0.1|20081|IN" "net=ALLOW|udp|127.0.0.1|20083|IN"
	NET_PING_RANGE=$(sysctl -n net.ipv4.ping_group_range)
	sysctl -qw net.ipv4.ping_group_range="0 0"
	cp "$T/policy" "$T/policy-kinds"
	echo "bpf.socket-family=icmp,raw" >>"$T/policy-kinds"
	# An ICMP echo request; the kernel fills in a ping socket's id and checksum, a raw
	# socket sends it as it is (the send is what is judged, not the answer).
	net_py "$T/held.py" \
		"import os, time" \
		"ready, go = sys.argv[1], sys.argv[2]" \
		"tcp_other, tcp_allowed = socket.socket(), socket.socket()" \
		"udp_other, udp_allowed = (socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in '12')" \
		"ping = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)" \
		"raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)" \
		"open(ready, 'w').close()" \
		"while not os.path.exists(go): time.sleep(0.05)" \
		"echo = b'\\x08\\x00\\x00\\x00\\x00\\x00\\x00\\x01held'" \
		"def serve(s, port): s.bind(('127.0.0.1', port)); s.listen()" \
		"def ping_once(): ping.settimeout(10); ping.sendto(echo, ('127.0.0.1', 0)); assert ping.recv(64)[0] == 0" \
		"attempt('tcp-bind-other', lambda: serve(tcp_other, 20082))" \
		"attempt('udp-bind-other', lambda: udp_other.bind(('127.0.0.1', 20084)))" \
		"attempt('ping-send', ping_once)" \
		"attempt('raw-send', lambda: raw.sendto(echo, ('127.0.0.1', 0)))" \
		"attempt('tcp-bind-allowed', lambda: serve(tcp_allowed, 20081))" \
		"attempt('udp-bind-allowed', lambda: udp_allowed.bind(('127.0.0.1', 20083)))" \
		"print('done', flush=True)"
	# Unconfined, each works.
	run_plain python3 "$T/held.py" "$T/r1" "$T/r1"
	for l in tcp-bind-other udp-bind-other ping-send raw-send tcp-bind-allowed udp-bind-allowed; do
		expect_line "$T/out" "$l ok"
	done
	# Attached: the ports no IN rule allows and the kinds the policy may not make refused.
	held_attach "$T/policy" "$T/r2" "$T/go2" "$T/out2"
	for l in tcp-bind-other udp-bind-other ping-send raw-send; do
		expect_line "$T/out2" "$l EPERM"
	done
	for l in tcp-bind-allowed udp-bind-allowed; do
		expect_line "$T/out2" "$l ok"
	done
	expect_grep "$T/out2.err" "deny net bind tcp 127\.0\.0\.1:20082 \(IN\)"
	expect_grep "$T/out2.err" "deny net bind udp 127\.0\.0\.1:20084 \(IN\)"
	expect_grep "$T/out2.err" "deny net socket [a-z0-9]+\(2\) type=[a-z]+\(2\) protocol=1 "
	expect_grep "$T/out2.err" "deny net socket [a-z0-9]+\(2\) type=[a-z]+\(3\) protocol=1 "
	# With the kinds allowed (bpf.socket-family=icmp,raw), the held ones work again.
	held_attach "$T/policy-kinds" "$T/r3" "$T/go3" "$T/out3"
	for l in ping-send raw-send tcp-bind-allowed; do
		expect_line "$T/out3" "$l ok"
	done
	expect_line "$T/out3" "tcp-bind-other EPERM"
}

# Addresses the kernel takes that the held sockets' check skipped (round 28 of the
# adversary): an IPv6 sockaddr of 24 bytes (RFC 2133's, without the scope id), which
# connect, bind and sendto of IPv6 sockets accept, and an IPv4 one whose family is
# AF_UNSPEC, which IPv4 bind (with the wildcard address) and UDP sendto take as AF_INET
# (BSD compatibility). The check of sockets made before `attach` read neither, so a held
# IPv6 TCP socket connected to any host, a held UDP socket sent to any host, a held TCP
# socket bound to any port and listened. The addresses the rules allow still work.
test_escape_held_socket_short_or_unspec_address_refused() {
	net_setup "net=ALLOW|tcp|::1|20101|OUT" "net=ALLOW|udp|::1|20103|OUT" \
		"net=ALLOW|udp|127.0.0.1|20103|OUT" "net=ALLOW|tcp|0.0.0.0|20105|IN" \
		"net=ALLOW|tcp|::|20105|IN"
	net_servers "tcp:[::1]:20101" "tcp:[::1]:20102" "udp:[::1]:20103" "udp:[::1]:20104" \
		udp:127.0.0.1:20103 udp:127.0.0.1:20104
	net_py "$T/held.py" \
		"import ctypes, os, struct, time" \
		"ready, go = sys.argv[1], sys.argv[2]" \
		"libc = ctypes.CDLL(None, use_errno=True)" \
		"def call(f, *a):" \
		"    if f(*a) < 0: e = ctypes.get_errno(); raise OSError(e, os.strerror(e))" \
		"def sa6(ip, port): return (struct.pack('<H', socket.AF_INET6) + struct.pack('!HI', port, 0) + socket.inet_pton(socket.AF_INET6, ip))" \
		"def sa4u(ip, port): return struct.pack('<H', 0) + struct.pack('!H', port) + socket.inet_aton(ip) + bytes(8)" \
		"t6 = {p: socket.socket(socket.AF_INET6) for p in (20101, 20102)}" \
		"u6, u4 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM), socket.socket(socket.AF_INET, socket.SOCK_DGRAM)" \
		"b6 = {p: socket.socket(socket.AF_INET6) for p in (20105, 20106)}" \
		"for s in b6.values(): s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)" \
		"b4 = {p: socket.socket() for p in (20105, 20106)}" \
		"open(ready, 'w').close()" \
		"while not os.path.exists(go): time.sleep(0.05)" \
		"def connect6(p):" \
		"    s = t6[p]; call(libc.connect, s.fileno(), sa6('::1', p), 24)" \
		"    s.settimeout(10); assert s.recv(6) == b'hello\n'" \
		"def send(s, a, n):" \
		"    s.settimeout(10); call(libc.sendto, s.fileno(), b'ping', 4, 0, a, n); assert s.recv(16) == b'ping'" \
		"def bind(s, a, n): call(libc.bind, s.fileno(), a, n); s.listen()" \
		"for p in (20102, 20101):" \
		"    attempt('tcp6-connect-24 %d' % p, lambda: connect6(p))" \
		"for p in (20104, 20103):" \
		"    attempt('udp6-sendto-24 %d' % p, lambda: send(u6, sa6('::1', p), 24))" \
		"    attempt('udp4-sendto-unspec %d' % p, lambda: send(u4, sa4u('127.0.0.1', p), 16))" \
		"for p in (20106, 20105):" \
		"    attempt('tcp6-bind-24 %d' % p, lambda: bind(b6[p], sa6('::', p), 24))" \
		"    attempt('tcp4-bind-unspec %d' % p, lambda: bind(b4[p], sa4u('0.0.0.0', p), 16))" \
		"print('done', flush=True)"
	local l p
	# Unconfined, each works.
	run_plain python3 "$T/held.py" "$T/r1" "$T/r1"
	for p in 20101 20102; do
		expect_line "$T/out" "tcp6-connect-24 $p ok"
	done
	for p in 20103 20104; do
		expect_line "$T/out" "udp6-sendto-24 $p ok"
		expect_line "$T/out" "udp4-sendto-unspec $p ok"
	done
	for p in 20105 20106; do
		expect_line "$T/out" "tcp6-bind-24 $p ok"
		expect_line "$T/out" "tcp4-bind-unspec $p ok"
	done
	# Attached: what no rule allows refused (EPERM), the allowed ones work.
	held_attach "$T/policy" "$T/r2" "$T/go2" "$T/out2"
	for l in "tcp6-connect-24 20102" "udp6-sendto-24 20104" "udp4-sendto-unspec 20104" \
		"tcp6-bind-24 20106" "tcp4-bind-unspec 20106"; do
		expect_line "$T/out2" "$l EPERM"
	done
	for l in "tcp6-connect-24 20101" "udp6-sendto-24 20103" "udp4-sendto-unspec 20103" \
		"tcp6-bind-24 20105" "tcp4-bind-unspec 20105"; do
		expect_line "$T/out2" "$l ok"
	done
	expect_grep "$T/out2.err" "deny net connect tcp \[::1\]:20102 \(OUT\)"
	expect_grep "$T/out2.err" "deny net sendmsg udp 127\.0\.0\.1:20104 \(OUT\)"
	expect_grep "$T/out2.err" "deny net bind tcp 0\.0\.0\.0:20106 \(IN\)"
}

# The daemon stopped, its bindings released (as mb_cleanup does), the services gone.
held_inplace_cleanup() {
	trap - EXIT
	daemon_stop
	kill -9 $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	mkdir -p "$T/empty"
	"$PYSB" daemon --config "$T/empty" --once >/dev/null 2>&1
	rmdir /sys/fs/cgroup/pysb-e2e-held/* /sys/fs/cgroup/pysb-e2e-held 2>/dev/null
	net_cleanup
}

# The same kinds made by a service in its own cgroup before the daemon bound that cgroup in
# place: the socket's cgroup is the sandbox's, so only its kind tells (round 22). With the
# kinds allowed by the binding's policy (another cgroup), the held ones work.
test_net_held_sockets_of_a_service_bound_in_place_judged() {
	once_per_matrix "the kind check is the attached one's; this is its in-place case"
	local cg=/sys/fs/cgroup/pysb-e2e-held n i
	trap held_inplace_cleanup EXIT
	write_probe_lib
	NET_PING_RANGE=$(sysctl -n net.ipv4.ping_group_range)
	sysctl -qw net.ipv4.ping_group_range="0 0"
	mkdir -p "$T/conf" "$cg/strict" "$cg/kinds"
	printf 'net=ALLOW|tcp|127.0.0.1|20081|IN\nexpose-ro=%s\n' "$T/lib" >"$T/conf/strict.py-sandboxes"
	cp "$T/conf/strict.py-sandboxes" "$T/conf/kinds.py-sandboxes"
	echo "bpf.socket-family=icmp,raw" >>"$T/conf/kinds.py-sandboxes"
	binding strict '{"policy": "strict.py-sandboxes", "cgroup": "pysb-e2e-held/strict"}'
	binding kinds '{"policy": "kinds.py-sandboxes", "cgroup": "pysb-e2e-held/kinds"}'
	write_file "$T/svc.py" <<PY
import os, socket, sys, time
sys.path.insert(0, '$T/lib')
from probe_lib import attempt
cg, ready, go = sys.argv[1:4]
with open(cg + '/cgroup.procs', 'w') as f:
    f.write(str(os.getpid()))
ping = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
open(ready, 'w').close()
while not os.path.exists(go):
    time.sleep(0.05)
echo = b'\x08\x00\x00\x00\x00\x00\x00\x01held'
def ping_once():
    ping.settimeout(10); ping.sendto(echo, ('127.0.0.1', 0)); assert ping.recv(64)[0] == 0
attempt('ping-send', ping_once)
attempt('raw-send', lambda: raw.sendto(echo, ('127.0.0.1', 0)))
print('done', flush=True)
PY
	# Unconfined (in a cgroup no binding names), each works.
	mkdir -p "$cg/plain"
	run_plain python3 "$T/svc.py" "$cg/plain" "$T/r0" "$T/r0"
	expect_line "$T/out" "ping-send ok"
	expect_line "$T/out" "raw-send ok"
	for n in strict kinds; do
		python3 "$T/svc.py" "$cg/$n" "$T/r-$n" "$T/go" >"$T/out-$n" 2>&1 &
		wait_file "$T/r-$n" "the service $n is not ready: $(cat "$T/out-$n")"
	done
	daemon_start "$T/conf"
	wait_for "$T/daemon.err" "strict: confined $cg/strict "
	wait_for "$T/daemon.err" "kinds: confined $cg/kinds "
	touch "$T/go"
	for n in strict kinds; do
		for ((i = 0; i < 300; i++)); do
			_has "$T/out-$n" xF done && break
			sleep 0.1
		done
		expect_line "$T/out-$n" "done"
	done
	expect_line "$T/out-strict" "ping-send EPERM"
	expect_line "$T/out-strict" "raw-send EPERM"
	expect_line "$T/out-kinds" "ping-send ok"
	expect_line "$T/out-kinds" "raw-send ok"
	expect_grep "$T/events.jsonl" '"operation":"socket".*"type":"raw"'
}
