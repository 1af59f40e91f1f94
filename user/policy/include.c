/* SPDX-License-Identifier: MIT */
/*
 * ${} substitution of a line, env= / unenv= (kept raw), and include. See policy.c.
 */
#include "parser.h"

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
bool substitute_line(struct parser *ps, struct line *ln)
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

void on_env(struct parser *ps, struct line *ln)
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

/* ---------------- include */

static bool visited(const struct parser *ps, const char *canon)
{
	for (size_t i = 0; i < ps->n_visited; i++)
		if (strcmp(ps->visited[i], canon) == 0)
			return true;
	return false;
}

bool mark_visited(struct parser *ps, const char *canon)
{
	char **slot = vec_push(&ps->visited, &ps->n_visited, sizeof(*slot));

	if (!slot || !(*slot = strdup(canon))) {
		ps->oom = true;
		return false;
	}
	return true;
}

/* Adds a display name to policy->files; returns the stored copy. */
const char *add_file(struct parser *ps, const char *name)
{
	char **slot = vec_push(&ps->p->files, &ps->p->n_files, sizeof(*slot));

	if (!slot || !(*slot = strdup(name))) {
		ps->oom = true;
		return NULL;
	}
	return *slot;
}

/* An include line's file, as named (missing: an include? whose file is not there):
 * compile keeps the names on its way, and refuses a missing one the program could make
 * (user/compile/compile.c, keep_policy_names). */
static void note_include(struct parser *ps, const struct line *ln, size_t off, const char *full,
			 bool missing)
{
	struct policy_include *a = vec_push(&ps->p->includes, &ps->p->n_includes, sizeof(*a));

	/* "dir/./name" (a bare name next to its file) as "dir/name" */
	if (!a || !((a->named = clean_abs(full)) || (a->named = strdup(full)))) {
		ps->oom = true;
		return;
	}
	a->missing = missing;
	a->src = line_src(ln, off);
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
		else
			note_include(ps, ln, off, full, true);
		goto cleanup;
	}
	if (!canon) {
		lerror(ps, ln, off, "cannot read included file '%.120s': %s", full,
		       strerror(errno));
		goto cleanup;
	}
	note_include(ps, ln, off, full, false);
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

bool is_include(const char *t)
{
	return starts_with(t, "include") && strchr("? \t\"'", t[7]);
}

/*
 * py-sandboxes' _parse_include(): `include` or `include?`, at least one blank, then a
 * double-quoted path, taken as written: includes are expanded before ${VAR} substitution,
 * so a ${...} in the path is literal.
 */
void on_include(struct parser *ps, struct line *ln)
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
