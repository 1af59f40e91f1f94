/* SPDX-License-Identifier: MIT */
/*
 * The `.py-sandboxes` parser. Grammar and semantics: tests/corpus/pysandboxes/FORMAT-NOTES.md
 * §1-2 (py-sandboxes' newest generation).
 *
 * Each physical line goes through: split (\n, \r\n, \r, as Python's universal newlines) ->
 * binary checks (length, NUL, UTF-8) -> strip and quote-aware comment removal -> include /
 * legacy syntax / env= (kept raw) -> ${} substitution -> the handler of its key. Handlers
 * report into the diag and return, so one run lists every error of every file; the policy
 * is handed out only when there is none.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "policy_api.h"
#include "policy_eval.h"
#include "strindex.h"
#include "utf8.h"

#define MAX_FILE	  (16 * 1024 * 1024)
#define MAX_INCLUDE_DEPTH 32
/* Enough to fix a file in one go; a binary file would otherwise yield one error per line. */
#define MAX_ERRORS   1000
#define TEXT_DISPLAY 120
#define CMDLINE_FILE "<command line>"

struct dir_cache {
	char *dir;   /* absolute, as spelled (no "." or ".." component) */
	char *canon; /* its realpath */
	/* Listed on the second lookup in it: the sorted names of its entries known not to
	 * be symbolic links (d_type), so siblings need no lstat(2) at all. */
	char **names;
	size_t n_names;
	unsigned lookups;
};
#define DIR_LIST_MAX 65536 /* a larger directory is not listed (lstat each name instead) */

struct parser {
	struct policy *p;
	struct policy_diag *diag;
	char *const *envp;
	char *cwd;
	char **visited; /* realpath of every file loaded: each is read once */
	size_t n_visited;
	unsigned depth;
	size_t first_error; /* diag->n_errors when this parse started */
	size_t n_overrides;
	/* canonical path -> index + 1 in p->paths (0: empty slot), open addressing, so the
	 * duplicate check of each expose rule is O(1), not a scan of all the rules before it */
	struct str_index path_index; /* of p->paths, by canonical path */
	struct dir_cache *dirs; /* canonical forms of the directories holding exposed paths */
	size_t n_dirs, dirs_size;
	bool full; /* MAX_ERRORS reached: stop reading */
	bool oom;
};

struct line {
	const char *file; /* display name, owned by policy->files */
	const char *dir;  /* where a bare include name is looked for */
	unsigned no;
	const char *raw; /* the physical line, no terminator */
	size_t raw_len;
	size_t lead; /* offset in raw of text[0] */
	char *text;  /* stripped, comment removed; substituted once dispatched */
	size_t *map; /* substituted offset -> offset in the unsubstituted text; NULL: identity */
};

/* ---------------- small helpers */

/*
 * Appends one zeroed element to the array at *arrp holding *n elements. The capacity is
 * implicit (the next power of two), so the public structs need no capacity field. memcpy
 * moves the pointer so any element type can go through here without aliasing trouble.
 */
static void *vec_push(void *arrp, size_t *n, size_t size)
{
	char *a;

	memcpy(&a, arrp, sizeof(a));
	if ((*n & (*n - 1)) == 0) {
		a = reallocarray(a, *n ? *n * 2 : 1, size);
		if (!a)
			return NULL;
		memcpy(arrp, &a, sizeof(a));
	}
	memset(a + *n * size, 0, size);
	return a + (*n)++ * size;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Characters Python's str.strip() removes: ASCII and Unicode white space. */
static size_t space_len(const char *s, size_t n)
{
	static const char *const wide[] = { "\xc2\x85",	    "\xc2\xa0",	    "\xe1\x9a\x80",
					    "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf",
					    "\xe2\x81\x9f", "\xe3\x80\x80" };
	const unsigned char c = (unsigned char)s[0];

	if (n && (strchr(" \t\n\v\f\r", c) || (c >= 0x1c && c <= 0x1f)) && c)
		return 1;
	if (n >= 3 && c == 0xe2 && (unsigned char)s[1] == 0x80 && (unsigned char)s[2] >= 0x80 &&
	    (unsigned char)s[2] <= 0x8a)
		return 3; /* U+2000..U+200A */
	for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++) {
		size_t l = strlen(wide[i]);

		if (n >= l && memcmp(s, wide[i], l) == 0)
			return l;
	}
	return 0;
}

static size_t lstrip_len(const char *s, size_t n)
{
	size_t i = 0, l;

	while (i < n && (l = space_len(s + i, n - i)))
		i += l;
	return i;
}

/* New length of s[0..n) once trailing white space is removed. */
static size_t rstrip_len(const char *s, size_t n)
{
	for (;;) {
		size_t l = 0;

		for (size_t k = 1; k <= 3 && k <= n && !l; k++)
			if (space_len(s + n - k, k) == k)
				l = k;
		if (!l)
			return n;
		n -= l;
	}
}

/* ASCII-only trim of a NUL-terminated field, in place; *skip gets the bytes dropped in front. */
static char *trim(char *s, size_t *skip)
{
	char *e;

	*skip = 0;
	while (*s == ' ' || *s == '\t')
		s++, (*skip)++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/*
 * Up to TEXT_DISPLAY characters of s, with control bytes and invalid UTF-8 shown as \xNN
 * so that a binary file prints safely on a terminal; "..." marks a cut.
 */
static char *display_text(const char *s, size_t n)
{
	char *out = malloc(TEXT_DISPLAY * 4 + 4), *o = out;
	size_t i = 0, chars = 0;

	if (!out)
		return NULL;
	while (i < n && chars < TEXT_DISPLAY) {
		const unsigned char c = (unsigned char)s[i];
		size_t l = utf8_seq(s + i, n - i);

		if (l == 0 || c < 0x20 || c == 0x7f) {
			o += sprintf(o, "\\x%02x", c);
			i++;
		} else {
			memcpy(o, s + i, l);
			o += l;
			i += l;
		}
		chars++;
	}
	if (i < n)
		o = stpcpy(o, "...");
	*o = '\0';
	return out;
}

/* 1-based column, in characters, of byte offset `off` of the raw line. */
static unsigned raw_col(const char *raw, size_t off)
{
	unsigned col = 1;

	for (size_t i = 0; i < off; i++)
		if (((unsigned char)raw[i] & 0xc0) != 0x80)
			col++;
	return col;
}

/* ---------------- diagnostics */

static void msg_free(struct policy_msg *m)
{
	free(m->file);
	free(m->text);
	free(m->msg);
}

static void vreport(struct parser *ps, bool warning, const struct line *ln, unsigned col,
		    const char *fmt, va_list ap)
{
	struct policy_diag *d = ps->diag;
	struct policy_msg m = { .line = ln ? ln->no : 0, .col = col };
	struct policy_msg *slot;
	int r;

	if (ps->full)
		return;
	if (ln)
		m.file = strdup(ln->file);
	if (!warning && d->n_errors - ps->first_error == MAX_ERRORS) {
		ps->full = true;
		r = asprintf(&m.msg, "too many errors (%d): stopping here", MAX_ERRORS);
	} else {
		if (ln && ln->raw_len) { /* no text for file-level messages */
			size_t lead = lstrip_len(ln->raw, ln->raw_len);

			m.text = display_text(ln->raw + lead,
					      rstrip_len(ln->raw + lead, ln->raw_len - lead));
		}
		r = vasprintf(&m.msg, fmt, ap);
	}
	if (r < 0)
		m.msg = NULL;
	slot = warning ? vec_push(&d->warnings, &d->n_warnings, sizeof(m))
		       : vec_push(&d->errors, &d->n_errors, sizeof(m));
	if (!slot || !m.msg || (ln && !m.file)) {
		msg_free(&m);
		if (slot) /* keep the slot: it still says something failed */
			*slot = (struct policy_msg){ 0 };
		ps->oom = true;
		return;
	}
	*slot = m;
}

/*
 * Column of offset `off` in the (possibly substituted) text of the line. An offset right
 * after a literal byte is placed right after that byte's origin, so that an empty value or
 * field points where it was written rather than at whatever follows a ${} that vanished.
 */
static unsigned line_col(const struct line *ln, size_t off)
{
	const size_t *m = ln->map;
	size_t o = off;

	if (m && off > 0 && ln->text[off - 1] == ln->raw[ln->lead + m[off - 1]])
		o = m[off - 1] + 1;
	else if (m)
		o = m[off];
	return raw_col(ln->raw, ln->lead + o);
}

__attribute__((format(printf, 4, 5))) static void lerror(struct parser *ps, const struct line *ln,
							 size_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(ps, false, ln, ln ? line_col(ln, off) : 0, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 4, 5))) static void lwarn(struct parser *ps, const struct line *ln,
							size_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(ps, true, ln, line_col(ln, off), fmt, ap);
	va_end(ap);
}

/* An error on a stored rule (its line is gone): the rule is shown as key=value. */
__attribute__((format(printf, 3, 4))) static void
kv_error(struct parser *ps, const struct policy_kv *kv, const char *fmt, ...)
{
	struct line ln = { .file = kv->src.file, .no = kv->src.line, .raw = "" };
	char *text = NULL;
	va_list ap;

	if (asprintf(&text, "%s=%s", kv->key, kv->value) >= 0) {
		ln.raw = text;
		ln.raw_len = strlen(text);
	}
	va_start(ap, fmt);
	vreport(ps, false, &ln, kv->src.col, fmt, ap);
	va_end(ap);
	free(text);
}

static void print_msgs(FILE *f, const struct policy_msg *m, size_t n, const char *kind)
{
	for (size_t i = 0; i < n; i++, m++) {
		if (!m->file)
			fprintf(f, "pysb-bpf: %s: %s\n", kind, m->msg ? m->msg : "out of memory");
		else if (!m->line)
			fprintf(f, "%s: %s: %s\n", m->file, kind, m->msg);
		else
			fprintf(f, "%s:%u:%u: %s: %s\n", m->file, m->line, m->col, kind, m->msg);
		if (m->text && m->text[0])
			fprintf(f, "    %s\n", m->text);
	}
}

void policy_diag_print(FILE *f, const struct policy_diag *diag)
{
	print_msgs(f, diag->warnings, diag->n_warnings, "warning");
	print_msgs(f, diag->errors, diag->n_errors, "error");
}

void policy_diag_free(struct policy_diag *diag)
{
	for (size_t i = 0; i < diag->n_errors; i++)
		msg_free(&diag->errors[i]);
	for (size_t i = 0; i < diag->n_warnings; i++)
		msg_free(&diag->warnings[i]);
	free(diag->errors);
	free(diag->warnings);
	*diag = (struct policy_diag){ 0 };
}

/* ---------------- files and paths */

static const char *read_error(int err)
{
	if (err == EINVAL)
		return "not a regular file";
	if (err == EFBIG)
		return "larger than 16 MiB";
	return strerror(err);
}

/*
 * Reads a whole regular file. Returns 0 or an errno value: EINVAL for anything but a
 * regular file (O_NONBLOCK and that check keep FIFOs and devices from hanging the parse),
 * EFBIG beyond MAX_FILE.
 */
static int read_whole(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	size_t n = 0, cap = 0;
	char *b = NULL;
	struct stat st;
	int err = 0;

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

static char *join_path(const char *dir, const char *rel)
{
	size_t l = strlen(dir);
	char *s;

	if (asprintf(&s, "%s%s%s", dir, l && dir[l - 1] == '/' ? "" : "/", rel) < 0)
		return NULL;
	return s;
}

static char *abs_path(const struct parser *ps, const char *s)
{
	return s[0] == '/' ? strdup(s) : join_path(ps->cwd, s);
}

static char *dir_of(const char *abs)
{
	const char *slash = strrchr(abs, '/');

	return slash == abs ? strdup("/") : strndup(abs, (size_t)(slash - abs));
}

/* "/a//b/./c" -> "/a/b/c"; NULL when a component is "..", or the path ends with "/" or
 * "/." (those need realpath's own rules). */
static char *clean_abs(const char *abs)
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

static void free_names(char **names, size_t n)
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

/*
 * realpath(3) of an absolute path, faster for policies naming thousands of siblings:
 * realpath costs one readlink(2) per component. When the parent directory's canonical form
 * is known (cached), the result is that plus the last name, provided the name exists and
 * is not a symbolic link, which the parent's listing or one lstat(2) tells. Anything else
 * (a link, an error, "..") goes to realpath(3) itself, which also sets errno for the caller.
 */
static char *canonical_path(struct parser *ps, const char *abs)
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
	    (listed_not_link(parent, slash + 1) || (!lstat(clean, &st) && !S_ISLNK(st.st_mode))) &&
	    asprintf(&out, "%s/%s", strcmp(parent->canon, "/") ? parent->canon : "", slash + 1) < 0)
		out = NULL;
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
static char *expand_tilde(const struct parser *ps, const char *s)
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

/* ---------------- rule storage */

static struct policy_src line_src(const struct line *ln, size_t off)
{
	return (struct policy_src){ .file = ln->file, .line = ln->no, .col = line_col(ln, off) };
}

static void add_kv(struct parser *ps, struct policy_kv **arr, size_t *n, const struct line *ln,
		   const char *key, size_t voff)
{
	struct policy_kv *kv = vec_push(arr, n, sizeof(**arr));

	if (!kv) {
		ps->oom = true;
		return;
	}
	kv->key = strdup(key);
	kv->value = strdup(ln->text + voff);
	kv->src = line_src(ln, voff);
	if (!kv->key || !kv->value)
		ps->oom = true;
}

static const struct policy_kv *find_kv(const struct policy_kv *a, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(a[i].key, key) == 0)
			return &a[i];
	return NULL;
}

/* ---------------- values of the Python layer */

static bool in_list(const char *v, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(v, *list) == 0)
			return true;
	return false;
}

/*
 * guard_provider.parse_rules(): py-sandbox= and remote-result-guard= take "", true, 1 and
 * false, none, 0, any case; remote-result-guard also on and off. 1 true, 0 false, -1 neither.
 */
static int provider_bool(const char *v, bool on_off)
{
	static const char *const yes[] = { "", "true", "1", "on" }, *const no[] = { "false", "none",
										 "0", "off" };
	const size_t n = on_off ? 4 : 3;

	for (size_t i = 0; i < n; i++) {
		if (!strcasecmp(v, yes[i]))
			return 1;
		if (!strcasecmp(v, no[i]))
			return 0;
	}
	return -1;
}

/* Python's int() of a stripped string: a sign, digits, single '_' between digits. */
/* After a run of digits with '_' between two digits, as Python's int() reads it; NULL
 * when `v` does not start with one. */
static const char *int_digits(const char *v)
{
	bool digit = false;

	for (; *v; v++) {
		if (isdigit((unsigned char)*v))
			digit = true;
		else if (*v == '_' && digit && isdigit((unsigned char)v[1]))
			digit = false;
		else
			break;
	}
	return digit ? v : NULL;
}

static bool python_int(const char *v, bool *negative)
{
	*negative = *v == '-';
	if (*v == '+' || *v == '-')
		v++;
	v = int_digits(v);
	return v && !*v;
}

/*
 * A scalar of the eval layer (wiki/eval.md): digits with '_' separators as Python's int()
 * takes them, an optional fraction when `fraction`, then one of `units` ("" = none).
 */
static bool is_scalar(const char *v, bool fraction, const char *const *units)
{
	v = int_digits(v);
	if (!v)
		return false;
	if (fraction && *v == '.') {
		if (!isdigit((unsigned char)v[1]))
			return false;
		for (v++; isdigit((unsigned char)*v); v++)
			;
	}
	return in_list(v, units);
}

static const char *const DURATION_UNITS[] = { "", "ms", "s", "m", NULL };
static const char *const SIZE_UNITS[] = { "", "KB", "MB", "GB", NULL };
static const char *const NO_UNITS[] = { "", NULL };
static const char *const NAMESPACES[] = { "adaptive", "closed", "caller", NULL };
/* guard_provider: any case */
static const char *const RESULT_MODES[] = { "data-only", "data_only", "objects", "default", NULL };
static const char *const OS_SANDBOXES[] = { "none",	"subprocess", "landlock", "bwrap",
					    "firejail", "unshare",    "qemu",	  NULL };

enum vkind {
	V_PATH,
	V_IGNORE,
	V_NET,
	V_IMPORT,
	V_API,
	V_EVAL_LIST,
	V_EVAL_SYNTAX,
	V_EVAL_NS,
	V_DURATION,
	V_COUNT,
	V_SIZE,
	V_BOOL,
	V_RESULT_MODE,
	V_OS,
	V_LEARN,
	V_PORT,
};

struct keydef {
	const char *key;
	enum vkind kind;
	int arg;
};

static const struct keydef KEYS[] = {
	{ "expose-ro", V_PATH, POLICY_RO },
	{ "expose-rw", V_PATH, POLICY_RW },
	{ "ignore", V_IGNORE, 0 },
	{ "net", V_NET, 0 },
	{ "python-import", V_IMPORT, 0 },
	{ "python-api", V_API, 0 },
	{ "eval-syntax", V_EVAL_SYNTAX, 0 },
	{ "eval-call", V_EVAL_LIST, 0 },
	{ "eval-attribute", V_EVAL_LIST, 0 },
	{ "eval-import", V_EVAL_LIST, 0 },
	{ "eval-magic", V_EVAL_LIST, 0 },
	{ "eval-namespace", V_EVAL_NS, 0 },
	{ "eval-timeout", V_DURATION, 0 },
	{ "eval-max-iterations", V_COUNT, 0 },
	{ "eval-max-call-depth", V_COUNT, 0 },
	{ "eval-max-depth", V_COUNT, 0 },
	{ "eval-max-nodes", V_COUNT, 0 },
	{ "eval-max-leaked-threads", V_COUNT, 0 },
	{ "eval-max-alloc", V_SIZE, 0 },
	{ "remote-result-guard", V_BOOL, 1 },
	{ "remote-result-mode", V_RESULT_MODE, 0 },
	{ "py-sandbox", V_BOOL, 0 },
	{ "os-sandbox", V_OS, 0 },
	{ "learn", V_LEARN, 0 },
	{ "port", V_PORT, 0 },
};
#define N_KEYS (sizeof(KEYS) / sizeof(KEYS[0]))

/* Scalar eval keys may appear once per profile (wiki/eval.md), remote-result-mode once. */
static bool is_single(enum vkind k)
{
	return k == V_EVAL_NS || k == V_DURATION || k == V_COUNT || k == V_SIZE;
}

/* NULL when the value fits the key, else what was expected. */
static const char *python_value_error(const struct keydef *kd, const char *v)
{
	switch (kd->kind) {
	case V_IMPORT:
		/* guard_import.parse_rules() takes any comma list, empty items and all: an
		 * empty one names no module */
		return NULL;
	case V_API:
		return NULL; /* checked by on_python() with policy_api_error() */
	case V_EVAL_LIST:
	case V_EVAL_SYNTAX:
		return NULL; /* checked by on_python() with policy_eval_list_error() */
	case V_EVAL_NS:
		return in_list(v, NAMESPACES) ? NULL : "expected adaptive, closed or caller";
	case V_DURATION:
		return is_scalar(v, true, DURATION_UNITS) ? NULL
							  : "expected a duration such as 2s, 250ms "
							    "or 1m ('_' may separate digits)";
	case V_COUNT:
		return is_scalar(v, false, NO_UNITS)
			       ? NULL
			       : "expected a whole number such as 100_000 (no unit)";
	case V_SIZE:
		return is_scalar(v, false, SIZE_UNITS)
			       ? NULL
			       : "expected a size such as 10MB (KB, MB, GB)";
	case V_BOOL:
		return provider_bool(v, kd->arg) >= 0
			       ? NULL
			       : kd->arg ? "expected true or false (also 1/0, on/off, none; any case)"
					 : "expected true or false (also 1/0, none; any case)";
	case V_RESULT_MODE:
		for (const char *const *m = RESULT_MODES; *m; m++)
			if (!strcasecmp(v, *m))
				return NULL;
		return "expected data-only or objects";
	case V_OS:
		for (const char *const *m = OS_SANDBOXES; *m; m++)
			if (!strcasecmp(v, *m))
				return NULL;
		return "unknown os-sandbox: use one of none, subprocess, landlock, bwrap, "
		       "firejail, unshare, qemu";
	case V_LEARN:
		if (!strcasecmp(v, "true") || !strcmp(v, "0") || !strcmp(v, "1"))
			return "learn= takes the name of the file to learn into (empty: "
			       ".py-sandboxes), or false to lock the policy; py-sandboxes refuses "
			       "a boolean: use the filename instead";
		return NULL;
	case V_PORT: {
		bool negative;

		if (!python_int(v, &negative))
			return "expected a port number (a whole number, as Python's int() reads "
			       "it)";
		return negative && strspn(v + 1, "0_") != strlen(v + 1)
			       ? "port must be a positive value"
			       : NULL;
	}
	default:
		return "internal error: not a Python-layer key";
	}
}

/* The provider keys guard_provider.parse_rules() takes once (learn=false apart). */
static bool is_provider_single(enum vkind k)
{
	return k == V_BOOL || k == V_OS || k == V_PORT || k == V_LEARN || k == V_RESULT_MODE;
}

static bool is_learn_lock(const struct policy_kv *kv)
{
	return !strcmp(kv->key, "learn") && !strcasecmp(kv->value, "false");
}

/*
 * A provider key given twice is an error (guard_provider: "Multiple <key> parameters"); a
 * command-line rule may replace one line of the files, as `python-sb --KEY=VALUE` does.
 */
static bool provider_twice(struct parser *ps, struct line *ln, const char *key)
{
	const bool cmdline = !strcmp(ln->file, CMDLINE_FILE);
	const struct policy_kv *prev = NULL;
	size_t n = 0;

	for (size_t i = 0; i < ps->p->n_python; i++) {
		const struct policy_kv *kv = &ps->p->python[i];

		if (strcmp(kv->key, key) || is_learn_lock(kv))
			continue;
		n++;
		if (!prev || strcmp(kv->src.file, CMDLINE_FILE))
			prev = kv;
	}
	if (!prev || (cmdline && n < 2))
		return false;
	lerror(ps, ln, 0,
	       "%s is already set at %s:%u: py-sandboxes refuses a second %s= line (keep one "
	       "across all included files; a command-line --%s= may replace it)",
	       key, prev->src.file, prev->src.line, key, key);
	return true;
}

/*
 * learn=FILE as guard_provider resolves it: a bare name is next to the file holding the
 * line, another path is relative to the working directory, empty is .py-sandboxes; its
 * parent directory must exist. Returns the path to store (malloc'ed), NULL on error.
 */
static char *learn_target(struct parser *ps, struct line *ln, size_t voff)
{
	const char *v = ln->text + voff, *rest = v;
	char *path, *dir;
	struct stat st;

	if (!*v)
		return strdup(".py-sandboxes");
	while (starts_with(rest, "./"))
		rest += 2 + strspn(rest + 2, "/");
	path = strchr(rest, '/') ? abs_path(ps, v) : join_path(ln->dir, rest);
	dir = path ? dir_of(path) : NULL;
	if (!path || !dir) {
		ps->oom = true;
	} else if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		lerror(ps, ln, voff,
		       "learn=%.120s: the parent directory '%.120s' must exist (py-sandboxes "
		       "does not expand '~'); create it or name another file",
		       v, dir);
		free(path);
		path = NULL;
	} else if (strchr(rest, '/')) {
		free(path); /* kept as written: relative to the working directory */
		path = strdup(v);
	}
	free(dir);
	return path;
}

/* The value as py-sandboxes reads it, for the keys whose spellings it folds. */
static char *provider_value(const struct keydef *kd, const char *v)
{
	char *out;

	switch (kd->kind) {
	case V_BOOL:
		return strdup(provider_bool(v, kd->arg) ? "true" : "false");
	case V_RESULT_MODE:
		return strdup(!strcasecmp(v, "objects") || !strcasecmp(v, "default") ? "objects"
										   : "data-only");
	case V_OS:
		out = strdup(v);
		for (char *c = out; c && *c; c++)
			*c = (char)tolower((unsigned char)*c);
		return out;
	default:
		return NULL;
	}
}

static void on_python(struct parser *ps, struct line *ln, const struct keydef *kd, const char *key,
		      size_t voff)
{
	const char *v = ln->text + voff;
	const char *why = python_value_error(kd, v);
	const bool lock = kd->kind == V_LEARN && !strcasecmp(v, "false");
	const struct policy_kv *prev;
	char *api, *norm = NULL;
	size_t off;

	if ((kd->kind == V_API && (api = policy_api_error(v, &off))) ||
	    ((kd->kind == V_EVAL_LIST || kd->kind == V_EVAL_SYNTAX) &&
	     (api = policy_eval_list_error(kd->key, v, &off)))) {
		lerror(ps, ln, voff + off, "invalid %s value '%.120s': %s", key, v, api);
		free(api);
		return;
	}
	if (why) {
		lerror(ps, ln, voff, "invalid %s value '%.120s': %s", key, v, why);
		return;
	}
	if (lock && !strcmp(ln->file, CMDLINE_FILE)) {
		lerror(ps, ln, voff,
		       "learn=false only locks a policy file; on the command line learn= takes "
		       "the name of the file to learn into");
		return;
	}
	if (is_provider_single(kd->kind) && !lock && provider_twice(ps, ln, key))
		return;
	prev = is_single(kd->kind) ? find_kv(ps->p->python, ps->p->n_python, key) : NULL;
	if (prev) {
		lerror(ps, ln, 0,
		       "%.120s is already set at %s:%u: keep a single %.120s= line across "
		       "all included files",
		       key, prev->src.file, prev->src.line, key);
		return;
	}
	if (kd->kind == V_LEARN && !lock && !(norm = learn_target(ps, ln, voff)))
		return;
	if (!norm)
		norm = provider_value(kd, v);
	add_kv(ps, &ps->p->python, &ps->p->n_python, ln, key, voff);
	if (norm && !ps->oom) {
		free(ps->p->python[ps->p->n_python - 1].value);
		ps->p->python[ps->p->n_python - 1].value = norm;
	} else {
		free(norm);
	}
}

/* ---------------- expose-ro / expose-rw / ignore */

/* The legacy "src,dst" form is kept only when both halves are the same path. */
static char *single_path(struct parser *ps, struct line *ln, const char *key, size_t voff)
{
	const char *v = ln->text + voff, *comma = strchr(v, ',');
	size_t l = comma ? (size_t)(comma - v) : 0;

	if (!comma)
		return strdup(v);
	if (l == 0 || strlen(comma + 1) != l || strncmp(v, comma + 1, l) != 0) {
		lerror(ps, ln, voff + l,
		       "expected a single path (no comma) in %s=; the two-path form 'src,dst' "
		       "of bind= is gone: write one %s=PATH line per path",
		       key, key);
		return NULL;
	}
	/* a deliberate difference (docs/policy.md): py-sandboxes refuses any comma */
	lwarn(ps, ln, voff,
	      "legacy two-path form '%.120s': the modern form is %s=%.*s (differs from "
	      "py-sandboxes, whose newest parser refuses it; pysb-bpf reads one path)",
	      v, key, (int)(l > 120 ? 120 : l), v);
	return strndup(v, l);
}

static const char *path_key(const void *paths, size_t i)
{
	return ((const struct policy_path *)paths)[i].path;
}

static void store_path(struct parser *ps, struct line *ln, const struct keydef *kd, size_t voff,
		       char *spelled, char *canon)
{
	struct policy *p = ps->p;
	struct policy_path *pp, *prev;
	size_t *slot;

	if (str_index_reserve(&ps->path_index, p->n_paths, path_key, p->paths)) {
		ps->oom = true;
		goto drop;
	}
	slot = str_index_slot(&ps->path_index, canon, path_key, p->paths);
	if (*slot) {
		prev = &p->paths[*slot - 1];
		if (prev->access != (enum policy_access)kd->arg)
			lerror(ps, ln, voff,
			       "%s=%.120s invalidates another rule: %s:%u exposes '%.120s' %s; "
			       "keep one "
			       "mode per path",
			       kd->key, spelled, prev->src.file, prev->src.line, canon,
			       prev->access == POLICY_RO ? "read-only" : "read-write");
		goto drop; /* same mode: a duplicate, dropped */
	}
	pp = vec_push(&p->paths, &p->n_paths, sizeof(*pp));
	if (!pp) {
		ps->oom = true;
		goto drop;
	}
	*pp = (struct policy_path){ .path = canon,
				    .spelled = spelled,
				    .access = (enum policy_access)kd->arg,
				    .src = line_src(ln, voff) };
	*slot = p->n_paths;
	return;
drop:
	free(spelled);
	free(canon);
}

static void on_expose(struct parser *ps, struct line *ln, const struct keydef *kd, const char *key,
		      size_t voff)
{
	char *spelled = NULL, *expanded = NULL, *abs = NULL, *canon = NULL;

	if (!ln->text[voff]) {
		lerror(ps, ln, voff, "%s= path must be set (is it an unset ${VAR}?)", key);
		return;
	}
	spelled = single_path(ps, ln, key, voff);
	if (!spelled)
		goto cleanup;
	expanded = expand_tilde(ps, spelled);
	abs = expanded ? abs_path(ps, expanded) : NULL;
	if (!abs) {
		ps->oom = true;
		goto cleanup;
	}
	canon = canonical_path(ps, abs);
	if (!canon && (errno == ENOENT || errno == ENOTDIR))
		lerror(ps, ln, voff,
		       "path '%.120s' must exist (looked for '%.120s'); create it or remove "
		       "the rule",
		       spelled, abs);
	else if (!canon)
		lerror(ps, ln, voff, "cannot resolve path '%.120s' ('%.120s'): %s", spelled, abs,
		       strerror(errno));
	if (!canon)
		goto cleanup;
	store_path(ps, ln, kd, voff, spelled, canon);
	spelled = canon = NULL;
cleanup:
	free(spelled);
	free(expanded);
	free(abs);
	free(canon);
}

static void on_ignore(struct parser *ps, struct line *ln, const struct keydef *kd, const char *key,
		      size_t voff)
{
	struct policy_ignore *ig;

	(void)kd;
	if (!ln->text[voff]) {
		lerror(ps, ln, voff, "%s= needs a glob pattern such as .env or *.log", key);
		return;
	}
	ig = vec_push(&ps->p->ignores, &ps->p->n_ignores, sizeof(*ig));
	if (!ig || !(ig->glob = strdup(ln->text + voff))) {
		ps->oom = true;
		return;
	}
	ig->src = line_src(ln, voff);
}

/* ---------------- net= */

#define NET_FORMAT "ACTION|PROTO|NETWORK|PORTS|DIRECTION"

struct net_ctx {
	struct parser *ps;
	struct line *ln;
	struct policy_net *net;
	bool ok;
};

__attribute__((format(printf, 3, 4))) static void net_error(struct net_ctx *c, size_t off,
							    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(c->ps, false, c->ln, line_col(c->ln, off), fmt, ap);
	va_end(ap);
	c->ok = false;
}

static void net_action(struct net_ctx *c, const char *s, size_t off)
{
	/* py-sandboxes compares the raw field: upper case, no blanks. */
	if (strcmp(s, "ALLOW") == 0 || strcmp(s, "DENY") == 0)
		c->net->deny = s[0] == 'D';
	else
		net_error(c, off, "invalid action '%.120s' in net=: expected ALLOW or DENY", s);
}

/* Items of a comma list that are not blank (py-sandboxes skips the blank ones). */
static unsigned count_items(const char *s)
{
	unsigned n = 0;

	for (;;) {
		size_t l = strcspn(s, ",");

		n += strspn(s, " \t") < l;
		if (!s[l])
			return n;
		s += l + 1;
	}
}

static void net_proto_item(struct net_ctx *c, const char *tok, size_t off, unsigned n_items)
{
	if (strcasecmp(tok, "tcp") == 0)
		c->net->protos |= POLICY_PROTO_TCP;
	else if (strcasecmp(tok, "udp") == 0)
		c->net->protos |= POLICY_PROTO_UDP;
	else if (strcasecmp(tok, "any") != 0 && strcmp(tok, "*") != 0)
		net_error(c, off,
			  "unknown protocol '%.120s' in net=: expected tcp, udp, a comma list "
			  "of them, any or *",
			  tok);
	else if (n_items > 1)
		net_error(c, off, "'%.120s' must be used alone in the protocol field of net=", tok);
	else
		c->net->protos = POLICY_PROTO_TCP | POLICY_PROTO_UDP;
}

static void net_proto(struct net_ctx *c, char *s, size_t off)
{
	const unsigned n_items = count_items(s);
	char *p = s;

	if (!n_items) {
		net_error(c, off,
			  "empty protocol in net=: expected tcp, udp, a comma list of "
			  "them, any or *");
		return;
	}
	for (;;) {
		size_t l = strcspn(p, ","), skip;
		const char end = p[l];
		char *tok;

		p[l] = '\0';
		tok = trim(p, &skip);
		if (*tok)
			net_proto_item(c, tok, off + (size_t)(p - s) + skip, n_items);
		if (!end)
			return;
		p += l + 1;
	}
}

/* A CIDR prefix: a length, or for IPv4 a dotted netmask as Python's ip_network accepts. */
static bool valid_prefix(int af, const char *s)
{
	struct in_addr mask;
	char *end;
	long n;

	if (isdigit((unsigned char)s[0]) && !strchr(s, '.')) {
		n = strtol(s, &end, 10);
		return !*end && n >= 0 && n <= (af == AF_INET ? 32 : 128) && strlen(s) <= 3;
	}
	if (af != AF_INET || inet_pton(AF_INET, s, &mask) != 1)
		return false;
	uint32_t m = ntohl(mask.s_addr);
	/* contiguous ones (netmask) or contiguous zeros then ones (hostmask) */
	return (m & (~m >> 1)) == 0 || ((~m) & (m >> 1)) == 0;
}

static bool is_ipv4_like(const char *s)
{
	return strspn(s, "0123456789.") == strlen(s);
}

/* NULL when `s` is a plausible NETWORK field, else what is wrong. Names resolve later. */
static const char *network_error(const char *s)
{
	unsigned char buf[sizeof(struct in6_addr)];
	const char *slash = strchr(s, '/');

	if (strcmp(s, "*") == 0)
		return NULL;
	if (slash) {
		char *addr = strndup(s, (size_t)(slash - s));
		int af = addr && strchr(addr, ':') ? AF_INET6 : AF_INET;
		bool ok = addr && inet_pton(af, addr, buf) == 1 && valid_prefix(af, slash + 1);

		free(addr);
		return ok ? NULL
			  : "invalid CIDR: expected ADDRESS/PREFIX (0-32 for IPv4, 0-128 for IPv6)";
	}
	if (strchr(s, ':'))
		return inet_pton(AF_INET6, s, buf) == 1 ? NULL : "invalid IPv6 address";
	if (is_ipv4_like(s))
		return inet_pton(AF_INET, s, buf) == 1 ? NULL : "invalid IPv4 address";
	if (strlen(s) > 253 || s[0] == '.' || s[0] == '-' || strstr(s, "..") ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") !=
		    strlen(s))
		return "invalid host name";
	return NULL;
}

static void net_network(struct net_ctx *c, const char *s, size_t off)
{
	const char *why;

	if (strspn(s, " \t") == strlen(s)) {
		net_error(c, off,
			  "network part of net= must be set: an address, a CIDR, a host "
			  "name or *");
		return;
	}
	why = network_error(s);
	if (why) {
		net_error(c, off, "%s '%.120s' in net=", why, s);
		return;
	}
	c->net->network = strdup(s);
	if (!c->net->network)
		c->ps->oom = true;
}

/* Decimal 0-65535, digits only. */
static bool parse_port(const char *s, uint16_t *out)
{
	unsigned long n = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return false;
		n = n * 10 + (unsigned long)(*s - '0');
		if (n > 65535)
			return false;
	}
	*out = (uint16_t)n;
	return true;
}

static void add_ports(struct net_ctx *c, uint16_t lo, uint16_t hi)
{
	struct policy_port_range *r =
		vec_push(&c->net->ports, &c->net->n_ports, sizeof(*c->net->ports));

	if (!r) {
		c->ps->oom = true;
		return;
	}
	r->lo = lo;
	r->hi = hi;
}

/* One element of a port list: N, A-B or A- (open to 65535). */
static void net_port_item(struct net_ctx *c, char *item, size_t off)
{
	char *dash = strchr(item, '-');
	uint16_t lo, hi = 65535;
	size_t skip;

	if (!dash) {
		if (parse_port(item, &lo))
			add_ports(c, lo, lo);
		else
			net_error(c, off,
				  "invalid port '%.120s' in net=: expected 0-65535, A-B, A- or "
				  "* alone",
				  item);
		return;
	}
	*dash = '\0';
	char *a = trim(item, &skip), *b = trim(dash + 1, &skip);
	if (!parse_port(a, &lo) || (*b && !parse_port(b, &hi))) {
		net_error(c, off,
			  "invalid port range '%.60s-%.60s' in net=: expected A-B or A- with "
			  "ports 0-65535",
			  a, b);
		return;
	}
	if (lo > hi) {
		net_error(c, off,
			  "invalid port range '%.60s-%.60s' in net=: start is greater than end", a,
			  b);
		return;
	}
	add_ports(c, lo, hi);
}

static void net_ports(struct net_ctx *c, char *s, size_t off)
{
	char *save = NULL, *tok;
	size_t skip;
	char *t = trim(s, &skip);

	if (!*t)
		return; /* an empty field allows no port */
	if (strcmp(t, "*") == 0) {
		add_ports(c, 0, 65535);
		return;
	}
	for (char *u = s; (tok = strtok_r(u, ",", &save)); u = NULL) {
		size_t toff = off + (size_t)(tok - s);
		char *item = trim(tok, &skip);

		if (*item)
			net_port_item(c, item, toff + skip);
	}
}

static void net_direction(struct net_ctx *c, const char *s, size_t off)
{
	const char *p = s;

	/* py-sandboxes splits on ',' without trimming: "IN, OUT" is refused there too. */
	for (;;) {
		size_t l = strcspn(p, ",");

		if (l == 1 && p[0] == '*')
			c->net->dirs |= POLICY_DIR_IN | POLICY_DIR_OUT;
		else if (l == 2 && strncmp(p, "IN", 2) == 0)
			c->net->dirs |= POLICY_DIR_IN;
		else if (l == 3 && strncmp(p, "OUT", 3) == 0)
			c->net->dirs |= POLICY_DIR_OUT;
		else {
			net_error(c, off,
				  "invalid direction '%.120s' in net=: expected IN, OUT, * or "
				  "a comma list such as IN,OUT",
				  s);
			return;
		}
		if (!p[l])
			return;
		p += l + 1;
	}
}

static void net_free(struct policy_net *n)
{
	free(n->network);
	free(n->ports);
}

static void on_net(struct parser *ps, struct line *ln, const struct keydef *kd, const char *key,
		   size_t voff)
{
	struct policy_net net = { .src = line_src(ln, voff) };
	struct net_ctx c = { .ps = ps, .ln = ln, .net = &net, .ok = true };
	char *v = strdup(ln->text + voff), *f[5];
	size_t off[5], n = 0, i;

	(void)kd;
	(void)key;
	if (!v) {
		ps->oom = true;
		return;
	}
	for (i = 0, f[0] = v, off[0] = voff, n = 1; v[i]; i++) {
		if (v[i] != '|')
			continue;
		if (n == 5) {
			net_error(&c, voff + i, "too many '|' in net=: expected %s", NET_FORMAT);
			goto cleanup;
		}
		v[i] = '\0';
		f[n] = v + i + 1;
		off[n++] = voff + i + 1;
	}
	if (n != 5) {
		net_error(&c, voff, "net= needs 5 fields separated by '|', found %zu: expected %s",
			  n, NET_FORMAT);
		goto cleanup;
	}
	net_action(&c, f[0], off[0]);
	net_proto(&c, f[1], off[1]);
	net_network(&c, f[2], off[2]);
	net_ports(&c, f[3], off[3]);
	net_direction(&c, f[4], off[4]);
	if (c.ok && !ps->oom) {
		struct policy_net *slot = vec_push(&ps->p->nets, &ps->p->n_nets, sizeof(*slot));

		if (slot) {
			*slot = net;
			net = (struct policy_net){ 0 };
		} else {
			ps->oom = true;
		}
	}
cleanup:
	net_free(&net);
	free(v);
}

/* ---------------- substitution */

static void subst_error(struct parser *ps, struct line *ln, size_t base,
			const struct policy_subst_error *err, const char *in)
{
	const char *ref = in + err->offset;
	const int shown = err->len > 120 ? 120 : (int)err->len;

	if (err->len && memmem(ref, err->len, ":=", 2))
		lerror(ps, ln, base + err->offset,
		       "bash default form '%.*s' is not accepted: "
		       "write ${NAME:-default}",
		       shown, ref);
	else
		lerror(ps, ln, base + err->offset, "%s%s%.*s%s", err->msg,
		       err->len ? ", found '" : "", shown, ref, err->len ? "'" : "");
}

/* Replaces ln->text by its substituted form; ln->map then locates errors in the raw line. */
static bool substitute_line(struct parser *ps, struct line *ln)
{
	struct policy_subst_error err;
	size_t *map;
	char *s;

	if (!strstr(ln->text, "${"))
		return true; /* nothing to expand: spare the copy and the offset map */
	s = policy_subst(ln->text, strlen(ln->text), policy_envp_lookup, (void *)ps->envp, &map,
			 &err);
	if (!s) {
		subst_error(ps, ln, 0, &err, ln->text);
		return false;
	}
	free(ln->text);
	ln->text = s;
	ln->map = map;
	return true;
}

/* ---------------- env= / unenv= (raw) */

static void push_env(struct parser *ps, struct line *ln, size_t voff, char *name, char *value,
		     bool unset)
{
	struct policy_env *e = vec_push(&ps->p->envs, &ps->p->n_envs, sizeof(*e));

	if (!e || !name || (!unset && !value)) {
		free(name);
		free(value);
		ps->oom = true;
		return;
	}
	*e = (struct policy_env){
		.name = name, .value = value, .unset = unset, .src = line_src(ln, voff)
	};
}

/* The value stays raw (policy_build_env substitutes it); only its ${} forms are checked. */
static bool env_value_ok(struct parser *ps, struct line *ln, size_t off)
{
	struct policy_subst_error err;
	const char *v = ln->text + off;
	char *r = policy_subst(v, strlen(v), NULL, NULL, NULL, &err);

	if (r) {
		free(r);
		return true;
	}
	subst_error(ps, ln, off, &err, v);
	return false;
}

static void on_env(struct parser *ps, struct line *ln)
{
	const bool unset = ln->text[0] == 'u';
	const size_t voff = unset ? strlen("unenv=") : strlen("env=");
	const char *v = ln->text + voff, *eq = strchr(v, '=');

	if (unset) {
		if (!*v || eq)
			lerror(ps, ln, voff,
			       "unenv= takes a variable name or a pattern such as "
			       "OPENAI_*, nothing else");
		else
			push_env(ps, ln, voff, strdup(v), NULL, true);
		return;
	}
	if (!eq) {
		lerror(ps, ln, voff + strlen(v),
		       "missing '=' after the variable name: expected "
		       "env=NAME=value");
		return;
	}
	if (eq == v) {
		lerror(ps, ln, voff, "missing variable name: expected env=NAME=value");
		return;
	}
	if (env_value_ok(ps, ln, (size_t)(eq - ln->text) + 1))
		push_env(ps, ln, voff, strndup(v, (size_t)(eq - v)), strdup(eq + 1), false);
}

/* ---------------- keys and legacy syntax */

static const struct {
	const char *key;
	const char *fix;
} LEGACY[] = {
	{ "bind", "write expose-rw=PATH, one path per line" },
	{ "ro-bind", "write expose-ro=PATH, one path per line" },
	{ "rw-bind", "write expose-rw=PATH, one path per line" },
	{ "set-env", "write env=NAME=value" },
	{ "unset-env", "write unenv=NAME" },
	{ "sandbox-provider", "write os-sandbox=NAME" },
	{ "python-api-import", "write python-import= for modules and python-api=ALLOW:... for "
			       "functions" },
};

static const char *legacy_fix(const char *key, size_t len)
{
	for (size_t i = 0; i < sizeof(LEGACY) / sizeof(LEGACY[0]); i++)
		if (strlen(LEGACY[i].key) == len && strncmp(LEGACY[i].key, key, len) == 0)
			return LEGACY[i].fix;
	return NULL;
}

/* "--key=value" lines of the first generation, possibly with a legacy key too. */
static void on_dashdash(struct parser *ps, struct line *ln)
{
	const char *key = ln->text + 2;
	size_t klen = strcspn(key, "=");
	const char *fix = key[klen] ? legacy_fix(key, klen) : NULL;

	if (fix)
		lerror(ps, ln, 0, "legacy syntax '--%.*s=': drop the leading '--' and %s",
		       (int)klen, key, fix);
	else
		lerror(ps, ln, 0, "legacy '--' prefix: drop it and write '%.60s%s'", key,
		       strlen(key) > 60 ? "..." : "");
}

static bool on_legacy_key(struct parser *ps, struct line *ln)
{
	size_t klen = strcspn(ln->text, "=");
	const char *fix = ln->text[klen] ? legacy_fix(ln->text, klen) : NULL;

	if (fix)
		lerror(ps, ln, 0, "legacy key '%.*s=' is no longer accepted: %s", (int)klen,
		       ln->text, fix);
	return fix != NULL;
}

unsigned policy_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned d[33][33];

	/* Only distances up to 2 matter, and the distance is at least the length difference.
	 * Optimal string alignment: a swap of two neighbours ("plociy") is one edit. */
	if (la > 32 || lb > 32 || la > lb + 2 || lb > la + 2)
		return UINT_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb] > 2 ? UINT_MAX : d[la][lb];
}

/* The known key `key` was most likely meant to be, or NULL. */
const char *policy_closest_key(const char *key)
{
	static const char *const extra[] = { "env", "unenv", "include" };
	const char *best = NULL;
	unsigned best_d = 3;

	for (size_t i = 0; i < N_KEYS + 3; i++) {
		const char *k = i < N_KEYS ? KEYS[i].key : extra[i - N_KEYS];
		unsigned d = strcasecmp(k, key) == 0 ? 0 : policy_edit_distance(k, key);

		if (d < best_d && d * 3 <= strlen(k)) {
			best = k;
			best_d = d;
		}
	}
	return best;
}

static void unknown_key(struct parser *ps, struct line *ln, const char *key, bool has_eq)
{
	const char *hint = policy_closest_key(key);

	if (hint && strcmp(hint, key) == 0 && strcmp(key, "include") == 0)
		lerror(ps, ln, 0, "expected include \"PATH\" or include? \"PATH\" (no '=')");
	else if (!has_eq && !hint)
		lerror(ps, ln, 0,
		       "invalid rule: expected key=value, include \"PATH\" or a # comment");
	else if (!has_eq)
		lerror(ps, ln, 0, "invalid rule: expected key=value; did you mean '%s='?", hint);
	else if (!key[0])
		lerror(ps, ln, 0, "missing key before '=': expected key=value");
	else if (hint)
		lerror(ps, ln, 0,
		       "unknown key '%.120s': did you mean '%.120s'? (keys are case-sensitive)",
		       key, hint);
	else if (starts_with(key, "eval-"))
		lerror(ps, ln, 0,
		       "unknown key '%.120s': the guarded eval knows eval-syntax, eval-call, "
		       "eval-attribute, eval-import, eval-magic, eval-namespace, eval-timeout, "
		       "eval-max-iterations, eval-max-call-depth, eval-max-depth, eval-max-nodes, "
		       "eval-max-alloc and eval-max-leaked-threads",
		       key);
	else
		lerror(ps, ln, 0,
		       "unknown key '%.120s': see FORMAT-NOTES §1.4 for the keys; a "
		       "provider parameter is written <provider>.<key>=value",
		       key);
}

static const struct keydef *find_key(const char *key)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strcmp(KEYS[i].key, key) == 0)
			return &KEYS[i];
	return NULL;
}

/* eval-* keys may carry a ":profile" suffix (wiki/eval.md): eval-timeout:llm=2s. */
static const struct keydef *find_eval_key(const char *key)
{
	size_t base = strcspn(key, ":");
	char name[64];
	const struct keydef *kd;

	if (!starts_with(key, "eval-") || base >= sizeof(name) || (key[base] && !key[base + 1]))
		return NULL;
	memcpy(name, key, base);
	name[base] = '\0';
	kd = find_key(name);
	/* eval_rules.parse_rules() knows its 13 keys and no other */
	return kd;
}

bool policy_key_known(const char *key)
{
	const char *dot = strchr(key, '.');

	return find_key(key) || find_eval_key(key) || !strcmp(key, "env") ||
	       !strcmp(key, "unenv") || (dot && dot != key && dot[1]);
}

static void on_param(struct parser *ps, struct line *ln, const char *key, size_t voff)
{
	const char *dot = strchr(key, '.');

	if (dot == key || !dot[1]) {
		lerror(ps, ln, 0,
		       "invalid provider parameter '%.120s': expected <provider>.<key>=value", key);
		return;
	}
	add_kv(ps, &ps->p->params, &ps->p->n_params, ln, key, voff);
}

static void dispatch(struct parser *ps, struct line *ln)
{
	const char *eq = strchr(ln->text, '=');
	size_t klen = eq ? (size_t)(eq - ln->text) : strlen(ln->text);
	char *key = strndup(ln->text, klen);
	const struct keydef *kd;

	if (!key) {
		ps->oom = true;
		return;
	}
	kd = eq ? find_key(key) : NULL;
	if (!kd && eq)
		kd = find_eval_key(key);
	/* py-sandboxes strip()s the value of each of its keys (the line's end already is);
	 * provider parameters are the providers' own, kept as written */
	if (kd && kd->kind != V_IGNORE) /* guard_files keeps an ignore= pattern as written */
		klen += lstrip_len(eq + 1, strlen(eq + 1));
	if (kd && kd->kind == V_PATH)
		on_expose(ps, ln, kd, key, klen + 1);
	else if (kd && kd->kind == V_IGNORE)
		on_ignore(ps, ln, kd, key, klen + 1);
	else if (kd && kd->kind == V_NET)
		on_net(ps, ln, kd, key, klen + 1);
	else if (kd)
		on_python(ps, ln, kd, key, klen + 1);
	else if (eq && strchr(key, '.'))
		on_param(ps, ln, key, klen + 1);
	else
		unknown_key(ps, ln, key, eq != NULL);
	free(key);
}

/* ---------------- include */

static void parse_text(struct parser *ps, const char *file, const char *dir, const char *buf,
		       size_t len);

static bool visited(const struct parser *ps, const char *canon)
{
	for (size_t i = 0; i < ps->n_visited; i++)
		if (strcmp(ps->visited[i], canon) == 0)
			return true;
	return false;
}

static bool mark_visited(struct parser *ps, const char *canon)
{
	char **slot = vec_push(&ps->visited, &ps->n_visited, sizeof(*slot));

	if (!slot || !(*slot = strdup(canon))) {
		ps->oom = true;
		return false;
	}
	return true;
}

/* Adds a display name to policy->files; returns the stored copy. */
static const char *add_file(struct parser *ps, const char *name)
{
	char **slot = vec_push(&ps->p->files, &ps->p->n_files, sizeof(*slot));

	if (!slot || !(*slot = strdup(name))) {
		ps->oom = true;
		return NULL;
	}
	return *slot;
}

/* Resolves a substituted include path: bare name next to the including file, else the cwd. */
static char *include_target(struct parser *ps, const struct line *ln, const char *path)
{
	char *expanded = expand_tilde(ps, path), *full;

	if (!expanded)
		return NULL;
	full = strchr(expanded, '/') ? abs_path(ps, expanded) : join_path(ln->dir, expanded);
	free(expanded);
	return full;
}

/* `written` is the path as in the file, `path` once substituted. */
static void load_include(struct parser *ps, struct line *ln, size_t off, const char *written,
			 const char *path, bool optional)
{
	char *full = include_target(ps, ln, path), *canon = NULL, *buf = NULL, *dir = NULL;
	const char *name;
	size_t len;
	int err;

	if (!full)
		goto oom;
	canon = realpath(full, NULL);
	if (!canon && (errno == ENOENT || errno == ENOTDIR)) {
		if (!optional)
			lerror(ps, ln, off,
			       "included file '%.120s' not found (looked for '%.120s'); write "
			       "include? \"%.120s\" if it is optional%s",
			       written, full, written,
			       strstr(written, "${") ? " (a ${...} in an include path is literal: "
						       "py-sandboxes reads includes before it "
						       "substitutes variables)"
						     : "");
		goto cleanup;
	}
	if (!canon) {
		lerror(ps, ln, off, "cannot read included file '%.120s': %s", full,
		       strerror(errno));
		goto cleanup;
	}
	if (visited(ps, canon))
		goto cleanup; /* already loaded: a loop or a repeat, cut silently */
	if (ps->depth >= MAX_INCLUDE_DEPTH) {
		lerror(ps, ln, off, "includes nested more than %d files deep", MAX_INCLUDE_DEPTH);
		goto cleanup;
	}
	err = read_whole(canon, &buf, &len);
	if (err) {
		lerror(ps, ln, off, "cannot read included file '%.120s': %s", canon,
		       read_error(err));
		goto cleanup;
	}
	dir = dir_of(full);
	if (!dir || !mark_visited(ps, canon) || !(name = add_file(ps, canon)))
		goto oom;
	ps->depth++;
	parse_text(ps, name, dir, buf, len);
	ps->depth--;
	goto cleanup;
oom:
	ps->oom = true;
cleanup:
	free(full);
	free(canon);
	free(buf);
	free(dir);
}

static bool is_include(const char *t)
{
	return starts_with(t, "include") && strchr("? \t\"'", t[7]);
}

/*
 * py-sandboxes' _parse_include(): `include` or `include?`, at least one blank, then a
 * double-quoted path, taken as written: includes are expanded before ${VAR} substitution,
 * so a ${...} in the path is literal.
 */
static void on_include(struct parser *ps, struct line *ln)
{
	const char *t = ln->text, *close;
	const bool optional = t[7] == '?';
	size_t p = 7 + optional, blanks = strspn(t + p, " \t"), q;
	char *written;

	p += blanks;
	if (!blanks || t[p] != '"') {
		lerror(ps, ln, p,
		       "expected include \"PATH\" or include? \"PATH\": a blank after the keyword, "
		       "then the path in double quotes (py-sandboxes reads any other form as an "
		       "invalid rule)");
		return;
	}
	q = p + 1;
	close = strrchr(t + q, '"');
	if (!close) {
		lerror(ps, ln, p, "unterminated quote: expected include \"PATH\"");
		return;
	}
	if (close[1 + strspn(close + 1, " \t")]) {
		lerror(ps, ln, (size_t)(close - t) + 1, "unexpected text after the included path");
		return;
	}
	written = strndup(t + q, (size_t)(close - t) - q);
	if (!written)
		ps->oom = true;
	else if (!written[0])
		lerror(ps, ln, q, "include path is empty");
	else
		load_include(ps, ln, q, written, written, optional);
	free(written);
}

/* ---------------- lines */

static void process_line(struct parser *ps, struct line *ln)
{
	const char *t = ln->text;

	if (is_include(t))
		on_include(ps, ln);
	else if (starts_with(t, "--"))
		on_dashdash(ps, ln);
	else if (starts_with(t, "env=") || starts_with(t, "unenv="))
		on_env(ps, ln); /* kept raw: substituted by policy_build_env */
	else if (!on_legacy_key(ps, ln) && substitute_line(ps, ln))
		dispatch(ps, ln);
}

/* Refuses what is not a line of text; true when the line may be parsed. */
static bool check_raw(struct parser *ps, struct line *ln)
{
	const char *nul = memchr(ln->raw, '\0', ln->raw_len);
	size_t bad;

	if (ln->raw_len > POLICY_MAX_LINE) {
		lerror(ps, ln, POLICY_MAX_LINE, "line longer than %d bytes: not a policy line",
		       POLICY_MAX_LINE);
		return false;
	}
	if (nul) {
		lerror(ps, ln, (size_t)(nul - ln->raw),
		       "NUL byte: a policy file is UTF-8 text, "
		       "this looks like a binary file");
		return false;
	}
	bad = utf8_invalid_at(ln->raw, ln->raw_len);
	if (bad < ln->raw_len) {
		lerror(ps, ln, bad, "invalid UTF-8 byte 0x%02x: a policy file is UTF-8 text",
		       (unsigned char)ln->raw[bad]);
		return false;
	}
	if (ln->no == 1 && starts_with(ln->raw, "\xef\xbb\xbf")) {
		lerror(ps, ln, 0, "UTF-8 byte-order mark at the start of the file: remove it");
		return false;
	}
	return true;
}

/* py-sandboxes' _remove_comment(): '#' outside quotes; a backslash escapes a closing quote. */
static size_t comment_at(const char *s, size_t n)
{
	char quote = 0;

	for (size_t i = 0; i < n; i++) {
		if (!quote && (s[i] == '"' || s[i] == '\''))
			quote = s[i];
		else if (quote && s[i] == quote && !(i > 0 && s[i - 1] == '\\'))
			quote = 0;
		else if (!quote && s[i] == '#')
			return i;
	}
	return n;
}

static void parse_line(struct parser *ps, const char *file, const char *dir, unsigned no,
		       const char *raw, size_t n)
{
	struct line ln = { .file = file, .dir = dir, .no = no, .raw = raw, .raw_len = n };
	size_t len;

	if (!check_raw(ps, &ln))
		return;
	ln.lead = lstrip_len(raw, n);
	len = rstrip_len(raw + ln.lead, n - ln.lead);
	len = rstrip_len(raw + ln.lead, comment_at(raw + ln.lead, len));
	/* empty lines, comments and "{" template lines carry no rule */
	if (len == 0 || raw[ln.lead] == '{')
		return;
	ln.text = strndup(raw + ln.lead, len);
	if (!ln.text) {
		ps->oom = true;
		return;
	}
	process_line(ps, &ln);
	free(ln.text);
	free(ln.map);
}

static void parse_text(struct parser *ps, const char *file, const char *dir, const char *buf,
		       size_t len)
{
	size_t pos = 0;
	unsigned no = 0;

	while (pos < len && !ps->full && !ps->oom) {
		size_t end = pos;

		while (end < len && buf[end] != '\n' && buf[end] != '\r')
			end++;
		parse_line(ps, file, dir, ++no, buf + pos, end - pos);
		pos = end;
		if (pos < len)
			pos += buf[pos] == '\r' && pos + 1 < len && buf[pos + 1] == '\n' ? 2 : 1;
	}
}

/* ---------------- whole-policy checks */

static bool grants_dynamic_code(const char *v)
{
	static const char *const GRANTS[] = { "ALLOW:dynamic-code",
					      "ALLOW:eval",
					      "ALLOW:exec",
					      "ALLOW:compile",
					      "ALLOW:builtins.eval",
					      "ALLOW:builtins.exec",
					      "ALLOW:builtins.compile",
					      NULL };

	return in_list(v, GRANTS);
}

/* CHANGELOG: unguarding eval/exec/compile and configuring their guard contradict. */
static void check_eval_vs_api(struct parser *ps)
{
	const struct policy_kv *eval = NULL;

	for (size_t i = 0; i < ps->p->n_python && !eval; i++)
		if (starts_with(ps->p->python[i].key, "eval-"))
			eval = &ps->p->python[i];
	if (!eval)
		return;
	for (size_t i = 0; i < ps->p->n_python; i++) {
		const struct policy_kv *kv = &ps->p->python[i];

		if (strcmp(kv->key, "python-api") == 0 && grants_dynamic_code(kv->value))
			kv_error(ps, kv,
				 "python-api=%s lifts the guard of eval/exec/compile "
				 "while eval-* rules configure it (%s:%u): remove one of them",
				 kv->value, eval->src.file, eval->src.line);
	}
}

/* learn=false locks the file: no rule may come from the command line (wiki/configuration). */
static void check_learn_lock(struct parser *ps)
{
	const struct policy *p = ps->p;

	if (!ps->n_overrides)
		return;
	for (size_t i = p->n_python; i-- > 0;) {
		if (strcmp(p->python[i].key, "learn") != 0)
			continue;
		if (strcasecmp(p->python[i].value, "false") == 0)
			kv_error(ps, &p->python[i],
				 "learn=false locks this policy: the %zu "
				 "command-line rule(s) are refused; edit the file instead",
				 ps->n_overrides);
		return;
	}
}

/*
 * guard_provider.learn_lock(): learn=false forbids learning, so a learn=FILE line asking for
 * it contradicts it (unless py-sandbox=false, which turns learning off anyway).
 */
static void check_learn_contradiction(struct parser *ps)
{
	const struct policy *p = ps->p;
	const struct policy_kv *lock = NULL, *want = NULL;

	for (size_t i = 0; i < p->n_python; i++) {
		const struct policy_kv *kv = &p->python[i];

		if (!strcmp(kv->key, "py-sandbox") && !strcmp(kv->value, "false"))
			return;
		if (!strcmp(kv->key, "learn") && is_learn_lock(kv))
			lock = lock ? lock : kv;
		else if (!strcmp(kv->key, "learn"))
			want = kv;
	}
	if (lock && want)
		kv_error(ps, lock,
			 "learn=false forbids learning, but %s:%u asks for it (learn=%s): remove "
			 "one of them",
			 want->src.file, want->src.line, want->value);
}

/* ---------------- entry points */

static int parser_init(struct parser *ps, struct policy_diag *diag, char *const *envp,
		       const char *cwd, struct policy **out)
{
	char *here = NULL;

	*out = NULL;
	*ps = (struct parser){ .diag = diag, .envp = envp, .first_error = diag->n_errors };
	ps->p = calloc(1, sizeof(*ps->p));
	if (!cwd || cwd[0] != '/')
		here = getcwd(NULL, 0);
	if (!cwd)
		ps->cwd = here ? strdup(here) : NULL;
	else if (cwd[0] != '/')
		ps->cwd = here ? join_path(here, cwd) : NULL;
	else
		ps->cwd = strdup(cwd);
	free(here);
	if (!ps->p || !ps->cwd) {
		free(ps->p);
		free(ps->cwd);
		return -1;
	}
	return 0;
}

static void parse_overrides(struct parser *ps, const struct policy_override *ov, size_t n)
{
	const char *name = n ? add_file(ps, CMDLINE_FILE) : NULL;

	ps->n_overrides = n;
	for (size_t i = 0; i < n && name && !ps->full && !ps->oom; i++)
		parse_line(ps, name, ps->cwd, (unsigned)i + 1, ov[i].line, strlen(ov[i].line));
}

static int parser_finish(struct parser *ps, struct policy **out)
{
	int ret = -1;

	if (!ps->oom) {
		check_eval_vs_api(ps);
		check_learn_lock(ps);
		check_learn_contradiction(ps);
	}
	if (ps->oom) {
		struct line none = { .file = "pysb-bpf", .raw = "" };

		ps->full = false;
		lerror(ps, &none, 0, "out of memory while parsing the policy");
	}
	if (ps->diag->n_errors == ps->first_error && !ps->oom) {
		*out = ps->p;
		ps->p = NULL;
		ret = 0;
	}
	policy_free(ps->p);
	for (size_t i = 0; i < ps->n_visited; i++)
		free(ps->visited[i]);
	free(ps->visited);
	str_index_free(&ps->path_index);
	for (size_t i = 0; i < ps->dirs_size; i++) {
		free(ps->dirs[i].dir);
		free(ps->dirs[i].canon);
		free_names(ps->dirs[i].names, ps->dirs[i].n_names);
	}
	free(ps->dirs);
	free(ps->cwd);
	return ret;
}

/* The root buffer: it counts as visited (an include of itself is a cut loop). */
static void parse_root(struct parser *ps, const char *name, const char *buf, size_t len)
{
	char *abs = abs_path(ps, name), *canon = abs ? realpath(abs, NULL) : NULL;
	char *dir = abs ? dir_of(abs) : NULL;
	const char *stored = add_file(ps, name);

	if (!abs || !dir || !stored || (canon && !mark_visited(ps, canon)))
		ps->oom = true;
	else
		parse_text(ps, stored, dir, buf, len);
	free(abs);
	free(canon);
	free(dir);
}

static void missing_root(struct parser *ps, const char *path, int err)
{
	struct line none = { .file = path, .raw = "" };

	if (err == ENOENT)
		lerror(ps, &none, 0,
		       "policy file not found: write one with expose-ro=PATH / expose-rw=PATH "
		       "lines (docs/policy.md), or let learning write it (pysb-bpf run --learn "
		       "PROGRAM, or python-sb --learn), or name another file with --policy");
	else
		lerror(ps, &none, 0, "cannot read policy file: %s", read_error(err));
}

int policy_parse_file(const char *path, char *const *envp, const char *cwd,
		      const struct policy_override *overrides, size_t n_overrides,
		      struct policy **out, struct policy_diag *diag)
{
	struct parser ps;
	char *abs, *buf = NULL;
	size_t len = 0;
	int err;

	if (parser_init(&ps, diag, envp, cwd, out))
		return -1;
	abs = abs_path(&ps, path);
	err = abs ? read_whole(abs, &buf, &len) : ENOMEM;
	if (err == ENOMEM)
		ps.oom = true;
	else if (err)
		missing_root(&ps, path, err);
	else
		parse_root(&ps, path, buf, len);
	parse_overrides(&ps, overrides, n_overrides);
	free(abs);
	free(buf);
	return parser_finish(&ps, out);
}

int policy_parse_buffer(const char *name, const char *buf, size_t len, char *const *envp,
			const char *cwd, struct policy **out, struct policy_diag *diag)
{
	struct parser ps;

	if (parser_init(&ps, diag, envp, cwd, out))
		return -1;
	parse_root(&ps, name, buf, len);
	return parser_finish(&ps, out);
}

static void kv_free(struct policy_kv *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(a[i].key);
		free(a[i].value);
	}
	free(a);
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_paths; i++) {
		free(p->paths[i].path);
		free(p->paths[i].spelled);
	}
	for (size_t i = 0; i < p->n_ignores; i++)
		free(p->ignores[i].glob);
	for (size_t i = 0; i < p->n_nets; i++)
		net_free(&p->nets[i]);
	for (size_t i = 0; i < p->n_envs; i++) {
		free(p->envs[i].name);
		free(p->envs[i].value);
	}
	for (size_t i = 0; i < p->n_files; i++)
		free(p->files[i]);
	kv_free(p->python, p->n_python);
	kv_free(p->params, p->n_params);
	free(p->paths);
	free(p->ignores);
	free(p->nets);
	free(p->envs);
	free(p->files);
	free(p);
}

const char *policy_get(const struct policy *p, const char *key)
{
	for (size_t i = p->n_python; i-- > 0;)
		if (strcmp(p->python[i].key, key) == 0)
			return p->python[i].value;
	for (size_t i = p->n_params; i-- > 0;)
		if (strcmp(p->params[i].key, key) == 0)
			return p->params[i].value;
	return NULL;
}
