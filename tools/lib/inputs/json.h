/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON reader for the trace formats correlate takes (Flight
 * Recorder dumps, Kineto traces, NCCL Inspector lines): the whole document
 * as a tree, with the byte offset of each error.
 */
#ifndef HVNOISE_JSON_H
#define HVNOISE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum json_type { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct json {
	enum json_type type;
	double num;
	int64_t i;			/* J_NUM, if is_int: exact; if is_milli:
					 * the number times 1000, exact */
	bool is_int, is_milli;
	bool b;
	char *str;			/* J_STR */
	struct json *kids;		/* J_ARR, J_OBJ: values */
	char **keys;			/* J_OBJ: their keys */
	size_t n;
};

/* Parses @len bytes; NULL with @err (and its offset) on failure. */
struct json *hvn_json_parse(const char *text, size_t len, char *err, size_t errlen);
void hvn_json_free(struct json *j);
const struct json *hvn_json_get(const struct json *obj, const char *key);
/* A J_NUM as an exact integer: an integer literal, or a double that is
 * whole and in range.  false otherwise (no rounding, no wrapping). */
bool hvn_json_int(const struct json *j, int64_t *v);
/* A J_NUM times 1000, exactly (microseconds with up to three decimals in
 * nanoseconds): false where it has more decimals, an exponent, or does not
 * fit. */
bool hvn_json_milli(const struct json *j, int64_t *v);

#endif
