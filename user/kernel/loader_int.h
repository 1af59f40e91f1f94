/* SPDX-License-Identifier: MIT */
/* Private to the files of `loader` (loader.c, pinned.c, maps.c): what they share. */
#ifndef PYSB_LOADER_INT_H
#define PYSB_LOADER_INT_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "loader.h"
#include "log.h"
#include "stopwatch.h"
#include "pysb.skel.h"
#include "status.h"

/*
 * The shared instance. The programs are global and act on registered cgroups only, so
 * one instance serves every sandbox on the machine: the first `run` loads, attaches and
 * pins it under /sys/fs/bpf/pysb-bpf/<object hash>; later runs open the pinned maps and
 * only add their rules. Pinned links stay attached when pysb-bpf dies, so a sandbox whose
 * supervisor was SIGKILLed stays confined (docs/design.md, "Fail closed").
 */
#define PIN_ROOT     PYSB_PIN_ROOT
#define LOCK_FILE    "/run/pysb-bpf.lock"
/* The pins of the socket programs' links on the parent of every run cgroup. */
#define RUNS_PREFIX  "runs"
#define BPF_FS_MAGIC 0xcafe4a11

/* loader.c */
bool is_optional(const char *hook);
/* Attached on demand, for sandboxes confined in place (loader_inplace_hooks). */
bool loader_prog_inplace(const char *name);
/* Not attached when the instance is loaded (pinned as prog-<name>): the cgroup/ programs,
 * attached per cgroup, and the in-place ones. */
bool loader_prog_unattached(const char *sec, const char *name);
int label_arm(int reqs, uint32_t tid);
int label_ask(int fd);
int label_collect(int reqs, uint32_t tid, const int *fds, uint64_t *labels, size_t n,
		  size_t *given);
void label_end(int reqs, uint32_t tid);

/* pinned.c */
void pin_dir_of(char *buf, size_t len);
int ensure_bpffs(void);
void pin_path(char *buf, size_t len, const char *dir, const char *kind, const char *name);
void unpin_dir(const char *dir);
int pin_all(struct pysb_bpf *skel, const char *dir);
void remove_stale_tmp(void);
void remove_idle_instances(const char *keep);
/* The object's programs, as scripts/prog_table.c lists them (build/pysb_progs.h). */
struct pysb_prog_info {
	const char *name, *sec;
	int attach_type;
};
extern const struct pysb_prog_info *const loader_progs;
extern const size_t loader_n_progs;
int open_pinned(const char *dir, struct loader_maps *maps, bool prog_on[LOADER_MAX_PROGS],
		const char **what, int *err);
/* prog_on[] of an opened (adapted) skeleton: the programs it loads. */
void progs_of_skel(const struct pysb_bpf *skel, bool prog_on[LOADER_MAX_PROGS]);
void loader_maps_init(struct loader_maps *m);
void loader_maps_close(struct loader_maps *m);
/* Descriptors of the loaded skeleton's maps, this process's own (dup). */
int loader_maps_of(struct loader_maps *m, const struct pysb_bpf *skel);

/* maps.c */
void loader_sandbox_free(struct loader *l, uint64_t cgid, uint32_t id);

#endif
