/* SPDX-License-Identifier: MIT */
/*
 * pyenv and asdf shims (user/run/program.c resolve_shim): the real program a shim names,
 * found as `pyenv which NAME` (`asdf which NAME`) would find it, by reading the same
 * version files, without running anything. pysb-bpf once ran the shim's `TOOL which NAME`
 * itself, before the sandbox existed: a shim or a tool a sandboxed program had written
 * then ran outside every sandbox, as root (found by an adversary: under expose-rw=. a
 * program rewrote its own app.py into a four-line "shim" naming a script it wrote; a check
 * of who could have written the shim still let a sandbox under another policy plant one).
 * Nothing a shim names runs before the sandbox; what it names runs inside it.
 *
 * pyenv (libexec/pyenv-version-name, -version-file, -version-file-read, -which): the
 * versions are $PYENV_VERSION (split on ':'), else the first word of each line of the
 * nearest `.python-version` from the working directory up, else of $PYENV_ROOT/version,
 * else `system`; a version with '/' or equal to ".." is ignored; a version not installed
 * may be a prefix of installed ones (3.11: the latest 3.11.N) or carry `python-`. The
 * program is $PYENV_ROOT/versions/VERSION/bin/NAME, the first that is executable; `system`
 * is NAME on PATH without the shims. asdf: $ASDF_<PLUGIN>_VERSION, else the plugin's line
 * of the nearest `.tool-versions` from the working directory up, else of ~/.tool-versions;
 * the program is $ASDF_DATA_DIR (~/.asdf)/installs/PLUGIN/VERSION/bin/NAME.
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "policy.h"
#include "program.h"
#include "program_int.h"
#include "untampered.h"

#define VERSIONS_MAX 1024 /* the versions read, space-separated */

/* NAME in the environment pysb-bpf runs with (o->envp, else environ), or NULL. */
static const char *env_of(const struct program_opts *o, const char *name)
{
	return policy_envp_get(o && o->envp ? o->envp : environ, name);
}

/* `export NAME="value"` with a literal value in the shim (PYENV_ROOT), into buf; else
 * NAME in the environment; NULL if neither. */
static const char *shim_var(const char *text, const struct program_opts *o, const char *name,
			    char *buf, size_t len)
{
	size_t n = strlen(name);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		size_t nl = strcspn(l, "\n");
		const char *v = l + 7 + n + 1, *end = l + nl;

		if (strncmp(l, "export ", 7) || strncmp(l + 7, name, n) || l[7 + n] != '=')
			continue;
		if (end > v + 1 && *v == '"' && end[-1] == '"')
			v++, end--;
		if (memchr(v, '$', (size_t)(end - v)) || memchr(v, '`', (size_t)(end - v)) ||
		    (size_t)(end - v) >= len)
			continue;
		snprintf(buf, len, "%.*s", (int)(end - v), v);
		return buf;
	}
	return env_of(o, name);
}

/* Could `v` (n bytes) name a version: 1 to 64 of [A-Za-z0-9._+:-], not "." or ".." (pyenv
 * refuses '/' and ".." too: a name must not leave versions/)? What is not is dropped,
 * never printed (found by an adversary: a .python-version linked to /etc/shadow had its
 * lines printed by root in the error). */
static bool version_name(const char *v, size_t n)
{
	if (!n || n > 64 || (n <= 2 && !strncmp(v, "..", n)))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && !strchr("._+:-", v[i]))
			return false;
	return true;
}

/* Appends version `v` (n bytes) to the space-separated list `vers`, if it may name one. */
static void add_version(char *vers, size_t len, const char *v, size_t n)
{
	size_t have = strlen(vers);

	if (!version_name(v, n) || have + n + 2 > len)
		return;
	snprintf(vers + have, len - have, "%s%.*s", have ? " " : "", (int)n, v);
}

/*
 * The versions of version file `path` into `vers`: the first word of each line (pyenv), or
 * with `plugin`, the words after it on its line (asdf's .tool-versions); empty lines and
 * comments skipped. Only a regular file is read. False if there is none.
 */
static bool read_versions(const char *path, const char *plugin, char *vers, size_t len)
{
	char text[4096];
	int fd = open_regular(path, true);
	size_t got;

	if (fd < 0)
		return false;
	got = program_read_all(fd, text, sizeof(text));
	close(fd);
	vers[0] = '\0';
	for (char *l = text; l < text + got; l += strcspn(l, "\n") + 1) {
		char *end = l + strcspn(l, "\n#"), *w = l;

		while (w < end) {
			size_t n;

			w += strspn(w, " \t\r");
			n = strcspn(w, " \t\r\n#");
			if (w + n > end)
				n = (size_t)(end - w);
			if (!n)
				break;
			if (plugin && w == l + strspn(l, " \t\r")) {
				if (strlen(plugin) != n || strncmp(w, plugin, n))
					break; /* another plugin's line */
			} else {
				add_version(vers, len, w, n);
				if (!plugin)
					break; /* pyenv: the first word */
			}
			w += n;
		}
	}
	return true;
}

/* The nearest file `name` from the working directory up, read into `vers`; where into
 * `from`. */
static bool versions_up(const char *name, const char *plugin, char *vers, size_t len, char *from,
			size_t flen)
{
	char dir[PATH_MAX];

	if (!getcwd(dir, sizeof(dir)))
		return false;
	for (;;) {
		char *slash = strrchr(dir, '/');

		/* asdf goes on up past a file with no line for its plugin; pyenv stops */
		if (snprintf(from, flen, "%s/%s", strcmp(dir, "/") ? dir : "", name) < (int)flen &&
		    read_versions(from, plugin, vers, len) && (!plugin || vers[0]))
			return true;
		if (!slash || slash == dir) {
			if (!strcmp(dir, "/"))
				return false;
			snprintf(dir, sizeof(dir), "/");
			continue;
		}
		*slash = '\0';
	}
}

/* Version `v` installed under `versions` (pyenv: also `python-` dropped, or the latest
 * installed v.N... of a prefix v); its directory into `dir`. */
static bool installed(const char *versions, const char *v, bool pyenv, char *dir, size_t len)
{
	char best[NAME_MAX + 1] = "";
	size_t n = strlen(v);
	struct stat st;
	struct dirent *de;
	DIR *d;

	if (snprintf(dir, len, "%s/%s", versions, v) < (int)len && !stat(dir, &st) &&
	    S_ISDIR(st.st_mode))
		return true;
	if (!pyenv)
		return false;
	if (!strncmp(v, "python-", 7))
		return version_name(v + 7, n - 7) && installed(versions, v + 7, true, dir, len);
	d = opendir(versions);
	while (d && (de = readdir(d))) {
		const char *rest = de->d_name + n;

		if (strncmp(de->d_name, v, n) || *rest != '.' || !isdigit((unsigned char)rest[1]) ||
		    rest[strspn(rest, ".0123456789")])
			continue;
		if (!best[0] || strverscmp(de->d_name, best) > 0)
			snprintf(best, sizeof(best), "%s", de->d_name);
	}
	if (d)
		closedir(d);
	return best[0] && snprintf(dir, len, "%s/%s", versions, best) < (int)len;
}

/* NAME on $PATH without `shims` (a version `system`). */
static bool on_system_path(const struct program_opts *o, const char *shims, const char *name,
			   char *out, size_t len)
{
	const char *path = o && o->path_env ? o->path_env : getenv("PATH");
	char rest[4096] = "";

	for (const char *p = path ? path : ""; *p;) {
		size_t n = strcspn(p, ":"), have = strlen(rest);

		if ((strlen(shims) != n || strncmp(p, shims, n)) && have + n + 2 < sizeof(rest))
			snprintf(rest + have, sizeof(rest) - have, "%s%.*s", have ? ":" : "",
				 (int)n, p);
		p += n + (p[n] == ':');
	}
	return rest[0] && !program_find_in_path(name, rest, out, len);
}

/* The first of `vers` that has bin/NAME under `versions`. */
static bool first_installed(const struct program_opts *o, const char *versions, const char *shims,
			    const char *vers, bool pyenv, const char *name, char *out, size_t len)
{
	for (const char *v = vers; *v; v += strspn(v, " ")) {
		size_t n = strcspn(v, " ");
		char one[NAME_MAX + 1], dir[PATH_MAX];

		snprintf(one, sizeof(one), "%.*s", (int)n, v);
		v += n;
		if (!strcmp(one, "system")) {
			if (on_system_path(o, shims, name, out, len))
				return true;
			continue;
		}
		if (installed(versions, one, pyenv, dir, sizeof(dir)) &&
		    snprintf(out, len, "%s/bin/%s", dir, name) < (int)len && !access(out, X_OK))
			return true;
	}
	return false;
}

int shim_which(const struct program_opts *o, const char *shim, const char *tool, const char *name,
	       const char *text, char *out, size_t len)
{
	const char *kind = strrchr(tool, '/') ? strrchr(tool, '/') + 1 : tool, *root, *env;
	char vers[VERSIONS_MAX] = "", from[PATH_MAX] = "", rootbuf[PATH_MAX], plugin[64] = "";
	char versions[PATH_MAX + 80], shims[PATH_MAX + 8], var[128];
	const char *home = env_of(o, "HOME");
	bool pyenv = !strcmp(kind, "pyenv");

	if (!pyenv && strcmp(kind, "asdf")) {
		pr_err("%s is a shim of %s, whose versions pysb-bpf does not read (pyenv's and "
		       "asdf's only): run the interpreter by its path (pysb-bpf run -- "
		       "/path/to/python3 ...)",
		       shim, tool);
		return -1;
	}
	if (pyenv) {
		root = shim_var(text, o, "PYENV_ROOT", rootbuf, sizeof(rootbuf));
		if (!root && home &&
		    snprintf(rootbuf, sizeof(rootbuf), "%s/.pyenv", home) < (int)sizeof(rootbuf))
			root = rootbuf;
		snprintf(versions, sizeof(versions), "%s/versions", root ? root : "");
		snprintf(shims, sizeof(shims), "%s/shims", root ? root : "");
		if ((env = env_of(o, "PYENV_VERSION")) && *env) {
			for (const char *v = env; *v; v += *v == ':') {
				add_version(vers, sizeof(vers), v, strcspn(v, ":"));
				v += strcspn(v, ":");
			}
			snprintf(from, sizeof(from), "PYENV_VERSION");
		} else if (!versions_up(".python-version", NULL, vers, sizeof(vers), from,
					sizeof(from)) &&
			   !(snprintf(from, sizeof(from), "%s/version", root ? root : "") <
				     (int)sizeof(from) &&
			     read_versions(from, NULL, vers, sizeof(vers)))) {
			snprintf(from, sizeof(from), "no version file");
		}
		if (!vers[0]) /* none, or an empty file: pyenv's `system` */
			snprintf(vers, sizeof(vers), "system");
	} else {
		/* `# asdf-plugin: python 3.11.7`: the plugin whose versions count */
		const char *p = strstr(text, "# asdf-plugin: ");

		if (p)
			sscanf(p + 15, "%63[A-Za-z0-9_-]", plugin);
		root = env_of(o, "ASDF_DATA_DIR");
		if (!root && home &&
		    snprintf(rootbuf, sizeof(rootbuf), "%s/.asdf", home) < (int)sizeof(rootbuf))
			root = rootbuf;
		snprintf(versions, sizeof(versions), "%s/installs/%s", root ? root : "", plugin);
		snprintf(shims, sizeof(shims), "%s/shims", root ? root : "");
		snprintf(var, sizeof(var), "ASDF_%s_VERSION", plugin);
		for (char *c = var; *c; c++)
			*c = *c == '-' ? '_' : (char)toupper((unsigned char)*c);
		if (plugin[0] && (env = env_of(o, var))) {
			add_version(vers, sizeof(vers), env, strlen(env));
			snprintf(from, sizeof(from), "%s", var);
		} else if (plugin[0] &&
			   !versions_up(".tool-versions", plugin, vers, sizeof(vers), from,
					sizeof(from)) &&
			   home) {
			snprintf(from, sizeof(from), "%s/.tool-versions", home);
			read_versions(from, plugin, vers, sizeof(vers));
		}
	}
	if (root && vers[0] && first_installed(o, versions, shims, vers, pyenv, name, out, len))
		return 0;
	pr_err("%s is a %s shim, and no version it would choose here (read from %s) has %s "
	       "installed: run the interpreter by its path (pysb-bpf run -- /path/to/python3 ...)",
	       shim, kind, from[0] ? from : "no version file", name);
	return -1;
}
