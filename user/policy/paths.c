/* SPDX-License-Identifier: MIT */
/*
 * Files and paths for the parser: whole-file reads, absolute and canonical paths (with a
 * per-directory cache), ~ expansion. See policy.c.
 */
#include "parser.h"

/* ---------------- files and paths */

const char *read_error(int err)
{
	if (err == EINVAL)
		return "not a regular file";
	if (err == EFBIG)
		return "larger than 16 MiB";
	return strerror(err);
}

/*
 * Reads a whole regular file. Returns 0 or an errno value: EINVAL for anything but a
 * regular file of a real file system, never opened (open_regular: FIFOs and devices
 * neither hang the parse nor act), EFBIG beyond MAX_FILE.
 */
int read_whole(const char *path, char **buf, size_t *len)
{
	int fd = open_regular(path, false);
	size_t n = 0, cap = 0;
	char *b = NULL;
	struct stat st;
	int err = 0;

	if (fd == -2) /* nothing opened (a device opened can act: /dev/watchdog) */
		return !stat(path, &st) && S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	if (fd < 0)
		return errno;
	if (fstat(fd, &st)) {
		err = errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		goto cleanup;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb;

			if (cap > MAX_FILE) {
				err = EFBIG;
				goto cleanup;
			}
			cap = cap ? cap * 2 : 4096;
			nb = realloc(b, cap + 1);
			if (!nb) {
				err = ENOMEM;
				goto cleanup;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			goto cleanup;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > MAX_FILE) {
		err = EFBIG;
		goto cleanup;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	b = NULL;
cleanup:
	free(b);
	close(fd);
	return err;
}

char *join_path(const char *dir, const char *rel)
{
	size_t l = strlen(dir);
	char *s;

	if (asprintf(&s, "%s%s%s", dir, l && dir[l - 1] == '/' ? "" : "/", rel) < 0)
		return NULL;
	return s;
}

char *abs_path(const struct parser *ps, const char *s)
{
	return s[0] == '/' ? strdup(s) : join_path(ps->cwd, s);
}

char *dir_of(const char *abs)
{
	const char *slash = strrchr(abs, '/');

	return slash == abs ? strdup("/") : strndup(abs, (size_t)(slash - abs));
}

/* "/a//b/./c" -> "/a/b/c"; NULL when a component is "..", or the path ends with "/" or
 * "/." (those need realpath's own rules). */
char *clean_abs(const char *abs)
{
	size_t n = strlen(abs), w = 0;
	char *out = malloc(n + 1);

	if (!out)
		return NULL;
	for (size_t r = 0; r < n;) {
		size_t len;

		r += strspn(abs + r, "/");
		len = strcspn(abs + r, "/");
		if ((len == 2 && abs[r] == '.' && abs[r + 1] == '.') || !len ||
		    (len == 1 && abs[r] == '.' && !abs[r + 1])) {
			free(out);
			return NULL;
		}
		if (!(len == 1 && abs[r] == '.')) {
			out[w++] = '/';
			memcpy(out + w, abs + r, len);
			w += len;
		}
		r += len;
	}
	out[w] = '\0';
	if (!w || abs[n - 1] == '/') {
		free(out);
		return NULL;
	}
	return out;
}

/* The cache slot of `dir`, or the empty slot where it belongs. */
static struct dir_cache *dir_slot(const struct parser *ps, const char *dir)
{
	size_t mask = ps->dirs_size - 1, i = str_hash(dir) & mask;

	while (ps->dirs[i].dir && strcmp(ps->dirs[i].dir, dir))
		i = (i + 1) & mask;
	return &ps->dirs[i];
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Fills d->names; on any failure the list stays empty (every name then gets an lstat). */
static void list_dir(struct dir_cache *d)
{
	DIR *dir = opendir(d->canon);
	struct dirent *e;
	size_t n = 0;
	char **v = NULL;

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		if (e->d_type == DT_LNK || e->d_type == DT_UNKNOWN || !strcmp(e->d_name, ".") ||
		    !strcmp(e->d_name, ".."))
			continue;
		if (n == DIR_LIST_MAX || !vec_push(&v, &n, sizeof(*v)) ||
		    !(v[n - 1] = strdup(e->d_name))) {
			free_names(v, n);
			closedir(dir);
			return;
		}
	}
	closedir(dir);
	qsort(v, n, sizeof(*v), cmp_name);
	d->names = v;
	d->n_names = n;
}

/* Is `name` an entry of d, other than a symbolic link, as far as the listing says? */
static bool listed_not_link(struct dir_cache *d, const char *name)
{
	if (++d->lookups == 2)
		list_dir(d);
	return d->n_names && bsearch(&name, d->names, d->n_names, sizeof(*d->names), cmp_name);
}

/* realpath(dir), through the cache; NULL when it does not resolve (not cached). */
static struct dir_cache *canonical_dir(struct parser *ps, char *dir)
{
	struct dir_cache *slot;
	char *canon;

	if (2 * (ps->n_dirs + 1) > ps->dirs_size) {
		size_t size = ps->dirs_size ? ps->dirs_size * 2 : 64;
		struct dir_cache *old = ps->dirs, *v = calloc(size, sizeof(*v));

		if (!v)
			return NULL;
		ps->dirs = v;
		ps->dirs_size = size;
		for (size_t i = 0; i < size / 2 && old; i++)
			if (old[i].dir)
				*dir_slot(ps, old[i].dir) = old[i];
		free(old);
	}
	slot = dir_slot(ps, dir);
	if (slot->dir)
		return slot;
	canon = realpath(dir, NULL);
	if (!canon)
		return NULL;
	slot->dir = strdup(dir);
	if (!slot->dir) {
		free(canon);
		return NULL;
	}
	slot->canon = canon;
	ps->n_dirs++;
	return slot;
}

/* dir + "/" + name, "/" not doubled; NULL: out of memory. */
static char *join_name(const char *dir, const char *name)
{
	size_t a = strcmp(dir, "/") ? strlen(dir) : 0, b = strlen(name);
	char *out = malloc(a + b + 2);

	if (out) {
		memcpy(out, dir, a);
		out[a] = '/';
		memcpy(out + a + 1, name, b + 1);
	}
	return out;
}

/*
 * realpath(3) of an absolute path, faster for policies naming thousands of siblings:
 * realpath costs one readlink(2) per component. When the parent directory's canonical form
 * is known (cached), the result is that plus the last name, provided the name exists and
 * is not a symbolic link, which the parent's listing or one lstat(2) tells. Anything else
 * (a link, an error, "..") goes to realpath(3) itself, which also sets errno for the caller.
 */
char *canonical_path(struct parser *ps, const char *abs)
{
	char *clean = clean_abs(abs), *slash, *out = NULL;
	struct dir_cache *parent;
	struct stat st;

	if (!clean)
		return realpath(abs, NULL);
	slash = strrchr(clean, '/');
	if (slash == clean) {
		free(clean);
		return realpath(abs, NULL);
	}
	*slash = '\0';
	parent = canonical_dir(ps, clean);
	*slash = '/';
	if (parent &&
	    (listed_not_link(parent, slash + 1) || (!lstat(clean, &st) && !S_ISLNK(st.st_mode))))
		out = join_name(parent->canon, slash + 1);
	free(clean);
	return out ? out : realpath(abs, NULL);
}

/* The home directory of `user` (NULL: the caller, HOME from envp first, like expanduser). */
static char *home_of(const struct parser *ps, const char *user)
{
	char buf[16384];
	struct passwd pw, *res = NULL;
	const char *home;

	if (!user) {
		home = policy_envp_get(ps->envp, "HOME");
		if (home)
			return strdup(home);
		getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res);
	} else {
		getpwnam_r(user, &pw, buf, sizeof(buf), &res);
	}
	return strdup(res ? res->pw_dir : "");
}

/* os.path.expanduser: "~" and "~user" prefixes; an unknown user leaves the text as is. */
char *expand_tilde(const struct parser *ps, const char *s)
{
	size_t ul = strcspn(s + 1, "/");
	char *user, *home, *out;

	if (s[0] != '~')
		return strdup(s);
	user = ul ? strndup(s + 1, ul) : NULL;
	if (ul && !user)
		return NULL;
	home = home_of(ps, user);
	free(user);
	if (!home)
		return NULL;
	if (!home[0] && ul) {
		free(home);
		return strdup(s);
	}
	if (asprintf(&out, "%s%s", home, s + 1 + ul) < 0)
		out = NULL;
	free(home);
	return out;
}

/* ---------------- paths below paths */

bool policy_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}
