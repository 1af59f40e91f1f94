/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The net= verdict for an address, shared by the cgroup socket-address programs
 * (bpf/net.bpf.c) and the socket hooks' check of sockets made outside the task's cgroup
 * (bpf/socket.bpf.c): docs/design.md, "Network".
 */
#ifndef PYSB_NET_VERDICT_BPF_H
#define PYSB_NET_VERDICT_BPF_H

#include "common.bpf.h"
#include <bpf/bpf_endian.h>

#ifndef AF_INET
#define AF_INET	 2
#define AF_INET6 10
#endif
#ifndef AF_NETLINK
#define AF_NETLINK 16
#endif
#ifndef IPPROTO_ICMPV6
#define IPPROTO_ICMPV6 58
#endif

/* The verdict of port set `id` for `port`: binary search for the interval holding it. */
static __always_inline __u16 port_verdict(__u32 sandbox, __u32 id, __u16 port)
{
	struct pysb_net_ports_key key = { .sandbox = sandbox, .id = id };
	struct pysb_net_ports *ps = bpf_map_lookup_elem(&net_ports, &key);
	__u32 lo = 0, hi;

	if (!ps)
		return 0;
	hi = ps->n;
	if (hi > PYSB_NET_MAX_RANGES)
		hi = PYSB_NET_MAX_RANGES;
	if (!hi)
		return 0;
	for (int i = 0; i < PYSB_NET_SEARCH_STEPS; i++) {
		__u32 mid;

		if (hi - lo <= 1)
			break;
		mid = (lo + hi) / 2;
		if (ps->r[mid & (PYSB_NET_MAX_RANGES - 1)].start <= port)
			lo = mid;
		else
			hi = mid;
	}
	return ps->r[lo & (PYSB_NET_MAX_RANGES - 1)].verdict;
}

/*
 * The verdict for (address, port) in `slot` under sandbox `cfg`: one longest-prefix lookup
 * (its entry holds every rule covering the address, see pysb_abi.h), one hash lookup, a
 * bounded search. A sandbox with many host prefixes (PYSB_SB_NET_HOSTS) looks the address
 * up among its hosts first: a hit is the trie's own answer, without its walk. `a` is the
 * address in network byte order, 4 (IPv4) or 16 bytes.
 */
static __always_inline __u16 net_verdict(const struct pysb_sandbox_cfg *cfg, bool v6,
					 const __u32 *a, __u16 port, __u32 slot)
{
	bool hosts = cfg->flags & PYSB_SB_NET_HOSTS;
	__u32 sandbox = cfg->id;
	struct pysb_net_value *v = NULL;

	if (v6) {
		struct pysb_net6_key k = { .prefixlen = 32 + 128, .sandbox = sandbox };

		__builtin_memcpy(k.addr, a, 16);
		if (hosts) {
			struct pysb_net6_host_key h = { .sandbox = sandbox };

			__builtin_memcpy(h.addr, a, 16);
			v = bpf_map_lookup_elem(&net6_hosts, &h);
		}
		if (!v)
			v = bpf_map_lookup_elem(&net6_rules, &k);
	} else {
		struct pysb_net4_key k = { .prefixlen = 32 + 32, .sandbox = sandbox };

		__builtin_memcpy(k.addr, a, 4);
		if (hosts) {
			struct pysb_net4_host_key h = { .sandbox = sandbox };

			__builtin_memcpy(h.addr, a, 4);
			v = bpf_map_lookup_elem(&net4_hosts, &h);
		}
		if (!v)
			v = bpf_map_lookup_elem(&net4_rules, &k);
	}
	if (!v)
		return 0; /* no rule covers the address */
	return port_verdict(sandbox, v->ports[slot & (PYSB_NET_SLOTS - 1)], port);
}

static __always_inline struct pysb_net_cfg *sandbox_net_cfg(const struct pysb_sandbox_cfg *cfg)
{
	__u32 id = cfg->id;

	return bpf_map_lookup_elem(&net_cfg, &id);
}

static __always_inline bool family_allowed(const struct pysb_net_cfg *nc, int family)
{
	return nc && family >= 0 && family < 64 && ((nc->families >> family) & 1);
}

/* The sockets a policy's bpf.socket-family and net= rules admit besides: ping, raw,
 * SCTP, other families. See the file comment and docs/network.md. */
static __always_inline bool socket_admitted(const struct pysb_net_cfg *nc, int family, int type,
					    int protocol)
{
	__u32 flags = nc ? nc->flags : 0;

	if (family == AF_INET || family == AF_INET6) {
		if (type == SOCK_DGRAM && (flags & PYSB_NET_ICMP) &&
		    protocol == (family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6))
			return true;
		if (type == SOCK_RAW && (flags & PYSB_NET_INET_RAW))
			return true;
		return (type == SOCK_STREAM || type == SOCK_SEQPACKET) &&
		       protocol == IPPROTO_SCTP && (flags & PYSB_NET_SCTP);
	}
	return family_allowed(nc, family);
}

/* TCP (or MPTCP) and UDP are what net= governs; -1 for anything else. */
static __always_inline int proto_slot(__u32 type, __u32 protocol, __u32 dir)
{
	__u32 in = dir == PYSB_NET_IN;

	if (type == SOCK_STREAM && (protocol == IPPROTO_TCP || protocol == IPPROTO_MPTCP))
		return in ? PYSB_NET_TCP_IN : PYSB_NET_TCP_OUT;
	if (type == SOCK_DGRAM && protocol == IPPROTO_UDP)
		return in ? PYSB_NET_UDP_IN : PYSB_NET_UDP_OUT;
	return -1;
}

#ifndef AF_UNSPEC
#define AF_UNSPEC 0
#endif
#define PYSB_SIN_LEN	      16 /* sizeof(struct sockaddr_in) */
#define PYSB_SIN6_LEN_RFC2133 24 /* a sockaddr_in6 without its scope id */

/* The family of `af` as an inet socket of `family` takes it for `op`, whatever the length:
 * IPv4's AF_UNSPEC is AF_INET but for a connect (addr_family_taken, below). */
static __always_inline __u16 af_unspec_taken(__u16 family, __u16 af, __u16 op)
{
	return af == AF_UNSPEC && family == AF_INET && op != PYSB_OP_CONNECT ? AF_INET : af;
}

/*
 * The family the kernel takes the caller's address `af` (`addrlen` bytes) as, for `op` on
 * an inet socket of `family`; 0 when it uses no address (a disconnect) or refuses it. For
 * the LSM socket hooks, which see the caller's address before the protocol reads it
 * (found by an adversary, round 28: both were taken as "no address" and let through):
 *   - IPv6 connect, bind and sendto take a sockaddr_in6 of 24 bytes, RFC 2133's, without
 *     the scope id (SIN6_LEN_RFC2133), not only the 28 of today's struct;
 *   - IPv4 bind takes AF_UNSPEC as AF_INET (with the wildcard address: the kernel refuses
 *     another), and so does IPv4 UDP's sendto, whatever the address (BSD compatibility);
 *     IPv4 connect(AF_UNSPEC) is a disconnect, as every connect of it is.
 */
static __always_inline __u16 addr_family_taken(__u16 family, __u16 af, int addrlen, __u16 op)
{
	af = af_unspec_taken(family, af, op);
	if (af == AF_INET && addrlen >= PYSB_SIN_LEN)
		return AF_INET;
	if (af == AF_INET6 && addrlen >= PYSB_SIN6_LEN_RFC2133)
		return AF_INET6;
	return 0;
}

/*
 * Address as judged: IPv4-mapped IPv6 becomes IPv4; for OUT, the unspecified address
 * becomes loopback, where the kernel really sends it. Returns whether it stays IPv6.
 */
static __always_inline bool judged_address(bool v6, __u32 a[4], __u32 dir)
{
	if (v6 && a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0xffff)) {
		a[0] = a[3];
		v6 = false;
	}
	if (dir != PYSB_NET_OUT)
		return v6;
	if (!v6 && a[0] == 0)
		a[0] = bpf_htonl(0x7f000001);
	else if (v6 && !(a[0] | a[1] | a[2] | a[3]))
		a[3] = bpf_htonl(1);
	return v6;
}

static __always_inline void net_event(struct pysb_sandbox_cfg *cfg, __u64 cgid, __u16 op,
				      __u16 family, const __u32 *addr, __u16 port, __u16 protocol,
				      __u16 type, __u16 dir, __u32 rule)
{
	struct pysb_event *e = event_start(cfg, cgid, PYSB_KIND_NET, op, 0, decision_of(cfg));

	if (!e)
		return;
	__builtin_memset(&e->net, 0, sizeof(e->net));
	if (addr && family == AF_INET6)
		__builtin_memcpy(e->net.addr, addr, 16);
	else if (addr)
		__builtin_memcpy(e->net.addr, addr, 4);
	e->net.family = family;
	e->net.port = port;
	e->net.protocol = protocol;
	e->net.type = type;
	e->net.dir = dir;
	e->rule = rule;
	event_send(e);
}

#endif /* PYSB_NET_VERDICT_BPF_H */
