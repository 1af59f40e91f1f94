/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "stopwatch.h"

void stopwatch(const char *step)
{
	/* `run` times two threads at once (user/run/setup.c): one clock, one line at a time */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int on = -1;
	static struct timespec t0, prev;
	struct timespec now;

	pthread_mutex_lock(&lock);
	if (on < 0) {
		const char *v = getenv("PYSB_BPF_TIMING");

		on = v && *v && strcmp(v, "0"); /* unset, empty or 0: off (found by a user) */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		prev = t0;
	}
	if (on) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		fprintf(stderr, "pysb-bpf: timing: %8.2f ms (+%7.2f) %s\n",
			(now.tv_sec - t0.tv_sec) * 1e3 + (now.tv_nsec - t0.tv_nsec) / 1e6,
			(now.tv_sec - prev.tv_sec) * 1e3 + (now.tv_nsec - prev.tv_nsec) / 1e6,
			step);
		prev = now;
	}
	pthread_mutex_unlock(&lock);
}
