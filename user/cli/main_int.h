/* SPDX-License-Identifier: MIT */
/* Private to the files of `main` (common.c, cmd_learn.c, cmd_run.c, main.c): what they share. */
#ifndef PYSB_MAIN_INT_H
#define PYSB_MAIN_INT_H

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
#include "untampered.h"

extern char **environ;

struct identity {
	uid_t uid;
	gid_t gid;
	gid_t groups[256];
	int n_groups;
};

/* common.c */
char *missing_policy_hint(const struct cli *c);
struct policy *load_policy(const struct cli *c);
int policy_check_learn(const struct policy *p);
int compile_for(const struct policy *p, const struct program *prog, const char *events,
		struct compiled *out);
void print_compiled(const struct compiled *c);
int resolve_identity(const char *user, struct identity *id);
int set_user_environment(const struct passwd *pw);
void program_writer(struct path_writer *w, const struct identity *id, const struct compiled *c);
int open_events(const struct cli *c, bool audit, const struct compiled *compiled,
		const struct path_writer *w, struct events_json *ev, FILE **out);

/* cmd_learn.c */
int learn_prepare(const char *policy, bool *created);
int learn_extend_env(const struct policy *p, char ***envp);
int learn_write(const char *file, struct learn_set *ls, const struct compiled *c, bool backup,
		bool envs, FILE *review, const struct path_writer *w, const char *before);
int cmd_learn(struct cli *cli);

/* cmd_run.c */
int cmd_run(struct cli *cli);
int cmd_attach(struct cli *cli);

#endif
