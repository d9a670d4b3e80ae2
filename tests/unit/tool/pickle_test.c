// SPDX-License-Identifier: GPL-2.0
/*
 * Cases for tools/lib/inputs/pickle.c: the opcodes PyTorch's jit pickler
 * writes for a Flight Recorder dump (protocol 2, every string memoized,
 * shared dicts fetched from the memo), those Python's pickle writes
 * (protocols 4 and 5: FRAME, MEMOIZE, a list memoized before it is
 * filled), and what must be refused.
 */
#include <stdlib.h>

#include "hvn_test.h"
#include "inputs/pickle.h"

static char err[200];

static struct json *parse(const char *s, size_t len)
{
	return hvn_pickle_parse(s, len, err, sizeof(err));
}

#define P(lit)	parse(lit, sizeof(lit) - 1)

/* {"version": "2.10", "t": 1700000000123456789, "d": 2.5, "neg": -1,
 *  "pg": ("0", "default_pg"), "l": [{"a": 1}, <the same dict>], "n": None,
 *  "b": True, "s": 300}, as the jit pickler writes it. */
static const char jit_dump[] =
	"\x80\x02}q\x00("
	"X\x07\x00\x00\x00versionq\x01X\x04\x00\x00\x00" "2.10q\x02"
	"X\x01\x00\x00\x00tq\x03\x8a\x08\x15\xcd\x85\x3d\xfe\x9c\x97\x17"
	"X\x01\x00\x00\x00" "dq\x04G\x40\x04\x00\x00\x00\x00\x00\x00"
	"X\x03\x00\x00\x00negq\x05J\xff\xff\xff\xff"
	"X\x02\x00\x00\x00pgq\x06X\x01\x00\x00\x00" "0q\x07"
	"X\x0a\x00\x00\x00" "default_pgq\x08\x86"
	"X\x01\x00\x00\x00lq\x09](}(X\x01\x00\x00\x00" "aq\x0aK\x01uq\x0bh\x0b" "e"
	"X\x01\x00\x00\x00nq\x0cN"
	"X\x01\x00\x00\x00" "bq\x0d\x88"
	"X\x01\x00\x00\x00sq\x0eM\x2c\x01"
	"u.";

static void pickle_jit_dump(struct hvn_test *t)
{
	struct json *j = parse(jit_dump, sizeof(jit_dump) - 1);
	const struct json *v;
	int64_t i;

	HT_EXPECT_STREQ(t, err, "");
	HT_EXPECT_TRUE(t, j && j->type == J_OBJ && j->n == 9);
	if (!j)
		return;
	v = hvn_json_get(j, "version");
	HT_EXPECT_TRUE(t, v && v->type == J_STR && !strcmp(v->str, "2.10"));
	/* ns since the epoch, exactly (a double would round to 256 ns) */
	v = hvn_json_get(j, "t");
	HT_EXPECT_TRUE(t, hvn_json_int(v, &i) && i == 1700000000123456789LL);
	v = hvn_json_get(j, "d");
	HT_EXPECT_TRUE(t, v && v->type == J_NUM && v->num == 2.5 && !v->is_int);
	HT_EXPECT_TRUE(t, hvn_json_int(hvn_json_get(j, "neg"), &i) && i == -1);
	HT_EXPECT_TRUE(t, hvn_json_int(hvn_json_get(j, "s"), &i) && i == 300);
	v = hvn_json_get(j, "pg");
	HT_EXPECT_TRUE(t, v && v->type == J_ARR && v->n == 2 &&
		       !strcmp(v->kids[1].str, "default_pg"));
	/* the shared dict, copied out twice */
	v = hvn_json_get(j, "l");
	HT_EXPECT_TRUE(t, v && v->type == J_ARR && v->n == 2 &&
		       hvn_json_int(hvn_json_get(&v->kids[1], "a"), &i) && i == 1);
	HT_EXPECT_TRUE(t, hvn_json_get(j, "n") && hvn_json_get(j, "n")->type == J_NULL);
	HT_EXPECT_TRUE(t, hvn_json_get(j, "b") && hvn_json_get(j, "b")->b);
	hvn_json_free(j);
}

/* Python 3.8+: pickle.dumps({"e": [1, "x"], "k": (), 7: False}, 5).  The
 * list is memoized empty and filled after: the memo shares it. */
static void pickle_python5(struct hvn_test *t)
{
	static const char p5[] =
		"\x80\x05\x95\x1b\x00\x00\x00\x00\x00\x00\x00}\x94("
		"\x8c\x01" "e\x94]\x94(K\x01\x8c\x01x\x94" "e"
		"\x8c\x01k\x94)K\x07\x89u.";
	static const char shared[] =	/* l = [5]; [l, l] */
		"\x80\x04\x95\x0c\x00\x00\x00\x00\x00\x00\x00]\x94(]\x94K\x05" "ah\x01" "e.";
	struct json *j = P(p5);
	const struct json *v;
	int64_t i;

	HT_EXPECT_STREQ(t, err, "");
	if (!j)
		return;
	v = hvn_json_get(j, "e");
	HT_EXPECT_TRUE(t, v && v->n == 2 && v->kids[1].type == J_STR);
	v = hvn_json_get(j, "k");
	HT_EXPECT_TRUE(t, v && v->type == J_ARR && v->n == 0);
	/* an integer key becomes its decimal string */
	v = hvn_json_get(j, "7");
	HT_EXPECT_TRUE(t, v && v->type == J_BOOL && !v->b);
	hvn_json_free(j);
	j = P(shared);
	HT_EXPECT_STREQ(t, err, "");
	/* both elements are the one list, which got the 5 */
	HT_EXPECT_TRUE(t, j && j->n == 2 && j->kids[0].n == 1 &&
		       j->kids[1].n == 1 &&
		       hvn_json_int(&j->kids[1].kids[0], &i) && i == 5);
	hvn_json_free(j);
}

static void pickle_ints(struct hvn_test *t)
{
	static const struct {
		const char *p;
		size_t len;
		int64_t v;
	} c[] = {
		{ "\x80\x02K\xff.", 5, 255 },
		{ "\x80\x02M\xff\xff.", 6, 65535 },
		{ "\x80\x02J\x00\x00\x00\x80.", 8, INT32_MIN },
		{ "\x80\x02\x8a\x00.", 5, 0 },
		{ "\x80\x02\x8a\x01\xff.", 6, -1 },
		{ "\x80\x02\x8a\x02\x00\x80.", 7, -32768 },
		{ "\x80\x02\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f.", 13, INT64_MAX },
		{ "\x80\x02\x8b\x01\x00\x00\x00\x7f.", 9, 127 },
	};

	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		struct json *j = parse(c[k].p, c[k].len);
		int64_t v = 0;

		HT_EXPECT_TRUE(t, hvn_json_int(j, &v));
		HT_EXPECT_EQ(t, v, c[k].v);
		hvn_json_free(j);
	}
}

/* @p must be refused with @why in the message. */
static void refused(struct hvn_test *t, const char *p, size_t len,
		    const char *why)
{
	struct json *j = parse(p, len);

	HT_EXPECT_TRUE(t, j == NULL);
	hvn_json_free(j);
	HT_EXPECT_SUBSTR(t, err, why);
}

#define REFUSED(t, lit, why)	refused(t, lit, sizeof(lit) - 1, why)

/* Objects are never built: what os.system would need is refused by name. */
static void pickle_refuses_objects(struct hvn_test *t)
{
	REFUSED(t, "\x80\x02" "cposix\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85R.",
		"(GLOBAL) would build an object");
	REFUSED(t, "\x80\x04\x8c\x02os\x8c\x06system\x93.", "STACK_GLOBAL");
	REFUSED(t, "\x80\x02}R.", "REDUCE");
	REFUSED(t, "\x80\x02}}b.", "BUILD");
	REFUSED(t, "\x80\x02X\x01\x00\x00\x00" "aQ.", "BINPERSID");
	REFUSED(t, "\x80\x05\x97.", "NEXT_BUFFER");
	REFUSED(t, "\x80\x02" "C\x01x.", "(bytes)");
	REFUSED(t, "\x80\x01N.", "protocol 1");
	REFUSED(t, "\x80\x06N.", "protocol 6");
	REFUSED(t, "\x80\x02I1\n.", "0x49 is not read");
}

static void pickle_refuses_damage(struct hvn_test *t)
{
	REFUSED(t, "\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01.",
		"beyond 64 bits");
	REFUSED(t, "\x80\x02\x8b\xff\xff\xff\xff.", "longer than the file");
	REFUSED(t, "\x80\x02X\xff\xff\xff\x7f" "ab.", "longer than the file");
	REFUSED(t, "\x80\x02h\x05.", "memo entry 5 was never set");
	REFUSED(t, "\x80\x02r\x00\x00\x00\x7f.", "memoizing an empty stack");
	REFUSED(t, "\x80\x02Nr\x00\x00\x00\x7f.", "too large");
	REFUSED(t, "\x80\x02NN.", "leaves 2 values");
	REFUSED(t, "\x80\x02N.x", "trailing data");
	REFUSED(t, "\x80\x02N", "without STOP");
	REFUSED(t, "\x80\x02" "e.", "no MARK");
	REFUSED(t, "\x80\x02(K\x01" "e.", "nothing to add items to");
	REFUSED(t, "\x80\x02K\x01K\x02" "a.", "not a list");
	REFUSED(t, "\x80\x02)K\x01" "a.", "not a list");
	REFUSED(t, "\x80\x02}(K\x01u.", "without a value");
	REFUSED(t, "\x80\x02}(G\x00\x00\x00\x00\x00\x00\x00\x00K\x01u.",
		"not a string or an integer");
	REFUSED(t, "\x80\x02X\x01\x00\x00\x00\x00.", "NUL byte");
	REFUSED(t, "\x80\x02" "a.", "underflow");
	/* a list that holds itself */
	REFUSED(t, "\x80\x02]q\x00h\x00" "a.", "holds itself");
}

/* Every prefix of a good dump is refused, never read past its end. */
static void pickle_truncated(struct hvn_test *t)
{
	size_t len = sizeof(jit_dump) - 1, bad = 0;

	for (size_t n = 0; n < len; n++) {
		char *copy = malloc(n ? n : 1);
		struct json *j;

		memcpy(copy, jit_dump, n);
		j = parse(copy, n);
		bad += j != NULL || !err[0];
		hvn_json_free(j);
		free(copy);
	}
	HT_EXPECT_EQ(t, bad, 0);
}

/* Ten lists of ten times the one before: 10^10 values from 100 bytes. */
static void pickle_expansion_bounded(struct hvn_test *t)
{
	char p[512];
	size_t n = 0;

	memcpy(p, "\x80\x02K\x00q\x00" "0", 7);
	n = 7;
	for (int level = 0; level < 10; level++) {
		p[n++] = ']';
		p[n++] = '(';
		for (int k = 0; k < 10; k++) {
			p[n++] = 'h';
			p[n++] = level;
		}
		p[n++] = 'e';
		p[n++] = 'q';
		p[n++] = level + 1;
		p[n++] = '0';	/* POP: only the memo holds it */
	}
	p[n++] = 'h';
	p[n++] = 10;
	p[n++] = '.';
	HT_EXPECT_TRUE(t, hvn_pickle_parse(p, n, err, sizeof(err)) == NULL);
	HT_EXPECT_SUBSTR(t, err, "expands beyond");
}

/* One 100 KB string fetched from the memo 5,000 times: 500 MB asked of a
 * 100 KB file; bytes are budgeted, not only values. */
static void pickle_string_expansion_bounded(struct hvn_test *t)
{
	size_t slen = 100000, n = 0, len = slen + 5 * 1024 * 2 + 64;
	char *p = malloc(len);

	memcpy(p + n, "\x80\x02X", 3);
	n += 3;
	p[n++] = slen & 0xff;
	p[n++] = slen >> 8 & 0xff;
	p[n++] = slen >> 16 & 0xff;
	p[n++] = 0;
	memset(p + n, 'a', slen);
	n += slen;
	memcpy(p + n, "q\x00" "0](", 5);
	n += 5;
	for (int k = 0; k < 5000; k++) {
		p[n++] = 'h';
		p[n++] = 0;
	}
	p[n++] = 'e';
	p[n++] = '.';
	HT_EXPECT_TRUE(t, hvn_pickle_parse(p, n, err, sizeof(err)) == NULL);
	HT_EXPECT_SUBSTR(t, err, "expands beyond");
	free(p);
}

/* What the jit pickler writes past 255 memo entries, and for empty
 * containers; MEMOIZE mixed with BINPUT counts the slots set, as Python
 * does (pickle.loads gives ['A', 'B', 'A', 'B']). */
static void pickle_memo_forms(struct hvn_test *t)
{
	static const char long_memo[] =
		"\x80\x02](X\x01\x00\x00\x00zr\x00\x01\x00\x00"
		"}(u](ej\x00\x01\x00\x00" "e.";
	static const char mixed[] =
		"\x80\x04](\x8c\x01" "Aq\x00\x8c\x01" "B\x94h\x00h\x01" "e.";
	struct json *j = P(long_memo);

	HT_EXPECT_STREQ(t, err, "");
	HT_EXPECT_TRUE(t, j && j->n == 4 && j->kids[1].type == J_OBJ &&
		       j->kids[1].n == 0 && j->kids[2].type == J_ARR &&
		       j->kids[2].n == 0 && j->kids[3].type == J_STR &&
		       !strcmp(j->kids[3].str, "z"));
	hvn_json_free(j);
	j = P(mixed);
	HT_EXPECT_STREQ(t, err, "");
	HT_EXPECT_TRUE(t, j && j->n == 4 && !strcmp(j->kids[2].str, "A") &&
		       !strcmp(j->kids[3].str, "B"));
	hvn_json_free(j);
}

static void pickle_duplicate_keys(struct hvn_test *t)
{
	REFUSED(t, "\x80\x02}(X\x01\x00\x00\x00" "aK\x01X\x01\x00\x00\x00" "aK\x02u.",
		"dict key \"a\" given twice");
	/* 1 and "1" are one key once written as JSON's */
	REFUSED(t, "\x80\x02}(K\x01K\x01X\x01\x00\x00\x00" "1K\x02u.",
		"given twice");
}

/* An error buffer of 0 or 1 byte still fails the parse, never reads on. */
static void pickle_tiny_err_buffer(struct hvn_test *t)
{
	char one[1];

	HT_EXPECT_TRUE(t, hvn_pickle_parse("\x80\x02(", 3, one, sizeof(one)) == NULL);
	HT_EXPECT_TRUE(t, hvn_pickle_parse("\x80\x02(", 3, NULL, 0) == NULL);
	HT_EXPECT_TRUE(t, hvn_pickle_parse("\x80\x02\x8a\x09", 4, one, sizeof(one)) == NULL);
}

static void pickle_detect(struct hvn_test *t)
{
	HT_EXPECT_TRUE(t, hvn_pickle_is("\x80\x02}", 3));
	HT_EXPECT_FALSE(t, hvn_pickle_is("{\"version\"", 10));
	HT_EXPECT_FALSE(t, hvn_pickle_is("\x80", 1));
}

static struct ht_case pickle_cases[] = {
	HT_CASE(pickle_jit_dump),
	HT_CASE(pickle_python5),
	HT_CASE(pickle_ints),
	HT_CASE(pickle_refuses_objects),
	HT_CASE(pickle_refuses_damage),
	HT_CASE(pickle_truncated),
	HT_CASE(pickle_expansion_bounded),
	HT_CASE(pickle_string_expansion_bounded),
	HT_CASE(pickle_memo_forms),
	HT_CASE(pickle_duplicate_keys),
	HT_CASE(pickle_tiny_err_buffer),
	HT_CASE(pickle_detect),
	{}
};
HT_SUITE(pickle, pickle_cases);
