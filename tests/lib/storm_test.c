// SPDX-License-Identifier: GPL-2.0
/* Cases for kmod/lib/storm.c, on a fake clock (ns). */
#include "hvn_test.h"
#include "storm.h"

#define MS 1000000ULL

static const struct hvn_storm_cfg cfg = { .window_ns = 10 * MS, .threshold = 5 };

/* @n interrupts evenly over [t, t + span); returns OR of the flags. */
static unsigned int burst(struct hvn_storm *s, u64 t, u64 span, unsigned int n,
			  struct hvn_storm_report *r)
{
	unsigned int i, f = 0;

	for (i = 0; i < n; i++)
		f |= hvn_storm_irq(s, &cfg, t + span * i / n, r);
	return f;
}

static void storm_threshold_exactly_equal(struct hvn_test *t)
{
	struct hvn_storm s = { 0 };
	struct hvn_storm_report r;

	/* threshold - 1 in a window: no storm. */
	HT_EXPECT_EQ(t, burst(&s, 100 * MS, 9 * MS, 4, &r), 0);
	/* Next window: exactly the threshold begins one at the 5th IRQ. */
	HT_EXPECT_EQ(t, burst(&s, 110 * MS, 4 * MS, 4, &r), 0);
	HT_EXPECT_EQ(t, hvn_storm_irq(&s, &cfg, 115 * MS, &r), HVN_STORM_BEGIN);
	HT_EXPECT_TRUE(t, s.active);
	HT_EXPECT_EQ(t, s.start, 110 * MS);
}

static void storm_window_edge_belongs_to_next(struct hvn_test *t)
{
	struct hvn_storm s = { 0 };
	struct hvn_storm_report r;

	/* 4 IRQs at the start of a window and 1 exactly window_ns later:
	 * the last one opens a new window, so no storm.
	 */
	HT_EXPECT_EQ(t, burst(&s, 0, 1000, 4, &r), 0);
	HT_EXPECT_EQ(t, hvn_storm_irq(&s, &cfg, 10 * MS, &r), 0);
	HT_EXPECT_EQ(t, s.win_count, 1);
	/* One ns earlier it would have been the 5th of the window. */
	s = (struct hvn_storm){ 0 };
	burst(&s, 0, 1000, 4, &r);
	HT_EXPECT_EQ(t, hvn_storm_irq(&s, &cfg, 10 * MS - 1, &r), HVN_STORM_BEGIN);
}

static void storm_ends_on_cold_window(struct hvn_test *t)
{
	struct hvn_storm s = { 0 };
	struct hvn_storm_report r = { 0 };
	unsigned int f;

	/* Three hot windows of 20 IRQs, then a cold one of 2. */
	HT_EXPECT_EQ(t, burst(&s, 0, 10 * MS, 20, &r), HVN_STORM_BEGIN);
	HT_EXPECT_EQ(t, burst(&s, 10 * MS, 10 * MS, 20, &r), 0);
	HT_EXPECT_EQ(t, burst(&s, 20 * MS, 10 * MS, 30, &r), 0);
	HT_EXPECT_EQ(t, burst(&s, 30 * MS, 10 * MS, 2, &r), 0);
	f = hvn_storm_irq(&s, &cfg, 40 * MS, &r);
	HT_EXPECT_EQ(t, f, HVN_STORM_END);
	HT_EXPECT_EQ(t, r.start, 0);
	/* The last IRQ of the last hot window: 20 ms + 29/30 of 10 ms. */
	HT_EXPECT_EQ(t, r.duration, 20 * MS + 10 * MS * 29 / 30);
	HT_EXPECT_EQ(t, r.count, 70);
	HT_EXPECT_EQ(t, r.peak_rate, 3000);	/* 30 per 10 ms */
	HT_EXPECT_FALSE(t, s.active);
}

static void storm_ends_on_empty_window(struct hvn_test *t)
{
	struct hvn_storm s = { 0 };
	struct hvn_storm_report r = { 0 };

	burst(&s, 0, 10 * MS, 10, &r);
	/* Next IRQ 25 ms later: the window after the hot one was empty. */
	HT_EXPECT_EQ(t, hvn_storm_irq(&s, &cfg, 25 * MS, &r), HVN_STORM_END);
	HT_EXPECT_EQ(t, r.count, 10);
	HT_EXPECT_EQ(t, r.duration, 9 * MS);
}

static void storm_end_and_begin_at_once(struct hvn_test *t)
{
	struct hvn_storm s = { 0 };
	struct hvn_storm_report r = { 0 };
	struct hvn_storm_cfg one = { .window_ns = 10 * MS, .threshold = 1 };

	/* With a threshold of 1 every IRQ is a storm; after a gap the old
	 * one ends and a new one begins with the same interrupt.
	 */
	HT_EXPECT_EQ(t, hvn_storm_irq(&s, &one, 0, &r), HVN_STORM_BEGIN);
	HT_EXPECT_EQ(t, hvn_storm_irq(&s, &one, 50 * MS, &r),
		     HVN_STORM_END | HVN_STORM_BEGIN);
	HT_EXPECT_EQ(t, r.count, 1);
	HT_EXPECT_EQ(t, r.duration, 0);
}

static void storm_expire_when_quiet(struct hvn_test *t)
{
	struct hvn_storm s = { 0 };
	struct hvn_storm_report r = { 0 };

	burst(&s, 0, 10 * MS, 8, &r);
	/* Too early: the next window might still be hot. */
	HT_EXPECT_FALSE(t, hvn_storm_expire(&s, &cfg, 15 * MS, false, &r));
	HT_EXPECT_TRUE(t, hvn_storm_expire(&s, &cfg, 20 * MS, false, &r));
	HT_EXPECT_EQ(t, r.count, 8);
	HT_EXPECT_FALSE(t, hvn_storm_expire(&s, &cfg, 90 * MS, false, &r));
}

/*
 * The walk, gated by hvn_storm_walk_due() as the module and BPF run it on
 * each interrupt of another source: the quiet storm ends with the same
 * report as an ungated walk, at most an eighth of a window later.
 */
static void storm_walk_gated_same_end(struct hvn_test *t)
{
	struct hvn_storm a = { 0 }, b = { 0 };
	struct hvn_storm_report ra = { 0 }, rb = { 0 };
	u64 next = 0, now, ended_a = 0, ended_b = 0;

	burst(&a, 0, 10 * MS, 8, &ra);
	burst(&b, 0, 10 * MS, 8, &rb);
	/* Other interrupts every 0.1 ms. */
	for (now = 10 * MS; now < 60 * MS && !(ended_a && ended_b); now += MS / 10) {
		if (!ended_a && hvn_storm_expire(&a, &cfg, now, false, &ra))
			ended_a = now;
		if (!ended_b && hvn_storm_walk_due(&next, now, cfg.window_ns, false) &&
		    hvn_storm_expire(&b, &cfg, now, false, &rb))
			ended_b = now;
	}
	HT_EXPECT_TRUE(t, ended_a && ended_b);
	HT_EXPECT_TRUE(t, ended_b >= ended_a && ended_b - ended_a <= cfg.window_ns / 8);
	HT_EXPECT_EQ(t, ra.count, rb.count);
	HT_EXPECT_EQ(t, ra.duration, rb.duration);
	HT_EXPECT_EQ(t, ra.peak_rate, rb.peak_rate);
	/* Forced: always due, and the next one an eighth of a window on. */
	HT_EXPECT_TRUE(t, hvn_storm_walk_due(&next, next - 1, cfg.window_ns, true));
	HT_EXPECT_FALSE(t, hvn_storm_walk_due(&next, next - 1, cfg.window_ns, false));
	HT_EXPECT_TRUE(t, hvn_storm_walk_due(&next, next, cfg.window_ns, false));
}

static void storm_cpu_offline_mid_storm(struct hvn_test *t)
{
	struct hvn_storm s = { 0 };
	struct hvn_storm_report r = { 0 };

	burst(&s, 0, 10 * MS, 10, &r);
	burst(&s, 10 * MS, 5 * MS, 7, &r);
	/* The CPU goes: forced end mid-window counts the hot partial one. */
	HT_EXPECT_TRUE(t, hvn_storm_expire(&s, &cfg, 16 * MS, true, &r));
	HT_EXPECT_EQ(t, r.count, 17);
	HT_EXPECT_EQ(t, r.start, 0);
	HT_EXPECT_EQ(t, r.duration, 10 * MS + 5 * MS * 6 / 7);
	HT_EXPECT_FALSE(t, s.active);
	/* A cold partial window is not counted. */
	s = (struct hvn_storm){ 0 };
	burst(&s, 0, 10 * MS, 10, &r);
	burst(&s, 10 * MS, 5 * MS, 2, &r);
	HT_EXPECT_TRUE(t, hvn_storm_expire(&s, &cfg, 16 * MS, true, &r));
	HT_EXPECT_EQ(t, r.count, 10);
}

static void storm_many_at_once(struct hvn_test *t)
{
	struct hvn_storm s = { 0 };
	struct hvn_storm_report r = { 0 };
	unsigned int i, begins = 0;

	/* 100000 interrupts with the same timestamp: one begin, no end. */
	for (i = 0; i < 100000; i++)
		begins += !!(hvn_storm_irq(&s, &cfg, 7 * MS, &r) & HVN_STORM_BEGIN);
	HT_EXPECT_EQ(t, begins, 1);
	HT_EXPECT_TRUE(t, hvn_storm_expire(&s, &cfg, 30 * MS, false, &r));
	HT_EXPECT_EQ(t, r.count, 100000);
	HT_EXPECT_EQ(t, r.duration, 0);
	HT_EXPECT_EQ(t, r.peak_rate, 10000000);
}

static void storm_threshold_from_rate(struct hvn_test *t)
{
	HT_EXPECT_EQ(t, hvn_storm_threshold(10000, 100 * MS), 1000);
	HT_EXPECT_EQ(t, hvn_storm_threshold(10001, 100 * MS), 1001);	/* ceil */
	HT_EXPECT_EQ(t, hvn_storm_threshold(1, 1 * MS), 1);
	HT_EXPECT_EQ(t, hvn_storm_threshold(0, 1 * MS), 1);
}

static void storm_slots_equal_mod_size(struct hvn_test *t)
{
	static struct hvn_storm_slot slots[HVN_STORM_SLOTS];
	struct hvn_storm_slot *a, *b;
	struct hvn_storm_report r;
	unsigned int i, fa = 0, fb = 0;
	bool claimed;

	for (i = 0; i < HVN_STORM_SLOTS; i++)
		slots[i] = (struct hvn_storm_slot){ .irq = -1 };
	/* A NIC's queues 3 and 19 storm together on one CPU, interleaved:
	 * each keeps its own slot and window, and both storms are seen.
	 */
	for (i = 0; i < 20; i++) {
		u64 now = 100 * MS + i * MS / 4;

		a = hvn_storm_slot(slots, 3, &cfg, now, &claimed);
		HT_EXPECT_TRUE(t, a && a->irq == 3);
		HT_EXPECT_EQ(t, claimed, i == 0);
		fa |= hvn_storm_irq(&a->st, &cfg, now, &r);
		b = hvn_storm_slot(slots, 3 + HVN_STORM_SLOTS, &cfg, now, &claimed);
		HT_EXPECT_TRUE(t, b && b->irq == 3 + HVN_STORM_SLOTS && b != a);
		fb |= hvn_storm_irq(&b->st, &cfg, now, &r);
	}
	HT_EXPECT_TRUE(t, fa & HVN_STORM_BEGIN);
	HT_EXPECT_TRUE(t, fb & HVN_STORM_BEGIN);
	/* Every slot busy counting: a new IRQ is not tracked, and no window
	 * is taken from another.
	 */
	for (i = 0; i < HVN_STORM_SLOTS; i++) {
		if (slots[i].irq < 0) {
			slots[i].irq = 100 + i;
			slots[i].st = (struct hvn_storm){ .win_start = 104 * MS, .win_count = 1 };
		}
	}
	HT_EXPECT_TRUE(t, !hvn_storm_slot(slots, 50, &cfg, 105 * MS, &claimed));
	/* Once a quiet source's window is over, its slot is reused. */
	a = hvn_storm_slot(slots, 50, &cfg, 115 * MS, &claimed);
	HT_EXPECT_TRUE(t, a && claimed && a->irq == 50 && a->st.win_count == 0);
	/* A new IRQ passes the storms under way (IRQs 3 and 19, in slots 3
	 * and 4) on its way to a quiet slot: both keep theirs.
	 */
	a = hvn_storm_slot(slots, 3 + 2 * HVN_STORM_SLOTS, &cfg, 115 * MS, &claimed);
	HT_EXPECT_TRUE(t, a && claimed && a != &slots[3] && a != &slots[4]);
	HT_EXPECT_EQ(t, slots[3].irq, 3);
	HT_EXPECT_EQ(t, slots[4].irq, 3 + HVN_STORM_SLOTS);
	hvn_storm_irq(&a->st, &cfg, 115 * MS, &r);
	/* A free slot further on is taken before quiet ones. */
	slots[12].irq = -1;
	a = hvn_storm_slot(slots, 10 + HVN_STORM_SLOTS, &cfg, 116 * MS, &claimed);
	HT_EXPECT_TRUE(t, a == &slots[12] && claimed);
	HT_EXPECT_EQ(t, slots[10].irq, 110);
}

static struct ht_case storm_cases[] = {
	HT_CASE(storm_slots_equal_mod_size),
	HT_CASE(storm_threshold_exactly_equal),
	HT_CASE(storm_window_edge_belongs_to_next),
	HT_CASE(storm_ends_on_cold_window),
	HT_CASE(storm_ends_on_empty_window),
	HT_CASE(storm_end_and_begin_at_once),
	HT_CASE(storm_expire_when_quiet),
	HT_CASE(storm_walk_gated_same_end),
	HT_CASE(storm_cpu_offline_mid_storm),
	HT_CASE(storm_many_at_once),
	HT_CASE(storm_threshold_from_rate),
	{}
};

HT_SUITE(storm, storm_cases);
