/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capabilities: the kernel backstop of "no capability unless the policy grants it".
 *
 * Hooks (global `lsm/` programs, sandboxed tasks only):
 *   lsm/capable   every capability check (capable(), ns_capable(), file_ns_capable(), ...)
 *                 for a capability the sandbox's bpf.capabilities= does not grant, in any
 *                 user namespace                                   -> -EPERM, kind capability
 *   lsm/syslog    reading or clearing the kernel log (syslog(2), /dev/kmsg opened for
 *                 reading) without CAP_SYSLOG granted          -> -EPERM, capability syslog
 *   lsm/perf_event_open  a CPU-wide, kernel or tracepoint perf event without CAP_PERFMON
 *                 (or CAP_SYS_ADMIN) granted                    -> -EPERM, capability perf
 *
 * The last two are objects of the whole machine that a sysctl can open to every user:
 * kernel.dmesg_restrict=0 lets anyone read the kernel log, kernel.perf_event_paranoid=-1
 * (a profiling host's setting) lets anyone watch every CPU and the kernel. Then the kernel
 * asks for no capability and lsm/capable never runs. A sandbox gets them only when its
 * policy grants the capability the strict setting asks for: the machine's setting does
 * not widen the policy.
 *
 * `pysb-bpf run` already starts the program with empty capability sets (user/run/runner.c),
 * so for it the kernel's own check refuses first and this hook never runs. It matters for
 * what keeps capabilities: services the daemon confines in place, processes confined by
 * `attach`, and a user namespace the program creates (where it holds every capability of
 * that namespace). The capability LSM runs before BPF and stops at its own refusal, so
 * this program only sees checks that would otherwise succeed.
 *
 * Hot path: capable() is called very often by privileged tasks of the whole machine.
 * An unsandboxed task costs current_sandbox() (its per-task cached answer) and returns.
 * Checks made with CAP_OPT_NOAUDIT (privilege heuristics such as the OOM killer's) are
 * refused without an event, as the kernel's own audit does. Checks overlayfs makes on its
 * own creator credentials, while a sandboxed task looks a file up, are the mounter's,
 * not the task's: not judged (ovl_creds, noted by the file hooks).
 */
#include "common.bpf.h"

#define CAP_OPT_NOAUDIT 0x2u

/* Refuses `cap` to the sandbox, with a capability event for hook `op` unless `quiet`. */
static __always_inline int cap_refused(struct pysb_sandbox_cfg *cfg, __u64 cgid, __u16 op, int cap,
				       bool quiet)
{
	struct pysb_event *e;

	if (!quiet) {
		e = event_start(cfg, cgid, PYSB_KIND_CAP, op, 0, decision_of(cfg));
		if (e) {
			e->rule = (__u32)cap;
			event_send(e);
		}
	}
	return deny_ret(cfg, EPERM);
}

SEC("lsm/capable")
int BPF_PROG(pysb_capable, const struct cred *cred, struct user_namespace *ns, int cap,
	     unsigned int opts)
{
	struct pysb_sandbox_cfg *cfg;
	__u32 tgid;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	if (cap >= 0 && cap < PYSB_CAP_MAX && (cfg->caps & (1ull << cap)))
		return 0;
	/* overlayfs working on its layers under its mounter's credentials (the trusted.*
	 * metacopy and opaque xattrs of a lookup need CAP_SYS_ADMIN): the capability asked
	 * is the mounter's, checked on the overlay's private creator cred, which is no
	 * task's own (see overlay_internal() in bpf/path.bpf.h, and ovl_creds). */
	if ((__u64)cred != (__u64)bpf_get_current_task_btf()->real_cred) {
		__u64 c = (__u64)cred;

		if (bpf_map_lookup_elem(&ovl_creds, &c))
			return 0;
	}
	/* pysb-bpf's own start: the child sets its uid and drops its capabilities in the
	 * sandbox cgroup before its execve (user/run/runner.c), until bprm_committed_creds. */
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (bpf_map_lookup_elem(&exec_pending, &tgid))
		return 0;
	return cap_refused(cfg, cgid, PYSB_OP_CAPABLE, cap, opts & CAP_OPT_NOAUDIT);
}

/* Denies, with a capability event, unless the policy grants `cap` (or `alt`). */
static __always_inline int needs_cap_grant(int cap, int alt, __u16 op)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg || (cfg->caps & ((1ull << cap) | (1ull << alt))))
		return 0;
	return cap_refused(cfg, cgid, op, cap, false);
}

#define CAP_SYS_ADMIN 21
#define CAP_SYSLOG    34
#define CAP_PERFMON   38

#define SYSLOG_ACTION_CLOSE	  0
#define SYSLOG_ACTION_OPEN	  1
#define SYSLOG_ACTION_SIZE_BUFFER 10

/* Every action but the no-ops and the buffer's size (which the kernel gives to all, as
 * it does the log itself when dmesg_restrict is 0). A write-only /dev/kmsg (a service's
 * log lines) asks nothing. */
SEC("lsm/syslog")
int BPF_PROG(pysb_syslog, int type)
{
	if (type == SYSLOG_ACTION_CLOSE || type == SYSLOG_ACTION_OPEN ||
	    type == SYSLOG_ACTION_SIZE_BUFFER)
		return 0;
	return needs_cap_grant(CAP_SYSLOG, CAP_SYSLOG, PYSB_OP_SYSLOG);
}

#define PERF_SECURITY_OPEN 0 /* then CPU 1, KERNEL 2, TRACEPOINT 3 */

/* Every perf_event_open asks with PERF_SECURITY_OPEN: the program's own tasks (another
 * task's need ptrace access, lsm/ptrace_access_check). The kernel asks again with CPU,
 * KERNEL or TRACEPOINT, after its paranoid check, for what that setting guards. The type
 * is the hook's last argument: (attr, type) on 6.1, (type) since 6.11, read with
 * bpf_get_func_arg() at the count the kernel gives (a fixed BPF_PROG argument would read
 * the previous module's answer on the newer kernels: found by the test on 6.12). */
SEC("lsm/perf_event_open")
int pysb_perf_event_open(void *ctx)
{
	__u64 n = bpf_get_func_arg_cnt(ctx), type = 0;

	/* a type that cannot be read is judged as the strictest */
	if (n >= 1 && !bpf_get_func_arg(ctx, (__u32)(n - 1), &type) &&
	    (int)type == PERF_SECURITY_OPEN)
		return 0;
	return needs_cap_grant(CAP_PERFMON, CAP_SYS_ADMIN, PYSB_OP_PERF);
}
