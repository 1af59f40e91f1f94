/* SPDX-License-Identifier: GPL-2.0 */
/*
 * File rules.
 *
 * Hooks (global `lsm/` programs; they act only on tasks of a sandboxed cgroup, see
 * current_sandbox(), so they use none of the kernel's 10 `lsm_cgroup` slots):
 *   lsm/file_open  every open, including the kernel's own opens for execve and the ELF
 *                  interpreter. Read needs PYSB_ACC_READ, write or O_TRUNC needs
 *                  PYSB_ACC_WRITE, an exec open needs PYSB_ACC_EXEC.
 *
 * Default: deny (-EACCES). A file is allowed when the nearest ancestor carrying a rule of
 * the sandbox grants the requested access. Ancestry is the path the kernel resolved (the
 * dentry chain, crossing mount points like d_path), so `..`, symlinks and /proc/self/root
 * spellings are judged by where they land, and a rule names an inode, not a string.
 */
#include "common.bpf.h"

struct walk_ctx {
	struct dentry *dentry;
	struct vfsmount *vfsmnt;
	__u32 sandbox;
	__u32 granted; /* access of the nearest rule */
	bool found;
};

static struct mount *real_mount(struct vfsmount *vfsmnt)
{
	return (struct mount *)((void *)vfsmnt - bpf_core_field_offset(struct mount, mnt));
}

static long walk_step(__u32 index, void *data)
{
	struct walk_ctx *c = data;
	struct dentry *d = c->dentry;
	struct vfsmount *vfsmnt = c->vfsmnt;
	struct inode *inode = BPF_CORE_READ(d, d_inode);
	struct pysb_file_rule *rule;
	struct dentry *parent;

	if (inode) {
		struct pysb_file_key key = {
			.ino = BPF_CORE_READ(inode, i_ino),
			.dev = BPF_CORE_READ(inode, i_sb, s_dev),
			.sandbox = c->sandbox,
		};

		rule = bpf_map_lookup_elem(&file_rules, &key);
		if (rule) {
			c->granted = rule->access;
			c->found = true;
			return 1;
		}
	}

	if (d == BPF_CORE_READ(vfsmnt, mnt_root)) {
		struct mount *m = real_mount(vfsmnt);
		struct mount *up = BPF_CORE_READ(m, mnt_parent);

		if (up == m)
			return 1; /* root of the mount tree: no rule on the way */
		c->dentry = BPF_CORE_READ(m, mnt_mountpoint);
		c->vfsmnt = (struct vfsmount *)((void *)up +
						bpf_core_field_offset(struct mount, mnt));
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (parent == d)
		return 1; /* top of a file system that is not mounted here */
	c->dentry = parent;
	return 0;
}

/*
 * Opens the kernel makes on a sandboxed task's behalf below a file the task already
 * opened: overlayfs opens a directory's (or copies up a file's) real layer through a
 * private mount (mnt_ns == MNT_NS_INTERNAL) with the mounter's credentials. The overlay
 * file itself was checked; judging the layer's own path would deny every overlay
 * directory. Only that shape is exempt: an internal mount AND overridden credentials.
 */
#define MNT_NS_INTERNAL ((void *)-22L)

static __always_inline bool kernel_internal_open(const struct path *path)
{
	struct mount *m = real_mount(BPF_CORE_READ(path, mnt));
	void *ns = BPF_CORE_READ(m, mnt_ns);
	struct task_struct *task;

	if (ns != MNT_NS_INTERNAL)
		return false;
	task = bpf_get_current_task_btf();
	return BPF_CORE_READ(task, cred) != BPF_CORE_READ(task, real_cred);
}

/* Access granted by the nearest rule above `path`; 0 when none (or the walk ran out). */
static __always_inline __u32 path_access(const struct path *path, __u32 sandbox)
{
	struct walk_ctx c = {
		.dentry = BPF_CORE_READ(path, dentry),
		.vfsmnt = BPF_CORE_READ(path, mnt),
		.sandbox = sandbox,
	};

	bpf_loop(PYSB_MAX_DEPTH, walk_step, &c, 0);
	return c.found ? c.granted : 0;
}

SEC("lsm/file_open")
int BPF_PROG(pysb_file_open, struct file *file)
{
	struct pysb_sandbox_cfg *cfg;
	struct pysb_event *e;
	__u32 want = 0, mode, flags;
	__u64 cgid;
	long n;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;

	mode = BPF_CORE_READ(file, f_mode);
	flags = BPF_CORE_READ(file, f_flags);
	if (mode & FMODE_READ)
		want |= PYSB_ACC_READ;
	if ((mode & FMODE_WRITE) || (flags & O_TRUNC))
		want |= PYSB_ACC_WRITE;
	if (mode & FMODE_EXEC)
		want |= PYSB_ACC_EXEC;

	if ((path_access(&file->f_path, cfg->id) & want) == want)
		return 0;
	if (kernel_internal_open(&file->f_path))
		return 0;

	e = event_start(cfg, cgid, PYSB_KIND_FILE, PYSB_OP_OPEN, want, decision_of(cfg));
	if (e) {
		n = bpf_d_path((struct path *)&file->f_path, e->path, sizeof(e->path));
		e->path_len = n;
		bpf_ringbuf_submit(e, 0);
	}
	return deny_ret(cfg, EACCES);
}
