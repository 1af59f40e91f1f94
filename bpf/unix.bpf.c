/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unix-domain sockets, with py-sandboxes' semantics (FORMAT-NOTES 2.3): a unix socket is
 * reached through the file system, so reaching one is writing to it.
 *
 * Hooks (global `lsm/` programs acting only on sandboxed tasks):
 *   lsm/unix_stream_connect  connect() of stream and seqpacket sockets
 *   lsm/unix_may_send        connect() of datagram sockets, and every datagram sent
 *   lsm/socket_bind          bind() of an abstract name, or an explicit autobind
 *   lsm/socket_connect, lsm/socket_sendmsg
 *                            the implicit autobind: connect() or sendmsg() of an unnamed
 *                            socket with SO_PASSCRED or SO_PASSPIDFD set gives it an
 *                            abstract name before any other hook runs; refused like
 *                            bind() of one (a connected socketpair end sending to its
 *                            peer is let through: such a socket takes nothing from
 *                            anyone else and cannot listen). Also connect(AF_UNSPEC),
 *                            which would open an abstractly named datagram socket to
 *                            every sender.
 *
 * A peer bound to a path needs WRITE (expose-rw) on that path: the path it was bound at,
 * walked like a file (bpf/path.bpf.h), so a hard link or another spelling of docker.sock
 * reaches nothing. A peer with an abstract name needs bpf.unix-abstract=allow, and so does
 * binding one. A peer with no name at all can only be a socketpair() end or an accepted
 * connection: allowed. Binding a pathname socket creates a file: lsm/path_mknod in
 * bpf/file.bpf.c asks WRITE on its directory.
 * Default: deny, -EACCES (path) or -EPERM (abstract), with an event naming the socket.
 */
#include "path.bpf.h"

#define AF_UNIX	      1
#define UNIX_PATH_MAX 108

/* Fills e->path with the peer's name: the path, or NUL + the abstract name. */
static __always_inline void event_set_unix_name(struct pysb_event *e, struct unix_address *addr)
{
	int len = BPF_CORE_READ(addr, len) - (int)sizeof(__u16);

	if (len <= 0)
		return;
	if (len > UNIX_PATH_MAX)
		len = UNIX_PATH_MAX;
	bpf_probe_read_kernel(e->path, len & 127, &addr->name[0].sun_path);
	e->path[len & 127] = '\0';
	e->path_len = len + 1;
}

static __always_inline int unix_peer_check(__u16 op, struct sock *peer)
{
	struct unix_sock *u = (struct unix_sock *)peer;
	struct pysb_sandbox_cfg *cfg;
	struct unix_address *addr;
	struct pysb_event *e;
	struct dentry *d;
	__u32 id, rule = 0;
	__u64 cgid;
	int err;

	cfg = current_sandbox(&cgid);
	if (!cfg || !peer)
		return 0;
	addr = BPF_CORE_READ(u, addr);
	if (!addr)
		return 0; /* unnamed: socketpair() or an accepted connection */
	d = BPF_CORE_READ(u, path.dentry);
	if (d) {
		struct walk_ctx c;

		if (walk_from(&c, d, BPF_CORE_READ(u, path.mnt), cfg) & PYSB_ACC_WRITE)
			return 0;
		rule = c.found ? c.rule : 0;
		err = EACCES;
	} else {
		struct pysb_net_cfg *nc;

		id = cfg->id;
		nc = bpf_map_lookup_elem(&net_cfg, &id);
		if (nc && (nc->flags & PYSB_NET_UNIX_ABSTRACT))
			return 0;
		err = EPERM;
	}
	e = event_start(cfg, cgid, PYSB_KIND_UNIX, op, PYSB_ACC_WRITE, decision_of(cfg));
	if (e) {
		e->rule = rule;
		event_set_unix_name(e, addr);
		event_send(e);
	}
	return deny_ret(cfg, err);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(pysb_unix_stream_connect, struct sock *sock, struct sock *other, struct sock *newsk)
{
	return unix_peer_check(PYSB_OP_CONNECT, other);
}

SEC("lsm/unix_may_send")
int BPF_PROG(pysb_unix_may_send, struct socket *sock, struct socket *other)
{
	return unix_peer_check(PYSB_OP_SENDMSG, BPF_CORE_READ(other, sk));
}

SEC("lsm/socket_bind")
int BPF_PROG(pysb_unix_bind, struct socket *sock, struct sockaddr *address, int addrlen)
{
	struct sockaddr_un *sun = (struct sockaddr_un *)address;
	struct pysb_sandbox_cfg *cfg;
	struct pysb_net_cfg *nc;
	struct pysb_event *e;
	char first = 0;
	__u32 id;
	__u64 cgid;
	int len;

	if (addrlen < (int)sizeof(__u16) || BPF_CORE_READ(address, sa_family) != AF_UNIX)
		return 0; /* too short: the kernel refuses it (EINVAL) */
	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	len = addrlen - (int)sizeof(__u16);
	if (len > 0) {
		bpf_probe_read_kernel(&first, 1, &sun->sun_path[0]);
		if (first)
			return 0; /* a path: a file creation, judged by lsm/path_mknod */
	}
	id = cfg->id;
	nc = bpf_map_lookup_elem(&net_cfg, &id);
	if (nc && (nc->flags & PYSB_NET_UNIX_ABSTRACT))
		return 0;
	/* An abstract name, or len 0: autobind, which gives the socket an abstract name. */
	e = event_start(cfg, cgid, PYSB_KIND_UNIX, PYSB_OP_BIND, PYSB_ACC_WRITE, decision_of(cfg));
	if (e) {
		if (len > UNIX_PATH_MAX)
			len = UNIX_PATH_MAX;
		if (len > 0) {
			bpf_probe_read_kernel(e->path, len & 127, sun->sun_path);
			e->path[len & 127] = '\0';
			e->path_len = len + 1;
		}
		event_send(e);
	}
	return deny_ret(cfg, EPERM);
}

/*
 * Would the kernel autobind this socket (unix_may_passcred)? 7.x keeps SO_PASSCRED and
 * SO_PASSPIDFD in struct sock; before, they are bits 3 and 7 of socket->flags.
 */
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

/* An autobind of `sock` refused unless bpf.unix-abstract=allow; 0 when allowed. */
static __always_inline int autobind_check(struct socket *sock)
{
	struct pysb_sandbox_cfg *cfg;
	struct pysb_net_cfg *nc;
	struct pysb_event *e;
	__u32 id;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	id = cfg->id;
	nc = bpf_map_lookup_elem(&net_cfg, &id);
	if (nc && (nc->flags & PYSB_NET_UNIX_ABSTRACT))
		return 0;
	e = event_start(cfg, cgid, PYSB_KIND_UNIX, PYSB_OP_BIND, PYSB_ACC_WRITE, decision_of(cfg));
	if (e)
		event_send(e); /* no name: printed as (autobind) */
	return deny_ret(cfg, EPERM);
}

/* An unnamed unix socket that the kernel would name on this connect or send. */
static __always_inline bool would_autobind(struct socket *sock, struct sock **skp)
{
	struct sock *sk = BPF_CORE_READ(sock, sk);

	*skp = sk;
	if (!sk || BPF_CORE_READ(sk, __sk_common.skc_family) != AF_UNIX)
		return false;
	if (BPF_CORE_READ((struct unix_sock *)sk, addr))
		return false;
	return passes_creds(sock, sk);
}

#define AF_UNSPEC 0

SEC("lsm/socket_connect")
int BPF_PROG(pysb_unix_connect, struct socket *sock, struct sockaddr *address, int addrlen)
{
	struct unix_address *addr;
	struct sock *sk;
	char first = 1;

	if (would_autobind(sock, &sk))
		return autobind_check(sock);
	if (!sk || BPF_CORE_READ(sk, __sk_common.skc_family) != AF_UNIX ||
	    addrlen < (int)sizeof(__u16) || BPF_CORE_READ(address, sa_family) != AF_UNSPEC)
		return 0;
	/* Disconnecting: a socket with an abstract name then takes datagrams from anyone. */
	addr = BPF_CORE_READ((struct unix_sock *)sk, addr);
	if (!addr || BPF_CORE_READ(addr, len) <= (int)sizeof(__u16))
		return 0;
	bpf_probe_read_kernel(&first, 1, &addr->name[0].sun_path[0]);
	return first ? 0 : autobind_check(sock);
}

SEC("lsm/socket_sendmsg")
int BPF_PROG(pysb_unix_sendmsg, struct socket *sock, struct msghdr *msg, int size)
{
	struct sock *sk;

	if (!would_autobind(sock, &sk))
		return 0;
	if (!BPF_CORE_READ(msg, msg_namelen) && BPF_CORE_READ((struct unix_sock *)sk, peer))
		return 0; /* a connected end (socketpair) sending to its peer */
	return autobind_check(sock);
}
