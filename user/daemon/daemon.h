/* SPDX-License-Identifier: MIT */
/* pysb-bpf daemon: policies kept on service cgroups, reloaded live (docs/fleet.md). */
#ifndef PYSB_DAEMON_H
#define PYSB_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

struct daemon_opts {
	const char *config_dir;	  /* the bindings: DIR/NAME.json */
	const char *events;	  /* "-" (stdout, the default) or a file */
	uint64_t events_max_size; /* rotate the file beyond this size; 0: never */
	unsigned events_keep;	  /* rotated files kept: FILE.1 ... FILE.N */
	const char *metrics;	  /* ADDR:PORT of the Prometheus endpoint, or NULL */
	unsigned rescan_ms;	  /* how often units and patterns are looked up again */
	unsigned hold_ms;	  /* a cgroup held until its first execve is armed by the
				      scan after this long (bpf/watch.bpf.c) */
	bool check;		  /* read and compile every binding, confine nothing */
	bool once;		  /* confine, adopt and release once, then exit */
};

/* Runs until SIGTERM/SIGINT (services stay confined: everything is pinned). Returns the
 * exit status. */
int daemon_main(const struct daemon_opts *o);

/* ---- bindings (user/daemon/daemon_config.c) ---- */

enum binding_target {
	TARGET_CGROUP,	/* one cgroup directory */
	TARGET_UNIT,	/* a systemd unit's cgroup, looked up again when it restarts */
	TARGET_PATTERN, /* every cgroup matching a glob(7) pattern, now and later */
};

struct binding_conf {
	char name[256];	   /* the file name without .json */
	char file[4096];   /* DIR/NAME.json */
	char policy[4096]; /* absolute */
	enum binding_target kind;
	char target[4096]; /* cgroup: absolute directory; unit: name; pattern: absolute */
	bool audit;	   /* "mode": "audit" */
	enum {
		CONFINE_EXEC,
		CONFINE_CREATION,
		CONFINE_SCAN
	} confine_at;		/* unit, pattern:
				      from the first execve in a new cgroup (default), its
				      mkdir, or the scan (bpf/watch.bpf.c, docs/fleet.md) */
	char interpreter[4096]; /* for the implicit paths; "" = none */
	char script[4096];	/* "" = none */
};

/* Reads DIR/NAME.json. Returns 0, or -1 after saying what is wrong (file, key, what to
 * write instead). cgroot is the cgroup2 mount point. */
int binding_read(const char *dir, const char *fname, const char *cgroot, struct binding_conf *out);
/* The cgroup directory a unit runs in now (absolute): 0; 1 if systemd says it runs in
 * none (stopped); -1 if the question got no answer (no systemd, systemd re-executing, a
 * time-out): nothing may be concluded from it. */
int unit_cgroup(const char *unit, const char *cgroot, char *out, size_t len);
/* A string property of a unit's cgroup context (ControlGroup, Slice), asked of systemd
 * over its bus (user/daemon/systemd_bus.c) into out: 0 ("" for a unit type that runs no
 * processes), or -1 when systemd gave no answer. */
int systemd_unit_property(const char *unit, const char *prop, char *out, size_t len);
/* Where a unit that runs in no cgroup now will run (absolute): its slice's cgroup and the
 * unit's name (systemd's placement), so that bpf/watch.bpf.c confines it at its start.
 * 0, or -1 if systemd gave no slice. */
int unit_future_cgroup(const char *unit, const char *cgroot, char *out, size_t len);

#endif /* PYSB_DAEMON_H */
