/* SPDX-License-Identifier: MIT */
/*
 * The parser's own header, private to user/policy/: its state (struct parser), one line
 * (struct line), the key table's types, and the functions its files share. The public
 * interface is policy.h.
 */
#ifndef PYSB_POLICY_PARSER_H
#define PYSB_POLICY_PARSER_H

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "policy_api.h"
#include "policy_eval.h"
#include "strindex.h"
#include "untampered.h"
#include "utf8.h"

#define MAX_FILE	  (16 * 1024 * 1024)
#define MAX_INCLUDE_DEPTH 32
/* Enough to fix a file in one go; a binary file would otherwise yield one error per line. */
#define MAX_ERRORS	  1000
#define TEXT_DISPLAY	  120
#define CMDLINE_FILE	  "<command line>"

struct dir_cache {
	char *dir;   /* absolute, as spelled (no "." or ".." component) */
	char *canon; /* its realpath */
	/* Listed on the second lookup in it: the sorted names of its entries known not to
	 * be symbolic links (d_type), so siblings need no lstat(2) at all. */
	char **names;
	size_t n_names;
	unsigned lookups;
};
#define DIR_LIST_MAX 65536 /* a larger directory is not listed (lstat each name instead) */

struct parser {
	struct policy *p;
	struct diag_list *diag;
	char *const *envp;
	char *cwd;
	char **visited; /* realpath of every file loaded: each is read once */
	size_t n_visited;
	unsigned depth;
	size_t first_error; /* diag->n_errors when this parse started */
	size_t n_overrides;
	/* canonical path -> index + 1 in p->paths (0: empty slot), open addressing, so the
	 * duplicate check of each expose rule is O(1), not a scan of all the rules before it */
	struct str_index path_index; /* of p->paths, by canonical path */
	struct dir_cache *dirs;	     /* canonical forms of the directories holding exposed paths */
	size_t n_dirs, dirs_size;
	bool full; /* MAX_ERRORS reached: stop reading */
	bool oom;
	unsigned rules, templates; /* lines read as rules, and "{" template lines */
};

struct line {
	const char *file; /* display name, owned by policy->files */
	const char *dir;  /* where a bare include name is looked for */
	unsigned no;
	const char *raw; /* the physical line, no terminator */
	size_t raw_len;
	size_t lead; /* offset in raw of text[0] */
	char *text;  /* stripped, comment removed; substituted once dispatched */
	size_t *map; /* substituted offset -> offset in the unsubstituted text; NULL: identity */
};

enum vkind {
	V_PATH,
	V_IGNORE,
	V_NET,
	V_IMPORT,
	V_API,
	V_EVAL_LIST,
	V_EVAL_SYNTAX,
	V_EVAL_NS,
	V_DURATION,
	V_COUNT,
	V_SIZE,
	V_BOOL,
	V_RESULT_MODE,
	V_OS,
	V_LEARN,
	V_PORT,
};

struct keydef {
	const char *key;
	enum vkind kind;
	int arg;
};

/* text.c */
void *vec_push(void *arrp, size_t *n, size_t size);
bool starts_with(const char *s, const char *prefix);
size_t lstrip_len(const char *s, size_t n);
size_t rstrip_len(const char *s, size_t n);
char *trim(char *s, size_t *skip);
void vreport(struct parser *ps, bool warning, const struct line *ln, unsigned col, const char *fmt,
	     va_list ap);
unsigned line_col(const struct line *ln, size_t off);
__attribute__((format(printf, 4, 5))) void lerror(struct parser *ps, const struct line *ln,
						  size_t off, const char *fmt, ...);
__attribute__((format(printf, 4, 5))) void lwarn(struct parser *ps, const struct line *ln,
						 size_t off, const char *fmt, ...);
__attribute__((format(printf, 3, 4))) void kv_error(struct parser *ps, const struct policy_kv *kv,
						    const char *fmt, ...);

/* paths.c */
const char *read_error(int err);
int read_whole(const char *path, char **buf, size_t *len);
char *join_path(const char *dir, const char *rel);
char *abs_path(const struct parser *ps, const char *s);
/* "/a//b/./c" -> "/a/b/c"; NULL when a component is "..", or the path ends with "/" or
 * "/." (those need realpath's own rules), or out of memory. */
char *clean_abs(const char *abs);
char *dir_of(const char *abs);
void free_names(char **names, size_t n);
char *canonical_path(struct parser *ps, const char *abs);
char *expand_tilde(const struct parser *ps, const char *s);

/* keys.c */
struct policy_src line_src(const struct line *ln, size_t off);
bool in_list(const char *v, const char *const *list);
bool is_learn_lock(const struct policy_kv *kv);
void on_dashdash(struct parser *ps, struct line *ln);
bool on_legacy_key(struct parser *ps, struct line *ln);
void dispatch(struct parser *ps, struct line *ln);

/* rules.c */
void on_expose(struct parser *ps, struct line *ln, const struct keydef *kd, const char *key,
	       size_t voff);
void on_ignore(struct parser *ps, struct line *ln, const struct keydef *kd, const char *key,
	       size_t voff);
void net_free(struct policy_net *n);
void on_net(struct parser *ps, struct line *ln, const struct keydef *kd, const char *key,
	    size_t voff);

/* include.c */
bool substitute_line(struct parser *ps, struct line *ln);
void on_env(struct parser *ps, struct line *ln);
bool mark_visited(struct parser *ps, const char *canon);
const char *add_file(struct parser *ps, const char *name);
bool is_include(const char *t);
void on_include(struct parser *ps, struct line *ln);

/* policy.c */
void parse_text(struct parser *ps, const char *file, const char *dir, const char *buf, size_t len);

#endif
