/* SPDX-License-Identifier: MIT */
/*
 * pysb-bpf: enforce a py-sandboxes policy in the kernel with BPF LSM programs.
 * Subcommands dispatch through one table, bpftool style.
 */
#include "main_int.h"

/* ---------------- the other commands */

static int cmd_check(struct cli *c)
{
	struct check_opts o = { .envp = environ };
	struct identity id;
	int ret;

	/* the policy's ~ as `run` reads it: through sudo (or --user), the program's user's */
	if (resolve_identity(c->user, &id))
		return 1;
	o.policy = c->policy;
	o.overrides = c->overrides;
	o.n_overrides = c->n_overrides;
	o.json = c->json;
	o.verbose = log_level >= LOG_INFO;
	o.program = c->n_rest ? c->rest : NULL; /* none: python3, as run resolves it */
	o.n_program = c->n_rest;
	o.missing_hint = missing_policy_hint(c); /* run's, when the default is not there */
	ret = check_main(&o);
	free(o.missing_hint);
	return ret;
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

/* ---------------- the other commands, continued */

/* pysb-bpf diff A B: what B grants that A does not ("+") and the reverse ("-"). */
static int cmd_diff(struct cli *c)
{
	struct policy *p[2] = { NULL, NULL };
	int ret = EXIT_PYSB_ERROR, n;
	bool json = c->json;
	struct identity id;

	/* ~ as `run --user` reads it (a policy learned for that user) */
	if (resolve_identity(c->user, &id))
		return EXIT_PYSB_ERROR;
	for (int i = 0; i < 2; i++) {
		struct diag_list diag = { 0 };

		if (policy_parse_file(c->rest[i], environ, NULL, NULL, 0, &p[i], &diag))
			p[i] = NULL;
		diag_print(stderr, &diag);
		diag_free(&diag);
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

/* ---------------- the command table */

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
		const struct cli_command *later = NULL;
		int at = 2;

		/* `pysb-bpf --policy p run app.py`, as git -C and docker --config are typed
		 * (found by a user): the command's options go after its name */
		for (; argv[1][0] == '-' && at < argc && !later; at++)
			later = cli_find(argv[at]);
		if (later)
			pr_err("option '%s' before the command %s: options go after it "
			       "(pysb-bpf %s %s ...); see 'pysb-bpf %s --help'",
			       argv[1], argv[at - 1], argv[at - 1], argv[1], argv[at - 1]);
		else if (argv[1][0] == '-')
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
