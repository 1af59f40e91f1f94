/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "log.h"
#include "pysb.skel.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && log_level < LOG_DEBUG)
		return 0;
	if (level == LIBBPF_INFO && log_level < LOG_INFO)
		return 0;
	/* libbpf warnings (verifier logs) are only useful with -v. */
	if (level == LIBBPF_WARN && log_level < LOG_INFO)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int loader_hooks(const struct loader *l, char *buf, size_t len)
{
	struct bpf_program *prog;
	size_t off = 0;
	int n = 0;

	buf[0] = '\0';
	bpf_object__for_each_program(prog, l->skel->obj) {
		if (!bpf_program__autoload(prog))
			continue; /* not for this kernel (adapt_to_kernel) */
		off += snprintf(buf + off, off < len ? len - off : 0, "%s%s", n ? " " : "",
				bpf_program__section_name(prog));
		n++;
	}
	return n;
}

/* Hooks that newer kernels add; older ones cover the same operation elsewhere. */
static const char *const optional_hooks[] = {
	"file_truncate", /* 6.2+; ftruncate goes through path_truncate before */
};

static bool is_optional(const char *hook)
{
	for (size_t i = 0; i < sizeof(optional_hooks) / sizeof(optional_hooks[0]); i++)
		if (!strcmp(hook, optional_hooks[i]))
			return true;
	return false;
}

/* Number of parameters of the kernel's bpf_lsm_<hook>, or -1. */
static int hook_arity(const struct btf *vmlinux, const char *hook)
{
	char name[128];
	const struct btf_type *t;
	int id;

	snprintf(name, sizeof(name), "bpf_lsm_%s", hook);
	id = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC);
	if (id < 0)
		return -1;
	t = btf__type_by_id(vmlinux, btf__type_by_id(vmlinux, id)->type);
	return t ? btf_vlen(t) : -1;
}

/*
 * The same binary on every kernel: hooks this kernel lacks are left out when another hook
 * covers the operation (and refused otherwise); hook signatures that changed are told to
 * the programs through read-only data.
 */
static int adapt_to_kernel(struct pysb_bpf *skel)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct bpf_program *prog;
	int ret = 0;

	if (!vmlinux) {
		pr_err("cannot read the kernel's BTF (/sys/kernel/btf/vmlinux): %s", strerror(errno));
		return -1;
	}
	bpf_object__for_each_program(prog, skel->obj) {
		const char *sec = bpf_program__section_name(prog);

		if (strncmp(sec, "lsm/", 4) || hook_arity(vmlinux, sec + 4) >= 0)
			continue;
		if (is_optional(sec + 4)) {
			pr_debug("hook %s absent from this kernel; covered by another hook", sec + 4);
			bpf_program__set_autoload(prog, false);
			continue;
		}
		pr_err("this kernel has no LSM hook %s, which pysb-bpf needs; see docs/kernels.md",
		       sec + 4);
		ret = -1;
	}
	/* 6.1: inode_setattr(dentry, attr); later: inode_setattr(idmap, dentry, attr) */
	if (hook_arity(vmlinux, "inode_setattr") == 3)
		bpf_program__set_autoload(skel->progs.pysb_inode_setattr, false);
	else
		bpf_program__set_autoload(skel->progs.pysb_inode_setattr_idmap, false);
	btf__free(vmlinux);
	return ret;
}

int loader_start(struct loader *l, const struct loader_opts *opts, const char **what, int *err)
{
	struct bpf_program *prog;
	struct pysb_bpf *skel;
	int ret;

	memset(l, 0, sizeof(*l));
	libbpf_set_print(libbpf_print);
	*what = "open";
	skel = pysb_bpf__open();
	if (!skel) {
		*err = errno;
		return -1;
	}
	if (opts && opts->ringbuf_bytes)
		bpf_map__set_max_entries(skel->maps.events, opts->ringbuf_bytes);

	if (adapt_to_kernel(skel)) {
		*what = "kernel check";
		*err = ENOTSUP;
		pysb_bpf__destroy(skel);
		return -1;
	}

	/* cgroup/ programs (socket hooks) attach to the sandbox's cgroup, not globally:
	 * loader_attach_cgroup() does that once the cgroup exists. */
	bpf_object__for_each_program(prog, skel->obj)
		if (!strncmp(bpf_program__section_name(prog), "cgroup/", 7))
			bpf_program__set_autoattach(prog, false);

	*what = "load";
	ret = pysb_bpf__load(skel);
	if (ret) {
		*err = -ret;
		goto fail;
	}
	*what = "attach";
	ret = pysb_bpf__attach(skel);
	if (ret) {
		*err = -ret;
		goto fail;
	}
	l->skel = skel;
	l->attached = true;
	return 0;
fail:
	pysb_bpf__destroy(skel);
	return -1;
}

int loader_attach_cgroup(struct loader *l, int cgroup_fd)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, l->skel->obj) {
		struct bpf_link *link;

		if (strncmp(bpf_program__section_name(prog), "cgroup/", 7))
			continue;
		if (l->n_cg_links == sizeof(l->cg_links) / sizeof(l->cg_links[0]))
			return -E2BIG;
		link = bpf_program__attach_cgroup(prog, cgroup_fd);
		if (!link)
			return -errno;
		l->cg_links[l->n_cg_links++] = link;
	}
	return 0;
}

void loader_stop(struct loader *l)
{
	for (int i = 0; i < l->n_cg_links; i++)
		bpf_link__destroy(l->cg_links[i]);
	l->n_cg_links = 0;
	pysb_bpf__destroy(l->skel);
	l->skel = NULL;
	l->attached = false;
}

int loader_add_file_rule(struct loader *l, const struct pysb_file_key *key,
			 const struct pysb_file_rule *rule)
{
	if (bpf_map__update_elem(l->skel->maps.file_rules, key, sizeof(*key), rule, sizeof(*rule),
				 BPF_ANY))
		return -errno;
	return 0;
}

int loader_add_sandbox(struct loader *l, uint64_t cgid, const struct pysb_sandbox_cfg *cfg)
{
	if (bpf_map__update_elem(l->skel->maps.sandboxes, &cgid, sizeof(cgid), cfg, sizeof(*cfg),
				 BPF_ANY))
		return -errno;
	return 0;
}

int loader_add_mount_access(struct loader *l, const struct pysb_mount_key *key, uint32_t access)
{
	if (bpf_map__update_elem(l->skel->maps.mount_access, key, sizeof(*key), &access,
				 sizeof(access), BPF_ANY))
		return -errno;
	return 0;
}

int loader_exec_pending(struct loader *l, uint32_t tgid, bool add)
{
	uint32_t one = 1;
	int ret;

	if (add)
		ret = bpf_map__update_elem(l->skel->maps.exec_pending, &tgid, sizeof(tgid), &one,
					   sizeof(one), BPF_ANY);
	else
		ret = bpf_map__delete_elem(l->skel->maps.exec_pending, &tgid, sizeof(tgid), 0);
	return ret ? -errno : 0;
}

int loader_del_sandbox(struct loader *l, uint64_t cgid)
{
	if (bpf_map__delete_elem(l->skel->maps.sandboxes, &cgid, sizeof(cgid), 0))
		return -errno;
	return 0;
}

int loader_events_fd(const struct loader *l)
{
	return bpf_map__fd(l->skel->maps.events);
}

int loader_lost(const struct loader *l, uint64_t lost[PYSB_LOST_MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;

	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (uint32_t r = 0; r < PYSB_LOST_MAX; r++) {
		lost[r] = 0;
		if (bpf_map__lookup_elem(l->skel->maps.lost, &r, sizeof(r), vals,
					 sizeof(*vals) * ncpu, 0))
			continue;
		for (int c = 0; c < ncpu; c++)
			lost[r] += vals[c];
	}
	free(vals);
	return 0;
}
