/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "events.h"

const char *access_str(unsigned access, char *buf, size_t len)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = { { PYSB_ACC_READ, "read" }, { PYSB_ACC_WRITE, "write" }, { PYSB_ACC_EXEC, "exec" } };
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
	case PYSB_KIND_FILE: return "file";
	case PYSB_KIND_EXEC: return "exec";
	case PYSB_KIND_NET: return "net";
	case PYSB_KIND_UNIX: return "unix";
	case PYSB_KIND_SELF: return "self";
	}
	return "unknown";
}

const char *op_str(unsigned op)
{
	static const char *const names[PYSB_OP_MAX] = {
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
	};

	return op < PYSB_OP_MAX && names[op] ? names[op] : "unknown";
}

const char *event_path(const struct pysb_event *e)
{
	if (e->path_len <= 0 || e->path_off >= PYSB_PATH_LEN)
		return NULL;
	return e->path + e->path_off;
}

/* Paths may hold any byte; control characters would forge lines on a terminal. */
static void print_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f || c == '\\')
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

void event_print_line(FILE *f, const struct pysb_event *e)
{
	char acc[32];
	char comm[PYSB_COMM_LEN + 1];

	memcpy(comm, e->comm, PYSB_COMM_LEN);
	comm[PYSB_COMM_LEN] = '\0';
	const char *path = event_path(e);

	fprintf(f, "pysb-bpf: %s %s %s", e->decision == PYSB_AUDIT ? "audit" : "deny",
		kind_str(e->kind), op_str(e->op));
	if (e->access)
		fprintf(f, "(%s)", access_str(e->access, acc, sizeof(acc)));
	fputc(' ', f);
	if (path)
		fprintf(f, "%s", (e->flags & PYSB_EV_PATH_TRUNC) ? "..." : "");
	if (path)
		print_escaped(f, path);
	else if (e->target_pid)
		fprintf(f, "target-pid=%u", e->target_pid);
	else
		fputs("-", f);
	if (e->flags & PYSB_EV_EXEC_POLICY)
		fputs(" (process-exec not allowed by the policy)", f);
	if (e->flags & PYSB_EV_EXEC_ANONYMOUS)
		fputs(" (anonymous or deleted file)", f);
	fprintf(f, " pid=%u tid=%u comm=", e->pid, e->tid);
	print_escaped(f, comm);
	fputc('\n', f);
}
