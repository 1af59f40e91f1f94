/* SPDX-License-Identifier: MIT */
/*
 * Compares two parsed policies rule by rule, after normalisation: expose paths by their
 * canonical path (so `./data` and `/home/u/proj/data` are one rule), net= rules with
 * every field spelt out. What a learned candidate adds to a profile is then exactly the
 * "+" lines (docs/faq.md, "Learning from a test suite").
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "diff.h"
#include "policy.h"

struct rule {
	char *text;
	const struct policy_src *src;
};

struct rules {
	struct rule *v;
	size_t n, cap;
	bool oom;
};

static void add(struct rules *r, const struct policy_src *src, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(struct rules *r, const struct policy_src *src, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct rule *v = realloc(r->v, cap * sizeof(*v));

		if (!v) {
			r->oom = true;
			return;
		}
		r->v = v;
		r->cap = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		r->oom = true;
	} else {
		r->v[r->n].text = s;
		r->v[r->n++].src = src;
	}
	va_end(ap);
}

static void net_text(struct rules *r, const struct policy_net *n)
{
	char ports[512] = "";
	size_t off = 0;

	for (size_t i = 0; i < n->n_ports && off < sizeof(ports); i++) {
		const struct policy_port_range *p = &n->ports[i];

		off += (size_t)snprintf(ports + off, sizeof(ports) - off, "%s", i ? "," : "");
		if (off >= sizeof(ports))
			break;
		if (p->lo == 0 && p->hi == 65535)
			off += (size_t)snprintf(ports + off, sizeof(ports) - off, "*");
		else if (p->lo == p->hi)
			off += (size_t)snprintf(ports + off, sizeof(ports) - off, "%u", p->lo);
		else
			off += (size_t)snprintf(ports + off, sizeof(ports) - off, "%u-%u", p->lo,
						p->hi);
	}
	add(r, &n->src, "net=%s|%s|%s|%s|%s", n->deny ? "DENY" : "ALLOW",
	    n->protos == (POLICY_PROTO_TCP | POLICY_PROTO_UDP) ? "*"
	    : n->protos & POLICY_PROTO_TCP		       ? "TCP"
							       : "UDP",
	    n->network, ports,
	    n->dirs == (POLICY_DIR_IN | POLICY_DIR_OUT) ? "*"
	    : n->dirs & POLICY_DIR_IN			? "IN"
							: "OUT");
}

static void collect(const struct policy *p, struct rules *r)
{
	for (size_t i = 0; i < p->n_paths; i++)
		add(r, &p->paths[i].src, "expose-%s=%s",
		    p->paths[i].access == POLICY_RW ? "rw" : "ro", p->paths[i].path);
	for (size_t i = 0; i < p->n_ignores; i++)
		add(r, &p->ignores[i].src, "ignore=%s", p->ignores[i].glob);
	for (size_t i = 0; i < p->n_nets; i++)
		net_text(r, &p->nets[i]);
	for (size_t i = 0; i < p->n_envs; i++) {
		if (p->envs[i].unset)
			add(r, &p->envs[i].src, "unenv=%s", p->envs[i].name);
		else
			add(r, &p->envs[i].src, "env=%s=%s", p->envs[i].name, p->envs[i].value);
	}
	for (size_t i = 0; i < p->n_python; i++)
		add(r, &p->python[i].src, "%s=%s", p->python[i].key, p->python[i].value);
	for (size_t i = 0; i < p->n_params; i++)
		add(r, &p->params[i].src, "%s=%s", p->params[i].key, p->params[i].value);
}

static bool has(const struct rules *r, const char *text)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].text, text))
			return true;
	return false;
}

static int print_missing(FILE *out, char sign, const struct rules *from, const struct rules *in)
{
	int n = 0;

	for (size_t i = 0; i < from->n; i++) {
		const struct policy_src *s = from->v[i].src;

		if (has(in, from->v[i].text))
			continue;
		fprintf(out, "%c %s  (%s:%u)\n", sign, from->v[i].text, s->file ? s->file : "?",
			s->line);
		n++;
	}
	return n;
}

static void rules_free(struct rules *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].text);
	free(r->v);
}

int policy_diff_print(FILE *out, const struct policy *a, const struct policy *b)
{
	struct rules ra = { 0 }, rb = { 0 };
	int added, removed, ret = -1;

	collect(a, &ra);
	collect(b, &rb);
	if (ra.oom || rb.oom)
		goto out;
	added = print_missing(out, '+', &rb, &ra);
	removed = print_missing(out, '-', &ra, &rb);
	fprintf(out, "%d rule%s added, %d removed\n", added, added == 1 ? "" : "s", removed);
	ret = added + removed;
out:
	rules_free(&ra);
	rules_free(&rb);
	return ret;
}

/* The rules of `from` not in `in`, as {"rule", "file", "line"} objects. */
static json_t *missing_json(const struct rules *from, const struct rules *in)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < from->n; i++) {
		const struct policy_src *s = from->v[i].src;

		if (has(in, from->v[i].text))
			continue;
		if (json_array_append_new(a, json_pack("{s:s, s:o, s:i}", "rule", from->v[i].text,
						       "file",
						       s->file ? json_string(s->file) : json_null(),
						       "line", (int)s->line))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

int policy_diff_json(FILE *out, const struct policy *a, const struct policy *b)
{
	struct rules ra = { 0 }, rb = { 0 };
	json_t *added = NULL, *removed = NULL, *doc = NULL;
	int ret = -1;

	collect(a, &ra);
	collect(b, &rb);
	if (ra.oom || rb.oom)
		goto out;
	added = missing_json(&rb, &ra);
	removed = missing_json(&ra, &rb);
	if (!added || !removed)
		goto out;
	ret = (int)(json_array_size(added) + json_array_size(removed));
	doc = json_pack("{s:O, s:O, s:{s:i, s:i}}", "added", added, "removed", removed, "summary",
			"added", (int)json_array_size(added), "removed",
			(int)json_array_size(removed));
	if (!doc || json_dumpf(doc, out, JSON_INDENT(2)) || fputc('\n', out) == EOF)
		ret = -1;
out:
	json_decref(doc);
	json_decref(added);
	json_decref(removed);
	rules_free(&ra);
	rules_free(&rb);
	return ret;
}
