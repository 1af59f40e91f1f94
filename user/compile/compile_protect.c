/* SPDX-License-Identifier: MIT */
/*
 * What the user's own tools run from a tree the program may write, found when the policy
 * is compiled: a `.git` (git runs the commands of its config, core.fsmonitor,
 * core.hooksPath, aliases, and its hooks/, at the user's next `git status` in that tree,
 * outside any sandbox) and a `.py-sandboxes` (the next run of that project obeys it).
 * Found by an adversary: with `expose-rw=.` on a project, the program planted
 * core.fsmonitor in .git/config; with `expose-rw=/srv/work`, it rewrote another
 * project's policy to expose-rw=/. Each one found in an `expose-rw=` directory of the
 * policy, or in a directory right below it, is kept read-only with its name
 * (compile.c, protect_files), unless a rule names it itself (`expose-rw=./.git`: the
 * user gives the program its repository). docs/policy.md, "Kept read-only".
 *
 * And a rule naming the socket of a server outside the sandbox (the only way to reach one,
 * bpf/unix.bpf.c), when the program can choose what it names by the next run: through a
 * link in a directory it may write, the rule is an error; in such a directory itself, a
 * warning (once that server removed its socket, another's may be put there).
 */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile.h"
#include "untampered.h"

static const char *const TOOL_NAMES[] = { ".git", ".py-sandboxes" };

/* Is canonical `path` named by a rule of the policy itself? */
static bool named_by_a_rule(const struct policy *p, const char *path)
{
	for (size_t i = 0; i < p->n_paths; i++)
		if (!strcmp(p->paths[i].path, path)) /* canonical already (policy.h) */
			return true;
	return false;
}

static int push(struct tool_files *t, const char *path)
{
	char **v;

	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->paths[i], path))
			return 0;
	v = realloc(t->paths, (t->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	t->paths = v;
	t->paths[t->n] = strdup(path);
	return t->paths[t->n] ? (t->n++, 0) : -1;
}

/* `path` when it exists and no rule names it (a link: its target), into t. */
static int found(const struct policy *p, const char *path, struct tool_files *t)
{
	char real[PATH_MAX];
	struct stat st;

	if (lstat(path, &st) || !realpath(path, real) || named_by_a_rule(p, real))
		return 0;
	return push(t, path); /* a link: its name kept, its target read-only if writable */
}

/*
 * The submodules of the repository in `dir` (its .gitmodules' "path = X" lines): git
 * status at the top reads each X/.git, a file naming the submodule's git directory,
 * which a program could point at a repository of its own (a review: its core.fsmonitor
 * then ran at the top's `git status`).
 */
static int submodules(const struct policy *p, const char *dir, struct tool_files *t)
{
	char path[PATH_MAX], line[PATH_MAX + 64];
	FILE *f;
	int ret = 0, fd;

	/* read by root where the program may write: never a FIFO, a device or a link (found
	 * by an adversary: a FIFO hung the next run and the daemon's reload, a link to
	 * /dev/watchdog reset the machine a minute later; git refuses a linked .gitmodules) */
	snprintf(path, sizeof(path), "%s/.gitmodules", dir);
	fd = open_regular(path, true);
	f = fd >= 0 ? fdopen(fd, "re") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		char *v = line + strspn(line, " \t"), *end;

		if (strncmp(v, "path", 4) || (v = strchr(v + 4, '=')) == NULL)
			continue;
		v += 1 + strspn(v + 1, " \t");
		end = v + strcspn(v, "\r\n");
		while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (end == v || snprintf(path, sizeof(path), "%s/%.*s/.git", dir, (int)(end - v),
					 v) >= (int)sizeof(path))
			continue;
		ret = found(p, path, t);
	}
	fclose(f);
	return ret;
}

/* Is TOOL_NAMES[i] in `rel` below the directory dfd is open on (rel NULL: `seen` says)? */
static bool present(int dfd, const char *rel, size_t i, unsigned seen)
{
	char path[PATH_MAX];
	struct stat st;

	if (!rel)
		return seen & 1u << i;
	return snprintf(path, sizeof(path), "%s/%s", rel, TOOL_NAMES[i]) < (int)sizeof(path) &&
	       !fstatat(dfd, path, &st, AT_SYMLINK_NOFOLLOW);
}

/* The tool files in canonical directory `dir`, `rel` below the directory `dfd` is open
 * on: one fstatat a name, relative to dfd (thousands of directories in /tmp cost a few
 * milliseconds), and .gitmodules only beside a .git. rel NULL: dir itself, whose names
 * its read said are there (`seen`: a bit per TOOL_NAMES entry), no call at all. */
static int look_in(const struct policy *p, int dfd, const char *dir, const char *rel, unsigned seen,
		   struct tool_files *t)
{
	bool git = false;

	for (size_t i = 0; i < sizeof(TOOL_NAMES) / sizeof(TOOL_NAMES[0]); i++) {
		char path[PATH_MAX];

		if (!present(dfd, rel, i, seen))
			continue;
		git |= i == 0;
		if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "",
			     TOOL_NAMES[i]) >= (int)sizeof(path) ||
		    found(p, path, t))
			return -1;
	}
	return git ? submodules(p, dir, t) : 0;
}

/* The bit of TOOL_NAMES `name` is, 0 for any other name. */
static unsigned tool_name_bit(const char *name)
{
	for (size_t i = 0; i < sizeof(TOOL_NAMES) / sizeof(TOOL_NAMES[0]); i++)
		if (!strcmp(name, TOOL_NAMES[i]))
			return 1u << i;
	return 0;
}

/*
 * Does directory `dir` (stat `st`) hold no subdirectory, by its link count? On ext4, xfs
 * and tmpfs a directory has 2 links plus one per subdirectory (ext4 says 1 past 65,000);
 * other file systems say 1 (btrfs, overlayfs's merged directories) or what they please
 * (FUSE, CIFS): there the directory is read. Saves its open and reads: an expose-rw= of
 * thousands of leaf directories is a few syscalls each.
 */
struct fs_seen {
	dev_t dev; /* the last file system asked about, in this scan */
	long f_type;
};

static bool no_subdirectory(const char *dir, const struct stat *st, struct fs_seen *fs)
{
	if (!S_ISDIR(st->st_mode) || st->st_nlink != 2)
		return false;
	if (st->st_dev != fs->dev) {
		if (memo_statfs_type(dir, &fs->f_type))
			return false;
		fs->dev = st->st_dev;
	}
	return fs->f_type == EXT4_SUPER_MAGIC || fs->f_type == XFS_SUPER_MAGIC ||
	       fs->f_type == TMPFS_MAGIC;
}

int tool_files_find(const struct policy *p, struct tool_files *t)
{
	struct fs_seen fs = { .dev = (dev_t)-1 };

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < p->n_paths; i++) {
		char dir[PATH_MAX];
		struct dirent *de;
		unsigned seen = 0;
		struct stat st;
		DIR *d;

		if (p->paths[i].access != POLICY_RW ||
		    (size_t)snprintf(dir, sizeof(dir), "%s", p->paths[i].path) >= sizeof(dir))
			continue;
		if (!memo_stat(dir, &st) && no_subdirectory(dir, &st, &fs)) {
			if (look_in(p, AT_FDCWD, dir, dir, 0, t))
				goto nomem;
			continue;
		}
		d = opendir(dir);
		if (!d)
			continue; /* a file, or unreadable: nothing found below */
		while ((de = readdir(d))) {
			char sub[PATH_MAX];

			seen |= tool_name_bit(de->d_name);
			if (de->d_name[0] == '.' &&
			    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
				continue;
			if (de->d_type != DT_DIR &&
			    (de->d_type != DT_UNKNOWN ||
			     fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
			     !S_ISDIR(st.st_mode)))
				continue;
			if (snprintf(sub, sizeof(sub), "%s/%s", strcmp(dir, "/") ? dir : "",
				     de->d_name) >= (int)sizeof(sub))
				continue;
			if (look_in(p, dirfd(d), sub, de->d_name, 0, t)) {
				closedir(d);
				goto nomem;
			}
		}
		closedir(d);
		if (look_in(p, -1, dir, NULL, seen, t))
			goto nomem;
	}
	return 0;
nomem:
	tool_files_free(t);
	return -1;
}

void tool_files_free(struct tool_files *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->paths[i]);
	free(t->paths);
	memset(t, 0, sizeof(*t));
}

/*
 * What the compiled rules give directory `dir` as the kernel finds it: the nearest entry
 * over its inode and its ancestors' (`dir/..`, up to the root), by inode. A bind mount
 * reaches a rule's inodes by another path, which path prefixes miss (found by a review:
 * under expose-rw=/srv/data, a link planted in its bind mount /home/u/proj was judged
 * unchangeable). Unknown (stat fails, too deep): WRITE, the worst. With `whole_way`:
 * WRITE if any entry on the way up grants it (each is the nearest rule of its own
 * directory, so: does any directory from `dir` up let the program write?).
 */
static uint32_t access_by_inode(const struct compiled *out, const char *dir, bool whole_way)
{
	char p[PATH_MAX];
	struct stat st, up;

	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p) || stat(p, &st))
		return PYSB_ACC_WRITE;
	for (int depth = 0; depth < 256; depth++) {
		size_t n = strlen(p);

		for (size_t i = 0; i < out->n_files; i++) {
			const struct compiled_file *f = &out->files[i];

			if (f->link || f->ino != (uint64_t)st.st_ino ||
			    f->st_dev != (uint64_t)st.st_dev)
				continue;
			if (!whole_way || (f->access & PYSB_ACC_WRITE))
				return f->access;
			break;
		}
		if (n + 4 > sizeof(p))
			break;
		memcpy(p + n, "/..", 4);
		if (stat(p, &up))
			break;
		if (up.st_ino == st.st_ino && up.st_dev == st.st_dev)
			return 0; /* the root, and no rule */
		st = up;
	}
	return PYSB_ACC_WRITE;
}

bool compiled_lets_write(const char *dir, void *compiled)
{
	return access_by_inode(compiled, dir, false) & PYSB_ACC_WRITE;
}

/* Is there, on the way to `named` as the kernel resolves it (the links in link targets
 * too), a link in a directory the compiled rules let the program write? Its path into
 * `link`. */
static bool link_in_writable(const struct compiled *out, const char *named, char *link, size_t len)
{
	const struct path_writer w = { .may_write = compiled_lets_write,
				       .arg = (void *)out,
				       .rules_only = true };

	return walk_untampered(named, &w, link, len, NULL, 0) == UNTAMPERED_LINK;
}

int socket_rules_check(const struct policy *p, const struct compiled *out, struct diag_list *d)
{
	for (size_t i = 0; i < p->n_paths; i++) {
		const struct policy_path *r = &p->paths[i];
		char link[PATH_MAX], dir[PATH_MAX];
		struct stat st;

		if (!r->named || memo_stat(r->path, &st) || !S_ISSOCK(st.st_mode))
			continue;
		if (link_in_writable(out, r->named, link, sizeof(link)))
			return diag_add(
				d, DIAG_ERROR, src_at(&r->src),
				"name the socket by its own path, through no link the "
				"program may replace",
				"%s names a unix socket through the link %s, in a directory "
				"the program may write: it could point it at another server's "
				"socket (tmux's) for the next run",
				r->named, link);
		snprintf(dir, sizeof(dir), "%s", r->path);
		*strrchr(dir, '/') = '\0';
		if (compiled_access(out, dir[0] ? dir : "/", false) & PYSB_ACC_WRITE)
			diag_add(d, DIAG_WARNING, src_at(&r->src),
				 "grant its directory read-only, or keep that server's socket "
				 "elsewhere",
				 "%s is a server's socket in a directory the program may write: "
				 "once that server removes it, the program can put another "
				 "server's socket under its name for the next run",
				 r->path);
	}
	return 0;
}

/*
 * The sockets servers outside the sandbox are bound to now, in a directory the program may
 * write: it could rename one away and bind its own under that name, and the user's next
 * client would talk to it (found by an adversary: tmux's client ran the program the
 * impostor named, ssh-add sent it a private key). Each keeps its name; one a rule names
 * itself is left as the rule says. The names sockets were bound to, read from the
 * /proc/<pid>/net/unix of each network namespace a process is in (a container's, a
 * PrivateNetwork= service's, rootless Docker's API socket in $XDG_RUNTIME_DIR: one
 * /proc/net/unix shows its own namespace only). A name that no longer names a socket may
 * have been renamed or linked after bind (OpenSSH's ControlMaster binds a temporary name,
 * links the socket to ControlPath and unlinks the first): every socket file of its
 * directory is kept. A relative name (bound after a chdir) is looked up in the working
 * directory of each process. (A server started later, or a name taken before its server
 * makes it, is a Known gap: docs/design.md.)
 */
struct sock_scan {
	const struct policy *p;
	const struct compiled *out;
	struct tool_files names; /* bound, as the kernel shows them */
	struct tool_files *keep;
	ino_t *ns; /* the network namespaces read (their nsfs inodes) */
	size_t n_ns;
	int *pids; /* every process seen, for the relative names */
	size_t n_pids;
};

/* Each name in /proc/<pid>/net/unix `file` ("Num RefCount Protocol Flags Type St Inode
 * Path"; an abstract name starts with '@', an unnamed socket has no Path) into s->names. */
static int bound_names_read(struct sock_scan *s, const char *file, bool *read)
{
	char line[PATH_MAX + 128];
	FILE *f = fopen(file, "re");
	int ret = 0;

	*read = f != NULL;
	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f)) /* the header */
		goto out;
	while (!ret && fgets(line, sizeof(line), f)) {
		int at = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %n", &at) < 0 || !at || !line[at] ||
		    line[at] == '@')
			continue;
		ret = push(&s->names, line + at);
	}
out:
	fclose(f);
	return ret;
}

/* The names bound in process `pid`'s network namespace, if no other process showed them
 * (one fstatat a process, relative to /proc's `proc`: 10-20 us under a loaded VM, the
 * whole cost; /proc/<pid>/net/unix read once a namespace). */
static int names_of_netns(struct sock_scan *s, int proc, const char *pid)
{
	char path[64];
	struct stat before, after;
	bool read;
	ino_t *ns;
	int *v;

	snprintf(path, sizeof(path), "%s/ns/net", pid);
	if (fstatat(proc, path, &before, 0))
		return 0; /* gone, a zombie, or not ours to see */
	if (strcmp(pid, "self")) {
		v = realloc(s->pids, (s->n_pids + 1) * sizeof(*v));
		if (!v)
			return -1;
		s->pids = v;
		s->pids[s->n_pids++] = atoi(pid);
	}
	for (size_t i = 0; i < s->n_ns; i++)
		if (s->ns[i] == before.st_ino)
			return 0;
	snprintf(path, sizeof(path), "/proc/%s/net/unix", pid);
	if (bound_names_read(s, path, &read))
		return -1;
	snprintf(path, sizeof(path), "%s/ns/net", pid);
	if (!read || fstatat(proc, path, &after, 0) || after.st_ino != before.st_ino)
		return 0; /* exited (its pid reused?) in between: read again through another */
	ns = realloc(s->ns, (s->n_ns + 1) * sizeof(*ns));
	if (!ns)
		return -1;
	s->ns = ns;
	s->ns[s->n_ns++] = before.st_ino;
	return 0;
}

/* `path`, canonical, when it is a socket the program may write and no rule names. */
static int keep_socket(struct sock_scan *s, const char *path)
{
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(path, real) || stat(real, &st) || !S_ISSOCK(st.st_mode) ||
	    !(compiled_access(s->out, real, false) & PYSB_ACC_WRITE) || named_by_a_rule(s->p, real))
		return 0;
	return push(s->keep, real);
}

/* Absolute bound `name`: kept when it still names a socket; else its directory, canonical,
 * into `dirs` when the program may write there (the socket renamed or linked in it). */
static int keep_absolute(struct sock_scan *s, const char *name, struct tool_files *dirs)
{
	char dir[PATH_MAX], real[PATH_MAX];
	struct stat st;

	if (realpath(name, real) && !stat(real, &st) && S_ISSOCK(st.st_mode))
		return keep_socket(s, real);
	if ((size_t)snprintf(dir, sizeof(dir), "%s", name) >= sizeof(dir))
		return 0;
	*strrchr(dir, '/') = '\0';
	if (!realpath(dir[0] ? dir : "/", real) ||
	    !(compiled_access(s->out, real, false) & PYSB_ACC_WRITE))
		return 0;
	return push(dirs, real);
}

/* Every socket file in canonical directory `dir`: which one is the renamed server's, the
 * names do not say (a stale one of an earlier run is kept too: docs/design.md). */
static int keep_dir_sockets(struct sock_scan *s, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return 0;
	while (!ret && (de = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (de->d_type != DT_SOCK &&
		    (de->d_type != DT_UNKNOWN ||
		     fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		     !S_ISSOCK(st.st_mode)))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", de->d_name) <
		    (int)sizeof(path))
			ret = keep_socket(s, path);
	}
	closedir(d);
	return ret;
}

/* Relative bound `name` (a chdir, then bind): a socket of that name in the working
 * directory of a process (each directory once), kept under the name it has here (the
 * magic link of a process in another mount namespace names another file: same inode
 * only). A server that changed directory since is not found: docs/design.md. */
static int keep_relative(struct sock_scan *s, const char *name, struct tool_files *cwds)
{
	for (size_t i = 0; i < cwds->n; i++) {
		char path[PATH_MAX], real[PATH_MAX];
		struct stat st, here;

		if (snprintf(path, sizeof(path), "%s/%s", cwds->paths[i], name) >=
			    (int)sizeof(path) ||
		    stat(path, &st) || !S_ISSOCK(st.st_mode) || !realpath(path, real) ||
		    stat(real, &here) || here.st_dev != st.st_dev || here.st_ino != st.st_ino)
			continue;
		if (keep_socket(s, real))
			return -1;
	}
	return 0;
}

/* The working directories of the processes seen, one /proc/<pid>/cwd each (by inode). */
static int working_dirs(struct sock_scan *s, struct tool_files *cwds)
{
	struct {
		dev_t dev;
		ino_t ino;
	} *seen = calloc(s->n_pids + 1, sizeof(*seen));
	size_t n = 0;
	int ret = 0;

	if (!seen)
		return -1;
	for (size_t i = 0; i < s->n_pids && !ret; i++) {
		char path[64];
		struct stat st;
		size_t j;

		snprintf(path, sizeof(path), "/proc/%d/cwd", s->pids[i]);
		if (stat(path, &st))
			continue;
		for (j = 0; j < n && (seen[j].dev != st.st_dev || seen[j].ino != st.st_ino); j++)
			;
		if (j < n)
			continue;
		seen[n].dev = st.st_dev;
		seen[n++].ino = st.st_ino;
		ret = push(cwds, path);
	}
	free(seen);
	return ret;
}

static int keep_bound(struct sock_scan *s)
{
	struct tool_files dirs = { 0 }, cwds = { 0 };
	bool relative = false;
	int ret = 0;

	for (size_t i = 0; i < s->names.n && !ret; i++)
		if (s->names.paths[i][0] == '/')
			ret = keep_absolute(s, s->names.paths[i], &dirs);
		else
			relative = true;
	for (size_t i = 0; i < dirs.n && !ret; i++)
		ret = keep_dir_sockets(s, dirs.paths[i]);
	if (!ret && relative)
		ret = working_dirs(s, &cwds);
	for (size_t i = 0; i < s->names.n && relative && !ret; i++)
		if (s->names.paths[i][0] != '/')
			ret = keep_relative(s, s->names.paths[i], &cwds);
	tool_files_free(&dirs);
	tool_files_free(&cwds);
	return ret;
}

/* Does the program get WRITE on a directory? Without one it renames, replaces or unlinks
 * no entry, a server's socket included, and nothing needs keeping: the scan of every
 * process's network namespace (one fstatat a process, thousands on a server; 116 in the
 * test VM, most of a `run`'s compile there) is skipped. */
static bool writes_a_directory(const struct compiled *out)
{
	for (size_t i = 0; i < out->n_files; i++) {
		struct stat st;

		if ((out->files[i].access & PYSB_ACC_WRITE) &&
		    (stat(out->files[i].path, &st) || S_ISDIR(st.st_mode)))
			return true;
	}
	return false;
}

int server_sockets_find(const struct policy *p, const struct compiled *out, struct tool_files *t)
{
	struct sock_scan s = { .p = p, .out = out, .keep = t };
	DIR *d;
	struct dirent *de;
	int ret;

	memset(t, 0, sizeof(*t));
	if (!writes_a_directory(out))
		return 0;
	d = opendir("/proc");
	if (!d)
		return 0;
	ret = names_of_netns(&s, dirfd(d), "self");
	while (!ret && (de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			ret = names_of_netns(&s, dirfd(d), de->d_name);
	closedir(d);
	if (!ret)
		ret = keep_bound(&s);
	tool_files_free(&s.names);
	free(s.ns);
	free(s.pids);
	if (ret)
		tool_files_free(t);
	return ret;
}

/* May the program write the directory `path` lies in (rename or replace its entry)? */
bool parent_writable(const struct compiled *out, const char *path)
{
	char parent[PATH_MAX], real[PATH_MAX];

	snprintf(parent, sizeof(parent), "%s", path);
	dirname(parent);
	return realpath(parent, real) && (compiled_access(out, real, false) & PYSB_ACC_WRITE);
}

/* The script's name resolved to another file than when the command was read. */
static bool changed_meanwhile(struct diag_list *d, const char *named, const char *script,
			      const char *now)
{
	diag_add(d, DIAG_WARNING, (struct diag_at){ 0 }, NULL,
		 "%s named %s when the command was read, and %s now: something renames or "
		 "relinks it; it is not granted as the program's script",
		 named, script, now);
	return false;
}

/* Does a directory on the way to canonical `path` let the program write (rename or
 * replace what lies below it)? Where one does, the script lies in a tree its rules grant
 * anyway: no implicit READ is needed, and none is given that a swap could move. */
static bool writable_on_the_way(const struct compiled *out, const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return false;
	*(slash == dir ? slash + 1 : slash) = '\0';
	return access_by_inode(out, dir, true) & PYSB_ACC_WRITE;
}

/*
 * May the program's script be granted READ as implicit? Only a regular file, and only
 * when no link on the way to it, as the kernel resolves the name it was given (links in
 * link targets too: found by a review), lies in a directory the program may
 * write: a run could have made app.py a link to /etc/shadow, or to /, and the next run
 * would grant what the link names. Nor when a directory on its way lets the program write
 * (in an rw tree the script is readable anyway; found by an adversary: a sandbox of the
 * same project swapped app.py for a link to /etc/shadow between the lookups, and the next
 * run was granted /etc/shadow, 8 times in 35), nor when the name resolves to another file
 * than when the command was read. The loader holds the file granted and checks it is the
 * one judged here (sandbox_maps.c same_as_compiled).
 */
bool script_grantable(const struct compiled *out, const char *named, const char *script,
		      struct diag_list *d)
{
	const struct path_writer w = { .may_write = compiled_lets_write,
				       .arg = (void *)out,
				       .rules_only = true };
	char link[PATH_MAX], canon[PATH_MAX];
	struct stat st;

	if (stat(script, &st) || !S_ISREG(st.st_mode))
		return false;
	switch (walk_untampered(named, &w, link, sizeof(link), canon, sizeof(canon))) {
	case UNTAMPERED_OK:
	case UNTAMPERED_SPECIAL:
		return strcmp(canon, script) ? changed_meanwhile(d, named, script, canon)
					     : !writable_on_the_way(out, canon);
	case UNTAMPERED_LINK:
		diag_add(d, DIAG_WARNING, (struct diag_at){ 0 }, NULL,
			 "%s is reached through the link %s, in a directory the program may "
			 "write: its target (%s) is not granted as the program's script. Name the "
			 "file itself, or expose it",
			 named, link, script);
		return false;
	case UNTAMPERED_UNCHECKED:
		break;
	}
	diag_add(d, DIAG_WARNING, (struct diag_at){ 0 }, NULL,
		 "%s: its path cannot be checked for links the program may change (too long, "
		 "or no working directory): it is not granted as the program's script. Name it "
		 "by a shorter absolute path, or expose it",
		 named);
	return false;
}

/* Does a rule on `path` grant the character devices below it (PYSB_ACC_DEVICES)? On /dev
 * or below, or on a device node: one above /dev grants files, not the machine's devices
 * (input, sound, video, consoles, other users' terminals, loop-control, fuse, kvm). */
bool compile_grants_devices(const char *path, const struct stat *st)
{
	return S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ||
	       (S_ISDIR(st->st_mode) && !strncmp(path, "/dev", 4) && (!path[4] || path[4] == '/'));
}
