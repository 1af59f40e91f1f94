/* SPDX-License-Identifier: MIT */
/*
 * What `run PROGRAM ARGS...` executes, found as a shell and the kernel would find it, but
 * in one exec: the sandboxed program may exec exactly once (its own start), so every
 * interpreter the kernel or a wrapper would reach with a second exec is resolved here.
 *   - a name without a slash: PATH, as execvp does; with a slash: that file, symlinks kept
 *     (a venv's bin/python stays the venv's, so sys.prefix is the venv);
 *   - NAME.py (no #! line): python3 from PATH runs it, as before;
 *   - a #! script: its interpreter runs it directly ("#!/usr/bin/env [-S] NAME ARGS" as
 *     env would: NAME from PATH);
 *   - a pyenv or asdf shim (a bash script doing `exec TOOL exec NAME "$@"`): the real
 *     interpreter, as `TOOL which NAME` names it (run as the program's user).
 * The resolved chain is kept in `how`, for `check` and `run -v`.
 */
#ifndef PYSB_PROGRAM_H
#define PYSB_PROGRAM_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct program_opts {
	const char *path_env; /* the PATH to search; NULL: $PATH, else /usr/local/bin:/usr/bin:/bin */
	char *const *envp;    /* the environment a shim's versions are read in; NULL: environ */
};

struct program {
	char interp[PATH_MAX];	     /* what execve runs: absolute, symlinks kept; it decides the
				* implicit paths (the real interpreter, never a shim) */
	char script[PATH_MAX];	     /* the script it reads, canonical, when has_script */
	char script_named[PATH_MAX]; /* the same, absolute as named (links kept) */
	bool has_script;
	/* the working directory, when a Python lists it as sys.path[0] (-c, -m, -, stdin; not
	 * under -P, -I): granted alone, its listing, as a script's directory is; or "" */
	char path0_cwd[PATH_MAX];
	char **argv;	/* argv[0] as typed (a binary), or as the kernel / env / the shim set it */
	char how[2048]; /* "python3 -> /usr/bin/python3 (PATH)", the chain followed */
	/* Why this program will exec again after its start (a shell script, a launcher such
	 * as `uv run`), which a policy without python-api=ALLOW:process-exec denies; or NULL. */
	const char *needs_exec;
};

struct compiled;
/*
 * What will make the program fail under the compiled policy, said before it starts, with
 * what to write: its interpreter (or script) under no rule granting exec (read), as with
 * bpf.implicit=false; a program that will exec again (p->needs_exec) while the policy
 * denies it. Returns -1 when the program cannot start at all (the interpreter is not
 * granted) and !audit (then it is a warning), 0 otherwise. -v: the chain p->how.
 */
int program_check(const struct program *p, const struct compiled *c, bool audit);

/*
 * argv[0] for the program's environment `envp`: a Python's bare name (python3, as typed
 * or as env(1) passes it) is replaced by the path execve runs when envp has no PATH.
 * CPython finds itself by argv[0] and PATH: its sys.executable is '' without either, and
 * multiprocessing's spawn, SharedMemory's tracker and subprocess of sys.executable fail.
 * Other programs keep the word typed (their messages start with it).
 * 0, or -1 (out of memory).
 */
int program_argv0_for(struct program *p, char *const *envp);

/* `python [options] SCRIPT`: SCRIPT into p (has_script) when the interpreter's own command
 * line names one (args: its arguments after the interpreter); the working directory into
 * p->path0_cwd when it names none and Python lists that directory instead. */
void program_python_script(char *const *args, int n, struct program *p);

/*
 * Resolves args[0..n) (n >= 1). Returns 0, or 127 (not found) / 126 (cannot be executed
 * as it is) / 125 (out of memory) after saying why (pr_err). `o` may be NULL.
 */
int program_resolve(char *const *args, int n, const struct program_opts *o, struct program *out);
void program_free(struct program *p);

/*
 * A #! line as Linux reads it (the first line, at most 255 bytes after "#!"): the
 * interpreter, and everything after it, trimmed, as one optional argument. Returns 0, or
 * -1 when `buf` does not start with "#!" or names no interpreter.
 */
int program_parse_shebang(const char *buf, size_t len, char *interp, size_t interp_len, char *arg,
			  size_t arg_len);

/*
 * The argument of "#!/usr/bin/env ARG" split as env(1) would: "-S python3 -u" -> python3,
 * -u; a plain "python3" -> python3. Fills words (at most max) and returns their number,
 * or -1 (with *err) for what env would refuse or what cannot be resolved ahead: an option
 * other than -S, a name with spaces without -S. `s` is modified.
 */
int program_env_split(char *s, char **words, int max, const char **err);

/*
 * A pyenv/asdf shim: a line `exec TOOL exec NAME "$@"` (quotes optional). TOOL into
 * tool, NAME into name (empty when it is a variable such as "$program": the shim's own
 * name then). Returns 0 when `text` is one, -1 when not.
 */
int program_parse_shim(const char *text, char *tool, size_t tool_len, char *name, size_t name_len);

/* Is `path` a regular file no one may execute (no x bit at all)? */
bool program_lacks_execute_bit(const char *path);

/* PATH lookup as execvp does it (an empty entry is the working directory): 0 and the
 * path in out, or -1. */
int program_find_in_path(const char *name, const char *path_env, char *out, size_t len);

#endif /* PYSB_PROGRAM_H */
