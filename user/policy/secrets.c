/* SPDX-License-Identifier: MIT */
/*
 * Which well-known secrets a file rule reaches (see secrets.h). Paths are compared name
 * by name with fnmatch(3), so a pattern (the SSH host keys, /home/<any>/.ssh) needs no
 * file on this machine: the warning is about the policy, wherever it is deployed. .env
 * files have no fixed place: the ones next to the rule (in its directory, in the working
 * directory below it) are looked for.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "secret_paths.h"
#include "secrets.h"

/* Is `path` (a secret, maybe a pattern) hidden by an ignore= line? */
static bool hidden(const struct policy *p, const char *path)
{
	for (size_t i = 0; i < p->n_ignores; i++) {
		const char *g = p->ignores[i].glob, *s = path;
		char name[256], prefix[4096];
		size_t n = 0;

		while (path_next_name(&s, name, sizeof(name))) {
			n += (size_t)snprintf(prefix + n, sizeof(prefix) - n, "/%s", name);
			if (n >= sizeof(prefix))
				break;
			/* relative: any name on the way; absolute: the path or an ancestor */
			if (g[0] != '/' ? !strpbrk(name, "*?[") && !fnmatch(g, name, 0)
					: !fnmatch(g, prefix, 0))
				return true;
		}
	}
	return false;
}

/* Is path dir, or below it? */
static bool inside(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return true;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

static size_t add(char *out, size_t len, size_t n, const char *s, const char *what)
{
	if (n < len)
		n += (size_t)snprintf(out + n, len - n, "%s%s (%s)", n ? ", " : "", s, what);
	return n;
}

size_t secrets_reached(const struct policy *p, const char *path, const char *home, const char *cwd,
		       char *out, size_t len)
{
	const char *homes[] = { home, "/root", "/home/*" };
	char full[4096], env[4096];
	unsigned in_homes = 0;
	size_t found = 0, n = 0;
	const char *base = strrchr(path, '/');
	struct stat st;

	out[0] = '\0';
	for (size_t i = 0; i < N_SECRET_PATHS; i++) {
		const char *s = SECRET_PATHS[i].path;

		if (s[0] == '~') {
			/* the program's home (written ~), /root, and every /home/<user>: named
			 * by the first home reached, the others listed once at the end */
			bool named = false;

			for (size_t h = 0; h < 3; h++) {
				if (!homes[h] || !*homes[h])
					continue;
				/* a rule inside the home is said once, as ~ */
				if (h && home && *home &&
				    (!strcmp(home, homes[h]) || inside(path, home)))
					continue;
				snprintf(full, sizeof(full), "%s%s", homes[h], s + 1);
				if (!secret_path_reaches(path, full) || hidden(p, full))
					continue;
				if (!named)
					n = add(out, len, n, h ? full : s, SECRET_PATHS[i].what);
				named = true;
				in_homes |= 1u << h;
			}
			found += named;
			continue;
		}
		if (!secret_path_reaches(path, s) || hidden(p, s))
			continue;
		n = add(out, len, n, s, SECRET_PATHS[i].what);
		found++;
	}
	if (in_homes & (in_homes - 1)) {
		/* more than one home: where else the same names are */
		const char *sep = "";

		n += n < len ? (size_t)snprintf(out + n, len - n, ", the same in ") : 0;
		for (size_t h = 0; h < 3; h++) {
			if (!(in_homes & (1u << h)))
				continue;
			if (n < len)
				n += (size_t)snprintf(out + n, len - n, "%s%s", sep,
						      h ? homes[h] : "~");
			sep = " and ";
		}
	}
	/* .env: the rule's own, one in its directory, the working directory's below it */
	env[0] = '\0';
	if (base && !strcmp(base, "/.env"))
		snprintf(env, sizeof(env), "%s", path);
	else if (snprintf(env, sizeof(env), "%s/.env", strcmp(path, "/") ? path : "") > 0 &&
		 stat(env, &st))
		env[0] = '\0';
	if (!env[0] && cwd && inside(cwd, path) && snprintf(env, sizeof(env), "%s/.env", cwd) > 0 &&
	    stat(env, &st))
		env[0] = '\0';
	if (env[0] && !hidden(p, env)) {
		n = add(out, len, n, env, "environment file, often with keys");
		found++;
	}
	return found;
}
