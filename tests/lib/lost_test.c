// SPDX-License-Identifier: GPL-2.0
/* Cases for kmod/lib/lost.c, on a fake clock (ns). */
#include "hvn_test.h"
#include "lost.h"

#define MS 1000000ULL

static const struct hvn_lost_cfg cfg = { .threshold_ns = 2 * MS };

static void lost_unexplained_gap(struct hvn_test *t)
{
	struct hvn_ivl_ring r = { 0 };
	struct hvn_lost_cpu lc = { 0 };
	struct hvn_lost_report rep;

	/* A timer due at 100 ms fires at 131 ms; nothing ran meanwhile. */
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 131 * MS, 131 * MS - 31 * MS, 0, &rep));
	HT_EXPECT_EQ(t, rep.start, 100 * MS);
	HT_EXPECT_EQ(t, rep.duration, 31 * MS);
	HT_EXPECT_EQ(t, rep.irq_ns, 0);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 31 * MS);
}

static void lost_irq_time_explains(struct hvn_test *t)
{
	struct hvn_ivl_ring r = { 0 };
	struct hvn_lost_cpu lc = { 0 };
	struct hvn_lost_report rep;

	/* 3 ms of interrupt handling inside a 4 ms lateness: 1 ms left,
	 * under the threshold: not lost time.
	 */
	hvn_ivl_enter(&r, 101 * MS);
	hvn_ivl_exit(&r, 104 * MS);
	HT_EXPECT_FALSE(t, hvn_lost_check(&lc, &r, &cfg, 104 * MS, 104 * MS - 4 * MS, 0, &rep));
	/* Partly outside the window: only the overlap counts. */
	hvn_ivl_enter(&r, 198 * MS);
	hvn_ivl_exit(&r, 201 * MS);
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 230 * MS, 230 * MS - 30 * MS, 0, &rep));
	HT_EXPECT_EQ(t, rep.irq_ns, 1 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 29 * MS);
}

static void lost_stopped_inside_handler(struct hvn_test *t)
{
	struct hvn_ivl_ring r = { 0 };
	struct hvn_lost_cpu lc = { 0 };
	struct hvn_lost_report rep;

	/* The vCPU stopped for 48 ms inside a handler that ran 2 ms: the
	 * interval is kept as its first HVN_IVL_CAP_NS (100..104 ms), of
	 * which 3 ms fall in the timer's lateness (101..150 ms).
	 */
	hvn_ivl_enter(&r, 100 * MS);
	hvn_ivl_exit(&r, 150 * MS);
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 150 * MS, 150 * MS - 49 * MS, 0, &rep));
	HT_EXPECT_EQ(t, rep.duration, 49 * MS);
	HT_EXPECT_EQ(t, rep.irq_ns, HVN_IVL_CAP_NS - 1 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 46 * MS);
	/* Several intervals each count up to the cap. */
	r = (struct hvn_ivl_ring){ 0 };
	hvn_ivl_add(&r, 0, 10 * MS);
	hvn_ivl_add(&r, 20 * MS, 23 * MS);
	HT_EXPECT_EQ(t, hvn_ivl_covered(&r, 0, 30 * MS), HVN_IVL_CAP_NS + 3 * MS);
}

static void lost_nesting_counts_outermost(struct hvn_test *t)
{
	struct hvn_ivl_ring r = { 0 };

	hvn_ivl_enter(&r, 10);	/* softirq */
	hvn_ivl_enter(&r, 20);	/* hardirq inside it */
	hvn_ivl_exit(&r, 30);
	hvn_ivl_exit(&r, 50);
	HT_EXPECT_EQ(t, hvn_ivl_covered(&r, 0, 100), 40);
	/* An exit seen without its entry is ignored. */
	hvn_ivl_exit(&r, 60);
	HT_EXPECT_EQ(t, r.depth, 0);
	HT_EXPECT_EQ(t, hvn_ivl_covered(&r, 0, 100), 40);
}

static void lost_batch_reports_once(struct hvn_test *t)
{
	struct hvn_ivl_ring r = { 0 };
	struct hvn_lost_cpu lc = { 0 };
	struct hvn_lost_report rep;

	/* Three timers, all due during one 100 ms pause, expire in one
	 * interrupt: one report, for the earliest, even though each probe
	 * reads the clock a little later.  Time reported is not reported
	 * again: no batch key, so timers of other clock bases (each with
	 * its own "now") in the same interrupt join the same episode.
	 */
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 500 * MS, 500 * MS - 99 * MS, 0, &rep));
	HT_EXPECT_FALSE(t, hvn_lost_check(&lc, &r, &cfg, 500 * MS + 3000, 500 * MS + 3000 - 97 * MS, 0, &rep));
	HT_EXPECT_FALSE(t, hvn_lost_check(&lc, &r, &cfg, 500 * MS + 9000, 500 * MS + 9000 - 50 * MS, 0, &rep));
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 600 * MS, 600 * MS - 10 * MS, 0, &rep));
}

static void lost_bases_report_once(struct hvn_test *t)
{
	struct hvn_ivl_ring r = { 0 };
	struct hvn_lost_cpu lc = { 0 };
	struct hvn_lost_report rep;

	/* MONOTONIC timers run before REALTIME ones in an interrupt: a
	 * REALTIME timer due earlier adds no second episode.
	 */
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 500 * MS, 420 * MS, 0, &rep));
	HT_EXPECT_EQ(t, rep.start, 420 * MS);
	HT_EXPECT_FALSE(t, hvn_lost_check(&lc, &r, &cfg, 500 * MS + 4000, 401 * MS, 0, &rep));
	/* Lost time after the last report still counts, from there on. */
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 530 * MS, 410 * MS, 0, &rep));
	HT_EXPECT_EQ(t, rep.start, 500 * MS);
	HT_EXPECT_EQ(t, rep.duration, 30 * MS);
}

static void lost_sampler_rearm_window(struct hvn_test *t)
{
	struct hvn_ivl_ring r = { 0 };
	struct hvn_lost_cpu lc = { 0 };
	struct hvn_lost_report rep;
	u64 due;

	/* A 1 ms sampler: before its first expiry, no bound. */
	HT_EXPECT_EQ(t, hvn_lost_due(&lc, 100 * MS, MS), 100 * MS);
	lc.sampler_seen = 100 * MS + 5000;
	/* On time: the re-arm's clock read follows the probe's closely. */
	due = hvn_lost_due(&lc, 101 * MS + 6000, MS);
	HT_EXPECT_EQ(t, due, 101 * MS + 5000);
	HT_EXPECT_FALSE(t, hvn_lost_check(&lc, &r, &cfg, 101 * MS + 6500, due, 0, &rep));
	lc.sampler_seen = 101 * MS + 6500;
	/* The vCPU stopped 30 ms after that probe, before the re-arm read
	 * the clock: the next expiry came 30 ms late and looks on time.
	 */
	due = hvn_lost_due(&lc, 132 * MS + 7000, MS);
	HT_EXPECT_EQ(t, due, 102 * MS + 6500);
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 132 * MS + 7000, due, 0, &rep));
	HT_EXPECT_EQ(t, rep.duration, 30 * MS + 500);
	/* The same stop, with the tick due at 120 ms firing first: the
	 * episode still starts when the sampler was due.
	 */
	lc.reported_until = 0;
	lc.sampler_seen = 101 * MS + 6500;
	due = hvn_lost_due(&lc, 120 * MS, MS);
	HT_EXPECT_EQ(t, due, 102 * MS + 6500);
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 132 * MS + 6000, due, 0, &rep));
	HT_EXPECT_EQ(t, rep.start, 102 * MS + 6500);
	/* Earlier timers are not moved. */
	HT_EXPECT_EQ(t, hvn_lost_due(&lc, 102 * MS, MS), 102 * MS);
	/* Stopped or re-armed by its owner: no bound again. */
	lc.sampler_seen = 0;
	HT_EXPECT_EQ(t, hvn_lost_due(&lc, 900 * MS, MS), 900 * MS);
}

static void lost_threshold_edges(struct hvn_test *t)
{
	struct hvn_ivl_ring r = { 0 };
	struct hvn_lost_cpu lc = { 0 };
	struct hvn_lost_report rep;

	HT_EXPECT_FALSE(t, hvn_lost_check(&lc, &r, &cfg, 10 * MS, 10 * MS - (2 * MS - 1), 0, &rep));
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 20 * MS, 20 * MS - 2 * MS, 0, &rep));
	/* A timer seen before its expiry is not late. */
	HT_EXPECT_FALSE(t, hvn_lost_check(&lc, &r, &cfg, 30 * MS, 34 * MS, 0, &rep));
}

static void lost_steal_split(struct hvn_test *t)
{
	struct hvn_ivl_ring r = { 0 };
	struct hvn_lost_cpu lc = { 0 };
	struct hvn_lost_report rep;

	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 100 * MS, 100 * MS - 38 * MS, 31 * MS, &rep));
	HT_EXPECT_EQ(t, rep.steal_ns, 31 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 7 * MS);
	/* Steal beyond the gap is capped to it. */
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 200 * MS, 200 * MS - 10 * MS, 50 * MS, &rep));
	HT_EXPECT_EQ(t, rep.steal_ns, 10 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 0);
}

static void lost_nmi_split(struct hvn_test *t)
{
	/* Static: two rings overflow a KASAN kernel's 1 KB frame limit. */
	static struct hvn_ivl_ring nmi;
	struct hvn_ivl_ring r = { 0 };
	struct hvn_lost_cpu lc = { 0 };
	struct hvn_lost_report rep;

	memset(&nmi, 0, sizeof(nmi));

	/* 31 ms late, 2 ms of it in an NMI: guest time, not lost. */
	hvn_ivl_add(&nmi, 110 * MS, 112 * MS);
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 131 * MS, 100 * MS, 0, &rep));
	hvn_lost_split_nmi(&rep, &nmi, 131 * MS);
	HT_EXPECT_EQ(t, rep.irq_ns, 2 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 29 * MS);
	/* NMIs (4 ms, the cap) beyond the unexplained part (3 ms)
	 * overlapped steal: nothing moves. */
	hvn_ivl_add(&nmi, 210 * MS, 220 * MS);
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc, &r, &cfg, 238 * MS, 200 * MS, 35 * MS, &rep));
	hvn_lost_split_nmi(&rep, &nmi, 238 * MS);
	HT_EXPECT_EQ(t, rep.irq_ns, 0);
	HT_EXPECT_EQ(t, rep.steal_ns, 35 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 3 * MS);
}

static void lost_clock_steps_not_judged(struct hvn_test *t)
{
	HT_EXPECT_FALSE(t, hvn_lost_clock_judged(HVN_CLOCK_REALTIME));
	HT_EXPECT_FALSE(t, hvn_lost_clock_judged(HVN_CLOCK_TAI));
	HT_EXPECT_TRUE(t, hvn_lost_clock_judged(1));	/* MONOTONIC */
	HT_EXPECT_TRUE(t, hvn_lost_clock_judged(7));	/* BOOTTIME */
}

static void lost_ring_wraps(struct hvn_test *t)
{
	struct hvn_ivl_ring r = { 0 };
	unsigned int i;

	/* 100 intervals of 10 ns: only the last HVN_IVL_RING are known. */
	for (i = 0; i < 100; i++) {
		hvn_ivl_enter(&r, i * 100);
		hvn_ivl_exit(&r, i * 100 + 10);
	}
	HT_EXPECT_EQ(t, hvn_ivl_covered(&r, 0, 100 * 100), HVN_IVL_RING * 10);
	HT_EXPECT_EQ(t, hvn_ivl_covered(&r, 99 * 100, 99 * 100 + 5), 5);
}

static struct ht_case lost_cases[] = {
	HT_CASE(lost_unexplained_gap),
	HT_CASE(lost_irq_time_explains),
	HT_CASE(lost_nesting_counts_outermost),
	HT_CASE(lost_batch_reports_once),
	HT_CASE(lost_bases_report_once),
	HT_CASE(lost_sampler_rearm_window),
	HT_CASE(lost_stopped_inside_handler),
	HT_CASE(lost_threshold_edges),
	HT_CASE(lost_steal_split),
	HT_CASE(lost_nmi_split),
	HT_CASE(lost_clock_steps_not_judged),
	HT_CASE(lost_ring_wraps),
	{}
};

HT_SUITE(lost, lost_cases);
