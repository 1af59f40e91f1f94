/* SPDX-License-Identifier: MIT */
/*
 * Learning: the review of what a run adds to the policy file, as diff -u shows it (printed
 * before anything is written). See learn.c and write.c.
 */
#include "learn_int.h"

/* ---------------- the review: what was added, as diff -u shows it */

struct text_lines {
	const char **s; /* each line with its '\n' (the last may have none) */
	size_t *len, n;
};

static int split_text(const char *t, struct text_lines *l)
{
	size_t cap = 0;

	l->s = NULL;
	l->len = NULL;
	l->n = 0;
	while (*t) {
		const char *nl = strchr(t, '\n');
		size_t n = nl ? (size_t)(nl - t) + 1 : strlen(t);

		if (l->n == cap) {
			size_t c = cap ? cap * 2 : 64;
			const char **s = realloc(l->s, c * sizeof(*s));
			size_t *ln = s ? realloc(l->len, c * sizeof(*ln)) : NULL;

			if (s)
				l->s = s;
			if (!ln)
				return -1;
			l->len = ln;
			cap = c;
		}
		l->s[l->n] = t;
		l->len[l->n++] = n;
		t += n;
	}
	return 0;
}

static bool same_line(const struct text_lines *a, size_t i, const struct text_lines *b, size_t j)
{
	return a->len[i] == b->len[j] && !memcmp(a->s[i], b->s[j], a->len[i]);
}

/* One step of the edit script: '=' (both), '-' (old only), '+' (new only). */
struct edit {
	char op;
	size_t a, b; /* the line in old and in new: for '+', the old line it precedes */
};

/*
 * The shortest edit script (longest common subsequence) of the lines between the common
 * head and tail. Policy files are small; past 16 M cells the middle is replaced whole.
 */
static struct edit *edit_script(const struct text_lines *a, const struct text_lines *b,
				size_t *n_out)
{
	size_t head = 0, tail = 0, n, m, k = 0;
	struct edit *e = malloc((a->n + b->n + 1) * sizeof(*e));
	uint32_t *L = NULL;

	if (!e)
		return NULL;
	while (head < a->n && head < b->n && same_line(a, head, b, head))
		head++;
	while (tail < a->n - head && tail < b->n - head &&
	       same_line(a, a->n - 1 - tail, b, b->n - 1 - tail))
		tail++;
	n = a->n - head - tail;
	m = b->n - head - tail;
	for (size_t i = 0; i < head; i++)
		e[k++] = (struct edit){ '=', i, i };
	if (n && m && (n + 1) * (m + 1) <= (16u << 20))
		L = calloc((n + 1) * (m + 1), sizeof(*L));
	if (L) {
		size_t i = 0, j = 0;

		/* L[i][j]: the common lines of old[i..] and new[j..] */
		for (size_t ii = n; ii-- > 0;)
			for (size_t jj = m; jj-- > 0;)
				L[ii * (m + 1) + jj] = same_line(a, head + ii, b, head + jj)
							       ? L[(ii + 1) * (m + 1) + jj + 1] + 1
						       : L[(ii + 1) * (m + 1) + jj] >=
								       L[ii * (m + 1) + jj + 1]
							       ? L[(ii + 1) * (m + 1) + jj]
							       : L[ii * (m + 1) + jj + 1];
		while (i < n || j < m) {
			if (i < n && j < m && same_line(a, head + i, b, head + j)) {
				e[k++] = (struct edit){ '=', head + i, head + j };
				i++, j++;
			} else if (i < n &&
				   (j == m || L[(i + 1) * (m + 1) + j] >= L[i * (m + 1) + j + 1])) {
				/* deletions first, as diff prints a changed line */
				e[k++] = (struct edit){ '-', head + i, head + j };
				i++;
			} else {
				e[k++] = (struct edit){ '+', head + i, head + j };
				j++;
			}
		}
		free(L);
	} else {
		for (size_t i = 0; i < n; i++)
			e[k++] = (struct edit){ '-', head + i, head };
		for (size_t j = 0; j < m; j++)
			e[k++] = (struct edit){ '+', head + n, head + j };
	}
	for (size_t i = 0; i < tail; i++)
		e[k++] = (struct edit){ '=', head + n + i, head + m + i };
	*n_out = k;
	return e;
}

/* "@@ -1,3 +1,4 @@": a count of 1 is left out; an empty range names the line before it. */
static void hunk_range(FILE *out, char sign, size_t start, size_t count)
{
	if (count == 1)
		fprintf(out, "%c%zu", sign, start + 1);
	else
		fprintf(out, "%c%zu,%zu", sign, count ? start + 1 : start, count);
}

static void diff_line(FILE *out, char sign, const char *s, size_t len)
{
	bool nl = len && s[len - 1] == '\n';

	fprintf(out, "%c%.*s\n", sign, (int)(nl ? len - 1 : len), s);
	if (!nl)
		fputs("\\ No newline at end of file\n", out);
}

int learn_diff(FILE *out, const char *file, const char *old, const char *new)
{
	enum { CONTEXT = 3 };
	struct text_lines a = { 0 }, b = { 0 };
	struct edit *e = NULL;
	size_t n = 0, changed = 0;
	const char *label = file;
	int ret = -1;

	if (split_text(old, &a) || split_text(new, &b) || !(e = edit_script(&a, &b, &n)))
		goto out;
	/* a/etc/x, a/data/x: git's labels, without a leading "/" or "./" */
	while (*label == '/' || (label[0] == '.' && label[1] == '/'))
		label += *label == '/' ? 1 : 2;
	for (size_t i = 0; i < n; i++) {
		size_t start, end, last, oa = 0, nb = 0;

		if (e[i].op == '=')
			continue;
		if (!changed++)
			fprintf(out, "--- a/%s\n+++ b/%s\n", label, label);
		/* a hunk: this change, and the next ones closer than 2 * CONTEXT equal lines */
		start = i > CONTEXT ? i - CONTEXT : 0;
		last = i;
		for (size_t j = i + 1; j < n && j <= last + 2 * CONTEXT + 1; j++)
			if (e[j].op != '=')
				last = j;
		end = last + CONTEXT + 1 < n ? last + CONTEXT + 1 : n;
		for (size_t j = start; j < end; j++) {
			oa += e[j].op != '+';
			nb += e[j].op != '-';
		}
		fputs("@@ ", out);
		hunk_range(out, '-', e[start].a, oa);
		fputc(' ', out);
		hunk_range(out, '+', e[start].b, nb);
		fputs(" @@\n", out);
		for (size_t j = start; j < end; j++) {
			if (e[j].op == '+')
				diff_line(out, '+', b.s[e[j].b], b.len[e[j].b]);
			else
				diff_line(out, e[j].op == '-' ? '-' : ' ', a.s[e[j].a],
					  a.len[e[j].a]);
		}
		i = end - 1;
	}
	ret = changed ? 1 : 0;
out:
	free(e);
	free(a.s);
	free(a.len);
	free(b.s);
	free(b.len);
	return ret;
}
