/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_bytes.h"
#include "utf8.h"

static bool json_bytes_is_utf8(const char *s, size_t n)
{
	for (size_t i = 0, l; i < n; i += l)
		if (!(l = utf8_seq(s + i, n - i)))
			return false;
	return true;
}

/* The display form of s (valid UTF-8). */
static char *display_form(const char *s)
{
	size_t n = strlen(s), w = 0;
	char *out = malloc(4 * n + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq(s + i, n - i);

		if (l) {
			memcpy(out + w, s + i, l);
			w += l;
			i += l;
		} else {
			w += (size_t)sprintf(out + w, "\\x%02X", (unsigned char)s[i++]);
		}
	}
	out[w] = '\0';
	return out;
}

static const char b64_tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *base64(const char *s)
{
	const unsigned char *b = (const unsigned char *)s;
	size_t n = strlen(s), w = 0;
	char *out = malloc((n + 2) / 3 * 4 + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = b[i] << 16 | (i + 1 < n ? b[i + 1] << 8 : 0) |
			     (i + 2 < n ? b[i + 2] : 0);

		out[w++] = b64_tab[v >> 18 & 63];
		out[w++] = b64_tab[v >> 12 & 63];
		out[w++] = i + 1 < n ? b64_tab[v >> 6 & 63] : '=';
		out[w++] = i + 2 < n ? b64_tab[v & 63] : '=';
	}
	out[w] = '\0';
	return out;
}

/* NULL on a character outside the alphabet or a NUL byte in the result. */
static char *unbase64(const char *s)
{
	size_t n = strlen(s), w = 0;
	char *out = malloc(n / 4 * 3 + 4);
	unsigned v = 0, bits = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n && s[i] != '='; i++) {
		const char *p = strchr(b64_tab, s[i]);

		if (!p || !*p)
			goto bad;
		v = v << 6 | (unsigned)(p - b64_tab);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[w] = (char)(v >> bits & 0xff);
			if (!out[w++])
				goto bad;
		}
	}
	out[w] = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

int json_object_set_bytes(json_t *obj, const char *key, const char *s)
{
	size_t n;
	char *d, *b, k[64];
	int ret;

	if (!s)
		s = "";
	n = strlen(s);
	if (json_bytes_is_utf8(s, n)) /* the common case: one copy, checked once */
		return json_object_set_new(obj, key, json_stringn_nocheck(s, n));
	d = display_form(s);
	b = base64(s);
	snprintf(k, sizeof(k), "%s_b64", key);
	ret = d && b && !json_object_set_new(obj, key, json_string(d)) &&
			      !json_object_set_new(obj, k, json_string(b))
		      ? 0
		      : -1;
	free(d);
	free(b);
	return ret;
}

char *json_object_get_bytes(const json_t *obj, const char *key)
{
	const char *s, *b;
	char k[64];

	snprintf(k, sizeof(k), "%s_b64", key);
	b = json_string_value(json_object_get(obj, k));
	if (b)
		return unbase64(b);
	s = json_string_value(json_object_get(obj, key));
	return s ? strdup(s) : NULL;
}
