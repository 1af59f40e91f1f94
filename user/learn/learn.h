/* SPDX-License-Identifier: MIT */
/*
 * Learning: turns would-be denials (records of the event stream, docs/events.md) into the
 * policy lines that would have allowed them, and merges those into a `.py-sandboxes` file
 * the way py-sandboxes' learning does (tests/corpus/pysandboxes/FORMAT-NOTES.md, section 3):
 * inside the `# <learning_guard_...>` marker pairs, else at the end, under a dated
 * `# Add rules (YYYY/MM/DD at HH:MM)` header; the previous file kept as `.old`, the new one
 * written atomically; the lines added shown as a unified diff. Nothing here needs root
 * or BPF: unit-tested. Before a run, the target is checked (learn_check_target); a write
 * that fails after it saves the rules to a fallback file, so a run is never lost.
 */
#ifndef PYSB_LEARN_H
#define PYSB_LEARN_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "strindex.h"
#include "untampered.h"

/* What the records asked for. */
struct learn_path {
	char *path;	 /* the directory (or file) a rule must expose, canonical */
	uint32_t access; /* PYSB_ACC_* */
	bool dir;	 /* known to be a directory (the parent of a created entry) */
	uint8_t exact;	 /* LEARN_EXACT_*: the rule names this path itself, never its directory */
	/* opened for reading and writing, and no other write seen on it (a lock, a
	 * truncate): for a SQLite database, what sqlite3 does to read it (learn_generate) */
	bool opened_rdwr, written;
};

/* Paths only a rule naming them grants (learn_path.exact); the first two are written
 * commented out (the user's decision, not learning's). */
enum {
	LEARN_EXACT_SOCKET = 1, /* a unix socket of a server outside the sandbox */
	LEARN_EXACT_BLOCK = 2,	/* a block device: every file of its file system */
	LEARN_EXACT_DEVICE = 3, /* a character device the program used, under a rule above /dev */
};

struct learn_set {
	struct learn_path *paths;
	size_t n_paths, cap_paths;
	struct str_index path_index; /* of paths, by path */
	char **socket;		     /* net= and bpf. lines, as written */
	size_t n_socket, cap_socket;
	bool exec;		 /* python-api=ALLOW:process-exec */
	unsigned long records;	 /* denials read (an aggregated record counts its "count") */
	unsigned long unlearned; /* records no rule can allow (self-protection, memfd exec, a
				  * name with a control character) */
	uint64_t lost;		 /* events the kernel could not deliver */
	unsigned long dotenv;	 /* accesses to a file named .env (a library's upward search) */
	char dotenv_example[4096];
	/* writes of Python's bytecode cache (a __pycache__ made, a .pyc written in one): no
	 * rule, env=PYTHONDONTWRITEBYTECODE=1 instead (learn_generate) */
	unsigned long pycache;
	char pycache_example[4096];
	/* writes of pytest's cache (.pytest_cache in the project): no rule,
	 * env=PYTEST_ADDOPTS=-p no:cacheprovider instead (learn_generate) */
	unsigned long pytest_cache;
	char pytest_cache_example[4096];
	char *const *envp;   /* *PORT* variables for net= ports; NULL: none */
	char home[PATH_MAX]; /* HOME made canonical, once ("": not yet, or none) */
	bool home_known;
};

/* A grant that needs no line: an implicit path or a rule the policy already has. */
struct learn_covered {
	const char *path;
	uint32_t access;
	const char *file; /* the policy line's file (an include's, maybe); NULL: implicit */
	unsigned line;
};

/* How paths are written: ${TOOL_DIR}/..., ./..., ~/..., ${TMPDIR:-/tmp}/..., else absolute. */
struct learn_env {
	char *const *envp; /* VIRTUAL_ENV, HOME, TMPDIR, ... (values made canonical) */
	const char *cwd;   /* written "." */
	const struct learn_covered *covered;
	size_t n_covered;
	bool envs; /* a learning run: pass envp on as env= rules (not for `learn --from`) */
	/* Who ran: the file is read through no link it could have made (NULL: not checked). */
	const struct path_writer *writer;
	/* The file's text when the run began (NULL: not compared): one the program changed
	 * (nothing is denied while learning) is not merged into. */
	const char *before;
};

/* The generated lines, per family, sorted. */
struct learn_rules {
	char **files, **socket, **api;
	size_t n_files, n_socket, n_api;
	char **envs; /* env=NAME=${NAME}, or "# env=..." for a name that looks like a secret */
	size_t n_envs;
	/* entries created or removed in a never-widened directory and gone since: no rule
	 * (the directory's would grant all of it) */
	size_t not_widened;
	/* directories whose rule would not read back as that directory (a name with ${...},
	 * '#', white space the parser strips...): never written, listed for a warning */
	char **unwritable;
	size_t n_unwritable;
	/* never-widened directories the program listed or opened (/etc, ~, /): no rule, since
	 * a rule on one grants every file in it; listed for a warning */
	char **unlisted;
	size_t n_unlisted;
	/* rules for sockets of servers outside the sandbox: written commented out */
	size_t n_servers;
	size_t n_block_devices; /* rules on block devices, written commented out */
	/* writes of Python's bytecode cache left out (learn_set.pycache), one of them */
	unsigned long pycache;
	const char *pycache_example;
	/* writes of pytest's cache left out (learn_set.pytest_cache), one of them */
	unsigned long pytest_cache;
	const char *pytest_cache_example;
};

/* Is dir one a file in it is never widened to (/, /etc, /home/<user>, home, ...; learn.c
 * has the list and says why)? home: the canonical home directory, or NULL. */
bool learn_never_widened(const char *dir, const char *home);

/* Does NAME look like it holds a secret (token, password, key, ...)? */
bool learn_env_secret(const char *name);
/* Is NAME one learning passes on (not the shell's bookkeeping, not PYSB_*)? */
bool learn_env_passable(const char *name);

/* Adds one record of the event stream (others than "event" are ignored). 0, or -1: OOM. */
int learn_add_record(struct learn_set *s, const json_t *rec);
void learn_set_free(struct learn_set *s);

int learn_generate(const struct learn_set *s, const struct learn_env *env, struct learn_rules *out);
void learn_rules_free(struct learn_rules *r);

/* How `path` is written in a rule (malloc'd): the longest known prefix wins. */
char *learn_spell_path(const char *path, const struct learn_env *env);

/*
 * Merges r into text (a policy file's content): lines already present (stripped) are
 * dropped; each family goes before its closing marker (`# </learning_guard_files>`,
 * `_socket`, `_api`, `_envs`) under the header `# Add rules (<stamp>)`, or, without that marker,
 * to the end of the file. An `expose-ro=X` line superseded by a learned `expose-rw=X` is
 * commented out. *out is the new text (malloc'd); *added the lines added (0: unchanged).
 */
int learn_merge(const char *text, const struct learn_rules *r, const char *stamp, char **out,
		size_t *added);

/*
 * learn_merge, knowing where the text comes from: an `expose-ro=` line that names the
 * same path as a learned `expose-rw=` however it is written (./x, ~/x, ${VAR}/x, an
 * absolute path, with a trailing comment) is commented out; a learned `expose-rw=` whose
 * path another file (an include: env->covered says which line) exposes read-only is
 * written commented out, with that file:line, since two rules on one path do not load.
 * target: the file the text is FILE's content of; env: spellings and covered grants.
 */
int learn_merge_in(const char *text, const struct learn_rules *r, const char *stamp,
		   const struct learn_env *env, const char *target, char **out, size_t *added);

/* "2026/12/02 at 11:20", local time, py-sandboxes' header format. */
void learn_stamp(time_t t, char *buf, size_t len);

/* The file a learning run creates when the policy does not exist (py-sandboxes accepts it). */
char *learn_template(const char *stamp);

/* "<path>.old", else "<path>.old_1", "<path>.old_2", ...: the first that does not exist. */
int learn_backup_name(const char *path, char *out, size_t len);
/* Copies path to its backup name (mode and times kept); the name in backup. */
int learn_backup(const char *path, char *backup, size_t len);
/* Writes text atomically: <path>.<pid>.tmp in the same directory, fsync, rename, fsync
 * of the directory; mode and owner of the file it replaces (else 0644). */
int learn_write_atomic(const char *path, const char *text);

/*
 * The whole merge into FILE: read it (a missing file starts from the template), merge,
 * print the lines added to `review` (NULL: not) as a unified diff, back up (`backup`: when
 * the file existed before this run), write atomically, and say on stderr what was written
 * where. A write that fails saves the merged file to a fallback (learn_save_fallback) and
 * names it. 0: FILE is up to date; 1: it is not, said why (the rules, if any, are in the
 * fallback); -1: the rules are lost (said, and shown in the review).
 */
int learn_file(const char *file, const struct learn_set *s, const struct learn_env *env,
	       bool backup, time_t now, FILE *review);

/*
 * Before a learning run: the text of `file` (learn_env.before; "" when it is missing),
 * read through no link `w` could have made. NULL after saying why.
 */
char *learn_read_target(const char *file, const struct path_writer *w);

/*
 * Before a learning run: can `file` be created or replaced the way learn_file does it (a
 * regular file or none, read and write access, not immutable or append-only, a directory
 * where a temporary file and the .old backup can be created and removed)? Creates and
 * removes `<file>.<pid>.check`. 0, or -1 after saying what, where and what to do
 * (`before_run`: adds that the program was not started).
 */
int learn_check_target(const char *file, bool before_run);

/* `learn --from FILE`: a readable regular file, or "-" (stdin). 0, or -1 after saying why. */
int learn_check_source(const char *from);

/*
 * Saves text (the merged policy) where learn_file could not: `<file>.learned`, else
 * `${TMPDIR:-/tmp}/<name>.learned`, else `./<name>.learned`, with _1, _2, ... rather than
 * over an existing file; mode 0600, owned like FILE. 0 and the name in out, or -1 (errno).
 */
int learn_save_fallback(const char *file, const char *text, char *out, size_t len);

/*
 * Prints how new differs from old as `diff -u` does (--- a/FILE, +++ b/FILE, @@ hunks
 * with 3 lines of context); FILE loses its leading '/'. 1: printed, 0: no difference
 * (nothing printed), -1: out of memory.
 */
int learn_diff(FILE *out, const char *file, const char *old, const char *new);

#endif /* PYSB_LEARN_H */
