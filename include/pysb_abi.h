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
 *    the first (dev, ino) with an entry in `file_rules` for this sandbox decides, by its
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
#define PYSB_ACC_READ  0x1u /* open for read, list a directory */
#define PYSB_ACC_WRITE 0x2u /* open for write/append/truncate, create, remove, rename, attrs */
#define PYSB_ACC_EXEC  0x4u /* execve, mmap/mprotect PROT_EXEC */
#define PYSB_ACC_RO    (PYSB_ACC_READ | PYSB_ACC_EXEC)
#define PYSB_ACC_RW    (PYSB_ACC_RO | PYSB_ACC_WRITE)

/* sandbox_cfg.flags */
#define PYSB_SB_AUDIT 0x1u /* report would-be denials, deny nothing */

/* Walk limit: a path deeper than this is denied (fail closed), never allowed. */
#define PYSB_MAX_DEPTH 8192
/* Deepest cgroup level searched for a sandboxed ancestor. */
#define PYSB_MAX_CGROUP_LEVEL 32

#define PYSB_MAX_SANDBOXES  1024
#define PYSB_MAX_FILE_RULES 65536

struct pysb_sandbox_cfg {
	__u32 id;    /* sandbox id, part of every rule key of this sandbox */
	__u32 flags; /* PYSB_SB_* */
};

struct pysb_file_key {
	__u64 ino;
	__u32 dev; /* kernel dev_t (MAJOR << 20 | MINOR), as in super_block.s_dev */
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
};

enum pysb_op {
	PYSB_OP_OPEN = 1,
	PYSB_OP_MOUNT = 2,
	PYSB_OP_UMOUNT = 3,
	PYSB_OP_PIVOT_ROOT = 4,
};

enum pysb_decision {
	PYSB_DENY = 1,
	PYSB_AUDIT = 2, /* would have been denied; audit mode let it through */
};

#define PYSB_COMM_LEN 16
#define PYSB_PATH_LEN 4096

/* Ring-buffer record; path is NUL-terminated and may be truncated (flag in `flags`). */
struct pysb_event {
	__u64 ts_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 cgroup_id;
	__u32 sandbox;
	__u32 pid; /* tgid */
	__u32 tid;
	__u16 kind;	/* enum pysb_kind */
	__u16 op;	/* enum pysb_op */
	__u32 access;	/* PYSB_ACC_* requested */
	__u32 decision; /* enum pysb_decision */
	__u32 flags;	/* PYSB_EV_* */
	__s32 path_len; /* bytes written in path incl. NUL, or negative errno */
	char comm[PYSB_COMM_LEN];
	char path[PYSB_PATH_LEN];
};

#define PYSB_EV_PATH_TRUNC 0x1u

/* Reasons an event was not delivered (index of the `lost` map). */
enum pysb_lost {
	PYSB_LOST_RINGBUF_FULL = 0, /* bpf_ringbuf_reserve failed: consumer too slow */
	PYSB_LOST_MAX = 1,
};

_Static_assert(sizeof(struct pysb_sandbox_cfg) == 8, "pysb_sandbox_cfg layout");
_Static_assert(sizeof(struct pysb_file_key) == 16, "pysb_file_key layout");
_Static_assert(sizeof(struct pysb_file_rule) == 8, "pysb_file_rule layout");
_Static_assert(sizeof(struct pysb_event) == 48 + PYSB_COMM_LEN + PYSB_PATH_LEN,
	       "pysb_event layout");

#endif /* PYSB_ABI_H */
