/* SPDX-License-Identifier: GPL-2.0 */
/*
 * File rules: every way a sandboxed task can read, change or map a file.
 *
 * Hooks (global `lsm/` programs acting only on sandboxed tasks, see current_sandbox();
 * none uses one of the kernel's 10 `lsm_cgroup` slots):
 *   lsm/file_open          open: read needs READ; write, append or O_TRUNC needs WRITE;
 *                          the kernel's exec opens (execve, ELF interpreter) need EXEC; a
 *                          watchdog's open in any mode needs WRITE (it starts the watchdog),
 *                          and so do /dev/snapshot's (it takes the machine's hibernation)
 *                          and /dev/vhci's (it adds a Bluetooth controller)
 *   lsm/path_mknod         creating a file, fifo, socket or device node: WRITE on the dir;
 *                          never a set-user-ID file or set-group-ID executable (below)
 *   lsm/path_mkdir         WRITE on the parent directory
 *   lsm/path_rmdir         WRITE on the parent directory
 *   lsm/path_unlink        WRITE on the parent directory, and never a name the policy
 *                          keeps (KEEP_NAME: the policy file in an rw tree, its
 *                          directories; rename and rmdir alike)
 *   lsm/path_symlink       WRITE on the parent directory
 *   lsm/inode_create, lsm/inode_unlink
 *                          mqueue only (mq_open(O_CREAT), mq_unlink(): no path hook):
 *                          WRITE on the directory of the queues (check_mqueue)
 *   lsm/path_link          WRITE on the new parent, and the file may not gain access
 *                          through its new name (an outside file linked into an rw tree)
 *   lsm/path_rename        WRITE on both parents, same no-gain rule for what moves
 *   lsm/path_chmod         WRITE on the file (and on the directory above, for the object of a
 *                          rule itself: check_meta); never a set-user-ID file or a set-group-ID
 *                          executable, even in an rw tree: the owner needs no capability
 *                          to set the bit, and an outside user running the file would run
 *                          as the sandbox's user, unconfined (as root, when it is root)
 *   lsm/file_lock          an exclusive lock (flock LOCK_EX, fcntl F_WRLCK): WRITE on the
 *                          file. A read-only descriptor can take LOCK_EX: without this, a
 *                          program that may only read /etc/passwd could lock out every
 *                          outside program that locks it. Shared locks stay allowed (readers
 *                          of a SQLite database take them)
 *   lsm/file_ioctl, lsm/file_ioctl_compat (32-bit tasks, 6.8+ and Debian's 6.1)
 *                          the inode flags and extended attributes of ext4, xfs, btrfs,
 *                          tmpfs (FS_IOC_SETFLAGS: append-only, no-atime, no-dump...;
 *                          FS_IOC_FSSETXATTR; FS_IOC_SETVERSION), ext4's generation and
 *                          migration, fs-verity, fscrypt policies, FAT attributes: WRITE on
 *                          the file (and above a rule's object, as chmod); btrfs
 *                          subvolumes and snapshots made or destroyed in a directory: WRITE
 *                          on it. The owner may do all this through a read-only descriptor. Never from a sandbox: giving up a claim to a
 *                          file system's encryption key (FS_IOC_REMOVE_ENCRYPTION_KEY*: the
 *                          directories it unlocks lock for everyone). A device's state changed
 *                          through a descriptor of any mode (an I2C bus's transfers, a HID
 *                          device's reports, an input device's grab, key map and settings,
 *                          an RTC's alarm, a sound card's mixer and playback, a tun
 *                          interface's settings, a watchdog's settings, a vhost device's
 *                          set-up, a uinput device made, rfkill's key handler turned
 *                          off, a serial line's modem lines, breaks and settings through
 *                          a terminal descriptor open for reading): as an open for
 *                          writing
 *                          (check_device_ioctl).
 *                          The same programs check bpf/tty.bpf.h's terminal ioctls
 *   lsm/inode_file_setattr file_setattr(2) (6.17+, optional): the same flags by path, no
 *                          open: as the ioctls (dentry-only walk)
 *   lsm/file_fcntl         F_SETLEASE (read or write lease), F_SETDELEG (6.19+, files and
 *                          directories): WRITE on the file. A lease makes every outside open
 *                          for writing wait for its holder (up to
 *                          /proc/sys/fs/lease-break-time). (And F_SETOWN: bpf/signal.bpf.c)
 *   lsm/path_chown         WRITE on the file (and on the directory above, for a rule's object)
 *   lsm/path_truncate      truncate(2) (and ftruncate(2) before 6.2): WRITE
 *   lsm/file_truncate      ftruncate(2) from 6.2 on (optional hook): WRITE
 *   lsm/file_permission    through any descriptor (one opened before the sandbox, kept in
 *                          an io_uring fixed-file table): a write to a cgroup file never; a
 *                          read or write of the memory file of a task outside the sandbox
 *                          never; a write to a sysctl (/proc/sys), any procfs file, a
 *                          kernel control file or device (kernel_knob) as an open for
 *                          writing; a write to a pty master typing into a session led
 *                          outside never (held_master_write) (judged for sandboxes
 *                          confined in place only)
 *   lsm/uring_cmd          a command io_uring passes to the driver of a kernel_knob() file
 *                          (a block device's BLOCK_URING_CMD_DISCARD, 6.12+): as its writes,
 *                          an open for writing (sandboxes confined in place only)
 *   lsm/inode_setattr      utimes and friends (dentry-only walk): WRITE
 *   lsm/inode_setxattr     WRITE (dentry-only walk; and above a rule's object, as chmod)
 *   lsm/inode_removexattr  WRITE (dentry-only walk; and above a rule's object)
 *   lsm/inode_set_acl, lsm/inode_remove_acl (6.2+, optional)
 *                          POSIX ACLs, which skip the two above from 6.2 on: as those two
 *   lsm/mmap_file          PROT_EXEC mapping of a file: EXEC; confined in place, a shared
 *                          writable mapping of a kernel_knob() file: WRITE
 *   lsm/file_mprotect      making a file mapping executable: EXEC (writable: as mmap_file)
 *   lsm/file_receive       a descriptor received over a unix socket: judged as if opened
 *                          here with its mode (reads need READ, writes WRITE)
 *   (file_open, file_receive) another session's terminal (a pty of a session led outside:
 *                          bpf/tty.bpf.h foreign_terminal) never, whatever the rules
 *   lsm/sb_kern_mount, lsm/sb_statfs
 *                          (deny nothing: note an overlay's creator cred, at its mount, or
 *                          at the loader's statfs of the overlays mounted before it, with
 *                          those of the overlays among its layers: bpf/overlay.bpf.c)
 *   lsm/cred_prepare, lsm/cred_free
 *                          (deny nothing: a cred overlayfs derives from its creator cred is
 *                          the overlay's too; forgotten when freed)
 *   lsm/sb_free_security   (denies nothing: forgets a freed overlay's creator cred)
 *   lsm/sb_statfs          (also: labels the inode of a rule path, at the loader's request)
 *   lsm/inode_free_security
 *                          (denies nothing: a freed inode's label goes with it; a freed
 *                          directory inode of a cacheable file system (path.bpf.h)
 *                          makes every cached directory verdict stale)
 *   fentry/vfs_rename, fexit/vfs_rename
 *                          (deny nothing: a directory renamed makes every cached
 *                          directory verdict stale, and none is kept while it moves)
 * Not judged, because the task already holds the access: overlayfs' own work on its
 * layers under the mounter's creator cred (copy-up, the upper file of a utimes or
 * setxattr; path.bpf.h, overlay_internal), /proc/<pid> of tasks of the same sandbox
 * (read), a pipe reopened through /proc/self/fd in a mode the task holds on it.
 * Default: deny with -EACCES and an event. Writes to cgroup file systems are denied
 * whatever the rules (moving tasks out of the sandbox), as self-protection.
 */
#include "path.bpf.h"
#include "task.bpf.h"
#include "tty.bpf.h"

#define PROT_EXEC   0x4
#define PROT_WRITE  0x2
#define MAP_TYPE    0x0f
#define MAP_PRIVATE 0x02
#define VM_SHARED   0x08
#define S_IFCHR	    0020000
#define S_IFBLK	    0060000

#define CGROUP_SUPER_MAGIC  0x27e0eb
#define CGROUP2_SUPER_MAGIC 0x63677270
#define PROC_SUPER_MAGIC    0x9fa0

/* Reports a denial of `want` on (d, mnt) found by walk `c`, with event flags `flags`;
 * returns the verdict. */
static __always_inline int file_denied_as(struct pysb_sandbox_cfg *cfg, __u64 cgid, __u16 kind,
					  __u16 op, __u32 want, struct walk_ctx *c,
					  struct dentry *d, struct vfsmount *mnt, __u32 flags)
{
	struct pysb_event *e = event_start(cfg, cgid, kind, op, want, decision_of(cfg));

	if (e) {
		e->rule = c->found ? c->rule : 0;
		e->flags |= flags;
		event_set_dentry_path(e, d, mnt);
		event_send(e);
	}
	return deny_ret(cfg, EACCES);
}

static __always_inline int file_denied(struct pysb_sandbox_cfg *cfg, __u64 cgid, __u16 kind,
				       __u16 op, __u32 want, struct walk_ctx *c, struct dentry *d,
				       struct vfsmount *mnt)
{
	return file_denied_as(cfg, cgid, kind, op, want, c, d, mnt, 0);
}

/* The common shape: `want` on (d, mnt), or deny. mnt NULL: a dentry-only walk. */
static __always_inline int check(struct pysb_sandbox_cfg *cfg, __u64 cgid, __u16 op, __u32 want,
				 struct dentry *d, struct vfsmount *mnt)
{
	struct walk_ctx c;

	if ((walk_from(&c, d, mnt, cfg) & want) == want)
		return 0;
	return file_denied(cfg, cgid, PYSB_KIND_FILE, op, want, &c, d, mnt);
}

static __always_inline int check_path(__u16 op, __u32 want, const struct path *path)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	return check(cfg, cgid, op, want, path->dentry, path->mnt);
}

static __always_inline struct pysb_file_rule *own_rule(struct dentry *d, __u32 sandbox)
{
	__u64 inode = (__u64)BPF_CORE_READ(d, d_inode);

	return own_rule_of(inode, (__u32)inode, sandbox);
}

/* Does sandbox `sandbox` keep the name of `d` (KEEP_NAME: the policy file it obeys, a
 * directory above it)? The cost of every unlink and rename: `d` is the hook's own
 * argument (a BTF pointer), its inode taken by a plain load, not a probe read's helper
 * call; the pointer itself is inode_labels' key (a loader with CAP_PERFMON may pass a
 * pointer as a key), its low half label_filter's (pysb_low_half). */
static __always_inline bool keep_name(struct dentry *d, __u32 sandbox)
{
	struct inode *inode = d->d_inode;
	struct pysb_file_rule *r = own_rule_of((__u64)inode, pysb_low_half(inode), sandbox);

	return r && (r->access & PYSB_ACC_KEEP_NAME);
}

/* The directory above (d, *mnt) in the mount tree, *mnt updated when it crosses from a
 * mount's root (mnt_root: a bind mount's root has a d_parent of its own, hidden) to its
 * mountpoint; d itself at the root of the namespace. mnt NULL (a dentry-only walk): the
 * d_parent, or NULL at the root of a file system (no way up). */
static __always_inline struct dentry *parent_of(struct dentry *d, struct vfsmount **mnt)
{
	struct mount *m, *up;

	if (!*mnt) {
		struct dentry *p = BPF_CORE_READ(d, d_parent);

		return p != d ? p : NULL;
	}
	if (d != BPF_CORE_READ(*mnt, mnt_root))
		return BPF_CORE_READ(d, d_parent);
	m = real_mount(*mnt);
	up = BPF_CORE_READ(m, mnt_parent);
	if (up == m)
		return d;
	*mnt = (struct vfsmount *)((void *)up + bpf_core_field_offset(struct mount, mnt));
	return BPF_CORE_READ(m, mnt_mountpoint);
}

/*
 * A change to an inode's own metadata (mode, owner, ACLs, extended attributes): WRITE on
 * it; and when the inode is itself the object of one of the sandbox's rules (/tmp of
 * expose-rw=/tmp, /dev/null of the implicit rules), WRITE on the directory above too. The
 * rule lets the program use the object and what lies below it, not decide who else may:
 * `chmod 0777 /tmp` (the sticky bit gone, for every user of the machine) or `chmod 0600
 * /dev/null` (every other user's `> /dev/null` refused) are changes to the directory
 * above, outside the rule.
 */
static __always_inline int check_meta(struct pysb_sandbox_cfg *cfg, __u64 cgid, __u16 op,
				      struct dentry *d, struct vfsmount *mnt)
{
	struct vfsmount *up_mnt = mnt;
	struct dentry *up = NULL;
	struct walk_ctx c; /* one for both walks: two do not fit the stack */
	struct inode *inode;

	if (!(walk_from(&c, d, mnt, cfg) & PYSB_ACC_WRITE))
		goto deny;
	if (!own_rule(d, cfg->id))
		return 0;
	/* A file with other names has other directories above it: one in an rw tree (a hard
	 * link made there) would say nothing of the rule's. */
	inode = BPF_CORE_READ(d, d_inode);
	if ((BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFDIR && BPF_CORE_READ(inode, i_nlink) > 1)
		goto refuse;
	up = parent_of(d, &up_mnt);
	if (up && (walk_from(&c, up, up_mnt, cfg) & PYSB_ACC_WRITE))
		return 0;
refuse:
	c.found = c.found && up;
deny:
	return file_denied(cfg, cgid, PYSB_KIND_FILE, op, PYSB_ACC_WRITE, &c, d, mnt);
}

/* WRITE on the directory; for a removal or a rename, also a name the policy keeps. */
/* `op` of `entry` in `dir` by the task of sandbox `cfg`: WRITE on `dir`, and a name kept
 * (KEEP_NAME) stays. */
static __always_inline int check_dir_entry_of(struct pysb_sandbox_cfg *cfg, __u64 cgid, __u16 op,
					      const struct path *dir, struct dentry *entry,
					      struct pysb_dir_cache *dc)
{
	struct vfsmount *mnt = dir->mnt;
	struct walk_ctx c;

	if ((op == PYSB_OP_UNLINK || op == PYSB_OP_RMDIR || op == PYSB_OP_RENAME) &&
	    keep_name(entry, cfg->id)) {
		walk_from(&c, entry, mnt, cfg);
		return file_denied(cfg, cgid, PYSB_KIND_FILE, op, PYSB_ACC_WRITE, &c, entry, mnt);
	}
	if (walk_from_btf(&c, dir->dentry, mnt, cfg, dc) & PYSB_ACC_WRITE)
		return 0;
	return file_denied(cfg, cgid, PYSB_KIND_FILE, op, PYSB_ACC_WRITE, &c, entry, mnt);
}

static __always_inline int check_dir_entry(__u16 op, const struct path *dir, struct dentry *entry)
{
	struct pysb_sandbox_cfg *cfg;
	struct pysb_dir_cache *dc;
	__u64 cgid;

	cfg = file_sandbox(&cgid, &dc);
	if (!cfg)
		return 0;
	return check_dir_entry_of(cfg, cgid, op, dir, entry, dc);
}

static __always_inline __u32 open_access(__u32 mode, __u32 flags)
{
	__u32 want = 0;

	if (mode & FMODE_READ)
		want |= PYSB_ACC_READ;
	if ((mode & FMODE_WRITE) || (flags & O_TRUNC))
		want |= PYSB_ACC_WRITE;
	if (mode & FMODE_EXEC)
		want |= PYSB_ACC_EXEC;
	return want;
}

/*
 * /proc/<pid>/... (and /proc/<pid>/task/<tid>/...) of a task in the same sandbox,
 * itself, its threads and its children included: readable, as /proc/self is. What a
 * task of the sandbox could read of another one, it can read of itself. Tasks outside
 * stay denied (their status, environ, cmdline, maps).
 */
static __always_inline bool sandbox_proc_entry(struct inode *inode, __u32 want, __u64 cgid)
{
	struct task_struct *t;
	struct proc_inode *pi;
	struct pid *pid;

	if (want & ~PYSB_ACC_READ)
		return false;
	if (BPF_CORE_READ(inode, i_sb, s_magic) != PROC_SUPER_MAGIC)
		return false;
	pi = (struct proc_inode *)((void *)inode -
				   bpf_core_field_offset(struct proc_inode, vfs_inode));
	pid = BPF_CORE_READ(pi, pid);
	if (!pid)
		return false;
	t = pid_task_of(pid);
	return t && task_under(t, cgid);
}

/*
 * Reopening a pipe (or socket) the task holds, through its /proc/self/fd magic link:
 * open("/dev/stdin") when stdin is a pipe, /dev/fd/N, bash's <(...). Pipes and sockets
 * live on the kernel's internal pipefs and sockfs mounts: no path in any file tree
 * leads there, only a descriptor (the /proc/<pid>/fd of another task needs ptrace
 * access, which lsm/ptrace_access_check keeps inside the sandbox). Allowed only in
 * the modes the task already holds on that very pipe, so the read end of a pipe never
 * becomes a write end. So is a character device the task holds, its terminal above all:
 * open("/dev/stdout", "w") with stdout the pty pysb-bpf gave it (found by a user:
 * logging's FileHandler("/dev/stdout") failed on a terminal, worked with a pipe). Files with a path are never exempt: reopening the fd of a file
 * opened O_PATH, or read-only for write, is judged by the walk like any open. (Sockets
 * then fail with the kernel's own ENXIO.)
 */
#define PIPEFS_MAGIC	 0x50495045
#define SOCKFS_MAGIC	 0x534F434B
#define PYSB_MAX_FD_SCAN 65536

struct held_ctx {
	struct file **fd;
	struct inode *inode;
	__u32 max;
	__u32 mode;
};

static long held_step(__u32 i, void *data)
{
	struct held_ctx *c = data;
	struct file *f = NULL;

	if (i >= c->max)
		return 1;
	if (bpf_probe_read_kernel(&f, sizeof(f), c->fd + i) || !f)
		return 0;
	if (BPF_CORE_READ(f, f_inode) == c->inode)
		c->mode |= BPF_CORE_READ(f, f_mode);
	return 0;
}

static __always_inline bool reopen_of_held_pipe(struct file *file, struct inode *inode, __u32 want)
{
	struct task_struct *task = bpf_get_current_task_btf();
	unsigned long magic = BPF_CORE_READ(inode, i_sb, s_magic);
	struct held_ctx c = { .inode = inode };
	struct fdtable *fdt;
	__u32 have = 0;

	bool chr = (BPF_CORE_READ(inode, i_mode) & S_IFMT) == S_IFCHR;

	if (!chr &&
	    ((magic != PIPEFS_MAGIC && magic != SOCKFS_MAGIC) || !on_internal_mount(&file->f_path)))
		return false;
	if (want & PYSB_ACC_EXEC)
		return false;
	fdt = BPF_CORE_READ(task, files, fdt);
	c.fd = BPF_CORE_READ(fdt, fd);
	c.max = BPF_CORE_READ(fdt, max_fds);
	if (c.max > PYSB_MAX_FD_SCAN)
		c.max = PYSB_MAX_FD_SCAN;
	bpf_loop(PYSB_MAX_FD_SCAN, held_step, &c, 0);
	if (c.mode & FMODE_READ)
		have |= PYSB_ACC_READ;
	if (c.mode & FMODE_WRITE)
		have |= PYSB_ACC_WRITE;
	return (want & have) == want;
}

/*
 * /dev/tty (char 5:0) opens the task's controlling terminal. Under `run` that is the pty
 * pysb-bpf gave the program, whose session it leads: ssh's and git's password prompts,
 * getpass() (found by a user: each failed, or fell back with a deny line, unless the
 * policy named /dev/tty). Allowed when the terminal's session leader is a task of the
 * sandbox, or when there is none (the kernel's own ENXIO follows). A process confined in
 * place (`attach`, a daemon binding) whose session is led outside keeps the caller's
 * terminal out of reach by this name: judged by the rules, like any file.
 */
#define TTYAUX_DEV (5u << 20) /* the kernel's MKDEV(5, 0) */

static __always_inline bool own_controlling_tty(struct inode *inode, __u64 cgid, __u32 want)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct tty_struct *tty;
	struct task_struct *leader;

	if ((want & PYSB_ACC_EXEC) || (BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFCHR ||
	    BPF_CORE_READ(inode, i_rdev) != TTYAUX_DEV)
		return false;
	tty = BPF_CORE_READ(task, signal, tty);
	if (!tty)
		return true;
	leader = pid_task_of(BPF_CORE_READ(tty, ctrl.session));
	return leader && task_under(leader, cgid);
}

static __always_inline bool is_cgroupfs(struct inode *inode)
{
	unsigned long magic = inode->i_sb->s_magic;

	return magic == CGROUP2_SUPER_MAGIC || magic == CGROUP_SUPER_MAGIC;
}

/*
 * Judges an open file (file_open, file_receive) for `want`. `file` is the hook's own
 * argument: its fields are read with plain (BTF) loads, no helper call, on the hot path.
 */
/*
 * Before 6.5 overlayfs opens the layer's file under the overlay file's own path
 * (open_with_fake_path: f_path on the overlay, f_inode the layer's), with its creator
 * cred, once the overlay file itself was judged: the same open, judged twice (and, in
 * audit mode, reported twice: found by a user on 6.1). Since 6.5 the layer is opened
 * through an internal mount (kernel_internal_open).
 */
static __always_inline bool overlay_fake_path_open(struct file *file)
{
	return BPF_CORE_READ(file, f_path.dentry, d_sb, s_magic) == OVERLAYFS_SUPER_MAGIC &&
	       BPF_CORE_READ(file, f_inode, i_sb, s_magic) != OVERLAYFS_SUPER_MAGIC &&
	       overlay_internal();
}

/*
 * A pidfd (pidfd_open(2), clone's CLONE_PIDFD) is a file of the kernel's internal pidfs
 * mount since 6.9, opened through file_open, where no rule names it; before, an anonymous
 * inode nothing judged. A pidfd of a task of the sandbox is allowed (asyncio's and GLib's
 * child watchers; found by an adversary: every pidfd_open failed on 6.12 and 7.2, with a
 * deny line naming "/"); another task's is denied as its /proc/<pid> is (its uid, parent
 * and cgroup through PIDFD_GET_INFO, its namespaces). 1: not a pidfd.
 */
#define PIDFS_MAGIC 0x50494446

static __always_inline int pidfd_verdict(struct pysb_sandbox_cfg *cfg, __u64 cgid,
					 struct file *file, struct inode *inode)
{
	struct task_struct *t;

	if (BPF_CORE_READ(inode, i_sb, s_magic) != PIDFS_MAGIC || !on_internal_mount(&file->f_path))
		return 1;
	t = pid_task_of((struct pid *)BPF_CORE_READ(inode, i_private));
	if (!t || task_under(t, cgid))
		return 0; /* gone (nothing to reach), or the sandbox's own */
	return outside_denied(cfg, cgid, PYSB_OP_PIDFD, t);
}

/*
 * A block device holds every file of the file system on it: read raw, it gives the files
 * `ignore=` hides and those no rule grants (found by a review of the hooks: `expose-ro=/`
 * with `ignore=/etc/shadow`, and a sandboxed root read the hash from /dev/vda, which the
 * kernel lets its owner open without a capability). Only a rule naming the device itself
 * grants it, never one on a directory above (`expose-ro=/`, `expose-rw=/dev`), as for a
 * unix socket made outside.
 */
/* After the walk granted `want` on (d, mnt): 0, unless `inode` is a block device that no
 * rule of its own grants `want`, which is refused here with its event. */
static __always_inline int block_device_verdict(struct pysb_sandbox_cfg *cfg, __u64 cgid, __u16 op,
						__u32 want, struct walk_ctx *c, struct dentry *d,
						struct vfsmount *mnt, struct inode *inode)
{
	__u32 rule = 0;

	if ((inode->i_mode & S_IFMT) != S_IFBLK ||
	    (exact_rule_access(d, cfg->id, &rule) & want) == want)
		return 0;
	return file_denied_as(cfg, cgid, PYSB_KIND_FILE, op, want, c, d, mnt, PYSB_EV_BLOCK_DEVICE);
}

/* Did the walk's grant come from a rule that does not grant character devices (one
 * above /dev: PYSB_ACC_DEVICES, include/pysb_abi.h), for a character device? */
static __always_inline bool char_device_outside_rules(const struct walk_ctx *c, struct inode *inode)
{
	return (inode->i_mode & S_IFMT) == S_IFCHR && !(c->granted & PYSB_ACC_DEVICES);
}

/* The kernel's open of a program to run it (execve, the ELF interpreter: __FMODE_EXEC in
 * its flags; 6.1 puts no FMODE_EXEC in its mode yet, so its check is a read's) in a
 * sandbox that allows no exec after its start: its deny line says so (found by a user:
 * `run -- timeout 3 python3 ...` said `open(read) /usr/bin/python3.11` alone). */
static __always_inline __u32 exec_open_unallowed(const struct pysb_sandbox_cfg *cfg,
						 struct file *file, __u16 op)
{
	return op == PYSB_OP_OPEN && (file->f_flags & FMODE_EXEC) && !(cfg->flags & PYSB_SB_EXEC)
		       ? PYSB_EV_EXEC_POLICY
		       : 0;
}

static __always_inline int check_file(struct pysb_sandbox_cfg *cfg, __u64 cgid, __u16 op,
				      struct file *file, __u32 want, struct pysb_dir_cache *dc)
{
	int pidfd;
	struct dentry *d = file->f_path.dentry;
	struct vfsmount *mnt = file->f_path.mnt;
	struct inode *inode = file->f_inode;
	struct walk_ctx c;

	if ((want & PYSB_ACC_WRITE) && is_cgroupfs(inode))
		return deny_self_path(cfg, cgid, PYSB_OP_CGROUP_ESCAPE, want, d, mnt, EPERM);
	/* a character device the rules grant only from above /dev: the program's own
	 * terminal still passes below, others are refused as devices; another session's
	 * terminal never, whatever the rules (bpf/tty.bpf.h foreign_terminal) */
	if ((walk_from_btf(&c, d, mnt, cfg, dc) & want) == want &&
	    !char_device_outside_rules(&c, inode) && !foreign_terminal(file, inode, cgid))
		return block_device_verdict(cfg, cgid, op, want, &c, d, mnt, inode);
	if (kernel_internal_open(&file->f_path) || overlay_fake_path_open(file) ||
	    sandbox_proc_entry(inode, want, cgid))
		return 0;
	/* the terminal the task already holds (attach's caller's terminal, reopened as
	 * /dev/stdout) passes here, in the modes it holds */
	if (op == PYSB_OP_OPEN &&
	    (reopen_of_held_pipe(file, inode, want) || own_controlling_tty(inode, cgid, want)))
		return 0;
	/* granted by the rules, so refused as another session's terminal */
	if (c.found && !c.ignored && (c.granted & want) == want &&
	    !char_device_outside_rules(&c, inode))
		return deny_self_path(cfg, cgid, PYSB_OP_TERMINAL, want, d, mnt, EPERM);
	pidfd = pidfd_verdict(cfg, cgid, file, inode);
	if (pidfd <= 0)
		return pidfd;
	return file_denied_as(
		cfg, cgid, PYSB_KIND_FILE, op, want, &c, d, mnt,
		(c.found && !c.ignored && (c.granted & want) == want ? PYSB_EV_CHAR_DEVICE : 0) |
			exec_open_unallowed(cfg, file, op));
}

#define S_IFMT	00170000
#define S_IFREG 0100000
#define S_IFDIR 0040000
#define S_ISUID 0004000
#define S_ISGID 0002000
#define S_IXGRP 00010

/* A mode that would make the file run as its owner or group for whoever executes it. A
 * set-group-ID directory only passes its group on to new entries: allowed. */
static __always_inline bool setid_mode(umode_t mode)
{
	if ((mode & S_IFMT) == S_IFDIR)
		return false;
	return (mode & S_ISUID) || (mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP);
}

static __always_inline int deny_setid(struct pysb_sandbox_cfg *cfg, __u64 cgid, struct dentry *d,
				      struct vfsmount *mnt)
{
	return deny_self_path(cfg, cgid, PYSB_OP_SETID_MODE, PYSB_ACC_WRITE, d, mnt, EPERM);
}

/*
 * A watchdog starts at the open of its device, whatever the mode (drivers/watchdog/
 * watchdog_dev.c watchdog_open): unless a write of the magic 'V' closes it (which needs
 * a descriptor open for writing) or a WDIOC_SETOPTIONS stops it, the machine reboots when
 * its timeout runs out, 60 s or less after the program's exit (found by an adversary,
 * round 29: under `expose-ro=/dev`, a sandboxed root, who owns the device, opened
 * /dev/watchdog for reading and left the machine to reboot). Its open is judged as an
 * open for writing: /dev/watchdog (misc 10:130) and /dev/watchdogN (a dynamic major: the
 * kernel's name of the node, "watchdog" then a digit, or the cdev's parent of that name
 * once chrdev_open noted it on the inode; the sandbox cannot make a node of another name).
 */
#define WATCHDOG_DEV ((10u << 20) | 130)

static __always_inline bool watchdog_name(const unsigned char *name)
{
	char n[9];

	return name && !bpf_probe_read_kernel(n, sizeof(n), name) && n[0] == 'w' && n[1] == 'a' &&
	       n[2] == 't' && n[3] == 'c' && n[4] == 'h' && n[5] == 'd' && n[6] == 'o' &&
	       n[7] == 'g' && n[8] >= '0' && n[8] <= '9';
}

static __always_inline bool watchdog_device(struct file *file)
{
	struct inode *inode = file->f_inode;

	if ((inode->i_mode & S_IFMT) != S_IFCHR)
		return false;
	return inode->i_rdev == WATCHDOG_DEV ||
	       watchdog_name(BPF_CORE_READ(file, f_path.dentry, d_name.name)) ||
	       watchdog_name(
		       (const unsigned char *)BPF_CORE_READ(inode, i_cdev, kobj.parent, name));
}

/*
 * The machine's hibernation taken by the open of /dev/snapshot (misc 10:231), whatever the
 * mode (kernel/power/user.c snapshot_open): the open runs the kernel's
 * PM_HIBERNATION_PREPARE notifiers and holds the one hibernation until the descriptor
 * closes (`systemctl hibernate` and uswsusp fail with EBUSY meanwhile); the driver asks a
 * capability at its ioctls only. And a Bluetooth controller added to the machine by the
 * open of /dev/vhci (misc 10:137), whatever the mode (drivers/bluetooth/hci_vhci.c: a
 * second after the open, if nothing was written, the driver registers hciN, which
 * bluetoothd then drives, its commands read by the program). Found by an adversary, round
 * 31: under `expose-ro=/dev`, a sandboxed root, who owns both, held the one and made the
 * other. Judged as an open for writing, as a watchdog's.
 */
#define SNAPSHOT_DEV ((10u << 20) | 231)
#define VHCI_DEV     ((10u << 20) | 137)

/*
 * And a display taken by the open of a DRM device's primary node (/dev/dri/cardN: major
 * 226, minors below 64), whatever the mode (drivers/gpu/drm/drm_auth.c drm_master_open):
 * when no compositor holds the device, its first opener becomes its master, whose
 * descriptor sets the modes, planes and framebuffers on the machine's screens (the DRM
 * core looks at no descriptor mode) and keeps the user's compositor from becoming master
 * (its SET_MASTER: EBUSY) until it closes. Found by an adversary, round 32: under
 * `expose-ro=/dev`, a sandboxed root opened card0 for reading and was its master. Render
 * nodes (renderDN, minors from 128) have no master: opening them stays a read.
 */
#define DRM_MAJOR	 226u
#define DRM_PRIMARY_LAST 63u

static __always_inline bool acts_at_open(struct file *file)
{
	struct inode *inode = file->f_inode;

	return watchdog_device(file) ||
	       ((inode->i_mode & S_IFMT) == S_IFCHR &&
		(inode->i_rdev == SNAPSHOT_DEV || inode->i_rdev == VHCI_DEV ||
		 (inode->i_rdev >> 20 == DRM_MAJOR &&
		  (inode->i_rdev & 0xfffff) <= DRM_PRIMARY_LAST)));
}

SEC("lsm/file_open")
int BPF_PROG(pysb_file_open, struct file *file)
{
	struct pysb_sandbox_cfg *cfg;
	struct pysb_dir_cache *dc;
	__u32 want;
	__u64 cgid;

	cfg = file_sandbox(&cgid, &dc);
	if (!cfg)
		return 0;
	/* O_TMPFILE creates without path_mknod: its mode is judged here, as mknod's is
	 * (linkat would then give the set-user-ID file a name in an rw tree). */
	if ((file->f_flags & __O_TMPFILE) && setid_mode(file->f_inode->i_mode))
		return deny_setid(cfg, cgid, file->f_path.dentry, file->f_path.mnt);
	want = open_access(file->f_mode, file->f_flags);
	if (!(want & PYSB_ACC_WRITE) && acts_at_open(file))
		want |= PYSB_ACC_WRITE;
	return check_file(cfg, cgid, PYSB_OP_OPEN, file, want, dc);
}

SEC("lsm/file_receive")
int BPF_PROG(pysb_file_receive, struct file *file)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	/* Sockets, pipes, eventfds... live on internal mounts and carry no file rights. */
	if (on_internal_mount(&file->f_path))
		return 0;
	return check_file(cfg, cgid, PYSB_OP_RECEIVE_FD, file,
			  open_access(file->f_mode, 0) & ~PYSB_ACC_EXEC, NULL);
}

SEC("lsm/path_mknod")
int BPF_PROG(pysb_path_mknod, const struct path *dir, struct dentry *dentry, umode_t mode,
	     unsigned int dev)
{
	struct pysb_sandbox_cfg *cfg;
	struct pysb_dir_cache *dc;
	__u64 cgid;

	/* every create of the machine comes here: the sandbox first, which answers for
	 * the tasks in none */
	cfg = file_sandbox(&cgid, &dc);
	if (!cfg)
		return 0;
	/* open(O_CREAT) of /proc/self/fd/N (/dev/stdout, a shell's >/dev/stderr) comes here
	 * before the name is looked up: it exists, and procfs creates nothing anyway (no
	 * create op: EACCES). A refusal here only printed a deny line for an open that works
	 * (file_open judges the open itself). */
	if (dir->dentry->d_sb->s_magic == PROC_SUPER_MAGIC)
		return 0;
	/* open(O_CREAT) comes here too (may_o_create), with S_IFREG in mode */
	if (setid_mode(mode | S_IFREG))
		return deny_setid(cfg, cgid, dentry, dir->mnt);
	return check_dir_entry_of(cfg, cgid, PYSB_OP_CREATE, dir, dentry, dc);
}

SEC("lsm/path_mkdir")
int BPF_PROG(pysb_path_mkdir, const struct path *dir, struct dentry *dentry, umode_t mode)
{
	return check_dir_entry(PYSB_OP_MKDIR, dir, dentry);
}

SEC("lsm/path_rmdir")
int BPF_PROG(pysb_path_rmdir, const struct path *dir, struct dentry *dentry)
{
	return check_dir_entry(PYSB_OP_RMDIR, dir, dentry);
}

SEC("lsm/path_unlink")
int BPF_PROG(pysb_path_unlink, const struct path *dir, struct dentry *dentry)
{
	return check_dir_entry(PYSB_OP_UNLINK, dir, dentry);
}

SEC("lsm/path_symlink")
int BPF_PROG(pysb_path_symlink, const struct path *dir, struct dentry *dentry, const char *old_name)
{
	return check_dir_entry(PYSB_OP_SYMLINK, dir, dentry);
}

/*
 * POSIX message queues: mq_unlink(3) and mq_open(O_CREAT) act on the IPC namespace's
 * internal mqueue mount through vfs_unlink() and vfs_mkobj(), past path_unlink and
 * path_mknod (found by an adversary: an attached process removed a queue of the host,
 * and created one, only the open after the creation being refused). Judged here as those
 * two judge a name: WRITE on the directory of the queues, the event naming the queue.
 * These hooks run at every unlink and create of the machine: the file system is
 * compared first, before any lookup. Under `run` the program's own queues are on its
 * own IPC namespace's mount, which no rule names: refused, as their open always was
 * (now at the creation, which leaves nothing behind).
 */
#define MQUEUE_MAGIC 0x19800202

/* What the rules grant the directory of the queues, the root of the file system (mqueue
 * has no subdirectory): the rule on its inode (a rule naming /dev/mqueue), else what the
 * policy grants the mount point (mount_access), the two steps a dentry-only walk takes
 * there; without the walk, whose verification each program that calls it repeats. */
static __always_inline __u32 mqueue_access(struct walk_ctx *c, struct dentry *root, __u32 sandbox)
{
	struct pysb_mount_key mk = { .sandbox = sandbox };
	struct pysb_file_rule *r = own_rule(root, sandbox);
	__u32 *acc;

	__builtin_memset(c, 0, sizeof(*c));
	if (r) {
		c->found = 1;
		c->rule = r->rule;
		return r->access;
	}
	mk.dev = BPF_CORE_READ(root, d_sb, s_dev);
	acc = bpf_map_lookup_elem(&mount_access, &mk);
	if (!acc)
		return 0;
	c->found = 1;
	return *acc;
}

static __always_inline int check_mqueue(__u16 op, struct inode *dir, struct dentry *dentry)
{
	struct pysb_sandbox_cfg *cfg;
	struct walk_ctx c;
	__u64 cgid;

	if (dir->i_sb->s_magic != MQUEUE_MAGIC)
		return 0;
	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	if (mqueue_access(&c, BPF_CORE_READ(dentry, d_parent), cfg->id) & PYSB_ACC_WRITE)
		return 0;
	return file_denied(cfg, cgid, PYSB_KIND_FILE, op, PYSB_ACC_WRITE, &c, dentry, NULL);
}

SEC("lsm/inode_create")
int BPF_PROG(pysb_inode_create, struct inode *dir, struct dentry *dentry, umode_t mode)
{
	return check_mqueue(PYSB_OP_CREATE, dir, dentry);
}

SEC("lsm/inode_unlink")
int BPF_PROG(pysb_inode_unlink, struct inode *dir, struct dentry *dentry)
{
	return check_mqueue(PYSB_OP_UNLINK, dir, dentry);
}

/*
 * What moves (link, rename) may not gain access by its new name: the destination
 * directory must be writable, and grant nothing the object's current place does not.
 */
static __always_inline int check_move(__u16 op, struct dentry *obj, struct vfsmount *obj_mnt,
				      const struct path *to_dir, struct dentry *to_entry)
{
	struct pysb_sandbox_cfg *cfg;
	struct vfsmount *mnt = to_dir->mnt;
	struct walk_ctx c; /* one for both walks: the hook's stack is counted with the walk's */
	__u32 have, get;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	get = walk_from(&c, to_dir->dentry, mnt, cfg);
	if (!(get & PYSB_ACC_WRITE))
		return file_denied(cfg, cgid, PYSB_KIND_FILE, op, PYSB_ACC_WRITE, &c, to_entry,
				   mnt);
	have = walk_from(&c, obj, obj_mnt, cfg);
	/* KEEP_NAME is a mark of one inode, not an access a place grants */
	get &= PYSB_ACC_RW;
	if (get & ~have)
		return file_denied(cfg, cgid, PYSB_KIND_FILE, op, get & ~have, &c, obj, obj_mnt);
	return 0;
}

SEC("lsm/path_link")
int BPF_PROG(pysb_path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 cgid;

	/* A set-ID file never gets a new name from a sandbox, wherever it came from (an
	 * O_TMPFILE linked in through /proc/self/fd, another owner's binary). */
	if (setid_mode(BPF_CORE_READ(old_dentry, d_inode, i_mode))) {
		cfg = current_sandbox(&cgid);
		if (cfg)
			return deny_setid(cfg, cgid, old_dentry, BPF_CORE_READ(new_dir, mnt));
	}
	/* link(2) cannot cross mounts: the source is on new_dir's mount. */
	return check_move(PYSB_OP_LINK, old_dentry, BPF_CORE_READ(new_dir, mnt), new_dir,
			  new_dentry);
}

SEC("lsm/path_rename")
int BPF_PROG(pysb_path_rename, const struct path *old_dir, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry)
{
	int ret = check_dir_entry(PYSB_OP_RENAME, old_dir, old_dentry);

	/* what is renamed over (or exchanged) loses its name too */
	if (!ret && BPF_CORE_READ(new_dentry, d_inode))
		ret = check_dir_entry(PYSB_OP_RENAME, new_dir, new_dentry);
	if (ret)
		return ret;
	ret = check_move(PYSB_OP_RENAME, old_dentry, BPF_CORE_READ(old_dir, mnt), new_dir,
			 new_dentry);
	if (ret)
		return ret;
	/* RENAME_EXCHANGE moves the other one back: the same rules in the other direction. */
	if (BPF_CORE_READ(new_dentry, d_inode))
		ret = check_move(PYSB_OP_RENAME, new_dentry, BPF_CORE_READ(new_dir, mnt), old_dir,
				 old_dentry);
	return ret;
}

SEC("lsm/path_chmod")
int BPF_PROG(pysb_path_chmod, const struct path *path, umode_t mode)
{
	struct pysb_sandbox_cfg *cfg;
	umode_t cur;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	cur = BPF_CORE_READ(path, dentry, d_inode, i_mode);
	/* mode has no type bits: the inode's */
	if (setid_mode((mode & ~S_IFMT) | (cur & S_IFMT)))
		return deny_setid(cfg, cgid, path->dentry, path->mnt);
	/* The same mode again changes nothing for anyone (copystat of shutil.copytree onto
	 * the rule's own directory): WRITE on the file is enough. */
	if (!((mode ^ cur) & ~S_IFMT))
		return check(cfg, cgid, PYSB_OP_CHMOD, PYSB_ACC_WRITE, path->dentry, path->mnt);
	return check_meta(cfg, cgid, PYSB_OP_CHMOD, path->dentry, path->mnt);
}

#define F_RDLCK	   0
#define F_WRLCK	   1
#define F_UNLCK	   2
#define F_SETLEASE 1024

/* Locks and leases of files on internal mounts (pipes, sockets) carry no file right. */
static __always_inline int check_lock(struct file *file)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg || on_internal_mount(&file->f_path))
		return 0;
	return check(cfg, cgid, PYSB_OP_LOCK, PYSB_ACC_WRITE, file->f_path.dentry,
		     file->f_path.mnt);
}

/*
 * The ioctls that change an inode, or create or remove one, that its owner may issue
 * through a read-only descriptor (the file systems check ownership and the mount, not
 * the descriptor's mode): WRITE on the file, or on the directory they are issued on.
 */
#define FS_IOC_SETFLAGS		     0x40086602 /* _IOW('f', 2, long): chattr */
#define FS_IOC32_SETFLAGS	     0x40046602 /* _IOW('f', 2, int) */
#define FS_IOC_FSSETXATTR	     0x401c5820 /* _IOW('X', 32, struct fsxattr) */
#define FS_IOC_SETVERSION	     0x40087602 /* _IOW('v', 2, long) */
#define FS_IOC32_SETVERSION	     0x40047602
#define EXT4_IOC_SETVERSION	     0x40086604 /* _IOW('f', 4, long): i_generation */
#define EXT4_IOC32_SETVERSION	     0x40046604
#define EXT4_IOC_MIGRATE	     0x00006609 /* _IO('f', 9): to extents */
#define FS_IOC_ENABLE_VERITY	     0x40806685 /* _IOW('f', 133, 128 bytes): read-only forever */
#define FS_IOC_SET_ENCRYPTION_POLICY 0x800c6613 /* _IOR('f', 19, 12 bytes): an empty dir */
#define FAT_IOCTL_SET_ATTRIBUTES     0x40047211 /* _IOW('r', 0x11, __u32): mode, hidden */
#define BTRFS_IOC_SNAP_CREATE	     0x50009401 /* _IOW(0x94, 1, 4096 bytes) */
#define BTRFS_IOC_SUBVOL_CREATE	     0x5000940e /* 14: a new directory, no path_mkdir */
#define BTRFS_IOC_SNAP_DESTROY	     0x5000940f /* 15: an rm -r, no path_rmdir */
#define BTRFS_IOC_SNAP_CREATE_V2     0x50009417 /* 23 */
#define BTRFS_IOC_SUBVOL_CREATE_V2   0x50009418 /* 24 */
#define BTRFS_IOC_SUBVOL_SETFLAGS    0x4008941a /* _IOW(0x94, 26, __u64): read-only flag */
#define BTRFS_IOC_SNAP_DESTROY_V2    0x5000943f /* 63 */

static __always_inline bool changes_inode(unsigned int cmd)
{
	switch (cmd) {
	case FS_IOC_SETFLAGS:
	case FS_IOC32_SETFLAGS:
	case FS_IOC_FSSETXATTR:
	case FS_IOC_SETVERSION:
	case FS_IOC32_SETVERSION:
	case EXT4_IOC_SETVERSION:
	case EXT4_IOC32_SETVERSION:
	case EXT4_IOC_MIGRATE:
	case FS_IOC_ENABLE_VERITY:
	case FS_IOC_SET_ENCRYPTION_POLICY:
	case FAT_IOCTL_SET_ATTRIBUTES:
	case BTRFS_IOC_SUBVOL_SETFLAGS:
		return true;
	default:
		return false;
	}
}

/* Entries made in the directory the ioctl is issued on, as mkdir. */
static __always_inline bool changes_entries(unsigned int cmd)
{
	switch (cmd) {
	case BTRFS_IOC_SNAP_CREATE:
	case BTRFS_IOC_SUBVOL_CREATE:
	case BTRFS_IOC_SNAP_CREATE_V2:
	case BTRFS_IOC_SUBVOL_CREATE_V2:
		return true;
	default:
		return false;
	}
}

/*
 * A subvolume destroyed: an `rm -r` of a whole tree that no hook sees, of a child named
 * in the argument (a read-only rule's own directory, with everything below it) or, in
 * V2, of any subvolume of the file system named by its id, wherever it lies. WRITE on
 * the directory the ioctl is issued on says nothing about either (found by an
 * adversary, on a btrfs mounted with user_subvol_rm_allowed), so never from a sandbox:
 * rmdir(2) of an empty subvolume still works, judged as any rmdir.
 */
static __always_inline bool destroys_subvolume(unsigned int cmd)
{
	return cmd == BTRFS_IOC_SNAP_DESTROY || cmd == BTRFS_IOC_SNAP_DESTROY_V2;
}

/*
 * A snapshot copies a whole subvolume the sandbox may read, as new inodes: a file an
 * absolute ignore= path hides is an inode label, which its copy does not carry (found by
 * an adversary: the copy was read in an expose-rw= tree). Name patterns still hold on the
 * copy's names. So where the sandbox hides inodes, never; elsewhere WRITE on the
 * directory the snapshot is made in, as mkdir.
 */
static __always_inline bool snapshot_copies_hidden(struct pysb_sandbox_cfg *cfg, unsigned int cmd)
{
	return (cfg->flags & PYSB_SB_HIDDEN) &&
	       (cmd == BTRFS_IOC_SNAP_CREATE || cmd == BTRFS_IOC_SNAP_CREATE_V2);
}

/* File attributes set by ioctl (chattr: immutable, append-only, ...): metadata, as chmod
 * (check_meta); subvolumes made: WRITE on the directory; destroyed: never. */
static __always_inline int check_attrs_ioctl(struct file *file, unsigned int cmd)
{
	struct pysb_sandbox_cfg *cfg;
	bool meta = changes_inode(cmd), destroy = destroys_subvolume(cmd);
	__u64 cgid;

	if (!meta && !destroy && !changes_entries(cmd))
		return 0;
	cfg = current_sandbox(&cgid);
	if (!cfg || on_internal_mount(&file->f_path))
		return 0;
	if (destroy)
		return deny_self_path(cfg, cgid, PYSB_OP_SUBVOL_DESTROY, PYSB_ACC_WRITE,
				      file->f_path.dentry, file->f_path.mnt, EPERM);
	if (snapshot_copies_hidden(cfg, cmd))
		return deny_self_path(cfg, cgid, PYSB_OP_SNAPSHOT, PYSB_ACC_WRITE,
				      file->f_path.dentry, file->f_path.mnt, EPERM);
	if (meta)
		return check_meta(cfg, cgid, PYSB_OP_SETATTR, file->f_path.dentry,
				  file->f_path.mnt);
	return check(cfg, cgid, PYSB_OP_SETATTR, PYSB_ACC_WRITE, file->f_path.dentry,
		     file->f_path.mnt);
}

/* _IOWR('f', 24 and 25, struct fscrypt_remove_key_arg): a claim to a file system's
 * encryption key given up, the caller's or (with CAP_SYS_ADMIN) every user's. */
#define FS_IOC_REMOVE_ENCRYPTION_KEY	       0xc0406618
#define FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS 0xc0406619

/*
 * The files of the kernel's own control file systems, whose writes set the machine (a
 * file's mode is checked at open, the capability the same setting needs through a system
 * call is not checked at the write): sysfs (/sys/kernel/mm/..., /sys/power/state, a PCI
 * device's resource), tracefs and debugfs (kprobe_events, tracing_on), securityfs,
 * configfs, binfmt_misc's register, efivarfs, pstore, selinuxfs, smackfs; procfs is the
 * caller's (its memory files are judged apart). And the devices that reach the machine
 * past every file or net= rule: /dev/mem, /dev/kmem, /dev/port (CAP_SYS_RAWIO at open
 * only), any block device (a disk written raw), /dev/net/tun (packets put in the host's
 * network stack from any address, to any local service), /dev/uinput and the input
 * devices (keystrokes typed into the user's session), /dev/cpu/N/msr and /dev/i2c-N. Found by an adversary, round 24:
 * confined in place, a root that held /proc/sysrq-trigger, a sysfs knob, tracefs'
 * kprobe_events and a tun device open for writing from before the attach wrote them all.
 */
#define SYSFS_MAGIC	 0x62656572
#define TRACEFS_MAGIC	 0x74726163
#define DEBUGFS_MAGIC	 0x64626720
#define SECURITYFS_MAGIC 0x73636673
#define CONFIGFS_MAGIC	 0x62656570
#define BINFMTFS_MAGIC	 0x42494e4d
#define EFIVARFS_MAGIC	 0xde5e81e4
#define PSTOREFS_MAGIC	 0x6165676c
#define SELINUX_MAGIC	 0xf97cff8c
#define SMACK_MAGIC	 0x43415d53
#define MEM_DEV		 ((1u << 20) | 1) /* MKDEV(1, 1): /dev/mem; 1, 2: kmem; 1, 4: port */
#define KMEM_DEV	 ((1u << 20) | 2)
#define PORT_DEV	 ((1u << 20) | 4)
#define TUN_DEV		 ((10u << 20) | 200)
#define UINPUT_DEV	 ((10u << 20) | 223)
#define INPUT_MAJOR	 13u
#define I2C_MAJOR	 89u  /* /dev/i2c-N: the machine's buses, raw */
#define MSR_MAJOR	 202u /* /dev/cpu/N/msr: wrmsr, CAP_SYS_RAWIO at open only */

/*
 * A watchdog held from before the sandbox (found by an adversary, round 30): opened for
 * writing before `attach`, its writes (a keepalive, the magic close) and its setting
 * ioctls (WDIOC_SETOPTIONS, WDIOC_KEEPALIVE, WDIOC_SETTIMEOUT, WDIOC_SETPRETIMEOUT, which
 * look at no descriptor mode) drove the machine's watchdog: kept it from firing, or made
 * it fire. A kernel_knob() (writes judged as an open for writing) and a device setting
 * (check_device_ioctl). /dev/watchdog is 10:130; /dev/watchdogN has a dynamic major
 * (254 down to 234, then 511 down to 384), named by its cdev's parent, "watchdogN".
 */
static __always_inline bool watchdog_cdev(struct inode *inode)
{
	__u32 major = inode->i_rdev >> 20;

	if (inode->i_rdev == WATCHDOG_DEV)
		return true;
	if (!((major >= 234 && major <= 254) || (major >= 384 && major <= 511)))
		return false;
	return watchdog_name(
		(const unsigned char *)BPF_CORE_READ(inode, i_cdev, kobj.parent, name));
}

static __always_inline bool kernel_knob(struct inode *inode, unsigned long magic)
{
	umode_t fmt;
	dev_t rdev;

	switch (magic) {
	case SYSFS_MAGIC:
	case TRACEFS_MAGIC:
	case DEBUGFS_MAGIC:
	case SECURITYFS_MAGIC:
	case CONFIGFS_MAGIC:
	case BINFMTFS_MAGIC:
	case EFIVARFS_MAGIC:
	case PSTOREFS_MAGIC:
	case SELINUX_MAGIC:
	case SMACK_MAGIC:
		return true;
	}
	fmt = inode->i_mode & S_IFMT;
	if (fmt == S_IFBLK)
		return true;
	rdev = inode->i_rdev;
	return fmt == S_IFCHR &&
	       (rdev == MEM_DEV || rdev == KMEM_DEV || rdev == PORT_DEV || rdev == TUN_DEV ||
		rdev == UINPUT_DEV || rdev >> 20 == INPUT_MAJOR || rdev >> 20 == I2C_MAJOR ||
		rdev >> 20 == MSR_MAJOR || watchdog_cdev(inode));
}

/* The file judged as an open for writing would be now, in a sandbox (only in one confined
 * in place with `inplace_only`). */
static __always_inline int judged_as_write_open(struct file *file, bool inplace_only)
{
	struct dentry *d = file->f_path.dentry;
	struct vfsmount *mnt = file->f_path.mnt;
	struct pysb_sandbox_cfg *cfg;
	struct walk_ctx c;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg || (inplace_only && !(cfg->flags & PYSB_SB_INPLACE)))
		return 0;
	if (!(walk_from(&c, d, mnt, cfg) & PYSB_ACC_WRITE))
		return file_denied(cfg, cgid, PYSB_KIND_FILE, PYSB_OP_OPEN, PYSB_ACC_WRITE, &c, d,
				   mnt);
	/* a device, as at its open: only by a rule on /dev or below */
	if (char_device_outside_rules(&c, file->f_inode))
		return file_denied_as(cfg, cgid, PYSB_KIND_FILE, PYSB_OP_OPEN, PYSB_ACC_WRITE, &c,
				      d, mnt, PYSB_EV_CHAR_DEVICE);
	/* a disk, as at its open: only by a rule naming it */
	return block_device_verdict(cfg, cgid, PYSB_OP_OPEN, PYSB_ACC_WRITE, &c, d, mnt,
				    file->f_inode);
}

/* A write (or a shared writable mapping) through a descriptor held from before the
 * sandbox, of a file of procfs or of kernel_knob(): judged as an open for writing now. */
static __always_inline int held_knob_write(struct file *file)
{
	return judged_as_write_open(file, true);
}

/*
 * A write to a pty master held from before the sandbox, whose slave is the terminal of a
 * session led outside: what it writes is typed there, and that session's shell runs it
 * outside every rule (found by an adversary, round 26: an attached process holding the
 * master of a shell it had started typed a command, which the shell ran in the root
 * cgroup). Like TIOCSTI, refused whatever the rules; a pty the sandbox made stays its
 * own (bpf/tty.bpf.c pysb_tty_led_outside). The writes of a held `/dev/uinput` are judged
 * by the rules (kernel_knob); this one has a session to go by.
 */
static __always_inline int held_master_write(struct file *file)
{
	struct pysb_sandbox_cfg *cfg;
	struct tty_struct *tty;
	__u64 cgid;

	if ((file->f_inode->i_mode & S_IFMT) != S_IFCHR)
		return 0;
	cfg = current_sandbox(&cgid);
	if (!cfg || !(cfg->flags & PYSB_SB_INPLACE))
		return 0;
	tty = tty_of(file);
	if (!tty || !pysb_tty_led_outside((__u64)tty, cgid))
		return 0;
	return deny_self_path(cfg, cgid, PYSB_OP_TERMINAL, PYSB_ACC_WRITE, file->f_path.dentry,
			      file->f_path.mnt, EPERM);
}

/*
 * A command io_uring passes to a file's driver (IORING_OP_URING_CMD), after the file was
 * opened: a block device's BLOCK_URING_CMD_DISCARD (6.12+) discards a range as BLKDISCARD
 * does, with no write(2) and no ioctl, through any descriptor open for writing, which one
 * held from before the sandbox may be (found by an adversary, round 28: attached, a root
 * holding a loop device open for writing from before zeroed its blocks, where its
 * write(2), BLKDISCARD and BLKZEROOUT were refused). On a kernel_knob() file, judged as
 * its writes are: as an open for writing, in a sandbox confined in place. Other files'
 * commands are their own (a socket's SOCKET_URING_OP_SETSOCKOPT reaches
 * socket_setsockopt; /dev/fuse's answer requests, as its writes do).
 * A misc device's commands (major 10) are its driver's settings: /dev/ublk-control's
 * UBLK_U_CMD_ADD_DEV adds a ublk device to the machine (its /dev/ublkcN, then the block
 * device /dev/ublkbN its server answers for, which udev and the desktop probe), allowed
 * to any opener with UBLK_F_UNPRIVILEGED_DEV, through a descriptor of any mode (found by
 * an adversary, round 32: under `expose-ro=/dev`, a sandboxed root with no capability
 * added one; 6.12, 7.2). Judged as an open for writing of the device, in every sandbox.
 */
#define MISC_MAJOR 10u
SEC("lsm/uring_cmd")
int BPF_PROG(pysb_uring_cmd, struct io_uring_cmd *ioucmd)
{
	struct file *file = ioucmd->file;
	struct inode *inode;

	if (!file)
		return 0;
	inode = file->f_inode;
	if (!inode)
		return 0;
	if ((inode->i_mode & S_IFMT) == S_IFCHR && inode->i_rdev >> 20 == MISC_MAJOR)
		return judged_as_write_open(file, false);
	if (!kernel_knob(inode, inode->i_sb->s_magic))
		return 0;
	return held_knob_write(file);
}

#define BLKDISCARD    0x1277
#define BLKSECDISCARD 0x127d
#define BLKZEROOUT    0x127f

/* A block device's discard and zeroing ioctls write it with no write(2) (the kernel wants
 * a descriptor open for writing): as its writes. */
static __always_inline int check_blk_write_ioctl(struct file *file, unsigned int cmd)
{
	if (cmd != BLKDISCARD && cmd != BLKSECDISCARD && cmd != BLKZEROOUT)
		return 0;
	if ((file->f_inode->i_mode & S_IFMT) != S_IFBLK)
		return 0;
	return held_knob_write(file);
}

/* A loop device's own ioctls (drivers/block/loop.c) change what the device holds with no
 * write(2): LOOP_SET_FD, LOOP_CONFIGURE, LOOP_CHANGE_FD and LOOP_CLR_FD want neither a
 * descriptor open for writing nor a capability, only the device's open (LOOP_CHANGE_FD
 * backs a read-only device, mounted or not, with another file: every reader outside gets
 * the program's bytes; LOOP_CLR_FD detaches the machine's device); the others want one
 * open for writing, which a descriptor held from before the sandbox may be. Found by an
 * adversary, round 25: under `expose-ro=/dev/loop0`, and holding it open for reading
 * from before `attach`. Every block device: a partition's ioctls reach the loop driver
 * too. /dev/loop-control's ADD, REMOVE and GET_FREE (which makes a device when none is
 * free) want only its open. All judged as an open for writing of the file would be, in
 * every sandbox: a block device by a rule naming it (block_device_verdict). */
#define LOOP_SET_FD	    0x4C00
#define LOOP_CLR_FD	    0x4C01
#define LOOP_SET_STATUS	    0x4C02
#define LOOP_SET_STATUS64   0x4C04
#define LOOP_CHANGE_FD	    0x4C06
#define LOOP_SET_CAPACITY   0x4C07
#define LOOP_SET_DIRECT_IO  0x4C08
#define LOOP_SET_BLOCK_SIZE 0x4C09
#define LOOP_CONFIGURE	    0x4C0A
#define LOOP_CTL_ADD	    0x4C80
#define LOOP_CTL_REMOVE	    0x4C81
#define LOOP_CTL_GET_FREE   0x4C82
#define LOOP_CTL_DEV	    ((10u << 20) | 237)

static __always_inline int check_loop_ioctl(struct file *file, unsigned int cmd)
{
	struct inode *inode = file->f_inode;
	umode_t fmt = inode->i_mode & S_IFMT;

	if (fmt == S_IFBLK) {
		if (cmd != LOOP_SET_FD && cmd != LOOP_CLR_FD && cmd != LOOP_SET_STATUS &&
		    cmd != LOOP_SET_STATUS64 && cmd != LOOP_CHANGE_FD && cmd != LOOP_SET_CAPACITY &&
		    cmd != LOOP_SET_DIRECT_IO && cmd != LOOP_SET_BLOCK_SIZE &&
		    cmd != LOOP_CONFIGURE)
			return 0;
	} else if (fmt != S_IFCHR || inode->i_rdev != LOOP_CTL_DEV ||
		   (cmd != LOOP_CTL_ADD && cmd != LOOP_CTL_REMOVE && cmd != LOOP_CTL_GET_FREE)) {
		return 0;
	}
	return judged_as_write_open(file, false);
}

/* A userfaultfd answers the page faults of the address space it was made in, whichever
 * process holds it: UFFDIO_COPY (and ZEROPAGE, CONTINUE, MOVE, POISON, WRITEPROTECT) put
 * the holder's bytes into that process's memory. One made by a process outside and passed
 * in before `attach` wrote an outside root's memory once confined (found by an adversary,
 * round 25), as a held /proc/PID/mem would (file_permission). Its ioctls (type 0xAA), on
 * the file named "[userfaultfd]", only for an address space whose owner is the sandbox's
 * own. */
static __always_inline int check_uffd_ioctl(struct file *file, unsigned int cmd)
{
	struct dentry *d = file->f_path.dentry;
	struct pysb_sandbox_cfg *cfg;
	struct userfaultfd_ctx *ctx;
	struct task_struct *owner;
	struct mm_struct *mm;
	char n[14];
	__u64 cgid;

	if (((cmd >> 8) & 0xff) != 0xAA || d->d_name.len != 13 ||
	    bpf_probe_read_kernel(n, sizeof(n), d->d_name.name) || n[0] != '[' || n[1] != 'u' ||
	    n[2] != 's' || n[4] != 'r' || n[5] != 'f' || n[10] != 'f' || n[11] != 'd' ||
	    n[12] != ']')
		return 0;
	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	ctx = (struct userfaultfd_ctx *)file->private_data;
	mm = BPF_CORE_READ(ctx, mm);
	if (!mm || mm == BPF_CORE_READ(bpf_get_current_task_btf(), mm))
		return 0;
	owner = BPF_CORE_READ(mm, owner);
	if (!owner || task_under(owner, cgid))
		return 0; /* gone, or the sandbox's own (a child's, by UFFD_FEATURE_EVENT_FORK) */
	return outside_denied(cfg, cgid, PYSB_OP_PTRACE, owner);
}

/* A file system's keyring of encryption keys is the machine's, not the sandbox's: the last
 * claim to a key removed, its directories lock for every process of the user (or of the
 * machine), whatever file the ioctl is issued on. Never from a sandbox. */
static __always_inline int check_fs_key_ioctl(struct file *file, unsigned int cmd)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 cgid;

	if (cmd != FS_IOC_REMOVE_ENCRYPTION_KEY && cmd != FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS)
		return 0;
	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	return deny_self_path(cfg, cgid, PYSB_OP_KEY, 0, file->f_path.dentry, file->f_path.mnt,
			      EACCES);
}

/* One program a hook, for the three concerns: the terminal's (bpf/tty.bpf.h), the file
 * system's keys and the file attributes'. The 32-bit ioctls of a compat task come through
 * file_ioctl_compat since 6.8 (and in Debian's 6.1): the same checks, or a 32-bit
 * program's FS_IOC32_SETFLAGS would change a read-only file's attributes. */
/*
 * An I2C bus's transfers by ioctl (drivers/i2c/i2c-dev.c): I2C_RDWR and I2C_SMBUS put
 * bytes on the bus (a chip's registers, an EEPROM, a power or fan controller) through any
 * descriptor of /dev/i2c-N, one open for reading too (the driver never looks at its mode),
 * where write(2) needs one open for writing (found by an adversary, round 28: under
 * `expose-ro=/dev/i2c-0`, a sandboxed root set a chip's register). Judged as an open for
 * writing of the device would be, in every sandbox, as write(2) through a held descriptor
 * is (kernel_knob): the hook cannot tell a read transfer from a write one (the arguments
 * are the program's memory, which another thread may change before the driver copies
 * them), so reading a chip through these ioctls needs WRITE too. I2C_SLAVE and the other
 * settings move no byte. */
#define I2C_RDWR  0x0707
#define I2C_SMBUS 0x0720

static __always_inline bool i2c_transfer(struct file *file, unsigned int cmd)
{
	struct inode *inode = file->f_inode;

	return (cmd == I2C_RDWR || cmd == I2C_SMBUS) && (inode->i_mode & S_IFMT) == S_IFCHR &&
	       inode->i_rdev >> 20 == I2C_MAJOR;
}

/*
 * A HID device's reports sent by ioctl (drivers/hid/hidraw.c): HIDIOCSFEATURE,
 * HIDIOCSINPUT and HIDIOCSOUTPUT send a report to the device (a keyboard's or a security
 * key's settings, a firmware update mode) through any descriptor of /dev/hidrawN, one
 * open for reading too, where write(2) needs one open for writing (found by an adversary,
 * round 28: under `expose-ro=/dev/hidraw0`, a program sent an output report). Judged as
 * an open for writing, in every sandbox; the reports read (HIDIOCG*) stay free. hidraw's
 * major is dynamic: its files are those whose operations the hid module owns (a kernel
 * with HID built in has no owner there, and is not covered). */
#define HID_SET_FEATURE 0x06
#define HID_SET_INPUT	0x09
#define HID_SET_OUTPUT	0x0B

static __always_inline bool hid_module_file(struct file *file)
{
	const struct file_operations *fop = file->f_op;
	struct module *owner = fop ? fop->owner : NULL;

	return owner && owner->name[0] == 'h' && owner->name[1] == 'i' && owner->name[2] == 'd' &&
	       owner->name[3] == '\0';
}

/*
 * And a USB HID device's reports through its hiddev (drivers/hid/usbhid/hiddev.c,
 * /dev/usb/hiddevN on USB's major 180): HIDIOCSUSAGE and HIDIOCSUSAGES set a field of a
 * report, HIDIOCSREPORT sends it (a UPS's shutdown delay, which apcupsd and NUT set this
 * way, a keyboard's LEDs), through any descriptor (hiddev has no write(2)). Found by an
 * adversary, round 31: under `expose-ro=/dev/usb`, a sandboxed root set a USB keyboard's
 * output report. The reads (HIDIOCG*, HIDIOCINITREPORT) and the descriptor's own flags
 * (HIDIOCSFLAG) stay free.
 */
#define IOC_DIR_WRITE  1u
#define USB_MAJOR      180u
#define HIDDEV_SREPORT 0x08
#define HIDDEV_SUSAGE  0x0C
#define HIDDEV_SUSAGES 0x14

static __always_inline bool hid_report_sent(struct file *file, unsigned int cmd)
{
	__u32 nr = cmd & 0xff;

	if (((cmd >> 8) & 0xff) != 'H' || (file->f_inode->i_mode & S_IFMT) != S_IFCHR)
		return false;
	if ((cmd >> 30) == IOC_DIR_WRITE)
		return (nr == HIDDEV_SREPORT || nr == HIDDEV_SUSAGE || nr == HIDDEV_SUSAGES) &&
		       file->f_inode->i_rdev >> 20 == USB_MAJOR;
	if ((cmd >> 30) != 3 ||
	    (nr != HID_SET_FEATURE && nr != HID_SET_INPUT && nr != HID_SET_OUTPUT))
		return false;
	return hid_module_file(file);
}

/*
 * An input device's settings changed by ioctl (drivers/input/evdev.c, joydev.c), for every
 * program that reads it, through any descriptor of /dev/input/eventN or jsN, one open for
 * reading too (neither driver looks at its mode; write(2), which injects events, needs one
 * open for writing): EVIOCGRAB takes every event for the grabbing descriptor (the user's
 * session gets no keystroke, no pointer motion, until it lets go or closes),
 * EVIOCSKEYCODE (and _V2) maps a key to another (the user types one thing, every program
 * reads another), EVIOCSREP (auto-repeat), EVIOCSABS (an axis' range and calibration),
 * EVIOCSFF and EVIOCRMFF (force feedback effects: the device's slots), joydev's JSIOCS*
 * and JS_SET_* (calibration, axis and button maps). Found by an adversary, round 29: under
 * `expose-ro=/dev/input`, a sandboxed root remapped a keyboard's keys and grabbed it.
 * Judged as an open for writing, in every sandbox (kernel_knob's major 13); the reads
 * (EVIOCG*, JSIOCG*) stay free, and so do a descriptor's own settings: EVIOCREVOKE, EVIOCSMASK,
 * EVIOCSCLOCKID. Every write-direction command of type 'E' or 'j' but those three.
 */
#define EVIOC_REVOKE_NR	  0x91
#define EVIOC_SMASK_NR	  0x93
#define EVIOC_SCLOCKID_NR 0xa0
#define JS_SET_CAL	  1u /* joydev's old commands, numbers with no type */
#define JS_SET_TIMEOUT	  3u
#define JS_SET_TIMELIMIT  5u
#define JS_SET_ALL	  8u

static __always_inline bool input_setting(struct file *file, unsigned int cmd)
{
	struct inode *inode = file->f_inode;
	__u32 type = (cmd >> 8) & 0xff, nr = cmd & 0xff;
	bool set;

	if (cmd == JS_SET_CAL || cmd == JS_SET_TIMEOUT || cmd == JS_SET_TIMELIMIT ||
	    cmd == JS_SET_ALL)
		set = true;
	else if ((cmd >> 30) != IOC_DIR_WRITE)
		set = false;
	else if (type == 'j')
		set = true;
	else
		set = type == 'E' && nr != EVIOC_REVOKE_NR && nr != EVIOC_SMASK_NR &&
		      nr != EVIOC_SCLOCKID_NR;
	return set && (inode->i_mode & S_IFMT) == S_IFCHR && inode->i_rdev >> 20 == INPUT_MAJOR;
}

/*
 * A real-time clock's alarm set or cancelled by ioctl (drivers/rtc/dev.c): RTC_WKALM_SET
 * and RTC_ALM_SET set the machine's wake alarm (a suspended machine wakes, one powered
 * off by ACPI starts, at the program's time), RTC_AIE_OFF cancels the one rtcwake or a
 * timer unit set; RTC_IRQP_SET changes the periodic rate every later opener gets; none
 * wants a descriptor open for writing or a capability (RTC_SET_TIME, RTC_EPOCH_SET and
 * RTC_PARAM_SET want CAP_SYS_TIME, which lsm/capable refuses unless granted). Found by an
 * adversary, round 29: under `expose-ro=/dev/rtc0`, a sandboxed root set the wake
 * alarm. Judged as an open for writing, in every sandbox: every command of type 'p' with
 * no data or data in, but RTC_UIE_ON/OFF and RTC_PIE_ON/OFF (the opener's own interrupts,
 * turned off at its close: hwclock waits for a tick with RTC_UIE_ON). The RTC's major is
 * dynamic: its devices are those whose cdev's parent is named rtcN (cdev_device_add).
 */
#define RTC_IOC_TYPE 'p'
#define RTC_UIE_ON   0x7003 /* _IO('p', 3); 4, 5, 6: UIE_OFF, PIE_ON, PIE_OFF */
#define RTC_PIE_OFF  0x7006

static __always_inline bool rtc_setting(struct file *file, unsigned int cmd)
{
	struct inode *inode = file->f_inode;
	const char *name;
	char n[4];

	if (((cmd >> 8) & 0xff) != RTC_IOC_TYPE || (cmd >> 30) > IOC_DIR_WRITE ||
	    (cmd >= RTC_UIE_ON && cmd <= RTC_PIE_OFF))
		return false;
	if ((inode->i_mode & S_IFMT) != S_IFCHR)
		return false;
	name = BPF_CORE_READ(inode, i_cdev, kobj.parent, name);
	return name && !bpf_probe_read_kernel(n, sizeof(n), name) && n[0] == 'r' && n[1] == 't' &&
	       n[2] == 'c' && n[3] >= '0' && n[3] <= '9';
}

/*
 * A sound card's mixer changed by ioctl (sound/core/control.c): SNDRV_CTL_IOCTL_ELEM_WRITE
 * sets a control (a volume, a mute or capture switch: the microphone's, for every program
 * that records next), ELEM_LOCK and UNLOCK hold one against the others' writes, ELEM_ADD,
 * REPLACE, REMOVE make and remove controls, TLV_WRITE and TLV_COMMAND write a control's
 * table; none looks at the descriptor's mode. Found by an adversary, round 29: under
 * `expose-ro=/dev/snd`, a sandboxed root set a card's volume through its control device
 * open for reading. And a playback stream's frames written by ioctl
 * (sound/core/pcm_native.c): SNDRV_PCM_IOCTL_WRITEI_FRAMES and WRITEN_FRAMES play the
 * program's sound through a playback device open for reading (write(2) wants one open
 * for writing; same round: under `expose-ro=/dev/snd`, the dummy card took 64 frames).
 * Judged as an open for writing, in every sandbox, on ALSA's major 116; reading the
 * controls, setting a stream up and capturing stay free. And the same mixer through its
 * OSS emulation (sound/core/oss/mixer_oss.c, major 14: /dev/mixerN, and /dev/dspN, which
 * passes type 'M' on): SOUND_MIXER_WRITE_* (_IOWR('M', ...)) set the card's controls
 * whatever the descriptor's mode (found by an adversary, round 32: under `expose-ro=/dev`,
 * a sandboxed root set snd-dummy's master volume through /dev/mixer); its reads (_IOR)
 * stay free.
 */
#define SOUND_MAJOR	     116u
#define OSS_SOUND_MAJOR	     14u
#define OSS_MIXER_TYPE	     'M'
#define IOC_WRITE_BIT	     1u
#define SNDRV_CTL_TYPE	     'U'
#define SNDRV_ELEM_WRITE_NR  0x13 /* 0x14, 0x15: ELEM_LOCK, ELEM_UNLOCK */
#define SNDRV_ELEM_UNLOCK_NR 0x15
#define SNDRV_ELEM_ADD_NR    0x17 /* 0x18, 0x19: ELEM_REPLACE, ELEM_REMOVE */
#define SNDRV_ELEM_REMOVE_NR 0x19
#define SNDRV_TLV_WRITE_NR   0x1b /* 0x1c: TLV_COMMAND */
#define SNDRV_TLV_COMMAND_NR 0x1c
#define SNDRV_PCM_TYPE	     'A'
#define SNDRV_WRITEI_NR	     0x50 /* _IOW('A', 0x50, struct snd_xferi), 32-bit too */
#define SNDRV_WRITEN_NR	     0x52

static __always_inline bool sound_setting(struct file *file, unsigned int cmd)
{
	struct inode *inode = file->f_inode;
	__u32 type = (cmd >> 8) & 0xff, nr = cmd & 0xff;
	bool set;

	if (!(cmd >> 30))
		return false;
	if (type == OSS_MIXER_TYPE && ((cmd >> 30) & IOC_WRITE_BIT) &&
	    (inode->i_mode & S_IFMT) == S_IFCHR && inode->i_rdev >> 20 == OSS_SOUND_MAJOR)
		return true;
	if (type == SNDRV_CTL_TYPE)
		set = (nr >= SNDRV_ELEM_WRITE_NR && nr <= SNDRV_ELEM_UNLOCK_NR) ||
		      (nr >= SNDRV_ELEM_ADD_NR && nr <= SNDRV_ELEM_REMOVE_NR) ||
		      nr == SNDRV_TLV_WRITE_NR || nr == SNDRV_TLV_COMMAND_NR;
	else
		set = type == SNDRV_PCM_TYPE && (nr == SNDRV_WRITEI_NR || nr == SNDRV_WRITEN_NR);
	return set && (inode->i_mode & S_IFMT) == S_IFCHR && inode->i_rdev >> 20 == SOUND_MAJOR;
}

/*
 * A tun or tap interface's settings changed by ioctl (drivers/net/tun.c), through a
 * descriptor of /dev/net/tun attached to a persistent interface (TUNSETIFF: one whose
 * owner is the task's uid, or with no owner or group set, needs no capability):
 * TUNSETPERSIST 0 removes the machine's interface when the descriptor closes,
 * TUNSETOWNER and TUNSETGROUP give it away, TUNSETCARRIER takes its link down, TUNSETLINK,
 * TUNSETOFFLOAD, TUNSETTXFILTER, TUNSETSNDBUF, TUNSETIFINDEX, TUNSETVNET* change it for its
 * next user; none looks at the descriptor's mode. Found by an adversary, round 29: under
 * `expose-ro=/dev/net/tun`, a sandboxed root attached to a persistent tun device and
 * removed it. Judged as an open for writing, in every sandbox: every command of type 'T'
 * with data in, numbers 200 to 226, on 10:200, but TUNSETIFF and TUNSETQUEUE (attaching:
 * reading the interface's packets is what the descriptor is for), the queue's own
 * filter (TUNATTACHFILTER, TUNDETACHFILTER) and TUNSETNOCSUM (does nothing).
 */
#define TUN_IOC_TYPE	   'T'
#define TUNSETNOCSUM_NR	   200
#define TUNSETIFF_NR	   202
#define TUNATTACHFILTER_NR 213
#define TUNDETACHFILTER_NR 214
#define TUNSETQUEUE_NR	   217
#define TUNSETCARRIER_NR   226

static __always_inline bool tun_setting(struct file *file, unsigned int cmd)
{
	struct inode *inode = file->f_inode;
	__u32 nr = cmd & 0xff;

	if (((cmd >> 8) & 0xff) != TUN_IOC_TYPE || (cmd >> 30) != IOC_DIR_WRITE ||
	    nr < TUNSETNOCSUM_NR || nr > TUNSETCARRIER_NR || nr == TUNSETNOCSUM_NR ||
	    nr == TUNSETIFF_NR || nr == TUNATTACHFILTER_NR || nr == TUNDETACHFILTER_NR ||
	    nr == TUNSETQUEUE_NR)
		return false;
	return (inode->i_mode & S_IFMT) == S_IFCHR && inode->i_rdev == TUN_DEV;
}

/* A watchdog's settings (watchdog_cdev): type 'W', numbers 4 (SETOPTIONS), 5 (KEEPALIVE),
 * 6 (SETTIMEOUT) and 8 (SETPRETIMEOUT); its queries stay free. */
#define WDIOC_TYPE 'W'

static __always_inline bool watchdog_setting(struct file *file, unsigned int cmd)
{
	__u32 nr = cmd & 0xff;

	if (((cmd >> 8) & 0xff) != WDIOC_TYPE || (nr != 4 && nr != 5 && nr != 6 && nr != 8))
		return false;
	return (file->f_inode->i_mode & S_IFMT) == S_IFCHR && watchdog_cdev(file->f_inode);
}

/*
 * Three more devices set by ioctl through a descriptor of any mode (found by an adversary,
 * round 31: under `expose-ro=/dev`, a sandboxed root, who owns them, drove each through a
 * descriptor open for reading):
 *   vhost (drivers/vhost: /dev/vhost-net, /dev/vhost-vsock, vhost-scsi, vhost-vdpa), type
 *     0xAF: VHOST_SET_OWNER and the rings' set-up make the program the device's driver:
 *     vhost-net sends the frames of its rings through a tun interface into the machine's
 *     network stack, vhost-vsock speaks AF_VSOCK to the machine's listeners as a guest
 *     (past every net= rule, past lsm/socket_create), and VHOST_VSOCK_SET_GUEST_CID, which
 *     needs no owner, takes a virtual machine's CID (its next start fails, EADDRINUSE).
 *     Every command but the reads (_IOR).
 *   uinput (/dev/uinput, 10:223), type 'U': UI_DEV_SETUP and UI_DEV_CREATE add an input
 *     device of the program's name and ids to the machine (the user's session opens it,
 *     udev runs its rules for it); write(2), which injects its events, needs one open for
 *     writing. Every command but the reads (UI_GET_VERSION, UI_GET_SYSNAME).
 *   rfkill (/dev/rfkill, 10:242): RFKILL_IOCTL_NOINPUT turns the kernel's handling of the
 *     machine's radio keys off (the airplane-mode key does nothing) until the descriptor
 *     closes; write(2), which blocks a radio, needs one open for writing.
 * Judged as an open for writing of the device, as the seven above.
 */
#define VHOST_IOC_TYPE	     0xAF
#define PP_MAJOR	     99u /* ppdev, /dev/parportN (round 32): its lines, see below */
#define LP_MAJOR	     6u	 /* lp, /dev/lpN (round 32) */
#define LP_IOC_TYPE	     0x06
#define IOC_DIR_READ	     2u
#define UINPUT_IOC_TYPE	     'U'
#define RFKILL_DEV	     ((10u << 20) | 242)
#define RFKILL_IOCTL_NOINPUT 0x5201 /* _IO('R', 1) */

static __always_inline bool misc_device_setting(struct file *file, unsigned int cmd)
{
	struct inode *inode = file->f_inode;
	__u32 type = (cmd >> 8) & 0xff;

	if ((inode->i_mode & S_IFMT) != S_IFCHR)
		return false;
	if (type == VHOST_IOC_TYPE)
		return (cmd >> 30) != IOC_DIR_READ;
	/* a parallel port (drivers/char/ppdev.c): PPCLAIM takes it from the printer's driver,
	 * PPWDATA and PPWCONTROL set its data and control lines, PPSETMODE, PPNEGOT,
	 * PPSETFLAGS the rest; found by an adversary, round 32, under `expose-ro=/dev`.
	 * Every command but the reads (_IOR). */
	if (inode->i_rdev >> 20 == PP_MAJOR)
		return (cmd >> 30) != IOC_DIR_READ;
	/* and its printer (drivers/char/lp.c, /dev/lpN): LPRESET resets the printer (a job
	 * cut), LPCHAR, LPTIME, LPWAIT, LPABORT, LPABORTOPEN, LPCAREFUL, LPSETTIMEOUT set the
	 * port's driver for its next user (the print spooler); its reads (LPGETIRQ,
	 * LPGETSTATUS, LPGETSTATS, LPGETFLAGS) stay free */
	if (inode->i_rdev >> 20 == LP_MAJOR && type == LP_IOC_TYPE)
		return (cmd & 0xff) != 0x06 && (cmd & 0xff) != 0x0B && (cmd & 0xff) != 0x0D &&
		       (cmd & 0xff) != 0x0E;
	if (type == UINPUT_IOC_TYPE)
		return (cmd >> 30) != IOC_DIR_READ && inode->i_rdev == UINPUT_DEV;
	return cmd == RFKILL_IOCTL_NOINPUT && inode->i_rdev == RFKILL_DEV;
}

/*
 * A framebuffer's display changed by ioctl (drivers/video/fbdev/core/fb_chrdev.c, /dev/fbN,
 * major 29), through a descriptor of any mode: FBIOBLANK blanks (or powers down) the
 * screen, FBIOPUT_VSCREENINFO sets its mode, FBIOPUTCMAP its colours, FBIOPAN_DISPLAY
 * shows another part of its memory, FBIOPUT_CON2FBMAP moves a console to it, FBIO_CURSOR,
 * FBIO_ALLOC, FBIO_FREE, FBIOPUT_MODEINFO and drivers' own commands set the rest; only
 * write(2) and a shared writable mapping want a descriptor open for writing. Found by an
 * adversary, round 32: under `expose-ro=/dev`, a sandboxed root blanked the console's
 * framebuffer through a descriptor open for reading. Every command but the reads
 * (FBIOGET_VSCREENINFO, FSCREENINFO, FBIOGETCMAP, FBIOGET_CON2FBMAP, FBIOGET_VBLANK,
 * FBIOGET_GLYPH, FBIOGET_HWCINFO, FBIOGET_DISPINFO) and FBIO_WAITFORVSYNC.
 */
#define FB_MAJOR 29u

static __always_inline bool framebuffer_setting(struct file *file, unsigned int cmd)
{
	struct inode *inode = file->f_inode;

	if ((inode->i_mode & S_IFMT) != S_IFCHR || inode->i_rdev >> 20 != FB_MAJOR)
		return false;
	if (((cmd >> 8) & 0xff) != 'F')
		return true;
	switch (cmd & 0xff) {
	case 0x00: /* FBIOGET_VSCREENINFO */
	case 0x02: /* FBIOGET_FSCREENINFO */
	case 0x04: /* FBIOGETCMAP */
	case 0x0F: /* FBIOGET_CON2FBMAP */
	case 0x12: /* FBIOGET_VBLANK */
	case 0x15: /* FBIOGET_GLYPH */
	case 0x16: /* FBIOGET_HWCINFO */
	case 0x18: /* FBIOGET_DISPINFO */
	case 0x20: /* FBIO_WAITFORVSYNC */
		return false;
	}
	return true;
}

/*
 * A CD or DVD drive's tray, door and playing driven by ioctl (drivers/cdrom/cdrom.c, and
 * the SCSI layer's door lock), through a descriptor of any mode: CDROMEJECT opens the
 * tray (the disc out of the machine), CDROMCLOSETRAY shuts it, CDROM_LOCKDOOR and
 * SCSI_IOCTL_DOORLOCK lock it against the user's button, CDROMEJECT_SW and
 * CDROM_SET_OPTIONS, CLEAR_OPTIONS set the drive's options for every later user (the
 * tray opened at each last close, the door locked), CDROM_SELECT_SPEED, SELECT_DISC and
 * the audio commands (CDROMPLAYMSF, PLAYTRKIND, PLAYBLK, PAUSE, RESUME, STOP, START,
 * VOLCTRL) drive the drive itself; none looks at the descriptor's mode (only the reset
 * and the debug switch want CAP_SYS_ADMIN). Found by an adversary, round 32: under
 * `expose-ro=/dev/sr0`, a sandboxed root ejected the drive's tray through a descriptor
 * open for reading (the `eject` tool opens it so). Judged as an open for writing of the
 * block device (a rule naming it, block_device_verdict); reading the disc, its table of
 * contents and the drive's status stay free.
 */
#define CDROM_IOC_TYPE 0x53

static __always_inline bool cdrom_setting(struct file *file, unsigned int cmd)
{
	if (cmd >> 16 || ((cmd >> 8) & 0xff) != CDROM_IOC_TYPE ||
	    (file->f_inode->i_mode & S_IFMT) != S_IFBLK)
		return false;
	switch (cmd & 0xff) {
	case 0x01: /* CDROMPAUSE */
	case 0x02: /* CDROMRESUME */
	case 0x03: /* CDROMPLAYMSF */
	case 0x04: /* CDROMPLAYTRKIND */
	case 0x07: /* CDROMSTOP */
	case 0x08: /* CDROMSTART */
	case 0x09: /* CDROMEJECT */
	case 0x0A: /* CDROMVOLCTRL */
	case 0x0F: /* CDROMEJECT_SW */
	case 0x17: /* CDROMPLAYBLK */
	case 0x19: /* CDROMCLOSETRAY */
	case 0x20: /* CDROM_SET_OPTIONS */
	case 0x21: /* CDROM_CLEAR_OPTIONS */
	case 0x22: /* CDROM_SELECT_SPEED */
	case 0x23: /* CDROM_SELECT_DISC */
	case 0x29: /* CDROM_LOCKDOOR */
	case 0x80: /* SCSI_IOCTL_DOORLOCK */
	case 0x81: /* SCSI_IOCTL_DOORUNLOCK */
		return true;
	}
	return false;
}

/*
 * A SCSI command sent by ioctl through a descriptor open for reading: SG_IO (a block
 * device's, /dev/sgN's, /dev/bsg's), SCSI_IOCTL_SEND_COMMAND and CDROM_SEND_PACKET let any
 * opener send the commands the SCSI layer calls safe to read with (scsi_cmd_allowed), and
 * START STOP UNIT is one: with LoEj it ejects a drive's tray, without it stops a disk.
 * Found by an adversary, round 32: under `expose-ro=/dev/sr0`, a sandboxed root with no
 * capability ejected the tray by SG_IO, past cdrom_setting. Which command the packet
 * carries is in the program's memory, which another thread can change between this hook
 * and the driver's copy: every such packet judged as an open for writing.
 */
#define SG_IO			0x2285
#define SCSI_IOCTL_SEND_COMMAND 1
#define CDROM_SEND_PACKET	0x5393
#define SCSI_GENERIC_MAJOR	21u

static __always_inline bool scsi_command(struct file *file, unsigned int cmd)
{
	struct inode *inode = file->f_inode;
	umode_t fmt = inode->i_mode & S_IFMT;

	if (cmd == SG_IO)
		return fmt == S_IFBLK || fmt == S_IFCHR;
	if (cmd == SCSI_IOCTL_SEND_COMMAND)
		return fmt == S_IFBLK ||
		       (fmt == S_IFCHR && inode->i_rdev >> 20 == SCSI_GENERIC_MAJOR);
	return cmd == CDROM_SEND_PACKET && fmt == S_IFBLK;
}

/*
 * A GPIO chip's lines taken through /dev/gpiochipN open for reading
 * (drivers/gpio/gpiolib-cdev.c): GPIO_V2_GET_LINE_IOCTL, and version 1's
 * GPIO_GET_LINEHANDLE_IOCTL and GPIO_GET_LINEEVENT_IOCTL, request lines as outputs (their
 * values then set through the request's own descriptor: a relay, a reset line, a board's
 * power) or inputs, and hold them from their other users; the chip looks at no descriptor
 * mode. Found by an adversary, round 32: under `expose-ro=/dev`, a sandboxed root set a
 * gpio-sim chip's line. Which direction a request asks is in the program's memory,
 * changeable between this hook and the driver's copy: every request judged as an open
 * for writing; the chip's and lines' information stays free. The chip's major is dynamic:
 * its devices are those whose cdev's parent is named gpiochipN.
 */
#define GPIO_IOC_TYPE 0xB4

static __always_inline bool gpio_line_request(struct file *file, unsigned int cmd)
{
	struct inode *inode = file->f_inode;
	const char *name;
	char n[9];

	if (((cmd >> 8) & 0xff) != GPIO_IOC_TYPE ||
	    ((cmd & 0xff) != 0x03 && (cmd & 0xff) != 0x04 && (cmd & 0xff) != 0x07) ||
	    (inode->i_mode & S_IFMT) != S_IFCHR)
		return false;
	name = BPF_CORE_READ(inode, i_cdev, kobj.parent, name);
	return name && !bpf_probe_read_kernel(n, sizeof(n), name) && n[0] == 'g' && n[1] == 'p' &&
	       n[2] == 'i' && n[3] == 'o' && n[4] == 'c' && n[5] == 'h' && n[6] == 'i' &&
	       n[7] == 'p' && n[8] >= '0' && n[8] <= '9';
}

/*
 * A serial line's signals driven through a terminal descriptor open for reading (found by
 * an adversary, round 31): the tty core looks at no descriptor mode for its modem lines
 * (TIOCMSET, TIOCMBIS, TIOCMBIC: DTR and RTS, which reset a board, signal a UPS to cut
 * the power, hang a modem up), its breaks (TIOCSBRK, TIOCCBRK, TCSBRK with 0, TCSBRKP:
 * tcsendbreak), its line settings (TIOCSSERIAL: closing wait, custom divisor, low
 * latency) and RS-485 (TIOCSRS485); under `expose-ro=/dev/ttyS0`, a sandboxed root
 * dropped the line's DTR. Judged as an open for writing of the terminal, through a
 * descriptor not open for writing (one open for writing was judged so at its open); a
 * pty (devpts, /dev/ptmx) has no such line, and is left to its session's rules.
 * And its settings (round 32): the termios setters (TCSETS*, TCSETA*, TCSETS2*: `stty -F`
 * opens for reading) change the speed and framing for the line's next opener, and a
 * speed of B0 hangs it up (the serial core drops DTR and RTS, as TIOCMBIC did); with
 * TIOCSSOFTCAR (CLOCAL), TCXONC (its output stopped), TIOCEXCL and TIOCNXCL (its later
 * opens refused, or let in). A terminal whose session is led outside was refused them
 * before (bpf/tty.bpf.h sets_terminal); this is a line no session uses, or the
 * sandbox's own (setsid() and an open for reading make it so). Not a virtual console's
 * termios: it has no line, they are its session's modes.
 */
#define TIOCNXCL     0x540D
#define TIOCSSOFTCAR 0x541A
#define TCSBRK	     0x5409
#define TIOCMBIS     0x5416
#define TIOCMBIC     0x5417
#define TIOCMSET     0x5418
#define TIOCSSERIAL  0x541F
#define TCSBRKP	     0x5425
#define TIOCSBRK     0x5427
#define TIOCCBRK     0x5428
#define TIOCSRS485   0x542F

static __always_inline bool line_setting(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct inode *inode = file->f_inode;
	struct tty_struct *tty;
	bool settings = false;

	switch (cmd) {
	case TCSBRK:
		if (arg) /* tcdrain(): no break */
			return false;
		break;
	case TIOCMBIS:
	case TIOCMBIC:
	case TIOCMSET:
	case TIOCSSERIAL:
	case TCSBRKP:
	case TIOCSBRK:
	case TIOCCBRK:
	case TIOCSRS485:
		break;
	default:
		if (!sets_terminal(cmd) && cmd != TIOCNXCL && cmd != TIOCSSOFTCAR)
			return false;
		/* the foreground group, the window size and a flush stay free */
		if (cmd == TIOCSPGRP || cmd == TIOCSWINSZ || cmd == TCFLSH)
			return false;
		settings = true;
	}
	if ((file->f_mode & FMODE_WRITE) || (inode->i_mode & S_IFMT) != S_IFCHR ||
	    inode->i_rdev == PTMX_DEV || BPF_CORE_READ(inode, i_sb, s_magic) == DEVPTS_SUPER_MAGIC)
		return false;
	tty = tty_of(file);
	/* a virtual console has no line: its settings are its session's modes (its own
	 * setters are sets_console's, bpf/tty.bpf.h) */
	return tty && !(settings && virtual_console(tty));
}

/* A device's state changed by ioctl through a descriptor of any mode (the fifteen above):
 * judged as an open for writing of the device, once for all fifteen. */
static __always_inline int check_device_ioctl(struct file *file, unsigned int cmd,
					      unsigned long arg)
{
	if (!i2c_transfer(file, cmd) && !hid_report_sent(file, cmd) && !input_setting(file, cmd) &&
	    !rtc_setting(file, cmd) && !sound_setting(file, cmd) && !tun_setting(file, cmd) &&
	    !watchdog_setting(file, cmd) && !misc_device_setting(file, cmd) &&
	    !framebuffer_setting(file, cmd) && !cdrom_setting(file, cmd) &&
	    !scsi_command(file, cmd) && !gpio_line_request(file, cmd) &&
	    !line_setting(file, cmd, arg))
		return 0;
	return judged_as_write_open(file, false);
}

static __always_inline int check_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	int err = check_tty_ioctl(file, cmd);

	if (!err)
		err = check_fs_key_ioctl(file, cmd);
	if (!err)
		err = check_blk_write_ioctl(file, cmd);
	if (!err)
		err = check_loop_ioctl(file, cmd);
	if (!err)
		err = check_uffd_ioctl(file, cmd);
	if (!err)
		err = check_device_ioctl(file, cmd, arg);
	return err ? err : check_attrs_ioctl(file, cmd);
}

SEC("lsm/file_ioctl")
int BPF_PROG(pysb_file_ioctl, struct file *file, unsigned int cmd, unsigned long arg)
{
	struct tty_arg a = { .file = (__u64)file };

	if (cmd == TIOCSIG || cmd == TIOCSPTLCK)
		return pysb_master_ioctl(&a) ? -EPERM : 0;
	return check_ioctl(file, cmd, arg);
}

SEC("lsm/file_ioctl_compat")
int BPF_PROG(pysb_file_ioctl_compat, struct file *file, unsigned int cmd, unsigned long arg)
{
	struct tty_arg a = { .file = (__u64)file };

	if (cmd == TIOCSIG || cmd == TIOCSPTLCK)
		return pysb_master_ioctl(&a) ? -EPERM : 0;
	return check_ioctl(file, cmd, arg);
}

/* flock(2), fcntl(F_SETLK*) and leases all come here with F_RDLCK, F_WRLCK or F_UNLCK. */
SEC("lsm/file_lock")
int BPF_PROG(pysb_file_lock, struct file *file, unsigned int cmd)
{
	if (cmd != F_WRLCK)
		return 0;
	return check_lock(file);
}

#define F_SETOWN    8
#define F_SETOWN_EX 15
#define F_SETDELEG  1040 /* 6.19+: a lease, of a file or a directory, by another name */

/* One program for both concerns: the SIGIO owner's record must fit (bpf/signal.bpf.c,
 * sigio_owner_reserve); a lease of either kind, set by fcntl before it reaches file_lock
 * as F_RDLCK/F_WRLCK, is a lock. A delegation is a lease too: every outside open for
 * writing (or create in the directory) waits for its break. Its argument is a pointer,
 * not read here: releasing one needs WRITE too, and one is never held without it. */
SEC("lsm/file_fcntl")
int BPF_PROG(pysb_file_fcntl, struct file *file, unsigned int cmd, unsigned long arg)
{
	if (cmd == F_SETOWN || cmd == F_SETOWN_EX)
		return sigio_owner_reserve(file);
	if (cmd == F_SETDELEG || (cmd == F_SETLEASE && arg != F_UNLCK))
		return check_lock(file);
	return 0;
}

/* Does chown(uid, gid) leave the owner and the mode as they are? -1 keeps either; a
 * set-ID file loses its bits even to its own owner again. The ids are kuid_t and kgid_t,
 * structs passed by value: read as the arguments' words. */
static __always_inline bool chown_changes_nothing(void *ctx, struct inode *inode)
{
	__u64 uid, gid;
	__u16 mode = BPF_CORE_READ(inode, i_mode);

	if (bpf_get_func_arg(ctx, 1, &uid) || bpf_get_func_arg(ctx, 2, &gid))
		return false;
	if ((mode & S_IFMT) != S_IFDIR && (mode & (S_ISUID | S_ISGID)))
		return false;
	return ((__u32)uid == (__u32)-1 || (__u32)uid == BPF_CORE_READ(inode, i_uid.val)) &&
	       ((__u32)gid == (__u32)-1 || (__u32)gid == BPF_CORE_READ(inode, i_gid.val));
}

/* The owner again (GNU tar as root on the archive's ./, cp -a): WRITE on the file is
 * enough, as for a chmod to the same mode. */
SEC("lsm/path_chown")
int BPF_PROG(pysb_path_chown, const struct path *path)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	if (chown_changes_nothing(ctx, BPF_CORE_READ(path, dentry, d_inode)))
		return check(cfg, cgid, PYSB_OP_CHOWN, PYSB_ACC_WRITE, path->dentry, path->mnt);
	return check_meta(cfg, cgid, PYSB_OP_CHOWN, path->dentry, path->mnt);
}

SEC("lsm/path_truncate")
int BPF_PROG(pysb_path_truncate, const struct path *path)
{
	return check_path(PYSB_OP_TRUNCATE, PYSB_ACC_WRITE, path);
}

SEC("lsm/file_truncate")
int BPF_PROG(pysb_file_truncate, struct file *file)
{
	return check_path(PYSB_OP_TRUNCATE, PYSB_ACC_WRITE, &file->f_path);
}

#define MAY_WRITE 0x2
#define MAY_READ  0x4

/* /proc/PID/mem or /proc/PID/task/TID/mem: a procfs file named "mem" of a task. */
static __always_inline bool proc_mem_file(struct file *file)
{
	struct dentry *d = file->f_path.dentry;
	char n[4];

	return d->d_name.len == 3 && !bpf_probe_read_kernel(n, sizeof(n), d->d_name.name) &&
	       n[0] == 'm' && n[1] == 'e' && n[2] == 'm' && !n[3];
}

/*
 * Reads and writes the kernel judges only at open, through a descriptor opened before
 * the sandbox (found by an adversary, round 23). attach refuses a process whose
 * descriptor table holds a cgroup file open for writing or another process's memory file
 * (user/lib/drivers.c), but a file kept only in an io_uring ring's fixed-file table
 * (IORING_REGISTER_FILES, then close), of a ring kept only as a registered ring
 * (IORING_REGISTER_RING_FDS, then close), is in no descriptor table: an IORING_OP_WRITE
 * of "0" to the root's cgroup.procs moved the attached process out, and one to
 * /proc/PID/mem wrote the memory of a process outside. Every read and write, by any path
 * (read, write, io_uring, splice, aio), passes here: the file system is compared first,
 * so every other read pays the trampoline and three loads, every other write a few
 * compares more (kernel_knob), never the sandbox lookup; procfs pays a name compare.
 * And only on a machine where a process was confined in place since the instance was
 * loaded: a machine that only uses `run` pays nothing.
 */
SEC("lsm/file_permission")
int BPF_PROG(pysb_file_permission, struct file *file, int mask)
{
	struct inode *inode = file->f_inode;
	unsigned long magic = inode->i_sb->s_magic;
	struct pysb_sandbox_cfg *cfg;
	struct proc_inode *pi;
	struct task_struct *t;
	__u64 cgid;

	if (magic == PROC_SUPER_MAGIC) {
		if (!(mask & (MAY_READ | MAY_WRITE)))
			return 0;
		if (!proc_mem_file(file))
			/* a sysctl, /proc/sysrq-trigger, another process's settings: the
			 * kernel checks their mode at open, not the capability sethostname,
			 * a module path or core_pattern's helper would need */
			return (mask & MAY_WRITE) ? held_knob_write(file) : 0;
	} else if (!(mask & MAY_WRITE)) {
		return 0;
	} else if (magic != CGROUP2_SUPER_MAGIC && magic != CGROUP_SUPER_MAGIC) {
		if (kernel_knob(inode, magic))
			return held_knob_write(file);
		return inode->i_rdev == PTMX_DEV ? held_master_write(file) : 0;
	}
	cfg = current_sandbox(&cgid);
	/* Only a process confined in place can hold such a descriptor from before (a run's
	 * program starts with what its caller passed): attached on demand, by the first
	 * attach or daemon (user/kernel/loader.c, inplace_progs), it judges their sandboxes
	 * alone, so whether it is attached changes no run's verdict. */
	if (!cfg || !(cfg->flags & PYSB_SB_INPLACE))
		return 0;
	if (magic != PROC_SUPER_MAGIC)
		return deny_self_path(cfg, cgid, PYSB_OP_CGROUP_ESCAPE, PYSB_ACC_WRITE,
				      file->f_path.dentry, file->f_path.mnt, EPERM);
	pi = (struct proc_inode *)((void *)inode -
				   bpf_core_field_offset(struct proc_inode, vfs_inode));
	t = pid_task_of(BPF_CORE_READ(pi, pid));
	if (!t || task_under(t, cgid))
		return 0; /* gone, or the sandbox's own (its threads, its children) */
	return outside_denied(cfg, cgid, PYSB_OP_PTRACE, t);
}

#define ATTR_MODE  (1 << 0)
#define ATTR_UID   (1 << 1)
#define ATTR_GID   (1 << 2)
#define ATTR_SIZE  (1 << 3)
#define ATTR_ATIME (1 << 4)
#define ATTR_MTIME (1 << 5)

/* Only what no path hook sees (utimes): mode, owner and size went through path_*. */
static __always_inline int check_setattr(struct dentry *d, struct iattr *attr)
{
	struct pysb_sandbox_cfg *cfg;
	unsigned int valid;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg)
		return 0;
	if (overlay_internal())
		return 0; /* overlayfs on its layers: the overlay file was judged */
	valid = BPF_CORE_READ(attr, ia_valid);
	if (!(valid & (ATTR_ATIME | ATTR_MTIME)) ||
	    (valid & (ATTR_MODE | ATTR_UID | ATTR_GID | ATTR_SIZE)))
		return 0;
	return check(cfg, cgid, PYSB_OP_SETATTR, PYSB_ACC_WRITE, d, NULL);
}

/* inode_setattr gained an idmap first argument after 6.1: one program per signature, the
 * loader keeps the one that matches this kernel (loader.c, adapt_to_kernel). */
SEC("lsm/inode_setattr")
int BPF_PROG(pysb_inode_setattr, struct dentry *dentry, struct iattr *attr)
{
	return check_setattr(dentry, attr);
}

SEC("lsm/inode_setattr")
int BPF_PROG(pysb_inode_setattr_idmap, void *idmap, struct dentry *dentry, struct iattr *attr)
{
	return check_setattr(dentry, attr);
}

/* An extended attribute, an ACL or the flags changed by path: metadata (check_meta,
 * dentry-only walk); not overlayfs' own calls on its layers (copy-up, opaque/impure
 * marks). */
static __always_inline int check_xattr_change(__u16 op, struct dentry *dentry)
{
	struct pysb_sandbox_cfg *cfg;
	__u64 cgid;

	cfg = current_sandbox(&cgid);
	if (!cfg || overlay_internal())
		return 0;
	return check_meta(cfg, cgid, op, dentry, NULL);
}

/* Both hooks take (mnt_userns or idmap, dentry, ...) on every kernel we support. */
SEC("lsm/inode_setxattr")
int BPF_PROG(pysb_inode_setxattr, void *idmap, struct dentry *dentry)
{
	return check_xattr_change(PYSB_OP_SETXATTR, dentry);
}

SEC("lsm/inode_removexattr")
int BPF_PROG(pysb_inode_removexattr, void *idmap, struct dentry *dentry)
{
	return check_xattr_change(PYSB_OP_REMOVEXATTR, dentry);
}

/*
 * POSIX ACLs: a chmod by another name (other::rw on a file the task owns), needing WRITE
 * as chmod does. From 6.2 on, setxattr and removexattr of system.posix_acl_access and
 * system.posix_acl_default go to vfs_set_acl and vfs_remove_acl, whose hooks these are,
 * and never reach inode_setxattr (optional hooks: before 6.2 those cover them).
 */
SEC("lsm/inode_set_acl")
int BPF_PROG(pysb_inode_set_acl, void *idmap, struct dentry *dentry)
{
	return check_xattr_change(PYSB_OP_SETXATTR, dentry);
}

SEC("lsm/inode_remove_acl")
int BPF_PROG(pysb_inode_remove_acl, void *idmap, struct dentry *dentry)
{
	return check_xattr_change(PYSB_OP_REMOVEXATTR, dentry);
}

/*
 * file_setattr(2) (6.17+) sets the flags and project id of FS_IOC_FSSETXATTR by path, an
 * O_PATH descriptor included, with no open and no ioctl: metadata, as the ioctl (optional
 * hook; from 6.17 on the ioctls come here too, after file_ioctl).
 */
SEC("lsm/inode_file_setattr")
int BPF_PROG(pysb_inode_file_setattr, struct dentry *dentry)
{
	return check_xattr_change(PYSB_OP_SETATTR, dentry);
}

/* PROT_EXEC of a file. Anonymous memory and internal mounts (memfd) carry no file rule:
 * their code could not be opened from a path the sandbox may not read anyway. */
static __always_inline int check_exec_map(__u16 op, struct file *file, unsigned long prot)
{
	if (!file || !(prot & PROT_EXEC) || on_internal_mount(&file->f_path))
		return 0;
	return check_path(op, PYSB_ACC_EXEC, &file->f_path);
}

/* A shared writable mapping of a kernel_knob() file (a PCI resource in sysfs, /dev/mem)
 * writes it with no write(2): through a descriptor held from before, judged as its writes
 * (file_permission). Every other mapping pays two bit tests. */
static __always_inline bool knob_shared_write(struct file *file, unsigned long prot, bool shared)
{
	struct inode *inode;

	if (!file || !(prot & PROT_WRITE) || !shared)
		return false;
	inode = file->f_inode;
	return kernel_knob(inode, inode->i_sb->s_magic);
}

SEC("lsm/mmap_file")
int BPF_PROG(pysb_mmap_file, struct file *file, unsigned long reqprot, unsigned long prot,
	     unsigned long flags)
{
	int ret = 0;

	if (knob_shared_write(file, prot, (flags & MAP_TYPE) != MAP_PRIVATE))
		ret = held_knob_write(file);
	return ret ?: check_exec_map(PYSB_OP_MMAP_EXEC, file, prot);
}

SEC("lsm/file_mprotect")
int BPF_PROG(pysb_file_mprotect, struct vm_area_struct *vma, unsigned long reqprot,
	     unsigned long prot)
{
	struct file *file = vma->vm_file;
	int ret = 0;

	if (knob_shared_write(file, prot, vma->vm_flags & VM_SHARED))
		ret = held_knob_write(file);
	return ret ?: check_exec_map(PYSB_OP_MPROTECT_EXEC, file, prot);
}

/* An overlay mounted (by anyone, after the programs loaded) is noted at once: the first
 * lookup a sandboxed task makes in it runs overlayfs' capability checks on its creator
 * cred before any file hook could note it (bpf/caps.bpf.c). Earlier overlays are noted
 * by the walk the first time a sandboxed task meets them. The overlays among its layers
 * are noted with it (they were mounted before it). */
SEC("lsm/sb_kern_mount")
int BPF_PROG(pysb_sb_kern_mount, const struct super_block *sb)
{
	note_overlay((struct super_block *)sb);
	return 0;
}

/*
 * overlayfs also works under creds it derives from its creator cred (prepare_creds()
 * while overridden: ovl_create_or_link's fsuid/fsgid copy, for instance), whose
 * trusted.* xattr writes check CAP_SYS_ADMIN on them: such a cred is the overlay's too.
 * A task's own creds are never prepared from an overlay's, so nothing else is noted; a
 * noted cred is forgotten when freed, so its address never marks a later cred.
 */
SEC("lsm/cred_prepare")
int BPF_PROG(pysb_cred_prepare, struct cred *new, const struct cred *old, gfp_t gfp)
{
	__u64 o = (__u64)old, n = (__u64) new, *sb;

	sb = bpf_map_lookup_elem(&ovl_creds, &o);
	if (sb && bpf_map_update_elem(&ovl_creds, &n, sb, BPF_ANY))
		return -ENOMEM; /* unnoted, its checks would be judged as the task's */
	return 0;
}

/*
 * Forgets the object at kernel address `addr` in `map`, from a hook every object of its
 * kind passes (each freed cred, each freed inode of the machine): a lock-free lookup, and
 * the delete (which takes the bucket lock) only for the few objects the map holds.
 */
static __always_inline void fs_gen_add(__u64 n)
{
	__u32 zero = 0;
	__u64 *g = bpf_map_lookup_elem(&fs_gen, &zero);

	if (g)
		__sync_fetch_and_add(g, n);
}

static __always_inline void forget_freed(void *map, __u64 addr)
{
	if (bpf_map_lookup_elem(map, &addr))
		bpf_map_delete_elem(map, &addr);
}

SEC("lsm/cred_free")
int BPF_PROG(pysb_cred_free, struct cred *cred)
{
	forget_freed(&ovl_creds, (__u64)cred);
	return 0;
}

/*
 * A label request of the calling thread (struct pysb_label_req): the inode of `dentry`
 * gets a label, or keeps the one it has (an inode has one label, whatever number of
 * sandboxes have rules on it), appended to the request's labels.
 */
static __always_inline void label_inode(struct dentry *dentry)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0, n;
	struct pysb_label_req *r = bpf_map_lookup_elem(&label_reqs, &tid);
	struct pt_regs *regs;
	__u64 inode, label, *have, *next;
	__s32 fd;

	if (!r || r->state != PYSB_LABEL_PENDING)
		return;
	/* The loader's fstatfs(fd) (x86-64: its number, and the descriptor in rdi). */
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!regs || regs->orig_ax != 138)
		return;
	fd = (__s32)regs->di;
	n = r->n;
	if (n >= PYSB_LABEL_BATCH)
		return; /* the loader asks for a batch at most: left unanswered, it reports */
	/* overlayfs' statfs asks its upper layer's within the same call: the first, the
	 * file's own, is the one asked for */
	if (n && r->fd[(n - 1) & (PYSB_LABEL_BATCH - 1)] == fd)
		return;
	inode = (__u64)BPF_CORE_READ(dentry, d_inode);
	next = bpf_map_lookup_elem(&label_next, &zero);
	if (!inode || !next)
		return; /* left pending: the loader reports it */
	have = bpf_map_lookup_elem(&inode_labels, &inode);
	if (!have) {
		__u64 h = label_filter_bit(inode), *w = label_filter_word(h);

		label = __sync_fetch_and_add(next, 1) + 1;
		/* its filter bit first (a fully ordered atomic): whoever finds the label
		 * finds the bit set. No bit, no label. */
		if (!w) {
			r->state = PYSB_LABEL_FULL;
			return;
		}
		__sync_fetch_and_or(w, 1ULL << (h & 63));
		if (!bpf_map_update_elem(&inode_labels, &inode, &label, BPF_NOEXIST)) {
			r->label[n] = label;
			r->fd[n] = fd;
			r->n = n + 1;
			return;
		}
		have = bpf_map_lookup_elem(&inode_labels, &inode); /* labelled meanwhile */
		if (!have) {
			r->state = PYSB_LABEL_FULL;
			return;
		}
	}
	r->label[n] = *have;
	r->fd[n] = fd;
	r->n = n + 1;
}

/* statfs(2), by any task: the loader's way to note the overlays mounted before it loaded
 * the programs (user/kernel/loader.c, note_overlays), and to label the inodes of rule paths.
 * An overlay's layers that are overlays are noted with it, whether or not the loader's
 * mount table lists them (a loader in a chroot does not see the host's root overlay). */
SEC("lsm/sb_statfs")
int BPF_PROG(pysb_sb_statfs, struct dentry *dentry)
{
	note_overlay(BPF_CORE_READ(dentry, d_sb));
	label_inode(dentry);
	return 0;
}

/* An inode is freed: its label goes with it, so the address, reused by another inode,
 * never carries it. (No label can be given between the lookup and the delete: labelling
 * needs a descriptor of the inode, and this one has none left.) */
SEC("lsm/inode_free_security")
int BPF_PROG(pysb_inode_free_security, struct inode *inode)
{
	/* Every inode the machine frees: the filter answers for almost all of them, from the
	 * address's low half taken by a 32-bit move (pysb_low_half: the hash multiplies it,
	 * no arithmetic on a pointer), where bpf_get_func_arg() was a helper call for an LSM
	 * program on 6.1. */
	if (maybe_labelled(pysb_low_half(inode)))
		forget_freed(&inode_labels, (__u64)inode);
	/*
	 * Its address may come back as another directory's (bpf/walk.bpf.c, dir_hit). Only
	 * answers about directories of cacheable file systems are kept, and such an answer
	 * can go stale only once its own directory inode has been freed: the frees of other
	 * directories (/proc/<pid> as processes exit, sysfs, cgroups, overlay and network
	 * file systems) leave every cached answer valid, whatever reuses their memory.
	 */
	if ((inode->i_mode & S_IFMT) == S_IFDIR && cacheable_magic(inode->i_sb->s_magic))
		fs_gen_add(1);
	return 0;
}

#define RENAME_EXCHANGE (1 << 1)

static __always_inline bool is_dir(struct dentry *d)
{
	return (BPF_CORE_READ(d, d_inode, i_mode) & S_IFMT) == S_IFDIR;
}

/* Does this rename move a directory? The same answer at entry and return: a rename
 * changes no dentry's inode. */
static __always_inline bool moves_dir(struct renamedata *rd)
{
	return is_dir(BPF_CORE_READ(rd, old_dentry)) ||
	       ((BPF_CORE_READ(rd, flags) & RENAME_EXCHANGE) &&
		is_dir(BPF_CORE_READ(rd, new_dentry)));
}

/*
 * Every rename, by any task and by the kernel itself (overlayfs, nfsd), goes through
 * vfs_rename; on the file systems whose verdicts are cached, no other path moves a
 * dentry. Counted at entry (and marked in progress) and at return (no longer): a walk
 * that read the tree around the move keeps nothing, and no answer from before is used.
 */
SEC("fentry/vfs_rename")
int BPF_PROG(pysb_rename_enter, struct renamedata *rd)
{
	if (moves_dir(rd))
		fs_gen_add(PYSB_FS_BUSY_ONE + 1);
	return 0;
}

SEC("fexit/vfs_rename")
int BPF_PROG(pysb_rename_exit, struct renamedata *rd, int ret)
{
	if (moves_dir(rd))
		fs_gen_add(1 - PYSB_FS_BUSY_ONE);
	return 0;
}

/* An overlay's super block is going: its creator cred is no longer one (ovl_creds). */
static long forget_overlay(struct bpf_map *map, __u64 *cred, __u64 *sb, __u64 *gone)
{
	if (*sb == *gone)
		bpf_map_delete_elem(map, cred);
	return 0;
}

SEC("lsm/sb_free_security")
int BPF_PROG(pysb_sb_free_security, struct super_block *sb)
{
	__u64 gone = (__u64)sb, *gen;
	__u32 zero = 0;

	/* note_overlay()'s per-CPU memory of checked super blocks is stale from here on */
	gen = bpf_map_lookup_elem(&sb_gen, &zero);
	if (gen)
		__sync_fetch_and_add(gen, 1);

	if (BPF_CORE_READ(sb, s_magic) == OVERLAYFS_SUPER_MAGIC)
		bpf_for_each_map_elem(&ovl_creds, forget_overlay, &gone, 0);
	return 0;
}
