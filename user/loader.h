/* SPDX-License-Identifier: MIT */
/* Loads pysb-bpf's BPF object, attaches every program, fills and reads its maps. */
#ifndef PYSB_LOADER_H
#define PYSB_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pysb_abi.h"

struct pysb_bpf;
struct ring_buffer;

struct bpf_link;

struct loader {
	struct pysb_bpf *skel;
	bool attached;
	struct bpf_link *cg_links[32]; /* cgroup/ programs attached to the sandbox cgroup */
	int n_cg_links;
};

struct loader_opts {
	uint32_t ringbuf_bytes; /* power of two >= page size; 0: default */
};

/*
 * Opens, loads and attaches all programs. Never leaves a half-attached state: on any
 * failure everything loaded so far is destroyed. `what` receives a short name of the step
 * that failed (load / attach) and `err` the errno, for probe's report.
 */
int loader_start(struct loader *l, const struct loader_opts *opts, const char **what, int *err);
void loader_stop(struct loader *l);

/* Attaches every `cgroup/` program (socket hooks) to the cgroup; undone by loader_stop. */
int loader_attach_cgroup(struct loader *l, int cgroup_fd);

int loader_add_file_rule(struct loader *l, const struct pysb_file_key *key,
			 const struct pysb_file_rule *rule);
/* The switch that puts a cgroup under its rules; call it last. */
int loader_add_sandbox(struct loader *l, uint64_t cgid, const struct pysb_sandbox_cfg *cfg);
int loader_add_mount_access(struct loader *l, const struct pysb_mount_key *key, uint32_t access);
/* Marks (add) or unmarks the process whose next execve is its own start. */
int loader_exec_pending(struct loader *l, uint32_t tgid, bool add);

/* Network maps of one sandbox (user/loader_net.c): fill (after removing any stale entry
 * of that id), and remove. */
struct compiled;
int loader_net_fill(struct loader *l, const struct compiled *c, uint32_t sandbox);
void loader_net_forget(struct loader *l, uint32_t sandbox);

int loader_events_fd(const struct loader *l);
/* Events that could not be delivered, per reason, summed over CPUs. */
int loader_lost(const struct loader *l, uint64_t lost[PYSB_LOST_MAX]);

/* The sections ("lsm/file_open ...") of the loaded programs, space-separated; returns how many. */
int loader_hooks(const struct loader *l, char *buf, size_t len);

#endif /* PYSB_LOADER_H */
