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

#include "check.h"
#include "compile.h"
#include "events.h"
#include "daemon.h"
#include "diff.h"
#include "learn.h"
#include "log.h"
#include "policy.h"
#include "probe.h"
#include "runner.h"
#include "status.h"

#define PYSB_VERSION "0.4.0" /* CHANGELOG.md: the minor grows with each new kind of denial */
#define DEFAULT_POLICY "./.py-sandboxes"

extern char **environ;

struct cli {
	const char *policy;
	const char *user; /* --user NAME|UID */
	bool audit;
	const char *events; /* --events FILE|- */
	bool learn;	    /* --learn[=FILE] */
	const char *learn_file;
	struct policy_override *overrides;
	size_t n_overrides;
	char **rest; /* PROGRAM [ARGS...] */
	int n_rest;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pysb-bpf COMMAND [OPTIONS]\n"
		"\n"
		"Commands:\n"
		"  run [--policy FILE] [--audit] [--events FILE|-] [--learn[=FILE]] [--user USER]\n"
		"      [-v|-vv] [--KEY=VALUE...] [--] PROGRAM [ARGS...]\n"
		"        run PROGRAM (a .py file runs with python3) under the policy, enforced in\n"
		"        the kernel; exits with PROGRAM's status, 125 on pysb-bpf errors,\n"
		"        126/127 when PROGRAM cannot be executed / found. Started through sudo,\n"
		"        PROGRAM runs as the invoking user (--user to choose), always with\n"
		"        no_new_privs. --events: every denial as one JSON line (docs/events.md);\n"
		"        --audit: deny nothing, report what would be denied; --learn: audit, then\n"
		"        write the missing rules into FILE (default: the policy)\n"
		"  check [--policy FILE] [--json] [-v]   parse and compile; print what the kernel\n"
		"      enforces, each rule with its file:line, and what is left to the Python layer\n"
		"  probe [-v] [--json]          can this kernel enforce? one line per check\n"
		"  learn --from EVENTS.jsonl [--policy FILE]   merge the rules a stream recorded\n"
		"      with run --events in audit mode needs into FILE (docs/policy.md, Learning)\n"
		"  attach --pid PID [--policy FILE] [--audit] [--events FILE|-]   confine a running\n"
		"      process (a notebook kernel) from now on; interrupting pysb-bpf detaches it\n"
		"  diff [--json] CURRENT CANDIDATE   what CANDIDATE grants that CURRENT does not\n"
		"      (+) and the reverse (-), rules normalised; exit 0 when equal, 1 when not\n"
		"  status [--json]              every confined cgroup: owner (run/attach pid or\n"
		"      daemon binding), policy, mode, event and lost counts\n"
		"  daemon --config DIR [--events FILE|-] [--events-max-size SIZE] [--events-keep N]\n"
		"      [--metrics ADDR:PORT] [--rescan-ms N] [--check] [--once]\n"
		"        keep the policies of DIR's bindings (NAME.json) on their cgroups, systemd\n"
		"        units or cgroup patterns; reload on SIGHUP and when DIR changes; events\n"
		"        as JSON lines, counters for Prometheus (docs/fleet.md). --check: read and\n"
		"        compile every binding, confine nothing; --once: confine, adopt and\n"
		"        release once, then exit (the cgroups stay confined)\n"
		"  version | help\n"
		"\n"
		"The default policy is %s. --KEY=VALUE adds a policy line KEY=VALUE\n"
		"(e.g. --expose-ro=/data). PYSB_BPF_LOG=quiet|info|debug sets the log level.\n",
		DEFAULT_POLICY);
}

static bool is_verbose_flag(const char *a)
{
	return !strcmp(a, "-v") || !strcmp(a, "-vv") || !strcmp(a, "--verbose");
}

/* Options stop at "--" or at the first argument that is not an option (the program). */
static int parse_cli(int argc, char **argv, struct cli *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->policy = DEFAULT_POLICY;
	c->overrides = calloc(argc, sizeof(*c->overrides));
	if (!c->overrides)
		return -1;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (is_verbose_flag(a)) {
			log_level += !strcmp(a, "-vv") ? 2 : 1;
		} else if (!strcmp(a, "--policy") || !strcmp(a, "-p")) {
			if (++i == argc) {
				pr_err("%s needs a file name", a);
				return -1;
			}
			c->policy = argv[i];
		} else if (!strncmp(a, "--policy=", 9)) {
			c->policy = a + 9;
		} else if (!strcmp(a, "--user")) {
			if (++i == argc) {
				pr_err("--user needs a user name or uid");
				return -1;
			}
			c->user = argv[i];
		} else if (!strncmp(a, "--user=", 7)) {
			c->user = a + 7;
		} else if (!strcmp(a, "--audit")) {
			c->audit = true;
		} else if (!strcmp(a, "--events")) { /* events, learning (issue 6) */
			if (++i == argc) {
				pr_err("--events needs a file name, or - for stdout");
				return -1;
			}
			c->events = argv[i];
		} else if (!strncmp(a, "--events=", 9)) {
			c->events = a + 9;
		} else if (!strcmp(a, "--learn")) {
			c->learn = true;
		} else if (!strncmp(a, "--learn=", 8)) {
			c->learn = true;
			c->learn_file = a + 8;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strncmp(a, "--", 2) && strchr(a, '=')) {
			/* python-sb style command-line rule: --expose-ro=/data */
			c->overrides[c->n_overrides++].line = a + 2;
		} else {
			pr_err("unknown option '%s'; see 'pysb-bpf help'", a);
			return -1;
		}
	}
	c->rest = argv + i;
	c->n_rest = argc - i;
	return 0;
}

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

/* PATH lookup as execvp does it, but in the parent so "not found" is known before spawning. */
static int find_program(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(name, '/')) {
		if (access(name, F_OK))
			return -1;
		return realpath(name, out) ? 0 : -1;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, name);
		if (n && !access(buf, X_OK) && (size_t)snprintf(out, len, "%s", buf) < len)
			return 0;
		path += n + (path[n] == ':');
	}
	return -1;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

struct program {
	char interp[PATH_MAX];
	char script[PATH_MAX];
	bool has_script;
	char **argv;
};

static int resolve_program(const struct cli *c, struct program *prog)
{
	const char *name = c->rest[0];
	int extra;

	memset(prog, 0, sizeof(*prog));
	if (ends_with(name, ".py")) {
		if (!realpath(name, prog->script)) {
			pr_err("cannot open %s: %s", name, strerror(errno));
			return EXIT_NOT_FOUND;
		}
		prog->has_script = true;
		name = "python3";
	}
	if (find_program(name, prog->interp, sizeof(prog->interp))) {
		pr_err("%s: command not found", name);
		return EXIT_NOT_FOUND;
	}
	extra = prog->has_script ? 1 : 0;
	prog->argv = calloc(c->n_rest + extra + 1, sizeof(char *));
	if (!prog->argv)
		return EXIT_PYSB_ERROR;
	prog->argv[0] = prog->interp;
	for (int i = 0; i < c->n_rest; i++)
		prog->argv[i + extra] = c->rest[i];
	if (prog->has_script)
		prog->argv[1] = c->rest[0];
	return 0;
}

static int compile_for(const struct policy *p, const struct program *prog, struct compiled *out)
{
	struct compile_opts co = {
		.interpreter = prog && prog->interp[0] ? prog->interp : NULL,
		.script = prog && prog->has_script ? prog->script : NULL,
	};
	const char *v = policy_get(p, "bpf.implicit");

	/* Validated first, so a bad value is reported with its file:line. */
	if (policy_check_bpf_params(p))
		return -1;
	co.implicit = v ? policy_bpf_bool(v) : 1;
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
		       "ALLOW:process-exec)\n", "denied");

	for (size_t i = 0; i < c->n_files; i++) {
		const struct compiled_file *f = &c->files[i];

		if (f->implicit)
			printf("file  %-10s %s  (implicit: %s)\n", access_str(f->access, acc, sizeof(acc)),
			       f->path, f->why);
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

/* ---- learning (issue 6): --learn[=FILE] and `learn --from` (user/learn.c) ---- */

/* What the compiled policy already grants (implicit paths included) needs no line. */
static struct learn_covered *covered_of(const struct compiled *c)
{
	struct learn_covered *v = calloc(c->n_files + 1, sizeof(*v));

	for (size_t i = 0; v && i < c->n_files; i++)
		v[i] = (struct learn_covered){ c->files[i].path, c->files[i].access };
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
	fprintf(stderr, "pysb-bpf: learning: %s did not exist; created from the template\n", policy);
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

static int learn_write(const char *file, struct learn_set *ls, const struct compiled *c,
		       bool backup, bool envs)
{
	struct learn_covered *cov = covered_of(c);
	char *cwd = getcwd(NULL, 0);
	struct learn_env env = { .envp = environ, .cwd = cwd, .covered = cov,
				 .n_covered = cov ? c->n_files : 0, .envs = envs };
	int ret = learn_file(file, ls, &env, backup, time(NULL));

	free(cov);
	free(cwd);
	return ret;
}

static int cmd_learn(int argc, char **argv)
{
	const char *from = NULL, *policy = DEFAULT_POLICY;
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

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--from") && i + 1 < argc)
			from = argv[++i];
		else if (!strncmp(argv[i], "--from=", 7))
			from = argv[i] + 7;
		else if ((!strcmp(argv[i], "--policy") || !strcmp(argv[i], "-p")) && i + 1 < argc)
			policy = argv[++i];
		else if (!strncmp(argv[i], "--policy=", 9))
			policy = argv[i] + 9;
		else if (is_verbose_flag(argv[i]))
			log_level++;
		else {
			pr_err("learn: unknown argument '%s'; usage: pysb-bpf learn --from "
			       "EVENTS.jsonl [--policy FILE]", argv[i]);
			return 2;
		}
	}
	if (!from) {
		pr_err("learn: --from EVENTS.jsonl is needed (a stream of run --events)");
		return 2;
	}
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
	if (resolve_program(&c, &prog) || compile_for(p, &prog, &compiled))
		goto out;
	ret = learn_write(policy, &ls, &compiled, !created, false) ? 1 : 0;
out:
	if (f != stdin)
		fclose(f);
	free(line);
	learn_set_free(&ls);
	compiled_free(&compiled);
	policy_free(p);
	free(prog.argv);
	return ret;
}
/* ---- end of learning ---- */

static int cmd_run(int argc, char **argv)
{
	struct compiled compiled = { 0 };
	struct policy *p = NULL;
	struct program prog = { 0 };
	struct identity id;
	char **envp = NULL;
	struct cli c;
	int ret = EXIT_PYSB_ERROR, audit;
	const char *mode, *v;
	bool os_none = false;
	struct events_json ev = { 0 };
	FILE *ev_out = NULL;
	struct learn_set ls = { .envp = environ };
	bool created = false;

	if (parse_cli(argc, argv, &c))
		goto out;
	if (c.n_rest < 1) {
		pr_err("run: no program given; usage: pysb-bpf run [--policy FILE] [--] PROGRAM [ARGS...]");
		goto out;
	}
	if (c.learn && learn_prepare(c.policy, &created))
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
			"this run misses go into %s. Remove the line to enforce", v, c.policy,
			c.learn_file ? c.learn_file : c.policy);
	}
	/* os-sandbox=none turns py-sandboxes' own layer off; the kernel's is not, and says
	 * so: a warning on every launch (and a notice record in the event stream). */
	os_none = (v = policy_get(p, "os-sandbox")) && !strcmp(v, "none");
	if (os_none)
		pr_warn("os-sandbox=none in %s: py-sandboxes' @sandbox isolation is off; pysb-bpf "
			"still confines the program in the kernel with this policy", c.policy);
	ret = resolve_program(&c, &prog);
	if (ret)
		goto out;
	ret = EXIT_PYSB_ERROR;
	if (compile_for(p, &prog, &compiled))
		goto out;
	mode = policy_get(p, "bpf.mode"); /* checked by compile_for */
	audit = c.audit || c.learn || (mode && !strcmp(mode, "audit"));
	if (log_level >= LOG_INFO) {
		pr_info("policy %s compiled:", c.policy);
		print_compiled(&compiled);
		fflush(stdout);
	}
	if (policy_build_env(p, environ, &envp) || (c.learn && learn_extend_env(p, &envp))) {
		pr_err("cannot build the program's environment");
		goto out;
	}
	if (resolve_identity(c.user, &id))
		goto out;
	if (open_events(&c, audit, &compiled, &ev, &ev_out))
		goto out;
	if (os_none && ev.out)
		events_json_notice(&ev, "os-sandbox=none: py-sandboxes' @sandbox isolation is off; "
					"the kernel confinement of this policy is on");
	ret = sandbox_run(&(struct run_opts){
		.argv = prog.argv,
		.envp = envp,
		.compiled = &compiled,
		.audit = audit,
		.policy = c.policy,
		.ringbuf_bytes = policy_events_buffer(p) ? (uint32_t)policy_events_buffer(p)
			       : c.learn		  ? PYSB_RINGBUF_LEARN
							  : PYSB_RINGBUF_BYTES,
		.events = c.events || c.learn ? &ev : NULL,
		.learn = c.learn ? &ls : NULL,
		.uid = id.uid,
		.gid = id.gid,
		.groups = id.groups,
		.n_groups = id.uid == (uid_t)-1 ? 0 : (size_t)id.n_groups,
	});
	/* Learn what was recorded, even when the program failed; not when nothing ran. */
	if (c.learn && (ret != EXIT_PYSB_ERROR || ls.records) &&
	    learn_write(c.learn_file ? c.learn_file : c.policy, &ls, &compiled,
			!created || (c.learn_file && strcmp(c.learn_file, c.policy)), true))
		ret = EXIT_PYSB_ERROR;
out:
	learn_set_free(&ls);
	if (ev_out && ev_out != stdout)
		fclose(ev_out);
	policy_env_free(envp);
	compiled_free(&compiled);
	policy_free(p);
	free(prog.argv);
	free(c.overrides);
	return ret;
}

static int cmd_check(int argc, char **argv)
{
	struct check_opts o = { .envp = environ };
	char **args = calloc(argc + 1, sizeof(*args));
	struct cli c = { 0 };
	bool dashes = false;
	int n = 0, ret = 1;

	if (!args)
		goto out;
	/* --json is check's own; everything else is parsed as `run` parses it */
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json") && !dashes)
			o.json = true;
		else
			args[n++] = argv[i];
		dashes = dashes || !strcmp(argv[i], "--");
	}
	if (parse_cli(n, args, &c))
		goto out;
	if (c.n_rest) {
		pr_err("check: unexpected argument '%s'; usage: pysb-bpf check [--policy FILE] "
		       "[--json] [-v] [--KEY=VALUE...]", c.rest[0]);
		goto out;
	}
	o.policy = c.policy;
	o.overrides = c.overrides;
	o.n_overrides = c.n_overrides;
	o.verbose = log_level >= LOG_INFO;
	ret = check_main(&o);
out:
	free(args);
	free(c.overrides);
	return ret;
}

static int cmd_probe(int argc, char **argv)
{
	bool json = false;

	for (int i = 0; i < argc; i++) {
		if (is_verbose_flag(argv[i])) {
			log_level++;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else {
			pr_err("probe: unknown argument '%s'", argv[i]);
			return 2;
		}
	}
	return (json ? probe_run_json(stdout) : probe_run(true, true)) ? 1 : 0;
}

/* pysb-bpf status [--json]: what is confined now (user/status.c). */
static int cmd_status(int argc, char **argv)
{
	bool json = false;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else {
			pr_err("status: unknown argument '%s'; usage: pysb-bpf status [--json]",
			       argv[i]);
			return EXIT_PYSB_ERROR;
		}
	}
	return status_main(json);
}

static int cmd_daemon(int argc, char **argv)
{
	struct daemon_opts o = { .events = "-", .events_keep = 5, .rescan_ms = 1000 };

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--check") || !strcmp(a, "--once")) {
			o.check |= !strcmp(a, "--check");
			o.once |= !strcmp(a, "--once");
			continue;
		}
		if (!v || strncmp(a, "--", 2)) {
			pr_err("daemon: '%s': %s; see 'pysb-bpf help'", a,
			       strncmp(a, "--", 2) ? "unexpected argument" : "needs a value");
			return 2;
		}
		i++;
		if (!strcmp(a, "--config"))
			o.config_dir = v;
		else if (!strcmp(a, "--events"))
			o.events = v;
		else if (!strcmp(a, "--metrics"))
			o.metrics = v;
		else if (!strcmp(a, "--events-max-size") && parse_size(v))
			o.events_max_size = parse_size(v);
		else if (!strcmp(a, "--events-keep") && atoi(v) > 0 && atoi(v) < 1000)
			o.events_keep = (unsigned)atoi(v);
		else if (!strcmp(a, "--rescan-ms") && atoi(v) >= 50)
			o.rescan_ms = (unsigned)atoi(v);
		else {
			pr_err("daemon: %s %s: unknown option or bad value; see 'pysb-bpf help'", a, v);
			return 2;
		}
	}
	if (!o.config_dir) {
		pr_err("daemon: --config DIR is required (the bindings, docs/fleet.md)");
		return 2;
	}
	/* What it confines, reloads and releases is the operator's record (the journal). */
	if (!getenv("PYSB_BPF_LOG") && log_level < LOG_INFO)
		log_level = LOG_INFO;
	return daemon_main(&o);
}

/* pysb-bpf attach --pid PID [--policy FILE] [--audit] [--events FILE|-]: a running process
 * (a notebook's kernel between two cells) is confined from then on; Ctrl-C detaches it. */
static int cmd_attach(int argc, char **argv)
{
	char **args = calloc(argc + 1, sizeof(*args)), exe[PATH_MAX];
	struct compiled compiled = { 0 };
	struct events_json ev = { 0 };
	struct program prog = { 0 };
	struct policy *p = NULL;
	FILE *ev_out = NULL;
	struct cli c = { 0 };
	long pid = 0;
	int n = 0, ret = EXIT_PYSB_ERROR, audit;
	const char *mode;
	ssize_t len;

	if (!args)
		return ret;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--pid") && i + 1 < argc)
			pid = strtol(argv[++i], NULL, 10);
		else if (!strncmp(argv[i], "--pid=", 6))
			pid = strtol(argv[i] + 6, NULL, 10);
		else
			args[n++] = argv[i];
	}
	if (pid <= 0) {
		pr_err("attach: --pid PID is required (the process to confine from now on)");
		goto out;
	}
	if (parse_cli(n, args, &c))
		goto out;
	if (c.learn || c.user || c.n_rest) {
		pr_err("attach takes --policy, --audit, --events and --KEY=VALUE; not --learn, "
		       "--user or a program");
		goto out;
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
	mode = policy_get(p, "bpf.mode");
	audit = c.audit || (mode && !strcmp(mode, "audit"));
	if (open_events(&c, audit, &compiled, &ev, &ev_out))
		goto out;
	ret = sandbox_attach(&(struct run_opts){ .compiled = &compiled, .audit = audit,
						 .policy = c.policy,
						 .events = c.events ? &ev : NULL,
						 .uid = (uid_t)-1, .gid = (gid_t)-1 },
			     (pid_t)pid);
out:
	if (ev_out && ev_out != stdout)
		fclose(ev_out);
	compiled_free(&compiled);
	policy_free(p);
	free(c.overrides);
	free(args);
	return ret;
}

/* pysb-bpf diff A B: what B grants that A does not ("+") and the reverse ("-"). */
static int cmd_diff(int argc, char **argv)
{
	struct policy *p[2] = { NULL, NULL };
	int ret = EXIT_PYSB_ERROR, n;
	bool json = argc > 0 && !strcmp(argv[0], "--json");

	argc -= json;
	argv += json;
	if (argc == 3 && !strcmp(argv[2], "--json")) {
		json = true;
		argc--;
	}
	if (argc != 2) {
		pr_err("diff: expected two policy files: pysb-bpf diff [--json] CURRENT CANDIDATE");
		return EXIT_PYSB_ERROR;
	}
	for (int i = 0; i < 2; i++) {
		struct policy_diag diag = { 0 };

		if (policy_parse_file(argv[i], environ, NULL, NULL, 0, &p[i], &diag))
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

static int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("pysb-bpf %s (ABI %d)\n", PYSB_VERSION, PYSB_ABI_VERSION);
	return 0;
}

static int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "run", cmd_run },	    { "check", cmd_check }, { "probe", cmd_probe },
	{ "learn", cmd_learn },	    { "daemon", cmd_daemon }, { "diff", cmd_diff },
	{ "attach", cmd_attach },   { "status", cmd_status },
	{ "version", cmd_version }, { "help", cmd_help },
};

int main(int argc, char **argv)
{
	log_init_from_env();
	if (argc < 2) {
		usage(stderr);
		return EXIT_PYSB_ERROR;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 2, argv + 2);
	pr_err("unknown command '%s'; see 'pysb-bpf help'", argv[1]);
	return EXIT_PYSB_ERROR;
}
