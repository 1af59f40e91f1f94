/* SPDX-License-Identifier: MIT */
/*
 * The one list of well-known secrets (/etc/shadow, the SSH host keys, ~/.ssh, ~/.aws,
 * ...): `check` warns of a rule that reaches one (user/policy/secrets.c), and learning
 * never widens a file to a directory that holds one (user/learn/generate.c). A path
 * under "~" stands for every home directory. .env files have no fixed place: secrets.c
 * looks for them next to a rule.
 */
#ifndef PYSB_SECRET_PATHS_H
#define PYSB_SECRET_PATHS_H

#include <stdbool.h>
#include <stddef.h>

struct secret_path {
	const char *path, *what; /* a path or fnmatch(3) pattern, name by name; for people */
};
extern const struct secret_path SECRET_PATHS[];
extern const size_t N_SECRET_PATHS;

/* The next name of a path at *p ('/' skipped), into name; false at the end. */
bool path_next_name(const char **p, char *name, size_t len);

/* Does the tree of `rule` (canonical) hold a match of `pattern`, or lie inside one? */
bool secret_path_reaches(const char *rule, const char *pattern);

/* Does the tree of `dir` reach any of the secrets, "~" being `home` (may be NULL),
 * /root or any /home/<user>? */
bool secret_paths_under(const char *dir, const char *home);

#endif /* PYSB_SECRET_PATHS_H */
