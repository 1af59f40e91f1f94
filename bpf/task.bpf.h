/* SPDX-License-Identifier: MIT */
/* Which sandbox another task is in: for hooks that judge a task other than the current one. */
#ifndef PYSB_TASK_BPF_H
#define PYSB_TASK_BPF_H

#include "common.bpf.h"

/* Is task `t` in the cgroup `cgid` or below it? (The same walk as self.bpf.c's task_under.) */
static __always_inline bool task_below_cgroup(struct task_struct *t, __u64 cgid)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);

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
