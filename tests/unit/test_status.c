/* SPDX-License-Identifier: MIT */
/* pysb-bpf status (user/kernel/status.c): records, the mode shown, the table and the JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char tmp[] = "/tmp/pysb-status-XXXXXX";

#include "fixture.h"
#include "status.h"

static char *render(const struct status *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	status_print(f, s);
	fclose(f);
	return buf;
}

static void test_status_nothing_loaded_or_registered(void **state)
{
	char inst[1][64] = { "/sys/fs/bpf/pysb-bpf/0123456789abcdef" };
	struct status s = { 0 };
	json_t *j;
	char *out;

	(void)state;
	out = render(&s);
	assert_string_equal(out, "nothing is confined: no pysb-bpf instance is loaded "
				 "(/sys/fs/bpf/pysb-bpf is empty)\n");
	free(out);
	j = status_json(&s);
	assert_int_equal(json_integer_value(json_object_get(j, "confined")), 0);
	assert_int_equal(json_array_size(json_object_get(j, "sandboxes")), 0);
	assert_int_equal(json_array_size(json_object_get(j, "instances")), 0);
	json_decref(j);
	s.instances = inst;
	s.n_instances = 1;
	out = render(&s);
	assert_string_equal(out, "nothing is confined: no sandbox is registered in "
				 "/sys/fs/bpf/pysb-bpf/0123456789abcdef\n");
	free(out);
}

/* A run (enforce), a daemon binding (audit, its daemon stopped), a learning run whose
 * supervisor died, and an entry with no record (its cgroup gone, counts unreadable). */
static struct status_entry entries[4];

static void fill(struct status *s)
{
	struct status_entry *e = entries;

	memset(entries, 0, sizeof(entries));
	e[0] = (struct status_entry){ .cgid = 4242,
				      .cfg = { .id = 7 },
				      .have_record = true,
				      .owner_running = true,
				      .counts_known = true,
				      .events = 12,
				      .lost = { 1, 2, 0 } };
	e[0].rec = (struct sandbox_record){ .cgid = 4242,
					    .sandbox = 7,
					    .owner = OWNER_RUN,
					    .pid = 1234,
					    .pid_start = 99,
					    .since = 1 };
	strcpy(e[0].rec.policy, "/home/u/app.py-sandboxes");
	strcpy(e[0].rec.mode, "enforce");
	strcpy(e[0].cgroup, "/sys/fs/cgroup/pysb-bpf/run-1234");
	e[1] = (struct status_entry){ .cgid = 77,
				      .cfg = { .id = 9, .flags = PYSB_SB_DAEMON | PYSB_SB_AUDIT },
				      .have_record = true,
				      .counts_known = true,
				      .events = 123456 };
	e[1].rec = (struct sandbox_record){ .cgid = 77, .owner = OWNER_DAEMON, .pid = 55 };
	strcpy(e[1].rec.binding, "web");
	strcpy(e[1].rec.policy, "/etc/pysb-bpf/web.py-sandboxes");
	strcpy(e[1].rec.mode, "audit");
	strcpy(e[1].cgroup, "/sys/fs/cgroup/system.slice/web.service");
	e[2] = (struct status_entry){ .cgid = 5,
				      .cfg = { .id = 3, .flags = PYSB_SB_AUDIT },
				      .have_record = true,
				      .counts_known = true };
	e[2].rec = (struct sandbox_record){ .cgid = 5, .owner = OWNER_RUN, .pid = 8 };
	strcpy(e[2].rec.policy, "/p");
	strcpy(e[2].rec.mode, "learn");
	strcpy(e[2].cgroup, "/sys/fs/cgroup/pysb-bpf/run-8");
	e[3] = (struct status_entry){ .cgid = 31337, .cfg = { .id = 4, .flags = PYSB_SB_EXEC } };
	for (int i = 0; i < 4; i++)
		strcpy(e[i].instance, "/sys/fs/bpf/pysb-bpf/0123456789abcdef");
	memset(s, 0, sizeof(*s));
	s->v = entries;
	s->n = 4;
	s->n_instances = 1;
}

static void test_status_mode_is_the_kernels(void **state)
{
	struct status s;

	(void)state;
	fill(&s);
	assert_string_equal(status_mode(&entries[0]), "enforce");
	assert_string_equal(status_mode(&entries[1]), "audit");
	assert_string_equal(status_mode(&entries[2]), "learn");
	assert_string_equal(status_mode(&entries[3]), "enforce");
	/* a record that says learn or audit cannot make an enforcing sandbox look lax */
	strcpy(entries[0].rec.mode, "learn");
	assert_string_equal(status_mode(&entries[0]), "enforce");
	entries[2].have_record = false;
	assert_string_equal(status_mode(&entries[2]), "audit");
}

/* The columns of every row start where the header's do. */
static void test_status_table_aligned(void **state)
{
	const char *want[] = {
		"4 cgroups confined by pysb-bpf",
		"CGROUP                                   OWNER         MODE       EVENTS    LOST  POLICY",
		"/sys/fs/cgroup/pysb-bpf/run-1234         run 1234      enforce        12       3  /home/u/app.py-sandboxes",
		"/sys/fs/cgroup/system.slice/web.service  daemon:web    audit      123456       0  /etc/pysb-bpf/web.py-sandboxes",
		"/sys/fs/cgroup/pysb-bpf/run-8            run 8 (gone)  learn           0       0  /p",
		"(removed, id 31337)                      ?             enforce         -       -  ?",
	};
	struct status s;
	char *out, *line, *save = NULL;
	size_t i = 0;

	(void)state;
	fill(&s);
	out = render(&s);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
		assert_true(i < sizeof(want) / sizeof(want[0]));
		assert_string_equal(line, want[i]);
	}
	assert_int_equal(i, sizeof(want) / sizeof(want[0]));
	free(out);
	/* an unknown owner of a daemon entry still says it is the daemon's */
	entries[1].have_record = false;
	out = render(&s);
	assert_non_null(strstr(out, "  daemon:?      audit      123456       0  ?\n"));
	free(out);
}

/* A cgroup, a policy path and a binding's name with terminal controls (ESC, a C1 CSI, a
 * newline, a byte that is not UTF-8) come out \xNN, the columns aligned on what is shown
 * (found by a user, round 31: status wrote them raw). */
static void test_status_escapes_terminal_controls(void **state)
{
	struct status s;
	char *out, *row, *head;

	(void)state;
	fill(&s);
	strcpy(entries[0].rec.policy, "/home/u/\033[31mred/.py-sandboxes");
	strcpy(entries[0].cgroup, "/sys/fs/cgroup/x\nforged\xc2\x9b"
				  "2K");
	strcpy(entries[1].rec.binding, "w\x9b\x07"
				       "b");
	out = render(&s);
	assert_null(strchr(out, '\033'));
	assert_null(strchr(out, '\a'));
	assert_null(strstr(out, "\xc2\x9b"));
	assert_null(strstr(out, "\nforged"));
	assert_non_null(strstr(out, "  /home/u/\\x1b[31mred/.py-sandboxes\n"));
	row = strstr(out, "\n/sys/fs/cgroup/x\\x0aforged\\xc2\\x9b2K ");
	assert_non_null(row);
	assert_non_null(strstr(out, "  daemon:w\\x9b\\x07b  audit "));
	/* aligned on what is shown: OWNER above the owner of the escaped cgroup's row */
	head = strstr(out, "\nCGROUP ");
	assert_non_null(head);
	assert_int_equal(strstr(head, "OWNER") - head, strstr(row, "run 1234") - row);
	free(out);
}

static void test_status_json_entries(void **state)
{
	struct status s;
	json_t *j, *v, *e, *o;

	(void)state;
	fill(&s);
	j = status_json(&s);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "confined")), 4);
	v = json_object_get(j, "sandboxes");
	assert_int_equal(json_array_size(v), 4);

	e = json_array_get(v, 0);
	o = json_object_get(e, "owner");
	assert_string_equal(json_string_value(json_object_get(e, "cgroup")),
			    "/sys/fs/cgroup/pysb-bpf/run-1234");
	assert_int_equal(json_integer_value(json_object_get(e, "cgroup_id")), 4242);
	assert_int_equal(json_integer_value(json_object_get(e, "sandbox")), 7);
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "run");
	assert_int_equal(json_integer_value(json_object_get(o, "pid")), 1234);
	assert_true(json_is_true(json_object_get(o, "running")));
	assert_null(json_object_get(o, "binding"));
	assert_string_equal(json_string_value(json_object_get(e, "policy")),
			    "/home/u/app.py-sandboxes");
	assert_string_equal(json_string_value(json_object_get(e, "mode")), "enforce");
	assert_int_equal(json_integer_value(json_object_get(e, "events")), 12);
	assert_int_equal(json_integer_value(json_object_get(e, "lost")), 3);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "lost_by_reason"),
							    "no-reader")),
			 2);
	assert_string_equal(json_string_value(json_object_get(e, "since")), "1970-01-01T00:00:01Z");

	e = json_array_get(v, 1);
	o = json_object_get(e, "owner");
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "daemon");
	assert_string_equal(json_string_value(json_object_get(o, "binding")), "web");
	assert_true(json_is_false(json_object_get(o, "running")));
	assert_string_equal(json_string_value(json_object_get(e, "mode")), "audit");

	e = json_array_get(v, 3);
	o = json_object_get(e, "owner");
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "unknown");
	assert_null(json_object_get(o, "pid"));
	assert_true(json_is_null(json_object_get(e, "cgroup")));
	assert_true(json_is_null(json_object_get(e, "policy")));
	assert_true(json_is_null(json_object_get(e, "events")));
	assert_true(json_is_null(json_object_get(e, "lost")));
	assert_true(json_is_false(json_object_get(e, "record")));
	assert_true(json_is_true(json_object_get(e, "process_exec")));
	json_decref(j);
}

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.' || strstr(de->d_name, ".tmp") != NULL;
	closedir(d);
	return n;
}

static void test_status_record_roundtrip(void **state)
{
	struct sandbox_record r = { .cgid = 123, .sandbox = 4, .owner = OWNER_ATTACH, .target = 99 },
			      back;
	struct stat st;

	(void)state;
	/* the directory and its parent are created */
	sandbox_record_dir(tpath("run/pysb-bpf/sandboxes"));
	sandbox_record_self(&r);
	assert_int_equal(r.pid, getpid());
	assert_true(r.pid_start > 0);
	strcpy(r.policy, "/abs/policy");
	strcpy(r.mode, "audit");
	strcpy(r.cgroup, "/sys/fs/cgroup/pysb-bpf/run-1");
	assert_int_equal(sandbox_record_write(&r), 0);
	assert_int_equal(stat(tpath("run/pysb-bpf/sandboxes/123.json"), &st), 0);
	assert_int_equal(count_files(tpath("run/pysb-bpf/sandboxes")), 1); /* no temporary */
	assert_int_equal(sandbox_record_read(123, &back), 0);
	assert_int_equal(back.cgid, 123);
	assert_int_equal(back.sandbox, 4);
	assert_int_equal(back.owner, OWNER_ATTACH);
	assert_int_equal(back.pid, r.pid);
	assert_int_equal(back.pid_start, r.pid_start);
	assert_int_equal(back.target, 99);
	assert_int_equal(back.since, r.since);
	assert_string_equal(back.policy, "/abs/policy");
	assert_string_equal(back.mode, "audit");
	assert_string_equal(back.cgroup, "/sys/fs/cgroup/pysb-bpf/run-1");
	/* rewritten in place (a daemon's reload) */
	r.owner = OWNER_DAEMON;
	strcpy(r.binding, "svc");
	assert_int_equal(sandbox_record_write(&r), 0);
	assert_int_equal(sandbox_record_read(123, &back), 0);
	assert_int_equal(back.owner, OWNER_DAEMON);
	assert_string_equal(back.binding, "svc");
	/* a record under another cgroup's name, or not one of ours, is not believed */
	assert_int_equal(rename(tpath("run/pysb-bpf/sandboxes/123.json"),
				tpath("run/pysb-bpf/sandboxes/124.json")),
			 0);
	assert_int_not_equal(sandbox_record_read(124, &back), 0);
	put("run/pysb-bpf/sandboxes/125.json", "{\"version\": 1, \"owner\": \"someone\", "
					       "\"cgroup_id\": 125}\n");
	assert_int_not_equal(sandbox_record_read(125, &back), 0);
	put("run/pysb-bpf/sandboxes/126.json", "{\"version\": 2, \"owner\": \"run\", "
					       "\"cgroup_id\": 126}\n");
	assert_int_not_equal(sandbox_record_read(126, &back), 0);
	put("run/pysb-bpf/sandboxes/127.json", "{\"version\": 1, ");
	assert_int_not_equal(sandbox_record_read(127, &back), 0);
	/* removed: gone; removing again is quiet */
	sandbox_record_remove(124);
	assert_int_not_equal(sandbox_record_read(124, &back), 0);
	sandbox_record_remove(124);
	sandbox_record_dir(NULL);
}

static void test_status_pid_start_time(void **state)
{
	(void)state;
	assert_true(pid_start_time(getpid()) > 0);
	assert_int_equal(pid_start_time(getpid()), pid_start_time(getpid()));
	assert_true(pid_start_time(1) <= pid_start_time(getpid()));
	assert_int_equal(pid_start_time(0x3ffffff0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_nothing_loaded_or_registered),
		cmocka_unit_test(test_status_mode_is_the_kernels),
		cmocka_unit_test(test_status_table_aligned),
		cmocka_unit_test(test_status_escapes_terminal_controls),
		cmocka_unit_test(test_status_json_entries),
		cmocka_unit_test(test_status_record_roundtrip),
		cmocka_unit_test(test_status_pid_start_time),
	};

	if (!mkdtemp(tmp))
		return 1;
	return cmocka_run_group_tests_name("status", tests, NULL, group_teardown);
}
