/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Network rules (net=) and socket families.
 *
 * Hooks:
 *   cgroup/connect4, connect6  connect() of TCP and UDP sockets, and TCP Fast Open
 *                              sendto (the kernel runs the same hook): OUT
 *   cgroup/sendmsg4, sendmsg6  UDP sendto/sendmsg/sendmmsg with a destination: OUT
 *   cgroup/bind4, bind6        bind(): IN
 *   lsm/socket_listen          listen() on a TCP socket never bound (the kernel picks a
 *                              port): IN, judged as the wildcard address and port 0
 *   lsm/socket_create          socket(): unix, TCP, UDP and NETLINK_ROUTE only, unless
 *                              bpf.socket-family allows more
 *   lsm/netlink_send           NETLINK_ROUTE: only requests that read (RTM_GET*)
 *   lsm/socket_setsockopt      source routing (bpf/source_route.bpf.h) and multicast
 *                              memberships (bpf/multicast.bpf.h)
 *
 * The cgroup/ programs are attached to the sandbox cgroup only (loader_attach_cgroup), so
 * they judge the sockets created inside the sandbox and cost nothing elsewhere (a kernel
 * thread acting on such a socket, MPTCP's subflows, is refused: kernel_thread(); a task
 * outside acting on one is judged by the socket's sandbox: socket_sandbox()); a socket
 * made outside keeps what it was connected to, like an open file, and a new destination
 * given to it is judged by bpf/socket.bpf.c (foreign_socket). The lsm/ programs
 * are global and act only on sandboxed tasks (current_sandbox()).
 *
 * Default: deny. DENY rules first, then ALLOW rules, then deny (net= semantics,
 * docs/network.md). A denied connect/sendmsg/bind fails with EPERM (cgroup hooks return
 * 0); listen, socket and netlink requests with EACCES/EPERM; each denial is an event.
 * IPv4-mapped IPv6 addresses are judged as IPv4; a destination 0.0.0.0 or :: (which the
 * kernel sends to loopback) is judged as 127.0.0.1 or ::1.
 */
#include "common.bpf.h"
#include "source_route.bpf.h"
#include "multicast.bpf.h"
#include "net_verdict.bpf.h"
#include <bpf/bpf_endian.h>

#define AF_UNIX	      1
#define AF_INET	      2
#define AF_INET6      10
#define AF_NETLINK    16
#define NETLINK_ROUTE 0
#define RTM_BASE      16
#define NLMSG_HDRLEN  16

/* cgroup sock_addr verdicts */
#define SOCK_ADDR_DENY	0
#define SOCK_ADDR_ALLOW 1

/* Messages looked at in one netlink send; more than that is denied (fail closed). */
#define NETLINK_MAX_MSGS 16

#define PF_KTHREAD 0x00200000 /* the kernel's task flag: a kernel thread */

/*
 * A kernel thread binding or connecting a socket of a sandbox: these programs run for
 * the socket's cgroup, the walk looks at the task's, which for a kernel thread is the
 * root. MPTCP's path manager does this (a kworker): once the peer a net= rule allows
 * announces another address (ADD_ADDR, port included), it joins a subflow to it, which
 * then carries the program's data to a host no rule allows (found by an adversary, round
 * 27). Refused: no rule can be looked up for it, so MPTCP keeps the one path its connect
 * was judged for. A task outside acting on a sandbox's socket: socket_sandbox() below.
 */
static __always_inline bool kernel_thread(void)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(t, flags) & PF_KTHREAD;
}

/*
 * A task outside every sandbox binding or connecting a socket a sandbox made: these
 * programs run for it because the socket's cgroup is the sandbox's. MPTCP's user-space
 * path manager does this (net.mptcp.pm_type=1: mptcpd, or any root process speaking the
 * mptcp_pm generic netlink family): MPTCP_PM_CMD_SUBFLOW_CREATE joins a subflow of the
 * program's connection to any address, in the context of the daemon, which the walk
 * above finds in no sandbox (found by an adversary, round 30). The socket belongs to the
 * sandbox, so its rules apply whoever binds or connects it: the sandbox is looked up from
 * the socket's cgroup (bpf_sock_addr_kern.sk, read as the kernel's struct sock, since
 * sock_addr programs have no bpf_sk_cgroup_id). A socket made outside is never seen here
 * (the programs are attached to sandbox cgroups only) and keeps its own judgement
 * (bpf/socket.bpf.c); a sandbox's socket handed to a task outside is judged by the
 * sandbox's rules when that task binds or connects it.
 */
static __always_inline struct pysb_sandbox_cfg *socket_sandbox(struct bpf_sock_addr *ctx,
							       __u64 *cgid)
{
	struct bpf_sock_addr_kern *k = (struct bpf_sock_addr_kern *)ctx;
	struct sock *sk = BPF_CORE_READ(k, sk);
	struct cgroup *cg = sk ? BPF_CORE_READ(sk, sk_cgrp_data.cgroup) : NULL;

	return cg ? pysb_nearest_of(cg, cgid) : NULL;
}

/* Shared by the six cgroup/ programs; `v6` and `dir` are constants at each call site. */
static __always_inline int check_sock_addr(struct bpf_sock_addr *ctx, bool v6, __u16 op, __u32 dir)
{
	struct pysb_sandbox_cfg *cfg;
	__u32 given[4] = {}, a[4];
	__u16 verdict, port;
	__u64 cgid;
	int slot;

	cfg = current_sandbox_walk(&cgid);
	if (!cfg && kernel_thread())
		return SOCK_ADDR_DENY;
	if (!cfg)
		cfg = socket_sandbox(ctx, &cgid);
	if (!cfg)
		return SOCK_ADDR_ALLOW;
	/* Other kinds (ping, SCTP, raw) were admitted, or not, by socket_create. */
	slot = proto_slot(ctx->type, ctx->protocol, dir);
	if (slot < 0)
		return SOCK_ADDR_ALLOW;
	if (v6) {
		given[0] = ctx->user_ip6[0];
		given[1] = ctx->user_ip6[1];
		given[2] = ctx->user_ip6[2];
		given[3] = ctx->user_ip6[3];
	} else {
		given[0] = ctx->user_ip4;
	}
	port = bpf_ntohs((__u16)ctx->user_port);
	__builtin_memcpy(a, given, sizeof(a));
	verdict = net_verdict(cfg, judged_address(v6, a, dir), a, port, slot);
	if (verdict & PYSB_NET_ALLOW)
		return SOCK_ADDR_ALLOW;
	net_event(cfg, cgid, op, v6 ? AF_INET6 : AF_INET, given, port, ctx->protocol, ctx->type,
		  dir, verdict);
	return (cfg->flags & PYSB_SB_AUDIT) ? SOCK_ADDR_ALLOW : SOCK_ADDR_DENY;
}

SEC("cgroup/connect4")
int pysb_connect4(struct bpf_sock_addr *ctx)
{
	return check_sock_addr(ctx, false, PYSB_OP_CONNECT, PYSB_NET_OUT);
}

SEC("cgroup/connect6")
int pysb_connect6(struct bpf_sock_addr *ctx)
{
	return check_sock_addr(ctx, true, PYSB_OP_CONNECT, PYSB_NET_OUT);
}

SEC("cgroup/sendmsg4")
int pysb_sendmsg4(struct bpf_sock_addr *ctx)
{
	return check_sock_addr(ctx, false, PYSB_OP_SENDMSG, PYSB_NET_OUT);
}

SEC("cgroup/sendmsg6")
int pysb_sendmsg6(struct bpf_sock_addr *ctx)
{
	return check_sock_addr(ctx, true, PYSB_OP_SENDMSG, PYSB_NET_OUT);
}

SEC("cgroup/bind4")
int pysb_bind4(struct bpf_sock_addr *ctx)
{
	return check_sock_addr(ctx, false, PYSB_OP_BIND, PYSB_NET_IN);
}

SEC("cgroup/bind6")
int pysb_bind6(struct bpf_sock_addr *ctx)
{
	return check_sock_addr(ctx, true, PYSB_OP_BIND, PYSB_NET_IN);
}

/*
 * listen() on a socket that was never bound makes the kernel bind it to the wildcard
 * address and a port of its choosing, without the bind hooks: judge that as IN, wildcard
 * address, port 0 (as py-sandboxes does). A bound socket was judged at bind().
 */
SEC("lsm/socket_listen")
int BPF_PROG(pysb_socket_listen, struct socket *sock, int backlog)
{
	struct pysb_sandbox_cfg *cfg;
	struct sock *sk;
	__u32 any[4] = {};
	__u16 family, type, protocol, verdict;
	__u64 cgid;
	int slot;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	sk = BPF_CORE_READ(sock, sk);
	if (!sk)
		return 0;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != AF_INET && family != AF_INET6)
		return 0;
	if (BPF_CORE_READ(sk, __sk_common.skc_num))
		return 0;
	type = BPF_CORE_READ(sk, sk_type);
	protocol = BPF_CORE_READ(sk, sk_protocol);
	slot = proto_slot(type, protocol, PYSB_NET_IN);
	if (slot < 0)
		return 0;
	verdict = net_verdict(cfg, family == AF_INET6, any, 0, slot);
	if (verdict & PYSB_NET_ALLOW)
		return 0;
	net_event(cfg, cgid, PYSB_OP_LISTEN, family, any, 0, protocol, type, PYSB_NET_IN, verdict);
	return deny_ret(cfg, EPERM);
}

/* The sockets every sandbox may create: unix (judged at connect/send/bind,
 * bpf/unix.bpf.c), TCP, MPTCP and UDP (judged by the cgroup programs), and the routing
 * netlink, which name resolution (AI_ADDRCONFIG) and if_nameindex() read (requests that
 * change something are refused in netlink_send). The rest needs the sandbox's net_cfg. */
static __always_inline bool socket_common(int family, int type, int protocol)
{
	if (family == AF_UNIX)
		return true;
	if (family == AF_INET || family == AF_INET6) {
		if (type == SOCK_STREAM &&
		    (protocol == 0 || protocol == IPPROTO_TCP || protocol == IPPROTO_MPTCP))
			return true;
		return type == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP);
	}
	return family == AF_NETLINK && protocol == NETLINK_ROUTE;
}

/* The common sockets cost no lookup of the sandbox's net_cfg: every TCP connection of a
 * sandboxed program creates one. */
SEC("lsm/socket_create")
int BPF_PROG(pysb_socket_create, int family, int type, int protocol, int kern)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 cgid;

	if (kern || socket_common(family, type, protocol))
		return 0;
	cfg = current_sandbox(&cgid);
	if (!cfg || socket_admitted(sandbox_net_cfg(cfg), family, type, protocol))
		return 0;
	net_event(cfg, cgid, PYSB_OP_SOCKET, family, NULL, 0, protocol, type, 0, 0);
	return deny_ret(cfg, EACCES);
}

struct nlmsg_hdr {
	__u32 len;
	__u16 type;
	__u16 flags;
};

/*
 * NETLINK_ROUTE messages: RTM_GET* (type % 4 == 2) only read; RTM_NEW*, DEL*, SET* change
 * links, addresses, routes, neighbours, qdiscs (and succeed for a sandboxed root).
 * Control messages (below RTM_BASE) are harmless. Returns the first type refused, or 0.
 */
static __always_inline __u16 netlink_refused_type(struct sk_buff *skb)
{
	unsigned char *data = BPF_CORE_READ(skb, data);
	__u32 len = BPF_CORE_READ(skb, len), off = 0;

	for (int i = 0; i < NETLINK_MAX_MSGS; i++) {
		struct nlmsg_hdr h;

		if (off + NLMSG_HDRLEN > len)
			return 0;
		if (bpf_probe_read_kernel(&h, sizeof(h), data + off))
			return 0xffff;
		if (h.type >= RTM_BASE && (h.type & 3) != 2)
			return h.type;
		if (h.len < NLMSG_HDRLEN)
			return 0; /* the kernel rejects it */
		off += (h.len + 3) & ~3u;
	}
	return off + NLMSG_HDRLEN > len ? 0 : 0xffff;
}

SEC("lsm/netlink_send")
int BPF_PROG(pysb_netlink_send, struct sock *sk, struct sk_buff *skb)
{
	struct pysb_sandbox_cfg *cfg;
	struct pysb_net_cfg *nc;
	__u16 protocol, refused;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	nc = sandbox_net_cfg(cfg);
	if (family_allowed(nc, AF_NETLINK))
		return 0;
	protocol = BPF_CORE_READ(sk, sk_protocol);
	/* Another netlink protocol here was handed in from outside: refuse it too. */
	refused = protocol == NETLINK_ROUTE ? netlink_refused_type(skb) : 0xffff;
	if (!refused)
		return 0;
	net_event(cfg, cgid, PYSB_OP_NETLINK_SEND, AF_NETLINK, NULL, refused, protocol, SOCK_RAW, 0,
		  0);
	return deny_ret(cfg, EPERM);
}

/* Source routing (bpf/source_route.bpf.h) and multicast memberships (bpf/multicast.bpf.h). */
SEC("lsm/socket_setsockopt")
int BPF_PROG(pysb_socket_setsockopt, struct socket *sock, int level, int optname)
{
	__u32 mcast = multicast_option(level, optname);
	struct pysb_sandbox_cfg *cfg;
	__u64 cgid;

	if ((!mcast && !is_source_route(level, optname, false)) || !inet_socket(sock))
		return 0;
	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	if (mcast)
		return multicast_check(cfg, cgid, sock, level, optname, mcast);
	return source_route_denied(cfg, cgid, sock, level, optname, 0);
}
