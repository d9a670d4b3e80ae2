// SPDX-License-Identifier: GPL-2.0
/* Cases for tools/lib/analysis/when.c: --since and --until's WHEN. */
#include <stdlib.h>
#include <time.h>

#include "hvn_test.h"
#include "analysis/episodes.h"
#include "analysis/when.h"

#define NS	1000000000ull
/* 2024-03-10 00:00:00 UTC */
#define DAY	1710028800ull

static void utc(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
}

/* @w parsed against @an; UINT64_MAX (and the message in @msg) if refused. */
static uint64_t when(const char *w, uint64_t start,
		     const struct hvn_analysis *an, const char **msg)
{
	uint64_t out = 0;
	const char *m = hvn_when_parse(w, start, an, &out);

	if (msg)
		*msg = m ? m : "";
	return m ? UINT64_MAX : out;
}

static void when_secs(struct hvn_test *t)
{
	uint64_t ns;

	HT_EXPECT_EQ(t, hvn_when_secs("0", &ns), 0);
	HT_EXPECT_EQ(t, ns, 0);
	HT_EXPECT_EQ(t, hvn_when_secs("30", &ns), 0);
	HT_EXPECT_EQ(t, ns, 30 * NS);
	HT_EXPECT_EQ(t, hvn_when_secs("30s", &ns), 0);
	HT_EXPECT_EQ(t, ns, 30 * NS);
	HT_EXPECT_EQ(t, hvn_when_secs("1.5", &ns), 0);
	HT_EXPECT_EQ(t, ns, 1500000000);
	HT_EXPECT_EQ(t, hvn_when_secs("0.000000001s", &ns), 0);
	HT_EXPECT_EQ(t, ns, 1);
	HT_EXPECT_EQ(t, hvn_when_secs("12345.678901234", &ns), 0);
	HT_EXPECT_EQ(t, ns, 12345678901234ull);
}

/* As many seconds as ns fit in 64 bits (584 years), and no more. */
static void when_secs_range(struct hvn_test *t)
{
	static const char *const big[] = {
		"18446744074", "20000000000", "100000000000", "1e11",
	};
	uint64_t ns = 0;

	HT_EXPECT_EQ(t, hvn_when_secs("18000000000", &ns), 0);
	HT_EXPECT_TRUE(t, ns == 18000000000ull * NS);
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		ns = 77;
		if (!hvn_when_secs(big[i], &ns))
			ht_fail(t, __FILE__, __LINE__,
				"\"%s\" s do not fit in 64-bit ns, taken as %llu ns",
				big[i], (unsigned long long)ns);
	}
}

static void when_secs_malformed(struct hvn_test *t)
{
	static const char *const bad[] = {
		"", "s", "-1", "-0.5", " 1", "1 ", "+1", ".5", "abc", "1x",
		"1ss", "1s2", "1.5.5", "100000000001", "1e12",
	};
	uint64_t ns = 77;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!hvn_when_secs(bad[i], &ns))
			ht_fail(t, __FILE__, __LINE__,
				"\"%s\" taken as %llu ns", bad[i],
				(unsigned long long)ns);
	}
	HT_EXPECT_EQ(t, ns, 77);
}

static void when_wall_forms(struct hvn_test *t)
{
	uint64_t day_of = (DAY + 5 * 3600) * NS + 123, ns;

	utc();
	HT_EXPECT_EQ(t, hvn_when_wall("14:02", day_of, &ns), 0);
	HT_EXPECT_EQ(t, ns, (DAY + 14 * 3600 + 2 * 60) * NS);
	HT_EXPECT_EQ(t, hvn_when_wall("14:02:07", day_of, &ns), 0);
	HT_EXPECT_EQ(t, ns, (DAY + 14 * 3600 + 2 * 60 + 7) * NS);
	HT_EXPECT_EQ(t, hvn_when_wall("14:02:07.25", day_of, &ns), 0);
	HT_EXPECT_EQ(t, ns, (DAY + 14 * 3600 + 2 * 60 + 7) * NS + NS / 4);
	HT_EXPECT_EQ(t, hvn_when_wall("00:00", day_of, &ns), 0);
	HT_EXPECT_EQ(t, ns, DAY * NS);
	HT_EXPECT_EQ(t, hvn_when_wall("23:59:59.999999999", day_of, &ns), 0);
	HT_EXPECT_EQ(t, ns, (DAY + 86400) * NS - 1);
	/* One digit will do. */
	HT_EXPECT_EQ(t, hvn_when_wall("9:05", day_of, &ns), 0);
	HT_EXPECT_EQ(t, ns, (DAY + 9 * 3600 + 5 * 60) * NS);
	/* A date: @day_of does not matter. */
	HT_EXPECT_EQ(t, hvn_when_wall("2024-01-02 03:04:05", day_of, &ns), 0);
	HT_EXPECT_EQ(t, ns, 1704164645ull * NS);
	HT_EXPECT_EQ(t, hvn_when_wall("2024-01-02T03:04", day_of, &ns), 0);
	HT_EXPECT_EQ(t, ns, 1704164640ull * NS);
	HT_EXPECT_EQ(t, hvn_when_wall("2024-01-02 03:04:05.5", 0, &ns), 0);
	HT_EXPECT_EQ(t, ns, 1704164645ull * NS + NS / 2);
	HT_EXPECT_EQ(t, hvn_when_wall("2024-02-29 12:00", 0, &ns), 0);
	HT_EXPECT_EQ(t, ns, 1709208000ull * NS);
}

/* Local time is the TZ's: the same text is an hour earlier in UTC+1. */
static void when_wall_timezone(struct hvn_test *t)
{
	uint64_t ns;

	setenv("TZ", "CET-1", 1);
	tzset();
	HT_EXPECT_EQ(t, hvn_when_wall("2024-01-02 03:04:05", 0, &ns), 0);
	HT_EXPECT_EQ(t, ns, (1704164645ull - 3600) * NS);
	utc();
}

static void when_wall_malformed(struct hvn_test *t)
{
	static const char *const bad[] = {
		"", "14", "25:00", "24:00", "23:60", "25:99", "-1:00",
		"14:02:61", "14:02:-1", "14-02", "ab:cd", "14:02x",
		"14:02:07x", " 14:02", "2024-01-02 25:00", "2024-13-02 03:04",
		"2024-01-02 ", "2024-01-02X03:04", "2024-01-02 03", "xx:yy:zz",
	};
	uint64_t ns = 77;

	utc();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!hvn_when_wall(bad[i], DAY * NS, &ns))
			ht_fail(t, __FILE__, __LINE__,
				"\"%s\" taken as %llu ns", bad[i],
				(unsigned long long)ns);
		ns = 77;
	}
}

/*
 * Forms strtol and strtod take but a time is not: a negative or missing
 * minute, missing seconds, NaN seconds, hexadecimal.
 */
static void when_wall_strict(struct hvn_test *t)
{
	static const char *const bad[] = {
		"14:-5", "14:", "14:02:", "14:02:nan", "14:02:0x10",
	};
	uint64_t ns = 77;

	utc();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!hvn_when_wall(bad[i], DAY * NS, &ns))
			ht_fail(t, __FILE__, __LINE__,
				"\"%s\" taken as %llu ns (%+lld s from 14:00)",
				bad[i], (unsigned long long)ns,
				(long long)(ns / NS) -
				(long long)(DAY + 14 * 3600));
		ns = 77;
	}
	if (!hvn_when_secs("0x10", &ns))
		ht_fail(t, __FILE__, __LINE__, "\"0x10\" taken as %llu ns",
			(unsigned long long)ns);
}

static void when_relative(struct hvn_test *t)
{
	struct hvn_analysis an;
	const char *msg;

	memset(&an, 0, sizeof(an));
	HT_EXPECT_EQ(t, when("+30", 1000, &an, &msg), 1000 + 30 * NS);
	HT_EXPECT_EQ(t, when("+30s", 1000, &an, &msg), 1000 + 30 * NS);
	HT_EXPECT_EQ(t, when("+0.5", 1000, &an, &msg), 1000 + NS / 2);
	HT_EXPECT_EQ(t, when("+0", 7, &an, &msg), 7);
	HT_EXPECT_EQ(t, when("+x", 1000, &an, &msg), UINT64_MAX);
	HT_EXPECT_STREQ(t, msg, "not +SECONDS");
	HT_EXPECT_EQ(t, when("+", 1000, &an, &msg), UINT64_MAX);
	HT_EXPECT_STREQ(t, msg, "not +SECONDS");
	HT_EXPECT_EQ(t, when("+-3", 1000, &an, &msg), UINT64_MAX);
	HT_EXPECT_STREQ(t, msg, "not +SECONDS");
	/* No start: say so, and what to use instead. */
	HT_EXPECT_EQ(t, when("+30", 0, &an, &msg), UINT64_MAX);
	HT_EXPECT_SUBSTR(t, msg, "no recording start");
	HT_EXPECT_SUBSTR(t, msg, "mono:SECONDS");
}

static void when_mono(struct hvn_test *t)
{
	struct hvn_analysis an;
	const char *msg;

	memset(&an, 0, sizeof(an));
	/* A trace time needs neither a start nor clock pairs. */
	HT_EXPECT_EQ(t, when("mono:12.5", 0, &an, &msg), 12500000000ull);
	HT_EXPECT_EQ(t, when("mono:3s", 0, &an, &msg), 3 * NS);
	HT_EXPECT_EQ(t, when("mono:", 0, &an, &msg), UINT64_MAX);
	HT_EXPECT_STREQ(t, msg, "not mono:SECONDS");
	HT_EXPECT_EQ(t, when("mono:-1", 0, &an, &msg), UINT64_MAX);
	HT_EXPECT_STREQ(t, msg, "not mono:SECONDS");
	HT_EXPECT_EQ(t, when("mono 5", 0, &an, &msg), UINT64_MAX);
	HT_EXPECT_STREQ(t, msg, "not a time (see --help)");
}

/* Wall-clock forms through the clock pairs, to trace time. */
static void when_wall_to_mono(struct hvn_test *t)
{
	struct hvn_analysis an;
	const char *msg;
	/* mono 1000 s was 2024-03-10 05:00:00 UTC */
	const uint64_t mono0 = 1000 * NS, real0 = (DAY + 5 * 3600) * NS;

	utc();
	memset(&an, 0, sizeof(an));
	hvn_an_add_clock(&an, mono0, real0);
	hvn_an_add_clock(&an, mono0 + 3600 * NS, real0 + 3600 * NS + 2000);
	HT_EXPECT_EQ(t, when("@1710046800", 0, &an, &msg), mono0);
	HT_EXPECT_EQ(t, when("@1710046810.5", 0, &an, &msg),
		     mono0 + 10 * NS + NS / 2);
	HT_EXPECT_EQ(t, when("05:00:10", 0, &an, &msg), mono0 + 10 * NS);
	HT_EXPECT_EQ(t, when("05:00", 0, &an, &msg), mono0);
	/* Earlier than the pairs: the nearest one, extrapolated back. */
	HT_EXPECT_EQ(t, when("04:59:30", 0, &an, &msg), mono0 - 30 * NS);
	/* Nearer the second pair: its offset (2 us later) applies. */
	HT_EXPECT_EQ(t, when("06:00:01", 0, &an, &msg),
		     mono0 + 3601 * NS - 2000);
	HT_EXPECT_EQ(t, when("2024-03-10 05:00:01", 0, &an, &msg),
		     mono0 + NS);
	HT_EXPECT_EQ(t, when("2024-03-10T05:01", 0, &an, &msg),
		     mono0 + 60 * NS);
	/* HH:MM is on the day of the first pair. */
	HT_EXPECT_EQ(t, when("2024-03-11 05:00", 0, &an, &msg),
		     mono0 + 86400 * NS - 2000);
	HT_EXPECT_EQ(t, when("25:99", 0, &an, &msg), UINT64_MAX);
	HT_EXPECT_STREQ(t, msg, "not a time (see --help)");
	HT_EXPECT_EQ(t, when("@x", 0, &an, &msg), UINT64_MAX);
	HT_EXPECT_STREQ(t, msg, "not @EPOCH");
	HT_EXPECT_EQ(t, when("@-5", 0, &an, &msg), UINT64_MAX);
	HT_EXPECT_STREQ(t, msg, "not @EPOCH");
	HT_EXPECT_EQ(t, when("", 0, &an, &msg), UINT64_MAX);
	HT_EXPECT_STREQ(t, msg, "not a time (see --help)");
	HT_EXPECT_EQ(t, when("yesterday", 0, &an, &msg), UINT64_MAX);
	HT_EXPECT_STREQ(t, msg, "not a time (see --help)");
	free(an.clk);
}

static void when_no_clock_pairs(struct hvn_test *t)
{
	struct hvn_analysis an;
	const char *msg;

	utc();
	memset(&an, 0, sizeof(an));
	HT_EXPECT_EQ(t, when("@1710046800", 5, &an, &msg), UINT64_MAX);
	HT_EXPECT_SUBSTR(t, msg, "no clock pairs");
	HT_EXPECT_SUBSTR(t, msg, "mono:SECONDS");
	HT_EXPECT_EQ(t, when("14:02", 5, &an, &msg), UINT64_MAX);
	HT_EXPECT_SUBSTR(t, msg, "no clock pairs");
	HT_EXPECT_EQ(t, when("2024-03-10 14:02:07.5", 5, &an, &msg),
		     UINT64_MAX);
	HT_EXPECT_SUBSTR(t, msg, "no clock pairs");
	/* A malformed time says so first. */
	HT_EXPECT_EQ(t, when("25:99", 5, &an, &msg), UINT64_MAX);
	HT_EXPECT_STREQ(t, msg, "not a time (see --help)");
	/* The relative and trace-time forms need no pairs. */
	HT_EXPECT_EQ(t, when("+1", 5, &an, &msg), 5 + NS);
	HT_EXPECT_EQ(t, when("mono:1", 5, &an, &msg), NS);
}

static struct ht_case when_cases[] = {
	HT_CASE(when_secs),
	HT_CASE(when_secs_malformed),
	HT_CASE(when_secs_range),
	HT_CASE(when_wall_forms),
	HT_CASE(when_wall_timezone),
	HT_CASE(when_wall_malformed),
	HT_CASE(when_wall_strict),
	HT_CASE(when_relative),
	HT_CASE(when_mono),
	HT_CASE(when_wall_to_mono),
	HT_CASE(when_no_clock_pairs),
	{}
};
HT_SUITE(when, when_cases);
