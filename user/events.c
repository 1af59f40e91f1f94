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
	switch (op) {
	case PYSB_OP_OPEN: return "open";
	case PYSB_OP_MOUNT: return "mount";
	case PYSB_OP_UMOUNT: return "umount";
	case PYSB_OP_PIVOT_ROOT: return "pivot_root";
	}
	return "unknown";
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
	fprintf(f, "pysb-bpf: %s %s %s(%s) ", e->decision == PYSB_AUDIT ? "audit" : "deny",
		kind_str(e->kind), op_str(e->op), access_str(e->access, acc, sizeof(acc)));
	if (e->path_len > 0)
		print_escaped(f, e->path);
	else if (e->kind == PYSB_KIND_FILE)
		fputs("<path unavailable>", f);
	else
		fputs("-", f);
	fprintf(f, " pid=%u tid=%u comm=", e->pid, e->tid);
	print_escaped(f, comm);
	fputc('\n', f);
}
