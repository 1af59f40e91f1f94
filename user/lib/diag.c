/* SPDX-License-Identifier: MIT */
/* The diagnostics channel of the parser and the compiler: see diag.h. */
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "log.h"

struct diag *diag_push(struct diag_list *l, enum diag_severity sev)
{
	struct diag **v = sev == DIAG_ERROR ? &l->errors : &l->warnings;
	size_t *n = sev == DIAG_ERROR ? &l->n_errors : &l->n_warnings;
	struct diag *nv;

	/* doubling at powers of two: the capacity is implied by the count */
	if (!(*n & (*n - 1))) {
		nv = realloc(*v, (*n ? 2 * *n : 1) * sizeof(**v));
		if (!nv)
			return NULL;
		*v = nv;
	}
	(*v)[*n] = (struct diag){ 0 };
	return &(*v)[(*n)++];
}

static void diag_clear(struct diag *d)
{
	free(d->file);
	free(d->text);
	free(d->msg);
	free(d->hint);
}

int diag_vadd(struct diag_list *l, enum diag_severity sev, struct diag_at at, const char *hint,
	      const char *fmt, va_list ap)
{
	struct diag d = { .line = at.line, .col = at.col, .tool_form = true };
	int ret = sev == DIAG_ERROR ? -1 : 0;
	struct diag *slot;

	if (vasprintf(&d.msg, fmt, ap) < 0)
		d.msg = NULL;
	d.file = at.file ? strdup(at.file) : NULL;
	d.hint = hint ? strdup(hint) : NULL;
	if ((at.file && !d.file) || (hint && !d.hint)) {
		free(d.msg); /* a record without its parts: "out of memory" rather than half */
		d.msg = NULL;
	}
	if (!l) {
		if (sev == DIAG_ERROR || log_level >= LOG_NORMAL)
			diag_print_one(stderr, sev, &d);
		diag_clear(&d);
		return ret;
	}
	slot = diag_push(l, sev);
	if (!slot) {
		diag_clear(&d);
		return ret;
	}
	*slot = d;
	return ret;
}

int diag_add(struct diag_list *l, enum diag_severity sev, struct diag_at at, const char *hint,
	     const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = diag_vadd(l, sev, at, hint, fmt, ap);
	va_end(ap);
	return ret;
}

/* One diagnostic, as diag_print_one says it, its text unfiltered. */
static void print_one(FILE *f, enum diag_severity sev, const struct diag *d)
{
	const char *kind = sev == DIAG_ERROR ? "error" : "warning";

	if (!d->msg) /* whatever else it had, memory ran out making it */
		fprintf(f, "pysb-bpf: %s: out of memory\n", kind);
	else if (!d->file)
		fprintf(f, "pysb-bpf: %s: %s", kind, d->msg);
	else if (d->tool_form && !d->line)
		fprintf(f, "pysb-bpf: %s: %s: %s", kind, d->file, d->msg);
	else if (d->tool_form && !d->col)
		fprintf(f, "pysb-bpf: %s: %s:%u: %s", kind, d->file, d->line, d->msg);
	else if (d->tool_form)
		fprintf(f, "pysb-bpf: %s: %s:%u:%u: %s", kind, d->file, d->line, d->col, d->msg);
	else if (!d->line)
		fprintf(f, "%s: %s: %s", d->file, kind, d->msg);
	else
		fprintf(f, "%s:%u:%u: %s: %s", d->file, d->line, d->col, kind, d->msg);
	if (!d->msg)
		return;
	if (d->hint)
		fprintf(f, "; %s", d->hint);
	fputc('\n', f);
	if (d->text && d->text[0])
		fprintf(f, "    %s\n", d->text);
}

/* Its text through log_printable(): messages name files a program could have named (a
 * script's link target: found by an adversary, round 29, an escape sequence in it ran the
 * user's terminal), and the policy line shown is the file's. */
void diag_print_one(FILE *f, enum diag_severity sev, const struct diag *d)
{
	struct diag safe = *d;
	char *msg = d->msg ? log_printable(d->msg) : NULL;
	char *file = d->file ? log_printable(d->file) : NULL;
	char *hint = d->hint ? log_printable(d->hint) : NULL;
	char *text = d->text ? log_printable(d->text) : NULL;

	if ((d->msg && !msg) || (d->file && !file) || (d->hint && !hint) || (d->text && !text)) {
		safe.msg = NULL; /* said as out of memory */
	} else {
		safe.msg = msg;
		safe.file = file;
		safe.hint = hint;
		safe.text = text;
	}
	print_one(f, sev, &safe);
	free(msg);
	free(file);
	free(hint);
	free(text);
}

void diag_print(FILE *f, const struct diag_list *l)
{
	for (size_t i = 0; i < l->n_warnings; i++)
		diag_print_one(f, DIAG_WARNING, &l->warnings[i]);
	for (size_t i = 0; i < l->n_errors; i++)
		diag_print_one(f, DIAG_ERROR, &l->errors[i]);
}

void diag_free(struct diag_list *l)
{
	for (size_t i = 0; i < l->n_errors; i++)
		diag_clear(&l->errors[i]);
	for (size_t i = 0; i < l->n_warnings; i++)
		diag_clear(&l->warnings[i]);
	free(l->errors);
	free(l->warnings);
	*l = (struct diag_list){ 0 };
}
