/* SPDX-License-Identifier: MIT */
/*
 * What the commands share: loading and compiling the policy, the program's identity, the --events stream. See main.c.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "main_int.h"
#include "stopwatch.h"

/* ---------------- policy, program, identity, events: what the commands share */

/* DIR/.py-sandboxes is a file: its path in out. */
static bool policy_in(const char *dir, char *out, size_t size)
{
	struct stat st;
	int n = snprintf(out, size, "%s/.py-sandboxes", strcmp(dir, "/") ? dir : "");

	return n > 0 && (size_t)n < size && !stat(out, &st) && S_ISREG(st.st_mode);
}

/* The default policy is missing from the working directory: where is the one the user
 * meant? Beside the program or the script it names (`pysb-bpf run ../app.py` from a
 * subdirectory, `python3 src/app.py`), else in the nearest directory above (a run from
 * the project's tests/ or src/). The working directory is never searched further: as
 * for python-sb, the default is ./.py-sandboxes, and its relative paths (expose-ro=.)
 * are read from there (found by a user: the error named no directory and no file). The
 * message, malloc'ed (run prints it, check lists it among its errors); NULL when the
 * policy is not the default, or is there. */
char *missing_policy_hint(const struct cli *c)
{
	char cwd[PATH_MAX], dir[PATH_MAX], found[PATH_MAX + 16], *slash, *msg = NULL;

	if (strcmp(c->policy, DEFAULT_POLICY) || !access(DEFAULT_POLICY, F_OK) || errno != ENOENT ||
	    !getcwd(cwd, sizeof(cwd)))
		return NULL;
	found[0] = '\0';
	for (int i = 0; i < c->n_rest && i < 8 && !found[0]; i++) {
		struct stat st;
		char *real;

		if (!strchr(c->rest[i], '/') || stat(c->rest[i], &st) || !S_ISREG(st.st_mode) ||
		    !(real = realpath(c->rest[i], NULL)))
			continue;
		snprintf(dir, sizeof(dir), "%s", real);
		free(real);
		slash = strrchr(dir, '/');
		slash == dir ? (void)(dir[1] = '\0') : (void)(*slash = '\0');
		if (strcmp(dir, cwd) && !policy_in(dir, found, sizeof(found)))
			found[0] = '\0';
	}
	snprintf(dir, sizeof(dir), "%s", cwd);
	while (!found[0] && strcmp(dir, "/")) {
		slash = strrchr(dir, '/');
		slash == dir ? (void)(dir[1] = '\0') : (void)(*slash = '\0');
		if (!policy_in(dir, found, sizeof(found)))
			found[0] = '\0';
	}
	if (!found[0])
		return asprintf(&msg, "no .py-sandboxes in the working directory %s", cwd) < 0
			       ? NULL
			       : msg;
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(found, '/') - found), found);
	if (asprintf(&msg,
		     "no .py-sandboxes in the working directory %s, but there is %s: run from %s "
		     "(cd %s: its relative paths, such as expose-ro=., are read from the working "
		     "directory, as python-sb reads them), or name it with --policy %s",
		     cwd, found, dir[0] ? dir : "/", dir[0] ? dir : "/", found) < 0)
		msg = NULL;
	return msg;
}

struct policy *load_policy(const struct cli *c)
{
	struct diag_list diag = { 0 };
	struct policy *p = NULL;

	stopwatch("start");
	if (policy_parse_file(c->policy, environ, NULL, c->overrides, c->n_overrides, &p, &diag))
		p = NULL;
	diag_print(stderr, &diag);
	diag_free(&diag);
	if (!p) {
		char *hint = missing_policy_hint(c);

		if (hint)
			pr_err("%s", hint);
		free(hint);
	}
	stopwatch("policy parsed");
	return p;
}

/* learn=false in the policy locks it: learning must not write into it. */
int policy_check_learn(const struct policy *p)
{
	const char *v = policy_get(p, "learn");

	if (v && !strcasecmp(v, "false")) {
		pr_err("the policy says learn=false: it is locked against learning; remove that "
		       "line to learn");
		return -1;
	}
	return 0;
}

int compile_for(const struct policy *p, const struct program *prog, const char *events,
		struct compiled *out)
{
	struct compile_opts co = {
		.interpreter = prog && prog->interp[0] ? prog->interp : NULL,
		.script = prog && prog->has_script ? prog->script : NULL,
		.script_named = prog && prog->has_script ? prog->script_named : NULL,
		.path0_cwd = prog && prog->path0_cwd[0] ? prog->path0_cwd : NULL,
		.events_file = events && strcmp(events, "-") ? events : NULL,
	};
	int ret;

	co.implicit = true; /* unless the policy says bpf.implicit=false */
	stopwatch("program resolved");
	ret = policy_compile(p, &co, out);
	stopwatch("policy compiled");
	return ret;
}

void print_compiled(const struct compiled *c)
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

/* HOME, USER and LOGNAME of the user the program runs as, for ~ and ${HOME} in its policy. */
int set_user_environment(const struct passwd *pw)
{
	if (setenv("HOME", pw->pw_dir, 1) || setenv("USER", pw->pw_name, 1) ||
	    setenv("LOGNAME", pw->pw_name, 1)) {
		pr_err("cannot set HOME for user %s: %s", pw->pw_name, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * A uid with no passwd entry (a container's arbitrary uid, sudo's -u '#4242'): group
 * nogroup (65534), no supplementary group, HOME=/nonexistent (as nobody's), USER and
 * LOGNAME the number. Its own number as group would be whatever group has it (found by an
 * adversary: --user 103 put the program in ssl-cert), and HOME=/ would make a policy's ~
 * the whole machine.
 */
static int identity_of_bare_uid(uid_t uid, struct identity *id)
{
	static char name[16];
	struct passwd pw = {
		.pw_name = name, .pw_dir = "/nonexistent", .pw_uid = uid, .pw_gid = 65534
	};

	snprintf(name, sizeof(name), "%u", uid);
	id->uid = uid;
	id->gid = 65534;
	id->groups[0] = 65534;
	id->n_groups = 1;
	pr_info("the program runs as uid %u, which has no passwd entry: group 65534 (nogroup), "
		"HOME=/nonexistent",
		uid);
	return set_user_environment(&pw);
}

/*
 * Who the program runs as: --user, else the user who invoked sudo (SUDO_UID), else the
 * caller unchanged ((uid_t)-1). Root stays root only when asked for or not started by sudo.
 */
int resolve_identity(const char *user, struct identity *id)
{
	const char *sudo_uid = getenv("SUDO_UID");
	struct passwd *pw = NULL;
	char *end;

	id->uid = (uid_t)-1;
	if (user) {
		unsigned long n = strtoul(user, &end, 10);

		pw = (*user && !*end) ? getpwuid((uid_t)n) : getpwnam(user);
		if (!pw && *user && !*end && n < (uid_t)-1)
			return identity_of_bare_uid((uid_t)n, id);
		if (!pw) {
			pr_err("--user %s: no such user; name a user of the passwd database, or "
			       "give a numeric uid",
			       user);
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
	/* Its own ~: sudo leaves root's HOME, USER and LOGNAME, and the policy's ~ and
	 * ${HOME}, the program's env=HOME=${HOME} and what learning spells ~ would be root's. */
	return set_user_environment(pw);
}

/* Who the program runs as (id; its uid -1: pysb-bpf's own) and what compiled `c` lets it
 * write: what it could have changed in an earlier run, for the files pysb-bpf opens. */
void program_writer(struct path_writer *w, const struct identity *id, const struct compiled *c)
{
	static gid_t groups[256];
	int n = id->uid == (uid_t)-1 ? getgroups(256, groups) : id->n_groups;

	*w = (struct path_writer){
		.uid = id->uid == (uid_t)-1 ? geteuid() : id->uid,
		.gid = id->uid == (uid_t)-1 ? getegid() : id->gid,
		.groups = id->uid == (uid_t)-1 ? groups : id->groups,
		.n_groups = n > 0 ? (size_t)n : 0,
		.may_write = compiled_lets_write,
		.arg = (void *)c,
	};
}

/* The --events file, as root: never through a link the program could have planted in an
 * earlier run (found by an adversary: `--events ev.jsonl` in its project, made a link to
 * root's ~/.bashrc, was truncated and filled with event lines a login shell ran), never a
 * file with other names; truncated once that is known. */
static FILE *open_events_file(const char *path, const struct path_writer *w)
{
	char why[2 * PATH_MAX + 256], real[PATH_MAX];
	struct stat st;
	int fd = open_untampered(path, O_WRONLY | O_CREAT, 0644, w, why, sizeof(why));
	FILE *f;

	if (fd < 0) {
		pr_err("cannot open the event stream %s", why);
		return NULL;
	}
	if (!realpath(path, real))
		real[0] = '\0';
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && ftruncate(fd, 0)) {
		pr_err("cannot empty the event stream %s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		pr_err("cannot open the event stream %s: %s", path, strerror(errno));
		close(fd);
	} else if (S_ISREG(st.st_mode) && w->may_write && w->may_write(real, w->arg)) {
		/* made now: the compile kept an existing one read-only (WHY_EVENTS) */
		pr_warn("the event stream %s lies where the program may write, and did not exist "
			"when its policy was compiled: this run's program could add records; from "
			"the next run on it is read-only to the program",
			path);
	}
	return f;
}

/* --events FILE|-: the JSON stream (docs/events.md); stdout is shared with the program. */
int open_events(const struct cli *c, bool audit, const struct compiled *compiled,
		const struct path_writer *w, struct events_json *ev, FILE **out)
{
	const char *mode = c->learn ? "learn" : audit ? "audit" : "enforce";

	if (!c->events) /* learning alone: rendered, not written */
		return c->learn && events_json_init(ev, NULL, "", mode, compiled) ? -1 : 0;
	*out = strcmp(c->events, "-") ? open_events_file(c->events, w) : stdout;
	if (!*out)
		return -1;
	if (events_json_init(ev, *out, strcmp(c->events, "-") ? c->events : "stdout", mode,
			     compiled)) {
		pr_err("out of memory");
		return -1;
	}
	return 0;
}
