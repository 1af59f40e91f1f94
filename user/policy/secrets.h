/* SPDX-License-Identifier: MIT */
/*
 * Well-known secrets a file rule may grant without meaning to: /etc/shadow, /etc/gshadow,
 * the SSH host keys, a user's ~/.ssh, ~/.aws, ~/.config/gcloud, ~/.kube,
 * ~/.docker/config.json, ~/.netrc, ~/.pgpass, and .env files. `pysb-bpf check` warns,
 * without failing, for each expose-ro=/expose-rw= line that reaches one (user/cli/check.c).
 * No privileges, no BPF: unit-tested.
 */
#ifndef PYSB_SECRETS_H
#define PYSB_SECRETS_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

/*
 * The secrets the rule on `path` (canonical) reaches, as a ", "-separated list in out
 * ("/etc/shadow (password hashes), ~/.ssh (SSH keys)"); "" when none. A secret counts
 * when the rule's tree holds it (an ancestor, the secret itself, or a path inside it)
 * and no ignore= line of p hides it. home: the canonical home directory of the program
 * (written ~), or NULL; cwd: the working directory, whose .env a rule above it reaches.
 * Returns the number found.
 */
size_t secrets_reached(const struct policy *p, const char *path, const char *home, const char *cwd,
		       char *out, size_t len);

#endif /* PYSB_SECRETS_H */
