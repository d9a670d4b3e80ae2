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

/* Static: several rings overflow a KASAN kernel's 1 KB frame limit. */
static struct hvn_ivl_ring ivl_s, nmi_s;
static struct hvn_lost_cpu lc_s;

static void judge_reset(void)
{
	memset(&ivl_s, 0, sizeof(ivl_s));
	memset(&nmi_s, 0, sizeof(nmi_s));
	memset(&lc_s, 0, sizeof(lc_s));
}

static bool judge(u64 timer, u64 expiry, u64 now, u64 steal, bool from_tick,
		  struct hvn_lost_report *rep)
{
	static const struct hvn_lost_cfg tcfg = { .threshold_ns = 2 * MS,
						  .tick_ns = 4 * MS };
	struct hvn_lost_timer tm = { .timer = timer, .expiry = expiry, .now = now,
				     .steal = steal, .from_tick = from_tick };

	return hvn_lost_judge(&lc_s, &ivl_s, &nmi_s, &tcfg, &tm, rep);
}

static void lost_nmi_split(struct hvn_test *t)
{
	struct hvn_lost_report rep;

	judge_reset();
	/* 31 ms late, 2 ms of it in an NMI: guest time, not lost. */
	hvn_lost_nmi(&ivl_s, &nmi_s, 112 * MS, 2 * MS);
	HT_EXPECT_TRUE(t, judge(1, 100 * MS, 131 * MS, 0, false, &rep));
	HT_EXPECT_EQ(t, rep.irq_ns, 2 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 29 * MS);
	/* An NMI of 10 ms (kept as 4, the cap) in a 38 ms lateness of
	 * which the host reported 35 ms steal: the NMI takes only what
	 * steal leaves (it lasted the host's stop).
	 */
	judge(1, 150 * MS, 150 * MS, 1000 * MS, false, &rep);	/* steal snapshot */
	hvn_lost_nmi(&ivl_s, &nmi_s, 220 * MS, 10 * MS);
	HT_EXPECT_TRUE(t, judge(1, 200 * MS, 238 * MS, 1035 * MS, false, &rep));
	HT_EXPECT_EQ(t, rep.irq_ns, 3 * MS);
	HT_EXPECT_EQ(t, rep.steal_ns, 35 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 0);
}

static void lost_nmi_before_threshold(struct hvn_test *t)
{
	struct hvn_lost_report rep;

	judge_reset();
	/* One NMI of 2.5 ms (an nmi_backtrace, a heavy perf program) made
	 * a timer 2.6 ms late: guest time, not a lost event.  The core
	 * alone, which knows no NMIs, would report it.
	 */
	hvn_lost_nmi(&ivl_s, &nmi_s, 102 * MS + 550000, 2 * MS + 500000);
	HT_EXPECT_FALSE(t, judge(1, 100 * MS, 102 * MS + 600000, 0, false, &rep));
	HT_EXPECT_TRUE(t, hvn_lost_check(&lc_s, &ivl_s, &cfg, 102 * MS + 600000, 100 * MS,
					 0, &rep));
	/* An NMI inside an interrupt handler is that handler's time: not
	 * counted twice.
	 */
	judge_reset();
	hvn_ivl_enter(&ivl_s, 300 * MS);
	hvn_lost_nmi(&ivl_s, &nmi_s, 301 * MS, 1 * MS);
	hvn_ivl_exit(&ivl_s, 302 * MS);
	HT_EXPECT_TRUE(t, judge(1, 299 * MS, 330 * MS, 0, false, &rep));
	HT_EXPECT_EQ(t, rep.irq_ns, 2 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 29 * MS);
}

static void lost_nmi_burst_in_irq(struct hvn_test *t)
{
	struct hvn_lost_report rep;
	int i;

	judge_reset();
	/*
	 * 12 NMIs of 1.5 ms back to back at a timer interrupt's entry: the
	 * timer is judged 18.5 ms late inside that interrupt, whose interval
	 * is still open.  The NMIs explain it.
	 */
	hvn_ivl_enter(&ivl_s, 100 * MS);
	for (i = 1; i <= 12; i++)
		hvn_lost_nmi(&ivl_s, &nmi_s, 100 * MS + i * 1500000, 1500000);
	HT_EXPECT_FALSE(t, judge(1, 100 * MS, 118 * MS + 500000, 0, false, &rep));
	hvn_ivl_exit(&ivl_s, 118 * MS + 600000);
	/* The same burst in one interrupt handler, kept as its first 4 ms. */
	hvn_ivl_enter(&ivl_s, 200 * MS);
	for (i = 1; i <= 12; i++)
		hvn_lost_nmi(&ivl_s, &nmi_s, 200 * MS + i * 1500000, 1500000);
	hvn_ivl_exit(&ivl_s, 218 * MS + 100000);
	HT_EXPECT_FALSE(t, judge(1, 200 * MS, 219 * MS, 0, false, &rep));
	/* And a stop after it is lost time all the same. */
	HT_EXPECT_TRUE(t, judge(1, 250 * MS, 280 * MS, 0, false, &rep));
	HT_EXPECT_EQ(t, rep.unexplained_ns, 30 * MS);
}

static void lost_armed_due(struct hvn_test *t)
{
	struct hvn_lost_report rep;

	judge_reset();
	/* clock_nanosleep(TIMER_ABSTIME) with a deadline 5 ms gone: the
	 * timer fires at once, 5 ms after its expiry, and nothing was lost.
	 */
	hvn_lost_armed(&lc_s, 0x1000, 95 * MS, 100 * MS);
	HT_EXPECT_FALSE(t, judge(0x1000, 95 * MS, 100 * MS + 20000, 0, false, &rep));
	/* Again, and this time the vCPU stops 30 ms before it fires: lost
	 * from when it was armed.
	 */
	hvn_lost_armed(&lc_s, 0x1000, 195 * MS, 200 * MS);
	HT_EXPECT_TRUE(t, judge(0x1000, 195 * MS, 230 * MS, 0, false, &rep));
	HT_EXPECT_EQ(t, rep.start, 200 * MS);
	HT_EXPECT_EQ(t, rep.duration, 30 * MS);
	/* Re-armed in the future: judged from its expiry again. */
	hvn_lost_armed(&lc_s, 0x1000, 295 * MS, 300 * MS);
	hvn_lost_armed(&lc_s, 0x1000, 310 * MS, 301 * MS);
	HT_EXPECT_TRUE(t, judge(0x1000, 310 * MS, 340 * MS, 0, false, &rep));
	HT_EXPECT_EQ(t, rep.start, 310 * MS);
	/* Another timer due meanwhile is not moved by one armed due. */
	hvn_lost_armed(&lc_s, 0x2000, 395 * MS, 400 * MS);
	HT_EXPECT_TRUE(t, judge(0x3000, 380 * MS, 410 * MS, 0, false, &rep));
	HT_EXPECT_EQ(t, rep.start, 380 * MS);
	/* More armed due than slots before any fires: the oldest go. */
	judge_reset();
	hvn_lost_armed(&lc_s, 0x10, 90 * MS, 100 * MS);
	hvn_lost_armed(&lc_s, 0x20, 90 * MS, 100 * MS);
	hvn_lost_armed(&lc_s, 0x30, 90 * MS, 100 * MS);
	hvn_lost_armed(&lc_s, 0x40, 90 * MS, 100 * MS);
	hvn_lost_armed(&lc_s, 0x50, 90 * MS, 100 * MS);
	HT_EXPECT_FALSE(t, judge(0x50, 90 * MS, 100 * MS + 10000, 0, false, &rep));
	HT_EXPECT_FALSE(t, judge(0x20, 90 * MS, 100 * MS + 20000, 0, false, &rep));
}

static void lost_from_tick(struct hvn_test *t)
{
	struct hvn_lost_report rep;

	judge_reset();
	/* highres=off: a hard timer runs from the next 4 ms tick; 3.9 ms
	 * late is on time.  With no tick seen yet it is due a whole tick
	 * after its expiry.
	 */
	HT_EXPECT_FALSE(t, judge(1, 100 * MS + 100000, 104 * MS + 10000, 0, true, &rep));
	/* That run placed the ticks (104 ms + 10 us, every 4 ms): a timer
	 * due at 201 ms was due at the tick of 204 ms + 10 us.  Stopped
	 * 30 ms past it: 30 ms lost, not 27.
	 */
	HT_EXPECT_TRUE(t, judge(1, 201 * MS, 234 * MS + 10000, 0, true, &rep));
	HT_EXPECT_EQ(t, rep.start, 204 * MS + 10000);
	HT_EXPECT_EQ(t, rep.duration, 30 * MS);
	/* Due just after a tick: the next one. */
	HT_EXPECT_FALSE(t, judge(1, 240 * MS + 20000, 244 * MS + 12000, 0, true, &rep));
	HT_EXPECT_TRUE(t, judge(1, 252 * MS, 282 * MS + 12000, 0, true, &rep));
	HT_EXPECT_EQ(t, rep.start, 252 * MS + 12000);
	/* In high-resolution mode the same lateness is lost time. */
	HT_EXPECT_TRUE(t, judge(1, 300 * MS, 303 * MS + 900000, 0, false, &rep));
}

static bool judge_hang(u64 expiry, u64 now, u32 hangs, u64 max_hang,
		       struct hvn_lost_report *rep)
{
	static const struct hvn_lost_cfg tcfg = { .threshold_ns = 2 * MS };
	struct hvn_lost_timer tm = { .timer = 1, .expiry = expiry, .now = now,
				     .hangs = hangs, .max_hang_ns = max_hang };

	return hvn_lost_judge(&lc_s, &ivl_s, &nmi_s, &tcfg, &tm, rep);
}

static void lost_hang_deferral(struct hvn_test *t)
{
	struct hvn_lost_report rep;

	judge_reset();
	/* Watching starts with 2 hangs counted before: nothing deferred. */
	HT_EXPECT_FALSE(t, judge_hang(100 * MS, 100 * MS + 5000, 2, 40 * MS, &rep));
	HT_EXPECT_EQ(t, lc_s.defer_until, 0);
	/* The vCPU stopped 300 ms inside hrtimer_interrupt(): reported,
	 * and the kernel, seeing the hang, puts the CPU's next interrupt
	 * 100 ms off.  The timers due meanwhile fire up to 100 ms late:
	 * the kernel's doing, not lost time.
	 */
	HT_EXPECT_TRUE(t, judge_hang(200 * MS, 501 * MS, 2, 40 * MS, &rep));
	HT_EXPECT_EQ(t, rep.duration, 301 * MS);
	HT_EXPECT_FALSE(t, judge_hang(502 * MS, 601 * MS + 200000, 3, 300 * MS, &rep));
	HT_EXPECT_FALSE(t, judge_hang(550 * MS, 601 * MS + 300000, 3, 300 * MS, &rep));
	/* A stop right after the deferral still counts, from its end. */
	HT_EXPECT_TRUE(t, judge_hang(590 * MS, 640 * MS, 3, 300 * MS, &rep));
	HT_EXPECT_EQ(t, rep.start, 601 * MS);
	/* A short hang after the long one: its own length, from its
	 * interrupt's entry (704 ms) to its last timer (704.3 ms), not the
	 * longest's 100 ms.  A stop 10 ms after it is seen.
	 */
	hvn_ivl_enter(&ivl_s, 704 * MS);
	HT_EXPECT_FALSE(t, judge_hang(703 * MS + 900000, 704 * MS + 300000, 3, 300 * MS, &rep));
	hvn_ivl_exit(&ivl_s, 704 * MS + 400000);
	HT_EXPECT_TRUE(t, judge_hang(705 * MS, 740 * MS, 4, 300 * MS, &rep));
	HT_EXPECT_EQ(t, rep.start, 705 * MS);
	/* A short hang (5 ms, the longest so far) defers 5 ms only. */
	judge_reset();
	HT_EXPECT_FALSE(t, judge_hang(10 * MS, 10 * MS, 1, 5 * MS, &rep));
	HT_EXPECT_TRUE(t, judge_hang(12 * MS, 40 * MS, 2, 5 * MS, &rep));
	HT_EXPECT_EQ(t, rep.start, 15 * MS);
}

static bool judge_boot(u64 timer, u64 expiry, u64 now, u64 boot_off, bool boottime,
		       struct hvn_lost_report *rep)
{
	static const struct hvn_lost_cfg tcfg = { .threshold_ns = 2 * MS };
	struct hvn_lost_timer tm = { .timer = timer, .expiry = expiry, .now = now,
				     .boot_off = boot_off, .boottime = boottime };

	return hvn_lost_judge(&lc_s, &ivl_s, &nmi_s, &tcfg, &tm, rep);
}

static void lost_suspend(struct hvn_test *t)
{
	struct hvn_lost_report rep;
	const u64 off = 5000 * MS, s = 60000 * MS, b = 100000 * MS;

	judge_reset();
	HT_EXPECT_FALSE(t, judge_boot(1, b, b, off, false, &rep));
	/* Suspended at MONOTONIC 100.2 s for 60 s (MONOTONIC stands still,
	 * BOOTTIME runs on), resumed at 100.2 s.  A BOOTTIME timer due 30 s
	 * into it fires at the resume; mapped with the new offset it looks
	 * 30 s late.  It is on time.
	 */
	HT_EXPECT_FALSE(t, judge_boot(2, b + 200 * MS + 30000 * MS - s, b + 200 * MS + 50000,
				      off + s, true, &rep));
	/* One due before the suspend and not run then (the vCPU stopped 20
	 * ms at 100.19 s, and the suspend began) is late by that, not by the
	 * suspend.
	 */
	judge_reset();
	HT_EXPECT_FALSE(t, judge_boot(1, b, b, off, false, &rep));
	HT_EXPECT_TRUE(t, judge_boot(2, b + 190 * MS - s, b + 210 * MS, off + s, true, &rep));
	HT_EXPECT_EQ(t, rep.start, b + 190 * MS);
	HT_EXPECT_EQ(t, rep.duration, 20 * MS);
	/* MONOTONIC timers are not moved by a suspend: it did not run. */
	HT_EXPECT_TRUE(t, judge_boot(3, b + 300 * MS, b + 330 * MS, off + s, false, &rep));
	HT_EXPECT_EQ(t, rep.start, b + 300 * MS);
	/* A BOOTTIME timer armed after the resume maps as it is. */
	HT_EXPECT_TRUE(t, judge_boot(4, b + 400 * MS, b + 430 * MS, off + s, true, &rep));
	HT_EXPECT_EQ(t, rep.start, b + 400 * MS);
	/* A suspend longer than the time since boot maps a timer due in
	 * it before boot (a wrapped u64): still on time at the resume.
	 */
	judge_reset();
	HT_EXPECT_FALSE(t, judge_boot(1, 10 * MS, 10 * MS, off, false, &rep));
	HT_EXPECT_FALSE(t, judge_boot(2, 10 * MS + 30000 * MS - s, 10 * MS + 40000,
				      off + s, true, &rep));
}

static void lost_steal_snapshot(struct hvn_test *t)
{
	struct hvn_lost_report rep;

	judge_reset();
	/* The first timer after watching starts has no steal before it. */
	HT_EXPECT_TRUE(t, judge(1, 100 * MS, 130 * MS, 5000 * MS, false, &rep));
	HT_EXPECT_EQ(t, rep.steal_ns, 0);
	/* Then steal since the last hard timer, reported or not. */
	HT_EXPECT_FALSE(t, judge(1, 140 * MS, 140 * MS, 5001 * MS, false, &rep));
	HT_EXPECT_TRUE(t, judge(1, 150 * MS, 170 * MS, 5019 * MS, false, &rep));
	HT_EXPECT_EQ(t, rep.steal_ns, 18 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 2 * MS);
	/* A counter that went back (another source) splits nothing. */
	HT_EXPECT_TRUE(t, judge(1, 200 * MS, 230 * MS, 10 * MS, false, &rep));
	HT_EXPECT_EQ(t, rep.steal_ns, 0);
}

static bool judge_steal_late(u64 expiry, u64 now, u64 steal, struct hvn_lost_report *rep)
{
	static const struct hvn_lost_cfg tcfg = { .threshold_ns = 2 * MS,
						  .settle_ns = 8 * MS };
	struct hvn_lost_timer tm = { .timer = 1, .expiry = expiry, .now = now,
				     .steal = steal, .steal_late = true };

	return hvn_lost_judge(&lc_s, &ivl_s, &nmi_s, &tcfg, &tm, rep);
}

static void lost_steal_late(struct hvn_test *t)
{
	struct hvn_lost_report rep;

	judge_reset();
	/*
	 * kcpustat: a 30 ms stop's steal is accounted by the tick after
	 * the timer that saw it.  That timer reports nothing yet; the next
	 * one, with the steal in, reports the stop as steal.
	 */
	HT_EXPECT_FALSE(t, judge_steal_late(100 * MS, 100 * MS, 1000 * MS, &rep));
	HT_EXPECT_FALSE(t, judge_steal_late(101 * MS, 131 * MS, 1000 * MS, &rep));
	/* 29 ms of steal in: the rest may still come, until settle_ns. */
	HT_EXPECT_FALSE(t, judge_steal_late(132 * MS, 132 * MS, 1029 * MS, &rep));
	HT_EXPECT_TRUE(t, judge_steal_late(139 * MS, 139 * MS, 1029 * MS, &rep));
	HT_EXPECT_EQ(t, rep.start, 101 * MS);
	HT_EXPECT_EQ(t, rep.duration, 30 * MS);
	HT_EXPECT_EQ(t, rep.steal_ns, 29 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 1 * MS);
	/* All of it in: reported at once. */
	HT_EXPECT_FALSE(t, judge_steal_late(150 * MS, 170 * MS, 1029 * MS, &rep));
	HT_EXPECT_TRUE(t, judge_steal_late(171 * MS, 171 * MS, 1049 * MS, &rep));
	HT_EXPECT_EQ(t, rep.steal_ns, 20 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 0);
	/* A stop no steal came for: unexplained, once settle_ns passed. */
	HT_EXPECT_FALSE(t, judge_steal_late(200 * MS, 230 * MS, 1049 * MS, &rep));
	HT_EXPECT_FALSE(t, judge_steal_late(231 * MS, 231 * MS, 1049 * MS, &rep));
	HT_EXPECT_TRUE(t, judge_steal_late(238 * MS, 238 * MS, 1049 * MS, &rep));
	HT_EXPECT_EQ(t, rep.start, 200 * MS);
	HT_EXPECT_EQ(t, rep.steal_ns, 0);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 30 * MS);
	/*
	 * A second stop before the first settled: the first goes with the
	 * steal come so far (10 of its 20 ms), the second waits for its own.
	 */
	HT_EXPECT_FALSE(t, judge_steal_late(300 * MS, 320 * MS, 1049 * MS, &rep));
	HT_EXPECT_TRUE(t, judge_steal_late(321 * MS, 327 * MS, 1059 * MS, &rep));
	HT_EXPECT_EQ(t, rep.start, 300 * MS);
	HT_EXPECT_EQ(t, rep.steal_ns, 10 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 10 * MS);
	HT_EXPECT_TRUE(t, judge_steal_late(336 * MS, 336 * MS, 1064 * MS, &rep));
	HT_EXPECT_EQ(t, rep.start, 321 * MS);
	HT_EXPECT_EQ(t, rep.steal_ns, 5 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 1 * MS);
	/* NMI time is taken only from what the late steal leaves. */
	judge_reset();
	HT_EXPECT_FALSE(t, judge_steal_late(400 * MS, 400 * MS, 0, &rep));
	hvn_lost_nmi(&ivl_s, &nmi_s, 420 * MS, 10 * MS);
	HT_EXPECT_FALSE(t, judge_steal_late(401 * MS, 439 * MS, 0, &rep));
	HT_EXPECT_FALSE(t, judge_steal_late(440 * MS, 440 * MS, 35 * MS, &rep));
	HT_EXPECT_TRUE(t, judge_steal_late(447 * MS, 447 * MS, 35 * MS, &rep));
	HT_EXPECT_EQ(t, rep.irq_ns, 3 * MS);
	HT_EXPECT_EQ(t, rep.steal_ns, 35 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 0);
	/* A report still waiting when the source turns exact: not dropped. */
	HT_EXPECT_FALSE(t, judge_steal_late(500 * MS, 500 * MS, 35 * MS, &rep));
	HT_EXPECT_FALSE(t, judge_steal_late(501 * MS, 531 * MS, 35 * MS, &rep));
	HT_EXPECT_TRUE(t, judge(1, 532 * MS, 532 * MS, 65 * MS, false, &rep));
	HT_EXPECT_EQ(t, rep.start, 501 * MS);
	HT_EXPECT_EQ(t, rep.steal_ns, 30 * MS);
}

static bool judge_hold(u64 expiry, u64 now, u64 from, u64 to,
		       struct hvn_lost_report *rep)
{
	static const struct hvn_lost_cfg tcfg = { .threshold_ns = 2 * MS };
	struct hvn_lost_timer tm = { .timer = 1, .expiry = expiry, .now = now,
				     .hold_from = from, .hold_to = to };

	return hvn_lost_judge(&lc_s, &ivl_s, &nmi_s, &tcfg, &tm, rep);
}

static void lost_hotplug_hold(struct hvn_test *t)
{
	struct hvn_lost_report rep;

	judge_reset();
	/*
	 * A CPU brought up: x86's TSC check kept interrupts off 20 ms on
	 * the CPU doing it.  The guest's own time, not lost.
	 */
	HT_EXPECT_FALSE(t, judge_hold(100 * MS, 121 * MS, 100 * MS, 121 * MS, &rep));
	/* Still running (its end not seen yet): up to now. */
	HT_EXPECT_FALSE(t, judge_hold(201 * MS, 230 * MS, 200 * MS, 0, &rep));
	/* A stop beside it is lost time all the same, less the hold. */
	HT_EXPECT_TRUE(t, judge_hold(300 * MS, 340 * MS, 310 * MS, 320 * MS, &rep));
	HT_EXPECT_EQ(t, rep.duration, 40 * MS);
	HT_EXPECT_EQ(t, rep.irq_ns, 10 * MS);
	HT_EXPECT_EQ(t, rep.unexplained_ns, 30 * MS);
	/* An interrupt inside the hold is not counted twice. */
	hvn_ivl_enter(&ivl_s, 412 * MS);
	hvn_ivl_exit(&ivl_s, 414 * MS);
	HT_EXPECT_TRUE(t, judge_hold(400 * MS, 440 * MS, 410 * MS, 420 * MS, &rep));
	HT_EXPECT_EQ(t, rep.irq_ns, 10 * MS);
	/* An old hold explains nothing now. */
	HT_EXPECT_TRUE(t, judge_hold(500 * MS, 530 * MS, 410 * MS, 420 * MS, &rep));
	HT_EXPECT_EQ(t, rep.unexplained_ns, 30 * MS);
}

static void lost_softirq_hides_hardirq(struct hvn_test *t)
{
	struct hvn_ivl_ring r = { 0 };

	/*
	 * A 3 ms hard interrupt (interrupts off: it delays timers) inside
	 * a softirq.  With the softirq as the outermost interval, as the
	 * softirq probes hvnoise once had made it, the hard interrupt's
	 * time is not known while the softirq runs, and a timer due during
	 * it (firing inside the softirq) is judged 3 ms lost.  From the
	 * hard interrupt's probes alone, it is explained.
	 */
	hvn_ivl_enter(&r, 100 * MS);		/* softirq_entry */
	hvn_ivl_enter(&r, 101 * MS);		/* irq_handler_entry */
	hvn_ivl_exit(&r, 104 * MS);
	HT_EXPECT_EQ(t, hvn_ivl_covered(&r, 101 * MS, 104 * MS + 100000), 0);
	memset(&r, 0, sizeof(r));
	hvn_ivl_enter(&r, 101 * MS);
	hvn_ivl_exit(&r, 104 * MS);
	HT_EXPECT_EQ(t, hvn_ivl_covered(&r, 101 * MS, 104 * MS + 100000), 3 * MS);
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
	HT_CASE(lost_nmi_before_threshold),
	HT_CASE(lost_nmi_burst_in_irq),
	HT_CASE(lost_armed_due),
	HT_CASE(lost_from_tick),
	HT_CASE(lost_steal_snapshot),
	HT_CASE(lost_steal_late),
	HT_CASE(lost_softirq_hides_hardirq),
	HT_CASE(lost_hotplug_hold),
	HT_CASE(lost_hang_deferral),
	HT_CASE(lost_suspend),
	HT_CASE(lost_clock_steps_not_judged),
	HT_CASE(lost_ring_wraps),
	{}
};

HT_SUITE(lost, lost_cases);
