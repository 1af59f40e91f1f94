/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Multicast memberships (found by an adversary, round 21): joining a group needs no
 * capability, and the kernel then sends IGMP/MLD membership reports naming the group (and
 * the sources of a filter) to every router and snooping switch of the link: 14 free bytes
 * per IPv6 join left a program that has no net= rule at all. Refused, in
 * lsm/socket_setsockopt (bpf/net.bpf.c), on IPv4 and IPv6 sockets:
 *   SOL_IP    IP_ADD_MEMBERSHIP .. MCAST_MSFILTER (35-48): joins, leaves, source
 *             filters (a blocked or added source is in the report too)
 *   SOL_IPV6  IPV6_ADD_MEMBERSHIP, IPV6_DROP_MEMBERSHIP, IPV6_JOIN_ANYCAST (its
 *             solicited-node group is reported), IPV6_LEAVE_ANYCAST, MCAST_* (42-48)
 * unless a net= rule allows UDP IN on a multicast address of the level's family (SOL_IP:
 * 224.0.0.0/4, SOL_IPV6: ff00::/8), which user space computes when it compiles the policy
 * (PYSB_SB_MCAST4, PYSB_SB_MCAST6). The group itself is not judged: the hook does not see
 * the option's value, and reading it from the caller's memory would judge bytes another
 * thread can change before the kernel copies them.                        -> -EPERM
 * With an event (kind net, op multicast); audit mode reports and allows.
 */
#ifndef PYSB_MULTICAST_BPF_H
#define PYSB_MULTICAST_BPF_H

#include "common.bpf.h"
#include "source_route.bpf.h" /* SOL_IP, SOL_IPV6 */

#define IP_ADD_MEMBERSHIP    35 /* the first of SOL_IP's membership options */
#define MCAST_JOIN_GROUP     42 /* the MCAST_* options, at either level */
#define MCAST_MSFILTER	     48 /* the last of them */
#define IPV6_ADD_MEMBERSHIP  20 /* IPV6_JOIN_GROUP */
#define IPV6_DROP_MEMBERSHIP 21
#define IPV6_JOIN_ANYCAST    27
#define IPV6_LEAVE_ANYCAST   28

/* The flag a membership option of `level` needs, or 0 when it is no such option. */
static __always_inline __u32 multicast_option(int level, int name)
{
	if (level == SOL_IP && name >= IP_ADD_MEMBERSHIP && name <= MCAST_MSFILTER)
		return PYSB_SB_MCAST4;
	if (level == SOL_IPV6 && (name == IPV6_ADD_MEMBERSHIP || name == IPV6_DROP_MEMBERSHIP ||
				  name == IPV6_JOIN_ANYCAST || name == IPV6_LEAVE_ANYCAST ||
				  (name >= MCAST_JOIN_GROUP && name <= MCAST_MSFILTER)))
		return PYSB_SB_MCAST6;
	return 0;
}

/* A sandboxed task's membership option on an inet socket: allowed by the policy's flag,
 * or refused with an event. */
static __always_inline int multicast_check(struct pysb_sandbox_cfg *cfg, __u64 cgid,
					   struct socket *sock, int level, int name, __u32 need)
{
	if (cfg->flags & need)
		return 0;
	return sockopt_denied(cfg, cgid, sock, PYSB_OP_MULTICAST, level, name, PYSB_NET_IN);
}

#endif /* PYSB_MULTICAST_BPF_H */
