// SPDX-License-Identifier: GPL-2.0
/*
 * JSON to a tree.  Depth is bounded and every read is bounds-checked: the
 * input may be any file.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/json.h"

#define MAX_DEPTH	64

struct parser {
	const char *s;
	size_t len, i;
	uint64_t off;			/* of s[0] in the document */
	char *err;
	size_t errlen;
	int depth;
};

static bool fail(struct parser *p, const char *what)
{
	if (!p->err[0])
		snprintf(p->err, p->errlen, "%s at byte %llu", what,
			 (unsigned long long)(p->off + p->i));
	return false;
}

static void ws(struct parser *p)
{
	while (p->i < p->len && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
				 p->s[p->i] == '\n' || p->s[p->i] == '\r'))
		p->i++;
}

/* "[-]D.D..." (no exponent) times 1000, exactly, past three decimals
 * rounded to the nearest (half away from zero): a double holds epoch
 * microseconds only to 128 ns. */
static bool milli(const char *t, int64_t *v)
{
	const char *dot = strchr(t, '.');
	bool neg = *t == '-';
	int64_t whole = 0, frac = 0;
	size_t nf;

	if (strpbrk(t, "eE") || !dot)
		return false;
	nf = strlen(dot + 1);
	if (strspn(dot + 1, "0123456789") != nf)
		return false;
	for (const char *c = t + neg; c < dot; c++)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, *c - '0', &whole))
			return false;
	for (size_t k = 0; k < 3; k++)
		frac = frac * 10 + (k < nf ? dot[1 + k] - '0' : 0);
	frac += nf > 3 && dot[4] >= '5';
	if (__builtin_mul_overflow(whole, 1000, &whole) ||
	    __builtin_add_overflow(whole, frac, &whole))
		return false;
	*v = neg ? -whole : whole;
	return true;
}

static bool value(struct parser *p, struct json *j);

static bool string(struct parser *p, char **out)
{
	size_t cap = 16, n = 0;
	char *b = malloc(cap);

	if (!b)
		return fail(p, "out of memory");
	p->i++;				/* the opening quote */
	for (;;) {
		unsigned char c;

		if (p->i >= p->len) {
			free(b);
			return fail(p, "unterminated string");
		}
		c = p->s[p->i++];
		if (c == '"')
			break;
		if (c < 0x20) {
			free(b);
			return fail(p, "control character in a string");
		}
		if (n + 4 >= cap) {
			char *nb = realloc(b, cap *= 2);

			if (!nb) {
				free(b);
				return fail(p, "out of memory");
			}
			b = nb;
		}
		if (c != '\\') {
			b[n++] = c;
			continue;
		}
		if (p->i >= p->len) {
			free(b);
			return fail(p, "unterminated escape");
		}
		c = p->s[p->i++];
		switch (c) {
		case '"':
		case '\\':
		case '/':
			b[n++] = c;
			break;
		case 'b':
			b[n++] = '\b';
			break;
		case 'f':
			b[n++] = '\f';
			break;
		case 'n':
			b[n++] = '\n';
			break;
		case 'r':
			b[n++] = '\r';
			break;
		case 't':
			b[n++] = '\t';
			break;
		case 'u': {
			unsigned int u = 0;

			for (int k = 0; k < 4; k++, p->i++) {
				char h = p->i < p->len ? p->s[p->i] : 0;

				u <<= 4;
				if (h >= '0' && h <= '9')
					u |= h - '0';
				else if (h >= 'a' && h <= 'f')
					u |= h - 'a' + 10;
				else if (h >= 'A' && h <= 'F')
					u |= h - 'A' + 10;
				else {
					free(b);
					return fail(p, "bad \\u escape");
				}
			}
			/* Names and ids only: keep ASCII, mark the rest. */
			b[n++] = u < 0x80 && u >= 0x20 ? (char)u : '?';
			break;
		}
		default:
			free(b);
			return fail(p, "bad escape");
		}
	}
	b[n] = 0;
	*out = b;
	return true;
}

static bool container(struct parser *p, struct json *j, bool obj)
{
	size_t cap = 0;

	if (++p->depth > MAX_DEPTH)
		return fail(p, "nested too deep");
	j->type = obj ? J_OBJ : J_ARR;
	p->i++;
	ws(p);
	if (p->i < p->len && p->s[p->i] == (obj ? '}' : ']')) {
		p->i++;
		p->depth--;
		return true;
	}
	for (;;) {
		char *key = NULL;

		ws(p);
		if (obj) {
			if (p->i >= p->len || p->s[p->i] != '"')
				return fail(p, "expected a key");
			if (!string(p, &key))
				return false;
			ws(p);
			if (p->i >= p->len || p->s[p->i] != ':') {
				free(key);
				return fail(p, "expected ':'");
			}
			p->i++;
		}
		if (j->n == cap) {
			size_t nc = cap ? cap * 2 : 8;
			struct json *k = realloc(j->kids, nc * sizeof(*k));
			char **ks = obj ? realloc(j->keys, nc * sizeof(*ks)) : NULL;

			if (!k || (obj && !ks)) {
				free(key);
				if (k)
					j->kids = k;
				if (ks)
					j->keys = ks;
				return fail(p, "out of memory");
			}
			j->kids = k;
			if (obj)
				j->keys = ks;
			cap = nc;
		}
		memset(&j->kids[j->n], 0, sizeof(j->kids[0]));
		if (obj)
			j->keys[j->n] = key;
		j->n++;
		if (!value(p, &j->kids[j->n - 1]))
			return false;
		ws(p);
		if (p->i < p->len && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->len && p->s[p->i] == (obj ? '}' : ']')) {
			p->i++;
			p->depth--;
			return true;
		}
		return fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static size_t digits(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && s[n] >= '0' && s[n] <= '9')
		n++;
	return n;
}

/* The length of the JSON number at @s (RFC 8259: -?(0|[1-9][0-9]*)
 * (.[0-9]+)?([eE][+-]?[0-9]+)?), or 0 if there is none. */
static size_t number_len(const char *s, size_t len)
{
	size_t n = 0, d;

	if (n < len && s[n] == '-')
		n++;
	d = digits(s + n, len - n);
	if (!d || (d > 1 && s[n] == '0'))
		return 0;
	n += d;
	if (n < len && s[n] == '.') {
		d = digits(s + n + 1, len - n - 1);
		if (!d)
			return 0;
		n += 1 + d;
	}
	if (n < len && (s[n] == 'e' || s[n] == 'E')) {
		n++;
		if (n < len && (s[n] == '+' || s[n] == '-'))
			n++;
		d = digits(s + n, len - n);
		if (!d)
			return 0;
		n += d;
	}
	return n;
}

static bool value(struct parser *p, struct json *j)
{
	ws(p);
	if (p->i >= p->len)
		return fail(p, "unexpected end");
	switch (p->s[p->i]) {
	case '{':
		return container(p, j, true);
	case '[':
		return container(p, j, false);
	case '"':
		j->type = J_STR;
		return string(p, &j->str);
	case 't':
	case 'f':
	case 'n': {
		static const char *const w[] = { "true", "false", "null" };

		for (int k = 0; k < 3; k++) {
			size_t l = strlen(w[k]);

			if (p->len - p->i >= l && !memcmp(p->s + p->i, w[k], l)) {
				p->i += l;
				j->type = k == 2 ? J_NULL : J_BOOL;
				j->b = k == 0;
				return true;
			}
		}
		return fail(p, "bad literal");
	}
	default: {
		size_t n = number_len(p->s + p->i, p->len - p->i);
		char *buf;

		if (!n)
			return fail(p, "bad value");
		buf = strndup(p->s + p->i, n);
		if (!buf)
			return fail(p, "out of memory");
		j->num = strtod(buf, NULL);
		if (!strpbrk(buf, ".eE")) {
			/* Integers exactly: ns since the epoch need 61 bits. */
			errno = 0;
			j->i = strtoll(buf, NULL, 10);
			j->is_int = !errno;
		} else {
			j->is_milli = milli(buf, &j->i);
		}
		free(buf);
		j->type = J_NUM;
		p->i += n;
		return true;
	}
	}
}

static void free_kids(struct json *j)
{
	for (size_t k = 0; k < j->n; k++) {
		free_kids(&j->kids[k]);
		if (j->keys)
			free(j->keys[k]);
	}
	free(j->kids);
	free(j->keys);
	free(j->str);
}

/* One value that starts @off bytes into its document, @depth deep: all of
 * @len, or if @used, what it takes of them (there). */
static struct json *parse(const char *text, size_t len, uint64_t off, int depth,
			  char *err, size_t errlen, size_t *used)
{
	struct parser p = { .s = text, .len = len, .off = off, .err = err,
			    .errlen = errlen, .depth = depth };
	struct json *j = calloc(1, sizeof(*j));

	err[0] = 0;
	if (!j)
		return NULL;
	if (value(&p, j)) {
		if (used) {
			*used = p.i;
			return j;
		}
		ws(&p);
		if (p.i == p.len)
			return j;
		fail(&p, "trailing data");
	}
	free_kids(j);
	free(j);
	return NULL;
}

struct json *hvn_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	return parse(text, len, 0, 0, err, errlen, NULL);
}

void hvn_json_free(struct json *j)
{
	if (!j)
		return;
	free_kids(j);
	free(j);
}

const struct json *hvn_json_get(const struct json *o, const char *key)
{
	if (!o || o->type != J_OBJ)
		return NULL;
	for (size_t k = 0; k < o->n; k++)
		if (!strcmp(o->keys[k], key))
			return &o->kids[k];
	return NULL;
}

bool hvn_json_milli(const struct json *j, int64_t *v)
{
	if (!j || j->type != J_NUM)
		return false;
	if (j->is_milli) {
		*v = j->i;
		return true;
	}
	return j->is_int && !__builtin_mul_overflow(j->i, 1000, v);
}

bool hvn_json_int(const struct json *j, int64_t *v)
{
	if (!j || j->type != J_NUM)
		return false;
	if (j->is_int) {
		*v = j->i;
		return true;
	}
	/* -2^63 <= num < 2^63, whole (NaN fails every comparison) */
	if (!(j->num >= -9223372036854775808.0 && j->num < 9223372036854775808.0) ||
	    j->num != (double)(int64_t)j->num)
		return false;
	*v = (int64_t)j->num;
	return true;
}

/* --- One value at a time ------------------------------------------------------ */

/* The buffer's first size (the fuzzer's build makes it tiny, so that its
 * growth and its compaction run at the sizes it tries). */
#ifndef HVN_JSTREAM_CHUNK
#define HVN_JSTREAM_CHUNK	(256 << 10)
#endif

struct json_stream {
	hvn_json_read_fn rd;
	void *ctx;
	char *b;
	size_t cap, start, end;		/* unread: b[start, end) */
	uint64_t base;			/* offset in the document of b[0] */
	bool eof, failed, first;
	int depth;			/* of the container being walked */
	char *key;
	char err[128];
};

static bool js_fail(struct json_stream *js, const char *what, size_t at)
{
	if (!js->failed)
		snprintf(js->err, sizeof(js->err), "%s at byte %llu", what,
			 (unsigned long long)(js->base + at));
	js->failed = true;
	return false;
}

/* More input; false at its end or on an error (js->failed). */
static bool fill(struct json_stream *js)
{
	ssize_t r;

	if (js->eof || js->failed)
		return false;
	/* Drop what was read, unless more is unread than read: each byte
	 * moves at most as often as a byte before it was consumed. */
	if (js->start && (js->end == js->cap || js->end - js->start <= js->start)) {
		memmove(js->b, js->b + js->start, js->end - js->start);
		js->base += js->start;
		js->end -= js->start;
		js->start = 0;
	}
	if (js->end == js->cap) {
		size_t nc = js->cap ? js->cap * 2 : HVN_JSTREAM_CHUNK;
		char *nb = realloc(js->b, nc);

		if (!nb)
			return js_fail(js, "out of memory", js->end);
		js->b = nb;
		js->cap = nc;
	}
	r = js->rd(js->ctx, js->b + js->end, js->cap - js->end);
	if (r < 0) {
		js->failed = true;	/* the reader says why */
		return false;
	}
	if (!r) {
		js->eof = true;
		return false;
	}
	js->end += r;
	return true;
}

/* The next byte that is no white space, left unread; -1 at the end. */
static int next_char(struct json_stream *js)
{
	for (;;) {
		while (js->start < js->end) {
			char c = js->b[js->start];

			if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
				return (unsigned char)c;
			js->start++;
		}
		if (!fill(js))
			return -1;
	}
}

/*
 * The length of the value at the start of the unread bytes, all of which
 * are then in the buffer: strings, brackets and delimiters only, the
 * parser judges the rest.  A closing bracket that does not match, or depth
 * beyond the parser's, ends it there, and the end of the input ends it
 * anywhere: the parser then says what is wrong, where.
 */
static size_t extent(struct json_stream *js)
{
	uint64_t closers = 0;		/* bit per level: 1 for '}' */
	int depth = 0;
	bool str = false, esc = false;

	for (size_t k = 0;; k++) {
		char c;

		if (js->start + k >= js->end && !fill(js))
			return k;
		c = js->b[js->start + k];
		if (str) {
			if (esc) {
				esc = false;
			} else if (c == '\\') {
				esc = true;
			} else if (c == '"') {
				str = false;
				if (!depth)
					return k + 1;
			}
			continue;
		}
		switch (c) {
		case '"':
			str = true;
			break;
		case '{':
		case '[':
			if (js->depth + ++depth > MAX_DEPTH)
				return k + 1;
			closers = closers << 1 | (c == '{');
			break;
		case '}':
		case ']':
			if (!depth)
				return k ? k : 1;
			if ((closers & 1) != (c == '}'))
				return k + 1;
			closers >>= 1;
			if (!--depth)
				return k + 1;
			break;
		case ',':
		case ' ':
		case '\t':
		case '\n':
		case '\r':
		case ':':
			if (!depth)
				return k ? k : 1;
			break;
		}
	}
}

struct json_stream *hvn_jstream_new(hvn_json_read_fn rd, void *ctx)
{
	struct json_stream *js = calloc(1, sizeof(*js));

	if (!js)
		return NULL;
	js->rd = rd;
	js->ctx = ctx;
	return js;
}

void hvn_jstream_free(struct json_stream *js)
{
	if (!js)
		return;
	free(js->b);
	free(js->key);
	free(js);
}

const char *hvn_jstream_error(const struct json_stream *js)
{
	return js->failed && js->err[0] ? js->err : NULL;
}

bool hvn_jstream_failed(const struct json_stream *js)
{
	return js->failed;
}

int hvn_jstream_begin(struct json_stream *js)
{
	int c;

	/* A UTF-8 byte-order mark, which some writers put first, is no
	 * part of the JSON. */
	while (js->end < 3 && fill(js))
		;
	if (js->end >= 3 && !memcmp(js->b, "\xef\xbb\xbf", 3))
		js->start = 3;
	c = next_char(js);
	if (c == '{') {
		js->start++;
		js->depth = 1;
		js->first = true;
		return 1;
	}
	return js->failed ? -1 : 0;
}

struct json *hvn_jstream_value(struct json_stream *js)
{
	char err[120];
	struct json *j;
	size_t n;

	if (next_char(js) < 0 && js->failed)
		return NULL;
	n = extent(js);
	if (js->failed)
		return NULL;
	/* What follows the value in its extent ("12x"), the container's
	 * walk judges as the tree parser would. */
	j = parse(js->b + js->start, n, js->base + js->start, js->depth, err, sizeof(err), &n);
	if (!j) {
		if (!js->failed)
			snprintf(js->err, sizeof(js->err), "%s",
				 err[0] ? err : "out of memory");
		js->failed = true;
		return NULL;
	}
	js->start += n;
	return j;
}

/* Past the ',' before the next member or element; 0 at the container's
 * closing @close, consumed. */
static int next_item(struct json_stream *js, char close, const char *expect)
{
	int c = next_char(js);

	if (c < 0 && js->failed)
		return -1;
	if (js->first) {
		js->first = false;
		if (c == close) {
			js->start++;
			return 0;
		}
		return 1;
	}
	if (c == close) {
		js->start++;
		return 0;
	}
	if (c != ',')
		return js_fail(js, expect, js->start), -1;
	js->start++;
	return 1;
}

int hvn_jstream_member(struct json_stream *js, const char **key)
{
	struct json *k;
	int r = next_item(js, '}', "expected ',' or '}'");

	if (r <= 0) {
		js->depth -= !r;
		return r;
	}
	if (next_char(js) != '"')
		return js_fail(js, "expected a key", js->start), -1;
	k = hvn_jstream_value(js);
	if (!k)
		return -1;
	free(js->key);
	js->key = k->str;
	k->str = NULL;
	hvn_json_free(k);
	if (next_char(js) != ':')
		return js_fail(js, "expected ':'", js->start), -1;
	js->start++;
	*key = js->key;
	return 1;
}

bool hvn_jstream_array(struct json_stream *js)
{
	if (next_char(js) != '[')
		return false;
	js->start++;
	js->depth++;
	js->first = true;
	return true;
}

int hvn_jstream_element(struct json_stream *js, struct json **e)
{
	int r = next_item(js, ']', "expected ',' or ']'");

	if (r <= 0) {
		if (!r) {
			js->depth--;
			js->first = false;
		}
		return r;
	}
	*e = hvn_jstream_value(js);
	return *e ? 1 : -1;
}

bool hvn_jstream_skip(struct json_stream *js)
{
	struct json *e;
	int r;

	if (!hvn_jstream_array(js)) {
		e = hvn_jstream_value(js);
		hvn_json_free(e);
		return e != NULL;
	}
	while ((r = hvn_jstream_element(js, &e)) > 0)
		hvn_json_free(e);
	return !r;
}

bool hvn_jstream_end(struct json_stream *js)
{
	if (next_char(js) >= 0)
		return js_fail(js, "trailing data", js->start);
	return !js->failed;
}
