/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SysV IPC: a sandboxed task reaches only the shared memory segments, message queues and
 * semaphore sets created inside its own sandbox.
 *
 * `run` gives the program an IPC namespace of its own, which already hides the host's
 * objects; a process confined in place (`attach`, the daemon's bindings) keeps the
 * caller's namespace, and these hooks are what keeps it from the objects of the rest of
 * the machine there: a database's shared buffers, another service's queue.
 *
 * Hooks (global `lsm/` programs; the allocation hooks record, the others judge):
 *   lsm/shm_alloc_security, lsm/msg_queue_alloc_security, lsm/sem_alloc_security
 *                          an object created by a sandboxed task is recorded in
 *                          `ipc_owner` (its kern_ipc_perm -> sandbox id); the table
 *                          full: the creation fails (-ENOSPC) rather than leave an
 *                          object no rule can place
 *   lsm/shm_free_security, lsm/msg_queue_free_security, lsm/sem_free_security
 *                          the record goes with the object
 *   lsm/ipc_permission     every access check on an object (shmget/msgget/semget of an
 *                          existing key, shmat, msgsnd, msgrcv, semop, IPC_STAT)
 *   lsm/shm_shmctl, lsm/msg_queue_msgctl, lsm/sem_semctl
 *                          control commands that skip the access check (IPC_RMID,
 *                          IPC_SET, SHM_LOCK, SHM_STAT_ANY, ...)
 * Default: an object not recorded for the current task's sandbox is denied (-EACCES,
 * kind self, op ipc, the object's id as target). POSIX message queues and shared
 * memory are files (mqueue, /dev/shm): the file rules judge them (a queue's creation
 * and removal: bpf/file.bpf.c, check_mqueue).
 */
#include "common.bpf.h"

static __always_inline int ipc_record(struct kern_ipc_perm *perm)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 key = (__u64)perm, cgid;
	__u32 id;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	id = cfg->id;
	if (owner_record(&ipc_owner, PYSB_OWNER_IPC, key, id))
		return -ENOSPC;
	return 0;
}

static __always_inline int ipc_forget(struct kern_ipc_perm *perm)
{
	owner_forget(&ipc_owner, PYSB_OWNER_IPC, (__u64)perm);
	return 0;
}

/* Denies when `perm` (NULL for the commands about no object: IPC_INFO) was not created
 * in the current task's sandbox. */
static __always_inline int ipc_judge(struct kern_ipc_perm *perm)
{
	struct pysb_sandbox_cfg *cfg;
	struct pysb_event *e;
	__u64 key = (__u64)perm, cgid;
	__u32 *owner;

	if (!perm)
		return 0;
	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	owner = bpf_map_lookup_elem(&ipc_owner, &key);
	if (owner && *owner == cfg->id)
		return 0;
	e = event_start(cfg, cgid, PYSB_KIND_SELF, PYSB_OP_IPC, 0, decision_of(cfg));
	if (e) {
		e->target_pid = BPF_CORE_READ(perm, id);
		e->flags |= PYSB_EV_TARGET_IPC;
		event_send(e);
	}
	return deny_ret(cfg, EACCES);
}

SEC("lsm/shm_alloc_security")
int BPF_PROG(pysb_shm_alloc_security, struct kern_ipc_perm *perm)
{
	return ipc_record(perm);
}

SEC("lsm/msg_queue_alloc_security")
int BPF_PROG(pysb_msg_queue_alloc_security, struct kern_ipc_perm *perm)
{
	return ipc_record(perm);
}

SEC("lsm/sem_alloc_security")
int BPF_PROG(pysb_sem_alloc_security, struct kern_ipc_perm *perm)
{
	return ipc_record(perm);
}

SEC("lsm/shm_free_security")
int BPF_PROG(pysb_shm_free_security, struct kern_ipc_perm *perm)
{
	return ipc_forget(perm);
}

SEC("lsm/msg_queue_free_security")
int BPF_PROG(pysb_msg_queue_free_security, struct kern_ipc_perm *perm)
{
	return ipc_forget(perm);
}

SEC("lsm/sem_free_security")
int BPF_PROG(pysb_sem_free_security, struct kern_ipc_perm *perm)
{
	return ipc_forget(perm);
}

SEC("lsm/ipc_permission")
int BPF_PROG(pysb_ipc_permission, struct kern_ipc_perm *ipcp, short flag)
{
	return ipc_judge(ipcp);
}

SEC("lsm/shm_shmctl")
int BPF_PROG(pysb_shm_shmctl, struct kern_ipc_perm *perm, int cmd)
{
	return ipc_judge(perm);
}

SEC("lsm/msg_queue_msgctl")
int BPF_PROG(pysb_msg_queue_msgctl, struct kern_ipc_perm *perm, int cmd)
{
	return ipc_judge(perm);
}

SEC("lsm/sem_semctl")
int BPF_PROG(pysb_sem_semctl, struct kern_ipc_perm *perm, int cmd)
{
	return ipc_judge(perm);
}
