// SPDX-License-Identifier: GPL-2.0
/* Cases for tools/lib/out/jsonw.c, the one JSON string escaper. */
#include <stdlib.h>

#include "hvn_test.h"
#include "inputs/json.h"
#include "out/jsonw.h"

/* hvn_json_str(@s) as a string; the caller frees it. */
static char *esc(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	hvn_json_str(f, s);
	fclose(f);
	return buf;
}

#define EXPECT_ESC(t, in, want) do {					\
	char *got_ = esc(in);						\
									\
	HT_EXPECT_TRUE(t, got_ != NULL);				\
	if (got_)							\
		HT_EXPECT_STREQ(t, got_, want);				\
	free(got_);							\
} while (0)

static void jsonw_plain(struct hvn_test *t)
{
	EXPECT_ESC(t, "", "\"\"");
	EXPECT_ESC(t, "mlx5_comp0@pci:0000:17:00.0",
		   "\"mlx5_comp0@pci:0000:17:00.0\"");
	EXPECT_ESC(t, "a/b 'c' ~", "\"a/b 'c' ~\"");
}

static void jsonw_escapes(struct hvn_test *t)
{
	EXPECT_ESC(t, "say \"hi\"", "\"say \\\"hi\\\"\"");
	EXPECT_ESC(t, "C:\\dir\\", "\"C:\\\\dir\\\\\"");
	EXPECT_ESC(t, "\\\"", "\"\\\\\\\"\"");
}

static void jsonw_controls(struct hvn_test *t)
{
	EXPECT_ESC(t, "a\nb", "\"a\\u000ab\"");
	EXPECT_ESC(t, "\t\r\b\f", "\"\\u0009\\u000d\\u0008\\u000c\"");
	EXPECT_ESC(t, "\x01\x1f", "\"\\u0001\\u001f\"");
	EXPECT_ESC(t, "del\x7f", "\"del\\u007f\"");
	/* 0x20 is not a control. */
	EXPECT_ESC(t, " ", "\" \"");
}

static void jsonw_utf8_kept(struct hvn_test *t)
{
	EXPECT_ESC(t, "caf\xc3\xa9", "\"caf\xc3\xa9\"");
	/* The smallest and largest of each length. */
	EXPECT_ESC(t, "\xc2\x80\xdf\xbf", "\"\xc2\x80\xdf\xbf\"");
	EXPECT_ESC(t, "\xe0\xa0\x80\xef\xbf\xbf", "\"\xe0\xa0\x80\xef\xbf\xbf\"");
	EXPECT_ESC(t, "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
		   "\"\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"");
	/* U+20AC, U+1F600, around the surrogates (U+D7FF, U+E000). */
	EXPECT_ESC(t, "\xe2\x82\xac \xf0\x9f\x98\x80",
		   "\"\xe2\x82\xac \xf0\x9f\x98\x80\"");
	EXPECT_ESC(t, "\xed\x9f\xbf\xee\x80\x80", "\"\xed\x9f\xbf\xee\x80\x80\"");
}

#define FFFD	"\\ufffd"

static void jsonw_invalid_bytes(struct hvn_test *t)
{
	/* A lone byte that starts nothing. */
	EXPECT_ESC(t, "a\xff" "b", "\"a" FFFD "b\"");
	EXPECT_ESC(t, "\xfe\xf5\xf8", "\"" FFFD FFFD FFFD "\"");
	/* A continuation byte without a lead. */
	EXPECT_ESC(t, "\x80x\xbf", "\"" FFFD "x" FFFD "\"");
	/* A sequence cut by the end, or by an ASCII byte: the ASCII stays. */
	EXPECT_ESC(t, "\xe2\x82", "\"" FFFD FFFD "\"");
	EXPECT_ESC(t, "\xf0\x9f\x98", "\"" FFFD FFFD FFFD "\"");
	EXPECT_ESC(t, "\xc3", "\"" FFFD "\"");
	EXPECT_ESC(t, "\xe2\x82z", "\"" FFFD FFFD "z\"");
	EXPECT_ESC(t, "\xc3\n", "\"" FFFD "\\u000a\"");
	/* Overlong forms. */
	EXPECT_ESC(t, "\xc0\xaf", "\"" FFFD FFFD "\"");
	EXPECT_ESC(t, "\xc1\xbf", "\"" FFFD FFFD "\"");
	EXPECT_ESC(t, "\xe0\x80\xaf", "\"" FFFD FFFD FFFD "\"");
	EXPECT_ESC(t, "\xf0\x80\x80\xaf", "\"" FFFD FFFD FFFD FFFD "\"");
	/* Surrogates (CESU-8). */
	EXPECT_ESC(t, "\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"");
	EXPECT_ESC(t, "\xed\xbf\xbf", "\"" FFFD FFFD FFFD "\"");
	/* Above U+10FFFF. */
	EXPECT_ESC(t, "\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"");
	/* Valid around invalid. */
	EXPECT_ESC(t, "\xc3\xa9\xff\xc3\xa9", "\"\xc3\xa9" FFFD "\xc3\xa9\"");
}

/*
 * Every string of up to 3 bytes escapes to a JSON string that the reader
 * takes, with nothing below 0x20 left raw.
 */
static void jsonw_all_short(struct hvn_test *t)
{
	unsigned char in[4] = { 0 };
	char err[128];
	int bad = 0;

	for (int a = 1; a < 256 && !bad; a++) {
		for (int b = 0; b < 256 && !bad; b++) {
			struct json *j;
			char *s;

			in[0] = a;
			in[1] = b;
			in[2] = b ? 0x80 : 0;
			s = esc((char *)in);
			if (!s)
				return;
			for (char *p = s; *p; p++)
				if ((unsigned char)*p < 0x20 ||
				    (unsigned char)*p == 0x7f)
					bad = 1;
			j = hvn_json_parse(s, strlen(s), err, sizeof(err));
			if (!j || j->type != J_STR)
				bad = 1;
			if (bad)
				ht_fail(t, __FILE__, __LINE__,
					"%02x %02x: %s (%s)", a, b, s, err);
			hvn_json_free(j);
			free(s);
		}
	}
}

static struct ht_case jsonw_cases[] = {
	HT_CASE(jsonw_plain),
	HT_CASE(jsonw_escapes),
	HT_CASE(jsonw_controls),
	HT_CASE(jsonw_utf8_kept),
	HT_CASE(jsonw_invalid_bytes),
	HT_CASE(jsonw_all_short),
	{}
};
HT_SUITE(jsonw, jsonw_cases);
