/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reads that open nothing: they must be judged like a read of the file or directory,
 * with the same walk by inode ancestry as bpf/file.bpf.c (bpf/path.bpf.h).
 *
 * Hooks (global `lsm/` programs acting only on sandboxed tasks):
 *   lsm/inode_getxattr   getxattr(2) family: READ on the file (dentry-only walk)
 *   lsm/inode_listxattr  listxattr(2) family: READ on the file (dentry-only walk)
 *   lsm/inode_readlink   readlink(2): READ on the symlink (dentry-only walk)
 *   lsm/path_notify      inotify_add_watch, fanotify_mark, dnotify: READ on the watched
 *                        file or directory (a directory watch reports the names in it);
 *                        a mark on a whole mount or file system, or on a device node:
 *                        always denied
 * Default: deny with -EACCES and an event. What overlayfs does with its creator's
 * credentials on a sandboxed task's behalf (reading its layers' xattrs) is not judged: the
 * overlay file itself was. Only those credentials (overlay_internal): any other override
 * of the task's cred is the task's own doing (an io_uring personality registered after a
 * no-op capset gives IORING_OP_GETXATTR a cred that is not real_cred) and is judged.
 */
#include "path.bpf.h"

#define PROC_SUPER_MAGIC	0x9fa0
#define FSNOTIFY_OBJ_TYPE_INODE 0

/*
 * /proc/<own pid or tid>/... and the symlinks of /proc itself (self, thread-self, mounts,
 * net), which only ever name the reader's own entries: as /proc/self for file_open.
 */
static __always_inline bool own_proc_link(struct dentry *d)
{
	struct inode *inode = BPF_CORE_READ(d, d_inode);
	struct dentry *parent = BPF_CORE_READ(d, d_parent);
	struct proc_inode *pi;
	struct pid *pid;
	__u64 pid_tgid;
	__u32 nr;

	if (!inode || BPF_CORE_READ(inode, i_sb, s_magic) != PROC_SUPER_MAGIC)
		return false;
	if (BPF_CORE_READ(parent, d_parent) == parent)
		return true; /* directly in /proc */
	pi = (struct proc_inode *)((void *)inode -
				   bpf_core_field_offset(struct proc_inode, vfs_inode));
	pid = BPF_CORE_READ(pi, pid);
	if (!pid)
		return false;
	nr = BPF_CORE_READ(pid, numbers[0].nr);
	pid_tgid = bpf_get_current_pid_tgid();
	return nr == (pid_tgid >> 32) || nr == (__u32)pid_tgid;
}

/* READ on (d, mnt); mnt NULL: a dentry-only walk. */
static __always_inline int check_read(__u16 op, struct dentry *d, struct vfsmount *mnt)
{
	struct pysb_sandbox_cfg *cfg;
	struct walk_ctx c;
	struct pysb_event *e;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg || overlay_internal())
		return 0;
	if (walk_from(&c, d, mnt, cfg) & PYSB_ACC_READ)
		return 0;
	if (op == PYSB_OP_READLINK && own_proc_link(d))
		return 0;
	e = event_start(cfg, cgid, PYSB_KIND_FILE, op, PYSB_ACC_READ, decision_of(cfg));
	if (e) {
		e->rule = c.found ? c.rule : 0;
		event_set_dentry_path(e, d, mnt);
		event_send(e);
	}
	return deny_ret(cfg, EACCES);
}

SEC("lsm/inode_getxattr")
int BPF_PROG(pysb_inode_getxattr, struct dentry *dentry, const char *name)
{
	return check_read(PYSB_OP_GETXATTR, dentry, NULL);
}

SEC("lsm/inode_listxattr")
int BPF_PROG(pysb_inode_listxattr, struct dentry *dentry)
{
	return check_read(PYSB_OP_GETXATTR, dentry, NULL);
}

SEC("lsm/inode_readlink")
int BPF_PROG(pysb_inode_readlink, struct dentry *dentry)
{
	return check_read(PYSB_OP_READLINK, dentry, NULL);
}

/*
 * A device node is one inode for every process of the machine: a watch on /dev/null,
 * /dev/urandom or /dev/tty (readable by the rules, or implicit) reports when anyone reads
 * or writes it, the timing of other users' keystrokes on /dev/tty above all (found by a
 * review). Never watched from a sandbox.
 */
#define S_IFMT	00170000
#define S_IFCHR 0020000
#define S_IFBLK 0060000

static __always_inline bool device_node(struct dentry *d)
{
	umode_t fmt = BPF_CORE_READ(d, d_inode, i_mode) & S_IFMT;

	return fmt == S_IFCHR || fmt == S_IFBLK;
}

SEC("lsm/path_notify")
int BPF_PROG(pysb_path_notify, const struct path *path, __u64 mask, unsigned int obj_type)
{
	struct pysb_sandbox_cfg *cfg;
	struct pysb_event *e;
	__u64 cgid;

	if (obj_type == FSNOTIFY_OBJ_TYPE_INODE && !device_node(BPF_CORE_READ(path, dentry)))
		return check_read(PYSB_OP_NOTIFY, BPF_CORE_READ(path, dentry),
				  BPF_CORE_READ(path, mnt));
	/* A mount or file-system mark sees every file below, exposed or not; a device
	 * node's every reader and writer on the machine. */
	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	e = event_start(cfg, cgid, PYSB_KIND_FILE, PYSB_OP_NOTIFY, PYSB_ACC_READ, decision_of(cfg));
	if (e) {
		event_set_dentry_path(e, BPF_CORE_READ(path, dentry), BPF_CORE_READ(path, mnt));
		event_send(e);
	}
	return deny_ret(cfg, EACCES);
}
