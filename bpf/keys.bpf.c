/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel keys: a sandboxed task reaches only the keys and keyrings created in its own
 * sandbox. Not the caller's session keyring, not its user keyring (@u, shared by every
 * process of the uid: root's holds root's keys), not another service's.
 *
 * Hooks (global `lsm/` programs):
 *   lsm/key_alloc       a key created by a sandboxed task is recorded in `key_owner`
 *                       (its address -> sandbox id); one created elsewhere erases any
 *                       record at its address, so a reused address never inherits one.
 *                       A uid's user keyrings and persistent keyring (and the register
 *                       of persistent keyrings) are never recorded, whoever creates
 *                       them first: they are shared with the uid's processes outside,
 *                       which would find a key the sandbox planted there.
 *   lsm/key_free        the record goes with the key (kernels that still have the hook;
 *                       later ones rely on key_alloc's erase and the map's LRU)
 *   lsm/key_permission  every use of a key or keyring: search, read, write, link,
 *                       setattr, view
 *   lsm/cred_alloc_blank  KEYCTL_SESSION_TO_PARENT (its only caller): a parent outside
 *                       the sandbox would take the sandbox's session keyring as its own
 *                       (op key-to-parent; the kernel answers ENOMEM)
 * Default: a key not recorded for the current task's sandbox is denied (-EACCES, kind
 * self, op key). The kernel then looks no further: request_key() finds nothing outside,
 * keyctl(KEYCTL_READ) of @u fails.
 */
#include "task.bpf.h"

/* include/linux/key.h: the user and user-session keyrings of a uid. */
#define KEY_ALLOC_UID_KEYRING 0x0010

/*
 * The keyrings security/keys/persistent.c makes: "_persistent.<uid>", one per uid and
 * user namespace, which KEYCTL_GET_PERSISTENT hands to every process of the uid, and the
 * namespace's ".persistent_register" that holds them.
 */
static __always_inline bool starts_with(const char *s, const char *prefix, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i] != prefix[i])
			return false;
	return true;
}

static __always_inline bool persistent_keyring(struct key *key)
{
	char d[20] = {};
	const char *desc = BPF_CORE_READ(key, description);

	if (!desc || bpf_probe_read_kernel_str(d, sizeof(d), desc) < 12)
		return false;
	return starts_with(d, "_persistent.", 12) || starts_with(d, ".persistent_registe", 19);
}

SEC("lsm/key_alloc")
int BPF_PROG(pysb_key_alloc, struct key *key, const struct cred *cred, unsigned long flags)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 addr = (__u64)key, cgid;
	__u32 id;

	cfg = current_sandbox(&cgid);
	/* a record left at this address (a kernel without key_free) goes, counted off */
	owner_forget(&key_owner, PYSB_OWNER_KEY, addr);
	if (!cfg || (flags & KEY_ALLOC_UID_KEYRING) || persistent_keyring(key))
		return 0;
	id = cfg->id;
	owner_record(&key_owner, PYSB_OWNER_KEY, addr, id);
	return 0;
}

SEC("lsm/key_free")
int BPF_PROG(pysb_key_free, struct key *key)
{
	owner_forget(&key_owner, PYSB_OWNER_KEY, (__u64)key);
	return 0;
}

/*
 * key_ref_t is a pointer to an opaque struct, which the verifier refuses to read from
 * the context as an argument: bpf_get_func_arg() (5.17+) reads it as the plain word it
 * is. Its low bit says "possessed"; the rest is the key's address.
 */
SEC("lsm/key_permission")
int pysb_key_permission(void *ctx)
{
	struct pysb_sandbox_cfg *cfg;
	struct pysb_event *e;
	__u64 addr, cgid;
	__u32 *owner;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	if (bpf_get_func_arg(ctx, 0, &addr))
		return deny_ret(cfg, EACCES);
	addr &= ~1ULL;
	owner = bpf_map_lookup_elem(&key_owner, &addr);
	if (owner && *owner == cfg->id)
		return 0;
	e = event_start(cfg, cgid, PYSB_KIND_SELF, PYSB_OP_KEY, 0, decision_of(cfg));
	if (e) {
		e->target_pid = BPF_CORE_READ((struct key *)addr, serial);
		e->flags |= PYSB_EV_TARGET_KEY;
		event_send(e);
	}
	return deny_ret(cfg, EACCES);
}

/*
 * cred_alloc_blank() has one caller, keyctl(KEYCTL_SESSION_TO_PARENT): the blank cred
 * carries the caller's session keyring to its parent, installed there at its next return
 * to user space. A parent in the same sandbox may take it (a shell running keyctl
 * new_session); one outside (the supervisor, a subreaper, the shell that started the
 * service) would then search keys the sandbox planted, and write into a keyring recorded
 * as the sandbox's.
 */
SEC("lsm/cred_alloc_blank")
int BPF_PROG(pysb_cred_alloc_blank, struct cred *cred, gfp_t gfp)
{
	struct pysb_sandbox_cfg *cfg;
	struct task_struct *parent;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	parent = BPF_CORE_READ(bpf_get_current_task_btf(), real_parent);
	if (parent && task_under(parent, cgid))
		return 0;
	return outside_denied(cfg, cgid, PYSB_OP_KEY_TO_PARENT, parent);
}
