/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One test source, two runners: the cases in tests/lib/ run as KUnit suites
 * inside the kernel (hvnoise_kunit.ko) and as a userspace program under
 * ASan/UBSan (tests/unit/), against the same kmod/lib/ code.
 */
#ifndef HVN_TEST_H
#define HVN_TEST_H

#ifdef __KERNEL__
#include <kunit/test.h>

#define hvn_test kunit
#define HT_EXPECT_EQ(t, a, b)		KUNIT_EXPECT_EQ(t, a, b)
#define HT_EXPECT_TRUE(t, c)		KUNIT_EXPECT_TRUE(t, c)
#define HT_EXPECT_FALSE(t, c)		KUNIT_EXPECT_FALSE(t, c)
#define HT_EXPECT_STREQ(t, a, b)	KUNIT_EXPECT_STREQ(t, a, b)
#define HT_EXPECT_SUBSTR(t, s, sub)	KUNIT_EXPECT_NOT_NULL(t, strstr(s, sub))
#define HT_CASE(fn)			KUNIT_CASE(fn)
#define ht_case				kunit_case
#define HT_SUITE(sname, case_arr)					\
	static struct kunit_suite sname##_suite = {		\
		.name = "hvnoise_" #sname,			\
		.test_cases = case_arr,				\
	};							\
	kunit_test_suites(&sname##_suite)

#else /* userspace */
#include <stdio.h>
#include <string.h>

struct hvn_test {
	const char *name;
	int failures;
};

struct ht_case {
	void (*run_case)(struct hvn_test *t);
	const char *name;
};

struct ht_suite {
	const char *name;
	const struct ht_case *cases;
	struct ht_suite *next;
};

void ht_register(struct ht_suite *s);
void ht_fail(struct hvn_test *t, const char *file, int line,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define HT_EXPECT_EQ(t, a, b) do {					\
	long long a_ = (long long)(a), b_ = (long long)(b);		\
	if (a_ != b_)							\
		ht_fail(t, __FILE__, __LINE__, "%s == %s: %lld != %lld", \
			#a, #b, a_, b_);				\
} while (0)
#define HT_EXPECT_TRUE(t, c) do {					\
	if (!(c))							\
		ht_fail(t, __FILE__, __LINE__, "%s is false", #c);	\
} while (0)
#define HT_EXPECT_FALSE(t, c) do {					\
	if (c)								\
		ht_fail(t, __FILE__, __LINE__, "%s is true", #c);	\
} while (0)
#define HT_EXPECT_STREQ(t, a, b) do {					\
	const char *a_ = (a), *b_ = (b);				\
	if (strcmp(a_, b_))						\
		ht_fail(t, __FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", \
			#a, #b, a_, b_);				\
} while (0)
#define HT_EXPECT_SUBSTR(t, s, sub) do {				\
	if (!strstr(s, sub))						\
		ht_fail(t, __FILE__, __LINE__, "\"%s\" lacks \"%s\"",	\
			s, sub);					\
} while (0)
#define HT_CASE(fn)	{ .run_case = fn, .name = #fn }
#define HT_SUITE(sname, case_arr)						\
	static struct ht_suite sname##_suite = {			\
		.name = "hvnoise_" #sname, .cases = case_arr,		\
	};								\
	__attribute__((constructor)) static void sname##_reg(void)	\
	{								\
		ht_register(&sname##_suite);				\
	}
#endif

#endif /* HVN_TEST_H */
