/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The socket hooks three concerns share, one program a hook:
 *   lsm/socket_connect  unix: the implicit autobind, connect(AF_UNSPEC) of an abstract
 *                       name (bpf/unix_autobind.bpf.h); inet, in a cgroup confined at
 *                       its creation and not yet by the daemon (bpf/born_net.bpf.h),
 *                       and sockets made outside the task's cgroup (foreign_socket)
 *   lsm/socket_bind     unix: an abstract name or an explicit autobind; inet: the same
 *                       cgroups confined at creation
 *   lsm/socket_sendmsg  unix: the implicit autobind; inet: source routing control
 *                       messages (bpf/source_route.bpf.h), then sends with a
 *                       destination in the cgroups confined at creation, and on
 *                       sockets made outside the task's cgroup
 *
 * Every connect, bind and send of every process on the machine runs these programs, and
 * almost none of those processes is sandboxed. A program of its own for each concern
 * made each of them pay for two or three: every program a hook carries is one more call
 * through the trampoline (its entry and exit, its statistics), and each read the socket
 * or the message before it knew whether the task was sandboxed. Here the task's sandbox
 * (current_sandbox: the per-task cache, bpf/nearest.h) is asked once, first; the checks
 * of the concerns run for sandboxed tasks only, in the order of their severity. Each
 * returns 0 when it allows, or denies (deny_ret: 0 too in audit mode, which then goes
 * on to report the next concern's denial as well, as separate programs did).
 * Default: deny, -EPERM, with an event (`unix` or `net`).
 */
#include "common.bpf.h"
#include "born_net.bpf.h"
#include "net_verdict.bpf.h"
#include "source_route.bpf.h"
#include "unix_autobind.bpf.h"

/* The task's sandbox, or NULL (nothing to check); and then the socket's sock and family,
 * by plain (BTF) loads from the hook's own argument: no helper call on every send. */
static __always_inline struct pysb_sandbox_cfg *sandboxed_socket(struct socket *sock, __u64 *cgid,
								 struct sock **sk, __u16 *family)
{
	struct pysb_sandbox_cfg *cfg = current_sandbox(cgid);

	if (cfg) {
		struct sock *s = sock->sk;

		*sk = s;
		*family = s ? s->__sk_common.skc_family : 0;
	}
	return cfg;
}

/*
 * A send or connect that needs nothing of this program, known without the lookup of the
 * task's sandbox (issue 17: every UDP send of a sandboxed task paid it, a third of what a
 * send cost it): the shared cgroup table's word for the task's cgroup says, at the
 * current generation, either "in no sandbox" (as current_sandbox would), or "its own
 * sandbox" and the request is one the socket's own cgroup programs judge completely: a
 * TCP or UDP socket made in that cgroup, with no control message. For such a request each
 * check of the hooks below allows: held_kind (TCP and UDP are no held kind),
 * source_route_cmsg_check (no message to read), born_net (a cgroup confined at its
 * creation, PYSB_SB_KERNEL, is marked in born_filter before its entry is written: it
 * goes the whole way), foreign_socket (made in the sandbox's own cgroup); the destination
 * is the cgroup programs' (bpf/net.bpf.c), attached before the cgroup was registered.
 * docs/design.md, "Sends the socket's own programs judge". Plain BTF loads; `msg` NULL
 * for a connect.
 */
static __always_inline bool nothing_to_judge(struct socket *sock, struct msghdr *msg)
{
	__u64 own = PYSB_CACHE_CGROUP_ID();
	enum pysb_table_answer t = pysb_table_says(own);
	struct sock *sk = sock->sk;
	__u16 family;

	if (t != PYSB_TABLE_OWN)
		return t == PYSB_TABLE_NONE;
	if (maybe_born(own))
		return false; /* confined at its creation: born_net decides */
	if (!sk || (msg && msg->msg_controllen >= sizeof(struct kcmsghdr)))
		return false;
	family = sk->__sk_common.skc_family;
	return (family == AF_INET || family == AF_INET6) &&
	       proto_slot(sock->type, sk->sk_protocol, PYSB_NET_OUT) >= 0 &&
	       sk->sk_cgrp_data.cgroup->kn->id == own;
}

/* The socket was made in another cgroup than the task's: its cgroup programs are not the
 * sandbox's (sk_cgrp_data, set when it was made). Plain BTF loads: every connect, bind
 * and send with an address of a sandboxed task asks. */
static __always_inline bool made_outside(struct sock *sk, __u64 cgid)
{
	return sk && sk->sk_cgrp_data.cgroup->kn->id != cgid;
}

/*
 * An inet socket made outside the task's cgroup: before `attach` moved the process, or by
 * the caller of `run` and inherited, or received. The cgroup socket-address programs run
 * for the cgroup a socket was made in (sk_cgrp_data), not for the task's, so a socket made
 * before the sandbox reached any host (found by an adversary: an attached process's
 * unconnected UDP socket, and a connected TCP socket disconnected with AF_UNSPEC and
 * connected again). A new destination given to such a socket (connect, a send with an
 * address) is judged here by the task's rules; what it was connected to before stays, as
 * an open file does. `addr` is the kernel's copy of the caller's address. A bind of such
 * a socket is judged the same way by the IN rules (`dir`; found by an adversary: a held
 * TCP socket bound to a port no rule allows and listening).
 */
static __always_inline int foreign_socket(struct pysb_sandbox_cfg *cfg, __u64 cgid,
					  struct socket *sock, struct sock *sk, __u16 family,
					  struct sockaddr *addr, int addrlen, __u16 op, __u32 dir)
{
	__u32 given[4] = {}, a[4];
	__u16 af = 0, port = 0, verdict;
	int slot;

	if (!made_outside(sk, cgid) || !addr || addrlen < 2)
		return 0;
	bpf_probe_read_kernel(&af, sizeof(af), &addr->sa_family);
	/* as the kernel takes it: a 24-byte IPv6 address, IPv4's AF_UNSPEC (net_verdict.bpf.h) */
	af = addr_family_taken(family, af, addrlen, op);
	if (af == AF_INET) {
		struct sockaddr_in *in = (void *)addr;

		port = bpf_ntohs(BPF_CORE_READ(in, sin_port));
		bpf_probe_read_kernel(given, 4, &in->sin_addr);
	} else if (af == AF_INET6) {
		struct sockaddr_in6 *in6 = (void *)addr;

		port = bpf_ntohs(BPF_CORE_READ(in6, sin6_port));
		bpf_probe_read_kernel(given, 16, &in6->sin6_addr);
	} else {
		return 0; /* a disconnect (AF_UNSPEC); too short: the kernel refuses it */
	}
	slot = proto_slot(BPF_CORE_READ(sock, type), BPF_CORE_READ(sk, sk_protocol), dir);
	if (slot < 0)
		return 0; /* other kinds: held_kind */
	__builtin_memcpy(a, given, sizeof(a));
	verdict = net_verdict(cfg, judged_address(af == AF_INET6, a, dir), a, port, slot);
	if (verdict & PYSB_NET_ALLOW)
		return 0;
	net_event(cfg, cgid, op, af, given, port, BPF_CORE_READ(sk, sk_protocol),
		  BPF_CORE_READ(sock, type), dir, verdict);
	return deny_ret(cfg, EPERM);
}

/*
 * A socket of a kind this sandbox may not make (socket_create would refuse it here): a
 * ping, raw IP or SCTP socket, a packet socket, vsock, ... made before the sandbox's rules
 * applied to it: held from before `attach`, inherited, received, or made in a service's
 * cgroup before the daemon bound it in place (or while it was in audit mode, or under a
 * policy a reload narrowed). No net= rule judges these kinds (docs/network.md), so every
 * connect, bind and send on it is refused (found by an adversary: an attached process's
 * ping and raw sockets reached any host, and so did those of a service the daemon confined
 * in place; a connected raw socket with IP_HDRINCL needs no address to). Unix sockets are
 * judged by their peer, netlink by netlink_send; TCP and UDP by foreign_socket and the
 * cgroup programs. What such a socket receives is not judged (no hook on every receive of
 * the machine), as an open file's reads are not.
 */
static __always_inline int held_kind(struct pysb_sandbox_cfg *cfg, __u64 cgid, struct socket *sock,
				     struct sock *sk, __u16 family, __u32 dir)
{
	__u16 type, protocol;

	if (family == AF_UNIX || family == AF_NETLINK || !sk)
		return 0;
	type = sock->type; /* plain loads: every send of a sandboxed task comes here */
	protocol = sk->sk_protocol;
	if ((family == AF_INET || family == AF_INET6) && proto_slot(type, protocol, dir) >= 0)
		return 0;
	if (socket_admitted(sandbox_net_cfg(cfg), family, type, protocol))
		return 0;
	/* reported as the socket it is: the kind not allowed (learning adds it) */
	net_event(cfg, cgid, PYSB_OP_SOCKET, family, NULL, 0, protocol, type, 0, 0);
	return deny_ret(cfg, EPERM);
}

SEC("lsm/socket_connect")
int BPF_PROG(pysb_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen)
{
	struct pysb_sandbox_cfg *cfg;
	struct sock *sk;
	__u16 family;
	__u64 cgid;

	if (nothing_to_judge(sock, NULL))
		return 0;
	cfg = sandboxed_socket(sock, &cgid, &sk, &family);
	if (!cfg)
		return 0;
	if (family == AF_UNIX)
		return unix_connect_check(cfg, cgid, sock, sk, address, addrlen);
	if (family != AF_INET && family != AF_INET6)
		return held_kind(cfg, cgid, sock, sk, family, PYSB_NET_OUT);
	return born_net(cfg, cgid, sock, family, addrlen >= 2 ? address : NULL, PYSB_OP_CONNECT,
			PYSB_NET_OUT)
		       ?: held_kind(cfg, cgid, sock, sk, family, PYSB_NET_OUT)
		       ?: foreign_socket(cfg, cgid, sock, sk, family, address, addrlen, PYSB_OP_CONNECT,
					 PYSB_NET_OUT);
}

SEC("lsm/socket_bind")
int BPF_PROG(pysb_socket_bind, struct socket *sock, struct sockaddr *address, int addrlen)
{
	struct pysb_sandbox_cfg *cfg;
	struct sock *sk;
	__u16 family;
	__u64 cgid;

	cfg = sandboxed_socket(sock, &cgid, &sk, &family);
	if (!cfg || addrlen < (int)sizeof(__u16))
		return 0; /* too short: the kernel refuses it (EINVAL) */
	/* The address's family, not the socket's: bind(AF_UNIX name) is judged as one. */
	if (BPF_CORE_READ(address, sa_family) == AF_UNIX)
		return unix_bind_check(cfg, cgid, address, addrlen);
	return born_net(cfg, cgid, sock, family, address, PYSB_OP_BIND, PYSB_NET_IN)
		       ?: held_kind(cfg, cgid, sock, sk, family, PYSB_NET_IN)
		       ?: foreign_socket(cfg, cgid, sock, sk, family, address, addrlen, PYSB_OP_BIND,
					 PYSB_NET_IN);
}

SEC("lsm/socket_sendmsg")
int BPF_PROG(pysb_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size)
{
	struct pysb_sandbox_cfg *cfg;
	struct sock *sk;
	__u16 family;
	__u64 cgid;
	int err;

	if (nothing_to_judge(sock, msg))
		return 0;
	cfg = sandboxed_socket(sock, &cgid, &sk, &family);
	if (!cfg)
		return 0;
	if (family == AF_UNIX)
		return unix_sendmsg_check(cfg, cgid, sock, sk, msg);
	err = held_kind(cfg, cgid, sock, sk, family, PYSB_NET_OUT);
	if (err || (family != AF_INET && family != AF_INET6))
		return err;
	err = source_route_cmsg_check(cfg, cgid, sock, msg);
	if (err)
		return err;
	if (msg->msg_namelen < 2)
		return 0; /* no destination: connected, judged at connect() */
	return born_net(cfg, cgid, sock, family, msg->msg_name, PYSB_OP_SENDMSG, PYSB_NET_OUT)
		       ?: foreign_socket(cfg, cgid, sock, sk, family, msg->msg_name,
					 msg->msg_namelen, PYSB_OP_SENDMSG, PYSB_NET_OUT);
}
