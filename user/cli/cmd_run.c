/* SPDX-License-Identifier: MIT */
/*
 * pysb-bpf run and pysb-bpf attach. See main.c.
 */
#include <pwd.h>
#include <sys/stat.h>

#include "main_int.h"

/* ---------------- run */

/* What the policy itself says of this launch. learn=FILE (or learn=true: the policy
 * itself): every launch learns, as py-sandboxes does, so nothing is denied: said on every
 * launch. os-sandbox=none turns py-sandboxes' own layer off; the kernel's is not, and says
 * so (and a notice record goes to the event stream). 0, or -1 after saying why. */
static int launch_modes(struct cli *c, const struct policy *p, bool *os_none)
{
	const char *v;

	if (!c->learn && (v = policy_get(p, "learn")) && strcasecmp(v, "false")) {
		c->learn = true;
		c->learn_file = strcasecmp(v, "true") ? v : NULL;
		pr_warn("learn=%s in %s: learning on every launch, so NOTHING is denied; the rules "
			"this run misses go into %s. Remove the line to enforce",
			v, c->policy, c->learn_file ? c->learn_file : c->policy);
		if (learn_check_target(c->learn_file ? c->learn_file : c->policy, true))
			return -1;
	}
	*os_none = (v = policy_get(p, "os-sandbox")) && !strcmp(v, "none");
	if (*os_none)
		pr_warn("os-sandbox=none in %s: py-sandboxes' @sandbox isolation is off; pysb-bpf "
			"still confines the program in the kernel with this policy",
			c->policy);
	return 0;
}

/* Do a and b name one file (`--learn=.py-sandboxes` and the policy ./.py-sandboxes: a
 * policy made from the template by this run then gets no .old of its own; found by a
 * user)? */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !strcmp(a, b) ||
	       (!stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

/*
 * sudo replaces the user's PATH with its secure_path and drops VIRTUAL_ENV: a bare
 * `python3` is then the system's, not the activated venv's (found by a user: the program
 * ran without the venv's packages, silently, while `check` without sudo showed the venv's
 * interpreter). Said when started through sudo, a venv lies in the working directory or
 * one above it (found by a user: from a subdirectory of the project, nothing was said),
 * and the interpreter is not its.
 */
static void sudo_path_hint(const struct program *prog)
{
	static const char *const venvs[] = { ".venv", "venv", "env" };
	char dir[PATH_MAX], py[PATH_MAX + 32], *slash;

	/* a Python found by a PATH lookup (a bare name, #!/usr/bin/env): not one named */
	if (!getenv("SUDO_UID") || !interpreter_is_python(prog->interp) ||
	    !(strstr(prog->how, "(PATH)") || strstr(prog->how, "/env ") ||
	      strstr(prog->how, "(python3 runs it)")) ||
	    !getcwd(dir, sizeof(dir)) || dir[0] != '/')
		return;
	for (;;) {
		for (size_t i = 0; i < sizeof(venvs) / sizeof(venvs[0]); i++) {
			size_t n = strlen(dir) + 1 + strlen(venvs[i]);

			snprintf(py, sizeof(py), "%s/%s/bin/python", dir, venvs[i]);
			if (access(py, X_OK))
				continue;
			if (!strncmp(prog->interp, py, n) && prog->interp[n] == '/')
				return; /* its own */
			pr_warn("started through sudo, %s was found on sudo's PATH, not yours: the "
				"venv in %s/%s is not used; name its interpreter (pysb-bpf run -- "
				"%s/%s/bin/python ...)",
				prog->interp, dir, venvs[i], dir, venvs[i]);
			return;
		}
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return; /* / itself: a venv there would be the system's */
		*slash = '\0';
	}
}

/* Can the program start under this policy (program_check), said at -v with the compiled
 * rules? 0, or -1 after saying why not. */
static int ready_to_run(const struct cli *c, const struct program *prog,
			const struct compiled *compiled, bool audit)
{
	sudo_path_hint(prog);
	if (program_check(prog, compiled, audit))
		return -1;
	if (log_level >= LOG_INFO) {
		pr_info("policy %s compiled:", c->policy);
		print_compiled(compiled);
		fflush(stdout);
	}
	return 0;
}

/* The policy's expose-rw= of your TMPDIR passes the program no TMPDIR, your proxy is not
 * passed under a net= rule out (said by check too). */
static void tmpdir_hint(const struct policy *p, char *const *envp)
{
	const struct policy_src *src = NULL;
	char *msg = policy_tmpdir_warning(p, environ, envp, &src);

	if (msg)
		pr_warn("%s:%u: %s", src->file, src->line, msg);
	free(msg);
	msg = policy_proxy_warning(p, environ, envp, &src);
	if (msg)
		pr_warn("%s:%u: %s", src->file, src->line, msg);
	free(msg);
}

/* The program's environment (and argv[0] for it), the --events stream (opened, with its
 * notice of os-sandbox=none), the text learning will merge into as the run begins (one the
 * program changes is not merged into). 0, or -1 after saying why. */
static int program_io(const struct cli *c, const struct policy *p, const struct compiled *compiled,
		      const struct identity *id, struct path_writer *w, bool audit, bool os_none,
		      struct program *prog, char ***envp, struct events_json *ev, FILE **ev_out,
		      char **before)
{

	if (policy_build_env(p, environ, envp) || (c->learn && learn_extend_env(p, envp)) ||
	    program_argv0_for(prog, *envp)) {
		pr_err("cannot build the program's environment");
		return -1;
	}
	tmpdir_hint(p, *envp);
	events_set_proxies(*envp);
	program_writer(w, id, compiled);
	if (open_events(c, audit, compiled, w, ev, ev_out) ||
	    (c->learn && !(*before = learn_read_target(c->learn_file ?: c->policy, w))))
		return -1;
	if (os_none && ev->out)
		events_json_notice(ev, "os-sandbox=none: py-sandboxes' @sandbox isolation is off; "
				       "the kernel confinement of this policy is on");
	return 0;
}

static int run_command(struct cli *cli);

int cmd_run(struct cli *cli)
{
	run_ignore_sigpipe();
	return run_command(cli);
}

static int run_command(struct cli *cli)
{
	struct compiled compiled = { 0 };
	struct policy *p = NULL;
	struct program prog = { 0 };
	struct identity id;
	char **envp = NULL, *before = NULL;
	struct cli c = *cli;
	int ret = EXIT_PYSB_ERROR, audit;
	bool os_none = false, created = false;
	struct events_json ev = { 0 };
	FILE *ev_out = NULL;
	struct learn_set ls = { .envp = environ };
	struct sandbox_prep *prep = NULL;
	struct path_writer w;

	/* An unwritable target fails now, not after the run. */
	if (refuse_inherited_cgroup_file() ||
	    (c.learn && (learn_check_target(c.learn_file ?: c.policy, true) ||
			 learn_prepare(c.policy, &created))))
		goto out;
	/* who the program runs as, first: the policy's ~ is that user's */
	if (resolve_identity(c.user, &id) || !(p = load_policy(&c)) ||
	    (c.learn && policy_check_learn(p)) || launch_modes(&c, p, &os_none))
		goto out;
	/* The kernel's part of the set-up meanwhile, with the ring a run of this mode takes
	 * unless the policy says otherwise (bpf.events-buffer: done again with its size). */
	prep = sandbox_prep_start(c.learn ? PYSB_RINGBUF_LEARN : PYSB_RINGBUF_BYTES);
	ret = program_resolve(c.rest, c.n_rest, NULL, &prog);
	if (ret)
		goto out;
	ret = EXIT_PYSB_ERROR;
	/* root's runs keep the implicit paths of an interpreter (user/compile/implicit.c) */
	implicit_cache_dir = geteuid() ? NULL : PYSB_RUN_DIR "/implicit";
	if (compile_for(p, &prog, c.events, &compiled))
		goto out;
	audit = c.audit || c.learn || compiled.audit_mode;
	if (ready_to_run(&c, &prog, &compiled, audit) ||
	    program_io(&c, p, &compiled, &id, &w, audit, os_none, &prog, &envp, &ev, &ev_out,
		       &before))
		goto out;
	ret = sandbox_run(&(struct run_opts){
		.path = prog.interp,
		.argv = prog.argv,
		.envp = envp,
		.compiled = &compiled,
		.audit = audit,
		.policy = c.policy,
		.ringbuf_bytes = compiled.events_buffer ? compiled.events_buffer
				 : c.learn		? PYSB_RINGBUF_LEARN
							: PYSB_RINGBUF_BYTES,
		.events = c.events || c.learn ? &ev : NULL,
		.learn = c.learn ? &ls : NULL,
		.uid = id.uid,
		.gid = id.gid,
		.groups = id.groups,
		.n_groups = id.uid == (uid_t)-1 ? 0 : (size_t)id.n_groups,
		.prep = prep,
	});
	prep = NULL; /* sandbox_run's */
	/* Learn what was recorded, even when the program failed; not when nothing ran. The
	 * lines added on stderr (stdout is the program's). A write that fails saves them to
	 * a fallback file and keeps the program's status; 125 only when they are lost. */
	if (c.learn && (ret != EXIT_PYSB_ERROR || ls.records) &&
	    learn_write(c.learn_file ?: c.policy, &ls, &compiled,
			!created || (c.learn_file && !same_file(c.learn_file, c.policy)), true,
			stderr, &w, before) < 0)
		ret = EXIT_PYSB_ERROR;
out:
	sandbox_prep_cancel(prep);
	learn_set_free(&ls);
	free(before);
	if (ev_out && ev_out != stdout)
		fclose(ev_out);
	policy_env_free(envp);
	compiled_free(&compiled);
	policy_free(p);
	program_free(&prog);
	return ret;
}

/* ---------------- attach */

/* pysb-bpf attach --pid PID [--policy FILE] [--audit] [--events FILE|-]: a running process
 * (a notebook's kernel between two cells) is confined from then on; Ctrl-C detaches it. */
/* HOME, USER and LOGNAME of the real user of process `pid`, for the policy it is confined
 * by. 0, or -1 after saying why. */
static int attach_identity(long pid, struct identity *id)
{
	char path[64], line[4096];
	struct passwd *pw = NULL;
	unsigned u[4];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	f = fopen(path, "re");
	if (!f) {
		pr_err("attach: no process %ld (or not ours to see): %s", pid, strerror(errno));
		return -1;
	}
	/* its file system ids (what it could change), and its groups */
	*id = (struct identity){ .uid = 0 };
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 7, *end;

		if (sscanf(line, "Uid: %u %u %u %u", &u[0], &u[1], &u[2], &u[3]) == 4) {
			id->uid = u[3];
			pw = getpwuid(u[0]);
		} else if (sscanf(line, "Gid: %u %u %u %u", &u[0], &u[1], &u[2], &u[3]) == 4) {
			id->gid = u[3];
		} else if (!strncmp(line, "Groups:", 7)) {
			for (unsigned long g;
			     id->n_groups < 256 && (g = strtoul(p, &end, 10), end != p); p = end)
				id->groups[id->n_groups++] = (gid_t)g;
		}
	}
	fclose(f);
	/* a uid with no name: the caller's environment, as before */
	return pw ? set_user_environment(pw) : 0;
}

int cmd_attach(struct cli *cli)
{
	struct compiled compiled = { 0 };
	struct events_json ev = { 0 };
	struct program prog = { 0 };
	struct policy *p = NULL;
	struct path_writer w;
	struct identity id;
	FILE *ev_out = NULL;
	struct cli c = *cli;
	long pid = c.pid;
	int ret = EXIT_PYSB_ERROR, audit;
	char exe[64];
	ssize_t len;

	if (pid <= 0) {
		pr_err("attach: --pid PID is required (the process to confine from now on); see "
		       "'pysb-bpf attach --help'");
		return EXIT_USAGE;
	}
	/* The policy's ~ and ${HOME} are the process's user's, not the caller's (root's
	 * through sudo) */
	if (attach_identity(pid, &id))
		goto out;
	p = load_policy(&c);
	if (!p)
		goto out;
	/* Its executable decides the implicit paths, as the interpreter does for run. */
	snprintf(exe, sizeof(exe), "/proc/%ld/exe", pid);
	len = readlink(exe, prog.interp, sizeof(prog.interp) - 1);
	if (len <= 0) {
		pr_err("attach: no process %ld (or not ours to see): %s", pid, strerror(errno));
		goto out;
	}
	prog.interp[len] = '\0';
	if (compile_for(p, &prog, c.events, &compiled))
		goto out;
	audit = c.audit || compiled.audit_mode;
	program_writer(&w, &id, &compiled);
	if (open_events(&c, audit, &compiled, &w, &ev, &ev_out))
		goto out;
	ret = sandbox_attach(&(struct run_opts){ .compiled = &compiled,
						 .audit = audit,
						 .policy = c.policy,
						 .events = c.events ? &ev : NULL,
						 .uid = (uid_t)-1,
						 .gid = (gid_t)-1 },
			     (pid_t)pid);
out:
	if (ev_out && ev_out != stdout)
		fclose(ev_out);
	compiled_free(&compiled);
	policy_free(p);
	return ret;
}
