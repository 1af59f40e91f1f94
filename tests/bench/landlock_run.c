/* SPDX-License-Identifier: MIT */
/*
 * Runs a command under a Landlock file-system ruleset, for the benchmarks' side-by-side of
 * kernel enforcement costs (benchmark helper, not a sandbox to rely on).
 *
 *   landlock_run [-r PATH]... [-w PATH]... -- CMD [ARGS...]
 *
 * Every file-system access right the running kernel's Landlock ABI knows is handled
 * (denied unless granted); -r grants reading and executing beneath PATH, -w everything.
 * This is the ruleset firejail's --landlock.enforce --landlock.fs.read=PATH
 * --landlock.fs.execute=PATH --landlock.fs.write=PATH describes (firejail releases after
 * 0.9.72; Debian 12's firejail 0.9.72 was released without Landlock support), so
 * `firejail ... landlock_run ... -- CMD` stands in for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ABI 1 rights; ABI 2 adds REFER, ABI 3 TRUNCATE (not in every libc's headers). */
#define ACC_READ  (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define ACC_ABI1  ((LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1)
#define ACC_REFER (1ULL << 13)
#define ACC_TRUNC (1ULL << 14)

static int add_rule(int ruleset, const char *path, uint64_t access)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = access };
	int ret;

	pb.parent_fd = open(path, O_PATH | O_CLOEXEC);
	if (pb.parent_fd < 0) {
		fprintf(stderr, "landlock_run: %s: %s\n", path, strerror(errno));
		return -1;
	}
	ret = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
	if (ret)
		fprintf(stderr, "landlock_run: adding a rule for %s: %s\n", path, strerror(errno));
	close(pb.parent_fd);
	return ret;
}

int main(int argc, char **argv)
{
	struct landlock_ruleset_attr attr = { .handled_access_fs = ACC_ABI1 };
	uint64_t all;
	int abi, ruleset, opt;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1) {
		fprintf(stderr, "landlock_run: Landlock unavailable (%s): is landlock in the "
				"kernel's lsm= list (cat /sys/kernel/security/lsm)?\n",
			strerror(errno));
		return 125;
	}
	if (abi >= 2)
		attr.handled_access_fs |= ACC_REFER;
	if (abi >= 3)
		attr.handled_access_fs |= ACC_TRUNC;
	all = attr.handled_access_fs;
	ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0) {
		fprintf(stderr, "landlock_run: create_ruleset: %s\n", strerror(errno));
		return 125;
	}
	while ((opt = getopt(argc, argv, "+r:w:")) != -1) {
		if (opt != 'r' && opt != 'w') {
			fprintf(stderr, "usage: landlock_run [-r PATH]... [-w PATH]... -- CMD [ARGS...]\n");
			return 125;
		}
		if (add_rule(ruleset, optarg, opt == 'r' ? ACC_READ : all))
			return 125;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: landlock_run [-r PATH]... [-w PATH]... -- CMD [ARGS...]\n");
		return 125;
	}
	/* restrict_self requires no_new_privs (or CAP_SYS_ADMIN; be explicit). */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_landlock_restrict_self, ruleset, 0)) {
		fprintf(stderr, "landlock_run: restrict_self: %s\n", strerror(errno));
		return 125;
	}
	close(ruleset);
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "landlock_run: cannot execute %s: %s\n", argv[optind], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
