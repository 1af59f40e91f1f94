/* SPDX-License-Identifier: MIT */
/*
 * python-api= as py-sandboxes' guard_api reads it: the registry of sensitive functions by
 * category, the syntax checks of each line, and the resolution that decides the kernel's
 * exec verdict (docs/policy.md, "python-api= and exec").
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy_api.h"

enum {
	API_EXEC = 1,	 /* process-exec entry that starts a program on Linux */
	API_WINDOWS = 2, /* only exists on Windows: never decides anything here */
};

struct api_fn {
	const char *name;
	const char *category;
	unsigned flags;
};

#define EXEC(n)                             \
	{                                   \
		n, "process-exec", API_EXEC \
	}
#define FORK(n)                      \
	{                            \
		n, "process-exec", 0 \
	}
#define WIN(n, c)                 \
	{                         \
		n, c, API_WINDOWS \
	}

/*
 * py-sandboxes' registry of sensitive functions (guard_api.SENSITIVE_API, newest version
 * read). A target outside it is an error there, so here too. `_ctypes.dlopen` is not in the
 * registry we read, but py-sandboxes' own learning wrote it into its strands-agents sample
 * (learning only writes registered names): a newer registry has it.
 */
static const struct api_fn REGISTRY[] = {
	EXEC("os.system"),
	EXEC("posix.system"),
	EXEC("os.popen"),
	EXEC("os.execv"),
	EXEC("posix.execv"),
	EXEC("os.execve"),
	EXEC("posix.execve"),
	EXEC("os.execl"),
	EXEC("os.execle"),
	EXEC("os.execlp"),
	EXEC("os.execlpe"),
	EXEC("os.execvp"),
	EXEC("os.execvpe"),
	EXEC("os.spawnv"),
	EXEC("os.spawnve"),
	EXEC("os.spawnvp"),
	EXEC("os.spawnvpe"),
	EXEC("os.spawnl"),
	EXEC("os.spawnle"),
	EXEC("os.spawnlp"),
	EXEC("os.spawnlpe"),
	EXEC("os.posix_spawn"),
	EXEC("posix.posix_spawn"),
	EXEC("os.posix_spawnp"),
	EXEC("posix.posix_spawnp"),
	FORK("os.fork"),
	FORK("posix.fork"),
	FORK("os.forkpty"),
	FORK("posix.forkpty"),
	EXEC("subprocess.Popen"),
	EXEC("subprocess.run"),
	EXEC("subprocess.call"),
	EXEC("subprocess.check_call"),
	EXEC("subprocess.check_output"),
	EXEC("subprocess.getoutput"),
	EXEC("subprocess.getstatusoutput"),
	EXEC("_posixsubprocess.fork_exec"),
	EXEC("pty.spawn"),
	FORK("pty.fork"),
	/* the spawn and forkserver start methods exec a new interpreter */
	EXEC("multiprocessing.Process.start"),
	WIN("nt.system", "process-exec"),
	WIN("nt.execv", "process-exec"),
	WIN("nt.execve", "process-exec"),
	WIN("nt.spawnv", "process-exec"),
	WIN("nt.spawnve", "process-exec"),
	WIN("os.startfile", "process-exec"),
	WIN("nt.startfile", "process-exec"),
	WIN("_winapi.CreateProcess", "process-exec"),

	{ "os.kill", "process-control", 0 },
	{ "posix.kill", "process-control", 0 },
	{ "os.killpg", "process-control", 0 },
	{ "posix.killpg", "process-control", 0 },
	{ "os.nice", "process-control", 0 },
	{ "posix.nice", "process-control", 0 },
	{ "os.setpriority", "process-control", 0 },
	{ "posix.setpriority", "process-control", 0 },
	{ "os.abort", "process-control", 0 },
	{ "posix.abort", "process-control", 0 },
	{ "os.setsid", "process-control", 0 },
	{ "posix.setsid", "process-control", 0 },
	{ "os.setpgid", "process-control", 0 },
	{ "posix.setpgid", "process-control", 0 },
	{ "os.setpgrp", "process-control", 0 },
	{ "posix.setpgrp", "process-control", 0 },
	{ "signal.alarm", "process-control", 0 },
	{ "_signal.alarm", "process-control", 0 },
	{ "signal.setitimer", "process-control", 0 },
	{ "_signal.setitimer", "process-control", 0 },
	{ "signal.raise_signal", "process-control", 0 },
	{ "_signal.raise_signal", "process-control", 0 },
	{ "signal.pthread_kill", "process-control", 0 },
	{ "_signal.pthread_kill", "process-control", 0 },
	{ "resource.setrlimit", "process-control", 0 },
	{ "resource.prlimit", "process-control", 0 },
	WIN("nt.kill", "process-control"),
	WIN("nt.abort", "process-control"),

	{ "os.setuid", "privileges", 0 },
	{ "posix.setuid", "privileges", 0 },
	{ "os.setgid", "privileges", 0 },
	{ "posix.setgid", "privileges", 0 },
	{ "os.seteuid", "privileges", 0 },
	{ "posix.seteuid", "privileges", 0 },
	{ "os.setegid", "privileges", 0 },
	{ "posix.setegid", "privileges", 0 },
	{ "os.setreuid", "privileges", 0 },
	{ "posix.setreuid", "privileges", 0 },
	{ "os.setregid", "privileges", 0 },
	{ "posix.setregid", "privileges", 0 },
	{ "os.setgroups", "privileges", 0 },
	{ "posix.setgroups", "privileges", 0 },
	{ "os.umask", "privileges", 0 },
	{ "posix.umask", "privileges", 0 },
	WIN("nt.umask", "privileges"),

	{ "_thread.start_new_thread", "threads", 0 },
	{ "_thread.start_new", "threads", 0 },
	{ "_thread.start_joinable_thread", "threads", 0 },
	{ "threading._start_joinable_thread", "threads", 0 },
	{ "threading._start_new_thread", "threads", 0 },
	{ "threading.Thread.start", "threads", 0 },
	{ "_thread.interrupt_main", "threads", 0 },
	{ "threading.settrace", "threads", 0 },
	{ "threading.setprofile", "threads", 0 },
	{ "threading.stack_size", "threads", 0 },
	{ "_thread.stack_size", "threads", 0 },

	{ "ctypes.CDLL", "native", 0 },
	{ "ctypes.cast", "native", 0 },
	{ "ctypes.string_at", "native", 0 },
	{ "_ctypes.dlopen", "native", 0 },

	{ "importlib.reload", "introspection", 0 },
	{ "sys._getframe", "introspection", 0 },
	{ "sys._getframemodulename", "introspection", 0 },
	{ "sys._current_frames", "introspection", 0 },
	{ "sys._current_exceptions", "introspection", 0 },
	{ "sys.settrace", "introspection", 0 },
	{ "sys.setprofile", "introspection", 0 },
	{ "sys.addaudithook", "introspection", 0 },
	{ "gc.get_objects", "introspection", 0 },
	{ "gc.get_referrers", "introspection", 0 },
	{ "gc.get_referents", "introspection", 0 },
	{ "inspect.currentframe", "introspection", 0 },
	{ "inspect.stack", "introspection", 0 },
	{ "inspect.trace", "introspection", 0 },
	{ "faulthandler.enable", "introspection", 0 },

	{ "builtins.eval", "dynamic-code", 0 },
	{ "builtins.exec", "dynamic-code", 0 },
	{ "builtins.compile", "dynamic-code", 0 },

	{ "pickle.loads", "deserialization", 0 },
	{ "pickle.load", "deserialization", 0 },
	{ "_pickle.loads", "deserialization", 0 },
	{ "_pickle.load", "deserialization", 0 },
};
#define N_REGISTRY (sizeof(REGISTRY) / sizeof(REGISTRY[0]))

/* Sorted, as py-sandboxes lists them in its message. */
static const char *const CATEGORIES[] = {
	"deserialization", "dynamic-code",    "introspection", "native",
	"privileges",	   "process-control", "process-exec",  "threads",
};
#define N_CATEGORIES (sizeof(CATEGORIES) / sizeof(CATEGORIES[0]))
#define CATEGORY_LIST                                                                         \
	"deserialization, dynamic-code, introspection, native, privileges, process-control, " \
	"process-exec, threads"

/* Is `name` a category of the registry (case-sensitive)? */
static bool policy_api_is_category(const char *name)
{
	for (size_t i = 0; i < N_CATEGORIES; i++)
		if (!strcmp(CATEGORIES[i], name))
			return true;
	return false;
}

static const struct api_fn *find_fn(const char *name)
{
	for (size_t i = 0; i < N_REGISTRY; i++)
		if (!strcmp(REGISTRY[i].name, name))
			return &REGISTRY[i];
	return NULL;
}

/* The registered name closest to a mistyped one (case first, then up to 2 edits). */
static const char *closest(const char *name, bool category)
{
	const char *best = NULL;
	unsigned best_d = 3;
	size_t n = category ? N_CATEGORIES : N_REGISTRY;

	for (size_t i = 0; i < n; i++) {
		const char *c = category ? CATEGORIES[i] : REGISTRY[i].name;
		unsigned d = strcasecmp(c, name) == 0 ? 0 : policy_edit_distance(c, name);

		if (d < best_d) {
			best = c;
			best_d = d;
		}
	}
	return best;
}

/* Python's str.strip() of the blanks a policy line can hold. */
static void strip(const char **s, size_t *n)
{
	while (*n && strchr(" \t\v\f", **s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && strchr(" \t\v\f", (*s)[*n - 1]))
		(*n)--;
}

/* One target of a line, as guard_api.parse_rules() judges it. */
static char *target_error(const char *t, size_t n)
{
	char *name = strndup(t, n), *msg = NULL;
	const char *hint;
	bool category;

	if (!name)
		return NULL;
	category = !strchr(name, '.');
	if (!strcasecmp(name, "ALLOW") || !strcasecmp(name, "DENY") || strchr(name, ':')) {
		msg = strdup("one action per line: do not mix ALLOW and DENY; write a second "
			     "python-api= line");
	} else if (!strcmp(name, "*") || (category && policy_api_is_category(name)) ||
		   (!category && find_fn(name))) {
		/* valid */
	} else if (category) {
		hint = closest(name, true);
		if (asprintf(&msg,
			     "unknown category '%.60s'%s%s%s: expected one of " CATEGORY_LIST
			     " (case-sensitive), a registered function or *",
			     name, hint ? " (did you mean '" : "", hint ? hint : "",
			     hint ? "'?)" : "") < 0)
			msg = NULL;
	} else {
		hint = closest(name, false);
		if (asprintf(&msg,
			     "'%.80s' is not a registered sensitive function%s%s%s: "
			     "py-sandboxes guards a fixed list (docs/policy.md)",
			     name, hint ? " (did you mean '" : "", hint ? hint : "",
			     hint ? "'?)" : "") < 0)
			msg = NULL;
	}
	free(name);
	return msg;
}

char *policy_api_error(const char *v, size_t *off)
{
	const char *colon = strchr(v, ':'), *a = v, *t;
	size_t an = colon ? (size_t)(colon - v) : 0;
	char *msg = NULL;

	*off = 0;
	if (!colon)
		return strdup("expected ALLOW:<target> or DENY:<target>, a target being a "
			      "category, a registered function or *");
	strip(&a, &an);
	if (!(an == 5 && !strncmp(a, "ALLOW", 5)) && !(an == 4 && !strncmp(a, "DENY", 4))) {
		*off = (size_t)(a - v);
		if (asprintf(&msg, "unknown action '%.*s': expected ALLOW or DENY (upper case)",
			     (int)(an > 40 ? 40 : an), a) < 0)
			msg = NULL;
		return msg ? msg : strdup("unknown action");
	}
	for (t = colon + 1;; t++) {
		size_t n = strcspn(t, ",");
		const char *s = t;
		size_t sn = n;

		strip(&s, &sn);
		*off = (size_t)(s - v);
		if (!sn)
			return strdup("empty target: each comma-separated item must name a "
				      "category, a registered function or *");
		msg = target_error(s, sn);
		if (msg)
			return msg;
		t += n;
		if (!*t)
			return NULL;
	}
}

/* ---------------- resolution */

/* What the rules of one specificity level say about a target. */
struct verdict {
	bool said;
	bool allow;	       /* every rule at that level allows (DENY wins) */
	struct policy_src src; /* first DENY line, else first ALLOW line */
};

static void fold(struct verdict *v, bool allow, const struct policy_src *src)
{
	if (!v->said || (v->allow && !allow))
		v->src = *src;
	v->allow = v->said ? v->allow && allow : allow;
	v->said = true;
}

/* Calls fn(ctx, allow, target, len, src) for every target of every python-api line. */
static void each_target(const struct policy *p,
			void (*fn)(void *, bool, const char *, size_t, const struct policy_src *),
			void *ctx)
{
	for (size_t i = 0; i < p->n_python; i++) {
		const char *v = p->python[i].value, *colon = strchr(v, ':'), *a = v;
		size_t an = colon ? (size_t)(colon - v) : 0;
		bool allow;

		if (strcmp(p->python[i].key, "python-api") || !colon)
			continue;
		strip(&a, &an);
		allow = an == 5 && !strncmp(a, "ALLOW", 5);
		for (const char *t = colon + 1;;) {
			size_t n = strcspn(t, ",");
			const char *s = t;
			size_t sn = n;

			strip(&s, &sn);
			fn(ctx, allow, s, sn, &p->python[i].src);
			t += n;
			if (!*t++)
				break;
		}
	}
}

struct exec_ctx {
	struct verdict star, cat;
	struct verdict fn[N_REGISTRY];
};

static void exec_collect(void *ctx, bool allow, const char *t, size_t n,
			 const struct policy_src *src)
{
	struct exec_ctx *c = ctx;

	if (n == 1 && *t == '*') {
		fold(&c->star, allow, src);
	} else if (n == 12 && !strncmp(t, "process-exec", 12)) {
		fold(&c->cat, allow, src);
	} else {
		for (size_t i = 0; i < N_REGISTRY; i++)
			if (strlen(REGISTRY[i].name) == n && !strncmp(REGISTRY[i].name, t, n))
				fold(&c->fn[i], allow, src);
	}
}

bool policy_api_exec(const struct policy *p, struct policy_src *src)
{
	struct exec_ctx c = { 0 };
	const struct verdict *level, *first_said = NULL;

	each_target(p, exec_collect, &c);
	/* the category's own verdict: its rules, else the wildcard's */
	level = c.cat.said ? &c.cat : &c.star;
	for (size_t i = 0; i < N_REGISTRY; i++) {
		const struct verdict *v;

		if (!(REGISTRY[i].flags & API_EXEC))
			continue;
		v = c.fn[i].said ? &c.fn[i] : level;
		if (v->said && v->allow) {
			if (src)
				*src = v->src;
			return true;
		}
		if (v->said && !first_said)
			first_said = v;
	}
	/* denied: name the category-level denial when there is one */
	if (src && level->said && !level->allow)
		*src = level->src;
	else if (src && first_said)
		*src = first_said->src;
	return false;
}

const char *policy_api_exec_function(const char *v)
{
	const char *t = strchr(v, ':');

	for (t = t ? t + 1 : v;;) {
		size_t n = strcspn(t, ",");
		const char *s = t;
		size_t sn = n;

		strip(&s, &sn);
		for (size_t i = 0; i < N_REGISTRY; i++)
			if ((REGISTRY[i].flags & API_EXEC) && strlen(REGISTRY[i].name) == sn &&
			    !strncmp(REGISTRY[i].name, s, sn))
				return REGISTRY[i].name;
		t += n;
		if (!*t++)
			return NULL;
	}
}
