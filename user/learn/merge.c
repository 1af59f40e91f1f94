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
				buf_puts_nl(&b, fam[f].lines[i]);
			buf_put(&b, "\n", 1);
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
				buf_puts_nl(&b, note);
				done = true;
			}
			free(c);
		}
		if (!done) {
			buf_put(&b, p, n);
			if (p[n] == '\n')
				buf_put(&b, "\n", 1);
		}
		p += n + (p[n] == '\n');
	}
	if (pending && ((fam[0].n && !fam[0].placed) || (fam[1].n && !fam[1].placed) ||
			(fam[2].n && !fam[2].placed) || (fam[3].n && !fam[3].placed))) {
		/* as py-sandboxes joins its lines: a line break after the text (a blank line
		 * when the text ended with one), the header, the families apart by a blank
		 * line, the file ending with the last rule's line */
		bool first = true;

		buf_put(&b, "\n", 1);
		header(&b, stamp);
		for (int f = 0; f < NFAM; f++) {
			if (!fam[f].n || fam[f].placed)
				continue;
			if (!first)
				buf_put(&b, "\n", 1);
			for (size_t i = 0; i < fam[f].n; i++)
				buf_puts_nl(&b, fam[f].lines[i]);
			first = false;
		}
	}
	buf_put(&b, "", 0);
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
