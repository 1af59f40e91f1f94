/* SPDX-License-Identifier: MIT */
/* Helpers shared by the pysb-bpf programs: which sandbox a task is in, event records. */
#ifndef PYSB_COMMON_BPF_H
#define PYSB_COMMON_BPF_H

#include "maps.bpf.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#define PYSB_EVENT_SLACK 256

#define EACCES 13
#define EPERM  1

#define FMODE_READ  0x1u
#define FMODE_WRITE 0x2u
#define FMODE_EXEC  0x20u
#define O_TRUNC	    01000u

/*
 * The sandbox of the current task: its cgroup or the nearest ancestor that is a key of
 * `sandboxes`. Most tasks on the machine are not sandboxed; for them this costs one
 * lookup per cgroup level (a few on a systemd machine).
 */
static __always_inline struct pysb_sandbox_cfg *current_sandbox(__u64 *cgid)
{
	for (int level = 1; level <= PYSB_MAX_CGROUP_LEVEL; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);
		struct pysb_sandbox_cfg *cfg;

		if (!id)
			break;
		cfg = bpf_map_lookup_elem(&sandboxes, &id);
		if (cfg) {
			*cgid = id;
			return cfg;
		}
	}
	return NULL;
}

static __always_inline void count_lost(__u32 sandbox, __u32 reason)
{
	__u32 slot = sandbox * PYSB_LOST_MAX + reason;
	__u64 *n = bpf_map_lookup_elem(&lost, &slot);

	if (n)
		(*n)++;
}

/* Reserves an event with the fields every kind shares filled in; NULL (counted) if full. */
static __always_inline struct pysb_event *event_start(const struct pysb_sandbox_cfg *cfg,
						      __u64 cgid, __u16 kind, __u16 op,
						      __u32 access, __u32 decision)
{
	struct pysb_event *e;
	__u64 pid_tgid;
	void *rb;

	rb = bpf_map_lookup_elem(&events, &cfg->id);
	if (!rb) {
		count_lost(cfg->id, PYSB_LOST_NO_READER);
		return NULL;
	}
	/* The slack lets the verifier accept path components written at a masked offset
	 * (event_set_dentry_path); user space ignores it. */
	e = bpf_ringbuf_reserve(rb, sizeof(*e) + PYSB_EVENT_SLACK, 0);
	if (!e) {
		count_lost(cfg->id, PYSB_LOST_RINGBUF_FULL);
		return NULL;
	}
	pid_tgid = bpf_get_current_pid_tgid();
	e->ts_ns = bpf_ktime_get_ns();
	e->cgroup_id = cgid;
	e->sandbox = cfg->id;
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->kind = kind;
	e->op = op;
	e->access = access;
	e->decision = decision;
	e->flags = 0;
	e->path_len = 0;
	e->path_off = 0;
	e->rule = 0;
	e->target_pid = 0;
	e->_pad = 0;
	e->path[0] = '\0';
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

/* The verdict for a denied request: -errno in enforce mode, 0 (allow) in audit mode. */
static __always_inline int deny_ret(const struct pysb_sandbox_cfg *cfg, int err)
{
	return (cfg->flags & PYSB_SB_AUDIT) ? 0 : -err;
}

static __always_inline __u32 decision_of(const struct pysb_sandbox_cfg *cfg)
{
	return (cfg->flags & PYSB_SB_AUDIT) ? PYSB_AUDIT : PYSB_DENY;
}

#endif /* PYSB_COMMON_BPF_H */
