/* SPDX-License-Identifier: MIT */
/*
 * What pysb-bpf assumes about a file system when its file rules name inode objects
 * (docs/design.md, "File identity"): said by `check` for the file systems a policy's
 * rules are on, and by `probe` for the file systems mounted.
 */
#ifndef PYSB_FSIDENT_H
#define PYSB_FSIDENT_H

/* "ext4", "overlay", ... for a statfs(2) f_type; NULL when unknown. */
const char *fs_type_name(long f_type);
/* One sentence: what a rule on that file system names, and what happens to it when the
 * file is deleted, replaced or changed behind the kernel's back. */
const char *fs_identity_note(long f_type);

#endif /* PYSB_FSIDENT_H */
