/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int log_level = LOG_NORMAL;

void log_init_from_env(void)
{
	const char *v = getenv("PYSB_BPF_LOG");

	if (!v || !*v)
		return;
	if (!strcmp(v, "quiet"))
		log_level = LOG_QUIET;
	else if (!strcmp(v, "info") || !strcmp(v, "1"))
		log_level = LOG_INFO;
	else if (!strcmp(v, "debug") || !strcmp(v, "2"))
		log_level = LOG_DEBUG;
	else if (!strcmp(v, "0") || !strcmp(v, "normal"))
		log_level = LOG_NORMAL;
	else
		fprintf(stderr,
			"pysb-bpf: warning: PYSB_BPF_LOG=%s not understood "
			"(use quiet, normal, info or debug); keeping the default\n",
			v);
}

static void vlog(const char *tag, const char *fmt, va_list ap)
{
	fprintf(stderr, "pysb-bpf: %s", tag);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

#define DEFINE_LOG(name, min, tag)      \
	void name(const char *fmt, ...) \
	{                               \
		va_list ap;             \
		if (log_level < (min))  \
			return;         \
		va_start(ap, fmt);      \
		vlog(tag, fmt, ap);     \
		va_end(ap);             \
	}

DEFINE_LOG(pr_err, LOG_QUIET, "error: ")
DEFINE_LOG(pr_warn, LOG_NORMAL, "warning: ")
DEFINE_LOG(pr_info, LOG_INFO, "")
DEFINE_LOG(pr_debug, LOG_DEBUG, "debug: ")
