/* SPDX-License-Identifier: MIT */
/*
 * The ABI between pysb-bpf's BPF programs and its user side: map keys and values, event
 * records, constants. Nothing else lives here. Fixed-width types and explicit padding only,
 * so both compilers lay the structs out the same way (checked by the _Static_asserts).
 *
 * Rule semantics (see docs/policy.md):
 *  - A task is sandboxed when its cgroup, or one of its ancestors, is a key of
 *    `sandboxes`. Everything below applies only to sandboxed tasks.
 *  - File access is decided by the nearest rule found walking from the file up its
 *    ancestry as the kernel resolved it (dentry parents, crossing mounts like d_path does):
 *    the first inode object (its label, see struct pysb_label_req) with an entry in
 *    `file_rules` for this sandbox decides, by its
 *    access bits. No entry up to the root: denied.
 */
#ifndef PYSB_ABI_H
#define PYSB_ABI_H

#ifdef __bpf__
/* vmlinux.h already defines __u8 ... __u64 */
#else
#include <linux/types.h>
#endif

#define PYSB_ABI_VERSION 1

/* Access bits of a file rule, and of a request. */
#define PYSB_ACC_READ	   0x1u /* open for read, list a directory */
#define PYSB_ACC_WRITE	   0x2u /* open for write/append/truncate, create, remove, rename, attrs */
#define PYSB_ACC_EXEC	   0x4u /* execve, mmap/mprotect PROT_EXEC */
/* Rules only: the entry's name stays (no unlink, no rename of it or over it), whatever
 * its directory grants. The policy file a sandbox obeys, in a tree it may write. */
#define PYSB_ACC_KEEP_NAME 0x8u
/* Rules only: this inode alone; the walk from a file below it passes it by (the
 * directory of a Python script, which Python lists to import from: its names, not its
 * files). */
#define PYSB_ACC_ALONE	   0x10u
/* Rules only, set by the compile: the rule grants character devices below it (its path
 * is /dev or below, or a device node itself). A rule on a directory above /dev (`/`)
 * grants files, not the devices that stand for the machine's hardware and the kernel's
 * state (input, sound, video, consoles, other users' terminals, loop-control, fuse, kvm):
 * a character device found through it is refused (bpf/file.bpf.c, device_verdict). */
#define PYSB_ACC_DEVICES   0x20u
#define PYSB_ACC_RO	   (PYSB_ACC_READ | PYSB_ACC_EXEC)
#define PYSB_ACC_RW	   (PYSB_ACC_RO | PYSB_ACC_WRITE)

/* sandbox_cfg.flags */
#define PYSB_SB_AUDIT	0x1u /* report would-be denials, deny nothing */
#define PYSB_SB_EXEC	0x2u /* python-api allows process-exec: execve of exposed binaries */
#define PYSB_SB_DAEMON	0x4u /* kept by `pysb-bpf daemon` on a service's cgroup, not by a run */
#define PYSB_SB_IGNORES 0x8u /* the sandbox has ignore= patterns (the walk skips them if not) */
#define PYSB_SB_KERNEL \
	0x10u /* put on a new cgroup at its creation by bpf/watch.bpf.c: the
				daemon has not confined it yet (no socket programs, no id of
				its own); the daemon's scan replaces it */
#define PYSB_SB_HOLD \
	0x20u /* with KERNEL: not enforced yet; armed (the flag cleared, by
			      bpf/watch.bpf.c) when a task of the cgroup commits an execve,
			      or by the daemon's scan: the runtime's own set-up in the cgroup
			      (runc init, systemd's exec child) runs before its workload */
#define PYSB_SB_HIDDEN \
	0x40u /* the sandbox hides inodes by absolute ignore= paths: no btrfs snapshot,
		 which would copy them as other inodes */
/* A net= rule allows UDP IN on an IPv4 (MCAST4) or IPv6 (MCAST6) multicast address: the
 * program may join groups of that family (bpf/multicast.bpf.h). */
#define PYSB_SB_MCAST4	  0x80u
#define PYSB_SB_MCAST6	  0x100u
/* Confined in place (`attach`, the daemon's bindings): its processes may hold what they
 * had before (a cgroup file in an io_uring ring's registered files, ...); the in-place
 * programs judge it (user/kernel/loader.c, loader_inplace_hooks), a run's never. */
#define PYSB_SB_INPLACE	  0x200u
/* The sandbox has at least PYSB_NET_HOSTS_MIN host prefixes (/32, /128): they are in
 * net4_hosts / net6_hosts too, looked up before the trie (bpf/net_verdict.bpf.h). */
#define PYSB_SB_NET_HOSTS 0x400u

/* Walk limit: a path deeper than this is denied (fail closed), never allowed. */
#define PYSB_MAX_DEPTH		      8192
/* Deepest cgroup level searched for a sandboxed ancestor. */
#define PYSB_MAX_CGROUP_LEVEL	      32
/* The shared cgroup table (map `cgroup_table`, bpf/nearest.h): 2^BITS one-word slots,
 * indexed by the low bits of a cgroup id. User space zeroes it when the generation of
 * `sandboxes` crosses a multiple of PYSB_CGROUP_TABLE_CLEAR_EVERY. */
#define PYSB_CGROUP_TABLE_BITS	      13
#define PYSB_CGROUP_TABLE_SLOTS	      (1u << PYSB_CGROUP_TABLE_BITS)
#define PYSB_CGROUP_TABLE_CLEAR_EVERY (1ULL << 31)

#define PYSB_MAX_SANDBOXES     1024
/* The three tables of map owner_records: records of sandbox id in ipc_owner at
 * [PYSB_OWNER_IPC + id], in key_owner at [PYSB_OWNER_KEY + id], keys of its repeated
 * events in event_dedup at [PYSB_OWNER_DEDUP + id]. */
#define PYSB_OWNER_IPC	       0
#define PYSB_OWNER_KEY	       PYSB_MAX_SANDBOXES
#define PYSB_OWNER_DEDUP       (2 * PYSB_MAX_SANDBOXES)
#define PYSB_OWNER_TABLES      3
#define PYSB_RINGBUF_BYTES     (4u << 20)  /* per sandbox, by default (bpf.events-buffer) */
#define PYSB_RINGBUF_LEARN     (64u << 20) /* under --learn, which must see every access */
#define PYSB_EVENTS_BUFFER_MIN (64u << 10)
#define PYSB_EVENTS_BUFFER_MAX (1u << 30)
#define PYSB_MAX_FILE_RULES    65536
#define PYSB_MAX_MOUNTS	       16384 /* (file system, sandbox) pairs in mount_access */
/* SysV IPC objects created in sandboxes, all sandboxes together (the kernel's own
 * defaults allow 4,096 segments and 32,000 queues and semaphore sets per namespace). */
#define PYSB_MAX_IPC_OBJECTS   65536
/* Kernel keys created in sandboxes, all sandboxes together (LRU: see bpf/keys.bpf.c). */
#define PYSB_MAX_KEYS	       65536

struct pysb_sandbox_cfg {
	__u32 id;    /* sandbox id, part of every rule key of this sandbox */
	__u32 flags; /* PYSB_SB_* */
	__u64 caps;  /* bit N: capability N granted (bpf.capabilities=); lsm/capable refuses
			every other one, in every user namespace */
};

/*
 * The sandbox lookup's per-task cache (task storage `sandbox_cache`, bpf/nearest.h): what
 * the walk answered while the task was in cgroup `cgid` and `sandboxes` at generation
 * `gen`. `sandbox` is the nearest registered cgroup then (0: none); its entry is looked up
 * again at every use. Kernel-only; here for tests/unit/test_nearest.c.
 */
struct pysb_sandbox_cache {
	__u64 cgid; /* 0: never written; ~0: being written */
	__u64 gen;
	__u64 sandbox;
};

/*
 * The cgroups the daemon will claim (bpf/watch.bpf.c, map `cgroup_watch`): a new cgroup
 * whose path (from the hierarchy's root, "/jobs.slice/job-1.scope") matches `glob` gets
 * `cfg` (flagged PYSB_SB_KERNEL) in `sandboxes` before any process can join it. `glob`
 * knows `*` and `?`, neither matching '/'; "" marks a free slot. PYSB_WATCH_PENDING: the
 * daemon's pattern was wider than the kernel's matcher (brackets, escapes): `cfg` is the
 * fail-closed pending sandbox (no rules), and a template match of another slot wins.
 */
#define PYSB_MAX_WATCH	   64
#define PYSB_WATCH_LEN	   512
#define PYSB_WATCH_PENDING 0x1u

struct pysb_watch {
	char glob[PYSB_WATCH_LEN];
	struct pysb_sandbox_cfg cfg;
	__u32 flags; /* PYSB_WATCH_* */
	__u32 _pad;
};

/* Capabilities the kernel numbers (CAP_LAST_CAP is 40 on 6.1 to 7.2); the mask has room
 * for 64. */
#define PYSB_CAP_MAX 64

struct pysb_file_key {
	__u64 label; /* of one inode object (inode_labels), never reused */
	__u32 sandbox;
	__u32 _pad;
};

/*
 * Labelling the inode of a rule path. A rule names one inode object, not its (dev, ino)
 * numbers, which another file can carry (overlayfs without xino; ext4 and xfs reuse the
 * number of a deleted inode). The loader holds the rule path open (O_PATH), puts a
 * request under its thread id in `label_reqs`, and calls fstatfs(2) on the descriptor:
 * lsm/sb_statfs (bpf/file.bpf.c) gives the inode a label (or finds the one it has) and
 * appends it to the request with the descriptor the fstatfs named (a stacked file
 * system's own statfs of its layer, within the same call, is not counted). Up to
 * PYSB_LABEL_BATCH descriptors, one fstatfs each, then one lookup reads their labels in
 * order, each checked against its descriptor: two system calls a path fewer than a
 * request of its own each. Labels come from a 64-bit counter, are never 0 and never reused; an
 * inode's label is forgotten when the inode is freed (lsm/inode_free_security), so its
 * address, reused by another inode later, never carries it.
 */
enum pysb_label_state {
	PYSB_LABEL_PENDING = 1, /* label[n] is the next one given */
	PYSB_LABEL_FULL = 3,	/* inode_labels is full: label[n] could not be given */
};

#define PYSB_LABEL_BATCH 32

struct pysb_label_req {
	__u32 state; /* enum pysb_label_state */
	__u32 n;     /* labels given: label[0] to label[n - 1] */
	__u64 label[PYSB_LABEL_BATCH];
	__s32 fd[PYSB_LABEL_BATCH]; /* the descriptor each was asked through */
};

/* Labelled inodes, all sandboxes together (each inode has one label, shared). */
#define PYSB_MAX_LABELS 131072

/*
 * ignore= rules of a sandbox, matched against each name below the rule that grants
 * access (the exposed root itself and what lies above it are never hidden). The kernel
 * side knows four shapes; the compiler refuses any other pattern rather than drop it.
 */
#define PYSB_MAX_IGNORES 8
#define PYSB_IGNORE_LEN	 32 /* pattern text without its '*', NUL-padded */

enum pysb_ignore_kind {
	PYSB_IGN_EXACT = 1,  /* .env */
	PYSB_IGN_PREFIX = 2, /* .*  id_rsa* */
	PYSB_IGN_SUFFIX = 3, /* *.pem */
	PYSB_IGN_ANY = 4,    /* * */
};

struct pysb_ignore {
	__u8 kind;
	__u8 len; /* bytes of text */
	__u8 _pad[2];
	char text[PYSB_IGNORE_LEN];
};

struct pysb_ignore_set {
	__u32 count;
	struct pysb_ignore p[PYSB_MAX_IGNORES];
};

/* What the policy grants the mount point of a file system (dentry-only walks). */
struct pysb_mount_key {
	__u32 dev;
	__u32 sandbox;
};

struct pysb_file_rule {
	__u32 access; /* PYSB_ACC_* granted */
	__u32 rule;   /* index of the policy line, for events (0 = implicit) */
};

enum pysb_kind {
	PYSB_KIND_FILE = 1,
	PYSB_KIND_EXEC = 2,
	PYSB_KIND_NET = 3,
	PYSB_KIND_UNIX = 4,
	PYSB_KIND_SELF = 5, /* self-protection: bpf(), cgroup escape, ptrace, mount ... */
	PYSB_KIND_CAP = 6,  /* a capability the policy does not grant (bpf/caps.bpf.c) */
};

/* What was attempted. Names for people are in user/events/events.c (op_str). */
enum pysb_op {
	PYSB_OP_OPEN = 1,
	PYSB_OP_MOUNT = 2,
	PYSB_OP_UMOUNT = 3,
	PYSB_OP_PIVOT_ROOT = 4,
	PYSB_OP_CREATE = 5, /* regular file, fifo, socket or device node */
	PYSB_OP_MKDIR = 6,
	PYSB_OP_RMDIR = 7,
	PYSB_OP_UNLINK = 8,
	PYSB_OP_RENAME = 9, /* reported once per end that is denied */
	PYSB_OP_LINK = 10,
	PYSB_OP_SYMLINK = 11,
	PYSB_OP_CHMOD = 12,
	PYSB_OP_CHOWN = 13,
	PYSB_OP_TRUNCATE = 14,
	PYSB_OP_SETATTR = 15, /* utimes and other attribute changes */
	PYSB_OP_SETXATTR = 16,
	PYSB_OP_REMOVEXATTR = 17,
	PYSB_OP_EXEC = 18,
	PYSB_OP_MMAP_EXEC = 19,
	PYSB_OP_MPROTECT_EXEC = 20,
	PYSB_OP_RECEIVE_FD = 21,
	PYSB_OP_BPF = 22,
	PYSB_OP_PTRACE = 23,
	PYSB_OP_SIGNAL = 24,
	PYSB_OP_CGROUP_ESCAPE = 25,
	PYSB_OP_KERNEL_LOAD = 26, /* modules, firmware, kexec images */
	PYSB_OP_CAPABLE = 27,	  /* kind CAP: pysb_event.rule is the capability's number */
	PYSB_OP_IPC = 30,	  /* a SysV IPC object created outside the sandbox */
	PYSB_OP_KEY = 31,	  /* a kernel key or keyring created outside the sandbox */
	/* Issue 16 (signals, ioctls, names and routes); numbered apart from 27.. so other
	 * additions to this list do not collide with them. */
	PYSB_OP_SCHED = 40,	/* nice, ioprio, scheduler, affinity, rlimit of a task outside */
	PYSB_OP_TTY_IOCTL = 41, /* TIOCSTI, TIOCLINUX, TIOCSETD; the foreground, modes, size of a
				   terminal led outside (bpf/tty.bpf.h) */
	PYSB_OP_GETXATTR = 42,	/* getxattr, listxattr */
	PYSB_OP_READLINK = 43,
	PYSB_OP_NOTIFY = 44,	     /* inotify, fanotify, dnotify watch */
	PYSB_OP_SETID_MODE = 45,     /* kind SELF: a set-user-ID (or set-group-ID executable) mode
				  * on a file, by chmod or at creation: never, whatever the rules */
	PYSB_OP_LOCK = 46,	     /* an exclusive lock (flock LOCK_EX, F_WRLCK) or a lease */
	PYSB_OP_KEY_TO_PARENT = 47,  /* KEYCTL_SESSION_TO_PARENT to a parent outside the sandbox */
	PYSB_OP_PIDFD = 48,	     /* kind SELF: a pidfd (pidfs, 6.9+) of a task outside */
	PYSB_OP_SUBVOL_DESTROY = 49, /* kind SELF: a btrfs subvolume destroyed by ioctl */
	PYSB_OP_SNAPSHOT = 50,	     /* kind SELF: a btrfs snapshot, where inodes are hidden */
	PYSB_OP_INSPECT = 51,  /* kind SELF: getpgid, getsid, sched_get*, ioprio_get, capget of a
			       * task outside */
	PYSB_OP_SYSLOG = 52,   /* kind CAP (rule CAP_SYSLOG): the kernel log, which
			       * kernel.dmesg_restrict=0 opens to every user */
	PYSB_OP_PERF = 53,     /* kind CAP (rule CAP_PERFMON): a CPU-wide, kernel or tracepoint
			       * perf event, which kernel.perf_event_paranoid can open to all */
	PYSB_OP_TERMINAL = 54, /* kind SELF: a terminal of a session led outside, opened or
				* received (its pty slave), or typed into (a held pty master) */
	PYSB_OP_MAX,
};

/* Why an exec was denied (pysb_event.flags, kind EXEC). */
#define PYSB_EV_EXEC_POLICY    0x10u /* the policy does not allow process-exec */
#define PYSB_EV_EXEC_ANONYMOUS 0x20u /* memfd, deleted or unlinked file */
/* kind SELF, op IPC: target_pid holds the SysV IPC object's id, not a pid. */
#define PYSB_EV_TARGET_IPC     0x40u
/* kind SELF, op KEY: target_pid holds the key's serial number. */
#define PYSB_EV_TARGET_KEY     0x80u
/* kind UNIX: the peer's socket was made outside the sandbox, and no rule names it itself
 * (a rule on a directory above it grants only the sandbox's own sockets). */
#define PYSB_EV_PEER_OUTSIDE   0x100u
/* kind FILE: a block device, which only a rule naming the device itself grants (its
 * contents are every file of the file system on it). */
#define PYSB_EV_BLOCK_DEVICE   0x200u
/* kind file: a character device, granted by no rule on /dev or below (PYSB_ACC_DEVICES) */
#define PYSB_EV_CHAR_DEVICE    0x400u

enum pysb_decision {
	PYSB_DENY = 1,
	PYSB_AUDIT = 2, /* would have been denied; audit mode let it through */
};

/* ---- network: net= rules, socket families, unix sockets (bpf/net.bpf.c, bpf/unix.bpf.c,
 * user/compile/compile_net.c; semantics in docs/network.md) ---- */

/*
 * net= rules live in two LPM tries keyed by (sandbox, address prefix). The compiler folds
 * into every prefix the rules of all the prefixes that cover it, so the longest match
 * alone gives every rule that applies to an address (DENY before ALLOW stays exact).
 * Each entry names, per protocol and direction, a port set: a partition of 0-65535 into
 * at most PYSB_NET_MAX_RANGES intervals, each allowed or denied (by which DENY rule).
 */
#define PYSB_NET_MAX_PREFIXES 16384 /* per policy and address family */
#define PYSB_NET_MAX_PORTSETS 4096  /* distinct port sets per policy; 0 is "nothing allowed" */
#define PYSB_NET_MAP_PREFIXES 65536 /* capacity of each LPM map, all sandboxes together */
#define PYSB_NET_MAP_PORTSETS 65536 /* capacity of net_ports, all sandboxes together */
#define PYSB_NET_MAX_RANGES   64    /* power of two: intervals of one port set */
#define PYSB_NET_SEARCH_STEPS 7	    /* binary search steps: log2(PYSB_NET_MAX_RANGES) + 1 */
#define PYSB_NET_MAX_RULES    32767 /* net= rules, implicit ones included: the verdict's 15 bits */

/* Index of pysb_net_value.ports: protocol x direction. */
enum pysb_net_slot {
	PYSB_NET_TCP_OUT = 0,
	PYSB_NET_TCP_IN = 1,
	PYSB_NET_UDP_OUT = 2,
	PYSB_NET_UDP_IN = 3,
	PYSB_NET_SLOTS = 4,
};

/* Directions, as in net=: OUT = connect/sendto, IN = bind/listen. */
#define PYSB_NET_IN  0x1u
#define PYSB_NET_OUT 0x2u

struct pysb_net4_key {
	__u32 prefixlen; /* 32 (the sandbox, always matched) + prefix length of addr */
	__u32 sandbox;
	__u8 addr[4]; /* network byte order */
};

struct pysb_net6_key {
	__u32 prefixlen; /* 32 + prefix length of addr */
	__u32 sandbox;
	__u8 addr[16];
};

/*
 * The host prefixes (/32, /128) of a sandbox with PYSB_SB_NET_HOSTS, keyed by the whole
 * address: a host's entry is the trie's longest match for its address (no prefix is
 * longer), so one hash lookup gives what the trie's walk would, whose depth grows with
 * the number of prefixes (a list of 1,000 hosts: about ten levels).
 */
#define PYSB_NET_HOSTS_MIN 16
struct pysb_net4_host_key {
	__u32 sandbox;
	__u8 addr[4];
};

struct pysb_net6_host_key {
	__u32 sandbox;
	__u8 addr[16];
};

struct pysb_net_value {
	__u16 ports[PYSB_NET_SLOTS]; /* port set (pysb_net_ports_key.id) per enum pysb_net_slot */
};

struct pysb_net_ports_key {
	__u32 sandbox;
	__u32 id;
};

/* pysb_net_range.verdict: PYSB_NET_ALLOW, or the 1-based DENY rule (0: no rule matched). */
#define PYSB_NET_ALLOW 0x8000u

struct pysb_net_range {
	__u16 start; /* first port of the interval; it ends where the next one starts */
	__u16 verdict;
};

struct pysb_net_ports {
	__u32 n; /* intervals in use, 1..PYSB_NET_MAX_RANGES; r[0].start == 0 */
	struct pysb_net_range r[PYSB_NET_MAX_RANGES];
};

/* pysb_net_cfg.flags: what the policy's bpf. parameters allow (docs/network.md). */
#define PYSB_NET_UNIX_ABSTRACT 0x1u /* bpf.unix-abstract=allow */
#define PYSB_NET_INET_RAW      0x2u /* bpf.socket-family=raw: SOCK_RAW on IPv4/IPv6 */
#define PYSB_NET_ICMP	       0x4u /* bpf.socket-family=icmp: ping sockets */
#define PYSB_NET_SCTP	       0x8u /* bpf.socket-family=sctp */

struct pysb_net_cfg {
	__u64 families; /* bit N: socket(N, ...) allowed (bpf.socket-family) */
	__u32 flags;	/* PYSB_NET_* above */
	__u32 _pad;
};

/* Operations of network events; numbered apart so the file/exec list can grow. */
enum pysb_net_op {
	PYSB_OP_CONNECT = 64,
	PYSB_OP_SENDMSG = 65, /* sendto/sendmsg/sendmmsg with a destination */
	PYSB_OP_BIND = 66,
	PYSB_OP_LISTEN = 67,
	PYSB_OP_SOCKET = 68,	   /* socket(): family or type not allowed */
	PYSB_OP_NETLINK_SEND = 69, /* a NETLINK_ROUTE request that changes something */
	PYSB_OP_SOURCE_ROUTE = 70, /* IP options or an IPv6 routing header, by setsockopt or
				      control message: the first hop would go unjudged */
	PYSB_OP_MULTICAST = 71,	   /* a multicast membership or source filter (setsockopt): the
				      kernel would report the group to the link */
};

/* What a network event is about (kind NET; kind UNIX uses path). */
struct pysb_net_event {
	__u8 addr[16];	/* as the program gave it, network byte order; IPv4 in addr[0..3] */
	__u16 family;	/* AF_INET, AF_INET6; for PYSB_OP_SOCKET the refused family */
	__u16 port;	/* host byte order; netlink: the message type refused;
			    source route, multicast: the option or control message type */
	__u16 protocol; /* IPPROTO_*; socket(): the protocol argument; netlink: NETLINK_*;
			    source route, multicast: the level (SOL_IP, SOL_IPV6) */
	__u16 type;	/* SOCK_* */
	__u16 dir;	/* PYSB_NET_IN / PYSB_NET_OUT, 0 when not about an address */
	__u16 _pad;
	__u32 _pad2;
};

/* ---- end of network ---- */

#define PYSB_COMM_LEN 16
#define PYSB_PATH_LEN 4096

/* Ring-buffer record; path + path_off is NUL-terminated and may be truncated (flags). */
struct pysb_event {
	__u64 ts_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 cgroup_id;
	__u32 sandbox;
	__u32 pid; /* tgid */
	__u32 tid;
	__u16 kind;	  /* enum pysb_kind */
	__u16 op;	  /* enum pysb_op */
	__u32 access;	  /* PYSB_ACC_* requested */
	__u32 decision;	  /* enum pysb_decision */
	__u32 flags;	  /* PYSB_EV_* */
	__s32 path_len;	  /* bytes of the path incl. NUL, or negative errno */
	__u32 path_off;	  /* the path starts at path + path_off (paths built backwards) */
	__u32 rule;	  /* file rule that came closest (pysb_file_rule.rule), 0 = none;
			   kind NET: the 1-based net= rule that denied (pysb_net_range);
			   kind CAP: the capability refused (CAP_* number) */
	__u32 target_pid; /* ptrace, signal: the task outside the sandbox */
	__u32 dev;	  /* PYSB_EV_PATH_FSROOT: the file system's s_dev (kernel encoding) */
	__u32 repeat;	  /* occurrences this record stands for (>= 1) */
	__u32 exec_id;	  /* the task's self_exec_id (low 32 bits): bumped by each execve */
	__u64 start_ns;	  /* the thread group leader's start_time: with pid and exec_id, names
			     one executable image (user space caches its /proc/PID/exe) */
	__u64 first_ns;	  /* the first occurrence (ts_ns is the last one) */
	__u64 seq;	  /* kernel dedup: occurrences of this record's key so far, this one's
			     included (the record stands for those after the previous record
			     of the key); 0: not tracked, the record stands for `repeat` */
	__u64 key_hash;	  /* kernel dedup: the hash of the path or net fields in the key */
	char comm[PYSB_COMM_LEN];
	union {
		char path[PYSB_PATH_LEN];
		struct pysb_net_event net; /* kind NET (network events have no path) */
	};
};

#define PYSB_EV_PATH_TRUNC  0x1u
/* The path goes from its file system's root, not the task's: the hook has no mount
 * (inode_getxattr, inode_setattr, ...). User space puts the mount point in front
 * (events_resolve_path) and clears the flag; it stays when no mount matches. */
#define PYSB_EV_PATH_FSROOT 0x2u
#define PYSB_EVENT_HEAD_LEN (104 + PYSB_COMM_LEN)

/*
 * Kernel dedup of repeated events (event_send, bpf/common.bpf.h): a key per (sandbox,
 * process, kind, operation, access, decision, flags, rule, target, path or address). The
 * first occurrence of a key is sent; later ones are counted (`total`) and sent at most
 * once per PYSB_DEDUP_INTERVAL_NS, the record carrying `seq` = total then. What was
 * counted after the last record is read from the map by user space at the end of a run
 * (and by the daemon every second): a count never vanishes. A full map: the event is
 * sent itself, untracked. User space removes a sandbox's keys when its id is allocated
 * and released.
 */
#define PYSB_DEDUP_ENTRIES     16384
#define PYSB_DEDUP_INTERVAL_NS 1000000000ull

struct pysb_dedup_key {
	__u32 sandbox;
	__u32 pid;
	__u16 kind;
	__u16 op;
	__u32 access;
	__u32 decision;
	__u32 flags;
	__u32 rule;
	__u32 target_pid;
	__u64 hash; /* of the path (its bytes) or the net fields */
};

struct pysb_dedup_val {
	__u64 total;	    /* occurrences of the key */
	__u64 emitted;	    /* total at the last record delivered to the ring */
	__u64 last_emit_ns; /* when that record was sent (0: none yet) */
	__u64 first_ns;	    /* the first occurrence after it (0: none) */
	__u64 last_ns;	    /* the last occurrence */
};

/* Reasons an event was not delivered (index of the `lost` map). The ring buffer holds
 * each record at its real size: the header up to `path`, then path_len bytes of path
 * (path_off 0), or the net fields; user space reads at least PYSB_EVENT_HEAD_LEN. */
enum pysb_lost {
	PYSB_LOST_RINGBUF_FULL = 0, /* bpf_ringbuf_reserve failed: consumer too slow */
	PYSB_LOST_NO_READER = 1,    /* the sandbox's ring buffer is gone (pysb-bpf killed) */
	PYSB_LOST_PREEMPTED = 2,    /* this CPU's event buffer was held by a preempted hook */
	PYSB_LOST_MAX = 3,
};

_Static_assert(sizeof(struct pysb_sandbox_cfg) == 16, "pysb_sandbox_cfg layout");
_Static_assert(sizeof(struct pysb_sandbox_cache) == 24, "pysb_sandbox_cache layout");
_Static_assert(sizeof(struct pysb_watch) == PYSB_WATCH_LEN + 24, "pysb_watch layout");
_Static_assert(sizeof(struct pysb_file_key) == 16, "pysb_file_key layout");
_Static_assert(sizeof(struct pysb_file_rule) == 8, "pysb_file_rule layout");
_Static_assert(sizeof(struct pysb_label_req) == 8 + 12 * PYSB_LABEL_BATCH, "pysb_label_req layout");
_Static_assert(sizeof(struct pysb_mount_key) == 8, "pysb_mount_key layout");
_Static_assert(sizeof(struct pysb_ignore) == 4 + PYSB_IGNORE_LEN, "pysb_ignore layout");
_Static_assert(sizeof(struct pysb_ignore_set) == 4 + PYSB_MAX_IGNORES * (4 + PYSB_IGNORE_LEN),
	       "pysb_ignore_set layout");
_Static_assert(sizeof(struct pysb_event) == 104 + PYSB_COMM_LEN + PYSB_PATH_LEN,
	       "pysb_event layout");
_Static_assert(__builtin_offsetof(struct pysb_event, comm) == 104, "pysb_event header layout");
_Static_assert(sizeof(struct pysb_dedup_key) == 40, "pysb_dedup_key layout");

/* The dedup key of event e but its hash, as both sides build it: the kernel hashes the
 * path it sends (bpf/event.bpf.c), user space takes e->key_hash as the kernel put it. */
static inline __attribute__((always_inline)) void pysb_dedup_key_fields(struct pysb_dedup_key *k,
									const struct pysb_event *e)
{
	k->sandbox = e->sandbox;
	k->pid = e->pid;
	k->kind = e->kind;
	k->op = e->op;
	k->access = e->access;
	k->decision = e->decision;
	k->flags = e->flags;
	k->rule = e->rule;
	k->target_pid = e->target_pid;
}
_Static_assert(sizeof(struct pysb_dedup_val) == 40, "pysb_dedup_val layout");

_Static_assert(sizeof(struct pysb_net4_key) == 12, "pysb_net4_key layout");
_Static_assert(sizeof(struct pysb_net6_key) == 24, "pysb_net6_key layout");
_Static_assert(sizeof(struct pysb_net_value) == 8, "pysb_net_value layout");
_Static_assert(sizeof(struct pysb_net4_host_key) == 8, "pysb_net4_host_key layout");
_Static_assert(sizeof(struct pysb_net6_host_key) == 20, "pysb_net6_host_key layout");
_Static_assert(sizeof(struct pysb_net_ports_key) == 8, "pysb_net_ports_key layout");
_Static_assert(sizeof(struct pysb_net_ports) == 4 + 4 * PYSB_NET_MAX_RANGES,
	       "pysb_net_ports layout");
_Static_assert(sizeof(struct pysb_net_cfg) == 16, "pysb_net_cfg layout");
_Static_assert(sizeof(struct pysb_net_event) == 32, "pysb_net_event layout");

#endif /* PYSB_ABI_H */
