/* SPDX-License-Identifier: MIT */
/*
 * Learning: the learned lines merged into the policy file as py-sandboxes writes them (upgrades, includes, twice adds nothing). See learn.c.
 */
#include "learn_int.h"

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
	buf_put(b, "# Add rules (", 13);
	buf_put(b, stamp, strlen(stamp));
	buf_put(b, ")\n", 2);
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
		buf_put(&b, home, strlen(home));
		v++;
	} else if (v[0] != '/' && v[0] != '$' && env->cwd) {
		buf_put(&b, env->cwd, strlen(env->cwd));
		buf_put(&b, "/", 1);
	}
	while (*v) {
		const char *end = v[0] == '$' && v[1] == '{' ? strchr(v, '}') : NULL;
		char name[256];
		const char *dflt, *val;

		if (!end) {
			buf_put(&b, v, 1);
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
		buf_put(&b, val, strlen(val));
		v = end + 1;
	}
	buf_put(&b, "", 0);
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

/* One merge: the families of new lines, the paths of the learned expose-rw= lines (to
 * supersede an expose-ro= of the same path however written), the lines written here. */
struct merge {
	struct family fam[NFAM];
	char **rw_path; /* of fam[FAM_FILES].lines */
	char **owned;
	size_t n_owned;
	const struct learn_env *env;
	const char *target, *stamp;
};

/* An expose-rw= line whose path another file (an include) exposes read-only: that line is
 * not ours to change, and two rules on one path do not load. The line is written
 * commented out, with why; *line becomes it. 0, or -1 (out of memory). */
static int not_ours(struct merge *m, const struct learn_covered *ro, const char **line)
{
	char *note_line;

	if (asprintf(&note_line,
		     "# %s  # learned, not active: %s:%u exposes it read-only; make that line "
		     "expose-rw",
		     *line, ro->file, ro->line) < 0)
		return -1;
	m->owned[m->n_owned++] = note_line;
	pr_warn("learning: %s is needed, but %s:%u exposes the same path read-only: the rule "
		"is written commented out; change that line to expose-rw",
		*line, ro->file, ro->line);
	*line = note_line;
	return 0;
}

/* The new lines of family f: those not in text already. 0, or -1 (out of memory). */
static int select_family(struct merge *m, int f, const char *text, char **src, size_t n_src)
{
	struct family *fam = &m->fam[f];
	char val[4096];

	fam->lines = calloc(n_src + 1, sizeof(char *));
	if (!fam->lines)
		return -1;
	for (size_t i = 0; i < n_src; i++) {
		const char *line = src[i];

		if (f == FAM_FILES && m->env && rule_value(line, "expose-rw", val, sizeof(val))) {
			char *c = value_path(val, m->env);
			const struct learn_covered *ro = NULL;

			for (size_t k = 0; c && k < m->env->n_covered && !ro; k++)
				if (m->env->covered[k].file &&
				    !strcmp(m->env->covered[k].path, c) &&
				    !(m->env->covered[k].access & PYSB_ACC_WRITE) &&
				    !same_file(m->env->covered[k].file, m->target))
					ro = &m->env->covered[k];
			if (ro) {
				free(c);
				c = NULL;
				if (not_ours(m, ro, &line))
					return -1;
			}
			m->rw_path[fam->n] = c;
		}
		if (text_has_line(text, line) || (f == FAM_ENVS && env_covered(text, line))) {
			if (f == FAM_FILES) {
				free(m->rw_path[fam->n]);
				m->rw_path[fam->n] = NULL;
			}
			continue;
		}
		fam->lines[fam->n++] = (char *)line;
	}
	if (f == FAM_API) {
		/* a category's comment line goes with its rule, and is not a rule */
		size_t k = 0;

		for (size_t i = 0; i < fam->n; i++) {
			bool comment = fam->lines[i][0] == '#';

			if (comment && (i + 1 == fam->n || fam->lines[i + 1][0] == '#'))
				continue;
			fam->lines[k++] = fam->lines[i];
		}
		fam->n = k;
	}
	return 0;
}

/* The rules (not comment lines) family f adds. */
static size_t family_rules(const struct family *fam)
{
	size_t n = 0;

	for (size_t i = 0; i < fam->n; i++)
		n += fam->lines[i][0] != '#';
	return n;
}

/* expose-ro=X superseded by a learned expose-rw=X, however X is written (or commented):
 * the two would conflict. True when the line s was written as superseded. */
static bool supersede(struct merge *m, struct buf *b, const char *s)
{
	const struct family *files = &m->fam[FAM_FILES];
	char val[4096], rw[4096 + 16], note[4200], *c = NULL;
	bool done = false;

	if (!rule_value(s, "expose-ro", val, sizeof(val)))
		return false;
	snprintf(rw, sizeof(rw), "expose-rw=%s", val);
	for (size_t i = 0; i < files->n && !done; i++) {
		if (strcmp(files->lines[i], rw)) {
			if (!m->rw_path[i])
				continue;
			if (!c && !(c = value_path(val, m->env)))
				break;
			if (strcmp(c, m->rw_path[i]))
				continue;
		}
		snprintf(note, sizeof(note), "# %s  # superseded by learning (%s): write needed", s,
			 m->stamp);
		buf_puts_nl(b, note);
		done = true;
	}
	free(c);
	return done;
}

/* The text, line by line: each family's new lines before its closing marker, and the
 * expose-ro= lines a learned expose-rw= supersedes commented out. */
static void copy_text(struct merge *m, struct buf *b, const char *text)
{
	char s[4096];

	for (const char *p = text; *p;) {
		size_t n = line_len(p);

		strip(p, n, s, sizeof(s));
		for (int f = 0; f < NFAM; f++) {
			struct family *fam = &m->fam[f];

			if (!fam->n || fam->placed || !at_marker(p, n, fam->marker))
				continue;
			header(b, m->stamp);
			for (size_t i = 0; i < fam->n; i++)
				buf_puts_nl(b, fam->lines[i]);
			buf_put(b, "\n", 1);
			fam->placed = true;
		}
		if (!supersede(m, b, s)) {
			buf_put(b, p, n);
			if (p[n] == '\n')
				buf_put(b, "\n", 1);
		}
		p += n + (p[n] == '\n');
	}
}

/* The families without a marker in the text, appended as py-sandboxes joins its lines: a
 * line break after the text (a blank line when the text ended with one), the header, the
 * families apart by a blank line, the file ending with the last rule's line. */
static void append_rest(struct merge *m, struct buf *b)
{
	bool first = true, any = false;

	for (int f = 0; f < NFAM; f++)
		any = any || (m->fam[f].n && !m->fam[f].placed);
	if (!any)
		return;
	buf_put(b, "\n", 1);
	header(b, m->stamp);
	for (int f = 0; f < NFAM; f++) {
		if (!m->fam[f].n || m->fam[f].placed)
			continue;
		if (!first)
			buf_put(b, "\n", 1);
		for (size_t i = 0; i < m->fam[f].n; i++)
			buf_puts_nl(b, m->fam[f].lines[i]);
		first = false;
	}
}

int learn_merge_in(const char *text, const struct learn_rules *r, const char *stamp,
		   const struct learn_env *env, const char *target, char **out, size_t *added)
{
	struct merge m = {
		.fam = {
			{ "# </learning_guard_files>", NULL, 0, false },
			{ "# </learning_guard_socket>", NULL, 0, false },
			{ "# </learning_guard_api>", NULL, 0, false },
			{ "# </learning_guard_envs>", NULL, 0, false },
		},
		.env = env,
		.target = target,
		.stamp = stamp,
	};
	char **src[NFAM] = { r->files, r->socket, r->api, r->envs };
	size_t nsrc[NFAM] = { r->n_files, r->n_socket, r->n_api, r->n_envs };
	struct buf b = { 0 };
	int ret = -1;

	*added = 0;
	*out = NULL;
	m.rw_path = calloc(r->n_files + 1, sizeof(char *));
	m.owned = calloc(r->n_files + 1, sizeof(char *));
	if (!m.rw_path || !m.owned)
		goto out;
	for (int f = 0; f < NFAM; f++) {
		if (select_family(&m, f, text, src[f], nsrc[f]))
			goto out;
		*added += f == FAM_API ? family_rules(&m.fam[f]) : m.fam[f].n;
	}
	copy_text(&m, &b, text);
	append_rest(&m, &b);
	buf_put(&b, "", 0);
	if (b.oom || !b.s) {
		free(b.s);
		goto out;
	}
	*out = b.s;
	ret = 0;
out:
	for (int f = 0; f < NFAM; f++)
		free(m.fam[f].lines);
	for (size_t i = 0; m.rw_path && i < r->n_files; i++)
		free(m.rw_path[i]);
	for (size_t i = 0; i < m.n_owned; i++)
		free(m.owned[i]);
	free(m.rw_path);
	free(m.owned);
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
