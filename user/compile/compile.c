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

/* Is `path` equal to or below directory `dir` (both canonical)? */
static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
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
	long f_type;

	if (memo_stat(path, st))
		return -1;
	if (raw_dev)
		*raw_dev = st->st_dev;
	if (S_ISDIR(st->st_mode) || memo_statfs_type(path, &f_type) ||
	    f_type != OVERLAYFS_SUPER_MAGIC)
		return 0;
	snprintf(parent, sizeof(parent), "%s", path);
	if (memo_stat(dirname(parent), &dir))
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

static int add_links(struct compiled *c, size_t *cap, struct file_index *ix, const char *path,
		     uint32_t access, const char *why)
{
	struct compiled_file proto = { .implicit = true, .link = true, .why = why };
	char prefix[PATH_MAX];
	struct stat st, dir;
	size_t len = strlen(path);
	uint64_t st_dev;

	if (len >= sizeof(prefix) || path[0] != '/')
		return 0;
	for (size_t i = 1; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		if (memo_lstat(prefix, &st) || !S_ISLNK(st.st_mode))
			continue;
		st_dev = st.st_dev;
		/* as stat_kernel: on overlayfs a non-directory reports a per-layer device */
		if (!strrchr(prefix, '/') || strrchr(prefix, '/') == prefix) {
			if (!memo_stat("/", &dir))
				st.st_dev = dir.st_dev;
		} else {
			char parent[PATH_MAX];

			snprintf(parent, sizeof(parent), "%s", prefix);
			if (!memo_stat(dirname(parent), &dir))
				st.st_dev = dir.st_dev;
		}
		if (add_entry_st(c, cap, ix, prefix, &st, st_dev, access, &proto))
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

	if (file_index_reserve(c, ix))
		goto nomem;
	slot = file_slot(c, ix, st_dev, st.st_ino);
	if (*slot) {
		/* Two spellings of one inode: the union, so an implicit grant never narrows an
		 * explicit one. */
		c->files[*slot - 1].access |= access;
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
static uint32_t compiled_access(const struct compiled *c, const char *path, bool explicit_only)
{
	size_t best = 0;
	uint32_t access = 0;

	for (size_t i = 0; i < c->n_files; i++) {
		size_t len = strlen(c->files[i].path);

		if (explicit_only && c->files[i].implicit)
			continue;
		if (len >= best && path_under(path, c->files[i].path)) {
			best = len;
			access = c->files[i].access;
		}
	}
	return access;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++, w++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w = *r;
		}
	}
	*w = '\0';
}

static int compile_mounts(struct compiled *c, struct diag_list *d)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0, mcap = 0;
	int ret = 0;

	if (!f) {
		return diag_add(d, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
				"cannot read /proc/self/mountinfo: %s", strerror(errno));
	}
	while (getline(&line, &cap, f) > 0 && !ret) {
		char mnt[PATH_MAX];
		unsigned maj, min;
		uint32_t dev, acc;
		size_t i;

		if (sscanf(line, "%*s %*s %u:%u %*s %4095s", &maj, &min, mnt) != 3)
			continue;
		unescape_octal(mnt);
		dev = (maj << 20) | min;
		acc = compiled_access(c, mnt, false);
		for (i = 0; i < c->n_mounts && c->mounts[i].dev != dev; i++)
			;
		if (i < c->n_mounts) {
			c->mounts[i].access &= acc; /* a file system mounted twice: the least */
			continue;
		}
		if (c->n_mounts == mcap) {
			size_t ncap = mcap ? mcap * 2 : 64;
			struct compiled_mount *v = realloc(c->mounts, ncap * sizeof(*v));

			if (!v) {
				ret = -1;
				break;
			}
			c->mounts = v;
			mcap = ncap;
		}
		c->mounts[c->n_mounts++] = (struct compiled_mount){ .dev = dev, .access = acc };
	}
	free(line);
	fclose(f);
	if (!ret && c->n_mounts > PYSB_MAX_MOUNTS) {
		ret = diag_add(d, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
			       "%zu file systems mounted, more than pysb-bpf's %d", c->n_mounts,
			       PYSB_MAX_MOUNTS);
	}
	return ret;
}

bool policy_exec_allowed(const struct policy *p, struct policy_src *src)
{
	return policy_api_exec(p, src);
}

/* May the program write the directory `path` lies in (rename or replace its entry)? */
static bool parent_writable(const struct compiled *out, const char *path)
{
	char parent[PATH_MAX], real[PATH_MAX];

	snprintf(parent, sizeof(parent), "%s", path);
	dirname(parent);
	return realpath(parent, real) && (compiled_access(out, real, false) & PYSB_ACC_WRITE);
}

/*
 * May the program's script be granted READ as implicit? Only a regular file, and only
 * when no link on the way to it, as it was named, lies in a directory the program may
 * write: a run could have made app.py a link to /etc/shadow, or to /, and the next run
 * would grant what the link names. (In an rw tree the script is readable anyway.)
 */
static bool script_grantable(const struct compiled *out, const char *named, const char *script,
			     struct diag_list *d)
{
	char prefix[PATH_MAX];
	size_t len = strlen(named);
	struct stat st;

	if (stat(script, &st) || !S_ISREG(st.st_mode))
		return false;
	if (named[0] != '/' || len >= sizeof(prefix))
		return true;
	for (size_t i = 1; i <= len; i++) {
		if (i < len && named[i] != '/')
			continue;
		memcpy(prefix, named, i);
		prefix[i] = '\0';
		if (lstat(prefix, &st) || !S_ISLNK(st.st_mode))
			continue;
		if (parent_writable(out, prefix)) {
			diag_add(
				d, DIAG_WARNING, (struct diag_at){ 0 }, NULL,
				"%s is reached through the link %s, in a directory the program may "
				"write: its target (%s) is not granted as the program's script. Name "
				"the file itself, or expose it",
				named, prefix, script);
			return false;
		}
	}
	return true;
}

#define WHY_POLICY_LINK "a link naming the policy file: it keeps its name"
#define WHY_POLICY_DIR	"a directory above the policy file: it keeps its name"
#define WHY_RULE_LINK \
	"a link a rule was named through, where the program may write: it keeps its name"
#define WHY_RULE_DIR "a directory above a rule, where the program may write: it keeps its name"

/*
 * Keeps the name of each directory and link on `path` (absolute: as the policy file or
 * a rule was named, or canonical) whose parent the program may write: renamed away, with
 * a new one put in its place, the next run would read another policy, or resolve the
 * rule to another place.
 */
static int keep_names_along(struct compiled *out, size_t *cap, struct file_index *ix,
			    const char *path, const char *why_dir, const char *why_link)
{
	struct compiled_file proto = { .implicit = true, .why = why_dir };
	char prefix[PATH_MAX], real[PATH_MAX];
	size_t len = strlen(path);
	struct stat st;
	int ret = 0;

	if (len >= sizeof(prefix) || path[0] != '/')
		return 0;
	for (size_t i = 1; i < len && !ret; i++) {
		if (path[i] != '/')
			continue;
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		/* "dir/." and "dir/.." name no entry of their own ("./.py-sandboxes") */
		if (!strcmp(strrchr(prefix, '/'), "/.") || !strcmp(strrchr(prefix, '/'), "/..") ||
		    !parent_writable(out, prefix) || lstat(prefix, &st))
			continue;
		if (S_ISLNK(st.st_mode))
			ret = add_links(out, cap, ix, prefix, PYSB_ACC_READ | PYSB_ACC_KEEP_NAME,
					why_link);
		else if (S_ISDIR(st.st_mode) && realpath(prefix, real))
			ret = add_entry(out, cap, ix, real,
					compiled_access(out, real, false) | PYSB_ACC_KEEP_NAME,
					&proto);
	}
	return ret;
}

/*
 * The policy files themselves (the root file and its includes), when the policy lets the
 * program write where they lie: the next run, or the daemon's next reload, would obey
 * what the program wrote. Each such file gets a rule of its own without WRITE and with
 * KEEP_NAME (no unlink, no rename away or over it); so do the links it was named through
 * (re-pointed, they would name another file) and the directories on both ways to it
 * whose parent the program may write (sub/ renamed away, a new sub/.py-sandboxes).
 */
static int protect_policy_files(const struct policy *p, struct compiled *out, size_t *cap,
				struct file_index *ix)
{
	int ret = 0;

	for (size_t i = 0; i < p->n_files && !ret; i++) {
		char real[PATH_MAX], named[PATH_MAX], cwd[PATH_MAX];
		struct compiled_file proto = {
			.implicit = true,
			.why = "the policy file: the program it confines never changes it",
		};
		struct stat st;
		uint64_t st_dev;
		uint32_t acc;

		if (!realpath(p->files[i], real))
			continue;
		if (p->files[i][0] == '/')
			snprintf(named, sizeof(named), "%s", p->files[i]);
		else if (!getcwd(cwd, sizeof(cwd)) || snprintf(named, sizeof(named), "%s/%s", cwd,
							       p->files[i]) >= (int)sizeof(named))
			named[0] = '\0';
		if (named[0]) {
			ret = add_links(out, cap, ix, named, PYSB_ACC_READ | PYSB_ACC_KEEP_NAME,
					WHY_POLICY_LINK);
			ret = ret
				      ?: keep_names_along(out, cap, ix, named, WHY_POLICY_DIR,
							  WHY_POLICY_LINK);
		}
		ret = ret ?: keep_names_along(out, cap, ix, real, WHY_POLICY_DIR, WHY_POLICY_LINK);
		if (ret)
			break;
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

/*
 * The names each explicit rule was resolved through, where the program may write: the
 * links on its way (re-pointed, the next run's rule would name their new target), the
 * directories above it (renamed away, with another put in their place) and the rule's own
 * object (unlinked and made anew, a file under a deeper expose-ro= would be the program's
 * own; replaced by a link, the next run would grant what the link names). Each keeps its
 * name (KEEP_NAME), as the policy files do; what each grants stays what the rules say.
 */
static int keep_rule_names(const struct policy *p, struct compiled *out, size_t *cap,
			   struct file_index *ix)
{
	struct compiled_file proto = {
		.implicit = true,
		.why = "a rule's own object, where the program may write: it keeps its name",
	};
	int ret = 0;

	for (size_t i = 0; i < p->n_paths && !ret; i++) {
		const char *named = p->paths[i].named, *canon = p->paths[i].path;
		struct stat st;

		if (named) {
			ret = keep_names_along(out, cap, ix, named, WHY_RULE_DIR, WHY_RULE_LINK);
			if (!ret && parent_writable(out, named) && !lstat(named, &st) &&
			    S_ISLNK(st.st_mode))
				ret = add_links(out, cap, ix, named,
						PYSB_ACC_READ | PYSB_ACC_KEEP_NAME, WHY_RULE_LINK);
		}
		ret = ret ?: keep_names_along(out, cap, ix, canon, WHY_RULE_DIR, WHY_RULE_LINK);
		if (!ret && strcmp(canon, "/") && parent_writable(out, canon))
			ret = add_entry(out, cap, ix, canon, PYSB_ACC_KEEP_NAME, &proto);
	}
	return ret;
}

/*
 * An include? whose file is missing, where the program could make it: in a directory it
 * may write, or below a name on the way it may rename or re-point. The next run would
 * obey the rules it wrote there, so the policy is refused until the file exists (then it
 * is kept as every policy file is) or the line goes.
 */
static int refuse_writable_absent(const struct policy *p, const struct compiled *out,
				  struct diag_list *d)
{
	int ret = 0;

	for (size_t i = 0; i < p->n_absent; i++) {
		const char *path = p->absent[i].path;
		char prefix[PATH_MAX], real[PATH_MAX];
		size_t len = strlen(path);

		for (size_t j = 1; j <= len && len < sizeof(prefix) && path[0] == '/'; j++) {
			if (j < len && path[j] != '/')
				continue;
			memcpy(prefix, path, j);
			prefix[j] = '\0';
			if (!parent_writable(out, prefix) || !realpath(dirname(prefix), real))
				continue;
			ret = diag_add(
				d, DIAG_ERROR, src_at(&p->absent[i].src),
				"create the file (it may be empty: it is then kept as the "
				"policy file is), or remove the line",
				"include? names %s, which does not exist, and the program may "
				"write %s: it could write its own rules there, and the next run "
				"would obey them",
				path, real);
			break;
		}
	}
	return ret;
}

int policy_compile(const struct policy *p, const struct compile_opts *o, struct compiled *out)
{
	struct implicit_path *imp = NULL;
	struct file_index ix = { .diag = o->diag };
	size_t n_imp = 0, cap = 0;
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
		ret = implicit_paths(o->interpreter, script, &imp, &n_imp);
		if (ret)
			diag_add(o->diag, DIAG_ERROR, (struct diag_at){ 0 }, NULL,
				 "out of memory listing the implicit paths");
		stopwatch("compile: implicit paths listed");
	}
	for (size_t i = 0; i < n_imp && !ret; i++) {
		struct compiled_file proto = { .implicit = true, .why = imp[i].why };
		/* An implicit path inside an explicit tree keeps what that tree grants. */
		uint32_t acc = imp[i].access | compiled_access(out, imp[i].path, true);

		ret = add_entry(out, &cap, &ix, imp[i].path, acc, &proto);
		if (!ret)
			ret = add_links_along(out, &cap, &ix, imp[i].path);
	}
	if (!ret && implicit && o->interpreter)
		ret = add_interpreter_links(out, &cap, &ix, o->interpreter);
	for (size_t i = 0; i < sizeof(ROOT_LINKS) / sizeof(ROOT_LINKS[0]) && !ret && implicit; i++)
		ret = add_links_along(out, &cap, &ix, ROOT_LINKS[i]);
	implicit_paths_free(imp, n_imp);
	stopwatch("compile: implicit paths added");
	if (!ret)
		ret = protect_policy_files(p, out, &cap, &ix);
	if (!ret)
		ret = keep_rule_names(p, out, &cap, &ix);
	if (!ret)
		ret = refuse_writable_absent(p, out, o->diag);
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
