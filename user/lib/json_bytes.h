/* SPDX-License-Identifier: MIT */
/*
 * Byte strings (file names, policy text) in JSON, which carries only UTF-8. A string S
 * that is not valid UTF-8 is written as "S" in a display form (each byte that is not
 * UTF-8 as the four characters \xNN) plus "S_b64", its exact bytes in base64. A string
 * without "_b64" is exact. Used by `check --json` and the event stream (--events).
 */
#ifndef PYSB_JSON_BYTES_H
#define PYSB_JSON_BYTES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* obj[key] = s (NULL: ""), plus obj[key_b64] when s is not UTF-8. 0, or -1: out of memory. */
int json_object_set_bytes(json_t *obj, const char *key, const char *s);
/* The exact bytes of obj[key] (key_b64 decoded when present), malloc'd; NULL when absent
 * or not a string. */
char *json_object_get_bytes(const json_t *obj, const char *key);

#endif /* PYSB_JSON_BYTES_H */
