/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Signals and scheduling changes that reach a task outside the sandbox by a way that
 * task_kill (bpf/self.bpf.c) does not see.
 *
 * Hooks (global `lsm/` programs):
 *   lsm/file_set_fowner      F_SETOWN(_EX), FIOSETOWN, SIOCSPGRP, a tty's O_ASYNC: notes
 *                            that a sandboxed task set the file's owner, and in which
 *                            sandbox (the hook cannot refuse; `sigio_owners`)
 *   lsm/file_send_sigiotask  SIGIO, SIGURG, or the F_SETSIG signal of a file whose owner a
 *                            sandboxed task set, to a task outside that sandbox: not sent
 *   lsm/file_fcntl           F_SETOWN, F_SETOWN_EX from a sandboxed task: its record must
 *                            fit in `sigio_owners`, else -ENOSPC (the hook's one program,
 *                            in bpf/file.bpf.c; FIOSETOWN and SIOCSPGRP: bpf/tty.bpf.h,
 *                            by its file_ioctl program)
 *   lsm/file_free_security   forgets a file that had an owner
 *   lsm/task_setnice         setpriority(2) of a task outside              -> -EPERM
 *   lsm/task_setioprio       ioprio_set(2) of a task outside               -> -EPERM
 *   lsm/task_setscheduler    sched_setscheduler/setattr/setaffinity outside -> -EPERM
 *   lsm/task_setrlimit       prlimit(2) changing a limit of a task outside -> -EPERM
 *   lsm/task_movememory      migrate_pages/move_pages of a task outside   -> -EPERM
 *   lsm/task_getpgid, task_getsid, task_getscheduler, task_getioprio, capget
 *                            what getpgid, getsid, sched_getscheduler/getparam/getattr/
 *                            getaffinity/rr_get_interval, ioprio_get and capget would tell
 *                            of a task outside (its session, group, scheduling, capability
 *                            sets: what its /proc/PID/status shows, which the rules deny)
 *                                                                          -> -EPERM
 * Each denial is an event (self signal/sched/inspect, target-pid). The sender of a SIGIO is
 * whoever makes the file ready, often not sandboxed: what counts is who set the owner.
 */
#include "task.bpf.h"

/* Before 6.12 the owner is embedded in struct file; later it is allocated on demand and
 * points back to its file. */
struct file___embedded_owner {
	struct fown_struct f_owner;
} __attribute__((preserve_access_index));

struct fown_struct___file {
	struct file *file;
} __attribute__((preserve_access_index));

static __always_inline struct file *file_of_owner(struct fown_struct *fown)
{
	if (bpf_core_field_exists(struct fown_struct___file, file))
		return BPF_CORE_READ((struct fown_struct___file *)fown, file);
	return (struct file *)((void *)fown -
			       bpf_core_field_offset(struct file___embedded_owner, f_owner));
}

/* `file`: a hook's own argument, read by plain (BTF) loads: file_free_security runs for
 * every file the machine closes, and a probe read there cost about as much as the rest. */
static __always_inline bool has_owner(struct file *file)
{
	if (bpf_core_field_exists(struct fown_struct___file, file))
		return file->f_owner != NULL;
	return ((struct file___embedded_owner *)file)->f_owner.pid != NULL;
}

SEC("lsm/file_set_fowner")
int BPF_PROG(pysb_file_set_fowner, struct file *file)
{
	__u64 key = (__u64)file, cgid;

	if (current_sandbox(&cgid))
		bpf_map_update_elem(&sigio_owners, &key, &cgid, BPF_ANY);
	else
		bpf_map_delete_elem(&sigio_owners, &key);
	return 0;
}

SEC("lsm/file_free_security")
int BPF_PROG(pysb_file_free_security, struct file *file)
{
	__u64 key = (__u64)file;

	/* Most files never had an owner: no map operation for them. */
	if (has_owner(file))
		bpf_map_delete_elem(&sigio_owners, &key);
	return 0;
}

SEC("lsm/file_send_sigiotask")
int BPF_PROG(pysb_file_send_sigiotask, struct task_struct *tsk, struct fown_struct *fown, int sig)
{
	__u64 key = (__u64)file_of_owner(fown);
	struct pysb_sandbox_cfg *cfg;
	__u64 *owner, cgid;

	owner = bpf_map_lookup_elem(&sigio_owners, &key);
	if (!owner)
		return 0;
	cgid = *owner;
	if (task_under(tsk, cgid))
		return 0;
	cfg = bpf_map_lookup_elem(&sandboxes, &cgid);
	if (!cfg)
		return -EPERM; /* that sandbox is gone: its files still signal nobody outside */
	return outside_denied(cfg, cgid, PYSB_OP_SIGNAL, tsk);
}

SEC("lsm/task_setnice")
int BPF_PROG(pysb_task_setnice, struct task_struct *p, int nice)
{
	return deny_outside(PYSB_OP_SCHED, p);
}

SEC("lsm/task_setioprio")
int BPF_PROG(pysb_task_setioprio, struct task_struct *p, int ioprio)
{
	return deny_outside(PYSB_OP_SCHED, p);
}

SEC("lsm/task_setscheduler")
int BPF_PROG(pysb_task_setscheduler, struct task_struct *p)
{
	return deny_outside(PYSB_OP_SCHED, p);
}

SEC("lsm/task_setrlimit")
int BPF_PROG(pysb_task_setrlimit, struct task_struct *p, unsigned int resource,
	     struct rlimit *new_rlim)
{
	return deny_outside(PYSB_OP_SCHED, p);
}

SEC("lsm/task_movememory")
int BPF_PROG(pysb_task_movememory, struct task_struct *p)
{
	return deny_outside(PYSB_OP_SCHED, p);
}

/* Reads of a task's state by pid (the kernel asks only for another pid than 0, except
 * sched_get* and capget, which ask for the caller too: its own, allowed). */
SEC("lsm/task_getpgid")
int BPF_PROG(pysb_task_getpgid, struct task_struct *p)
{
	return deny_outside(PYSB_OP_INSPECT, p);
}

SEC("lsm/task_getsid")
int BPF_PROG(pysb_task_getsid, struct task_struct *p)
{
	return deny_outside(PYSB_OP_INSPECT, p);
}

SEC("lsm/task_getscheduler")
int BPF_PROG(pysb_task_getscheduler, struct task_struct *p)
{
	return deny_outside(PYSB_OP_INSPECT, p);
}

SEC("lsm/task_getioprio")
int BPF_PROG(pysb_task_getioprio, struct task_struct *p)
{
	return deny_outside(PYSB_OP_INSPECT, p);
}

SEC("lsm/capget")
int BPF_PROG(pysb_capget, struct task_struct *target, void *effective, void *inheritable,
	     void *permitted)
{
	return deny_outside(PYSB_OP_INSPECT, target);
}
