/* SPDX-License-Identifier: MIT */
/*
 * The sandboxed program's environment, built from env= / unenv= rules as py-sandboxes does
 * (FORMAT-NOTES §2.4, guard_envs.parse_rules): it starts empty; wildcard rules copy the
 * matching host variables; exact rules win over wildcards whatever the order; unenv= removes
 * wherever it appears. Values are substituted here, against the host environment, because
 * the parser keeps env= values raw.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

struct var {
	char *name;
	char *value;
};

struct env_build {
	struct var *vars;
	size_t n;
	const struct policy *p;
	char *const *host;
};

/* Lookup context of a wildcard rule: ${PATTERN} stands for the matched host variable. */
struct star_ctx {
	char *const *host;
	const char *pattern;
	const char *match;
};

bool policy_glob_match(const char *glob, const char *s)
{
	const char *star = NULL, *retry = s;

	/* Two-pointer scan: linear, no backtracking blow-up on "*a*a*a*..." patterns. */
	while (*s) {
		if (*glob == '*') {
			star = glob++;
			retry = s;
		} else if (*glob && *glob == *s) {
			glob++;
			s++;
		} else if (star) {
			glob = star + 1;
			s = ++retry;
		} else {
			return false;
		}
	}
	while (*glob == '*')
		glob++;
	return *glob == '\0';
}

static const char *star_lookup(void *ctx, const char *name)
{
	const struct star_ctx *c = ctx;

	if (strcmp(name, c->pattern) == 0)
		return policy_envp_get(c->host, c->match);
	return policy_envp_get(c->host, name);
}

static struct var *find_var(struct env_build *b, const char *name)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->vars[i].name, name) == 0)
			return &b->vars[i];
	return NULL;
}

/* Takes `value`. vars[] was sized for every rule and host variable: it never grows. */
static int set_var(struct env_build *b, const char *name, char *value)
{
	struct var *v = find_var(b, name);
	char *copy;

	if (v) {
		free(v->value);
		v->value = value;
		return 0;
	}
	copy = strdup(name);
	if (!copy) {
		free(value);
		return -1;
	}
	b->vars[b->n++] = (struct var){ .name = copy, .value = value };
	return 0;
}

/*
 * The substituted value of a rule, or NULL with errno set. *skip tells that the variable must
 * stay unset: a "${...}" value that came out empty means "not set on the host" (py-sandboxes
 * keeps a literal empty value, so `env=X=` does set X="").
 */
static char *rule_value(const struct policy_env *r, policy_lookup_fn fn, void *ctx, bool *skip)
{
	struct policy_subst_error err;
	char *v = policy_subst(r->value, strlen(r->value), fn, ctx, NULL, &err);

	if (!v) {
		errno = strcmp(err.msg, "out of memory") == 0 ? ENOMEM : EINVAL;
		return NULL;
	}
	*skip = v[0] == '\0' && strstr(r->value, "${") != NULL;
	return v;
}

static bool named_exactly(const struct policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_envs; i++)
		if (!p->envs[i].unset && !strchr(p->envs[i].name, '*') &&
		    strcmp(p->envs[i].name, name) == 0)
			return true;
	return false;
}

/* True when host[i] repeats an earlier name: getenv() semantics, the first one counts. */
static bool host_dup(char *const *host, size_t i)
{
	size_t n = strcspn(host[i], "=");

	for (size_t j = 0; j < i; j++)
		if (strncmp(host[j], host[i], n) == 0 && host[j][n] == '=')
			return true;
	return false;
}

static int apply_match(struct env_build *b, const struct policy_env *r, const char *name)
{
	struct star_ctx c = { .host = b->host, .pattern = r->name, .match = name };
	bool skip;
	char *v;

	if (!policy_glob_match(r->name, name) || named_exactly(b->p, name))
		return 0;
	v = rule_value(r, star_lookup, &c, &skip);
	if (!v)
		return -1;
	if (skip) {
		free(v);
		return 0;
	}
	return set_var(b, name, v);
}

static int apply_wildcard(struct env_build *b, const struct policy_env *r)
{
	for (size_t i = 0; b->host && b->host[i]; i++) {
		size_t n = strcspn(b->host[i], "=");
		char *name;
		int ret;

		if (!b->host[i][n] || host_dup(b->host, i))
			continue;
		name = strndup(b->host[i], n);
		if (!name)
			return -1;
		ret = apply_match(b, r, name);
		free(name);
		if (ret)
			return -1;
	}
	return 0;
}

static int apply_exact(struct env_build *b, const struct policy_env *r)
{
	bool skip;
	char *v = rule_value(r, policy_envp_lookup, (void *)b->host, &skip);

	if (!v)
		return -1;
	if (skip) {
		free(v);
		return 0;
	}
	return set_var(b, r->name, v);
}

static void remove_matching(struct env_build *b, const char *glob)
{
	size_t o = 0;

	for (size_t i = 0; i < b->n; i++) {
		if (policy_glob_match(glob, b->vars[i].name)) {
			free(b->vars[i].name);
			free(b->vars[i].value);
			continue;
		}
		b->vars[o++] = b->vars[i];
	}
	b->n = o;
}

static char **to_envp(struct env_build *b)
{
	char **out = calloc(b->n + 1, sizeof(*out));

	if (!out)
		return NULL;
	for (size_t i = 0; i < b->n; i++) {
		size_t nl = strlen(b->vars[i].name), vl = strlen(b->vars[i].value);

		out[i] = malloc(nl + vl + 2);
		if (!out[i]) {
			policy_env_free(out);
			return NULL;
		}
		memcpy(out[i], b->vars[i].name, nl);
		out[i][nl] = '=';
		memcpy(out[i] + nl + 1, b->vars[i].value, vl + 1);
	}
	return out;
}

int policy_build_env(const struct policy *p, char *const *host_envp, char ***out)
{
	struct env_build b = { .p = p, .host = host_envp };
	size_t n_host = 0;
	int ret = -1;

	*out = NULL;
	while (host_envp && host_envp[n_host])
		n_host++;
	b.vars = calloc(p->n_envs + n_host + 1, sizeof(*b.vars));
	if (!b.vars)
		return -1;
	/* Wildcards first so that exact rules, applied next, override them. */
	for (size_t i = 0; i < p->n_envs; i++)
		if (!p->envs[i].unset && strchr(p->envs[i].name, '*') &&
		    apply_wildcard(&b, &p->envs[i]))
			goto cleanup;
	for (size_t i = 0; i < p->n_envs; i++)
		if (!p->envs[i].unset && !strchr(p->envs[i].name, '*') &&
		    apply_exact(&b, &p->envs[i]))
			goto cleanup;
	for (size_t i = 0; i < p->n_envs; i++)
		if (p->envs[i].unset)
			remove_matching(&b, p->envs[i].name);
	*out = to_envp(&b);
	if (*out)
		ret = 0;
cleanup:
	for (size_t i = 0; i < b.n; i++) {
		free(b.vars[i].name);
		free(b.vars[i].value);
	}
	free(b.vars);
	return ret;
}

void policy_env_free(char **envp)
{
	if (!envp)
		return;
	for (char **e = envp; *e; e++)
		free(*e);
	free(envp);
}

/* Found by a user: expose-rw=${TMPDIR} with TMPDIR set, and "No usable temporary directory
 * found in ['/tmp', '/var/tmp', ...]", naming no variable. */
char *policy_tmpdir_warning(const struct policy *p, char *const *host_envp, char *const *prog_envp,
			    const struct policy_src **src)
{
	const char *tmp = NULL;
	char *real, *msg = NULL;

	for (size_t i = 0; host_envp && host_envp[i]; i++)
		if (!strncmp(host_envp[i], "TMPDIR=", 7))
			tmp = host_envp[i] + 7;
	if (!tmp || !*tmp)
		return NULL;
	for (size_t i = 0; prog_envp && prog_envp[i]; i++)
		if (!strncmp(prog_envp[i], "TMPDIR=", 7))
			return NULL;
	real = realpath(tmp, NULL);
	for (size_t i = 0; real && i < p->n_paths; i++) {
		const struct policy_path *r = &p->paths[i];

		if (r->access != POLICY_RW || !r->path || strcmp(r->path, real))
			continue;
		if (asprintf(&msg,
			     "expose-rw=%s is your TMPDIR, but no env= line passes TMPDIR to the "
			     "program: Python's tempfile, and most programs, then write in /tmp; add "
			     "env=TMPDIR=${TMPDIR}",
			     r->spelled ? r->spelled : r->path) < 0)
			msg = NULL;
		else
			*src = &r->src;
		break;
	}
	free(real);
	return msg;
}

/* The value of NAME in envp, or NULL. */
static const char *env_value(char *const *envp, const char *name)
{
	size_t l = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name, l) && envp[i][l] == '=')
			return envp[i] + l + 1;
	return NULL;
}

char *policy_proxy_warning(const struct policy *p, char *const *host_envp, char *const *prog_envp,
			   const struct policy_src **src)
{
	static const char *const vars[] = { "HTTPS_PROXY", "https_proxy", "HTTP_PROXY",
					    "http_proxy",  "ALL_PROXY",	  "all_proxy" };
	const char *name = NULL;
	const struct policy_net *out = NULL;
	char *msg;

	for (size_t k = 0; k < sizeof(vars) / sizeof(vars[0]); k++) {
		const char *v = env_value(host_envp, vars[k]);

		if (env_value(prog_envp, vars[k]))
			return NULL; /* the program gets a proxy */
		if (!name && v && *v)
			name = vars[k];
	}
	for (size_t i = 0; name && i < p->n_nets && !out; i++)
		if (!p->nets[i].deny && (p->nets[i].dirs & POLICY_DIR_OUT))
			out = &p->nets[i];
	if (!out ||
	    asprintf(&msg,
		     "your environment's %s names a proxy, but no env= line passes it: the "
		     "program connects to the hosts of net= rules directly, which a network "
		     "that needs the proxy refuses; env=%s=${%s} passes it (net= must then "
		     "allow the proxy itself: its deny line names the rule)",
		     name, name, name) < 0)
		return NULL;
	*src = &out->src;
	return msg;
}
