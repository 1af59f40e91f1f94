/* SPDX-License-Identifier: MIT */
/*
 * The ABI's names (user/lib/abi_names.c) in both directions: every operation the kernel
 * side reports has a name, the name reads back as the operation, and learning's "judged on
 * the directory" set is exactly the operations that create or remove an entry.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "abi_names.h"
#include "pysb_abi.h"

/* Every operation of enum pysb_op and enum pysb_net_op: one that is missing here and in
 * abi_names.c prints as "unknown" in events, and learning cannot read it back. */
static const unsigned ALL_OPS[] = {
	PYSB_OP_OPEN,	       PYSB_OP_MOUNT,	    PYSB_OP_UMOUNT,	    PYSB_OP_PIVOT_ROOT,
	PYSB_OP_CREATE,	       PYSB_OP_MKDIR,	    PYSB_OP_RMDIR,	    PYSB_OP_UNLINK,
	PYSB_OP_RENAME,	       PYSB_OP_LINK,	    PYSB_OP_SYMLINK,	    PYSB_OP_CHMOD,
	PYSB_OP_CHOWN,	       PYSB_OP_TRUNCATE,    PYSB_OP_SETATTR,	    PYSB_OP_SETXATTR,
	PYSB_OP_REMOVEXATTR,   PYSB_OP_EXEC,	    PYSB_OP_MMAP_EXEC,	    PYSB_OP_MPROTECT_EXEC,
	PYSB_OP_RECEIVE_FD,    PYSB_OP_BPF,	    PYSB_OP_PTRACE,	    PYSB_OP_SIGNAL,
	PYSB_OP_CGROUP_ESCAPE, PYSB_OP_KERNEL_LOAD, PYSB_OP_CAPABLE,	    PYSB_OP_IPC,
	PYSB_OP_KEY,	       PYSB_OP_SCHED,	    PYSB_OP_TTY_IOCTL,	    PYSB_OP_GETXATTR,
	PYSB_OP_READLINK,      PYSB_OP_NOTIFY,	    PYSB_OP_SETID_MODE,	    PYSB_OP_LOCK,
	PYSB_OP_KEY_TO_PARENT, PYSB_OP_PIDFD,	    PYSB_OP_SUBVOL_DESTROY, PYSB_OP_SNAPSHOT,
	PYSB_OP_TERMINAL,      PYSB_OP_CONNECT,	    PYSB_OP_SENDMSG,	    PYSB_OP_BIND,
	PYSB_OP_LISTEN,	       PYSB_OP_SOCKET,	    PYSB_OP_NETLINK_SEND,   PYSB_OP_SOURCE_ROUTE,
	PYSB_OP_MULTICAST,
};

static const char *name_of(unsigned op)
{
	return op >= PYSB_OP_CONNECT ? net_op_str(op) : op_str(op);
}

static void test_every_op_named_and_read_back(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ALL_OPS) / sizeof(ALL_OPS[0]); i++) {
		const char *n = name_of(ALL_OPS[i]);

		assert_string_not_equal(n, "unknown");
		assert_int_equal(op_from_name(n), ALL_OPS[i]);
		for (size_t j = 0; j < i; j++) /* names are distinct */
			assert_string_not_equal(n, name_of(ALL_OPS[j]));
	}
	assert_int_equal(op_from_name("no-such-op"), 0);
	assert_string_equal(op_str(PYSB_OP_MAX), "unknown");
}

static void test_on_parent_is_entry_creation_and_removal(void **state)
{
	static const unsigned parent[] = { PYSB_OP_CREATE, PYSB_OP_MKDIR,  PYSB_OP_RMDIR,
					   PYSB_OP_UNLINK, PYSB_OP_RENAME, PYSB_OP_LINK,
					   PYSB_OP_SYMLINK };
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(ALL_OPS) / sizeof(ALL_OPS[0]); i++)
		n += op_on_parent(ALL_OPS[i]);
	assert_int_equal(n, sizeof(parent) / sizeof(parent[0]));
	for (size_t i = 0; i < sizeof(parent) / sizeof(parent[0]); i++)
		assert_true(op_on_parent(op_from_name(op_str(parent[i]))));
	assert_false(op_on_parent(PYSB_OP_OPEN));
	assert_false(op_on_parent(PYSB_OP_LOCK));
}

static void test_access_and_lost_names(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(access_str(PYSB_ACC_READ | PYSB_ACC_EXEC, buf, sizeof(buf)),
			    "read,exec");
	assert_string_equal(access_str(0, buf, sizeof(buf)), "none");
	assert_string_equal(events_lost_name(PYSB_LOST_RINGBUF_FULL), "ringbuf-full");
	assert_string_equal(events_lost_name(PYSB_LOST_MAX), "unknown");
	assert_string_equal(kind_str(PYSB_KIND_SELF), "self");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_op_named_and_read_back),
		cmocka_unit_test(test_on_parent_is_entry_creation_and_removal),
		cmocka_unit_test(test_access_and_lost_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
