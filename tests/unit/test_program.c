/* SPDX-License-Identifier: MIT */
/* Program resolution (user/run/program.c): #! lines, env -S, PATH, venvs, pyenv-style shims,
 * each on a fake tree in a temp directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char tmp[] = "/tmp/pysb-program-XXXXXX";

#include "compile.h"
#include "fixture.h"
#include "program.h"
#include "capture.h"

/* Never through a symlink: the tests' links point at tmp/true, and fopen would write
 * into what they name. */
static void put_exec(const char *rel, const char *text)
{
	unlink(tpath(rel));
	put(rel, text);
	assert_int_equal(chmod(tpath(rel), 0755), 0);
}

static void mkdirs(const char *rel)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", tpath(rel));
	assert_int_equal(system(cmd), 0);
}

/* rel -> target; "TRUE" is tmp/true, an ELF binary of the tests' own (a copy of
 * /bin/true: nothing of the system's is ever a link target a test could write through). */
static void link_to(const char *target, const char *rel)
{
	static char own[PATH_MAX];

	if (!strcmp(target, "TRUE")) {
		char cmd[2 * PATH_MAX];

		snprintf(own, sizeof(own), "%s", tpath("true"));
		if (access(own, X_OK)) {
			snprintf(cmd, sizeof(cmd), "cp /bin/true '%s'", own);
			assert_int_equal(system(cmd), 0);
		}
		target = own;
	}
	unlink(tpath(rel));
	assert_int_equal(symlink(target, tpath(rel)), 0);
}

/* Resolves args with PATH=tmp/bin from tmp; returns the status. */
static int resolve(struct program *p, char *const *args)
{
	char path[PATH_MAX + 8];
	int n = 0;

	while (args[n])
		n++;
	snprintf(path, sizeof(path), "%s", tpath("bin"));
	assert_int_equal(chdir(tmp), 0);
	return program_resolve(args, n, &(struct program_opts){ .path_env = path }, p);
}

static void test_shebang_lines_as_linux_reads_them(void **state)
{
	char interp[256], arg[256];
	const char *long_line;

	(void)state;
	assert_int_equal(program_parse_shebang("#!/usr/bin/python3\nprint(1)\n", 27, interp,
					       sizeof(interp), arg, sizeof(arg)),
			 0);
	assert_string_equal(interp, "/usr/bin/python3");
	assert_string_equal(arg, "");
	/* everything after the interpreter is ONE argument, trimmed */
	assert_int_equal(program_parse_shebang("#! /usr/bin/env  python3 -u \r\nx", 32, interp,
					       sizeof(interp), arg, sizeof(arg)),
			 0);
	assert_string_equal(interp, "/usr/bin/env");
	assert_string_equal(arg, "python3 -u");
	assert_int_equal(
		program_parse_shebang("#!/bin/sh", 9, interp, sizeof(interp), arg, sizeof(arg)), 0);
	assert_string_equal(interp, "/bin/sh");
	assert_int_equal(program_parse_shebang("print(1)\n", 9, interp, sizeof(interp), arg,
					       sizeof(arg)),
			 -1);
	assert_int_equal(
		program_parse_shebang("#!  \n", 5, interp, sizeof(interp), arg, sizeof(arg)), -1);
	/* the kernel reads 256 bytes: a longer interpreter name is cut there, not resolved */
	long_line = "#!/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/python3\n";
	assert_int_equal(program_parse_shebang(long_line, strlen(long_line), interp, sizeof(interp),
					       arg, sizeof(arg)),
			 0);
	assert_null(strstr(interp, "python3"));
}

static void test_env_split_as_env_does(void **state)
{
	char *w[16], buf[64];
	const char *err;

	(void)state;
	snprintf(buf, sizeof(buf), "python3");
	assert_int_equal(program_env_split(buf, w, 16, &err), 1);
	assert_string_equal(w[0], "python3");
	snprintf(buf, sizeof(buf), "-S python3 -X dev");
	assert_int_equal(program_env_split(buf, w, 16, &err), 3);
	assert_string_equal(w[0], "python3");
	assert_string_equal(w[1], "-X");
	assert_string_equal(w[2], "dev");
	snprintf(buf, sizeof(buf), "-Spython3 -u");
	assert_int_equal(program_env_split(buf, w, 16, &err), 2);
	assert_string_equal(w[0], "python3");
	assert_string_equal(w[1], "-u");
	/* without -S env looks for a program named "python3 -u": refused, with the reason */
	snprintf(buf, sizeof(buf), "python3 -u");
	assert_int_equal(program_env_split(buf, w, 16, &err), -1);
	assert_non_null(strstr(err, "-S"));
	snprintf(buf, sizeof(buf), "-i python3");
	assert_int_equal(program_env_split(buf, w, 16, &err), -1);
	snprintf(buf, sizeof(buf), "-S");
	assert_int_equal(program_env_split(buf, w, 16, &err), -1);
}

static void test_shim_lines_of_pyenv_and_asdf(void **state)
{
	char tool[PATH_MAX], name[256];

	(void)state;
	assert_int_equal(program_parse_shim("#!/usr/bin/env bash\nset -e\nprogram=\"${0##*/}\"\n"
					    "export PYENV_ROOT=\"/root/.pyenv\"\n"
					    "exec \"/root/.pyenv/libexec/pyenv\" exec \"$program\" "
					    "\"$@\"\n",
					    tool, sizeof(tool), name, sizeof(name)),
			 0);
	assert_string_equal(tool, "/root/.pyenv/libexec/pyenv");
	assert_string_equal(name, ""); /* the shim's own name */
	assert_int_equal(program_parse_shim("#!/usr/bin/env bash\n# asdf-plugin: python 3.12.0\n"
					    "exec /home/u/.asdf/bin/asdf exec \"python\" \"$@\"\n",
					    tool, sizeof(tool), name, sizeof(name)),
			 0);
	assert_string_equal(tool, "/home/u/.asdf/bin/asdf");
	assert_string_equal(name, "python");
	assert_int_equal(
		program_parse_shim("#!/usr/bin/env bash\n"
				   "exec asdf exec \"python3\" \"$@\" # asdf_allow: ' asdf '\n",
				   tool, sizeof(tool), name, sizeof(name)),
		0);
	assert_string_equal(tool, "asdf");
	assert_string_equal(name, "python3");
	/* a wrapper that is not a shim */
	assert_int_equal(program_parse_shim("#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n", tool,
					    sizeof(tool), name, sizeof(name)),
			 -1);
}

static void test_path_lookup_skips_what_execvp_skips(void **state)
{
	char out[PATH_MAX], path[2 * PATH_MAX + 8];

	(void)state;
	mkdirs("p1/tool"); /* a directory */
	mkdirs("p2");
	put("p2/tool", "x"); /* not executable */
	mkdirs("p3");
	put_exec("p3/tool", "#!/bin/sh\n");
	snprintf(path, sizeof(path), "%s:%s:%s", tpath("p1"), tpath("p2"), tpath("p3"));
	assert_int_equal(program_find_in_path("tool", path, out, sizeof(out)), 0);
	assert_string_equal(out, tpath("p3/tool"));
	assert_int_equal(program_find_in_path("nothing", path, out, sizeof(out)), -1);
}

static void test_binary_keeps_argv0_as_typed(void **state)
{
	struct program p;

	(void)state;
	mkdirs("bin");
	link_to("TRUE", "bin/mytool");
	assert_int_equal(resolve(&p, (char *[]){ "mytool", "-x", NULL }), 0);
	assert_string_equal(p.interp, tpath("bin/mytool"));
	assert_string_equal(p.argv[0], "mytool");
	assert_string_equal(p.argv[1], "-x");
	assert_null(p.argv[2]);
	assert_false(p.has_script);
	assert_null(p.needs_exec);
	program_free(&p);
	assert_int_equal(resolve(&p, (char *[]){ "no-such-tool", NULL }), 127);
	assert_int_equal(resolve(&p, (char *[]){ "./no-such-file", NULL }), 127);
}

/* A FIFO named app.py (a sandboxed program may plant one, or a link to a device, where
 * root's pysb-bpf reads the program to find its #! line): never opened, so never hung on
 * (alarm: a hang fails the test); python3 is given it, as for a file without #!. */
static void test_special_file_as_program_never_opened(void **state)
{
	struct program p;

	(void)state;
	mkdirs("bin");
	link_to("TRUE", "bin/python3");
	unlink(tpath("fifo.py"));
	assert_int_equal(mkfifo(tpath("fifo.py"), 0644), 0);
	alarm(10);
	assert_int_equal(resolve(&p, (char *[]){ "./fifo.py", NULL }), 0);
	alarm(0);
	assert_string_equal(p.interp, tpath("bin/python3"));
	program_free(&p);
	unlink(tpath("fifo.py"));
}

static int resolve_typo(void *arg)
{
	return resolve(arg, (char *[]){ "nosuch.py", NULL });
}

static void test_py_file_without_shebang_runs_with_python3(void **state)
{
	char err[4096];

	struct program p;

	(void)state;
	mkdirs("bin");
	link_to("TRUE", "bin/python3");
	put("app.py", "print(1)\n");
	assert_int_equal(resolve(&p, (char *[]){ "app.py", "a", NULL }), 0);
	assert_string_equal(p.interp, tpath("bin/python3"));
	assert_string_equal(p.argv[0], tpath("bin/python3"));
	assert_string_equal(p.argv[1], "app.py");
	assert_string_equal(p.argv[2], "a");
	assert_true(p.has_script);
	assert_non_null(strstr(p.script, "/app.py"));
	program_free(&p);
	/* a mistyped script name: said as a missing file where the user is, not as a
	 * command missing from a long PATH (found by a user) */
	assert_int_equal(capture_output(resolve_typo, &p, false, err, sizeof(err)), 127);
	assert_non_null(strstr(err, "nosuch.py: no such file in "));
	assert_null(strstr(err, "PATH="));
}

static int resolve_crlf(void *arg)
{
	return resolve(arg, (char *[]){ "./crlf.py", NULL });
}

static void test_env_shebang_runs_the_interpreter_directly(void **state)
{
	char err[4096];
	struct program p;

	(void)state;
	mkdirs("bin");
	link_to("TRUE", "bin/mypython");
	put_exec("tool.py", "#!/usr/bin/env -S mypython -X dev\nprint(1)\n");
	put_exec("bin/tool", "#!/usr/bin/env mypython\nprint(1)\n");
	/* ./tool.py: the interpreter from PATH, its -S words, then the script as typed */
	assert_int_equal(resolve(&p, (char *[]){ "./tool.py", "arg", NULL }), 0);
	assert_string_equal(p.interp, tpath("bin/mypython"));
	assert_string_equal(p.argv[0], tpath("bin/mypython"));
	assert_string_equal(p.argv[1], "-X");
	assert_string_equal(p.argv[2], "dev");
	assert_string_equal(p.argv[3], "./tool.py");
	assert_string_equal(p.argv[4], "arg");
	assert_null(p.argv[5]);
	assert_true(p.has_script);
	program_free(&p);
	/* a script found on PATH is given to its interpreter by the path found */
	assert_int_equal(resolve(&p, (char *[]){ "tool", NULL }), 0);
	assert_string_equal(p.interp, tpath("bin/mypython"));
	assert_string_equal(p.argv[1], tpath("bin/tool"));
	assert_null(p.argv[2]);
	assert_non_null(strstr(p.how, "tool (PATH)"));
	program_free(&p);
	/* an interpreter env cannot find: not found, said before anything starts */
	put_exec("bad.py", "#!/usr/bin/env no-such-python\n");
	assert_int_equal(resolve(&p, (char *[]){ "./bad.py", NULL }), 127);
	/* Windows line ends: not "cannot open /usr/bin/python3", which exists (found by a
	 * user); said as what it is */
	put_exec("crlf.py", "#!/bin/echo\r\nprint(1)\r\n");
	assert_int_equal(capture_output(resolve_crlf, &p, false, err, sizeof(err)), 127);
	assert_non_null(strstr(err, "crlf.py: its #! line ends with a carriage return"));
	assert_null(strstr(err, "cannot open /bin/echo"));
}

static void test_direct_shebang_and_loops(void **state)
{
	struct program p;

	(void)state;
	put_exec("pip-style", "#!/bin/echo -E\nimport sys\n");
	assert_int_equal(resolve(&p, (char *[]){ "./pip-style", "x", NULL }), 0);
	assert_string_equal(p.interp, "/bin/echo");
	assert_string_equal(p.argv[0], "/bin/echo");
	assert_string_equal(p.argv[1], "-E");
	assert_string_equal(p.argv[2], "./pip-style");
	assert_string_equal(p.argv[3], "x");
	program_free(&p);
	/* two scripts naming each other: the kernel's limit, not a hang */
	put_exec("loop-a", "#!/tmp/never\n");
	{
		char a[PATH_MAX + 4];

		snprintf(a, sizeof(a), "#!%s\n", tpath("loop-b"));
		put_exec("loop-a", a);
		snprintf(a, sizeof(a), "#!%s\n", tpath("loop-a"));
		put_exec("loop-b", a);
	}
	assert_int_equal(resolve(&p, (char *[]){ "./loop-a", NULL }), 126);
	/* a script that may not be executed is not, as execve would refuse it; NAME.py is
	 * still read by python3 */
	put("noexec", "#!/bin/sh\n");
	assert_int_equal(resolve(&p, (char *[]){ "./noexec", NULL }), 126);
	mkdirs("bin");
	link_to("TRUE", "bin/python3");
	put("noexec.py", "#!/usr/bin/env nothing-like-this\n");
	assert_int_equal(resolve(&p, (char *[]){ "./noexec.py", NULL }), 0);
	assert_string_equal(p.argv[0], tpath("bin/python3"));
	assert_string_equal(p.argv[1], "./noexec.py");
	program_free(&p);
	/* a shell script: it will exec again, which is said */
	put_exec("run.sh", "#!/bin/sh\nls\n");
	assert_int_equal(resolve(&p, (char *[]){ "./run.sh", NULL }), 0);
	assert_non_null(p.needs_exec);
	assert_non_null(strstr(p.needs_exec, "shell"));
	program_free(&p);
}

static void test_venv_python_keeps_its_path(void **state)
{
	struct program p;
	char target[PATH_MAX];

	(void)state;
	mkdirs(".venv/bin");
	mkdirs("base/bin");
	link_to("TRUE", "base/bin/python3.11");
	snprintf(target, sizeof(target), "%s", tpath("base/bin/python3.11"));
	link_to(target, ".venv/bin/python");
	put(".venv/pyvenv.cfg", "home = base/bin\n");
	assert_int_equal(resolve(&p, (char *[]){ ".venv/bin/python", "-c", "1", NULL }), 0);
	/* not the link's target: Python finds pyvenv.cfg next to the path it was run by */
	assert_string_equal(p.interp, tpath(".venv/bin/python"));
	assert_string_equal(p.argv[0], ".venv/bin/python");
	assert_string_equal(p.argv[1], "-c");
	program_free(&p);
}

/* `python3 [options] SCRIPT`: the script the interpreter's own command line names is the
 * program's script (its implicit READ), as for `run app.py` (found by a user); not for
 * -c, -m, - (stdin). */
static void test_python_command_line_names_its_script(void **state)
{
	/* cwd: sys.path[0] is the working directory (no script; not under -P, -I) */
	static const struct {
		const char *argv[6];
		bool script, cwd;
	} cases[] = {
		{ { "python3.11", "app.py" }, true, false },
		{ { "python3.11", "-u", "-X", "dev", "app.py", "x" }, true, false },
		{ { "python3.11", "-Wignore", "-B", "app.py" }, true, false },
		{ { "python3.11", "-W", "ignore", "--", "app.py" }, true, false },
		{ { "python3.11", "-c", "app.py" }, false, true },
		{ { "python3.11", "-uc", "1", "app.py" }, false, true },
		{ { "python3.11", "-m", "app" }, false, true },
		{ { "python3.11", "-", "app.py" }, false, true },
		{ { "python3.11" }, false, true },
		{ { "python3.11", "-I", "-c", "1" }, false, false },
		{ { "python3.11", "-Pm", "app" }, false, false },
		{ { "python3.11", "-sI" }, false, false },
		{ { "python3.11", "-c", "1", "-P" }, false, true },
		{ { "python3.11", "-I", "app.py" }, true, false },
	};
	char want[PATH_MAX], cwd[PATH_MAX];

	(void)state;
	mkdirs("bin");
	link_to("TRUE", "bin/python3.11");
	put("app.py", "print(1)\n");
	snprintf(want, sizeof(want), "%s", tpath("app.py"));
	assert_int_equal(chdir(tmp), 0);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct program p;
		char *argv[7] = { 0 };

		memcpy(argv, cases[i].argv, sizeof(cases[i].argv));
		assert_int_equal(resolve(&p, argv), 0);
		assert_int_equal(p.has_script, cases[i].script);
		if (cases[i].script) {
			assert_string_equal(p.script, want);
			assert_string_equal(p.script_named, want);
		}
		assert_string_equal(p.path0_cwd, cases[i].cwd ? cwd : "");
		program_free(&p);
	}
	/* a binary: nothing */
	{
		struct program p;

		link_to("TRUE", "bin/tool");
		assert_int_equal(resolve(&p, (char *[]){ "tool", "-c", "1", NULL }), 0);
		assert_string_equal(p.path0_cwd, "");
		program_free(&p);
	}
}

/* A pyenv shim as pyenv writes it, exporting PYENV_ROOT=tmp/root, its tool tmp/inst/pyenv
 * (which would make tmp/RAN if anything ran it). */
static void pyenv_layout(void)
{
	char text[4 * PATH_MAX];

	mkdirs("bin");
	mkdirs("inst");
	mkdirs("root/shims");
	mkdirs("root/versions/3.99/bin");
	mkdirs("root/versions/3.98.1/bin");
	link_to("TRUE", "root/versions/3.99/bin/python3");
	link_to("TRUE", "root/versions/3.98.1/bin/python3");
	link_to("TRUE", "bin/python3");
	snprintf(text, sizeof(text), "#!/bin/sh\ntouch %s\n", tpath("RAN"));
	put_exec("inst/pyenv", text);
	snprintf(text, sizeof(text),
		 "#!/usr/bin/env bash\nset -e\nprogram=\"${0##*/}\"\n"
		 "export PYENV_ROOT=\"%s\"\nexec \"%s\" exec \"$program\" \"$@\"\n",
		 tpath("root"), tpath("inst/pyenv"));
	put_exec("root/shims/python3", text);
	put("root/version", "3.99\n");
	unlink(tpath(".python-version"));
	unlink(tpath("RAN"));
}

static int resolve_shim_at(void *arg)
{
	return resolve(arg, (char *[]){ tpath("root/shims/python3"), NULL });
}

/*
 * The Python a pyenv shim names, found as `pyenv which` finds it, by reading its version
 * files: nothing runs before the sandbox (found by an adversary: pysb-bpf ran the shim's
 * `TOOL which`, outside every sandbox, as root, and a sandboxed program had written the
 * shim). $PYENV_ROOT/version; the nearest .python-version (comments, a prefix: the latest
 * installed); PYENV_VERSION; `system` (PATH without the shims); a version with '/' ignored.
 */
static void test_pyenv_shim_read_as_pyenv_reads_it(void **state)
{
	char err[4096];
	struct program p;

	(void)state;
	pyenv_layout();
	assert_int_equal(resolve_shim_at(&p), 0);
	assert_string_equal(p.interp, tpath("root/versions/3.99/bin/python3"));
	assert_false(p.has_script); /* the shim is never read by the program */
	assert_non_null(
		strstr(p.how, "pyenv shim of python3 (its version files read, nothing run)"));
	program_free(&p);
	put(".python-version", "# pinned\n3.98\n");
	assert_int_equal(resolve_shim_at(&p), 0);
	assert_string_equal(p.interp, tpath("root/versions/3.98.1/bin/python3"));
	program_free(&p);
	setenv("PYENV_VERSION", "../../bin:system", 1);
	assert_int_equal(resolve_shim_at(&p), 0);
	assert_string_equal(p.interp, tpath("bin/python3"));
	program_free(&p);
	/* #!/usr/bin/env python3 with the shim first on PATH: the real one as well */
	setenv("PYENV_VERSION", "3.99", 1);
	unlink(tpath("bin/python3"));
	assert_int_equal(symlink(tpath("root/shims/python3"), tpath("bin/python3")), 0);
	put_exec("s.py", "#!/usr/bin/env python3\n");
	assert_int_equal(resolve(&p, (char *[]){ "./s.py", NULL }), 0);
	assert_string_equal(p.interp, tpath("root/versions/3.99/bin/python3"));
	assert_string_equal(p.argv[1], "./s.py");
	program_free(&p);
	/* a version not installed: an error before the start, not a denial inside */
	setenv("PYENV_VERSION", "2.7", 1);
	assert_int_equal(capture_output(resolve_shim_at, &p, false, err, sizeof(err)), 126);
	assert_non_null(strstr(err, "no version it would choose here (read from PYENV_VERSION)"));
	/* python-.. must not leave versions/ (pyenv strips python- after its check) */
	setenv("PYENV_VERSION", "python-..", 1);
	assert_int_equal(capture_output(resolve_shim_at, &p, false, err, sizeof(err)), 126);
	/* set but empty: as unset (the .python-version above) */
	setenv("PYENV_VERSION", "", 1);
	assert_int_equal(resolve_shim_at(&p), 0);
	assert_string_equal(p.interp, tpath("root/versions/3.98.1/bin/python3"));
	program_free(&p);
	unsetenv("PYENV_VERSION");
	/* an empty .python-version: pyenv's `system` */
	link_to("TRUE", "bin/python3");
	put(".python-version", "\n");
	assert_int_equal(resolve_shim_at(&p), 0);
	assert_string_equal(p.interp, tpath("bin/python3"));
	program_free(&p);
	/* root reads the version files: never through a link (a sandbox under expose-rw=.
	 * made .python-version a link to /etc/shadow, and root printed its lines: found by an
	 * adversary), and never prints what it read */
	put("secret", "TOKEN_5ecret\n");
	unlink(tpath(".python-version"));
	assert_int_equal(symlink(tpath("secret"), tpath(".python-version")), 0);
	assert_int_equal(resolve_shim_at(&p), 0);
	assert_string_equal(p.interp, tpath("root/versions/3.99/bin/python3")); /* link ignored */
	program_free(&p);
	unlink(tpath(".python-version"));
	put(".python-version", "TOKEN_5ecret\n");
	assert_int_equal(capture_output(resolve_shim_at, &p, false, err, sizeof(err)), 126);
	assert_null(strstr(err, "TOKEN_5ecret"));
	assert_int_not_equal(access(tpath("RAN"), F_OK), 0); /* the tool never ran */
	unlink(tpath(".python-version"));
}

static int resolve_planted(void *arg)
{
	return resolve(arg, (char *[]){ "./app.py", NULL });
}

/* asdf's shims: the plugin's line of the nearest .tool-versions, under ASDF_DATA_DIR. A
 * shim of another tool is refused, its tool never run. */
static void test_asdf_shim_and_other_tools(void **state)
{
	char text[4 * PATH_MAX], err[4096], *home;
	struct program p;

	(void)state;
	pyenv_layout();
	mkdirs("asdf/installs/python/3.12.1/bin");
	link_to("TRUE", "asdf/installs/python/3.12.1/bin/python3");
	snprintf(text, sizeof(text),
		 "#!/usr/bin/env bash\n# asdf-plugin: python 3.12.1\n"
		 "exec %s exec \"python3\" \"$@\"\n",
		 tpath("inst/asdf"));
	put_exec("asdf-shim", text);
	put(".tool-versions", "nodejs 20.1.0\npython 3.11.0 3.12.1 # fallback\n");
	setenv("ASDF_DATA_DIR", tpath("asdf"), 1);
	assert_int_equal(resolve(&p, (char *[]){ "./asdf-shim", NULL }), 0);
	assert_string_equal(p.interp, tpath("asdf/installs/python/3.12.1/bin/python3"));
	program_free(&p);
	/* asdf goes on up past a .tool-versions with no python line: ~/.tool-versions */
	put(".tool-versions", "nodejs 20.1.0\n");
	mkdirs("home");
	put("home/.tool-versions", "python 3.12.1\n");
	home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	setenv("HOME", tpath("home"), 1);
	assert_int_equal(resolve(&p, (char *[]){ "./asdf-shim", NULL }), 0);
	assert_string_equal(p.interp, tpath("asdf/installs/python/3.12.1/bin/python3"));
	program_free(&p);
	if (home)
		setenv("HOME", home, 1);
	free(home);
	unsetenv("ASDF_DATA_DIR");
	unlink(tpath(".tool-versions"));
	/* any other `exec TOOL exec NAME` (a program rewrote its app.py into one, naming a
	 * script of its own): refused, nothing run */
	snprintf(text, sizeof(text), "#!/usr/bin/env bash\nexec \"%s\" exec \"$program\" \"$@\"\n",
		 tpath("inst/pyenv-evil"));
	put_exec("inst/pyenv-evil", "#!/bin/sh\ntouch RAN\n");
	put_exec("app.py", text);
	assert_int_equal(capture_output(resolve_planted, &p, false, err, sizeof(err)), 126);
	assert_non_null(strstr(err, "whose versions pysb-bpf does not read"));
	assert_int_not_equal(access(tpath("RAN"), F_OK), 0);
	unlink(tpath("app.py"));
}

static bool granted(const struct implicit_path *v, size_t n, const char *rel, uint32_t access)
{
	char real[PATH_MAX];

	if (!realpath(tpath(rel), real))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].path, real) && (v[i].access & access) == access)
			return true;
	return false;
}

/* uv: .venv/bin/python -> <uv>/python/cpython-X/bin/python3.X; conda: envs/NAME/bin/python
 * a real binary. The interpreter resolved is what decides the implicit set: the venv
 * (pyvenv.cfg, site-packages) and the base installation both. */
static void test_uv_and_conda_layouts_grant_their_prefixes(void **state)
{
	const char *uv = "uv/python/cpython-3.12.1-linux-x86_64-gnu";
	char rel[256], target[3 * PATH_MAX];
	struct implicit_path *v;
	struct program p;
	size_t n;

	(void)state;
	snprintf(rel, sizeof(rel), "%s/lib/python3.12", uv);
	mkdirs(rel);
	snprintf(rel, sizeof(rel), "%s/bin", uv);
	mkdirs(rel);
	snprintf(rel, sizeof(rel), "%s/bin/python3.12", uv);
	link_to("TRUE", "true-link"); /* makes tmp/true */
	snprintf(target, sizeof(target), "cp %s '%s'", tpath("true"), tpath(rel));
	assert_int_equal(system(target), 0);
	mkdirs("proj/.venv/bin");
	mkdirs("proj/.venv/lib/python3.12/site-packages");
	put("proj/.venv/pyvenv.cfg", "home = x\nuv = 0.4\n");
	snprintf(target, sizeof(target), "%s", tpath(rel));
	link_to(target, "proj/.venv/bin/python");
	assert_int_equal(resolve(&p, (char *[]){ "proj/.venv/bin/python", NULL }), 0);
	assert_string_equal(p.interp, tpath("proj/.venv/bin/python"));
	assert_int_equal(implicit_paths(p.interp, NULL, NULL, &v, &n), 0);
	assert_true(granted(v, n, "proj/.venv", PYSB_ACC_READ));
	assert_true(granted(v, n, uv, PYSB_ACC_READ));
	snprintf(rel, sizeof(rel), "%s/lib/python3.12", uv);
	assert_true(granted(v, n, rel, PYSB_ACC_READ));
	assert_false(granted(v, n, "proj", PYSB_ACC_READ));
	implicit_paths_free(v, n);
	program_free(&p);

	mkdirs("conda/envs/ml/bin");
	mkdirs("conda/envs/ml/lib/python3.11/site-packages");
	snprintf(target, sizeof(target), "cp %s '%s'", tpath("true"),
		 tpath("conda/envs/ml/bin/python3.11"));
	assert_int_equal(system(target), 0);
	link_to("python3.11", "conda/envs/ml/bin/python");
	assert_int_equal(resolve(&p, (char *[]){ "conda/envs/ml/bin/python", NULL }), 0);
	assert_int_equal(implicit_paths(p.interp, NULL, NULL, &v, &n), 0);
	assert_true(granted(v, n, "conda/envs/ml", PYSB_ACC_READ | PYSB_ACC_EXEC));
	assert_true(granted(v, n, "conda/envs/ml/lib/python3.11", PYSB_ACC_READ));
	assert_false(granted(v, n, "conda", PYSB_ACC_READ));
	implicit_paths_free(v, n);
	program_free(&p);
}

/* Whether a grant of v covers rel (the path itself or an ancestor). */
static bool covered(const struct implicit_path *v, size_t n, const char *rel)
{
	char real[PATH_MAX];

	if (!realpath(tpath(rel), real))
		return false;
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(v[i].path);

		if (!strncmp(v[i].path, real, k) &&
		    (real[k] == '\0' || real[k] == '/' || !strcmp(v[i].path, "/")))
			return true;
	}
	return false;
}

/*
 * A sandbox that may write the project may re-point its venv's links. A link named bin
 * that leads elsewhere (A/bin -> a home's bin, A/bin -> any directory) must never make
 * the next run grant that directory's parent as a "venv": only a real venv (pyvenv.cfg)
 * or the Python installation the chain ends in is granted whole.
 */
static void test_relinked_bin_never_grants_its_parent(void **state)
{
	struct implicit_path *v;
	struct program p;
	size_t n;

	(void)state;
	mkdirs("home/bin");
	mkdirs("other");
	put("home/secret.txt", "secret");
	put("other/secret.txt", "secret");
	link_to("TRUE", "home/bin/python3");
	mkdirs("proj2/.venv/bin");
	mkdirs("proj2/A");
	put("proj2/.venv/pyvenv.cfg", "home = /usr/bin\n");
	link_to(tpath("home/bin"), "proj2/A/bin");
	link_to("../../A/bin/python3", "proj2/.venv/bin/python");
	assert_int_equal(resolve(&p, (char *[]){ "proj2/.venv/bin/python", NULL }), 0);
	assert_int_equal(implicit_paths(p.interp, NULL, NULL, &v, &n), 0);
	assert_true(granted(v, n, "proj2/.venv", PYSB_ACC_READ)); /* the real venv */
	assert_false(covered(v, n, "home/secret.txt"));
	assert_false(covered(v, n, "proj2/A"));
	implicit_paths_free(v, n);
	program_free(&p);

	/* A/bin -> a directory of any name: its parent is no prefix either */
	link_to(tpath("other"), "proj2/A/bin");
	link_to("TRUE", "other/python3");
	assert_int_equal(resolve(&p, (char *[]){ "proj2/.venv/bin/python", NULL }), 0);
	assert_int_equal(implicit_paths(p.interp, NULL, NULL, &v, &n), 0);
	assert_false(covered(v, n, "other/secret.txt"));
	assert_false(covered(v, n, "home/secret.txt"));
	implicit_paths_free(v, n);
	program_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shebang_lines_as_linux_reads_them),
		cmocka_unit_test(test_env_split_as_env_does),
		cmocka_unit_test(test_shim_lines_of_pyenv_and_asdf),
		cmocka_unit_test(test_path_lookup_skips_what_execvp_skips),
		cmocka_unit_test(test_binary_keeps_argv0_as_typed),
		cmocka_unit_test(test_py_file_without_shebang_runs_with_python3),
		cmocka_unit_test(test_env_shebang_runs_the_interpreter_directly),
		cmocka_unit_test(test_direct_shebang_and_loops),
		cmocka_unit_test(test_venv_python_keeps_its_path),
		cmocka_unit_test(test_python_command_line_names_its_script),
		cmocka_unit_test(test_pyenv_shim_read_as_pyenv_reads_it),
		cmocka_unit_test(test_asdf_shim_and_other_tools),
		cmocka_unit_test(test_special_file_as_program_never_opened),
		cmocka_unit_test(test_uv_and_conda_layouts_grant_their_prefixes),
		cmocka_unit_test(test_relinked_bin_never_grants_its_parent),
	};

	if (!mkdtemp(tmp))
		return 1;
	return cmocka_run_group_tests_name("program", tests, NULL, group_teardown);
}
