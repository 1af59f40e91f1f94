/* SPDX-License-Identifier: MIT */
/*
 * Small text helpers of the parser (Python's strip, display of a raw line) and its diagnostics. See policy.c.
 */
#include "parser.h"

/* ---------------- small helpers */

/*
 * Appends one zeroed element to the array at *arrp holding *n elements. The capacity is
 * implicit (the next power of two), so the public structs need no capacity field. memcpy
 * moves the pointer so any element type can go through here without aliasing trouble.
 */
void *vec_push(void *arrp, size_t *n, size_t size)
{
	char *a;

	memcpy(&a, arrp, sizeof(a));
	if ((*n & (*n - 1)) == 0) {
		a = reallocarray(a, *n ? *n * 2 : 1, size);
		if (!a)
			return NULL;
		memcpy(arrp, &a, sizeof(a));
	}
	memset(a + *n * size, 0, size);
	return a + (*n)++ * size;
}

bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Characters Python's str.strip() removes: ASCII and Unicode white space. */
static size_t space_len(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	if (!n)
		return 0;
	if (u[0] < 0x80) /* NUL is not white space */
		return u[0] == ' ' || (u[0] >= '\t' && u[0] <= '\r') ||
		       (u[0] >= 0x1c && u[0] <= 0x1f);
	/* The rest in UTF-8, by lead byte: a line of ASCII tests no table (parse_line runs
	 * this for each byte of every line's ends). */
	switch (u[0]) {
	case 0xc2: /* U+0085, U+00A0 */
		return n >= 2 && (u[1] == 0x85 || u[1] == 0xa0) ? 2 : 0;
	case 0xe1: /* U+1680 */
		return n >= 3 && u[1] == 0x9a && u[2] == 0x80 ? 3 : 0;
	case 0xe2: /* U+2000..U+200A, U+2028, U+2029, U+202F; U+205F */
		if (n < 3)
			return 0;
		if (u[1] == 0x80)
			return (u[2] >= 0x80 && u[2] <= 0x8a) || u[2] == 0xa8 || u[2] == 0xa9 ||
					       u[2] == 0xaf
				       ? 3
				       : 0;
		return u[1] == 0x81 && u[2] == 0x9f ? 3 : 0;
	case 0xe3: /* U+3000 */
		return n >= 3 && u[1] == 0x80 && u[2] == 0x80 ? 3 : 0;
	}
	return 0;
}

size_t lstrip_len(const char *s, size_t n)
{
	size_t i = 0, l;

	while (i < n && (l = space_len(s + i, n - i)))
		i += l;
	return i;
}

/* New length of s[0..n) once trailing white space is removed. */
size_t rstrip_len(const char *s, size_t n)
{
	for (;;) {
		size_t l = 0;

		for (size_t k = 1; k <= 3 && k <= n && !l; k++)
			if (space_len(s + n - k, k) == k)
				l = k;
		if (!l)
			return n;
		n -= l;
	}
}

/* ASCII-only trim of a NUL-terminated field, in place; *skip gets the bytes dropped in front. */
char *trim(char *s, size_t *skip)
{
	char *e;

	*skip = 0;
	while (*s == ' ' || *s == '\t')
		s++, (*skip)++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/*
 * Up to TEXT_DISPLAY characters of s, with control bytes and invalid UTF-8 shown as \xNN
 * so that a binary file prints safely on a terminal; "..." marks a cut.
 */
static char *display_text(const char *s, size_t n)
{
	char *out = malloc(TEXT_DISPLAY * 4 + 4), *o = out;
	size_t i = 0, chars = 0;

	if (!out)
		return NULL;
	while (i < n && chars < TEXT_DISPLAY) {
		const unsigned char c = (unsigned char)s[i];
		size_t l = utf8_seq(s + i, n - i);

		if (l == 0 || c < 0x20 || c == 0x7f) {
			o += sprintf(o, "\\x%02x", c);
			i++;
		} else {
			memcpy(o, s + i, l);
			o += l;
			i += l;
		}
		chars++;
	}
	if (i < n)
		o = stpcpy(o, "...");
	*o = '\0';
	return out;
}

/* 1-based column, in characters, of byte offset `off` of the raw line. */
static unsigned raw_col(const char *raw, size_t off)
{
	unsigned col = 1;

	for (size_t i = 0; i < off; i++)
		if (((unsigned char)raw[i] & 0xc0) != 0x80)
			col++;
	return col;
}

/* ---------------- diagnostics */

static void msg_free(struct diag *m)
{
	free(m->file);
	free(m->text);
	free(m->msg);
}

/* Into the parse's diag_list (user/lib/diag.h), in the parser's form: file:line:col first. */
void vreport(struct parser *ps, bool warning, const struct line *ln, unsigned col, const char *fmt,
	     va_list ap)
{
	struct diag m = { .line = ln ? ln->no : 0, .col = col };
	struct diag *slot;
	int r;

	if (ps->full)
		return;
	if (ln)
		m.file = strdup(ln->file);
	if (!warning && ps->diag->n_errors - ps->first_error == MAX_ERRORS) {
		ps->full = true;
		r = asprintf(&m.msg, "too many errors (%d): stopping here", MAX_ERRORS);
	} else {
		if (ln && ln->raw_len) { /* no text for file-level messages */
			size_t lead = lstrip_len(ln->raw, ln->raw_len);

			m.text = display_text(ln->raw + lead,
					      rstrip_len(ln->raw + lead, ln->raw_len - lead));
		}
		r = vasprintf(&m.msg, fmt, ap);
	}
	if (r < 0)
		m.msg = NULL;
	slot = diag_push(ps->diag, warning ? DIAG_WARNING : DIAG_ERROR);
	if (!slot || !m.msg || (ln && !m.file)) {
		msg_free(&m);
		if (slot) /* keep the slot: it still says something failed */
			*slot = (struct diag){ 0 };
		ps->oom = true;
		return;
	}
	*slot = m;
}

/*
 * Column of offset `off` in the (possibly substituted) text of the line. An offset right
 * after a literal byte is placed right after that byte's origin, so that an empty value or
 * field points where it was written rather than at whatever follows a ${} that vanished.
 */
unsigned line_col(const struct line *ln, size_t off)
{
	const size_t *m = ln->map;
	size_t o = off;

	if (m && off > 0 && ln->text[off - 1] == ln->raw[ln->lead + m[off - 1]])
		o = m[off - 1] + 1;
	else if (m)
		o = m[off];
	return raw_col(ln->raw, ln->lead + o);
}

__attribute__((format(printf, 4, 5))) void lerror(struct parser *ps, const struct line *ln,
						  size_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(ps, false, ln, ln ? line_col(ln, off) : 0, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 4, 5))) void lwarn(struct parser *ps, const struct line *ln,
						 size_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(ps, true, ln, line_col(ln, off), fmt, ap);
	va_end(ap);
}

/* An error on a stored rule (its line is gone): the rule is shown as key=value. */
__attribute__((format(printf, 3, 4))) void kv_error(struct parser *ps, const struct policy_kv *kv,
						    const char *fmt, ...)
{
	struct line ln = { .file = kv->src.file, .no = kv->src.line, .raw = "" };
	char *text = NULL;
	va_list ap;

	if (asprintf(&text, "%s=%s", kv->key, kv->value) >= 0) {
		ln.raw = text;
		ln.raw_len = strlen(text);
	}
	va_start(ap, fmt);
	vreport(ps, false, &ln, kv->src.col, fmt, ap);
	va_end(ap);
	free(text);
}
