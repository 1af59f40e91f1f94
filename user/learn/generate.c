/* SPDX-License-Identifier: MIT */
/*
 * Learning: needs -> lines, the rules to add, in py-sandboxes text layout (generalised paths, never widened in /etc, ~, ...). See learn.c.
 */
#include "learn_int.h"
#include "diag.h"
#include "policy.h"
#include "secret_paths.h"

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
	uint8_t exact;	    /* LEARN_EXACT_*: only a rule on the path itself grants it */
	const char *sqlite; /* a database sqlite3 read in it, opened for writing too */
};

/*
 * Does `line` name `dir` when the next run reads it? The names learning writes are the
 * program's: a directory it called "${PYSB_CACHE:-..}" (read back: ~/..), "#cache" (a
 * comment: ~), or ".bashrc" and a no-break space (stripped: ~/.bashrc) would make a rule
 * wider than what it did. So the line is parsed as a policy file is, with the same
 * environment and directory, and kept only when it names exactly `dir`. A "${" is never
 * kept: what it reads back as depends on the next run's environment.
 */
static bool reads_back_as(const char *line, const char *dir, const struct learn_env *env)
{
	struct diag_list diag = { 0 };
	struct policy *p = NULL;
	bool same;

	if (strstr(dir, "${"))
		return false;
	if (policy_parse_buffer("learned rule", line, strlen(line), env->envp, env->cwd, &p,
				&diag)) {
		diag_free(&diag);
		return false;
	}
	same = p->n_paths == 1 && !strcmp(p->paths[0].path, dir);
	policy_free(p);
	diag_free(&diag);
	return same;
}

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

static bool never_widened_now(const char *dir, const char *home)
{
	const char *slash = strrchr(dir, '/');

	for (size_t i = 0; i < sizeof(never_widened) / sizeof(never_widened[0]); i++)
		if (!strcmp(dir, never_widened[i]))
			return true;
	/* each /proc file is its own kernel interface, at any depth (/proc/sys/...) */
	if (is_ancestor_or_same("/proc", dir))
		return true;
	/* /run/user/<uid>: a session's runtime directory (its bus, agents, auth cookies) */
	if (!strcmp(dir, "/run/user") ||
	    (!strncmp(dir, "/run/user/", 10) && dir[10] && !strchr(dir + 10, '/')))
		return true;
	/* /home/<user> (any user's home directory), and $HOME wherever it is */
	if (slash && slash > dir && (size_t)(slash - dir) == 5 && !strncmp(dir, "/home", 5))
		return true;
	if (home && *home && !strcmp(dir, home))
		return true;
	/* a directory that holds a well-known secret (~/.ssh for ~/.ssh/known_hosts, /etc/ssh
	 * with its host keys, /etc/ssl with private/): user/lib/secret_paths.c */
	return secret_paths_under(dir, home);
}

bool learn_never_widened(const char *dir, const char *home)
{
	/* A flood of denials in one directory asks about it for each file (100,000 times):
	 * the last answer is kept. */
	static __thread char last_dir[PATH_MAX], last_home[PATH_MAX];
	static __thread bool known, last;
	const char *h = home ? home : "";

	if (known && !strcmp(dir, last_dir) && !strcmp(h, last_home))
		return last;
	last = never_widened_now(dir, home);
	known = strlen(dir) < sizeof(last_dir) && strlen(h) < sizeof(last_home);
	if (known) {
		strcpy(last_dir, dir);
		strcpy(last_home, h);
	}
	return last;
}

/* The directory (or file) a rule must expose for p (malloc'd), or NULL: nothing to write.
 * home: the canonical home directory; r->not_widened counts files in those directories
 * no longer there, r->unlisted names those directories the program listed or opened. */
static char *generalise(const struct learn_path *p, const char *home, struct learn_rules *r,
			size_t *ucap)
{
	struct stat st;
	char *dir;

	if (proc_of_a_task(p->path))
		return NULL;
	if (p->exact)
		return stat(p->path, &st) ? NULL : strdup(p->path);
	if (p->dir || (!stat(p->path, &st) && S_ISDIR(st.st_mode))) {
		/* a listing of /etc, ~ or / needs READ on the directory, which no rule grants
		 * without everything in it (/etc/shadow, ~/.ssh): said, not written */
		if (learn_never_widened(p->path, home)) {
			size_t i = 0;

			while (i < r->n_unlisted && strcmp(r->unlisted[i], p->path))
				i++;
			if (i == r->n_unlisted)
				push_str(&r->unlisted, &r->n_unlisted, ucap, p->path);
			return NULL;
		}
		dir = strdup(p->path);
	} else
		dir = parent_of(p->path);
	if (!dir)
		return NULL;
	if (!p->dir && strcmp(dir, p->path) && learn_never_widened(dir, home)) {
		free(dir); /* never /etc for /etc/hostname: the file itself */
		if (stat(p->path, &st)) {
			r->not_widened++; /* created and removed there: only the directory could allow it */
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

/*
 * Was p a SQLite database the program only read? sqlite3 opens a database for reading and
 * writing even to read it (and, refused, reads it read-only), so that open alone made its
 * directory writable (found by a user). A write shows more: a lock for writing on the
 * database, a rollback journal or write-ahead log made beside it (whose directory is then
 * writable through its own record).
 */
static bool sqlite_read_only(const struct learn_set *s, const struct learn_path *p)
{
	static const char magic[16] = "SQLite format 3";
	static const char *const beside[] = { "-journal", "-wal" };
	char head[16], other[PATH_MAX];
	ssize_t got;
	int fd;

	if (!p->opened_rdwr || p->written || p->dir || p->exact)
		return false;
	for (size_t k = 0; k < sizeof(beside) / sizeof(beside[0]); k++) {
		if ((size_t)snprintf(other, sizeof(other), "%s%s", p->path, beside[k]) >=
		    sizeof(other))
			return false;
		if (*str_index_slot(&s->path_index, other, learn_path_key, s->paths))
			return false;
	}
	fd = open(p->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	got = read(fd, head, sizeof(head));
	close(fd);
	return got == sizeof(head) && !memcmp(head, magic, sizeof(magic));
}

static bool covers(uint32_t have, uint32_t need)
{
	need &= PYSB_ACC_READ | PYSB_ACC_WRITE;
	return (have & need) == need;
}

/*
 * The rule for the socket of a server outside the sandbox, written commented out: tmux
 * and screen run commands, ssh-agent signs, the session bus starts units, all as the
 * user and outside the sandbox (found by an adversary), so allowing one is the user's
 * decision, not learning's. The same for a block device, whose contents are every file of
 * its file system. (An existing line, commented or not, is left as it is.)
 */
static int exact_line(char **line, uint8_t exact, struct learn_rules *r)
{
	const char *why = exact == LEARN_EXACT_BLOCK
				  ? "a block device: every file of its file system, those the "
				    "other rules hide included"
				  : "a server outside the sandbox, acting as you";
	char *c;

	if (asprintf(&c, "# %s  # %s: uncomment to allow it", *line, why) < 0)
		return -1;
	free(*line);
	*line = c;
	++*(exact == LEARN_EXACT_BLOCK ? &r->n_block_devices : &r->n_servers);
	return 0;
}

/* The comment on a read-only rule learned for a SQLite database (sqlite_read_only): each
 * run's deny line for its open says the same, and how to let it write. */
static int sqlite_note(char **line, const char *db)
{
	const char *base = strrchr(db, '/');
	char *c;

	if (asprintf(&c,
		     "%s  # sqlite3 opened %s for reading and writing, and only read it; "
		     "expose-rw= if it must write",
		     *line, base ? base + 1 : db) < 0)
		return -1;
	free(*line);
	*line = c;
	return 0;
}

/* p's need, in d (its rule's path, taken), merged into v[0..*n): write wins over read. */
static void add_need(struct dir_need *v, size_t *n, char *d, const struct learn_set *s,
		     const struct learn_path *p)
{
	bool db = sqlite_read_only(s, p);
	uint32_t access = db ? PYSB_ACC_RO : p->access;
	size_t j;

	for (j = 0; j < *n && strcmp(v[j].dir, d); j++)
		;
	if (j < *n) {
		v[j].access |= access;
		v[j].exact = v[j].exact ? v[j].exact : p->exact;
		free(d);
	} else {
		v[j].dir = d;
		v[j].exact = p->exact;
		v[j].access = access;
		++*n;
	}
	if (db && !v[j].sqlite)
		v[j].sqlite = p->path;
}

static int gen_files(const struct learn_set *s, const struct learn_env *env, struct learn_rules *r)
{
	struct dir_need *v = calloc(s->n_paths + 1, sizeof(*v));
	const char *home = env_get(env->envp, "HOME");
	char home_real[PATH_MAX] = "";
	size_t n = 0, cap = 0, ucap = 0, lcap = 0;
	int ret = -1;

	if (!v)
		return -1;
	if (home && !realpath(home, home_real))
		snprintf(home_real, sizeof(home_real), "%s", home);
	for (size_t i = 0; i < s->n_paths; i++) {
		char *d = generalise(&s->paths[i], home_real, r, &lcap);

		if (d)
			add_need(v, &n, d, s, &s->paths[i]);
	}
	qsort(v, n, sizeof(*v), cmp_need);
	for (size_t i = 0; i < n; i++) {
		bool skip = false;
		char *spelt, *line;

		/* a socket is granted by a rule on itself only (bpf/unix.bpf.c) */
		for (size_t k = 0; k < env->n_covered && !skip; k++)
			skip = (v[i].exact ? !strcmp(env->covered[k].path, v[i].dir)
					   : is_ancestor_or_same(env->covered[k].path, v[i].dir)) &&
			       covers(env->covered[k].access, v[i].access);
		for (size_t k = 0; k < i && !skip && !v[i].exact; k++)
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
		if (!reads_back_as(line, v[i].dir, env)) {
			free(line);
			if (push_str(&r->unwritable, &r->n_unwritable, &ucap, v[i].dir))
				goto out;
			continue;
		}
		if (v[i].exact && v[i].exact != LEARN_EXACT_DEVICE &&
		    exact_line(&line, v[i].exact, r))
			goto out;
		if (v[i].sqlite && !(v[i].access & PYSB_ACC_WRITE) &&
		    sqlite_note(&line, v[i].sqlite))
			goto out;
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
	buf_put(&b, socket[i], key_len + 1);
	for (size_t k = 0; k < np; k++) {
		if (k && !strcmp(ports[k], ports[k - 1]))
			continue;
		if (k)
			buf_put(&b, ",", 1);
		buf_put(&b, ports[k], strlen(ports[k]));
	}
	buf_put(&b, dir, strlen(dir));
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

/*
 * Python's bytecode cache writes (learn.c) get no rule: a program that may write its own
 * sources or bytecode changes what it runs next time (docs/faq.md). The policy tells
 * Python not to write it instead, so the next run is quiet and the sources stay read-only.
 */
static int gen_pycache_env(const struct learn_set *s, struct learn_rules *out)
{
	static const char line[] = "env=PYTHONDONTWRITEBYTECODE=1";
	size_t cap = out->n_envs;

	out->pycache = s->pycache;
	out->pycache_example = s->pycache_example;
	if (!s->pycache)
		return 0;
	for (size_t i = 0; i < out->n_envs; i++)
		if (!strncmp(out->envs[i], line, sizeof("env=PYTHONDONTWRITEBYTECODE=") - 1))
			return 0;
	return push_str(&out->envs, &out->n_envs, &cap, line);
}

/* pytest's cache writes (learn.c) get no rule, for the same reason: the policy turns the
 * cache off instead (--lf, --ff and --sw then start afresh), unless it sets PYTEST_ADDOPTS
 * already. */
static int gen_pytest_env(const struct learn_set *s, struct learn_rules *out)
{
	size_t cap = out->n_envs;

	out->pytest_cache = s->pytest_cache;
	out->pytest_cache_example = s->pytest_cache_example;
	if (!s->pytest_cache)
		return 0;
	for (size_t i = 0; i < out->n_envs; i++)
		if (!strncmp(out->envs[i], "env=PYTEST_ADDOPTS=", 19))
			return 0;
	return push_str(&out->envs, &out->n_envs, &cap, "env=PYTEST_ADDOPTS=-p no:cacheprovider");
}

/*
 * A rule spelt ${TMPDIR:-/tmp} (or TMP, TEMP) names the temp directory of the next run's
 * environment, and the program must use that same directory: it gets the variable with
 * the same value, env=TMPDIR=${TMPDIR:-/tmp}, replacing a learned env=TMPDIR=${TMPDIR}
 * (found by a user: learned without TMPDIR set, the policy granted $TMPDIR once it was
 * set, and the program, given no TMPDIR, used /tmp and was denied). Also for `learn
 * --from`, which passes no other variable.
 */
static int gen_tmp_envs(struct learn_rules *out)
{
	static const char *const names[] = { "TMPDIR", "TMP", "TEMP" };
	size_t cap = out->n_envs;

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		char form[32], plain[48], line[64];
		bool used = false;

		snprintf(form, sizeof(form), "${%s:-/tmp}", names[k]);
		for (size_t i = 0; i < out->n_files && !used; i++)
			used = strstr(out->files[i], form) != NULL;
		if (!used)
			continue;
		snprintf(plain, sizeof(plain), "env=%s=${%s}", names[k], names[k]);
		snprintf(line, sizeof(line), "env=%s=%s", names[k], form);
		for (size_t i = 0; i < out->n_envs; i++)
			if (!strcmp(out->envs[i], plain)) {
				free(out->envs[i]);
				out->envs[i] = out->envs[--out->n_envs];
			}
		if (push_str(&out->envs, &out->n_envs, &cap, line))
			return -1;
	}
	if (out->n_envs)
		qsort(out->envs, out->n_envs, sizeof(char *), cmp_str);
	return 0;
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
	if ((env->envs && gen_envs(env, out)) || gen_pycache_env(s, out) ||
	    gen_pytest_env(s, out) || gen_tmp_envs(out))
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
	free_strs(r->unwritable, r->n_unwritable);
	free_strs(r->unlisted, r->n_unlisted);
	memset(r, 0, sizeof(*r));
}
