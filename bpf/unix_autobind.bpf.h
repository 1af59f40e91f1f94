/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Abstract unix names, the socket-level part of bpf/unix.bpf.c's concern: called by the
 * one program of each socket hook (bpf/socket.bpf.c) for a sandboxed task's AF_UNIX
 * request, with its sandbox (cfg, cgid) already known.
 *
 *   bind()       of an abstract name, or an explicit autobind (no name)
 *   connect(), sendmsg()
 *                the implicit autobind: connect() or sendmsg() of an unnamed socket with
 *                SO_PASSCRED or SO_PASSPIDFD set gives it an abstract name before any
 *                other hook runs; refused like bind() of one (a connected socketpair end
 *                sending to its peer is let through: such a socket takes nothing from
 *                anyone else and cannot listen). Also connect(AF_UNSPEC), which would
 *                open an abstractly named datagram socket to every sender.
 *
 * All need bpf.unix-abstract=allow; refused with -EPERM and a `unix` event.
 */
#ifndef PYSB_UNIX_AUTOBIND_BPF_H
#define PYSB_UNIX_AUTOBIND_BPF_H

#include "common.bpf.h"

#ifndef AF_UNIX
#define AF_UNIX 1
#endif
#define AF_UNSPEC 0
#ifndef UNIX_PATH_MAX
#define UNIX_PATH_MAX 108
#endif
/* Would the kernel autobind this socket (unix_may_passcred)? 7.x keeps SO_PASSCRED and
 * SO_PASSPIDFD in struct sock; before, they are bits 3 and 7 of socket->flags. */
#define SOCK_PASSCRED  3
#define SOCK_PASSPIDFD 7

struct sock___scm {
	__u8 sk_scm_credentials : 1;
	__u8 sk_scm_pidfd : 1;
} __attribute__((preserve_access_index));

static __always_inline bool passes_creds(struct socket *sock, struct sock *sk)
{
	unsigned long flags;

	if (bpf_core_field_exists(struct sock___scm, sk_scm_credentials)) {
		struct sock___scm *s = (struct sock___scm *)sk;

		return BPF_CORE_READ_BITFIELD_PROBED(s, sk_scm_credentials) ||
		       BPF_CORE_READ_BITFIELD_PROBED(s, sk_scm_pidfd);
	}
	flags = BPF_CORE_READ(sock, flags);
	return (flags & (1UL << SOCK_PASSCRED)) || (flags & (1UL << SOCK_PASSPIDFD));
}

/* An abstract name (`sun`, `len` bytes of sun_path; len 0: an autobind) refused unless
 * bpf.unix-abstract=allow; 0 when allowed. */
static __always_inline int abstract_name_check(struct pysb_sandbox_cfg *cfg, __u64 cgid,
					       struct sockaddr_un *sun, int len)
{
	struct pysb_net_cfg *nc;
	struct pysb_event *e;
	__u32 id = cfg->id;

	nc = bpf_map_lookup_elem(&net_cfg, &id);
	if (nc && (nc->flags & PYSB_NET_UNIX_ABSTRACT))
		return 0;
	e = event_start(cfg, cgid, PYSB_KIND_UNIX, PYSB_OP_BIND, PYSB_ACC_WRITE, decision_of(cfg));
	if (e) {
		if (len > UNIX_PATH_MAX)
			len = UNIX_PATH_MAX;
		if (sun && len > 0) {
			bpf_probe_read_kernel(e->path, len & 127, sun->sun_path);
			e->path[len & 127] = '\0';
			e->path_len = len + 1;
		} /* no name: printed as (autobind) */
		event_send(e);
	}
	return deny_ret(cfg, EPERM);
}

/* bind() with an AF_UNIX address (at least its family, addrlen >= 2). */
static __always_inline int unix_bind_check(struct pysb_sandbox_cfg *cfg, __u64 cgid,
					   struct sockaddr *address, int addrlen)
{
	struct sockaddr_un *sun = (struct sockaddr_un *)address;
	int len = addrlen - (int)sizeof(__u16);
	char first = 0;

	if (len > 0) {
		bpf_probe_read_kernel(&first, 1, &sun->sun_path[0]);
		if (first)
			return 0; /* a path: a file creation, judged by lsm/path_mknod */
	}
	/* An abstract name, or len 0: autobind, which gives the socket an abstract name. */
	return abstract_name_check(cfg, cgid, sun, len);
}

/* An unnamed unix socket (sk: its sock) that the kernel would name on this connect or send. */
static __always_inline bool would_autobind(struct socket *sock, struct sock *sk)
{
	return !BPF_CORE_READ((struct unix_sock *)sk, addr) && passes_creds(sock, sk);
}

/* connect() of an AF_UNIX socket. */
static __always_inline int unix_connect_check(struct pysb_sandbox_cfg *cfg, __u64 cgid,
					      struct socket *sock, struct sock *sk,
					      struct sockaddr *address, int addrlen)
{
	struct unix_address *addr;
	char first = 1;

	if (would_autobind(sock, sk))
		return abstract_name_check(cfg, cgid, NULL, 0);
	if (addrlen < (int)sizeof(__u16) || BPF_CORE_READ(address, sa_family) != AF_UNSPEC)
		return 0;
	/* Disconnecting: a socket with an abstract name then takes datagrams from anyone. */
	addr = BPF_CORE_READ((struct unix_sock *)sk, addr);
	if (!addr || BPF_CORE_READ(addr, len) <= (int)sizeof(__u16))
		return 0;
	bpf_probe_read_kernel(&first, 1, &addr->name[0].sun_path[0]);
	return first ? 0 : abstract_name_check(cfg, cgid, NULL, 0);
}

/* sendmsg() on an AF_UNIX socket. */
static __always_inline int unix_sendmsg_check(struct pysb_sandbox_cfg *cfg, __u64 cgid,
					      struct socket *sock, struct sock *sk,
					      struct msghdr *msg)
{
	if (!would_autobind(sock, sk))
		return 0;
	if (!BPF_CORE_READ(msg, msg_namelen) && BPF_CORE_READ((struct unix_sock *)sk, peer))
		return 0; /* a connected end (socketpair) sending to its peer */
	return abstract_name_check(cfg, cgid, NULL, 0);
}

#endif /* PYSB_UNIX_AUTOBIND_BPF_H */
