// SPDX-License-Identifier: GPL-2.0
/* Cases for kmod/lib/cpulist.c (cpus= parameter). */
#include "hvn_test.h"
#include "cpulist.h"

#define NB 64	/* CPUs in these tests */

static int parse(const char *s, unsigned long *map, char *err)
{
	err[0] = '\0';
	return hvn_cpulist_parse(s, map, NB, err, 128);
}

/* Parse @s and format the result back. */
static const char *roundtrip(const char *s, char *out)
{
	unsigned long map[HVN_BITS_TO_LONGS(NB)];
	char err[128];

	if (parse(s, map, err)) {
		snprintf(out, 128, "%s", err);
		return out;
	}
	if (hvn_cpulist_format(out, 128, map, NB) < 0)
		return "format failed";
	return out;
}

static void cpulist_single_and_ranges(struct hvn_test *t)
{
	char out[128];

	HT_EXPECT_STREQ(t, roundtrip("0", out), "0");
	HT_EXPECT_STREQ(t, roundtrip("2-5,12", out), "2-5,12");
	HT_EXPECT_STREQ(t, roundtrip("12,2-5", out), "2-5,12");
	HT_EXPECT_STREQ(t, roundtrip("3,4,5,7", out), "3-5,7");
	HT_EXPECT_STREQ(t, roundtrip("1-1", out), "1");
	HT_EXPECT_STREQ(t, roundtrip("0-63", out), "0-63");
	/* Overlaps merge. */
	HT_EXPECT_STREQ(t, roundtrip("0-4,2-6", out), "0-6");
}

static void cpulist_stride(struct hvn_test *t)
{
	char out[128];

	HT_EXPECT_STREQ(t, roundtrip("0-15:2/4", out), "0-1,4-5,8-9,12-13");
	HT_EXPECT_STREQ(t, roundtrip("0-7:1/1", out), "0-7");
	HT_EXPECT_STREQ(t, roundtrip("1-9:1/4", out), "1,5,9");
}

static void cpulist_newline_and_none(struct hvn_test *t)
{
	unsigned long map[HVN_BITS_TO_LONGS(NB)];
	char out[128], err[128];

	/* sysfs writes carry a newline. */
	HT_EXPECT_STREQ(t, roundtrip("2-3\n", out), "2-3");
	map[0] = ~0UL;
	HT_EXPECT_EQ(t, parse("none", map, err), 0);
	HT_EXPECT_EQ(t, map[0], 0);
	HT_EXPECT_STREQ(t, roundtrip("none\n", out), "none");
}

static void cpulist_boundary(struct hvn_test *t)
{
	unsigned long map[HVN_BITS_TO_LONGS(NB)];
	char err[128];

	/* The last possible CPU is in range, the next one is not. */
	HT_EXPECT_EQ(t, parse("63", map, err), 0);
	HT_EXPECT_TRUE(t, hvn_bit_test(map, 63));
	HT_EXPECT_EQ(t, parse("64", map, err), -EINVAL);
	HT_EXPECT_SUBSTR(t, err, "CPU 64 is out of range (0-63)");
	HT_EXPECT_EQ(t, parse("60-64", map, err), -EINVAL);
	HT_EXPECT_SUBSTR(t, err, "\"60-64\"");
	/* Numbers that overflow 32 bits are out of range, not wrapped. */
	HT_EXPECT_EQ(t, parse("4294967297", map, err), -EINVAL);
	HT_EXPECT_EQ(t, parse("99999999999999999999", map, err), -EINVAL);
}

static void cpulist_errors(struct hvn_test *t)
{
	static const struct {
		const char *in, *why;
	} bad[] = {
		{ "", "empty cpulist" },
		{ "\n", "empty cpulist" },
		{ "1,,2", "empty item" },
		{ ",1", "empty item" },
		{ "1,", "trailing comma" },
		{ "a", "not a CPU number" },
		{ "-1", "not a CPU number" },
		{ "1-", "bad range end" },
		{ "5-3", "reversed" },
		{ "1 ,2", "unexpected characters" },
		{ " 1", "not a CPU number" },
		{ "1-4:0/2", "0 < USED <= GROUP" },
		{ "1-4:3/2", "0 < USED <= GROUP" },
		{ "1-4:1", "bad stride" },
		{ "1-4:1/", "bad stride" },
		{ "1:1/2", "unexpected characters" },
		{ "nonee", "not a CPU number" },
		{ "all", "not a CPU number" },
	};
	unsigned long map[HVN_BITS_TO_LONGS(NB)];
	char err[128];
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		HT_EXPECT_EQ(t, parse(bad[i].in, map, err), -EINVAL);
		HT_EXPECT_SUBSTR(t, err, bad[i].why);
	}
}

static void cpulist_long_item_quoted_short(struct hvn_test *t)
{
	unsigned long map[HVN_BITS_TO_LONGS(NB)];
	char err[128];

	HT_EXPECT_EQ(t, parse("1,xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
			      map, err), -EINVAL);
	HT_EXPECT_TRUE(t, strlen(err) < 80);
}

static void cpulist_format_limits(struct hvn_test *t)
{
	unsigned long map[HVN_BITS_TO_LONGS(NB)];
	char out[8];
	char err[128];

	HT_EXPECT_EQ(t, parse("1,3,5,7,9", map, err), 0);
	HT_EXPECT_EQ(t, hvn_cpulist_format(out, sizeof(out), map, NB), -ENOSPC);
	HT_EXPECT_EQ(t, parse("1,3,5", map, err), 0);
	HT_EXPECT_EQ(t, hvn_cpulist_format(out, sizeof(out), map, NB), 5);
	HT_EXPECT_STREQ(t, out, "1,3,5");
	HT_EXPECT_EQ(t, parse("none", map, err), 0);
	HT_EXPECT_EQ(t, hvn_cpulist_format(out, 4, map, NB), -ENOSPC);
	HT_EXPECT_EQ(t, hvn_cpulist_format(out, 5, map, NB), 4);
}

static void cpulist_odd_nbits(struct hvn_test *t)
{
	unsigned long map[HVN_BITS_TO_LONGS(130)];
	char err[128], out[64];

	HT_EXPECT_EQ(t, hvn_cpulist_parse("0,64-65,129", map, 130, err, 128), 0);
	HT_EXPECT_EQ(t, hvn_cpulist_format(out, sizeof(out), map, 130), 11);
	HT_EXPECT_STREQ(t, out, "0,64-65,129");
	HT_EXPECT_EQ(t, hvn_cpulist_parse("130", map, 130, err, 128), -EINVAL);
	HT_EXPECT_EQ(t, hvn_cpulist_parse("0", map, 0, err, 128), -EINVAL);
}

static struct ht_case cpulist_cases[] = {
	HT_CASE(cpulist_single_and_ranges),
	HT_CASE(cpulist_stride),
	HT_CASE(cpulist_newline_and_none),
	HT_CASE(cpulist_boundary),
	HT_CASE(cpulist_errors),
	HT_CASE(cpulist_long_item_quoted_short),
	HT_CASE(cpulist_format_limits),
	HT_CASE(cpulist_odd_nbits),
	{}
};

HT_SUITE(cpulist, cpulist_cases);
