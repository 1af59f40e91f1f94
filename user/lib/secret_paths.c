/* SPDX-License-Identifier: MIT */
/* The well-known secrets (see secret_paths.h), compared name by name with fnmatch(3): a
 * pattern (the SSH host keys, /home/<any>/.ssh) needs no file on this machine. */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "secret_paths.h"

const struct secret_path SECRET_PATHS[] = {
	{ "/etc/shadow", "password hashes" },
	{ "/etc/gshadow", "group password hashes" },
	{ "/etc/ssh/*key*", "SSH host keys" },
	{ "/etc/ssl/private", "TLS private keys" },
	{ "/etc/pki/tls/private", "TLS private keys" },
	{ "~/.ssh", "SSH keys" },
	{ "~/.aws", "AWS credentials" },
	{ "~/.config/gcloud", "Google Cloud credentials" },
	{ "~/.kube", "Kubernetes credentials" },
	{ "~/.docker/config.json", "registry credentials" },
	{ "~/.netrc", "FTP/HTTP passwords" },
	{ "~/.pgpass", "PostgreSQL passwords" },
};
const size_t N_SECRET_PATHS = sizeof(SECRET_PATHS) / sizeof(SECRET_PATHS[0]);

bool path_next_name(const char **p, char *name, size_t len)
{
	size_t n;

	while (**p == '/')
		(*p)++;
	if (!**p)
		return false;
	n = strcspn(*p, "/");
	/* (not snprintf: learning asks this for every name of every denied path) */
	if (len) {
		size_t k = n < len - 1 ? n : len - 1;

		memcpy(name, *p, k);
		name[k] = '\0';
	}
	*p += n;
	return true;
}

bool secret_path_reaches(const char *rule, const char *pattern)
{
	char r[256], q[256];

	for (;;) {
		bool more_r = path_next_name(&rule, r, sizeof(r));
		bool more_q = path_next_name(&pattern, q, sizeof(q));

		if (!more_r || !more_q)
			return true;
		if (fnmatch(q, r, 0))
			return false;
	}
}

bool secret_paths_under(const char *dir, const char *home)
{
	const char *homes[] = { home, "/root", "/home/*" };
	char full[4096];

	for (size_t i = 0; i < N_SECRET_PATHS; i++) {
		const char *s = SECRET_PATHS[i].path;

		if (s[0] != '~') {
			if (secret_path_reaches(dir, s))
				return true;
			continue;
		}
		for (size_t h = 0; h < sizeof(homes) / sizeof(homes[0]); h++) {
			if (!homes[h] || !*homes[h])
				continue;
			snprintf(full, sizeof(full), "%s%s", homes[h], s + 1);
			if (secret_path_reaches(dir, full))
				return true;
		}
	}
	return false;
}
