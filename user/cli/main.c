/* SPDX-License-Identifier: MIT */
/*
 * pysb-bpf: enforce a py-sandboxes policy in the kernel with BPF LSM programs.
 * Subcommands dispatch through one table, bpftool style.
 */
#include <errno.h>
#include <fnmatch.h>
#include <grp.h>
#include <pwd.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "check.h"
#include "cgroup.h"
#include "cli.h"
#include "compile.h"
#include "events.h"
#include "daemon.h"
#include "diff.h"
#include "learn.h"
#include "loader.h"
#include "log.h"
#include "policy.h"
#include "probe.h"
#include "version.h"
#include "program.h"
#include "runner.h"
#include "status.h"

extern char **environ;

static struct policy *load_policy(const struct cli *c)
{
	struct policy_diag diag = { 0 };
	struct policy *p = NULL;

	if (policy_parse_file(c->policy, environ, NULL, c->overrides, c->n_overrides, &p, &diag))
		p = NULL;
	policy_diag_print(stderr, &diag);
	policy_diag_free(&diag);
	return p;
}

/* learn=false in the policy locks it: learning must not write into it. */
static int policy_check_learn(const struct policy *p)
{
	const char *v = policy_get(p, "learn");

	if (v && !strcasecmp(v, "false")) {
		pr_err("the policy says learn=false: it is locked against learning; remove that "
		       "line to learn");
		return -1;
	}
	return 0;
}

static int compile_for(const struct policy *p, const struct program *prog, struct compiled *out)
{
	struct compile_opts co = {
		.interpreter = prog && prog->interp[0] ? prog->interp : NULL,
		.script = prog && prog->has_script ? prog->script : NULL,
	};
	co.implicit = true; /* unless the policy says bpf.implicit=false */
	return policy_compile(p, &co, out);
}

static void print_compiled(const struct compiled *c)
{
	char acc[32];

	if (c->exec_src.file)
		printf("exec  %-10s execve after the start  (%s:%u)\n",
		       c->exec_allowed ? "allowed" : "denied", c->exec_src.file, c->exec_src.line);
	else
		printf("exec  %-10s execve after the start  (default: python-api has no "
		       "ALLOW:process-exec)\n",
		       "denied");

	for (size_t i = 0; i < c->n_files; i++) {
		const struct compiled_file *f = &c->files[i];

		if (f->implicit)
			printf("file  %-10s %s  (implicit: %s)\n",
			       access_str(f->access, acc, sizeof(acc)), f->path, f->why);
		else
			printf("file  %-10s %s  (%s:%u)\n", access_str(f->access, acc, sizeof(acc)),
			       f->path, f->src.file, f->src.line);
	}
}

struct identity {
	uid_t uid;
	gid_t gid;
	gid_t groups[256];
	int n_groups;
};

/*
 * Who the program runs as: --user, else the user who invoked sudo (SUDO_UID), else the
 * caller unchanged ((uid_t)-1). Root stays root only when asked for or not started by sudo.
 */
static int resolve_identity(const char *user, struct identity *id)
{
	const char *sudo_uid = getenv("SUDO_UID");
	struct passwd *pw = NULL;
	char *end;

	id->uid = (uid_t)-1;
	if (user) {
		unsigned long n = strtoul(user, &end, 10);

		pw = (*user && !*end) ? getpwuid((uid_t)n) : getpwnam(user);
		if (!pw) {
			pr_err("--user %s: no such user", user);
			return -1;
		}
	} else if (sudo_uid && getuid() == 0) {
		pw = getpwuid((uid_t)strtoul(sudo_uid, NULL, 10));
		if (!pw) {
			pr_err("SUDO_UID=%s: no such user; use --user", sudo_uid);
			return -1;
		}
	} else {
		return 0;
	}
	id->uid = pw->pw_uid;
	id->gid = pw->pw_gid;
	id->n_groups = sizeof(id->groups) / sizeof(id->groups[0]);
	if (getgrouplist(pw->pw_name, pw->pw_gid, id->groups, &id->n_groups) < 0) {
		pr_err("user %s is in more than %zu groups", pw->pw_name,
		       sizeof(id->groups) / sizeof(id->groups[0]));
		return -1;
	}
	pr_info("the program runs as %s (uid %u, gid %u)", pw->pw_name, id->uid, id->gid);
	return 0;
}

/* --events FILE|-: the JSON stream (docs/events.md); stdout is shared with the program. */
static int open_events(const struct cli *c, bool audit, const struct compiled *compiled,
		       struct events_json *ev, FILE **out)
{
	const char *mode = c->learn ? "learn" : audit ? "audit" : "enforce";

	if (!c->events) /* learning alone: rendered, not written */
		return c->learn && events_json_init(ev, NULL, "", mode, compiled) ? -1 : 0;
	*out = strcmp(c->events, "-") ? fopen(c->events, "we") : stdout;
	if (!*out) {
		pr_err("cannot open the event stream %s: %s", c->events, strerror(errno));
		return -1;
	}
	if (events_json_init(ev, *out, strcmp(c->events, "-") ? c->events : "stdout", mode,
			     compiled)) {
		pr_err("out of memory");
		return -1;
	}
	return 0;
}

/* ---- learning (issue 6): --learn[=FILE] and `learn --from` (user/learn/learn.c) ---- */

/* What the compiled policy already grants (implicit paths included) needs no line. */
static struct learn_covered *covered_of(const struct compiled *c)
{
	struct learn_covered *v = calloc(c->n_files + 1, sizeof(*v));

	for (size_t i = 0; v && i < c->n_files; i++)
		v[i] = (struct learn_covered){ c->files[i].path, c->files[i].access,
					       c->files[i].implicit ? NULL : c->files[i].src.file,
					       c->files[i].src.line };
	return v;
}

/* A missing policy starts from py-sandboxes' learning template, as python-sb --learn does. */
static int learn_prepare(const char *policy, bool *created)
{
	char stamp[64], *t;
	int ret;

	*created = false;
	if (!access(policy, F_OK))
		return 0;
	learn_stamp(time(NULL), stamp, sizeof(stamp));
	t = learn_template(stamp);
	ret = t ? learn_write_atomic(policy, t) : -1;
	free(t);
	if (ret) {
		pr_err("cannot create %s for learning: %s", policy, strerror(errno));
		return -1;
	}
	fprintf(stderr, "pysb-bpf: learning: %s did not exist; created from the template\n",
		policy);
	*created = true;
	return 0;
}

/*
 * A learning run sees the environment the learned policy will give: the policy's, plus
 * every variable learning will write as env=NAME=${NAME} (not secrets, not names an
 * unenv= rule removes). Otherwise a program needing MYAPP_MODE fails while learning.
 */
static int learn_extend_env(const struct policy *p, char ***envp)
{
	size_t n = 0, cap;
	char **v;

	while ((*envp)[n])
		n++;
	cap = n + 1;
	for (size_t i = 0; environ[i]; i++)
		cap++;
	v = realloc(*envp, cap * sizeof(*v));
	if (!v)
		return -1;
	*envp = v;
	for (size_t i = 0; environ[i]; i++) {
		const char *eq = strchr(environ[i], '=');
		char name[256];
		bool skip = false;

		if (!eq || !eq[1] || (size_t)(eq - environ[i]) >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - environ[i]), environ[i]);
		if (!learn_env_passable(name) || learn_env_secret(name))
			continue;
		for (size_t k = 0; k < n && !skip; k++)
			skip = !strncmp(v[k], environ[i], (size_t)(eq - environ[i]) + 1);
		for (size_t k = 0; k < p->n_envs && !skip; k++)
			skip = p->envs[k].unset && !fnmatch(p->envs[k].name, name, 0);
		if (!skip && !(v[n++] = strdup(environ[i])))
			return -1;
	}
	v[n] = NULL;
	return 0;
}

/* learn_file's status: 0 written, 1 not (the rules in a fallback file), -1 lost. */
static int learn_write(const char *file, struct learn_set *ls, const struct compiled *c,
		       bool backup, bool envs, FILE *review)
{
	struct learn_covered *cov = covered_of(c);
	char *cwd = getcwd(NULL, 0);
	struct learn_env env = { .envp = environ,
				 .cwd = cwd,
				 .covered = cov,
				 .n_covered = cov ? c->n_files : 0,
				 .envs = envs };
	int ret = learn_file(file, ls, &env, backup, time(NULL), review);

	free(cov);
	free(cwd);
	return ret;
}

static int cmd_learn(struct cli *cli)
{
	const char *from = cli->from, *policy = cli->policy;
	struct learn_set ls = { .envp = environ };
	struct compiled compiled = { 0 };
	struct program prog = { 0 };
	struct policy *p = NULL;
	struct cli c = { 0 };
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	bool created = false;
	int ret = 1;
	FILE *f;

	if (!from) {
		pr_err("learn: --from EVENTS.jsonl is needed (a stream written by run --events); "
		       "see 'pysb-bpf learn --help'");
		return EXIT_USAGE;
	}
	/* A directory, a fifo or a missing file: a usage error, before anything is read. */
	if (learn_check_source(from) || learn_check_target(policy, false))
		return EXIT_USAGE;
	f = strcmp(from, "-") ? fopen(from, "re") : stdin;
	if (!f) {
		pr_err("learn: cannot open %s: %s", from, strerror(errno));
		return 1;
	}
	while (getline(&line, &cap, f) > 0) {
		json_error_t jerr;
		json_t *rec = json_loads(line, 0, &jerr);
		const char *r = json_string_value(json_object_get(rec, "record"));

		lineno++;
		if (!rec) {
			pr_err("%s:%zu: not a JSON record (%s); is it a run --events stream?", from,
			       lineno, jerr.text);
			goto out;
		}
		if (r && !strcmp(r, "lost"))
			ls.lost += (uint64_t)json_integer_value(json_object_get(rec, "count"));
		if (learn_add_record(&ls, rec)) {
			json_decref(rec);
			pr_err("learn: out of memory");
			goto out;
		}
		json_decref(rec);
	}
	if (learn_prepare(policy, &created))
		goto out;
	c.policy = policy;
	p = load_policy(&c);
	if (!p || policy_check_learn(p))
		goto out;
	c.rest = (char *[]){ "python3", NULL };
	c.n_rest = 1;
	/* The implicit set of a Python program, as `check` shows it, is never written. */
	if (program_resolve(c.rest, c.n_rest, NULL, &prog) || compile_for(p, &prog, &compiled))
		goto out;
	/* The lines added on stdout: the command's output, to review or to keep. */
	ret = learn_write(policy, &ls, &compiled, !created, false, stdout) ? 1 : 0;
out:
	if (f != stdin)
		fclose(f);
	free(line);
	learn_set_free(&ls);
	compiled_free(&compiled);
	policy_free(p);
	program_free(&prog);
	return ret;
}
/* ---- end of learning ---- */

static int cmd_run(struct cli *cli)
{
	struct compiled compiled = { 0 };
	struct policy *p = NULL;
	struct program prog = { 0 };
	struct identity id;
	char **envp = NULL;
	struct cli c = *cli;
	int ret = EXIT_PYSB_ERROR, audit;
	const char *v;
	bool os_none = false;
	struct events_json ev = { 0 };
	FILE *ev_out = NULL;
	struct learn_set ls = { .envp = environ };
	bool created = false;

	/* An unwritable target fails now, not after the run. */
	if (c.learn && (learn_check_target(c.learn_file ? c.learn_file : c.policy, true) ||
			learn_prepare(c.policy, &created)))
		goto out;
	p = load_policy(&c);
	if (!p || (c.learn && policy_check_learn(p)))
		goto out;
	/* learn=FILE (or learn=true: the policy itself) in the policy: every launch learns,
	 * as py-sandboxes does. That means nothing is denied: said on every launch. */
	if (!c.learn && (v = policy_get(p, "learn")) && strcasecmp(v, "false")) {
		c.learn = true;
		c.learn_file = strcasecmp(v, "true") ? v : NULL;
		pr_warn("learn=%s in %s: learning on every launch, so NOTHING is denied; the rules "
			"this run misses go into %s. Remove the line to enforce",
			v, c.policy, c.learn_file ? c.learn_file : c.policy);
		if (learn_check_target(c.learn_file ? c.learn_file : c.policy, true))
			goto out;
	}
	/* os-sandbox=none turns py-sandboxes' own layer off; the kernel's is not, and says
	 * so: a warning on every launch (and a notice record in the event stream). */
	os_none = (v = policy_get(p, "os-sandbox")) && !strcmp(v, "none");
	if (os_none)
		pr_warn("os-sandbox=none in %s: py-sandboxes' @sandbox isolation is off; pysb-bpf "
			"still confines the program in the kernel with this policy",
			c.policy);
	/* Who runs it first: a pyenv/asdf shim is resolved as that user (user/run/program.c). */
	if (resolve_identity(c.user, &id))
		goto out;
	ret = program_resolve(
		c.rest, c.n_rest,
		&(struct program_opts){ .uid = id.uid,
					.gid = id.gid,
					.groups = id.groups,
					.n_groups = id.uid == (uid_t)-1 ? 0 : (size_t)id.n_groups },
		&prog);
	if (ret)
		goto out;
	ret = EXIT_PYSB_ERROR;
	/* root's runs keep the implicit paths of an interpreter (user/compile/implicit.c) */
	implicit_cache_dir = geteuid() ? NULL : PYSB_RUN_DIR "/implicit";
	if (compile_for(p, &prog, &compiled))
		goto out;
	audit = c.audit || c.learn || compiled.audit_mode;
	if (program_check(&prog, &compiled, audit))
		goto out;
	if (log_level >= LOG_INFO) {
		pr_info("policy %s compiled:", c.policy);
		print_compiled(&compiled);
		fflush(stdout);
	}
	if (policy_build_env(p, environ, &envp) || (c.learn && learn_extend_env(p, &envp))) {
		pr_err("cannot build the program's environment");
		goto out;
	}
	if (open_events(&c, audit, &compiled, &ev, &ev_out))
		goto out;
	if (os_none && ev.out)
		events_json_notice(&ev, "os-sandbox=none: py-sandboxes' @sandbox isolation is off; "
					"the kernel confinement of this policy is on");
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
	});
	/* Learn what was recorded, even when the program failed; not when nothing ran. The
	 * lines added on stderr (stdout is the program's). A write that fails saves them to
	 * a fallback file and keeps the program's status; 125 only when they are lost. */
	if (c.learn && (ret != EXIT_PYSB_ERROR || ls.records) &&
	    learn_write(c.learn_file ? c.learn_file : c.policy, &ls, &compiled,
			!created || (c.learn_file && strcmp(c.learn_file, c.policy)), true,
			stderr) < 0)
		ret = EXIT_PYSB_ERROR;
out:
	learn_set_free(&ls);
	if (ev_out && ev_out != stdout)
		fclose(ev_out);
	policy_env_free(envp);
	compiled_free(&compiled);
	policy_free(p);
	program_free(&prog);
	return ret;
}

static int cmd_check(struct cli *c)
{
	struct check_opts o = { .envp = environ };

	o.policy = c->policy;
	o.overrides = c->overrides;
	o.n_overrides = c->n_overrides;
	o.json = c->json;
	o.verbose = log_level >= LOG_INFO;
	o.program = c->n_rest ? c->rest : NULL; /* none: python3, as run resolves it */
	o.n_program = c->n_rest;
	return check_main(&o);
}

static int cmd_probe(struct cli *c)
{
	unsigned flags = PROBE_LOAD | PROBE_VERBOSE | (c->fresh ? PROBE_FRESH : 0);

	return (c->json ? probe_run_json(stdout, flags) : probe_run(flags)) ? 1 : 0;
}

/* pysb-bpf status [--json]: what is confined now (user/kernel/status.c). */
static int cmd_status(struct cli *c)
{
	return status_main(c->json);
}

static int cmd_daemon(struct cli *c)
{
	struct daemon_opts o = {
		.config_dir = c->config_dir,
		.events = c->events ? c->events : "-",
		.metrics = c->metrics,
		.events_max_size = c->events_max_size,
		.events_keep = c->events_keep,
		.rescan_ms = c->rescan_ms,
		.hold_ms = c->hold_ms,
		.check = c->check,
		.once = c->once,
	};

	if (!o.config_dir) {
		pr_err("daemon: --config DIR is required (the bindings, docs/fleet.md); see "
		       "'pysb-bpf daemon --help'");
		return EXIT_USAGE;
	}
	/* What it confines, reloads and releases is the operator's record (the journal). */
	if (!getenv("PYSB_BPF_LOG") && log_level < LOG_INFO)
		log_level = LOG_INFO;
	return daemon_main(&o);
}

/* pysb-bpf attach --pid PID [--policy FILE] [--audit] [--events FILE|-]: a running process
 * (a notebook's kernel between two cells) is confined from then on; Ctrl-C detaches it. */
static int cmd_attach(struct cli *cli)
{
	struct compiled compiled = { 0 };
	struct events_json ev = { 0 };
	struct program prog = { 0 };
	struct policy *p = NULL;
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
	if (compile_for(p, &prog, &compiled))
		goto out;
	audit = c.audit || compiled.audit_mode;
	if (open_events(&c, audit, &compiled, &ev, &ev_out))
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

/* pysb-bpf diff A B: what B grants that A does not ("+") and the reverse ("-"). */
static int cmd_diff(struct cli *c)
{
	struct policy *p[2] = { NULL, NULL };
	int ret = EXIT_PYSB_ERROR, n;
	bool json = c->json;

	for (int i = 0; i < 2; i++) {
		struct policy_diag diag = { 0 };

		if (policy_parse_file(c->rest[i], environ, NULL, NULL, 0, &p[i], &diag))
			p[i] = NULL;
		policy_diag_print(stderr, &diag);
		policy_diag_free(&diag);
		if (!p[i])
			goto out;
	}
	n = json ? policy_diff_json(stdout, p[0], p[1]) : policy_diff_print(stdout, p[0], p[1]);
	ret = n < 0 ? EXIT_PYSB_ERROR : n ? 1 : 0;
out:
	policy_free(p[0]);
	policy_free(p[1]);
	return ret;
}

static int cmd_version(struct cli *c)
{
	const char *lv = libbpf_version_string();

	(void)c;
	printf("pysb-bpf %s (ABI %d)\nlibbpf %s\nBPF object %016llx\n", PYSB_VERSION,
	       PYSB_ABI_VERSION, lv + (*lv == 'v'), (unsigned long long)loader_object_hash());
	return 0;
}

static const struct cli_command *suggest_command(const char *name);

static int cmd_help(struct cli *c)
{
	const struct cli_command *cmd;

	if (!c->n_rest) {
		cli_usage(stdout);
		return 0;
	}
	cmd = cli_find(c->rest[0]);
	if (!cmd)
		cmd = suggest_command(c->rest[0]);
	if (!cmd)
		return EXIT_USAGE;
	cli_command_help(stdout, cmd);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(struct cli *c);
} handlers[] = {
	{ "run", cmd_run },	  { "check", cmd_check },   { "probe", cmd_probe },
	{ "learn", cmd_learn },	  { "attach", cmd_attach }, { "diff", cmd_diff },
	{ "status", cmd_status }, { "daemon", cmd_daemon }, { "version", cmd_version },
	{ "help", cmd_help },
};

/* An unknown command: say so, with the nearest one. Always NULL (the caller exits). */
static const struct cli_command *suggest_command(const char *name)
{
	const char *names[sizeof(handlers) / sizeof(handlers[0]) + 1];
	const char *hint;

	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		names[i] = handlers[i].name;
	names[sizeof(handlers) / sizeof(handlers[0])] = NULL;
	hint = cli_closest(name, names);
	if (hint)
		pr_err("unknown command '%s'; did you mean '%s'? (see 'pysb-bpf --help')", name,
		       hint);
	else
		pr_err("unknown command '%s'; see 'pysb-bpf --help'", name);
	return NULL;
}

int main(int argc, char **argv)
{
	const struct cli_command *cmd;
	struct cli c;
	int ret;

	log_init_from_env();
	if (argc < 2) {
		cli_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		cli_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version"))
		argv[1] = "version";
	cmd = cli_find(argv[1]);
	if (!cmd) {
		if (argv[1][0] == '-')
			pr_err("unknown option '%s' before the command; see 'pysb-bpf --help'",
			       argv[1]);
		else
			suggest_command(argv[1]);
		return EXIT_USAGE;
	}
	ret = cli_parse(cmd, argc - 1, argv + 1, &c);
	if (ret) {
		cli_free(&c);
		return ret == 1 ? 0 : ret;
	}
	log_level += c.verbose;
	ret = EXIT_USAGE;
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (!strcmp(handlers[i].name, cli_command_name(cmd)))
			ret = handlers[i].fn(&c);
	cli_free(&c);
	return ret;
}
