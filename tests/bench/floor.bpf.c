// SPDX-License-Identifier: MIT
/*
 * The floor of a BPF access check, for make bench only (never loaded by pysb-bpf): one
 * program on each hook that pysb-bpf's checks of the benchmarked operations need, doing
 * nothing (built as floor-empty.bpf.o) or one hash-map lookup keyed by the task's cgroup
 * id, as a sandbox lookup would (FLOOR_LOOKUP: floor-lookup.bpf.o). Nothing is denied:
 * every program allows.
 *
 * Hooks: lsm/file_open (open), lsm/path_mknod (create), lsm/path_unlink (unlink),
 * cgroup/connect4 (TCP connect), cgroup/sendmsg4 (UDP sendto). The LSM programs are
 * global, like pysb-bpf's; the cgroup ones are attached by build/bench/bpf_floor to the
 * cgroup it is given, as pysb-bpf attaches its own to each sandbox's cgroup.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#ifdef FLOOR_LOOKUP
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u32);
} floor_cgroups SEC(".maps");

/* One lookup that misses, as for a task in no sandbox; the result is used, so the call
 * stays in the program. */
static __always_inline int check(void)
{
	__u64 id = bpf_get_current_cgroup_id();
	__u32 *v = bpf_map_lookup_elem(&floor_cgroups, &id);

	return v && *v == 1 ? -1 : 0;
}
#define NAME(x) flook_##x
#else
static __always_inline int check(void)
{
	return 0;
}
#define NAME(x) fempty_##x
#endif
/* BPF_PROG pastes its name argument: one more expansion, so that NAME() is expanded first */
#define HOOK(name, ...) BPF_PROG(name, __VA_ARGS__)

SEC("lsm/file_open")
int HOOK(NAME(open), struct file *file)
{
	return check();
}

SEC("lsm/path_mknod")
int HOOK(NAME(mknod), const struct path *dir, struct dentry *dentry, umode_t mode,
	     unsigned int dev)
{
	return check();
}

SEC("lsm/path_unlink")
int HOOK(NAME(unlink), const struct path *dir, struct dentry *dentry)
{
	return check();
}

SEC("cgroup/connect4")
int NAME(connect4)(struct bpf_sock_addr *ctx)
{
	return check() ? 0 : 1;
}

SEC("cgroup/sendmsg4")
int NAME(sendmsg4)(struct bpf_sock_addr *ctx)
{
	return check() ? 0 : 1;
}
