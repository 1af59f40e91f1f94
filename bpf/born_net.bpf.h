/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The socket part of bpf/watch.bpf.c's concern (confinement from a cgroup's creation):
 * until the daemon's scan attaches a cgroup's socket programs (bpf/net.bpf.c, per
 * cgroup), connect() and bind() of TCP and UDP sockets, and sends with a destination, of
 * a cgroup confined at its creation are denied (EPERM, a `net` event): fail closed, for
 * the moments until the scan. Called by the one program of each socket hook
 * (bpf/socket.bpf.c) with the task's sandbox already known.
 */
#ifndef PYSB_BORN_NET_BPF_H
#define PYSB_BORN_NET_BPF_H

#include "common.bpf.h"
#include "net_verdict.bpf.h"
#include <bpf/bpf_endian.h>

#ifndef AF_INET
#define AF_INET	 2
#define AF_INET6 10
#endif

/* A request of an inet socket (`family`: its own) in a cgroup confined at its creation
 * (PYSB_SB_KERNEL) whose socket programs the daemon has not attached yet; `addr` NULL or
 * at least its family long. */
static __always_inline int born_net(struct pysb_sandbox_cfg *cfg, __u64 cgid, struct socket *sock,
				    __u16 family, struct sockaddr *addr, __u16 op, __u16 dir)
{
	struct pysb_event *e;
	__u16 af = 0;

	if (!(cfg->flags & PYSB_SB_KERNEL) || (family != AF_INET && family != AF_INET6))
		return 0;
	if (addr)
		bpf_probe_read_kernel(&af, sizeof(af), &addr->sa_family);
	/* IPv4's bind and UDP sendto take AF_UNSPEC as AF_INET; the length is the kernel's
	 * to refuse, whatever the family: denied here anyway */
	af = af_unspec_taken(family, af, op);
	if (af != AF_INET && af != AF_INET6)
		return 0; /* AF_UNSPEC: a disconnect */
	e = event_start(cfg, cgid, PYSB_KIND_NET, op, 0, decision_of(cfg));
	if (e) {
		__builtin_memset(&e->net, 0, sizeof(e->net));
		e->net.family = af;
		e->net.type = BPF_CORE_READ(sock, type);
		e->net.dir = dir;
		if (af == AF_INET) {
			struct sockaddr_in *in = (void *)addr;

			e->net.port = bpf_ntohs(BPF_CORE_READ(in, sin_port));
			bpf_probe_read_kernel(e->net.addr, 4, &in->sin_addr);
		} else {
			struct sockaddr_in6 *in6 = (void *)addr;

			e->net.port = bpf_ntohs(BPF_CORE_READ(in6, sin6_port));
			bpf_probe_read_kernel(e->net.addr, 16, &in6->sin6_addr);
		}
		event_send(e);
	}
	return deny_ret(cfg, EPERM);
}

#endif /* PYSB_BORN_NET_BPF_H */
