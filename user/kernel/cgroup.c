/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"

int cgroup2_mount(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int ret = -1;

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		/* id parent maj:min root mountpoint opts... - fstype source superopts */
		char mnt[PATH_MAX], *sep = strstr(line, " - ");

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		if ((size_t)snprintf(buf, len, "%s", mnt) < len) {
			ret = 0;
			break;
		}
	}
	free(line);
	fclose(f);
	return ret;
}

static int write_file(const char *dir, const char *name, const char *val)
{
	char p[PATH_MAX + 32];
	int fd, ret = 0;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int sandbox_cgroup_create(struct sandbox_cgroup *cg, const char *name)
{
	char root[PATH_MAX], parent[PATH_MAX + 16];
	struct stat st;

	cg->fd = -1;
	if (cgroup2_mount(root, sizeof(root))) {
		pr_err("no cgroup v2 hierarchy is mounted; mount one "
		       "(mount -t cgroup2 none /sys/fs/cgroup) or boot with systemd's unified layout");
		return -1;
	}
	snprintf(parent, sizeof(parent), "%s/%s", root, PYSB_CGROUP_PARENT);
	if (mkdir(parent, 0755) && errno != EEXIST) {
		pr_err("cannot create cgroup %s: %s; pysb-bpf needs root "
		       "(or CAP_SYS_ADMIN with a delegated cgroup)",
		       parent, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(cg->path, sizeof(cg->path), "%s/%s", parent, name) >=
	    sizeof(cg->path)) {
		pr_err("cgroup path too long: %s/%s", parent, name);
		return -1;
	}
	if (mkdir(cg->path, 0755)) {
		pr_err("cannot create cgroup %s: %s", cg->path, strerror(errno));
		return -1;
	}
	cg->fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->fd < 0 || fstat(cg->fd, &st)) {
		pr_err("cannot open cgroup %s: %s", cg->path, strerror(errno));
		sandbox_cgroup_destroy(cg);
		return -1;
	}
	/* On cgroup v2 the directory's inode number is the cgroup id BPF reports. */
	cg->id = st.st_ino;
	cg->level = 0;
	for (const char *p = cg->path + strlen(root); *p; p++)
		cg->level += *p == '/';
	pr_debug("cgroup %s id %llu level %d", cg->path, (unsigned long long)cg->id, cg->level);
	return 0;
}

static int cgroup_populated(const char *dir)
{
	char p[PATH_MAX + 32], buf[256];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/cgroup.events", dir);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strstr(buf, "populated 1") != NULL;
}

/* The run's lock goes only once its cgroup is gone: a gc never sees the cgroup unlocked
 * while this process lives. */
static void release_lock(struct sandbox_cgroup *cg)
{
	if (!cg->lock[0])
		return;
	unlink(cg->lock);
	close(cg->lock_fd);
	cg->lock[0] = '\0';
}

int sandbox_cgroup_create_run(struct sandbox_cgroup *cg)
{
	static const char hex[] = "0123456789abcdef";
	char name[32];

	cg->path[0] = cg->lock[0] = '\0';
	cg->fd = -1;
	if (mkdir(PYSB_RUN_DIR, 0700) && errno != EEXIST) {
		pr_err("cannot create %s: %s; pysb-bpf needs root", PYSB_RUN_DIR, strerror(errno));
		return -1;
	}
	for (int tries = 0; tries < 16; tries++) {
		unsigned char r[8];
		bool digits = true;

		if (getrandom(r, sizeof(r), 0) != sizeof(r)) {
			pr_err("getrandom: %s", strerror(errno));
			return -1;
		}
		memcpy(name, "run-", 4);
		for (size_t i = 0; i < sizeof(r); i++) {
			name[4 + 2 * i] = hex[r[i] >> 4];
			name[5 + 2 * i] = hex[r[i] & 15];
			digits &= r[i] >> 4 < 10 && (r[i] & 15) < 10;
		}
		name[4 + 2 * sizeof(r)] = '\0';
		if (digits)
			continue; /* all digits reads as an older version's run-<pid> */
		/* The lock first, then the cgroup: a cgroup without a held lock is dead. */
		snprintf(cg->lock, sizeof(cg->lock), "%s/%s.lock", PYSB_RUN_DIR, name);
		cg->lock_fd =
			open(cg->lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (cg->lock_fd < 0 && errno == EEXIST) {
			cg->lock[0] = '\0';
			continue;
		}
		if (cg->lock_fd < 0 || flock(cg->lock_fd, LOCK_EX | LOCK_NB)) {
			int err = errno;

			pr_err("cannot create and lock %s: %s%s", cg->lock, strerror(err),
			       err == EACCES && geteuid() ? NOT_ROOT_HINT : "");
			if (cg->lock_fd >= 0) {
				unlink(cg->lock);
				close(cg->lock_fd);
			}
			cg->lock[0] = '\0';
			return -1;
		}
		if (!sandbox_cgroup_create(cg, name))
			return 0;
		release_lock(cg);
		return -1;
	}
	pr_err("no free random cgroup name in %s after 16 tries", PYSB_RUN_DIR);
	return -1;
}

int sandbox_cgroup_destroy(struct sandbox_cgroup *cg)
{
	int tries;

	if (!cg->path[0]) {
		release_lock(cg);
		return 0;
	}
	if (cg->fd >= 0)
		close(cg->fd);
	cg->fd = -1;
	/* cgroup.kill (5.14+) SIGKILLs every task, including ones forked meanwhile. */
	if (cgroup_populated(cg->path) == 1 && write_file(cg->path, "cgroup.kill", "1"))
		pr_warn("cgroup.kill on %s failed: %s", cg->path, strerror(errno));
	for (tries = 0; tries < 500; tries++) {
		if (!rmdir(cg->path)) {
			cg->path[0] = '\0';
			release_lock(cg);
			return 0;
		}
		if (errno != EBUSY)
			break;
		/* Killed tasks leave the cgroup asynchronously. */
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	pr_err("cannot remove cgroup %s: %s; remove it with 'rmdir %s' once its tasks are gone",
	       cg->path, strerror(errno), cg->path);
	return -1;
}

static void unlink_lock(const char *name)
{
	char f[PATH_MAX];

	snprintf(f, sizeof(f), "%s/%s.lock", PYSB_RUN_DIR, name);
	unlink(f);
}

/* Is the pysb-bpf of run cgroup `name` gone? Its lock file can be locked (or is missing:
 * no pysb-bpf holds it). An older version's "run-<pid>": no process has that pid. */
static bool run_is_dead(const char *name)
{
	const char *id = name + 4;
	char f[PATH_MAX];
	bool dead;
	int fd;

	if (*id && strspn(id, "0123456789") == strlen(id))
		return kill(atoi(id), 0) && errno == ESRCH;
	snprintf(f, sizeof(f), "%s/%s.lock", PYSB_RUN_DIR, name);
	fd = open(f, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT;
	/* Released when fd closes: the lock was only a question. */
	dead = !flock(fd, LOCK_EX | LOCK_NB);
	close(fd);
	return dead;
}

int sandbox_cgroup_gc(uint64_t *alive, size_t *n_alive, size_t cap)
{
	char root[PATH_MAX], parent[PATH_MAX + 16], p[PATH_MAX * 2];
	struct dirent *de;
	struct stat st;
	DIR *d;

	*n_alive = 0;
	if (cgroup2_mount(root, sizeof(root)))
		return -1;
	snprintf(parent, sizeof(parent), "%s/%s", root, PYSB_CGROUP_PARENT);
	d = opendir(parent);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "run-", 4))
			continue;
		snprintf(p, sizeof(p), "%s/%s", parent, de->d_name);
		/* A supervisor that died leaves its cgroup; once empty, nothing needs it. The
		 * tasks of a populated one stay confined by the pinned programs. */
		if (run_is_dead(de->d_name) && cgroup_populated(p) == 0 && !rmdir(p)) {
			pr_info("removed the empty cgroup %s of a pysb-bpf that died", p);
			unlink_lock(de->d_name);
			continue;
		}
		if (!stat(p, &st) && *n_alive < cap)
			alive[(*n_alive)++] = st.st_ino;
	}
	closedir(d);
	return 0;
}

bool sandbox_cgroup_id_listed(uint64_t id)
{
	char root[PATH_MAX], parent[PATH_MAX + 16], p[PATH_MAX * 2];
	struct dirent *de;
	struct stat st;
	bool found = false;
	DIR *d;

	if (cgroup2_mount(root, sizeof(root)))
		return true; /* unknown: kept */
	snprintf(parent, sizeof(parent), "%s/%s", root, PYSB_CGROUP_PARENT);
	d = opendir(parent);
	if (!d)
		return errno != ENOENT;
	while (!found && (de = readdir(d))) {
		if (strncmp(de->d_name, "run-", 4))
			continue;
		snprintf(p, sizeof(p), "%s/%s", parent, de->d_name);
		found = !stat(p, &st) && (uint64_t)st.st_ino == id;
	}
	closedir(d);
	return found;
}
