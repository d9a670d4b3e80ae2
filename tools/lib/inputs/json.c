// SPDX-License-Identifier: GPL-2.0
/*
 * JSON to a tree.  Depth is bounded and every read is bounds-checked: the
 * input may be any file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/json.h"

#define MAX_DEPTH	64

struct parser {
	const char *s;
	size_t len, i;
	char *err;
	size_t errlen;
	int depth;
};

static bool fail(struct parser *p, const char *what)
{
	if (!p->err[0])
		snprintf(p->err, p->errlen, "%s at byte %zu", what, p->i);
	return false;
}

static void ws(struct parser *p)
{
	while (p->i < p->len && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
				 p->s[p->i] == '\n' || p->s[p->i] == '\r'))
		p->i++;
}

/* "[-]D[.DDD]" (up to three decimals, no exponent) times 1000, exactly:
 * a double holds epoch microseconds only to 128 ns. */
static bool milli(const char *t, int64_t *v)
{
	const char *dot = strchr(t, '.');
	bool neg = *t == '-';
	int64_t whole = 0, frac = 0;
	size_t nf;

	if (strpbrk(t, "eE") || !dot)
		return false;
	nf = strlen(dot + 1);
	if (nf > 3 || strspn(dot + 1, "0123456789") != nf)
		return false;
	for (const char *c = t + neg; c < dot; c++)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, *c - '0', &whole))
			return false;
	for (size_t k = 0; k < 3; k++)
		frac = frac * 10 + (k < nf ? dot[1 + k] - '0' : 0);
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

struct json *hvn_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct parser p = { .s = text, .len = len, .err = err, .errlen = errlen };
	struct json *j = calloc(1, sizeof(*j));

	err[0] = 0;
	if (!j)
		return NULL;
	if (value(&p, j)) {
		ws(&p);
		if (p.i == p.len)
			return j;
		fail(&p, "trailing data");
	}
	free_kids(j);
	free(j);
	return NULL;
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
