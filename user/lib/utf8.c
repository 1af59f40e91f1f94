/* SPDX-License-Identifier: MIT */
/* UTF-8 as Python's codec reads it: the policy parser refuses what Python would, and
 * json_bytes.c keeps the bytes of a name that is not valid UTF-8. */
#include "utf8.h"

size_t utf8_seq(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned cp, min;
	size_t len;

	if (!n)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Python's codec refuses overlong forms and surrogates too. */
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

size_t utf8_printable(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = utf8_seq(str, n);

	if (len == 1 && (s[0] < 0x20 || s[0] == 0x7f))
		return 0;
	if (len == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0; /* U+0080 to U+009F */
	return len;
}

size_t utf8_invalid_at(const char *s, size_t n)
{
	size_t i = 0, l;

	while (i < n && (l = utf8_seq(s + i, n - i)))
		i += l;
	return i;
}
