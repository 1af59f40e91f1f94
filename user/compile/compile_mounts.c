/* SPDX-License-Identifier: MIT */
/*
 * The file systems mounted when the policy is compiled: each device with the least access
 * the rules give any of its mount points (the kernel's check of a whole mount or file
 * system: fanotify marks, see docs/design.md).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++, w++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w = *r;
		}
	}
	*w = '\0';
}

int compile_mounts(struct compiled *c, struct diag_list *d)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0, mcap = 0;
	struct path_rules rules;
	int ret = 0;

	if (!f) {
		return diag_add(d, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
				"cannot read /proc/self/mountinfo: %s", strerror(errno));
	}
	if (path_rules_build(&rules, c, false)) {
		fclose(f);
		return diag_add(d, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
				"out of memory compiling the policy");
	}
	while (getline(&line, &cap, f) > 0 && !ret) {
		char mnt[PATH_MAX];
		unsigned maj, min;
		uint32_t dev, acc;
		size_t i;

		if (sscanf(line, "%*s %*s %u:%u %*s %4095s", &maj, &min, mnt) != 3)
			continue;
		unescape_octal(mnt);
		dev = (maj << 20) | min;
		acc = path_rules_access(&rules, mnt);
		if (acc & PYSB_ACC_ALONE) {
			/* a rule for the mount point alone: what a file below it gets */
			char below[PATH_MAX + 2];

			snprintf(below, sizeof(below), "%s/\x01", strcmp(mnt, "/") ? mnt : "");
			acc = path_rules_access(&rules, below);
		}
		for (i = 0; i < c->n_mounts && c->mounts[i].dev != dev; i++)
			;
		if (i < c->n_mounts) {
			c->mounts[i].access &= acc; /* a file system mounted twice: the least */
			continue;
		}
		if (c->n_mounts == mcap) {
			size_t ncap = mcap ? mcap * 2 : 64;
			struct compiled_mount *v = realloc(c->mounts, ncap * sizeof(*v));

			if (!v) {
				ret = -1;
				break;
			}
			c->mounts = v;
			mcap = ncap;
		}
		c->mounts[c->n_mounts++] = (struct compiled_mount){ .dev = dev, .access = acc };
	}
	free(line);
	fclose(f);
	path_rules_free(&rules);
	if (!ret && c->n_mounts > PYSB_MAX_MOUNTS) {
		ret = diag_add(d, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
			       "%zu file systems mounted, more than pysb-bpf's %d", c->n_mounts,
			       PYSB_MAX_MOUNTS);
	}
	return ret;
}
