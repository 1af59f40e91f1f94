/* SPDX-License-Identifier: MIT */
/*
 * ignore= rules for the kernel. py-sandboxes matches a relative pattern against each name
 * (fnmatch); the BPF side knows four shapes of it: NAME, PREFIX*, *SUFFIX and *, each
 * at most PYSB_IGNORE_LEN - 1 bytes, PYSB_MAX_IGNORES of them. An absolute pattern is
 * expanded with glob(3) when the policy is loaded, and every match becomes a rule that
 * grants nothing (files created later under that pattern are not hidden: docs/policy.md).
 * Any other pattern is refused, with its line: a hidden file must never silently show.
 */
#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile.h"

/* why: what is wrong; hint (or NULL): what to write instead. */
static int refuse(const struct policy_ignore *ig, const char *why, const char *hint,
		  struct diag_list *d)
{
	return diag_add(d, DIAG_ERROR, src_at(&ig->src), hint, "ignore=%s: %s", ig->glob, why);
}

static int add_relative(const struct policy_ignore *ig, struct pysb_ignore_set *set,
			struct diag_list *d)
{
	const char *g = ig->glob;
	size_t len = strlen(g);
	struct pysb_ignore *p;
	const char *text = g;
	size_t tlen = len;
	int kind;

	if (strpbrk(g, "?[]\\"))
		return refuse(ig,
			      "the kernel layer matches NAME, PREFIX*, *SUFFIX and * only; "
			      "'?', '[...]' and escapes are not supported",
			      NULL, d);
	if (!strcmp(g, "*")) {
		kind = PYSB_IGN_ANY;
		tlen = 0;
	} else if (!strchr(g, '*')) {
		kind = PYSB_IGN_EXACT;
	} else if (g[len - 1] == '*' && !memchr(g, '*', len - 1)) {
		kind = PYSB_IGN_PREFIX;
		tlen = len - 1;
	} else if (g[0] == '*' && !strchr(g + 1, '*')) {
		kind = PYSB_IGN_SUFFIX;
		text = g + 1;
		tlen = len - 1;
	} else {
		return refuse(ig,
			      "the kernel layer matches NAME, PREFIX*, *SUFFIX and * only "
			      "(one '*', at an end)",
			      "split the pattern into several ignore= lines", d);
	}
	if (tlen >= PYSB_IGNORE_LEN)
		return refuse(ig, "pattern longer than the kernel layer's 31 bytes", NULL, d);
	if (set->count == PYSB_MAX_IGNORES)
		return refuse(ig, "more than 8 name patterns; the kernel layer holds 8 per policy",
			      NULL, d);
	p = &set->p[set->count++];
	p->kind = kind;
	p->len = tlen;
	memcpy(p->text, text, tlen);
	return 0;
}

static int add_absolute(const struct policy_ignore *ig, struct compiled *out, size_t *cap,
			struct diag_list *d)
{
	glob_t gl;
	int ret = 0, r;

	r = glob(ig->glob, GLOB_NOSORT, NULL, &gl);
	if (r == GLOB_NOMATCH)
		return 0;
	if (r)
		return refuse(ig, "cannot expand the pattern", NULL, d);
	for (size_t i = 0; i < gl.gl_pathc && !ret; i++) {
		struct stat st;
		struct compiled_hidden *h;

		if (lstat(gl.gl_pathv[i], &st) || stat_kernel(gl.gl_pathv[i], &st, NULL))
			continue;
		if (out->n_hidden == *cap) {
			size_t ncap = *cap ? *cap * 2 : 16;
			struct compiled_hidden *v = realloc(out->hidden, ncap * sizeof(*v));

			if (!v) {
				ret = -1;
				break;
			}
			out->hidden = v;
			*cap = ncap;
		}
		h = &out->hidden[out->n_hidden];
		h->path = strdup(gl.gl_pathv[i]);
		if (!h->path) {
			ret = -1;
			break;
		}
		h->ino = st.st_ino;
		h->dev = kernel_dev(st.st_dev);
		h->src = ig->src;
		out->n_hidden++;
	}
	globfree(&gl);
	return ret;
}

int compile_ignores(const struct policy *p, struct compiled *out, struct diag_list *d)
{
	size_t cap = 0;
	int ret = 0;

	for (size_t i = 0; i < p->n_ignores && !ret; i++) {
		const struct policy_ignore *ig = &p->ignores[i];

		if (ig->glob[0] == '/')
			ret = add_absolute(ig, out, &cap, d);
		else if (strchr(ig->glob, '/'))
			ret = refuse(ig,
				     "a relative pattern is matched against each name and cannot "
				     "hold a '/'",
				     "write it as an absolute path", d);
		else
			ret = add_relative(ig, &out->ignores, d);
	}
	return ret;
}

void compiled_hidden_free(struct compiled *c)
{
	for (size_t i = 0; i < c->n_hidden; i++)
		free(c->hidden[i].path);
	free(c->hidden);
	c->hidden = NULL;
	c->n_hidden = 0;
}
