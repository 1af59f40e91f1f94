/* SPDX-License-Identifier: MIT */
/*
 * The implicit paths: what the interpreter, the dynamic loader and the C library open
 * before and while a program runs, which the Python layer never saw. Only what exists on
 * this machine is added, always canonical (symlinks resolved). Deliberately NOT implicit:
 * the working directory, the temp directory, /etc as a whole, home directories.
 */
#include <errno.h>
#include <fcntl.h>
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
#include "untampered.h"

const char *implicit_cache_dir;

/* What a computed set depends on: an lstat(2) of each path it looked at (absent ones
 * too), compared again before a cached set is used. */
struct dep {
	char *path;
	int err; /* 0, or lstat's errno */
	uint64_t dev, ino, mtime_ns, ctime_ns;
	uint32_t mode;
};

struct implicit_set {
	struct implicit_path *v;
	size_t n, cap;
	struct dep *deps; /* NULL: not recorded (no cache) */
	size_t n_deps, cap_deps;
	bool record;
};

static void dep_stat(struct dep *d)
{
	struct stat st;

	d->err = memo_lstat(d->path, &st) ? errno : 0;
	if (d->err) {
		d->dev = d->ino = d->mtime_ns = d->ctime_ns = 0;
		d->mode = 0;
		return;
	}
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + st.st_mtim.tv_nsec;
	d->ctime_ns = (uint64_t)st.st_ctim.tv_sec * 1000000000ull + st.st_ctim.tv_nsec;
	d->mode = st.st_mode;
}

/* Notes `path` as a dependency, and its first component when that is a link (/lib on a
 * merged-/usr system: where everything below it resolves). */
static void depend(struct implicit_set *s, const char *path)
{
	char top[PATH_MAX];
	const char *slash;
	struct stat st;

	if (!s->record || path[0] != '/')
		return;
	slash = strchr(path + 1, '/');
	if (slash && (size_t)(slash - path) < sizeof(top)) {
		memcpy(top, path, slash - path);
		top[slash - path] = '\0';
		if (!memo_lstat(top, &st) && S_ISLNK(st.st_mode))
			depend(s, top);
	}
	for (size_t i = 0; i < s->n_deps; i++)
		if (!strcmp(s->deps[i].path, path))
			return;
	if (s->n_deps == s->cap_deps) {
		size_t cap = s->cap_deps ? 2 * s->cap_deps : 64;
		struct dep *v = realloc(s->deps, cap * sizeof(*v));

		if (!v) {
			s->record = false; /* no cache this time */
			return;
		}
		s->deps = v;
		s->cap_deps = cap;
	}
	s->deps[s->n_deps].path = strdup(path);
	if (!s->deps[s->n_deps].path) {
		s->record = false;
		return;
	}
	dep_stat(&s->deps[s->n_deps++]);
}

static int append(struct implicit_set *s, const char *path, uint32_t access, const char *why)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct implicit_path *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n].path = strdup(path);
	if (!s->v[s->n].path)
		return -1;
	s->v[s->n].access = access;
	s->v[s->n].why = why;
	s->n++;
	return 0;
}

static int add(struct implicit_set *s, const char *path, uint32_t access, const char *why)
{
	char real[PATH_MAX];

	depend(s, path);
	if (!memo_realpath(path, real))
		return 0; /* absent here: nothing to grant */
	for (size_t i = 0; i < s->n; i++) {
		if (!strcmp(s->v[i].path, real)) {
			if (!(access & PYSB_ACC_ALONE)) /* never makes a tree's rule one */
				s->v[i].access |= access;
			return 0;
		}
	}
	return append(s, real, access, why);
}

static int add_glob(struct implicit_set *s, const char *pattern, uint32_t access, const char *why)
{
	char dir[PATH_MAX];
	glob_t g;
	int ret = 0;

	/* Entries added or removed change the directory's mtime. */
	snprintf(dir, sizeof(dir), "%s", pattern);
	depend(s, dirname(dir));
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
 * Whether `prefix` (canonical) is the installation the interpreter chain runs from, so
 * that it may be granted whole: a virtual environment (a regular pyvenv.cfg, as Python
 * itself decides), or a Python installation (conda, uv, pyenv: the chain's real end is a
 * python in <prefix>/bin and <prefix>/lib/python3* exists).
 *
 * Never the lexical parent of a directory named bin: the links of a venv sit in the
 * project's tree, which a sandbox may write, and a run that re-pointed .venv/bin/python
 * through a link named bin (A/bin -> /tmp, A/bin -> ~/bin) would make the next run grant
 * /, or the user's home, as a "venv". A pyvenv.cfg the sandbox writes lies in a tree it
 * can already write; a Python installation outside its trees holds the installation.
 */
static bool installation_prefix(struct implicit_set *s, const char *prefix, const char *rdir,
				const char *real_end)
{
	char p[PATH_MAX + 32];
	size_t n = strlen(rdir);
	struct stat st;
	glob_t g;
	bool lib;

	if (!strcmp(prefix, "/"))
		return false;
	snprintf(p, sizeof(p), "%s/pyvenv.cfg", prefix);
	depend(s, p);
	if (!lstat(p, &st) && S_ISREG(st.st_mode))
		return true;
	if (!real_end || strncmp(real_end, rdir, n) || real_end[n] != '/' ||
	    strchr(real_end + n + 1, '/') || !interpreter_is_python(real_end))
		return false;
	snprintf(p, sizeof(p), "%s/lib", prefix);
	depend(s, p);
	snprintf(p, sizeof(p), "%s/lib/python3*", prefix);
	lib = !glob(p, GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g);
	if (lib)
		globfree(&g);
	return lib;
}

/*
 * The interpreter chain as py-sandboxes walks it: every link and its target; when a link
 * sits in a bin/ directory other than the system ones, the installation it belongs to (a
 * venv, a conda or uv Python; installation_prefix() decides) is granted.
 */
static int add_interpreter(struct implicit_set *s, const char *interp)
{
	char cur[PATH_MAX], link[PATH_MAX], dir[PATH_MAX], rdir[PATH_MAX], prefix[PATH_MAX];
	char end[PATH_MAX];
	const char *real_end = realpath(interp, end) ? end : NULL;
	struct stat st;
	int ret = 0;

	/* only a program: a binding's interpreter a service re-pointed at / grants nothing */
	if (!real_end || stat(real_end, &st) || !S_ISREG(st.st_mode) || !(st.st_mode & 0111))
		return 0;
	snprintf(cur, sizeof(cur), "%s", interp);
	for (int hops = 0; hops < 40 && !ret; hops++) {
		ssize_t n;

		snprintf(dir, sizeof(dir), "%s", cur);
		dirname(dir);
		depend(s, dir);
		if (realpath(dir, rdir) && !strcmp(basename(rdir), "bin") &&
		    strcmp(rdir, "/usr/bin") && strcmp(rdir, "/usr/local/bin") &&
		    strcmp(rdir, "/bin")) {
			snprintf(prefix, sizeof(prefix), "%s", rdir);
			dirname(prefix);
			if (installation_prefix(s, prefix, rdir, real_end))
				ret = add(
					s, prefix, PYSB_ACC_RO,
					"interpreter prefix (virtual environment or installation)");
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

bool interpreter_is_python(const char *interp)
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
	/* Debian's ensurepip takes pip and setuptools from here, not from the standard
	 * library: `python3 -m venv DIR` failed without it (found by a user). Public wheels
	 * of the distribution, read only. */
	ret = ret
		      ?: add_glob(s, "/usr/share/python-wheels", PYSB_ACC_READ,
				  "Debian's ensurepip wheels (python3 -m venv)");
	return ret;
}

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
	/* Its twin for groups (found by a user: `ls -l`, `id`, `stat`, tarfile.add() each
	 * printed a deny line): world-readable, no secrets (those are in /etc/gshadow). */
	{ "/etc/group", PYSB_ACC_READ, "group database (ls -l, id, tarfile)" },
	{ "/etc/host.conf", PYSB_ACC_READ, "resolver configuration" },
	{ "/etc/resolv.conf", PYSB_ACC_READ, "resolver configuration" },
	{ "/etc/hosts", PYSB_ACC_READ, "static host names" },
	{ "/etc/gai.conf", PYSB_ACC_READ, "resolver configuration" },
	/* The certificates and OpenSSL's configuration, never all of /etc/ssl or /etc/pki:
	 * their private/ directories hold the machine's TLS keys. */
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
	/* Public facts ordinary programs read (found by a user: each was a deny line, or a
	 * failure, with a hand-written policy): the CPU count (glibc's get_nprocs, for
	 * os.cpu_count() and every thread pool), the MIME types (mimetypes: http.server
	 * failed every file), the distribution's name (platform). */
	{ "/sys/devices/system/cpu/online", PYSB_ACC_READ, "CPU count (os.cpu_count)" },
	{ "/sys/devices/system/cpu/possible", PYSB_ACC_READ, "CPU count (os.cpu_count)" },
	{ "/etc/mime.types", PYSB_ACC_READ, "MIME types (mimetypes, http.server)" },
	{ "/etc/os-release", PYSB_ACC_READ, "distribution name (platform)" },
	{ "/usr/lib/os-release", PYSB_ACC_READ, "distribution name (platform)" },
	/* What pip's vendored `distro` reads besides os-release (found by a user: every pip
	 * install failed with PermissionError on /etc/debian_version): one line of version,
	 * on every machine of the distribution. */
	{ "/etc/debian_version", PYSB_ACC_READ, "distribution name (platform)" },
	{ "/etc/lsb-release", PYSB_ACC_READ, "distribution name (platform)" },
	{ "/etc/redhat-release", PYSB_ACC_READ, "distribution name (platform)" },
	{ "/etc/system-release", PYSB_ACC_READ, "distribution name (platform)" },
	/* The terminal's description and readline's key bindings: the interactive
	 * interpreter and curses read them (found by a user: deny lines at every REPL). */
	{ "/usr/share/terminfo", PYSB_ACC_READ, "terminal descriptions (curses, readline)" },
	{ "/usr/lib/terminfo", PYSB_ACC_READ, "terminal descriptions (curses, readline)" },
	{ "/lib/terminfo", PYSB_ACC_READ, "terminal descriptions (curses, readline)" },
	{ "/etc/terminfo", PYSB_ACC_READ, "terminal descriptions (curses, readline)" },
	{ "/etc/inputrc", PYSB_ACC_READ, "readline key bindings" },
};

static int add_runtime(struct implicit_set *s)
{
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

/* ---- the cache: PYSB_RUN_DIR/implicit/<hash of the interpreter> ---- */
static const char *const other_whys[] = {
	"interpreter prefix (virtual environment or installation)",
	"interpreter",
	"Python standard library and site-packages",
	"Python standard library",
	"Python site-packages",
	"Python site configuration",
	"Debian's ensurepip wheels (python3 -m venv)",
	"shared libraries",
};

/* The static reason equal to `why`, or NULL: a cached set points at this file's strings. */
static const char *intern_why(const char *why)
{
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcmp(fixed[i].why, why))
			return fixed[i].why;
	for (size_t i = 0; i < sizeof(other_whys) / sizeof(other_whys[0]); i++)
		if (!strcmp(other_whys[i], why))
			return other_whys[i];
	return NULL;
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull;
}

/* Changes with the lists above: a cache written by another build is not used. */
static uint64_t lists_hash(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char acc[16];

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		snprintf(acc, sizeof(acc), "%u", fixed[i].access);
		h = fnv(fnv(fnv(h, fixed[i].path), fixed[i].why), acc);
	}
	for (size_t i = 0; i < sizeof(other_whys) / sizeof(other_whys[0]); i++)
		h = fnv(h, other_whys[i]);
	return fnv(h, "implicit cache 2");
}

/* The cache file of `interp` in a directory only root writes; -1 if none may be used. */
static int cache_path(const char *interp, char *buf, size_t len)
{
	struct stat st;

	char parent[PATH_MAX];

	if (!implicit_cache_dir)
		return -1;
	snprintf(parent, sizeof(parent), "%s", implicit_cache_dir);
	mkdir(dirname(parent), 0700);
	if (mkdir(implicit_cache_dir, 0700) && errno != EEXIST)
		return -1;
	if (lstat(implicit_cache_dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022))
		return -1;
	snprintf(buf, len, "%s/%016llx", implicit_cache_dir,
		 (unsigned long long)fnv(0xcbf29ce484222325ull, interp));
	return 0;
}

static bool plain(const char *p)
{
	return !strpbrk(p, "\t\n");
}

/* The cached set of `interp`, if every path it depended on is as it was: 0, else -1. */
static int cache_load(const char *interp, struct implicit_set *s)
{
	char file[PATH_MAX + 32], *line = NULL, head[64];
	size_t cap = 0;
	bool ok = false;
	FILE *f;

	if (cache_path(interp, file, sizeof(file)))
		return -1;
	f = fopen(file, "re");
	if (!f)
		return -1;
	snprintf(head, sizeof(head), "pysb-implicit %016llx\t", (unsigned long long)lists_hash());
	if (getline(&line, &cap, f) <= 0 || strncmp(line, head, strlen(head)) ||
	    strcspn(line + strlen(head), "\n") != strlen(interp) ||
	    strncmp(line + strlen(head), interp, strlen(interp)))
		goto out;
	while (getline(&line, &cap, f) > 0) {
		char path[PATH_MAX], why[128];
		unsigned long long dev, ino, mt, ct;
		unsigned int mode, access;
		int err;

		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "end")) {
			ok = true;
			break;
		}
		if (sscanf(line, "d\t%d\t%llu\t%llu\t%llu\t%llu\t%u\t%4095[^\t]", &err, &dev, &ino,
			   &mt, &ct, &mode, path) == 7) {
			struct dep d = { .path = path };

			dep_stat(&d);
			if (d.err != err || d.dev != dev || d.ino != ino || d.mtime_ns != mt ||
			    d.ctime_ns != ct || d.mode != mode) {
				pr_info("implicit paths: %s changed, computed again", path);
				break;
			}
		} else if (sscanf(line, "p\t%u\t%127[^\t]\t%4095[^\t]", &access, why, path) == 3) {
			const char *w = intern_why(why);

			if (!w || append(s, path, access, w))
				break;
		} else {
			break;
		}
	}
out:
	free(line);
	fclose(f);
	if (!ok) {
		implicit_paths_free(s->v, s->n);
		s->v = NULL;
		s->n = s->cap = 0;
	}
	return ok ? 0 : -1;
}

/* Written complete under a temporary name, then renamed: a reader sees all or nothing. */
static void cache_store(const char *interp, const struct implicit_set *s)
{
	char file[PATH_MAX + 32], tmp[PATH_MAX + 64];
	bool ok = plain(interp);
	FILE *f;
	int fd;

	if (!s->record || cache_path(interp, file, sizeof(file)))
		return;
	for (size_t i = 0; i < s->n_deps && ok; i++)
		ok = plain(s->deps[i].path);
	for (size_t i = 0; i < s->n && ok; i++)
		ok = plain(s->v[i].path);
	if (!ok)
		return;
	snprintf(tmp, sizeof(tmp), "%s.%d", file, getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "pysb-implicit %016llx\t%s\n", (unsigned long long)lists_hash(), interp);
	for (size_t i = 0; i < s->n_deps; i++) {
		const struct dep *d = &s->deps[i];

		fprintf(f, "d\t%d\t%llu\t%llu\t%llu\t%llu\t%u\t%s\n", d->err,
			(unsigned long long)d->dev, (unsigned long long)d->ino,
			(unsigned long long)d->mtime_ns, (unsigned long long)d->ctime_ns, d->mode,
			d->path);
	}
	for (size_t i = 0; i < s->n; i++)
		fprintf(f, "p\t%u\t%s\t%s\n", s->v[i].access, s->v[i].why, s->v[i].path);
	fprintf(f, "end\n");
	if (fclose(f) || rename(tmp, file))
		unlink(tmp);
}

static void deps_free(struct implicit_set *s)
{
	for (size_t i = 0; i < s->n_deps; i++)
		free(s->deps[i].path);
	free(s->deps);
	s->deps = NULL;
	s->n_deps = s->cap_deps = 0;
}

/*
 * A venv made with --copies (its python a copy, not a link): Python finds its base
 * installation from pyvenv.cfg's `home` (next to the interpreter or one directory up) and
 * realpath()s the python there, reading its links (/usr/bin/python3 -> python3.11). Into
 * out: `home`/NAME for the names Python tries (the interpreter's own, python3, python3.X
 * of the `version` key) that are links leading to a Python; their number.
 */
size_t venv_home_pythons(const char *interp, char (*out)[PATH_MAX], size_t max)
{
	char dir[PATH_MAX], cfg[PATH_MAX + 16], home[PATH_MAX] = "", ver[16] = "", own[PATH_MAX];
	char line[PATH_MAX + 64];
	size_t n = 0;
	FILE *f = NULL;

	snprintf(dir, sizeof(dir), "%s", interp);
	dirname(dir);
	/* A regular file only, named through no link at its end, and its first 1,024 lines (4 MiB at most): the
	 * venv lies in the project, and a sandbox that may write it made pyvenv.cfg a FIFO
	 * (the next run's or check's compile, as root, hung in the open; the daemon's reload
	 * too), a link to /dev/zero (read until memory ran out) or to a device (found by an
	 * adversary, round 29). Python itself reads it in the sandbox. */
	for (int up = 0; up < 2 && !f; up++) {
		int fd;

		snprintf(cfg, sizeof(cfg), "%s/pyvenv.cfg", dir);
		fd = open_regular(cfg, true);
		f = fd >= 0 ? fdopen(fd, "re") : NULL;
		if (fd >= 0 && !f)
			close(fd);
		dirname(dir);
	}
	if (!f)
		return 0;
	for (int i = 0; i < 1024 && fgets(line, sizeof(line), f); i++) {
		char k[32], v[PATH_MAX];
		int maj, min;

		if (sscanf(line, " %31[^= \t] = %4095[^\r\n]", k, v) != 2)
			continue;
		for (size_t e = strlen(v); e && (v[e - 1] == ' ' || v[e - 1] == '\t'); e--)
			v[e - 1] = '\0';
		if (!strcmp(k, "home") && v[0] == '/')
			snprintf(home, sizeof(home), "%s", v);
		else if (!strcmp(k, "version") && sscanf(v, "%d.%d", &maj, &min) == 2)
			snprintf(ver, sizeof(ver), "python%d.%d", maj, min);
	}
	fclose(f);
	snprintf(own, sizeof(own), "%s", interp);
	const char *names[] = { basename(own), "python3", ver };

	for (size_t i = 0; home[0] && i < 3 && n < max; i++) {
		char real[PATH_MAX];
		struct stat st;

		if (!names[i][0] ||
		    snprintf(out[n], PATH_MAX, "%s/%s", home, names[i]) >= PATH_MAX - 1)
			continue;
		if (!lstat(out[n], &st) && S_ISLNK(st.st_mode) && realpath(out[n], real) &&
		    !stat(real, &st) && S_ISREG(st.st_mode) && interpreter_is_python(real))
			n++;
	}
	return n;
}

int implicit_paths(const char *interpreter, const char *script, const char *path0_cwd,
		   struct implicit_path **out, size_t *n)
{
	struct implicit_set s = { .record = implicit_cache_dir != NULL };
	const char *key = interpreter ? interpreter : "";
	int ret = 0;

	if (!cache_load(key, &s)) {
		pr_info("implicit paths of %s: from the cache", *key ? key : "(no interpreter)");
	} else {
		ret = add_runtime(&s);
		if (!ret && interpreter) {
			ret = add_interpreter(&s, interpreter);
			if (!ret && interpreter_is_python(interpreter))
				ret = add_python(&s, interpreter);
		}
		if (!ret)
			cache_store(key, &s);
	}
	deps_free(&s);
	s.record = false;
	if (!ret && script)
		ret = add(&s, script, PYSB_ACC_READ, "the program's script");
	/* Python lists the script's directory (sys.path[0]) at its first import: the
	 * directory alone, none of its files (PYSB_ACC_ALONE; docs/policy.md) */
	if (!ret && script && interpreter && interpreter_is_python(interpreter)) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s", script);
		ret = add(&s, dirname(dir), PYSB_ACC_READ | PYSB_ACC_ALONE,
			  "the script's directory, alone: Python lists it to import from");
	}
	/* ... and without a script (-c, -m, -), the working directory, in the same way */
	if (!ret && !script && path0_cwd && interpreter && interpreter_is_python(interpreter))
		ret = add(&s, path0_cwd, PYSB_ACC_READ | PYSB_ACC_ALONE,
			  "the working directory, alone: Python lists it to import from "
			  "(-c, -m, -)");
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
