/* SPDX-License-Identifier: MIT */
/*
 * make bench's BPF helper (benchmark, not a test).
 *
 *   bpf_floor attach OBJECT CGROUP_DIR
 *       loads OBJECT (build/bench/floor-*.bpf.o), attaches its LSM programs (globally) and
 *       its cgroup/ programs to CGROUP_DIR, prints "ready", and keeps them attached until
 *       its stdin reaches end of file; then exits, which detaches them.
 *   bpf_floor stats
 *       for each line read on stdin, prints one line per loaded BPF program,
 *       "ID NAME RUN_TIME_NS RUN_CNT" (counted while kernel.bpf_stats_enabled is 1), then
 *       "end". A resident process: a snapshot costs no process start, so the driver can
 *       take one right before and after a timed pass.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int attach(const char *path, const char *cgroup)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *prog;
	int cg, err;
	char buf[64];

	if (!obj) {
		fprintf(stderr, "bpf_floor: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "bpf_floor: cannot load %s: %s\n", path, strerror(-err));
		return 1;
	}
	cg = open(cgroup, O_RDONLY | O_DIRECTORY);
	if (cg < 0) {
		fprintf(stderr, "bpf_floor: cannot open cgroup %s: %s\n", cgroup, strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
		const char *sec = bpf_program__section_name(prog);
		struct bpf_link *link = strncmp(sec, "cgroup/", 7) ?
			bpf_program__attach(prog) : bpf_program__attach_cgroup(prog, cg);

		if (!link) {
			fprintf(stderr, "bpf_floor: cannot attach %s (%s): %s\n",
				bpf_program__name(prog), sec, strerror(errno));
			return 1;
		}
		/* the link lives as long as this process */
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
	return 0;
}

static int stats(void)
{
	char line[64];

	while (fgets(line, sizeof(line), stdin)) {
		__u32 id = 0;

		while (!bpf_prog_get_next_id(id, &id)) {
			struct bpf_prog_info info = { 0 };
			__u32 len = sizeof(info);
			int fd = bpf_prog_get_fd_by_id(id);

			if (fd < 0)
				continue; /* unloaded meanwhile */
			if (!bpf_obj_get_info_by_fd(fd, &info, &len))
				printf("%u %s %llu %llu\n", id, info.name[0] ? info.name : "-",
				       (unsigned long long)info.run_time_ns,
				       (unsigned long long)info.run_cnt);
			close(fd);
		}
		printf("end\n");
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "attach"))
		return attach(argv[2], argv[3]);
	if (argc == 2 && !strcmp(argv[1], "stats"))
		return stats();
	fprintf(stderr, "usage: bpf_floor attach OBJECT CGROUP_DIR\n       bpf_floor stats\n");
	return 2;
}
