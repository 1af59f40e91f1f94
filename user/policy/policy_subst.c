/* SPDX-License-Identifier: MIT */
/*
 * ${NAME} / ${NAME:-default} substitution, as py-sandboxes' resolve_env_variables() does it
 * (FORMAT-NOTES §1.3): the text is rescanned in passes; each pass replaces, left to right,
 * every reference whose name and default hold no brace, so nested defaults resolve innermost
 * first. A replaced reference becomes a marker standing for its value, which later passes
 * never look into (no re-expansion) but which may sit inside an outer name or default.
 * After the last pass a "${...}" still present is an error; "${" with no closing brace stays
 * literal, exactly like the reference implementation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

/* py-sandboxes loops without bound; real files nest 3 deep, so 32 only stops abuse. */
#define SUBST_MAX_PASSES 32
#define SUBST_MAX_LEN	 (1024 * 1024)

/* One character of the working text, or a marker for a substituted value. */
struct elem {
	size_t src; /* input offset of the character, or of the reference's '$' */
	long val;   /* -1: literal `ch`; otherwise an index in work.values */
	char ch;
};

struct work {
	struct elem *e;
	size_t n;
	char **values;
	size_t n_values;
	policy_lookup_fn lookup;
	void *ctx;
	struct policy_subst_error *err;
};

/* A reference's parts, as element ranges [b, e). */
struct ref {
	size_t name_b, name_e, def_b, def_e, end;
	bool has_def;
};

static bool fail(struct work *w, size_t offset, size_t len, const char *msg)
{
	w->err->offset = offset;
	w->err->len = len;
	w->err->msg = msg;
	return false;
}

static bool is_lit(const struct elem *e, char c)
{
	return e->val < 0 && e->ch == c;
}

/* Markers never stop a name or a default: py-sandboxes' markers hold no brace. */
static bool stops(const struct elem *e, const char *set)
{
	return e->val < 0 && strchr(set, e->ch) != NULL;
}

static bool match_ref(const struct work *w, size_t i, struct ref *r)
{
	const struct elem *e = w->e;
	size_t j, k;

	if (i + 3 >= w->n || !is_lit(&e[i], '$') || !is_lit(&e[i + 1], '{'))
		return false;
	for (j = i + 2; j < w->n && !stops(&e[j], "{}:-"); j++)
		;
	if (j == i + 2 || j >= w->n)
		return false;
	r->name_b = i + 2;
	r->name_e = j;
	if (is_lit(&e[j], '}')) {
		r->has_def = false;
		r->end = j + 1;
		return true;
	}
	if (!is_lit(&e[j], ':') || j + 1 >= w->n || !is_lit(&e[j + 1], '-'))
		return false;
	for (k = j + 2; k < w->n && !stops(&e[k], "{}"); k++)
		;
	if (k >= w->n || !is_lit(&e[k], '}'))
		return false;
	r->has_def = true;
	r->def_b = j + 2;
	r->def_e = k;
	r->end = k + 1;
	return true;
}

static size_t elem_len(const struct work *w, const struct elem *e)
{
	return e->val < 0 ? 1 : strlen(w->values[e->val]);
}

/* The text of elements [b, e) with markers replaced by their values; map is optional. */
static char *restore(struct work *w, size_t b, size_t e, size_t *map)
{
	size_t len = 0, o = 0, i;
	char *s;

	for (i = b; i < e; i++) {
		len += elem_len(w, &w->e[i]);
		if (len > SUBST_MAX_LEN) {
			fail(w, w->e[b].src, 0, "value too long after substitution (limit 1 MiB)");
			return NULL;
		}
	}
	s = malloc(len + 1);
	if (!s) {
		fail(w, 0, 0, "out of memory");
		return NULL;
	}
	for (i = b; i < e; i++) {
		size_t l = elem_len(w, &w->e[i]);

		if (w->e[i].val < 0)
			s[o] = w->e[i].ch;
		else
			memcpy(s + o, w->values[w->e[i].val], l);
		if (map)
			for (size_t k = 0; k < l; k++)
				map[o + k] = w->e[i].src;
		o += l;
	}
	s[o] = '\0';
	return s;
}

/* The value of one reference: the variable if set (even empty), else its default. */
static char *resolve(struct work *w, const struct ref *r)
{
	char *name = restore(w, r->name_b, r->name_e, NULL);
	const char *v;
	char *out;

	if (!name)
		return NULL;
	v = w->lookup ? w->lookup(w->ctx, name) : NULL;
	free(name);
	if (!v)
		return r->has_def ? restore(w, r->def_b, r->def_e, NULL) : strdup("");
	if (strlen(v) > SUBST_MAX_LEN) {
		fail(w, w->e[r->name_b - 2].src, 0,
		     "value too long after substitution (limit 1 MiB)");
		return NULL;
	}
	out = strdup(v);
	if (!out)
		fail(w, 0, 0, "out of memory");
	return out;
}

/* One left-to-right pass. Returns -1 on error, else the number of references replaced. */
static long one_pass(struct work *w)
{
	struct elem *out = malloc((w->n + 1) * sizeof(*out));
	size_t i = 0, o = 0;
	long replaced = 0;
	struct ref r = { 0 };

	if (!out)
		return fail(w, 0, 0, "out of memory"), -1;
	while (i < w->n) {
		char *v;

		if (!match_ref(w, i, &r)) {
			out[o++] = w->e[i++];
			continue;
		}
		v = resolve(w, &r);
		if (!v) {
			free(out);
			return -1;
		}
		w->values[w->n_values] = v;
		out[o++] = (struct elem){ .src = w->e[i].src, .val = (long)w->n_values++ };
		i = r.end;
		replaced++;
	}
	free(w->e);
	w->e = out;
	w->n = o;
	return replaced;
}

/* py-sandboxes' final check: a "${" that still has a closing brace is not a valid form. */
static bool check_leftover(struct work *w)
{
	for (size_t i = 0; i + 1 < w->n; i++) {
		size_t j;

		if (!is_lit(&w->e[i], '$') || !is_lit(&w->e[i + 1], '{'))
			continue;
		for (j = i + 2; j < w->n && !is_lit(&w->e[j], '}'); j++)
			;
		if (j < w->n)
			return fail(w, w->e[i].src, w->e[j].src + 1 - w->e[i].src,
				    "invalid variable reference: use ${NAME} or ${NAME:-default}");
	}
	return true;
}

static void work_free(struct work *w)
{
	for (size_t i = 0; i < w->n_values; i++)
		free(w->values[i]);
	free(w->values);
	free(w->e);
}

char *policy_subst(const char *in, size_t len, policy_lookup_fn lookup, void *ctx, size_t **map,
		   struct policy_subst_error *err)
{
	struct work w = { .lookup = lookup, .ctx = ctx, .err = err };
	char *res = NULL;
	size_t *m = NULL;
	int pass;

	if (map)
		*map = NULL;
	*err = (struct policy_subst_error){ 0 };
	w.e = malloc((len + 1) * sizeof(*w.e));
	/* A replacement turns at least four elements into one: at most len/3 markers. */
	w.values = calloc(len / 3 + 1, sizeof(*w.values));
	if (!w.e || !w.values) {
		fail(&w, 0, 0, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < len; i++)
		w.e[i] = (struct elem){ .src = i, .val = -1, .ch = in[i] };
	w.n = len;
	for (pass = 0;; pass++) {
		long r;

		if (pass == SUBST_MAX_PASSES) {
			fail(&w, 0, 0, "variable references nested more than 32 levels deep");
			goto cleanup;
		}
		r = one_pass(&w);
		if (r < 0)
			goto cleanup;
		if (r == 0)
			break;
	}
	if (!check_leftover(&w))
		goto cleanup;
	if (map) {
		size_t out_len = 0;

		for (size_t i = 0; i < w.n; i++)
			out_len += elem_len(&w, &w.e[i]);
		m = malloc((out_len + 1) * sizeof(*m));
		if (!m) {
			fail(&w, 0, 0, "out of memory");
			goto cleanup;
		}
		m[out_len] = len;
	}
	res = restore(&w, 0, w.n, m);
	if (res && map) {
		*map = m;
		m = NULL;
	}
cleanup:
	free(m);
	work_free(&w);
	return res;
}

const char *policy_envp_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	/* A name holding '=' can never be a variable; envp would match it wrongly. */
	if (!envp || n == 0 || strchr(name, '='))
		return NULL;
	for (; *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

const char *policy_envp_lookup(void *envp, const char *name)
{
	return policy_envp_get(envp, name);
}
