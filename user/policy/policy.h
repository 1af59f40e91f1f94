/* SPDX-License-Identifier: MIT */
/*
 * The `.py-sandboxes` policy language: parsed form.
 *
 * policy_parse_file() reads a policy exactly as py-sandboxes' newest grammar does
 * (shared corpus FORMAT-NOTES.md): quote-aware comments, include / include?, ${VAR} and
 * ${VAR:-default} substitution, and every key family. It never returns a partial policy:
 * either *out is a complete policy and the diagnostics hold no error, or *out is NULL and
 * every error found (file:line:column, offending text, what was expected) is in diag
 * (user/lib/diag.h: diag_print() shows them as "file:line:col: error: msg", the line under).
 *
 * The parsed form keeps every rule with the place it came from, so `pysb-bpf check` can
 * say which line produced which map entry.
 */
#ifndef PYSB_POLICY_H
#define PYSB_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"

/* Longer physical lines are refused with an error (a policy line is a rule, not data). */
#define POLICY_MAX_LINE (64 * 1024)

struct policy_src {
	const char *file; /* points into policy->files[]; never freed separately */
	unsigned line;	  /* 1-based */
	unsigned col;	  /* 1-based column of the value (or of the key on key errors) */
};

enum policy_access {
	POLICY_RO = 1, /* read, list, execute */
	POLICY_RW = 2, /* RO plus every write */
};

/* expose-ro= / expose-rw= */
struct policy_path {
	char *path;    /* canonical absolute path (symlinks resolved, ~ expanded) */
	char *spelled; /* the value as written, after ${} substitution */
	char *named;   /* absolute as named: ~ expanded, made absolute, links not resolved */
	enum policy_access access;
	struct policy_src src;
};

/* ignore=GLOB (fnmatch) */
struct policy_ignore {
	char *glob;
	struct policy_src src;
};

#define POLICY_PROTO_TCP 0x1u
#define POLICY_PROTO_UDP 0x2u
#define POLICY_DIR_IN	 0x1u
#define POLICY_DIR_OUT	 0x2u

struct policy_port_range {
	uint16_t lo, hi; /* inclusive; "*" is 0-65535, "a-" is a-65535 */
};

/* net=ACTION|PROTO|NETWORK|PORTS|DIRECTION */
struct policy_net {
	bool deny;
	unsigned protos; /* POLICY_PROTO_* mask; "any"/"*" = both */
	char *network;	 /* as written after substitution: "*", address, CIDR or host name */
	struct policy_port_range *ports; /* n_ports == 0: the empty field, no port allowed */
	size_t n_ports;
	unsigned dirs; /* POLICY_DIR_* mask */
	struct policy_src src;
};

/* env=NAME=value, env=PAT*=value, unenv=NAME, unenv=PAT* (kept in file order) */
struct policy_env {
	char *name;  /* may hold '*' wildcards */
	char *value; /* raw value, NOT substituted (env values are expanded when the
			environment is built); NULL for unenv= */
	bool unset;  /* unenv= */
	struct policy_src src;
};

/* Any other key=value kept verbatim: Python-layer rules and provider parameters. */
struct policy_kv {
	char *key;   /* e.g. "python-api", "eval-max-depth", "bpf.mode", "qemu.memory" */
	char *value; /* after ${} substitution */
	struct policy_src src;
};

struct policy {
	struct policy_path *paths;
	size_t n_paths;
	struct policy_ignore *ignores;
	size_t n_ignores;
	struct policy_net *nets;
	size_t n_nets;
	struct policy_env *envs;
	size_t n_envs;
	struct policy_kv *python; /* python-import, python-api, eval-*, remote-result-*,
				     py-sandbox, os-sandbox, learn, port */
	size_t n_python;
	struct policy_kv *params; /* <provider>.<key>= lines, every provider, in order */
	size_t n_params;
	char **files; /* every file read (root first), owners of policy_src.file */
	size_t n_files;
	/* every include line: the file absolute as named (links not resolved), whether it
	 * was missing (include?), and where; compile keeps the names on its way */
	struct policy_include {
		char *named;
		bool missing;
		struct policy_src src;
	} * includes;
	size_t n_includes;
	/* the spellings of expose-*= lines dropped as duplicates of a path (as `named`) */
	char **also_named;
	size_t n_also_named;
};

/* One command-line override ("--key=value" of `pysb-bpf run`), appended after the file. */
struct policy_override {
	const char *line; /* "expose-ro=/data", "net=ALLOW|tcp|*|443|OUT", ... */
};

/*
 * Parse the policy at `path`. `envp` is the environment used for ${VAR} substitution
 * (NULL-terminated, e.g. environ). `cwd` is the directory relative paths are resolved
 * against (NULL: the process's working directory).
 * Returns 0 and sets *out, or -1 with *out = NULL and the errors in diag.
 * A missing root file is an error like any other (with a message saying how to create one).
 */
int policy_parse_file(const char *path, char *const *envp, const char *cwd,
		      const struct policy_override *overrides, size_t n_overrides,
		      struct policy **out, struct diag_list *diag);

/* Same, from a buffer named `name` (for tests and the fuzzer). */
int policy_parse_buffer(const char *name, const char *buf, size_t len, char *const *envp,
			const char *cwd, struct policy **out, struct diag_list *diag);

void policy_free(struct policy *p);

/*
 * Build the program's environment from env= / unenv= rules exactly as py-sandboxes does:
 * start empty, apply rules, substitute values against host_envp. *out is a NULL-terminated
 * malloc'ed array of malloc'ed "NAME=value" strings (free with policy_env_free).
 */
int policy_build_env(const struct policy *p, char *const *host_envp, char ***out);
void policy_env_free(char **envp);

/*
 * The policy lets the program write in the caller's TMPDIR (from host_envp) but no env=
 * line passes TMPDIR (prog_envp, policy_build_env's): Python's tempfile then writes in
 * /tmp. The warning to give, without its file:line (the rule's, in *src), malloc'ed; NULL
 * when there is nothing to say. Said by `run` before the start and listed by `check`.
 */
char *policy_tmpdir_warning(const struct policy *p, char *const *host_envp, char *const *prog_envp,
			    const struct policy_src **src);

/*
 * The caller's environment names a proxy (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, either case)
 * that no env= line passes, and a net= rule lets the program connect out (the first such
 * rule in *src): it will connect to the hosts directly, which a network that needs the
 * proxy refuses (round 32). The warning, malloc'ed; NULL when there is nothing to say.
 * Said by `run` before the start and listed by `check`, as policy_tmpdir_warning.
 */
char *policy_proxy_warning(const struct policy *p, char *const *host_envp, char *const *prog_envp,
			   const struct policy_src **src);

/* Is `path` `dir` or below it (both canonical)? */
bool policy_path_under(const char *path, const char *dir);

/* Value of the last `key=` line among p->python or p->params, or NULL. */
const char *policy_get(const struct policy *p, const char *key);

/*
 * ${VAR} substitution (user/policy/policy_subst.c), shared by the parser and policy_build_env().
 * Semantics of py-sandboxes' resolve_env_variables(): ${NAME} and ${NAME:-default}, NAME any
 * run of characters but { } : -, nested defaults resolved innermost first, substituted values
 * never re-expanded, unset without default = "", any other "${...}" is an error.
 */

/* Returns the value of `name`, or NULL when it is not set. */
typedef const char *(*policy_lookup_fn)(void *ctx, const char *name);

struct policy_subst_error {
	size_t offset;	 /* byte offset in the input of the offending reference */
	size_t len;	 /* its length in the input (0 when not tied to a reference) */
	const char *msg; /* static text: what is wrong and what was expected */
};

/*
 * Expand the `len` bytes at `in`. Returns a malloc'ed NUL-terminated string, or NULL with
 * *err set. When `map` is not NULL, *map receives a malloc'ed array of strlen(result) + 1
 * input offsets: the origin of each output byte (the '$' for substituted text), then `len`.
 */
char *policy_subst(const char *in, size_t len, policy_lookup_fn lookup, void *ctx, size_t **map,
		   struct policy_subst_error *err);

/* Lookup in a NULL-terminated "NAME=value" array; usable as policy_lookup_fn with ctx = envp. */
const char *policy_envp_get(char *const *envp, const char *name);
const char *policy_envp_lookup(void *envp, const char *name);

/* py-sandboxes' GlobPattern: '*' is the only wildcard, anchored on both ends. */
bool policy_glob_match(const char *glob, const char *s);

/* Is key a policy key (expose-ro, net, eval-timeout:llm, a provider's bpf.mode, env...)?
 * The CLI tells --KEY=VALUE policy lines from mistyped options with it. */
bool policy_key_known(const char *key);
/* The policy key `key` most likely meant, or NULL. */
const char *policy_closest_key(const char *key);
/* Edit distance of two short strings, UINT_MAX when over 2 (typo suggestions). */
unsigned policy_edit_distance(const char *a, const char *b);

#endif /* PYSB_POLICY_H */
