/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unix-domain sockets, with py-sandboxes' semantics (FORMAT-NOTES 2.3): a unix socket is
 * reached through the file system, so reaching one is writing to it.
 *
 * Hooks (global `lsm/` programs acting only on sandboxed tasks):
 *   lsm/unix_stream_connect  connect() of stream and seqpacket sockets
 *   lsm/unix_may_send        connect() of datagram sockets, and every datagram sent
 *   (lsm/socket_bind, socket_connect, socket_sendmsg: abstract names and the implicit
 *   autobind, checked by the one program of each of those hooks, bpf/socket.bpf.c, with
 *   bpf/unix_autobind.bpf.h)
 *
 * A peer bound to a path needs WRITE (expose-rw) on that path: the path it was bound at,
 * walked like a file (bpf/path.bpf.h), so a hard link or another spelling of docker.sock
 * reaches nothing. A peer bound by a process outside the sandbox (its socket's cgroup,
 * set when it was created, is not the sandbox's) is a server acting for whoever connects:
 * tmux, ssh-agent, the session bus, an X server run commands or sign as the user, outside
 * the sandbox. It needs a rule naming the socket itself (expose-rw=${SSH_AUTH_SOCK}); a
 * rule on a directory above it (expose-rw=/tmp, /run/user/1000) grants the files there
 * and the sandbox's own sockets, not the servers of others (docs/design.md). A peer with an abstract name needs bpf.unix-abstract=allow, and so does
 * binding one. A peer with no name at all can only be a socketpair() end or an accepted
 * connection: allowed. Binding a pathname socket creates a file: lsm/path_mknod in
 * bpf/file.bpf.c asks WRITE on its directory.
 * Default: deny, -EACCES (path) or -EPERM (abstract), with an event naming the socket.
 */
#include "path.bpf.h"
#include "task.bpf.h"

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
	__u32 id, rule = 0, flags = 0;
	__u64 cgid;
	int err;

	cfg = current_sandbox(&cgid);
	if (!cfg || !peer)
		return 0;
	addr = BPF_CORE_READ(u, addr);
	if (!addr)
		return 0; /* unnamed: socketpair() or an accepted connection */
	d = BPF_CORE_READ(u, path.dentry);
	if (d && !cgroup_under(BPF_CORE_READ(peer, sk_cgrp_data.cgroup), cgid)) {
		/* a server outside: only a rule on the socket itself */
		if (exact_rule_access(d, cfg->id, &rule) & PYSB_ACC_WRITE)
			return 0;
		flags = PYSB_EV_PEER_OUTSIDE;
		err = EACCES;
	} else if (d) {
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
		e->flags |= flags;
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
