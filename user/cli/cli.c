/* SPDX-License-Identifier: MIT */
/*
 * The command line (user/cli/cli.h): each subcommand is a row of `commands` with its
 * getopt_long options and its help; cli_parse() is the one parser they all go through.
 */
#include <getopt.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "compile.h" /* parse_size */
#include "log.h"

enum {
	O_AUDIT = 256,
	O_EVENTS,
	O_LEARN,
	O_USER,
	O_JSON,
	O_FROM,
	O_PID,
	O_CONFIG,
	O_METRICS,
	O_EVENTS_MAX,
	O_EVENTS_KEEP,
	O_RESCAN,
	O_HOLD,
	O_CHECK,
	O_ONCE,
	O_FRESH,
};

#define OPT_HELP                               \
	{                                      \
		"help", no_argument, NULL, 'h' \
	}
#define OPT_VERBOSE                               \
	{                                         \
		"verbose", no_argument, NULL, 'v' \
	}
#define OPT_POLICY                                     \
	{                                              \
		"policy", required_argument, NULL, 'p' \
	}
#define OPT_JSON                                  \
	{                                         \
		"json", no_argument, NULL, O_JSON \
	}
#define OPT_AUDIT                                   \
	{                                           \
		"audit", no_argument, NULL, O_AUDIT \
	}
#define OPT_EVENTS                                          \
	{                                                   \
		"events", required_argument, NULL, O_EVENTS \
	}
#define OPT_END                  \
	{                        \
		NULL, 0, NULL, 0 \
	}

/* What follows the options. */
enum rest_kind {
	REST_NONE,    /* nothing */
	REST_PROGRAM, /* PROGRAM [ARGS...], at least the program */
	REST_ANY,     /* [PROGRAM [ARGS...]] */
	REST_TWO,     /* exactly two arguments (diff) */
	REST_ONE_OPT, /* at most one (help [CMD]) */
};

struct cli_command {
	const char *name;
	const char *synopsis; /* after "pysb-bpf NAME " */
	const char *summary;  /* one line for the command list */
	const char *help;     /* the options and the details */
	const char *shortopts;
	const struct option *longopts;
	bool overrides; /* takes --KEY=VALUE policy lines */
	enum rest_kind rest;
};

static const struct option run_opts[] = {
	OPT_POLICY,
	OPT_AUDIT,
	OPT_EVENTS,
	{ "learn", optional_argument, NULL, O_LEARN },
	{ "user", required_argument, NULL, O_USER },
	OPT_VERBOSE,
	OPT_HELP,
	OPT_END,
};
#define OPT_USER                                        \
	{                                               \
		"user", required_argument, NULL, O_USER \
	}
static const struct option check_opts[] = {
	OPT_POLICY, OPT_USER, OPT_JSON, OPT_VERBOSE, OPT_HELP, OPT_END,
};
static const struct option probe_opts[] = {
	{ "fresh", no_argument, NULL, O_FRESH }, OPT_JSON, OPT_VERBOSE, OPT_HELP, OPT_END,
};
static const struct option learn_opts[] = {
	{ "from", required_argument, NULL, O_FROM },
	OPT_POLICY,
	OPT_USER,
	OPT_VERBOSE,
	OPT_HELP,
	OPT_END,
};
static const struct option attach_opts[] = {
	{ "pid", required_argument, NULL, O_PID },
	OPT_POLICY,
	OPT_AUDIT,
	OPT_EVENTS,
	OPT_VERBOSE,
	OPT_HELP,
	OPT_END,
};
static const struct option diff_opts[] = { OPT_USER, OPT_JSON, OPT_HELP, OPT_END };
static const struct option status_opts[] = { OPT_JSON, OPT_VERBOSE, OPT_HELP, OPT_END };
static const struct option daemon_opts[] = {
	{ "config", required_argument, NULL, O_CONFIG },
	OPT_EVENTS,
	{ "events-max-size", required_argument, NULL, O_EVENTS_MAX },
	{ "events-keep", required_argument, NULL, O_EVENTS_KEEP },
	{ "metrics", required_argument, NULL, O_METRICS },
	{ "rescan-ms", required_argument, NULL, O_RESCAN },
	{ "hold-ms", required_argument, NULL, O_HOLD },
	{ "check", no_argument, NULL, O_CHECK },
	{ "once", no_argument, NULL, O_ONCE },
	OPT_VERBOSE,
	OPT_HELP,
	OPT_END,
};
static const struct option plain_opts[] = { OPT_HELP, OPT_END };

#define POLICY_HELP                                                                     \
	"  -p, --policy FILE   the policy (default " DEFAULT_POLICY ")\n"               \
	"  --KEY=VALUE         one more policy line KEY=VALUE after the file's, e.g.\n" \
	"                      --expose-ro=/data or '--net=ALLOW|tcp|10.0.0.0/8|443|OUT'\n"
#define COMMON_HELP                                                                        \
	"  -v, --verbose       say more (-vv: debug); PYSB_BPF_LOG=quiet|info|debug too\n" \
	"  -h, --help          this help\n"

static const struct cli_command commands[] = {
	{ "run", "[OPTIONS] [--] PROGRAM [ARGS...]",
	  "run PROGRAM under the policy, enforced in the kernel",
	  "Runs PROGRAM confined by the policy: files, exec and network, denied by default.\n"
	  "PROGRAM is named as in a shell: a command on PATH (python3, pytest), a path\n"
	  "(./tool, .venv/bin/python), or a .py file (with no #! line, run with python3).\n"
	  "Scripts, #!/usr/bin/env lines and pyenv/asdf shims are resolved to their\n"
	  "interpreter, which pysb-bpf starts itself (one exec). Started through\n"
	  "sudo, PROGRAM runs as the invoking user (--user to choose), always with\n"
	  "no_new_privs. Exits with PROGRAM's status.\n"
	  "\n"
	  "Options:\n" POLICY_HELP
	  "  --audit             deny nothing; report what would be denied\n"
	  "  --events FILE|-     every denial as one JSON line (docs/events.md); - is stdout\n"
	  "  --learn[=FILE]      audit, then write the rules the run missed into FILE\n"
	  "                      (default: the policy), in py-sandboxes' format\n"
	  "  --user USER|UID     run PROGRAM as this user\n" COMMON_HELP,
	  "+:p:vh", run_opts, true, REST_PROGRAM },
	{ "check", "[OPTIONS] [[--] PROGRAM [ARGS...]]",
	  "parse and compile the policy; show what the kernel enforces",
	  "Parses and compiles the policy without loading anything (no root needed) and\n"
	  "prints what the kernel enforces, each rule with its file:line, and what is left\n"
	  "to py-sandboxes' Python layer. With PROGRAM (named as run names it; python3 by\n"
	  "default), also how it resolves: the interpreter whose files the policy grants\n"
	  "implicitly, and whether it needs a second exec. Exit 1 when the policy has errors.\n"
	  "\n"
	  "Options:\n" POLICY_HELP
	  "  --user USER|UID     read ~ and ${HOME} as this user's (as run --user does)\n"
	  "  --json              the report as one JSON document\n" COMMON_HELP,
	  "+:p:vh", check_opts, true, REST_ANY },
	{ "probe", "[OPTIONS]", "can this kernel enforce? one line per check",
	  "Checks, one line each, what enforcing needs: BPF LSM, BTF, cgroup v2, the BPF file\n"
	  "system, and every helper, map and attach type the programs use. Exit 1 when this\n"
	  "kernel cannot enforce. When this build's programs are already loaded and pinned\n"
	  "(a run or the daemon did it since boot), the load check is answered from them.\n"
	  "\n"
	  "Options:\n  --fresh             load a private copy of the programs even so (slow: the\n"
	  "                      verifier checks each one)\n"
	  "  --json              the checks as one JSON document\n" COMMON_HELP,
	  "+:vh", probe_opts, false, REST_NONE },
	{ "learn", "--from EVENTS.jsonl [OPTIONS]",
	  "merge the rules an event stream needs into the policy",
	  "Reads a stream written by run --events (in audit mode) and writes the rules it\n"
	  "needs into the policy, in py-sandboxes' format (docs/policy.md, Learning).\n"
	  "\n"
	  "Options:\n"
	  "  --from FILE|-       the event stream (a regular file, a pipe or - for stdin)\n"
	  "  -p, --policy FILE   the policy to write (default " DEFAULT_POLICY ")\n"
	  "  --user USER|UID     read ~ and ${HOME} as this user's (as run --user does)\n" COMMON_HELP,
	  "+:p:vh", learn_opts, false, REST_NONE },
	{ "attach", "--pid PID [OPTIONS]", "confine a running process from now on",
	  "Confines the running process PID (a notebook's kernel) from now on; what it\n"
	  "opened before stays open. Interrupting pysb-bpf (Ctrl-C, SIGTERM) detaches it.\n"
	  "\n"
	  "Options:\n"
	  "  --pid PID           the process to confine\n" POLICY_HELP
	  "  --audit             deny nothing; report what would be denied\n"
	  "  --events FILE|-     every denial as one JSON line\n" COMMON_HELP,
	  "+:p:vh", attach_opts, true, REST_NONE },
	{ "diff", "[--json] CURRENT CANDIDATE", "compare what two policies grant",
	  "Prints what CANDIDATE grants that CURRENT does not (+) and the reverse (-),\n"
	  "rules normalised. Exit 0 when they grant the same, 1 when not.\n"
	  "\n"
	  "Options:\n  --user USER|UID     read ~ and ${HOME} as this user's (as run --user does)\n"
	  "  --json              the differences as one JSON document\n"
	  "  -h, --help          this help\n",
	  "+:h", diff_opts, false, REST_TWO },
	{ "status", "[--json]", "list the confined cgroups, their owners and policies",
	  "Lists every confined cgroup: its owner (a run's supervisor or a daemon binding),\n"
	  "policy, mode, and event and lost counts, read from the pinned state.\n"
	  "\n"
	  "Options:\n  --json              one JSON document\n" COMMON_HELP,
	  "+:vh", status_opts, false, REST_NONE },
	{ "daemon", "--config DIR [OPTIONS]", "keep policies on service cgroups (fleet)",
	  "Keeps the policies of DIR's bindings (NAME.json) on their cgroups, systemd units\n"
	  "or cgroup patterns; reloads on SIGHUP and when DIR changes; events as JSON lines,\n"
	  "counters for Prometheus (docs/fleet.md).\n"
	  "\n"
	  "Options:\n"
	  "  --config DIR            the bindings\n"
	  "  --events FILE|-|journal where events go (default -, stdout; journal: one\n"
	  "                          journal entry each, with PYSB_* fields)\n"
	  "  --events-max-size SIZE  rotate the events file at SIZE (e.g. 100M)\n"
	  "  --events-keep N         rotated files kept (1-999, default 5)\n"
	  "  --metrics ADDR:PORT     serve Prometheus counters there\n"
	  "  --rescan-ms N           how often units and patterns are rescanned (>= 50,\n"
	  "                          default 1000)\n"
	  "  --hold-ms N             a new cgroup held until its first execve is enforced\n"
	  "                          by the scan after N ms (confine_at exec; default 2000)\n"
	  "  --check                 read and compile every binding, confine nothing\n"
	  "  --once                  confine, adopt and release once, then exit (the cgroups\n"
	  "                          stay confined)\n" COMMON_HELP,
	  "+:vh", daemon_opts, false, REST_NONE },
	{ "version", "", "print the versions of pysb-bpf, libbpf and the BPF object",
	  "Prints pysb-bpf's version and ABI, libbpf's version and the hash of the BPF\n"
	  "object this binary loads (the name of its pinned instance).\n",
	  "+:h", plain_opts, false, REST_NONE },
	{ "help", "[COMMAND]", "this help, or a command's",
	  "Prints the list of commands, or COMMAND's options.\n", "+:h", plain_opts, false,
	  REST_ONE_OPT },
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

const struct cli_command *cli_find(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

const char *cli_command_name(const struct cli_command *cmd)
{
	return cmd->name;
}

void cli_usage(FILE *f)
{
	fprintf(f, "Usage: pysb-bpf [--help] [--version] COMMAND [OPTIONS] [ARGS]\n"
		   "\n"
		   "Enforces a py-sandboxes policy (.py-sandboxes) in the kernel with BPF LSM.\n"
		   "\n"
		   "Commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n"
		"'pysb-bpf COMMAND --help' or 'pysb-bpf help COMMAND' shows a command's options.\n"
		"\n"
		"Exit status:\n"
		"  0    success\n"
		"  1    check: the policy has errors; diff: the policies differ; probe: this\n"
		"       kernel cannot enforce; learn, daemon, status: the command failed\n"
		"  125  usage error (any command), or pysb-bpf failed before the program ran\n"
		"  126  run: the program was found but cannot be executed\n"
		"  127  run: the program was not found\n"
		"  N    run: the program's own exit status; 128+N when signal N killed it\n"
		"\n"
		"Environment: PYSB_BPF_LOG=quiet|info|debug sets the log level.\n"
		"Documentation: README.md, docs/policy.md, docs/events.md, docs/fleet.md.\n");
}

void cli_command_help(FILE *f, const struct cli_command *cmd)
{
	fprintf(f, "Usage: pysb-bpf %s %s\n\n%s", cmd->name, cmd->synopsis, cmd->help);
}

const char *cli_closest(const char *word, const char *const *candidates)
{
	const char *best = NULL;
	unsigned best_d = UINT_MAX;

	for (size_t i = 0; candidates[i]; i++) {
		const char *k = candidates[i];
		unsigned d = strcasecmp(k, word) ? policy_edit_distance(k, word) : 0;

		/* At most one edit in three letters: "polcy" is policy, "run" is not "user". */
		if (d < best_d && d * 3 <= strlen(k)) {
			best = k;
			best_d = d;
		}
	}
	return best;
}

static int usage_error(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err("%s: %s (see 'pysb-bpf %s --help')", cmd->name, msg, cmd->name);
	return EXIT_USAGE;
}

/* An option getopt_long did not know: a policy line (--KEY=VALUE), or a typo. */
static int unknown_option(const struct cli_command *cmd, const char *arg, struct cli *c)
{
	const char *names[32], *eq = strchr(arg, '='), *hint;
	char key[128];
	size_t n = 0, klen;

	if (strncmp(arg, "--", 2))
		return usage_error(cmd, "unknown option '%s'", arg);
	klen = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
	snprintf(key, sizeof(key), "%.*s", (int)(klen < sizeof(key) ? klen : sizeof(key) - 1),
		 arg + 2);
	for (const struct option *o = cmd->longopts; o->name && n < 31; o++)
		names[n++] = o->name;
	names[n] = NULL;
	/* A policy key wins only when it is written as one: a typo of an option that also
	 * happens to be a provider parameter (x.y) is still a typo. */
	if (cmd->overrides && eq && policy_key_known(key)) {
		c->overrides[c->n_overrides++].line = arg + 2;
		return 0;
	}
	hint = cli_closest(key, names);
	if (hint)
		return usage_error(cmd, "unknown option '--%s'; did you mean '--%s'?", key, hint);
	if (cmd->overrides && (hint = policy_closest_key(key)))
		return usage_error(cmd,
				   "unknown option '--%s'; did you mean the policy line "
				   "'--%s=VALUE'?",
				   key, hint);
	if (cmd->overrides && policy_key_known(key))
		return usage_error(cmd, "a policy line is written --%s=VALUE, with '='", key);
	return usage_error(cmd, "unknown option '--%s'%s", key,
			   cmd->overrides ? " (nor a policy key for --KEY=VALUE)" : "");
}

static int parse_number(const struct cli_command *cmd, const char *opt, const char *v, long min,
			long max, long *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < min || n > max)
		return usage_error(cmd, "%s '%s': expected a whole number from %ld to %ld", opt, v,
				   min, max);
	*out = n;
	return 0;
}

static int check_rest(const struct cli_command *cmd, struct cli *c)
{
	switch (cmd->rest) {
	case REST_NONE:
		if (c->n_rest)
			return usage_error(cmd, "unexpected argument '%s'", c->rest[0]);
		break;
	case REST_PROGRAM:
		if (!c->n_rest)
			return usage_error(cmd, "no program given: pysb-bpf %s %s", cmd->name,
					   cmd->synopsis);
		break;
	case REST_ANY:
		break;
	case REST_TWO:
		if (c->n_rest != 2)
			return usage_error(cmd, "expected two arguments: pysb-bpf %s %s", cmd->name,
					   cmd->synopsis);
		break;
	case REST_ONE_OPT:
		if (c->n_rest > 1)
			return usage_error(cmd, "unexpected argument '%s'", c->rest[1]);
		break;
	}
	return 0;
}

/* One option's value into *c; EXIT_USAGE when it is not acceptable. */
static int take_option(const struct cli_command *cmd, int opt, const char *arg, struct cli *c)
{
	long n;
	int err;

	switch (opt) {
	case 'p':
		c->policy = arg;
		c->policy_given = true;
		break;
	case 'v':
		c->verbose++;
		break;
	case O_AUDIT:
		c->audit = true;
		break;
	case O_EVENTS:
		c->events = arg;
		break;
	case O_LEARN:
		c->learn = true;
		c->learn_file = arg;
		break;
	case O_USER:
		c->user = arg;
		break;
	case O_JSON:
		c->json = true;
		break;
	case O_FROM:
		c->from = arg;
		break;
	case O_PID:
		if ((err = parse_number(cmd, "--pid", arg, 1, INT_MAX, &n)))
			return err;
		c->pid = n;
		break;
	case O_CONFIG:
		c->config_dir = arg;
		break;
	case O_METRICS:
		c->metrics = arg;
		break;
	case O_EVENTS_MAX:
		c->events_max_size = parse_size(arg);
		if (!c->events_max_size)
			return usage_error(cmd,
					   "--events-max-size '%s': expected a size such as "
					   "100M or 1G",
					   arg);
		break;
	case O_EVENTS_KEEP:
		if ((err = parse_number(cmd, "--events-keep", arg, 1, 999, &n)))
			return err;
		c->events_keep = (unsigned)n;
		break;
	case O_RESCAN:
		if ((err = parse_number(cmd, "--rescan-ms", arg, 50, 3600000, &n)))
			return err;
		c->rescan_ms = (unsigned)n;
		break;
	case O_HOLD:
		if ((err = parse_number(cmd, "--hold-ms", arg, 0, 3600000, &n)))
			return err;
		c->hold_ms = (unsigned)n;
		break;
	case O_CHECK:
		c->check = true;
		break;
	case O_ONCE:
		c->once = true;
		break;
	case O_FRESH:
		c->fresh = true;
		break;
	default:
		return usage_error(cmd, "option %d is not handled (a bug)", opt);
	}
	return 0;
}

int cli_parse(const struct cli_command *cmd, int argc, char **argv, struct cli *c)
{
	int opt, err;

	memset(c, 0, sizeof(*c));
	c->cmd = cmd;
	c->policy = DEFAULT_POLICY;
	c->events_keep = 5;
	c->rescan_ms = 1000;
	c->hold_ms = 2000;
	c->overrides = calloc((size_t)argc + 1, sizeof(*c->overrides));
	if (!c->overrides) {
		pr_err("out of memory");
		return EXIT_USAGE;
	}
	opterr = 0;
	optind = 0; /* glibc: start afresh (argv[0] is the command's name) */
	while ((opt = getopt_long(argc, argv, cmd->shortopts, cmd->longopts, NULL)) != -1) {
		const char *cur = argv[optind - 1];

		if (opt == 'h') {
			cli_command_help(stdout, cmd);
			return 1;
		}
		if (opt == ':')
			return usage_error(cmd, "option '%s' needs a value", cur);
		if (opt == '?') {
			/* Long option given a value it does not take (--audit=x). */
			if (optopt && !strncmp(cur, "--", 2))
				return usage_error(cmd, "option '%.*s' takes no value",
						   (int)strcspn(cur, "="), cur);
			if (optopt)
				return usage_error(cmd, "unknown option '-%c'", optopt);
			if ((err = unknown_option(cmd, cur, c)))
				return err;
			continue;
		}
		if ((err = take_option(cmd, opt, optarg, c)))
			return err;
	}
	c->rest = argv + optind;
	c->n_rest = argc - optind;
	return check_rest(cmd, c);
}

void cli_free(struct cli *c)
{
	free(c->overrides);
	c->overrides = NULL;
}
