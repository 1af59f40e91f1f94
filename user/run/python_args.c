/* SPDX-License-Identifier: MIT */
/*
 * The script a Python interpreter is told to run, read from its command line as python(1)
 * reads it: `run -- python3 app.py` and `run -- .venv/bin/python -u app.py` get their
 * script's implicit READ as `run app.py` does (found by a user: the README gives the
 * three spellings as one, and only the last could read its own script). Without a script
 * (-c, -m, -, none), Python lists the working directory instead: kept in path0_cwd.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program.h"

/* The SCRIPT word of `python [options] SCRIPT [args]`; NULL for -c, -m, - (stdin), none.
 * *safe: an option before it keeps the working directory off sys.path (-P, -I). */
static const char *script_word(char *const *args, int n, bool *safe)
{
	*safe = false;
	for (int i = 0; i < n; i++) {
		const char *a = args[i];

		if (!strcmp(a, "--"))
			return i + 1 < n ? args[i + 1] : NULL;
		if (a[0] != '-')
			return a;
		if (!a[1])
			return NULL; /* "-": the program on stdin */
		if (a[1] == '-') {
			i += !strcmp(
				a,
				"--check-hash-based-pycs"); /* its one long option with a value */
			continue;
		}
		for (const char *f = a + 1; *f; f++) {
			*safe |= *f == 'P' || *f == 'I';
			if (*f == 'c' || *f == 'm')
				return NULL; /* the rest is the command or the module */
			if (*f == 'W' || *f == 'X') {
				i += !f[1]; /* -W arg, -Warg */
				break;
			}
		}
	}
	return NULL;
}

void program_python_script(char *const *args, int n, struct program *p)
{
	bool safe;
	const char *w = script_word(args, n, &safe);
	char cwd[PATH_MAX];

	/* -c, -m, - and the prompt: sys.path[0] is the working directory (found by a user:
	 * a deny line for it at every run where no rule reaches it) */
	if (!w && !safe && getcwd(cwd, sizeof(cwd)) && cwd[0] == '/')
		snprintf(p->path0_cwd, sizeof(p->path0_cwd), "%s", cwd);
	if (!w || !realpath(w, p->script))
		return;
	if (w[0] == '/')
		snprintf(p->script_named, sizeof(p->script_named), "%s", w);
	else if (!getcwd(cwd, sizeof(cwd)) ||
		 (size_t)snprintf(p->script_named, sizeof(p->script_named), "%s/%s", cwd, w) >=
			 sizeof(p->script_named))
		return;
	p->has_script = true;
}
