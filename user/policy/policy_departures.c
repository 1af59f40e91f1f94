/* SPDX-License-Identifier: MIT */
/*
 * The deliberate departures from py-sandboxes a policy line can meet (docs/policy.md,
 * "Differences from py-sandboxes"), found so that `pysb-bpf check` can name each line:
 *
 * - python-api and exec: the kernel cannot tell which Python function makes an execve, so
 *   a function rule decides for every program (ALLOW:subprocess.run allows os.system's
 *   exec too, and a DENY of one function leaves execve allowed for the others);
 * - a file (not a directory) in expose-ro/expose-rw, which py-sandboxes' wiki documents
 *   and its code refuses;
 * - python-api=...:_ctypes.dlopen, accepted although the registry we read lacks it;
 * - eval-syntax= ast node names of one Python version only, which py-sandboxes accepts or
 *   refuses depending on the interpreter it runs.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy_api.h"
#include "policy_departures.h"
#include "policy_eval.h"

struct acc {
	struct policy_departure *d;
	size_t n;
	bool oom;
};

__attribute__((format(printf, 3, 4))) static void add(struct acc *a, const struct policy_src *src,
						      const char *fmt, ...)
{
	struct policy_departure *d;
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	d = msg ? realloc(a->d, (a->n + 1) * sizeof(*d)) : NULL;
	if (!d) {
		free(msg);
		a->oom = true;
		return;
	}
	a->d = d;
	a->d[a->n++] = (struct policy_departure){ .src = *src, .msg = msg };
}

/* Does the comma list after "ACTION:" hold the target `t`? */
static bool names(const char *v, const char *t)
{
	const char *s = strchr(v, ':');
	size_t n = strlen(t);

	for (s = s ? s + 1 : v; *s;) {
		s += strspn(s, " \t");
		if (!strncmp(s, t, n) && (!s[n] || strchr(" \t,", s[n])))
			return true;
		s += strcspn(s, ",");
		s += *s == ',';
	}
	return false;
}

static void api_departures(const struct policy *p, struct acc *a)
{
	struct policy_src by = { 0 };
	const bool exec = policy_api_exec(p, &by);

	for (size_t i = 0; i < p->n_python; i++) {
		const struct policy_kv *kv = &p->python[i];
		const bool deny = !strncmp(kv->value + strspn(kv->value, " \t"), "DENY", 4);
		const char *f;

		if (strcmp(kv->key, "python-api"))
			continue;
		if (names(kv->value, "_ctypes.dlopen"))
			add(a, &kv->src,
			    "python-api=%s: _ctypes.dlopen is accepted although the py-sandboxes "
			    "registry pysb-bpf follows does not list it (py-sandboxes' own learning "
			    "wrote it into its samples); an older py-sandboxes refuses the line",
			    kv->value);
		f = policy_api_exec_function(kv->value);
		if (!f)
			continue;
		if (!deny && exec && by.file && by.file == kv->src.file && by.line == kv->src.line)
			add(a, &kv->src,
			    "python-api=%s: py-sandboxes allows %s only, but the kernel cannot tell "
			    "which Python function calls execve: every program with exec access "
			    "(expose-ro/expose-rw) may now be executed, from any function or native "
			    "code",
			    kv->value, f);
		else if (deny && exec)
			add(a, &kv->src,
			    "python-api=%s: only the Python layer refuses %s; the kernel still allows "
			    "execve, which %s:%u allows for another function",
			    kv->value, f, by.file ? by.file : "?", by.line);
	}
}

static void eval_departures(const struct policy *p, struct acc *a)
{
	for (size_t i = 0; i < p->n_python; i++) {
		const struct policy_kv *kv = &p->python[i];
		const char *note, *tok;

		if (strncmp(kv->key, "eval-syntax", 11) || (kv->key[11] && kv->key[11] != ':'))
			continue;
		tok = policy_eval_versioned(kv->value, &note);
		if (tok)
			add(a, &kv->src,
			    "%s=%s: the ast node '%s' exists on %s only; py-sandboxes refuses the "
			    "line on another Python, pysb-bpf accepts it everywhere",
			    kv->key, kv->value, tok, note);
	}
}

static void file_departures(const struct policy *p, struct acc *a)
{
	for (size_t i = 0; i < p->n_paths; i++) {
		const struct policy_path *pp = &p->paths[i];
		struct stat st;

		if (stat(pp->path, &st) || S_ISDIR(st.st_mode))
			continue;
		add(a, &pp->src,
		    "%s=%s names a file, not a directory: py-sandboxes' code refuses it (its "
		    "wiki documents it); pysb-bpf grants that file alone",
		    pp->access == POLICY_RW ? "expose-rw" : "expose-ro", pp->spelled);
	}
}

int policy_departures(const struct policy *p, struct policy_departure **out, size_t *n)
{
	struct acc a = { 0 };

	api_departures(p, &a);
	eval_departures(p, &a);
	file_departures(p, &a);
	if (a.oom) {
		policy_departures_free(a.d, a.n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	*out = a.d;
	*n = a.n;
	return 0;
}

void policy_departures_free(struct policy_departure *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(d[i].msg);
	free(d);
}
