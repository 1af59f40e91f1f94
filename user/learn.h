/* SPDX-License-Identifier: MIT */
/*
 * Learning: turns would-be denials (records of the event stream, docs/events.md) into the
 * policy lines that would have allowed them, and merges those into a `.py-sandboxes` file
 * the way py-sandboxes' learning does (tests/corpus/pysandboxes/FORMAT-NOTES.md, section 3):
 * inside the `# <learning_guard_...>` marker pairs, else at the end, under a dated
 * `# Add rules (YYYY/MM/DD at HH:MM)` header; the previous file kept as `.old`, the new one
 * written atomically. Everything but learn_file() is pure (no root, no BPF): unit-tested.
 */
#ifndef PYSB_LEARN_H
#define PYSB_LEARN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "strindex.h"

/* What the records asked for. */
struct learn_path {
	char *path;	 /* the directory (or file) a rule must expose, canonical */
	uint32_t access; /* PYSB_ACC_* */
	bool dir;	 /* known to be a directory (the parent of a created entry) */
};

struct learn_set {
	struct learn_path *paths;
	size_t n_paths, cap_paths;
	struct str_index path_index; /* of paths, by path */
	char **socket; /* net= and bpf. lines, as written */
	size_t n_socket, cap_socket;
	bool exec;		 /* python-api=ALLOW:process-exec */
	unsigned long records;	 /* event records read */
	unsigned long unlearned; /* records no rule can allow (self-protection, memfd exec) */
	uint64_t lost;		 /* events the kernel could not deliver */
	unsigned long dotenv;	 /* accesses to a file named .env (a library's upward search) */
	char dotenv_example[4096];
	char *const *envp;	 /* *PORT* variables for net= ports; NULL: none */
};

/* A grant that needs no line: an implicit path or a rule the policy already has. */
struct learn_covered {
	const char *path;
	uint32_t access;
};

/* How paths are written: ${TOOL_DIR}/..., ./..., ~/..., ${TMPDIR:-/tmp}/..., else absolute. */
struct learn_env {
	char *const *envp; /* VIRTUAL_ENV, HOME, TMPDIR, ... (values made canonical) */
	const char *cwd;   /* written "." */
	const struct learn_covered *covered;
	size_t n_covered;
	bool envs; /* a learning run: pass envp on as env= rules (not for `learn --from`) */
};

/* The generated lines, per family, sorted. */
struct learn_rules {
	char **files, **socket, **api;
	size_t n_files, n_socket, n_api;
	char **envs; /* env=NAME=${NAME}, or "# env=..." for a name that looks like a secret */
	size_t n_envs;
};

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
 * back up (`backup`: when the file existed before this run), write atomically, and say
 * on stderr what was written where. 0, or -1 after saying what failed.
 */
int learn_file(const char *file, const struct learn_set *s, const struct learn_env *env,
	       bool backup, time_t now);

#endif /* PYSB_LEARN_H */
