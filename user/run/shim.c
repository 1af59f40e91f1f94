/* SPDX-License-Identifier: MIT */
/*
 * pyenv and asdf shims (user/run/program.c resolve_shim): the real program a shim names is
 * what `TOOL which NAME` prints, run before the sandbox exists, outside it. So TOOL runs
 * only when neither the shim nor TOOL's installation is something a program of this
 * policy may have written (found by an adversary: under expose-rw=., a program rewrote its
 * own app.py into a four-line "shim" naming a script it wrote, and the user's next
 * `pysb-bpf run app.py`, or `check app.py`, ran that script as root, in no cgroup, with
 * every capability).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "policy.h"
#include "program.h"
#include "program_int.h"
#include "untampered.h"

static bool rules_let_write(const char *dir, void *p)
{
	return policy_may_write(p, dir);
}

/*
 * Could a program of policy p have made, replaced or rewritten `file`: a link on the way
 * to it, the file or its directory, that p lets it write? What it could have changed
 * into `what`. With `tree` (TOOL): also anything at or below the directory above the
 * file's own (~/.pyenv of ~/.pyenv/libexec/pyenv: its plugins and hooks run too).
 */
static bool program_may_have_written(const struct policy *p, const char *file, bool tree,
				     char *what, size_t len)
{
	const struct path_writer w = { .may_write = rules_let_write,
				       .arg = (void *)p,
				       .rules_only = true };
	char canon[PATH_MAX], dir[PATH_MAX], *slash;

	if (walk_untampered(file, &w, what, len, canon, sizeof(canon)) != UNTAMPERED_OK)
		return true;
	snprintf(what, len, "%s", canon);
	snprintf(dir, sizeof(dir), "%s", canon);
	for (int up = 0; up < (tree ? 2 : 1) && (slash = strrchr(dir, '/')); up++)
		*(slash == dir ? slash + 1 : slash) = '\0';
	if (policy_may_write(p, canon) || policy_may_write(p, dir))
		return true;
	if (tree && policy_writes_in_tree(p, dir)) {
		snprintf(what, len, "%s", dir);
		return true;
	}
	return false;
}

bool shim_trusted(const struct program_opts *o, const char *shim, const char *tool,
		  const char *name)
{
	char what[PATH_MAX] = "";

	if (o && o->policy &&
	    !program_may_have_written(o->policy, shim, false, what, sizeof(what)) &&
	    !program_may_have_written(o->policy, tool, true, what, sizeof(what)))
		return true;
	pr_err("%s is a shim running `%s exec %s`, and %s%s: pysb-bpf runs nothing outside the "
	       "sandbox on a file the program could have written; run the interpreter by its "
	       "path (pysb-bpf run -- /path/to/python3 ...), or keep the shim and its tool out "
	       "of the policy's writable trees",
	       shim, tool, name,
	       what[0] ? "the policy lets its program write " : "no policy says who wrote it",
	       what);
	return false;
}

/* `export NAME="value"` lines of a shim with a literal value (PYENV_ROOT). */
static int shim_exports(const char *text, char **env, int max)
{
	int n = 0;

	for (const char *l = text; l && *l && n < max; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *eq, *v, *end;
		size_t nl = strcspn(l, "\n");

		if (strncmp(l, "export ", 7) || !(eq = memchr(l, '=', nl)))
			continue;
		v = eq + 1;
		end = l + nl;
		if (*v == '"' && end > v + 1 && end[-1] == '"')
			v++, end--;
		if (memchr(v, '$', (size_t)(end - v)) || memchr(v, '`', (size_t)(end - v)))
			continue;
		if (asprintf(&env[n], "%.*s=%.*s", (int)(eq - l - 7), l + 7, (int)(end - v), v) < 0)
			break;
		n++;
	}
	return n;
}

size_t program_read_all(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t r;

	while (got + 1 < len &&
	       ((r = read(fd, buf + got, len - 1 - got)) > 0 || (r < 0 && errno == EINTR)))
		got += r > 0 ? (size_t)r : 0;
	buf[got] = '\0';
	return got;
}

int shim_which(const struct program_opts *o, const char *shim, const char *tool, const char *name,
	       const char *text, char *out, size_t len)
{
	char *const *envp = o && o->envp ? o->envp : environ;
	char *exports[8], **env, err[512] = "";
	int n_exp = shim_exports(text, exports, 8), n_env = 0, outp[2], errp[2], status;
	size_t got;
	pid_t pid;

	while (envp[n_env])
		n_env++;
	env = calloc((size_t)(n_env + n_exp + 1), sizeof(*env));
	if (!env || pipe2(outp, O_CLOEXEC)) {
		free(env);
		goto fail_exports;
	}
	if (pipe2(errp, O_CLOEXEC)) {
		close(outp[0]);
		close(outp[1]);
		free(env);
		goto fail_exports;
	}
	n_env = 0;
	for (int i = 0; envp[i]; i++) {
		bool shadowed = false;

		for (int k = 0; k < n_exp && !shadowed; k++)
			shadowed = !strncmp(envp[i], exports[k],
					    (size_t)(strchr(exports[k], '=') - exports[k] + 1));
		if (!shadowed)
			env[n_env++] = envp[i];
	}
	for (int k = 0; k < n_exp; k++)
		env[n_env++] = exports[k];
	pid = fork();
	if (pid == 0) {
		dup2(outp[1], 1);
		dup2(errp[1], 2);
		if (o && o->uid != (uid_t)-1 &&
		    (setgroups(o->n_groups, o->groups) || setresgid(o->gid, o->gid, o->gid) ||
		     setresuid(o->uid, o->uid, o->uid)))
			_exit(126);
		execve(tool, (char *[]){ (char *)tool, "which", (char *)name, NULL }, env);
		dprintf(2, "cannot execute %s: %s", tool, strerror(errno));
		_exit(127);
	}
	close(outp[1]);
	close(errp[1]);
	got = pid > 0 ? program_read_all(outp[0], out, len) : 0;
	if (pid > 0)
		program_read_all(errp[0], err, sizeof(err));
	close(outp[0]);
	close(errp[0]);
	free(env);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		err[strcspn(err, "\n")] = '\0';
		pr_err("%s is a shim whose real program `%s which %s` names, and that failed: %s; "
		       "run the interpreter by its path (pysb-bpf run -- /path/to/python3 ...)",
		       shim, tool, name, err[0] ? err : "no output");
		goto fail_exports;
	}
	while (got && (out[got - 1] == '\n' || out[got - 1] == ' '))
		out[--got] = '\0';
	for (int k = 0; k < n_exp; k++)
		free(exports[k]);
	if (out[0] != '/' || strchr(out, '\n')) {
		pr_err("`%s which %s` printed '%s', not one absolute path; run the interpreter by "
		       "its path",
		       tool, name, out);
		return -1;
	}
	return 0;
fail_exports:
	for (int k = 0; k < n_exp; k++)
		free(exports[k]);
	return -1;
}
