/* SPDX-License-Identifier: MIT */
/*
 * Program resolution for `run` (see program.h): the sandboxed program may exec once, so
 * what a shell, the kernel's #! handling, env(1) or a pyenv/asdf shim would reach with
 * more execs is found here and executed directly.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile.h"
#include "log.h"
#include "program.h"
#include "program_int.h"
#include "runner.h"
#include "untampered.h"

extern char **environ;

#define MAX_DEPTH 4 /* the kernel's own limit of nested #! interpreters */
#define SHIM_MAX  8192

struct chain {
	const struct program_opts *o;
	char exe[PATH_MAX];
	char **words;
	int n, cap;
	char *how;
	size_t how_len;
	char script[PATH_MAX], script_named[PATH_MAX];
	bool has_script;
};

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* Shell names and launchers whose work is a second exec; NULL when `name` is neither. */
static const char *program_exec_reason(const char *path, bool script)
{
	static const char *const shells[] = { "sh",   "bash", "dash",	 "zsh", "ksh",
					      "mksh", "fish", "busybox", NULL };
	static const char *const launchers[] = { "env",	  "uv",	   "uvx",	 "poetry", "pipenv",
						 "conda", "mamba", "micromamba", "pyenv",  "asdf",
						 "pipx",  "hatch", "pdm",	 "tox",	   "nox",
						 "sudo",  "nohup", "xargs",	 "make",   "npx",
						 NULL };
	const char *b = base(path);

	for (int i = 0; shells[i]; i++)
		if (!strcmp(b, shells[i]))
			return script ? "it is a shell script: each command it runs is an exec of its own"
				      : "it is a shell: each command it runs is an exec of its own";
	for (int i = 0; launchers[i]; i++)
		if (!strcmp(b, launchers[i]))
			return "it is a launcher: it starts the real program with a second exec";
	return NULL;
}

/* The access the compiled rules give `path` (canonical): the deepest rule at or above it,
 * as the kernel's walk up the dentries finds it. */
static uint32_t granted(const struct compiled *c, const char *path)
{
	size_t best = 0;
	uint32_t acc = 0;

	for (size_t i = 0; i < c->n_files; i++) {
		const char *r = c->files[i].path;
		size_t n = strlen(r);

		if (n >= best && !strncmp(path, r, n) &&
		    (path[n] == '/' || !path[n] || !strcmp(r, "/"))) {
			best = n;
			acc = c->files[i].access;
		}
	}
	return acc;
}

int program_check(const struct program *p, const struct compiled *c, bool audit)
{
	char real[PATH_MAX], dir[PATH_MAX];

	pr_info("program: %s", p->how);
	if (realpath(p->interp, real) && !(granted(c, real) & PYSB_ACC_EXEC)) {
		snprintf(dir, sizeof(dir), "%s", real);
		*strrchr(dir, '/') = '\0';
		(audit ? pr_warn : pr_err)("%s%s%s%s is under no directory the policy grants exec: "
					   "the kernel %s start it. Write expose-ro=%s (or keep "
					   "bpf.implicit=true, which grants the program's "
					   "interpreter)",
					   p->interp, strcmp(real, p->interp) ? " (" : "",
					   strcmp(real, p->interp) ? real : "",
					   strcmp(real, p->interp) ? ")" : "",
					   audit ? "would report" : "would refuse to",
					   dir[0] ? dir : "/");
		if (!audit)
			return -1;
	}
	if (p->has_script && !(granted(c, p->script) & PYSB_ACC_READ)) {
		snprintf(dir, sizeof(dir), "%s", p->script);
		*strrchr(dir, '/') = '\0';
		pr_warn("%s is under no directory the policy lets the program read: the "
			"interpreter cannot open it. Write expose-ro=%s",
			p->script, dir[0] ? dir : "/");
	}
	if (!p->needs_exec || c->exec_allowed)
		return 0;
	pr_warn("%s%s%s: %s; the policy denies every exec after the program's start (no "
		"python-api=ALLOW:process-exec), so that will fail. Run the Python program "
		"directly, naming the interpreter by its path (pysb-bpf run -- /usr/bin/python3 "
		"app.py, or a venv's .venv/bin/python app.py), or "
		"allow it: python-api=ALLOW:process-exec and expose-ro= the directories of what "
		"it runs",
		p->interp, p->has_script ? " " : "", p->has_script ? p->script : "", p->needs_exec);
	return 0;
}

static void how_add(struct chain *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->how_len >= sizeof(((struct program *)0)->how) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(c->how + c->how_len, sizeof(((struct program *)0)->how) - c->how_len, fmt,
		      ap);
	va_end(ap);
	if (n > 0)
		c->how_len += (size_t)n;
	if (c->how_len >= sizeof(((struct program *)0)->how))
		c->how_len = sizeof(((struct program *)0)->how) - 1;
}

static int push(struct chain *c, const char *w)
{
	if (c->n == c->cap) {
		int cap = c->cap ? c->cap * 2 : 8;
		char **v = realloc(c->words, (size_t)cap * sizeof(*v));

		if (!v)
			return -1;
		c->words = v;
		c->cap = cap;
	}
	c->words[c->n] = strdup(w);
	return c->words[c->n++] ? 0 : -1;
}

/* `name` made absolute against the working directory; "./" segments dropped, symlinks
 * and ".." kept (a venv's bin/python must stay what it is). */
static int absolute(const char *name, char *out, size_t len)
{
	char cwd[PATH_MAX];

	while (name[0] == '.' && name[1] == '/')
		for (name += 2; *name == '/';)
			name++;
	if (name[0] == '/')
		return (size_t)snprintf(out, len, "%s", name) < len ? 0 : -1;
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	return (size_t)snprintf(out, len, "%s/%s", strcmp(cwd, "/") ? cwd : "", name) < len ? 0
											    : -1;
}

int program_find_in_path(const char *name, const char *path_env, char *out, size_t len)
{
	const char *path = path_env ? path_env : getenv("PATH");
	char buf[PATH_MAX];

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (;;) {
		size_t n = strcspn(path, ":");
		struct stat st;

		if ((size_t)snprintf(buf, sizeof(buf), "%.*s%s%s", (int)n, path, n ? "/" : "",
				     name) < sizeof(buf) &&
		    !access(buf, X_OK) && !stat(buf, &st) && S_ISREG(st.st_mode) &&
		    !absolute(buf, out, len))
			return 0;
		if (!path[n])
			return -1;
		path += n + 1;
	}
}

int program_parse_shebang(const char *buf, size_t len, char *interp, size_t interp_len, char *arg,
			  size_t arg_len)
{
	size_t i = 2, s, e;

	if (len > 256)
		len = 256; /* BINPRM_BUF_SIZE: the kernel reads no further */
	if (len < 2 || buf[0] != '#' || buf[1] != '!')
		return -1;
	while (i < len && (buf[i] == ' ' || buf[i] == '\t'))
		i++;
	s = i;
	while (i < len && buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\0')
		i++;
	if (i == s || i - s >= interp_len)
		return -1;
	snprintf(interp, interp_len, "%.*s", (int)(i - s), buf + s);
	while (i < len && (buf[i] == ' ' || buf[i] == '\t'))
		i++;
	s = i;
	while (i < len && buf[i] != '\n' && buf[i] != '\0')
		i++;
	e = i;
	while (e > s && (buf[e - 1] == ' ' || buf[e - 1] == '\t' || buf[e - 1] == '\r'))
		e--;
	if (e - s >= arg_len)
		return -1;
	snprintf(arg, arg_len, "%.*s", (int)(e - s), buf + s);
	return 0;
}

int program_env_split(char *s, char **words, int max, const char **err)
{
	bool split = false;
	int n = 0;

	*err = NULL;
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		if (!n && s[0] == '-' && s[1] == 'S') {
			split = true;
			s += 2;
			continue;
		}
		if (!n && s[0] == '-') {
			*err = "env options other than -S cannot be resolved ahead; run the "
			       "interpreter with its options directly";
			return -1;
		}
		if (!split && !n && strpbrk(s, " \t")) {
			*err = "without -S, env takes everything after it as one program name";
			return -1;
		}
		if (n == max) {
			*err = "too many words";
			return -1;
		}
		words[n++] = s;
		s += strcspn(s, " \t");
		if (*s)
			*s++ = '\0';
	}
	if (!n)
		*err = "env names no program";
	return n ? n : -1;
}

/* A word of a shell line: "quoted" or bare; its end in *end. */
static int shell_word(const char *s, const char **end, char *out, size_t len)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '"' || *s == '\'') {
		const char *q = strchr(s + 1, *s);

		if (!q)
			return -1;
		n = (size_t)(q - s - 1);
		s++;
		*end = q + 1;
	} else {
		n = strcspn(s, " \t\n;");
		*end = s + n;
	}
	if (!n || n >= len)
		return -1;
	snprintf(out, len, "%.*s", (int)n, s);
	return 0;
}

int program_parse_shim(const char *text, char *tool, size_t tool_len, char *name, size_t name_len)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char word[64];
		const char *p = l;

		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, "exec ", 5) || shell_word(p + 5, &p, tool, tool_len) ||
		    shell_word(p, &p, word, sizeof(word)) || strcmp(word, "exec") ||
		    shell_word(p, &p, name, name_len))
			continue;
		if (name[0] == '$')
			name[0] = '\0'; /* "$program": the shim's own name */
		return 0;
	}
	return -1;
}

static int resolve_file(struct chain *c, const char *file, const char *argv0, const char *as_script,
			bool py_default, int depth);

/* A pyenv/asdf shim: what `TOOL which NAME` would name runs instead (as `TOOL exec` would),
 * found by reading TOOL's version files: nothing runs before the sandbox (user/run/shim.c). */
static int resolve_shim(struct chain *c, const char *file, const char *text, int depth)
{
	char tool[PATH_MAX], name[256], real[PATH_MAX];

	if (program_parse_shim(text, tool, sizeof(tool), name, sizeof(name)))
		return 1;
	if (!name[0])
		snprintf(name, sizeof(name), "%s", base(file));
	if (shim_which(c->o, file, tool, name, text, real, sizeof(real)))
		return EXIT_CANNOT_EXEC;
	how_add(c, " -> %s shim of %s (its version files read, nothing run)", base(tool), name);
	return resolve_file(c, real, real, real, false, depth + 1);
}

/* The command that runs script file with the interpreter its #! line names (interp, arg),
 * into out: `env NAME` is NAME; a carriage return is left out. */
static void interpreter_command(const char *file, const char *interp, const char *arg, char *out,
				size_t len)
{
	char words[PATH_MAX + 300];
	const char *w = arg;

	if (!strcmp(base(interp), "env")) {
		while (*w == '-') /* env's options (-S): the program is the first other word */
			w += strcspn(w, " \t"), w += strspn(w, " \t");
		snprintf(words, sizeof(words), "%.*s", (int)strcspn(w, " \t\r"), w);
	} else {
		snprintf(words, sizeof(words), "%.*s%s%.*s", (int)strcspn(interp, "\r"), interp,
			 arg[0] ? " " : "", (int)strcspn(arg, "\r"), arg);
	}
	snprintf(out, len, "pysb-bpf run -- %s %s", words[0] ? words : interp, file);
}

/* The interpreter of file's #! line (interp, its one argument arg): `env NAME [ARGS]` (-S
 * split) looks NAME up in PATH, as env would; any other is run by its path. Appends its
 * words to c->words. 0, or an exit status after saying why. */
static int resolve_interpreter(struct chain *c, const char *file, const char *interp,
			       const char *arg, int depth)
{
	char path[PATH_MAX], argbuf[256];
	int ret;

	/* a script saved with Windows line ends: the kernel looks for "python3\r" */
	if (strchr(interp, '\r') || strchr(arg, '\r')) {
		interpreter_command(file, interp, arg, path, sizeof(path));
		/* Python reads a source with Windows line ends; a shell runs each line with \r */
		pr_err("%s: its #! line ends with a carriage return (\\r: the file has Windows "
		       "line ends, CRLF), so the kernel looks for an interpreter whose name ends "
		       "with it; convert the file (dos2unix %s)%s%s",
		       file, file,
		       strncmp(base(interp), "python", 6)
			       ? ""
			       : ", or name its "
				 "interpreter, which reads Windows line ends: ",
		       strncmp(base(interp), "python", 6) ? "" : path);
		return EXIT_NOT_FOUND;
	}
	if (!strcmp(base(interp), "env") && arg[0]) {
		char *words[16];
		const char *why;
		int n;

		snprintf(argbuf, sizeof(argbuf), "%s", arg); /* program_env_split cuts it */
		n = program_env_split(argbuf, words, 16, &why);
		if (n < 0) {
			pr_err("%s: #!%s %s: %s", file, interp, arg, why);
			return EXIT_CANNOT_EXEC;
		}
		if (program_find_in_path(words[0], c->o ? c->o->path_env : NULL, path,
					 sizeof(path))) {
			pr_err("%s: its #! line runs `env %s`, and %s is not on PATH", file,
			       words[0], words[0]);
			return EXIT_NOT_FOUND;
		}
		how_add(c, " (#!%s %s)", interp, words[0]);
		ret = resolve_file(c, path, path, path, false, depth + 1);
		for (int i = 1; !ret && i < n; i++)
			ret = push(c, words[i]) ? EXIT_PYSB_ERROR : 0;
		return ret;
	}
	if (absolute(interp, path, sizeof(path)))
		return EXIT_CANNOT_EXEC;
	how_add(c, " (#!%s)", interp);
	ret = resolve_file(c, path, interp, interp, false, depth + 1);
	if (!ret && arg[0] && push(c, arg))
		ret = EXIT_PYSB_ERROR;
	return ret;
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

bool program_lacks_execute_bit(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !(st.st_mode & 0111);
}

/* An exec the kernel will refuse with `err`, said plainly when it is the missing execute
 * bit (found by a user, left to work it out from "a deny line, or none"), with the command
 * that runs the script without it (round 32: "run it with its interpreter" named none). */
static void say_cannot_execute(const char *file, const char *text, size_t len, int err)
{
	char interp[PATH_MAX], arg[256], cmd[2 * PATH_MAX + 400];

	if (err != EACCES || !program_lacks_execute_bit(file))
		pr_err("cannot execute %s: %s", file, strerror(err));
	else if (program_parse_shebang(text, len, interp, sizeof(interp), arg, sizeof(arg)))
		pr_err("cannot execute %s: it has no execute bit; chmod +x it, or run it with its "
		       "interpreter",
		       file);
	else {
		interpreter_command(file, interp, arg, cmd, sizeof(cmd));
		pr_err("cannot execute %s: it has no execute bit, and the kernel runs a #! script "
		       "only when it may execute it; chmod +x %s, or name its interpreter: %s",
		       file, file, cmd);
	}
}

/*
 * file: absolute; argv0: argv[0] when it is a binary (the user's word at the top); as_script:
 * how an interpreter gets it when it is a script (the path execve would get). Appends the
 * leading argv words to c->words, the binary to c->exe.
 */
static int resolve_file(struct chain *c, const char *file, const char *argv0, const char *as_script,
			bool py_default, int depth)
{
	char *text = malloc(SHIM_MAX), interp[PATH_MAX], arg[256], path[PATH_MAX];
	int fd, ret = EXIT_PYSB_ERROR;
	size_t len;

	if (!text)
		return ret;
	how_add(c, "%s%s", depth || c->how_len ? " -> " : "", file);
	if (depth > MAX_DEPTH) {
		pr_err("%s: more than %d levels of #! interpreters or shims", file, MAX_DEPTH);
		ret = EXIT_CANNOT_EXEC;
		goto out;
	}
	fd = open_regular(file, false);
	if (fd == -1) {
		pr_err("cannot open %s: %s", file, strerror(errno));
		ret = errno == ENOENT || errno == ENOTDIR ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
		goto out;
	}
	len = fd >= 0 ? program_read_all(fd, text, SHIM_MAX) : 0;
	text[len] = '\0';
	if (fd >= 0)
		close(fd);
	/* The kernel runs a #! script only when it may execute it; NAME.py is then read by
	 * python3 as before. */
	if (len >= 2 && text[0] == '#' && text[1] == '!' && access(file, X_OK) && !py_default) {
		say_cannot_execute(file, text, len, errno);
		ret = EXIT_CANNOT_EXEC;
		goto out;
	}
	if (len < 2 || text[0] != '#' || text[1] != '!' || access(file, X_OK)) {
		if (py_default) { /* NAME.py without a #! line: python3 runs it */
			if (program_find_in_path("python3", c->o ? c->o->path_env : NULL, path,
						 sizeof(path))) {
				pr_err("%s needs python3, which is not on PATH", file);
				ret = EXIT_NOT_FOUND;
				goto out;
			}
			how_add(c, " (python3 runs it)");
			ret = resolve_file(c, path, path, path, false, depth + 1);
			if (!ret && push(c, as_script))
				ret = EXIT_PYSB_ERROR;
			goto script;
		}
		/* a binary (or what execve will refuse, and say so) */
		snprintf(c->exe, sizeof(c->exe), "%s", file);
		ret = push(c, argv0) ? EXIT_PYSB_ERROR : 0;
		goto out;
	}
	ret = resolve_shim(c, file, text, depth);
	if (ret != 1)
		goto out;
	if (program_parse_shebang(text, len, interp, sizeof(interp), arg, sizeof(arg))) {
		pr_err("%s: its #! line names no interpreter, or one longer than the kernel reads",
		       file);
		ret = EXIT_CANNOT_EXEC;
		goto out;
	}
	ret = resolve_interpreter(c, file, interp, arg, depth);
	if (ret)
		goto out;
	/* the kernel passes the script as execve got it */
	if (!ret && push(c, as_script))
		ret = EXIT_PYSB_ERROR;
script:
	if (!ret && !c->has_script) {
		if (!realpath(file, c->script)) {
			pr_err("cannot resolve %s: %s", file, strerror(errno));
			ret = EXIT_NOT_FOUND;
		}
		snprintf(c->script_named, sizeof(c->script_named), "%s", file);
		c->has_script = !ret;
	}
out:
	free(text);
	return ret;
}

int program_resolve(char *const *args, int n, const struct program_opts *o, struct program *out)
{
	struct chain c = { .o = o, .how = out->how };
	const char *name = args[0], *script;
	char file[PATH_MAX];
	/* NAME.py, and a zipapp NAME.pyz: what python3 runs (README, "How the program is
	 * found") */
	bool py = ends_with(name, ".py") || ends_with(name, ".pyz");
	int ret;

	memset(out, 0, sizeof(*out));
	if (strchr(name, '/') || (py && !access(name, F_OK))) {
		/* a path (or NAME.py in the working directory, as before) */
		if (absolute(name, file, sizeof(file))) {
			pr_err("%s: path too long", name);
			return EXIT_NOT_FOUND;
		}
		if (strcmp(file, name))
			how_add(&c, "%s", name);
		script = name;
	} else if (program_find_in_path(name, o ? o->path_env : NULL, file, sizeof(file))) {
		if (py) { /* a script's name mistyped, more likely than a command's */
			pr_err("%s: no such file in %s (nor a command of that name on PATH)", name,
			       getcwd(file, sizeof(file)) ? file : "the working directory");
			return EXIT_NOT_FOUND;
		}
		pr_err("%s: command not found (PATH=%s)%s", name,
		       o && o->path_env ? o->path_env
		       : getenv("PATH") ? getenv("PATH")
					: "",
		       getenv("SUDO_UID") ? "; started through sudo, this is sudo's PATH, not "
					    "yours: name the program by its path"
					  : "");
		return EXIT_NOT_FOUND;
	} else {
		how_add(&c, "%s (PATH)", name);
		script = file;
	}
	/* A binary gets the user's word as argv[0]; a script is given to its interpreter as
	 * execve would have got it. */
	ret = resolve_file(&c, file, name, script, py, 0);
	if (!ret) {
		out->argv = calloc((size_t)(c.n + n), sizeof(char *));
		if (!out->argv)
			ret = EXIT_PYSB_ERROR;
	}
	if (!ret) {
		for (int i = 0; i < c.n; i++)
			out->argv[i] = c.words[i];
		for (int i = 1; i < n; i++)
			out->argv[c.n + i - 1] = strdup(args[i]);
		for (int i = 1; i < n; i++)
			if (!out->argv[c.n + i - 1])
				ret = EXIT_PYSB_ERROR;
		free(c.words);
		c.words = NULL;
		snprintf(out->interp, sizeof(out->interp), "%s", c.exe);
		snprintf(out->script, sizeof(out->script), "%s", c.script);
		snprintf(out->script_named, sizeof(out->script_named), "%s", c.script_named);
		out->has_script = c.has_script;
		if (!out->has_script && interpreter_is_python(c.exe))
			program_python_script(args + 1, n - 1, out); /* python3 app.py */
		out->needs_exec = program_exec_reason(c.exe, out->has_script);
	}
	for (int i = 0; c.words && i < c.n; i++)
		free(c.words[i]);
	free(c.words);
	if (ret)
		program_free(out);
	return ret;
}

int program_argv0_for(struct program *p, char *const *envp)
{
	char *abs;

	if (!p->argv || !p->argv[0] || strchr(p->argv[0], '/') || !p->interp[0] ||
	    !interpreter_is_python(p->interp) || policy_envp_get(envp, "PATH"))
		return 0;
	abs = strdup(p->interp);
	if (!abs)
		return -1;
	free(p->argv[0]);
	p->argv[0] = abs;
	return 0;
}

void program_free(struct program *p)
{
	for (int i = 0; p->argv && p->argv[i]; i++)
		free(p->argv[i]);
	free(p->argv);
	p->argv = NULL;
}
