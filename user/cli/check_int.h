/* SPDX-License-Identifier: MIT */
/* Private to the files of `check` (check.c, check_report.c, check_text.c): what they share. */
#ifndef PYSB_CHECK_INT_H
#define PYSB_CHECK_INT_H

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "check.h"
#include "caps.h"
#include "compile.h"
#include "fsident.h"
#include "json_bytes.h"
#include "log.h"
#include "policy_departures.h"
#include "program.h"
#include "secrets.h"

#define CHECK_FORMAT 1 /* "format" of the JSON document; bumped on incompatible changes */

struct report {
	const struct check_opts *o;
	const struct policy *p;
	const struct compiled *c;
	const struct program *prog; /* NULL: none resolved (check_opts.interpreter given) */
	json_t *root, *warnings, *errors;
	/* Values shared by many entries (jansson counts references): a 10,000-rule report
	 * then costs about half the allocations. */
	json_t *access[32]; /* by PYSB_ACC_* bits */
	const char *file;   /* policy_src.file of `file_json` */
	json_t *file_json;
	bool oom;
};

extern const char *const slot_keys[PYSB_NET_SLOTS];

/* check.c */
void set_new(struct report *r, json_t *obj, const char *key, json_t *v);
void set_bytes(struct report *r, json_t *obj, const char *key, const char *s);
void push(struct report *r, json_t *arr, json_t *v);
json_t *new_array(struct report *r, json_t *parent, const char *key);
json_t *new_object(struct report *r, json_t *parent, const char *key);
void set_src(struct report *r, json_t *o, const struct policy_src *s);
json_t *access_json(struct report *r, uint32_t acc);
json_t *dev_json(uint32_t dev);
__attribute__((format(printf, 3, 4))) void warn(struct report *r, const struct policy_src *s,
						const char *fmt, ...);

/* check_report.c */
void add_exec(struct report *r, json_t *kernel);
void add_files(struct report *r, json_t *kernel);
void add_file_systems(struct report *r, json_t *kernel);
void add_ignores(struct report *r, json_t *kernel);
void add_mounts(struct report *r, json_t *kernel);
void add_net(struct report *r, json_t *kernel);
int add_environment(struct report *r, json_t *root);
void warn_secrets(struct report *r);
void add_bpf_params(struct report *r, json_t *root);
void add_python_layer(struct report *r, json_t *root);
void add_departures(struct report *r);

/* check_text.c */
void render_text(FILE *f, const json_t *root, bool verbose);
void render_errors(FILE *f, const json_t *root);

#endif
