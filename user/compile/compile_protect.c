/* SPDX-License-Identifier: MIT */
/*
 * What the user's own tools run from a tree the program may write, found when the policy
 * is compiled: a `.git` (git runs the commands of its config, core.fsmonitor,
 * core.hooksPath, aliases, and its hooks/, at the user's next `git status` in that tree,
 * outside any sandbox) and a `.py-sandboxes` (the next run of that project obeys it).
 * Found by an adversary: with `expose-rw=.` on a project, the program planted
 * core.fsmonitor in .git/config; with `expose-rw=/srv/work`, it rewrote another
 * project's policy to expose-rw=/. Each one found in an `expose-rw=` directory of the
 * policy, or in a directory right below it, is kept read-only with its name
 * (compile.c, protect_files), unless a rule names it itself (`expose-rw=./.git`: the
 * user gives the program its repository). docs/policy.md, "Kept read-only".
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile.h"

static const char *const TOOL_NAMES[] = { ".git", ".py-sandboxes" };

/* Is canonical `path` named by a rule of the policy itself? */
static bool named_by_a_rule(const struct policy *p, const char *path)
{
	char real[PATH_MAX];

	for (size_t i = 0; i < p->n_paths; i++)
		if (realpath(p->paths[i].path, real) && !strcmp(real, path))
			return true;
	return false;
}

static int push(struct tool_files *t, const char *path)
{
	char **v;

	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->paths[i], path))
			return 0;
	v = realloc(t->paths, (t->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	t->paths = v;
	t->paths[t->n] = strdup(path);
	return t->paths[t->n] ? (t->n++, 0) : -1;
}

/* The tool files in canonical directory `dir`. */
static int look_in(const struct policy *p, const char *dir, struct tool_files *t)
{
	for (size_t i = 0; i < sizeof(TOOL_NAMES) / sizeof(TOOL_NAMES[0]); i++) {
		char path[PATH_MAX];
		struct stat st;

		if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "",
			     TOOL_NAMES[i]) >= (int)sizeof(path) ||
		    lstat(path, &st) || S_ISLNK(st.st_mode) || named_by_a_rule(p, path))
			continue; /* a link is kept by its name only: what it names is elsewhere */
		if (push(t, path))
			return -1;
	}
	return 0;
}

int tool_files_find(const struct policy *p, struct tool_files *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < p->n_paths; i++) {
		char dir[PATH_MAX];
		struct dirent *de;
		DIR *d;

		if (p->paths[i].access != POLICY_RW || !realpath(p->paths[i].path, dir))
			continue;
		d = opendir(dir);
		if (!d)
			continue; /* a file, or unreadable: nothing found below */
		if (look_in(p, dir, t))
			goto nomem;
		while ((de = readdir(d))) {
			char sub[PATH_MAX];
			struct stat st;

			if (de->d_name[0] == '.' &&
			    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
				continue;
			if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
				continue;
			if (snprintf(sub, sizeof(sub), "%s/%s", strcmp(dir, "/") ? dir : "",
				     de->d_name) >= (int)sizeof(sub) ||
			    lstat(sub, &st) || !S_ISDIR(st.st_mode))
				continue;
			if (look_in(p, sub, t)) {
				closedir(d);
				goto nomem;
			}
		}
		closedir(d);
	}
	return 0;
nomem:
	tool_files_free(t);
	return -1;
}

void tool_files_free(struct tool_files *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->paths[i]);
	free(t->paths);
	memset(t, 0, sizeof(*t));
}
