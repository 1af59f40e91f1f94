/* SPDX-License-Identifier: MIT */
/*
 * Loads pysb-bpf's BPF object once per boot and shares it (pinned under
 * /sys/fs/bpf/pysb-bpf/<object hash>), registers sandboxes in it, fills and reads its maps.
 */
#ifndef PYSB_LOADER_H
#define PYSB_LOADER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pysb_abi.h"

/* Where the shared instances are pinned: one directory per BPF object hash. */
#define PYSB_PIN_ROOT "/sys/fs/bpf/pysb-bpf"

struct pysb_bpf;

/*
 * The maps user space reads and writes (bpf/maps.bpf.h), by name. A run of a pinned
 * instance opens just these from their pins, one bpf(BPF_OBJ_GET) each, instead of handing
 * every map of the skeleton to libbpf (six system calls a map, ~70 ms of each start under
 * emulation). The programs' own maps are never opened by user space.
 */
/* clang-format off */
#define LOADER_MAPS(X)                                                                     \
	X(sandboxes) X(sandbox_gen) X(events) X(lost) X(event_count) X(event_dedup)        \
	X(file_rules) X(mount_access) X(label_reqs) X(ignores) X(exec_pending)             \
	X(ipc_owner) X(key_owner) X(owner_records) X(net4_rules) X(net6_rules) X(net_ports) \
	X(net4_hosts) X(net6_hosts) X(net_cfg) X(cgroup_watch) X(cgroup_born)
/* clang-format on */

struct loader_maps {
#define LOADER_MAP_FD(name) int name;
	LOADER_MAPS(LOADER_MAP_FD)
#undef LOADER_MAP_FD
};

#define LOADER_MAX_PROGS 128

struct loader {
	struct pysb_bpf *skel; /* only in the process that loads and pins the instance */
	bool loaded;	       /* (then true) */
	bool started;	       /* loader_start succeeded */
	struct loader_maps fd; /* descriptors of this process's own, -1 until opened */
	/* by the index of the object's program table (build/pysb_progs.h): attached on
	 * this kernel (loaded here, or found pinned) */
	bool prog_on[LOADER_MAX_PROGS];
	char pin_dir[64];    /* PIN_ROOT/<16 hex digits> */
	uint32_t sandbox_id; /* 0 until loader_sandbox_alloc */
	/* sandbox_id was just allocated, with no entry in any rule map (an id's last user
	 * or the gc removed them before it was free): its fill skips looking for leftovers */
	bool id_clean;
	uint32_t last_id; /* the last id this process allocated: the next search starts there */
	int ringbuf_fd;	  /* this sandbox's events */
	/* A sandbox id (and ring) taken from the pool (user/kernel/loader_pool.c): its file,
	 * flock()ed while this process lives; pool_freed once its rules are removed. */
	bool pooled, pool_freed;
	int pool_fd;
	uint32_t pool_map_id;
	/* sandbox_gen mapped at its first bump and kept (loader_bump_sandbox_gen): a later
	 * bump cannot fail, and the kernel's copies of an entry (bpf/path.bpf.h
	 * file_sandbox) rely on a bump after every change */
	uint64_t *gen_map;
};

/*
 * Opens the shared instance, loading, attaching and pinning it first if this is the
 * first run since boot (or since the binary changed). Never leaves a half-attached state:
 * the pins appear complete or not at all. On failure `what` names the step (load, attach,
 * pin, ...) and `err` the errno, for probe's report.
 */
int loader_start(struct loader *l, const char **what, int *err);
/* Is this build's instance pinned? Then this kernel (pins do not survive a reboot) loaded
 * and attached its programs: the BPF LSM is active, with BTF and cgroup v2. */
bool loader_pinned(void);
/* FNV-1a of the BPF object this binary carries: the name of its pinned instance. */
uint64_t loader_object_hash(void);

/* Releases this process's references; the shared instance stays (pinned). */
void loader_stop(struct loader *l);

/* Can this kernel run the programs? From this build's pinned instance when there is one
 * (*pinned), else (or with `fresh`) by a private load + attach + detach. */
int loader_probe(bool fresh, bool *pinned, const char **what, int *err, char *hooks, size_t len);

/* A set of sandbox ids: removing many sandboxes costs one pass over each map. */
struct sandbox_set {
	uint64_t bits[PYSB_MAX_SANDBOXES / 64];
};
static inline void sandbox_set_add(struct sandbox_set *s, uint32_t id)
{
	if (id < PYSB_MAX_SANDBOXES)
		s->bits[id / 64] |= 1ull << (id % 64);
}
static inline bool sandbox_set_has(const struct sandbox_set *s, uint32_t id)
{
	return id < PYSB_MAX_SANDBOXES && (s->bits[id / 64] >> (id % 64) & 1);
}

/* Deletes every key of map `fd` (named `name` in messages) whose u32 at offset `off` is in
 * `set`. */
void loader_forget_keys(int fd, const char *name, size_t klen, size_t off,
			const struct sandbox_set *set);

/* Forgets the sandboxes whose cgroup is not in `alive` (left by a pysb-bpf that died). */
void loader_gc(struct loader *l, const uint64_t *alive, size_t n_alive);

/* Allocates a sandbox id and its event ring buffer: from the pool for the default size. */
int loader_sandbox_alloc(struct loader *l, uint32_t *id, uint32_t ringbuf_bytes);
/* The pool of rings kept across runs (user/kernel/loader_pool.c): takes a free pooled id (its
 * ring drained, a dead run's rules removed) or adds one; 0 or -errno. Release marks it
 * free (clean once loader_sandbox_free removed its rules). Has: is `id` pooled (its
 * `events` entry stays when its sandbox goes). Remove: the pool of instance `hash`. */
int loader_pool_claim(struct loader *l, uint32_t *id);
void loader_pool_release(struct loader *l);
bool loader_pool_has(uint32_t id);
void loader_pool_remove(const char *hash);
/* The parts, for sandboxes pysb-bpf does not run itself (the daemon): a new ring buffer
 * (fd, or -errno); a fresh id whose events go to ringbuf_fd (lost counters zeroed); the
 * ring buffer of an existing id (a new fd, or -errno). */
int loader_ringbuf_create(uint32_t ringbuf_bytes);
/* The daemon's rings carry a name of their own (BPF map name PYSB_DAEMON_RING_NAME): a
 * daemon that starts tells the ids a dead daemon allocated (loader_daemon_ids: every id
 * whose ring has that name) from those of `pysb-bpf run` sessions, which it never frees. */
#define PYSB_DAEMON_RING_NAME "pysb_daemon"
int loader_daemon_ringbuf_create(uint32_t ringbuf_bytes);
int loader_daemon_ids(const struct loader *l, struct sandbox_set *set);
int loader_id_alloc(struct loader *l, int ringbuf_fd, uint32_t *id);
int loader_ringbuf_of(const struct loader *l, uint32_t id);
/* map_ids[id]: the map id of the ring `events` holds for sandbox `id`, 0 if none; read in
 * one batch (cheap, where a lookup of a map of maps waits an RCU grace period). */
int loader_events_table(const struct loader *l, uint32_t map_ids[PYSB_MAX_SANDBOXES]);
/* Removes everything of sandbox `id` (and cgroup `cgid` if not 0) from the maps. */
void loader_sandbox_free(struct loader *l, uint64_t cgid, uint32_t id);
/* The same for a sandbox none of whose tasks is left (its cgroup destroyed and
 * unregistered), whose rule entries (file_rules, mount_access, the network's) the caller
 * deleted by key (sandbox_free_maps): the entries one per id and those the kernel side
 * wrote, the owner records only if `owner_records` counts any. */
void loader_sandbox_free_gone(struct loader *l, uint32_t id);
/* Deletes `n` keys of `klen` bytes from `map`: in one call where the kernel has a batch
 * for it, else one by one; a key already absent is no error. 0 or the first -errno. */
int loader_delete_keys(int map, const void *keys, size_t klen, uint32_t n);
/* The same for every sandbox of `set` (their cgroups already switched away). The `events`
 * entry of a pooled id stays (its ring is the pool's). _rules: all but `events`. */
void loader_sandboxes_free(struct loader *l, const struct sandbox_set *set);
/* The SysV IPC objects and keys sandbox `from` owns, given to sandbox `to` (a reload). */
void loader_owners_move(struct loader *l, uint32_t from, uint32_t to);
void loader_sandboxes_free_rules(struct loader *l, const struct sandbox_set *set);
/* Zeroes the id's counters (`lost`, `event_count`). */
void loader_reset_lost_id(struct loader *l, uint32_t id);

/* Attaches every `cgroup/` program (socket hooks) once to the parent of run cgroup
 * `run_cgroup` (<cgroup2>/pysb-bpf), pinned with the instance; nothing when done already.
 * They act on the tasks of registered sandboxes only. 0 or -errno. */
int loader_attach_runs(struct loader *l, const char *run_cgroup);
/* Attaches every `cgroup/` program (socket hooks) to a cgroup, the links pinned as
 * <pin dir>/<pin_prefix>-<program>; their fds are kept in link_fds (NULL: closed, the pins
 * hold them). How many of those pins exist (0 unless
 * all do), and their removal (which detaches them once no fd is left). */
int loader_attach_cgroup_pinned(struct loader *l, int cgroup_fd, const char *pin_prefix,
				int *link_fds, int *n_links, int max_links);
int loader_links_pinned(const struct loader *l, const char *pin_prefix);
void loader_unpin_links(const struct loader *l, const char *pin_prefix);

/*
 * The inode objects a policy's file rules name, held open (O_PATH) while the rules live:
 * a label lives as long as its inode, and an inode no descriptor holds may be evicted,
 * its label with it (its rules then deny; see struct pysb_label_req). Entry i is the
 * i-th path pinned; fd -1 and label 0 when empty.
 */
struct file_pins {
	int *fd;
	uint64_t *label;
	size_t n, cap;
	size_t labelled; /* entries whose label is read; the others' are asked */
	uint32_t tid;	 /* the thread whose label request is pending (0: none) */
	/* the paths of the entries asked, for the messages: the caller's, alive until the
	 * batch is read */
	const char *asked[PYSB_LABEL_BATCH];
};
/* Opens `path` (O_PATH; nofollow: a symbolic link itself), keeps the descriptor in `p`
 * and asks for the label of its inode, read by batch (struct pysb_label_req); 0 or
 * -errno (-ENOSPC: no label left; -EMFILE: RLIMIT_NOFILE's hard limit reached), after
 * saying what failed (pr_err). A series of them ends with loader_pins_labelled, which
 * reads the last labels (0 or -errno, said the same way) and removes the label request:
 * only then is p->label complete. `path` must live until then. */
int loader_pin_path(struct loader *l, struct file_pins *p, const char *path, bool nofollow);
int loader_pins_labelled(struct loader *l, struct file_pins *p);
/* Closes every descriptor of `p` and empties it. */
void file_pins_release(struct file_pins *p);

struct compiled;
/* Puts the compiled rules into the maps under sandbox id `sandbox_id` (before the
 * cgroup is switched to that id), holding each rule path open in `pins` (filled here
 * when empty). Returns 0, or -1 after saying what failed. (sandbox_maps.c) */
int sandbox_fill_maps(struct loader *l, const struct compiled *c, struct file_pins *pins,
		      uint32_t sandbox_id);
/*
 * The file_rules entries of c's files and hidden files, whose labels are labels[] (files,
 * then hidden files), into keys[] and rules[] (room for both counts): paths of one inode
 * (two spellings, hard links) have one label and one entry, the union of their access,
 * named by the first of them; a hidden file's empty grant comes after, and replaces any
 * other. How many, or (size_t)-1 out of memory. (sandbox_maps.c)
 */
size_t file_rules_entries(const struct compiled *c, const uint64_t *labels, uint32_t sandbox_id,
			  struct pysb_file_key *keys, struct pysb_file_rule *rules);
/* The end of a run's sandbox, whose cgroup is destroyed (no task left): its entries out of
 * every map, those sandbox_fill_maps wrote for `c` deleted by key rather than looked for
 * in maps shared with every other sandbox (loader_sandbox_free_gone); if that fails,
 * looked for (loader_sandbox_free). (sandbox_maps.c) */
void sandbox_free_maps(struct loader *l, const struct compiled *c, const struct file_pins *pins,
		       uint64_t cgid, uint32_t sandbox_id);

/* Puts rules[i] on keys[i] (label, sandbox), in this order: a later key replaces an
 * earlier equal one. 0 or -errno. */
int loader_put_file_rules(struct loader *l, const struct pysb_file_key *keys,
			  const struct pysb_file_rule *rules, uint32_t n);
int loader_add_mount_access(struct loader *l, const struct pysb_mount_key *key, uint32_t access);
int loader_set_ignores(struct loader *l, uint32_t id, const struct pysb_ignore_set *set);
/* The switch that puts a cgroup under its rules; call it last. It bumps the generation
 * (below); if that fails, the entry is removed again and -errno returned. */
int loader_add_sandbox(struct loader *l, uint64_t cgid, const struct pysb_sandbox_cfg *cfg);
/* A registered cgroup's entry replaced (a daemon's reload: its key stays, so a task's
 * cached lookup still finds it); the generation bumped. 0 or -errno. */
int loader_switch_sandbox(struct loader *l, uint64_t cgid, const struct pysb_sandbox_cfg *cfg);
/* The cgroup is a sandbox no more; the generation bumped. 0 or -errno. */
int loader_remove_sandbox(struct loader *l, uint64_t cgid);
/* The entry of cgid. 0, or -errno (-ENOENT: not a sandbox). */
int loader_sandbox_of(const struct loader *l, uint64_t cgid, struct pysb_sandbox_cfg *cfg);
/* The registered cgroup after *prev (NULL: the first). 0, or -errno (-ENOENT: no more). */
int loader_sandbox_next(const struct loader *l, const uint64_t *prev, uint64_t *next);
/* After EVERY write of `sandboxes` (update or delete), before the cgroup is said to be
 * confined or its program starts: the kernel's per-task cache of "which sandbox am I in"
 * is valid for one generation only (bpf/nearest.h, docs/design.md). 0 or -errno. */
int loader_bump_sandbox_gen(struct loader *l);
/* Releases the mapping loader_bump_sandbox_gen keeps (loader_stop calls it). */
void loader_unmap_sandbox_gen(struct loader *l);
/* Marks (add) or unmarks the process whose next execve is its own start. */
int loader_exec_pending(struct loader *l, uint32_t tgid, bool add);

/* Network maps of one sandbox (user/kernel/loader_net.c): fill (after removing any stale entry
 * of that id, unless it is l->id_clean), remove (every entry of the ids of `set`), and
 * clear (the entries the fill of `c` wrote, by key; net_cfg stays: 0 or -errno). */
struct compiled;
int loader_net_fill(struct loader *l, const struct compiled *c, uint32_t sandbox);
void loader_net_forget(struct loader *l, const struct sandbox_set *set);
int loader_net_clear(struct loader *l, const struct compiled *c, uint32_t sandbox);

int loader_events_fd(const struct loader *l);
/* One pr_info line per map of the shared instance: type, entries, key and value sizes. */
void loader_print_maps(const struct loader *l);
/* Events of this sandbox that could not be delivered, per reason, summed over CPUs. */
int loader_lost(const struct loader *l, uint64_t lost[PYSB_LOST_MAX]);
int loader_lost_id(const struct loader *l, uint32_t id, uint64_t lost[PYSB_LOST_MAX]);
/* The kernel's counts of repeated events (event_dedup, user/events_dedup.c). */
int loader_dedup_fd(const struct loader *l);
/* May sandbox `id` have keys in event_dedup (owner_records counts some, or is unreadable)?
 * false: none, the map need not be read for it. */
bool loader_dedup_held(const struct loader *l, uint32_t id);
/* `n` keys of sandbox `id` the caller deleted from event_dedup: counted off. */
void loader_dedup_deleted(const struct loader *l, uint32_t id, uint32_t n);

/* The sections ("lsm/file_open ...") of the programs for this kernel; returns how many. */
int loader_hooks(const struct loader *l, char *buf, size_t len);
/* The programs only sandboxes confined in place need (PYSB_SB_INPLACE), attached if they
 * are not yet: before such a sandbox is registered (attach, the daemon). 0, or -errno. */
int loader_inplace_hooks(struct loader *l);

#endif /* PYSB_LOADER_H */
