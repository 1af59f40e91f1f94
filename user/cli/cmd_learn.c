/* SPDX-License-Identifier: MIT */
/*
 * pysb-bpf learn --from, and run --learn's preparation and writing. See main.c.
 */
#include "main_int.h"

/* ---------------- learning: --learn[=FILE] and `learn --from` (user/learn/learn.c) */

/* What the compiled policy already grants (implicit paths included) needs no line; *count
 * entries. */
static struct learn_covered *covered_of(const struct compiled *c, size_t *count)
{
	struct learn_covered *v = calloc(c->n_files + 1, sizeof(*v));

	size_t n = 0;

	/* an entry for an inode alone (a script's directory) covers nothing below it */
	for (size_t i = 0; v && i < c->n_files; i++)
		if (!(c->files[i].access & PYSB_ACC_ALONE))
			v[n++] = (struct learn_covered){ c->files[i].path, c->files[i].access,
							 c->files[i].implicit
								 ? NULL
								 : c->files[i].src.file,
							 c->files[i].src.line };
	*count = n;
	return v;
}

/* A missing policy starts from py-sandboxes' learning template, as python-sb --learn does. */
int learn_prepare(const char *policy, bool *created)
{
	char stamp[64], *t;
	int ret;

	*created = false;
	if (!access(policy, F_OK))
		return 0;
	learn_stamp(time(NULL), stamp, sizeof(stamp));
	t = learn_template(stamp);
	ret = t ? learn_write_atomic(policy, t) : -1;
	free(t);
	if (ret) {
		pr_err("cannot create %s for learning: %s", policy, strerror(errno));
		return -1;
	}
	fprintf(stderr, "pysb-bpf: learning: %s did not exist; created from the template\n",
		policy);
	*created = true;
	return 0;
}

/*
 * A learning run sees the environment the learned policy will give: the policy's, plus
 * every variable learning will write as env=NAME=${NAME} (not secrets, not names an
 * unenv= rule removes). Otherwise a program needing MYAPP_MODE fails while learning.
 */
int learn_extend_env(const struct policy *p, char ***envp)
{
	size_t n = 0, cap;
	char **v;

	while ((*envp)[n])
		n++;
	cap = n + 1;
	for (size_t i = 0; environ[i]; i++)
		cap++;
	v = realloc(*envp, cap * sizeof(*v));
	if (!v)
		return -1;
	*envp = v;
	for (size_t i = 0; environ[i]; i++) {
		const char *eq = strchr(environ[i], '=');
		char name[256];
		bool skip = false;

		if (!eq || !eq[1] || (size_t)(eq - environ[i]) >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - environ[i]), environ[i]);
		if (!learn_env_passable(name) || learn_env_secret(name))
			continue;
		for (size_t k = 0; k < n && !skip; k++)
			skip = !strncmp(v[k], environ[i], (size_t)(eq - environ[i]) + 1);
		for (size_t k = 0; k < p->n_envs && !skip; k++)
			skip = p->envs[k].unset && !fnmatch(p->envs[k].name, name, 0);
		if (!skip && !(v[n++] = strdup(environ[i])))
			return -1;
	}
	v[n] = NULL;
	return 0;
}

/* learn_file's status: 0 written, 1 not (the rules in a fallback file), -1 lost. */
int learn_write(const char *file, struct learn_set *ls, const struct compiled *c, bool backup,
		bool envs, FILE *review, const struct path_writer *w, const char *before)
{
	size_t n_cov = 0;
	struct learn_covered *cov = covered_of(c, &n_cov);
	char *cwd = getcwd(NULL, 0);
	struct learn_env env = { .envp = environ,
				 .cwd = cwd,
				 .covered = cov,
				 .n_covered = cov ? n_cov : 0,
				 .envs = envs,
				 .writer = w,
				 .before = before };
	int ret = learn_file(file, ls, &env, backup, time(NULL), review);

	free(cov);
	free(cwd);
	return ret;
}

int cmd_learn(struct cli *cli)
{
	const char *from = cli->from, *policy = cli->policy;
	struct learn_set ls = { .envp = environ };
	struct compiled compiled = { 0 };
	struct path_writer w;
	struct identity id;
	struct program prog = { 0 };
	struct policy *p = NULL;
	struct cli c = { 0 };
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	bool created = false;
	int ret = 1;
	FILE *f;

	if (!from) {
		pr_err("learn: --from EVENTS.jsonl is needed (a stream written by run --events); "
		       "see 'pysb-bpf learn --help'");
		return EXIT_USAGE;
	}
	/* A directory, a fifo or a missing file: a usage error, before anything is read. */
	if (learn_check_source(from) || learn_check_target(policy, false))
		return EXIT_USAGE;
	/* ~ is the program's user's, as run reads it: through sudo (or --user), not root's */
	if (resolve_identity(cli->user, &id))
		return 1;
	f = strcmp(from, "-") ? fopen(from, "re") : stdin;
	if (!f) {
		pr_err("learn: cannot open %s: %s", from, strerror(errno));
		return 1;
	}
	while (getline(&line, &cap, f) > 0) {
		json_error_t jerr;
		json_t *rec = json_loads(line, 0, &jerr);
		const char *r = json_string_value(json_object_get(rec, "record"));

		lineno++;
		if (!rec) {
			pr_err("%s:%zu: not a JSON record (%s); is it a run --events stream?", from,
			       lineno, jerr.text);
			goto out;
		}
		if (r && !strcmp(r, "lost"))
			ls.lost += (uint64_t)json_integer_value(json_object_get(rec, "count"));
		if (learn_add_record(&ls, rec)) {
			json_decref(rec);
			pr_err("learn: out of memory");
			goto out;
		}
		json_decref(rec);
	}
	if (learn_prepare(policy, &created))
		goto out;
	c.policy = policy;
	p = load_policy(&c);
	if (!p || policy_check_learn(p))
		goto out;
	c.rest = (char *[]){ "python3", NULL };
	c.n_rest = 1;
	/* The implicit set of a Python program, as `check` shows it, is never written. */
	if (program_resolve(c.rest, c.n_rest, NULL, &prog) ||
	    compile_for(p, &prog, NULL, &compiled))
		goto out;
	/* The lines added on stdout: the command's output, to review or to keep. Read and
	 * written through no link the program the events came from could have made. */
	program_writer(&w, &id, &compiled);
	ret = learn_write(policy, &ls, &compiled, !created, false, stdout, &w, NULL) ? 1 : 0;
out:
	if (f != stdin)
		fclose(f);
	free(line);
	learn_set_free(&ls);
	compiled_free(&compiled);
	policy_free(p);
	program_free(&prog);
	return ret;
}
