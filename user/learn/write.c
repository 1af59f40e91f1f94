/* SPDX-License-Identifier: MIT */
/*
 * Learning: writing the policy file (backup, atomic rename), the check of the target before the run, the fallback after it. The review as diff -u: review.c. See learn.c.
 */
#include "learn_int.h"

/* ---------------- writing the file */

int learn_backup_name(const char *path, char *out, size_t len)
{
	struct stat st;

	for (int i = 0; i < 10000; i++) {
		if (i == 0)
			snprintf(out, len, "%s.old", path);
		else
			snprintf(out, len, "%s.old_%d", path, i);
		if (lstat(out, &st) && errno == ENOENT)
			return 0;
	}
	errno = EEXIST;
	return -1;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The text of the file open on fd (closed). */
static char *read_fd(int fd, struct stat *st)
{
	char *s = NULL;
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return NULL;
	if (fstat(fd, st) || !(s = malloc((size_t)st->st_size + 1)))
		goto fail;
	while (n < (size_t)st->st_size && (r = read(fd, s + n, (size_t)st->st_size - n)) > 0)
		n += (size_t)r;
	s[n] = '\0';
	close(fd);
	return s;
fail:
	free(s);
	close(fd);
	return NULL;
}

static char *read_file(const char *path, struct stat *st)
{
	return read_fd(open(path, O_RDONLY | O_CLOEXEC), st);
}

/* FILE's text, through no link env->writer could have made (said, *refused set, when it
 * is); NULL otherwise when it cannot be read. */
static char *read_target(const char *file, const struct learn_env *env, struct stat *st,
			 bool *refused)
{
	char why[2 * PATH_MAX + 256];
	int fd;

	*refused = false;
	if (!env->writer)
		return read_file(file, st);
	fd = open_untampered(file, O_RDONLY, 0, env->writer, why, sizeof(why));
	if (fd < 0 && (errno == EPERM || errno == EMLINK)) {
		pr_err("learning: %s", why);
		*refused = true;
	}
	return read_fd(fd, st);
}

char *learn_read_target(const char *file, const struct path_writer *w)
{
	struct learn_env env = { .writer = w };
	struct stat st;
	bool refused;
	char *text = read_target(file, &env, &st, &refused);

	if (!text && !refused && errno == ENOENT)
		return strdup(""); /* made by learning: one the program makes is not merged into */
	if (!text && !refused)
		pr_err("learning: cannot read %s: %s", file, strerror(errno));
	return text;
}

int learn_backup(const char *path, char *backup, size_t len)
{
	struct stat st;
	char *text = read_file(path, &st);
	struct timespec times[2];
	int fd = -1;

	if (!text || learn_backup_name(path, backup, len))
		goto fail;
	fd = open(backup, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
	if (fd < 0 || write_all(fd, text, strlen(text)) || fsync(fd))
		goto fail;
	if (fchown(fd, st.st_uid, st.st_gid) && errno != EPERM)
		goto fail;
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	futimens(fd, times);
	free(text);
	return close(fd);
fail:
	free(text);
	if (fd >= 0)
		close(fd);
	return -1;
}

int learn_write_atomic(const char *path, const char *text)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	bool have = !stat(path, &st);
	int fd, dfd, saved;

	snprintf(tmp, sizeof(tmp), "%s", path);
	snprintf(dir, sizeof(dir), "%s", dirname(tmp)); /* "." for a bare name */
	if (!have && stat(dir, &st))
		return -1;
	if (!have)
		st.st_mode = 0644; /* a new file: the directory's owner (a sudo user's project) */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, getpid()) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (write_all(fd, text, strlen(text)) || fchmod(fd, st.st_mode & 07777) ||
	    (fchown(fd, st.st_uid, st.st_gid) && errno != EPERM) || fsync(fd))
		goto fail;
	if (close(fd)) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path))
		goto fail;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd); /* the rename itself reaches the disk */
		close(dfd);
	}
	return 0;
fail:
	saved = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = saved;
	return -1;
}

static int save_fallback(const char *file, const char *text, char *out, size_t len, bool beside);

/* The write failed: the rules go to a fallback file, named, so the run is not lost. */
static int learn_fallback(const char *file, const char *merged, size_t added, bool beside)
{
	char saved[PATH_MAX + 64];

	/* not beside a file the program tampered with: that directory may be its choice */
	if (save_fallback(file, merged, saved, sizeof(saved), beside)) {
		pr_err("learning: cannot save the rules anywhere either (next to %s, in $TMPDIR or "
		       "/tmp, in the working directory): %s; the lines above are all that is left "
		       "of them",
		       file, strerror(errno));
		return -1;
	}
	pr_err("learning: the %zu rule%s of this run are saved in %s (%s with them merged); fix "
	       "what stopped the write, review it, then: cp %s %s",
	       added, added == 1 ? "" : "s", saved, file, saved, file);
	return 1;
}

/* What the records say of their own completeness, before any rule is written. */
static void warn_records(const struct learn_set *s)
{
	if (s->lost)
		pr_warn("learning: %llu events were lost (stderr says why): the rules below may "
			"be incomplete; run the program again to learn the rest, or raise "
			"bpf.events-buffer (docs/policy.md)",
			(unsigned long long)s->lost);
	if (s->dotenv)
		pr_warn("learning: %lu access(es) to a .env file (e.g. %s): a library searching "
			"for .env (python-dotenv's load_dotenv() looks in every parent directory) "
			"turns those directories into expose-ro= rules; unless the program needs the "
			"file, learn again with PYTHON_DOTENV_DISABLED=1 (docs/faq.md)",
			s->dotenv, s->dotenv_example);
	if (s->unlearned)
		pr_warn("learning: %lu events name accesses no rule can allow (self-protection, "
			"anonymous code, truncated paths): see the event lines",
			s->unlearned);
}

/* The last word of a write that succeeded. `old`: the previous version's name, or "". */
static void say_written(const char *file, const struct learn_set *s, size_t added, const char *old)
{
	if (!added)
		fprintf(stderr,
			"pysb-bpf: learning: nothing to add (%lu events); %s created from "
			"the template\n",
			s->records, file);
	else
		fprintf(stderr,
			"pysb-bpf: learning: %zu rule%s written into %s%s%s; review them "
			"(above), then run without --learn to enforce\n",
			added, added == 1 ? "" : "s", file, old[0] ? ", previous version in " : "",
			old);
}

/* What was touched but gets no rule: said, since the next run will deny it. */
static void warn_unwritten(const struct learn_rules *r)
{
	if (r->pycache)
		pr_warn("learning: %lu write(s) of Python's bytecode cache (e.g. %s) made no rule: "
			"one would let the program write its own sources' directory, and change "
			"what it runs next time; env=PYTHONDONTWRITEBYTECODE=1 is learned instead "
			"(docs/faq.md, \"Why does every run deny __pycache__?\")",
			r->pycache, r->pycache_example ? r->pycache_example : "__pycache__");
	if (r->pytest_cache)
		pr_warn("learning: %lu write(s) of pytest's cache (e.g. %s) made no rule: one would "
			"let the program write its own sources' directory; "
			"env=PYTEST_ADDOPTS=-p no:cacheprovider is learned instead (--lf, --ff and "
			"--sw then start afresh; docs/faq.md, \"Why does pytest deny "
			".pytest_cache?\")",
			r->pytest_cache,
			r->pytest_cache_example ? r->pytest_cache_example : ".pytest_cache");
	if (r->not_widened)
		pr_warn("learning: %zu file(s) the program created or removed directly in /etc, ~ "
			"or another directory learning never widens (docs/policy.md) are gone: no "
			"rule written, since only write access to the whole directory allows that; "
			"if the program must do it, write that rule yourself",
			r->not_widened);
	if (r->n_block_devices)
		pr_warn("learning: the program read or wrote %zu block device(s), which hold every "
			"file of their file systems: their rules are written commented out; "
			"uncomment one only if the program must have the whole disk",
			r->n_block_devices);
	if (r->n_servers)
		pr_warn("learning: the program talked to %zu server(s) outside the sandbox through "
			"their unix sockets (tmux, ssh-agent, the session bus act as you, outside "
			"it): their rules are written commented out; uncomment those you trust",
			r->n_servers);
	for (size_t i = 0; i < r->n_unlisted; i++)
		pr_warn("learning: the program listed (or opened) the directory \"%s\": no rule "
			"written, since a rule on it would grant every file in it (secrets "
			"included: docs/policy.md, \"Never widened\"); the next run denies that "
			"listing: write the rule yourself if the program needs it",
			r->unlisted[i]);
	for (size_t i = 0; i < r->n_unwritable; i++)
		pr_warn("learning: no rule written for the directory \"%s\": its name holds what "
			"a policy line gives a meaning to (${...}, '#', white space at an end), so "
			"the rule would read back as another, wider path; rename it, or write that "
			"rule yourself",
			r->unwritable[i]);
}

/* What the rules are merged into: FILE's text (*exists), the template for a missing file;
 * when it cannot be read (*unread), the template, or the text the run began with when the
 * program tampered with it (*refused: saved away from it). NULL: out of memory. */
static char *merge_base(const char *file, const struct learn_env *env, const char *stamp,
			bool *exists, bool *unread, bool *refused)
{
	struct stat st;
	char *text = NULL;

	*exists = !stat(file, &st);
	/* read (or, missing, checked) through no link the program could have made */
	if (*exists || env->writer)
		text = read_target(file, env, &st, refused);
	*exists = text || (!*refused && errno != ENOENT);
	if (text && env->before && strcmp(text, env->before)) {
		pr_err("learning: %s changed while the program ran (nothing is denied while "
		       "learning: the program could write it); its rules are not merged into it",
		       file);
		*refused = true;
	}
	if (*refused) {
		free(text);
		*unread = true;
		return env->before && *env->before ? strdup(env->before) : learn_template(stamp);
	}
	if (!text && *exists) {
		/* The rules still reach the fallback, merged into the template. */
		pr_err("learning: cannot read %s: %s", file, strerror(errno));
		*unread = true;
	}
	return text ? text : learn_template(stamp);
}

int learn_file(const char *file, const struct learn_set *s, const struct learn_env *env,
	       bool backup, time_t now, FILE *review)
{
	struct learn_rules r;
	char stamp[64], old[PATH_MAX + 16] = "", *text, *merged = NULL;
	bool exists, unread = false, refused = false;
	size_t added;
	int ret = -1;

	learn_stamp(now, stamp, sizeof(stamp));
	warn_records(s);
	text = merge_base(file, env, stamp, &exists, &unread, &refused);
	if (!text) {
		pr_err("learning: out of memory");
		return -1;
	}
	if (learn_generate(s, env, &r)) {
		pr_err("learning: out of memory");
		free(text);
		return -1;
	}
	warn_unwritten(&r);
	if (learn_merge_in(text, &r, stamp, env, file, &merged, &added)) {
		pr_err("learning: out of memory");
		goto out;
	}
	if (!added && (exists || unread)) {
		fprintf(stderr,
			"pysb-bpf: learning: nothing to add to %s (%lu events, every rule "
			"already there)\n",
			file, s->records);
		ret = unread ? 1 : 0;
		goto out;
	}
	/* What is granted, for review, before anything can fail. */
	if (added && review) {
		fprintf(stderr,
			"pysb-bpf: learning: %zu rule%s added to %s, as diff -u shows them%s:\n",
			added, added == 1 ? "" : "s", file,
			review == stdout ? " on standard output" : "");
		if (learn_diff(review, file, text, merged) < 0)
			pr_err("learning: out of memory rendering the lines added");
		fflush(review);
	}
	if (unread) {
		ret = learn_fallback(file, merged, added, !refused);
		goto out;
	}
	if (exists && backup && learn_backup(file, old, sizeof(old))) {
		pr_err("learning: cannot keep the previous %s as %s: %s; nothing written", file,
		       old[0] ? old : "<file>.old", strerror(errno));
		ret = learn_fallback(file, merged, added, true);
		goto out;
	}
	if (learn_write_atomic(file, merged)) {
		pr_err("learning: cannot write %s: %s; it is unchanged", file, strerror(errno));
		ret = learn_fallback(file, merged, added, true);
		goto out;
	}
	say_written(file, s, added, old);
	ret = 0;
out:
	learn_rules_free(&r);
	free(text);
	free(merged);
	return ret;
}

/* ---------------- before the run: can the target be written? */

/* Why a directory cannot take the new file, as a user fixes it. */
static const char *dir_fix(int err)
{
	switch (err) {
	case EROFS:
		return "it is on a read-only file system: remount it read-write";
	case EACCES:
		return "no permission to create files in it: change its permissions";
	case EPERM:
		return "it is immutable or append-only (lsattr shows it): chattr -i/-a it";
	case ENOSPC:
	case EDQUOT:
		return "the file system is full: free some space";
	default:
		return "fix that";
	}
}

/* An existing target: a regular file this process may read and replace (not immutable,
 * not append-only: both pass the access check but refuse the rename). 0, or -1 after
 * saying why and what to do. */
static int existing_target(const char *file, const struct stat *st, const char *dir,
			   const char *after, const char *other)
{
	int fd, flags = 0;

	if (!S_ISREG(st->st_mode)) {
		pr_err("learning: cannot write the rules into %s: it is %s, not a policy "
		       "file%s; give the path of a file (new or existing), e.g. %s/policy",
		       file, S_ISDIR(st->st_mode) ? "a directory" : "not a regular file", after,
		       S_ISDIR(st->st_mode) ? file : dir);
		return -1;
	}
	/* Learning reads the file, then renames a new one over it. */
	if (faccessat(AT_FDCWD, file, R_OK | W_OK, AT_EACCESS)) {
		int e = errno;

		pr_err("learning: cannot write the rules into %s: %s%s; %s, or learn into "
		       "another file (%s)",
		       file, strerror(e), after,
		       e == EROFS   ? "remount its file system read-write"
		       : e == EPERM ? "it is immutable (lsattr shows it): chattr -i it"
				    : "make it readable and writable (chmod u+rw)",
		       other);
		return -1;
	}
	fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	/* Append-only passes the access check but refuses the rename. */
	if (fd >= 0 && !ioctl(fd, FS_IOC_GETFLAGS, &flags) &&
	    (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL))) {
		close(fd);
		pr_err("learning: cannot write the rules into %s: it is %s (lsattr shows "
		       "it)%s; chattr -%c it, or learn into another file (%s)",
		       file, flags & FS_IMMUTABLE_FL ? "immutable" : "append-only", after,
		       flags & FS_IMMUTABLE_FL ? 'i' : 'a', other);
		return -1;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

int learn_check_target(const char *file, bool before_run)
{
	const char *after = before_run ? " (the program was not started)" : "";
	const char *other = before_run ? "--learn=FILE" : "--policy FILE";
	char tmp[PATH_MAX], dir[PATH_MAX], probe[PATH_MAX + 32];
	struct stat st;
	int fd;

	if (!*file) {
		pr_err("learning: no file to learn into (an empty name)%s; give one: --learn=FILE",
		       after);
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s", file);
	snprintf(dir, sizeof(dir), "%s", dirname(tmp));
	if (stat(dir, &st)) {
		int e = errno;

		pr_err("learning: cannot write the rules into %s: its directory %s: %s%s; %s, or "
		       "learn into another file (%s)",
		       file, dir, strerror(e), after,
		       e == ENOENT ? "create the directory (mkdir -p)" : "fix the path", other);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		pr_err("learning: cannot write the rules into %s: %s is not a directory%s; give a "
		       "path whose parent is a directory",
		       file, dir, after);
		return -1;
	}
	if (!stat(file, &st) && existing_target(file, &st, dir, after, other))
		return -1;
	/* The new version and the .old backup are created next to it: really try. */
	if ((size_t)snprintf(probe, sizeof(probe), "%s.%d.check", file, getpid()) >=
	    sizeof(probe)) {
		pr_err("learning: cannot write the rules into %s: the name is too long%s", file,
		       after);
		return -1;
	}
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;

		pr_err("learning: cannot write the rules into %s: cannot create files in %s: %s%s; "
		       "%s, or learn into another file (%s)",
		       file, dir, strerror(e), after, dir_fix(e), other);
		return -1;
	}
	close(fd);
	if (unlink(probe)) {
		int e = errno;

		pr_err("learning: cannot write the rules into %s: cannot replace files in %s (%s "
		       "stays behind): %s%s; %s",
		       file, dir, probe, strerror(e), after, dir_fix(e));
		return -1;
	}
	return 0;
}

int learn_check_source(const char *from)
{
	struct stat st;

	if (!strcmp(from, "-"))
		return 0;
	if (stat(from, &st)) {
		pr_err("learn: cannot read the events %s: %s; give the file that run --events FILE "
		       "wrote (or - for standard input)",
		       from, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		pr_err("learn: %s is a directory; --from takes the events file that run --events "
		       "FILE wrote, e.g. %s/events.jsonl",
		       from, from);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		const char *type = S_ISFIFO(st.st_mode)	  ? "a fifo"
				   : S_ISSOCK(st.st_mode) ? "a socket"
				   : S_ISCHR(st.st_mode)  ? "a character device"
				   : S_ISBLK(st.st_mode)  ? "a block device"
							  : "an unknown type";

		pr_err("learn: %s is not a regular file (%s); --from takes the events file that "
		       "run --events FILE wrote; to read a pipe, give --from - and pipe it in",
		       from, type);
		return -1;
	}
	if (access(from, R_OK)) {
		pr_err("learn: cannot read the events %s: %s; make it readable", from,
		       strerror(errno));
		return -1;
	}
	return 0;
}

/* ---------------- after the run: the fallback */

int learn_save_fallback(const char *file, const char *text, char *out, size_t len)
{
	return save_fallback(file, text, out, len, true);
}

/* beside: first next to `file`, and owned like it; else only in $TMPDIR, /tmp or ".",
 * and root's (`file` may be what the program put there: its owner, its directory). */
static int save_fallback(const char *file, const char *text, char *out, size_t len, bool beside)
{
	char tmp[PATH_MAX], base[NAME_MAX + 1], dir[3][PATH_MAX];
	const char *tmpdir = getenv("TMPDIR");
	struct stat st;
	bool own = beside && !stat(file, &st);
	int fd = -1;

	snprintf(tmp, sizeof(tmp), "%s", file);
	snprintf(base, sizeof(base), "%s", basename(tmp));
	snprintf(tmp, sizeof(tmp), "%s", file);
	snprintf(dir[0], sizeof(dir[0]), "%s", dirname(tmp));
	snprintf(dir[1], sizeof(dir[1]), "%s", tmpdir && *tmpdir == '/' ? tmpdir : "/tmp");
	snprintf(dir[2], sizeof(dir[2]), ".");
	if (!own && beside)
		own = !stat(dir[0], &st); /* the owner the new file would have had */
	for (int d = beside ? 0 : 1; d < 3 && fd < 0; d++) {
		for (int i = 0; i < 100; i++) {
			int n = i ? snprintf(out, len, "%s/%s.learned_%d", dir[d], base, i)
				  : snprintf(out, len, "%s/%s.learned", dir[d], base);

			if (n < 0 || (size_t)n >= len)
				break;
			/* Never over anything, nor through a link someone left in /tmp. */
			fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd >= 0 || errno != EEXIST)
				break;
		}
	}
	if (fd < 0)
		return -1;
	if (write_all(fd, text, strlen(text)) || fsync(fd)) {
		int e = errno;

		close(fd);
		unlink(out);
		errno = e;
		return -1;
	}
	/* The owner of the policy (a sudo user) can read it; root can in any case. */
	if (own && fchown(fd, st.st_uid, st.st_gid))
		pr_debug("learning: cannot give %s to uid %u: %s", out, (unsigned)st.st_uid,
			 strerror(errno));
	return close(fd);
}
