/* SPDX-License-Identifier: MIT */
/*
 * The maps of one sandbox id, filled from a compiled policy: the file rules (each rule
 * path held open and labelled), ignore= patterns, mount entries and the network. Run,
 * attach and the daemon all go through sandbox_fill_maps().
 */
#include <errno.h>
#include <string.h>

#include "abi_names.h"
#include "compile.h"
#include "loader.h"
#include "log.h"

/* Holds the inode of every rule path (files, then hidden files) open and labelled. */
static int pin_rule_paths(struct loader *l, const struct compiled *c, struct file_pins *pins)
{
	for (size_t i = 0; i < c->n_files; i++)
		if (loader_pin_path(l, pins, c->files[i].path, c->files[i].link))
			return -1;
	for (size_t i = 0; i < c->n_hidden; i++)
		if (loader_pin_path(l, pins, c->hidden[i].path, false))
			return -1;
	return 0;
}

int sandbox_fill_maps(struct loader *l, const struct compiled *c, struct file_pins *pins,
		      uint32_t sandbox_id)
{
	char acc[32];

	if (!pins->n && pin_rule_paths(l, c, pins)) {
		file_pins_release(pins);
		return -1;
	}
	if (pins->n != c->n_files + c->n_hidden) {
		pr_err("internal error: %zu rule paths held for %zu rules", pins->n,
		       c->n_files + c->n_hidden);
		return -1;
	}
	for (size_t i = 0; i < c->n_files; i++) {
		const struct compiled_file *f = &c->files[i];
		struct pysb_file_key key = { .label = pins->label[i], .sandbox = sandbox_id };
		struct pysb_file_rule rule = { .access = f->access, .rule = (uint32_t)i + 1 };
		int err = loader_add_file_rule(l, &key, &rule, true);

		if (err) {
			pr_err("cannot add the file rule for %s to the BPF map: %s", f->path,
			       strerror(-err));
			return -1;
		}
		pr_debug("map file_rules: label %llu (dev %u:%u ino %llu) -> %s  %s",
			 (unsigned long long)key.label, f->dev >> 20, f->dev & 0xfffff,
			 (unsigned long long)f->ino, access_str(f->access, acc, sizeof(acc)),
			 f->path);
	}
	/* After the file rules: a hidden file's empty grant replaces any other. */
	for (size_t i = 0; i < c->n_hidden; i++) {
		const struct compiled_hidden *h = &c->hidden[i];
		struct pysb_file_key key = { .label = pins->label[c->n_files + i],
					     .sandbox = sandbox_id };
		struct pysb_file_rule rule = { .access = 0 };
		int err = loader_add_file_rule(l, &key, &rule, false);

		if (err) {
			pr_err("cannot add the ignore= rule for %s: %s", h->path, strerror(-err));
			return -1;
		}
		pr_debug("map file_rules: %s hidden (ignore=, %s:%u)", h->path, h->src.file,
			 h->src.line);
	}
	if (c->ignores.count) {
		int err = loader_set_ignores(l, sandbox_id, &c->ignores);

		if (err) {
			pr_err("cannot add the ignore= patterns: %s", strerror(-err));
			return -1;
		}
	}
	for (size_t i = 0; i < c->n_mounts; i++) {
		struct pysb_mount_key key = { .dev = c->mounts[i].dev, .sandbox = sandbox_id };
		int err;

		if (!c->mounts[i].access)
			continue; /* absent = nothing granted */
		err = loader_add_mount_access(l, &key, c->mounts[i].access);
		if (err) {
			pr_err("cannot add the mount entry for dev %u:%u: %s", key.dev >> 20,
			       key.dev & 0xfffff, strerror(-err));
			return -1;
		}
		pr_debug("map mount_access: dev %u:%u -> %s", key.dev >> 20, key.dev & 0xfffff,
			 access_str(c->mounts[i].access, acc, sizeof(acc)));
	}
	/* network: net= prefixes, port sets, socket settings (user/kernel/loader_net.c) */
	if (loader_net_fill(l, c, sandbox_id))
		return -1;
	/* A sandbox id whose maps changed in place (a daemon relabelling its rules on
	 * adoption): its tasks' cached directory verdicts are stale (bpf/walk.bpf.c). */
	return loader_bump_sandbox_gen(l) ? -1 : 0;
}
