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
#include <sys/types.h>

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
/* A J_NUM times 1000 (microseconds in nanoseconds): exact to three
 * decimals, past them rounded to the nearest; false where it has an
 * exponent or does not fit. */
bool hvn_json_milli(const struct json *j, int64_t *v);

/*
 * A document read one value at a time, for files larger than the memory
 * their tree would take (Kineto traces): the members of the top object,
 * and the elements of an array member, each parsed alone when it is
 * reached; the buffer holds one value, not the document.  Errors read as
 * hvn_json_parse()'s, with offsets in the whole document.
 */
struct json_stream;
/* Up to @cap bytes into @buf: their number, 0 at the end, -1 on an error
 * (which the reader's @ctx keeps). */
typedef ssize_t (*hvn_json_read_fn)(void *ctx, char *buf, size_t cap);

struct json_stream *hvn_jstream_new(hvn_json_read_fn rd, void *ctx);
void hvn_jstream_free(struct json_stream *js);
/* 1: the document is an object, walk it with hvn_jstream_member(); 0:
 * another value (read it with hvn_jstream_value()); -1: an error.  A
 * UTF-8 byte-order mark first is skipped. */
int hvn_jstream_begin(struct json_stream *js);
/* The object's next member: 1 and its @key (until the next call), whose
 * value is read next; 0 at the object's end; -1 on an error. */
int hvn_jstream_member(struct json_stream *js, const char **key);
/* Whether the value to read is an array: then it is entered, and its
 * elements read with hvn_jstream_element(). */
bool hvn_jstream_array(struct json_stream *js);
/* The array's next element, parsed: 1; 0 at the array's end; -1. */
int hvn_jstream_element(struct json_stream *js, struct json **e);
/* The next value, parsed whole; NULL on an error. */
struct json *hvn_jstream_value(struct json_stream *js);
/* The next value read and dropped (an array element by element). */
bool hvn_jstream_skip(struct json_stream *js);
/* After the document: nothing but white space follows. */
bool hvn_jstream_end(struct json_stream *js);
bool hvn_jstream_failed(const struct json_stream *js);
/* What is wrong, where; NULL if the reader failed (it says why). */
const char *hvn_jstream_error(const struct json_stream *js);

#endif
