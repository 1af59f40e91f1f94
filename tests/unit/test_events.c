/* SPDX-License-Identifier: MIT */
/*
 * Paths of events from hooks without a mount (PYSB_EV_PATH_FSROOT, user/events/events.c): given
 * the mount point in front from this process's mount table, so that they name the file
 * as the program did. /proc is mounted at /proc here, from its root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "events.h"

static struct pysb_event e;

/* An event of file system `dev` (kernel encoding) whose path is `path`, `flags` set. */
static void event_with(uint32_t dev, const char *path, uint32_t flags)
{
	size_t n = strlen(path);

	memset(&e, 0, sizeof(e));
	e.flags = flags;
	e.dev = dev;
	memcpy(e.path + PYSB_PATH_LEN - n - 1, path, n + 1);
	e.path_off = PYSB_PATH_LEN - n - 1;
	e.path_len = (int32_t)n + 1;
}

static uint32_t kernel_dev_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (major(st.st_dev) << 20) | minor(st.st_dev);
}

static void test_fsroot_path_gets_its_mount_point(void **state)
{
	uint32_t proc = kernel_dev_of("/proc/self");

	(void)state;
	event_with(proc, "/self/status", PYSB_EV_PATH_FSROOT);
	events_resolve_path(&e);
	assert_string_equal(event_path(&e), "/proc/self/status");
	assert_false(e.flags & PYSB_EV_PATH_FSROOT);
	/* the file system's root is its mount point */
	event_with(proc, "/", PYSB_EV_PATH_FSROOT);
	events_resolve_path(&e);
	assert_string_equal(event_path(&e), "/proc");
}

static void test_other_paths_left_alone(void **state)
{
	(void)state;
	/* a path from the task's root (the hook had the mount) */
	event_with(kernel_dev_of("/proc/self"), "/self/status", 0);
	events_resolve_path(&e);
	assert_string_equal(event_path(&e), "/self/status");
	/* a file system mounted nowhere here: left, and flagged */
	event_with(0xfff00fff, "/a/b", PYSB_EV_PATH_FSROOT);
	events_resolve_path(&e);
	assert_string_equal(event_path(&e), "/a/b");
	assert_true(e.flags & PYSB_EV_PATH_FSROOT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fsroot_path_gets_its_mount_point),
		cmocka_unit_test(test_other_paths_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
