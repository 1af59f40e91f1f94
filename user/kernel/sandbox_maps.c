/* SPDX-License-Identifier: MIT */
/*
 * The maps of one sandbox id, filled from a compiled policy: the file rules (each rule
 * path held open and labelled), ignore= patterns, mount entries and the network. Run,
 * attach and the daemon all go through sandbox_fill_maps().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include "abi_names.h"
#include "compile.h"
#include "loader.h"
#include "log.h"
#include "stopwatch.h"
#include "untampered.h"

/*
 * The inode just held for `path` must be the one the compile judged (ino, and st_dev as
 * stat(2) gave it; 0: the ino alone, for a hidden file, whose device the compile keeps in
 * the kernel's form, corrected on overlayfs). A name re-pointed in between through a link
 * (swapped in by a sandbox that may write its directory) would give the rule to what
 * the link names (found by an adversary: a script's implicit READ landed on /etc/shadow
 * in 8 of 35 runs): refused. A file replaced by another with no link on its way (ldconfig,
 * systemd-resolved and editors replace files by rename) is what a new compile would
 * find: the rule goes to it (found by a review: a daemon's binding never recovered).
 */
static int same_as_compiled(const struct file_pins *pins, const char *path, uint64_t ino,
			    uint64_t st_dev, bool link)
{
	struct stat st, now;
	int fd;

	if (fstat(pins->fd[pins->n - 1], &st))
		return -errno;
	if ((uint64_t)st.st_ino == ino && (!st_dev || (uint64_t)st.st_dev == st_dev))
		return 0;
	fd = open_no_links(path, O_PATH | (link ? O_NOFOLLOW : 0), 0);
	if (fd >= 0 && !fstat(fd, &now) && now.st_ino == st.st_ino && now.st_dev == st.st_dev) {
		close(fd);
		pr_debug("%s was replaced since the compile, through no link: its rule goes to "
			 "the file there now",
			 path);
		return 0;
	}
	if (fd >= 0)
		close(fd);
	pr_err("%s now names another file than when the policy was compiled, through a link: "
	       "the sandbox is not set up; run again, and look for what relinks it",
	       path);
	return -ESTALE;
}

/* Holds the inode of every rule path (files, then hidden files) open and labelled. */
static int pin_rule_paths(struct loader *l, const struct compiled *c, struct file_pins *pins)
{
	int ret = 0;

	for (size_t i = 0; i < c->n_files && !ret; i++) {
		const struct compiled_file *f = &c->files[i];

		ret = loader_pin_path(l, pins, f->path, f->link);
		if (!ret)
			ret = same_as_compiled(pins, f->path, f->ino, f->st_dev, f->link);
	}
	for (size_t i = 0; i < c->n_hidden && !ret; i++) {
		const struct compiled_hidden *h = &c->hidden[i];

		ret = loader_pin_path(l, pins, h->path, false);
		if (!ret)
			ret = same_as_compiled(pins, h->path, h->ino, 0, false);
	}
	if (loader_pins_labelled(l, pins))
		ret = -1;
	return ret ? -1 : 0;
}

/* Rule indexes by label, then by index: the rules of one inode side by side. */
static int by_label(const void *a, const void *b, void *labels)
{
	const uint64_t *label = labels;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (label[x] != label[y])
		return label[x] < label[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

size_t file_rules_entries(const struct compiled *c, const uint64_t *labels, uint32_t sandbox_id,
			  struct pysb_file_key *keys, struct pysb_file_rule *rules)
{
	size_t m = 0, *order = calloc(c->n_files + 1, sizeof(*order));

	if (!order)
		return (size_t)-1;
	for (size_t i = 0; i < c->n_files; i++)
		order[i] = i;
	qsort_r(order, c->n_files, sizeof(*order), by_label, (void *)labels);
	for (size_t k = 0; k < c->n_files; k++) {
		size_t i = order[k];

		if (m && keys[m - 1].label == labels[i]) {
			rules[m - 1].access |= c->files[i].access; /* named by the first */
			continue;
		}
		keys[m] = (struct pysb_file_key){ .label = labels[i], .sandbox = sandbox_id };
		rules[m++] = (struct pysb_file_rule){ .access = c->files[i].access,
						      .rule = (uint32_t)i + 1 };
	}
	for (size_t i = 0; i < c->n_hidden; i++) {
		keys[m] = (struct pysb_file_key){ .label = labels[c->n_files + i],
						  .sandbox = sandbox_id };
		rules[m++] = (struct pysb_file_rule){ .access = 0 };
	}
	free(order);
	return m;
}

/* The entries, written in one batch. */
static int put_file_rules(struct loader *l, const struct compiled *c, const struct file_pins *pins,
			  uint32_t sandbox_id)
{
	size_t n = c->n_files + c->n_hidden, m;
	struct pysb_file_key *keys = calloc(n + 1, sizeof(*keys));
	struct pysb_file_rule *rules = calloc(n + 1, sizeof(*rules));
	int err = -ENOMEM;

	if (keys && rules) {
		m = file_rules_entries(c, pins->label, sandbox_id, keys, rules);
		if (m != (size_t)-1)
			err = loader_put_file_rules(l, keys, rules, (uint32_t)m);
	}
	free(keys);
	free(rules);
	return err;
}

/* The file_rules and mount_access entries sandbox_fill_maps wrote for `c`, by key. */
static int clear_file_maps(struct loader *l, const struct compiled *c, const struct file_pins *pins,
			   uint32_t sandbox_id)
{
	size_t n = c->n_files + c->n_hidden, m;
	struct pysb_file_key *keys = calloc(n + 1, sizeof(*keys));
	struct pysb_file_rule *rules = calloc(n + 1, sizeof(*rules));
	struct pysb_mount_key *mounts = calloc(c->n_mounts + 1, sizeof(*mounts));
	uint32_t n_mounts = 0;
	int err = -ENOMEM;

	if (keys && rules && mounts && pins->n == n) {
		m = file_rules_entries(c, pins->label, sandbox_id, keys, rules);
		err = m == (size_t)-1 ? -ENOMEM
				      : loader_delete_keys(l->fd.file_rules, keys, sizeof(*keys),
							   (uint32_t)m);
		for (size_t i = 0; i < c->n_mounts; i++)
			if (c->mounts[i].access)
				mounts[n_mounts++] =
					(struct pysb_mount_key){ .dev = c->mounts[i].dev,
								 .sandbox = sandbox_id };
		if (!err)
			err = loader_delete_keys(l->fd.mount_access, mounts, sizeof(*mounts),
						 n_mounts);
	}
	free(keys);
	free(rules);
	free(mounts);
	return err;
}

void sandbox_free_maps(struct loader *l, const struct compiled *c, const struct file_pins *pins,
		       uint64_t cgid, uint32_t sandbox_id)
{
	int err;

	/* The switch first: from here on the cgroup is not a sandbox any more. */
	loader_remove_sandbox(l, cgid);
	err = clear_file_maps(l, c, pins, sandbox_id);
	if (!err)
		err = loader_net_clear(l, c, sandbox_id);
	stopwatch("free: rules by key");
	if (err) {
		pr_debug("sandbox %u: its rules deleted by key: %s; looked for instead", sandbox_id,
			 strerror(-err));
		loader_sandbox_free(l, 0, sandbox_id);
		return;
	}
	loader_sandbox_free_gone(l, sandbox_id);
}

int sandbox_fill_maps(struct loader *l, const struct compiled *c, struct file_pins *pins,
		      uint32_t sandbox_id)
{
	char acc[32];
	int err;

	if (!pins->n && pin_rule_paths(l, c, pins)) {
		file_pins_release(pins);
		return -1;
	}
	if (pins->n != c->n_files + c->n_hidden) {
		pr_err("internal error: %zu rule paths held for %zu rules", pins->n,
		       c->n_files + c->n_hidden);
		return -1;
	}
	stopwatch("fill: rule paths held");
	err = put_file_rules(l, c, pins, sandbox_id);
	stopwatch("fill: file_rules");
	if (err) {
		pr_err("cannot add the %zu file rules to the BPF map file_rules: %s%s", c->n_files,
		       strerror(-err),
		       err == -E2BIG || err == -ENOMEM ? " (the map is full: too many rules of "
							 "sandboxes at once)"
						       : "");
		return -1;
	}
	for (size_t i = 0; i < c->n_files; i++)
		pr_debug("map file_rules: label %llu (dev %u:%u ino %llu) -> %s  %s",
			 (unsigned long long)pins->label[i], c->files[i].dev >> 20,
			 c->files[i].dev & 0xfffff, (unsigned long long)c->files[i].ino,
			 access_str(c->files[i].access, acc, sizeof(acc)), c->files[i].path);
	for (size_t i = 0; i < c->n_hidden; i++)
		pr_debug("map file_rules: %s hidden (ignore=, %s:%u)", c->hidden[i].path,
			 c->hidden[i].src.file, c->hidden[i].src.line);
	if (c->ignores.count) {
		err = loader_set_ignores(l, sandbox_id, &c->ignores);
		if (err) {
			pr_err("cannot add the ignore= patterns: %s", strerror(-err));
			return -1;
		}
	}
	for (size_t i = 0; i < c->n_mounts; i++) {
		struct pysb_mount_key key = { .dev = c->mounts[i].dev, .sandbox = sandbox_id };

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
	stopwatch("fill: net");
	l->id_clean = false; /* (filled now) */
	/* A sandbox id whose maps changed in place (a daemon relabelling its rules on
	 * adoption): its tasks' cached directory verdicts are stale (bpf/walk.bpf.c). */
	return loader_bump_sandbox_gen(l) ? -1 : 0;
}
