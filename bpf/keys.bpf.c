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
 *                       A uid's user keyrings are never recorded, whoever creates them
 *                       first: they are shared with the uid's processes outside.
 *   lsm/key_free        the record goes with the key (kernels that still have the hook;
 *                       later ones rely on key_alloc's erase and the map's LRU)
 *   lsm/key_permission  every use of a key or keyring: search, read, write, link,
 *                       setattr, view
 * Default: a key not recorded for the current task's sandbox is denied (-EACCES, kind
 * self, op key). The kernel then looks no further: request_key() finds nothing outside,
 * keyctl(KEYCTL_READ) of @u fails.
 */
#include "common.bpf.h"

/* include/linux/key.h: the user and user-session keyrings of a uid. */
#define KEY_ALLOC_UID_KEYRING 0x0010

SEC("lsm/key_alloc")
int BPF_PROG(pysb_key_alloc, struct key *key, const struct cred *cred, unsigned long flags)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 addr = (__u64)key, cgid;
	__u32 id;

	cfg = current_sandbox(&cgid);
	if (!cfg || (flags & KEY_ALLOC_UID_KEYRING)) {
		bpf_map_delete_elem(&key_owner, &addr);
		return 0;
	}
	id = cfg->id;
	bpf_map_update_elem(&key_owner, &addr, &id, BPF_ANY);
	return 0;
}

SEC("lsm/key_free")
int BPF_PROG(pysb_key_free, struct key *key)
{
	__u64 addr = (__u64)key;

	bpf_map_delete_elem(&key_owner, &addr);
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
