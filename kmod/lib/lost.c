// SPDX-License-Identifier: GPL-2.0
/* Lost time accounting; see lost.h. */
#include "lost.h"

/* An interval, kept as its first @cap ns at most. */
static __always_inline void ivl_add(struct hvn_ivl_ring *r, u64 start, u64 end, u64 cap)
{
	u32 i = r->head++ & (HVN_IVL_RING - 1);

	/*
	 * Capped here, not in hvn_ivl_covered()'s loop: the BPF verifier
	 * walks every iteration of that loop.
	 */
	if (end - start > cap)
		end = start + cap;
	r->start[i] = start;
	r->end[i] = end;
}

HVN_LIB void hvn_ivl_add(struct hvn_ivl_ring *r, u64 start, u64 end)
{
	ivl_add(r, start, end, HVN_IVL_CAP_NS);
}

HVN_LIB void hvn_ivl_enter(struct hvn_ivl_ring *r, u64 now)
{
	if (!r->depth++) {
		r->open_start = now;
		r->open_nmi = 0;
	}
}

HVN_LIB void hvn_ivl_exit(struct hvn_ivl_ring *r, u64 now)
{
	/* An exit without its entry (probes attached mid-interrupt). */
	if (!r->depth)
		return;
	/* NMIs inside it are guest time beyond the cap. */
	if (!--r->depth)
		ivl_add(r, r->open_start, now, HVN_IVL_CAP_NS + r->open_nmi);
}

HVN_LIB u64 hvn_ivl_covered(const struct hvn_ivl_ring *r, u64 from, u64 to)
{
	u32 n = r->head < HVN_IVL_RING ? r->head : HVN_IVL_RING;
	u64 sum = 0;
	u32 k;

	for (k = 0; k < n; k++) {
		u64 a = r->start[k], b = r->end[k];

		if (a < from)
			a = from;
		if (b > to)
			b = to;
		if (b > a)
			sum += b - a;
	}
	return sum > to - from ? to - from : sum;
}

/*
 * @nmi: NULL, or NMIs outside @r's intervals, counted before steal; the
 * NMI time taken goes to *@nmi_ns.
 */
static __always_inline bool lost_core(struct hvn_lost_cpu *lc, const struct hvn_ivl_ring *r,
		      const struct hvn_ivl_ring *nmi, const struct hvn_lost_cfg *c,
		      u64 now, u64 expiry, u64 steal_ns, struct hvn_lost_report *rep,
		      u64 *nmi_out, u64 hold_from, u64 hold_to)
{
	u64 from = expiry, late, irq_ns, nmi_ns = 0, lost, a, b;

	if (from < lc->reported_until)
		from = lc->reported_until;
	if (from >= now)
		return false;
	late = now - from;
	if (late < c->threshold_ns)
		return false;
	irq_ns = hvn_ivl_covered(r, from, now);
	/*
	 * Judged inside an interrupt (a timer's): NMIs in it so far are
	 * guest time although the interval is still open.
	 */
	if (r->depth && r->open_nmi) {
		a = r->open_start > from ? r->open_start : from;
		irq_ns += r->open_nmi < now - a ? r->open_nmi : now - a;
	}
	/* A hotplug hold: all of it is the guest's, intervals or not. */
	a = hold_from > from ? hold_from : from;
	b = hold_to && hold_to < now ? hold_to : now;
	if (hold_from && b > a)
		irq_ns += (b - a) - hvn_ivl_covered(r, a, b);
	lost = late - irq_ns;
	if (steal_ns > lost)
		steal_ns = lost;
	if (nmi) {
		nmi_ns = hvn_ivl_covered(nmi, from, now);
		if (nmi_ns > lost - steal_ns)
			nmi_ns = lost - steal_ns;
		lost -= nmi_ns;
	}
	if (lost < c->threshold_ns)
		return false;
	lc->reported_until = now;
	rep->start = from;
	rep->duration = late;
	rep->irq_ns = irq_ns + nmi_ns;
	rep->steal_ns = steal_ns;
	rep->unexplained_ns = lost - steal_ns;
	*nmi_out = nmi_ns;
	return true;
}

HVN_LIB bool hvn_lost_check(struct hvn_lost_cpu *lc, const struct hvn_ivl_ring *r,
			    const struct hvn_lost_cfg *c, u64 now, u64 expiry,
			    u64 steal_ns, struct hvn_lost_report *rep)
{
	u64 nmi_ns;

	return lost_core(lc, r, NULL, c, now, expiry, steal_ns, rep, &nmi_ns, 0, 0);
}

HVN_LIB void hvn_lost_nmi(struct hvn_ivl_ring *ivl, struct hvn_ivl_ring *nmi,
			  u64 now, u64 delta_ns)
{
	if (!delta_ns || delta_ns > now)
		return;
	if (ivl->depth)
		ivl->open_nmi += delta_ns;
	else
		hvn_ivl_add(nmi, now - delta_ns, now);
}

HVN_LIB void hvn_lost_armed(struct hvn_lost_cpu *lc, u64 timer, u64 expiry, u64 now)
{
	u32 i;

	for (i = 0; i < HVN_ARMED_SLOTS; i++)
		if (lc->armed_timer[i] == timer) {
			if (expiry <= now) {
				lc->armed_at[i] = now;
				return;
			}
			lc->armed_timer[i] = 0;
		}
	if (expiry > now)
		return;
	/* Oldest first: one armed due fires within microseconds. */
	i = lc->armed_next++ & (HVN_ARMED_SLOTS - 1);
	lc->armed_timer[i] = timer;
	lc->armed_at[i] = now;
}

/*
 * The pending report, with @steal (since the last timer before its stop)
 * split off as lost_core() would have: NMI time only from what steal
 * leaves.  That steal is used up.
 */
static __always_inline void settle(struct hvn_lost_cpu *lc, u64 steal, struct hvn_lost_report *rep)
{
	u64 lost = lc->pend.unexplained_ns + lc->pend_nmi, nmi_ns = lc->pend_nmi;

	*rep = lc->pend;
	if (steal > lost)
		steal = lost;
	if (nmi_ns > lost - steal)
		nmi_ns = lost - steal;
	rep->irq_ns = lc->pend.irq_ns - lc->pend_nmi + nmi_ns;
	rep->steal_ns = steal;
	rep->unexplained_ns = lost - steal - nmi_ns;
	lc->steal_snap += steal;
	lc->pending = false;
}

/*
 * The end of hvn_lost_judge() where steal comes late (t->steal_late): a
 * report made now waits for its steal, one made earlier is settled when
 * its steal came or its time is up, or when a new stop needs the slot.
 */
static __always_inline bool judge_late(struct hvn_lost_cpu *lc, const struct hvn_ivl_ring *ivl,
		       const struct hvn_ivl_ring *nmi, const struct hvn_lost_cfg *c,
		       const struct hvn_lost_timer *t, u64 due,
		       struct hvn_lost_report *rep)
{
	struct hvn_lost_report now_rep;
	u64 steal = 0, nmi_ns;
	bool ret = false;

	if (!lc->snap_valid || t->steal < lc->steal_snap)
		lc->steal_snap = t->steal;
	lc->snap_valid = true;
	steal = t->steal - lc->steal_snap;
	if (lc->pending && (t->now >= lc->pend_until ||
			    steal >= lc->pend.unexplained_ns + lc->pend_nmi)) {
		settle(lc, steal, rep);
		ret = true;
	}
	if (lost_core(lc, ivl, nmi, c, t->now, due, 0, &now_rep, &nmi_ns,
		      t->hold_from, t->hold_to)) {
		if (lc->pending) {
			/* (Not settled above: ret is false.) */
			settle(lc, steal, rep);
			ret = true;
		}
		lc->pend = now_rep;
		lc->pend_nmi = nmi_ns;
		lc->pend_until = t->now + c->settle_ns;
		lc->pending = true;
	}
	/* The steal since the snapshot is the pending stop's, else old. */
	if (!lc->pending)
		lc->steal_snap = t->steal;
	return ret;
}

HVN_LIB bool hvn_lost_judge(struct hvn_lost_cpu *lc, const struct hvn_ivl_ring *ivl,
			    const struct hvn_ivl_ring *nmi, const struct hvn_lost_cfg *c,
			    const struct hvn_lost_timer *t, struct hvn_lost_report *rep)
{
	u64 due = t->expiry, steal = 0, nmi_ns;
	bool ret;
	u32 i;

	for (i = 0; i < HVN_ARMED_SLOTS; i++)
		if (lc->armed_timer[i] == t->timer) {
			if (lc->armed_at[i] > due)
				due = lc->armed_at[i];
			lc->armed_timer[i] = 0;
		}
	/*
	 * The boot clock ran ahead of the monotonic one since the last timer:
	 * a suspend, which ended about now.  A BOOTTIME timer armed before it
	 * was due suspended_ns after where the new offset maps it, and not
	 * after the resume (one due during the suspend fires at the resume).
	 * First: the tick's rounding below must see a due time, not a wrap.
	 */
	if (t->boot_off) {
		/* Read as two clocks by BPF: a little noise either way. */
		if (lc->boot_off && t->boot_off > lc->boot_off + HVN_SUSPEND_MIN_NS) {
			lc->suspended_ns = t->boot_off - lc->boot_off;
			lc->resumed_at = t->now;
			lc->boot_off = t->boot_off;
		} else if (!lc->boot_off || t->boot_off < lc->boot_off) {
			lc->boot_off = t->boot_off;
		}
	}
	/* (Signed: a long suspend maps such a timer before boot.) */
	if (t->boottime && lc->resumed_at && (s64)(due - lc->resumed_at) < 0) {
		u64 armed_before = due + lc->suspended_ns;

		due = (s64)(armed_before - lc->resumed_at) < 0 ? armed_before : lc->resumed_at;
	}
	if (t->from_tick && c->tick_ns) {
		/*
		 * Run from the tick: due at the first tick at or after the
		 * expiry.  Ticks keep their grid through a stop (jiffies are
		 * CLOCK_MONOTONIC multiples), so the last one seen on time
		 * places it; none seen yet: a whole tick late is on time.
		 */
		u64 tick = c->tick_ns, seen = lc->tick_seen;

		if (seen && due > seen)
			due = seen + (due - seen + tick - 1) / tick * tick;
		else
			due += tick;
		/* On time (its tick ran it): this tick's time is the grid. */
		if (t->now >= t->expiry && t->now - t->expiry < tick)
			lc->tick_seen = t->now;
	}
	/*
	 * A hang since the last timer: it ended about then, and the kernel
	 * put this CPU's next interrupt off by the hang's length, 100 ms at
	 * most.  Its length: the longest hang when that grew (it is this
	 * one), else the hung interrupt's own, from its entry (the interval
	 * open at the last timer) to the last timer; the longest hang only
	 * where neither is known.  (A short hang after a long one must not
	 * put the long one's length off: a stop then would go unseen.)
	 */
	if (t->hangs != lc->hangs) {
		u64 len = t->max_hang_ns;

		if (t->max_hang_ns <= lc->max_hang_ns && lc->last_entry &&
		    lc->last_now > lc->last_entry &&
		    lc->last_now - lc->last_entry < len)
			len = lc->last_now - lc->last_entry;
		if (len > HVN_HANG_DEFER_MAX_NS)
			len = HVN_HANG_DEFER_MAX_NS;
		if (lc->last_now)
			lc->defer_until = lc->last_now + len;
		lc->hangs = t->hangs;
	}
	lc->max_hang_ns = t->max_hang_ns;
	if (due < lc->defer_until)
		due = lc->defer_until;
	lc->last_now = t->now;
	lc->last_entry = ivl->depth ? ivl->open_start : 0;
	/* (A report still waiting when the source turned exact is settled.) */
	if (t->steal_late || lc->pending)
		return judge_late(lc, ivl, nmi, c, t, due, rep);
	/* No snapshot yet after (re)joining: no steal to split off. */
	if (lc->snap_valid && t->steal > lc->steal_snap)
		steal = t->steal - lc->steal_snap;
	ret = lost_core(lc, ivl, nmi, c, t->now, due, steal, rep, &nmi_ns,
			t->hold_from, t->hold_to);
	lc->steal_snap = t->steal;
	lc->snap_valid = true;
	return ret;
}

HVN_LIB u64 hvn_lost_due(const struct hvn_lost_cpu *lc, u64 expires, u64 period)
{
	u64 due = lc->sampler_seen + period;

	return lc->sampler_seen && due < expires ? due : expires;
}
