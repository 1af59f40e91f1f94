/* SPDX-License-Identifier: MIT */
/* The names of the ABI's values (abi_names.h). */
#include <stdio.h>
#include <sys/socket.h>
#include <string.h>

#include "abi_names.h"
#include "pysb_abi.h"

const char *access_str(unsigned access, char *buf, size_t len)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = { { PYSB_ACC_READ, "read" },
		      { PYSB_ACC_WRITE, "write" },
		      { PYSB_ACC_EXEC, "exec" },
		      { PYSB_ACC_KEEP_NAME, "keep-name" },
		      { PYSB_ACC_ALONE, "alone" } };
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(access & names[i].bit))
			continue;
		off += snprintf(buf + off, off < len ? len - off : 0, "%s%s", off ? "," : "",
				names[i].name);
	}
	if (!off)
		snprintf(buf, len, "none");
	return buf;
}

const char *kind_str(unsigned kind)
{
	switch (kind) {
	case PYSB_KIND_FILE:
		return "file";
	case PYSB_KIND_EXEC:
		return "exec";
	case PYSB_KIND_NET:
		return "net";
	case PYSB_KIND_UNIX:
		return "unix";
	case PYSB_KIND_SELF:
		return "self";
	case PYSB_KIND_CAP:
		return "capability";
	}
	return "unknown";
}

static const char *const OP_NAMES[PYSB_OP_MAX] = {
	[PYSB_OP_OPEN] = "open",
	[PYSB_OP_MOUNT] = "mount",
	[PYSB_OP_UMOUNT] = "umount",
	[PYSB_OP_PIVOT_ROOT] = "pivot_root",
	[PYSB_OP_CREATE] = "create",
	[PYSB_OP_MKDIR] = "mkdir",
	[PYSB_OP_RMDIR] = "rmdir",
	[PYSB_OP_UNLINK] = "unlink",
	[PYSB_OP_RENAME] = "rename",
	[PYSB_OP_LINK] = "link",
	[PYSB_OP_SYMLINK] = "symlink",
	[PYSB_OP_CHMOD] = "chmod",
	[PYSB_OP_CHOWN] = "chown",
	[PYSB_OP_TRUNCATE] = "truncate",
	[PYSB_OP_SETATTR] = "setattr",
	[PYSB_OP_SETXATTR] = "setxattr",
	[PYSB_OP_REMOVEXATTR] = "removexattr",
	[PYSB_OP_EXEC] = "exec",
	[PYSB_OP_MMAP_EXEC] = "mmap-exec",
	[PYSB_OP_MPROTECT_EXEC] = "mprotect-exec",
	[PYSB_OP_RECEIVE_FD] = "receive-fd",
	[PYSB_OP_BPF] = "bpf",
	[PYSB_OP_PTRACE] = "ptrace",
	[PYSB_OP_SIGNAL] = "signal",
	[PYSB_OP_CGROUP_ESCAPE] = "cgroup-escape",
	[PYSB_OP_KERNEL_LOAD] = "kernel-load",
	[PYSB_OP_IPC] = "ipc",
	[PYSB_OP_KEY] = "key",
	[PYSB_OP_SCHED] = "sched",
	[PYSB_OP_TTY_IOCTL] = "tty-ioctl",
	[PYSB_OP_GETXATTR] = "getxattr",
	[PYSB_OP_READLINK] = "readlink",
	[PYSB_OP_NOTIFY] = "notify",
	[PYSB_OP_SETID_MODE] = "setid-mode",
	[PYSB_OP_LOCK] = "lock",
	[PYSB_OP_KEY_TO_PARENT] = "key-to-parent",
	[PYSB_OP_SUBVOL_DESTROY] = "subvol-destroy",
	[PYSB_OP_SNAPSHOT] = "snapshot",
	[PYSB_OP_PIDFD] = "pidfd",
	[PYSB_OP_CAPABLE] = "capable",
	[PYSB_OP_INSPECT] = "inspect",
	[PYSB_OP_SYSLOG] = "syslog",
	[PYSB_OP_PERF] = "perf",
	[PYSB_OP_TERMINAL] = "terminal",
};

const char *op_str(unsigned op)
{
	return op < PYSB_OP_MAX && OP_NAMES[op] ? OP_NAMES[op] : "unknown";
}

const char *net_op_str(unsigned op)
{
	switch (op) {
	case PYSB_OP_CONNECT:
		return "connect";
	case PYSB_OP_SENDMSG:
		return "sendmsg";
	case PYSB_OP_BIND:
		return "bind";
	case PYSB_OP_LISTEN:
		return "listen";
	case PYSB_OP_SOCKET:
		return "socket";
	case PYSB_OP_NETLINK_SEND:
		return "netlink-send";
	case PYSB_OP_SOURCE_ROUTE:
		return "source-route";
	case PYSB_OP_MULTICAST:
		return "multicast";
	}
	return "unknown";
}

static const char *const LOST_NAMES[PYSB_LOST_MAX] = {
	[PYSB_LOST_RINGBUF_FULL] = "ringbuf-full",
	[PYSB_LOST_NO_READER] = "no-reader",
	[PYSB_LOST_PREEMPTED] = "preempted",
};

const char *events_lost_name(unsigned reason)
{
	return reason < PYSB_LOST_MAX ? LOST_NAMES[reason] : "unknown";
}

unsigned op_from_name(const char *name)
{
	for (unsigned op = 1; op < PYSB_OP_MAX; op++)
		if (OP_NAMES[op] && !strcmp(OP_NAMES[op], name))
			return op;
	for (unsigned op = PYSB_OP_CONNECT; op <= PYSB_OP_MULTICAST; op++)
		if (!strcmp(net_op_str(op), name))
			return op;
	return 0;
}

bool op_on_parent(unsigned op)
{
	switch (op) {
	case PYSB_OP_CREATE:
	case PYSB_OP_MKDIR:
	case PYSB_OP_RMDIR:
	case PYSB_OP_UNLINK:
	case PYSB_OP_RENAME:
	case PYSB_OP_LINK:
	case PYSB_OP_SYMLINK:
		return true;
	}
	return false;
}

const char *sock_type_name(unsigned type)
{
	switch (type) {
	case SOCK_STREAM:
		return "stream";
	case SOCK_DGRAM:
		return "dgram";
	case SOCK_RAW:
		return "raw";
	case SOCK_SEQPACKET:
		return "seqpacket";
	}
	return NULL;
}
