/* SPDX-License-Identifier: MIT */
/* probe_features: what the BPF side needs, found or named as missing in a kernel's BTF. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "capture.h"
#include "loader.h"
#include "probe.h"
#include "pysb.skel.h"

/* A BTF with the three enums, holding every value named in `values` (NULL-terminated). */
static struct btf *kernel_btf(const char *const *values)
{
	static const char *const enums[] = { "bpf_func_id", "bpf_map_type", "bpf_attach_type" };
	struct btf *btf = btf__new_empty();

	assert_non_null(btf);
	for (size_t e = 0; e < 3; e++) {
		int n = 0;

		assert_true(btf__add_enum(btf, enums[e], 4) > 0);
		for (const char *const *v = values; *v; v++)
			if ((e == 0 && !strncmp(*v, "BPF_FUNC_", 9)) ||
			    (e == 1 && !strncmp(*v, "BPF_MAP_TYPE_", 13)) ||
			    (e == 2 && strncmp(*v, "BPF_FUNC_", 9) &&
			     strncmp(*v, "BPF_MAP_TYPE_", 13)))
				assert_int_equal(btf__add_enum_value(btf, *v, n++), 0);
	}
	return btf;
}

static const char *const all[] = {
	"BPF_LSM_MAC",
	"BPF_FUNC_get_current_ancestor_cgroup_id",
	"BPF_FUNC_d_path",
	"BPF_FUNC_get_current_task_btf",
	"BPF_FUNC_loop",
	"BPF_FUNC_ringbuf_output",
	"BPF_MAP_TYPE_RINGBUF",
	"BPF_MAP_TYPE_HASH_OF_MAPS",
	"BPF_MAP_TYPE_LPM_TRIE",
	"BPF_MAP_TYPE_TASK_STORAGE",
	"BPF_TRACE_FEXIT",
	"BPF_CGROUP_INET4_CONNECT",
	"BPF_CGROUP_UDP6_SENDMSG",
	NULL,
};

struct features_call {
	const struct btf *btf;
	bool verbose;
};

static int do_features(void *arg)
{
	struct features_call *fc = arg;

	return probe_features(fc->btf, fc->verbose);
}

/* probe_features, with what it prints (stdout and stderr) into `out`. */
static int features(const struct btf *btf, bool verbose, char *out, size_t len)
{
	struct features_call fc = { btf, verbose };

	return capture_output(do_features, &fc, true, out, len);
}

static void kernel_with_everything_passes(void **state)
{
	struct btf *btf = kernel_btf(all);
	char out[8192];

	(void)state;
	assert_int_equal(features(btf, true, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "ok    helper bpf_loop()"));
	assert_non_null(strstr(out, "used for path walks of any depth"));
	assert_null(strstr(out, "missing"));
	/* not verbose: nothing to say */
	assert_int_equal(features(btf, false, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	btf__free(btf);
}

/* A 5.15 kernel: everything but bpf_loop. The refusal names it and the release to get. */
static void kernel_without_bpf_loop_is_refused_by_name(void **state)
{
	const char *older[sizeof(all) / sizeof(all[0])];
	struct btf *btf;
	char out[8192];
	size_t n = 0;

	(void)state;
	for (const char *const *v = all; *v; v++)
		if (strcmp(*v, "BPF_FUNC_loop"))
			older[n++] = *v;
	older[n] = NULL;
	btf = kernel_btf(older);
	assert_int_equal(features(btf, false, out, sizeof(out)), -1);
	assert_non_null(strstr(out, "helper bpf_loop"));
	assert_non_null(strstr(out, "missing (Linux 5.17+), needed for path walks of any depth"));
	/* only the missing one is said */
	assert_null(strstr(out, "bpf_d_path"));
	btf__free(btf);
}

static void kernel_without_lsm_attach_type_is_refused(void **state)
{
	static const char *const none[] = { NULL };
	struct btf *btf = kernel_btf(none);
	char out[8192];

	(void)state;
	assert_int_equal(features(btf, false, out, sizeof(out)), -1);
	assert_non_null(strstr(out, "attach lsm_mac"));
	assert_non_null(strstr(out, "missing (Linux 5.7+)"));
	btf__free(btf);
}

/* The hash naming the pinned instance is computed at build time (scripts/prog_table.c):
 * it must be that of the object the skeleton embeds, or two builds would share a pin
 * directory, or one build would not find its own instance. */
static void object_hash_is_that_of_the_embedded_object(void **state)
{
	size_t sz;
	const unsigned char *p = pysb_bpf__elf_bytes(&sz);
	uint64_t h = 0xcbf29ce484222325ull;

	(void)state;
	assert_true(sz > 0);
	for (size_t i = 0; i < sz; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	assert_true(loader_object_hash() == h);
}

/*
 * One program on each LSM hook: every program a hook carries is one more call through its
 * trampoline, on every such operation of every process on the machine, sandboxed or not
 * (bpf/socket.bpf.c). Concerns that share a hook share its program. The exception is a
 * program written twice for two signatures of the hook, of which the loader loads one
 * (user/kernel/loader.c: pysb_inode_setattr, and pysb_inode_setattr_idmap from 6.3 on).
 */
static void each_lsm_hook_carries_one_program(void **state)
{
	struct bpf_object *obj;
	struct bpf_program *p, *q;
	const unsigned char *bytes;
	size_t sz, n = 0;

	(void)state;
	bytes = pysb_bpf__elf_bytes(&sz);
	obj = bpf_object__open_mem(bytes, sz, NULL);
	assert_non_null(obj);
	bpf_object__for_each_program(p, obj)
	{
		const char *sec = bpf_program__section_name(p);

		if (strncmp(sec, "lsm/", 4) || strstr(bpf_program__name(p), "_idmap"))
			continue;
		n++;
		q = p;
		while ((q = bpf_object__next_program(obj, q)))
			if (!strcmp(sec, bpf_program__section_name(q)) &&
			    !strstr(bpf_program__name(q), "_idmap"))
				fail_msg("%s and %s both on %s", bpf_program__name(p),
					 bpf_program__name(q), sec);
	}
	assert_true(n > 20);
	bpf_object__close(obj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kernel_with_everything_passes),
		cmocka_unit_test(object_hash_is_that_of_the_embedded_object),
		cmocka_unit_test(each_lsm_hook_carries_one_program),
		cmocka_unit_test(kernel_without_bpf_loop_is_refused_by_name),
		cmocka_unit_test(kernel_without_lsm_attach_type_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
