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
#include "parser.h"

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
	if (len == 0 || raw[ln.lead] == '{') {
		ps->templates += len != 0;
		return;
	}
	ps->rules++;
	ln.text = strndup(raw + ln.lead, len);
	if (!ln.text) {
		ps->oom = true;
		return;
	}
	process_line(ps, &ln);
	free(ln.text);
	free(ln.map);
}

void parse_text(struct parser *ps, const char *file, const char *dir, const char *buf, size_t len)
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

static int parser_init(struct parser *ps, struct diag_list *diag, char *const *envp,
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
	/* py-sandboxes drops "{" lines; a file of nothing else is most likely JSON (found by
	 * a user: a daemon binding given to `check --policy` passed as an empty policy) */
	if (stored && !ps->rules && ps->templates) {
		struct line whole = { .file = stored, .raw = "" };

		lwarn(ps, &whole, 0,
		      "no rule: every line starts with '{' (a template line, which py-sandboxes "
		      "ignores), so this policy grants nothing; a daemon binding (JSON) is "
		      "checked with pysb-bpf daemon --config DIR --check");
	}
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
		      struct policy **out, struct diag_list *diag)
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
			const char *cwd, struct policy **out, struct diag_list *diag)
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
		free(p->paths[i].named);
	}
	for (size_t i = 0; i < p->n_includes; i++)
		free(p->includes[i].named);
	free(p->includes);
	for (size_t i = 0; i < p->n_also_named; i++)
		free(p->also_named[i]);
	free(p->also_named);
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
