/* SPDX-License-Identifier: MIT */
/*
 * The sandbox ids the kernel holds allocated: the keys of every pinned instance's `events`
 * map (/sys/fs/bpf/pysb-bpf/<hash>/map-events; an id is allocated while it has a ring
 * there), read through bpf(2) alone. One line per id: "<id> <ring map name>" (pysb_daemon:
 * a daemon's, pysb_events: a run's); with --count, the number of ids only.
 *   sandbox_ids [--count] [PIN-ROOT]
 */
#include <dirent.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static int obj_get(const char *path)
{
	union bpf_attr a = { 0 };

	a.pathname = (uint64_t)(uintptr_t)path;
	return (int)sys_bpf(BPF_OBJ_GET, &a);
}

/* The name of map `map_id` ("?" if it is gone). */
static void map_name(uint32_t map_id, char *name, size_t len)
{
	union bpf_attr a = { 0 };
	struct bpf_map_info info = { 0 };
	int fd;

	snprintf(name, len, "?");
	a.map_id = map_id;
	fd = (int)sys_bpf(BPF_MAP_GET_FD_BY_ID, &a);
	if (fd < 0)
		return;
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (!sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a))
		snprintf(name, len, "%s", info.name);
	close(fd);
}

/* Lists (or counts) the ids of one `events` map; -1 if it cannot be read. */
static long list_ids(int fd, int count_only)
{
	uint32_t key, next, map_id;
	union bpf_attr a;
	long n = 0;
	int first = 1;
	char name[32];

	for (;;) {
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.key = first ? 0 : (uint64_t)(uintptr_t)&key;
		a.next_key = (uint64_t)(uintptr_t)&next;
		if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &a))
			return errno == ENOENT ? n : -1;
		first = 0;
		key = next;
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.key = (uint64_t)(uintptr_t)&key;
		a.value = (uint64_t)(uintptr_t)&map_id; /* a map of maps gives the inner map's id */
		if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a))
			continue; /* freed meanwhile */
		n++;
		if (!count_only) {
			map_name(map_id, name, sizeof(name));
			printf("%u %s\n", key, name);
		}
	}
}

int main(int argc, char **argv)
{
	const char *root = "/sys/fs/bpf/pysb-bpf";
	int count_only = 0, found = 0;
	long total = 0;
	struct dirent *de;
	char path[4096];
	DIR *dir;

	if (argc > 1 && !strcmp(argv[1], "--count")) {
		count_only = 1;
		argc--;
		argv++;
	}
	if (argc > 1)
		root = argv[1];
	dir = opendir(root);
	if (!dir) {
		fprintf(stderr, "sandbox_ids: %s: %s\n", root, strerror(errno));
		return 1;
	}
	while ((de = readdir(dir))) {
		long n;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/map-events", root, de->d_name);
		fd = obj_get(path);
		if (fd < 0)
			continue; /* not an instance (the ring pool's directory, ...) */
		n = list_ids(fd, count_only);
		close(fd);
		if (n < 0) {
			fprintf(stderr, "sandbox_ids: cannot read %s: %s\n", path, strerror(errno));
			closedir(dir);
			return 1;
		}
		total += n;
		found++;
	}
	closedir(dir);
	if (!found) {
		fprintf(stderr, "sandbox_ids: no pinned events map under %s\n", root);
		return 1;
	}
	if (count_only)
		printf("%ld\n", total);
	return 0;
}
