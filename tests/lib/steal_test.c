// SPDX-License-Identifier: GPL-2.0
/* Cases for kmod/lib/steal.c: a fake KVM steal-time area and counters. */
#include "hvn_test.h"
#include "steal.h"

#define MS 1000000ULL

/* A fake area whose host "writes" between our reads. */
struct fake_area {
	u32 version;
	u64 steal;
	unsigned int reads;	/* version reads so far */
	unsigned int busy_reads;	/* first N version reads see odd */
	bool bump_mid;		/* host updates between our two reads */
};

static u32 fake_version(const void *a)
{
	struct fake_area *f = (struct fake_area *)a;

	f->reads++;
	if (f->reads <= f->busy_reads)
		return f->version | 1;
	if (f->bump_mid && f->reads == 2) {
		/* The host wrote a new value after our first version read. */
		f->version += 2;
		f->steal += 5 * MS;
		f->bump_mid = false;
	}
	return f->version;
}

static u64 fake_steal(const void *a)
{
	return ((const struct fake_area *)a)->steal;
}

static void fake_rmb(void)
{
}

static const struct hvn_steal_area_ops ops = {
	.version = fake_version, .steal = fake_steal, .read_barrier = fake_rmb,
};

static void steal_area_stable(struct hvn_test *t)
{
	struct fake_area f = { .version = 4, .steal = 123 };
	u64 st = 0;

	HT_EXPECT_TRUE(t, hvn_steal_area_read(&ops, &f, 4, &st));
	HT_EXPECT_EQ(t, st, 123);
	HT_EXPECT_EQ(t, f.reads, 2);
}

static void steal_area_version_changes_mid_read(struct hvn_test *t)
{
	struct fake_area f = { .version = 4, .steal = 10 * MS, .bump_mid = true };
	u64 st = 0;

	/* First try sees v=4 then v=6: retried, second try consistent. */
	HT_EXPECT_TRUE(t, hvn_steal_area_read(&ops, &f, 4, &st));
	HT_EXPECT_EQ(t, st, 15 * MS);
	HT_EXPECT_EQ(t, f.reads, 4);
}

static void steal_area_odd_version_retries(struct hvn_test *t)
{
	struct fake_area f = { .version = 8, .steal = 7, .busy_reads = 3 };
	u64 st = 0;

	HT_EXPECT_TRUE(t, hvn_steal_area_read(&ops, &f, 4, &st));
	HT_EXPECT_EQ(t, st, 7);
	/* A host that never finishes: give up, value untouched. */
	f = (struct fake_area){ .version = 8, .steal = 7, .busy_reads = 1000 };
	st = 99;
	HT_EXPECT_FALSE(t, hvn_steal_area_read(&ops, &f, 4, &st));
	HT_EXPECT_EQ(t, st, 99);
}

static void steal_sample_threshold(struct hvn_test *t)
{
	struct hvn_steal_cpu sc = { 0 };
	struct hvn_steal_report rep;

	/* The first sample only primes. */
	HT_EXPECT_FALSE(t, hvn_steal_sample(&sc, 10 * MS, 1000 * MS, 1 * MS, &rep));
	HT_EXPECT_FALSE(t, hvn_steal_sample(&sc, 20 * MS, 1000 * MS + MS - 1, 1 * MS, &rep));
	/* Exactly the threshold since the last sample reports. */
	HT_EXPECT_TRUE(t, hvn_steal_sample(&sc, 30 * MS, 1001 * MS + MS - 1, 1 * MS, &rep));
	HT_EXPECT_EQ(t, rep.steal, 1 * MS);
	HT_EXPECT_EQ(t, rep.start, 20 * MS);
	HT_EXPECT_EQ(t, rep.window, 10 * MS);
}

static void steal_counter_backwards_reprimes(struct hvn_test *t)
{
	struct hvn_steal_cpu sc = { 0 };
	struct hvn_steal_report rep;

	hvn_steal_sample(&sc, 10 * MS, 500 * MS, 1 * MS, &rep);
	/* The counter restarted (CPU replugged, host reset): no report of a
	 * huge wrapped delta, and the next sample counts from the new value.
	 */
	HT_EXPECT_FALSE(t, hvn_steal_sample(&sc, 20 * MS, 3 * MS, 1 * MS, &rep));
	HT_EXPECT_TRUE(t, hvn_steal_sample(&sc, 30 * MS, 9 * MS, 1 * MS, &rep));
	HT_EXPECT_EQ(t, rep.steal, 6 * MS);
	/* Near the top of the range: no overflow in the delta. */
	sc = (struct hvn_steal_cpu){ 0 };
	hvn_steal_sample(&sc, 10 * MS, ~0ULL - 10 * MS, 1 * MS, &rep);
	HT_EXPECT_TRUE(t, hvn_steal_sample(&sc, 20 * MS, ~0ULL - 2 * MS, 1 * MS, &rep));
	HT_EXPECT_EQ(t, rep.steal, 8 * MS);
}

static struct ht_case steal_cases[] = {
	HT_CASE(steal_area_stable),
	HT_CASE(steal_area_version_changes_mid_read),
	HT_CASE(steal_area_odd_version_retries),
	HT_CASE(steal_sample_threshold),
	HT_CASE(steal_counter_backwards_reprimes),
	{}
};

HT_SUITE(steal, steal_cases);
