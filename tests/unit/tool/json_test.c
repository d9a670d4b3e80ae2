// SPDX-License-Identifier: GPL-2.0
/* Cases for tools/lib/inputs/json.c, the reader of correlate's inputs. */
#include <stdlib.h>

#include "hvn_test.h"
#include "inputs/json.h"

static char err[128];

static struct json *parse(const char *s)
{
	return hvn_json_parse(s, strlen(s), err, sizeof(err));
}

/* @s must be refused with an error naming @why and the byte @at. */
static void expect_error(struct hvn_test *t, const char *s, const char *why,
			 const char *at)
{
	struct json *j = parse(s);

	HT_EXPECT_TRUE(t, j == NULL);
	hvn_json_free(j);
	HT_EXPECT_SUBSTR(t, err, why);
	HT_EXPECT_SUBSTR(t, err, at);
}

static void json_scalars(struct hvn_test *t)
{
	struct json *j;

	j = parse("null");
	HT_EXPECT_TRUE(t, j && j->type == J_NULL);
	hvn_json_free(j);
	j = parse(" true ");
	HT_EXPECT_TRUE(t, j && j->type == J_BOOL && j->b);
	hvn_json_free(j);
	j = parse("\n\tfalse\r\n");
	HT_EXPECT_TRUE(t, j && j->type == J_BOOL && !j->b);
	hvn_json_free(j);
	j = parse("\"\"");
	HT_EXPECT_TRUE(t, j && j->type == J_STR);
	if (j)
		HT_EXPECT_STREQ(t, j->str, "");
	hvn_json_free(j);
	HT_EXPECT_STREQ(t, err, "");
}

static void json_numbers(struct hvn_test *t)
{
	static const struct {
		const char *s;
		double v;
	} c[] = {
		{ "0", 0 }, { "-0", 0 }, { "42", 42 }, { "-17", -17 },
		{ "3.25", 3.25 }, { "-0.5", -0.5 }, { "1e3", 1000 },
		{ "1E3", 1000 }, { "2.5e-3", 0.0025 }, { "-4E+2", -400 },
		{ "1700000000123456789", 1700000000123456789.0 },
		{ "18446744073709551615", 18446744073709551615.0 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct json *j = parse(c[i].s);

		HT_EXPECT_TRUE(t, j && j->type == J_NUM);
		if (j && j->num != c[i].v)
			ht_fail(t, __FILE__, __LINE__, "%s: %g != %g",
				c[i].s, j->num, c[i].v);
		hvn_json_free(j);
	}
}

static void json_nesting(struct hvn_test *t)
{
	const char *doc = "{\"a\": [1, {\"b\": [true, null, \"x\"]}, []],"
			  " \"c\": {}, \"d\": -2.5e1}";
	const struct json *a, *b, *c;
	struct json *j = parse(doc);

	HT_EXPECT_TRUE(t, j != NULL);
	if (!j)
		return;
	HT_EXPECT_EQ(t, j->type, J_OBJ);
	HT_EXPECT_EQ(t, j->n, 3);
	HT_EXPECT_STREQ(t, j->keys[0], "a");
	HT_EXPECT_STREQ(t, j->keys[2], "d");
	a = hvn_json_get(j, "a");
	HT_EXPECT_TRUE(t, a && a->type == J_ARR && a->n == 3);
	if (a && a->n == 3) {
		HT_EXPECT_EQ(t, a->kids[0].type, J_NUM);
		HT_EXPECT_EQ(t, a->kids[0].num, 1);
		b = hvn_json_get(&a->kids[1], "b");
		HT_EXPECT_TRUE(t, b && b->type == J_ARR && b->n == 3);
		if (b && b->n == 3) {
			HT_EXPECT_TRUE(t, b->kids[0].type == J_BOOL &&
					  b->kids[0].b);
			HT_EXPECT_EQ(t, b->kids[1].type, J_NULL);
			HT_EXPECT_STREQ(t, b->kids[2].str, "x");
		}
		HT_EXPECT_TRUE(t, a->kids[2].type == J_ARR &&
				  a->kids[2].n == 0);
	}
	c = hvn_json_get(j, "c");
	HT_EXPECT_TRUE(t, c && c->type == J_OBJ && c->n == 0);
	HT_EXPECT_TRUE(t, hvn_json_get(j, "d") && hvn_json_get(j, "d")->num == -25);
	/* Only objects have keys; a missing key is NULL. */
	HT_EXPECT_TRUE(t, hvn_json_get(j, "e") == NULL);
	HT_EXPECT_TRUE(t, hvn_json_get(a, "b") == NULL);
	HT_EXPECT_TRUE(t, hvn_json_get(NULL, "a") == NULL);
	hvn_json_free(j);
}

static void json_empty_containers(struct hvn_test *t)
{
	struct json *j;

	j = parse("[]");
	HT_EXPECT_TRUE(t, j && j->type == J_ARR && j->n == 0);
	hvn_json_free(j);
	j = parse("{ }");
	HT_EXPECT_TRUE(t, j && j->type == J_OBJ && j->n == 0);
	hvn_json_free(j);
	j = parse("[[],{},[[]]]");
	HT_EXPECT_TRUE(t, j && j->type == J_ARR && j->n == 3);
	hvn_json_free(j);
}

static void json_escapes(struct hvn_test *t)
{
	struct json *j;

	j = parse("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t\"");
	HT_EXPECT_TRUE(t, j && j->type == J_STR);
	if (j)
		HT_EXPECT_STREQ(t, j->str, "q\" b\\ s/ \b\f\n\r\t");
	hvn_json_free(j);
	/* \u: printable ASCII is kept, either case of hex digits. */
	j = parse("\"\\u0041\\u007a\\u007E\"");
	if (j)
		HT_EXPECT_STREQ(t, j->str, "Az~");
	hvn_json_free(j);
	/* The rest, controls and NUL included, is marked '?' (json.c). */
	j = parse("\"a\\u0000b\\u001fc\\u00e9d\"");
	if (j)
		HT_EXPECT_STREQ(t, j->str, "a?b?c?d");
	hvn_json_free(j);
	/* A surrogate pair is two escapes: two marks, nothing decoded. */
	j = parse("\"\\ud83d\\ude00\"");
	if (j)
		HT_EXPECT_STREQ(t, j->str, "??");
	hvn_json_free(j);
	/* Raw UTF-8 passes through untouched. */
	j = parse("\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
	if (j)
		HT_EXPECT_STREQ(t, j->str, "caf\xc3\xa9 \xf0\x9f\x98\x80");
	hvn_json_free(j);
}

/* A string longer than the first buffer, full of escapes, grows intact. */
static void json_long_string(struct hvn_test *t)
{
	char in[2 + 3 * 200 + 1], want[2 * 200 + 1];
	struct json *j;
	size_t n = 0;

	in[n++] = '"';
	for (int i = 0; i < 200; i++) {
		in[n++] = 'x';
		in[n++] = '\\';
		in[n++] = 'n';
		want[2 * i] = 'x';
		want[2 * i + 1] = '\n';
	}
	in[n++] = '"';
	in[n] = 0;
	want[400] = 0;
	j = parse(in);
	HT_EXPECT_TRUE(t, j && j->type == J_STR);
	if (j)
		HT_EXPECT_STREQ(t, j->str, want);
	hvn_json_free(j);
}

static void json_truncated(struct hvn_test *t)
{
	expect_error(t, "", "unexpected end", "byte 0");
	expect_error(t, "   ", "unexpected end", "byte 3");
	expect_error(t, "[", "unexpected end", "byte 1");
	expect_error(t, "[1,", "unexpected end", "byte 3");
	expect_error(t, "[1", "expected ',' or ']'", "byte 2");
	expect_error(t, "{", "expected a key", "byte 1");
	expect_error(t, "{\"a\"", "expected ':'", "byte 4");
	expect_error(t, "{\"a\":", "unexpected end", "byte 5");
	expect_error(t, "{\"a\":1", "expected ',' or '}'", "byte 6");
	expect_error(t, "\"abc", "unterminated string", "byte 4");
	expect_error(t, "\"abc\\", "unterminated escape", "byte 5");
	expect_error(t, "\"\\u12", "bad \\u escape", "byte 5");
	expect_error(t, "tru", "bad literal", "byte 0");
	expect_error(t, "nul", "bad literal", "byte 0");
}

/* @len bounds the parse, not a NUL: the rest of the buffer is not read. */
static void json_length_bounded(struct hvn_test *t)
{
	struct json *j = hvn_json_parse("[1, 2] garbage", 6, err, sizeof(err));

	HT_EXPECT_TRUE(t, j && j->type == J_ARR && j->n == 2);
	hvn_json_free(j);
	j = hvn_json_parse("\"abc\"", 3, err, sizeof(err));
	HT_EXPECT_TRUE(t, j == NULL);
	HT_EXPECT_SUBSTR(t, err, "unterminated string");
	j = hvn_json_parse("true", 3, err, sizeof(err));
	HT_EXPECT_TRUE(t, j == NULL);
	HT_EXPECT_SUBSTR(t, err, "bad literal");
}

static void json_trailing(struct hvn_test *t)
{
	expect_error(t, "{} x", "trailing data", "byte 3");
	expect_error(t, "[1] [2]", "trailing data", "byte 4");
	expect_error(t, "nulll", "trailing data", "byte 4");
	expect_error(t, "1 2", "trailing data", "byte 2");
	expect_error(t, "0x10", "trailing data", "byte 1");
}

static void json_bad_syntax(struct hvn_test *t)
{
	expect_error(t, "\"a\\x\"", "bad escape", "byte 4");
	expect_error(t, "\"\\uZZZZ\"", "bad \\u escape", "byte 3");
	expect_error(t, "\"a\nb\"", "control character", "byte 3");
	expect_error(t, "{1: 2}", "expected a key", "byte 1");
	expect_error(t, "{\"a\" 1}", "expected ':'", "byte 5");
	expect_error(t, "{\"a\": 1,}", "expected a key", "byte 8");
	expect_error(t, "[1 2]", "expected ',' or ']'", "byte 3");
	expect_error(t, "[1,]", "bad value", "byte 3");
	expect_error(t, "{\"a\": 1]", "expected ',' or '}'", "byte 7");
	expect_error(t, "[nan]", "bad literal", "byte 1");
	expect_error(t, "[NaN]", "bad value", "byte 1");
	expect_error(t, "-", "bad value", "byte 0");
	expect_error(t, "1e", "bad value", "byte 0");
	/* A number ends where its grammar does: the rest is left over. */
	expect_error(t, "1-2", "trailing data", "byte 1");
	expect_error(t, "'a'", "bad value", "byte 0");
	/* An error in a nested value frees what was built around it. */
	expect_error(t, "{\"a\": [1, {\"b\": \"c\", \"d\": [tx]}]}",
		     "bad literal", "byte 27");
}

/*
 * Numbers JSON (RFC 8259) does not allow: a leading '+', leading zeros, a
 * bare fraction or a trailing '.'.
 */
static void json_strict_numbers(struct hvn_test *t)
{
	static const char *const bad[] = { "+1", "01", ".5", "1.", "-.5" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json *j = parse(bad[i]);

		if (j)
			ht_fail(t, __FILE__, __LINE__,
				"\"%s\" is not JSON but parsed as %g",
				bad[i], j->num);
		hvn_json_free(j);
	}
}

/* A valid number longer than json.c's 63-byte copy. */
static void json_long_number(struct hvn_test *t)
{
	char s[80];
	struct json *j;

	/* "0." then 70 zeros, then 1: 1e-71. */
	memset(s, '0', sizeof(s));
	s[1] = '.';
	s[72] = '1';
	s[73] = 0;
	j = parse(s);
	HT_EXPECT_TRUE(t, j && j->type == J_NUM);
	if (!j)
		HT_EXPECT_STREQ(t, err, "");
	hvn_json_free(j);
}

static char *nest(int depth, char open, char close)
{
	char *s = malloc(2 * depth + 1);

	if (!s)
		return NULL;
	memset(s, open, depth);
	memset(s + depth, close, depth);
	s[2 * depth] = 0;
	return s;
}

static void json_depth_limit(struct hvn_test *t)
{
	char *s = nest(64, '[', ']');
	struct json *j;

	/* 64 levels are taken ... */
	j = s ? parse(s) : NULL;
	HT_EXPECT_TRUE(t, j && j->type == J_ARR && j->n == 1);
	hvn_json_free(j);
	free(s);
	/* ... 65 are not, however they end. */
	s = nest(65, '[', ']');
	if (s)
		expect_error(t, s, "nested too deep", "byte 64");
	free(s);
	s = nest(100000, '[', ']');
	if (s) {
		s[100000] = 0;
		expect_error(t, s, "nested too deep", "byte 64");
	}
	free(s);
	/* Objects count too. */
	expect_error(t, "{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":"
		     "{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":"
		     "{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":"
		     "{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":"
		     "{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":"
		     "{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":"
		     "{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":"
		     "{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":"
		     "{\"a\":", "nested too deep", "byte 320");
}

/* Duplicate keys are all kept, in order; hvn_json_get finds the first. */
static void json_duplicate_keys(struct hvn_test *t)
{
	struct json *j = parse("{\"k\": 1, \"x\": 0, \"k\": 2}");

	HT_EXPECT_TRUE(t, j && j->n == 3);
	if (!j)
		return;
	HT_EXPECT_EQ(t, hvn_json_get(j, "k")->num, 1);
	HT_EXPECT_STREQ(t, j->keys[2], "k");
	HT_EXPECT_EQ(t, j->kids[2].num, 2);
	hvn_json_free(j);
}

/* A small error buffer truncates the message, never overflows. */
static void json_small_err_buffer(struct hvn_test *t)
{
	char small[8];
	struct json *j = hvn_json_parse("[1,", 3, small, sizeof(small));

	HT_EXPECT_TRUE(t, j == NULL);
	HT_EXPECT_STREQ(t, small, "unexpec");
	hvn_json_free(NULL);
}

/* Integers exactly (ns since the epoch need 61 bits, a double holds 53);
 * a conversion that would round or wrap is refused. */
static void json_exact_ints(struct hvn_test *t)
{
	static const struct {
		const char *s;
		bool ok;
		int64_t v;
	} c[] = {
		{ "1700000000123456789", true, 1700000000123456789LL },
		{ "-9223372036854775808", true, INT64_MIN },
		{ "9223372036854775807", true, INT64_MAX },
		{ "1e3", true, 1000 }, { "-0", true, 0 },
		{ "9223372036854775808", false, 0 }, { "1.5", false, 0 },
		{ "1e999", false, 0 }, { "-1e999", false, 0 },
		{ "\"1\"", false, 0 },
	};

	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		struct json *j = parse(c[k].s);
		int64_t v = 0;

		HT_EXPECT_EQ(t, hvn_json_int(j, &v), c[k].ok);
		HT_EXPECT_EQ(t, v, c[k].v);
		hvn_json_free(j);
	}
}

static struct ht_case json_cases[] = {
	HT_CASE(json_exact_ints),
	HT_CASE(json_scalars),
	HT_CASE(json_numbers),
	HT_CASE(json_nesting),
	HT_CASE(json_empty_containers),
	HT_CASE(json_escapes),
	HT_CASE(json_long_string),
	HT_CASE(json_truncated),
	HT_CASE(json_length_bounded),
	HT_CASE(json_trailing),
	HT_CASE(json_bad_syntax),
	HT_CASE(json_strict_numbers),
	HT_CASE(json_long_number),
	HT_CASE(json_depth_limit),
	HT_CASE(json_duplicate_keys),
	HT_CASE(json_small_err_buffer),
	{}
};
HT_SUITE(json, json_cases);
