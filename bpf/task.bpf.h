/* SPDX-License-Identifier: GPL-2.0 */
/* Tasks inside or outside a sandbox: for the hooks that judge a task other than the
 * current one (bpf/self.bpf.c, bpf/signal.bpf.c, /proc/<pid> in bpf/file.bpf.c). */
#ifndef PYSB_TASK_BPF_H
#define PYSB_TASK_BPF_H

#include "common.bpf.h"

/* Is cgroup `cg` the cgroup `cgid` or below it? */
static __always_inline bool cgroup_under(struct cgroup *cg, __u64 cgid)
{
	for (int i = 0; i < PYSB_MAX_CGROUP_LEVEL && cg; i++) {
		struct cgroup_subsys_state *parent;

		if (BPF_CORE_READ(cg, kn, id) == cgid)
			return true;
		parent = BPF_CORE_READ(cg, self.parent);
		if (!parent)
			break;
		cg = (struct cgroup *)((void *)parent - bpf_core_field_offset(struct cgroup, self));
	}
	return false;
}

/* Is task `t` in the cgroup `cgid` or below it? */
static __always_inline bool task_under(struct task_struct *t, __u64 cgid)
{
	return cgroup_under(BPF_CORE_READ(t, cgroups, dfl_cgrp), cgid);
}

/* Reports that sandbox `cfg` (cgroup `cgid`) reached `other`, outside it; the verdict. */
static __always_inline int outside_denied(struct pysb_sandbox_cfg *cfg, __u64 cgid, __u16 op,
					  struct task_struct *other)
{
	struct pysb_event *e = event_start(cfg, cgid, PYSB_KIND_SELF, op, 0, decision_of(cfg));

	if (e) {
		e->target_pid = BPF_CORE_READ(other, tgid);
		event_send(e);
	}
	return deny_ret(cfg, EPERM);
}

/* Denies when `other` is outside the current task's sandbox. */
static __always_inline int deny_outside(__u16 op, struct task_struct *other)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg || task_under(other, cgid))
		return 0;
	return outside_denied(cfg, cgid, op, other);
}

/* The task a struct pid names (its PIDTYPE_PID user), NULL once it is gone. */
static __always_inline struct task_struct *pid_task_of(struct pid *pid)
{
	struct hlist_node *first = BPF_CORE_READ(pid, tasks[PIDTYPE_PID].first);

	if (!first)
		return NULL;
	return (struct task_struct *)((void *)first -
				      bpf_core_field_offset(struct task_struct, pid_links));
}

#endif /* PYSB_TASK_BPF_H */
