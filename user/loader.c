/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
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
		off += snprintf(buf + off, off < len ? len - off : 0, "%s%s", n ? " " : "",
				bpf_program__section_name(prog));
		n++;
	}
	return n;
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
