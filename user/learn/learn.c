/* SPDX-License-Identifier: MIT */
/*
 * Learning (see learn.h and docs/policy.md, "Learning"). Generalisation and spelling
 * follow py-sandboxes (FORMAT-NOTES.md section 3): a file is replaced by its directory
 * (except in the directories of never_widened[]: the file itself), write wins over
 * read, a directory under an emitted one with enough access is dropped (the home
 * directory never covers), nothing under /proc/<pid>, known prefixes written as
 * variables, `~` or `.`.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi_names.h"
#include "json_bytes.h"
#include "learn.h"
#include "log.h"
#include "pysb_abi.h"

/* ---------------- small helpers */

static int push_str(char ***v, size_t *n, size_t *cap, const char *s)
{
	char *d;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return 0;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		char **nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return -1;
		*v = nv;
		*cap = c;
	}
	d = strdup(s);
	if (!d)
		return -1;
	(*v)[(*n)++] = d;
	return 0;
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is `a` the path `b` or one of its ancestors? */
static bool is_ancestor_or_same(const char *a, const char *b)
{
	size_t n = strlen(a);

	if (!strcmp(a, "/"))
		return b[0] == '/';
	return !strncmp(a, b, n) && (b[n] == '\0' || b[n] == '/');
}

static const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name, n) && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

static char *parent_of(const char *path)
{
	char *d = strdup(path), *slash;

	if (!d)
		return NULL;
	slash = strrchr(d, '/');
	if (slash == d)
		d[1] = '\0';
	else if (slash)
		*slash = '\0';
	return d;
}

struct buf {
	char *s;
	size_t n, cap;
	bool oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t c = (b->n + n + 1) * 2;
		char *ns = realloc(b->s, c);

		if (!ns) {
			b->oom = true;
			return;
		}
		b->s = ns;
		b->cap = c;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static void puts_nl(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
	put(b, "\n", 1);
}

/* ---------------- records -> needs */

static const char *learn_path_key(const void *paths, size_t i)
{
	return ((const struct learn_path *)paths)[i].path;
}

/* One entry per path (a flood of distinct paths is looked up, not scanned): the accesses
 * add up, and a path seen as the parent of a created entry is a directory. */
static int add_path(struct learn_set *s, const char *path, uint32_t access, bool dir)
{
	size_t *slot;

	if (str_index_reserve(&s->path_index, s->n_paths, learn_path_key, s->paths))
		return -1;
	slot = str_index_slot(&s->path_index, path, learn_path_key, s->paths);
	if (*slot) {
		s->paths[*slot - 1].access |= access;
		s->paths[*slot - 1].dir |= dir;
		return 0;
	}
	if (s->n_paths == s->cap_paths) {
		size_t c = s->cap_paths ? s->cap_paths * 2 : 64;
		struct learn_path *v = realloc(s->paths, c * sizeof(*v));

		if (!v)
			return -1;
		s->paths = v;
		s->cap_paths = c;
	}
	s->paths[s->n_paths].path = strdup(path);
	if (!s->paths[s->n_paths].path)
		return -1;
	s->paths[s->n_paths].access = access;
	s->paths[s->n_paths].dir = dir;
	*slot = ++s->n_paths;
	return 0;
}

static uint32_t access_bits(const json_t *a)
{
	uint32_t bits = 0;
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
	{
		const char *n = json_string_value(v);

		if (!n)
			continue;
		bits |= !strcmp(n, "read")    ? PYSB_ACC_READ
			: !strcmp(n, "write") ? PYSB_ACC_WRITE
			: !strcmp(n, "exec")  ? PYSB_ACC_EXEC
					      : 0;
	}
	return bits;
}

/* A port the program found in a *PORT* variable is written ${VAR} (the first by name). */
static const char *port_var(char *const *envp, unsigned port)
{
	const char *best = NULL;
	size_t best_len = 0;
	char want[16];

	if (!port)
		return NULL;
	snprintf(want, sizeof(want), "%u", port);
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		size_t n = eq ? (size_t)(eq - envp[i]) : 0;
		char name[128];

		if (!eq || n >= sizeof(name) || strcmp(eq + 1, want))
			continue;
		memcpy(name, envp[i], n);
		name[n] = '\0';
		if (!strstr(name, "PORT"))
			continue;
		if (!best || strcmp(name, best) < 0 || (n < best_len && !strncmp(name, best, n))) {
			best = envp[i];
			best_len = n;
		}
	}
	return best ? best : NULL;
}

static int add_net(struct learn_set *s, const json_t *rec, const char *op)
{
	const char *proto = json_string_value(json_object_get(rec, "protocol"));
	const char *addr = json_string_value(json_object_get(rec, "address"));
	json_int_t port = json_integer_value(json_object_get(rec, "port"));
	bool in = !strcmp(op, "bind") || !strcmp(op, "listen");
	const char *var;
	char line[256], ports[160];

	if (!addr || !proto)
		return 0;
	if (!strncmp(addr, "::ffff:", 7) && strchr(addr + 7, '.'))
		addr += 7; /* IPv4-mapped: judged by the IPv4 rules */
	var = port_var(s->envp, (unsigned)port);
	if (var)
		snprintf(ports, sizeof(ports), "${%.*s}", (int)(strchr(var, '=') - var), var);
	else
		snprintf(ports, sizeof(ports), "%lld", (long long)port);
	snprintf(line, sizeof(line), "net=ALLOW|%s|%s|%s|%s", !strcmp(proto, "udp") ? "UDP" : "TCP",
		 addr, ports, in ? "IN" : "OUT");
	return push_str(&s->socket, &s->n_socket, &s->cap_socket, line);
}

/* socket(): what bpf.socket-family value allows the refused family. */
static int add_family(struct learn_set *s, const json_t *rec)
{
	const json_t *fam = json_object_get(rec, "family");
	const char *type = json_string_value(json_object_get(rec, "type"));
	json_int_t proto = json_integer_value(json_object_get(rec, "protocol"));
	const char *f = json_string_value(fam);
	char line[96];

	if (f && (!strcmp(f, "inet") || !strcmp(f, "inet6"))) {
		if (proto == 132)
			f = "sctp";
		else if (type && !strcmp(type, "raw"))
			f = "raw";
		else if (proto == 1 || proto == 58)
			f = "icmp";
	}
	if (f)
		snprintf(line, sizeof(line), "bpf.socket-family=%s", f);
	else
		snprintf(line, sizeof(line), "bpf.socket-family=%lld",
			 (long long)json_integer_value(fam));
	return push_str(&s->socket, &s->n_socket, &s->cap_socket, line);
}

int learn_add_record(struct learn_set *s, const json_t *rec)
{
	const char *r = json_string_value(json_object_get(rec, "record"));
	const char *kind = json_string_value(json_object_get(rec, "kind"));
	const char *op = json_string_value(json_object_get(rec, "operation"));
	uint32_t acc = access_bits(json_object_get(rec, "access"));
	const char *reason;
	char *path;
	int ret = 0;

	json_int_t count = json_integer_value(json_object_get(rec, "count"));

	if (!r || strcmp(r, "event") || !kind || !op)
		return 0;
	s->records += count > 1 ? (size_t)count : 1; /* an aggregated record: count denials */
	if (!strcmp(kind, "net")) {
		if (!strcmp(op, "socket"))
			return add_family(s, rec);
		if (!strcmp(op, "netlink-send"))
			return push_str(&s->socket, &s->n_socket, &s->cap_socket,
					"bpf.socket-family=netlink");
		return add_net(s, rec, op);
	}
	if (!strcmp(kind, "capability")) {
		/* a capability the policy does not grant (audit: the program kept its own) */
		const char *cap = json_string_value(json_object_get(rec, "capability"));
		char line[96];

		if (!cap) {
			s->unlearned++;
			return 0;
		}
		snprintf(line, sizeof(line), "bpf.capabilities=%s", cap);
		return push_str(&s->socket, &s->n_socket, &s->cap_socket, line);
	}
	if (!strcmp(kind, "unix") && json_is_true(json_object_get(rec, "abstract")))
		return push_str(&s->socket, &s->n_socket, &s->cap_socket,
				"bpf.unix-abstract=allow");
	path = json_object_get_bytes(rec, "path");
	reason = json_string_value(json_object_get(rec, "reason"));
	if (!path || path[0] != '/' || json_is_true(json_object_get(rec, "path_truncated")) ||
	    !strcmp(kind, "self") || (reason && strstr(reason, "anonymous"))) {
		s->unlearned++;
		free(path);
		return 0;
	}
	{
		const char *base = strrchr(path, '/');

		if (base && !strcmp(base, "/.env") && !s->dotenv++)
			snprintf(s->dotenv_example, sizeof(s->dotenv_example), "%s", path);
	}
	if (!strcmp(kind, "exec")) {
		s->exec = true;
		ret = add_path(s, path, PYSB_ACC_RO, false);
	} else if (!strcmp(kind, "unix")) {
		ret = add_path(s, path, PYSB_ACC_RW, false); /* connecting needs write on it */
	} else if (op_on_parent(op_from_name(op))) {
		const char *h = env_get(s->envp, "HOME");
		char *dir = parent_of(path), home[PATH_MAX] = "";

		if (h && !realpath(h, home))
			snprintf(home, sizeof(home), "%s", h);
		/* in /etc, ~, ...: the entry itself, if it is still there (learn_generate) */
		if (dir && learn_never_widened(dir, home))
			ret = add_path(s, path, PYSB_ACC_RW, false);
		else
			ret = dir ? add_path(s, dir, PYSB_ACC_RW, true) : -1;
		free(dir);
	} else {
		ret = add_path(s, path, acc & PYSB_ACC_WRITE ? PYSB_ACC_RW : PYSB_ACC_RO, false);
	}
	free(path);
	return ret;
}

void learn_set_free(struct learn_set *s)
{
	for (size_t i = 0; i < s->n_paths; i++)
		free(s->paths[i].path);
	free(s->paths);
	str_index_free(&s->path_index);
	free_strs(s->socket, s->n_socket);
	s->paths = NULL;
	s->socket = NULL;
	s->n_paths = s->n_socket = s->cap_paths = s->cap_socket = 0;
}

/* ---------------- needs -> lines */

struct prefix {
	char value[PATH_MAX]; /* canonical */
	char form[64];
};

/* py-sandboxes' tool directories (written ${VAR}), then ., ~ and the temp directory. */
static size_t known_prefixes(const struct learn_env *env, struct prefix *out, size_t max)
{
	static const char *const tools[] = {
		"PYENV_ROOT",	     "VIRTUAL_ENV",	 "CONDA_HOME",	    "HF_HOME",
		"HF_DATASETS_CACHE", "HF_MODULES_CACHE", "HF_HUB_CACHE",    "TRANSFORMERS_CACHE",
		"TORCH_HOME",	     "KERAS_HOME",	 "TFHUB_CACHE_DIR", "MXNET_HOME",
		"NLTK_DATA",	     "SPACY_DATA",
	};
	struct {
		const char *value, *form;
	} v[sizeof(tools) / sizeof(tools[0]) + 5];
	char forms[sizeof(tools) / sizeof(tools[0])][40];
	const char *tmp = env_get(env->envp, "TMPDIR");
	size_t n = 0, k = 0;

	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		snprintf(forms[i], sizeof(forms[i]), "${%s}", tools[i]);
		v[n].value = env_get(env->envp, tools[i]);
		v[n++].form = forms[i];
	}
	v[n].value = env->cwd;
	v[n++].form = ".";
	v[n].value = env_get(env->envp, "HOME");
	v[n++].form = "~";
	v[n].value = tmp && *tmp ? tmp : "/tmp";
	v[n++].form = "${TMPDIR:-/tmp}";
	v[n].value = env_get(env->envp, "TMP");
	v[n++].form = "${TMP:-/tmp}";
	v[n].value = env_get(env->envp, "TEMP");
	v[n++].form = "${TEMP:-/tmp}";
	for (size_t i = 0; i < n && k < max; i++) {
		if (!v[i].value || !*v[i].value)
			continue;
		if (!realpath(v[i].value, out[k].value))
			snprintf(out[k].value, sizeof(out[k].value), "%s", v[i].value);
		if (out[k].value[0] != '/' || !strcmp(out[k].value, "/"))
			continue;
		snprintf(out[k].form, sizeof(out[k].form), "%s", v[i].form);
		k++;
	}
	return k;
}

char *learn_spell_path(const char *path, const struct learn_env *env)
{
	struct prefix p[24];
	size_t n = known_prefixes(env, p, 24), best = n, best_len = 0;
	char *out;

	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(p[i].value);

		if (l > best_len && is_ancestor_or_same(p[i].value, path)) {
			best = i;
			best_len = l;
		}
	}
	if (best == n)
		return strdup(path);
	if (!strcmp(p[best].form, ".") && path[best_len] == '\0')
		return strdup(".");
	if (asprintf(&out, "%s%s", p[best].form, path + best_len) < 0)
		return NULL;
	return out;
}

struct dir_need {
	char *dir;
	uint32_t access;
};

static int cmp_need(const void *a, const void *b)
{
	return strcmp(((const struct dir_need *)a)->dir, ((const struct dir_need *)b)->dir);
}

/*
 * /proc/<pid>/..., /proc/self, /proc/thread-self: the kernel allows a sandbox its own
 * tasks' entries (docs/design.md); another task's are named by a pid no policy can know.
 * Every other /proc entry (/proc/meminfo, /proc/sys/...) is judged like a file, learned as
 * itself.
 */
static bool proc_of_a_task(const char *p)
{
	const char *q = p + 6;
	size_t n;

	if (strncmp(p, "/proc/", 6))
		return false;
	if (!strncmp(q, "self", 4) && (q[4] == '\0' || q[4] == '/'))
		return true;
	if (!strncmp(q, "thread-self", 11) && (q[11] == '\0' || q[11] == '/'))
		return true;
	n = strspn(q, "0123456789");
	return n && (q[n] == '\0' || q[n] == '/');
}

/*
 * The directories a file read or written there is never widened to: the rule names the
 * file itself. Granting the directory would grant its neighbours, and here the neighbours
 * are other programs' secrets and state: /etc/hostname sits next to /etc/shadow, ~/.bashrc
 * next to ~/.ssh, /var/lib holds every service's database, /var/log what they log, /run
 * their sockets and pid files, /proc, /sys and /dev the kernel's and the devices'
 * interfaces. A project's own trees (., ~/.config/app, a virtual environment) are still
 * widened, as py-sandboxes does. The only list of them: docs/policy.md shows it.
 */
static const char *const never_widened[] = {
	"/", "/etc", "/root", "/home", "/var/lib", "/var/log", "/run", "/proc", "/sys", "/dev",
};

bool learn_never_widened(const char *dir, const char *home)
{
	const char *slash = strrchr(dir, '/');

	for (size_t i = 0; i < sizeof(never_widened) / sizeof(never_widened[0]); i++)
		if (!strcmp(dir, never_widened[i]))
			return true;
	/* each /proc file is its own kernel interface, at any depth (/proc/sys/...) */
	if (is_ancestor_or_same("/proc", dir))
		return true;
	/* /home/<user> (any user's home directory), and $HOME wherever it is */
	if (slash && slash > dir && (size_t)(slash - dir) == 5 && !strncmp(dir, "/home", 5))
		return true;
	return home && *home && !strcmp(dir, home);
}

/* The directory (or file) a rule must expose for p (malloc'd), or NULL: nothing to write.
 * home: the canonical home directory; gone: counts files in those directories no longer
 * there. */
static char *generalise(const struct learn_path *p, const char *home, size_t *gone)
{
	struct stat st;
	char *dir;

	if (proc_of_a_task(p->path))
		return NULL;
	if (p->dir || (!stat(p->path, &st) && S_ISDIR(st.st_mode)))
		dir = strdup(p->path);
	else
		dir = parent_of(p->path);
	if (!dir)
		return NULL;
	if (!p->dir && strcmp(dir, p->path) && learn_never_widened(dir, home)) {
		free(dir); /* never /etc for /etc/hostname: the file itself */
		if (stat(p->path, &st)) {
			(*gone)++; /* created and removed there: only the directory could allow it */
			return NULL;
		}
		dir = strdup(p->path);
	}
	if (!dir || stat(dir, &st)) {
		free(dir); /* gone since (a temp directory): nothing a policy could name */
		return NULL;
	}
	return dir;
}

static bool covers(uint32_t have, uint32_t need)
{
	need &= PYSB_ACC_READ | PYSB_ACC_WRITE;
	return (have & need) == need;
}

static int gen_files(const struct learn_set *s, const struct learn_env *env, struct learn_rules *r)
{
	struct dir_need *v = calloc(s->n_paths + 1, sizeof(*v));
	const char *home = env_get(env->envp, "HOME");
	char home_real[PATH_MAX] = "";
	size_t n = 0, cap = 0;
	int ret = -1;

	if (!v)
		return -1;
	if (home && !realpath(home, home_real))
		snprintf(home_real, sizeof(home_real), "%s", home);
	for (size_t i = 0; i < s->n_paths; i++) {
		char *d = generalise(&s->paths[i], home_real, &r->not_widened);
		size_t j;

		if (!d)
			continue;
		for (j = 0; j < n && strcmp(v[j].dir, d); j++)
			;
		if (j < n) {
			v[j].access |= s->paths[i].access; /* write wins over read */
			free(d);
		} else {
			v[n].dir = d;
			v[n++].access = s->paths[i].access;
		}
	}
	qsort(v, n, sizeof(*v), cmp_need);
	for (size_t i = 0; i < n; i++) {
		bool skip = false;
		char *spelt, *line;

		for (size_t k = 0; k < env->n_covered && !skip; k++)
			skip = is_ancestor_or_same(env->covered[k].path, v[i].dir) &&
			       covers(env->covered[k].access, v[i].access);
		for (size_t k = 0; k < i && !skip; k++)
			skip = v[k].access && strcmp(v[k].dir, home_real) &&
			       is_ancestor_or_same(v[k].dir, v[i].dir) &&
			       covers(v[k].access, v[i].access);
		if (skip) {
			v[i].access = 0; /* not emitted: covers nothing below */
			continue;
		}
		spelt = learn_spell_path(v[i].dir, env);
		if (!spelt || asprintf(&line, "expose-%s=%s",
				       v[i].access & PYSB_ACC_WRITE ? "rw" : "ro", spelt) < 0) {
			free(spelt);
			goto out;
		}
		free(spelt);
		if (push_str(&r->files, &r->n_files, &cap, line)) {
			free(line);
			goto out;
		}
		free(line);
	}
	if (r->n_files)
		qsort(r->files, r->n_files, sizeof(char *), cmp_str);
	ret = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(v[i].dir);
	free(v);
	return ret;
}

bool learn_env_secret(const char *name)
{
	static const char *const words[] = { "TOKEN",	   "SECRET",   "PASSWORD", "PASSWD",
					     "PASSPHRASE", "CREDENT",  "PRIVATE",  "APIKEY",
					     "API_KEY",	   "_KEY",     "AUTH",	   "COOKIE",
					     "SESSION",	   "SIGNATURE" };
	char up[256];
	size_t i;

	for (i = 0; name[i] && i < sizeof(up) - 1; i++)
		up[i] = (char)toupper((unsigned char)name[i]);
	up[i] = '\0';
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(up, words[i]))
			return true;
	return false;
}

bool learn_env_passable(const char *name)
{
	static const char *const skip[] = { "_",	"SHLVL",	"PWD",
					    "OLDPWD",	"SUDO_COMMAND", "SUDO_USER",
					    "SUDO_UID", "SUDO_GID" };

	for (size_t k = 0; k < sizeof(skip) / sizeof(skip[0]); k++)
		if (!strcmp(name, skip[k]))
			return false;
	return *name && strncmp(name, "PYSB_", 5) &&
	       strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") ==
		       strlen(name);
}

/*
 * The kernel cannot see which variables a program reads, and the program starts with an
 * empty environment: every variable of the learning run is passed on, as
 * env=NAME=${NAME} (the value is read again at each launch, never written into the
 * policy). Names that look like secrets are written commented out, for the user to
 * pass on purpose. The shell's own bookkeeping and pysb-bpf's are left out.
 */
static int gen_envs(const struct learn_env *env, struct learn_rules *out)
{
	size_t cap = 0;

	for (size_t i = 0; env->envp && env->envp[i]; i++) {
		const char *e = env->envp[i], *eq = strchr(e, '=');
		char name[256], line[600];

		if (!eq || eq == e || (size_t)(eq - e) >= sizeof(name) || !eq[1])
			continue;
		memcpy(name, e, (size_t)(eq - e));
		name[eq - e] = '\0';
		if (!learn_env_passable(name))
			continue;
		if (learn_env_secret(name))
			snprintf(
				line, sizeof(line),
				"# env=%s=${%s}  # looks like a secret: not passed; uncomment to pass it",
				name, name);
		else
			snprintf(line, sizeof(line), "env=%s=${%s}", name, name);
		if (push_str(&out->envs, &out->n_envs, &cap, line))
			return -1;
	}
	if (out->n_envs)
		qsort(out->envs, out->n_envs, sizeof(char *), cmp_str);
	return 0;
}

/* Port lists in order: numbers ascending, then ${VAR} spellings. */
static int cmp_port(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;

	if (isdigit((unsigned char)x[0]) && isdigit((unsigned char)y[0]))
		return atol(x) < atol(y) ? -1 : atol(x) > atol(y);
	return isdigit((unsigned char)x[0]) ? -1 : isdigit((unsigned char)y[0]) ? 1 : strcmp(x, y);
}

/*
 * net= lines for one protocol, address and direction become one line with the ports
 * listed (net=ALLOW|TCP|127.0.0.1|80,443|OUT), as py-sandboxes groups them. *line
 * (malloc'd) is the grouped line for socket[i], or NULL when an earlier one took it.
 */
static int group_net(char **socket, size_t n, char **line, size_t i)
{
	char *ports[64];
	size_t np = 0, key_len;
	const char *bar, *dir;
	struct buf b = { 0 };

	*line = NULL;
	if (strncmp(socket[i], "net=", 4) || !(dir = strrchr(socket[i], '|')) || dir == socket[i])
		return 0;
	for (bar = dir - 1; bar > socket[i] && *bar != '|'; bar--)
		;
	key_len = (size_t)(bar - socket[i]);
	for (size_t k = 0; k < n; k++) {
		const char *d = strrchr(socket[k], '|'), *p;

		if (strncmp(socket[k], socket[i], key_len + 1) || !d || strcmp(d, dir))
			continue;
		if (k < i)
			return 0; /* grouped on the first line of the group */
		p = socket[k] + key_len + 1;
		if (np < sizeof(ports) / sizeof(ports[0]) &&
		    !(ports[np++] = strndup(p, (size_t)(d - p))))
			goto oom;
	}
	qsort(ports, np, sizeof(char *), cmp_port);
	put(&b, socket[i], key_len + 1);
	for (size_t k = 0; k < np; k++) {
		if (k && !strcmp(ports[k], ports[k - 1]))
			continue;
		if (k)
			put(&b, ",", 1);
		put(&b, ports[k], strlen(ports[k]));
	}
	put(&b, dir, strlen(dir));
	if (b.oom)
		goto oom;
	for (size_t k = 0; k < np; k++)
		free(ports[k]);
	*line = b.s;
	return 0;
oom:
	for (size_t k = 0; k < np; k++)
		free(ports[k]);
	free(b.s);
	return -1;
}

int learn_generate(const struct learn_set *s, const struct learn_env *env, struct learn_rules *out)
{
	size_t cap = 0;

	memset(out, 0, sizeof(*out));
	if (gen_files(s, env, out))
		goto fail;
	for (size_t i = 0; i < s->n_socket; i++) {
		char *grouped;

		if (group_net(s->socket, s->n_socket, &grouped, i))
			goto fail;
		if (!grouped && !strncmp(s->socket[i], "net=", 4))
			continue; /* part of an earlier line's group */
		if (push_str(&out->socket, &out->n_socket, &cap,
			     grouped ? grouped : s->socket[i])) {
			free(grouped);
			goto fail;
		}
		free(grouped);
	}
	if (out->n_socket)
		qsort(out->socket, out->n_socket, sizeof(char *), cmp_str);
	cap = 0;
	/* py-sandboxes' comment line before each category it allows */
	if (s->exec &&
	    (push_str(&out->api, &out->n_api, &cap,
		      "# \u26a0 process-exec: runs code outside the patched interpreter") ||
	     push_str(&out->api, &out->n_api, &cap, "python-api=ALLOW:process-exec")))
		goto fail;
	if (env->envs && gen_envs(env, out))
		goto fail;
	return 0;
fail:
	learn_rules_free(out);
	return -1;
}

void learn_rules_free(struct learn_rules *r)
{
	free_strs(r->files, r->n_files);
	free_strs(r->socket, r->n_socket);
	free_strs(r->api, r->n_api);
	free_strs(r->envs, r->n_envs);
	memset(r, 0, sizeof(*r));
}

/* ---------------- merging into the file */

/* s without surrounding white space, into out. */
static void strip(const char *s, size_t n, char *out, size_t len)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

struct family {
	const char *marker; /* closing marker: "# </learning_guard_files>" */
	char **lines;	    /* the new ones, present lines dropped */
	size_t n;
	bool placed;
};

static size_t line_len(const char *p)
{
	const char *nl = strchr(p, '\n');

	return nl ? (size_t)(nl - p) : strlen(p);
}

static bool text_has_line(const char *text, const char *line)
{
	char s[4096];

	for (const char *p = text; *p;) {
		size_t n = line_len(p);

		strip(p, n, s, sizeof(s));
		if (!strcmp(s, line))
			return true;
		p += n + (p[n] == '\n');
	}
	return false;
}

enum { FAM_FILES, FAM_SOCKET, FAM_API, FAM_ENVS, NFAM };

/* A learned env line for NAME is not needed when the policy already decides about NAME:
 * env=NAME=..., env=*=..., unenv=NAME, or the user's own commented-out env=NAME=. */
static bool env_covered(const char *text, const char *line)
{
	const char *p = strstr(line, "env="), *eq;
	char name[300], want[320];
	size_t n;

	if (!p || !(eq = strchr(p + 4, '=')) || (n = (size_t)(eq - p - 4)) >= sizeof(name))
		return false;
	memcpy(name, p + 4, n);
	name[n] = '\0';
	for (const char *q = text; *q;) {
		size_t l = line_len(q);
		char s[4096];
		const char *t;

		strip(q, l, s, sizeof(s));
		t = s;
		if (t[0] == '#')
			t += 1 + strspn(t + 1, " \t");
		snprintf(want, sizeof(want), "env=%s=", name);
		if (!strncmp(t, want, strlen(want)) || !strncmp(t, "env=*=", 6))
			return true;
		snprintf(want, sizeof(want), "unenv=%s", name);
		if (!strcmp(t, want))
			return true;
		q += l + (q[l] == '\n');
	}
	return false;
}

/* Is the line at p (n bytes) a closing marker, as py-sandboxes finds them: at the very
 * start of the line (^# </name>), no '>' after it? */
static bool at_marker(const char *p, size_t n, const char *marker)
{
	size_t m = strlen(marker);

	return n >= m && !strncmp(p, marker, m) && !memchr(p + m, '>', n - m);
}

static void header(struct buf *b, const char *stamp)
{
	put(b, "# Add rules (", 13);
	put(b, stamp, strlen(stamp));
	put(b, ")\n", 2);
}

/* The value of a key=value line without its comment (py-sandboxes: '#' starts one) and
 * the blanks before it, into out; NULL when line is not KEY=... */
static const char *rule_value(const char *line, const char *key, char *out, size_t len)
{
	size_t k = strlen(key), n;

	if (strncmp(line, key, k) || line[k] != '=')
		return NULL;
	line += k + 1;
	n = strcspn(line, "#");
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	snprintf(out, len, "%.*s", (int)n, line);
	return out;
}

/*
 * The canonical path a rule value names (malloc'd), as the parser reads it: a leading ~,
 * ${VAR} and ${VAR:-default} (the default when VAR is not set) from env, relative to the
 * working directory; NULL when it names nothing that exists.
 */
static char *value_path(const char *v, const struct learn_env *env)
{
	struct buf b = { 0 };
	char *real = NULL;

	if (v[0] == '~' && (v[1] == '/' || !v[1])) {
		const char *home = env_get(env->envp, "HOME");

		if (!home)
			return NULL;
		put(&b, home, strlen(home));
		v++;
	} else if (v[0] != '/' && v[0] != '$' && env->cwd) {
		put(&b, env->cwd, strlen(env->cwd));
		put(&b, "/", 1);
	}
	while (*v) {
		const char *end = v[0] == '$' && v[1] == '{' ? strchr(v, '}') : NULL;
		char name[256];
		const char *dflt, *val;

		if (!end) {
			put(&b, v, 1);
			v++;
			continue;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(end - v - 2), v + 2);
		dflt = strstr(name, ":-");
		if (dflt)
			name[dflt - name] = '\0', dflt += 2;
		val = env_get(env->envp, name);
		if (!val)
			val = dflt ? dflt : "";
		put(&b, val, strlen(val));
		v = end + 1;
	}
	put(&b, "", 0);
	if (!b.oom && b.s && b.s[0] == '/')
		real = realpath(b.s, NULL);
	free(b.s);
	return real;
}

/* Are two policy files the same file? */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!a || !b || stat(a, &sa) || stat(b, &sb))
		return a && b && !strcmp(a, b);
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int learn_merge(const char *text, const struct learn_rules *r, const char *stamp, char **out,
		size_t *added)
{
	return learn_merge_in(text, r, stamp, NULL, NULL, out, added);
}

int learn_merge_in(const char *text, const struct learn_rules *r, const char *stamp,
		   const struct learn_env *env, const char *target, char **out, size_t *added)
{
	struct family fam[NFAM] = {
		{ "# </learning_guard_files>", NULL, 0, false },
		{ "# </learning_guard_socket>", NULL, 0, false },
		{ "# </learning_guard_api>", NULL, 0, false },
		{ "# </learning_guard_envs>", NULL, 0, false },
	};
	char **src[NFAM] = { r->files, r->socket, r->api, r->envs };
	size_t nsrc[NFAM] = { r->n_files, r->n_socket, r->n_api, r->n_envs };
	struct buf b = { 0 };
	char s[4096], note[4200], val[4096];
	char **rw_path = calloc(r->n_files + 1, sizeof(char *)); /* of fam[0].lines */
	char **owned = calloc(r->n_files + 1, sizeof(char *));
	size_t n_owned = 0;
	bool pending = false;
	int ret = -1;

	*added = 0;
	*out = NULL;
	if (!rw_path || !owned)
		goto out;
	for (int f = 0; f < NFAM; f++) {
		fam[f].lines = calloc(nsrc[f] + 1, sizeof(char *));
		if (!fam[f].lines)
			goto out;
		for (size_t i = 0; i < nsrc[f]; i++) {
			const char *line = src[f][i];

			if (f == FAM_FILES && env &&
			    rule_value(line, "expose-rw", val, sizeof(val))) {
				char *c = value_path(val, env), *note_line;
				const struct learn_covered *ro = NULL;

				for (size_t k = 0; c && k < env->n_covered && !ro; k++)
					if (env->covered[k].file &&
					    !strcmp(env->covered[k].path, c) &&
					    !(env->covered[k].access & PYSB_ACC_WRITE) &&
					    !same_file(env->covered[k].file, target))
						ro = &env->covered[k];
				if (ro) {
					/* read-only in another file (an include): that line is not
					 * ours to change, and two rules on one path do not load */
					if (asprintf(
						    &note_line,
						    "# %s  # learned, not active: %s:%u "
						    "exposes it read-only; make that line expose-rw",
						    line, ro->file, ro->line) < 0) {
						free(c);
						goto out;
					}
					owned[n_owned++] = note_line;
					pr_warn("learning: %s is needed, but %s:%u exposes the same path "
						"read-only: the rule is written commented out; change that "
						"line to expose-rw",
						line, ro->file, ro->line);
					free(c);
					c = NULL;
					line = note_line;
				}
				rw_path[fam[f].n] = c;
			}
			if (text_has_line(text, line) ||
			    (f == FAM_ENVS && env_covered(text, line))) {
				if (f == FAM_FILES) {
					free(rw_path[fam[f].n]);
					rw_path[fam[f].n] = NULL;
				}
				continue;
			}
			fam[f].lines[fam[f].n++] = (char *)line;
		}
		if (f == FAM_API) {
			/* a category's comment line goes with its rule, and is not a rule */
			size_t k = 0;

			for (size_t i = 0; i < fam[f].n; i++) {
				bool comment = fam[f].lines[i][0] == '#';

				if (comment && (i + 1 == fam[f].n || fam[f].lines[i + 1][0] == '#'))
					continue;
				*added += !comment;
				fam[f].lines[k++] = fam[f].lines[i];
			}
			fam[f].n = k;
		} else {
			*added += fam[f].n;
		}
		pending = pending || fam[f].n;
	}
	for (const char *p = text; *p;) {
		size_t n = line_len(p);
		bool done = false;

		strip(p, n, s, sizeof(s));
		for (int f = 0; f < NFAM; f++) {
			if (!fam[f].n || fam[f].placed || !at_marker(p, n, fam[f].marker))
				continue;
			header(&b, stamp);
			for (size_t i = 0; i < fam[f].n; i++)
				puts_nl(&b, fam[f].lines[i]);
			put(&b, "\n", 1);
			fam[f].placed = true;
		}
		/* expose-ro=X superseded by a learned expose-rw=X, however X is written (or
		 * commented): the two would conflict */
		if (rule_value(s, "expose-ro", val, sizeof(val))) {
			char rw[4096 + 16], *c = NULL;

			snprintf(rw, sizeof(rw), "expose-rw=%s", val);
			for (size_t i = 0; i < fam[0].n && !done; i++) {
				if (strcmp(fam[0].lines[i], rw)) {
					if (!rw_path[i])
						continue;
					if (!c && !(c = value_path(val, env)))
						break;
					if (strcmp(c, rw_path[i]))
						continue;
				}
				snprintf(note, sizeof(note),
					 "# %s  # superseded by learning (%s): write needed", s,
					 stamp);
				puts_nl(&b, note);
				done = true;
			}
			free(c);
		}
		if (!done) {
			put(&b, p, n);
			if (p[n] == '\n')
				put(&b, "\n", 1);
		}
		p += n + (p[n] == '\n');
	}
	if (pending && ((fam[0].n && !fam[0].placed) || (fam[1].n && !fam[1].placed) ||
			(fam[2].n && !fam[2].placed) || (fam[3].n && !fam[3].placed))) {
		/* as py-sandboxes joins its lines: a line break after the text (a blank line
		 * when the text ended with one), the header, the families apart by a blank
		 * line, the file ending with the last rule's line */
		bool first = true;

		put(&b, "\n", 1);
		header(&b, stamp);
		for (int f = 0; f < NFAM; f++) {
			if (!fam[f].n || fam[f].placed)
				continue;
			if (!first)
				put(&b, "\n", 1);
			for (size_t i = 0; i < fam[f].n; i++)
				puts_nl(&b, fam[f].lines[i]);
			first = false;
		}
	}
	put(&b, "", 0);
	if (b.oom || !b.s) {
		free(b.s);
		goto out;
	}
	*out = b.s;
	ret = 0;
out:
	for (int f = 0; f < NFAM; f++)
		free(fam[f].lines);
	for (size_t i = 0; rw_path && i < r->n_files; i++)
		free(rw_path[i]);
	for (size_t i = 0; i < n_owned; i++)
		free(owned[i]);
	free(rw_path);
	free(owned);
	return ret;
}

void learn_stamp(time_t t, char *buf, size_t len)
{
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y/%m/%d at %H:%M", &tm);
}

char *learn_template(const char *stamp)
{
	char *s;

	if (asprintf(&s,
		     "# py-sandboxes policy, created by pysb-bpf --learn (%s).\n"
		     "# Learning writes what a run needed between the markers below. Review it:\n"
		     "# reading one file grants its whole directory (in /etc, ~ and the other\n"
		     "# system directories docs/policy.md lists: the file alone). Format and meaning:\n"
		     "# https://github.com/pprados/pysandboxes (wiki/configuration.md).\n"
		     "\n"
		     "# The program starts with an empty environment; the kernel cannot see which\n"
		     "# variables it reads, so the usual ones are passed (an unset one is not).\n"
		     "env=PATH=${PATH}\n"
		     "env=HOME=${HOME}\n"
		     "env=LANG=${LANG}\n"
		     "env=VIRTUAL_ENV=${VIRTUAL_ENV}\n"
		     "# <learning_guard_envs>\n"
		     "# </learning_guard_envs>\n"
		     "\n"
		     "# <learning_guard_files>\n"
		     "# </learning_guard_files>\n"
		     "\n"
		     "# <learning_guard_socket>\n"
		     "# </learning_guard_socket>\n"
		     "\n"
		     "# <learning_guard_api>\n"
		     "# </learning_guard_api>\n",
		     stamp) < 0)
		return NULL;
	return s;
}

/* ---------------- writing the file */

int learn_backup_name(const char *path, char *out, size_t len)
{
	struct stat st;

	for (int i = 0; i < 10000; i++) {
		if (i == 0)
			snprintf(out, len, "%s.old", path);
		else
			snprintf(out, len, "%s.old_%d", path, i);
		if (lstat(out, &st) && errno == ENOENT)
			return 0;
	}
	errno = EEXIST;
	return -1;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

static char *read_file(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *s = NULL;
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return NULL;
	if (fstat(fd, st) || !(s = malloc((size_t)st->st_size + 1)))
		goto fail;
	while (n < (size_t)st->st_size && (r = read(fd, s + n, (size_t)st->st_size - n)) > 0)
		n += (size_t)r;
	s[n] = '\0';
	close(fd);
	return s;
fail:
	free(s);
	close(fd);
	return NULL;
}

int learn_backup(const char *path, char *backup, size_t len)
{
	struct stat st;
	char *text = read_file(path, &st);
	struct timespec times[2];
	int fd = -1;

	if (!text || learn_backup_name(path, backup, len))
		goto fail;
	fd = open(backup, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
	if (fd < 0 || write_all(fd, text, strlen(text)) || fsync(fd))
		goto fail;
	if (fchown(fd, st.st_uid, st.st_gid) && errno != EPERM)
		goto fail;
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	futimens(fd, times);
	free(text);
	return close(fd);
fail:
	free(text);
	if (fd >= 0)
		close(fd);
	return -1;
}

int learn_write_atomic(const char *path, const char *text)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	bool have = !stat(path, &st);
	int fd, dfd, saved;

	snprintf(tmp, sizeof(tmp), "%s", path);
	snprintf(dir, sizeof(dir), "%s", dirname(tmp)); /* "." for a bare name */
	if (!have && stat(dir, &st))
		return -1;
	if (!have)
		st.st_mode = 0644; /* a new file: the directory's owner (a sudo user's project) */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, getpid()) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (write_all(fd, text, strlen(text)) || fchmod(fd, st.st_mode & 07777) ||
	    (fchown(fd, st.st_uid, st.st_gid) && errno != EPERM) || fsync(fd))
		goto fail;
	if (close(fd)) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path))
		goto fail;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd); /* the rename itself reaches the disk */
		close(dfd);
	}
	return 0;
fail:
	saved = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = saved;
	return -1;
}

/* The write failed: the rules go to a fallback file, named, so the run is not lost. */
static int learn_fallback(const char *file, const char *merged, size_t added)
{
	char saved[PATH_MAX + 64];

	if (learn_save_fallback(file, merged, saved, sizeof(saved))) {
		pr_err("learning: cannot save the rules anywhere either (next to %s, in $TMPDIR or "
		       "/tmp, in the working directory): %s; the lines above are all that is left "
		       "of them",
		       file, strerror(errno));
		return -1;
	}
	pr_err("learning: the %zu rule%s of this run are saved in %s (%s with them merged); fix "
	       "what stopped the write, review it, then: cp %s %s",
	       added, added == 1 ? "" : "s", saved, file, saved, file);
	return 1;
}

int learn_file(const char *file, const struct learn_set *s, const struct learn_env *env,
	       bool backup, time_t now, FILE *review)
{
	struct learn_rules r;
	struct stat st;
	char stamp[64], old[PATH_MAX + 16] = "", *text, *merged = NULL;
	bool exists = !stat(file, &st), unread = false;
	size_t added;
	int ret = -1;

	learn_stamp(now, stamp, sizeof(stamp));
	if (s->lost)
		pr_warn("learning: %llu events were lost (stderr says why): the rules below may "
			"be incomplete; run the program again to learn the rest, or raise "
			"bpf.events-buffer (docs/policy.md)",
			(unsigned long long)s->lost);
	if (s->dotenv)
		pr_warn("learning: %lu access(es) to a .env file (e.g. %s): a library searching "
			"for .env (python-dotenv's load_dotenv() looks in every parent directory) "
			"turns those directories into expose-ro= rules; unless the program needs the "
			"file, learn again with PYTHON_DOTENV_DISABLED=1 (docs/faq.md)",
			s->dotenv, s->dotenv_example);
	if (s->unlearned)
		pr_warn("learning: %lu events name accesses no rule can allow (self-protection, "
			"anonymous code, truncated paths): see the event lines",
			s->unlearned);
	text = exists ? read_file(file, &st) : learn_template(stamp);
	if (!text && exists) {
		/* The rules still reach the fallback, merged into the template. */
		pr_err("learning: cannot read %s: %s", file, strerror(errno));
		unread = true;
		text = learn_template(stamp);
	}
	if (!text) {
		pr_err("learning: out of memory");
		return -1;
	}
	if (learn_generate(s, env, &r)) {
		pr_err("learning: out of memory");
		free(text);
		return -1;
	}
	if (r.not_widened)
		pr_warn("learning: %zu file(s) the program created or removed directly in /etc, ~ "
			"or another directory learning never widens (docs/policy.md) are gone: no "
			"rule written, since only write access to the whole directory allows that; "
			"if the program must do it, write that rule yourself",
			r.not_widened);
	if (learn_merge_in(text, &r, stamp, env, file, &merged, &added)) {
		pr_err("learning: out of memory");
		goto out;
	}
	if (!added && (exists || unread)) {
		fprintf(stderr,
			"pysb-bpf: learning: nothing to add to %s (%lu events, every rule "
			"already there)\n",
			file, s->records);
		ret = unread ? 1 : 0;
		goto out;
	}
	/* What is granted, for review, before anything can fail. */
	if (added && review) {
		fprintf(stderr,
			"pysb-bpf: learning: %zu rule%s added to %s, as diff -u shows them%s:\n",
			added, added == 1 ? "" : "s", file,
			review == stdout ? " on standard output" : "");
		if (learn_diff(review, file, text, merged) < 0)
			pr_err("learning: out of memory rendering the lines added");
		fflush(review);
	}
	if (unread) {
		ret = learn_fallback(file, merged, added);
		goto out;
	}
	if (exists && backup && learn_backup(file, old, sizeof(old))) {
		pr_err("learning: cannot keep the previous %s as %s: %s; nothing written", file,
		       old[0] ? old : "<file>.old", strerror(errno));
		ret = learn_fallback(file, merged, added);
		goto out;
	}
	if (learn_write_atomic(file, merged)) {
		pr_err("learning: cannot write %s: %s; it is unchanged", file, strerror(errno));
		ret = learn_fallback(file, merged, added);
		goto out;
	}
	if (!added)
		fprintf(stderr,
			"pysb-bpf: learning: nothing to add (%lu events); %s created from "
			"the template\n",
			s->records, file);
	else
		fprintf(stderr,
			"pysb-bpf: learning: %zu rule%s written into %s%s%s; review them "
			"(above), then run without --learn to enforce\n",
			added, added == 1 ? "" : "s", file, old[0] ? ", previous version in " : "",
			old);
	ret = 0;
out:
	learn_rules_free(&r);
	free(text);
	free(merged);
	return ret;
}

/* ---------------- before the run: can the target be written? */

/* Why a directory cannot take the new file, as a user fixes it. */
static const char *dir_fix(int err)
{
	switch (err) {
	case EROFS:
		return "it is on a read-only file system: remount it read-write";
	case EACCES:
		return "no permission to create files in it: change its permissions";
	case EPERM:
		return "it is immutable or append-only (lsattr shows it): chattr -i/-a it";
	case ENOSPC:
	case EDQUOT:
		return "the file system is full: free some space";
	default:
		return "fix that";
	}
}

int learn_check_target(const char *file, bool before_run)
{
	const char *after = before_run ? " (the program was not started)" : "";
	const char *other = before_run ? "--learn=FILE" : "--policy FILE";
	char tmp[PATH_MAX], dir[PATH_MAX], probe[PATH_MAX + 32];
	struct stat st;
	int fd, flags = 0;

	if (!*file) {
		pr_err("learning: no file to learn into (an empty name)%s; give one: --learn=FILE",
		       after);
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s", file);
	snprintf(dir, sizeof(dir), "%s", dirname(tmp));
	if (stat(dir, &st)) {
		int e = errno;

		pr_err("learning: cannot write the rules into %s: its directory %s: %s%s; %s, or "
		       "learn into another file (%s)",
		       file, dir, strerror(e), after,
		       e == ENOENT ? "create the directory (mkdir -p)" : "fix the path", other);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		pr_err("learning: cannot write the rules into %s: %s is not a directory%s; give a "
		       "path whose parent is a directory",
		       file, dir, after);
		return -1;
	}
	if (!stat(file, &st)) {
		if (!S_ISREG(st.st_mode)) {
			pr_err("learning: cannot write the rules into %s: it is %s, not a policy "
			       "file%s; give the path of a file (new or existing), e.g. %s/policy",
			       file, S_ISDIR(st.st_mode) ? "a directory" : "not a regular file",
			       after, S_ISDIR(st.st_mode) ? file : dir);
			return -1;
		}
		/* Learning reads the file, then renames a new one over it. */
		if (faccessat(AT_FDCWD, file, R_OK | W_OK, AT_EACCESS)) {
			int e = errno;

			pr_err("learning: cannot write the rules into %s: %s%s; %s, or learn into "
			       "another file (%s)",
			       file, strerror(e), after,
			       e == EROFS   ? "remount its file system read-write"
			       : e == EPERM ? "it is immutable (lsattr shows it): chattr -i it"
					    : "make it readable and writable (chmod u+rw)",
			       other);
			return -1;
		}
		fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		/* Append-only passes the access check but refuses the rename. */
		if (fd >= 0 && !ioctl(fd, FS_IOC_GETFLAGS, &flags) &&
		    (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL))) {
			close(fd);
			pr_err("learning: cannot write the rules into %s: it is %s (lsattr shows "
			       "it)%s; chattr -%c it, or learn into another file (%s)",
			       file, flags & FS_IMMUTABLE_FL ? "immutable" : "append-only", after,
			       flags & FS_IMMUTABLE_FL ? 'i' : 'a', other);
			return -1;
		}
		if (fd >= 0)
			close(fd);
	}
	/* The new version and the .old backup are created next to it: really try. */
	if ((size_t)snprintf(probe, sizeof(probe), "%s.%d.check", file, getpid()) >=
	    sizeof(probe)) {
		pr_err("learning: cannot write the rules into %s: the name is too long%s", file,
		       after);
		return -1;
	}
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;

		pr_err("learning: cannot write the rules into %s: cannot create files in %s: %s%s; "
		       "%s, or learn into another file (%s)",
		       file, dir, strerror(e), after, dir_fix(e), other);
		return -1;
	}
	close(fd);
	if (unlink(probe)) {
		int e = errno;

		pr_err("learning: cannot write the rules into %s: cannot replace files in %s (%s "
		       "stays behind): %s%s; %s",
		       file, dir, probe, strerror(e), after, dir_fix(e));
		return -1;
	}
	return 0;
}

int learn_check_source(const char *from)
{
	struct stat st;

	if (!strcmp(from, "-"))
		return 0;
	if (stat(from, &st)) {
		pr_err("learn: cannot read the events %s: %s; give the file that run --events FILE "
		       "wrote (or - for standard input)",
		       from, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		pr_err("learn: %s is a directory; --from takes the events file that run --events "
		       "FILE wrote, e.g. %s/events.jsonl",
		       from, from);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		const char *type = S_ISFIFO(st.st_mode)	  ? "a fifo"
				   : S_ISSOCK(st.st_mode) ? "a socket"
				   : S_ISCHR(st.st_mode)  ? "a character device"
				   : S_ISBLK(st.st_mode)  ? "a block device"
							  : "an unknown type";

		pr_err("learn: %s is not a regular file (%s); --from takes the events file that "
		       "run --events FILE wrote; to read a pipe, give --from - and pipe it in",
		       from, type);
		return -1;
	}
	if (access(from, R_OK)) {
		pr_err("learn: cannot read the events %s: %s; make it readable", from,
		       strerror(errno));
		return -1;
	}
	return 0;
}

/* ---------------- after the run: the fallback */

int learn_save_fallback(const char *file, const char *text, char *out, size_t len)
{
	char tmp[PATH_MAX], base[NAME_MAX + 1], dir[3][PATH_MAX];
	const char *tmpdir = getenv("TMPDIR");
	struct stat st;
	bool own = !stat(file, &st);
	int fd = -1;

	snprintf(tmp, sizeof(tmp), "%s", file);
	snprintf(base, sizeof(base), "%s", basename(tmp));
	snprintf(tmp, sizeof(tmp), "%s", file);
	snprintf(dir[0], sizeof(dir[0]), "%s", dirname(tmp));
	snprintf(dir[1], sizeof(dir[1]), "%s", tmpdir && *tmpdir == '/' ? tmpdir : "/tmp");
	snprintf(dir[2], sizeof(dir[2]), ".");
	if (!own)
		own = !stat(dir[0], &st); /* the owner the new file would have had */
	for (int d = 0; d < 3 && fd < 0; d++) {
		for (int i = 0; i < 100; i++) {
			int n = i ? snprintf(out, len, "%s/%s.learned_%d", dir[d], base, i)
				  : snprintf(out, len, "%s/%s.learned", dir[d], base);

			if (n < 0 || (size_t)n >= len)
				break;
			/* Never over anything, nor through a link someone left in /tmp. */
			fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd >= 0 || errno != EEXIST)
				break;
		}
	}
	if (fd < 0)
		return -1;
	if (write_all(fd, text, strlen(text)) || fsync(fd)) {
		int e = errno;

		close(fd);
		unlink(out);
		errno = e;
		return -1;
	}
	/* The owner of the policy (a sudo user) can read it; root can in any case. */
	if (own && fchown(fd, st.st_uid, st.st_gid))
		pr_debug("learning: cannot give %s to uid %u: %s", out, (unsigned)st.st_uid,
			 strerror(errno));
	return close(fd);
}

/* ---------------- the review: what was added, as diff -u shows it */

struct text_lines {
	const char **s; /* each line with its '\n' (the last may have none) */
	size_t *len, n;
};

static int split_text(const char *t, struct text_lines *l)
{
	size_t cap = 0;

	l->s = NULL;
	l->len = NULL;
	l->n = 0;
	while (*t) {
		const char *nl = strchr(t, '\n');
		size_t n = nl ? (size_t)(nl - t) + 1 : strlen(t);

		if (l->n == cap) {
			size_t c = cap ? cap * 2 : 64;
			const char **s = realloc(l->s, c * sizeof(*s));
			size_t *ln = s ? realloc(l->len, c * sizeof(*ln)) : NULL;

			if (s)
				l->s = s;
			if (!ln)
				return -1;
			l->len = ln;
			cap = c;
		}
		l->s[l->n] = t;
		l->len[l->n++] = n;
		t += n;
	}
	return 0;
}

static bool same_line(const struct text_lines *a, size_t i, const struct text_lines *b, size_t j)
{
	return a->len[i] == b->len[j] && !memcmp(a->s[i], b->s[j], a->len[i]);
}

/* One step of the edit script: '=' (both), '-' (old only), '+' (new only). */
struct edit {
	char op;
	size_t a, b; /* the line in old and in new: for '+', the old line it precedes */
};

/*
 * The shortest edit script (longest common subsequence) of the lines between the common
 * head and tail. Policy files are small; past 16 M cells the middle is replaced whole.
 */
static struct edit *edit_script(const struct text_lines *a, const struct text_lines *b,
				size_t *n_out)
{
	size_t head = 0, tail = 0, n, m, k = 0;
	struct edit *e = malloc((a->n + b->n + 1) * sizeof(*e));
	uint32_t *L = NULL;

	if (!e)
		return NULL;
	while (head < a->n && head < b->n && same_line(a, head, b, head))
		head++;
	while (tail < a->n - head && tail < b->n - head &&
	       same_line(a, a->n - 1 - tail, b, b->n - 1 - tail))
		tail++;
	n = a->n - head - tail;
	m = b->n - head - tail;
	for (size_t i = 0; i < head; i++)
		e[k++] = (struct edit){ '=', i, i };
	if (n && m && (n + 1) * (m + 1) <= (16u << 20))
		L = calloc((n + 1) * (m + 1), sizeof(*L));
	if (L) {
		size_t i = 0, j = 0;

		/* L[i][j]: the common lines of old[i..] and new[j..] */
		for (size_t ii = n; ii-- > 0;)
			for (size_t jj = m; jj-- > 0;)
				L[ii * (m + 1) + jj] = same_line(a, head + ii, b, head + jj)
							       ? L[(ii + 1) * (m + 1) + jj + 1] + 1
						       : L[(ii + 1) * (m + 1) + jj] >=
								       L[ii * (m + 1) + jj + 1]
							       ? L[(ii + 1) * (m + 1) + jj]
							       : L[ii * (m + 1) + jj + 1];
		while (i < n || j < m) {
			if (i < n && j < m && same_line(a, head + i, b, head + j)) {
				e[k++] = (struct edit){ '=', head + i, head + j };
				i++, j++;
			} else if (i < n &&
				   (j == m || L[(i + 1) * (m + 1) + j] >= L[i * (m + 1) + j + 1])) {
				/* deletions first, as diff prints a changed line */
				e[k++] = (struct edit){ '-', head + i, head + j };
				i++;
			} else {
				e[k++] = (struct edit){ '+', head + i, head + j };
				j++;
			}
		}
		free(L);
	} else {
		for (size_t i = 0; i < n; i++)
			e[k++] = (struct edit){ '-', head + i, head };
		for (size_t j = 0; j < m; j++)
			e[k++] = (struct edit){ '+', head + n, head + j };
	}
	for (size_t i = 0; i < tail; i++)
		e[k++] = (struct edit){ '=', head + n + i, head + m + i };
	*n_out = k;
	return e;
}

/* "@@ -1,3 +1,4 @@": a count of 1 is left out; an empty range names the line before it. */
static void hunk_range(FILE *out, char sign, size_t start, size_t count)
{
	if (count == 1)
		fprintf(out, "%c%zu", sign, start + 1);
	else
		fprintf(out, "%c%zu,%zu", sign, count ? start + 1 : start, count);
}

static void diff_line(FILE *out, char sign, const char *s, size_t len)
{
	bool nl = len && s[len - 1] == '\n';

	fprintf(out, "%c%.*s\n", sign, (int)(nl ? len - 1 : len), s);
	if (!nl)
		fputs("\\ No newline at end of file\n", out);
}

int learn_diff(FILE *out, const char *file, const char *old, const char *new)
{
	enum { CONTEXT = 3 };
	struct text_lines a = { 0 }, b = { 0 };
	struct edit *e = NULL;
	size_t n = 0, changed = 0;
	const char *label = file;
	int ret = -1;

	if (split_text(old, &a) || split_text(new, &b) || !(e = edit_script(&a, &b, &n)))
		goto out;
	/* a/etc/x, a/data/x: git's labels, without a leading "/" or "./" */
	while (*label == '/' || (label[0] == '.' && label[1] == '/'))
		label += *label == '/' ? 1 : 2;
	for (size_t i = 0; i < n; i++) {
		size_t start, end, last, oa = 0, nb = 0;

		if (e[i].op == '=')
			continue;
		if (!changed++)
			fprintf(out, "--- a/%s\n+++ b/%s\n", label, label);
		/* a hunk: this change, and the next ones closer than 2 * CONTEXT equal lines */
		start = i > CONTEXT ? i - CONTEXT : 0;
		last = i;
		for (size_t j = i + 1; j < n && j <= last + 2 * CONTEXT + 1; j++)
			if (e[j].op != '=')
				last = j;
		end = last + CONTEXT + 1 < n ? last + CONTEXT + 1 : n;
		for (size_t j = start; j < end; j++) {
			oa += e[j].op != '+';
			nb += e[j].op != '-';
		}
		fputs("@@ ", out);
		hunk_range(out, '-', e[start].a, oa);
		fputc(' ', out);
		hunk_range(out, '+', e[start].b, nb);
		fputs(" @@\n", out);
		for (size_t j = start; j < end; j++) {
			if (e[j].op == '+')
				diff_line(out, '+', b.s[e[j].b], b.len[e[j].b]);
			else
				diff_line(out, e[j].op == '-' ? '-' : ' ', a.s[e[j].a],
					  a.len[e[j].a]);
		}
		i = end - 1;
	}
	ret = changed ? 1 : 0;
out:
	free(e);
	free(a.s);
	free(a.len);
	free(b.s);
	free(b.len);
	return ret;
}
