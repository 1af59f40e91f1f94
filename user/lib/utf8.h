/* SPDX-License-Identifier: MIT */
#ifndef PYSB_UTF8_H
#define PYSB_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (n bytes available; Python's codec rules: no
 * overlong form, no surrogate), 0 when invalid or n == 0. */
size_t utf8_seq(const char *s, size_t n);
/* Length of the sequence at s (n bytes available) when it is printable: valid UTF-8 (as
 * utf8_seq) and no control character, C0 (below 0x20, DEL) nor C1 (U+0080 to U+009F:
 * 8-bit CSI and OSC, which terminals run); 0 otherwise. What the deny lines, the log's
 * messages and learning's review write raw on the user's terminal (found by adversaries:
 * names that forged lines and ran escape sequences there). */
size_t utf8_printable(const char *s, size_t n);
/* Offset of the first byte that is not valid UTF-8, or n. */
size_t utf8_invalid_at(const char *s, size_t n);

#endif
