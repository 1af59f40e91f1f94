/* SPDX-License-Identifier: MIT */
/*
 * Capabilities: bpf.capabilities= names, and the child's drop to the granted set before
 * its execve (user/run/runner.c). The kernel side, lsm/capable, is bpf/caps.bpf.c.
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "pysb_abi.h"

/* capabilities(7), by number: CAP_ is added when printed. */
static const char *const CAP_NAMES[] = {
	"CHOWN",
	"DAC_OVERRIDE",
	"DAC_READ_SEARCH",
	"FOWNER",
	"FSETID",
	"KILL",
	"SETGID",
	"SETUID",
	"SETPCAP",
	"LINUX_IMMUTABLE",
	"NET_BIND_SERVICE",
	"NET_BROADCAST",
	"NET_ADMIN",
	"NET_RAW",
	"IPC_LOCK",
	"IPC_OWNER",
	"SYS_MODULE",
	"SYS_RAWIO",
	"SYS_CHROOT",
	"SYS_PTRACE",
	"SYS_PACCT",
	"SYS_ADMIN",
	"SYS_BOOT",
	"SYS_NICE",
	"SYS_RESOURCE",
	"SYS_TIME",
	"SYS_TTY_CONFIG",
	"MKNOD",
	"LEASE",
	"AUDIT_WRITE",
	"AUDIT_CONTROL",
	"SETFCAP",
	"MAC_OVERRIDE",
	"MAC_ADMIN",
	"SYSLOG",
	"WAKE_ALARM",
	"BLOCK_SUSPEND",
	"AUDIT_READ",
	"PERFMON",
	"BPF",
	"CHECKPOINT_RESTORE",
};
#define N_CAPS (sizeof(CAP_NAMES) / sizeof(CAP_NAMES[0]))
_Static_assert(N_CAPS <= PYSB_CAP_MAX, "the capability mask holds every capability");

int cap_from_name(const char *name)
{
	if (!strncasecmp(name, "CAP_", 4))
		name += 4;
	for (size_t i = 0; i < N_CAPS; i++)
		if (!strcasecmp(name, CAP_NAMES[i]))
			return (int)i;
	return -1;
}

const char *cap_name(unsigned cap)
{
	static char buf[N_CAPS][32];

	if (cap >= N_CAPS)
		return NULL;
	if (!buf[cap][0])
		snprintf(buf[cap], sizeof(buf[cap]), "CAP_%s", CAP_NAMES[cap]);
	return buf[cap];
}

const char *caps_str(uint64_t mask, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < PYSB_CAP_MAX; i++) {
		const char *n = cap_name(i);
		char num[16];

		if (!(mask & (1ull << i)))
			continue;
		if (!n) {
			snprintf(num, sizeof(num), "%u", i);
			n = num;
		}
		off += snprintf(buf + off, off < len ? len - off : 0, "%s%s", off ? "," : "", n);
	}
	if (!off)
		snprintf(buf, len, "none");
	return buf;
}

const char *caps_wide(uint64_t mask, unsigned i, char *buf, size_t len)
{
	static const struct {
		const char *name, *why;
	} wide[] = {
		{ "CAP_SYS_ADMIN",
		  "namespaces, mount_setattr/fspick, fanotify, quotas, and much else" },
		{ "CAP_SYS_MODULE", "loading kernel code" },
		{ "CAP_SYS_RAWIO", "raw I/O ports and device access" },
		{ "CAP_MKNOD", "device nodes in an expose-rw directory, then raw reads of disks" },
		{ "CAP_BPF", "BPF programs (pysb-bpf still refuses bpf(2) in the sandbox)" },
		{ "CAP_PERFMON", "system-wide performance monitoring" },
		{ "CAP_SYS_PTRACE", "other processes' memory" },
		{ "CAP_NET_ADMIN", "the machine's network configuration" },
		{ "CAP_SYS_BOOT", "reboot" },
		{ "CAP_DAC_READ_SEARCH", "open_by_handle_at" },
		{ "CAP_SETUID", "any uid" },
		{ "CAP_SETGID", "any gid" },
		{ "CAP_SETFCAP",
		  "file capabilities on a file in an expose-rw tree, for whoever runs it "
		  "outside" },
		{ "CAP_FSETID",
		  "set-user-ID bits kept on writes (the sandbox still refuses to set them)" },
	};

	for (size_t k = 0; k < sizeof(wide) / sizeof(wide[0]); k++) {
		int cap = cap_from_name(wide[k].name);

		if (cap < 0 || !(mask & (1ull << cap)) || i--)
			continue;
		snprintf(buf, len,
			 "bpf.capabilities grants %s: the program reaches %s, beyond what the "
			 "policy's other rules confine",
			 wide[k].name, wide[k].why);
		return buf;
	}
	return NULL;
}

int caps_value(const struct policy_kv *kv, uint64_t *mask, struct diag_list *d)
{
	const char *v = kv->value, *item = v;
	int ret = 0;

	if (!v[strspn(v, " \t")])
		return 0; /* bpf.capabilities= alone: nothing granted */
	for (;;) {
		size_t len = strcspn(item, ","), lead = strspn(item, " \t");
		char name[64];
		int cap;

		while (len > lead && (item[len - 1] == ' ' || item[len - 1] == '\t'))
			len--;
		struct diag_at at = { kv->src.file, kv->src.line,
				      kv->src.col + (unsigned)(item - v + lead) };

		if (len <= lead || len - lead >= sizeof(name)) {
			ret = diag_add(
				d, DIAG_ERROR, at,
				"expected a comma list such as CAP_NET_BIND_SERVICE,CAP_CHOWN",
				"bpf.capabilities=%s: %s capability name", v,
				len <= lead ? "an empty" : "too long a");
		} else {
			memcpy(name, item + lead, len - lead);
			name[len - lead] = '\0';
			cap = cap_from_name(name);
			if (cap < 0) {
				ret = diag_add(
					d, DIAG_ERROR, at,
					"expected names as capabilities(7) spells them, such "
					"as CAP_NET_BIND_SERVICE, CAP_CHOWN, CAP_SYS_TIME "
					"(docs/policy.md)",
					"bpf.capabilities=%s: unknown capability '%s'", v, name);
			} else {
				*mask |= 1ull << cap;
			}
		}
		item += strcspn(item, ",");
		if (!*item)
			break;
		item++;
	}
	return ret;
}

/* ---------------- the child's side: raw system calls only (after clone3, before execve) */

static int capget_v3(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capget, &h, d) ? errno : 0;
}

static int capset_v3(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capset, &h, d) ? errno : 0;
}

uint64_t caps_permitted(void)
{
	struct __user_cap_data_struct d[2];

	if (capget_v3(d))
		return 0;
	return (uint64_t)d[1].permitted << 32 | d[0].permitted;
}

int caps_drop_in_child(uint64_t keep, uid_t uid, gid_t gid, size_t n_groups, const gid_t *groups)
{
	const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
				   SECBIT_NO_SETUID_FIXUP_LOCKED;
	/* Without CAP_SETPCAP (pysb-bpf run by a user holding only CAP_BPF and
	 * CAP_SYS_ADMIN) neither the securebits nor the bounding set can be set; a program
	 * that is not root and has no_new_privs gains nothing from them at its execve. */
	bool nonroot = getuid() && geteuid() && uid != 0;
	struct __user_cap_data_struct d[2];
	uint64_t perm;
	int err;

	/* Before the uid switch: NO_SETUID_FIXUP keeps the granted capabilities across it
	 * (the rest is cleared below); NOROOT: root's execve no longer fills the sets. */
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) && !(errno == EPERM && nonroot))
		return errno;
	if (uid != (uid_t)-1 &&
	    (setgroups(n_groups, groups) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid)))
		return errno;
	for (unsigned long cap = 0; cap < PYSB_CAP_MAX; cap++) {
		if (keep & (1ull << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)) {
			if (errno == EINVAL)
				break; /* past the kernel's last capability */
			if (errno == EPERM && nonroot)
				break;
			return errno;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0))
		return errno;
	err = capget_v3(d);
	if (err)
		return err;
	perm = ((uint64_t)d[1].permitted << 32 | d[0].permitted) & keep;
	for (int i = 0; i < 2; i++)
		d[i].permitted = d[i].effective = d[i].inheritable = (uint32_t)(perm >> (32 * i));
	err = capset_v3(d);
	if (err)
		return err;
	/* Ambient: what survives the execve of a binary without file capabilities. */
	for (unsigned long cap = 0; cap < PYSB_CAP_MAX; cap++)
		if ((perm & (1ull << cap)) &&
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0))
			return errno;
	return 0;
}
