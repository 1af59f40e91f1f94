/* SPDX-License-Identifier: MIT */
/*
 * The order in which current_sandbox() (bpf/common.bpf.h) looks for a task's sandbox:
 * the NEAREST registered cgroup, i.e. the deepest of the task's cgroup and its ancestors
 * that is a key of `sandboxes`. A strict policy bound to a service's cgroup must not be
 * replaced by a broad or audit-mode one bound to any of its ancestors.
 *
 * Shared with tests/unit/test_nearest.c, which gives the two operations its own meaning:
 *   PYSB_ANCESTOR_ID(level)  id of the current task's ancestor cgroup at `level` (1 = just
 *                            below the root), 0 past the task's own level
 *   PYSB_SANDBOX_LOOKUP(idp) the sandbox registered for cgroup *idp, or NULL
 *
 * Cost: one lookup per level of the task's cgroup, as before (the walk goes down from the
 * root and remembers the last hit): the same for the machine's unsandboxed tasks, which
 * must look at every level anyway, and a few more lookups for sandboxed ones.
 */
#ifndef PYSB_NEAREST_H
#define PYSB_NEAREST_H

#if !defined(PYSB_ANCESTOR_ID) || !defined(PYSB_SANDBOX_LOOKUP)
#error "define PYSB_ANCESTOR_ID and PYSB_SANDBOX_LOOKUP before including nearest.h"
#endif

static __always_inline struct pysb_sandbox_cfg *pysb_nearest_sandbox(__u64 *cgid)
{
	struct pysb_sandbox_cfg *found = NULL;

	for (int level = 1; level <= PYSB_MAX_CGROUP_LEVEL; level++) {
		__u64 id = PYSB_ANCESTOR_ID(level);
		struct pysb_sandbox_cfg *cfg;

		if (!id)
			break;
		cfg = PYSB_SANDBOX_LOOKUP(&id);
		if (cfg) {
			*cgid = id;
			found = cfg; /* a deeper level may still hold a nearer one */
		}
	}
	return found;
}

#endif /* PYSB_NEAREST_H */
