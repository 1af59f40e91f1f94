/* SPDX-License-Identifier: MIT */
/*
 * The maps every pysb-bpf program shares. Defined once in maps.bpf.c; every other
 * translation unit sees them as extern, and `bpftool gen object` links them into one
 * object (build/pysb.bpf.o) with one skeleton.
 */
#ifndef PYSB_MAPS_BPF_H
#define PYSB_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pysb_abi.h"

#ifndef PYSB_MAPS_DEFINE
#define PYSB_MAP extern
#else
#define PYSB_MAP
#endif

/* cgroup id -> sandbox; a task is sandboxed when its cgroup or an ancestor is here.
 * Not preallocated: an update (the daemon's reload switching a cgroup to a new sandbox
 * id) links a new element and frees the old one after an RCU grace period, so a hook
 * that looked up the old one reads it whole, never half old, half new. */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, PYSB_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct pysb_sandbox_cfg);
} sandboxes SEC(".maps");

/*
 * (inode label, sandbox) -> access. Sized for the largest policy we accept; the loader
 * refuses a policy that does not fit rather than dropping rules (a dropped expose rule
 * would only deny more, but a user must know).
 */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYSB_MAX_FILE_RULES);
	__type(key, struct pysb_file_key);
	__type(value, struct pysb_file_rule);
} file_rules SEC(".maps");

/*
 * struct inode address -> its label (see struct pysb_label_req): given at the loader's
 * request (lsm/sb_statfs), removed when the inode is freed (lsm/inode_free_security), so
 * a label never outlives its inode object. The rule inodes are held open by the loader
 * or the daemon while their rules live; should the holder die and an inode be evicted,
 * its rules are unreachable: denied, never passed on.
 */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYSB_MAX_LABELS);
	__type(key, __u64);
	__type(value, __u64);
} inode_labels SEC(".maps");

/*
 * A filter in front of inode_labels (bpf/path.bpf.h, maybe_labelled): one bit per hash of
 * an inode address, set before an inode gets its label and never cleared. A clear bit
 * says "no label" without a lookup: the answer for almost every inode a walk passes and
 * every inode the machine frees. A set bit only means "look": a freed label's bit stays.
 */
#define PYSB_LABEL_FILTER_BITS 18

PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1u << (PYSB_LABEL_FILTER_BITS - 6));
	__type(key, __u32);
	__type(value, __u64);
} label_filter SEC(".maps");

/* [0]: the last label given (labels start at 1). */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} label_next SEC(".maps");

/* thread id of a loader -> its pending label request (a batch: allocated while used). */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct pysb_label_req);
} label_reqs SEC(".maps");

/* sandbox id -> its ignore= patterns (absent: none). */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYSB_MAX_SANDBOXES);
	__type(key, __u32);
	__type(value, struct pysb_ignore_set);
} ignores SEC(".maps");

/* (dev, sandbox) -> access the policy grants that file system's mount point. */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYSB_MAX_MOUNTS);
	__type(key, struct pysb_mount_key);
	__type(value, __u32);
} mount_access SEC(".maps");

/* tgid -> 1: the program pysb-bpf starts, whose first execve is always allowed. */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYSB_MAX_SANDBOXES);
	__type(key, __u32);
	__type(value, __u32);
} exec_pending SEC(".maps");

/* ---- network (bpf/net.bpf.c, bpf/unix.bpf.c) ---- */

/*
 * (sandbox, IPv4 prefix) -> port set per protocol and direction. Entries carry the folded
 * rules of every covering prefix (see pysb_abi.h), so one longest-prefix lookup decides.
 * The loader refuses a policy that does not fit, never drops a rule.
 */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, PYSB_NET_MAP_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pysb_net4_key);
	__type(value, struct pysb_net_value);
} net4_rules SEC(".maps");

PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, PYSB_NET_MAP_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pysb_net6_key);
	__type(value, struct pysb_net_value);
} net6_rules SEC(".maps");

/* (sandbox, host address) -> the same value as the host's trie entry, for sandboxes with
 * PYSB_SB_NET_HOSTS (pysb_abi.h): one hash lookup in place of the trie's walk. */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYSB_NET_MAP_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pysb_net4_host_key);
	__type(value, struct pysb_net_value);
} net4_hosts SEC(".maps");

PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYSB_NET_MAP_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pysb_net6_host_key);
	__type(value, struct pysb_net_value);
} net6_hosts SEC(".maps");

/* (sandbox, id) -> port set, deduplicated across the sandbox's prefixes; id 0 allows nothing. */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYSB_NET_MAP_PORTSETS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pysb_net_ports_key);
	__type(value, struct pysb_net_ports);
} net_ports SEC(".maps");

/* sandbox id -> socket families and unix options the policy allows; absent = defaults. */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYSB_MAX_SANDBOXES);
	__type(key, __u32);
	__type(value, struct pysb_net_cfg);
} net_cfg SEC(".maps");

/* ---- end of network ---- */

/*
 * struct file -> cgroup id of the sandbox whose task set its owner. Written on every
 * F_SETOWN of the machine (a sandboxed setter adds, any other removes), so a file reused
 * at the same address never keeps a stale owner; removed when the file is freed. Up to
 * PYSB_MAX_SIGIO_OWNERS files with an owner set from inside sandboxes at once; when it is
 * full, F_SETOWN, FIOSETOWN and SIOCSPGRP fail in sandboxes (ENOSPC) rather than set an
 * owner no rule would judge (bpf/signal.bpf.c, bpf/tty.bpf.h).
 */
#define PYSB_MAX_SIGIO_OWNERS 16384

PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, PYSB_MAX_SIGIO_OWNERS);
	__type(key, __u64);
	__type(value, __u64);
} sigio_owners SEC(".maps");

/* SysV IPC objects created by sandboxed tasks: kern_ipc_perm address -> sandbox id
 * (bpf/sysv.bpf.c). Full: the creation fails, never an object left unplaced. */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, PYSB_MAX_IPC_OBJECTS);
	__type(key, __u64);
	__type(value, __u32);
} ipc_owner SEC(".maps");

/* Kernel keys created by sandboxed tasks: struct key address -> sandbox id
 * (bpf/keys.bpf.c). LRU: kernels without the key_free hook leave the records of freed
 * keys behind; evicting a live one only denies its sandbox that key (fail closed). */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PYSB_MAX_KEYS);
	__type(key, __u64);
	__type(value, __u32);
} key_owner SEC(".maps");

/*
 * Records of a sandbox id in `ipc_owner` ([PYSB_OWNER_IPC + id]), in `key_owner`
 * ([PYSB_OWNER_KEY + id]) and keys of its events in `event_dedup` ([PYSB_OWNER_DEDUP +
 * id]), never fewer than there are: +1 before a record is written, -1 after one is
 * deleted (by the kernel side here, by user space through the mapping for the records it
 * removes). A record replaced or evicted without its -1 leaves the count above, never
 * below. A run whose tasks are all gone (or not started) and whose count is 0 has no
 * record in that table: it skips reading it (65,536 buckets; event_dedup's 16,384, read
 * three times by a run that had no repeated denial before). Never reset: a late -1
 * cannot land on a later user of the id. 64-bit counts: an array's elements are 8 bytes
 * apart whatever their size, and user space indexes the mapping by the count's own type
 * (with 32-bit counts, its -1 for slot N landed on slot N/2, or on padding).
 */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PYSB_OWNER_TABLES *PYSB_MAX_SANDBOXES);
	__type(key, __u32);
	__type(value, __u64);
} owner_records SEC(".maps");

static __always_inline void owner_count(__u32 table, __u32 id, int delta)
{
	__u32 slot = table + id;
	__u64 *n;

	if (id >= PYSB_MAX_SANDBOXES)
		return;
	n = bpf_map_lookup_elem(&owner_records, &slot);
	if (n)
		__sync_fetch_and_add(n, delta);
}

/* Writes the record addr -> id of `map` (ipc_owner with PYSB_OWNER_IPC, key_owner with
 * PYSB_OWNER_KEY), counted first. 0 or the update's error (the count taken back). */
static __always_inline int owner_record(void *map, __u32 table, __u64 addr, __u32 id)
{
	int err;

	owner_count(table, id, 1);
	err = bpf_map_update_elem(map, &addr, &id, BPF_ANY);
	if (err)
		owner_count(table, id, -1);
	return err;
}

/* Deletes the record at addr of `map`, if any, and counts it off its sandbox. */
static __always_inline void owner_forget(void *map, __u32 table, __u64 addr)
{
	__u32 *id = bpf_map_lookup_elem(map, &addr), owner;

	if (!id)
		return;
	owner = *id;
	if (!bpf_map_delete_elem(map, &addr))
		owner_count(table, owner, -1);
}

/*
 * Events: one ring buffer per sandbox (each `pysb-bpf run` reads only its own), found
 * by sandbox id. The loader creates it and inserts it with BPF_NOEXIST, which is also
 * how sandbox ids are allocated among concurrent runs.
 */
struct events_ringbuf {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PYSB_RINGBUF_BYTES);
};

PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, PYSB_MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct events_ringbuf);
} events SEC(".maps");

/* Events that could not be delivered: [sandbox id * PYSB_LOST_MAX + reason], per CPU. */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PYSB_MAX_SANDBOXES *PYSB_LOST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* Events the kernel raised per sandbox id (denials; would-be denials in audit mode),
 * delivered or lost, per CPU: what `pysb-bpf status` shows. Zeroed when an id is
 * allocated, as `lost` is. */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PYSB_MAX_SANDBOXES);
	__type(key, __u32);
	__type(value, __u64);
} event_count SEC(".maps");

/* Repeated events, counted in the kernel (include/pysb_abi.h, struct pysb_dedup_key).
 * A plain hash, not an LRU: an LRU would evict counts user space has not read. */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYSB_DEDUP_ENTRIES);
	__type(key, struct pysb_dedup_key);
	__type(value, struct pysb_dedup_val);
} event_dedup SEC(".maps");

/*
 * Events are built in a per-CPU buffer ([2 * n]), then copied at their real size
 * ([2 * n + 1]) into the ring buffer: most records are a few hundred bytes, not the 4 KiB
 * a path may need, so a full ring holds twenty times more of them. On a preemptible
 * kernel a hook can be preempted while it holds its pair, and the hooks of other tasks
 * then run on the same CPU: they take the next free pair (`busy`), up to
 * PYSB_EVENT_NEST at once; only beyond that is an event lost (PYSB_LOST_PREEMPTED,
 * counted and reported). A task holds one pair at most: no hook of ours runs nested in
 * another on the same task. 7.2's lazy preemption, with one pair per CPU, lost 36 % of
 * the events of four sandboxed processes sharing a CPU.
 */
#define PYSB_EVENT_SLACK 256
#define PYSB_EVENT_NEST	 8 /* a power of two: event_send masks the pair read back */

struct pysb_event_buf {
	__u32 busy;
	__u32 pair; /* n, for event_send to find [2 * n + 1] */
	struct pysb_event e;
	char slack[PYSB_EVENT_SLACK]; /* path components written at a masked offset */
	/* event_send's key and new value of event_dedup ([1]): off the hooks' stack */
	struct pysb_dedup_key dkey;
	struct pysb_dedup_val dval;
	/* pysb_event_path's dentry and mount (bpf/event.bpf.c): a global function takes no
	 * kernel pointer, and one kept in a map value reads back as a number */
	__u64 name_d, name_mnt;
};

PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * PYSB_EVENT_NEST);
	__type(key, __u32);
	__type(value, struct pysb_event_buf);
} event_buf SEC(".maps");

/*
 * Creator credentials of live overlay file systems (cred pointer -> super_block pointer),
 * noted when a sandboxed task's hook first meets an overlay object and removed when the
 * overlay's super block is freed (lsm/sb_free_security). A task runs with one of these
 * as its current cred only inside overlayfs, acting on its own layers (path.bpf.h,
 * overlay_internal). Full: overlays not noted are judged like any file (deny more).
 */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} ovl_creds SEC(".maps");

/*
 * The last super block this CPU checked for note_overlay() (bpf/path.bpf.h), with the
 * value of `sb_gen` then: a walk on the same file system skips the check. `sb_gen` counts
 * freed super blocks (lsm/sb_free_security), so a super block freed and another one
 * allocated at its address is checked again. A stale slot (a hook of another task on
 * this CPU in between) only makes note_overlay check once more, or, at worst, miss an
 * overlay: judged like any file system then (deny more, never less).
 */
struct pysb_sb_seen {
	__u64 sb;
	__u64 gen;
};

PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pysb_sb_seen);
} sb_seen SEC(".maps");

PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sb_gen SEC(".maps");

/*
 * The sandbox lookup's cache (bpf/nearest.h, pysb_cached_sandbox): per task, what the walk
 * over its cgroup's ancestors answered, for which cgroup and which generation of
 * `sandboxes` (struct pysb_sandbox_cache, pysb_abi.h). Created on a task's first hooked
 * syscall, freed with the task.
 */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pysb_sandbox_cache);
} sandbox_cache SEC(".maps");

/*
 * The shared cgroup table in front of sandbox_cache (bpf/nearest.h, pysb_table_word): per
 * cgroup id (mod PYSB_CGROUP_TABLE_SLOTS), "no sandbox" or "its own sandbox" at a
 * generation of `sandboxes`, in one word. Mappable: user space zeroes it, word by word,
 * when the generation's low half could come round again (loader_bump_sandbox_gen).
 */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PYSB_CGROUP_TABLE_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} cgroup_table SEC(".maps");

/*
 * [0]: the generation of `sandboxes`. User space adds 1 (an atomic add through a shared
 * mapping, loader_bump_sandbox_gen) after every change of `sandboxes` and before it says
 * the cgroup is confined; every cached answer of an older generation is then stale.
 */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sandbox_gen SEC(".maps");

/*
 * The cgroups the kernel confined at their creation (bpf/watch.bpf.c: PYSB_SB_KERNEL, their
 * socket programs not attached yet), by one bit of a hash of their id, set before their
 * entry in `sandboxes` is written and never cleared (ids are never reused: a set bit only
 * costs the cgroups that share it the fast path of bpf/socket.bpf.c, nothing_to_judge).
 */
#define PYSB_BORN_FILTER_BITS 16

PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1u << (PYSB_BORN_FILTER_BITS - 6));
	__type(key, __u32);
	__type(value, __u64);
} born_filter SEC(".maps");

/*
 * The directory verdict cache (bpf/walk.bpf.c, "The cost of the walk" in docs/design.md):
 * per task, the last walks' answers for the directory of a judged file, valid while the
 * file system tree they read cannot have changed (`fs_gen`) and `sandboxes` is at the
 * same generation. Only for sandboxed tasks (created on their first cached walk), freed
 * with the task.
 */
#define PYSB_DIR_SETS_SHIFT 2
#define PYSB_DIR_SLOTS	    (2 << PYSB_DIR_SETS_SHIFT) /* two ways a set */

struct pysb_dir_slot {
	__u64 dir;	/* the directory's dentry; 0: empty */
	__u64 inode;	/* its d_inode then */
	__u64 vfsmnt;	/* the mount the walk started on */
	__u64 mnt_root; /* that mount's root dentry then */
	__u64 fs_gen;	/* fs_gen then (no rename in progress) */
	__u64 sb_gen;	/* sandbox_gen then */
	__u32 sandbox;
	__u32 granted, rule;
	__u8 ignored; /* a name from the directory up to the rule matched an ignore= */
	__u8 mru;     /* in a set's first slot: the way (0, 1) used last */
	__u8 _pad[2];
};

struct pysb_dir_cache {
	struct pysb_dir_slot slot[PYSB_DIR_SLOTS];
	__u64 addr[2]; /* scratch of walk_cached (bpf/path.bpf.h): pointers read back as numbers */
	/* A copy of the task's sandbox entry, kept by file_sandbox (bpf/path.bpf.h): valid
	 * while the task is in cgroup `sb_own`, which is that sandbox's own cgroup, and
	 * `sandboxes` is at generation `sb_gen`. sb_own 0: none, or being written. */
	__u64 sb_own, sb_gen;
	struct pysb_sandbox_cfg sb_cfg;
};

PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pysb_dir_cache);
} dir_cache SEC(".maps");

/*
 * [0]: the file system tree's generation, for the directory verdict cache. The low 48
 * bits count changes that can alter a walk's answer: a directory renamed (counted when
 * vfs_rename starts and again when it returns) and a directory inode of a cacheable file
 * system freed (its address may come back as another directory). The high 16 bits count
 * the renames in progress: no answer is cached or used while one runs (its d_move is
 * between the two counts).
 */
#define PYSB_FS_BUSY_SHIFT 48
#define PYSB_FS_BUSY_ONE   (1ULL << PYSB_FS_BUSY_SHIFT)

PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} fs_gen SEC(".maps");

/*
 * The cgroups the daemon will claim: new cgroups matching a slot get the slot's sandbox
 * at their creation (bpf/watch.bpf.c, struct pysb_watch). Written by the daemon only.
 */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PYSB_MAX_WATCH);
	__type(key, __u32);
	__type(value, struct pysb_watch);
} cgroup_watch SEC(".maps");

/* Ids of cgroups bpf/watch.bpf.c confined at their creation, for the daemon, which
 * then confines them for good without waiting for its scan. Full: the scan finds them. */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} cgroup_born SEC(".maps");

/* Threads executing the program they already run (runc
 * init re-executing itself): that execve does not arm the cgroup (bpf/watch.bpf.c). */
PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} born_reexec SEC(".maps");

/* The state of one glob match (bpf/watch.bpf.c, glob_step). */
struct pysb_glob_state {
	__u32 slot;
	__u32 si, pi;
	__u32 star_pi, star_si;
	int result; /* 1: match; -1: no match; 0: undecided (steps ran out) */
};

/* The path of the cgroup being created, for the matcher, and the matcher's state (per
 * CPU: the tracepoint runs with interrupts off, under the kernel's
 * trace_cgroup_path_lock). The state in a map value, not on the stack: the verifier
 * knows nothing of the numbers it reads back, so it checks a step of the match once
 * (6.7 and later check a bpf_loop callback as a loop, until its states converge: with
 * the positions on the stack, known exactly, that took 650,000 instructions and 8 s of
 * every first load on 7.2). */
struct pysb_new_cgroup {
	char path[PYSB_WATCH_LEN];
	struct pysb_glob_state glob;
};

PYSB_MAP struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pysb_new_cgroup);
} cgroup_new_path SEC(".maps");

#endif /* PYSB_MAPS_BPF_H */
