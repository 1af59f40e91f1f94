/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <libgen.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "caps.h"
#include "compile.h"
#include "policy_api.h"
#include "stopwatch.h"

uint32_t kernel_dev(uint64_t st_dev)
{
	return (major(st_dev) << 20) | minor(st_dev);
}

#define OVERLAYFS_SUPER_MAGIC 0x794c7630

/*
 * stat(2), corrected to the (dev, ino) the kernel's inode carries. overlayfs reports, for
 * a non-directory whose layers are on different file systems, the st_dev of a per-layer
 * pseudo device, while the overlay inode BPF sees has the overlay's s_dev (st_ino is the
 * overlay inode's i_ino in every case). The overlay's s_dev is what its directories report.
 * raw_dev (if not NULL): the st_dev stat(2) reported, before the correction.
 */
int stat_kernel(const char *path, struct stat *st, uint64_t *raw_dev)
{
	struct stat dir;
	char parent[PATH_MAX];
	bool have_dir;
	long f_type;

	if (memo_stat(path, st))
		return -1;
	if (raw_dev)
		*raw_dev = st->st_dev;
	if (S_ISDIR(st->st_mode))
		return 0;
	snprintf(parent, sizeof(parent), "%s", path);
	have_dir = !memo_stat(dirname(parent), &dir);
	/* the directory's device already (every file system but such an overlay): nothing
	 * to correct, and no statfs(2) to ask */
	if ((have_dir && st->st_dev == dir.st_dev) || memo_statfs_type(path, &f_type) ||
	    f_type != OVERLAYFS_SUPER_MAGIC)
		return 0;
	if (!have_dir)
		return -1;
	st->st_dev = dir.st_dev;
	return 0;
}

/*
 * (dev, ino) -> index + 1 in compiled.files (0: empty slot), open addressing, at most half
 * full: finding the entry an inode already has is one probe, not a scan of every entry.
 */
struct file_index {
	size_t *slots;
	size_t size;		/* a power of two */
	struct diag_list *diag; /* where adding an entry reports what failed */
};

static size_t *file_slot(const struct compiled *c, const struct file_index *ix, uint64_t dev,
			 uint64_t ino)
{
	size_t mask = ix->size - 1;
	size_t i = (size_t)((ino ^ (dev << 40)) * 0x9e3779b97f4a7c15ull >> 20) & mask;

	while (ix->slots[i] &&
	       (c->files[ix->slots[i] - 1].ino != ino || c->files[ix->slots[i] - 1].st_dev != dev))
		i = (i + 1) & mask;
	return &ix->slots[i];
}

static int file_index_reserve(const struct compiled *c, struct file_index *ix)
{
	size_t size = ix->size ? ix->size : 256;
	size_t *old = ix->slots;

	if (2 * (c->n_files + 1) <= ix->size)
		return 0;
	while (2 * (c->n_files + 1) > size)
		size *= 2;
	ix->slots = calloc(size, sizeof(*ix->slots));
	if (!ix->slots) {
		ix->slots = old;
		return -1;
	}
	free(old);
	ix->size = size;
	for (size_t i = 0; i < c->n_files; i++)
		*file_slot(c, ix, c->files[i].st_dev, c->files[i].ino) = i + 1;
	return 0;
}

/* The inode `st` (of `path`, stat(2) said st_dev) gets `access`. */
static int add_entry_st(struct compiled *c, size_t *cap, struct file_index *ix, const char *path,
			const struct stat *st, uint64_t st_dev, uint32_t access,
			struct compiled_file *proto);

static int add_entry(struct compiled *c, size_t *cap, struct file_index *ix, const char *path,
		     uint32_t access, struct compiled_file *proto)
{
	struct stat st;
	uint64_t st_dev;

	if (stat_kernel(path, &st, &st_dev)) {
		/* Checked by the parser for explicit rules; a race or an implicit path gone. */
		return diag_add(ix->diag, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
				"cannot stat %s: %s", path, strerror(errno));
	}
	return add_entry_st(c, cap, ix, path, &st, st_dev, access, proto);
}

/*
 * readlink(2) is judged as a read of the link itself (bpf/read.bpf.c), and realpath(3)
 * reads every link on the way to a file: the links that lead to the runtime's own files
 * (/lib64, /usr/bin/python3 -> python3.11, the merged-/usr links at the root) are
 * readable. A rule on a link's own inode grants nothing else: path walks never pass
 * through a link's inode, they go to its target.
 */
static const char *const ROOT_LINKS[] = {
	"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/localtime", "/etc/resolv.conf"
};

/* The link `path` itself (lstat `st`): an entry with `access` (a link's inode is never
 * walked through: READ lets readlink(2) read it), marked as a link. */
static int add_link_entry(struct compiled *c, size_t *cap, struct file_index *ix, const char *path,
			  struct stat st, uint32_t access, const char *why)
{
	struct compiled_file proto = { .implicit = true, .link = true, .why = why };
	char parent[PATH_MAX];
	struct stat dir;
	uint64_t st_dev = st.st_dev;

	/* as stat_kernel: on overlayfs a non-directory reports a per-layer device */
	snprintf(parent, sizeof(parent), "%s", path);
	if (!memo_stat(strrchr(path, '/') == path ? "/" : dirname(parent), &dir))
		st.st_dev = dir.st_dev;
	return add_entry_st(c, cap, ix, path, &st, st_dev, access, &proto);
}

static int add_links(struct compiled *c, size_t *cap, struct file_index *ix, const char *path,
		     uint32_t access, const char *why)
{
	char prefix[PATH_MAX];
	size_t len = strlen(path);
	struct stat st;

	if (len >= sizeof(prefix) || path[0] != '/')
		return 0;
	for (size_t i = 1; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		if (memo_lstat(prefix, &st) || !S_ISLNK(st.st_mode))
			continue;
		if (add_link_entry(c, cap, ix, prefix, st, access, why))
			return -1;
	}
	return 0;
}

static int add_links_along(struct compiled *c, size_t *cap, struct file_index *ix, const char *path)
{
	return add_links(c, cap, ix, path, PYSB_ACC_READ, "symlink leading to the runtime");
}

/* The links of the interpreter's chain, as found on PATH: /usr/bin/python3 -> python3.11. */
static int add_interpreter_links(struct compiled *c, size_t *cap, struct file_index *ix,
				 const char *interp)
{
	char cur[PATH_MAX], link[PATH_MAX], next[2 * PATH_MAX + 1];
	int ret = 0;

	snprintf(cur, sizeof(cur), "%s", interp);
	for (int hops = 0; hops < 40 && !ret; hops++) {
		ssize_t n;

		ret = add_links_along(c, cap, ix, cur);
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			break;
		link[n] = '\0';
		if (link[0] == '/') {
			snprintf(next, sizeof(next), "%s", link);
		} else {
			char dir[PATH_MAX];

			snprintf(dir, sizeof(dir), "%s", cur);
			snprintf(next, sizeof(next), "%s/%s", dirname(dir), link);
		}
		if (strlen(next) >= sizeof(cur))
			break;
		memcpy(cur, next, strlen(next) + 1);
	}
	return ret;
}

static int add_entry_st(struct compiled *c, size_t *cap, struct file_index *ix, const char *path,
			const struct stat *st_in, uint64_t st_dev, uint32_t access,
			struct compiled_file *proto)
{
	struct stat st = *st_in;
	struct compiled_file *f;
	size_t *slot;

	/* a name kept (KEEP_NAME) inherits its covering rule's devices, or none */
	if (access && !(access & PYSB_ACC_KEEP_NAME) && compile_grants_devices(path, &st))
		access |= PYSB_ACC_DEVICES;
	if (file_index_reserve(c, ix))
		goto nomem;
	slot = file_slot(c, ix, st_dev, st.st_ino);
	if (*slot) {
		/* Two spellings of one inode: the union, so an implicit grant never narrows an
		 * explicit one; an inode alone's entry (ALONE) becomes a tree's, never the reverse */
		uint32_t *a = &c->files[*slot - 1].access;

		if (access & PYSB_ACC_ALONE)
			return 0;
		if ((*a & PYSB_ACC_ALONE) && (access & PYSB_ACC_RW))
			*a = access | (*a & (PYSB_ACC_KEEP_NAME | PYSB_ACC_DEVICES));
		else
			*a |= access;
		return 0;
	}
	if (c->n_files == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct compiled_file *v = realloc(c->files, ncap * sizeof(*v));

		if (!v)
			goto nomem;
		c->files = v;
		*cap = ncap;
	}
	f = &c->files[c->n_files];
	*f = *proto;
	f->path = strdup(path);
	if (!f->path)
		goto nomem;
	f->ino = st.st_ino;
	f->dev = kernel_dev(st.st_dev);
	f->st_dev = st_dev;
	f->access = access;
	*slot = ++c->n_files;
	if (c->n_files > PYSB_MAX_FILE_RULES) {
		return diag_add(ix->diag, DIAG_ERROR, (struct diag_at){ 0 },
				"split it or expose common parents",
				"the policy has more than %d file rules", PYSB_MAX_FILE_RULES);
	}
	return 0;
nomem:
	return diag_add(ix->diag, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
			"out of memory compiling the policy");
}

/*
 * Nearest compiled rule covering canonical `path` (the longest prefix, as py-sandboxes
 * decides): its access, 0 if none. explicit_only: the policy's own lines only.
 */
uint32_t compiled_access(const struct compiled *c, const char *path, bool explicit_only)
{
	size_t best = 0;
	uint32_t access = 0;

	for (size_t i = 0; i < c->n_files; i++) {
		size_t len = strlen(c->files[i].path);

		if (explicit_only && c->files[i].implicit)
			continue;
		if ((c->files[i].access & PYSB_ACC_ALONE) && strcmp(path, c->files[i].path))
			continue; /* grants nothing below it */
		if (len >= best && policy_path_under(path, c->files[i].path)) {
			best = len;
			access = c->files[i].access;
		}
	}
	return access;
}

bool policy_exec_allowed(const struct policy *p, struct policy_src *src)
{
	return policy_api_exec(p, src);
}

/* ---------------- names kept: what the next run resolves a path through */

/* The compiled rules by canonical path, sorted: which directories the program may write,
 * answered as the walk goes down (one lookup a directory). */
struct rule_ref {
	const char *path; /* the entry's own string: stable while entries are added */
	uint32_t access;
};

struct rule_index {
	struct rule_ref *v;
	size_t n;
	bool any_write;
};

static int cmp_rule_ref(const void *a, const void *b)
{
	return strcmp(((const struct rule_ref *)a)->path, ((const struct rule_ref *)b)->path);
}

static int rule_index_build(const struct compiled *c, struct rule_index *ri)
{
	ri->v = malloc((c->n_files + 1) * sizeof(*ri->v));
	ri->n = 0;
	ri->any_write = false;
	if (!ri->v)
		return -1;
	for (size_t i = 0; i < c->n_files; i++) {
		if (c->files[i].link)
			continue; /* never walked through */
		ri->v[ri->n++] = (struct rule_ref){ c->files[i].path, c->files[i].access };
		ri->any_write |= c->files[i].access & PYSB_ACC_WRITE;
	}
	qsort(ri->v, ri->n, sizeof(*ri->v), cmp_rule_ref);
	return 0;
}

static const struct rule_ref *rule_at(const struct rule_index *ri, const char *path)
{
	struct rule_ref key = { .path = path };

	return bsearch(&key, ri->v, ri->n, sizeof(*ri->v), cmp_rule_ref);
}

struct keeper {
	struct compiled *out;
	size_t *cap;
	struct file_index *ix;
	struct rule_index ri;
	const char *why_link, *why_other;
	char missing_dir[PATH_MAX]; /* walk_keep's 1: the directory the missing entry is in */
};

/* Keeps the name of `entry` (lstat `lst`), looked up in a directory the program may write;
 * `inherited`: what the rules grant it when it has no entry of its own. */
static int keep_entry(struct keeper *k, const char *entry, const struct stat *lst,
		      uint32_t inherited)
{
	struct compiled_file proto = { .implicit = true, .why = k->why_other };
	struct stat st;
	uint64_t st_dev;
	size_t *slot;

	if (S_ISLNK(lst->st_mode))
		return add_link_entry(k->out, k->cap, k->ix, entry, *lst,
				      PYSB_ACC_READ | PYSB_ACC_KEEP_NAME, k->why_link);
	if (stat_kernel(entry, &st, &st_dev) || file_index_reserve(k->out, k->ix))
		return 0;
	slot = file_slot(k->out, k->ix, st_dev, st.st_ino);
	if (*slot) { /* its own entry (any spelling): what it grants stays */
		k->out->files[*slot - 1].access |= PYSB_ACC_KEEP_NAME;
		return 0;
	}
	return add_entry_st(k->out, k->cap, k->ix, entry, &st, st_dev,
			    inherited | PYSB_ACC_KEEP_NAME, &proto);
}

#define WALK_MAX_DEPTH (PATH_MAX / 2)

/*
 * Walks absolute `path` entry by entry as the kernel resolves it: links followed (their
 * targets' entries walked in turn, at most 40 links), `..` from the directory reached.
 * Each entry looked up in a directory the program may write keeps its name: a link
 * re-pointed, a directory renamed away with another in its place, the object replaced,
 * would make the next run resolve `path` to what the program chose. Returns 0 when the
 * path resolves (or cannot be walked: too long, a loop), 1 when an entry is missing
 * (k->missing_dir: the directory it would be made in; *writable: may the program make
 * it), -1 on an error (said).
 */
static int walk_keep(struct keeper *k, const char *path, bool *writable)
{
	static size_t len[WALK_MAX_DEPTH];   /* strlen(cur) at each depth */
	static uint32_t acc[WALK_MAX_DEPTH]; /* what the rules grant cur at each depth */
	char rest[2 * PATH_MAX + 2], next[2 * PATH_MAX + 2], cur[PATH_MAX], entry[PATH_MAX];
	char target[PATH_MAX], *p = rest;
	const struct rule_ref *r;
	size_t d = 0;
	int links = 0;

	if (path[0] != '/' || snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest))
		return 0;
	cur[0] = '\0';
	len[0] = 0;
	r = rule_at(&k->ri, "/");
	acc[0] = r ? r->access : 0;
	while (*p) {
		struct stat st;
		size_t n;
		char *name;

		while (*p == '/')
			p++;
		name = p;
		p += strcspn(p, "/");
		n = (size_t)(p - name);
		if (!n || (n == 1 && name[0] == '.'))
			continue;
		if (n == 2 && name[0] == '.' && name[1] == '.') {
			d -= d > 0;
			cur[len[d]] = '\0';
			continue;
		}
		if (len[d] + 1 + n >= sizeof(entry))
			return 0;
		/* cur + "/" + name (lengths known: this runs for each entry of every rule) */
		memcpy(entry, cur, len[d]);
		entry[len[d]] = '/';
		memcpy(entry + len[d] + 1, name, n);
		entry[len[d] + 1 + n] = '\0';
		if (memo_lstat(entry, &st)) {
			snprintf(k->missing_dir, sizeof(k->missing_dir), "%s", cur[0] ? cur : "/");
			*writable = acc[d] & PYSB_ACC_WRITE;
			return errno == ENOENT ? 1 : 0;
		}
		r = rule_at(&k->ri, entry);
		if ((acc[d] & PYSB_ACC_WRITE) && keep_entry(k, entry, &st, r ? r->access : acc[d]))
			return -1;
		if (S_ISLNK(st.st_mode)) {
			ssize_t t = readlink(entry, target, sizeof(target) - 1);

			if (t <= 0 || ++links > 40)
				return 0;
			target[t] = '\0';
			if (snprintf(next, sizeof(next), "%s/%s", target, p) >= (int)sizeof(next))
				return 0;
			memcpy(rest, next, strlen(next) + 1);
			p = rest;
			if (target[0] == '/') {
				d = 0;
				cur[0] = '\0';
			}
			continue;
		}
		if (!S_ISDIR(st.st_mode) || d + 1 >= WALK_MAX_DEPTH)
			return 0; /* the object (or what execve would refuse) */
		memcpy(cur, entry, len[d] + n + 2);
		len[d + 1] = len[d] + 1 + n;
		d++;
		acc[d] = r ? r->access : acc[d - 1];
	}
	return 0;
}

#define WHY_POLICY_LINK "a link naming the policy file: it keeps its name"
#define WHY_POLICY_DIR	"on the way to the policy file: it keeps its name"
#define WHY_RULE_LINK \
	"a link a rule was named through, where the program may write: it keeps its name"
#define WHY_RULE_DIR "on the way to a rule, where the program may write: it keeps its name"
#define WHY_TOOL_FILE                                                                          \
	"run by the user's tools (git's config and hooks, a project's policy), in a tree the " \
	"program may write: read-only"
#define WHY_SOCKET                                                                               \
	"a server's socket, where the program may write: it keeps its name (no impostor in its " \
	"place)"
#define WHY_EVENTS                                                                              \
	"the --events file pysb-bpf writes, where the program may write: read-only to it, its " \
	"name kept (no forged records)"
#define WHY_EVENTS_WAY \
	"on the way to the --events file, where the program may write: it keeps its name"
#define WHY_INTERP                                                                           \
	"on the way to the service's interpreter, where it may write: it keeps its name (a " \
	"reload would grant what it names)"
#define WHY_TOOL \
	"on the way to what is kept (a .git, a policy, a server's socket): it keeps its name"

/* The absolute form of policy file `file` as it was named (relative to the cwd). */
static bool named_file(const char *file, char *named, size_t len)
{
	char cwd[PATH_MAX];

	if (file[0] == '/')
		return snprintf(named, len, "%s", file) < (int)len;
	return getcwd(cwd, sizeof(cwd)) && snprintf(named, len, "%s/%s", cwd, file) < (int)len;
}

/*
 * The names each policy file (the root file, each include) and each rule is resolved
 * through, where the program may write: every entry the next run's lookup passes (links
 * on its way and in their targets, directories, the object itself) keeps its name
 * (KEEP_NAME), with what the rules grant it. The policy files themselves get a rule
 * without WRITE (protect_policy_files). An include? whose file is missing where the
 * program could make it is refused: the next run would obey what it wrote there.
 */
static int keep_policy_names(const struct policy *p, const struct tool_files kept[2],
			     const struct compile_opts *o, struct compiled *out, size_t *cap,
			     struct file_index *ix, struct diag_list *d)
{
	struct keeper k = { .out = out, .cap = cap, .ix = ix };
	char named[PATH_MAX];
	bool writable = false;
	int ret = 0, w;

	if (rule_index_build(out, &k.ri))
		return diag_add(d, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
				"out of memory compiling the policy");
	if (!k.ri.any_write)
		goto out; /* nothing the program may write: every name stays as it is */
	k.why_link = WHY_POLICY_LINK;
	k.why_other = WHY_POLICY_DIR;
	if (p->n_files && named_file(p->files[0], named, sizeof(named)))
		ret = walk_keep(&k, named, &writable) < 0;
	for (size_t i = 0; i < p->n_includes && !ret; i++) {
		w = walk_keep(&k, p->includes[i].named, &writable);
		ret = w < 0;
		if (w != 1 || !writable || !p->includes[i].missing)
			continue;
		ret = diag_add(
			d, DIAG_ERROR, src_at(&p->includes[i].src),
			"create the file (it may be empty: it is then kept as the policy "
			"file is), or remove the line",
			"include? names %s, which does not exist, and the program may write "
			"%s: it could write its own rules there, and the next run would obey "
			"them",
			p->includes[i].named, k.missing_dir);
	}
	k.why_link = WHY_RULE_LINK;
	k.why_other = WHY_RULE_DIR;
	for (size_t i = 0; i < p->n_paths && !ret; i++)
		ret = p->paths[i].named && walk_keep(&k, p->paths[i].named, &writable) < 0;
	for (size_t i = 0; i < p->n_also_named && !ret; i++)
		ret = walk_keep(&k, p->also_named[i], &writable) < 0;
	k.why_link = k.why_other = WHY_TOOL;
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < kept[l].n && !ret; i++)
			ret = walk_keep(&k, kept[l].paths[i], &writable) < 0;
	k.why_link = k.why_other = WHY_INTERP;
	if (o->keep_interpreter && o->interpreter && !ret)
		ret = walk_keep(&k, o->interpreter, &writable) < 0;
	k.why_link = k.why_other = WHY_EVENTS_WAY;
	if (o->events_file && !ret && named_file(o->events_file, named, sizeof(named)))
		ret = walk_keep(&k, named, &writable) < 0;
out:
	free(k.ri.v);
	return ret ? -1 : 0;
}

/* Each of `files` where the program may write (a policy file, a .git: the next run, the
 * user's next `git status` would obey what it wrote) gets a rule of its own without WRITE
 * and with KEEP_NAME (no unlink, no rename away or over it). */
static int protect_files(char *const *files, size_t n, const char *why, struct compiled *out,
			 size_t *cap, struct file_index *ix)
{
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		struct compiled_file proto = { .implicit = true, .why = why };
		char real[PATH_MAX];
		struct stat st;
		uint64_t st_dev;
		uint32_t acc;

		if (!realpath(files[i], real))
			continue;
		acc = compiled_access(out, real, false);
		if (!((acc & PYSB_ACC_WRITE) || parent_writable(out, real)) ||
		    stat_kernel(real, &st, &st_dev))
			continue;
		/* its entry, wherever add_entry put it (another spelling of the inode merges
		 * into one entry): never WRITE, whatever the union said */
		ret = add_entry_st(out, cap, ix, real, &st, st_dev, 0, &proto);
		if (!ret)
			out->files[*file_slot(out, ix, st_dev, st.st_ino) - 1].access =
				(acc & ~PYSB_ACC_WRITE) | PYSB_ACC_KEEP_NAME;
	}
	return ret;
}

/* What the program must not change for the next run or the user's tools (policy files,
 * compile_protect.c's), and the names on the way to them and to every rule. */
static int protect_all(const struct policy *p, const struct compile_opts *o, struct compiled *out,
		       size_t *cap, struct file_index *ix)
{
	struct diag_list *d = o->diag;
	struct tool_files kept[2] = { 0 };
	int ret = protect_files(p->files, p->n_files,
				"the policy file: the program it confines never changes it", out,
				cap, ix);

	if (!ret && (tool_files_find(p, &kept[0]) || server_sockets_find(p, out, &kept[1])))
		ret = diag_add(d, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
			       "out of memory compiling the policy");
	if (!ret)
		ret = protect_files(kept[0].paths, kept[0].n, WHY_TOOL_FILE, out, cap, ix);
	if (!ret)
		ret = protect_files(kept[1].paths, kept[1].n, WHY_SOCKET, out, cap, ix);
	if (!ret && o->events_file)
		ret = protect_files((char *const[]){ (char *)o->events_file }, 1, WHY_EVENTS, out,
				    cap, ix);
	if (!ret)
		ret = keep_policy_names(p, kept, o, out, cap, ix, d);
	tool_files_free(&kept[0]);
	tool_files_free(&kept[1]);
	return ret ? ret : socket_rules_check(p, out, d);
}

int policy_compile(const struct policy *p, const struct compile_opts *o, struct compiled *out)
{
	struct implicit_path *imp = NULL;
	struct file_index ix = { .diag = o->diag };
	size_t n_imp = 0, cap = 0;
	struct path_rules own = { 0 };
	bool implicit;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	/* bpf.*: params.c, every key; on an error, never a partial policy */
	if (compile_params(p, o, out, &implicit)) {
		compiled_free(out);
		return -1;
	}
	memo_begin();
	for (size_t i = 0; i < p->n_paths && !ret; i++) {
		struct compiled_file proto = { .src = p->paths[i].src };
		uint32_t acc = p->paths[i].access == POLICY_RW ? PYSB_ACC_RW : PYSB_ACC_RO;

		ret = add_entry(out, &cap, &ix, p->paths[i].path, acc, &proto);
	}
	stopwatch("compile: the policy's paths");
	if (!ret && implicit) {
		const char *script = o->script;

		if (script && !script_grantable(out, o->script_named ?: script, script, o->diag))
			script = NULL;
		ret = implicit_paths(o->interpreter, script, o->script ? NULL : o->path0_cwd, &imp,
				     &n_imp);
		if (ret)
			diag_add(o->diag, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
				 "out of memory listing the implicit paths");
		stopwatch("compile: implicit paths listed");
	}
	if (n_imp && !ret && path_rules_build(&own, out, true))
		ret = diag_add(o->diag, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
			       "out of memory compiling the policy");
	for (size_t i = 0; i < n_imp && !ret; i++) {
		struct compiled_file proto = { .implicit = true, .why = imp[i].why };
		/* An implicit path inside an explicit tree keeps what that tree grants. */
		uint32_t acc = imp[i].access | path_rules_access(&own, imp[i].path);

		ret = add_entry(out, &cap, &ix, imp[i].path, acc, &proto);
		if (!ret)
			ret = add_links_along(out, &cap, &ix, imp[i].path);
	}
	if (!ret && implicit && o->interpreter)
		ret = add_interpreter_links(out, &cap, &ix, o->interpreter);
	if (!ret && implicit && o->interpreter) {
		char cand[3][PATH_MAX]; /* a --copies venv's pythons, as links (implicit.c) */
		size_t nc = venv_home_pythons(o->interpreter, cand, 3);

		for (size_t i = 0; i < nc && !ret; i++)
			ret = add_interpreter_links(out, &cap, &ix, cand[i]);
	}
	for (size_t i = 0; i < sizeof(ROOT_LINKS) / sizeof(ROOT_LINKS[0]) && !ret && implicit; i++)
		ret = add_links_along(out, &cap, &ix, ROOT_LINKS[i]);
	path_rules_free(&own);
	implicit_paths_free(imp, n_imp);
	stopwatch("compile: implicit paths added");
	if (!ret)
		ret = protect_all(p, o, out, &cap, &ix);
	free(ix.slots);
	if (!ret)
		ret = compile_mounts(out, o->diag);
	stopwatch("compile: policy files, mounts");
	if (!ret)
		ret = net_compile(p, o, out); /* network: user/compile/compile_net.c */
	out->exec_allowed = policy_exec_allowed(p, &out->exec_src);
	if (!ret)
		ret = compile_ignores(p, out, o->diag);
	memo_end();
	if (ret)
		compiled_free(out);
	return ret;
}

void compiled_free(struct compiled *c)
{
	for (size_t i = 0; i < c->n_files; i++)
		free(c->files[i].path);
	free(c->files);
	net_compiled_free(c);
	free(c->mounts);
	compiled_hidden_free(c);
	memset(c, 0, sizeof(*c));
}
