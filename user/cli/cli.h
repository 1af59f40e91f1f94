/* SPDX-License-Identifier: MIT */
/*
 * The command line: one getopt_long parser for every subcommand, their help texts and
 * the exit codes, bpftool/systemctl style. `--opt=value` and `--opt value` everywhere;
 * a mistyped option is answered with the nearest one, never taken as a policy line.
 */
#ifndef PYSB_CLI_H
#define PYSB_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "policy.h"

/* Exit codes of pysb-bpf itself (the table is in `pysb-bpf --help` and README.md). The
 * usage code is env(1)'s, docker run's and timeout(1)'s: a program's own status never
 * collides with it in practice, and `run` passes the program's status through. */
#define EXIT_USAGE 125

struct cli_command;

/* Everything any subcommand takes; each subcommand accepts only its own options. */
struct cli {
	const struct cli_command *cmd;
	const char *policy; /* --policy FILE (default DEFAULT_POLICY) */
	bool policy_given;
	const char *user; /* --user NAME|UID */
	bool audit;
	const char *events; /* --events FILE|- */
	bool learn;	    /* --learn[=FILE] */
	const char *learn_file;
	bool json;
	int verbose;	  /* -v count (-vv is two) */
	const char *from; /* learn --from FILE */
	long pid;	  /* attach --pid PID */
	/* daemon */
	const char *config_dir;
	const char *metrics;
	uint64_t events_max_size;
	unsigned events_keep;
	unsigned rescan_ms;
	bool check, once;
	bool fresh; /* probe --fresh */
	/* --KEY=VALUE policy lines (run, check, attach) */
	struct policy_override *overrides;
	size_t n_overrides;
	/* what follows the options: PROGRAM [ARGS...], or the positional arguments */
	char **rest;
	int n_rest;
};

#define DEFAULT_POLICY "./.py-sandboxes"

/* The subcommand named `name`, or NULL. */
const struct cli_command *cli_find(const char *name);
const char *cli_command_name(const struct cli_command *cmd);

/*
 * Parses argv[0..argc) (argv[0] is the subcommand's name) into *c. Returns 0, 1 when
 * --help was asked (the help is printed on stdout: exit 0), or EXIT_USAGE after saying
 * on stderr what is wrong and where to look. Free with cli_free().
 */
int cli_parse(const struct cli_command *cmd, int argc, char **argv, struct cli *c);
void cli_free(struct cli *c);

/* `pysb-bpf --help` (every command, the exit codes) and `pysb-bpf help CMD`. */
void cli_usage(FILE *f);
void cli_command_help(FILE *f, const struct cli_command *cmd);

/* The closest of `candidates` (NULL-terminated) to `word`, or NULL: typo suggestions. */
const char *cli_closest(const char *word, const char *const *candidates);

#endif /* PYSB_CLI_H */
