/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "cgroup.h"
#include "loader.h"
#include "log.h"
#include "probe.h"

#define LSM_FILE "/sys/kernel/security/lsm"

static void report(bool verbose, bool ok, const char *check, const char *detail)
{
	if (ok && verbose)
		printf("ok    %-22s %s\n", check, detail);
	else if (!ok)
		fprintf(verbose ? stdout : stderr, "%s%-22s %s\n", verbose ? "FAIL  " : "pysb-bpf: check failed: ",
			check, detail);
}

static int check_lsm(bool verbose)
{
	char buf[512] = "", detail[768];
	FILE *f = fopen(LSM_FILE, "re");
	bool ok = false;

	if (!f && errno == ENOENT) {
		/* securityfs may simply not be mounted (minimal systems, initramfs). */
		mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL);
		f = fopen(LSM_FILE, "re");
	}
	if (!f) {
		snprintf(detail, sizeof(detail), "cannot read %s: %s; mount securityfs there",
			 LSM_FILE, strerror(errno));
		report(verbose, false, "bpf in LSM list", detail);
		return -1;
	}
	if (fgets(buf, sizeof(buf), f)) {
		char *save = NULL;
		char copy[512];

		buf[strcspn(buf, "\n")] = '\0';
		snprintf(copy, sizeof(copy), "%s", buf);
		for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
			ok |= !strcmp(t, "bpf");
	}
	fclose(f);
	if (ok)
		snprintf(detail, sizeof(detail), "(%s)", buf);
	else
		snprintf(detail, sizeof(detail),
			 "active LSMs are '%s'; boot with lsm=%s%sbpf on the kernel command line "
			 "(and CONFIG_BPF_LSM=y)", buf, buf, *buf ? "," : "");
	report(verbose, ok, "bpf in LSM list", detail);
	return ok ? 0 : -1;
}

static int check_btf(bool verbose)
{
	bool ok = !access("/sys/kernel/btf/vmlinux", R_OK);

	report(verbose, ok, "kernel BTF",
	       ok ? "/sys/kernel/btf/vmlinux" :
		    "/sys/kernel/btf/vmlinux missing: a kernel built with CONFIG_DEBUG_INFO_BTF=y is needed");
	return ok ? 0 : -1;
}

static int check_cgroup2(bool verbose)
{
	char mnt[PATH_MAX], detail[PATH_MAX + 32];
	bool ok = !cgroup2_mount(mnt, sizeof(mnt));

	if (ok)
		snprintf(detail, sizeof(detail), "mounted at %s", mnt);
	else
		snprintf(detail, sizeof(detail),
			 "no cgroup2 mount; mount -t cgroup2 none /sys/fs/cgroup");
	report(verbose, ok, "cgroup v2", detail);
	return ok ? 0 : -1;
}

void probe_report_load_failure(const char *what, int err, bool verbose)
{
	char detail[512];

	if (err == EPERM)
		snprintf(detail, sizeof(detail),
			 "%s refused with EPERM: this kernel does not let BPF LSM programs load "
			 "(BPF trampolines refused, e.g. lockdown or a restricted VM kernel); run "
			 "under a kernel that allows them, e.g. scripts/vm-run -- build/pysb-bpf ...",
			 what);
	else
		snprintf(detail, sizeof(detail), "%s failed: %s (run with -vv for the verifier log)",
			 what, strerror(err));
	report(verbose, false, "LSM programs load", detail);
}

static int check_load(bool verbose)
{
	const char *what = "";
	int err = 0;
	char detail[1536], hooks[1024];

	if (geteuid() != 0) {
		report(verbose, false, "LSM programs load",
		       "not root: loading BPF LSM programs needs root (or CAP_BPF+CAP_SYS_ADMIN)");
		return -1;
	}
	if (loader_probe(&what, &err, hooks, sizeof(hooks))) {
		probe_report_load_failure(what, err, verbose);
		return -1;
	}
	snprintf(detail, sizeof(detail), "loaded and attached: %s (lsm_cgroup slots used: 0 of 10)",
		 hooks);
	report(verbose, true, "LSM programs load", detail);
	return 0;
}

int probe_run(bool load, bool verbose)
{
	int failed = 0;

	failed |= check_lsm(verbose);
	failed |= check_btf(verbose);
	failed |= check_cgroup2(verbose);
	if (load && !failed)
		failed |= check_load(verbose);
	else if (load && verbose)
		printf("skip  %-22s an earlier check failed\n", "LSM programs load");
	return failed ? -1 : 0;
}
