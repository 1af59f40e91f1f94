/* SPDX-License-Identifier: MIT */
/* Private to the files of `learn` (learn.c, generate.c, merge.c, write.c): what they share. */
#ifndef PYSB_LEARN_INT_H
#define PYSB_LEARN_INT_H

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi_names.h"
#include "json_bytes.h"
#include "learn.h"
#include "log.h"
#include "pysb_abi.h"

/* A growing text buffer (learn.c: buf_put, buf_puts_nl). */
struct buf {
	char *s;
	size_t n, cap;
	bool oom;
};

/* learn.c */
int push_str(char ***v, size_t *n, size_t *cap, const char *s);
void free_strs(char **v, size_t n);
int cmp_str(const void *a, const void *b);
bool is_ancestor_or_same(const char *a, const char *b);
const char *env_get(char *const *envp, const char *name);
char *parent_of(const char *path);
const char *learn_path_key(const void *paths, size_t i); /* str_index key of learn_set.paths */
void buf_put(struct buf *b, const char *s, size_t n);
void buf_puts_nl(struct buf *b, const char *s);

/* generate.c */
bool learn_never_widened(const char *dir, const char *home);
int learn_generate(const struct learn_set *s, const struct learn_env *env, struct learn_rules *out);
void learn_rules_free(struct learn_rules *r);

/* merge.c */
int learn_merge_in(const char *text, const struct learn_rules *r, const char *stamp,
		   const struct learn_env *env, const char *target, char **out, size_t *added);
void learn_stamp(time_t t, char *buf, size_t len);
char *learn_template(const char *stamp);

#endif
