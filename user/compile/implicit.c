/* SPDX-License-Identifier: MIT */
/*
 * The implicit paths: what the interpreter, the dynamic loader and the C library open
 * before and while a program runs, which the Python layer never saw. Only what exists on
 * this machine is added, always canonical (symlinks resolved). Deliberately NOT implicit:
 * the working directory, the temp directory, /etc as a whole, home directories.
 */
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "compile.h"
#include "log.h"

struct implicit_set {
	struct implicit_path *v;
	size_t n, cap;
};

static int add(struct implicit_set *s, const char *path, uint32_t access, const char *why)
{
	char real[PATH_MAX];

	if (!realpath(path, real))
		return 0; /* absent here: nothing to grant */
	for (size_t i = 0; i < s->n; i++) {
		if (!strcmp(s->v[i].path, real)) {
			s->v[i].access |= access;
			return 0;
		}
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct implicit_path *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n].path = strdup(real);
	if (!s->v[s->n].path)
		return -1;
	s->v[s->n].access = access;
	s->v[s->n].why = why;
	s->n++;
	return 0;
}

static int add_glob(struct implicit_set *s, const char *pattern, uint32_t access, const char *why)
{
	glob_t g;
	int ret = 0;

	if (glob(pattern, GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g))
		return 0;
	for (size_t i = 0; i < g.gl_pathc && !ret; i++)
		ret = add(s, g.gl_pathv[i], access, why);
	globfree(&g);
	return ret;
}

static int path_join(char *out, size_t len, const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);

	if (a + 1 + b >= len)
		return -1;
	memcpy(out, dir, a);
	out[a] = '/';
	memcpy(out + a + 1, name, b + 1);
	return 0;
}

/*
 * The interpreter chain as py-sandboxes walks it: every link and its target; when a link
 * sits in a bin/ directory other than the system ones, its prefix (a venv) is granted.
 */
static int add_interpreter(struct implicit_set *s, const char *interp)
{
	char cur[PATH_MAX], link[PATH_MAX], dir[PATH_MAX], prefix[PATH_MAX + 4];
	int ret = 0;

	snprintf(cur, sizeof(cur), "%s", interp);
	for (int hops = 0; hops < 40 && !ret; hops++) {
		ssize_t n;

		snprintf(dir, sizeof(dir), "%s", cur);
		dirname(dir);
		if (!strcmp(basename(dir), "bin") && strcmp(dir, "/usr/bin") &&
		    strcmp(dir, "/usr/local/bin") && strcmp(dir, "/bin")) {
			snprintf(prefix, sizeof(prefix), "%s/..", dir);
			ret = add(s, prefix, PYSB_ACC_RO, "interpreter prefix (virtual environment)");
		}
		ret = ret ?: add(s, cur, PYSB_ACC_RO, "interpreter");
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			break;
		link[n] = '\0';
		if (link[0] == '/')
			snprintf(cur, sizeof(cur), "%s", link);
		else if (path_join(cur, sizeof(cur), dir, link))
			break;
	}
	return ret;
}

static bool is_python(const char *interp)
{
	char real[PATH_MAX], copy[PATH_MAX];

	snprintf(copy, sizeof(copy), "%s", interp);
	if (!strncmp(basename(copy), "python", 6))
		return true;
	if (!realpath(interp, real))
		return false;
	return !strncmp(basename(real), "python", 6);
}

static int add_python(struct implicit_set *s, const char *interp)
{
	char real[PATH_MAX], prefix[PATH_MAX], pat[PATH_MAX + 32];
	int ret = 0;

	if (!realpath(interp, real))
		return 0;
	/* <prefix>/bin/pythonX.Y -> <prefix>/lib/python3* (stdlib, lib-dynload, site-packages) */
	snprintf(prefix, sizeof(prefix), "%s", real);
	dirname(dirname(prefix));
	snprintf(pat, sizeof(pat), "%s/lib/python3*", prefix);
	ret = ret ?: add_glob(s, pat, PYSB_ACC_RO, "Python standard library and site-packages");
	ret = ret ?: add_glob(s, "/usr/lib/python3*", PYSB_ACC_RO, "Python standard library");
	ret = ret ?: add_glob(s, "/usr/local/lib/python3*", PYSB_ACC_RO, "Python site-packages");
	/* Debian's sitecustomize.py is a symlink into /etc/python3.X */
	ret = ret ?: add_glob(s, "/etc/python3*", PYSB_ACC_RO, "Python site configuration");
	return ret;
}

static int add_runtime(struct implicit_set *s)
{
	static const struct {
		const char *path;
		uint32_t access;
		const char *why;
	} fixed[] = {
		{ "/etc/ld.so.cache", PYSB_ACC_RO, "dynamic loader cache" },
		{ "/lib64", PYSB_ACC_RO, "dynamic loader" },
		{ "/usr/lib/locale", PYSB_ACC_RO, "locale data" },
		{ "/etc/locale.alias", PYSB_ACC_READ, "locale aliases" },
		{ "/usr/share/zoneinfo", PYSB_ACC_RO, "time zones" },
		{ "/etc/localtime", PYSB_ACC_RO, "time zone" },
		{ "/etc/nsswitch.conf", PYSB_ACC_READ, "name service configuration" },
		/* Python's site module resolves "~" with getpwuid() when HOME is unset (the
		 * program starts with an empty environment): a denial on every start. The
		 * file is world-readable and holds no secrets (hashes are in /etc/shadow). */
		{ "/etc/passwd", PYSB_ACC_READ, "user database (home directory of the user)" },
		{ "/etc/host.conf", PYSB_ACC_READ, "resolver configuration" },
		{ "/etc/resolv.conf", PYSB_ACC_READ, "resolver configuration" },
		{ "/etc/hosts", PYSB_ACC_READ, "static host names" },
		{ "/etc/gai.conf", PYSB_ACC_READ, "resolver configuration" },
		/* The certificates and OpenSSL's configuration, never all of /etc/ssl or
		 * /etc/pki: their private/ directories hold the machine's TLS keys. */
		{ "/etc/ssl/certs", PYSB_ACC_RO, "CA certificates" },
		{ "/etc/ssl/cert.pem", PYSB_ACC_READ, "CA certificates" },
		{ "/etc/ssl/openssl.cnf", PYSB_ACC_READ, "OpenSSL configuration" },
		{ "/etc/pki/tls/certs", PYSB_ACC_RO, "CA certificates" },
		{ "/etc/pki/tls/cert.pem", PYSB_ACC_READ, "CA certificates" },
		{ "/etc/pki/tls/openssl.cnf", PYSB_ACC_READ, "OpenSSL configuration" },
		{ "/etc/pki/ca-trust", PYSB_ACC_RO, "CA certificates" },
		{ "/etc/ca-certificates", PYSB_ACC_RO, "CA certificates" },
		{ "/usr/share/ca-certificates", PYSB_ACC_RO, "CA certificates" },
		{ "/usr/share/pki", PYSB_ACC_RO, "CA certificates" },
		{ "/dev/null", PYSB_ACC_RW, "null device" },
		{ "/dev/zero", PYSB_ACC_RW, "zero device" },
		{ "/dev/full", PYSB_ACC_RW, "full device" },
		{ "/dev/urandom", PYSB_ACC_READ, "random numbers" },
		{ "/dev/random", PYSB_ACC_READ, "random numbers" },
		/* libselinux, linked into ls, cp, find, ..., reads it in every process to know
		 * whether selinuxfs is there: a denial per child otherwise. It lists file
		 * system types, nothing of the machine's data. */
		{ "/proc/filesystems", PYSB_ACC_READ, "file system types (libselinux)" },
	};
	struct utsname u;
	char triplet[PATH_MAX];
	int ret = 0;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]) && !ret; i++)
		ret = add(s, fixed[i].path, fixed[i].access, fixed[i].why);
	if (!ret && !uname(&u)) {
		/* Debian's multiarch directories: lib/<machine>-linux-gnu */
		snprintf(triplet, sizeof(triplet), "/lib/%s-linux-gnu", u.machine);
		ret = add(s, triplet, PYSB_ACC_RO, "shared libraries");
		snprintf(triplet, sizeof(triplet), "/usr/lib/%s-linux-gnu", u.machine);
		ret = ret ?: add(s, triplet, PYSB_ACC_RO, "shared libraries");
	}
	ret = ret ?: add(s, "/usr/lib64", PYSB_ACC_RO, "shared libraries");
	return ret;
}

int implicit_paths(const char *interpreter, const char *script, struct implicit_path **out,
		   size_t *n)
{
	struct implicit_set s = { 0 };
	int ret = add_runtime(&s);

	if (!ret && interpreter) {
		ret = add_interpreter(&s, interpreter);
		if (!ret && is_python(interpreter))
			ret = add_python(&s, interpreter);
	}
	if (!ret && script)
		ret = add(&s, script, PYSB_ACC_READ, "the program's script");
	if (ret) {
		implicit_paths_free(s.v, s.n);
		return -1;
	}
	*out = s.v;
	*n = s.n;
	return 0;
}

void implicit_paths_free(struct implicit_path *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}
