/* SPDX-License-Identifier: MIT */
/*
 * pysb-bpf status: every confined cgroup, who keeps it, its policy, mode and event counts
 * (the aa-status of this tool). See status.h for where each fact comes from and why a
 * stale record cannot show: the list is the pinned `sandboxes` map, never the records.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "abi_names.h"
#include "loader.h"
#include "log.h"
#include "status.h"

/* ---- records: /run/pysb-bpf/sandboxes/<cgroup id>.json ---- */

static const char *record_dir = PYSB_RECORD_DIR;

void sandbox_record_dir(const char *dir)
{
	record_dir = dir ? dir : PYSB_RECORD_DIR;
}

unsigned long long pid_start_time(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) state ..."; comm may hold spaces and parentheses: after the last ')'
	 * come fields 3 (state) ... 22 (starttime). */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	for (int field = 3; field <= 22 && p; field++) {
		while (*p == ' ')
			p++;
		if (field == 22)
			start = strtoull(p, NULL, 10);
		p = strchr(p, ' ');
	}
	return start;
}

void sandbox_record_self(struct sandbox_record *r)
{
	r->pid = getpid();
	r->pid_start = pid_start_time(r->pid);
	r->since = (long long)time(NULL);
}

static const char *const owner_names[] = {
	[OWNER_UNKNOWN] = "unknown",
	[OWNER_RUN] = "run",
	[OWNER_ATTACH] = "attach",
	[OWNER_DAEMON] = "daemon",
};

static json_t *sandbox_record_json(const struct sandbox_record *r)
{
	json_t *j = json_pack("{s:i, s:I, s:I, s:s, s:i, s:I, s:s, s:s, s:s, s:I}", "version", 1,
			      "cgroup_id", (json_int_t)r->cgid, "sandbox", (json_int_t)r->sandbox,
			      "owner", owner_names[r->owner], "pid", r->pid, "pid_start",
			      (json_int_t)r->pid_start, "policy", r->policy, "mode", r->mode,
			      "cgroup", r->cgroup, "since", (json_int_t)r->since);

	if (j && r->owner == OWNER_DAEMON)
		json_object_set_new(j, "binding", json_string(r->binding));
	if (j && r->owner == OWNER_ATTACH)
		json_object_set_new(j, "target", json_integer(r->target));
	return j;
}

static void copy_str(char *dst, size_t len, json_t *j, const char *key)
{
	const char *v = json_string_value(json_object_get(j, key));

	snprintf(dst, len, "%s", v ? v : "");
}

static int sandbox_record_from_json(json_t *j, struct sandbox_record *r)
{
	const char *owner = json_string_value(json_object_get(j, "owner"));

	memset(r, 0, sizeof(*r));
	if (!json_is_object(j) || !owner || json_integer_value(json_object_get(j, "version")) != 1)
		return -1;
	for (size_t i = 1; i < sizeof(owner_names) / sizeof(owner_names[0]); i++)
		if (!strcmp(owner, owner_names[i]))
			r->owner = (enum sandbox_owner)i;
	if (r->owner == OWNER_UNKNOWN)
		return -1;
	r->cgid = (uint64_t)json_integer_value(json_object_get(j, "cgroup_id"));
	r->sandbox = (uint32_t)json_integer_value(json_object_get(j, "sandbox"));
	r->pid = (int)json_integer_value(json_object_get(j, "pid"));
	r->pid_start = (unsigned long long)json_integer_value(json_object_get(j, "pid_start"));
	r->target = (int)json_integer_value(json_object_get(j, "target"));
	r->since = json_integer_value(json_object_get(j, "since"));
	copy_str(r->binding, sizeof(r->binding), j, "binding");
	copy_str(r->policy, sizeof(r->policy), j, "policy");
	copy_str(r->mode, sizeof(r->mode), j, "mode");
	copy_str(r->cgroup, sizeof(r->cgroup), j, "cgroup");
	return 0;
}

static void record_path(char *buf, size_t len, uint64_t cgid)
{
	snprintf(buf, len, "%s/%llu.json", record_dir, (unsigned long long)cgid);
}

/* mkdir -p of the record directory (its parent /run/pysb-bpf included). */
static int make_dirs(const char *dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return mkdir(p, 0755) && errno != EEXIST ? -errno : 0;
}

int sandbox_record_write(const struct sandbox_record *r)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32];
	json_t *j = sandbox_record_json(r);
	FILE *f = NULL;
	int err = make_dirs(record_dir);

	record_path(path, sizeof(path), r->cgid);
	snprintf(tmp, sizeof(tmp), "%s/.%llu.%d.tmp", record_dir, (unsigned long long)r->cgid,
		 getpid());
	if (!err && !j)
		err = -ENOMEM;
	if (!err && !(f = fopen(tmp, "we")))
		err = -errno;
	if (!err && (json_dumpf(j, f, JSON_COMPACT) || fputc('\n', f) == EOF))
		err = -EIO;
	if (f && fclose(f) && !err)
		err = -errno;
	/* A reader sees the whole record or none: rename replaces it in one step. */
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		pr_warn("cannot write %s: %s; `pysb-bpf status` will not know who keeps cgroup %s",
			path, strerror(-err), r->cgroup);
	}
	json_decref(j);
	return err;
}

int sandbox_record_read(uint64_t cgid, struct sandbox_record *r)
{
	char path[PATH_MAX];
	json_t *j;
	int ret;

	record_path(path, sizeof(path), cgid);
	j = json_load_file(path, 0, NULL);
	if (!j)
		return -1;
	ret = sandbox_record_from_json(j, r);
	json_decref(j);
	return ret || r->cgid != cgid ? -1 : 0;
}

void sandbox_record_remove(uint64_t cgid)
{
	char path[PATH_MAX];

	record_path(path, sizeof(path), cgid);
	if (unlink(path) && errno != ENOENT)
		pr_warn("cannot remove %s: %s", path, strerror(errno));
}

/* ---- reading the pinned state ---- */

/* The cgroup directory whose id (inode) is cgid, found by walking the hierarchy: for a
 * sandbox without a record, or whose record's directory moved. */
static uint64_t walk_cgid;
static char *walk_out;

static int walk_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D && (uint64_t)st->st_ino == walk_cgid) {
		snprintf(walk_out, PATH_MAX, "%s", path);
		return 1;
	}
	return 0;
}

static void find_cgroup(const char *root, const struct status_entry *e, char *out)
{
	struct stat st, rst;

	out[0] = '\0';
	if (e->have_record && e->rec.cgroup[0] && !stat(e->rec.cgroup, &st) && !stat(root, &rst) &&
	    st.st_dev == rst.st_dev && (uint64_t)st.st_ino == e->cgid) {
		snprintf(out, PATH_MAX, "%s", e->rec.cgroup);
		return;
	}
	walk_cgid = e->cgid;
	walk_out = out;
	nftw(root, walk_one, 16, FTW_PHYS | FTW_MOUNT);
}

/* Sum over CPUs of a per-CPU u64 array slot; -1 if it cannot be read. */
static int percpu_sum(int fd, uint32_t slot, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;
	int ret = -1;

	*sum = 0;
	if (fd < 0 || ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return -1;
	if (!bpf_map_lookup_elem(fd, &slot, v)) {
		for (int c = 0; c < ncpu; c++)
			*sum += v[c];
		ret = 0;
	}
	free(v);
	return ret;
}

static int open_pinned_map(const char *dir, const char *name)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/map-%s", dir, name);
	return bpf_obj_get(p);
}

static int push_entry(struct status *s, const struct status_entry *e)
{
	struct status_entry *v = realloc(s->v, (s->n + 1) * sizeof(*v));

	if (!v)
		return -1;
	s->v = v;
	s->v[s->n++] = *e;
	return 0;
}

static int denied_hint(const char *what)
{
	pr_err("cannot read %s: %s; status reads the pinned BPF state: run it as root", what,
	       strerror(errno));
	return -1;
}

/* Every sandbox of the instance pinned in dir. */
static int collect_instance(struct status *s, const char *dir, const char *cgroot)
{
	int sb = open_pinned_map(dir, "sandboxes");
	int counts = open_pinned_map(dir, "event_count"); /* absent in builds before status */
	int lost = open_pinned_map(dir, "lost");
	uint64_t key, next, *prev = NULL;
	int ret = 0;

	if (sb < 0) {
		if (errno == EACCES || errno == EPERM)
			ret = denied_hint(dir);
		goto out; /* being removed, or not an instance */
	}
	while (!bpf_map_get_next_key(sb, prev, &next)) {
		struct status_entry *e = calloc(1, sizeof(*e));
		bool got_lost = true;

		key = next;
		prev = &key;
		if (!e) {
			ret = -1;
			break;
		}
		if (bpf_map_lookup_elem(sb, &key, &e->cfg)) {
			free(e);
			continue; /* removed between the two calls */
		}
		snprintf(e->instance, sizeof(e->instance), "%s", dir);
		e->cgid = key;
		e->have_record = !sandbox_record_read(key, &e->rec) &&
				 (e->rec.owner == OWNER_DAEMON) ==
					 !!(e->cfg.flags & PYSB_SB_DAEMON);
		if (e->have_record)
			e->owner_running = e->rec.pid > 0 && e->rec.pid_start &&
					   pid_start_time(e->rec.pid) == e->rec.pid_start;
		find_cgroup(cgroot, e, e->cgroup);
		for (uint32_t r = 0; r < PYSB_LOST_MAX; r++)
			got_lost &= !percpu_sum(lost, e->cfg.id * PYSB_LOST_MAX + r, &e->lost[r]);
		e->counts_known = got_lost && !percpu_sum(counts, e->cfg.id, &e->events);
		if (push_entry(s, e))
			ret = -1;
		free(e);
		if (ret)
			break;
	}
out:
	if (sb >= 0)
		close(sb);
	if (counts >= 0)
		close(counts);
	if (lost >= 0)
		close(lost);
	return ret;
}

static int by_cgroup(const void *a, const void *b)
{
	const struct status_entry *x = a, *y = b;
	int c = strcmp(x->instance, y->instance);

	return c ? c : x->cgid < y->cgid ? -1 : x->cgid > y->cgid;
}

/* Reads the pinned state. Returns 0, or -1 after saying what failed. */
static int status_collect(struct status *s)
{
	char cgroot[PATH_MAX] = "/sys/fs/cgroup";
	struct dirent *de;
	DIR *d;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	cgroup2_mount(cgroot, sizeof(cgroot));
	d = opendir(PYSB_PIN_ROOT);
	if (!d) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0; /* never loaded since boot */
		return denied_hint(PYSB_PIN_ROOT);
	}
	while (!ret && (de = readdir(d))) {
		char dir[64];
		void *v;

		/* "_tmp_": an instance being pinned; it holds no sandbox yet */
		if (de->d_name[0] == '.' || strstr(de->d_name, "_tmp_") ||
		    (size_t)snprintf(dir, sizeof(dir), "%s/%s", PYSB_PIN_ROOT, de->d_name) >=
			    sizeof(dir))
			continue;
		v = realloc(s->instances, (s->n_instances + 1) * sizeof(*s->instances));
		if (!v) {
			ret = -1;
			break;
		}
		s->instances = v;
		memcpy(s->instances[s->n_instances++], dir, sizeof(dir));
		ret = collect_instance(s, dir, cgroot);
	}
	closedir(d);
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), by_cgroup);
	return ret;
}

static void status_free(struct status *s)
{
	free(s->instances);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* ---- rendering (from the struct alone: unit-tested) ---- */

const char *status_mode(const struct status_entry *e)
{
	if (!(e->cfg.flags & PYSB_SB_AUDIT))
		return "enforce";
	return e->have_record && !strcmp(e->rec.mode, "learn") ? "learn" : "audit";
}

static enum sandbox_owner owner_of(const struct status_entry *e)
{
	if (e->have_record)
		return e->rec.owner;
	return (e->cfg.flags & PYSB_SB_DAEMON) ? OWNER_DAEMON : OWNER_UNKNOWN;
}

static void owner_text(const struct status_entry *e, char *buf, size_t len)
{
	const char *gone = e->owner_running ? "" : " (gone)";

	if (!e->have_record)
		snprintf(buf, len, "%s", (e->cfg.flags & PYSB_SB_DAEMON) ? "daemon:?" : "?");
	else if (e->rec.owner == OWNER_DAEMON)
		/* the binding keeps it whether or not a daemon runs: nothing to flag */
		snprintf(buf, len, "daemon:%s", e->rec.binding);
	else
		snprintf(buf, len, "%s %d%s", owner_names[e->rec.owner], e->rec.pid, gone);
}

static uint64_t lost_total(const struct status_entry *e)
{
	uint64_t n = 0;

	for (int r = 0; r < PYSB_LOST_MAX; r++)
		n += e->lost[r];
	return n;
}

static const char *shown_cgroup(const struct status_entry *e, char *buf, size_t len)
{
	if (!e->cgroup[0])
		snprintf(buf, len, "(removed, id %llu)", (unsigned long long)e->cgid);
	else
		snprintf(buf, len, "%s", e->cgroup);
	return buf;
}

static int width(int cur, const char *s)
{
	int n = (int)strlen(s);

	return n > cur ? n : cur;
}

/* One row's free text as the terminal gets it: a cgroup, a policy path and a daemon
 * binding's name may hold any byte (a directory a user named, a cgroup a pattern binding
 * matched), so control characters, C1 ones too, and bytes that are not UTF-8 are written
 * \xNN, as the deny lines write paths (found by a user, round 31: `status` wrote them
 * raw, an ESC in a policy's directory name recoloured the rest of the table). */
struct status_row {
	char *cgroup, *owner, *policy;
};

static int status_row(const struct status_entry *e, struct status_row *r)
{
	char buf[PATH_MAX + 64], owner[320];

	owner_text(e, owner, sizeof(owner));
	r->cgroup = log_printable(shown_cgroup(e, buf, sizeof(buf)));
	r->owner = log_printable(owner);
	r->policy = log_printable(e->have_record && e->rec.policy[0] ? e->rec.policy : "?");
	return r->cgroup && r->owner && r->policy ? 0 : -1;
}

static void status_row_free(struct status_row *r)
{
	free(r->cgroup);
	free(r->owner);
	free(r->policy);
}

void status_print(FILE *out, const struct status *s)
{
	int wc = (int)strlen("CGROUP"), wo = (int)strlen("OWNER");
	struct status_row *rows;

	if (!s->n_instances) {
		fprintf(out, "nothing is confined: no pysb-bpf instance is loaded (%s is empty)\n",
			PYSB_PIN_ROOT);
		return;
	}
	if (!s->n) {
		fprintf(out, "nothing is confined: no sandbox is registered in %s\n",
			s->instances[0]);
		return;
	}
	rows = calloc(s->n, sizeof(*rows));
	for (size_t i = 0; rows && i < s->n; i++) {
		if (status_row(&s->v[i], &rows[i])) {
			for (size_t j = 0; j <= i; j++)
				status_row_free(&rows[j]);
			free(rows);
			rows = NULL;
			break;
		}
		wc = width(wc, rows[i].cgroup);
		wo = width(wo, rows[i].owner);
	}
	if (!rows) {
		pr_err("status: out of memory");
		return;
	}
	fprintf(out, "%zu cgroup%s confined by pysb-bpf\n", s->n, s->n == 1 ? "" : "s");
	fprintf(out, "%-*s  %-*s  %-7s  %8s  %6s  %s\n", wc, "CGROUP", wo, "OWNER", "MODE",
		"EVENTS", "LOST", "POLICY");
	for (size_t i = 0; i < s->n; i++) {
		const struct status_entry *e = &s->v[i];
		char ev[24] = "-", lost[24] = "-";

		if (e->counts_known) {
			snprintf(ev, sizeof(ev), "%llu", (unsigned long long)e->events);
			snprintf(lost, sizeof(lost), "%llu", (unsigned long long)lost_total(e));
		}
		fprintf(out, "%-*s  %-*s  %-7s  %8s  %6s  %s\n", wc, rows[i].cgroup, wo,
			rows[i].owner, status_mode(e), ev, lost, rows[i].policy);
		status_row_free(&rows[i]);
	}
	free(rows);
	if (s->n_instances > 1)
		fprintf(out,
			"(%zu pysb-bpf instances loaded: a run of another build is still "
			"going)\n",
			s->n_instances);
}

static json_t *iso_time(long long t)
{
	struct tm tm;
	char buf[32];
	time_t tt = (time_t)t;

	if (!t || !gmtime_r(&tt, &tm))
		return json_null();
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

static json_t *entry_json(const struct status_entry *e)
{
	enum sandbox_owner k = owner_of(e);
	json_t *owner = json_pack("{s:s}", "kind", owner_names[k]);
	json_t *j, *lost;

	if (e->have_record) {
		json_object_set_new(owner, "pid", json_integer(e->rec.pid));
		json_object_set_new(owner, "running", json_boolean(e->owner_running));
		if (k == OWNER_DAEMON)
			json_object_set_new(owner, "binding", json_string(e->rec.binding));
		if (k == OWNER_ATTACH)
			json_object_set_new(owner, "target", json_integer(e->rec.target));
	}
	j = json_pack("{s:o, s:I, s:I, s:s, s:o, s:o, s:s, s:b, s:b, s:o}", "cgroup",
		      e->cgroup[0] ? json_string(e->cgroup) : json_null(), "cgroup_id",
		      (json_int_t)e->cgid, "sandbox", (json_int_t)e->cfg.id, "instance",
		      e->instance, "owner", owner, "policy",
		      e->have_record && e->rec.policy[0] ? json_string(e->rec.policy) : json_null(),
		      "mode", status_mode(e), "process_exec", !!(e->cfg.flags & PYSB_SB_EXEC),
		      "record", e->have_record, "since",
		      iso_time(e->have_record ? e->rec.since : 0));
	if (!j)
		return NULL;
	if (!e->counts_known) {
		json_object_set_new(j, "events", json_null());
		json_object_set_new(j, "lost", json_null());
		json_object_set_new(j, "lost_by_reason", json_null());
		return j;
	}
	lost = json_object();
	for (unsigned r = 0; r < PYSB_LOST_MAX; r++)
		json_object_set_new(lost, events_lost_name(r),
				    json_integer((json_int_t)e->lost[r]));
	json_object_set_new(j, "events", json_integer((json_int_t)e->events));
	json_object_set_new(j, "lost", json_integer((json_int_t)lost_total(e)));
	json_object_set_new(j, "lost_by_reason", lost);
	return j;
}

json_t *status_json(const struct status *s)
{
	json_t *inst = json_array(), *sbs = json_array();

	for (size_t i = 0; i < s->n_instances; i++)
		json_array_append_new(inst, json_string(s->instances[i]));
	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(sbs, entry_json(&s->v[i]));
	return json_pack("{s:I, s:o, s:o}", "confined", (json_int_t)s->n, "instances", inst,
			 "sandboxes", sbs);
}

int status_main(bool json)
{
	struct status s;
	int ret = 0;

	if (status_collect(&s)) {
		status_free(&s);
		return 1;
	}
	if (json) {
		json_t *j = status_json(&s);

		if (!j || json_dumpf(j, stdout, JSON_INDENT(2)) || fputc('\n', stdout) == EOF) {
			pr_err("status: cannot write the JSON document");
			ret = 1;
		}
		json_decref(j);
	} else {
		status_print(stdout, &s);
	}
	status_free(&s);
	return ret;
}
