/* SPDX-License-Identifier: MIT */
#include <stddef.h>

#include "fsident.h"

/* Magic numbers of <linux/magic.h> (and of file systems that keep theirs private). */
enum {
	EXT4_MAGIC = 0xEF53, /* ext2, ext3, ext4 */
	XFS_MAGIC = 0x58465342,
	BTRFS_MAGIC = 0x9123683E,
	TMPFS_MAGIC = 0x01021994,
	OVERLAY_MAGIC = 0x794c7630,
	NFS_MAGIC = 0x6969,
	SMB2_MAGIC = 0xFE534D42,
	CIFS_MAGIC = 0xFF534D42,
	V9FS_MAGIC = 0x01021997,
	FUSE_MAGIC = 0x65735546, /* FUSE, virtiofs */
	CEPH_MAGIC = 0x00c36400,
	PROC_MAGIC = 0x9fa0,
	SYSFS_MAGIC = 0x62656572,
	DEVPTS_MAGIC = 0x1cd1,
	SQUASHFS_MAGIC = 0x73717368,
	ISOFS_MAGIC = 0x9660,
	ZFS_MAGIC = 0x2fc12fc1,
	F2FS_MAGIC = 0xF2F52010,
	VFAT_MAGIC = 0x4d44,
};

static const struct fs_kind {
	long magic;
	const char *name;
	const char *note;
} kinds[] = {
#define DISK                                                                                \
	"an inode number is reused after deletion: a rule names the inode object, so a "    \
	"deleted rule file or directory passes nothing to a newcomer with its number, and " \
	"one removed and recreated is denied until the next run (or daemon reload)"
#define REMOTE                                                                            \
	"a rule names the inode the client holds: if the server replaces the file or "    \
	"directory, the client makes a new inode, which the rule does not reach (denied " \
	"until the next run); never passed on"
	{ EXT4_MAGIC, "ext4", DISK },
	{ XFS_MAGIC, "xfs", DISK },
	{ BTRFS_MAGIC, "btrfs", DISK },
	{ F2FS_MAGIC, "f2fs", DISK },
	{ ZFS_MAGIC, "zfs", DISK },
	{ VFAT_MAGIC, "vfat", DISK " (inode numbers are made up on each mount)" },
	{ TMPFS_MAGIC, "tmpfs", DISK },
	{ OVERLAY_MAGIC, "overlay",
	  "rules name the overlay's own inodes: the inode numbers of its layers, which repeat "
	  "across layers without xino, play no part; a copy-up keeps the overlay inode" },
	{ NFS_MAGIC, "nfs", REMOTE },
	{ SMB2_MAGIC, "smb2", REMOTE },
	{ CIFS_MAGIC, "cifs", REMOTE },
	{ V9FS_MAGIC, "9p", REMOTE },
	{ FUSE_MAGIC, "fuse", REMOTE " (FUSE and virtiofs: the daemon's node ids decide)" },
	{ CEPH_MAGIC, "ceph", REMOTE },
	{ PROC_MAGIC, "proc",
	  "a rule on a /proc entry lasts as long as the entry (a /proc/<pid> directory goes "
	  "with its process)" },
	{ SYSFS_MAGIC, "sysfs", "a rule on a sysfs entry lasts as long as the kernel object" },
	{ DEVPTS_MAGIC, "devpts", "a rule on a pty lasts as long as the pty" },
	{ SQUASHFS_MAGIC, "squashfs", "read-only: inodes never change" },
	{ ISOFS_MAGIC, "iso9660", "read-only: inodes never change" },
#undef DISK
#undef REMOTE
};

static const struct fs_kind *kind_of(long f_type)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].magic == f_type)
			return &kinds[i];
	return NULL;
}

const char *fs_type_name(long f_type)
{
	const struct fs_kind *k = kind_of(f_type);

	return k ? k->name : NULL;
}

const char *fs_identity_note(long f_type)
{
	const struct fs_kind *k = kind_of(f_type);

	return k ? k->note
		 : "a rule names the inode object the kernel holds for the path; if the file "
		   "system replaces it, the rule does not reach the new one (denied, never "
		   "passed on)";
}
