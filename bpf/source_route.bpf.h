/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Source routing (issue 16): an IPv4 LSRR/SSRR option or an IPv6 routing header sends the
 * packet to its first hop, while connect/sendmsg judged only the final destination: the
 * packets reached hosts no net= rule allows. The options are refused outright, wherever
 * they come from:
 *   lsm/socket_setsockopt  IP_OPTIONS (the LSM hook does not see the option bytes, so any
 *                          IP options), IPV6_RTHDR, IPV6_2292RTHDR, IPV6_2292PKTOPTIONS
 *                          (which may carry a routing header), IPV6_FLOWLABEL_MGR (a
 *                          flow label's request may carry options, a routing header
 *                          among them, which every packet sent with the label gets: by
 *                          its sin6_flowinfo or an IPV6_FLOWINFO control message; found
 *                          by an adversary; and a label made outside with options is
 *                          joined through it too)                           -> -EPERM
 *                          This covers TCP and TCP Fast Open, whose SYN follows the
 *                          socket's options.
 *   lsm/socket_sendmsg     control messages IP_RETOPTS, IPV6_RTHDR, IPV6_2292RTHDR (by
 *                          the hook's one program, bpf/socket.bpf.c): the hook reads the
 *                          kernel's own copy of the control buffer (made by sendmsg before
 *                          the hook runs; the one the protocol parses), so the program
 *                          cannot change it after the check                  -> -EPERM
 * On any IPv4 or IPv6 socket (an IPv6 socket sends IPv4-mapped traffic with SOL_IP
 * options), whatever bpf.socket-family allows.
 */
#ifndef PYSB_SOURCE_ROUTE_BPF_H
#define PYSB_SOURCE_ROUTE_BPF_H

#include "common.bpf.h"

#ifndef AF_INET
#define AF_INET	 2
#define AF_INET6 10
#endif
#define SOL_IP		    0
#define SOL_IPV6	    41
#define IP_OPTIONS	    4
#define IP_RETOPTS	    7
#define IPV6_2292RTHDR	    5
#define IPV6_2292PKTOPTIONS 6
#define IPV6_RTHDR	    57
#define IPV6_FLOWLABEL_MGR  32
/* Control messages looked at in one sendmsg; more than that is refused (fail closed). */
#define CMSG_MAX	    16

static __always_inline bool is_source_route(int level, int name, bool cmsg)
{
	if (level == SOL_IP)
		return name == (cmsg ? IP_RETOPTS : IP_OPTIONS);
	if (level == SOL_IPV6)
		return name == IPV6_RTHDR || name == IPV6_2292RTHDR ||
		       (!cmsg && (name == IPV6_2292PKTOPTIONS || name == IPV6_FLOWLABEL_MGR));
	return false;
}

static __always_inline bool inet_socket(struct socket *sock)
{
	__u16 family = BPF_CORE_READ(sock, sk, __sk_common.skc_family);

	return family == AF_INET || family == AF_INET6;
}

/* A sandboxed task's socket option `op` (source route, multicast: bpf/multicast.bpf.h) at
 * `level`: refused, with an event naming the level and the option. */
static __always_inline int sockopt_denied(struct pysb_sandbox_cfg *cfg, __u64 cgid,
					  struct socket *sock, __u16 op, int level, int name,
					  __u16 dir)
{
	struct pysb_event *e;

	e = event_start(cfg, cgid, PYSB_KIND_NET, op, 0, decision_of(cfg));
	if (e) {
		__builtin_memset(&e->net, 0, sizeof(e->net));
		e->net.family = BPF_CORE_READ(sock, sk, __sk_common.skc_family);
		e->net.type = BPF_CORE_READ(sock, type);
		e->net.protocol = level;
		e->net.port = name;
		e->net.dir = dir;
		event_send(e);
	}
	return deny_ret(cfg, EPERM);
}

static __always_inline int source_route_denied(struct pysb_sandbox_cfg *cfg, __u64 cgid,
					       struct socket *sock, int level, int name, __u16 dir)
{
	return sockopt_denied(cfg, cgid, sock, PYSB_OP_SOURCE_ROUTE, level, name, dir);
}

struct kcmsghdr {
	__u64 len;
	int level;
	int type;
};

/* The control messages of a sandboxed task's sendmsg() on an inet socket. */
static __always_inline int source_route_cmsg_check(struct pysb_sandbox_cfg *cfg, __u64 cgid,
						   struct socket *sock, struct msghdr *msg)
{
	__u64 len = msg->msg_controllen, off = 0; /* the hook's argument: a plain load */
	void *ctl;

	if (len < sizeof(struct kcmsghdr))
		return 0;
	ctl = BPF_CORE_READ(msg, msg_control);
	for (int i = 0; i < CMSG_MAX; i++) {
		struct kcmsghdr h;

		if (off + sizeof(h) > len)
			return 0;
		if (bpf_probe_read_kernel(&h, sizeof(h), ctl + off))
			/* unreadable */
			return source_route_denied(cfg, cgid, sock, -1, -1, PYSB_NET_OUT);
		if (is_source_route(h.level, h.type, true))
			return source_route_denied(cfg, cgid, sock, h.level, h.type, PYSB_NET_OUT);
		if (h.len < sizeof(h))
			return 0; /* the kernel refuses the message (EINVAL) */
		off += (h.len + 7) & ~7ULL;
	}
	return off + sizeof(struct kcmsghdr) > len
		       ? 0
		       : source_route_denied(cfg, cgid, sock, -1, -1, PYSB_NET_OUT);
}

#endif /* PYSB_SOURCE_ROUTE_BPF_H */
