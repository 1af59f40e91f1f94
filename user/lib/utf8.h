/* SPDX-License-Identifier: MIT */
#ifndef PYSB_UTF8_H
#define PYSB_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (n bytes available; Python's codec rules: no
 * overlong form, no surrogate), 0 when invalid or n == 0. */
size_t utf8_seq(const char *s, size_t n);
/* Offset of the first byte that is not valid UTF-8, or n. */
size_t utf8_invalid_at(const char *s, size_t n);

#endif
