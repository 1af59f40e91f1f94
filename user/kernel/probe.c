/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <jansson.h>

#include "cgroup.h"
#include "fsident.h"
#include "loader.h"
#include "log.h"
#include "probe.h"

#define LSM_FILE "/sys/kernel/security/lsm"

/* probe --json: the lines probe prints, collected as {"status", "check", "detail"}. */
static json_t *json_checks;

/* One line of probe's report: status ok, FAIL, info or skip. */
static void line(const char *status, const char *check, const char *detail)
{
	if (json_checks)
		json_array_append_new(json_checks, json_pack("{s:s, s:s, s:s}", "status", status,
							     "check", check, "detail", detail));
	else
		printf("%-5s %-38s %s\n", status, check, detail);
}

static void report(bool verbose, bool ok, const char *check, const char *detail)
{
	if (verbose)
		line(ok ? "ok" : "FAIL", check, detail);
	else if (!ok)
		fprintf(stderr, "pysb-bpf: check failed: %s: %s\n", check, detail);
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
			 "(and CONFIG_BPF_LSM=y)",
			 buf, buf, *buf ? "," : "");
	report(verbose, ok, "bpf in LSM list", detail);
	return ok ? 0 : -1;
}

static int check_btf(bool verbose)
{
	bool ok = !access("/sys/kernel/btf/vmlinux", R_OK);

	report(verbose, ok, "kernel BTF",
	       ok ? "/sys/kernel/btf/vmlinux"
		  : "/sys/kernel/btf/vmlinux missing: a kernel built with CONFIG_DEBUG_INFO_BTF=y is needed");
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

/*
 * What the BPF side uses of the kernel, looked up by name in the kernel's own BTF (the
 * enums of helper ids, map types and attach types), with the release that brought it.
 * The load that follows is the proof; this list says what is missing before it fails.
 */
static const struct feature {
	const char *type, *name, *since, *use;
} features[] = {
	{ "bpf_attach_type", "BPF_LSM_MAC", "5.7",
	  "the LSM programs (global, no lsm_cgroup slot)" },
	{ "bpf_func_id", "BPF_FUNC_get_current_ancestor_cgroup_id", "5.6",
	  "telling sandboxed tasks apart" },
	{ "bpf_func_id", "BPF_FUNC_d_path", "5.10", "the path of an opened or executed file" },
	{ "bpf_func_id", "BPF_FUNC_get_current_task_btf", "5.11",
	  "the task's root, for path walks" },
	{ "bpf_func_id", "BPF_FUNC_loop", "5.17", "path walks of any depth" },
	{ "bpf_func_id", "BPF_FUNC_ringbuf_output", "5.8", "events" },
	{ "bpf_map_type", "BPF_MAP_TYPE_RINGBUF", "5.8", "one event ring buffer per sandbox" },
	{ "bpf_map_type", "BPF_MAP_TYPE_HASH_OF_MAPS", "4.12", "ring buffers by sandbox id" },
	{ "bpf_map_type", "BPF_MAP_TYPE_LPM_TRIE", "4.11", "net= address prefixes" },
	{ "bpf_map_type", "BPF_MAP_TYPE_TASK_STORAGE", "5.11",
	  "each task's cached sandbox lookup and directory verdicts" },
	{ "bpf_attach_type", "BPF_TRACE_FEXIT", "5.5",
	  "counting directory renames around vfs_rename (the verdict cache's invalidation)" },
	{ "bpf_attach_type", "BPF_CGROUP_INET4_CONNECT", "4.17",
	  "net= rules (socket address hooks)" },
	{ "bpf_attach_type", "BPF_CGROUP_UDP6_SENDMSG", "4.18", "net= rules for UDP" },
};

static bool btf_has_enum_value(const struct btf *btf, const char *type, const char *name)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	const struct btf_type *t;
	const struct btf_enum *e;

	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	e = btf_enum(t);
	for (int i = 0; i < btf_vlen(t); i++, e++)
		if (!strcmp(btf__name_by_offset(btf, e->name_off), name))
			return true;
	return false;
}

int probe_features(const struct btf *btf, bool verbose)
{
	char check[64], detail[256];
	int failed = 0;

	for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++) {
		const struct feature *f = &features[i];
		bool ok = btf_has_enum_value(btf, f->type, f->name);

		if (!strncmp(f->name, "BPF_FUNC_", 9))
			snprintf(check, sizeof(check), "helper bpf_%s()", f->name + 9);
		else if (!strncmp(f->name, "BPF_MAP_TYPE_", 13))
			snprintf(check, sizeof(check), "map %s", f->name + 13);
		else
			snprintf(check, sizeof(check), "attach %s", f->name + 4);
		for (char *c = check; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		if (ok)
			snprintf(detail, sizeof(detail), "used for %s", f->use);
		else
			snprintf(detail, sizeof(detail), "missing (Linux %s+), needed for %s",
				 f->since, f->use);
		report(verbose, ok, check, detail);
		failed |= !ok;
	}
	return failed ? -1 : 0;
}

static int check_features(bool verbose)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int ret;

	if (!btf)
		return -1; /* said by check_btf */
	ret = probe_features(btf, verbose);
	btf__free(btf);
	return ret;
}

void probe_report_load_failure(const char *what, int err, bool verbose)
{
	char detail[512];

	if (!what)
		return; /* the loader said why, before any program was tried (no lock: not root) */
	/* A kernel too old for a helper, map or attach type: that is the exact cause. */
	if (!verbose && check_features(false))
		return;
	if (err == EPERM)
		snprintf(
			detail, sizeof(detail),
			"%s refused with EPERM: this kernel does not let BPF LSM programs load "
			"(BPF trampolines refused, e.g. lockdown or a restricted VM kernel); run "
			"under a kernel that allows them, e.g. scripts/vm-run -- build/pysb-bpf ...",
			what);
	else
		snprintf(detail, sizeof(detail),
			 "%s failed: %s (run with -vv for the verifier log)", what, strerror(err));
	report(verbose, false, "LSM programs load", detail);
}

/* One info line per type of file system mounted here: what a rule on it names. */
static void file_system_notes(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	const char *said[32];
	size_t n_said = 0;
	char *buf = NULL;
	size_t cap = 0;

	if (!f)
		return;
	while (getline(&buf, &cap, f) > 0 && n_said < sizeof(said) / sizeof(said[0])) {
		char mnt[PATH_MAX], check[64];
		const char *name;
		struct statfs st;
		size_t k;

		/* id parent major:minor root MOUNTPOINT ...; mount points with spaces are
		 * escaped (\040), which statfs cannot take: skipped */
		if (sscanf(buf, "%*s %*s %*s %*s %4095s", mnt) != 1 || strchr(mnt, '\\') ||
		    statfs(mnt, &st))
			continue;
		name = fs_type_name((long)st.f_type);
		for (k = 0; k < n_said && said[k] != name; k++)
			;
		if (!name || k < n_said)
			continue;
		said[n_said++] = name;
		snprintf(check, sizeof(check), "file system %s", name);
		line("info", check, fs_identity_note((long)st.f_type));
	}
	free(buf);
	fclose(f);
}

static int check_load(bool fresh, bool verbose)
{
	const char *what = "", *how = "loaded and attached";
	char detail[4608], hooks[4096];
	bool pinned = false;
	int err = 0;

	if (geteuid() != 0) {
		report(verbose, false, "LSM programs load",
		       "not root: loading BPF LSM programs needs root (or CAP_BPF+CAP_SYS_ADMIN)");
		return -1;
	}
	if (loader_probe(fresh, &pinned, &what, &err, hooks, sizeof(hooks))) {
		probe_report_load_failure(what, err, verbose);
		return -1;
	}
	if (pinned)
		how = "loaded, attached and pinned since boot by this build (probe --fresh loads a copy)";
	snprintf(detail, sizeof(detail), "%s: %s (lsm_cgroup slots used: 0 of 10)", how, hooks);
	report(verbose, true, "LSM programs load", detail);
	report(verbose, true, "file identity",
	       "a file rule names an inode object (labelled through lsm/sb_statfs, forgotten "
	       "by lsm/inode_free_security), never its (dev, ino) numbers; the rule paths are "
	       "held open while their rules live");
	if (verbose)
		file_system_notes();
	return 0;
}

int probe_run(unsigned flags)
{
	bool load = flags & PROBE_LOAD, verbose = flags & PROBE_VERBOSE;
	struct utsname u;
	int failed = 0;

	if (verbose && !uname(&u)) {
		char k[sizeof(u.release) + sizeof(u.version) + 2];

		snprintf(k, sizeof(k), "%s %s", u.release, u.version);
		line("info", "kernel", k);
	}

	failed |= check_lsm(verbose);
	failed |= check_btf(verbose);
	if (load && !failed) /* run and the daemon: only if the load fails (below) */
		failed |= check_features(verbose);
	failed |= check_cgroup2(verbose);
	if (load && !failed)
		failed |= check_load(flags & PROBE_FRESH, verbose);
	else if (load && verbose)
		line("skip", "LSM programs load", "an earlier check failed");
	return failed ? -1 : 0;
}

int probe_run_json(FILE *out, unsigned flags)
{
	json_t *doc;
	int ret;

	json_checks = json_array();
	if (!json_checks)
		return -1;
	ret = probe_run(flags);
	doc = json_pack("{s:b, s:o}", "ok", ret == 0, "checks", json_checks);
	json_checks = NULL;
	if (!doc || json_dumpf(doc, out, JSON_INDENT(2)) || fputc('\n', out) == EOF) {
		pr_err("probe: cannot write the JSON document");
		ret = -1;
	}
	json_decref(doc);
	return ret;
}
