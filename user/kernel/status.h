/* SPDX-License-Identifier: MIT */
/*
 * pysb-bpf status: what is confined now. The truth is the pinned `sandboxes` map of every
 * loaded instance; who owns each entry (a run or attach supervisor, a daemon binding), its
 * policy file and mode come from a small record per sandbox cgroup, written when the
 * sandbox is registered and removed when it is torn down (/run/pysb-bpf/sandboxes/<cgroup
 * id>.json). A record is only believed for a cgroup the map holds, whose directory still
 * has that id; the mode is the kernel's.
 */
#ifndef PYSB_STATUS_H
#define PYSB_STATUS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "pysb_abi.h"

#define PYSB_RECORD_DIR "/run/pysb-bpf/sandboxes"

/* Who keeps a sandbox. */
enum sandbox_owner {
	OWNER_UNKNOWN = 0, /* no (believable) record */
	OWNER_RUN,	   /* pysb-bpf run: pid is its supervisor */
	OWNER_ATTACH,	   /* pysb-bpf attach: pid is its supervisor, target the confined one */
	OWNER_DAEMON,	   /* pysb-bpf daemon: binding names it, pid is the daemon */
};

struct sandbox_record {
	uint64_t cgid;	  /* the cgroup id, the key of `sandboxes` */
	uint32_t sandbox; /* the sandbox id when the record was written */
	enum sandbox_owner owner;
	int pid;		      /* the supervisor (run, attach) or the daemon */
	unsigned long long pid_start; /* its start time (/proc/PID/stat), against pid reuse */
	int target;		      /* attach: the process it confined */
	char binding[256];	      /* daemon: the binding's name */
	char policy[PATH_MAX];	      /* absolute */
	char mode[16];		      /* enforce, audit, learn */
	char cgroup[PATH_MAX];	      /* the cgroup directory, absolute */
	long long since;	      /* unix time of registration */
};

/* The directory of the records (tests point it elsewhere; NULL: PYSB_RECORD_DIR). */
void sandbox_record_dir(const char *dir);
/* Fills pid and pid_start with this process's, since with now. */
void sandbox_record_self(struct sandbox_record *r);
/* Writes the record atomically (a temporary file renamed). Returns 0 or -errno (said). */
int sandbox_record_write(const struct sandbox_record *r);
int sandbox_record_read(uint64_t cgid, struct sandbox_record *r);
void sandbox_record_remove(uint64_t cgid);
/* The start time of process pid (clock ticks after boot), 0 if there is none. */
unsigned long long pid_start_time(int pid);

/* One confined cgroup, as status shows it. */
struct status_entry {
	char instance[64]; /* the pin directory it is registered in */
	uint64_t cgid;
	struct pysb_sandbox_cfg cfg; /* from `sandboxes`: the truth */
	bool have_record;	     /* rec is this cgroup's */
	struct sandbox_record rec;
	char cgroup[PATH_MAX]; /* "" if the directory is gone */
	bool owner_running;    /* the supervisor or daemon of the record still runs */
	bool counts_known;
	uint64_t events;
	uint64_t lost[PYSB_LOST_MAX];
};

struct status {
	char (*instances)[64]; /* pin directories found */
	size_t n_instances;
	struct status_entry *v;
	size_t n;
};

/* The mode shown: the kernel's (audit flag), "learn" when the record says so. */
const char *status_mode(const struct status_entry *e);
/* Text: an aligned table, or a sentence when nothing is confined. */
void status_print(FILE *out, const struct status *s);
json_t *status_json(const struct status *s);

/* pysb-bpf status [--json]: returns the exit status. */
int status_main(bool json);

#endif /* PYSB_STATUS_H */
