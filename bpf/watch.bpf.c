/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Confinement from a cgroup's creation: the cgroups a `pysb-bpf daemon` binding will
 * claim (a unit's cgroup, the matches of a cgroup_pattern) are confined by the kernel at
 * their mkdir, before any process can join them, instead of at the daemon's next scan.
 *
 * Hooks:
 *   tp_btf/cgroup_mkdir  a new cgroup whose path matches a slot of `cgroup_watch` (written
 *                        by the daemon: struct pysb_watch) gets the slot's sandbox in
 *                        `sandboxes`, flagged PYSB_SB_KERNEL: the binding's rules (its
 *                        template id), or the fail-closed pending sandbox (no rules:
 *                        everything denied) when the daemon's pattern is wider than
 *                        this matcher. The daemon's scan then gives the cgroup an id
 *                        of its own and its socket programs (it is told at once,
 *                        through `cgroup_born`).
 *   lsm/bprm_creds_for_exec, lsm/bprm_committed_creds (bpf/born_exec.bpf.h, in the
 *                        hook's one program, bpf/exec.bpf.c)
 *                        a binding's default ("confine_at": "exec"): the slot's sandbox
 *                        is put on the cgroup held (PYSB_SB_HOLD: not enforced), and
 *                        the first execve of a file a task of the cgroup commits arms
 *                        it, before the new program's first instruction (not one of
 *                        the program the task already runs, nor of a memfd: runc init
 *                        re-executes itself so, through a bind mount or a sealed copy,
 *                        before its set-up): the container runtime's
 *                        or systemd's set-up in the cgroup runs as the runtime, the
 *                        workload under the policy from its start (the moment at which
 *                        `pysb-bpf run` starts enforcing too). "creation": enforced at
 *                        the mkdir already.
 *   lsm/socket_connect, lsm/socket_bind, lsm/socket_sendmsg (bpf/born_net.bpf.h, in
 *                        the one program of each hook, bpf/socket.bpf.c)
 *                        until then the cgroup's socket programs (bpf/net.bpf.c,
 *                        attached per cgroup) are not there: in a cgroup confined at
 *                        its creation and not yet by the daemon, connect() and bind()
 *                        of TCP and UDP sockets, and a send with a destination, are
 *                        denied (EPERM, a `net` event): fail closed, for the moments
 *                        until the scan.
 *
 * The tracepoint fires in cgroup_mkdir() after the cgroup is set up and before
 * kernfs_activate() makes its directory visible: no task can be in it yet, so no task
 * has cached an answer for it either (the per-task cache is keyed by cgroup id, and ids
 * are never reused): `sandbox_gen` is not bumped. A tracing program is not an LSM
 * program: it takes none of the kernel's ten lsm_cgroup slots.
 */
#include "born_exec.bpf.h"

#define GLOB_NONE  0xffffffffu
#define GLOB_MASK  (PYSB_WATCH_LEN - 1)
/* Steps of one match: '*' backtracks within one path component only, so real patterns
 * take a few hundred; a match that needs more is taken as no match. */
#define GLOB_STEPS (1u << 17)

/* One step of glob(7) matching with FNM_PATHNAME ('*' and '?' never match '/'): the
 * classic single-backtrack matcher, which is exact when '*' cannot cross a '/'. */
static long glob_step(__u64 i, void *ctx)
{
	__u32 zero = 0, slot;
	struct pysb_new_cgroup *nc = bpf_map_lookup_elem(&cgroup_new_path, &zero);
	struct pysb_glob_state *st;
	struct pysb_watch *w;
	char *s, pc, sc;

	if (!nc)
		return 1;
	st = &nc->glob;
	s = nc->path;
	slot = st->slot;
	w = bpf_map_lookup_elem(&cgroup_watch, &slot);
	if (!w || st->pi >= PYSB_WATCH_LEN || st->si >= PYSB_WATCH_LEN) {
		st->result = -1;
		return 1;
	}
	pc = w->glob[st->pi & GLOB_MASK];
	sc = s[st->si & GLOB_MASK];
	if (pc == '*') {
		st->star_pi = st->pi++;
		st->star_si = st->si;
		return 0;
	}
	if (!pc && !sc) {
		st->result = 1;
		return 1;
	}
	if (sc && ((pc == '?' && sc != '/') || pc == sc)) {
		st->pi++;
		st->si++;
		return 0;
	}
	if (st->star_pi != GLOB_NONE && st->star_si < PYSB_WATCH_LEN) {
		char c = s[st->star_si & GLOB_MASK];

		if (c && c != '/') {
			st->si = ++st->star_si;
			st->pi = st->star_pi + 1;
			return 0;
		}
	}
	st->result = -1;
	return 1;
}

/* Whether slot `slot` matches the path in cgroup_new_path: 1 or 0. A global function,
 * verified once on its own: a bpf_loop called from a loop is refused as an infinite
 * loop by 6.1's verifier. */
__noinline int pysb_glob_match(__u32 slot)
{
	__u32 zero = 0;
	struct pysb_new_cgroup *nc = bpf_map_lookup_elem(&cgroup_new_path, &zero);

	if (!nc)
		return 0;
	nc->glob = (struct pysb_glob_state){ .slot = slot, .star_pi = GLOB_NONE };
	bpf_loop(GLOB_STEPS, glob_step, NULL, 0);
	return nc->glob.result == 1;
}

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(pysb_cgroup_mkdir, struct cgroup *cgrp, const char *path)
{
	struct pysb_sandbox_cfg cfg = { 0 };
	__u32 zero = 0;
	char *buf = bpf_map_lookup_elem(&cgroup_new_path, &zero);
	bool found = false;
	__u64 cgid, bit, *born;
	long n;

	if (!buf)
		return 0;
	/* The unified (v2) hierarchy only: the tracepoint fires for a cgroup v1 hierarchy's
	 * mkdir too (a hybrid system's name=systemd), with a path in that hierarchy and an id
	 * counted in it, which as a key of `sandboxes` would confine, or judge by this
	 * binding's policy, whichever v2 cgroup has the same number. Every task's dfl_cgrp
	 * is on the v2 hierarchy. */
	if (BPF_CORE_READ(cgrp, root) !=
	    BPF_CORE_READ(bpf_get_current_task_btf(), cgroups, dfl_cgrp, root))
		return 0;
	/* A path as long as the buffer may be cut: matched by no slot (the daemon's scan
	 * binds it, docs/fleet.md). */
	n = bpf_probe_read_kernel_str(buf, PYSB_WATCH_LEN, path);
	if (n <= 0 || n >= PYSB_WATCH_LEN)
		return 0;
	for (int i = 0; i < PYSB_MAX_WATCH; i++) {
		__u32 key = i; /* i itself stays in a register, where the verifier sees it grow */
		struct pysb_watch *w = bpf_map_lookup_elem(&cgroup_watch, &key);

		if (!w || !w->glob[0] || (found && (w->flags & PYSB_WATCH_PENDING)))
			continue;
		if (!pysb_glob_match(i))
			continue;
		cfg = w->cfg;
		found = true;
		if (!(w->flags & PYSB_WATCH_PENDING))
			break; /* a binding's own rules win over the pending sandbox */
	}
	if (!found)
		return 0;
	cfg.flags |= PYSB_SB_KERNEL;
	cgid = BPF_CORE_READ(cgrp, kn, id);
	/* marked before its entry: the socket hooks' fast path must not take it for a
	 * cgroup whose socket programs are attached (bpf/socket.bpf.c, nothing_to_judge) */
	born = born_filter_word(cgid, &bit);
	if (!born)
		return 0;
	__sync_fetch_and_or(born, bit);
	/* Full (PYSB_MAX_SANDBOXES): the cgroup waits for the scan, as without this. */
	if (!bpf_map_update_elem(&sandboxes, &cgid, &cfg, BPF_NOEXIST))
		tell_daemon(cgid);
	return 0;
}

/* Before the point of no return the task still runs its old program: an execve of the same
 * file (inode) is the runtime re-executing itself, noted for bprm_committed_creds. */
SEC("lsm/bprm_creds_for_exec")
int BPF_PROG(pysb_born_exec_check, struct linux_binprm *bprm)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), one = 1;
	struct inode *now, *next;

	/* Every task, held or not: runc moves `runc init` into the cgroup while it may be
	 * between this hook and bprm_committed_creds. */
	now = BPF_CORE_READ(task, mm, exe_file, f_inode);
	next = BPF_CORE_READ(bprm, file, f_inode);
	if (now && now == next)
		bpf_map_update_elem(&born_reexec, &tid, &one, BPF_ANY);
	else if (bpf_map_lookup_elem(&born_reexec, &tid))
		bpf_map_delete_elem(&born_reexec, &tid);
	return 0;
}
